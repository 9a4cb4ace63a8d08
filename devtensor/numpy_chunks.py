"""The NumPy functions Dask calls on a chunk type, beyond :mod:`devtensor.numpy_protocols`' own tables, added to
them: ``tensordot``, ``vstack``/``hstack``, ``linalg.qr``/``linalg.svd``, ``unravel_index``/``ravel_multi_index``
(:data:`~devtensor.numpy_protocols.FUNCTIONS`, NEP 18) and the creation functions called with ``like=tensor``
(:data:`~devtensor.numpy_protocols.LIKE`, NEP 35). Imported by the package at import, after
:mod:`devtensor.numpy_protocols`; docs/design.md lists what Dask asks of a chunk type and how each maps.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, Final

import numpy as np

import devtensor
from devtensor.errors import ArgumentValueError
from devtensor.numpy_protocols import FUNCTIONS, LIKE, _Fallback
from devtensor.tensor import Tensor

__all__: list[str] = []

_NULL: Final = nullcontext()


def _tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    if not isinstance(axes, int | np.integer):
        first, second = axes  # NumPy: a pair of ints or a pair of sequences of ints
        axes = (
            [operator.index(x) for x in first] if isinstance(first, (list, tuple)) else [operator.index(first)],
            [operator.index(x) for x in second] if isinstance(second, (list, tuple)) else [operator.index(second)],
        )
    return devtensor.tensordot(a, b, axes)


def _stacked(axis: int, at_least: int) -> Callable[..., Any]:
    """``vstack`` (rows: 1-d arrays become rows) and ``hstack`` (1-d arrays join along dim 0) as ``cat``."""

    def adapter(tup: Any, *, dtype: Any = None, casting: Any = "same_kind") -> Any:
        if dtype is not None or casting != "same_kind":
            raise _Fallback
        items = [x if isinstance(x, Tensor) else devtensor.asarray(x) for x in tup]
        if at_least == 2:
            items = [devtensor.reshape(x, (1, -1)) if x.ndim < 2 else x for x in items]
        dim = 0 if items and items[0].ndim == 1 else axis
        return devtensor.cat(items, dim)

    return adapter


def _decomposed(name: str, a: Any, **kwargs: Any) -> Any:
    """A decomposition devtensor has no op for (``qr``, ``svd``), run by the tensor's own array module (NumPy on
    the CPU, CuPy on CUDA, under the device guard); each result is a new tensor on ``a``'s device. Non-finite
    input is LinAlgError, as the ops' (LAPACK's SVD may never return on an infinity)."""
    if not isinstance(a, Tensor) or not a._backend.has_data:
        raise _Fallback
    from devtensor.kernels.linalg_solvers import decomposition_call  # (the kernels import the structured package)

    backend, device = a._backend, a.device
    guard = backend.guard(device)
    with guard if guard is not None else _NULL:
        fn = getattr(backend.xp.linalg, name)
        result = decomposition_call(f"linalg.{name}", backend.xp, fn, a._array, **kwargs)
    if not isinstance(result, tuple):
        return backend.wrap(result, device)
    parts = [backend.wrap(x, device) for x in result]
    return type(result)._make(parts) if hasattr(type(result), "_make") else tuple(parts)  # type: ignore[attr-defined]


def _qr(a: Any, mode: Any = "reduced") -> Any:
    return _decomposed("qr", a, mode=mode)


def _svd(a: Any, full_matrices: Any = True, compute_uv: Any = True, hermitian: Any = False) -> Any:
    if hermitian:
        raise _Fallback  # CuPy's svd has no hermitian mode
    return _decomposed("svd", a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def _shape_of(dims: Any) -> tuple[int, ...]:
    return (operator.index(dims),) if isinstance(dims, int | np.integer) else tuple(operator.index(d) for d in dims)


def _unravel_index(indices: Any, shape: Any, order: Any = "C") -> Any:
    """NumPy's ``unravel_index`` of an integer tensor of flat indices (Dask's arg reductions call it on a chunk's
    0-d index): one int64 tensor per dim of ``shape``, on the tensor's device, by devtensor ops (C order)."""
    if not isinstance(indices, Tensor) or order != "C" or indices.dtype.kind not in "iu":
        raise _Fallback
    dims = _shape_of(shape)
    size = 1
    for n in dims:
        size *= n
    index = indices.to(np.int64)
    if indices.device.type != "meta" and bool(devtensor.any((index < 0) | (index >= size))):
        raise ArgumentValueError(f"unravel_index: an index is out of bounds for an array of shape {dims}")
    parts: list[Tensor] = []
    for n in reversed(dims):
        parts.append(devtensor.remainder(index, n) if n else index)
        index = devtensor.div(index, n, rounding_mode="floor") if n else index
    return tuple(reversed(parts))


def _ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: Any = "C") -> Any:
    """NumPy's ``ravel_multi_index`` of per-dim integer indices (tensors or ints, at least one tensor): the flat
    indices, an int64 tensor on the tensors' device, by devtensor ops (``mode="raise"``, C order)."""
    if mode != "raise" or order != "C":
        raise _Fallback
    items = list(multi_index)
    tensors = [x for x in items if isinstance(x, Tensor)]
    shape = _shape_of(dims)
    if not tensors or len(items) != len(shape) or any(t.dtype.kind not in "iu" for t in tensors):
        raise _Fallback
    device = tensors[0].device
    flat: Any = 0
    for item, n in zip(items, shape, strict=True):
        index = (
            item.to(np.int64) if isinstance(item, Tensor) else devtensor.asarray(item, dtype=np.int64, device=device)
        )
        if device.type != "meta" and bool(devtensor.any((index < 0) | (index >= n))):
            raise ArgumentValueError(f"ravel_multi_index: invalid entry in coordinates array for shape {shape}")
        flat = flat * n + index
    return flat


# --- NEP 35 (``like=``): NumPy's creation functions asked for "an array like this tensor" ------------------------


def _device_of(like: Tensor, device: Any) -> Any:
    if device is not None:
        raise _Fallback  # NumPy's device= names NumPy's own ("cpu")
    return like.device


def _like_empty(op: str) -> Callable[..., Any]:
    def adapter(
        like: Tensor, shape: Any, dtype: Any = None, order: Any = "C", *, device: Any = None, **kwargs: Any
    ) -> Any:
        if order != "C":
            raise _Fallback
        shape = (operator.index(shape),) if isinstance(shape, int | np.integer) else tuple(shape)
        return getattr(devtensor, op)(
            shape, dtype=np.float64 if dtype is None else dtype, device=_device_of(like, device)
        )

    return adapter


def _like_full(
    like: Tensor, shape: Any, fill_value: Any, dtype: Any = None, order: Any = "C", *, device: Any = None, **kwargs: Any
) -> Any:
    if order != "C":
        raise _Fallback
    shape = (operator.index(shape),) if isinstance(shape, int | np.integer) else tuple(shape)
    if dtype is None:
        dtype = np.asarray(fill_value).dtype  # NumPy's: the fill value's own dtype
    return devtensor.full(shape, fill_value, dtype=dtype, device=_device_of(like, device))


def _like_asarray(
    like: Tensor, a: Any, dtype: Any = None, order: Any = None, *, device: Any = None, copy: Any = None, **kwargs: Any
) -> Any:
    if order not in (None, "C", "K", "A"):
        raise _Fallback
    return devtensor.asarray(a, dtype=dtype, device=_device_of(like, device), copy=copy)


def _like_array(
    like: Tensor, obj: Any, dtype: Any = None, *, copy: Any = True, order: Any = "K", subok: Any = False,
    ndmin: Any = 0, **kwargs: Any,
) -> Any:  # fmt: skip
    if order not in ("K", "C", "A"):
        raise _Fallback
    result = devtensor.asarray(obj, dtype=dtype, device=like.device, copy=True if copy else None)
    missing = operator.index(ndmin) - result.ndim
    return result if missing <= 0 else devtensor.reshape(result, (1,) * missing + result.shape)


FUNCTIONS.update(
    {
        np.tensordot: _tensordot,
        np.vstack: _stacked(0, 2),
        np.hstack: _stacked(1, 1),
        np.linalg.qr: _qr,
        np.linalg.svd: _svd,
        np.unravel_index: _unravel_index,
        np.ravel_multi_index: _ravel_multi_index,
    }
)
LIKE.update(
    {
        np.empty: _like_empty("empty"),
        np.zeros: _like_empty("zeros"),
        np.ones: _like_empty("ones"),
        np.full: _like_full,
        np.asarray: _like_asarray,
        np.asanyarray: _like_asarray,
        np.array: _like_array,
    }
)
