"""Property tests: the values and result dtypes of the elementwise family, with NumPy as the value reference.

Every op is run on hypothesis-drawn operands -- broadcasting shapes (0-d and zero-size included), every supported
dtype, non-contiguous views wrapped with ``dt.from_numpy`` and Python scalars on either side -- and its result is
compared with NumPy 2's for the same expression: the same dtype exactly, the same values (exactly, or within a
tolerance suited to the dtype for transcendental ops) and NaN in the same places. Where NumPy raises for a dtype
combination, devtensor raises the same standard exception, naming the op.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from helpers import call_with_numbers
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import devtensor as dt
from devtensor.errors import ArgumentTypeError
from devtensor.numpy_values import binary_call
from devtensor.tensor import Tensor

Array = npt.NDArray[Any]
Scalar = bool | int | float | complex
Operand = dt.Tensor | Scalar

# NumPy warns (RuntimeWarning) on overflow, division by zero and invalid values; so does devtensor, which calls it.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BOOL = [np.dtype(np.bool_)]
SIGNED = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UNSIGNED = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
FLOATS = [np.dtype(t) for t in (np.float16, np.float32, np.float64)]
COMPLEX = [np.dtype(t) for t in (np.complex64, np.complex128)]
ALL_DTYPES = BOOL + SIGNED + UNSIGNED + FLOATS + COMPLEX

MAX_SIDE = 4
MAX_DIMS = 3


# --- strategies ---------------------------------------------------------------------------------------------

shapes = hnp.array_shapes(min_dims=0, max_dims=MAX_DIMS, min_side=0, max_side=MAX_SIDE)
dtypes = st.sampled_from(ALL_DTYPES)
LAYOUTS = ("contiguous", "transposed", "strided", "reversed")


def draw_operand(data: st.DataObject, shape: tuple[int, ...], dtype: np.dtype[Any]) -> tuple[dt.Tensor, Array]:
    """A tensor of ``shape`` and ``dtype`` wrapping a NumPy array (zero-copy, often a non-contiguous view),
    and a contiguous copy of the same values for the reference."""
    layout = data.draw(st.sampled_from(LAYOUTS)) if shape else "contiguous"
    if layout == "transposed":
        view = data.draw(hnp.arrays(dtype, shape[::-1])).T
    elif layout == "strided":
        view = data.draw(hnp.arrays(dtype, (*shape[:-1], 2 * shape[-1])))[..., ::2]
    elif layout == "reversed":
        view = data.draw(hnp.arrays(dtype, shape))[..., ::-1]
    else:
        view = data.draw(hnp.arrays(dtype, shape))
    assert view.shape == shape
    return dt.from_numpy(view), view.copy()


def int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The Python ints a scalar may take beside a tensor of ``dtype`` without leaving the range of the integer
    dtype it meets (that of an integer tensor; int64 for a bool tensor; floats take any int, kept moderate)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    return -(2**31), 2**31


def python_scalars(beside: np.dtype[Any]) -> st.SearchStrategy[Scalar]:
    lo, hi = int_range(beside)
    return st.one_of(
        st.booleans(),
        st.integers(lo, hi),
        st.floats(allow_nan=True, allow_infinity=True),
        st.complex_numbers(allow_nan=True, allow_infinity=True),
    )


def draw_binary_operands(data: st.DataObject) -> tuple[Operand, Operand, Any, Any]:
    """(self, other) for devtensor and the same two for NumPy: tensor-tensor, tensor-scalar or scalar-tensor."""
    form = data.draw(st.sampled_from(("tensor-tensor", "tensor-scalar", "scalar-tensor")))
    if form == "tensor-tensor":
        s1, s2 = data.draw(
            hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=MAX_DIMS, min_side=0, max_side=MAX_SIDE)
        ).input_shapes
        a, a_np = draw_operand(data, s1, data.draw(dtypes))
        b, b_np = draw_operand(data, s2, data.draw(dtypes))
        return a, b, a_np, b_np
    t, t_np = draw_operand(data, data.draw(shapes), data.draw(dtypes))
    s = data.draw(python_scalars(t.dtype))
    return (t, s, t_np, s) if form == "tensor-scalar" else (s, t, s, t_np)


# --- comparison with the reference ---------------------------------------------------------------------------


def tolerances(dtype: np.dtype[Any]) -> tuple[float, float]:
    """(rtol, atol) for a transcendental op's result of ``dtype``: a few units in the last place, and a few of
    the smallest subnormal near zero."""
    info = np.finfo(dtype)
    return 8 * float(info.eps), 8 * float(info.smallest_subnormal)


def assert_matches(result: dt.Tensor, expected: Array, approx: bool) -> None:
    """``result`` has ``expected``'s dtype and shape exactly, and its values (exactly, or within the dtype's
    tolerance when ``approx``), with NaN at the same places. Complex results always get the tolerance: complex
    multiplication and division are not correctly rounded, and NumPy's loops for contiguous and strided operands
    may differ in the last place."""
    assert isinstance(result, dt.Tensor)
    assert result.dtype == expected.dtype, f"dtype {result.dtype}, NumPy gives {expected.dtype}"
    assert result.shape == expected.shape, f"shape {result.shape}, NumPy gives {expected.shape}"
    actual = result.numpy()
    if (approx and expected.dtype.kind == "f") or expected.dtype.kind == "c":
        rtol, atol = tolerances(expected.dtype)
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected, strict=True)


def numpy_error(reference: Callable[[], Any]) -> tuple[Array | None, type[Exception] | None]:
    """NumPy's result as an array, or the standard exception type NumPy raises instead."""
    try:
        return np.asarray(reference()), None
    except OverflowError:
        return None, OverflowError
    except TypeError:
        return None, TypeError
    except ValueError:
        return None, ValueError


def check_against_numpy(
    name: str, call: Callable[[], dt.Tensor], reference: Callable[[], Any], approx: bool = False
) -> None:
    expected, error = numpy_error(reference)
    if error is not None:
        match = rf"\b{re.escape(name)}\b" if error is TypeError else None
        with pytest.raises(error, match=match):
            call()
        return
    assert expected is not None
    assert_matches(call(), expected, approx)


# --- references NumPy has no single function for -------------------------------------------------------------


def trunc_divide(a: Any, b: Any) -> Array:
    """Division rounded toward zero; integer results exactly (Python ints, wrapped into the dtype as NumPy's
    integer arithmetic wraps; division by zero gives 0 as NumPy's integer floor_divide), floats as trunc(a / b)."""
    floor = np.asarray(np.floor_divide(a, b))  # raises as NumPy does, and gives the result dtype
    dtype = floor.dtype
    if dtype.kind not in "iu":
        return np.asarray(np.trunc(np.true_divide(a, b))).astype(dtype)
    x, y = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    modulus = 1 << (8 * dtype.itemsize)
    lowest = int(np.iinfo(dtype).min)

    def quotient(p: int, d: int) -> int:
        if d == 0:
            return 0
        q = abs(p) // abs(d)
        if (p < 0) != (d < 0):
            q = -q
        return int((q - lowest) % modulus + lowest)  # int(): NumPy ints here on some NumPy versions

    values = [quotient(int(p), int(d)) for p, d in zip(x.ravel().tolist(), y.ravel().tolist(), strict=True)]
    return np.array(values, dtype=dtype).reshape(floor.shape)


def sigmoid_reference(x: Array) -> Array:
    """1 / (1 + exp(-x)) in float64 (exp(x) / (1 + exp(x)) for x < 0, so tiny results keep their precision),
    rounded to the dtype np.exp gives for x; complex inputs in their own precision."""
    dtype = np.exp(x).dtype
    if dtype.kind == "c":
        z = x.astype(dtype)
        return np.asarray(np.divide(1, np.add(1, np.exp(np.negative(z)))))
    v = x.astype(np.float64)
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1 / (1 + e), e / (1 + e)).astype(dtype)


# --- the ops ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """An op's devtensor function (functional variant) with its keyword arguments and its NumPy reference."""

    label: str
    name: str  # the op name errors mention
    fn: Callable[..., dt.Tensor]
    ref: Callable[..., Any]
    approx: bool = False
    kwargs: dict[str, Any] = field(default_factory=dict)


def floor_divide_reference(a: Any, b: Any) -> Any:
    """NumPy's floor_divide, except where exactly one float operand is infinite: the Array API standard's
    ``floor(a / b)`` (devtensor's ``div(..., rounding_mode="floor")`` documents it)."""
    result = np.floor_divide(a, b)
    if np.asarray(result).dtype.kind != "f":
        return result
    with np.errstate(all="ignore"):
        return np.where(np.isinf(a) ^ np.isinf(b), np.floor(np.true_divide(a, b)), result)


BINARY = [
    Case("add", "add", dt.add, np.add),
    Case("sub", "sub", dt.sub, np.subtract),
    Case("mul", "mul", dt.mul, np.multiply),
    Case("div", "div", dt.div, np.true_divide),
    Case("div-trunc", "div", dt.div, trunc_divide, kwargs={"rounding_mode": "trunc"}),
    Case("div-floor", "div", dt.div, floor_divide_reference, kwargs={"rounding_mode": "floor"}),
    Case("remainder", "remainder", dt.remainder, np.remainder),
    Case("pow", "pow", dt.pow, np.power, approx=True),
    Case("maximum", "maximum", dt.maximum, np.maximum),
    Case("minimum", "minimum", dt.minimum, np.minimum),
    Case("eq", "eq", dt.eq, np.equal),
    Case("ne", "ne", dt.ne, np.not_equal),
    Case("lt", "lt", dt.lt, np.less),
    Case("le", "le", dt.le, np.less_equal),
    Case("gt", "gt", dt.gt, np.greater),
    Case("ge", "ge", dt.ge, np.greater_equal),
    Case("logical_and", "logical_and", dt.logical_and, np.logical_and),
    Case("logical_or", "logical_or", dt.logical_or, np.logical_or),
    Case("logical_xor", "logical_xor", dt.logical_xor, np.logical_xor),
    Case("bitwise_and", "bitwise_and", dt.bitwise_and, np.bitwise_and),
    Case("bitwise_or", "bitwise_or", dt.bitwise_or, np.bitwise_or),
    Case("bitwise_xor", "bitwise_xor", dt.bitwise_xor, np.bitwise_xor),
    Case("bitwise_left_shift", "bitwise_left_shift", dt.bitwise_left_shift, np.left_shift),
    Case("bitwise_right_shift", "bitwise_right_shift", dt.bitwise_right_shift, np.right_shift),
]

UNARY = [
    Case("neg", "neg", dt.neg, np.negative),
    # abs of complex is hypot: NumPy's strided and contiguous loops may differ in the last place.
    Case("abs", "abs", dt.abs, np.absolute, approx=True),
    Case("exp", "exp", dt.exp, np.exp, approx=True),
    Case("log", "log", dt.log, np.log, approx=True),
    Case("sqrt", "sqrt", dt.sqrt, np.sqrt, approx=True),
    Case("sin", "sin", dt.sin, np.sin, approx=True),
    Case("cos", "cos", dt.cos, np.cos, approx=True),
    Case("tanh", "tanh", dt.tanh, np.tanh, approx=True),
    Case("sigmoid", "sigmoid", dt.sigmoid, sigmoid_reference, approx=True),
    Case("logical_not", "logical_not", dt.logical_not, np.logical_not),
    Case("bitwise_not", "bitwise_not", dt.bitwise_not, np.invert),
    Case("positive", "positive", dt.positive, np.positive),
]


def _label(case: Case) -> str:
    return case.label


@pytest.mark.parametrize("case", BINARY, ids=_label)
@given(data=st.data())
def test_binary_op_matches_numpy(case: Case, data: st.DataObject) -> None:
    a, b, a_np, b_np = draw_binary_operands(data)
    check_against_numpy(
        case.name,
        lambda: call_with_numbers(case.name, case.fn, a, b, **case.kwargs),
        lambda: case.ref(a_np, b_np),
        case.approx,
    )
    # The functional variant never writes its inputs.
    for t, t_np in ((a, a_np), (b, b_np)):
        if isinstance(t, dt.Tensor):
            np.testing.assert_array_equal(t.numpy(), t_np, strict=True)
            assert t.version == 0


@pytest.mark.parametrize("case", UNARY, ids=_label)
@given(data=st.data())
def test_unary_op_matches_numpy(case: Case, data: st.DataObject) -> None:
    a, a_np = draw_operand(data, data.draw(shapes), data.draw(dtypes))
    check_against_numpy(case.name, lambda: case.fn(a), lambda: case.ref(a_np), case.approx)
    np.testing.assert_array_equal(a.numpy(), a_np, strict=True)


def optional_bound(data: st.DataObject, shape: tuple[int, ...], beside: np.dtype[Any]) -> tuple[Any, Any]:
    """A clamp bound: None, a Python scalar, or a tensor of ``shape`` (devtensor's and NumPy's forms)."""
    kind = data.draw(st.sampled_from(("none", "scalar", "tensor")))
    if kind == "none":
        return None, None
    if kind == "scalar":
        s = data.draw(python_scalars(beside))
        return s, s
    return draw_operand(data, shape, data.draw(dtypes))


@given(data=st.data())
def test_clamp_matches_numpy_clip(data: st.DataObject) -> None:
    s_self, s_min, s_max = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=MAX_DIMS, min_side=0, max_side=MAX_SIDE)
    ).input_shapes
    a, a_np = draw_operand(data, s_self, data.draw(dtypes))
    lo, lo_np = optional_bound(data, s_min, a.dtype)
    hi, hi_np = optional_bound(data, s_max, a.dtype)
    if lo is None and hi is None:
        with pytest.raises(ValueError, match="clamp"):
            dt.clamp(a)
        return
    check_against_numpy("clamp", lambda: dt.clamp(a, lo, hi), lambda: np.clip(a_np, lo_np, hi_np))


@pytest.mark.parametrize(
    ("a", "lo", "hi"),
    [
        # a Python int bound at self's own limit is dropped, as np.clip drops it, even where the result dtype
        # (int16, from the tensor bound) could hold more: the min > max elements keep min
        (np.array([0, 7], np.uint8), np.array([256, 3], np.int16), 255),
        (np.array([0, 100], np.int8), np.array([300, 5], np.int16), 200),
        (np.array([0, 100], np.int8), -128, np.array([-300, 50], np.int16)),
        # complex bounds with a NaN imaginary part: np.clip's own loop keeps the value
        (np.array([1 + 2j, 3 - 1j]), np.array([complex(0, np.nan)]), np.array([1 + 2j])),
        (np.array([1 + 2j, 3 - 1j], np.complex64), complex(0, np.nan), 3 - 1j),
    ],
)
def test_clamp_edge_bounds_match_numpy_clip(a: Any, lo: Any, hi: Any) -> None:
    def t(v: Any) -> Any:
        return dt.tensor(v) if isinstance(v, np.ndarray) else v

    check_against_numpy("clamp", lambda: dt.clamp(t(a), t(lo), t(hi)), lambda: np.clip(a, lo, hi))
    out = dt.empty(np.broadcast_shapes(*(np.shape(v) for v in (a, lo, hi))), dtype=np.clip(a, lo, hi).dtype)
    dt.clamp(t(a), t(lo), t(hi), out=out)
    np.testing.assert_array_equal(out.numpy(), np.clip(a, lo, hi))


@given(data=st.data())
def test_where_matches_numpy(data: st.DataObject) -> None:
    s_cond, s_self, s_other = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=MAX_DIMS, min_side=0, max_side=MAX_SIDE)
    ).input_shapes
    cond, cond_np = draw_operand(data, s_cond, np.dtype(np.bool_))
    x_tensor, y_tensor = data.draw(st.booleans()), data.draw(st.booleans())
    x_dtype, y_dtype = data.draw(dtypes), data.draw(dtypes)
    # A Python int meets the other operand's dtype, or int64 when both are Python numbers.
    beside = x_dtype if x_tensor else y_dtype if y_tensor else np.dtype(np.int64)
    x: Any
    y: Any
    x_np: Any
    y_np: Any
    if x_tensor:
        x, x_np = draw_operand(data, s_self, x_dtype)
    else:
        x = x_np = data.draw(python_scalars(beside))
    if y_tensor:
        y, y_np = draw_operand(data, s_other, y_dtype)
    else:
        y = y_np = data.draw(python_scalars(beside))
    check_against_numpy("where", lambda: dt.where(cond, x, y), lambda: np.where(cond_np, x_np, y_np))


@given(data=st.data())
def test_where_condition_must_be_bool(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(ALL_DTYPES[1:]))
    cond, _ = draw_operand(data, data.draw(shapes), dtype)
    with pytest.raises(TypeError, match="where"):
        dt.where(cond, 1, 0)


# --- add and sub with alpha -----------------------------------------------------------------------------------


def alphas(result: np.dtype[Any]) -> st.SearchStrategy[Scalar]:
    """Values of ``alpha`` legal for a result dtype (PyTorch's rule: bool for bool and only there, no float for
    integers, no complex for real results); ints within the result's range."""
    lo, hi = int_range(result) if result.kind in "iu" else (-1000, 1000)
    ints: st.SearchStrategy[Scalar] = st.integers(lo, hi)
    floats = st.floats(-1e3, 1e3)
    if result.kind == "b":
        return st.booleans()
    if result.kind in "iu":
        return ints
    if result.kind == "f":
        return st.one_of(ints, floats)
    return st.one_of(ints, floats, st.complex_numbers(max_magnitude=1e3))


def scaled_reference(ufunc: np.ufunc, a: Any, b: Any, alpha: Scalar) -> Array:
    """``a ufunc alpha * b``: a tensor ``b`` is scaled in the result dtype (PyTorch's semantics); a Python
    scalar ``b`` is scaled in Python and stays weak (bool and bool stay bool); a real ``alpha == 1`` is no
    scaling."""
    result = np.asarray(ufunc(a, b)).dtype
    if alpha == 1 and type(alpha) is not complex:
        scaled: Any = b  # no multiplication at all (it would turn inf * 0j into nan)
    elif isinstance(b, np.ndarray):
        scaled = np.multiply(b.astype(result), alpha, dtype=result)
    elif type(b) is bool and type(alpha) is bool:
        scaled = b and alpha
    else:
        scaled = b * alpha
    return np.asarray(ufunc(a, scaled)).astype(result)


@pytest.mark.parametrize(
    ("name", "fn", "ufunc"), [("add", dt.add, np.add), ("sub", dt.sub, np.subtract)], ids=["add", "sub"]
)
@given(data=st.data())
def test_alpha_scales_other_in_the_result_dtype(
    name: str, fn: Callable[..., dt.Tensor], ufunc: np.ufunc, data: st.DataObject
) -> None:
    a, b, a_np, b_np = draw_binary_operands(data)
    try:
        result = np.asarray(ufunc(a_np, b_np)).dtype
    except TypeError:
        with pytest.raises(TypeError, match=name):
            fn(a, b, alpha=2)
        return
    alpha = data.draw(alphas(result))
    if isinstance(b, (bool, int)) and isinstance(alpha, int) and result.kind in "iu":
        lo, hi = int_range(result)
        if not lo <= b * alpha <= hi:
            with pytest.raises(OverflowError, match=name):
                fn(a, b, alpha=alpha)
            return
    check_against_numpy(name, lambda: fn(a, b, alpha=alpha), lambda: scaled_reference(ufunc, a_np, b_np, alpha), True)


@pytest.mark.parametrize("fn", [dt.add, dt.sub], ids=["add", "sub"])
@pytest.mark.parametrize(
    ("dtype", "alpha"),
    [
        (np.int32, 1.5),
        (np.uint8, 2.0),
        (np.float32, 1j),
        (np.float64, 2j),
        (np.bool_, 2),
        (np.int8, 1 + 0j),
        (np.int64, True),
        (np.float32, False),
        (np.complex64, True),
    ],
)
def test_alpha_of_the_wrong_kind_is_a_type_error(fn: Callable[..., dt.Tensor], dtype: type, alpha: Scalar) -> None:
    a = dt.ones(3, dtype=dtype)
    # sub of bools is an error of its own, whatever alpha.
    with pytest.raises(TypeError, match="sub" if dtype is np.bool_ and fn is dt.sub else "alpha"):
        fn(a, a, alpha=alpha)


# --- Python int scalars out of range, pow's negative exponents -------------------------------------------------

# Ops whose Python int operand meets the integer dtype of an integer tensor (true division and the logical ops
# convert it to float64 and bool instead).
RANGE_CHECKED: list[tuple[str, Callable[[dt.Tensor, int], dt.Tensor]]] = [
    ("add", dt.add),
    ("sub", dt.sub),
    ("mul", dt.mul),
    ("div", lambda t, s: dt.div(t, s, rounding_mode="floor")),
    ("div", lambda t, s: dt.div(t, s, rounding_mode="trunc")),
    ("remainder", dt.remainder),
    ("pow", dt.pow),
    # (PyTorch's maximum/minimum take no Python number: NumPy's form, binary_call, range-checks it)
    ("maximum", lambda t, s: binary_call("maximum", t, s)),
    ("minimum", lambda t, s: binary_call("minimum", t, s)),
    # (clamp's bounds follow np.clip >= 2.1: beyond the range on their own side they clip nothing; see
    # tests/test_value_rules.py)
    ("where", lambda t, s: dt.where(dt.ones(t.shape, dtype=dt.bool), t, s)),
]


@pytest.mark.parametrize(("name", "fn"), RANGE_CHECKED, ids=[f"{n}-{i}" for i, (n, _) in enumerate(RANGE_CHECKED)])
@given(dtype=st.sampled_from(SIGNED + UNSIGNED), above=st.booleans(), by=st.integers(1, 2**70))
def test_python_int_out_of_range_is_an_overflow_error(
    name: str, fn: Callable[[dt.Tensor, int], dt.Tensor], dtype: np.dtype[Any], above: bool, by: int
) -> None:
    lo, hi = int_range(dtype)
    value = hi + by if above else lo - by
    t = dt.ones(2, dtype=dtype)
    with pytest.raises(OverflowError, match=name):
        fn(t, value)
    if name not in ("where", "div"):
        with pytest.raises(OverflowError, match=name):
            fn(value, t)  # type: ignore[arg-type]


COMPARISONS = [
    (dt.eq, np.equal),
    (dt.ne, np.not_equal),
    (dt.lt, np.less),
    (dt.le, np.less_equal),
    (dt.gt, np.greater),
    (dt.ge, np.greater_equal),
]


@pytest.mark.parametrize(("fn", "ufunc"), COMPARISONS, ids=[u.__name__ for _, u in COMPARISONS])
@given(dtype=st.sampled_from(SIGNED + UNSIGNED), above=st.booleans(), by=st.integers(1, 2**70))
def test_comparison_with_an_out_of_range_python_int_follows_numpy(
    fn: Callable[..., dt.Tensor], ufunc: np.ufunc, dtype: np.dtype[Any], above: bool, by: int
) -> None:
    # NumPy 2 compares Python ints exactly, whatever the integer dtype they meet.
    lo, hi = int_range(dtype)
    value = hi + by if above else lo - by
    data = np.array([lo, 0, hi], dtype=dtype)
    t = dt.from_numpy(data)
    np.testing.assert_array_equal(fn(t, value).numpy(), ufunc(data, value))
    # (the number first is NumPy's form, not PyTorch's: binary_call mirrors it)
    np.testing.assert_array_equal(binary_call(fn.__name__, value, t).numpy(), ufunc(value, data))
    with pytest.raises(ArgumentTypeError, match=rf"{fn.__name__}: argument 'self' must be a tensor"):
        fn(value, t)


@pytest.mark.parametrize(
    ("fn", "ufunc"),
    [
        (dt.logical_and, np.logical_and),
        (dt.logical_or, np.logical_or),
        (dt.logical_xor, np.logical_xor),
        (dt.div, np.true_divide),
    ],
)
@pytest.mark.parametrize("value", [-1, 1000, -(2**63), 2**64])  # NumPy raises OverflowError past int64
def test_python_int_out_of_range_meets_no_integer_dtype_in_logical_ops_and_true_division(
    fn: Callable[..., dt.Tensor], ufunc: np.ufunc, value: int
) -> None:
    a_np = np.array([0, 1, 255], dtype=np.uint8)
    name = fn.__name__
    check_against_numpy(
        name, lambda: call_with_numbers(name, fn, dt.from_numpy(a_np), value), lambda: ufunc(a_np, value)
    )


@given(
    base=st.sampled_from(BOOL + SIGNED + UNSIGNED),
    exponent=st.sampled_from(SIGNED),
    data=st.data(),
)
def test_pow_integer_results_with_negative_exponents_raise_and_write_nothing(
    base: np.dtype[Any], exponent: np.dtype[Any], data: st.DataObject
) -> None:
    result = np.result_type(base, exponent)
    a = dt.from_numpy(np.ones(3, dtype=base))
    b = dt.from_numpy(np.array([1, -1, 2], dtype=exponent))
    if result.kind not in "iu":  # uint64 with a signed exponent gives float64: negative exponents are fine
        assert_matches(dt.pow(a, b), np.power(a.numpy(), b.numpy()), approx=True)
        return
    with pytest.raises(ValueError, match="pow"):
        dt.pow(a, b)
    out = dt.from_numpy(np.full(3, 7, dtype=result))
    with pytest.raises(ValueError, match="pow"):
        dt.pow(a, b, out=out)
    assert out.version == 0
    np.testing.assert_array_equal(out.numpy(), np.full(3, 7, dtype=result))
    if result == base:
        with pytest.raises(ValueError, match="pow"):
            dt.pow_(a, b)
        assert a.version == 0
        np.testing.assert_array_equal(a.numpy(), np.ones(3, dtype=base))
    with pytest.raises(ValueError, match="pow"):
        dt.pow(2, b)
    negative = -data.draw(st.integers(1, 100))
    # A Python int meets the base's dtype: a negative one is out of range of an unsigned base.
    with pytest.raises(OverflowError if base.kind == "u" else ValueError, match="pow"):
        dt.pow(a, negative)


# --- fixed edge cases: every op on 0-d and zero-size operands -----------------------------------------------------

EDGE_SHAPES = [((), ()), ((0,), ()), ((0, 3), (3,)), ((2, 0), (1, 1)), ((), (0, 2)), ((1, 0, 2), (3, 1, 1))]


@pytest.mark.parametrize("case", BINARY + UNARY, ids=_label)
@pytest.mark.parametrize(("s1", "s2"), EDGE_SHAPES)
@pytest.mark.parametrize("dtype", [np.dtype(np.int16), np.dtype(np.float32)], ids=str)
def test_zero_dim_and_zero_size(case: Case, s1: tuple[int, ...], s2: tuple[int, ...], dtype: np.dtype[Any]) -> None:
    a_np = np.asarray(np.arange(1, 1 + int(np.prod(s1)), dtype=dtype).reshape(s1))
    b_np = np.full(s2, 2, dtype=dtype)
    a, b = dt.from_numpy(a_np), dt.from_numpy(b_np)
    if case in UNARY:
        check_against_numpy(case.name, lambda: case.fn(a), lambda: case.ref(a_np), case.approx)
    else:
        check_against_numpy(
            case.name,
            lambda: call_with_numbers(case.name, case.fn, a, b, **case.kwargs),
            lambda: case.ref(a_np, b_np),
            case.approx,
        )


# --- fixed cases that once went wrong -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("self", "lo", "hi"),
    [
        (np.array([1, 50, -100], np.int8), 1000, np.array([2000], np.int16)),  # the int meets int16, not int8
        (np.array([1, 50, -100], np.int8), np.array([-3], np.int16), 1000),
        (np.array([True, False]), 0, np.array([1], np.uint8)),  # bool with 0 alone would be int64
        (np.array([0, 7, 255], np.uint8), -5, np.array([300], np.int16)),
        (np.array([1.5, -2.0], np.float16), np.array([0], np.int8), 1.0),
    ],
)
def test_clamp_promotes_all_three_operands_as_clip(self: Array, lo: Any, hi: Any) -> None:
    def on(x: Any) -> Any:
        return dt.from_numpy(x) if isinstance(x, np.ndarray) else x

    assert_matches(dt.clamp(on(self), on(lo), on(hi)), np.asarray(np.clip(self, lo, hi)), approx=False)


@pytest.mark.parametrize(
    ("x", "dtype"), [([-40.0, -700.0, -1e-20, 36.0, 800.0], np.float64), ([-12.0, -16.0, 9.0], np.float16)]
)
def test_sigmoid_keeps_relative_precision_of_tiny_results(x: list[float], dtype: type) -> None:
    a: Array = np.array(x, dtype=dtype)
    assert_matches(dt.sigmoid(dt.from_numpy(a)), sigmoid_reference(a), approx=True)
    assert dt.sigmoid(dt.from_numpy(a)).numpy()[0] > 0


def test_alpha_other_is_scaled_in_the_result_dtype() -> None:
    f = dt.tensor([1.0, 2.0], dtype=dt.float32)
    i8 = dt.tensor([100, -100], dtype=dt.int8)
    np.testing.assert_array_equal(dt.add(f, i8, alpha=2).numpy(), np.array([201, -198], np.float32))
    np.testing.assert_array_equal(dt.sub(f, i8, alpha=1000).numpy(), np.array([-99999, 100002], np.float32))
    np.testing.assert_array_equal(dt.sub(i8, dt.tensor([True, False]), alpha=0).numpy(), i8.numpy())
    b = dt.tensor([True, False])
    assert dt.add(b, True, alpha=False).tolist() == [True, False]


def test_uint64_to_a_signed_power_is_float() -> None:
    a, b = np.array([2, 4], np.uint64), np.array([-1, -2], np.int64)
    assert_matches(dt.pow(dt.from_numpy(a), dt.from_numpy(b)), np.power(a, b), approx=True)


# --- comparisons with out-of-range Python ints raise where NumPy 2 answers ----------------------------------


@pytest.mark.parametrize(
    "dtype, op, value",
    [
        (dt.uint8, "eq", -1),
        (dt.uint8, "lt", 300),
        (dt.int8, "gt", -1000),
        (dt.int64, "ne", 2**70),
        (dt.uint64, "le", -2),
    ],
    ids=["uint8==-1", "uint8<300", "int8>-1000", "int64!=2**70", "uint64<=-2"],
)
def test_comparison_with_out_of_range_python_int_follows_numpy(dtype: Any, op: str, value: int) -> None:
    data = np.array([1, 2], dtype=dtype)
    ufunc = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater}[op]
    expected = ufunc(data, value)  # NumPy 2: a correct bool array, no OverflowError
    result = getattr(dt, op)(dt.from_numpy(data), value)  # once ScalarOverflowError
    assert result.dtype == dt.bool
    assert result.tolist() == expected.tolist()


# --- t == numpy_scalar silently returns False --------------------------------------------------------------


@pytest.mark.parametrize("scalar", [np.float64(1.0), np.int64(1), np.float32(1.0)])
def test_eq_with_a_numpy_scalar_is_elementwise_or_an_error(scalar: Any) -> None:
    t = dt.tensor([1.0, 2.0])  # `t < scalar` raises ArgumentTypeError; `t == scalar` must not be silently False
    try:
        result: Any = t == scalar
    except TypeError:
        return
    # once == falls back to identity and returns the Python bool False
    assert isinstance(result, Tensor)
    assert result.tolist() == [True, False]


_CLOSE_VALUES = st.sampled_from([0.0, 1.0, 1.0 + 1e-9, 1.0 + 1e-5, -1.0, 1e-9, np.inf, -np.inf, np.nan, 100.0, 100.001])


@given(
    hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=4), elements=_CLOSE_VALUES),
    st.sampled_from([np.float64, np.float32, np.int64, np.bool_]),
    st.sampled_from([0.0, 1e-5, 1e-3]),
    st.sampled_from([0.0, 1e-8, 0.5]),
    st.booleans(),
)
def test_isclose_and_allclose_match_numpy(
    a: npt.NDArray[Any], other_dtype: Any, rtol: float, atol: float, equal_nan: bool
) -> None:
    b = np.roll(a, 1)
    if np.dtype(other_dtype).kind in "ib":
        b = np.nan_to_num(b, nan=0.0, posinf=7.0, neginf=-7.0).astype(other_dtype)
    got = dt.isclose(dt.tensor(a), dt.tensor(b), rtol, atol, equal_nan)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got.numpy(), np.isclose(a, b, rtol, atol, equal_nan))
    assert dt.allclose(dt.tensor(a), dt.tensor(b), rtol, atol, equal_nan) is bool(
        np.allclose(a, b, rtol, atol, equal_nan)
    )
    assert dt.tensor(a).allclose(dt.tensor(b), rtol, atol, equal_nan) is bool(np.allclose(a, b, rtol, atol, equal_nan))


def test_isclose_checks_its_tolerances() -> None:
    t = dt.tensor([1.0])
    with pytest.raises(ValueError, match=r"isclose.*rtol"):
        dt.isclose(t, t, rtol=-1.0)
    with pytest.raises(ValueError, match=r"isclose.*atol"):
        dt.isclose(t, t, atol=float("nan"))
    with pytest.raises(TypeError, match=r"isclose.*atol"):
        dt.isclose(t, t, atol="0")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"isclose.*equal_nan"):
        dt.isclose(t, t, equal_nan=1)  # type: ignore[arg-type]
