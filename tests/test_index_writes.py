"""Writes of whole tensors and by index: ``fill_``, ``zero_``, ``copy_``, ``index_add``, ``index_copy``, ``scatter``,
``scatter_add`` (values against NumPy: ``np.add.at``, assignment), their errors, and PyTorch's inplace rules (a
refused call writes nothing and keeps the version; partial overlap refused; one version bump per call). The generic
checks of every variant run from tests/op_samples_writes.py."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.errors import (
    ArgumentTypeError,
    CastingError,
    IndexOutOfRangeError,
    MemoryOverlapError,
    ScalarOverflowError,
    ShapeError,
)


def words(*keys: str) -> str:
    return "".join(f"(?=.*{re.escape(k)})" for k in keys)


def test_fill_zero_copy_write_in_place_and_bump_the_version_once() -> None:
    t = dt.zeros(2, 3, dtype=dt.float32)
    assert t.fill_(2.5) is t and t.tolist() == [[2.5] * 3] * 2 and t.version == 1
    t.fill_(dt.tensor(np.float64(1.25)))  # a 0-d tensor, cast
    assert t.tolist() == [[1.25] * 3] * 2 and t.version == 2
    assert t.zero_() is t and not t.numpy().any() and t.version == 3
    src = np.array([1.5, -2.0, 3.0])
    assert t.copy_(dt.tensor(src)) is t and t.version == 4  # broadcast, float64 into float32
    np.testing.assert_array_equal(t.numpy(), np.broadcast_to(src.astype(np.float32), (2, 3)))
    i = dt.zeros(3, dtype=dt.int8)
    i.copy_(dt.tensor([1.9, -1.9, 300.0]))  # any dtype into any: astype's cast, as Tensor.to
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(i.numpy(), np.array([1.9, -1.9, 300.0]).astype(np.int8))
    view = t[:, 1]
    view.fill_(9.0)
    assert t.numpy()[:, 1].tolist() == [9.0, 9.0] and t.version == 5  # (a view shares the version counter)


def test_fill_zero_copy_refusals_change_nothing() -> None:
    t = dt.arange(6, dtype=dt.float64).reshape(2, 3)
    before = snapshot(t)
    with pytest.raises(ShapeError, match=words("fill_", "0-dimension")):
        t.fill_(dt.ones(3))
    with pytest.raises(ScalarOverflowError, match=words("fill_", "300")):
        dt.zeros(2, dtype=dt.uint8).fill_(300)
    with pytest.raises(CastingError, match=words("fill_", "complex")):
        t.fill_(1j)
    with pytest.raises(ShapeError, match=words("copy_", "[4]", "[2, 3]")):
        t.copy_(dt.ones(4))
    with pytest.raises(MemoryOverlapError):
        t[:, 1:].copy_(t[:, :-1])  # partial overlap: PyTorch's error
    with pytest.raises(MemoryOverlapError):
        dt.ones(3).expand(2, 3).zero_()
    with pytest.raises(dt.DeviceMismatchError, match="copy_"):
        t.copy_(dt.ones(2, 3, device="meta"))
    assert_unchanged(before)


def test_index_add_and_index_copy_against_numpy() -> None:
    rng = np.random.default_rng(0)
    base = rng.standard_normal((5, 4))
    source = rng.standard_normal((3, 4))
    index = np.array([4, 0, 4])
    expected = base.copy()
    np.add.at(expected, index, 2.0 * source)
    t = dt.tensor(base)
    np.testing.assert_array_equal(dt.index_add(t, 0, dt.tensor(index), dt.tensor(source), alpha=2.0).numpy(), expected)
    assert t.index_add_(0, dt.tensor(index), dt.tensor(source), alpha=2.0) is t and t.version == 1
    np.testing.assert_array_equal(t.numpy(), expected)
    copied = base.copy()
    copied[:, [3, 1]] = base[:, [0, 2]]
    got = dt.index_copy(dt.tensor(base), 1, dt.tensor([3, 1], dtype=dt.int32), dt.tensor(base[:, [0, 2]]))
    np.testing.assert_array_equal(got.numpy(), copied)
    counts = dt.zeros(3, dtype=dt.int64).index_add_(0, dt.tensor([2, 2, 0]), dt.ones(3, dtype=dt.int64))
    assert counts.tolist() == [1, 0, 2]
    # self as its own source: the old values are read (the result is built before it is written)
    x = dt.tensor([1.0, 2.0, 3.0])
    x.index_add_(0, dt.tensor([2, 1, 0]), x)
    assert x.tolist() == [4.0, 4.0, 4.0]


def test_scatter_and_scatter_add_against_numpy() -> None:
    src = dt.arange(1, 11, dtype=dt.float64).reshape(2, 5)
    index = dt.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])
    got = dt.zeros(3, 5).scatter(0, index, src)
    # PyTorch's documented example: result[index[i][j]][j] = src[i][j]
    expected = np.zeros((3, 5))
    for i in range(2):
        for j in range(5):
            expected[index.numpy()[i, j], j] = src.numpy()[i, j]
    np.testing.assert_array_equal(got.numpy(), expected)
    added = dt.ones(3, 5).scatter_add(0, index, src)
    reference = np.ones((3, 5))
    np.add.at(reference, (index.numpy(), np.arange(5)[None, :]), src.numpy())
    np.testing.assert_array_equal(added.numpy(), reference)
    t = dt.zeros(2, 4)
    assert t.scatter_(1, dt.tensor([[2], [3]]), 1.23) is t and t.version == 1
    assert t.tolist() == [[0.0, 0.0, 1.23, 0.0], [0.0, 0.0, 0.0, 1.23]]
    t.scatter_(1, dt.tensor([[2, 2]]), dt.tensor([[2.0, 3.0]]), reduce="multiply")
    assert t.numpy()[0, 2] == pytest.approx(1.23 * 6.0)
    # only index's extent of src is read (PyTorch's rule), smaller than self in the other dims
    part = dt.zeros(3, 3).scatter(0, dt.tensor([[1]]), dt.full((2, 2), 7.0))
    assert part.tolist() == [[0.0, 0.0, 0.0], [7.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize(
    ("call", "error", "keys"),
    [
        (lambda t: t.index_add_(0, dt.tensor([5]), dt.ones(1, 3)), IndexOutOfRangeError, ("index_add", "5")),
        (lambda t: t.index_add_(0, dt.tensor([-1]), dt.ones(1, 3)), IndexOutOfRangeError, ("index_add", "-1")),
        (lambda t: t.index_add_(0, dt.tensor([0.0]), dt.ones(1, 3)), ArgumentTypeError, ("index_add", "index")),
        (lambda t: t.index_add_(0, dt.tensor([0]), dt.ones(1, 3, dtype=dt.float32)), ArgumentTypeError, ("source",)),
        (lambda t: t.index_add_(0, dt.tensor([0, 1]), dt.ones(1, 3)), ShapeError, ("index_add", "source")),
        (lambda t: t.index_add_(2, dt.tensor([0]), dt.ones(1, 3)), IndexOutOfRangeError, ("index_add", "dim")),
        (lambda t: t.index_copy_(0, dt.tensor([[0]]), dt.ones(1, 3)), ShapeError, ("index_copy", "1-d")),
        (lambda t: t.scatter_(0, dt.tensor([[3]]), dt.ones(1, 1)), IndexOutOfRangeError, ("scatter", "3")),
        (lambda t: t.scatter_(0, dt.tensor([[0]], dtype=dt.int16), 1.0), ArgumentTypeError, ("scatter", "int64")),
        (lambda t: t.scatter_(0, dt.tensor([0]), 1.0), ShapeError, ("scatter", "dimensions")),
        (lambda t: t.scatter_(0, dt.tensor([[0, 0, 0, 0]]), 1.0), ShapeError, ("scatter", "larger than self")),
        (lambda t: t.scatter_(0, dt.tensor([[0, 0]]), dt.ones(1, 1)), ShapeError, ("scatter", "larger than src")),
        (lambda t: t.scatter_(0, dt.tensor([[0]]), 1j), CastingError, ("scatter", "complex")),
        (lambda t: t.scatter_add_(0, dt.tensor([[0]]), dt.ones(1, 1, dtype=dt.int64)), ArgumentTypeError, ("src",)),
    ],
)
def test_index_write_errors_change_nothing(call: Any, error: type[Exception], keys: tuple[str, ...]) -> None:
    t = dt.arange(9, dtype=dt.float64).reshape(3, 3)
    before = snapshot(t)
    with pytest.raises(error, match=words(*keys)):
        call(t)
    assert_unchanged(before)


def test_index_writes_refuse_partial_overlap_and_integer_alpha_rules() -> None:
    t = dt.zeros(4, 3)
    with pytest.raises(MemoryOverlapError):
        t[1:].index_add_(0, dt.tensor([0, 1]), t[:2])  # rows 0-1 against rows 1-3
    with pytest.raises(ArgumentTypeError, match=words("index_add", "alpha")):
        dt.zeros(3, dtype=dt.int64).index_add_(0, dt.tensor([0]), dt.ones(1, dtype=dt.int64), alpha=0.5)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.lists(st.integers(0, 3), min_size=0, max_size=6),
    st.sampled_from([0, 1]),
)
def test_index_add_accumulates_as_np_add_at(rows: int, cols: int, picks: list[int], dim: int) -> None:
    shape = (rows, cols)
    size = shape[dim]
    index = np.array([p % size for p in picks], dtype=np.int64)
    base = np.arange(rows * cols, dtype=np.float64).reshape(shape) * 0.5
    source_shape = (len(index), cols) if dim == 0 else (rows, len(index))
    source = np.arange(int(np.prod(source_shape)), dtype=np.float64).reshape(source_shape) + 0.25
    expected = base.copy()
    where: Any = (slice(None),) * dim + (index,)
    np.add.at(expected, where, source)
    got = dt.tensor(base).index_add_(dim, dt.tensor(index), dt.tensor(source))
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("index_dtype", [dt.int32, dt.int64])
def test_scatter_and_scatter_add_take_int32_and_int64_indices(index_dtype: Any) -> None:
    index_np = np.array([[0, 1], [2, 0]])
    src_np = np.array([[1, 2], [3, 4]], dtype=np.int32)
    expected = np.zeros((3, 2), dtype=np.int32)
    np.put_along_axis(expected, index_np, src_np, axis=0)
    index, src = dt.tensor(index_np, dtype=index_dtype), dt.from_numpy(src_np)
    np.testing.assert_array_equal(dt.scatter(dt.zeros(3, 2, dtype=dt.int32), 0, index, src).numpy(), expected)
    added = np.zeros((3, 2), dtype=np.int32)
    np.add.at(added, (index_np, np.arange(2)), src_np)
    np.testing.assert_array_equal(dt.scatter_add(dt.zeros(3, 2, dtype=dt.int32), 0, index, src).numpy(), added)


def test_scatter_converts_a_number_to_self_dtype_first() -> None:
    # (PyTorch's rule: the value 2.5 is 2 for an integer tensor, also when it accumulates: -3 + 2, not -0.5 -> 0)
    assert dt.scatter(dt.tensor(-3), 0, dt.tensor(0), 2.5, reduce="add").item() == -1
    assert dt.scatter(dt.tensor([5, 7], dtype=dt.int32), 0, dt.tensor([1]), 2.9, reduce="multiply").tolist() == [5, 14]
    assert dt.scatter(dt.tensor([1.0, 2.0]), 0, dt.tensor([0]), 2.5, reduce="multiply").tolist() == [2.5, 2.0]
