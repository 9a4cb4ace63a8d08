"""Discrete Fourier transforms: the ops behind :mod:`devtensor.fft` (``fft_fft``, ``fft_ifft``, ``fft_fftn``,
``fft_ifftn``, ``fft_rfft``, ``fft_irfft``, ``fft_rfftn``, ``fft_irfftn``, ``fft_hfft``, ``fft_ihfft``,
``fft_fftshift``, ``fft_ifftshift``: PyTorch's ATen names).

Structured ops with functional and out variants (no inplace, no Tensor methods, no top-level functions: the
public names are ``devtensor.fft.fft`` and so on, as ``torch.fft.fft``), one kernel for both devices
(``numpy.fft`` on the CPU, ``cupy.fft`` on CUDA). Arguments, defaults and errors are PyTorch's
(``torch.fft``); values are NumPy's ``numpy.fft`` (pocketfft), computed in the precision of the input: float16,
float32 and complex64 inputs give complex64 (real transforms' outputs: float32), every other dtype (float64,
complex128, integers, bool) complex128 (float64), as NumPy 2. float16 is transformed as float32 throughout
(NumPy 2 computes the ``norm`` factor of a float16 input in float16, so its values differ there).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, Final, Literal

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dtypes import DType
from devtensor.errors import ArgumentTypeError, ArgumentValueError, IndexOutOfRangeError, short_repr
from devtensor.kernels.ufunc_family import D
from devtensor.meta import int_arg, ints_arg, normalize_dim, normalize_dims
from devtensor.structured import PlannedSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = [
    "FFTPlan",
    "fft_fft",
    "fft_fftn",
    "fft_fftshift",
    "fft_hfft",
    "fft_ifft",
    "fft_ifftn",
    "fft_ifftshift",
    "fft_ihfft",
    "fft_irfft",
    "fft_irfftn",
    "fft_rfft",
    "fft_rfftn",
]

Norm = Literal["backward", "forward", "ortho"]

#: A transform's plan: the axes, the lengths along them (NumPy's ``n``/``s``), the normalisation (NumPy's name,
#: never None) and the dtype the input is cast to before the transform (NumPy 2's working precision).
FFTPlan = tuple[tuple[int, ...], tuple[int, ...], str, DType]

_F32: Final = np.dtype(np.float32)
_F64: Final = np.dtype(np.float64)
_C64: Final = np.dtype(np.complex64)
_C128: Final = np.dtype(np.complex128)
_SINGLE: Final = frozenset({np.dtype(np.float16), _F32, _C64})
_NORMS: Final = ("backward", "forward", "ortho")


def _single(dtype: DType) -> bool:
    """Whether ``dtype`` is transformed in single precision (float16, float32, complex64: NumPy 2's rule)."""
    return dtype in _SINGLE


def _complex_of(dtype: DType) -> DType:
    return _C64 if _single(dtype) else _C128


def _real_of(dtype: DType) -> DType:
    return _F32 if _single(dtype) else _F64


def _norm(op: str, norm: object) -> str:
    """``norm`` checked: None (``"backward"``), ``"backward"``, ``"forward"`` or ``"ortho"``."""
    if norm is None:
        return "backward"
    if not isinstance(norm, str):
        raise ArgumentTypeError(
            f"{op}: argument 'norm' must be None or a str ('backward', 'forward', 'ortho'), got "
            f"{type(norm).__name__} {short_repr(norm)}"
        )
    if norm not in _NORMS:
        raise ArgumentValueError(
            f"{op}: invalid normalization mode: argument 'norm' must be None, 'backward', 'forward' or 'ortho', "
            f"got {norm!r}"
        )
    return norm


def _points(op: str, arg: str, n: int) -> int:
    if n < 1:
        raise ArgumentValueError(f"{op}: invalid number of data points ({n}) specified (argument '{arg}')")
    return n


def _dim(op: str, dim: object, ndim: int) -> int:
    """``dim`` in ``range(ndim)``; a 0-d tensor has no dim to transform (PyTorch raises the same)."""
    if ndim == 0:
        d = int_arg(op, "dim", dim)
        raise IndexOutOfRangeError(
            f"{op}: dimension specified as {d} (argument 'dim') but the tensor has no dimensions"
        )
    return normalize_dim(op, dim, ndim)


def _real_input(op: str, self: TensorMeta) -> None:
    if self.dtype.kind == "c":
        raise ArgumentTypeError(f"{op}: expects a real input tensor, got dtype {self.dtype.name}")


def _real_compute(dtype: DType) -> DType:
    """The real dtype NumPy 2 transforms a real ``dtype`` in (integers and bool as float64)."""
    return _real_of(dtype)


def _any_compute(dtype: DType) -> DType:
    """The dtype a complex-to-complex or complex-to-real transform casts its input to: complex inputs keep
    theirs, real ones become the real dtype of their precision (NumPy then treats them as complex)."""
    return dtype if dtype.kind == "c" else _real_of(dtype)


# --- one-dimensional transforms ------------------------------------------------------------------------------


def _one_dim(op: str, self: TensorMeta, n: object, dim: object, norm: object, kind: str) -> PlannedSpec[FFTPlan]:
    """The meta of a 1-d transform; ``kind``: ``"c2c"`` (fft, ifft), ``"r2c"`` (rfft, ihfft), ``"c2r"``
    (irfft, hfft)."""
    mode = _norm(op, norm)
    if kind == "r2c":
        _real_input(op, self)
    d = _dim(op, dim, len(self.shape))
    size = self.shape[d]
    if n is not None:
        length = _points(op, "n", int_arg(op, "n", n))
    elif kind == "c2r":
        length = _points(op, "n", 2 * (size - 1))
    else:
        length = _points(op, "n", size)
    shape = list(self.shape)
    if kind == "c2c":
        shape[d], dtype, compute = length, _complex_of(self.dtype), _any_compute(self.dtype)
    elif kind == "r2c":
        shape[d], dtype, compute = length // 2 + 1, _complex_of(self.dtype), _real_compute(self.dtype)
    else:
        shape[d], dtype, compute = length, _real_of(self.dtype), _any_compute(self.dtype)
    return PlannedSpec(tuple(shape), dtype, ((d,), (length,), mode, compute))


_ONE_DIM_DOC = """

    Args:
        input: the tensor (any dtype{real}; integers and bool are transformed as float64).
        n: the signal length{n_doc}. Default: {n_default}.
        dim: the dim to transform (negative counts from the end).
        norm: ``"backward"`` (None: the default), ``"forward"`` or ``"ortho"``: which direction is scaled by
            ``1/n`` (``"ortho"``: both by ``1/sqrt(n)``), as ``numpy.fft``.
    Result: {result}, on ``input``'s device; dtype {dtype}. Devices: cpu (``numpy.fft``), cuda (``cupy.fft``);
    meta tensors give shape and dtype only. Variants: functional and out (``out=``: PyTorch's out rules; the
    result casts same_kind to ``out``); no inplace variant.

    Raises:
        ArgumentValueError (ValueError): ``n`` (given or implied by ``dim``'s size) below 1; ``norm`` not one of
            the modes.{raises}
        ArgumentTypeError (TypeError): ``n`` or ``dim`` not an int; ``norm`` not a str.
        IndexOutOfRangeError (IndexError): ``dim`` out of range (a 0-d ``input`` has no dim to transform).
    """


@structured_op("fft_fft", inplace=False, method=False, public_functional=False)
def fft_fft(input: TensorMeta, n: int | None = None, dim: int = -1, norm: Norm | None = None) -> PlannedSpec[FFTPlan]:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim`` (``torch.fft.fft``; values as
    ``numpy.fft.fft``)."""
    return _one_dim("fft_fft", input, n, dim, norm, "c2c")


@structured_op("fft_ifft", inplace=False, method=False, public_functional=False)
def fft_ifft(input: TensorMeta, n: int | None = None, dim: int = -1, norm: Norm | None = None) -> PlannedSpec[FFTPlan]:
    """The one-dimensional inverse discrete Fourier transform of ``input`` along ``dim``
    (``torch.fft.ifft``; values as ``numpy.fft.ifft``)."""
    return _one_dim("fft_ifft", input, n, dim, norm, "c2c")


@structured_op("fft_rfft", inplace=False, method=False, public_functional=False)
def fft_rfft(input: TensorMeta, n: int | None = None, dim: int = -1, norm: Norm | None = None) -> PlannedSpec[FFTPlan]:
    """The one-dimensional discrete Fourier transform of the real ``input`` along ``dim``, its non-negative
    frequencies only (``torch.fft.rfft``; values as ``numpy.fft.rfft``)."""
    return _one_dim("fft_rfft", input, n, dim, norm, "r2c")


@structured_op("fft_irfft", inplace=False, method=False, public_functional=False)
def fft_irfft(input: TensorMeta, n: int | None = None, dim: int = -1, norm: Norm | None = None) -> PlannedSpec[FFTPlan]:
    """The inverse of ``devtensor.fft.rfft``: the real signal whose one-sided (Hermitian) spectrum along ``dim`` is
    ``input`` (``torch.fft.irfft``; values as ``numpy.fft.irfft``: imaginary parts of the zero and Nyquist
    terms are ignored)."""
    return _one_dim("fft_irfft", input, n, dim, norm, "c2r")


@structured_op("fft_hfft", inplace=False, method=False, public_functional=False)
def fft_hfft(input: TensorMeta, n: int | None = None, dim: int = -1, norm: Norm | None = None) -> PlannedSpec[FFTPlan]:
    """The discrete Fourier transform of a signal with Hermitian symmetry given by its one-sided half ``input``
    along ``dim``: a real spectrum (``torch.fft.hfft``; values as ``numpy.fft.hfft``)."""
    return _one_dim("fft_hfft", input, n, dim, norm, "c2r")


@structured_op("fft_ihfft", inplace=False, method=False, public_functional=False)
def fft_ihfft(input: TensorMeta, n: int | None = None, dim: int = -1, norm: Norm | None = None) -> PlannedSpec[FFTPlan]:
    """The inverse of ``devtensor.fft.hfft``: the one-sided half of the Hermitian signal whose spectrum is the real
    ``input`` along ``dim`` (``torch.fft.ihfft``; values as ``numpy.fft.ihfft``)."""
    return _one_dim("fft_ihfft", input, n, dim, norm, "r2c")


_C2C = dict(
    real="", n_doc=": ``input`` is zero-padded or trimmed to it along ``dim``", n_default="``input.size(dim)``",
    result="``input``'s shape with ``dim`` of size ``n``", dtype="complex64 for float16, float32 and complex64 "
    "inputs, complex128 otherwise", raises="",
)  # fmt: skip
_R2C = dict(
    real=" but complex", n_doc=": ``input`` is zero-padded or trimmed to it along ``dim``",
    n_default="``input.size(dim)``", result="``input``'s shape with ``dim`` of size ``n // 2 + 1``",
    dtype="complex64 for float16 and float32 inputs, complex128 otherwise",
    raises="\n        ArgumentTypeError (TypeError): a complex ``input``.",
)  # fmt: skip
_C2R = dict(
    real="", n_doc=" of the real output: ``input`` is zero-padded or trimmed to ``n // 2 + 1`` along ``dim``",
    n_default="``2 * (input.size(dim) - 1)``", result="``input``'s shape with ``dim`` of size ``n``",
    dtype="float32 for float16, float32 and complex64 inputs, float64 otherwise", raises="",
)  # fmt: skip


# --- n-dimensional transforms --------------------------------------------------------------------------------


def _n_dim(op: str, self: TensorMeta, s: object, dim: object, norm: object, kind: str) -> PlannedSpec[FFTPlan]:
    """The meta of an n-d transform (``kind`` as :func:`_one_dim`'s; r2c and c2r halve the last axis)."""
    mode = _norm(op, norm)
    if kind == "r2c":
        _real_input(op, self)
    ndim = len(self.shape)
    sizes = None if s is None else ints_arg(op, "s", s, allow_int=True)
    if dim is not None:
        axes = normalize_dims(op, dim, ndim) if ndim else _no_dims(op, dim)
        if sizes is not None and len(sizes) != len(axes):
            raise ArgumentValueError(
                f"{op}: when given, 'dim' and 's' must have the same length: got s={list(sizes)}, dim={list(axes)}"
            )
    elif sizes is not None:
        if len(sizes) > ndim:
            raise ArgumentValueError(
                f"{op}: argument 's' has {len(sizes)} values but the input tensor has only {ndim} dimension(s)"
            )
        axes = tuple(range(ndim - len(sizes), ndim))
    else:
        axes = tuple(range(ndim))
    if not axes and kind != "c2c":
        raise ArgumentValueError(f"{op}: must transform at least one axis (got dim={dim!r}, input of {ndim} dims)")
    lengths: list[int] = []
    for i, a in enumerate(axes):
        given = -1 if sizes is None else sizes[i]
        last = i == len(axes) - 1
        if given == -1:
            given = 2 * (self.shape[a] - 1) if kind == "c2r" and last else self.shape[a]
        lengths.append(_points(op, "s", given))
    shape = list(self.shape)
    for a, length in zip(axes, lengths, strict=True):
        shape[a] = length
    if kind == "c2c":
        dtype, compute = _complex_of(self.dtype), _any_compute(self.dtype)
    elif kind == "r2c":
        shape[axes[-1]] = lengths[-1] // 2 + 1
        dtype, compute = _complex_of(self.dtype), _real_compute(self.dtype)
    else:
        dtype, compute = _real_of(self.dtype), _any_compute(self.dtype)
    return PlannedSpec(tuple(shape), dtype, (axes, tuple(lengths), mode, compute))


def _no_dims(op: str, dim: object) -> tuple[int, ...]:
    """The dims of a 0-d tensor: none (any dim named is out of range)."""
    raw = ints_arg(op, "dim", dim, allow_int=True)
    if raw:
        raise IndexOutOfRangeError(
            f"{op}: dimension specified as {raw[0]} (argument 'dim') but the tensor has no dimensions"
        )
    return ()


_N_DIM_DOC = """

    Args:
        input: the tensor (any dtype{real}; integers and bool are transformed as float64).
        s: the signal lengths along the transformed dims{s_doc} (an int or a sequence; ``-1`` keeps the
            default of its dim). Default: {s_default}.
        dim: the dims to transform (an int or a sequence of distinct dims; negative counts from the end).
            Default: the last ``len(s)`` dims when ``s`` is given, else every dim.
        norm: ``"backward"`` (None: the default), ``"forward"`` or ``"ortho"``: which direction is scaled by
            ``1/prod(s)`` (``"ortho"``: both by its square root), as ``numpy.fft``.
    Result: {result}, on ``input``'s device; dtype {dtype}. Devices: cpu (``numpy.fft``), cuda (``cupy.fft``);
    meta tensors give shape and dtype only. Variants: functional and out (PyTorch's out rules); no inplace.

    Raises:
        ArgumentValueError (ValueError): a length (given or implied) below 1; ``s`` and ``dim`` of different
            lengths, or ``s`` longer than ``input``'s dims; a dim named twice; ``norm`` not one of the
            modes.{raises}
        ArgumentTypeError (TypeError): ``s`` or ``dim`` not ints; ``norm`` not a str.
        IndexOutOfRangeError (IndexError): a dim out of range.
    """


@structured_op("fft_fftn", inplace=False, method=False, public_functional=False)
def fft_fftn(
    input: TensorMeta,
    s: int | Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: Norm | None = None,
) -> PlannedSpec[FFTPlan]:
    """The n-dimensional discrete Fourier transform of ``input`` over ``dim`` (``torch.fft.fftn``; values as
    ``numpy.fft.fftn``). No dims to transform (``dim=()``, or a 0-d ``input``) gives ``input`` as complex."""
    return _n_dim("fft_fftn", input, s, dim, norm, "c2c")


@structured_op("fft_ifftn", inplace=False, method=False, public_functional=False)
def fft_ifftn(
    input: TensorMeta,
    s: int | Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: Norm | None = None,
) -> PlannedSpec[FFTPlan]:
    """The n-dimensional inverse discrete Fourier transform of ``input`` over ``dim`` (``torch.fft.ifftn``;
    values as ``numpy.fft.ifftn``). No dims to transform gives ``input`` as complex."""
    return _n_dim("fft_ifftn", input, s, dim, norm, "c2c")


@structured_op("fft_rfftn", inplace=False, method=False, public_functional=False)
def fft_rfftn(
    input: TensorMeta,
    s: int | Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: Norm | None = None,
) -> PlannedSpec[FFTPlan]:
    """The n-dimensional discrete Fourier transform of the real ``input`` over ``dim``, non-negative
    frequencies only along the last of them (``torch.fft.rfftn``; values as ``numpy.fft.rfftn``)."""
    return _n_dim("fft_rfftn", input, s, dim, norm, "r2c")


@structured_op("fft_irfftn", inplace=False, method=False, public_functional=False)
def fft_irfftn(
    input: TensorMeta,
    s: int | Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: Norm | None = None,
) -> PlannedSpec[FFTPlan]:
    """The inverse of ``devtensor.fft.rfftn``: the real signal whose spectrum, one-sided along the last dim of
    ``dim``, is ``input`` (``torch.fft.irfftn``; values as ``numpy.fft.irfftn``)."""
    return _n_dim("fft_irfftn", input, s, dim, norm, "c2r")


_NC2C = dict(
    real="", s_doc=": ``input`` is zero-padded or trimmed to them", s_default="the sizes of the dims",
    result="``input``'s shape with each transformed dim of its length in ``s``",
    dtype="complex64 for float16, float32 and complex64 inputs, complex128 otherwise", raises="",
)  # fmt: skip
_NR2C = dict(
    real=" but complex", s_doc=": ``input`` is zero-padded or trimmed to them", s_default="the sizes of the dims",
    result="``input``'s shape with each transformed dim of its length in ``s``, the last one ``s[-1] // 2 + 1``",
    dtype="complex64 for float16 and float32 inputs, complex128 otherwise",
    raises=" No dim to transform.\n        ArgumentTypeError (TypeError): a complex ``input``.",
)  # fmt: skip
_NC2R = dict(
    real="", s_doc=" of the real output (``input``'s last transformed dim is zero-padded or trimmed to "
    "``s[-1] // 2 + 1``)", s_default="the sizes of the dims, ``2 * (size - 1)`` for the last",
    result="``input``'s shape with each transformed dim of its length in ``s``",
    dtype="float32 for float16, float32 and complex64 inputs, float64 otherwise", raises=" No dim to transform.",
)  # fmt: skip


def _transform(xp: ModuleType, name: str, n_dim: bool, a: Any, plan: FFTPlan, o: Any) -> None:
    """``xp.fft.<name>`` of ``a`` as the plan says, written into ``o`` (cast same_kind: the front checked it)."""
    axes, lengths, mode, compute = plan
    a = a.astype(compute, copy=False)
    if not axes:  # fftn/ifftn over no dims: the input itself (real parts into a complex out: a safe cast)
        xp.copyto(o, a, casting="same_kind")
        return
    if any(a.shape[axis] == 0 for axis in axes):
        # An input empty along a transformed dim is zero-padded to all zeros, whose transform is zeros; NumPy's
        # c2r transforms (irfft, hfft, irfftn) return unwritten memory for it, so write the zeros here.
        o[...] = 0
        return
    fn = getattr(xp.fft, name)
    if n_dim:
        result = fn(a, s=lengths, axes=axes, norm=mode)
    else:
        result = fn(a, n=lengths[0], axis=axes[0], norm=mode)
    xp.copyto(o, result, casting="same_kind")


@_ks.fft_fft.xp
def _fft(
    xp: ModuleType, input: D, n: int | None, dim: int, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]
) -> None:
    _transform(xp, "fft", False, input._array, plan, out.array)


@_ks.fft_ifft.xp
def _ifft(
    xp: ModuleType, input: D, n: int | None, dim: int, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]
) -> None:
    _transform(xp, "ifft", False, input._array, plan, out.array)


@_ks.fft_rfft.xp
def _rfft(
    xp: ModuleType, input: D, n: int | None, dim: int, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]
) -> None:
    _transform(xp, "rfft", False, input._array, plan, out.array)


@_ks.fft_irfft.xp
def _irfft(
    xp: ModuleType, input: D, n: int | None, dim: int, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]
) -> None:
    _transform(xp, "irfft", False, input._array, plan, out.array)


@_ks.fft_hfft.xp
def _hfft(
    xp: ModuleType, input: D, n: int | None, dim: int, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]
) -> None:
    _transform(xp, "hfft", False, input._array, plan, out.array)


@_ks.fft_ihfft.xp
def _ihfft(
    xp: ModuleType, input: D, n: int | None, dim: int, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]
) -> None:
    _transform(xp, "ihfft", False, input._array, plan, out.array)


Dims = int | Sequence[int] | None


@_ks.fft_fftn.xp
def _fftn(xp: ModuleType, input: D, s: Dims, dim: Dims, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]) -> None:
    _transform(xp, "fftn", True, input._array, plan, out.array)


@_ks.fft_ifftn.xp
def _ifftn(xp: ModuleType, input: D, s: Dims, dim: Dims, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]) -> None:
    _transform(xp, "ifftn", True, input._array, plan, out.array)


@_ks.fft_rfftn.xp
def _rfftn(xp: ModuleType, input: D, s: Dims, dim: Dims, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]) -> None:
    _transform(xp, "rfftn", True, input._array, plan, out.array)


@_ks.fft_irfftn.xp
def _irfftn(
    xp: ModuleType, input: D, s: Dims, dim: Dims, norm: Norm | None, *, plan: FFTPlan, out: ConstOut[D]
) -> None:
    _transform(xp, "irfftn", True, input._array, plan, out.array)


# --- shifts ----------------------------------------------------------------------------------------------------


def _shift_meta(op: str, self: TensorMeta, dim: object) -> PlannedSpec[tuple[int, ...]]:
    ndim = len(self.shape)
    if dim is None:
        axes = tuple(range(ndim))
    else:
        axes = normalize_dims(op, dim, ndim) if ndim else _no_dims(op, dim)
    return PlannedSpec(self.shape, self.dtype, axes)


_SHIFT_DOC = """

    Args:
        input: the tensor (any dtype).
        dim: the dims to shift (an int or a sequence of distinct dims; negative counts from the end). Default:
            every dim (a 0-d ``input`` is returned as it is, as NumPy's).
    Result: ``input``'s shape and dtype, on its device. Devices: cpu (``numpy.fft``), cuda (``cupy.fft``); meta
    tensors give shape and dtype only. Variants: functional and out (PyTorch's out rules); no inplace.

    Raises:
        ArgumentTypeError (TypeError): ``dim`` not ints.  ArgumentValueError (ValueError): a dim named twice.
        IndexOutOfRangeError (IndexError): a dim out of range.
    """


@structured_op("fft_fftshift", inplace=False, method=False, public_functional=False)
def fft_fftshift(input: TensorMeta, dim: int | Sequence[int] | None = None) -> PlannedSpec[tuple[int, ...]]:
    """``input`` with the zero-frequency term moved to the centre of each dim in ``dim``: a cyclic shift by
    ``size // 2`` (``torch.fft.fftshift``; values as ``numpy.fft.fftshift``)."""
    return _shift_meta("fft_fftshift", input, dim)


@structured_op("fft_ifftshift", inplace=False, method=False, public_functional=False)
def fft_ifftshift(input: TensorMeta, dim: int | Sequence[int] | None = None) -> PlannedSpec[tuple[int, ...]]:
    """The inverse of ``devtensor.fft.fftshift``: a cyclic shift by ``-(size // 2)`` along each dim in ``dim``
    (``torch.fft.ifftshift``; values as ``numpy.fft.ifftshift``)."""
    return _shift_meta("fft_ifftshift", input, dim)


@_ks.fft_fftshift.xp
def _fftshift(xp: ModuleType, input: D, dim: Dims, *, plan: tuple[int, ...], out: ConstOut[D]) -> None:
    a = input._array
    xp.copyto(out.array, xp.fft.fftshift(a, axes=plan) if plan else a, casting="same_kind")


@_ks.fft_ifftshift.xp
def _ifftshift(xp: ModuleType, input: D, dim: Dims, *, plan: tuple[int, ...], out: ConstOut[D]) -> None:
    a = input._array
    xp.copyto(out.array, xp.fft.ifftshift(a, axes=plan) if plan else a, casting="same_kind")


def _document() -> None:
    for ops, template, parts in (
        ((fft_fft, fft_ifft), _ONE_DIM_DOC, _C2C),
        ((fft_rfft, fft_ihfft), _ONE_DIM_DOC, _R2C),
        ((fft_irfft, fft_hfft), _ONE_DIM_DOC, _C2R),
        ((fft_fftn, fft_ifftn), _N_DIM_DOC, _NC2C),
        ((fft_rfftn,), _N_DIM_DOC, _NR2C),
        ((fft_irfftn,), _N_DIM_DOC, _NC2R),
        ((fft_fftshift, fft_ifftshift), _SHIFT_DOC, {}),
    ):
        for op in ops:
            op.meta.__doc__ = op.doc = op.functional.__doc__ = (op.meta.__doc__ or "") + template.format(**parts)


_document()
