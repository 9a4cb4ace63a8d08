"""The elementwise family: arithmetic, math functions, comparisons, logical ops, clamp and where.

Each op is one structured op (meta function + CPU impl in NumPy + CUDA impl in CuPy), defined through the same
public API a user's op would use. Result shapes broadcast as NumPy's; result dtypes are NumPy 2's for the
corresponding ufunc, with Python scalars weak (NEP 50). Out and inplace variants follow PyTorch's rules
(see :mod:`devtensor.structured`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.backends import cupy_module
from devtensor.dtypes import Scalar, result_type
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.meta import (
    binary_ufunc_meta,
    broadcast_shapes,
    check_python_ints,
    unary_ufunc_meta,
)
from devtensor.structured import StructuredOp, TensorSpec, structured_op
from devtensor.tensor import Tensor, TensorMeta, TensorMetaOrScalar
from devtensor.typed import ConstOut, CPUTensor, CUDATensor
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


# Hot paths: the CPU kernels of the common elementwise ops (the generic unary and binary ones, add, sub) are most
# of their ops' time at small sizes, where each Python-level step shows. They read ``self`` through the output
# of an inplace call (see InplaceOut: NumPy's in-place fast path), arrays straight off the slot the ``array``
# property reads (no property or helper call), and pass the output positionally where NumPy allows it (it parses
# that faster than ``out=``). The other kernels use the helpers below.


def _np(x: CPUTensor | Scalar) -> Any:
    return x.array if isinstance(x, CPUTensor) else x


def _cp(x: CUDATensor | Scalar) -> Any:
    return x.array if isinstance(x, CUDATensor) else x


_COMMON_DOC = """
    Shapes broadcast as NumPy's; the result has the broadcast shape, on the device of the tensor arguments
    (all must be on one device, else DeviceMismatchError). Python numbers are accepted where a tensor is and
    are weak in promotion (NEP 50). Variants: functional ``{name}(...)``, out ``{name}(..., out=t)``{inplace}.

    Raises:
        ArgumentTypeError (TypeError): an argument that is neither a Tensor nor a Python number, no tensor
            argument at all, or dtypes NumPy's ``{ufunc}`` has no loop for.
        ShapeError (ValueError): shapes that do not broadcast; an inplace result shape != ``self.shape``.
        CastingError (TypeError): the result dtype does not cast (same_kind) to ``out``/``self``'s dtype.
        ScalarOverflowError (OverflowError): a Python int out of range of the integer dtype it meets.
        DeviceMismatchError (ValueError): tensors on different devices.
        MemoryOverlapError, ReadOnlyError (ValueError): an output overlapping an input partially, with
            internal overlap, or read-only.
"""


def _doc(name: str, summary: str, ufunc: str, inplace: bool = True) -> str:
    variant = f" and inplace ``{name}_(self, ...)`` / ``t.{name}_(...)``" if inplace else ""
    return summary.strip() + "\n" + _COMMON_DOC.format(name=name, ufunc=ufunc, inplace=variant)


def _unary_ufunc(name: str, ufunc: np.ufunc, summary: str) -> StructuredOp:
    meta = unary_ufunc_meta(name, ufunc)
    meta.__doc__ = _doc(name, summary, f"np.{ufunc.__name__}")
    op = StructuredOp(name, meta, elementwise=True)
    cp_name = ufunc.__name__

    @op.impl("cpu")
    def _cpu(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        o = out.array
        ufunc(o if type(out) is InplaceOut else self._array, o)

    @op.impl("cuda")
    def _cuda(self: CUDATensor, *, out: ConstOut[CUDATensor]) -> None:
        getattr(cupy_module(), cp_name)(self.array, out=out.array)

    return op


def _binary_ufunc(name: str, ufunc: np.ufunc, summary: str) -> StructuredOp:
    meta = binary_ufunc_meta(name, ufunc)
    meta.__doc__ = _doc(name, summary, f"np.{ufunc.__name__}")
    op = StructuredOp(name, meta, elementwise=True)
    cp_name = ufunc.__name__

    @op.impl("cpu")
    def _cpu(self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, out: ConstOut[CPUTensor]) -> None:
        o = out.array
        a = o if type(out) is InplaceOut else self._array if isinstance(self, CPUTensor) else self
        # (``out=`` here: NumPy deprecates a positional output for maximum and minimum)
        ufunc(a, other._array if isinstance(other, CPUTensor) else other, out=o)

    @op.impl("cuda")
    def _cuda(
        self: CUDATensor | Scalar,
        other: CUDATensor | Scalar,
        *,
        out: ConstOut[CUDATensor],
    ) -> None:
        getattr(cupy_module(), cp_name)(_cp(self), _cp(other), out=out.array)

    return op


# --- add and sub: alpha ---------------------------------------------------------------------------------

_ALPHA_DOC = """
    ``alpha * other`` is computed in the result dtype for a tensor ``other`` (as PyTorch), in Python for a
    Python number. Also ArgumentTypeError when ``alpha`` does not suit the result dtype (PyTorch's rule: bool
    for bool, no float for integral, no complex for real results), and ScalarOverflowError when an int
    ``alpha``, or ``alpha * other`` for a Python int ``other``, is out of range of an integer result dtype.
"""


def _weak(x: Any) -> Any:
    # An operand as NumPy's promotion takes it: an array's dtype, or a (weak) Python number itself.
    return x if isinstance(x, (bool, int, float, complex)) else x.dtype


def _scaled(xp: Any, self: Any, other: Any, alpha: Scalar) -> Any:
    # alpha * other as PyTorch computes it, before any write to out: a tensor in the result dtype (not in other's
    # own, narrower dtype, where it could wrap around or reject alpha), a Python number in Python, where it stays
    # weak (bool and bool stay bool). The meta function has checked that alpha and a Python product fit.
    if alpha == 1 and type(alpha) is not complex:
        return other
    if isinstance(other, (bool, int, float, complex)):
        return (other and alpha) if type(other) is bool and type(alpha) is bool else other * alpha
    return xp.multiply(other, alpha, dtype=np.result_type(_weak(self), other.dtype))


_add_meta = binary_ufunc_meta("add", np.add, alpha=True)
_add_meta.__doc__ = (
    _doc(
        "add",
        "``self + alpha * other``, elementwise (``torch.add``; values as ``np.add``).",
        "np.add",
    )
    + _ALPHA_DOC
)
add = StructuredOp("add", _add_meta, elementwise=True)
_np_add = np.add


@_ks.add.cpu
def _add_cpu(
    self: CPUTensor | Scalar,
    other: CPUTensor | Scalar,
    *,
    alpha: Scalar,
    out: ConstOut[CPUTensor],
) -> None:
    o = out.array  # (a hot path: see above _np)
    a = o if type(out) is InplaceOut else self._array if isinstance(self, CPUTensor) else self
    b = other._array if isinstance(other, CPUTensor) else other
    if alpha != 1 or type(alpha) is complex:
        b = _scaled(np, a, b, alpha)
    _np_add(a, b, o)


@_ks.add.cuda
def _add_cuda(
    self: CUDATensor | Scalar,
    other: CUDATensor | Scalar,
    *,
    alpha: Scalar,
    out: ConstOut[CUDATensor],
) -> None:
    cp = cupy_module()
    cp.add(_cp(self), _scaled(cp, _cp(self), _cp(other), alpha), out=out.array)


_sub_meta = binary_ufunc_meta("sub", np.subtract, alpha=True)
_sub_meta.__doc__ = (
    _doc(
        "sub",
        "``self - alpha * other``, elementwise (``torch.sub``; values as ``np.subtract``; bool is an error).",
        "np.subtract",
    )
    + _ALPHA_DOC
)
sub = StructuredOp("sub", _sub_meta, elementwise=True)
_np_subtract = np.subtract


@_ks.sub.cpu
def _sub_cpu(
    self: CPUTensor | Scalar,
    other: CPUTensor | Scalar,
    *,
    alpha: Scalar,
    out: ConstOut[CPUTensor],
) -> None:
    o = out.array  # (a hot path: see above _np)
    a = o if type(out) is InplaceOut else self._array if isinstance(self, CPUTensor) else self
    b = other._array if isinstance(other, CPUTensor) else other
    if alpha != 1 or type(alpha) is complex:
        b = _scaled(np, a, b, alpha)
    _np_subtract(a, b, o)


@_ks.sub.cuda
def _sub_cuda(
    self: CUDATensor | Scalar,
    other: CUDATensor | Scalar,
    *,
    alpha: Scalar,
    out: ConstOut[CUDATensor],
) -> None:
    cp = cupy_module()
    cp.subtract(_cp(self), _scaled(cp, _cp(self), _cp(other), alpha), out=out.array)


mul = _binary_ufunc(
    "mul",
    np.multiply,
    "``self * other``, elementwise (``torch.mul``; values as ``np.multiply``).",
)


# --- div ------------------------------------------------------------------------------------------------

_ROUNDING = (None, "trunc", "floor")
_true_div_meta = binary_ufunc_meta("div", np.true_divide)
_floor_div_meta = binary_ufunc_meta("div", np.floor_divide)


@structured_op(elementwise=True)
def div(self: TensorMetaOrScalar, other: TensorMetaOrScalar, *, rounding_mode: str | None = None) -> TensorSpec:
    """``self / other``, elementwise (``torch.div``). ``rounding_mode``: None is true division
    (``np.true_divide``: integers give float64), ``'trunc'`` rounds toward zero, ``'floor'`` rounds down
    (``np.floor_divide``); with a rounding mode integers stay integers. Integer division by zero gives 0 with
    NumPy's RuntimeWarning.
    """
    if rounding_mode is None:
        return _true_div_meta(self, other)
    if rounding_mode not in _ROUNDING:
        raise ArgumentValueError(
            f"div: argument 'rounding_mode' must be None, 'trunc' or 'floor', got {rounding_mode!r}"
        )
    return _floor_div_meta(self, other)


def _div_body(xp: Any, a: Any, b: Any, rounding_mode: str | None, out: Any) -> None:
    if rounding_mode is None:
        xp.true_divide(a, b, out=out)
    elif rounding_mode == "floor":
        xp.floor_divide(a, b, out=out)
    else:
        q, r = xp.divmod(a, b)
        if xp.asarray(q).dtype.kind in "iu":
            # Floor differs from trunc where the exact quotient is negative and not whole: add one there.
            xp.add(
                q,
                (r != 0) & ((xp.asarray(a) < 0) != (xp.asarray(b) < 0)),
                out=out,
                casting="unsafe",
            )
        else:
            xp.trunc(xp.true_divide(a, b), out=out)


@_ks.div.cpu
def _div_cpu(
    self: CPUTensor | Scalar,
    other: CPUTensor | Scalar,
    *,
    rounding_mode: str | None,
    out: ConstOut[CPUTensor],
) -> None:
    _div_body(np, _np(self), _np(other), rounding_mode, out.array)


@_ks.div.cuda
def _div_cuda(
    self: CUDATensor | Scalar,
    other: CUDATensor | Scalar,
    *,
    rounding_mode: str | None,
    out: ConstOut[CUDATensor],
) -> None:
    _div_body(cupy_module(), _cp(self), _cp(other), rounding_mode, out.array)


div.meta.__doc__ = _doc("div", div.meta.__doc__ or "", "np.true_divide / np.floor_divide") + (
    "    Also ValueError for a ``rounding_mode`` other than None, 'trunc', 'floor'.\n"
)

remainder = _binary_ufunc(
    "remainder",
    np.remainder,
    "Python-style remainder ``self % other``, with the sign of ``other`` (``torch.remainder``, ``np.remainder``).",
)


# --- pow ------------------------------------------------------------------------------------------------


_pow_meta = binary_ufunc_meta("pow", np.power)


@structured_op(elementwise=True)
def pow(self: TensorMetaOrScalar, other: TensorMetaOrScalar) -> TensorSpec:
    """``self ** other``, elementwise (``torch.pow``; values as ``np.power``). Integer results with a
    negative integer exponent raise ValueError before anything is written, as NumPy and PyTorch do."""
    return _pow_meta(self, other)


def _pow_body(xp: Any, a: Any, b: Any, out: Any) -> None:
    # Only an integer *result* forbids negative exponents: uint64 ** int64 is float64, where they are fine.
    integral = type(b) is int if isinstance(b, (bool, int, float, complex)) else b.dtype.kind in "iu"
    # As NumPy: only an element actually computed raises (an empty result computes none).
    if (
        integral
        and out.size
        and np.result_type(_weak(a), _weak(b)).kind in "iu"
        and ((b < 0) if type(b) is int else bool((b < 0).any()))
    ):
        raise ArgumentValueError("pow: integers to negative integer powers are not allowed (argument 'other')")
    xp.power(a, b, out=out)


@_ks.pow.cpu
def _pow_cpu(self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, out: ConstOut[CPUTensor]) -> None:
    _pow_body(np, _np(self), _np(other), out.array)


@_ks.pow.cuda
def _pow_cuda(self: CUDATensor | Scalar, other: CUDATensor | Scalar, *, out: ConstOut[CUDATensor]) -> None:
    _pow_body(cupy_module(), _cp(self), _cp(other), out.array)


pow.meta.__doc__ = _doc("pow", pow.meta.__doc__ or "", "np.power") + (
    "    Also ValueError for integers to negative integer powers.\n"
)

# --- unary math -----------------------------------------------------------------------------------------

neg = _unary_ufunc(
    "neg",
    np.negative,
    "``-self``, elementwise (``torch.neg``, ``np.negative``; bool is an error).",
)
abs = _unary_ufunc(
    "abs",
    np.absolute,
    "``|self|``, elementwise (``torch.abs``, ``np.absolute``; complex gives real).",
)
exp = _unary_ufunc(
    "exp",
    np.exp,
    "``e ** self``, elementwise (``torch.exp``, ``np.exp``; integers give floats).",
)
log = _unary_ufunc(
    "log",
    np.log,
    "Natural logarithm, elementwise (``torch.log``, ``np.log``; log(0) = -inf).",
)
sqrt = _unary_ufunc(
    "sqrt",
    np.sqrt,
    "Square root, elementwise (``torch.sqrt``, ``np.sqrt``; negative reals give nan).",
)
sin = _unary_ufunc("sin", np.sin, "Sine of radians, elementwise (``torch.sin``, ``np.sin``).")
cos = _unary_ufunc("cos", np.cos, "Cosine of radians, elementwise (``torch.cos``, ``np.cos``).")
tanh = _unary_ufunc("tanh", np.tanh, "Hyperbolic tangent, elementwise (``torch.tanh``, ``np.tanh``).")


_exp_meta = unary_ufunc_meta("sigmoid", np.exp)


@structured_op(elementwise=True)
def sigmoid(self: Tensor) -> TensorSpec:
    """The logistic function ``1 / (1 + exp(-self))``, elementwise (``torch.sigmoid``), computed stably for real
    inputs as ``1 / (1 + t)`` for ``self >= 0`` and ``t / (1 + t)`` below, with ``t = exp(-|self|)``: no
    overflow, and tiny results keep their relative precision. Result dtype as ``np.exp`` gives for the input."""
    return _exp_meta(self)


def _sigmoid_body(xp: Any, a: Any, out: Any) -> None:
    # Branch on the input: a real input may be written into a complex out (-a would wrap for unsigned ints and
    # raise for bool there).
    if a.dtype.kind == "c":
        xp.divide(1, xp.add(1, xp.exp(xp.negative(a))), out=out)
        return
    # (0.5 * (1 + tanh(x / 2)) would round every result below about eps / 4 to 0.)
    nonnegative = a >= 0  # before the first write: out may be a itself (inplace)
    xp.copyto(out, a, casting="unsafe")  # the float result dtype holds integer and bool inputs exactly
    xp.absolute(out, out=out)
    xp.negative(out, out=out)
    xp.exp(out, out=out)  # t = exp(-|x|), in (0, 1]
    denominator = xp.add(out, 1)
    xp.copyto(out, 1, where=nonnegative)
    xp.divide(out, denominator, out=out)


@_ks.sigmoid.cpu
def _sigmoid_cpu(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
    _sigmoid_body(np, self.array, out.array)


@_ks.sigmoid.cuda
def _sigmoid_cuda(self: CUDATensor, *, out: ConstOut[CUDATensor]) -> None:
    _sigmoid_body(cupy_module(), self.array, out.array)


sigmoid.meta.__doc__ = _doc("sigmoid", sigmoid.meta.__doc__ or "", "np.exp")

maximum = _binary_ufunc(
    "maximum",
    np.maximum,
    "Elementwise maximum (``torch.maximum``, ``np.maximum``; NaN propagates).",
)
minimum = _binary_ufunc(
    "minimum",
    np.minimum,
    "Elementwise minimum (``torch.minimum``, ``np.minimum``; NaN propagates).",
)


# --- clamp ----------------------------------------------------------------------------------------------


@structured_op(elementwise=True)
def clamp(self: TensorMeta, min: TensorMetaOrScalar | None = None, max: TensorMetaOrScalar | None = None) -> TensorSpec:
    """``self`` limited to ``[min, max]``, elementwise (``torch.clamp``; values as ``np.clip``: where
    ``min > max`` the result is ``max``). ``min`` and ``max`` are tensors or Python numbers; at least one must
    be given (ValueError otherwise). The result dtype promotes ``self`` with both bounds (NumPy's ``clip``).
    """
    if min is None and max is None:
        raise ArgumentValueError("clamp: at least one of 'min' or 'max' must not be None")
    shapes = [t.shape for t in (self, min, max) if isinstance(t, Tensor)]
    shape = shapes[0] if len(shapes) == 1 else broadcast_shapes("clamp", *shapes)
    # np.clip promotes all three operands together (weak Python numbers), so a Python int bound meets the result
    # dtype, not self's: clamp(int8, min=int16 tensor, max=1000) is int16.
    bounds = [b for b in (min, max) if b is not None]
    dtype = result_type(self.dtype, *(b.dtype if isinstance(b, Tensor) else type(b) for b in bounds))
    check_python_ints("clamp", dtype, ("min", "max"), min, max)
    return (shape, dtype)


def _clamp_body(xp: Any, a: Any, lo: Any, hi: Any, out: Any) -> None:
    # maximum/minimum rather than clip: CuPy's clip has no loop for bool or complex, nor a None bound there.
    if lo is None:
        xp.minimum(a, hi, out=out)
    elif hi is None:
        xp.maximum(a, lo, out=out)
    else:
        # The intermediate in the dtype of all three operands, as np.clip computes: maximum(a, lo) alone would
        # promote a with lo only, where a Python int bound may not fit a's dtype (int8 with 1000, though hi makes
        # the result int16), or whose result need not cast to out (bool with 0 is int64; with a uint8 hi, uint8).
        xp.minimum(xp.maximum(a, lo, dtype=np.result_type(_weak(a), _weak(lo), _weak(hi))), hi, out=out)


@_ks.clamp.cpu
def _clamp_cpu(
    self: CPUTensor,
    min: CPUTensor | Scalar | None,
    max: CPUTensor | Scalar | None,
    *,
    out: ConstOut[CPUTensor],
) -> None:
    _clamp_body(np, self.array, None if min is None else _np(min), None if max is None else _np(max), out.array)


@_ks.clamp.cuda
def _clamp_cuda(
    self: CUDATensor,
    min: CUDATensor | Scalar | None,
    max: CUDATensor | Scalar | None,
    *,
    out: ConstOut[CUDATensor],
) -> None:
    _clamp_body(
        cupy_module(), self.array, None if min is None else _cp(min), None if max is None else _cp(max), out.array
    )


clamp.meta.__doc__ = _doc("clamp", clamp.meta.__doc__ or "", "np.maximum / np.minimum")


# --- where ----------------------------------------------------------------------------------------------


@structured_op(elementwise=True, inplace=False, method=False)
def where(condition: TensorMeta, self: TensorMetaOrScalar, other: TensorMetaOrScalar) -> TensorSpec:
    """``self`` where ``condition`` is true, else ``other``, elementwise (``torch.where``, ``np.where``).
    ``condition`` must be a bool tensor (ArgumentTypeError otherwise, as PyTorch). The result dtype promotes
    ``self`` and ``other`` (NumPy's ``result_type``, weak Python scalars); all three broadcast."""
    if condition.dtype.kind != "b":
        raise ArgumentTypeError(f"where: argument 'condition' must be a bool tensor, got dtype {condition.dtype}")
    shapes = [t.shape for t in (condition, self, other) if isinstance(t, Tensor)]
    shape = broadcast_shapes("where", *shapes)
    dtypes = [t.dtype if isinstance(t, Tensor) else type(t) for t in (self, other)]
    dtype = result_type(*dtypes)
    check_python_ints("where", dtype, ("self", "other"), self, other)  # np.where would wrap them silently
    return (shape, dtype)


@_ks.where.cpu
def _where_cpu(
    condition: CPUTensor,
    self: CPUTensor | Scalar,
    other: CPUTensor | Scalar,
    *,
    out: ConstOut[CPUTensor],
) -> None:
    # np.where allocates; writing it after computing keeps an out that aliases self or other correct.
    np.copyto(out.array, np.where(condition.array, _np(self), _np(other)), casting="same_kind")


@_ks.where.cuda
def _where_cuda(
    condition: CUDATensor,
    self: CUDATensor | Scalar,
    other: CUDATensor | Scalar,
    *,
    out: ConstOut[CUDATensor],
) -> None:
    cp = cupy_module()
    cp.copyto(out.array, cp.where(condition.array, _cp(self), _cp(other)), casting="same_kind")


where.meta.__doc__ = _doc("where", where.meta.__doc__ or "", "np.where", inplace=False)

# --- comparisons and logical ops ------------------------------------------------------------------------

eq = _binary_ufunc(
    "eq",
    np.equal,
    "``self == other``, elementwise, as a bool tensor (``torch.eq``, ``np.equal``).",
)
ne = _binary_ufunc(
    "ne",
    np.not_equal,
    "``self != other``, elementwise, as a bool tensor (``torch.ne``, ``np.not_equal``).",
)
lt = _binary_ufunc(
    "lt",
    np.less,
    "``self < other``, elementwise, as a bool tensor (``torch.lt``, ``np.less``).",
)
le = _binary_ufunc(
    "le",
    np.less_equal,
    "``self <= other``, elementwise, as a bool tensor (``torch.le``, ``np.less_equal``).",
)
gt = _binary_ufunc(
    "gt",
    np.greater,
    "``self > other``, elementwise, as a bool tensor (``torch.gt``, ``np.greater``).",
)
ge = _binary_ufunc(
    "ge",
    np.greater_equal,
    "``self >= other``, elementwise, as a bool tensor (``torch.ge``, ``np.greater_equal``).",
)
logical_and = _binary_ufunc(
    "logical_and",
    np.logical_and,
    "Truth of ``self and other``, elementwise, as bool (``np.logical_and``).",
)
logical_or = _binary_ufunc(
    "logical_or",
    np.logical_or,
    "Truth of ``self or other``, elementwise, as bool (``np.logical_or``).",
)
logical_xor = _binary_ufunc(
    "logical_xor",
    np.logical_xor,
    "Truth of ``self xor other``, elementwise, as bool (``np.logical_xor``).",
)
logical_not = _unary_ufunc(
    "logical_not",
    np.logical_not,
    "Truth of ``not self``, elementwise, as bool (``np.logical_not``).",
)

for _op in (div, pow, sigmoid, clamp, where):
    _op.functional.__doc__ = _op.meta.__doc__
    if _op.inplace is not None:
        _op.inplace.__doc__ = _op.meta.__doc__


# --- Python operators -----------------------------------------------------------------------------------


def _reflected(fn: Callable[..., Tensor], **kwargs: Any) -> Callable[[Tensor, Any], Tensor]:
    def op(self: Tensor, other: Any) -> Tensor:
        return fn(other, self, **kwargs)

    return op


def _with(fn: Callable[..., Tensor], **kwargs: Any) -> Callable[[Tensor, Any], Tensor]:
    def op(self: Tensor, other: Any) -> Tensor:
        return fn(self, other, **kwargs)

    return op


def _comparison(fn: Callable[..., Tensor]) -> Callable[[Tensor, Any], Any]:
    # ``t == None`` and other non-numeric objects fall back to Python's identity comparison, as for any object;
    # numbers and arrays that are not accepted operands (NumPy scalars and arrays) raise, as ``t < x`` does,
    # rather than silently compare by identity.
    def op(self: Tensor, other: Any) -> Any:
        if isinstance(other, (Tensor, numbers.Number, np.generic, np.ndarray)):
            return fn(self, other)
        return NotImplemented

    return op


def _inplace_with(fn: Callable[..., Tensor], **kwargs: Any) -> Callable[[Tensor, Any], Tensor]:
    def op(self: Tensor, other: Any) -> Tensor:
        return fn(self, other, **kwargs)

    return op


def _bind_operators() -> None:
    assert add.inplace and sub.inplace and mul.inplace and div.inplace and remainder.inplace and pow.inplace
    table: dict[str, Any] = {
        "__add__": add.functional,
        "__radd__": _reflected(add.functional),
        "__iadd__": add.inplace,
        "__sub__": sub.functional,
        "__rsub__": _reflected(sub.functional),
        "__isub__": sub.inplace,
        "__mul__": mul.functional,
        "__rmul__": _reflected(mul.functional),
        "__imul__": mul.inplace,
        "__truediv__": div.functional,
        "__rtruediv__": _reflected(div.functional),
        "__itruediv__": div.inplace,
        "__floordiv__": _with(div.functional, rounding_mode="floor"),
        "__rfloordiv__": _reflected(div.functional, rounding_mode="floor"),
        "__ifloordiv__": _inplace_with(div.inplace, rounding_mode="floor"),
        "__mod__": remainder.functional,
        "__rmod__": _reflected(remainder.functional),
        "__imod__": remainder.inplace,
        "__pow__": pow.functional,
        "__rpow__": _reflected(pow.functional),
        "__ipow__": pow.inplace,
        "__neg__": neg.functional,
        "__abs__": abs.functional,
        "__eq__": _comparison(eq.functional),
        "__ne__": _comparison(ne.functional),
        "__lt__": lt.functional,
        "__le__": le.functional,
        "__gt__": gt.functional,
        "__ge__": ge.functional,
    }
    for name, fn in table.items():
        setattr(Tensor, name, fn)


_bind_operators()
