"""Ordering ops with several outputs: ``sort`` (values, indices), ``topk`` (values, indices), ``aminmax``
(min, max), and ``max``/``min`` along a dim (values, indices).

Multi-output structured ops (:mod:`devtensor.structured.multi`): a meta function and one kernel for both
devices (NumPy or CuPy as ``xp``), PyTorch's names, signatures and result tuples (``torch.return_types``'
fields), values as NumPy's (``np.argsort``, ``np.take_along_axis``, ``np.min``/``np.max``). The functional
front takes ``out=`` as a tuple of tensors, one per output, with the out rules of every op. They are the main
namespace's functions ``devtensor.sort``, ``devtensor.topk``, ``devtensor.aminmax``, ``devtensor.max`` and
``devtensor.min`` (:mod:`devtensor.multi_ops`, which also attaches them as Tensor methods: the multi-output
machinery attaches none).

Order: ascending or descending as asked; NaN sorts as the largest value (last ascending, first descending,
first for ``topk(largest=True)``), as PyTorch. Complex tensors have no order: ArgumentTypeError.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from devtensor import dtypes
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from devtensor.kernels.ufunc_family import D
from devtensor.meta import int_arg, normalize_dim
from devtensor.structured import TensorSpec, multi_output_op
from devtensor.tensor import Tensor, TensorMeta
from devtensor.typed import ConstOut

__all__ = ["AminmaxResult", "MaxResult", "MinResult", "SortResult", "TopkResult"]

_INT64 = dtypes.int64


class SortResult(NamedTuple):
    """``sort``'s result (``torch.return_types.sort``): the sorted ``values`` and their ``indices`` in the
    input along the sorted dim."""

    values: Tensor
    indices: Tensor


class TopkResult(NamedTuple):
    """``topk``'s result (``torch.return_types.topk``): the ``k`` selected ``values`` and their ``indices``."""

    values: Tensor
    indices: Tensor


class AminmaxResult(NamedTuple):
    """``aminmax``'s result (``torch.return_types.aminmax``): the minimum and the maximum."""

    min: Tensor
    max: Tensor


def _ordered(op: str, t: TensorMeta) -> None:
    if t.dtype.kind == "c":
        raise ArgumentTypeError(f"{op}: not supported for complex dtype {t.dtype.name} (no order)")


def _bool(op: str, arg: str, value: object) -> bool:
    if type(value) is not bool:
        raise ArgumentTypeError(f"{op}: argument '{arg}' must be a bool, got {type(value).__name__} {value!r}")
    return value


def order_indices(xp: ModuleType, a: Any, axis: int, descending: bool, stable: bool) -> Any:
    """The int64 indices that sort ``a`` along ``axis`` (ascending or ``descending``; NaN largest), stable
    when asked or when descending (the reversed-order trick below keeps equal elements in input order)."""
    kind: dict[str, Any] = {"kind": "stable"} if (stable or descending) and xp is np else {}
    if not descending:
        return xp.argsort(a, axis=axis, **kind)
    # Descending: sort the reversed tensor ascending, reverse that order and map the positions back (equal
    # elements then keep their order, and NaN, the largest, comes first).
    n = a.shape[axis]
    ascending = xp.argsort(xp.flip(a, axis=axis), axis=axis, **kind)
    return (n - 1) - xp.flip(ascending, axis=axis)


# --- sort -------------------------------------------------------------------------------------------------------


@multi_output_op(result=SortResult, exact_out_dtypes=True)
def sort(
    self: TensorMeta, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> tuple[TensorSpec, TensorSpec]:
    """``self`` sorted along ``dim`` (``torch.sort``; values as ``np.sort``): ``(values, indices)``, values
    ``self``'s shape and dtype, indices int64 (``values = take_along_dim(self, indices, dim)``). Ascending, or
    ``descending``; NaN sorts as the largest. With ``stable=True`` equal elements keep their order; otherwise
    their order is unspecified (NumPy's quicksort on the CPU; CuPy's sort is stable). A 0-d tensor gives itself
    and index 0. Devices: cpu (NumPy), cuda (CuPy), meta (shapes only). ``out=``: a tuple ``(values, indices)``.

    Raises:
        ArgumentTypeError (TypeError): complex ``self``; ``dim`` not an int; ``descending``/``stable`` not bools.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
    """
    _ordered("sort", self)
    normalize_dim("sort", dim, len(self.shape))
    _bool("sort", "descending", descending)
    _bool("sort", "stable", stable)
    return (self.shape, self.dtype), (self.shape, _INT64)


@sort.impl("cpu", "cuda")
def _sort(
    xp: ModuleType,
    self: D,
    dim: int,
    descending: bool,
    *,
    stable: bool,
    out: tuple[ConstOut[D], ConstOut[D]],
) -> None:
    a = self._array
    values, indices = out[0].array, out[1].array
    if a.ndim == 0:
        order = xp.zeros((), dtype=np.int64)
        picked = a.copy()
    else:
        axis = normalize_dim("sort", dim, a.ndim)
        order = order_indices(xp, a, axis, descending, stable)
        picked = xp.take_along_axis(a, order, axis=axis)
    # Both computed before either write: an out that is the input is read whole first.
    values[...] = picked
    indices[...] = order


# --- topk -------------------------------------------------------------------------------------------------------


@multi_output_op(result=TopkResult, exact_out_dtypes=True)
def topk(
    self: TensorMeta, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple[TensorSpec, TensorSpec]:
    """The ``k`` largest (or, ``largest=False``, smallest) elements of ``self`` along ``dim`` (``torch.topk``):
    ``(values, indices)``, each ``self``'s shape with ``k`` in ``dim`` (values ``self``'s dtype, indices int64).
    NaN counts as the largest. The elements come sorted (largest first, or smallest first); ``sorted=False``
    is accepted and gives the same order (PyTorch leaves it unspecified). Ties keep input order. A 0-d tensor
    takes ``k`` 0 or 1. Devices: cpu (NumPy), cuda (CuPy), meta. ``out=``: a tuple ``(values, indices)``.

    Raises:
        ArgumentTypeError (TypeError): complex ``self``; ``k``/``dim`` not ints; ``largest``/``sorted`` not bools.
        ArgumentValueError (ValueError): ``k`` negative or larger than the size of ``dim``.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
    """
    _ordered("topk", self)
    k = int_arg("topk", "k", k)
    d = normalize_dim("topk", dim, len(self.shape))
    _bool("topk", "largest", largest)
    _bool("topk", "sorted", sorted)
    size = self.shape[d] if self.shape else 1
    if not 0 <= k <= size:
        raise ArgumentValueError(f"topk: argument 'k' ({k}) out of range: dimension {dim} has size {size}")
    shape = (*self.shape[:d], k, *self.shape[d + 1 :]) if self.shape else ()
    return (shape, self.dtype), (shape, _INT64)


@topk.impl("cpu", "cuda")
def _topk(
    xp: ModuleType,
    self: D,
    k: int,
    dim: int,
    largest: bool,
    sorted: bool,
    *,
    out: tuple[ConstOut[D], ConstOut[D]],
) -> None:
    a = self._array
    values, indices = out[0].array, out[1].array
    if a.ndim == 0:
        order = xp.zeros((), dtype=np.int64)
        picked = a.copy()
    else:
        axis = normalize_dim("topk", dim, a.ndim)
        order = order_indices(xp, a, axis, largest, True)
        order = xp.take(order, xp.arange(int(k)), axis=axis)
        picked = xp.take_along_axis(a, order, axis=axis)
    values[...] = picked
    indices[...] = order


# --- aminmax ----------------------------------------------------------------------------------------------------


@multi_output_op(result=AminmaxResult, exact_out_dtypes=True)
def aminmax(self: TensorMeta, *, dim: int | None = None, keepdim: bool = False) -> tuple[TensorSpec, TensorSpec]:
    """The minimum and maximum of ``self`` (``torch.aminmax``; values as ``np.min``/``np.max``, NaN
    propagating): over every element (``dim=None``) or along ``dim``, the reduced dim kept as size 1 with
    ``keepdim`` (with ``dim=None``, every dim). Both ``self``'s dtype. Devices: cpu (NumPy), cuda (CuPy), meta.
    ``out=``: a tuple ``(min, max)``.

    Raises:
        ArgumentTypeError (TypeError): complex ``self``; ``dim`` not an int; ``keepdim`` not a bool.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
        ShapeError (ValueError): reducing over no elements (no identity, as NumPy's ``min``).
    """
    _ordered("aminmax", self)
    _bool("aminmax", "keepdim", keepdim)
    shape = self.shape
    if dim is None:
        if 0 in shape:
            raise ShapeError(f"aminmax: cannot reduce an empty tensor of shape {list(shape)} (no identity)")
        result: tuple[int, ...] = (1,) * len(shape) if keepdim else ()
    else:
        d = normalize_dim("aminmax", dim, len(shape))
        if shape and shape[d] == 0:
            raise ShapeError(f"aminmax: cannot reduce dimension {dim} of size 0 of shape {list(shape)} (no identity)")
        if not shape:
            result = ()
        else:
            result = (*shape[:d], 1, *shape[d + 1 :]) if keepdim else (*shape[:d], *shape[d + 1 :])
    return (result, self.dtype), (result, self.dtype)


@aminmax.impl("cpu", "cuda")
def _aminmax(xp: ModuleType, self: D, *, dim: int | None, keepdim: bool, out: tuple[ConstOut[D], ConstOut[D]]) -> None:
    a = self._array
    axis = None if dim is None or a.ndim == 0 else normalize_dim("aminmax", dim, a.ndim)
    low = xp.min(a, axis=axis, keepdims=keepdim)
    high = xp.max(a, axis=axis, keepdims=keepdim)
    out[0].array[...] = low
    out[1].array[...] = high


# --- max, min (along a dim) -------------------------------------------------------------------------------------


class MaxResult(NamedTuple):
    """``max(self, dim)``'s result (``torch.return_types.max``): the largest ``values`` and their ``indices``."""

    values: Tensor
    indices: Tensor


class MinResult(NamedTuple):
    """``min(self, dim)``'s result (``torch.return_types.min``): the smallest ``values`` and their ``indices``."""

    values: Tensor
    indices: Tensor


def _extreme_meta(op: str, self: TensorMeta, dim: int, keepdim: bool) -> tuple[TensorSpec, TensorSpec]:
    _ordered(op, self)
    _bool(op, "keepdim", keepdim)
    shape = self.shape
    d = normalize_dim(op, dim, len(shape))
    if not shape:
        result: tuple[int, ...] = ()
    else:
        if shape[d] == 0:
            raise ShapeError(f"{op}: cannot reduce dimension {dim} of size 0 of shape {list(shape)} (no identity)")
        result = (*shape[:d], 1, *shape[d + 1 :]) if keepdim else (*shape[:d], *shape[d + 1 :])
    return (result, self.dtype), (result, _INT64)


def _extreme(xp: ModuleType, op: str, largest: bool, self: D, dim: int, keepdim: bool, out: Any) -> None:
    a = self._array
    if a.ndim == 0:
        values, indices = a.copy(), xp.zeros((), dtype=np.int64)
    else:
        axis = normalize_dim(op, dim, a.ndim)
        # argmax/argmin give the first NaN (NaN propagates, as PyTorch), else the first extreme element.
        indices = (xp.argmax if largest else xp.argmin)(a, axis=axis, keepdims=True)
        values = xp.take_along_axis(a, indices, axis=axis)
        if not keepdim:
            values, indices = values.squeeze(axis), indices.squeeze(axis)
    out[0].array[...] = values
    out[1].array[...] = indices


@multi_output_op("max", result=MaxResult, exact_out_dtypes=True)
def max_dim(self: TensorMeta, dim: int, keepdim: bool = False) -> tuple[TensorSpec, TensorSpec]:
    """The largest elements of ``self`` along ``dim`` and their int64 indices (``torch.max(input, dim,
    keepdim)``; values as ``np.max``, indices as ``np.argmax``: the first largest, or the first NaN, as NaN
    propagates): ``(values, indices)``, ``self``'s shape without ``dim`` (kept as size 1 with ``keepdim``).
    Devices: cpu (NumPy), cuda (CuPy), meta. ``out=``: a tuple ``(values, indices)``. ``devtensor.max`` and
    ``Tensor.max`` also take no dim (the maximum of all elements) or another tensor (``maximum``).

    Raises:
        ArgumentTypeError (TypeError): complex ``self``; ``dim`` not an int; ``keepdim`` not a bool.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
        ShapeError (ValueError): reducing a dim of size 0 (no identity).
    """
    return _extreme_meta("max", self, dim, keepdim)


@max_dim.impl("cpu", "cuda")
def _max_dim(xp: ModuleType, self: D, dim: int, keepdim: bool, *, out: tuple[ConstOut[D], ConstOut[D]]) -> None:
    _extreme(xp, "max", True, self, dim, keepdim, out)


@multi_output_op("min", result=MinResult, exact_out_dtypes=True)
def min_dim(self: TensorMeta, dim: int, keepdim: bool = False) -> tuple[TensorSpec, TensorSpec]:
    """The smallest elements of ``self`` along ``dim`` and their int64 indices (``torch.min(input, dim,
    keepdim)``; values as ``np.min``, indices as ``np.argmin``: the first smallest, or the first NaN):
    ``(values, indices)``, as :func:`max_dim`. Devices: cpu (NumPy), cuda (CuPy), meta. ``out=``: a tuple
    ``(values, indices)``. ``devtensor.min`` and ``Tensor.min`` also take no dim or another tensor (``minimum``).

    Raises:
        ArgumentTypeError (TypeError): complex ``self``; ``dim`` not an int; ``keepdim`` not a bool.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
        ShapeError (ValueError): reducing a dim of size 0 (no identity).
    """
    return _extreme_meta("min", self, dim, keepdim)


@min_dim.impl("cpu", "cuda")
def _min_dim(xp: ModuleType, self: D, dim: int, keepdim: bool, *, out: tuple[ConstOut[D], ConstOut[D]]) -> None:
    _extreme(xp, "min", False, self, dim, keepdim, out)
