"""The bitwise ops (``bitwise_and/or/xor/not``, ``bitwise_left_shift/right_shift``), ``positive`` and ``round``.

The bitwise ops and ``positive`` are entries of the elementwise family (:mod:`devtensor.kernels.ufunc_family`):
their dtypes are NumPy 2's for the ufunc each follows, with Python numbers weak (NEP 50); floats and complex
numbers have no bitwise loop (ArgumentTypeError). ``round`` is a general structured op with one kernel for both
devices. They back the operators ``& | ^ ~ << >>``, unary ``+`` and Python's ``round(t)``
(:mod:`devtensor.kernels.operators`, :mod:`devtensor.tensor_protocols`).
"""

from __future__ import annotations

from types import ModuleType
from typing import Final

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.errors import ArgumentTypeError, ScalarOverflowError
from devtensor.kernels import elementwise as _elementwise  # noqa: F401  (its ops first: see below)
from devtensor.kernels.ufunc_family import D, binary_ufunc, conditions_of, elementwise_doc, unary_ufunc
from devtensor.meta import int_arg
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

# Importing elementwise first defines its ops before these: the generated modules list ops in definition order, so
# these come after the arithmetic ops there, not first.

__all__ = [
    "bitwise_and",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "positive",
    "round",
]

_INTEGRAL = " Integer and bool tensors only (no float or complex loop: ArgumentTypeError)."
_SHIFT = (
    " Integer tensors (bool operands promote to int8, as NumPy); a shift by the bit width or more gives 0 (-1 for"
    " a negative ``self`` shifted right), as NumPy's CPU loops."
)

bitwise_and = binary_ufunc(
    "bitwise_and",
    np.bitwise_and,
    doc="``self & other``, elementwise (``torch.bitwise_and``, ``np.bitwise_and``)." + _INTEGRAL,
)
bitwise_or = binary_ufunc(
    "bitwise_or",
    np.bitwise_or,
    doc="``self | other``, elementwise (``torch.bitwise_or``, ``np.bitwise_or``)." + _INTEGRAL,
)
bitwise_xor = binary_ufunc(
    "bitwise_xor",
    np.bitwise_xor,
    doc="``self ^ other``, elementwise (``torch.bitwise_xor``, ``np.bitwise_xor``)." + _INTEGRAL,
)
bitwise_not = unary_ufunc(
    "bitwise_not",
    np.invert,
    doc="``~self``, elementwise (``torch.bitwise_not``, ``np.invert``; logical not for bool)." + _INTEGRAL,
)
bitwise_left_shift = binary_ufunc(
    "bitwise_left_shift",
    np.left_shift,
    doc="``self << other``, elementwise (``torch.bitwise_left_shift``, ``np.left_shift``)." + _SHIFT,
)
bitwise_right_shift = binary_ufunc(
    "bitwise_right_shift",
    np.right_shift,
    doc="``self >> other`` (arithmetic for signed integers), elementwise (``torch.bitwise_right_shift``,"
    " ``np.right_shift``)." + _SHIFT,
)
positive = unary_ufunc(
    "positive",
    np.positive,
    doc="``+self``, a copy of the values (``torch.positive``, ``np.positive``; bool has no loop: ArgumentTypeError).",
)


@structured_op("round", out_may_be_input=True)
def round(self: TensorMeta, *, decimals: int = 0) -> TensorSpec:
    """``self`` rounded to ``decimals`` decimal places, halves to even (``torch.round``; values as ``np.round``:
    ``round(2.5)`` is 2.0, ``round(0.125, decimals=2)`` is 0.12). A negative ``decimals`` rounds to tens,
    hundreds, ...; complex numbers round their real and imaginary parts. An integer ``self`` with ``decimals
    >= 0`` gives a copy of its values; with ``decimals < 0`` it rounds as NumPy does, in the integer dtype
    (which wraps around where the rounded value does not fit: ``round(int8 127, decimals=-1)`` is -126).
    Result: ``self``'s shape and dtype. ``Tensor.__round__`` (Python's ``round(t, n)``) calls it.

    Raises:
        ArgumentTypeError (TypeError): a bool ``self`` (no rounding of truth values, as PyTorch; NumPy would
            return float16), or a ``decimals`` that is not an int.
        ScalarOverflowError (OverflowError): a ``decimals`` outside a C int's range (NumPy's limit).
    """
    if self.dtype.kind == "b":
        raise ArgumentTypeError("round: argument 'self' must be a number tensor, got bool")
    d = decimals if type(decimals) is int else int_arg("round", "decimals", decimals)
    if not _C_INT_MIN <= d <= _C_INT_MAX:
        raise ScalarOverflowError(
            f"round: argument 'decimals' ({d}) is out of range: NumPy rounds with a C int, in "
            f"[{_C_INT_MIN}, {_C_INT_MAX}]"
        )
    return (self.shape, self.dtype)


#: The range of NumPy's ``decimals`` (a C int).
_C_INT_MIN: Final = -(2**31)
_C_INT_MAX: Final = 2**31 - 1


@_ks.round.xp
def _round(xp: ModuleType, self: D, *, decimals: int, out: ConstOut[D]) -> None:
    a, o = self._array, out.array
    decimals = int_arg("round", "decimals", decimals)
    if a.dtype.kind in "iu" and decimals >= 0:
        xp.copyto(o, a, casting="unsafe")
        return
    with conditions_of("round")():  # NumPy rounds in several steps (scale, rint, unscale) into out
        # (NumPy's integer rounding cannot write into an out=: it divides in float64)
        if o.dtype == a.dtype and a.dtype.kind in "fc":
            xp.round(a, decimals, out=o)
        else:
            xp.copyto(o, xp.round(a, decimals), casting="unsafe")


round.meta.__doc__ = round.doc = round.functional.__doc__ = elementwise_doc(
    "round", round.meta.__doc__ or "", "np.round"
)
assert round.inplace is not None
round.inplace.__doc__ = round.meta.__doc__
