"""Property tests: the values and result dtypes of the math ufuncs (``devtensor.kernels.math_ufuncs``), with NumPy
as the reference: hypothesis-drawn operands of every dtype, broadcasting shapes, non-contiguous views and Python
scalars (the strategies of ``tests/test_elementwise_values.py``); the same dtype and values as NumPy 2, NaN at the
same places, the same standard exception where NumPy raises. Plus the PyTorch rules NumPy does not decide: which
ops have an inplace variant, and ``float_power``'s float64/complex128 result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import call_with_numbers
from hypothesis import given
from hypothesis import strategies as st
from op_samples import MATH_BINARY, MATH_UNARY
from test_elementwise_values import check_against_numpy, draw_binary_operands, draw_operand, dtypes, shapes

import devtensor as dt
from devtensor.numpy_values import binary_call

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# Ops whose values are exact (rounding, sign, classification, integer arithmetic, nextafter); the others are
# transcendental and compared within a few units in the last place.
EXACT = {"floor", "ceil", "trunc", "sign", "isnan", "isinf", "isfinite", "signbit", "copysign", "nextafter", "fmod"}


def _expm1_reference(a: Any) -> Any:
    """NumPy's expm1, with the Array API standard's values (``exp(z) - 1``, C99's cexp special cases) for complex
    elements with an infinite or NaN part and complex zeros, which devtensor's expm1 documents."""
    result = np.expm1(a)
    if np.asarray(a).dtype.kind == "c":
        special = ~np.isfinite(a) | (a == 0)
        with np.errstate(all="ignore"):
            result = np.where(special, np.exp(a) - 1, result).astype(result.dtype)
    return result


#: The reference of an op whose documented values differ from its NumPy ufunc's on some inputs.
REFERENCE: dict[str, Any] = {"expm1": _expm1_reference}

UNARY = [(name, REFERENCE.get(name, ufunc)) for name, ufunc, *_ in MATH_UNARY]
BINARY = [(name, ufunc) for name, ufunc, *_ in MATH_BINARY]


@pytest.mark.parametrize(("name", "ufunc"), UNARY, ids=[n for n, _ in UNARY])
@given(data=st.data())
def test_unary_math_op_matches_numpy(name: str, ufunc: np.ufunc, data: st.DataObject) -> None:
    a, a_np = draw_operand(data, data.draw(shapes), data.draw(dtypes))
    fn = getattr(dt, name)
    check_against_numpy(name, lambda: fn(a), lambda: ufunc(a_np), approx=name not in EXACT)
    np.testing.assert_array_equal(a.numpy(), a_np, strict=True)  # the functional variant writes no input


@pytest.mark.parametrize(("name", "ufunc"), BINARY, ids=[n for n, _ in BINARY])
@given(data=st.data())
def test_binary_math_op_matches_numpy(name: str, ufunc: np.ufunc, data: st.DataObject) -> None:
    a, b, a_np, b_np = draw_binary_operands(data)
    fn = getattr(dt, name)
    check_against_numpy(
        name, lambda: call_with_numbers(name, fn, a, b), lambda: ufunc(a_np, b_np), approx=name not in EXACT
    )


@pytest.mark.parametrize(("name", "ufunc"), UNARY, ids=[n for n, _ in UNARY])
@given(data=st.data())
def test_unary_math_op_inplace_matches_numpy(name: str, ufunc: np.ufunc, data: st.DataObject) -> None:
    inplace = getattr(dt, name + "_", None)
    if inplace is None:
        return
    floats: list[np.dtype[Any]] = [np.dtype(np.float32), np.dtype(np.float64)]
    dtype = data.draw(st.sampled_from(floats))
    a, a_np = draw_operand(data, data.draw(shapes), dtype)
    expected = ufunc(a_np)
    assert inplace(a) is a
    np.testing.assert_allclose(a.numpy(), expected, rtol=1e-6, equal_nan=True)


def test_inplace_variants_are_pytorchs() -> None:
    for name, _, _, has_inplace, _ in MATH_UNARY:
        assert hasattr(dt, name + "_") is has_inplace, name
        assert hasattr(dt.Tensor, name + "_") is has_inplace, name
    for name, _, _, has_inplace in MATH_BINARY:
        assert hasattr(dt, name + "_") is has_inplace, name


def test_rounding_keeps_integer_and_bool_dtypes() -> None:
    for values in (np.array([-3, 0, 7], np.int16), np.array([True, False]), np.array([5], np.uint8)):
        t = dt.tensor(values)
        for op in (dt.floor, dt.ceil, dt.trunc):
            r = op(t)
            assert r.dtype == values.dtype
            np.testing.assert_array_equal(r.numpy(), values)


@pytest.mark.parametrize(
    ("a", "b", "dtype"),
    [
        (np.float32, np.float32, np.float64),
        (np.int8, np.int8, np.float64),
        (np.bool_, np.float16, np.float64),
        (np.complex64, np.float32, np.complex128),
    ],
)
def test_float_power_computes_in_double(a: Any, b: Any, dtype: Any) -> None:
    x = dt.tensor(np.array([1, 2, 3]).astype(a))
    y = dt.tensor(np.array([2, 1, 0]).astype(b))
    r = dt.float_power(x, y)
    assert r.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(r.numpy(), np.float_power(x.numpy(), y.numpy()))
    assert dt.float_power(x, 2).dtype == np.dtype(dtype if np.dtype(a).kind == "c" else np.float64)


def test_errors_name_the_op() -> None:
    with pytest.raises(TypeError, match="floor"):
        dt.floor(dt.tensor(np.array([1j])))
    with pytest.raises(TypeError, match="atan2"):
        dt.atan2(dt.tensor(np.array([1j])), dt.tensor(1.0))
    assert dt.sign(dt.tensor(np.array([True, False]))).tolist() == [True, False]  # (PyTorch's; NumPy raises)
    with pytest.raises(ValueError, match="hypot"):
        dt.hypot(dt.tensor(np.ones(2)), dt.tensor(np.ones(3)))


def test_reciprocal_of_integers_is_true_division() -> None:
    # PyTorch's kind: bool and integers give floats (float64, as devtensor's division), never NumPy's integer
    # reciprocal (1 / 0 -> INT64_MIN); an inplace self or out of an integer dtype is refused (same_kind).
    got = dt.reciprocal(dt.tensor(np.array([0, 2, -4], dtype=np.int32)))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), [np.inf, 0.5, -0.25])
    assert dt.reciprocal(dt.tensor(np.array([True, False]))).tolist() == [1.0, np.inf]
    ints = dt.tensor(np.array([1, 2]))
    with pytest.raises(dt.CastingError, match="reciprocal_"):
        ints.reciprocal_()
    with pytest.raises(dt.CastingError, match="reciprocal"):
        dt.reciprocal(ints, out=dt.empty(2, dtype=dt.int64))
    assert ints.tolist() == [1, 2] and ints.version == 0
    out = dt.empty(2, dtype=dt.float32)
    dt.reciprocal(ints, out=out)
    assert out.tolist() == [1.0, 0.5]


def test_math_ops_on_the_cuda_stand_in(fake_cupy: Any) -> None:
    x = np.array([[-1.5, 0.25, 2.0], [0.0, -0.0, 0.5]])
    for name, ufunc, *_ in MATH_UNARY:
        got = getattr(dt, name)(dt.tensor(x, device="cuda"))
        assert got.device.type == "cuda"
        np.testing.assert_array_equal(got.cpu().numpy(), ufunc(x), err_msg=name)
    ints = np.array([-3, 0, 7])
    for op in (dt.floor, dt.ceil, dt.trunc):
        np.testing.assert_array_equal(op(dt.tensor(ints, device="cuda")).cpu().numpy(), ints)
    for name, ufunc, *_ in MATH_BINARY:
        got = binary_call(name, dt.tensor(x, device="cuda"), 0.75)  # (maximum(t, 0.75) is NumPy's form)
        np.testing.assert_array_equal(got.cpu().numpy(), ufunc(x, 0.75), err_msg=name)
