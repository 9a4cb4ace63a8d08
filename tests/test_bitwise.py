"""The bitwise ops, ``positive`` and ``round``: what the generic op checks (tests/op_samples.py) and the NumPy value
tables (tests/test_elementwise_values.py) do not show: the edge values of shifts and rounding, the refused dtypes
and arguments, ``round``'s out and inplace variants, and the CUDA kernels through the stand-in."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest
from helpers import raises_devtensor_error_naming
from tensor_state import assert_unchanged, snapshot

import devtensor as dt


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64])
def test_shifts_by_the_bit_width_or_more_match_numpy(dtype: Any) -> None:
    values = np.array([1, 3, 64, np.iinfo(dtype).max], dtype)
    bits = np.array([0, 1, 7, 8 * np.dtype(dtype).itemsize], dtype)
    for op, ufunc in ((dt.bitwise_left_shift, np.left_shift), (dt.bitwise_right_shift, np.right_shift)):
        got = op(dt.tensor(values), dt.tensor(bits))
        np.testing.assert_array_equal(got.numpy(), ufunc(values, bits), strict=True)


def test_signed_right_shift_is_arithmetic() -> None:
    t = dt.tensor([-8, -1, 7], dtype=dt.int16)
    np.testing.assert_array_equal((t >> 1).numpy(), np.array([-4, -1, 3], np.int16), strict=True)
    np.testing.assert_array_equal((t >> 40).numpy(), np.right_shift(t.numpy(), 40), strict=True)


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_not"])
@pytest.mark.parametrize("dtype", [dt.float32, dt.complex64])
def test_bitwise_ops_refuse_floats_and_complex_naming_the_op(op: str, dtype: Any) -> None:
    t = dt.ones(3, dtype=dtype)
    fn = getattr(dt, op)
    call = (lambda: fn(t)) if op == "bitwise_not" else (lambda: fn(t, t))
    error = raises_devtensor_error_naming(call, op)
    assert isinstance(error, TypeError)


def test_bitwise_of_bools_is_logical_and_stays_bool() -> None:
    a, b = dt.tensor([True, True, False]), dt.tensor([True, False, False])
    assert (a & b).tolist() == [True, False, False]
    assert (a | b).tolist() == [True, True, False]
    assert (a ^ b).tolist() == [False, True, False]
    assert (~a).tolist() == [False, False, True]
    assert (a & b).dtype == dt.bool


def test_bitwise_python_int_out_of_range_is_refused() -> None:
    t = dt.tensor([1, 2], dtype=dt.uint8)
    before = snapshot(t)
    with pytest.raises(dt.ScalarOverflowError, match="bitwise_and"):
        dt.bitwise_and_(t, 300)
    assert_unchanged(before)


def test_positive_copies_and_refuses_bool() -> None:
    t = dt.tensor([1.5, -2.0])
    p = +t
    assert p is not t and p.tolist() == [1.5, -2.0] and p.dtype == t.dtype
    p.add_(1)
    assert t.tolist() == [1.5, -2.0]
    error = raises_devtensor_error_naming(lambda: +dt.tensor([True]), "positive")
    assert isinstance(error, TypeError)


# --- round ------------------------------------------------------------------------------------------------------


def test_round_is_half_to_even_as_numpy() -> None:
    values = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.49999999999999994, 1e300, np.inf, np.nan], np.float64)
    np.testing.assert_array_equal(dt.round(dt.tensor(values)).numpy(), np.round(values), strict=True)
    values32 = np.array([0.125, 0.375, -2.675, 1234.5678], np.float32)
    for decimals in (-2, -1, 0, 1, 2, 3):
        got = dt.round(dt.tensor(values32), decimals=decimals)
        np.testing.assert_array_equal(got.numpy(), np.round(values32, decimals), strict=True)


def test_round_of_complex_rounds_both_parts() -> None:
    z = np.array([1.5 + 2.5j, -0.5 - 1.25j], np.complex64)
    np.testing.assert_array_equal(dt.round(dt.tensor(z), decimals=1).numpy(), np.round(z, 1), strict=True)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64])
def test_round_of_integers(dtype: Any) -> None:
    values = np.array([0, 5, 15, 25, 104, 127], dtype)
    t = dt.tensor(values)
    for decimals in (0, 2):
        r = dt.round(t, decimals=decimals)
        assert r is not t
        np.testing.assert_array_equal(r.numpy(), values, strict=True)
    for decimals in (-1, -2):
        # NumPy's own integer rounding (halves to even), wrapping where the result does not fit
        with np.errstate(all="ignore"):
            expected = np.round(values, decimals)
        np.testing.assert_array_equal(dt.round(t, decimals=decimals).numpy(), expected, strict=True)


def test_round_refuses_bool_and_bad_decimals_and_changes_nothing() -> None:
    error = raises_devtensor_error_naming(lambda: dt.round(dt.tensor([True])), "round")
    assert isinstance(error, TypeError)
    t = dt.tensor([1.25, 2.5])
    before = snapshot(t)
    for bad in (1.0, "1", True, None):
        with pytest.raises(dt.DevtensorError, match="decimals") as info:
            dt.round_(t, decimals=bad)  # type: ignore[arg-type]
        assert isinstance(info.value, TypeError)
    assert_unchanged(before)
    numpy_int: Any = np.int64(1)  # (any integer by __index__, as for every int argument)
    assert dt.round(t, decimals=numpy_int).tolist() == [1.2, 2.5]


def test_round_out_and_inplace() -> None:
    t = dt.tensor([1.25, 2.5, -3.5], dtype=dt.float32)
    out = dt.empty(3, dtype=dt.float64)
    dt.round(t, decimals=1, out=out)
    np.testing.assert_array_equal(out.numpy(), np.round(t.numpy(), 1).astype(np.float64), strict=True)
    assert out.version == 1
    same = t.round_()
    assert same is t and t.tolist() == [1.0, 2.0, -4.0] and t.version == 1
    i = dt.tensor([14, 15, 26], dtype=dt.int32)
    i_out = dt.empty(3, dtype=dt.float64)
    dt.round(i, decimals=-1, out=i_out)
    assert i_out.tolist() == [10.0, 20.0, 30.0]
    with pytest.raises(dt.CastingError):
        dt.round(t, out=dt.empty(3, dtype=dt.int32))


def test_python_round_gives_a_tensor() -> None:
    t = dt.tensor([1.26, 2.5])
    r = round(t)
    assert isinstance(r, dt.Tensor) and r.tolist() == [1.0, 2.0] and r.dtype == t.dtype
    assert round(t, 1).tolist() == [1.3, 2.5]
    assert round(dt.tensor(2.5)).item() == 2.0
    assert round(t, None).tolist() == [1.0, 2.0]


def test_meta_gives_shape_and_dtype() -> None:
    m = dt.empty(2, 3, dtype=dt.int16, device="meta")
    assert (m << 1).shape == (2, 3) and (m << 1).dtype == dt.int16
    assert round(m).dtype == dt.int16 and (~m).dtype == dt.int16 and (+m).shape == (2, 3)


def test_cuda_kernels_match_cpu(fake_cupy: ModuleType) -> None:
    a = np.array([[3, 5, -7]], np.int32)
    b = np.array([[1], [2]], np.int32)
    ga, gb = dt.tensor(a, device="cuda"), dt.tensor(b, device="cuda")
    for got, expected in (
        (ga & gb, a & b),
        (ga | gb, a | b),
        (ga ^ gb, a ^ b),
        (ga << gb, a << b),
        (ga >> gb, a >> b),
        (~ga, ~a),
        (+ga, a),
        (round(ga, -1), np.round(a, -1)),
    ):
        assert got.device.type == "cuda"
        np.testing.assert_array_equal(got.cpu().numpy(), expected, strict=True)
    f = np.array([0.5, 1.5, 2.25], np.float64)
    np.testing.assert_array_equal(round(dt.tensor(f, device="cuda"), 1).cpu().numpy(), np.round(f, 1), strict=True)
