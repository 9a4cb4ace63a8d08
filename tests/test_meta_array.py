"""Meta tensors' stand-in arrays (devtensor.backends.meta_array): as np.broadcast_to of one element, cheaper."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from devtensor.backends import meta_array


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
