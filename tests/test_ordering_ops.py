"""sort, topk and aminmax (devtensor.kernels.ordering): values against NumPy, result tuples, errors, meta."""

from __future__ import annotations

import numpy as np
import pytest

import devtensor as dt

ARGS = np.array([[3.0, 1.0, np.nan, 2.0, 1.0], [0.0, 5.0, 5.0, -1.0, 7.0]])


def test_sort_values_and_named_fields() -> None:
    r = dt.sort(dt.tensor(ARGS), stable=True)
    assert type(r).__name__ == "SortResult" and r._fields == ("values", "indices")
    np.testing.assert_array_equal(r.values.numpy(), np.sort(ARGS, axis=-1))
    np.testing.assert_array_equal(r.indices.numpy(), np.argsort(ARGS, axis=-1, kind="stable"))


def test_sort_descending_stable_nan_first() -> None:
    values, indices = dt.sort(dt.tensor(ARGS), 1, True, stable=True)
    np.testing.assert_array_equal(values.numpy()[0], [np.nan, 3.0, 2.0, 1.0, 1.0])
    np.testing.assert_array_equal(indices.numpy()[0], [2, 0, 3, 1, 4])


def test_sort_out_tuple() -> None:
    v, i = dt.empty((2, 5), dtype="float64"), dt.empty((2, 5), dtype="int64")
    r = dt.sort(dt.tensor(ARGS), out=(v, i))
    assert r.values is v and r.indices is i


def test_topk_values() -> None:
    x = np.arange(12.0).reshape(3, 4)[::-1]
    values, indices = dt.topk(dt.tensor(x), 2, 0)
    np.testing.assert_array_equal(values.numpy(), x[:2])
    np.testing.assert_array_equal(indices.numpy(), [[0] * 4, [1] * 4])
    small = dt.topk(dt.tensor(x), 1, largest=False)
    np.testing.assert_array_equal(small.values.numpy(), x.min(axis=1, keepdims=True))


def test_aminmax_values() -> None:
    x = np.arange(24).reshape(2, 3, 4) % 7
    r = dt.aminmax(dt.tensor(x), dim=1)
    assert r._fields == ("min", "max")
    np.testing.assert_array_equal(r.min.numpy(), x.min(axis=1))
    np.testing.assert_array_equal(r.max.numpy(), x.max(axis=1))
    whole = dt.aminmax(dt.tensor(x), keepdim=True)
    assert whole.min.shape == (1, 1, 1) and whole.max.item() == 6


def test_meta_shapes() -> None:
    m = dt.empty((2, 5), device="meta")
    assert dt.topk(m, 3).values.shape == (2, 3)
    assert dt.aminmax(m, dim=0).max.shape == (5,)


def test_errors() -> None:
    t = dt.tensor(ARGS)
    with pytest.raises(ValueError, match="argument 'k'"):
        dt.topk(t, 6)
    with pytest.raises(TypeError, match="sort: not supported for complex"):
        dt.sort(dt.tensor(np.array([1j])))
    with pytest.raises(IndexError):
        dt.sort(t, 2)
    with pytest.raises(dt.ShapeError, match="aminmax"):
        dt.aminmax(dt.empty((0, 3)))
    with pytest.raises(TypeError, match="'descending'"):
        dt.sort(t, -1, 1)  # type: ignore[arg-type]


def test_a_bad_second_out_is_named_out_1() -> None:
    read_only = np.zeros(3, np.int64)
    read_only.flags.writeable = False
    values = dt.zeros(3)
    with pytest.raises(ValueError, match=r"^sort: argument 'out\[1\]' is read-only"):
        dt.sort(dt.tensor([3.0, 1.0, 2.0]), out=(values, dt.from_numpy(read_only)))
    assert values.version == 0
    with pytest.raises(TypeError, match=r"^topk: .*argument 'out\[1\]'"):
        dt.topk(dt.tensor([3.0, 1.0, 2.0]), 2, out=(dt.zeros(2), dt.zeros(2)))
