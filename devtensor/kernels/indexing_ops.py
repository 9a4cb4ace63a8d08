"""Indexing, ordering and rearranging ops: ``tril``, ``triu``, ``diag``, ``roll``, ``count_nonzero``, ``argsort``,
``gather``, ``take_along_dim``, ``index_select``, ``take`` and ``tensordot``.

Structured ops (meta function + one kernel for both devices, NumPy or CuPy as ``xp``) with PyTorch's names,
signatures, variants and errors; values and result dtypes are NumPy 2's (``np.tril``, ``np.roll``,
``np.argsort``, ``np.take_along_axis``, ``np.take``, ``np.tensordot``, ...). Index tensors are checked in the
kernel before anything is written: an index out of range is an IndexOutOfRangeError (an IndexError) naming the
op, the index and the size, and the output is left as it was.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from devtensor import dtypes
from devtensor import kernel_signatures as _ks
from devtensor.arguments import clamped_offset
from devtensor.errors import ArgumentTypeError, ArgumentValueError, IndexOutOfRangeError, ShapeError
from devtensor.kernels.ufunc_family import D
from devtensor.meta import broadcast_shapes, int_arg, ints_arg, normalize_dim, normalize_dims, ufunc_result_dtype
from devtensor.structured import PlannedSpec, TensorSpec, rules, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = [
    "argsort",
    "count_nonzero",
    "diag",
    "gather",
    "index_select",
    "roll",
    "take",
    "take_along_dim",
    "tensordot",
    "tril",
    "triu",
]

_INT64 = dtypes.int64


def _fmt(shape: Sequence[int]) -> str:
    return str(list(shape))


def _copy_into(xp: ModuleType, out: Any, result: Any) -> None:
    """Write a computed ``result`` into ``out`` (same_kind cast; the front checked it): one write, after every
    check, so an out that is an input is read whole before it is written."""
    xp.copyto(out, result, casting="same_kind")


# --- tril, triu -------------------------------------------------------------------------------------------------

_TRI_DOC = """The {which} triangle of the matrices in ``self`` (its last two dims), other elements set to 0
    (``torch.{name}``, ``np.{name}``): element ``[..., i, j]`` is kept where ``j - i {cmp} diagonal``
    (``diagonal`` 0 is the main diagonal, positive above it, negative below).

    Result: ``self``'s shape and dtype, on its device. Devices: cpu (NumPy), cuda (CuPy); meta tensors give
    shape and dtype only. Variants: functional ``{name}(t, diagonal=0)`` / ``t.{name}(...)``, out
    ``{name}(t, ..., out=o)`` and inplace ``t.{name}_(...)``.

    Raises:
        ShapeError (ValueError): ``self`` has fewer than 2 dims.
        ArgumentTypeError (TypeError): ``diagonal`` not an int.
    """


def _tri_meta(op: str, self: TensorMeta, diagonal: int) -> TensorSpec:
    int_arg(op, "diagonal", diagonal)
    if len(self.shape) < 2:
        raise ShapeError(f"{op}: input tensor must have at least 2 dimensions, got shape {_fmt(self.shape)}")
    return self.shape, self.dtype


@structured_op("tril", out_may_be_input=True)
def tril(self: TensorMeta, diagonal: int = 0) -> TensorSpec:
    return _tri_meta("tril", self, diagonal)


@structured_op("triu", out_may_be_input=True)
def triu(self: TensorMeta, diagonal: int = 0) -> TensorSpec:
    return _tri_meta("triu", self, diagonal)


for _op, _which, _cmp in ((tril, "lower", "<="), (triu, "upper", ">=")):
    _op.meta.__doc__ = _op.doc = _op.functional.__doc__ = _TRI_DOC.format(which=_which, name=_op.name, cmp=_cmp)
    if _op.inplace is not None:
        _op.inplace.__doc__ = _op.doc


@_ks.tril.xp
def _tril(xp: ModuleType, self: D, diagonal: int, *, out: ConstOut[D]) -> None:
    k = clamped_offset(int(diagonal), *self._array.shape[-2:])
    _copy_into(xp, out.array, xp.tril(self._array, k=k))


@_ks.triu.xp
def _triu(xp: ModuleType, self: D, diagonal: int, *, out: ConstOut[D]) -> None:
    k = clamped_offset(int(diagonal), *self._array.shape[-2:])
    _copy_into(xp, out.array, xp.triu(self._array, k=k))


# --- diag -------------------------------------------------------------------------------------------------------


@structured_op("diag", inplace=False)
def diag(self: TensorMeta, diagonal: int = 0) -> TensorSpec:
    """The diagonal matrix of a vector, or the diagonal of a matrix (``torch.diag``, ``np.diag``): for a 1-d
    ``self`` of size n, the square matrix of size ``n + abs(diagonal)`` with ``self`` on its ``diagonal``-th
    diagonal (0 the main one, positive above it, negative below) and zeros elsewhere; for a 2-d ``self``, its
    ``diagonal``-th diagonal as a new 1-d tensor (empty when the diagonal lies outside the matrix).

    Result: ``self``'s dtype, on its device, a new storage. Variants: functional ``diag(t, diagonal=0)`` /
    ``t.diag(...)`` and out (no inplace, as PyTorch). Devices: cpu (NumPy), cuda (CuPy); meta gives shape and
    dtype only.

    Raises:
        ShapeError (ValueError): ``self`` is neither 1-d nor 2-d (PyTorch's "matrix or a vector expected").
        ArgumentTypeError (TypeError): ``diagonal`` not an int.
    """
    k = int_arg("diag", "diagonal", diagonal)
    shape = self.shape
    if len(shape) == 1:
        n = shape[0] + abs(k)
        return (n, n), self.dtype
    if len(shape) == 2:
        rows, cols = shape
        size = min(rows, cols - k) if k >= 0 else min(rows + k, cols)
        return (max(size, 0),), self.dtype
    raise ShapeError(f"diag: argument 'self' must be a vector or a matrix (1 or 2 dims), got shape {_fmt(shape)}")


@_ks.diag.xp
def _diag(xp: ModuleType, self: D, diagonal: int, *, out: ConstOut[D]) -> None:
    a = self._array
    k = int(diagonal) if a.ndim == 1 else clamped_offset(int(diagonal), *a.shape)  # (a 2**70 offset: empty)
    _copy_into(xp, out.array, xp.diag(a, k))


# --- roll -------------------------------------------------------------------------------------------------------


@structured_op("roll", inplace=False)
def roll(
    self: TensorMeta, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
) -> PlannedSpec[tuple[tuple[int, ...], tuple[int, ...] | None]]:
    """``self`` with its elements shifted cyclically by ``shifts`` along ``dims`` (``torch.roll``,
    ``np.roll``): an element at position ``i`` moves to ``(i + shift) % size``. ``shifts`` and ``dims`` are
    ints or sequences of ints of the same length; with ``dims=None`` the tensor is rolled as if flattened,
    then restored to its shape (``shifts`` must then be one int).

    Result: ``self``'s shape and dtype, on its device, a new storage. Variants: functional and out (no inplace,
    as PyTorch). Devices: cpu (NumPy), cuda (CuPy); meta gives shape and dtype only.

    Raises:
        ArgumentValueError (ValueError): ``shifts`` and ``dims`` of different lengths, or several shifts with
            ``dims=None``.
        ArgumentTypeError (TypeError): shifts or dims not ints.  IndexOutOfRangeError (IndexError): a dim out
            of range.
    """
    shift = ints_arg("roll", "shifts", shifts, allow_int=True)
    ndim = len(self.shape)
    if dims is None:
        if len(shift) != 1:
            raise ArgumentValueError(
                f"roll: argument 'shifts' must be one int when 'dims' is None (the tensor is rolled flattened), "
                f"got {list(shift)}"
            )
        return PlannedSpec(self.shape, self.dtype, (shift, None))
    raw = ints_arg("roll", "dims", dims, allow_int=True)
    if len(raw) != len(shift):
        raise ArgumentValueError(
            f"roll: shifts and dimensions must align: got {len(shift)} shift(s) {list(shift)} and {len(raw)} "
            f"dim(s) {list(raw)}"
        )
    if not ndim and raw:
        # PyTorch: a 0-d tensor has no dim to roll along (where most ops take dim 0 or -1 of a 0-d tensor).
        raise IndexOutOfRangeError(f"roll: dimension {raw[0]} (argument 'dims') given, but the tensor is 0-d")
    axes = tuple(normalize_dim("roll", d, ndim, "dims") for d in raw)
    if not ndim:  # 0-d: nothing to roll
        return PlannedSpec(self.shape, self.dtype, ((), ()))
    return PlannedSpec(self.shape, self.dtype, (shift, axes))


@_ks.roll.xp
def _roll(
    xp: ModuleType,
    self: D,
    shifts: int | Sequence[int],
    dims: int | Sequence[int] | None,
    *,
    plan: tuple[tuple[int, ...], tuple[int, ...] | None],
    out: ConstOut[D],
) -> None:
    shift, axes = plan
    a = self._array
    if axes is None:
        result = xp.roll(a, shift[0])
    elif axes:
        result = xp.roll(a, shift, axis=axes)
    else:
        result = a
    _copy_into(xp, out.array, result)


# --- count_nonzero ----------------------------------------------------------------------------------------------


@structured_op("count_nonzero", inplace=False)
def count_nonzero(self: TensorMeta, dim: int | Sequence[int] | None = None) -> PlannedSpec[tuple[int, ...] | None]:
    """The number of non-zero elements of ``self`` over ``dim`` (an int, a sequence of ints, or None for all
    dims; ``torch.count_nonzero``, ``np.count_nonzero``). NaN counts as non-zero; complex elements count when
    either part is non-zero.

    Result: int64, ``self``'s shape without the counted dims (0-d for ``dim=None``), on ``self``'s device.
    Variants: functional and out; no inplace. Devices: cpu (NumPy), cuda (CuPy); meta gives shape and dtype.

    Raises:
        IndexOutOfRangeError (IndexError): a dim out of range.  ArgumentValueError (ValueError): a dim named
        twice.  ArgumentTypeError (TypeError): dims not ints.
    """
    ndim = len(self.shape)
    if dim is None:
        return PlannedSpec((), _INT64, None)
    axes = normalize_dims("count_nonzero", dim, ndim, "dim")
    shape = tuple(n for i, n in enumerate(self.shape) if i not in axes)
    return PlannedSpec(shape, _INT64, axes if ndim else None)


@_ks.count_nonzero.xp
def _count_nonzero(
    xp: ModuleType,
    self: D,
    dim: int | Sequence[int] | None,
    *,
    plan: tuple[int, ...] | None,
    out: ConstOut[D],
) -> None:
    a = self._array
    # (NumPy's count_nonzero with axis=None returns a Python int; with a tuple of axes an intp array)
    count = xp.count_nonzero(a) if plan is None else xp.count_nonzero(a, axis=plan)
    xp.copyto(out.array, count, casting="same_kind")


# --- argsort ----------------------------------------------------------------------------------------------------


@structured_op("argsort", inplace=False)
def argsort(
    self: TensorMeta, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> PlannedSpec[int | None]:
    """The indices that sort ``self`` along ``dim`` (``torch.argsort``; values as ``np.argsort``): ascending,
    or ``descending``; NaN sorts as the largest value (last ascending, first descending). With ``stable=True``
    equal elements keep their order (in both directions); without it the order of equal elements is
    unspecified (on the CPU it is NumPy's quicksort's; CuPy's sort is always stable).

    Result: int64, ``self``'s shape, on ``self``'s device. Variants: functional ``argsort(t, dim, descending,
    stable=...)`` / ``t.argsort(...)`` and out (PyTorch's ``argsort`` has no out, its ``sort`` has). Devices:
    cpu (NumPy), cuda (CuPy); meta gives shape and dtype.

    Raises:
        ArgumentTypeError (TypeError): complex ``self`` (no order, as PyTorch), ``dim`` not an int.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
    """
    if self.dtype.kind == "c":
        raise ArgumentTypeError(f"argsort: not supported for complex dtype {self.dtype.name} (no order)")
    d = normalize_dim("argsort", dim, len(self.shape))
    return PlannedSpec(self.shape, _INT64, d if self.shape else None)


@_ks.argsort.xp
def _argsort(
    xp: ModuleType,
    self: D,
    dim: int,
    descending: bool,
    *,
    stable: bool,
    plan: int | None,
    out: ConstOut[D],
) -> None:
    a, o = self._array, out.array
    if plan is None:  # 0-d: one element, at index 0
        o[...] = 0
        return
    kind: dict[str, Any] = {"kind": "stable"} if (stable or descending) and xp is np else {}
    if not descending:
        _copy_into(xp, o, xp.argsort(a, axis=plan, **kind))
        return
    # Descending, stable: sort the reversed tensor ascending, reverse that order and map the positions back
    # (equal elements then come in their original order, and NaN, the largest, first).
    n = a.shape[plan]
    ascending = xp.argsort(xp.flip(a, axis=plan), axis=plan, **kind)
    _copy_into(xp, o, (n - 1) - xp.flip(ascending, axis=plan))


# --- gather, take_along_dim, index_select, take ---------------------------------------------------------------


def _index_dtype(op: str, arg: str, index: TensorMeta, allowed: tuple[str, ...] = ("int64",)) -> None:
    if index.dtype.name not in allowed:
        expected = " or ".join(allowed)
        raise ArgumentTypeError(f"{op}: expected dtype {expected} for argument '{arg}', got {index.dtype.name}")


def _check_bounds(xp: ModuleType, op: str, arg: str, index: Any, size: int, *, negative: bool = False) -> None:
    """Raise IndexOutOfRangeError when an element of ``index`` is outside ``[0, size)`` (``[-size, size)`` with
    ``negative``); before any write."""
    if index.size == 0:
        return
    lo = -size if negative else 0
    bad = (index < lo) | (index >= size)
    if bool(bad.any()):
        value = int(index[bad].ravel()[0])
        raise IndexOutOfRangeError(f"{op}: index {value} (argument '{arg}') is out of bounds for size {size}")


@structured_op("gather", inplace=False)
def gather(self: TensorMeta, dim: int, index: TensorMeta) -> PlannedSpec[int | None]:
    """Values of ``self`` along ``dim`` at ``index`` (``torch.gather``; values as ``np.take_along_axis``):
    ``result[i][j][k] = self[index[i][j][k]][j][k]`` for ``dim == 0``, and so on. ``index`` is an int64 or int32 tensor
    with ``self``'s number of dims and sizes ``<= self``'s in every dim but ``dim``; the result has
    ``index``'s shape and ``self``'s dtype.

    Variants: functional ``gather(t, dim, index)`` / ``t.gather(...)`` and out; no inplace. Devices: cpu
    (NumPy), cuda (CuPy); meta gives shape and dtype. All tensors on one device.

    Raises:
        ArgumentTypeError (TypeError): ``index`` not int64 or int32 (PyTorch's rule).
        ShapeError (ValueError): ``index`` with another number of dims, or larger than ``self`` in a dim other
            than ``dim``.
        IndexOutOfRangeError (IndexError): ``dim`` out of range; an index outside ``[0, size)`` (checked before
            any write; negative indices are errors, as PyTorch).
        CastingError (TypeError): an ``out`` of another dtype than ``self``'s (PyTorch's rule).
    """
    if math.prod(index.shape) or index.dtype.kind not in "iu":  # (PyTorch checks the dtype of a non-empty index)
        _index_dtype("gather", "index", index, ("int32", "int64"))  # (PyTorch's gather takes both)
    nd = len(self.shape)
    d = normalize_dim("gather", dim, nd)
    if not math.prod(index.shape):  # (PyTorch checks an empty index's shape no further: an empty result)
        return PlannedSpec(index.shape, self.dtype, None)
    if len(index.shape) != nd and not (nd <= 1 and len(index.shape) <= 1):
        raise ShapeError(
            f"gather: index tensor must have the same number of dimensions as input tensor: self has shape "
            f"{_fmt(self.shape)}, index {_fmt(index.shape)}"
        )
    for i, (s, n) in enumerate(zip(self.shape, index.shape, strict=False)):
        if i != d and n > s:
            raise ShapeError(
                f"gather: size of index {_fmt(index.shape)} is larger than self {_fmt(self.shape)} in dimension {i}"
            )
    return PlannedSpec(index.shape, self.dtype, d if nd and index.shape else None)


rules.EXACT_DTYPE["gather"] = "PyTorch's gather writes only self's dtype"


@_ks.gather.xp
def _gather(xp: ModuleType, self: D, dim: int, index: D, *, plan: int | None, out: ConstOut[D]) -> None:
    a, idx = self._array, index._array
    if plan is None:  # a 0-d self or index (with the other at most 1-d): the flat elements at idx
        _check_bounds(xp, "gather", "index", idx, a.shape[0] if a.ndim else 1)
        _copy_into(xp, out.array, a.reshape(-1)[idx])
        return
    _check_bounds(xp, "gather", "index", idx, a.shape[plan])
    # Only the part of self that index covers in the other dims (PyTorch's rule; NumPy would broadcast).
    part = a[tuple(slice(None) if i == plan else slice(0, n) for i, n in enumerate(idx.shape))]
    _copy_into(xp, out.array, xp.take_along_axis(part, idx, axis=plan))


@structured_op("take_along_dim", inplace=False)
def take_along_dim(
    self: TensorMeta, indices: TensorMeta, dim: int | None = None
) -> PlannedSpec[tuple[int, tuple[int, ...], tuple[int, ...]] | None]:
    """Values of ``self`` at ``indices`` along ``dim`` (``torch.take_along_dim``; values as
    ``np.take_along_axis``): ``self`` and ``indices`` (int64, the same number of dims) broadcast in every dim
    but ``dim``; with ``dim=None`` both are flattened. Negative indices count from the end (PyTorch's and
    NumPy's). Result: the broadcast shape with ``indices``'s size in ``dim``, ``self``'s dtype.

    Variants: functional and out; no inplace. Devices: cpu (NumPy), cuda (CuPy); meta gives shape and dtype.

    Raises:
        ArgumentTypeError (TypeError): ``indices`` not int64.
        ShapeError (ValueError): different numbers of dims, or shapes that do not broadcast outside ``dim``.
        IndexOutOfRangeError (IndexError): ``dim`` out of range; an index outside ``[-size, size)`` (checked
            before any write).
    """
    _index_dtype("take_along_dim", "indices", indices)
    if dim is None:
        return PlannedSpec((math.prod(indices.shape),), self.dtype, None)
    nd = len(self.shape)
    d = normalize_dim("take_along_dim", dim, nd)
    if len(indices.shape) != nd:
        raise ShapeError(
            f"take_along_dim: input and indices should have the same number of dimensions, got shapes "
            f"{_fmt(self.shape)} and {_fmt(indices.shape)}"
        )
    if not nd:
        return PlannedSpec((), self.dtype, (0, (1,), (1,)))
    a_shape = list(self.shape)
    i_shape = list(indices.shape)
    a_shape[d] = i_shape[d] = 1
    common = list(broadcast_shapes("take_along_dim", tuple(a_shape), tuple(i_shape)))
    self_to = (*common[:d], self.shape[d], *common[d + 1 :])
    index_to = (*common[:d], indices.shape[d], *common[d + 1 :])
    return PlannedSpec(index_to, self.dtype, (d, self_to, index_to))


@_ks.take_along_dim.xp
def _take_along_dim(
    xp: ModuleType,
    self: D,
    indices: D,
    dim: int | None,
    *,
    plan: tuple[int, tuple[int, ...], tuple[int, ...]] | None,
    out: ConstOut[D],
) -> None:
    a, idx = self._array, indices._array
    if plan is None:
        flat = a.reshape(-1)
        _check_bounds(xp, "take_along_dim", "indices", idx, flat.shape[0], negative=True)
        _copy_into(xp, out.array, flat[idx.reshape(-1)])
        return
    d, self_to, index_to = plan
    _check_bounds(xp, "take_along_dim", "indices", idx, a.shape[d] if a.ndim else 1, negative=True)
    if not a.ndim:
        _copy_into(xp, out.array, a)
        return
    result = xp.take_along_axis(xp.broadcast_to(a, self_to), xp.broadcast_to(idx, index_to), axis=d)
    _copy_into(xp, out.array, result)


@structured_op("index_select", inplace=False)
def index_select(self: TensorMeta, dim: int, index: TensorMeta) -> PlannedSpec[int | None]:
    """The entries of ``self`` along ``dim`` at the positions ``index`` lists (``torch.index_select``; values
    as ``np.take``): ``index`` is a 1-d (or 0-d) int32 or int64 tensor; the result has ``self``'s shape with
    ``dim``'s size replaced by ``index``'s length, and ``self``'s dtype.

    Variants: functional ``index_select(t, dim, index)`` / ``t.index_select(...)`` and out; no inplace.
    Devices: cpu (NumPy), cuda (CuPy); meta gives shape and dtype.

    Raises:
        ArgumentTypeError (TypeError): ``index`` not int32/int64.
        ShapeError (ValueError): ``index`` with more than one dim.
        IndexOutOfRangeError (IndexError): ``dim`` out of range; an index outside ``[0, size)`` (checked before
            any write).
    """
    _index_dtype("index_select", "index", index, ("int32", "int64"))
    if len(index.shape) > 1:
        raise ShapeError(f"index_select: index must be 1-d or 0-d, got shape {_fmt(index.shape)}")
    nd = len(self.shape)
    d = normalize_dim("index_select", dim, nd)
    count = math.prod(index.shape)
    if not nd:
        if count != 1:
            raise ShapeError(f"index_select: index of a 0-d tensor must have one element, got {count}")
        return PlannedSpec((), self.dtype, None)
    shape = (*self.shape[:d], count, *self.shape[d + 1 :])
    return PlannedSpec(shape, self.dtype, d)


@_ks.index_select.xp
def _index_select(xp: ModuleType, self: D, dim: int, index: D, *, plan: int | None, out: ConstOut[D]) -> None:
    a, idx = self._array, index._array
    _check_bounds(xp, "index_select", "index", idx, a.shape[plan] if plan is not None else 1)
    if plan is None:
        _copy_into(xp, out.array, a)
        return
    _copy_into(xp, out.array, xp.take(a, idx.reshape(-1), axis=plan))


@structured_op("take", inplace=False)
def take(self: TensorMeta, index: TensorMeta) -> TensorSpec:
    """The elements of ``self``, read as a flat (C-order) 1-d tensor, at ``index`` (``torch.take``,
    ``np.take`` without an axis): ``index`` is an int64 tensor of any shape; negative indices count from the
    end, ``[-numel, numel)``. Result: ``index``'s shape, ``self``'s dtype.

    Variants: functional ``take(t, index)`` / ``t.take(index)`` and out; no inplace. Devices: cpu (NumPy),
    cuda (CuPy); meta gives shape and dtype.

    Raises:
        ArgumentTypeError (TypeError): ``index`` not int64.
        IndexOutOfRangeError (IndexError): an index outside ``[-numel, numel)`` (checked before any write).
    """
    _index_dtype("take", "index", index)
    return index.shape, self.dtype


@_ks.take.xp
def _take(xp: ModuleType, self: D, index: D, *, out: ConstOut[D]) -> None:
    a, idx = self._array, index._array
    _check_bounds(xp, "take", "index", idx, a.size, negative=True)
    _copy_into(xp, out.array, xp.take(a.reshape(-1), idx))


# --- tensordot --------------------------------------------------------------------------------------------------


def _tensordot_axes(a: TensorMeta, b: TensorMeta, dims: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(dims, bool):
        raise ArgumentTypeError(f"tensordot: argument 'dims' must be an int or a pair of lists of ints, got {dims!r}")
    if isinstance(dims, int) or hasattr(dims, "__index__"):
        n = int_arg("tensordot", "dims", dims)
        if n < 0:
            raise ArgumentTypeError(f"tensordot: expects dims >= 0, but got dims={n}")
        if n > len(a.shape) or n > len(b.shape):
            raise ShapeError(
                f"tensordot: dims={n} exceeds the number of dims of a {_fmt(a.shape)} or b {_fmt(b.shape)}"
            )
        return tuple(range(len(a.shape) - n, len(a.shape))), tuple(range(n))
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence) or len(dims) != 2:
        raise ArgumentTypeError(f"tensordot: argument 'dims' must be an int or a pair of lists of ints, got {dims!r}")
    da = normalize_dims("tensordot", dims[0], len(a.shape), "dims")
    db = normalize_dims("tensordot", dims[1], len(b.shape), "dims")
    for name, t, named in (("a", a, da), ("b", b, db)):
        if named and not t.shape:  # (normalize_dims lets a 0-d tensor's dim 0 name its value; no dim to contract)
            raise IndexOutOfRangeError(f"tensordot: argument 'dims' names dims {list(named)} of '{name}', which is 0-d")
    if len(da) != len(db):
        raise ShapeError(f"tensordot: both dimension lists should have the same length, got {list(da)} and {list(db)}")
    return da, db


@structured_op("tensordot", inplace=False, method=False)
def tensordot(
    a: TensorMeta, b: TensorMeta, dims: int | Sequence[int] = 2
) -> PlannedSpec[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The sum of products of ``a`` and ``b`` over the dims ``dims`` names (``torch.tensordot``, values and
    dtypes as ``np.tensordot``): an int ``n`` contracts the last ``n`` dims of ``a`` with the first ``n`` of
    ``b``; a pair of lists ``([a dims], [b dims])`` contracts those (in pairs); a contracted dim of size 1
    broadcasts against its partner (PyTorch's rule; NumPy refuses). Result shape: ``a``'s remaining dims then
    ``b``'s; dtype: NumPy's promotion of both (``np.matmul``'s loops).

    Variants: functional and out; no inplace, no Tensor method (as PyTorch). Devices: cpu (NumPy), cuda
    (CuPy); meta gives shape and dtype. Both tensors on one device.

    Raises:
        ShapeError (ValueError): contracted dims of different sizes, neither 1; lists of different lengths; ``n``
            larger than either tensor's number of dims.
        ArgumentTypeError (TypeError): ``dims`` neither an int nor a pair of lists of ints; a negative ``n``.
        IndexOutOfRangeError (IndexError): a dim out of range.  ArgumentValueError (ValueError): a dim repeated.
    """
    da, db = _tensordot_axes(a, b, dims)
    for i, j in zip(da, db, strict=True):
        if a.shape[i] != b.shape[j] and 1 not in (a.shape[i], b.shape[j]):
            raise ShapeError(
                f"tensordot: contracted dimensions need to match, but first has size {a.shape[i]} in dim {i} and "
                f"second has size {b.shape[j]} in dim {j} (shapes {_fmt(a.shape)} and {_fmt(b.shape)})"
            )
    shape = (
        *(n for i, n in enumerate(a.shape) if i not in da),
        *(n for j, n in enumerate(b.shape) if j not in db),
    )
    dtype = ufunc_result_dtype("tensordot", np.matmul, a.dtype, b.dtype)
    return PlannedSpec(shape, dtype, (da, db))


@_ks.tensordot.xp
def _tensordot(
    xp: ModuleType,
    a: D,
    b: D,
    dims: int | Sequence[int],
    *,
    plan: tuple[tuple[int, ...], tuple[int, ...]],
    out: ConstOut[D],
) -> None:
    x, y = a._array, b._array
    if x.dtype != y.dtype:
        common = np.result_type(x.dtype, y.dtype)
        x, y = x.astype(common, copy=False), y.astype(common, copy=False)
    # A contracted dim of size 1 against a larger one broadcasts (PyTorch's rule): make both sizes equal.
    xs, ys = list(x.shape), list(y.shape)
    for i, j in zip(*plan, strict=True):
        xs[i] = ys[j] = max(xs[i], ys[j])
    if xs != list(x.shape) or ys != list(y.shape):
        x, y = xp.broadcast_to(x, tuple(xs)), xp.broadcast_to(y, tuple(ys))
    _copy_into(xp, out.array, xp.tensordot(x, y, axes=(list(plan[0]), list(plan[1]))))
