"""Data-dependent ops: ``nonzero``, ``unique``, ``unique_consecutive``, ``bincount`` and ``unique_all`` (the Array
API's, behind ``devtensor.array_api``), whose result shapes depend on the input's values.

Each is a data-dependent structured op (:mod:`devtensor.structured.data_dependent`): registered
(:func:`devtensor.structured.get_op` finds it), ``data_dependent = True`` so that a static plan refuses it, one
kernel for both devices (NumPy or CuPy as ``xp``), per-key Python overrides, dispatch modes (variant
``"functional"``), no ``out=`` and no inplace variant (PyTorch's ``nonzero`` takes ``out=``; a data-dependent
result cannot be checked against an out's shape before computing, so devtensor leaves it out), and meta tensors
refused (NoDataError: there are no values to size the result by). Values are NumPy's (``np.nonzero``,
``np.unique``). ``nonzero``, ``unique`` and ``unique_consecutive`` are also Tensor methods.

NaN: ``unique`` treats every NaN as one distinct value (NumPy 2's ``np.unique``, ``equal_nan=True``; PyTorch keeps
each NaN apart); ``unique_consecutive`` keeps each NaN apart (a NaN never equals its neighbour, as PyTorch);
``unique_all`` keeps each NaN apart (the Array API standard's rule).
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, Literal, overload

import numpy as np

from devtensor import dtypes
from devtensor.backends import allocation_error, check_allocation_size
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from devtensor.kernels.ufunc_family import D
from devtensor.meta import int_arg, normalize_dim
from devtensor.structured.data_dependent import DataDependentOp, data_dependent_op, data_dependent_ops_by_name
from devtensor.tensor import Tensor, TensorMeta

__all__ = ["DataDependentOp", "bincount", "data_dependent_ops", "nonzero", "unique", "unique_consecutive"]

_INT64 = dtypes.int64


def _bool(op: str, arg: str, value: object) -> None:
    if type(value) is not bool:
        raise ArgumentTypeError(f"{op}: argument '{arg}' must be a bool, got {type(value).__name__} {value!r}")


# --- nonzero ----------------------------------------------------------------------------------------------------


@data_dependent_op("nonzero")
def _nonzero_meta(self: TensorMeta, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero (true) elements of ``self`` (``torch.nonzero``; values as ``np.nonzero``), in
    row-major order: an int64 tensor of shape ``(n, self.ndim)`` (one row per element), or, with
    ``as_tuple=True``, a tuple of ``self.ndim`` 1-D int64 tensors (one per dim; a 0-d ``self`` gives one). On
    ``self``'s device (cpu: NumPy, cuda: CuPy); no out= (data-dependent: see :mod:`devtensor.data_dependent`).

    Raises:
        ArgumentTypeError (TypeError): ``self`` not a Tensor, ``as_tuple`` not a bool.
        NoDataError (RuntimeError): a meta tensor (no values to size the result by).
    """
    _bool("nonzero", "as_tuple", as_tuple)
    return (_INT64,) * max(len(self.shape), 1) if as_tuple else _INT64


@_nonzero_meta.impl("cpu", "cuda")
def _nonzero(xp: ModuleType, self: D, *, as_tuple: bool) -> tuple[Any, ...]:
    a = self._array
    if a.ndim == 0:
        # As PyTorch: a 0-d input is a 1-element 1-d one for as_tuple, and has 0 index columns otherwise.
        n = int(bool(a))
        return (xp.zeros((n,), dtype=np.int64),) if as_tuple else (xp.zeros((n, 0), dtype=np.int64),)
    found = [i.astype(np.int64) for i in xp.nonzero(a)]
    if as_tuple:
        return tuple(found)
    return (xp.stack(found, axis=1),)


# --- unique -----------------------------------------------------------------------------------------------------


def _unique_dtypes(
    op: str, self: TensorMeta, return_inverse: bool, return_counts: bool, dim: int | None, sorted: bool = True
) -> Any:
    _bool(op, "sorted", sorted)
    _bool(op, "return_inverse", return_inverse)
    _bool(op, "return_counts", return_counts)
    if dim is not None:
        normalize_dim(op, dim, len(self.shape))
    if not (return_inverse or return_counts):
        return self.dtype
    return (self.dtype, *((_INT64,) if return_inverse else ()), *((_INT64,) if return_counts else ()))


@data_dependent_op("unique")
def _unique_meta(
    self: TensorMeta,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct elements of ``self`` (``torch.unique``; values as ``np.unique``): with ``dim=None``, a
    sorted 1-D tensor of ``self``'s dtype; with ``dim``, the distinct slices along ``dim`` (``self``'s shape with
    the number of distinct slices in ``dim``), in lexicographic order. With ``return_inverse`` also the int64
    index of each element (``dim=None``: ``self``'s shape) or slice (a 1-D tensor of ``self.shape[dim]``) in
    that result, with ``return_counts`` also the int64 count of each distinct element or slice; the result is
    then a tuple ``(output, inverse?, counts?)`` as PyTorch's. ``sorted=False`` gives the same sorted order
    (PyTorch leaves it unspecified). NaN elements are one distinct value (NumPy 2's ``equal_nan``; PyTorch keeps
    each NaN); with ``dim``, slices holding NaN are each distinct (NumPy's). Complex elements sort by real, then
    imaginary part (NumPy's order; PyTorch refuses complex). A 0-d ``self`` is a 1-element one.
    On ``self``'s device (cpu: NumPy, cuda: CuPy); no out= (data-dependent: see :mod:`devtensor.data_dependent`).

    Raises:
        ArgumentTypeError (TypeError): ``self`` not a Tensor; a flag not a bool; ``dim`` not an int.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
        NoDataError (RuntimeError): a meta tensor.
    """
    return _unique_dtypes("unique", self, return_inverse, return_counts, dim, sorted)


@_unique_meta.impl("cpu", "cuda")
def _unique(
    xp: ModuleType, self: D, sorted: bool, return_inverse: bool, return_counts: bool, dim: int | None
) -> tuple[Any, ...]:
    a = self._array
    if dim is None or a.ndim == 0:
        found = xp.unique(a.reshape(-1), return_inverse=return_inverse, return_counts=return_counts)
        inverse_shape: tuple[int, ...] = a.shape
    else:
        axis = normalize_dim("unique", dim, a.ndim)
        found = xp.unique(a, axis=axis, return_inverse=return_inverse, return_counts=return_counts)
        inverse_shape = (a.shape[axis],)
    if not (return_inverse or return_counts):
        return (found,)
    values, *rest = found
    result = [values]
    if return_inverse:
        result.append(rest.pop(0).astype(np.int64).reshape(inverse_shape))
    if return_counts:
        result.append(rest.pop(0).astype(np.int64).reshape(-1))
    return tuple(result)


# --- unique_consecutive -------------------------------------------------------------------------------------------


@data_dependent_op("unique_consecutive")
def _unique_consecutive_meta(
    self: TensorMeta,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """``self`` with each run of equal consecutive elements (``dim=None``: of the flattened tensor) or slices
    along ``dim`` collapsed to one (``torch.unique_consecutive``): a 1-D tensor of ``self``'s dtype
    (``dim=None``) or ``self``'s shape with the number of runs in ``dim``; with ``return_inverse`` also the
    int64 run index of each element (``self``'s shape) or slice (1-D, ``self.shape[dim]``), with
    ``return_counts`` the int64 length of each run; then a tuple ``(output, inverse?, counts?)``. Not sorted.
    NaN never equals its neighbour: each NaN is its own run (PyTorch's). On ``self``'s device (cpu: NumPy,
    cuda: CuPy); no out= (data-dependent).

    Raises:
        ArgumentTypeError (TypeError): ``self`` not a Tensor; a flag not a bool; ``dim`` not an int.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
        NoDataError (RuntimeError): a meta tensor.
    """
    return _unique_dtypes("unique_consecutive", self, return_inverse, return_counts, dim)


@_unique_consecutive_meta.impl("cpu", "cuda")
def _unique_consecutive(
    xp: ModuleType, self: D, return_inverse: bool, return_counts: bool, dim: int | None
) -> tuple[Any, ...]:
    a = self._array
    if dim is None or a.ndim == 0:
        x, axis = a.reshape(-1), 0
        inverse_shape: tuple[int, ...] = a.shape
    else:
        axis = normalize_dim("unique_consecutive", dim, a.ndim)
        x = a
        inverse_shape = (a.shape[axis],)
    n = x.shape[axis]
    moved = xp.moveaxis(x, axis, 0)
    rows = moved.reshape(n, int(np.prod(moved.shape[1:], dtype=np.int64)))
    # A run starts at 0 and wherever a slice differs from the one before it.
    starts = xp.ones((n,), dtype=bool)
    if n > 1 and rows.shape[1] > 0:
        starts[1:] = xp.any(rows[1:] != rows[:-1], axis=1)
    elif n > 1:
        starts[1:] = False
    first = xp.nonzero(starts)[0]
    result = [xp.take(x, first, axis=axis)]
    if return_inverse:
        result.append((xp.cumsum(starts) - 1).astype(np.int64).reshape(inverse_shape))
    if return_counts:
        ends = xp.concatenate([first[1:], xp.asarray([n], dtype=first.dtype)]) if n else first
        result.append((ends - first).astype(np.int64))
    return tuple(result)


# --- unique_all (the Array API's) -----------------------------------------------------------------------------------


@data_dependent_op("unique_all", public=False)
def _unique_all_meta(self: TensorMeta) -> Any:
    """The Array API standard's ``unique_all`` of ``self`` (not in the main namespace, where ``unique`` is
    PyTorch's; ``devtensor.array_api``'s ``unique_*`` functions call it): ``(values, indices, inverse_indices,
    counts)``: the sorted distinct elements of the flattened ``self`` (``self``'s dtype), the int64 flat index of
    each one's first occurrence, the int64 index of each element in ``values`` (``self``'s shape) and the int64
    counts. Every NaN is distinct (the standard's rule; NumPy's ``equal_nan=False``). On ``self``'s device (cpu:
    NumPy, cuda: CuPy); no out= (data-dependent).

    Raises:
        ArgumentTypeError (TypeError): ``self`` not a Tensor.  NoDataError (RuntimeError): a meta tensor.
    """
    return (self.dtype, _INT64, _INT64, _INT64)


@_unique_all_meta.impl("cpu", "cuda")
def _unique_all(xp: ModuleType, self: D) -> tuple[Any, ...]:
    a = self._array
    flat = a.reshape(-1)
    kw: dict[str, Any] = {"return_index": True, "return_inverse": True, "return_counts": True}
    try:
        values, index, inverse, counts = xp.unique(flat, equal_nan=False, **kw)
    except TypeError:  # an array module without equal_nan (each NaN is then distinct already: NumPy < 1.24)
        values, index, inverse, counts = xp.unique(flat, **kw)
    return (values, index.astype(np.int64), inverse.astype(np.int64).reshape(a.shape), counts.astype(np.int64))


# --- bincount ---------------------------------------------------------------------------------------------------


@data_dependent_op("bincount")
def _bincount_meta(self: TensorMeta, weights: TensorMeta | None = None, minlength: int = 0) -> Any:
    """The number of occurrences of each value ``0..max(self)`` in the 1-d non-negative integer tensor ``self``
    (``torch.bincount``; values and dtypes as ``np.bincount``): int64 counts, or with ``weights`` (1-d, of
    ``self``'s length, real) the sums of the weights of each value's occurrences as float64 (NumPy's; PyTorch
    keeps float32 weights' dtype; an empty ``self`` gives int64 zeros even with weights, as NumPy). The length is
    ``max(max(self) + 1, minlength)`` (``minlength`` for an empty ``self``). On ``self``'s device (cpu: NumPy,
    cuda: CuPy); no out= (data-dependent).

    Raises:
        ArgumentTypeError (TypeError): ``self`` not a bool or integer tensor (uint64 included: NumPy cannot
            index with it); complex weights; ``minlength`` not an int.
        ShapeError (ValueError): ``self`` not 1-d; ``weights`` of another shape.
        ArgumentValueError (ValueError): a negative value in ``self`` (checked on the values); a negative
            ``minlength``.
        NoDataError (RuntimeError): a meta tensor.
    """
    if self.dtype.kind not in "biu" or self.dtype == dtypes.uint64:
        raise ArgumentTypeError(f"bincount: argument 'self' must be a bool or integer tensor, got {self.dtype.name}")
    if len(self.shape) != 1:
        raise ShapeError(f"bincount: argument 'self' must be 1-d, got shape {list(self.shape)}")
    if weights is not None:
        if weights.dtype.kind == "c":
            raise ArgumentTypeError(f"bincount: argument 'weights' must be real, got {weights.dtype.name}")
        if weights.shape != self.shape:
            raise ShapeError(
                f"bincount: argument 'weights' must have self's shape {list(self.shape)}, got {list(weights.shape)}"
            )
    length = int_arg("bincount", "minlength", minlength)
    if length < 0:
        raise ArgumentValueError(f"bincount: argument 'minlength' must be non-negative, got {minlength}")
    # (a length no array holds: NumPy's bincount refuses it with a raw OverflowError or MemoryError)
    check_allocation_size("bincount", (length,), dtypes.float64)
    # (NumPy's: an empty self counts nothing, and its weights are not read: int64 zeros even with weights)
    return _INT64 if weights is None or self.shape[0] == 0 else dtypes.float64


@_bincount_meta.impl("cpu", "cuda")
def _bincount(xp: ModuleType, self: D, weights: D | None, minlength: int) -> tuple[Any, ...]:
    a = self._array
    if a.dtype.kind != "b" and a.size and bool((a < 0).any()):
        raise ArgumentValueError(f"bincount: argument 'self' must be non-negative, got {int(a.min())}")
    w = None if weights is None else weights._array.astype(np.float64, copy=False)
    try:
        counts = xp.bincount(a.astype(np.intp, copy=False), weights=w, minlength=int(minlength))
    except MemoryError as error:  # (minlength's memory is not available: NumPy's error names no op)
        raise allocation_error("bincount", (int(minlength),), np.dtype(np.float64), str(self.device), error) from None
    return (counts.astype(np.int64 if w is None or a.size == 0 else np.float64, copy=False),)


# --- the typed fronts ---------------------------------------------------------------------------------------------

if TYPE_CHECKING:

    @overload
    def nonzero(self: Tensor, *, as_tuple: Literal[False] = False) -> Tensor: ...
    @overload
    def nonzero(self: Tensor, *, as_tuple: Literal[True]) -> tuple[Tensor, ...]: ...
    @overload
    def nonzero(self: Tensor, *, as_tuple: bool) -> Tensor | tuple[Tensor, ...]: ...
    def nonzero(self: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]: ...
    @overload
    def unique(
        self: Tensor,
        sorted: bool = True,
        return_inverse: Literal[False] = False,
        return_counts: Literal[False] = False,
        dim: int | None = None,
        *,
        axis: int | None = ...,
    ) -> Tensor: ...
    @overload
    def unique(
        self: Tensor,
        sorted: bool = True,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
        *,
        axis: int | None = ...,
    ) -> Tensor | tuple[Tensor, ...]: ...
    def unique(
        self: Tensor,
        sorted: bool = True,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
        *,
        axis: int | None = ...,
    ) -> Tensor | tuple[Tensor, ...]: ...
    @overload
    def unique_consecutive(
        self: Tensor,
        return_inverse: Literal[False] = False,
        return_counts: Literal[False] = False,
        dim: int | None = None,
        *,
        axis: int | None = ...,
    ) -> Tensor: ...
    @overload
    def unique_consecutive(
        self: Tensor,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
        *,
        axis: int | None = ...,
    ) -> Tensor | tuple[Tensor, ...]: ...
    def unique_consecutive(
        self: Tensor,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
        *,
        axis: int | None = ...,
    ) -> Tensor | tuple[Tensor, ...]: ...
    def bincount(self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor: ...

else:
    bincount = _bincount_meta.functional
    nonzero = _nonzero_meta.functional
    unique = _unique_meta.functional
    unique_consecutive = _unique_consecutive_meta.functional

# The Tensor methods (declared in devtensor.tensor_methods_multi): the fronts take self first.
for _name, _op in (
    ("nonzero", _nonzero_meta),
    ("unique", _unique_meta),
    ("unique_consecutive", _unique_consecutive_meta),
    ("bincount", _bincount_meta),
):
    setattr(Tensor, _name, _op.functional)

#: The data-dependent ops by name (the registry of :mod:`devtensor.structured.data_dependent`).
data_dependent_ops: Final[dict[str, DataDependentOp]] = data_dependent_ops_by_name
