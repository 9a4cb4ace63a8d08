"""More entries of the NEP 13/18 tables (:mod:`devtensor.numpy_protocols`): the NumPy ufuncs and functions whose
devtensor ops came after the tables were first written (math ufuncs, scans, ordering, shape ops, ``numpy.linalg``,
``numpy.fft``). Each maps NumPy's signature onto the devtensor op of the same meaning, so ``np.floor(t)``,
``np.cumsum(t)``, ``np.linalg.inv(t)`` and ``np.fft.fft(t)`` give tensors on the tensors' device, CUDA included; an
argument devtensor has no equivalent for falls back as the module docstring of ``numpy_protocols`` says.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import devtensor
from devtensor.numpy_protocols import _NO, FUNCTIONS, UFUNC_ADAPTERS, UFUNCS, _Fallback, _no, _returned
from devtensor.tensor import Tensor

__all__: list[str] = []

# fmt: off
UFUNCS.update(
    {
        u: (name, {})
        for u, name in (
            (np.floor, "floor"),
            (np.ceil, "ceil"),
            (np.trunc, "trunc"),
            (np.sign, "sign"),
            (np.square, "square"),
            (np.reciprocal, "reciprocal"),
            (np.log1p, "log1p"),
            (np.expm1, "expm1"),
            (np.log2, "log2"),
            (np.log10, "log10"),
            (np.logaddexp, "logaddexp"),
            (np.isnan, "isnan"),
            (np.isinf, "isinf"),
            (np.isfinite, "isfinite"),
            (np.signbit, "signbit"),
            (np.tan, "tan"),
            (np.arcsin, "asin"),
            (np.arccos, "acos"),
            (np.arctan, "atan"),
            (np.arctan2, "atan2"),
            (np.sinh, "sinh"),
            (np.cosh, "cosh"),
            (np.arcsinh, "asinh"),
            (np.arccosh, "acosh"),
            (np.arctanh, "atanh"),
            (np.hypot, "hypot"),
            (np.copysign, "copysign"),
            (np.float_power, "float_power"),
            (np.fmod, "fmod"),
            (np.nextafter, "nextafter"),
            (np.conjugate, "conj"),
        )
    }
)


def _numpy_kinds(kinds: str) -> Callable[..., Any]:
    """An adapter for a ufunc whose devtensor op follows PyTorch for the dtype kinds ``kinds`` (``reciprocal`` of
    bool and integers is a float, ``sign``/``conj`` of bool a bool): there NumPy's own runs, so that NumPy's
    ufunc keeps NumPy's values (an integer reciprocal, int8, an error)."""

    def adapter(x: Any) -> Any:
        if isinstance(x, Tensor) and x.dtype.kind in kinds:
            raise _Fallback
        return None

    return adapter


def _adapter(ufunc: np.ufunc, op: str, kinds: str) -> Callable[..., Any]:
    check = _numpy_kinds(kinds)

    def adapter(*inputs: Any) -> Any:
        if len(inputs) == 1:
            check(inputs[0])
        return getattr(devtensor, op)(*inputs)

    adapter.__name__ = f"_{ufunc.__name__}"
    return adapter


UFUNC_ADAPTERS[np.reciprocal] = _adapter(np.reciprocal, "reciprocal", "biu")
UFUNC_ADAPTERS[np.sign] = _adapter(np.sign, "sign", "b")
UFUNC_ADAPTERS[np.conjugate] = _adapter(np.conjugate, "conj", "b")


def _flat(a: Any) -> Any:
    return devtensor.reshape(a, (-1,))


def _scan(op: str) -> Callable[..., Any]:
    def adapter(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if not isinstance(a, Tensor):
            raise _Fallback
        source, dim = (_flat(a), 0) if axis is None else (a, axis)
        fn = getattr(devtensor, op)
        result = fn(source, dim, dtype=dtype) if out is None else fn(source, dim, dtype=dtype, out=out)
        return _returned(out, result)

    return adapter


def _diff(a: Any, n: Any = 1, axis: Any = -1, prepend: Any = _NO, append: Any = _NO) -> Any:
    _no(prepend, append)
    return devtensor.diff(a, n, axis)


def _triangle(op: str) -> Callable[..., Any]:
    def adapter(m: Any, k: Any = 0) -> Any:
        return getattr(devtensor, op)(m, k)

    return adapter


def _diag(v: Any, k: Any = 0) -> Any:
    return devtensor.diag(v, k)


def _roll(a: Any, shift: Any, axis: Any = None) -> Any:
    return devtensor.roll(a, shift, axis)


def _ordering(sort: bool) -> Callable[..., Any]:
    def adapter(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Any:
        if axis is None or order is not None or not isinstance(a, Tensor):
            raise _Fallback
        is_stable = bool(stable) or kind == "stable" or kind == "mergesort"
        if sort:
            return devtensor.sort(a, axis, stable=is_stable).values
        return devtensor.argsort(a, axis, stable=is_stable)

    return adapter


def _count_nonzero(a: Any, axis: Any = None, *, keepdims: Any = False) -> Any:
    if keepdims:
        raise _Fallback
    return devtensor.count_nonzero(a, axis)


def _part(op: str) -> Callable[..., Any]:
    def adapter(val: Any) -> Any:
        if not isinstance(val, Tensor):
            raise _Fallback
        return getattr(devtensor, op)(val)

    return adapter


def _nonzero(a: Any) -> Any:
    if not isinstance(a, Tensor) or a.ndim == 0:
        raise _Fallback  # (NumPy refuses 0-d input itself)
    return devtensor.nonzero(a, as_tuple=True)


def _tile(A: Any, reps: Any) -> Any:
    if not isinstance(A, Tensor):
        raise _Fallback
    return devtensor.tile(A, (operator.index(reps),) if isinstance(reps, int | np.integer) else tuple(reps))


def _moveaxis(a: Any, source: Any, destination: Any) -> Any:
    return devtensor.movedim(a, source, destination)


def _linalg(op: str, *names: str) -> Callable[..., Any]:
    """``numpy.linalg.<op>`` with its positional arguments and the keywords ``names`` passed on as they are."""

    def adapter(*args: Any, **kwargs: Any) -> Any:
        if set(kwargs) - set(names):
            raise _Fallback
        return getattr(devtensor.linalg, op)(*args, **kwargs)

    return adapter


def _solve(a: Any, b: Any) -> Any:
    """``np.linalg.solve``: NumPy 2's rule (only a 1-D ``b`` is a vector), as the Array API's solve keeps it
    (devtensor.linalg.solve reads a ``b`` of shape ``a.shape[:-1]`` as PyTorch's batch of vectors)."""
    from devtensor.array_api import linalg as xla

    return xla.solve(a, b)


def _eigh(a: Any, UPLO: Any = "L") -> Any:
    return devtensor.linalg.eigh(a, UPLO)


def _qr(a: Any, mode: Any = "reduced") -> Any:
    if mode not in ("reduced", "complete"):
        raise _Fallback
    return devtensor.linalg.qr(a, mode)


def _svd(a: Any, full_matrices: Any = True, compute_uv: Any = True, hermitian: Any = False) -> Any:
    if hermitian:
        raise _Fallback
    if not compute_uv:
        return devtensor.linalg.svdvals(a)
    return devtensor.linalg.svd(a, bool(full_matrices))


def _fft1(op: str) -> Callable[..., Any]:
    def adapter(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Any:
        fn = getattr(devtensor.fft, op)
        result = fn(a, n, axis, norm) if out is None else fn(a, n, axis, norm, out=out)
        return _returned(out, result)

    return adapter


def _fftn(op: str) -> Callable[..., Any]:
    def adapter(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
        fn = getattr(devtensor.fft, op)
        result = fn(a, s, axes, norm) if out is None else fn(a, s, axes, norm, out=out)
        return _returned(out, result)

    return adapter


def _shift(op: str) -> Callable[..., Any]:
    def adapter(x: Any, axes: Any = None) -> Any:
        return getattr(devtensor.fft, op)(x, axes)

    return adapter


FUNCTIONS.update(
    {
        np.cumsum: _scan("cumsum"),
        np.cumprod: _scan("cumprod"),
        np.diff: _diff,
        np.tril: _triangle("tril"),
        np.triu: _triangle("triu"),
        np.diag: _diag,
        np.roll: _roll,
        np.sort: _ordering(sort=True),
        np.argsort: _ordering(sort=False),
        np.count_nonzero: _count_nonzero,
        np.real: _part("real"),
        np.imag: _part("imag"),
        np.nonzero: _nonzero,
        np.tile: _tile,
        np.moveaxis: _moveaxis,
        np.linalg.inv: _linalg("inv"),
        np.linalg.det: _linalg("det"),
        np.linalg.solve: _solve,
        np.linalg.cholesky: _linalg("cholesky"),
        np.linalg.slogdet: _linalg("slogdet"),
        np.linalg.eigvalsh: _linalg("eigvalsh", "UPLO"),
        np.linalg.eigh: _eigh,
        np.linalg.matrix_power: _linalg("matrix_power"),
        np.linalg.qr: _qr,
        np.linalg.svd: _svd,
        **{getattr(np.fft, n): _fft1(n) for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
        **{getattr(np.fft, n): _fftn(n) for n in ("fftn", "ifftn", "rfftn", "irfftn")},
        np.fft.fftshift: _shift("fftshift"),
        np.fft.ifftshift: _shift("ifftshift"),
    }
)
