"""NEP 13/18 entries for NumPy functions Dask calls on its chunks that devtensor composes from its ops (tables of
:mod:`devtensor.numpy_protocols`): the NaN-ignoring reductions (``nansum``, ``nanprod``, ``nanmean``, ``nanmax``,
``nanmin``, ``nanargmax``, ``nanargmin``), ``einsum``, ``repeat`` (an int count), ``fabs``, ``isclose``,
``allclose``, ``diag``, ``diagonal`` (2-D), ``argwhere``, ``flatnonzero``, ``take``, ``take_along_axis``, ``unique``,
``searchsorted``, ``isin``, ``partition``/``argpartition`` (a full sort, which is a partition) and ``np.arange(...,
like=tensor)``. Each takes NumPy's argument names and gives NumPy's values as a tensor on the tensor's device (CUDA
included), so ``da.nansum(x)``, ``da.einsum(...)``, ``da.isclose(x, y)``, ``da.tril(x)`` on Dask arrays of CUDA
chunks stay on the device. An argument with no devtensor equivalent (``where=``, ``initial=``, ``mode="clip"``,
``return_index=True``, per-element repeats, …) falls back as the module docstring of ``numpy_protocols`` says:
NumPy's own on CPU tensors, a TypeError naming the function on others. ``np.bincount`` of tensors runs
``devtensor.bincount``; ``histogram`` has no devtensor op and stays on that fallback.

The NaN reductions replace NaN by the operation's identity (``where(isnan(a), identity, a)``) and reduce with
devtensor's op; ``nanmax``/``nanmin`` give NaN for an all-NaN slice and ``nanargmax``/``nanargmin`` raise
ValueError for one, as NumPy does (without NumPy's RuntimeWarning).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import devtensor
from devtensor.numpy_protocols import (
    _NO,
    FUNCTIONS,
    LIKE,
    UFUNC_ADAPTERS,
    _dims,
    _Fallback,
    _float_dtype,
    _no,
    _returned,
)
from devtensor.tensor import Tensor

__all__: list[str] = []


def _tensor(a: Any) -> Tensor:
    """``a`` when it is a tensor; anything else (a NumPy array or a list among the arguments) runs NumPy's own."""
    if not isinstance(a, Tensor):
        raise _Fallback
    return a


def _floating(a: Tensor) -> bool:
    return a.dtype.kind in "fc"


def _filled(a: Tensor, value: float) -> Tensor:
    """``a`` with each NaN replaced by ``value`` (``a`` itself when its dtype holds no NaN)."""
    return devtensor.where(devtensor.isnan(a), value, a) if _floating(a) else a


def _nan_summing(op: str, identity: float) -> Callable[..., Any]:
    def adapter(
        a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False, initial: Any = _NO,
        where: Any = _NO,
    ) -> Any:  # fmt: skip
        _no(initial, where)
        a = _tensor(a)
        kw: dict[str, Any] = {"dtype": dtype} if dtype is not None else {}
        if out is not None:
            kw["out"] = out
        return _returned(out, getattr(devtensor, op)(_filled(a, identity), _dims(axis), bool(keepdims), **kw))

    return adapter


def _nanmean(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False, *, where: Any = _NO
) -> Any:
    _no(where)
    a = _tensor(a)
    if out is not None or (dtype is not None and np.dtype(dtype).kind not in "fc"):
        raise _Fallback
    if not _floating(a):  # (NumPy's nanmean of integers is their mean, in float64)
        return devtensor.mean(a, _dims(axis), bool(keepdims), dtype=_float_dtype(a, dtype))
    if dtype is not None:
        a = a.to(dtype)
    dims, keep = _dims(axis), bool(keepdims)
    present = devtensor.logical_not(devtensor.isnan(a))
    total = devtensor.sum(_filled(a, 0.0), dims, keep)
    return devtensor.div(total, devtensor.sum(present, dims, keep).to(total.dtype))


def _nan_extreme(op: str, identity: float) -> Callable[..., Any]:
    def adapter(
        a: Any, axis: Any = None, out: Any = None, keepdims: Any = False, initial: Any = _NO, where: Any = _NO
    ) -> Any:
        _no(initial, where)
        a = _tensor(a)
        if out is not None:
            raise _Fallback
        dims, keep = _dims(axis), bool(keepdims)
        fn = getattr(devtensor, op)
        if a.dtype.kind == "c":
            raise _Fallback
        if not _floating(a):
            return fn(a, dims, keep)
        nan = devtensor.isnan(a)
        # An all-NaN slice gives NaN, as NumPy's.
        return devtensor.where(devtensor.all(nan, dims, keep), float("nan"), fn(_filled(a, identity), dims, keep))

    return adapter


def _nan_arg(op: str, identity: float) -> Callable[..., Any]:
    def adapter(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = False) -> Any:
        a = _tensor(a)
        if out is not None or (axis is not None and not isinstance(axis, int | np.integer)) or a.dtype.kind == "c":
            raise _Fallback
        dim = None if axis is None else operator.index(axis)
        if _floating(a):
            if bool(devtensor.any(devtensor.all(devtensor.isnan(a), dim))):
                raise ValueError(f"numpy.{op.replace('arg', 'nanarg')}: All-NaN slice encountered")
            a = _filled(a, identity)
        return getattr(devtensor, op)(a, dim, bool(keepdims))

    return adapter


def _einsum(
    *operands: Any, out: Any = None, optimize: Any = False, dtype: Any = None, casting: Any = "safe", **kwargs: Any
) -> Any:
    if kwargs or casting != "safe" or not operands or not isinstance(operands[0], str):
        raise _Fallback  # (NumPy's interleaved form, order=, other castings)
    tensors = [_tensor(t) for t in operands[1:]]
    if dtype is not None:
        # NumPy computes in dtype (Dask's chunked einsum passes it): the operands cast to it, as "safe" allows
        wanted = np.dtype(dtype)
        if not all(np.can_cast(t.dtype, wanted, "safe") for t in tensors):
            raise _Fallback
        tensors = [t.to(wanted) if t.dtype != wanted else t for t in tensors]
    return _returned(out, devtensor.einsum(operands[0], *tensors, out=out))


def _repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    a = _tensor(a)
    if not isinstance(repeats, int | np.integer):
        raise _Fallback  # (per-element repeats give a data-dependent shape devtensor's repeat_interleave lacks)
    source = devtensor.reshape(a, (-1,)) if axis is None else a
    return devtensor.repeat_interleave(source, operator.index(repeats), 0 if axis is None else operator.index(axis))


def _isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: Any = False) -> Any:
    x = a if isinstance(a, Tensor) else None
    y = b if isinstance(b, Tensor) else None
    first = x if x is not None else y
    scalars = all(isinstance(v, int | float | np.number) for v in (a, b, rtol, atol) if not isinstance(v, Tensor))
    if first is None or not scalars:
        raise _Fallback
    # (a scalar operand as a tensor of the other's shape, in NumPy's floating type for it; the op isclose computes
    # NumPy's values)
    xa: Any = x if x is not None else devtensor.full_like(first, a, dtype=np.result_type(a, 1.0))
    yb: Any = y if y is not None else devtensor.full_like(first, b, dtype=np.result_type(b, 1.0))
    return devtensor.isclose(xa, yb, rtol, atol, bool(equal_nan))


def _allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: Any = False) -> Any:
    return bool(devtensor.all(_isclose(a, b, rtol, atol, equal_nan)))


def _bincount(x: Any, weights: Any = None, minlength: Any = 0) -> Any:
    if not isinstance(x, Tensor) or not (weights is None or isinstance(weights, Tensor)):
        raise _Fallback
    return devtensor.bincount(x, weights, operator.index(minlength))


def _diag(v: Any, k: Any = 0) -> Any:
    v = _tensor(v)
    k = operator.index(k)
    if v.ndim == 1:
        m = v.shape[0] + abs(k)
        pad = devtensor.cat([v, devtensor.zeros(abs(k), dtype=v.dtype, device=v.device)]) if k else v
        index = devtensor.arange(m, device=v.device)
        # (row i, column i + k) holds v[i] for k >= 0 and v[column] for k < 0
        on = devtensor.eq(devtensor.sub(devtensor.reshape(index, (1, m)), devtensor.reshape(index, (m, 1))), k)
        values = devtensor.reshape(pad, (m, 1) if k >= 0 else (1, m))
        return devtensor.where(on, values, devtensor.zeros(1, dtype=v.dtype, device=v.device))
    if v.ndim != 2:
        raise _Fallback  # (NumPy's ValueError)
    return _diagonal(v, k)


def _diagonal(a: Any, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> Any:
    """The ``offset`` diagonal of a matrix (``np.diagonal`` of 2-D input; N-d: NumPy's own), a new tensor
    (NumPy's is a read-only view)."""
    a = _tensor(a)
    if a.ndim != 2 or {operator.index(axis1) % 2, operator.index(axis2) % 2} != {0, 1}:
        raise _Fallback
    k = operator.index(offset)
    if operator.index(axis1) % 2 == 1:
        a = devtensor.permute(a, (1, 0))
    rows, cols = a.shape
    length = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
    start = k if k >= 0 else -k * cols
    flat = devtensor.reshape(a, (-1,))
    return devtensor.take(flat, devtensor.arange(start, start + length * (cols + 1), cols + 1, device=a.device))


def _argwhere(a: Any) -> Any:
    a = _tensor(a)
    if a.ndim == 0:
        raise _Fallback  # (NumPy treats 0-d input as 1-element with no index columns)
    return devtensor.nonzero(a)


def _flatnonzero(a: Any) -> Any:
    return devtensor.nonzero(devtensor.reshape(_tensor(a), (-1,)), as_tuple=True)[0]


def _take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: Any = "raise") -> Any:
    a = _tensor(a)
    if mode != "raise" or out is not None:
        raise _Fallback
    scalar = isinstance(indices, int | np.integer)
    if isinstance(indices, Tensor):
        index = indices
    else:
        index = devtensor.tensor(np.asarray(indices, dtype=np.int64), device=a.device)
    if index.dtype.kind not in "iu":
        raise _Fallback
    source = devtensor.reshape(a, (-1,)) if axis is None else a
    dim = 0 if axis is None else operator.index(axis) % max(a.ndim, 1)
    size = source.shape[dim]
    flat = devtensor.reshape(index, (-1,))
    # NumPy's mode="raise" takes negative indices from the end.
    flat = devtensor.where(devtensor.lt(flat, 0), devtensor.add(flat, size), flat)
    picked = devtensor.index_select(source, dim, flat)
    shape = (*source.shape[:dim], *(() if scalar else tuple(index.shape)), *source.shape[dim + 1 :])
    return devtensor.reshape(picked, shape)


def _unique(
    ar: Any, return_index: Any = False, return_inverse: Any = False, return_counts: Any = False, axis: Any = None,
    *, equal_nan: Any = True, sorted: Any = True,
) -> Any:  # fmt: skip
    ar = _tensor(ar)
    if return_index or not equal_nan or not sorted:
        raise _Fallback
    found = devtensor.unique(
        ar, True, bool(return_inverse), bool(return_counts), None if axis is None else operator.index(axis)
    )
    if return_inverse and axis is not None:
        # (NumPy's inverse along an axis is 1-D)
        found = (found[0], devtensor.reshape(found[1], (-1,)), *found[2:])
    return found


def _searchsorted(a: Any, v: Any, side: Any = "left", sorter: Any = None) -> Any:
    a = _tensor(a)
    if sorter is not None or side not in ("left", "right") or a.ndim != 1:
        raise _Fallback
    values = v if isinstance(v, Tensor) else devtensor.tensor(np.asarray(v), device=a.device)
    # Compared in the common dtype, as NumPy (2.5 among ints stays 2.5)
    common = np.result_type(a.dtype, values.dtype)
    if common.kind == "c":
        raise _Fallback
    return devtensor.searchsorted(a.to(common), values.to(common), side=side)


def _isin(
    element: Any, test_elements: Any, assume_unique: Any = False, invert: Any = False, *, kind: Any = None
) -> Any:
    element = _tensor(element)
    test = test_elements if isinstance(test_elements, Tensor) else None
    if test is None:
        test = devtensor.tensor(np.asarray(test_elements), device=element.device)
    common = np.result_type(element.dtype, test.dtype)
    if common.kind == "c":
        raise _Fallback  # (complex values have no order to search in)
    sorted_test = devtensor.sort(devtensor.reshape(test.to(common), (-1,))).values
    values = element.to(common)
    if sorted_test.shape[0] == 0:
        found = devtensor.zeros(*element.shape, dtype=np.bool_, device=element.device)
    else:
        at = devtensor.clamp(devtensor.searchsorted(sorted_test, values), None, sorted_test.shape[0] - 1)
        found = devtensor.eq(devtensor.reshape(devtensor.take(sorted_test, at), tuple(element.shape)), values)
    return devtensor.logical_not(found) if invert else found


def _fabs(x: Any) -> Any:
    x = _tensor(x)
    if not _floating(x) or x.dtype.kind == "c":
        raise _Fallback  # (NumPy's fabs of integers is float64; of complex numbers, a TypeError)
    return devtensor.abs(x)


def _partition(result: str) -> Callable[..., Any]:
    """``np.partition``/``np.argpartition`` as a full sort along ``axis``: a sorted array is a partition around
    every ``kth`` (NumPy leaves the order within each side unspecified), so the values at ``kth`` and each side's
    elements are NumPy's."""

    def adapter(a: Any, kth: Any, axis: Any = -1, kind: Any = "introselect", order: Any = None) -> Any:
        a = _tensor(a)
        if order is not None or kind != "introselect" or a.dtype.kind == "c":
            raise _Fallback
        source, dim = (devtensor.reshape(a, (-1,)), 0) if axis is None else (a, operator.index(axis))
        size = source.shape[dim] if source.ndim else 1
        for k in np.atleast_1d(np.asarray(kth)).tolist():
            if not -size <= k < size:
                raise _Fallback  # (NumPy's own error)
        return devtensor.sort(source, dim).values if result == "sort" else devtensor.argsort(source, dim)

    return adapter


def _like_arange(
    like: Any, start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *, device: Any = None
) -> Any:
    """``np.arange(..., like=tensor)`` (Dask's ``arange`` chunks, and so ``tri``/``tril``/``triu``'s masks):
    devtensor's ``arange`` on ``like``'s device, in NumPy's dtype (float64 for float bounds, int64 for ints)."""
    if device is not None:
        raise _Fallback
    bounds = [v for v in (start, stop, step) if v is not None]
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.result_type(*(np.asarray(v) for v in bounds))
    # (NumPy's rule for a step pointing away from stop, an empty array: the Array API's arange keeps it)
    from devtensor.array_api import arange

    return arange(start, stop, 1 if step is None else step, dtype=dtype, device=like.device)


def _take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    # (a NumPy arr with tensor indices, as Dask's argtopk gives, follows the fronts' rules for NumPy values:
    # taken on the CPU, a DeviceMismatchError with CUDA indices)
    if not isinstance(arr, Tensor | np.ndarray) or not isinstance(indices, Tensor) or indices.dtype.kind not in "iu":
        raise _Fallback
    source: Any = arr.reshape(-1) if axis is None else arr
    dim = 0 if axis is None else operator.index(axis)
    size = source.shape[dim] if source.ndim else 1
    # NumPy's indexing takes negative indices from the end.
    index = devtensor.where(devtensor.lt(indices, 0), devtensor.add(indices, size), indices)
    return devtensor.take_along_dim(source, index, dim)


UFUNC_ADAPTERS[np.fabs] = _fabs
LIKE[np.arange] = _like_arange

FUNCTIONS.update(
    {
        np.nansum: _nan_summing("sum", 0.0),
        np.nanprod: _nan_summing("prod", 1.0),
        np.nanmean: _nanmean,
        np.nanmax: _nan_extreme("amax", float("-inf")),
        np.nanmin: _nan_extreme("amin", float("inf")),
        np.nanargmax: _nan_arg("argmax", float("-inf")),
        np.nanargmin: _nan_arg("argmin", float("inf")),
        np.einsum: _einsum,
        np.repeat: _repeat,
        np.isclose: _isclose,
        np.allclose: _allclose,
        np.bincount: _bincount,
        np.diag: _diag,
        np.diagonal: _diagonal,
        np.argwhere: _argwhere,
        np.flatnonzero: _flatnonzero,
        np.take: _take,
        np.unique: _unique,
        np.searchsorted: _searchsorted,
        np.isin: _isin,
        np.take_along_axis: _take_along_axis,
        np.partition: _partition("sort"),
        np.argpartition: _partition("argsort"),
    }
)
