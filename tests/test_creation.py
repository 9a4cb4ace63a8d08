"""Creation functions (with ``dtype=`` and ``device=``), device parsing, and the dtype helpers.

NumPy is the reference for values and default dtypes (``tensor``, ``arange``, ``linspace``, ``full``) and for
promotion: ``devtensor.dtypes.result_type`` must agree with ``numpy.result_type`` under NEP 50 (Python scalars
weak) and ``devtensor.dtypes.can_cast`` with ``numpy.can_cast(..., casting="same_kind")``.
"""

from __future__ import annotations

import copy
import math
import pickle
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import SUPPORTED_DTYPES, raises_devtensor_error_naming
from hypothesis import given
from hypothesis import strategies as st
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
import devtensor.array_api
from devtensor import dtypes
from devtensor.device import register_device_type
from devtensor.errors import ArgumentTypeError, ArgumentValueError, CastingError, NoDataError, ScalarOverflowError
from devtensor.tensor import Tensor

SUPPORTED = SUPPORTED_DTYPES
supported = st.sampled_from(SUPPORTED)


def words(*keys: str) -> str:
    """A regex matching a message that contains every key word, in any order."""
    return "".join(f"(?=.*{re.escape(k)})" for k in keys)


def assert_meta(t: Tensor, shape: tuple[int, ...], dtype: Any) -> None:
    assert t.device == dt.Device("meta") and isinstance(t, dt.MetaTensor)
    assert t.shape == shape and t.dtype == np.dtype(dtype) and t.version == 0
    with pytest.raises(NoDataError):
        t.numpy()


# --- tensor, asarray, from_numpy -------------------------------------------------------------------------------


def test_tensor_copies_and_infers_dtypes_as_numpy() -> None:
    assert dt.tensor([1, 2]).dtype == np.int64
    assert dt.tensor([1.0, 2]).dtype == np.float64
    assert dt.tensor([True]).dtype == np.bool_
    assert dt.tensor([1j]).dtype == np.complex128
    assert dt.tensor(3).shape == ()
    nested = dt.tensor([[1, 2, 3], [4, 5, 6]], dtype="float32")
    assert nested.shape == (2, 3) and nested.dtype is dt.float32 and nested.version == 0
    src = np.arange(4, dtype=np.int16)
    t = dt.tensor(src)
    assert t.dtype == np.int16 and not np.shares_memory(t.numpy(), src)
    again = dt.tensor(t, dtype=dt.float64)
    assert again.dtype == np.float64 and not np.shares_memory(again.numpy(), src)
    np.testing.assert_array_equal(again.numpy(), src)
    assert_meta(dt.tensor([[1, 2]], device="meta"), (1, 2), np.int64)
    assert_meta(dt.tensor(t, device="meta", dtype=dt.uint8), (4,), np.uint8)


def test_tensor_rejects_what_numpy_cannot_make_numeric() -> None:
    with pytest.raises(ArgumentTypeError, match=words("tensor", "data")):
        dt.tensor(["a", "b"])
    with pytest.raises(ArgumentTypeError, match=words("tensor", "data")):
        dt.tensor([[1, 2], [3]])
    with pytest.raises(ScalarOverflowError, match=words("tensor", "data", "int64", "uint64")):
        dt.tensor(2**70)  # (NumPy makes an object array; dt.full refuses the same int as ScalarOverflowError)
    with pytest.raises(ScalarOverflowError, match=words("tensor", "int64")):
        dt.tensor([2**70], dtype=dt.int64)
    with pytest.raises(ArgumentTypeError, match=words("tensor", "dtype", "float64")):
        dt.tensor([1.0], dtype="float128")


def test_asarray_shares_memory_where_it_can() -> None:
    src = np.arange(6.0)
    t = dt.asarray(src)
    assert np.shares_memory(t.numpy(), src)
    assert dt.asarray(t) is t and dt.asarray(t, dtype=dt.float64, device="cpu") is t
    c = dt.asarray(src, copy=True)
    assert not np.shares_memory(c.numpy(), src)
    f = dt.asarray(src, dtype=dt.float32)
    assert f.dtype == np.float32 and not np.shares_memory(f.numpy(), src)
    assert dt.asarray([1, 2]).tolist() == [1, 2]
    assert_meta(dt.asarray(src, device="meta"), (6,), np.float64)
    assert_meta(dt.asarray(t, device="meta"), (6,), np.float64)
    copied = dt.asarray(t, copy=True)
    assert copied is not t and not np.shares_memory(copied.numpy(), src)
    with pytest.raises(ValueError, match=words("asarray", "copy=False")):
        dt.asarray(src, dtype=dt.int8, copy=False)
    with pytest.raises(ValueError, match=words("asarray", "copy=False")):
        dt.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match=words("asarray", "copy=False")):
        dt.asarray(t, device="meta", copy=False)


def test_from_numpy_is_zero_copy_and_checks_its_argument() -> None:
    src = np.arange(12, dtype=np.uint16).reshape(3, 4)[:, 1:]
    t = dt.from_numpy(src)
    assert np.shares_memory(t.numpy(), src) and t.stride() == (4, 1) and t.strides == src.strides
    assert t.dtype == np.uint16
    src[0, 0] = 99
    assert t.numpy()[0, 0] == 99
    ro = np.ones(2)
    ro.flags.writeable = False
    assert dt.from_numpy(ro).is_readonly
    bad: Any = [1, 2]
    with pytest.raises(ArgumentTypeError, match=words("from_numpy", "numpy.ndarray", "list")):
        dt.from_numpy(bad)
    for unsupported in (np.array(["a"]), np.array([None]), np.zeros(2, ">f4"), np.zeros(1, "M8[s]")):
        with pytest.raises(ArgumentTypeError, match=words("from_numpy", "supported dtype")):
            dt.from_numpy(unsupported)


# --- empty, zeros, ones, full -------------------------------------------------------------------------------------

Maker = Callable[..., Tensor]


@pytest.mark.parametrize(("make", "fill"), [(dt.empty, None), (dt.zeros, 0), (dt.ones, 1)])
def test_empty_zeros_ones(make: Maker, fill: int | None) -> None:
    for size in ((2, 3), ([2, 3],), ((2, 3),), (np.int64(2), 3)):
        t = make(*size)
        assert t.shape == (2, 3) and t.dtype == np.float64 and t.device == dt.Device("cpu") and t.version == 0
        if fill is not None:
            np.testing.assert_array_equal(t.numpy(), np.full((2, 3), fill))
    assert make().shape == () and make(0).shape == (0,)
    typed = make(4, dtype="int8", device="cpu")
    assert typed.dtype == np.int8 and typed.shape == (4,)
    assert_meta(make(2, 5, dtype=dt.complex64, device="meta"), (2, 5), np.complex64)
    assert_meta(make((), device=dt.Device("meta")), (), np.float64)


@pytest.mark.parametrize("make", [dt.empty, dt.zeros, dt.ones])
def test_empty_zeros_ones_reject_bad_sizes_dtypes_and_devices(make: Maker) -> None:
    name = make.__name__
    with pytest.raises(ValueError, match=words(name, "size", "negative")):
        make(2, -1)
    with pytest.raises(ArgumentTypeError, match=words(name, "size", "ints")):
        make(2.5)
    with pytest.raises(ArgumentTypeError, match=words(name, "size")):
        make("3")
    with pytest.raises(ArgumentTypeError, match=words(name, "size")):
        make(True)
    with pytest.raises(ArgumentTypeError, match=words(name, "dtype", "supported", "float128")):
        make(2, dtype="float128")
    with pytest.raises(ArgumentTypeError, match=words(name, "dtype", "not_a_dtype")):
        make(2, dtype="not_a_dtype")
    with pytest.raises(ArgumentTypeError, match=words(name, "dtype")):
        make(2, dtype=object)
    with pytest.raises(ValueError, match=words("unknown device type", "tpu", "cpu", "meta")):
        make(2, device="tpu")
    with pytest.raises(ValueError, match=words("cpu", "no index")):
        make(2, device="cpu:0")
    with pytest.raises(TypeError, match="Device"):
        make(2, device=1.5)


def test_full_infers_the_dtype_from_the_value_and_checks_it_fits() -> None:
    assert dt.full((2,), 7).dtype == np.int64 and dt.full((2,), 7).tolist() == [7, 7]
    assert dt.full((2,), 0.5).dtype == np.float64
    assert dt.full((2,), True).dtype == np.bool_
    assert dt.full((1,), 2j).dtype == np.complex128
    assert dt.full(3, 1.0).shape == (3,)  # one int, as NumPy's full
    assert dt.full([2, 2], 1.9, dtype=dt.int8).tolist() == [[1, 1], [1, 1]]
    assert_meta(dt.full((2, 3), 1.5, dtype=dt.float16, device="meta"), (2, 3), np.float16)
    with pytest.raises(ScalarOverflowError, match=words("full", "300", "uint8")):
        dt.full((2,), 300, dtype=dt.uint8)
    with pytest.raises(ScalarOverflowError, match=words("full", "uint8")):
        dt.full((2,), 300, dtype=dt.uint8, device="meta")  # meta checks as cpu does
    with pytest.raises(CastingError, match=words("full", "complex", "float64")):
        dt.full((2,), 1j, dtype=dt.float64)
    with pytest.raises(ValueError, match=words("full", "NaN", "int64")):
        dt.full((2,), math.nan, dtype=dt.int64)
    with pytest.raises(OverflowError, match=words("full", "inf")):
        dt.full((2,), math.inf, dtype=dt.int32)
    bad: Any = "1"
    with pytest.raises(ArgumentTypeError, match=words("full", "fill_value", "str")):
        dt.full((2,), bad)
    with pytest.raises(ArgumentTypeError, match=words("full", "size")):
        dt.full(2.5, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=words("full", "negative")):
        dt.full((-2,), 1.0)


@pytest.mark.parametrize("like", [dt.empty_like, dt.zeros_like, dt.ones_like])
def test_like_functions_take_shape_dtype_and_device_from_the_input(like: Maker) -> None:
    src = dt.tensor([[1, 2, 3]], dtype=dt.int16)
    t = like(src)
    assert t.shape == (1, 3) and t.dtype == np.int16 and t.device == dt.Device("cpu") and t.version == 0
    assert not np.shares_memory(t.numpy(), src.numpy())
    assert like(src, dtype=dt.float32).dtype == np.float32
    assert_meta(like(src, device="meta"), (1, 3), np.int16)
    assert_meta(like(dt.empty(4, dtype=dt.bool, device="meta")), (4,), np.bool_)
    bad: Any = np.zeros(3)
    with pytest.raises(ArgumentTypeError, match=words(like.__name__, "input", "Tensor")):
        like(bad)


def test_full_takes_a_zero_d_tensor_or_array_as_numpy_full() -> None:
    for fill in (dt.tensor(2.5, dtype=dt.float32), np.asarray(2.5, np.float32)):
        t = dt.full((2, 3), fill)
        expected = np.full((2, 3), np.asarray(2.5, np.float32))
        assert t.dtype == expected.dtype == np.float32
        np.testing.assert_array_equal(t.numpy(), expected)
        like = dt.full_like(dt.zeros(2, dtype=dt.int64), fill)
        assert like.dtype == np.int64 and like.tolist() == [2, 2]
    # cast as NumPy's full casts an array (unchecked, astype's), not checked as a Python number
    wrapped = dt.full((2,), np.asarray(300), dtype=dt.uint8)
    np.testing.assert_array_equal(wrapped.numpy(), np.full((2,), np.asarray(300), dtype=np.uint8))
    assert dt.full((2,), dt.tensor(7), dtype=dt.float64).tolist() == [7.0, 7.0]
    assert_meta(dt.full((2,), dt.tensor(True), device="meta"), (2,), np.bool_)
    with pytest.raises(ArgumentValueError, match=words("full", "fill_value", "0-d", "[2]")):
        dt.full((2,), dt.ones(2))
    with pytest.raises(ArgumentValueError, match=words("full_like", "fill_value", "0-d")):
        dt.full_like(dt.ones(2), np.ones(2))
    with pytest.raises(ArgumentValueError, match=words("full", "fill_value", "meta")):
        dt.full((2,), dt.empty((), device="meta"))


def test_full_like() -> None:
    src = dt.zeros(2, 2, dtype=dt.uint8)
    t = dt.full_like(src, 5)
    assert t.dtype == np.uint8 and t.tolist() == [[5, 5], [5, 5]]
    assert dt.full_like(src, 0.5, dtype=dt.float32).tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert_meta(dt.full_like(src, 1, device="meta"), (2, 2), np.uint8)
    with pytest.raises(ScalarOverflowError, match=words("full_like", "-1", "uint8")):
        dt.full_like(src, -1)


# --- arange, linspace -------------------------------------------------------------------------------------------

ints = st.integers(-20, 20)
reals = st.one_of(ints, st.floats(-20, 20, allow_nan=False).map(lambda x: round(x, 2)))


@given(start=reals, end=reals, step=reals.filter(lambda s: abs(s) >= 0.25))
def test_arange_matches_numpy(start: float, end: float, step: float) -> None:
    expected = np.arange(start, end, step)
    xp_t = dt.array_api.arange(start, end, step)  # the standard's rule: a step away from end gives []
    assert xp_t.dtype == expected.dtype and xp_t.shape == expected.shape
    if (end - start) * step < 0:  # PyTorch's rule: a step pointing away from end raises
        with pytest.raises(ValueError, match=words("arange", "step", "away")):
            dt.arange(start, end, step)
        return
    t = dt.arange(start, end, step)
    assert t.dtype == expected.dtype and t.shape == expected.shape
    np.testing.assert_allclose(t.numpy(), expected)
    assert dt.arange(start, end, step, device="meta").shape == expected.shape
    # 0-d tensors and arrays as bounds: their values (PyTorch's Scalar arguments, NumPy's 0-d arrays)
    t0 = dt.arange(dt.tensor(start), np.array(end), dt.tensor(step))  # type: ignore[arg-type]  # (a 0-d array)
    assert t0.dtype == expected.dtype and np.array_equal(t0.numpy(), t.numpy())


def test_arange_forms_dtypes_and_errors() -> None:
    assert dt.arange(5).tolist() == [0, 1, 2, 3, 4] and dt.arange(5).dtype == np.int64
    assert dt.arange(0, 5.5).dtype == np.float64 and dt.arange(0, 5.5).shape == (6,)
    assert dt.arange(6.0).dtype == np.float64
    np_int: Any = np.int32(3)
    assert dt.arange(np_int).tolist() == [0, 1, 2]
    assert dt.arange(1, 4, dtype=dt.float32).dtype == np.float32
    assert dt.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert dt.arange(3, 3, -1).shape == (0,)  # an empty range with either sign of step
    with pytest.raises(ValueError, match=words("arange", "step", "away")):
        dt.arange(0, -3, 2)
    assert dt.array_api.arange(0, -3, 2).shape == (0,)
    with pytest.raises(ValueError, match=words("arange", "end", "0-d")):
        dt.arange(dt.tensor([1, 2]))
    assert_meta(dt.arange(2, 10**12, 10**11, device="meta"), (10,), np.int64)
    with pytest.raises(ValueError, match=words("arange", "step", "nonzero")):
        dt.arange(0, 5, 0)
    with pytest.raises(ValueError, match=words("arange", "finite")):
        dt.arange(0, math.inf)
    bad: Any = "5"
    with pytest.raises(ArgumentTypeError, match=words("arange", "end", "str")):
        dt.arange(bad)
    with pytest.raises(ArgumentTypeError, match=words("arange", "step")):
        dt.arange(0, 5, 1j)  # type: ignore[arg-type]


@given(start=reals, end=reals, steps=st.integers(0, 20))
def test_linspace_matches_numpy(start: float, end: float, steps: int) -> None:
    expected = np.linspace(start, end, steps)
    t = dt.linspace(start, end, steps)
    assert t.dtype == np.float64 and t.shape == (steps,)
    np.testing.assert_allclose(t.numpy(), expected)
    assert_meta(dt.linspace(start, end, steps, device="meta", dtype=dt.float32), (steps,), np.float32)


def test_linspace_errors() -> None:
    assert dt.linspace(0, 10, 3, dtype=dt.int32).tolist() == [0, 5, 10]
    with pytest.raises(ValueError, match=words("linspace", "start", "0-d")):
        dt.linspace(dt.tensor([0.0]), 1, 2)
    with pytest.raises(ArgumentTypeError, match=words("linspace", "end", "real")):
        dt.linspace(0, dt.tensor(1j), 2)


def test_linspace_tensor_bounds_and_integer_rounding() -> None:
    # 0-d tensors (any real dtype) and 0-d arrays as bounds: their values.
    expected = np.linspace(-1.0, 3.0, 5)
    assert np.array_equal(dt.linspace(dt.tensor(-1, dtype=dt.int32), dt.tensor(3.0), 5).numpy(), expected)
    zero_d: Any = np.array(-1.0)
    assert np.array_equal(dt.array_api.linspace(zero_d, dt.tensor(3.0), 5).numpy(), expected)
    assert np.array_equal(dt.array_api.linspace(dt.tensor(0.0), dt.tensor(1.0), 4, endpoint=False).numpy(),
                          np.linspace(0.0, 1.0, 4, endpoint=False))  # fmt: skip
    # Into an integer dtype: truncation toward zero (PyTorch), not NumPy 2's rounding down.
    assert dt.linspace(-5, 5, 4, dtype=dt.int64).tolist() == [-5, -1, 1, 5]  # -1.67, 1.67
    assert np.linspace(-5, 5, 4, dtype=np.int64).tolist() == [-5, -2, 1, 5]
    assert dt.linspace(-3.7, 2.2, 6, dtype=dt.int16).tolist() == [-3, -2, -1, 0, 1, 2]
    # Stepped from both ends: the last value is end exactly.
    assert dt.linspace(0, 100, 33, dtype=dt.int64).tolist() == np.trunc(np.linspace(0, 100, 33)).astype(int).tolist()
    with pytest.raises(ValueError, match=words("linspace", "steps", "non-negative")):
        dt.linspace(0, 1, -1)
    with pytest.raises(ArgumentTypeError, match=words("linspace", "steps", "int")):
        dt.linspace(0, 1, 2.0)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match=words("linspace", "steps")):
        dt.linspace(0, 1, True)
    bad: Any = None
    with pytest.raises(ArgumentTypeError, match=words("linspace", "start")):
        dt.linspace(bad, 1, 2)


def test_creation_never_touches_its_sources() -> None:
    src = dt.tensor([1.0, 2.0])
    snap = snapshot(src)
    dt.tensor(src)
    dt.zeros_like(src)
    dt.full_like(src, 3.0)
    src.to(dt.float32)
    dt.asarray(src, dtype=dt.int8)
    assert_unchanged(snap)


# --- devices ------------------------------------------------------------------------------------------------------


def test_device_parsing_equality_hash_and_interning() -> None:
    cpu = dt.Device("cpu")
    assert cpu is dt.Device(cpu) and cpu.type == "cpu" and cpu.index is None
    with pytest.raises(ValueError, match="spaces"):  # (a typo, as PyTorch refuses it: tests/test_devices.py)
        dt.Device(" cpu ")
    cuda1 = dt.Device("cuda:1")
    assert cuda1 is dt.Device("cuda", 1) is dt.Device(1) and cuda1.type == "cuda" and cuda1.index == 1
    assert dt.Device("cuda").index is None and dt.Device("cuda") != dt.Device("cuda:0")
    assert dt.Device("meta") is dt.Device("meta") and dt.Device("meta") != cpu
    assert hash(dt.Device("cuda:1")) == hash(cuda1) and len({cpu, dt.Device("cpu"), cuda1}) == 2
    assert {cpu: 1}[dt.Device("cpu")] == 1
    assert str(cuda1) == "cuda:1" and str(cpu) == "cpu"
    assert repr(cuda1) == "device(type='cuda', index=1)" and repr(cpu) == "device(type='cpu')"
    assert pickle.loads(pickle.dumps(cuda1)) is cuda1
    assert copy.copy(cuda1) is cuda1 and copy.deepcopy(cpu) is cpu
    assert cpu.key is dt.DispatchKey.CPU and cuda1.key is dt.DispatchKey.CUDA
    assert dt.Device("meta").key is dt.DispatchKey.Meta
    text: Any = "meta"
    assert dt.Device("meta") != text  # a Device is not a string


def test_devices_are_immutable() -> None:
    cpu = dt.Device("cpu")
    with pytest.raises(AttributeError, match="immutable"):
        cpu.index = 3
    with pytest.raises(AttributeError, match="immutable"):
        del cpu.key
    with pytest.raises(AttributeError, match="immutable"):
        cpu.type = "meta"
    assert cpu.index is None and cpu.type == "cpu"


def test_device_resolution_and_registration_errors() -> None:
    assert dt.Device("cpu").resolved() is dt.Device("cpu") and dt.Device("cuda:1").resolved() is dt.Device(1)
    with pytest.raises(ValueError, match=words("Device", "cuda:1", "different index")):
        dt.Device(dt.Device("cuda:1"), 2)
    assert dt.Device(dt.Device("cuda:1"), 1) is dt.Device("cuda:1")
    with pytest.raises(ValueError, match=words("register_device_type", "registered already")):
        register_device_type("cpu", dt.DispatchKey.CPU)
    with pytest.raises(ValueError, match=words("register_device_type", "lowercase identifier")):
        register_device_type("My-Device", dt.DispatchKey("MyDevice"))


@pytest.mark.parametrize(
    ("spec", "index", "error", "keys"),
    [
        ("tpu", None, ValueError, ("unknown device type", "'tpu'", "cpu", "cuda", "meta")),
        ("CPU", None, ValueError, ("unknown device type",)),
        ("", None, ValueError, ("unknown device type",)),
        ("cuda:", None, ValueError, ("malformed",)),
        ("cuda:x", None, ValueError, ("non-negative int", "'x'")),
        ("cuda:-1", None, ValueError, ("non-negative int",)),
        ("cuda:1:2", None, ValueError, ("non-negative int",)),
        ("cuda:01", None, ValueError, ("leading zeros",)),
        ("cuda:1", 1, ValueError, ("index",)),
        ("cpu:0", None, ValueError, ("'cpu'", "no index")),
        ("meta", 0, ValueError, ("'meta'", "no index")),
        ("cuda", -1, ValueError, ("non-negative int",)),
        ("cuda", True, TypeError, ("non-negative int", "bool")),
        (-1, None, ValueError, ("non-negative int",)),
        (True, None, ValueError, ("bool",)),
        (0, 1, ValueError, ("index",)),
        (1.0, None, TypeError, ("device string, int or Device", "float")),
        (None, None, TypeError, ("NoneType",)),
    ],
)
def test_bad_device_specs_raise(spec: Any, index: Any, error: type[Exception], keys: tuple[str, ...]) -> None:
    with pytest.raises(error, match=words("Device", *keys)):
        dt.Device(spec, index)


# --- dtypes --------------------------------------------------------------------------------------------------------


def test_the_supported_dtypes_are_numpys() -> None:
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    names += ["float16", "float32", "float64", "complex64", "complex128"]
    assert [getattr(dt, n) for n in names] == SUPPORTED
    assert all(isinstance(getattr(dt, n), np.dtype) for n in names)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("float32", np.float32),
        ("f4", np.float32),
        (np.float32, np.float32),
        (np.dtype(np.float32), np.float32),
        (np.dtype(np.float32, metadata={"unit": "m"}), np.float32),
        ("=i2", np.int16),
        ("uint64", np.uint64),
        ("bool", np.bool_),
        ("complex64", np.complex64),
        (float, np.float64),
        (int, np.int64),
        (bool, np.bool_),
        (complex, np.complex128),
    ],
)
def test_to_dtype_gives_the_canonical_dtype(spec: Any, expected: type[np.generic]) -> None:
    got = dtypes.to_dtype(spec)
    assert got == np.dtype(expected)
    assert got is getattr(dt, np.dtype(expected).name if expected is not np.bool_ else "bool")


@pytest.mark.parametrize(
    "spec", ["float128", "U3", "object", "M8[s]", ">f8", "i4,i4", "not_a_dtype", None, 3, [("a", "i4")], {"x": 1}]
)
def test_to_dtype_rejects_unsupported_specs(spec: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=words("myop", "'mydtype'", "supported dtype", "float32")):
        dtypes.to_dtype(spec, op="myop", arg="mydtype")


WEAK_VALUES: st.SearchStrategy[Any] = st.one_of(
    st.booleans(),
    st.integers(-100, 100),
    st.floats(-10, 10, allow_nan=False),
    st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False),
)


@given(operands=st.lists(st.one_of(supported, WEAK_VALUES), min_size=1, max_size=4))
def test_result_type_matches_numpy_with_weak_python_scalars(operands: list[Any]) -> None:
    as_types = [o if isinstance(o, np.dtype) else type(o) for o in operands]
    expected = np.result_type(*operands)
    got = dtypes.result_type(*as_types)
    assert got == expected
    assert got is dtypes.result_type(*as_types)  # cached, canonical


def test_result_type_examples() -> None:
    assert dtypes.result_type(dt.float32, float) is dt.float32
    assert dtypes.result_type(dt.int8, int) is dt.int8
    assert dtypes.result_type(dt.int8, float) is dt.float64
    assert dtypes.result_type(dt.float16, complex) is dt.complex64
    assert dtypes.result_type(dt.uint64, dt.int64) is dt.float64
    assert dtypes.result_type(int) is dt.int64 and dtypes.result_type(bool, bool) is dt.bool
    assert dtypes.result_type(np.float32, np.int8) is dt.float32  # NumPy scalar types are strong
    with pytest.raises(TypeError, match="result_type"):
        dtypes.result_type()
    bad: Any = "not_a_dtype"
    with pytest.raises(TypeError, match="result_type"):
        dtypes.result_type(dt.float32, bad)


@given(src=supported, dst=supported)
def test_can_cast_matches_numpys_same_kind(src: np.dtype[Any], dst: np.dtype[Any]) -> None:
    assert dtypes.can_cast(src, dst) == bool(np.can_cast(src, dst, casting="same_kind"))


def test_can_cast_examples() -> None:
    assert dtypes.can_cast(dt.float64, dt.float16) and dtypes.can_cast(dt.bool, dt.uint8)
    assert dtypes.can_cast(dt.int64, dt.float16) and dtypes.can_cast(dt.uint64, dt.int8)
    assert not dtypes.can_cast(dt.float16, dt.int64) and not dtypes.can_cast(dt.complex64, dt.float64)
    assert not dtypes.can_cast(dt.int8, dt.bool)
    assert not dtypes.can_cast(dt.int8, dt.uint64)  # NumPy's same_kind; PyTorch would allow it


# --- full() with a Python int beyond uint64 makes an object-dtype tensor ------------------------------------


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 2**300])
@pytest.mark.parametrize(
    "call",
    [
        lambda v: dt.full((2,), v),
        lambda v: dt.tensor(v),
        lambda v: dt.tensor([[1], [v]]),
        lambda v: dt.asarray([v, 0]),
    ],
)
def test_an_int_no_supported_dtype_holds_is_one_error_everywhere(call: Callable[[int], object], value: int) -> None:
    # The same mistake, one class: ScalarOverflowError (an OverflowError) naming the op and the int's dtypes.
    with pytest.raises(ScalarOverflowError, match=r"(full|tensor|asarray): .*does not fit .*int64 or uint64"):
        call(value)


# --- np.matrix accepted by from_numpy keeps matrix semantics inside a tensor ---------------------------------


def test_from_numpy_of_a_matrix_has_ndarray_semantics_or_is_refused() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    try:
        t = dt.from_numpy(m)
    except TypeError:
        return  # refusing the subclass is fine too
    assert t[0].shape == (2,)  # once (1, 2): a matrix row stays 2-d
    assert dt.sum(t, 0).tolist() == [4.0, 6.0]  # once TypeError from numpy: matrix.sum() and keepdims


# --- from_dlpack of an unsupported dtype: the producer's RuntimeError instead of ArgumentTypeError -----------


def test_from_dlpack_of_an_unsupported_dtype_is_the_documented_argument_type_error() -> None:
    torch = pytest.importorskip("torch")
    # docstring: "ArgumentTypeError: obj ... has an unsupported dtype"; once NumPy's bare
    # RuntimeError "Unsupported dtype in DLTensor."
    error = raises_devtensor_error_naming(lambda: dt.from_dlpack(torch.ones(2, dtype=torch.bfloat16)), "from_dlpack")
    assert isinstance(error, TypeError)
