"""What ``dtype=`` accepts (issue 9, item 5): devtensor and NumPy dtype objects, NumPy scalar types, Python's
``bool``/``int``/``float``/``complex`` and NumPy's dtype strings, and nothing else (not a tensor, not an array,
whose ``.dtype`` NumPy's ``np.dtype(obj)`` would read), with a clear error; and every cache of
``devtensor.dtypes`` is bounded and keeps no user object alive.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import dtypes
from devtensor.errors import ArgumentTypeError


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (dt.float32, np.float32),
        (np.dtype(np.int16), np.int16),
        (np.dtype("f8", metadata={"unit": "m"}), np.float64),
        (np.float32, np.float32),
        (np.uint8, np.uint8),
        (np.bool_, np.bool_),
        (bool, np.bool_),
        (int, np.int64),
        (float, np.float64),
        (complex, np.complex128),
        ("float32", np.float32),
        ("f4", np.float32),
        ("<f4" if np.little_endian else ">f4", np.float32),
        ("int64", np.int64),
        ("i1", np.int8),
        ("c16", np.complex128),
        ("bool", np.bool_),
        ("?", np.bool_),
    ],
)
def test_accepted_dtype_specs(spec: Any, expected: type) -> None:
    got = dt.zeros(2, dtype=spec).dtype
    assert got is dtypes.to_dtype(expected) and got == np.dtype(expected)
    assert dt.full((1,), 1, dtype=spec).dtype is got
    assert dt.arange(2, dtype=spec).dtype is got


@pytest.mark.parametrize(
    "spec",
    [
        dt.zeros(2),
        np.zeros(2),
        np.float32(1.0),  # a scalar value, not its type
        [("a", "f4")],
        [1],
        {"names": ["a"], "formats": ["f4"]},
        np.ndarray,
        object,
        str,
        np.dtypes.Float64DType,  # the class of dtype objects, not a dtype
        np.dtype(">f4" if np.little_endian else "<f4"),
        "object",
        "float128",
        "U3",
        "datetime64[s]",
        3,
        b"f4",
    ],
    ids=repr,
)
def test_rejected_dtype_specs_raise_a_type_error_naming_op_arg_and_value(spec: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="zeros: argument 'dtype' must be a supported dtype") as info:
        dt.zeros(2, dtype=spec)
    assert type(spec).__name__ in str(info.value)
    with pytest.raises(ArgumentTypeError, match="tensor: argument 'dtype'"):
        dt.tensor([1], dtype=spec)


@pytest.mark.usefixtures("young_heap")
def test_a_tensor_as_dtype_says_to_pass_its_dtype_and_is_not_kept_alive() -> None:
    t = dt.zeros(1000)
    ref = weakref.ref(t._array)  # tensors take no weak reference; their array lives as long as they do
    with pytest.raises(ArgumentTypeError, match=r"pass its \.dtype"):
        dt.zeros(2, dtype=t)
    with pytest.raises(ArgumentTypeError):
        dt.sum(dt.ones(3), dtype=t)  # type: ignore[arg-type]  # what the test is about
    del t
    gc.collect()
    assert ref() is None


def test_every_cache_is_bounded() -> None:
    for i in range(3 * dtypes.CACHE_LIMIT):
        # Distinct accepted specs (dtypes with their own metadata) and rejected ones of many kinds.
        dtypes.to_dtype(np.dtype("f4", metadata={"i": i}))
        with pytest.raises(ArgumentTypeError):
            dtypes.to_dtype(f"no-such-dtype-{i}")
        dtypes.result_type(*([dt.float32] * (i % 50 + 1)), int)
    assert len(dtypes._to_dtype_cache) <= dtypes.CACHE_LIMIT
    assert len(dtypes._result_cache) <= dtypes.CACHE_LIMIT
    assert len(dtypes._cast_cache) <= dtypes.CACHE_LIMIT
    # Beyond the limit answers are still right, only no longer kept.
    assert dtypes.to_dtype("float16") is dt.float16 and dtypes.result_type(dt.int8, float) is dt.float64
