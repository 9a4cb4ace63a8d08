"""Meta tensors' stand-in arrays (devtensor.backends.meta_array): as np.broadcast_to of one element, cheaper."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor.backends import MetaBackend, meta_array


@pytest.mark.parametrize("shape", [(), (3,), (2, 0, 4), (1, 5, 1)])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.float16, np.float32, np.complex128])
def test_same_array_as_broadcast_to(shape: tuple[int, ...], dtype: Any) -> None:
    made = meta_array(shape, np.dtype(dtype))
    expected = np.broadcast_to(np.empty((), dtype), shape)
    assert made.shape == expected.shape and made.dtype == expected.dtype and made.strides == expected.strides
    assert not made.flags.writeable
    with pytest.raises(ValueError):
        made[...] = 0


@pytest.mark.parametrize("shape", [(-1,), (3, -1), (2, -3)])
def test_negative_sizes_raise_value_error(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError):
        meta_array(shape, np.dtype(np.float32))


def test_a_size_too_big_raises_value_error() -> None:
    with pytest.raises(ValueError):
        meta_array((1 << 40, 1 << 40), np.dtype(np.float32))


def test_the_meta_backends_alloc_hands_out_new_read_only_arrays() -> None:
    # alloc keeps one array per (shape, dtype) and hands out views of it: each result is a new object (a
    # storage's root is never shared), read-only, of the asked shape and dtype; bad sizes still raise.
    alloc = MetaBackend.alloc
    first, second = alloc((2, 3), np.dtype(np.float32)), alloc((2, 3), np.dtype(np.float32))
    assert first is not second and first.shape == second.shape == (2, 3) and first.strides == (0, 0)
    assert not first.flags.writeable and not second.flags.writeable
    with pytest.raises(ValueError):
        first.flags.writeable = True
    assert alloc((2, 3), np.dtype(np.int8)).dtype == np.int8 and alloc((), np.dtype(np.float64)).shape == ()
    with pytest.raises(ValueError):
        alloc((2, -3), np.dtype(np.float32))
    x = dt.ones(2, 3, device="meta")
    y = x * 2.0
    z = x * 2.0
    assert y._array is not z._array and y._storage.root is y._array and y.shape == (2, 3)
    v = y[0]
    assert v.shape == (3,) and v.device.type == "meta"
    # Equal dtypes may be distinct objects ('q' and 'l' on Linux): each alloc's array has the dtype it was asked
    # for, so a tensor's dtype stays the object its op named.
    q, canonical = np.dtype("q"), np.dtype(np.int64)
    assert alloc((4, 5), q).dtype is q and alloc((4, 5), canonical).dtype is canonical
    dt.from_numpy(np.zeros((4, 5), dtype="q")).to("meta").clone()
    assert dt.zeros(4, 5, dtype=dt.int64, device="meta").clone().dtype is dt.int64


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda m: m.numpy(), "numpy()"),
        (lambda m: m.item(), "item()"),
        (lambda m: m.tolist(), "tolist()"),
        (lambda m: bool(m), "bool()"),
        (lambda m: float(m), "float()"),
        (lambda m: int(m), "int()"),
        (lambda m: complex(m), "complex()"),
        (lambda m: np.asarray(m), "__array__ (numpy.asarray)"),
    ],
)
def test_a_meta_tensors_no_data_error_names_the_call(call: Any, name: str) -> None:
    m = dt.empty((), dtype=dt.int64, device="meta")
    with pytest.raises(dt.NoDataError, match=rf"^{re.escape(name)}: meta tensors have a shape and a dtype but no data"):
        call(m)
