"""The NumPy functions Dask calls on a chunk type, beyond :mod:`devtensor.numpy_protocols`' own tables, added to
them: ``tensordot``, ``vstack``/``hstack``, ``linalg.qr``/``linalg.svd`` (:data:`~devtensor.numpy_protocols.FUNCTIONS`,
NEP 18) and the creation functions called with ``like=tensor`` (:data:`~devtensor.numpy_protocols.LIKE`, NEP 35).
Imported by the package at import, after :mod:`devtensor.numpy_protocols`; docs/design.md lists what Dask asks of
a chunk type and how each maps.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, Final

import numpy as np

import devtensor
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
    the CPU, CuPy on CUDA, under the device guard); each result is a new tensor on ``a``'s device."""
    if not isinstance(a, Tensor) or not a._backend.has_data:
        raise _Fallback
    backend, device = a._backend, a.device
    guard = backend.guard(device)
    with guard if guard is not None else _NULL:
        result = getattr(backend.xp.linalg, name)(a._array, **kwargs)
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
