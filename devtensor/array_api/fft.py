"""The Array API standard's ``fft`` extension (2024.12) over :mod:`devtensor.fft`: the standard's names,
positional-only arrays and keyword-only options (``axis``/``axes`` for PyTorch's ``dim``, ``norm="backward"``);
every transform and shift runs devtensor's op (dispatch, device guard, checks, modes), on CPU and CUDA tensors.

Beyond the standard (which asks complex input of ``fft``, ``ifft``, ``fftn``, ``ifftn``, ``irfft``, ``irfftn``,
``hfft`` and real input of the others), real and integer inputs are accepted where :mod:`devtensor.fft` takes them.
Results keep the input's precision: complex64 (float32) for float32 and complex64 inputs, complex128 (float64)
otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from devtensor import fft as _fft
from devtensor.array_api._naming import name_errors
from devtensor.device import DeviceLike
from devtensor.tensor import Tensor

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]

Norm = Literal["backward", "ortho", "forward"]


def _axes(axes: int | Sequence[int] | None) -> int | tuple[int, ...] | None:
    return tuple(axes) if isinstance(axes, Sequence) else axes


def fft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The one-dimensional discrete Fourier transform along ``axis`` (``n``: the signal length, ``x`` padded
    with zeros or trimmed to it): :func:`devtensor.fft.fft`."""
    return _fft.fft(x, n, axis, norm)


def ifft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The one-dimensional inverse discrete Fourier transform along ``axis``: :func:`devtensor.fft.ifft`."""
    return _fft.ifft(x, n, axis, norm)


def fftn(
    x: Tensor, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> Tensor:
    """The n-dimensional discrete Fourier transform over ``axes`` (all when None; ``s``: the signal lengths
    along them, ``-1`` keeping a size): :func:`devtensor.fft.fftn`."""
    return _fft.fftn(x, _axes(s), _axes(axes), norm)


def ifftn(
    x: Tensor, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> Tensor:
    """The n-dimensional inverse discrete Fourier transform over ``axes``: :func:`devtensor.fft.ifftn`."""
    return _fft.ifftn(x, _axes(s), _axes(axes), norm)


def rfft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The one-dimensional discrete Fourier transform of the real ``x`` along ``axis``, non-negative frequencies
    only (``n // 2 + 1`` of them): :func:`devtensor.fft.rfft`."""
    return _fft.rfft(x, n, axis, norm)


def irfft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (size - 1)``) along ``axis``:
    :func:`devtensor.fft.irfft`."""
    return _fft.irfft(x, n, axis, norm)


def rfftn(
    x: Tensor, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> Tensor:
    """The n-dimensional discrete Fourier transform of the real ``x`` over ``axes``, one-sided along the last:
    :func:`devtensor.fft.rfftn`."""
    return _fft.rfftn(x, _axes(s), _axes(axes), norm)


def irfftn(
    x: Tensor, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> Tensor:
    """The inverse of :func:`rfftn` (the last axis' output length defaults to ``2 * (size - 1)``):
    :func:`devtensor.fft.irfftn`."""
    return _fft.irfftn(x, _axes(s), _axes(axes), norm)


def hfft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The discrete Fourier transform of a Hermitian-symmetric signal given by its half ``x``: a real spectrum
    of length ``n`` (default ``2 * (size - 1)``): :func:`devtensor.fft.hfft`."""
    return _fft.hfft(x, n, axis, norm)


def ihfft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The inverse of :func:`hfft` for the real ``x``: ``n // 2 + 1`` complex values along ``axis``:
    :func:`devtensor.fft.ihfft`."""
    return _fft.ihfft(x, n, axis, norm)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d`` (default dtype float64, the
    default real floating dtype): :func:`devtensor.fft.fftfreq`."""
    return _fft.fftfreq(n, d, dtype=dtype, device=device)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """The ``n // 2 + 1`` non-negative sample frequencies of an ``n``-point real transform:
    :func:`devtensor.fft.rfftfreq`."""
    return _fft.rfftfreq(n, d, dtype=dtype, device=device)


def fftshift(x: Tensor, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """``x`` with the zero frequency moved to the centre along ``axes`` (all when None):
    :func:`devtensor.fft.fftshift`."""
    return _fft.fftshift(x, _axes(axes))


def ifftshift(x: Tensor, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of :func:`fftshift`: :func:`devtensor.fft.ifftshift`."""
    return _fft.ifftshift(x, _axes(axes))


# Errors name the standard's function and arguments (xp.fft...., 'axis'), not devtensor's op.
name_errors(globals(), __all__, "fft.")
