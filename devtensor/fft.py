"""``devtensor.fft``: discrete Fourier transforms, PyTorch's ``torch.fft`` names and signatures over NumPy's
``numpy.fft`` values (CuPy's ``cupy.fft`` on CUDA).

The transforms (``fft``, ``ifft``, ``fftn``, ``ifftn``, ``rfft``, ``irfft``, ``rfftn``, ``irfftn``, ``hfft``,
``ihfft``) and the shifts (``fftshift``, ``ifftshift``) are the functional variants of structured ops
(``devtensor.kernels.fft``: ``fft_fft``, ... as ATen names them), so dispatch, overrides, modes, the device guard
and PyTorch's out rules apply; each takes ``out=``. Results are computed in the input's precision: float16,
float32 and complex64 give complex64 (float32 for the real outputs of ``irfft``, ``irfftn``, ``hfft``), other
dtypes complex128 (float64), as NumPy 2. ``fftfreq`` and ``rfftfreq`` are factories (like ``arange``).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from devtensor.backends import allocation_error, backend_for, check_allocation_size
from devtensor.creation import on_device, optional_dtype
from devtensor.device import DeviceLike, as_device
from devtensor.dtypes import DTypeLike
from devtensor.errors import ArgumentTypeError, ArgumentValueError, DevtensorError, as_called, short_repr
from devtensor.kernels import fft as _ops  # noqa: F401  (defines the ops bound below)
from devtensor.structured import variant as _variant
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

if TYPE_CHECKING:
    _Norm = Literal["backward", "forward", "ortho"] | None
    _Dims = int | Sequence[int] | None

    def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def fftn(input: Tensor, s: _Dims = None, dim: _Dims = None, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def ifftn(input: Tensor, s: _Dims = None, dim: _Dims = None, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def rfftn(input: Tensor, s: _Dims = None, dim: _Dims = None, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def irfftn(input: Tensor, s: _Dims = None, dim: _Dims = None, norm: _Norm = None, *, out: Tensor | None = None) -> Tensor: ...  # fmt: skip  # noqa: E501
    def fftshift(input: Tensor, dim: _Dims = None, *, out: Tensor | None = None) -> Tensor: ...
    def ifftshift(input: Tensor, dim: _Dims = None, *, out: Tensor | None = None) -> Tensor: ...

else:
    # The ops' functional variants themselves: no extra Python frame per call.
    fft = _variant("fft_fft", "functional")
    ifft = _variant("fft_ifft", "functional")
    rfft = _variant("fft_rfft", "functional")
    irfft = _variant("fft_irfft", "functional")
    hfft = _variant("fft_hfft", "functional")
    ihfft = _variant("fft_ihfft", "functional")
    fftn = _variant("fft_fftn", "functional")
    ifftn = _variant("fft_ifftn", "functional")
    rfftn = _variant("fft_rfftn", "functional")
    irfftn = _variant("fft_irfftn", "functional")
    fftshift = _variant("fft_fftshift", "functional")
    ifftshift = _variant("fft_ifftshift", "functional")


_DEFAULT_FLOAT = np.dtype(np.float64)


def _frequencies(
    op: str, n: object, d: object, dtype: DTypeLike | None, device: DeviceLike | None, out: Tensor | None
) -> Tensor:
    """The sample frequencies of ``numpy.fft.<op>`` on ``device`` in ``dtype``, written into ``out`` when given."""
    name = f"fft_{op}"
    if isinstance(n, bool):
        raise ArgumentTypeError(f"{name}: argument 'n' must be an int, got bool")
    try:
        count = operator.index(n)  # type: ignore[arg-type]
    except TypeError:
        raise ArgumentTypeError(
            f"{name}: argument 'n' must be an int, got {type(n).__name__} {short_repr(n)}"
        ) from None
    if count < (1 if op == "rfftfreq" else 0):
        raise ArgumentValueError(
            f"{name}: argument 'n' must be {'positive' if op == 'rfftfreq' else 'non-negative'}, got {count}"
        )
    if isinstance(d, bool) or not isinstance(d, (int, float, np.integer, np.floating)):
        raise ArgumentTypeError(f"{name}: argument 'd' must be a real number, got {type(d).__name__} {short_repr(d)}")
    spacing = float(d)
    if spacing == 0.0:
        raise ArgumentValueError(f"{name}: argument 'd' (the sample spacing) must be nonzero, got {d!r}")
    if out is not None and not isinstance(out, Tensor):
        raise ArgumentTypeError(f"{name}: argument 'out' must be a Tensor, got {type(out).__name__}")
    dt = optional_dtype(name, dtype)
    if dt is None:
        dt = out.dtype if out is not None and out.dtype.kind in "fc" else _DEFAULT_FLOAT
    if dt.kind not in "fc":
        raise ArgumentTypeError(f"{name}: requires a floating point or complex dtype, got {dt.name}")
    dev = as_device(device if device is not None or out is None else out.device, op=name)
    length = count // 2 + 1 if op == "rfftfreq" else count
    check_allocation_size(name, (length,), dt)  # (NumPy's own refusal of a huge n is a raw ValueError)
    backend = backend_for(dev)
    if not backend.has_data:
        result = backend.wrap(backend.empty((length,), dt, dev), dev)
    else:
        # NumPy's values (computed in float64), then the dtype asked for: n values, cheap to make on the host.
        # (NumPy's fftfreq(0) divides by zero: there is nothing to compute.)
        try:
            values = getattr(np.fft, op)(count, spacing).astype(dt) if count else np.empty(0, dt)
        except MemoryError as error:  # (NumPy's, naming no op)
            raise allocation_error(name, (length,), dt, "cpu", error) from None
        result = on_device(name, dev, values, copy=dev.type != "cpu")
    if out is None:
        return result
    from devtensor import clone

    try:
        return clone(result, out=out)
    except DevtensorError as error:  # (the out rules of the copy: named as the user's call)
        raise as_called(error, ("clone",), name) from None


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Tensor | None = None,
    dtype: DTypeLike | None = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """The sample frequencies of an ``n``-point discrete Fourier transform with sample spacing ``d``
    (``torch.fft.fftfreq``; values as ``numpy.fft.fftfreq``): ``[0, 1, ..., ceil(n/2) - 1, -floor(n/2), ...,
    -1] / (d * n)``.

    Result: 1-d of length ``n`` on ``device`` (default: ``out``'s, else the CPU), dtype ``dtype`` (default:
    ``out``'s when it is floating or complex, else float64), a new storage; with ``out=`` the values are written
    into ``out`` by PyTorch's out rules (``devtensor.clone(values, out=out)``: resize, same_kind cast) and ``out``
    is returned. Values are computed in float64 on the host (n values), then cast and moved.

    ``n = 0`` gives an empty tensor (PyTorch's; NumPy raises ZeroDivisionError); ``d = 0`` is refused (NumPy
    raises ZeroDivisionError; PyTorch returns infinities and NaN).

    Raises:
        ArgumentTypeError (TypeError): ``n`` not an int; ``d`` not a real number; ``dtype`` neither floating nor
            complex (PyTorch's rule), or not a dtype; ``out`` not a tensor.
        ArgumentValueError (ValueError): ``n`` negative; ``d`` zero.
        DeviceMismatchError (ValueError): ``out`` on another device than ``device``.
    """
    return _frequencies("fftfreq", n, d, dtype, device, out)


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Tensor | None = None,
    dtype: DTypeLike | None = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point real discrete Fourier transform (:func:`rfft`) with
    sample spacing ``d`` (``torch.fft.rfftfreq``; values as ``numpy.fft.rfftfreq``): ``[0, 1, ..., n // 2] /
    (d * n)``.

    Result: 1-d of length ``n // 2 + 1``; device, dtype, ``out=`` and errors as :func:`fftfreq`'s, except that
    ``n`` must be positive (NumPy raises for 0; PyTorch returns a NaN).
    """
    return _frequencies("rfftfreq", n, d, dtype, device, out)
