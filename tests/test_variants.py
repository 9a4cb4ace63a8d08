"""Property tests: the functional, out and inplace variants of every elementwise op agree wherever each is legal;
the Python operators and Tensor methods are the ops; meta tensors give the CPU result's shape and dtype.

The functional result is the reference here (tests/test_elementwise_values.py holds it to NumPy):

* out variant: for an ``out`` of the result's shape and any dtype the result dtype casts to (same_kind), often a
  non-contiguous view, the call returns ``out``, bumps its version by one and holds the functional result cast to
  ``out.dtype``; for any other dtype it raises TypeError and changes nothing;
* inplace variant: legal exactly when the broadcast shape equals ``self.shape`` and the result dtype casts
  (same_kind) to ``self.dtype``; it then returns ``self``, bumps its version once and holds the functional result
  cast to ``self.dtype``; otherwise it raises (ValueError for the shape, TypeError for the dtype) and changes
  nothing;
* a call that raises in the functional variant raises the same error in the others, and changes nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from helpers import SUPPORTED_DTYPES
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import Snapshot, assert_unchanged, snapshot

import devtensor as dt
from devtensor.numpy_values import binary_call
from devtensor.structured import rules

Array = npt.NDArray[Any]
Scalar = bool | int | float | complex

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

ALL_DTYPES = SUPPORTED_DTYPES
MAX_SIDE = 4
MAX_DIMS = 3
ERRORS = (TypeError, ValueError, OverflowError)

dtypes = st.sampled_from(ALL_DTYPES)
shapes = hnp.array_shapes(min_dims=0, max_dims=MAX_DIMS, min_side=0, max_side=MAX_SIDE)


def broadcastable(n: int) -> st.SearchStrategy[hnp.BroadcastableShapes]:
    return hnp.mutually_broadcastable_shapes(num_shapes=n, max_dims=MAX_DIMS, min_side=0, max_side=MAX_SIDE)


# --- operands -------------------------------------------------------------------------------------------------


def noncontiguous_or_not(data: st.DataObject, array: Array) -> Array:
    """``array``'s values, as a C-contiguous array or as a non-contiguous view (Fortran order, every other
    element, or reversed) of fresh memory."""
    if array.ndim == 0:
        return array.copy()
    layout = data.draw(st.sampled_from(("contiguous", "fortran", "strided", "reversed")))
    if layout == "fortran":
        return np.array(array, order="F", copy=True)
    if layout == "strided":
        base = np.empty((*array.shape[:-1], 2 * array.shape[-1]), dtype=array.dtype)
        view = base[..., ::2]
        view[...] = array
        return view
    if layout == "reversed":
        return np.array(array[..., ::-1], copy=True)[..., ::-1]  # (copy=True: a 1-element view would be kept)
    return array.copy()


def draw_tensor(data: st.DataObject, shape: tuple[int, ...], dtype: np.dtype[Any]) -> dt.Tensor:
    return dt.from_numpy(noncontiguous_or_not(data, data.draw(hnp.arrays(dtype, shape))))


def int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """Python ints that fit the integer dtype they meet beside a tensor of ``dtype`` (floats: kept moderate)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    return -(2**31), 2**31


def python_scalars(beside: np.dtype[Any]) -> st.SearchStrategy[Scalar]:
    lo, hi = int_range(beside)
    return st.one_of(
        st.booleans(), st.integers(lo, hi), st.floats(), st.complex_numbers(allow_nan=True, allow_infinity=True)
    )


def draw_binary(data: st.DataObject) -> list[Any]:
    """[self, other]: two tensors (sometimes the very same one), or a tensor and a Python number either way."""
    form = data.draw(st.sampled_from(("tensor-tensor", "tensor-tensor", "tensor-scalar", "scalar-tensor", "same")))
    if form == "same":
        t = draw_tensor(data, data.draw(shapes), data.draw(dtypes))
        return [t, t]
    if form == "tensor-tensor":
        s1, s2 = data.draw(broadcastable(2)).input_shapes
        return [draw_tensor(data, s1, data.draw(dtypes)), draw_tensor(data, s2, data.draw(dtypes))]
    t = draw_tensor(data, data.draw(shapes), data.draw(dtypes))
    s = data.draw(python_scalars(t.dtype))
    return [t, s] if form == "tensor-scalar" else [s, t]


def snapshot_tensors(values: Sequence[Any], *, but: dt.Tensor | None = None) -> Snapshot:
    """The state (``tests/tensor_state.py``) of every tensor among ``values`` except ``but``."""
    return snapshot(*(v for v in values if isinstance(v, dt.Tensor) and v is not but))


def copy_of(data: st.DataObject, t: dt.Tensor) -> dt.Tensor:
    """A new tensor (own storage, version 0) with ``t``'s values, often non-contiguous."""
    return dt.from_numpy(noncontiguous_or_not(data, t.numpy()))


# --- comparing a variant's result with the functional one -------------------------------------------------------


def rtol_atol(*dts: np.dtype[Any]) -> tuple[float, float]:
    """Tolerances of the least precise floating dtype among ``dts`` (transcendental ops may compute an out
    variant in the out's precision instead of rounding the result dtype's)."""
    infos = [np.finfo(d) for d in dts if d.kind in "fc"]
    if not infos:
        return 0.0, 0.0
    return max(8 * float(i.eps) for i in infos), max(8 * float(i.smallest_subnormal) for i in infos)


def assert_cast_result(actual: dt.Tensor, functional: dt.Tensor, approx: bool) -> None:
    """``actual`` holds the functional result cast to ``actual.dtype`` (NumPy's cast), same shape: exactly, or
    within a tolerance for transcendental ops and for complex results (complex multiplication and division are
    not correctly rounded: NumPy's loops for contiguous, strided and aliased operands differ in the last place)."""
    assert actual.shape == functional.shape
    expected = functional.numpy().astype(actual.dtype)
    if (approx and actual.dtype.kind == "f") or actual.dtype.kind == "c":
        rtol, atol = rtol_atol(actual.dtype, functional.dtype)
        np.testing.assert_allclose(actual.numpy(), expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual.numpy(), expected, strict=True)


def assert_same(actual: dt.Tensor, expected: dt.Tensor, approx: bool = False) -> None:
    """Same dtype, shape and values (with assert_cast_result's tolerance where it applies)."""
    assert isinstance(actual, dt.Tensor)
    assert actual.dtype == expected.dtype
    assert_cast_result(actual, expected, approx)


# --- the ops ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    label: str
    functional: Callable[..., dt.Tensor]
    inplace: Callable[..., dt.Tensor]
    method: str  # the Tensor method of the functional variant
    kwargs: dict[str, Any] = field(default_factory=dict)
    approx: bool = False


BINARY = [
    Op("add", dt.add, dt.add_, "add"),
    Op("add-alpha", dt.add, dt.add_, "add", {"alpha": 2}),
    Op("sub", dt.sub, dt.sub_, "sub"),
    Op("sub-alpha", dt.sub, dt.sub_, "sub", {"alpha": -3}),
    Op("mul", dt.mul, dt.mul_, "mul"),
    Op("div", dt.div, dt.div_, "div"),
    Op("div-trunc", dt.div, dt.div_, "div", {"rounding_mode": "trunc"}),
    Op("div-floor", dt.div, dt.div_, "div", {"rounding_mode": "floor"}),
    Op("remainder", dt.remainder, dt.remainder_, "remainder"),
    Op("pow", dt.pow, dt.pow_, "pow", approx=True),
    Op("maximum", dt.maximum, dt.maximum_, "maximum"),
    Op("minimum", dt.minimum, dt.minimum_, "minimum"),
    Op("eq", dt.eq, dt.eq_, "eq"),
    Op("ne", dt.ne, dt.ne_, "ne"),
    Op("lt", dt.lt, dt.lt_, "lt"),
    Op("le", dt.le, dt.le_, "le"),
    Op("gt", dt.gt, dt.gt_, "gt"),
    Op("ge", dt.ge, dt.ge_, "ge"),
    Op("logical_and", dt.logical_and, dt.logical_and_, "logical_and"),
    Op("logical_or", dt.logical_or, dt.logical_or_, "logical_or"),
    Op("logical_xor", dt.logical_xor, dt.logical_xor_, "logical_xor"),
]

UNARY = [
    Op("neg", dt.neg, dt.neg_, "neg"),
    Op("abs", dt.abs, dt.abs_, "abs", approx=True),
    Op("exp", dt.exp, dt.exp_, "exp", approx=True),
    Op("log", dt.log, dt.log_, "log", approx=True),
    Op("sqrt", dt.sqrt, dt.sqrt_, "sqrt", approx=True),
    Op("sin", dt.sin, dt.sin_, "sin", approx=True),
    Op("cos", dt.cos, dt.cos_, "cos", approx=True),
    Op("tanh", dt.tanh, dt.tanh_, "tanh", approx=True),
    Op("sigmoid", dt.sigmoid, dt.sigmoid_, "sigmoid", approx=True),
    Op("logical_not", dt.logical_not, dt.logical_not_, "logical_not"),
]

CLAMP = Op("clamp", dt.clamp, dt.clamp_, "clamp")


def _label(op: Op) -> str:
    return op.label


def draw_clamp(data: st.DataObject) -> tuple[list[Any], dict[str, Any]]:
    s_self, s_min, s_max = data.draw(broadcastable(3)).input_shapes
    t = draw_tensor(data, s_self, data.draw(dtypes))
    bounds: list[Any] = []
    for shape in (s_min, s_max):
        kind = data.draw(st.sampled_from(("none", "scalar", "tensor")))
        if kind == "tensor":
            bounds.append(draw_tensor(data, shape, data.draw(dtypes)))
        elif kind == "scalar":
            bounds.append(data.draw(python_scalars(t.dtype)))
        else:
            bounds.append(None)
    if data.draw(st.booleans()):
        return [t, *bounds], {}
    return [t], {"min": bounds[0], "max": bounds[1]}  # by keyword


# --- functional == out == inplace ----------------------------------------------------------------------------


def check_variants(data: st.DataObject, op: Op, args: list[Any], kwargs: dict[str, Any]) -> None:
    kwargs = {**op.kwargs, **kwargs}
    before = snapshot_tensors(args)
    try:
        functional = op.functional(*args, **kwargs)
    except ERRORS as e:
        assert_unchanged(before)
        check_rejected_everywhere(data, op, args, kwargs, type(e))
        return
    assert_unchanged(before)  # the functional variant writes no input
    assert functional.version == 0

    # The Tensor method is the functional variant.
    if isinstance(args[0], dt.Tensor):
        assert_same(getattr(args[0], op.method)(*args[1:], **kwargs), functional)

    check_out_variant(data, op, args, kwargs, functional)
    if isinstance(args[0], dt.Tensor):
        check_inplace_variant(data, op, args, kwargs, functional)


def check_out_variant(
    data: st.DataObject, op: Op, args: list[Any], kwargs: dict[str, Any], functional: dt.Tensor
) -> None:
    dtype = data.draw(dtypes)
    out = dt.from_numpy(noncontiguous_or_not(data, np.zeros(functional.shape, dtype=dtype)))
    before = snapshot_tensors([*args, out])
    inputs_before = snapshot_tensors(args, but=out)
    if not np.can_cast(functional.dtype, dtype, casting="same_kind"):
        with pytest.raises(TypeError, match=op.functional.__name__):
            op.functional(*args, **kwargs, out=out)
        assert_unchanged(before)
        return
    result = op.functional(*args, **kwargs, out=out)
    assert result is out
    assert out.version == 1
    assert out.dtype == dtype
    assert_cast_result(out, functional, op.approx)
    assert_unchanged(inputs_before)


def check_inplace_variant(
    data: st.DataObject, op: Op, args: list[Any], kwargs: dict[str, Any], functional: dt.Tensor
) -> None:
    self = copy_of(data, args[0])
    # ``a.add_(a)``: an input that *is* self stays self.
    rest = [self if a is args[0] else a for a in args[1:]]
    rest_kwargs = {k: self if v is args[0] else v for k, v in kwargs.items()}
    before = snapshot_tensors([self, *rest])
    others_before = snapshot_tensors(rest, but=self)
    if functional.shape != self.shape:
        with pytest.raises(ValueError, match=op.functional.__name__):
            op.inplace(self, *rest, **rest_kwargs)
        assert_unchanged(before)
    elif not np.can_cast(functional.dtype, self.dtype, casting="same_kind") or (
        op.functional.__name__ + "_" in rules.EXACT_DTYPE and functional.dtype != self.dtype  # (abs_ of complex)
    ):
        with pytest.raises(TypeError, match=op.functional.__name__):
            op.inplace(self, *rest, **rest_kwargs)
        assert_unchanged(before)
    else:
        result = op.inplace(self, *rest, **rest_kwargs)
        assert result is self
        assert self.version == 1
        assert self.dtype == args[0].dtype
        assert_cast_result(self, functional, op.approx)
        assert_unchanged(others_before)


def check_rejected_everywhere(
    data: st.DataObject, op: Op, args: list[Any], kwargs: dict[str, Any], error: type[Exception]
) -> None:
    """A call the functional variant rejects raises the same error with ``out=`` (an empty complex128 out
    takes any result dtype) and changes nothing; the inplace variant raises too (a data-dependent error may come
    after an inplace check of its own) and changes nothing."""
    out = dt.empty(0, dtype=dt.complex128)
    before = snapshot_tensors([*args, out])
    with pytest.raises(error):
        op.functional(*args, **kwargs, out=out)
    assert_unchanged(before)
    assert out.shape == (0,)
    if isinstance(args[0], dt.Tensor):
        self = copy_of(data, args[0])
        rest = [self if a is args[0] else a for a in args[1:]]
        before = snapshot_tensors([self, *rest])
        with pytest.raises(ERRORS):
            op.inplace(self, *rest, **kwargs)
        assert_unchanged(before)


@pytest.mark.parametrize("op", BINARY, ids=_label)
@given(data=st.data())
def test_binary_variants_agree(op: Op, data: st.DataObject) -> None:
    check_variants(data, op, draw_binary(data), {})


@pytest.mark.parametrize("op", UNARY, ids=_label)
@given(data=st.data())
def test_unary_variants_agree(op: Op, data: st.DataObject) -> None:
    check_variants(data, op, [draw_tensor(data, data.draw(shapes), data.draw(dtypes))], {})


@given(data=st.data())
def test_clamp_variants_agree(data: st.DataObject) -> None:
    args, kwargs = draw_clamp(data)
    check_variants(data, CLAMP, args, kwargs)


@given(data=st.data())
def test_where_functional_and_out_agree(data: st.DataObject) -> None:
    s_cond, s_self, s_other = data.draw(broadcastable(3)).input_shapes
    cond = draw_tensor(data, s_cond, np.dtype(np.bool_))
    x = draw_tensor(data, s_self, data.draw(dtypes))
    y: Any = draw_tensor(data, s_other, data.draw(dtypes)) if data.draw(st.booleans()) else 0.5
    functional = dt.where(cond, x, y)
    out_dtype = data.draw(dtypes)
    out = dt.from_numpy(noncontiguous_or_not(data, np.ones(functional.shape, dtype=out_dtype)))
    if np.can_cast(functional.dtype, out_dtype, casting="same_kind"):
        assert dt.where(cond, x, y, out=out) is out
        assert out.version == 1
        assert_cast_result(out, functional, approx=False)
    else:
        with pytest.raises(TypeError, match="where"):
            dt.where(cond, x, y, out=out)
        assert out.version == 0
        np.testing.assert_array_equal(out.numpy(), np.ones(functional.shape, dtype=out_dtype))


@given(data=st.data())
def test_an_out_that_is_an_input_gives_the_functional_result(data: st.DataObject) -> None:
    """``add(a, b, out=a)`` (exact aliasing) is legal for elementwise ops and equals the functional result."""
    op = data.draw(st.sampled_from(BINARY))
    shape = data.draw(shapes)
    dtype = data.draw(st.sampled_from([d for d in ALL_DTYPES if d.kind in "fc"]))
    a = draw_tensor(data, shape, dtype)
    b = draw_tensor(data, shape, dtype)
    try:
        functional = op.functional(a, b, **op.kwargs)
    except ERRORS:
        return
    if not np.can_cast(functional.dtype, dtype, casting="same_kind"):
        return
    target = data.draw(st.sampled_from(("self", "other")))
    out = a if target == "self" else b
    assert op.functional(a, b, **op.kwargs, out=out) is out
    assert out.version == 1
    assert_cast_result(out, functional, op.approx)


# --- Python operators and methods --------------------------------------------------------------------------------

BinaryExpr = Callable[[Any, Any], Any]

# (Operands of different layouts may take NumPy loops that differ in the last place for **: the comparison
# allows a tolerance there, as for transcendental ops.)
OPERATORS: list[tuple[str, BinaryExpr, BinaryExpr]] = [
    ("+", operator.add, dt.add),
    ("-", operator.sub, dt.sub),
    ("*", operator.mul, dt.mul),
    ("/", operator.truediv, dt.div),
    ("//", operator.floordiv, lambda a, b: dt.div(a, b, rounding_mode="floor")),
    ("%", operator.mod, dt.remainder),
    ("**", operator.pow, dt.pow),
    ("==", operator.eq, lambda a, b: binary_call("eq", a, b)),  # (2 == t: mirrored)
    ("!=", operator.ne, lambda a, b: binary_call("ne", a, b)),  # (2 != t: mirrored)
    ("<", operator.lt, lambda a, b: binary_call("lt", a, b)),  # (2 < t: mirrored)
    ("<=", operator.le, lambda a, b: binary_call("le", a, b)),  # (2 <= t: mirrored)
    (">", operator.gt, lambda a, b: binary_call("gt", a, b)),  # (2 > t: mirrored)
    (">=", operator.ge, lambda a, b: binary_call("ge", a, b)),  # (2 >= t: mirrored)
    ("&", operator.and_, dt.bitwise_and),
    ("|", operator.or_, dt.bitwise_or),
    ("^", operator.xor, dt.bitwise_xor),
    ("<<", operator.lshift, dt.bitwise_left_shift),
    (">>", operator.rshift, dt.bitwise_right_shift),
]

INPLACE_OPERATORS: list[tuple[str, BinaryExpr, BinaryExpr]] = [
    ("+=", operator.iadd, dt.add_),
    ("-=", operator.isub, dt.sub_),
    ("*=", operator.imul, dt.mul_),
    ("/=", operator.itruediv, dt.div_),
    ("//=", operator.ifloordiv, lambda a, b: dt.div_(a, b, rounding_mode="floor")),
    ("%=", operator.imod, dt.remainder_),
    ("**=", operator.ipow, dt.pow_),
    ("&=", operator.iand, dt.bitwise_and_),
    ("|=", operator.ior, dt.bitwise_or_),
    ("^=", operator.ixor, dt.bitwise_xor_),
    ("<<=", operator.ilshift, dt.bitwise_left_shift_),
    (">>=", operator.irshift, dt.bitwise_right_shift_),
]


@pytest.mark.parametrize(("symbol", "expr", "fn"), OPERATORS, ids=[o[0] for o in OPERATORS])
@given(data=st.data())
def test_operators_are_the_ops(symbol: str, expr: BinaryExpr, fn: BinaryExpr, data: st.DataObject) -> None:
    """``a + b`` is ``add(a, b)``, ``2 - a`` is ``sub(2, a)``, ``a // b`` is div floor, ``2 < a`` is ``gt(a, 2)``…
    (same values and dtype, or the same error)."""
    a, b = draw_binary(data)
    try:
        expected = fn(a, b)
    except ERRORS as e:
        with pytest.raises(type(e)):
            expr(a, b)
        return
    assert_same(expr(a, b), expected, approx=symbol == "**")


@pytest.mark.parametrize(("symbol", "expr", "fn"), INPLACE_OPERATORS, ids=[o[0] for o in INPLACE_OPERATORS])
@given(data=st.data())
def test_inplace_operators_are_the_inplace_variant(
    symbol: str, expr: BinaryExpr, fn: BinaryExpr, data: st.DataObject
) -> None:
    """``a += b`` is ``add_(a, b)``: it keeps ``a``'s identity, dtype and shape, bumps its version once, and
    raises (changing nothing) where the inplace variant does; it never falls back to ``a = a + b``."""
    a, b = draw_binary(data)
    if not isinstance(a, dt.Tensor):
        a, b = b, a
    assert isinstance(a, dt.Tensor)
    twin = copy_of(data, a)
    other_twin = twin if b is a else b
    other = a if b is a else b
    try:
        expected = fn(twin, other_twin)
    except ERRORS as e:
        before = snapshot(a)
        with pytest.raises(type(e)):
            expr(a, other)
        assert_unchanged(before)
        return
    assert expected is twin
    identity = a
    result = expr(a, other)
    assert result is identity
    assert a.version == 1
    assert_same(a, expected, approx=symbol == "**=")


@given(data=st.data())
def test_unary_operators_are_the_ops(data: st.DataObject) -> None:
    a = draw_tensor(data, data.draw(shapes), data.draw(dtypes))
    for expr, fn in ((operator.neg, dt.neg), (abs, dt.abs)):
        try:
            expected = fn(a)
        except ERRORS as e:
            with pytest.raises(type(e)):
                expr(a)
            continue
        assert_same(expr(a), expected)


# --- meta tensors ------------------------------------------------------------------------------------------------


def on_meta(x: Any) -> Any:
    return dt.empty(x.shape, dtype=x.dtype, device="meta") if isinstance(x, dt.Tensor) else x


def check_meta(data: st.DataObject, op: Op, args: list[Any], kwargs: dict[str, Any]) -> None:
    """The op on meta tensors: the CPU result's shape and dtype (or the CPU's error, when it does not depend on
    the data), no data; the out and inplace variants on meta tensors likewise."""
    kwargs = {**op.kwargs, **kwargs}
    meta_args = [on_meta(a) for a in args]
    meta_kwargs = {k: on_meta(v) for k, v in kwargs.items()}
    try:
        cpu = op.functional(*args, **kwargs)
    except ERRORS as e:
        if op.label == "pow" and isinstance(e, ValueError) and not isinstance(e, dt.ShapeError):
            return  # integers to negative powers: found in the data, which meta tensors do not have
        with pytest.raises(type(e)):
            op.functional(*meta_args, **meta_kwargs)
        return
    meta = op.functional(*meta_args, **meta_kwargs)
    assert meta.device == dt.Device("meta")
    assert meta.shape == cpu.shape
    assert meta.dtype == cpu.dtype
    with pytest.raises(RuntimeError):
        meta.numpy()

    dtype = data.draw(st.sampled_from([d for d in ALL_DTYPES if np.can_cast(cpu.dtype, d, casting="same_kind")]))
    out = dt.empty(cpu.shape, dtype=dtype, device="meta")
    assert op.functional(*meta_args, **meta_kwargs, out=out) is out
    assert out.shape == cpu.shape
    assert out.dtype == dtype

    self = meta_args[0]
    if isinstance(self, dt.Tensor):
        legal = cpu.shape == self.shape and np.can_cast(cpu.dtype, self.dtype, casting="same_kind")
        legal = legal and (op.functional.__name__ + "_" not in rules.EXACT_DTYPE or cpu.dtype == self.dtype)
        if legal:
            assert op.inplace(self, *meta_args[1:], **meta_kwargs) is self
            assert self.shape == args[0].shape
            assert self.dtype == args[0].dtype
        else:
            with pytest.raises(ERRORS):
                op.inplace(self, *meta_args[1:], **meta_kwargs)


@pytest.mark.parametrize("op", BINARY + UNARY + [CLAMP], ids=_label)
@given(data=st.data())
def test_meta_tensors_give_shape_and_dtype_without_data(op: Op, data: st.DataObject) -> None:
    if op is CLAMP:
        args, kwargs = draw_clamp(data)
    elif op in UNARY:
        args, kwargs = [draw_tensor(data, data.draw(shapes), data.draw(dtypes))], {}
    else:
        args, kwargs = draw_binary(data), {}
    check_meta(data, op, args, kwargs)


@given(data=st.data())
def test_meta_where(data: st.DataObject) -> None:
    s_cond, s_self, s_other = data.draw(broadcastable(3)).input_shapes
    cond = draw_tensor(data, s_cond, np.dtype(np.bool_))
    x = draw_tensor(data, s_self, data.draw(dtypes))
    y: Any = draw_tensor(data, s_other, data.draw(dtypes)) if data.draw(st.booleans()) else 0.5
    cpu = dt.where(cond, x, y)
    meta = dt.where(on_meta(cond), on_meta(x), on_meta(y))
    assert meta.device == dt.Device("meta")
    assert meta.shape == cpu.shape
    assert meta.dtype == cpu.dtype
    with pytest.raises(RuntimeError):
        meta.numpy()
