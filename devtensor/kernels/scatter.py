"""Index writes: ``index_add``, ``index_copy``, ``scatter`` and ``scatter_add``, PyTorch's ops with their
functional, out and inplace variants (``index_add_``, ``index_copy_``, ``scatter_``, ``scatter_add_``).

Each result is ``self`` with the entries ``index`` names replaced (``index_copy``, ``scatter``) or accumulated into
(``index_add``, ``scatter_add``: repeated indices accumulate, as NumPy's unbuffered ``np.add.at``). One kernel for
both devices (NumPy or CuPy as ``xp``): the result is built in new memory (from ``self``, every index checked
first) and written into the output once, so an inplace call whose ``source`` is ``self`` reads the old values and a
call that raises writes nothing. PyTorch's rules: ``source``/``src`` of ``self``'s dtype, indices in
``[0, size)`` (negative indices are errors), the inplace and out rules of the common code (a version bump per
call, partial overlap refused).
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, Literal

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dtypes import python_scalar
from devtensor.errors import ArgumentTypeError, ShapeError
from devtensor.kernels.indexing_ops import _check_bounds, _index_dtype
from devtensor.kernels.ufunc_family import D, deferred_conditions
from devtensor.meta import check_scalar_fits, normalize_dim
from devtensor.structured import PlannedSpec, structured_op
from devtensor.tensor import Tensor, TensorMeta, TensorMetaOrScalar
from devtensor.typed import ConstOut

__all__ = ["index_add", "index_copy", "scatter", "scatter_add"]


def _fmt(shape: tuple[int, ...]) -> str:
    return str(list(shape))


def _same_dtype(op: str, arg: str, self: TensorMeta, other: TensorMeta) -> None:
    if other.dtype != self.dtype:
        raise ArgumentTypeError(
            f"{op}: self ({self.dtype.name}) and argument '{arg}' ({other.dtype.name}) must have the same dtype"
        )


# --- index_add, index_copy --------------------------------------------------------------------------------------


def _index_spec(op: str, self: TensorMeta, dim: int, index: TensorMeta, source: TensorMeta) -> PlannedSpec[int]:
    """Checks of ``index_add``/``index_copy``: a 1-d (or 0-d) int64/int32 index with one entry per slice of
    ``source`` along ``dim``; ``source`` of ``self``'s shape but along ``dim``. The plan: the normalised dim."""
    _index_dtype(op, "index", index, ("int32", "int64"))
    _same_dtype(op, "source", self, source)
    if len(index.shape) > 1:
        raise ShapeError(f"{op}: index must be 1-d or 0-d, got shape {_fmt(index.shape)}")
    nd = len(self.shape)
    d = normalize_dim(op, dim, nd)
    count = math.prod(index.shape)
    if nd == 0:  # (a 0-d self takes one index and a source of one element, 0-d or 1-d, as PyTorch)
        ok = count == 1 and math.prod(source.shape) == 1 and len(source.shape) <= 1
    else:
        ok = tuple(source.shape) == (*self.shape[:d], count, *self.shape[d + 1 :])
    if not ok:
        raise ShapeError(
            f"{op}: source of shape {_fmt(source.shape)} must have self's shape {_fmt(self.shape)} with dim {d} of "
            f"the index's length {count}"
        )
    return PlannedSpec(self.shape, self.dtype, d)


def _index_positions(xp: ModuleType, op: str, a: Any, dim: int, index: Any) -> tuple[Any, ...]:
    """The NumPy index of the slices ``index`` names along ``dim`` of ``a`` (checked in ``[0, size)``)."""
    size = a.shape[dim] if a.ndim else 1
    _check_bounds(xp, op, "index", index, size)
    return (slice(None),) * dim + (index.reshape(-1).astype(np.intp),)


@structured_op("index_add", out_may_be_input=True)
def index_add(
    self: TensorMeta, dim: int, index: TensorMeta, source: TensorMeta, *, alpha: bool | int | float | complex = 1
) -> PlannedSpec[int]:
    """``self`` with ``alpha * source[..., i, ...]`` added to the slice ``index[i]`` along ``dim``, for every i
    (``torch.index_add``; repeated indices accumulate, as ``np.add.at``). ``index``: 1-d (or 0-d) int64 or
    int32, values in ``[0, self.size(dim))``; ``source``: ``self``'s dtype, ``self``'s shape with ``dim``'s size
    the index's length. Result: ``self``'s shape and dtype, on its device. Variants: functional, out and inplace
    (``t.index_add_(dim, index, source, alpha=1)``).

    Raises:
        ArgumentTypeError (TypeError): ``index`` not int32/int64; ``source`` of another dtype; a float ``alpha``
            for an integer ``self`` (a complex one for a real ``self``).
        ShapeError (ValueError): ``index`` of more than 1 dim; ``source`` of another shape.
        IndexOutOfRangeError (IndexError): ``dim`` out of range; an index outside ``[0, size)`` (checked before
            any write).
    """
    spec = _index_spec("index_add", self, dim, index, source)
    value = python_scalar("index_add", "alpha", alpha)
    if (self.dtype.kind in "biu" and isinstance(value, float | complex)) or (
        self.dtype.kind != "c" and isinstance(value, complex)
    ):
        raise ArgumentTypeError(
            f"index_add: argument 'alpha' {value!r} must be a {'real number' if self.dtype.kind in 'f' else 'int'} "
            f"for a {self.dtype.name} self"
        )
    check_scalar_fits("index_add", value, self.dtype, "alpha")
    return spec


@_ks.index_add.xp
def _index_add(
    xp: ModuleType,
    self: D,
    dim: int,
    index: D,
    source: D,
    *,
    alpha: bool | int | float | complex,
    plan: int,
    out: ConstOut[D],
) -> None:
    a = self._array
    where = _index_positions(xp, "index_add", a, plan, index._array)
    result = a.copy() if a.ndim else a.reshape(1).copy()
    src = source._array if a.ndim else source._array.reshape(1)
    scale = python_scalar("index_add", "alpha", alpha)
    with deferred_conditions():  # (several steps: the result is written, then a condition reported)
        if scale != 1:
            src = (src * scale).astype(a.dtype, copy=False) if a.dtype.kind != "b" else src & bool(scale)
        # (a bool sum saturates at True, as PyTorch's)
        accumulate_at(xp, "logical_or" if a.dtype.kind == "b" else "add", result, where, src)
        xp.copyto(out.array, result.reshape(out.array.shape))


@structured_op("index_copy", out_may_be_input=True)
def index_copy(self: TensorMeta, dim: int, index: TensorMeta, source: TensorMeta) -> PlannedSpec[int]:
    """``self`` with the slice ``index[i]`` along ``dim`` replaced by ``source[..., i, ...]``, for every i
    (``torch.index_copy``; for a repeated index the last slice wins, as NumPy's assignment; PyTorch leaves that
    order undefined). Arguments, result, variants and errors as :func:`index_add` (no ``alpha``)."""
    return _index_spec("index_copy", self, dim, index, source)


@_ks.index_copy.xp
def _index_copy(xp: ModuleType, self: D, dim: int, index: D, source: D, *, plan: int, out: ConstOut[D]) -> None:
    a = self._array
    where = _index_positions(xp, "index_copy", a, plan, index._array)
    result = a.copy() if a.ndim else a.reshape(1).copy()
    result[where] = source._array if a.ndim else source._array.reshape(1)
    xp.copyto(out.array, result.reshape(out.array.shape))


# --- scatter, scatter_add ---------------------------------------------------------------------------------------


def _scatter_spec(op: str, self: TensorMeta, dim: int, index: TensorMeta, src: TensorMetaOrScalar) -> PlannedSpec[int]:
    """Checks of ``scatter``/``scatter_add`` (PyTorch's): an int64 or int32 ``index`` with ``self``'s number of
    dims, no larger than ``src`` in any dim nor than ``self`` in any dim but ``dim``; ``src`` of ``self``'s dtype
    (or a number that fits it, for ``scatter``). The plan: the normalised dim."""
    _index_dtype(op, "index", index, ("int32", "int64"))  # (PyTorch's scatter takes both, as gather)
    nd = len(self.shape)
    d = normalize_dim(op, dim, nd)
    if isinstance(src, Tensor):
        _same_dtype(op, "src", self, src)
    else:
        check_scalar_fits(op, python_scalar(op, "value", src), self.dtype, "value")
    if math.prod(index.shape) == 0:
        return PlannedSpec(self.shape, self.dtype, d)
    if len(index.shape) != max(nd, 1) and not (nd == 0 and len(index.shape) <= 1):
        raise ShapeError(
            f"{op}: index must have the same number of dimensions as self: self has shape {_fmt(self.shape)}, "
            f"index {_fmt(index.shape)}"
        )
    self_shape = self.shape or (1,)
    src_shape = (src.shape or (1,)) if isinstance(src, Tensor) else None
    src_text = _fmt(src.shape) if isinstance(src, Tensor) else ""
    if src_shape is not None and len(src_shape) != len(index.shape or (1,)):
        raise ShapeError(
            f"{op}: src must have the same number of dimensions as index: src has shape {src_text}, index "
            f"{_fmt(index.shape)}"
        )
    for i, n in enumerate(index.shape or (1,)):
        if i != d and n > self_shape[i]:
            raise ShapeError(
                f"{op}: size of index {_fmt(index.shape)} is larger than self {_fmt(self.shape)} in dimension {i}"
            )
        if src_shape is not None and n > src_shape[i]:
            raise ShapeError(f"{op}: size of index {_fmt(index.shape)} is larger than src {src_text} in dimension {i}")
    return PlannedSpec(self.shape, self.dtype, d)


def accumulate_at(xp: ModuleType, ufunc: str, result: Any, where: tuple[Any, ...], values: Any) -> None:
    """``np.<ufunc>.at(result, where, values)``: unbuffered, repeated positions accumulate in index order (NumPy's
    values bit for bit). CuPy's ``ufunc.at`` covers few ufuncs and dtypes, so on another array module the
    accumulation runs on the host and the result is copied back (correct values, at the cost of two copies)."""
    if xp is np:
        getattr(np, ufunc).at(result, where, values)
        return
    host = xp.asnumpy(result)
    host_where = tuple(w if isinstance(w, slice) else xp.asnumpy(w) for w in where)
    host_values = xp.asnumpy(values) if hasattr(values, "shape") else values
    getattr(np, ufunc).at(host, host_where, host_values)
    xp.copyto(result, xp.asarray(host))


def _scatter_into(
    xp: ModuleType, op: str, self: Any, dim: int, index: Any, src: Any, reduce: str | None, out: Any
) -> None:
    """Build the scattered result from ``self`` (new memory, every index checked first) and write it to ``out``."""
    a = self if self.ndim else self.reshape(1)
    idx = index if index.ndim else index.reshape(1)
    result = a.copy()
    if idx.size:
        _check_bounds(xp, op, "index", idx, a.shape[dim])
        # The element (i, j, k) of index names position index[i, j, k] along dim, its own position elsewhere.
        where = tuple(
            idx.astype(np.intp)
            if i == dim
            else xp.arange(n, dtype=np.intp).reshape((1,) * i + (n,) + (1,) * (idx.ndim - i - 1))
            for i, n in enumerate(idx.shape)
        )
        if isinstance(src, Tensor):
            values = src._array if src._array.ndim else src._array.reshape(1)
            values = values[tuple(slice(0, n) for n in idx.shape)]
        else:  # (a number is converted to self's dtype first, as PyTorch's: 2.5 adds 2 to an integer tensor)
            values = xp.asarray(python_scalar(op, "value", src), dtype=a.dtype)
        with deferred_conditions():  # (the accumulation and the write, then a condition reported)
            if reduce is None:
                result[where] = values
            elif a.dtype.kind == "b":  # (a bool sum saturates at True, a bool product is an and, as PyTorch's)
                accumulate_at(xp, "logical_or" if reduce == "add" else "logical_and", result, where, values)
            else:
                accumulate_at(xp, "add" if reduce == "add" else "multiply", result, where, values)
            xp.copyto(out, result.reshape(out.shape))
            return
    xp.copyto(out, result.reshape(out.shape))


@structured_op("scatter", out_may_be_input=True)
def scatter(
    self: TensorMeta,
    dim: int,
    index: TensorMeta,
    src: TensorMetaOrScalar,
    *,
    reduce: Literal["add", "multiply"] | None = None,
) -> PlannedSpec[int]:
    """``self`` with ``src``'s values written at the positions ``index`` names along ``dim`` (``torch.scatter``):
    for ``dim == 0``, ``result[index[i][j][k]][j][k] = src[i][j][k]``, and so on, over ``index``'s shape (the
    inverse of :func:`devtensor.gather`). ``index``: int64 or int32 with ``self``'s number of dims, no larger than
    ``src`` in any dim nor than ``self`` in any dim but ``dim``, values in ``[0, self.size(dim))``; ``src``: a
    tensor of ``self``'s dtype, or a number that fits it (PyTorch's ``scatter(dim, index, value)`` form, passed
    positionally or as ``src=``: one schema has one name for it). ``reduce="add"``/``"multiply"`` accumulates instead
    (PyTorch's deprecated form). For a repeated position the last write wins (NumPy's
    assignment; PyTorch leaves the order undefined). Result: ``self``'s shape and dtype. Variants: functional, out
    and inplace (``t.scatter_(dim, index, src)``).

    Raises:
        ArgumentTypeError (TypeError): ``index`` not int64 or int32; ``src`` of another dtype.
        ShapeError (ValueError): ``index`` or ``src`` of another number of dims, or ``index`` larger than they
            are.
        IndexOutOfRangeError (IndexError): ``dim`` out of range; an index outside ``[0, size)`` (checked before
            any write).
        ScalarOverflowError, CastingError: a number ``src`` that does not fit ``self``'s dtype.
    """
    return _scatter_spec("scatter", self, dim, index, src)


@_ks.scatter.xp
def _scatter(
    xp: ModuleType,
    self: D,
    dim: int,
    index: D,
    src: D | bool | int | float | complex,
    *,
    reduce: Literal["add", "multiply"] | None,
    plan: int,
    out: ConstOut[D],
) -> None:
    _scatter_into(xp, "scatter", self._array, plan, index._array, src, reduce, out.array)


@structured_op("scatter_add", out_may_be_input=True)
def scatter_add(self: TensorMeta, dim: int, index: TensorMeta, src: TensorMeta) -> PlannedSpec[int]:
    """``self`` with ``src``'s values added at the positions ``index`` names along ``dim``
    (``torch.scatter_add``: ``result[index[i][j][k]][j][k] += src[i][j][k]`` for ``dim == 0``; repeated positions
    accumulate, as ``np.add.at``). Arguments, result, variants and errors as :func:`scatter` (``src`` a tensor)."""
    return _scatter_spec("scatter_add", self, dim, index, src)


@_ks.scatter_add.xp
def _scatter_add(xp: ModuleType, self: D, dim: int, index: D, src: D, *, plan: int, out: ConstOut[D]) -> None:
    _scatter_into(xp, "scatter_add", self._array, plan, index._array, src, "add", out.array)
