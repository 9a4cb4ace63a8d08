"""More elementwise math ops, each one entry of the ufunc family (:mod:`devtensor.kernels.ufunc_family`).

Rounding (``floor``, ``ceil``, ``trunc``), ``sign``, ``square``, ``reciprocal``, logarithms and exponentials
(``log1p``, ``expm1``, ``log2``, ``log10``, ``logaddexp``), the floating-point classification ops (``isnan``,
``isinf``, ``isfinite``, ``signbit``: bool results), the trigonometric and hyperbolic families (``tan``,
``asin``, ``acos``, ``atan``, ``atan2``, ``sinh``, ``cosh``, ``asinh``, ``acosh``, ``atanh``) and ``hypot``,
``copysign``, ``float_power``, ``fmod``, ``nextafter``.

Names and variants are PyTorch's (an inplace variant exactly where PyTorch has one); values, and the dtypes of
results, are NumPy 2's for the ufunc each op names (so ``floor`` of an integer tensor is the same integers,
and ``log2`` of int8 is float16; ``reciprocal`` of bool and integers is float64, PyTorch's kind), with Python
numbers weak in promotion (NEP 50). ``float_power`` computes in float64 or complex128 whatever its inputs, as PyTorch.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from devtensor.kernels.ufunc_family import binary_ufunc, unary_ufunc, write_with_special
from devtensor.structured import rules
from devtensor.tensor import Tensor
from devtensor.typed.const_out import InplaceOut

__all__ = [
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "copysign",
    "cosh",
    "expm1",
    "float_power",
    "floor",
    "fmod",
    "hypot",
    "isfinite",
    "isinf",
    "isnan",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "nextafter",
    "reciprocal",
    "sign",
    "signbit",
    "sinh",
    "square",
    "tan",
    "trunc",
]

_np: Final = np


def _rounding_kernel(ufunc: np.ufunc) -> Any:
    """The kernel of ``floor``/``ceil``/``trunc``: NumPy 2 keeps bool and integer inputs as they are (the meta
    gives their own dtype), where CuPy's loops are floating-point only, so a copy does it on every device."""
    cp_name = ufunc.__name__

    def kernel(xp: Any, self: Tensor, *, out: Any) -> None:
        o = out.array
        if xp is _np:
            ufunc(o if type(out) is InplaceOut else self._array, o)
        elif self._array.dtype.kind in "biu":
            if type(out) is not InplaceOut:  # (inplace: self is the result already)
                xp.copyto(o, self._array, casting="unsafe")
        else:
            getattr(xp, cp_name)(self._array, out=o)

    kernel.__name__ = kernel.__qualname__ = f"{cp_name}_kernel"
    return kernel


#: bool and every integer dtype -> float64: the result dtypes of ``reciprocal`` (true division, as ``div``).
_INT_TO_FLOAT: Final = {
    np.dtype(t): np.dtype(np.float64)
    for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
}


# --- rounding, sign, powers ------------------------------------------------------------------------------------

floor = unary_ufunc(
    "floor",
    np.floor,
    kernel=_rounding_kernel(np.floor),
    doc="The largest integer ``<= self``, elementwise (``torch.floor``, ``np.floor``; bool and integer tensors "
    "are returned as they are, in their dtype, as NumPy 2; complex is an error).",
)
ceil = unary_ufunc(
    "ceil",
    np.ceil,
    kernel=_rounding_kernel(np.ceil),
    doc="The smallest integer ``>= self``, elementwise (``torch.ceil``, ``np.ceil``; bool and integer tensors "
    "are returned as they are, in their dtype, as NumPy 2; complex is an error).",
)
trunc = unary_ufunc(
    "trunc",
    np.trunc,
    kernel=_rounding_kernel(np.trunc),
    doc="``self`` rounded towards zero, elementwise (``torch.trunc``, ``np.trunc``; bool and integer tensors "
    "are returned as they are, in their dtype, as NumPy 2; complex is an error).",
)


def _sign_kernel(xp: Any, self: Tensor, *, out: Any) -> None:
    o = out.array
    a = o if type(out) is InplaceOut else self._array
    if a.dtype.kind == "b":  # (the sign of a bool is itself, as PyTorch; NumPy has no bool loop)
        if a is not o:
            xp.copyto(o, a)
        return
    xp.sign(a, out=o)


sign = unary_ufunc(
    "sign",
    np.sign,
    kernel=_sign_kernel,
    dtypes={np.dtype(np.bool_): np.dtype(np.bool_)},
    doc="The sign of ``self`` (-1, 0 or 1; NaN for NaN), elementwise (``torch.sign``, ``np.sign``; complex "
    "gives ``self / |self|`` (0 for 0), as ``torch.sgn`` and NumPy 2; bool gives itself, as PyTorch).",
)
square = unary_ufunc(
    "square",
    np.square,
    doc="``self * self``, elementwise (``torch.square``, ``np.square``; bool gives int8, as NumPy; integers "
    "wrap around on overflow).",
)


def _reciprocal_kernel(xp: Any, self: Tensor, *, out: Any) -> None:
    # ``1 / self`` as true division (a weak Python 1): floats and complex keep their dtype, bool and integers
    # compute in float64, where NumPy's reciprocal would give the integer reciprocal (1 / 0 -> INT64_MIN).
    o = out.array
    xp.divide(1, o if type(out) is InplaceOut else self._array, out=o)


reciprocal = unary_ufunc(
    "reciprocal",
    np.reciprocal,
    kernel=_reciprocal_kernel,
    dtypes=_INT_TO_FLOAT,
    doc="``1 / self``, elementwise (``torch.reciprocal``: bool and integer tensors give floats, float64 as "
    "devtensor's division, where NumPy's ``np.reciprocal`` gives the integer reciprocal; so an inplace or "
    "``out=`` of an integer dtype is refused by the same_kind rule, as PyTorch refuses it).",
)

# --- logarithms and exponentials -------------------------------------------------------------------------------

log1p = unary_ufunc(
    "log1p",
    np.log1p,
    doc="``log(1 + self)``, accurate for small ``self``, elementwise (``torch.log1p``, ``np.log1p``; "
    "integers give floats).",
)


def _expm1_kernel(xp: Any, self: Tensor, *, out: Any) -> None:
    a = out.array if type(out) is InplaceOut else self._array
    o = out.array
    if o.dtype.kind != "c":
        xp.expm1(a, o)
        return
    # Complex elements with an infinite or NaN part, and zeros: the Array API standard's value, exp(z) - 1 with
    # C99's cexp special cases (expm1(+inf + 0j) = +inf + 0j, expm1(-inf + infj) = -1 + 0j, expm1(-0 + 0j) = +0 + 0j),
    # where NumPy gives NaN parts (and -0).
    special = ~xp.isfinite(a) | (a == 0)  # (zeros: the standard's +0 real part, NumPy keeps -0)
    if not special.any():
        xp.expm1(a, o)
        return
    with np.errstate(all="ignore"):
        fixed = xp.exp(a) - 1
    write_with_special(xp, np.expm1, (a,), o, special, fixed)


expm1 = unary_ufunc(
    "expm1",
    np.expm1,
    doc="``exp(self) - 1``, accurate for small ``self``, elementwise (``torch.expm1``, ``np.expm1``; "
    "integers give floats). Complex elements with an infinite or NaN part give the Array API standard's special "
    "values (those of ``exp(self) - 1`` in C99), where NumPy gives NaN parts.",
    kernel=_expm1_kernel,
)
log2 = unary_ufunc("log2", np.log2, doc="Base-2 logarithm, elementwise (``torch.log2``, ``np.log2``; log2(0) = -inf).")
log10 = unary_ufunc(
    "log10", np.log10, doc="Base-10 logarithm, elementwise (``torch.log10``, ``np.log10``; log10(0) = -inf)."
)

# --- classification (bool results; PyTorch has no inplace variants) --------------------------------------------

isnan = unary_ufunc(
    "isnan",
    np.isnan,
    inplace=False,
    doc="Whether each element is NaN (complex: either part), as a bool tensor (``torch.isnan``, ``np.isnan``; "
    "all False for bool and integer tensors).",
)
isinf = unary_ufunc(
    "isinf",
    np.isinf,
    inplace=False,
    doc="Whether each element is +inf or -inf (complex: either part), as a bool tensor (``torch.isinf``, "
    "``np.isinf``).",
)
isfinite = unary_ufunc(
    "isfinite",
    np.isfinite,
    inplace=False,
    doc="Whether each element is neither inf nor NaN (complex: both parts), as a bool tensor "
    "(``torch.isfinite``, ``np.isfinite``).",
)
signbit = unary_ufunc(
    "signbit",
    np.signbit,
    inplace=False,
    doc="Whether each element's sign bit is set (True for -0.0 and negative NaNs), as a bool tensor "
    "(``torch.signbit``, ``np.signbit``; complex is an error).",
)

# --- trigonometric and hyperbolic ------------------------------------------------------------------------------

tan = unary_ufunc("tan", np.tan, doc="Tangent of radians, elementwise (``torch.tan``, ``np.tan``).")
asin = unary_ufunc(
    "asin",
    np.arcsin,
    doc="Inverse sine, in radians ``[-pi/2, pi/2]``, elementwise (``torch.asin``, ``np.arcsin``; NaN outside "
    "``[-1, 1]`` for real inputs).",
)
acos = unary_ufunc(
    "acos",
    np.arccos,
    doc="Inverse cosine, in radians ``[0, pi]``, elementwise (``torch.acos``, ``np.arccos``; NaN outside "
    "``[-1, 1]`` for real inputs).",
)
atan = unary_ufunc("atan", np.arctan, doc="Inverse tangent, in radians, elementwise (``torch.atan``, ``np.arctan``).")
sinh = unary_ufunc("sinh", np.sinh, doc="Hyperbolic sine, elementwise (``torch.sinh``, ``np.sinh``).")
cosh = unary_ufunc("cosh", np.cosh, doc="Hyperbolic cosine, elementwise (``torch.cosh``, ``np.cosh``).")
asinh = unary_ufunc("asinh", np.arcsinh, doc="Inverse hyperbolic sine, elementwise (``torch.asinh``, ``np.arcsinh``).")
acosh = unary_ufunc(
    "acosh",
    np.arccosh,
    doc="Inverse hyperbolic cosine, elementwise (``torch.acosh``, ``np.arccosh``; NaN below 1 for real inputs).",
)
atanh = unary_ufunc(
    "atanh",
    np.arctanh,
    doc="Inverse hyperbolic tangent, elementwise (``torch.atanh``, ``np.arctanh``; +-inf at +-1, NaN beyond "
    "for real inputs).",
)

# --- binary ----------------------------------------------------------------------------------------------------

atan2 = binary_ufunc(
    "atan2",
    np.arctan2,
    numbers="none",
    doc="The angle of the point ``(other, self)``, in radians ``[-pi, pi]``, elementwise (``torch.atan2``, "
    "``np.arctan2``: ``self`` is y, ``other`` is x; real inputs only).",
)
hypot = binary_ufunc(
    "hypot",
    np.hypot,
    numbers="none",
    doc="``sqrt(self**2 + other**2)`` without intermediate overflow, elementwise (``torch.hypot``, "
    "``np.hypot``; real inputs only).",
)
copysign = binary_ufunc(
    "copysign",
    np.copysign,
    numbers="other",
    doc="``|self|`` with the sign of ``other``, elementwise (``torch.copysign``, ``np.copysign``; integers give "
    "floats; real inputs only).",
)
logaddexp = binary_ufunc(
    "logaddexp",
    np.logaddexp,
    inplace=False,
    numbers="none",
    doc="``log(exp(self) + exp(other))`` without intermediate overflow, elementwise (``torch.logaddexp``, "
    "``np.logaddexp``; real inputs only; PyTorch has no inplace variant).",
)
float_power = binary_ufunc(
    "float_power",
    np.float_power,
    doc="``self ** other`` computed in float64, or complex128 when either operand is complex, elementwise "
    "(``torch.float_power``, ``np.float_power``: the result is float64/complex128 whatever the input dtypes; "
    "negative reals to non-integer powers give NaN). The inplace ``float_power_`` and an ``out=`` take only that "
    "dtype (CastingError otherwise, as PyTorch).",
)
for _variant in ("float_power", "float_power_"):
    rules.EXACT_DTYPE[_variant] = "PyTorch's float_power computes and writes float64 or complex128 only"
fmod = binary_ufunc(
    "fmod",
    np.fmod,
    numbers="other",
    doc="C-style remainder of ``self / other``, with the sign of ``self`` (``torch.fmod``, ``np.fmod``; an "
    "integer ``fmod`` by zero gives 0, as NumPy, with its divide-by-zero warning; real inputs only).",
)
nextafter = binary_ufunc(
    "nextafter",
    np.nextafter,
    numbers="none",
    doc="The next floating-point value after ``self`` towards ``other``, elementwise (``torch.nextafter``, "
    "``np.nextafter``; integers give floats; real inputs only).",
)
