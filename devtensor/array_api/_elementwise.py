"""The Array API standard's element-wise functions: each is devtensor's op of the same meaning (PyTorch's name
where it differs: ``divide`` is :func:`devtensor.div`, ``bitwise_invert`` is :func:`devtensor.bitwise_not`), so it
runs through dispatch (device guard, checks, overrides, modes) on CPU and CUDA tensors alike. Shapes broadcast and
dtypes promote as NumPy's (Python scalars weak, NEP 50), a Python number on either side of a binary function too
where PyTorch's op refuses one (``maximum(x, 0)``: :func:`devtensor.numpy_values.binary_call`); errors are the op's
(see each op's docstring).
"""

from __future__ import annotations

import devtensor as _dt
from devtensor.array_api._naming import name_errors
from devtensor.dtypes import Scalar
from devtensor.numpy_values import binary_call
from devtensor.tensor import Tensor

_NUMBERS = (bool, int, float, complex)

__all__ = [
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "ceil",
    "clip",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "divide",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "real",
    "reciprocal",
    "remainder",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "trunc",
]


def abs(x: Tensor, /) -> Tensor:
    """The standard's ``abs`` of ``x`` (same shape): :func:`devtensor.abs`."""
    return _dt.abs(x)


def acos(x: Tensor, /) -> Tensor:
    """The standard's ``acos`` of ``x`` (same shape): :func:`devtensor.acos`."""
    return _dt.acos(x)


def acosh(x: Tensor, /) -> Tensor:
    """The standard's ``acosh`` of ``x`` (same shape): :func:`devtensor.acosh`."""
    return _dt.acosh(x)


def add(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``add`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.add`."""
    return _dt.add(x1, x2)


def asin(x: Tensor, /) -> Tensor:
    """The standard's ``asin`` of ``x`` (same shape): :func:`devtensor.asin`."""
    return _dt.asin(x)


def asinh(x: Tensor, /) -> Tensor:
    """The standard's ``asinh`` of ``x`` (same shape): :func:`devtensor.asinh`."""
    return _dt.asinh(x)


def atan(x: Tensor, /) -> Tensor:
    """The standard's ``atan`` of ``x`` (same shape): :func:`devtensor.atan`."""
    return _dt.atan(x)


def atan2(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``atan2`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.atan2`."""
    return binary_call("atan2", x1, x2)


def atanh(x: Tensor, /) -> Tensor:
    """The standard's ``atanh`` of ``x`` (same shape): :func:`devtensor.atanh`."""
    return _dt.atanh(x)


def bitwise_and(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``bitwise_and`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.bitwise_and`."""
    return _dt.bitwise_and(x1, x2)


def bitwise_invert(x: Tensor, /) -> Tensor:
    """The standard's ``bitwise_invert`` of ``x`` (same shape): :func:`devtensor.bitwise_not`."""
    return _dt.bitwise_not(x)


def bitwise_left_shift(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``bitwise_left_shift`` (broadcast shape): :func:`devtensor.bitwise_left_shift`."""
    return _dt.bitwise_left_shift(x1, x2)


def bitwise_or(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``bitwise_or`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.bitwise_or`."""
    return _dt.bitwise_or(x1, x2)


def bitwise_right_shift(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``bitwise_right_shift`` (broadcast shape): :func:`devtensor.bitwise_right_shift`."""
    return _dt.bitwise_right_shift(x1, x2)


def bitwise_xor(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``bitwise_xor`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.bitwise_xor`."""
    return _dt.bitwise_xor(x1, x2)


def ceil(x: Tensor, /) -> Tensor:
    """The standard's ``ceil`` of ``x`` (same shape): :func:`devtensor.ceil`."""
    return _dt.ceil(x)


def conj(x: Tensor | Scalar, /) -> Tensor:
    """The standard's ``conj`` of ``x`` (same shape): :func:`devtensor.conj`; a Python number as a 0-d tensor
    first (NumPy's ``np.conj(0)``, which SciPy's array-API code calls)."""
    return _dt.conj(_dt.asarray(x) if isinstance(x, _NUMBERS) else x)


def copysign(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``copysign`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.copysign`."""
    return binary_call("copysign", x1, x2)


def cos(x: Tensor, /) -> Tensor:
    """The standard's ``cos`` of ``x`` (same shape): :func:`devtensor.cos`."""
    return _dt.cos(x)


def cosh(x: Tensor, /) -> Tensor:
    """The standard's ``cosh`` of ``x`` (same shape): :func:`devtensor.cosh`."""
    return _dt.cosh(x)


def divide(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``divide`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.div`."""
    return _dt.div(x1, x2)


def equal(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``equal`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.eq`."""
    return binary_call("eq", x1, x2)


def exp(x: Tensor, /) -> Tensor:
    """The standard's ``exp`` of ``x`` (same shape): :func:`devtensor.exp`."""
    return _dt.exp(x)


def expm1(x: Tensor, /) -> Tensor:
    """The standard's ``expm1`` of ``x`` (same shape): :func:`devtensor.expm1`."""
    return _dt.expm1(x)


def floor(x: Tensor, /) -> Tensor:
    """The standard's ``floor`` of ``x`` (same shape): :func:`devtensor.floor`."""
    return _dt.floor(x)


def greater(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``greater`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.gt`."""
    return binary_call("gt", x1, x2)


def greater_equal(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``greater_equal`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.ge`."""
    return binary_call("ge", x1, x2)


def hypot(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``hypot`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.hypot`."""
    return binary_call("hypot", x1, x2)


def imag(x: Tensor | Scalar, /) -> Tensor:
    """The standard's ``imag`` of ``x`` (same shape): :func:`devtensor.imag`; a Python number as a 0-d tensor
    first (NumPy's ``np.imag(0)``, which SciPy's array-API code calls)."""
    return _dt.imag(_dt.asarray(x) if isinstance(x, _NUMBERS) else x)


def isfinite(x: Tensor, /) -> Tensor:
    """The standard's ``isfinite`` of ``x`` (same shape): :func:`devtensor.isfinite`."""
    return _dt.isfinite(x)


def isinf(x: Tensor, /) -> Tensor:
    """The standard's ``isinf`` of ``x`` (same shape): :func:`devtensor.isinf`."""
    return _dt.isinf(x)


def isnan(x: Tensor, /) -> Tensor:
    """The standard's ``isnan`` of ``x`` (same shape): :func:`devtensor.isnan`."""
    return _dt.isnan(x)


def less(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``less`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.lt`."""
    return binary_call("lt", x1, x2)


def less_equal(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``less_equal`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.le`."""
    return binary_call("le", x1, x2)


def log(x: Tensor, /) -> Tensor:
    """The standard's ``log`` of ``x`` (same shape): :func:`devtensor.log`."""
    return _dt.log(x)


def log10(x: Tensor, /) -> Tensor:
    """The standard's ``log10`` of ``x`` (same shape): :func:`devtensor.log10`."""
    return _dt.log10(x)


def log1p(x: Tensor, /) -> Tensor:
    """The standard's ``log1p`` of ``x`` (same shape): :func:`devtensor.log1p`."""
    return _dt.log1p(x)


def log2(x: Tensor, /) -> Tensor:
    """The standard's ``log2`` of ``x`` (same shape): :func:`devtensor.log2`."""
    return _dt.log2(x)


def logaddexp(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``logaddexp`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.logaddexp`."""
    return binary_call("logaddexp", x1, x2)


def logical_and(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``logical_and`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.logical_and`."""
    return binary_call("logical_and", x1, x2)


def logical_not(x: Tensor, /) -> Tensor:
    """The standard's ``logical_not`` of ``x`` (same shape): :func:`devtensor.logical_not`."""
    return _dt.logical_not(x)


def logical_or(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``logical_or`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.logical_or`."""
    return binary_call("logical_or", x1, x2)


def logical_xor(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``logical_xor`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.logical_xor`."""
    return binary_call("logical_xor", x1, x2)


def maximum(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``maximum`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.maximum`."""
    return binary_call("maximum", x1, x2)


def minimum(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``minimum`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.minimum`."""
    return binary_call("minimum", x1, x2)


def multiply(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``multiply`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.mul`."""
    return _dt.mul(x1, x2)


def negative(x: Tensor, /) -> Tensor:
    """The standard's ``negative`` of ``x`` (same shape): :func:`devtensor.neg`."""
    return _dt.neg(x)


def nextafter(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``nextafter`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.nextafter`."""
    return binary_call("nextafter", x1, x2)


def not_equal(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``not_equal`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.ne`."""
    return binary_call("ne", x1, x2)


def positive(x: Tensor, /) -> Tensor:
    """The standard's ``positive`` of ``x`` (same shape): :func:`devtensor.positive`."""
    return _dt.positive(x)


def pow(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``pow`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.pow`."""
    return _dt.pow(x1, x2)


def real(x: Tensor | Scalar, /) -> Tensor:
    """The standard's ``real`` of ``x`` (same shape): :func:`devtensor.real`; a Python number as a 0-d tensor
    first (NumPy's ``np.real(0)``, which SciPy's array-API code calls)."""
    return _dt.real(_dt.asarray(x) if isinstance(x, _NUMBERS) else x)


def reciprocal(x: Tensor, /) -> Tensor:
    """The standard's ``reciprocal`` of ``x`` (same shape): :func:`devtensor.reciprocal`."""
    return _dt.reciprocal(x)


def remainder(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``remainder`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.remainder`."""
    return _dt.remainder(x1, x2)


def sign(x: Tensor, /) -> Tensor:
    """The standard's ``sign`` of ``x`` (same shape): :func:`devtensor.sign`."""
    return _dt.sign(x)


def signbit(x: Tensor, /) -> Tensor:
    """The standard's ``signbit`` of ``x`` (same shape): :func:`devtensor.signbit`."""
    return _dt.signbit(x)


def sin(x: Tensor, /) -> Tensor:
    """The standard's ``sin`` of ``x`` (same shape): :func:`devtensor.sin`."""
    return _dt.sin(x)


def sinh(x: Tensor, /) -> Tensor:
    """The standard's ``sinh`` of ``x`` (same shape): :func:`devtensor.sinh`."""
    return _dt.sinh(x)


def sqrt(x: Tensor, /) -> Tensor:
    """The standard's ``sqrt`` of ``x`` (same shape): :func:`devtensor.sqrt`."""
    return _dt.sqrt(x)


def square(x: Tensor, /) -> Tensor:
    """The standard's ``square`` of ``x`` (same shape): :func:`devtensor.square`."""
    return _dt.square(x)


def subtract(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``subtract`` of ``x1`` and ``x2`` (broadcast shape): :func:`devtensor.sub`."""
    return _dt.sub(x1, x2)


def tan(x: Tensor, /) -> Tensor:
    """The standard's ``tan`` of ``x`` (same shape): :func:`devtensor.tan`."""
    return _dt.tan(x)


def tanh(x: Tensor, /) -> Tensor:
    """The standard's ``tanh`` of ``x`` (same shape): :func:`devtensor.tanh`."""
    return _dt.tanh(x)


def trunc(x: Tensor, /) -> Tensor:
    """The standard's ``trunc`` of ``x`` (same shape): :func:`devtensor.trunc`."""
    return _dt.trunc(x)


def floor_divide(x1: Tensor | Scalar, x2: Tensor | Scalar, /) -> Tensor:
    """The standard's ``floor_divide`` (broadcast shape): :func:`devtensor.div` with ``rounding_mode="floor"``, as
    Python's ``//`` on tensors."""
    return _dt.div(x1, x2, rounding_mode="floor")


def clip(
    x: Tensor,
    /,
    min: Tensor | Scalar | None = None,
    max: Tensor | Scalar | None = None,
) -> Tensor:
    """The standard's ``clip`` (``x``'s shape and dtype): :func:`devtensor.clamp`; ``min > max`` gives ``max``."""
    if min is None and max is None:
        return _dt.clone(x)  # (the standard: a copy; PyTorch's clamp needs a bound)
    return _dt.clamp(x, min, max)


def round(x: Tensor, /) -> Tensor:
    """The standard's ``round`` (half to even, ``x``'s shape and dtype): :func:`devtensor.round`."""
    return _dt.round(x)


# Errors name the standard's function (floor_divide runs div, clip runs clamp or clone) and its arguments.
name_errors(globals(), __all__)
