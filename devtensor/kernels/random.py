"""Random ops: PyTorch's inplace samplers ``uniform_``, ``normal_``, ``random_``, ``bernoulli_`` and the
functional ``multinomial``, plus the op behind ``randperm``; all structured ops (dispatch, modes, out and inplace
rules, version bumps), marked ``nondeterministic`` (each call draws fresh values).

Each takes ``generator=None``: a :class:`~devtensor.generator.Generator` on the output's device, or None for that
device's default generator. One ``xp`` kernel per op serves CPU and CUDA: the generator's stream draws on its
device (NumPy's PCG64, CuPy's RandomState), and the kernel finishes the values with the array module. The same
seed gives the same values on one device type; CPU and CUDA streams differ.

The inplace samplers' functional variants (a new tensor shaped like ``self``) are not public, since PyTorch's
functions of those names are others (``torch.normal(mean, std)``, ``torch.bernoulli(input)``): the public
factories (``rand``, ``normal``, ``bernoulli``, …) are in :mod:`devtensor.random`.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.device import Device
from devtensor.dtypes import DType, Scalar
from devtensor.errors import ArgumentTypeError, ArgumentValueError, DeviceMismatchError, ShapeError, short_repr
from devtensor.generator import Generator, default_generator_for
from devtensor.kernels.ufunc_family import D
from devtensor.meta import int_arg, int_bounds
from devtensor.structured import TensorSpec, rules, structured_op
from devtensor.tensor import Tensor, TensorMeta, TensorOrScalar
from devtensor.typed import ConstOut

_F16: Final = np.dtype(np.float16)
_F32: Final = np.dtype(np.float32)
_F64: Final = np.dtype(np.float64)
_INT64: Final = np.dtype(np.int64)
_UINT64: Final = np.dtype(np.uint64)
_FLOAT_MAX: Final = {d: float(np.finfo(d).max) for d in (_F16, _F32, _F64)}


# --- shared checks and draws ------------------------------------------------------------------------------


def check_generator(op: str, generator: object, device: Device) -> None:
    """``generator`` must be None or a :class:`Generator` on ``device`` (a meta device accepts any).

    Raises:
        ArgumentTypeError (TypeError): not a Generator.  DeviceMismatchError (ValueError): another device.
    """
    if generator is None:
        return
    if type(generator) is not Generator:
        raise ArgumentTypeError(
            f"{op}: argument 'generator' must be a devtensor.Generator or None, got {type(generator).__name__}"
        )
    if device.type != "meta" and generator.device != device:
        raise DeviceMismatchError(
            f"{op}: argument 'generator' is a generator on {generator.device}, but the output is on {device}; "
            f"pass a generator made with device={str(device)!r}"
        )


def real_arg(op: str, arg: str, value: object) -> float:
    """``value`` (a Python int or float, or a NumPy real number; not a bool) as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ArgumentTypeError(f"{op}: argument '{arg}' must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise ArgumentValueError(f"{op}: argument '{arg}' is too large for a float: {short_repr(value)}") from None


def _float_self(op: str, self: TensorMeta, complex_ok: bool = False) -> None:
    if self.dtype.kind != "f" and not (complex_ok and self.dtype.kind == "c"):
        kinds = "a floating-point or complex tensor" if complex_ok else "a floating-point tensor"
        raise ArgumentTypeError(
            f"{op}: argument 'self' must be {kinds} (float16, float32, float64{', complex64, complex128' * complex_ok}"
            f"), got dtype {self.dtype.name}"
        )


def _complex_parts(xp: ModuleType, o: Any, draw: Any) -> bool:
    """For a complex ``o``: fill it from ``draw(shape, real_dtype)`` drawn for the real and the imaginary parts
    together (PyTorch draws a complex tensor as its real view: each part from the real distribution); returns
    whether ``o`` was complex."""
    if o.dtype.kind != "c":
        return False
    real = _F32 if o.dtype == np.complex64 else _F64
    parts = draw((*o.shape, 2), real)
    o.real[...] = parts[..., 0]
    o.imag[...] = parts[..., 1]
    return True


def stream_for(generator: Generator | None, device: Device) -> Any:
    """The stream to draw from: ``generator``'s, or that of ``device``'s default generator for None."""
    return (generator if generator is not None else default_generator_for(device)).stream


def unit_draws(xp: ModuleType, stream: Any, shape: tuple[int, ...], dtype: DType) -> Any:
    """Uniform floats in ``[0, 1)``: float64 draws for a float64 result, float32 draws otherwise; for float16,
    rounded down to its 11 significant bits (so a value never rounds up to 1)."""
    if dtype == _F64:
        return stream.random(shape, _F64)
    u = stream.random(shape, _F32)
    if dtype == _F16:
        u = xp.floor(u * 2048.0) * (1.0 / 2048.0)
    return u


def _below(xp: ModuleType, values: Any, bound: float, dtype: DType) -> Any:
    """``values`` (after the cast to ``dtype``) kept below ``bound``: rounding may carry ``from_ + (to - from_) *
    u`` up to ``to`` itself; such values become the largest ``dtype`` value below it."""
    top = np.nextafter(np.array(bound, dtype=dtype), np.array(-np.inf, dtype=dtype))
    return xp.minimum(values.astype(dtype, copy=False), top)


# --- uniform_ ---------------------------------------------------------------------------------------------


@structured_op("uniform", out_may_be_input=True, nondeterministic=True, public_functional=False)
def uniform(self: TensorMeta, from_: float = 0.0, to: float = 1.0, *, generator: Generator | None = None) -> TensorSpec:
    """``self.uniform_(from_=0.0, to=1.0, *, generator=None)``: fill ``self`` with values drawn uniformly from
    ``[from_, to)`` (``torch.Tensor.uniform_``; PyTorch's ``from`` is ``from_`` here, a Python keyword).

    Shapes: any. Dtypes: float16, float32, float64 (float64 draws for float64, float32 draws otherwise); complex64
    and complex128 (PyTorch's: real and imaginary parts each drawn from ``[from_, to)``).
    Devices: cpu, cuda (``generator`` on the same device; None: the device's default generator); meta tensors
    check the arguments only. Draws fresh values on each call (``nondeterministic``).

    Raises:
        ArgumentTypeError (TypeError): a non-float, non-complex ``self``; bounds that are not real numbers; a bad
            generator.
        ArgumentValueError (ValueError): ``from_ > to``, a bound not finite, or ``to - from_`` beyond the dtype.
        DeviceMismatchError (ValueError): a generator on another device.
    """
    op = "uniform_"
    _float_self(op, self, complex_ok=True)
    low, high = real_arg(op, "from_", from_), real_arg(op, "to", to)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ArgumentValueError(f"{op}: the bounds must be finite, got from_={low}, to={high}")
    if low > high:
        raise ArgumentValueError(f"{op}: expects from_ <= to, got from_={low} > to={high}")
    largest = _FLOAT_MAX.get(self.dtype) or float(np.finfo(self.dtype).max)
    if high - low > largest:
        raise ArgumentValueError(f"{op}: to - from_ = {high - low} is beyond the largest {self.dtype.name} ({largest})")
    check_generator(op, generator, self.device)
    return self.shape, self.dtype


@_ks.uniform.xp
def _uniform(
    xp: ModuleType, self: D, from_: float, to: float, *, generator: Generator | None, out: ConstOut[D]
) -> None:
    o = out.array
    if o.size == 0:
        return
    low, high = float(from_), float(to)
    stream = stream_for(generator, self.device)
    if _complex_parts(xp, o, lambda shape, real: _uniform_values(xp, stream, shape, real, low, high)):
        return
    o[...] = _uniform_values(xp, stream, o.shape, o.dtype, low, high)


def _uniform_values(xp: ModuleType, stream: Any, shape: tuple[int, ...], dtype: DType, low: float, high: float) -> Any:
    """Uniform draws from ``[low, high)`` of ``shape``, to be written into ``dtype``."""
    u = unit_draws(xp, stream, shape, dtype)
    if low == 0.0 and high == 1.0:
        return u
    if low == high:
        return xp.full(shape, low, dtype)
    return _below(xp, low + (high - low) * u.astype(_F64, copy=False), high, dtype)


# --- normal_ ----------------------------------------------------------------------------------------------


@structured_op("normal", out_may_be_input=True, nondeterministic=True, public_functional=False)
def normal(self: TensorMeta, mean: float = 0.0, std: float = 1.0, *, generator: Generator | None = None) -> TensorSpec:
    """``self.normal_(mean=0.0, std=1.0, *, generator=None)``: fill ``self`` with values drawn from the normal
    distribution of ``mean`` and standard deviation ``std`` (``torch.Tensor.normal_``).

    Shapes: any. Dtypes: float16, float32, float64 (float64 draws for float64, float32 draws otherwise); complex64
    and complex128 (PyTorch's complex normal: real and imaginary parts each ``mean + std / sqrt(2) * N(0, 1)``).
    Devices: cpu, cuda (``generator`` on the same device; None: the device's default generator); meta tensors
    check the arguments only. Draws fresh values on each call (``nondeterministic``).

    Raises:
        ArgumentTypeError (TypeError): a non-float, non-complex ``self``; ``mean``/``std`` not real numbers; a bad
            generator.
        ArgumentValueError (ValueError): ``std < 0`` or NaN (PyTorch: "normal expects std >= 0.0").
        DeviceMismatchError (ValueError): a generator on another device.
    """
    op = "normal_"
    _float_self(op, self, complex_ok=True)
    real_arg(op, "mean", mean)
    s = real_arg(op, "std", std)
    if not s >= 0.0:
        raise ArgumentValueError(f"{op}: expects std >= 0.0, got std={s}")
    check_generator(op, generator, self.device)
    return self.shape, self.dtype


@_ks.normal.xp
def _normal(xp: ModuleType, self: D, mean: float, std: float, *, generator: Generator | None, out: ConstOut[D]) -> None:
    o = out.array
    if o.size == 0:
        return
    stream = stream_for(generator, self.device)
    m, sd = float(mean), float(std)

    def draw(shape: tuple[int, ...], dtype: DType, s: float) -> Any:
        z = stream.normal(shape, _F64 if dtype == _F64 else _F32)
        return z if (m == 0.0 and s == 1.0) else m + s * z.astype(_F64, copy=False)

    # Complex (PyTorch's complex normal): each part drawn with std / sqrt(2), so |z - mean|^2 has mean std^2;
    # the mean is added to both parts, as PyTorch's draw into the real view does.
    if not _complex_parts(xp, o, lambda shape, real: draw(shape, real, sd / math.sqrt(2.0))):
        o[...] = draw(o.shape, o.dtype, sd)


# --- random_ ----------------------------------------------------------------------------------------------


def integer_range(op: str, dtype: DType, low: int, high: int | None) -> tuple[int, int]:
    """The draw range ``[low, high)`` of ``random_``/``randint`` into ``dtype``, checked (PyTorch's rules): a
    ``high`` of None is the dtype's whole range from ``low`` (``[low, 2**digits]`` for floats); both ends must
    fit the dtype (exactly, for floats: within ``±2**digits``).

    Raises:
        ArgumentTypeError (TypeError): a dtype that is not bool, integer or float.
        ArgumentValueError (ValueError): ``low >= high``; a bound outside the dtype's range.
    """
    if dtype.kind == "b":
        lo_ok, hi_ok = 0, 1
    elif dtype.kind in "iu":
        lo_ok, hi_ok = int_bounds(dtype)
    elif dtype.kind == "f":
        digits = np.finfo(dtype).nmant + 1
        lo_ok, hi_ok = -(2**digits), 2**digits
    else:
        raise ArgumentTypeError(f"{op}: dtype {dtype.name} is not supported (bool, integer or float dtypes)")
    if high is None:
        high = hi_ok + 1
        if low > hi_ok:
            raise ArgumentValueError(f"{op}: from_={low} is beyond the largest {dtype.name} value {hi_ok}")
    if low >= high:
        raise ArgumentValueError(f"{op}: expects 'from' to be less than 'to', got from={low} >= to={high}")
    if low < lo_ok or high - 1 > hi_ok:
        raise ArgumentValueError(
            f"{op}: the range [{low}, {high}) does not fit dtype {dtype.name} (values in [{lo_ok}, {hi_ok}])"
        )
    return low, high


def draw_integers(stream: Any, low: int, high: int, shape: tuple[int, ...]) -> Any:
    """Integers uniform in ``[low, high)`` (int64, or uint64 for a range beyond int64's)."""
    wide = high - 1 > 2**63 - 1
    return stream.integers(low, high, shape, _UINT64 if wide else _INT64)


@structured_op("random", nondeterministic=True, public_functional=False, out_may_be_input=True)
def random(
    self: TensorMeta, from_: int = 0, to: int | None = None, *, generator: Generator | None = None
) -> TensorSpec:
    """``self.random_(from_=0, to=None, *, generator=None)``: fill ``self`` with integers drawn uniformly from
    ``[from_, to)`` (``torch.Tensor.random_``); ``to=None`` with ``from_=0`` draws from ``[0, max]`` of the dtype
    (``[0, 2**digits]`` for floats: 2**11 for float16, 2**24 float32, 2**53 float64; ``[0, 1]`` for bool).

    PyTorch's one-argument form ``random_(to)`` is an overload this schema cannot tell from ``random_(from_)``:
    a ``from_`` other than 0 without ``to`` is refused (write ``random_(0, to)``).

    Shapes: any. Dtypes: bool, integers, floats. Devices: cpu, cuda; meta tensors check the arguments only.
    Draws fresh values on each call (``nondeterministic``).

    Raises:
        ArgumentTypeError (TypeError): bounds that are not ints; a complex ``self``; a bad generator.
        ArgumentValueError (ValueError): ``from_ >= to``; a range outside the dtype's; ``from_`` without ``to``.
        DeviceMismatchError (ValueError): a generator on another device.
    """
    op = "random_"
    low = int_arg(op, "from_", from_)
    high = None if to is None else int_arg(op, "to", to)
    if high is None and low != 0:
        raise ArgumentValueError(
            f"{op}: from_={low} without 'to' is ambiguous (PyTorch's random_(to) draws from [0, to)); pass both "
            f"bounds: random_(0, {low}) for [0, {low})"
        )
    integer_range(op, self.dtype, low, high)
    check_generator(op, generator, self.device)
    return self.shape, self.dtype


@_ks.random.xp
def _random(
    xp: ModuleType, self: D, from_: int, to: int | None, *, generator: Generator | None, out: ConstOut[D]
) -> None:
    o = out.array
    if o.size == 0:
        return
    low, high = integer_range("random_", o.dtype, int(from_), None if to is None else int(to))
    o[...] = draw_integers(stream_for(generator, self.device), low, high, o.shape)


# --- bernoulli_ -------------------------------------------------------------------------------------------


@structured_op("bernoulli", nondeterministic=True, public_functional=False, out_may_be_input=True)
def bernoulli(self: TensorMeta, p: TensorOrScalar = 0.5, *, generator: Generator | None = None) -> TensorSpec:
    """``self.bernoulli_(p=0.5, *, generator=None)``: fill ``self`` with 1 with probability ``p``, else 0
    (``torch.Tensor.bernoulli_``); ``p`` a number in ``[0, 1]`` or a float tensor of probabilities that
    broadcasts to ``self``'s shape (``self`` never broadcasts). ``devtensor.bernoulli(input)`` is this op's
    functional variant with ``p=input``.

    Shapes: any. Dtypes: ``self`` bool, integer or float; a tensor ``p`` float. Devices: cpu, cuda; meta tensors
    check the arguments only. Draws fresh values on each call (``nondeterministic``).

    Raises:
        ArgumentTypeError (TypeError): a complex ``self``; ``p`` not a real number or a float tensor.
        ArgumentValueError (ValueError): a number ``p`` outside ``[0, 1]``; a tensor ``p`` with a value outside
            ``[0, 1]`` or NaN (raised by the kernel before any write).
        ShapeError (ValueError): a tensor ``p`` that does not broadcast to ``self``'s shape.
        DeviceMismatchError (ValueError): a generator on another device.
    """
    op = "bernoulli"
    if self.dtype.kind not in "biuf":
        raise ArgumentTypeError(f"{op}: dtype {self.dtype.name} of 'self' is not supported (bool, integer, float)")
    if isinstance(p, Tensor):
        if p.dtype.kind != "f":
            raise ArgumentTypeError(f"{op}: a tensor 'p' must hold float probabilities, got dtype {p.dtype.name}")
        try:
            shape = np.broadcast_shapes(p.shape, self.shape)
        except ValueError:
            shape = None
        if shape != self.shape:
            raise ShapeError(
                f"{op}: the probabilities 'p' of shape {list(p.shape)} do not broadcast to the output shape "
                f"{list(self.shape)}"
            )
    else:
        prob = real_arg(op, "p", p)
        if not 0.0 <= prob <= 1.0:
            raise ArgumentValueError(f"{op}: expects 0 <= p <= 1, got p={prob}")
    check_generator(op, generator, self.device)
    return self.shape, self.dtype


@_ks.bernoulli.xp
def _bernoulli(xp: ModuleType, self: D, p: D | Scalar, *, generator: Generator | None, out: ConstOut[D]) -> None:
    o = out.array
    if isinstance(p, Tensor):
        probs = p._array
        if probs.size and bool(xp.any(~((probs >= 0) & (probs <= 1)))):
            raise ArgumentValueError(
                "bernoulli: the probabilities 'p' must all be in [0, 1] (got a value outside, or NaN)"
            )
    else:
        probs = float(p)  # type: ignore[arg-type]  # (a real number: the meta function checked it)
    if o.size == 0:
        return
    u = stream_for(generator, self.device).random(o.shape, _F64)
    o[...] = u < probs


# --- multinomial ------------------------------------------------------------------------------------------


@structured_op("multinomial", inplace=False, nondeterministic=True)
def multinomial(
    self: TensorMeta, num_samples: int, replacement: bool = False, *, generator: Generator | None = None
) -> TensorSpec:
    """``multinomial(input, num_samples, replacement=False, *, generator=None, out=None)``: indices drawn from
    the categorical distribution of each row of ``input`` (weights, not necessarily summing to 1), with or
    without replacement (``torch.multinomial``).

    Shapes: ``input`` ``[k]`` gives ``[num_samples]``; ``[n, k]`` gives ``[n, num_samples]``. Dtypes: ``input``
    float; the result int64. Devices: cpu, cuda; meta tensors give the shape and dtype only. Draws fresh values
    on each call (``nondeterministic``). Without replacement, each row's samples are distinct (weighted sampling
    by exponential keys: ``argsort(-log(u) / w)``); with it, by the inverse of each row's cumulative weights.

    Raises:
        ArgumentTypeError (TypeError): a non-float ``input``; ``num_samples`` not an int; ``replacement`` not a
            bool; a bad generator.
        ArgumentValueError (ValueError): ``input`` not 1-d or 2-d or with no categories; ``num_samples <= 0``;
            without replacement, ``num_samples`` above the number of categories; data (raised by the kernel
            before any write): a negative, infinite or NaN weight, a row of zero sum, or without replacement
            fewer non-zero weights than ``num_samples``.
        DeviceMismatchError (ValueError): a generator on another device.
        CastingError (TypeError): an ``out`` that is not int64 (PyTorch's rule).
    """
    op = "multinomial"
    if self.dtype.kind != "f":
        raise ArgumentTypeError(f"{op}: argument 'input' must be a float tensor of weights, got {self.dtype.name}")
    if self.ndim not in (1, 2):
        raise ArgumentValueError(f"{op}: argument 'input' must be 1-d or 2-d, got {self.ndim}-d")
    n = int_arg(op, "num_samples", num_samples)
    if type(replacement) is not bool:
        raise ArgumentTypeError(f"{op}: argument 'replacement' must be a bool, got {type(replacement).__name__}")
    k = self.shape[-1]
    if k == 0:
        raise ArgumentValueError(f"{op}: argument 'input' has no categories (its last dimension is 0)")
    if n <= 0:
        raise ArgumentValueError(f"{op}: argument 'num_samples' must be positive, got {n}")
    if not replacement and n > k:
        raise ArgumentValueError(f"{op}: cannot draw num_samples={n} samples without replacement from {k} categories")
    check_generator(op, generator, self.device)
    return (*self.shape[:-1], n), _INT64


rules.EXACT_DTYPE["multinomial"] = "PyTorch's multinomial writes only int64 indices"


@_ks.multinomial.xp
def _multinomial(
    xp: ModuleType, self: D, num_samples: int, replacement: bool, *, generator: Generator | None, out: ConstOut[D]
) -> None:
    w = self._array.astype(_F64, copy=False).reshape(-1, self.shape[-1])
    rows, k = w.shape
    if rows and not bool(xp.all(xp.isfinite(w) & (w >= 0))):
        raise ArgumentValueError("multinomial: the weights must be finite and non-negative")
    total = w.sum(axis=1)
    if rows and bool(xp.any(total <= 0)):
        raise ArgumentValueError("multinomial: a row of weights sums to 0 (an invalid distribution)")
    if not replacement and rows and int(xp.amin(xp.count_nonzero(w, axis=1))) < num_samples:
        raise ArgumentValueError(
            f"multinomial: without replacement, a row has fewer non-zero weights than num_samples={num_samples}"
        )
    if rows == 0:
        return
    stream = stream_for(generator, self.device)
    u = stream.random((rows, num_samples if replacement else k), _F64)
    if replacement:
        cdf = xp.cumsum(w, axis=1)
        cdf /= cdf[:, -1:]  # the last bound exactly 1.0: u < 1 always falls in some category
        offsets = xp.arange(rows, dtype=_F64)[:, None]
        # Row r's cumulative weights shifted to [r, r + 1]: one sorted array, one search for every row.
        found = xp.searchsorted((cdf + offsets).reshape(-1), (u + offsets).reshape(-1), side="right")
        idx = found.reshape(rows, num_samples) - xp.arange(rows, dtype=_INT64)[:, None] * k
        # u + r may round up to r + 1 for a large row index r: k then; that is the row's last non-zero category
        # (a zero weight is otherwise never found: its interval is empty).
        last = (k - 1) - xp.argmax(w[:, ::-1] > 0, axis=1)
        result = xp.minimum(idx, last[:, None])
    else:
        with np.errstate(divide="ignore"):
            keys = xp.where(w > 0, -xp.log1p(-u) / xp.where(w > 0, w, 1.0), np.inf)
        result = xp.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    out.array[...] = result.reshape(out.array.shape)


# --- randperm (the op behind devtensor.randperm) ------------------------------------------------------------


@structured_op(
    "randperm", inplace=False, method=False, out_may_be_input=True, nondeterministic=True, public_functional=False
)
def randperm(self: TensorMeta, *, generator: Generator | None = None) -> TensorSpec:
    """The op behind ``devtensor.randperm(n)``: a random permutation of ``0 .. n - 1`` in a 1-d tensor shaped
    like ``self`` (whose values are not read: ``devtensor.randperm`` passes its output as ``self``).

    Dtypes: integer (not bool) or float whose range holds ``n - 1`` exactly. Devices: cpu, cuda.

    Raises:
        ArgumentValueError (ValueError): ``self`` not 1-d; ``n - 1`` beyond the dtype's exact range.
        ArgumentTypeError (TypeError): a bool or complex dtype; a bad generator.
    """
    op = "randperm"
    if self.ndim != 1:
        raise ArgumentValueError(f"{op}: the output must be 1-d, got shape {list(self.shape)}")
    n = self.shape[0]
    if self.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"{op}: dtype {self.dtype.name} is not supported (integer or float dtypes)")
    if n > 0:
        integer_range(op, self.dtype, 0, n)
    check_generator(op, generator, self.device)
    return self.shape, self.dtype


@_ks.randperm.xp
def _randperm(xp: ModuleType, self: D, *, generator: Generator | None, out: ConstOut[D]) -> None:
    o = out.array
    if o.size:
        o[...] = stream_for(generator, self.device).permutation(o.shape[0])
