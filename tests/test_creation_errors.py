"""Creation functions on bad input and on allocations that fail (issue 9, items 3 and 4): every error is a
devtensor error of the matching standard class, for every creation function and device.

- Out of memory is :class:`devtensor.errors.OutOfMemoryError`, a ``MemoryError`` naming the op, the shape, the
  dtype and the bytes; a size beyond the address space is a ``ValueError`` on every device (meta included).
- No value wraps around: ``arange``, ``linspace`` and ``full`` into an integer or bool dtype refuse values
  outside the dtype's range with an ``OverflowError`` naming the range.
- NaN into an integer dtype is a ``ValueError`` everywhere (NumPy's class); an infinity an ``OverflowError``.
- Sizes are ints by ``__index__`` (NumPy integers, 0-d integer arrays), as NumPy takes them.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import devtensor as dt
import devtensor.array_api as xp
from devtensor import backends
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DevtensorError,
    OutOfMemoryError,
    ScalarOverflowError,
)


def words(*parts: str) -> str:
    """A regex matching a message that contains every part, in order."""
    import re

    return ".*".join(re.escape(p) for p in parts)


# 2**59 float64 elements: 4 EiB, within NumPy's size limit but beyond any machine's address space, so the
# allocation fails whatever the operating system's overcommit policy.
HUGE = 2**59
HUGE_BYTES = HUGE * 8


def _huge_meta() -> dt.Tensor:
    return dt.empty(HUGE, device="meta")


CREATORS: dict[str, Callable[[str], object]] = {
    "empty": lambda dev: dt.empty(HUGE, device=dev),
    "zeros": lambda dev: dt.zeros(HUGE, device=dev),
    "ones": lambda dev: dt.ones(HUGE, device=dev),
    "full": lambda dev: dt.full((HUGE,), 1.5, device=dev),
    "empty_like": lambda dev: dt.empty_like(_huge_meta(), device=dev),
    "zeros_like": lambda dev: dt.zeros_like(_huge_meta(), device=dev),
    "ones_like": lambda dev: dt.ones_like(_huge_meta(), device=dev),
    "full_like": lambda dev: dt.full_like(_huge_meta(), 2.0, device=dev),
    "arange": lambda dev: dt.arange(float(HUGE), device=dev),
    "linspace": lambda dev: dt.linspace(0, 1, HUGE, device=dev),
}


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_out_of_memory_is_a_memory_error_naming_op_shape_dtype_and_bytes_on_cpu(name: str) -> None:
    with pytest.raises(OutOfMemoryError, match=words(name, str(HUGE_BYTES), f"({HUGE},)", "float64", "cpu")) as info:
        CREATORS[name]("cpu")
    error = info.value
    assert isinstance(error, MemoryError) and isinstance(error, DevtensorError)
    assert (error.op, error.shape, error.dtype, error.nbytes) == (name, (HUGE,), "float64", HUGE_BYTES)


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("name", sorted(CREATORS))
def test_out_of_memory_is_a_memory_error_on_cuda(name: str) -> None:
    with pytest.raises(OutOfMemoryError, match=words(name, str(HUGE_BYTES), "float64", "cuda:1")):
        CREATORS[name]("cuda:1")


def test_the_issues_example_empty_of_a_trillion_elements() -> None:
    # 8 TB: refused by the allocator here, or (on a machine that overcommits) allocated lazily and untouched.
    try:
        t = dt.empty(10**12)
    except OutOfMemoryError as error:
        assert error.shape == (10**12,) and error.nbytes == 8 * 10**12 and "empty" in str(error)
    else:
        assert t.shape == (10**12,)


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_copies_into_a_device_that_is_out_of_memory(monkeypatch: pytest.MonkeyPatch, device: str) -> None:
    # tensor() and asarray() copy through the backend's from_numpy / from_other; a MemoryError there (NumPy's,
    # CuPy's) becomes devtensor's, named after the creation function.
    backend = dt.backends.backend_for(dt.Device(device))

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("no memory left (simulated)")

    monkeypatch.setattr(type(backend), "from_numpy", fail)
    monkeypatch.setattr(type(backend), "from_other", fail)
    src = np.zeros((2, 3), np.float32)
    with pytest.raises(OutOfMemoryError, match=words("tensor", "24 bytes", "(2, 3)", "float32", device)):
        dt.tensor(src, device=device)
    with pytest.raises(OutOfMemoryError, match=words("tensor", "(2, 3)", "float64", device)):
        dt.tensor(dt.zeros(2, 3), device=device)
    with pytest.raises(OutOfMemoryError, match=words("asarray", "(2, 3)", "float32", device)):
        dt.asarray([[1.0] * 3] * 2, dtype=dt.float32, device=device)


def test_backend_allocations_raise_devtensors_error_themselves() -> None:
    # The backend's own methods (used by Tensor.to, clone, … as well as creation) convert too.
    cpu = backends.backend_for(dt.Device("cpu"))
    with pytest.raises(OutOfMemoryError, match=words("cpu.empty", str(HUGE_BYTES), "float64")):
        cpu.empty((HUGE,), np.dtype(np.float64), dt.Device("cpu"))


@pytest.mark.usefixtures("fake_cupy")
def test_copies_from_cuda_to_host_memory_that_is_out_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    import fake_cupy

    src = dt.zeros(2, 3, device="cuda:0")

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("no host memory left (simulated)")

    monkeypatch.setattr(fake_cupy, "asnumpy", fail)
    with pytest.raises(OutOfMemoryError, match=words("tensor", "48 bytes", "(2, 3)", "float64", "cpu")):
        dt.tensor(src, device="cpu")
    # Tensor.cpu() copies through the backend, which raises devtensor's error (named after the backend method).
    with pytest.raises(OutOfMemoryError, match=words("from_other", "48 bytes", "(2, 3)", "float64", "cpu")):
        src.cpu()


def test_out_of_memory_errors_pickle() -> None:
    error = OutOfMemoryError("empty", (3,), "float64", 24, "cpu", "detail")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is OutOfMemoryError and str(again) == str(error) and again.shape == (3,)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_sizes_beyond_the_address_space_are_value_errors_on_every_device(device: str) -> None:
    makers: list[Callable[[], object]] = [
        lambda: dt.empty(10**19, device=device),
        lambda: dt.zeros(2**62, 4, device=device),
        lambda: dt.full((2**40, 2**40), 1, device=device),
        lambda: dt.linspace(0, 1, 2**63 - 1, device=device),
    ]
    for make in makers:
        with pytest.raises(ArgumentValueError, match=r"more than the \d+ bytes an array can address"):
            make()


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_arange_of_huge_or_infinite_ranges_is_a_value_error(device: str) -> None:
    with pytest.raises(ArgumentValueError, match=words("arange", "1.000e+308", "can address")):
        dt.arange(1e308, device=device)
    with pytest.raises(ArgumentValueError, match=words("arange", "more elements than an array can address")):
        dt.arange(-1e308, 1e308, device=device)
    with pytest.raises(ArgumentValueError, match=words("arange", "finite")):
        dt.arange(math.inf, device=device)


# --- no silent wraparound ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(
    ("call", "keys"),
    [
        (lambda d: dt.arange(300, dtype=dt.uint8, device=d), ("arange", "0 to 299", "uint8", "0 to 255")),
        (lambda d: dt.arange(-1, 5, dtype=dt.uint16, device=d), ("arange", "-1 to 4", "uint16", "0 to 65535")),
        (lambda d: dt.arange(100, 200, 10, dtype=dt.int8, device=d), ("arange", "100 to 190", "int8", "-128 to 127")),
        (lambda d: dt.arange(0.5, 300.0, 1.0, dtype=dt.uint8, device=d), ("arange", "0 to 299", "uint8")),
        (lambda d: dt.arange(2**63, 2**63 + 2, dtype=dt.int64, device=d), ("arange", "int64")),
        (lambda d: dt.arange(5, dtype=dt.bool, device=d), ("arange", "0 to 4", "bool", "0 to 1")),
        (lambda d: dt.linspace(0, 300, 4, dtype=dt.uint8, device=d), ("linspace", "0 to 300", "uint8", "0 to 255")),
        (lambda d: dt.linspace(0, -3, 4, dtype=dt.uint8, device=d), ("linspace", "-3 to 0", "uint8")),
        (lambda d: dt.linspace(-1.5, 1, 3, dtype=dt.uint8, device=d), ("linspace", "-1 to 1", "uint8")),
        (lambda d: dt.linspace(0, 2, 3, dtype=dt.bool, device=d), ("linspace", "bool", "0 to 1")),
        (lambda d: dt.full((2,), 300, dtype=dt.uint8, device=d), ("full", "300", "uint8")),
        (lambda d: dt.full((2,), -1.5, dtype=dt.uint8, device=d), ("full", "uint8")),
        (lambda d: dt.full_like(dt.zeros(2, device=d), 2**40, dtype=dt.int32), ("full_like", "int32")),
        # bool's range is 0 to 1: NumPy and PyTorch make any nonzero value True
        (lambda d: dt.full((2,), 2, dtype=dt.bool, device=d), ("full", "2", "bool", "0 to 1")),
        (lambda d: dt.full((2,), -1, dtype=dt.bool, device=d), ("full", "-1", "bool", "0 to 1")),
        (lambda d: dt.full((2,), -0.5, dtype=dt.bool, device=d), ("full", "bool", "0 to 1")),
        (lambda d: dt.full((2,), math.inf, dtype=dt.bool, device=d), ("full", "inf", "bool", "0 to 1")),
        (lambda d: dt.full((2,), 2**70, dtype=dt.bool, device=d), ("full", "bool", "0 to 1")),
        (lambda d: dt.full_like(dt.zeros(2, dtype=dt.bool, device=d), 2), ("full_like", "bool", "0 to 1")),
        (lambda d: dt.full_like(dt.zeros(2, device=d), -1, dtype=dt.bool), ("full_like", "bool", "0 to 1")),
        (lambda d: xp.full((2,), 2, dtype=xp.bool, device=d), ("full", "bool", "0 to 1")),
        (lambda d: xp.full_like(xp.zeros(2, dtype=xp.bool, device=d), -1), ("full_like", "bool", "0 to 1")),
    ],
)
def test_no_silent_wraparound_into_integer_dtypes(
    call: Callable[[str], object], keys: tuple[str, ...], device: str
) -> None:
    with pytest.raises(ScalarOverflowError, match=words(*keys)):
        call(device)


@pytest.mark.parametrize(
    "call",
    [
        lambda: dt.full((2,), math.nan, dtype=dt.bool),
        lambda: dt.full_like(dt.zeros(2, dtype=dt.bool), math.nan),
        lambda: xp.full((2,), math.nan, dtype=xp.bool),
    ],
)
def test_nan_into_bool_is_refused_as_into_integer_dtypes(call: Callable[[], object]) -> None:
    # NaN is a bad value (ValueError), as for integer dtypes and linspace's bool bound.
    with pytest.raises(ArgumentValueError, match=words("fill_value", "NaN", "bool")):
        call()


def test_bool_fills_within_the_range() -> None:
    for value, expected in [(0, False), (1, True), (True, True), (0.0, False), (1.0, True), (0.5, True)]:
        assert dt.full((2,), value, dtype=dt.bool).numpy().tolist() == [expected] * 2  # (NumPy's value in range)
    assert dt.full((1,), np.bool_(False)).numpy().tolist() == [False]  # type: ignore[arg-type]  # (NumPy's, too)


def test_values_at_the_edges_of_the_range_are_fine() -> None:
    assert dt.arange(256, dtype=dt.uint8).numpy()[[0, -1]].tolist() == [0, 255]
    assert dt.arange(127, -129, -1, dtype=dt.int8).numpy()[[0, -1]].tolist() == [127, -128]
    assert dt.arange(2, dtype=dt.bool).numpy().tolist() == [False, True]
    assert dt.arange(1, 0, -1, dtype=dt.bool).numpy().tolist() == [True]
    assert dt.arange(0, dtype=dt.bool).shape == (0,)
    # Into an integer dtype PyTorch's values: start, end and step truncated first (NumPy gives [0, 2, 4]).
    assert dt.arange(0.5, 5, 1.5, dtype=dt.int64).numpy().tolist() == list(range(0, 5, 1))
    assert dt.arange(10, 0.5, -1.5, dtype=dt.int16).numpy().tolist() == list(range(10, 0, -1))
    with pytest.raises(ValueError, match=words("arange", "step", "truncated", "0")):
        dt.arange(0, 3, 0.5, dtype=dt.int64)
    assert dt.linspace(0, 255, 4, dtype=dt.uint8).numpy().tolist() == [0, 85, 170, 255]
    assert dt.linspace(0, 1, 3, dtype=dt.bool).numpy().tolist() == np.linspace(0, 1, 3, dtype=bool).tolist()
    assert dt.linspace(300, 0, 0, dtype=dt.uint8).shape == (0,)  # no value, nothing to check
    assert dt.full((2,), 255, dtype=dt.uint8).numpy().tolist() == [255, 255]
    # Floating dtypes do not wrap: they round (a value beyond float16's range is an infinity, as in NumPy).
    assert dt.arange(3, dtype=dt.float16).numpy().tolist() == [0.0, 1.0, 2.0]


# --- NaN and infinities into integer dtypes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: dt.tensor(float("nan"), dtype=dt.int64),
        lambda: dt.tensor([1.0, float("nan")], dtype=dt.int32),
        lambda: dt.tensor([[float("nan")]], dtype=dt.uint8, device="meta"),
        lambda: dt.asarray([float("nan")], dtype=dt.int16),
        lambda: dt.full((1,), float("nan"), dtype=dt.int64),
        lambda: dt.full_like(dt.zeros(2), float("nan"), dtype=dt.int8),
        lambda: dt.linspace(float("nan"), 1, 3, dtype=dt.int64),
        lambda: dt.linspace(0, float("nan"), 3, dtype=dt.uint8),
    ],
)
def test_nan_into_an_integer_dtype_is_a_value_error_everywhere(call: Callable[[], object]) -> None:
    with pytest.raises(ArgumentValueError, match="NaN"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: dt.tensor(float("inf"), dtype=dt.int64),
        lambda: dt.full((1,), -math.inf, dtype=dt.int64),
        lambda: dt.linspace(0, math.inf, 3, dtype=dt.int64),
    ],
)
def test_an_infinity_into_an_integer_dtype_is_an_overflow_error(call: Callable[[], object]) -> None:
    with pytest.raises(ScalarOverflowError):
        call()


def test_nan_stays_fine_for_floating_dtypes_and_unconvertible_data_stays_a_type_error() -> None:
    assert math.isnan(dt.tensor(float("nan")).numpy()[()])
    assert math.isnan(dt.linspace(float("nan"), 1, 2).numpy()[0])
    with pytest.raises(ArgumentTypeError, match=words("tensor", "data")):
        dt.tensor(["a"], dtype=dt.int64)


# --- sizes by __index__ -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, np.int64(3), np.uint8(3), np.array(3), np.array(3, dtype=np.int32)])
def test_sizes_that_are_ints_by_index_are_accepted(n: Any) -> None:
    assert dt.empty(n).shape == (3,)
    assert dt.zeros(n, 2).shape == (3, 2)
    assert dt.ones((2, n)).shape == (2, 3)
    assert dt.full(n, 1.0).shape == (3,)
    assert dt.full((n,), 1.0).shape == (3,)
    assert dt.linspace(0, 1, n).shape == (3,)
    assert dt.arange(n).shape == (3,)
    assert dt.empty(np.array([2, n])).shape == (2, 3)


@pytest.mark.parametrize("bad", [2.0, np.float64(2.0), True, np.bool_(True), np.array([[2]]), "2", None])
def test_sizes_that_are_not_ints_are_type_errors(bad: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=words("empty", "size")):
        dt.empty(bad)
    with pytest.raises(ArgumentTypeError, match=words("zeros", "size")):
        dt.zeros(2, bad)


# --- op results that do not fit in memory: the same error as creation functions -------------------------------


@pytest.mark.parametrize("variant", ["functional", "out"])
def test_an_op_result_that_does_not_fit_in_memory_is_out_of_memory_error(variant: str) -> None:
    huge = dt.zeros(1).expand(2**40)  # a view: no memory of its own, 8 TiB as float64
    out = dt.zeros(3)
    with pytest.raises(OutOfMemoryError, match=r"add: out of memory .*shape \(1099511627776,\).*float64") as info:
        dt.add(huge, 1, out=out) if variant == "out" else dt.add(huge, 1)
    assert isinstance(info.value, MemoryError)
    assert out.shape == (3,) and out.version == 0  # nothing changed


@pytest.mark.parametrize(
    ("make", "arg"),
    [
        (lambda a: dt.from_numpy(a), "'array'"),
        (lambda a: dt.asarray(a), "'obj'"),
        (lambda a: dt.tensor(a), "'data'"),
    ],
    ids=["from_numpy", "asarray", "tensor"],
)
def test_an_unsupported_array_dtype_names_the_argument(make: Callable[[Any], Any], arg: str) -> None:
    with pytest.raises(ArgumentTypeError, match=arg):
        make(np.arange(3, dtype=">f8"))


@pytest.mark.parametrize("data", ["a duck", ["a", "b"], b"xy", [[1, "x"]], np.array(["u"])], ids=repr)
def test_text_data_is_refused_naming_the_value(data: Any) -> None:
    """Strings are no array data: every creation function that reads data says so and names the value (SciPy's
    array-API tests expect such a message for ``xp.asarray('a duck')``)."""
    for make in (dt.tensor, dt.asarray, xp.asarray, dt.from_numpy if isinstance(data, np.ndarray) else dt.tensor):
        with pytest.raises(ArgumentTypeError, match=r"Unsupported value .* for argument '(data|obj|array)': strings"):
            make(data)
