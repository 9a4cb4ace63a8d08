"""Value rules that live in meta functions and kernels (issue 9, items 3, 10 and 11), on every device.

* Comparisons and logical ops with a Python int out of a dtype's range follow NumPy 2: comparisons with an
  integer tensor are exact whatever the int; where NumPy raises OverflowError (an int meeting a bool loop
  beyond int64, a bool tensor compared with an int beyond int64, an int too large for a float), devtensor
  raises ScalarOverflowError naming the op, the argument and the value, and changes nothing.
* ``upsample_nearest1d`` computes source indices as PyTorch's CPU kernel does per input dtype, and takes
  ``output_size`` as an int or a sequence of one int.
* ``clamp`` with a Python int bound beyond the dtype's range clips nothing on that side and keeps the dtype
  (NumPy 2.1's ``np.clip``); a bound beyond the range on the other side raises, as np.clip does.

Every case runs on the CPU, on ``cuda:1`` through the NumPy-backed CuPy stand-in, and (shapes, dtypes and
errors only) on the meta device; functional, ``out=`` and inplace variants.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from helpers import call_with_numbers
from op_samples import COMPARISONS, LOGICAL

import devtensor as dt
from devtensor.errors import ArgumentTypeError, ArgumentValueError, DevtensorError, ScalarOverflowError
from devtensor.numpy_values import binary_call, refused_number
from devtensor.tensor import Tensor

DEVICES = ["cpu", "cuda:1", "meta"]
INT = r"-?(\d+|~10\*\*\d+)"  # an int in an error message: its digits, or ~10**N when huge


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> Iterator[str]:
    """A device name; ``cuda:1`` installs the CuPy stand-in for the test."""
    name: str = request.param
    if name.startswith("cuda"):
        request.getfixturevalue("fake_cupy").state.writeable_flag = True
    yield name


def on(data: Any, device: str, dtype: Any = None) -> Tensor:
    return dt.tensor(np.asarray(data, dtype=dtype), device=device)


def host(t: Tensor) -> np.ndarray[Any, Any]:
    return np.array(t.cpu().numpy(), copy=True)


@contextmanager
def quiet() -> Iterator[None]:
    """NumPy's warning for an int cast to an overflowing float (float16 with 2**63) is not what is tested."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def numpy_result(fn: Callable[..., Any], *args: Any) -> Any:
    """NumPy's answer ``fn(*args)``: an array, or the OverflowError class it raises."""
    try:
        with quiet():
            return np.asarray(fn(*args))
    except OverflowError:
        return OverflowError


# --- item 3: comparisons and logical ops with out-of-range Python ints ------------------------------------

# One dtype of each class, and the 64-bit integer edges.
DTYPES = ["bool", "int8", "uint8", "int64", "uint64", "float16", "float32", "float64", "complex64", "complex128"]
VALUES = [2**63, -(2**63) - 1, 2**64, 2**63 - 1, -(2**63), 300, -1, 10**400, -(10**400)]
DATA = {
    "bool": [True, False, True],
    "int8": [-128, 0, 127],
    "uint8": [0, 1, 255],
    "int64": [-(2**63), 0, 2**63 - 1],
    "uint64": [0, 1, 2**64 - 1],
}


def data_of(dtype: str) -> np.ndarray[Any, Any]:
    return np.array(DATA.get(dtype, [-1.5, 0.0, 2.0]), dtype=dtype)


def _value_id(v: int) -> str:
    return str(v) if abs(v) < 10**30 else ("10**400" if v > 0 else "-10**400")


@pytest.mark.parametrize(("name", "ufunc"), COMPARISONS + LOGICAL, ids=[n for n, _ in COMPARISONS + LOGICAL])
@pytest.mark.parametrize("dtype", DTYPES)
def test_comparison_and_logical_ops_with_python_ints_follow_numpy(
    name: str, ufunc: np.ufunc, dtype: str, device: str
) -> None:
    data = data_of(dtype)

    def fn(a: Any, b: Any, **kwargs: Any) -> Any:  # (NumPy's forms PyTorch's schema refuses: binary_call)
        return call_with_numbers(name, getattr(dt, name), a, b, **kwargs)

    for value in VALUES:
        for swapped in (False, True):
            expected = numpy_result(ufunc, *((value, data) if swapped else (data, value)))
            t = on(data, device)
            args = (value, t) if swapped else (t, value)
            label = f"{name}({'int, ' if swapped else ''}{dtype}{'' if swapped else ', int'}) with {_value_id(value)}"
            if expected is OverflowError:
                with pytest.raises(ScalarOverflowError, match=rf"^{name}: Python integer {INT} \(argument "):
                    fn(*args)
                out = dt.zeros(3, dtype=dt.bool, device=device)
                with pytest.raises(ScalarOverflowError, match=name):
                    fn(*args, out=out)
                assert out.version == 0, label
                continue
            with quiet():
                result = fn(*args)
            assert (result.shape, result.dtype, str(result.device)) == ((3,), dt.bool, device), label
            if device != "meta":
                np.testing.assert_array_equal(host(result), expected, err_msg=label, strict=True)
                out = dt.zeros(3, dtype=dt.bool, device=device)
                with quiet():
                    assert fn(*args, out=out) is out
                np.testing.assert_array_equal(host(out), expected, err_msg=label, strict=True)


@pytest.mark.parametrize(("name", "ufunc"), COMPARISONS + LOGICAL, ids=[n for n, _ in COMPARISONS + LOGICAL])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float32"])
def test_inplace_comparison_and_logical_ops_with_python_ints(
    name: str, ufunc: np.ufunc, dtype: str, device: str
) -> None:
    data = data_of(dtype)
    for value in (2**63, -(2**63) - 1, 300, -1):
        expected = numpy_result(ufunc, data, value)
        t = on(data, device)
        method = getattr(t, name + "_")
        if refused_number(name, t, value) is not None:  # (logical_and_(t, 2): PyTorch's schema wants a tensor)
            with pytest.raises(ArgumentTypeError, match=rf"{name}: argument 'other' must be a tensor"):
                method(value)
            assert t.version == 0
            continue
        if expected is OverflowError:
            with pytest.raises(ScalarOverflowError, match=name):
                method(value)
            assert t.version == 0
            if device != "meta":
                np.testing.assert_array_equal(host(t), data, strict=True)  # a failing call changes nothing
            continue
        assert method(value) is t
        if device != "meta":
            np.testing.assert_array_equal(host(t), expected.astype(dtype), strict=True)


def test_the_issue_examples() -> None:
    with pytest.raises(ScalarOverflowError, match=r"logical_and: .*9223372036854775808.*'other'.*int64"):
        binary_call("logical_and", dt.zeros(2), 2**63)  # (NumPy's form: PyTorch's wants a tensor)
    with pytest.raises(ScalarOverflowError, match=r"eq: .*9223372036854775808.*'other'.*int64"):
        dt.eq(dt.zeros(2, dtype=dt.bool), 2**63)
    assert isinstance(ScalarOverflowError("x"), (DevtensorError, OverflowError))
    # NumPy 2 compares an integer tensor with any int exactly
    assert dt.eq(dt.zeros(2, dtype=dt.int64), 2**63).tolist() == [False, False]
    assert dt.lt(dt.zeros(2, dtype=dt.uint8), 2**200).tolist() == [True, True]
    assert binary_call("ge", -(2**200), dt.zeros(2, dtype=dt.int8)).tolist() == [False, False]
    assert (dt.tensor([1, 2], dtype=dt.uint8) != -1).tolist() == [True, True]
    with pytest.raises(ScalarOverflowError, match=r"lt: .*too large to convert to float64"):
        dt.lt(dt.zeros(2), 10**400)


# --- item 10: upsample_nearest1d --------------------------------------------------------------------------


def pytorch_sources(length: int, out_len: int, scale_factor: float | None, opmath: type) -> list[int]:
    """PyTorch's CPU nearest rule in its opmath type: scale and j * scale in ``opmath``, floorf of the product
    as float32, capped at L - 1."""
    scale = opmath(length) / opmath(out_len) if scale_factor is None else opmath(1.0 / scale_factor)
    return [min(int(np.floor(np.float32(opmath(j) * scale))), length - 1) for j in range(out_len)]


# float64 computes in float64; every other dtype in float32 (PyTorch: float32, float16, bfloat16 and uint8).
OPMATH = {"float64": np.float64, "float32": np.float32, "float16": np.float32, "uint8": np.float32, "int16": np.float32}


def test_upsample_issue_example() -> None:
    assert dt.upsample_nearest1d(dt.arange(26.0).reshape(1, 1, 26), 22)[0, 0, 11].item() == 13.0
    x32 = dt.arange(26.0, dtype=dt.float32).reshape(1, 1, 26)
    assert dt.upsample_nearest1d(x32, 22)[0, 0, 11].item() == 12.0


@pytest.mark.parametrize("dtype", list(OPMATH))
@pytest.mark.parametrize(
    ("length", "out_len", "scale_factor"),
    [(26, 22, None), (14, 46, None), (29, 8, 0.28), (7, 10, None), (10, 7, None), (5, 17, 3.5), (3, 4, 1.5)],
)
def test_upsample_indices_per_dtype(
    dtype: str, length: int, out_len: int, scale_factor: float | None, device: str
) -> None:
    data = np.arange(length).astype(dtype).reshape(1, 1, length)
    x = on(data, device)
    args: dict[str, Any] = {"scale_factor": scale_factor} if scale_factor is not None else {"output_size": out_len}
    result = dt.upsample_nearest1d(x, **args)
    assert (result.shape, result.dtype) == ((1, 1, out_len), x.dtype)
    if device == "meta":
        return
    expected = data[:, :, pytorch_sources(length, out_len, scale_factor, OPMATH[dtype])]
    np.testing.assert_array_equal(host(result), expected, strict=True)
    out = dt.empty(1, 1, out_len, dtype=x.dtype, device=device)
    assert dt.upsample_nearest1d(x, **args, out=out) is out
    np.testing.assert_array_equal(host(out), expected, strict=True)


@pytest.mark.parametrize("size", [6, [6], (6,)], ids=["int", "list", "tuple"])
def test_upsample_output_size_is_an_int_or_a_sequence_of_one(size: Any, device: str) -> None:
    x = on(np.arange(3.0).reshape(1, 1, 3), device)
    result = dt.upsample_nearest1d(x, size)
    assert result.shape == (1, 1, 6)
    assert dt.upsample_nearest1d(x, output_size=size).shape == (1, 1, 6)
    if device != "meta":
        assert host(result).tolist() == [[[0.0, 0.0, 1.0, 1.0, 2.0, 2.0]]]


@pytest.mark.parametrize(
    ("size", "error", "match"),
    [
        ([6, 7], ArgumentValueError, r"'output_size' must be an int or a sequence of one int .* 2 items \[6, 7\]"),
        ((), ArgumentValueError, r"sequence of one int .* 0 items"),
        ([6.0], ArgumentTypeError, r"'output_size' must be an int or a sequence of one int, got list \[6.0\]"),
        (["6"], ArgumentTypeError, "holding str"),
        ([True], ArgumentTypeError, "holding bool"),
        ([0], ArgumentValueError, "'output_size' must be > 0"),
        ("6", ArgumentTypeError, "'output_size' must be an int"),
    ],
)
def test_upsample_bad_output_size_sequences(size: Any, error: type[Exception], match: str, device: str) -> None:
    x = on(np.arange(3.0).reshape(1, 1, 3), device)
    out = dt.zeros(1, 1, 6, device=device)
    with pytest.raises(error, match="upsample_nearest1d: .*" + match):
        dt.upsample_nearest1d(x, size)
    with pytest.raises(error, match="upsample_nearest1d: "):
        dt.upsample_nearest1d(x, size, out=out)
    assert out.version == 0


# --- item 11: clamp with Python int bounds beyond the dtype ----------------------------------------------

INT_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def _bounds(dtype: str) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def clamp_cases(dtype: str) -> list[tuple[int | None, int | None]]:
    lo, hi = _bounds(dtype)
    mid = (lo + hi) // 2
    return [
        (lo, hi + 1),  # max beyond: clips nothing above
        (lo - 1, hi),  # min beyond: clips nothing below
        (lo - 5, hi + 4550),
        (None, hi + 2**70),
        (lo - 2**70, None),
        (mid, hi + 1),  # the min still clips
        (lo - 1, mid),  # the max still clips
        (hi + 1, None),  # every value below the min: np.clip raises
        (None, lo - 1),  # every value above the max: np.clip raises
        (hi + 1, mid),
        (mid, lo - 1),
        (hi + 1, lo - 1),
    ]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_clamp_with_python_int_bounds_beyond_the_dtype_follows_np_clip(dtype: str, device: str) -> None:
    lo, hi = _bounds(dtype)
    data = np.array([lo, lo + 1, 0, hi - 1, hi], dtype=dtype)
    for min_, max_ in clamp_cases(dtype):
        expected = numpy_result(np.clip, data, min_, max_)
        label = f"clamp({dtype}, {min_}, {max_})"
        x = on(data, device)
        if expected is OverflowError:
            bad = "min" if min_ is not None and min_ > hi else "max"
            with pytest.raises(ScalarOverflowError, match=rf"^clamp: Python integer {INT} \(argument '{bad}'\)"):
                dt.clamp(x, min_, max_)
            out = dt.zeros(5, dtype=dtype, device=device)
            with pytest.raises(ScalarOverflowError, match="clamp"):
                dt.clamp(x, min_, max_, out=out)
            with pytest.raises(ScalarOverflowError, match="clamp"):
                x.clamp_(min_, max_)
            assert (out.version, x.version) == (0, 0), label
            if device != "meta":
                np.testing.assert_array_equal(host(x), data, strict=True)
            continue
        result = dt.clamp(x, min_, max_)
        assert (result.shape, result.dtype) == ((5,), x.dtype), label
        if device == "meta":
            continue
        np.testing.assert_array_equal(host(result), expected, err_msg=label, strict=True)
        out = dt.zeros(5, dtype=dtype, device=device)
        assert dt.clamp(x, min_, max_, out=out) is out
        np.testing.assert_array_equal(host(out), expected, err_msg=label, strict=True)
        wide = dt.zeros(5, dtype=dt.float64, device=device)  # an out of another dtype gets the same values
        dt.clamp(x, min_, max_, out=wide)
        np.testing.assert_array_equal(host(wide), expected.astype(np.float64), err_msg=label)
        assert x.clamp_(min_, max_) is x
        np.testing.assert_array_equal(host(x), expected, err_msg=label, strict=True)


def test_clamp_issue_example(device: str) -> None:
    x = dt.tensor([0, 200, 255], dtype=dt.uint8, device=device)
    r = dt.clamp(x, 0, 4550)
    assert r.dtype == dt.uint8
    if device != "meta":
        assert r.tolist() == [0, 200, 255]


@pytest.mark.parametrize(
    ("self", "lo", "hi"),
    [
        (np.array([1, 50, -100], np.int8), np.array([-3], np.int16), 2**70),  # int16 result: 2**70 clips nothing
        (np.array([1, 50, -100], np.int8), -40000, np.array([20], np.int16)),
        (np.array([True, False]), -(2**63), 2**63 - 1),  # a bool self: ints must fit the result dtype
        (np.array([True, False]), -(2**63) - 1, 5),
        (np.array([True, False]), np.array([0], np.int16), 40000),
        (np.array([1.5, -2.0], np.float32), -(2**70), 2**70),  # floats hold the ints
        (np.array([1.5, -2.0], np.float64), 0, 10**400),  # too large for a float
    ],
)
def test_clamp_with_tensor_bounds_and_bool_or_float_self_follows_np_clip(
    self: np.ndarray[Any, Any], lo: Any, hi: Any, device: str
) -> None:
    def arg(v: Any) -> Any:
        return on(v, device) if isinstance(v, np.ndarray) else v

    expected = numpy_result(np.clip, self, lo, hi)
    if expected is OverflowError:
        with pytest.raises(ScalarOverflowError, match="clamp: Python integer"):
            dt.clamp(arg(self), arg(lo), arg(hi))
        return
    result = dt.clamp(arg(self), arg(lo), arg(hi))
    assert result.dtype == expected.dtype
    if device != "meta":
        np.testing.assert_array_equal(host(result), expected, strict=True)


def test_where_with_an_int_too_large_for_a_float_result(device: str) -> None:
    # np.where raises a bare OverflowError ("int too large to convert to float"); devtensor names op and argument
    c = dt.ones(2, dtype=dt.bool, device=device)
    with pytest.raises(ScalarOverflowError, match=r"^where: Python integer -~10\*\*400 \(argument 'other'\)"):
        dt.where(c, dt.zeros(2, device=device), -(10**400))
    with pytest.raises(ScalarOverflowError, match=r"^where: Python integer ~10\*\*5000 \(argument 'self'\)"):
        dt.where(c, 10**5000, dt.zeros(2, dtype=dt.complex64, device=device))  # beyond str()'s digit limit
    r = dt.where(c, dt.zeros(2, dtype=dt.float32, device=device), 2**70)  # a float holds it
    assert r.dtype == dt.float32


# --- PyTorch's refusals (issue 28): a Python number where the schema takes a tensor -------------------------

# (op, where a Python number is refused): PyTorch's schemas, e.g. ``maximum(Tensor self, Tensor other)`` and
# ``gt(Tensor self, Scalar other)``.
REFUSED_NUMBERS = [
    *[(name, ("self", "other")) for name in ("maximum", "minimum", "atan2", "hypot", "nextafter", "logaddexp")],
    *[(name, ("self", "other")) for name in ("logical_and", "logical_or", "logical_xor")],
    *[(name, ("self",)) for name in ("eq", "ne", "lt", "le", "gt", "ge", "fmod", "copysign")],
]


NUMPY_NAMES = {
    "atan2": "arctan2",
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
}


@pytest.mark.parametrize(("name", "places"), REFUSED_NUMBERS, ids=[n for n, _ in REFUSED_NUMBERS])
def test_a_python_number_is_refused_where_pytorchs_schema_wants_a_tensor(name: str, places: tuple[str, ...]) -> None:
    fn = getattr(dt, name)
    t = dt.tensor([1.0, -2.0, 3.0])
    out = dt.zeros(3, dtype=fn(t, t).dtype)
    for place in ("self", "other"):
        args = (2, t) if place == "self" else (t, 2)
        if place not in places:
            fn(*args)  # (a number there is PyTorch's form too)
            continue
        with pytest.raises(ArgumentTypeError, match=rf"^{name}: argument '{place}' must be a tensor, not int 2"):
            fn(*args)
        with pytest.raises(ArgumentTypeError, match=name):
            fn(*args, out=out)
        assert out.version == 0 and out.tolist() == [0, 0, 0]  # (a failing call changes nothing)
        # NumPy's form, through NEP 13 and the Array API, gives NumPy's values
        ufunc = getattr(np, NUMPY_NAMES.get(name, name))
        data = np.array([1.0, -2.0, 3.0])
        expected = ufunc(*((2, data) if place == "self" else (data, 2)))
        np.testing.assert_array_equal(ufunc(*args).numpy(), expected, strict=True)
        np.testing.assert_array_equal(binary_call(name, *args).numpy(), expected, strict=True)
    if "other" in places:
        self = dt.tensor([1.0, -2.0, 3.0])
        with pytest.raises(ArgumentTypeError, match=name):
            getattr(self, name + "_", getattr(self, name))(2)
        assert self.version == 0 and self.tolist() == [1.0, -2.0, 3.0]


def test_the_tensor_operators_keep_taking_numbers() -> None:
    t = dt.tensor([1, 5, 3])
    assert (t > 2).tolist() == [False, True, True] and (t >= 3).tolist() == [False, True, True]
    assert (t == 2).tolist() == [False, False, False] and (t != 7).tolist() == [True, True, True]
    assert dt.max(t, other=dt.tensor([4, 4, 4])).tolist() == [4, 5, 4]


def test_numbers_through_the_array_api_follow_weak_promotion() -> None:
    import devtensor.array_api as xp

    x8 = dt.tensor([1, -2, 3], dtype=dt.int8)
    assert xp.maximum(x8, 2).dtype == dt.int8 and xp.maximum(2, x8).tolist() == [2, 2, 3]
    assert xp.maximum(x8, 2.5).dtype == dt.float64  # (NEP 50: a float with an integer array)
    assert xp.atan2(dt.ones(2, dtype=dt.float32), 1).dtype == dt.float32
    assert xp.logical_and(x8, 0.0).tolist() == [False, False, False]
    assert xp.less(2, x8).tolist() == [False, False, True]  # (mirrored: gt(x8, 2))
    with pytest.raises(ScalarOverflowError, match=r"^maximum: Python integer 300 \(argument 'x2'\)"):
        xp.maximum(x8, 300)
    with pytest.raises(ScalarOverflowError, match=r"^less: |^lt: "):
        binary_call("lt", 10**400, dt.ones(2))
