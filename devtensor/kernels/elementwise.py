"""The elementwise ops: arithmetic, math functions, comparisons, logical ops, clamp and where.

An op that one ufunc computes is one entry of the elementwise family (:mod:`devtensor.kernels.ufunc_family`);
``div``, ``pow``, ``sigmoid``, ``clamp`` and ``where`` need more and are general structured ops, each with one
kernel for both devices (``xp`` is NumPy or CuPy). Result shapes broadcast as NumPy's; result dtypes are NumPy
2's for the corresponding ufunc, with Python scalars weak (NEP 50). Out and inplace variants follow PyTorch's
rules (see :mod:`devtensor.structured`). The Python operators are bound in :mod:`devtensor.kernels.operators`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Literal, cast

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dtypes import DType, Scalar, result_type
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ScalarOverflowError
from devtensor.kernels.ufunc_family import (
    D,
    arr,
    binary_ufunc,
    conditions_of,
    elementwise_doc,
    unary_ufunc,
    weak,
    write_with_special,
)
from devtensor.lowering import Lowering, lowers
from devtensor.meta import (
    _IINFO,
    binary_ufunc_meta,
    broadcast_shapes,
    check_int_scalar,
    check_python_ints,
    int_bounds,
    int_text,
    unary_ufunc_meta,
)
from devtensor.structured import TensorSpec, rules, structured_op
from devtensor.tensor import Tensor, TensorMeta, TensorMetaOrScalar
from devtensor.typed import ConstOut
from devtensor.typed.const_out import InplaceOut

__all__ = [
    "abs",
    "add",
    "clamp",
    "cos",
    "div",
    "eq",
    "exp",
    "ge",
    "gt",
    "le",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "lt",
    "maximum",
    "minimum",
    "mul",
    "ne",
    "neg",
    "pow",
    "remainder",
    "sigmoid",
    "sin",
    "sqrt",
    "sub",
    "tanh",
    "where",
]

# --- arithmetic -----------------------------------------------------------------------------------------

add = binary_ufunc(
    "add", np.add, alpha=True, doc="``self + alpha * other``, elementwise (``torch.add``; values as ``np.add``)."
)
sub = binary_ufunc(
    "sub",
    np.subtract,
    alpha=True,
    doc="``self - alpha * other``, elementwise (``torch.sub``; values as ``np.subtract``; bool is an error).",
)
mul = binary_ufunc("mul", np.multiply, doc="``self * other``, elementwise (``torch.mul``; values as ``np.multiply``).")

# --- div ------------------------------------------------------------------------------------------------

_ROUNDING = (None, "trunc", "floor")
_true_div_meta = binary_ufunc_meta("div", np.true_divide)
_floor_div_meta = binary_ufunc_meta("div", np.floor_divide)


@structured_op("div", out_may_be_input=True)
def div(
    self: TensorMetaOrScalar, other: TensorMetaOrScalar, *, rounding_mode: Literal["trunc", "floor"] | None = None
) -> TensorSpec:
    """``self / other``, elementwise (``torch.div``). ``rounding_mode``: None is true division
    (``np.true_divide``: integers give float64), ``'trunc'`` rounds toward zero, ``'floor'`` rounds down
    (``np.floor_divide``); with a rounding mode integers stay integers. Integer division by zero gives 0 with
    NumPy's RuntimeWarning. Floor division of floats where exactly one operand is infinite gives the Array API
    standard's ``floor(self / other)`` (``inf // 2`` is inf, ``-1.0 // inf`` is -0.0), not NumPy's NaN and -1.
    """
    if rounding_mode is None:
        return _true_div_meta(self, other)
    if rounding_mode not in _ROUNDING:
        raise ArgumentValueError(
            f"div: argument 'rounding_mode' must be None, 'trunc' or 'floor', got {rounding_mode!r}"
        )
    return _floor_div_meta(self, other)


@_ks.div.xp
def _div(
    xp: ModuleType,
    self: D | Scalar,
    other: D | Scalar,
    *,
    rounding_mode: Literal["trunc", "floor"] | None,
    out: ConstOut[D],
) -> None:
    a, b, o = arr(self), arr(other), out.array
    if rounding_mode is None:
        xp.true_divide(a, b, out=o)
    elif rounding_mode == "floor":
        if o.dtype.kind in "fc":  # (real operands, a float or complex out: the standard's values at infinities)
            _floor_divide_floats(xp, a, b, o)
        else:
            xp.floor_divide(a, b, out=o)
    else:
        with conditions_of("div")():  # (several steps: the write first, then a division by zero)
            q, r = xp.divmod(a, b)
            if xp.asarray(q).dtype.kind in "iu":
                # Floor differs from trunc where the exact quotient is negative and not whole: add one there.
                xp.add(q, (r != 0) & ((xp.asarray(a) < 0) != (xp.asarray(b) < 0)), out=o, casting="unsafe")
            else:
                xp.trunc(xp.true_divide(a, b), out=o)


def _floor_divide_floats(xp: ModuleType, a: Any, b: Any, o: Any) -> None:
    # The Array API standard's value where exactly one operand is infinite is floor(a / b): +-inf for an infinite
    # dividend, +-0 for a finite one over an infinity; NumPy's floor_divide gives NaN and -1 there. The mask is
    # taken before the write (the output may be an input).
    one_infinite = xp.isinf(a) ^ xp.isinf(b)
    if not one_infinite.any():
        xp.floor_divide(a, b, out=o)
        return
    with np.errstate(all="ignore"):  # (only the masked elements are kept: no condition arises for them)
        fixed = xp.floor(xp.true_divide(a, b))
    write_with_special(xp, np.floor_divide, (a, b), o, one_infinite, fixed)


remainder = binary_ufunc(
    "remainder",
    np.remainder,
    doc="Python-style remainder ``self % other``, with the sign of ``other`` (``torch.remainder``, ``np.remainder``).",
)

# --- pow ------------------------------------------------------------------------------------------------

_pow_meta = binary_ufunc_meta("pow", np.power)


@structured_op("pow", out_may_be_input=True)
def pow(self: TensorMetaOrScalar, other: TensorMetaOrScalar) -> TensorSpec:
    """``self ** other``, elementwise (``torch.pow``; values as ``np.power``). Integer results with a
    negative integer exponent raise ValueError before anything is written, as NumPy and PyTorch do."""
    return _pow_meta(self, other)


@_ks.pow.xp
def _pow(xp: ModuleType, self: D | Scalar, other: D | Scalar, *, out: ConstOut[D]) -> None:
    a, b, o = arr(self), arr(other), out.array
    # Only an integer *result* forbids negative exponents: uint64 ** int64 is float64, where they are fine.
    integral = type(b) is int if isinstance(b, (bool, int, float, complex)) else b.dtype.kind in "iu"
    # As NumPy: only an element actually computed raises (an empty result computes none).
    if (
        integral
        and o.size
        and np.result_type(weak(a), weak(b)).kind in "iu"
        and ((b < 0) if type(b) is int else bool((b < 0).any()))
    ):
        raise ArgumentValueError("pow: integers to negative integer powers are not allowed (argument 'other')")
    xp.power(a, b, out=o)


# --- unary math -----------------------------------------------------------------------------------------

neg = unary_ufunc("neg", np.negative, doc="``-self``, elementwise (``torch.neg``, ``np.negative``; bool is an error).")
abs = unary_ufunc(
    "abs",
    np.absolute,
    doc="``|self|``, elementwise (``torch.abs``, ``np.absolute``; complex gives real, so ``abs_`` of a complex "
    "tensor is a CastingError, as PyTorch refuses it).",
)
rules.EXACT_DTYPE["abs_"] = "PyTorch has no inplace abs of complex tensors: the result is real"
exp = unary_ufunc("exp", np.exp, doc="``e ** self``, elementwise (``torch.exp``, ``np.exp``; integers give floats).")
log = unary_ufunc("log", np.log, doc="Natural logarithm, elementwise (``torch.log``, ``np.log``; log(0) = -inf).")
sqrt = unary_ufunc(
    "sqrt", np.sqrt, doc="Square root, elementwise (``torch.sqrt``, ``np.sqrt``; negative reals give nan)."
)
sin = unary_ufunc("sin", np.sin, doc="Sine of radians, elementwise (``torch.sin``, ``np.sin``).")
cos = unary_ufunc("cos", np.cos, doc="Cosine of radians, elementwise (``torch.cos``, ``np.cos``).")


def _tanh_kernel(xp: ModuleType, self: Tensor, *, out: Any) -> None:
    a = out.array if type(out) is InplaceOut else self._array
    o = out.array
    if o.dtype.kind != "c":
        xp.tanh(a, out=o)
        return
    # Complex elements with an infinite real part and a finite imaginary one: the Array API standard's +-1 + 0j
    # with the zero's sign that of the imaginary part (NumPy's sign follows sin(2 * imag)).
    real, imag = xp.real(a), xp.imag(a)
    special = xp.isinf(real) & xp.isfinite(imag)
    if not special.any():
        xp.tanh(a, out=o)
        return
    fixed = a.copy()
    fixed.real[...] = xp.sign(real)
    fixed.imag[...] = xp.copysign(0.0, imag)
    write_with_special(xp, np.tanh, (a,), o, special, fixed)


@lowers(_tanh_kernel)
def _tanh_lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: None) -> bool:
    """tanh's lowering (devtensor.lowering): the kernel's one ``np.tanh`` call for real dtypes (complex ones, whose
    special elements the kernel finds per call, replay the kernel)."""
    if out.dtype.kind == "c":
        return False
    lw.call(np.tanh, args["self"], out=out)
    return True


tanh = unary_ufunc(
    "tanh",
    np.tanh,
    doc="Hyperbolic tangent, elementwise (``torch.tanh``, ``np.tanh``). A complex element with an infinite real "
    "part and a finite imaginary part gives the Array API standard's +-1 + 0j (the zero signed as the imaginary "
    "part), where NumPy's zero takes the sign of sin(2 * imag).",
    kernel=_tanh_kernel,
)

# --- sigmoid --------------------------------------------------------------------------------------------

_exp_meta = unary_ufunc_meta("sigmoid", np.exp)


@structured_op("sigmoid", out_may_be_input=True)
def sigmoid(self: Tensor) -> TensorSpec:
    """The logistic function ``1 / (1 + exp(-self))``, elementwise (``torch.sigmoid``), computed stably for real
    inputs as ``1 / (1 + t)`` for ``self >= 0`` and ``t / (1 + t)`` below, with ``t = exp(-|self|)``: no
    overflow, and tiny results keep their relative precision. Result dtype as ``np.exp`` gives for the input."""
    return _exp_meta(self)


@_ks.sigmoid.xp
def _sigmoid(xp: ModuleType, self: D, *, out: ConstOut[D]) -> None:
    a, o = self._array, out.array
    # Branch on the input: a real input may be written into a complex out (-a would wrap for unsigned ints and
    # raise for bool there).
    with conditions_of("sigmoid")():  # several steps: conditions reported once the result is written
        _sigmoid_steps(xp, a, o)


def _sigmoid_steps(xp: ModuleType, a: Any, o: Any) -> None:
    if a.dtype.kind == "c":
        xp.divide(1, xp.add(1, xp.exp(xp.negative(a))), out=o)
        return
    # (0.5 * (1 + tanh(x / 2)) would round every result below about eps / 4 to 0.)
    nonnegative = a >= 0  # before the first write: out may be a itself (inplace)
    xp.copyto(o, a, casting="unsafe")  # the float result dtype holds integer and bool inputs exactly
    xp.absolute(o, out=o)
    xp.negative(o, out=o)
    xp.exp(o, out=o)  # t = exp(-|x|), in (0, 1]
    denominator = xp.add(o, 1)
    xp.copyto(o, 1, where=nonnegative)
    xp.divide(o, denominator, out=o)


# --- maximum, minimum -----------------------------------------------------------------------------------

maximum = binary_ufunc(
    "maximum",
    np.maximum,
    numbers="none",
    doc="Elementwise maximum (``torch.maximum``, ``np.maximum``; NaN propagates).",
)
minimum = binary_ufunc(
    "minimum",
    np.minimum,
    numbers="none",
    doc="Elementwise minimum (``torch.minimum``, ``np.minimum``; NaN propagates).",
)


# --- clamp ----------------------------------------------------------------------------------------------


@structured_op("clamp", out_may_be_input=True)
def clamp(self: TensorMeta, min: TensorMetaOrScalar | None = None, max: TensorMetaOrScalar | None = None) -> TensorSpec:
    """``self`` limited to ``[min, max]``, elementwise (``torch.clamp``; values as ``np.clip``: where
    ``min > max`` the result is ``max``). ``min`` and ``max`` are tensors or Python numbers; at least one must
    be given (ValueError otherwise). The result dtype promotes ``self`` with both bounds (NumPy's ``clip``).
    A Python int bound at or beyond an integer ``self``'s range on its own side (``min`` at or below it, ``max``
    at or above it) clips nothing and leaves the dtype as it is (``clamp(uint8 tensor, 0, 4550)`` is ``self`` as
    uint8, NumPy 2.1's ``np.clip``; with a tensor ``min`` above such a ``max`` the value is that ``min``), on
    every device; a ``min`` above the range or a ``max`` below it is
    ScalarOverflowError, as np.clip raises (so are, for a bool ``self``, ints out of the result dtype's range).
    """
    if min is None and max is None:
        raise ArgumentValueError("clamp: at least one of 'min' or 'max' must not be None")
    shapes = [t.shape for t in (self, min, max) if isinstance(t, Tensor)]
    shape = shapes[0] if len(shapes) == 1 else broadcast_shapes("clamp", *shapes)
    # np.clip promotes all three operands together (weak Python numbers), so a Python int bound meets the result
    # dtype, not self's: clamp(int8, min=int16 tensor, max=1000) is int16.
    bounds = [b for b in (min, max) if b is not None]
    dtype = result_type(self.dtype, *(b.dtype if isinstance(b, Tensor) else type(b) for b in bounds))
    if type(min) is int or type(max) is int:
        _check_int_bounds(dtype, self.dtype.kind == "b", min, max)
    return (shape, dtype)


def _check_int_bounds(dtype: DType, of_bool: bool, min: object, max: object) -> None:
    """clamp's rule for Python int bounds (NumPy 2.1's ``np.clip``), checked against the result ``dtype``: a bound
    at or beyond an integer self's range on its own side clips nothing (:func:`_clamp` drops it); a ``min`` above
    the range or a ``max`` below it would put every value out of range, and raises, as np.clip does. Float and
    complex dtypes take any int a float holds. A bool ``self`` (``of_bool``) takes only ints that fit the
    result dtype, as np.clip (it converts them to that dtype)."""
    kind = dtype.kind
    for name, value in (("min", min), ("max", max)):
        if type(value) is not int:
            continue
        if kind in "fc" or of_bool:
            check_int_scalar("clamp", name, value, dtype)
        elif kind in "iu":
            lo, hi = int_bounds(dtype)
            if (value > hi) if name == "min" else (value < lo):
                side = "above" if name == "min" else "below"
                raise ScalarOverflowError(
                    f"clamp: Python integer {int_text(value)} (argument '{name}') is out of bounds for {dtype.name} "
                    f"[{lo}, {hi}]: {side} every value of the dtype, as NumPy's clip refuses"
                )


@_ks.clamp.xp
def _clamp(xp: ModuleType, self: D, min: D | Scalar | None, max: D | Scalar | None, *, out: ConstOut[D]) -> None:
    a, lo, hi, o = self._array, arr(min), arr(max), out.array
    if (type(lo) is int or type(hi) is int) and a.dtype.kind in "iu":
        # NumPy's clip drops a Python int bound at or beyond self's own range on its side (not the result
        # dtype's): it clips nothing there, except where a tensor min exceeds it (min > max), and there the
        # value is NumPy's.
        a_lo, a_hi = _IINFO.get(a.dtype) or int_bounds(a.dtype)
        if type(lo) is int and lo <= a_lo:
            lo = None
        if type(hi) is int and hi >= a_hi:
            hi = None
        if lo is None and hi is None:
            xp.copyto(o, a, casting="unsafe")  # (the front has checked the result dtype casts to out's)
            return
    # maximum/minimum rather than clip: CuPy's clip has no loop for bool or complex, nor a None bound there.
    if lo is None:
        xp.minimum(a, hi, out=o)
    elif hi is None:
        xp.maximum(a, lo, out=o)
    elif xp is np and o.dtype.kind == "c":
        # np.clip's own complex loop: where a bound's imaginary part is NaN it keeps the value, where maximum and
        # minimum would give the NaN (CuPy has no complex clip loop, so there the NaN propagates).
        cast(Any, np.clip)(a, lo, hi, out=o)
    else:
        # The intermediate in the dtype of all three operands, as np.clip computes: maximum(a, lo) alone would
        # promote a with lo only, where a Python int bound may not fit a's dtype (int8 with 1000, though hi makes
        # the result int16), or whose result need not cast to out (bool with 0 is int64; with a uint8 hi, uint8).
        xp.minimum(xp.maximum(a, lo, dtype=np.result_type(weak(a), weak(lo), weak(hi))), hi, out=o)


# --- where ----------------------------------------------------------------------------------------------


@structured_op("where", out_may_be_input=True, inplace=False, method=False)
def where(condition: TensorMeta, self: TensorMetaOrScalar, other: TensorMetaOrScalar) -> TensorSpec:
    """``self`` where ``condition`` is true, else ``other``, elementwise (``torch.where``, ``np.where``).
    ``condition`` must be a bool tensor (ArgumentTypeError otherwise, as PyTorch; ``np.where(t, x, y)`` on a
    tensor takes NumPy's truth of any dtype, ``t != 0``, before calling this op). The result dtype promotes
    ``self`` and ``other`` (NumPy's ``result_type``, weak Python scalars); all three broadcast."""
    if condition.dtype.kind != "b":
        raise ArgumentTypeError(f"where: argument 'condition' must be a bool tensor, got dtype {condition.dtype}")
    shapes = [t.shape for t in (condition, self, other) if isinstance(t, Tensor)]
    shape = broadcast_shapes("where", *shapes)
    dtypes = [t.dtype if isinstance(t, Tensor) else type(t) for t in (self, other)]
    dtype = result_type(*dtypes)
    check_python_ints("where", dtype, ("self", "other"), self, other)  # np.where would wrap them silently
    return (shape, dtype)


@_ks.where.xp
def _where(xp: ModuleType, condition: D, self: D | Scalar, other: D | Scalar, *, out: ConstOut[D]) -> None:
    # np.where allocates; writing it after computing keeps an out that aliases self or other correct.
    xp.copyto(out.array, xp.where(condition._array, arr(self), arr(other)), casting="same_kind")


# --- comparisons and logical ops ------------------------------------------------------------------------

# NumPy 2's rules for a Python int operand (the meta functions check them, devtensor.meta._resolve).
_CMP_INT = (
    " A Python int compares exactly with an integer tensor, whatever its size (NumPy 2: ``uint8 tensor == -1``"
    " is all False); with a bool tensor it must fit int64 (the loop NumPy uses), with a float or complex one a"
    " float64, else ScalarOverflowError."
)
_LOGICAL_INT = (
    " A Python int operand must fit int64 (NumPy converts it to its default integer before taking its truth),"
    " else ScalarOverflowError."
)

eq = binary_ufunc(
    "eq",
    np.equal,
    numbers="other",
    doc="``self == other``, elementwise, as a bool tensor (``torch.eq``, ``np.equal``)." + _CMP_INT,
)
ne = binary_ufunc(
    "ne",
    np.not_equal,
    numbers="other",
    doc="``self != other``, elementwise, as a bool tensor (``torch.ne``, ``np.not_equal``)." + _CMP_INT,
)
lt = binary_ufunc(
    "lt",
    np.less,
    numbers="other",
    doc="``self < other``, elementwise, as a bool tensor (``torch.lt``, ``np.less``)." + _CMP_INT,
)
le = binary_ufunc(
    "le",
    np.less_equal,
    numbers="other",
    doc="``self <= other``, elementwise, as a bool tensor (``torch.le``, ``np.less_equal``)." + _CMP_INT,
)
gt = binary_ufunc(
    "gt",
    np.greater,
    numbers="other",
    doc="``self > other``, elementwise, as a bool tensor (``torch.gt``, ``np.greater``)." + _CMP_INT,
)
ge = binary_ufunc(
    "ge",
    np.greater_equal,
    numbers="other",
    doc="``self >= other``, elementwise, as a bool tensor (``torch.ge``, ``np.greater_equal``)." + _CMP_INT,
)
logical_and = binary_ufunc(
    "logical_and",
    np.logical_and,
    numbers="none",
    doc="Truth of ``self and other``, elementwise, as bool (``np.logical_and``)." + _LOGICAL_INT,
)
logical_or = binary_ufunc(
    "logical_or",
    np.logical_or,
    numbers="none",
    doc="Truth of ``self or other``, elementwise, as bool (``np.logical_or``)." + _LOGICAL_INT,
)
logical_xor = binary_ufunc(
    "logical_xor",
    np.logical_xor,
    numbers="none",
    doc="Truth of ``self xor other``, elementwise, as bool (``np.logical_xor``)." + _LOGICAL_INT,
)
logical_not = unary_ufunc(
    "logical_not", np.logical_not, doc="Truth of ``not self``, elementwise, as bool (``np.logical_not``)."
)


_DOCS = {
    div: (
        "np.true_divide / np.floor_divide",
        "    Also ValueError for a ``rounding_mode`` other than None, 'trunc', 'floor'.\n",
    ),
    pow: ("np.power", "    Also ValueError for integers to negative integer powers.\n"),
    sigmoid: ("np.exp", ""),
    clamp: ("np.maximum / np.minimum", ""),
    where: ("np.where", ""),
}
for _op, (_ufunc, _extra) in _DOCS.items():
    _op.meta.__doc__ = _op.doc = _op.functional.__doc__ = elementwise_doc(
        _op.name, _op.meta.__doc__ or "", _ufunc, inplace=_op.inplace is not None, extra=_extra
    )
    if _op.inplace is not None:
        _op.inplace.__doc__ = _op.meta.__doc__
