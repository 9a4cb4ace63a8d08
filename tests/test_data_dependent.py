"""nonzero, unique, unique_consecutive and unique_all (devtensor.data_dependent): values against NumPy, the
data_dependent marker, the op registry, per-key overrides, dispatch modes, meta and CUDA (through the CuPy
stand-in), errors. (The generic checks of tests/test_op_generic.py run on them too.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import devtensor as dt
from devtensor import library
from devtensor.data_dependent import data_dependent_ops
from devtensor.modes import DispatchMode
from devtensor.structured import DataDependentOp, data_dependent_op, get_op


def test_marked_data_dependent() -> None:
    assert all(op.data_dependent for op in data_dependent_ops.values())
    assert dt.nonzero.op is data_dependent_ops["nonzero"]  # type: ignore[attr-defined]
    assert not getattr(get_op("sort"), "data_dependent", False)
    for name in ("nonzero", "unique", "unique_consecutive", "unique_all"):
        op = get_op(name)
        assert isinstance(op, DataDependentOp) and op.data_dependent and op.inplace is None
        assert "out" not in __import__("inspect").signature(op.functional).parameters
    assert dt.unique.op is get_op("unique")  # type: ignore[attr-defined]
    assert not hasattr(dt, "unique_all")  # the Array API's, behind devtensor.array_api


@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_nonzero_values(device: str, fake_cupy: object) -> None:
    x = np.array([[0, 1.5, 0], [2, 0, -1]])
    t = dt.tensor(x, device=device)
    got = dt.nonzero(t)
    assert got.dtype == dt.int64 and str(got.device) == device
    np.testing.assert_array_equal(got.cpu().numpy(), np.argwhere(x))
    for g, w in zip(dt.nonzero(t, as_tuple=True), np.nonzero(x), strict=True):
        np.testing.assert_array_equal(g.cpu().numpy(), w)
    assert dt.nonzero(dt.tensor(0, device=device)).shape == (0, 0)


@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_unique_values(device: str, fake_cupy: object) -> None:
    x = np.array([[3, 1, 3], [2, 1, 1]])
    t = dt.tensor(x, device=device)
    np.testing.assert_array_equal(dt.unique(t).cpu().numpy(), np.unique(x))
    values, inverse, counts = dt.unique(t, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.cpu().numpy(), [1, 2, 3])
    np.testing.assert_array_equal(inverse.cpu().numpy(), [[2, 0, 2], [1, 0, 0]])
    np.testing.assert_array_equal(counts.cpu().numpy(), [3, 1, 2])


def test_errors() -> None:
    with pytest.raises(dt.NoDataError):
        dt.nonzero(dt.empty((2,), device="meta"))
    with pytest.raises(IndexError, match="unique"):
        dt.unique(dt.tensor([1, 2]), dim=1)
    with pytest.raises(TypeError, match="unique: argument 'return_counts'"):
        dt.unique(dt.tensor([1, 2]), return_counts=1)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="unique_consecutive: argument 'dim'"):
        dt.unique_consecutive(dt.tensor([1, 2]), dim=1.0)  # type: ignore[call-overload]
    with pytest.raises(dt.NoDataError, match="unique"):
        dt.unique(dt.empty((2,), device="meta"))
    with pytest.raises(TypeError, match="as_tuple"):
        dt.nonzero(dt.tensor([1]), as_tuple=1)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="Tensor"):
        dt.unique([1, 2])  # type: ignore[call-overload]


def test_unique_dim_and_consecutive() -> None:
    x = np.array([[1, 2, 1], [1, 2, 1], [0, 5, 0]])
    values, inverse, counts = dt.unique(dt.tensor(x), dim=1, return_inverse=True, return_counts=True)
    want = np.unique(x, axis=1, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), want[0])
    np.testing.assert_array_equal(inverse.numpy(), want[1].reshape(-1))
    np.testing.assert_array_equal(counts.numpy(), want[2])
    values, inverse, counts = dt.unique_consecutive(dt.tensor([1, 1, 2, 2, 3, 1, 1, 2]), True, True)
    np.testing.assert_array_equal(values.numpy(), [1, 2, 3, 1, 2])
    np.testing.assert_array_equal(inverse.numpy(), [0, 0, 1, 1, 2, 3, 3, 4])
    np.testing.assert_array_equal(counts.numpy(), [2, 2, 1, 2, 1])
    rows = dt.unique_consecutive(dt.tensor(x), dim=0)
    np.testing.assert_array_equal(rows.numpy(), x[1:])


def test_nan_handling() -> None:
    x = dt.tensor([1.0, np.nan, np.nan, 0.5])
    np.testing.assert_array_equal(dt.unique(x).numpy(), [0.5, 1.0, np.nan])  # one NaN (NumPy 2's equal_nan)
    assert dt.unique_consecutive(x).shape == (4,)  # each NaN its own run (PyTorch)
    values, index, _inverse, counts = get_op("unique_all").functional(x)
    assert values.shape == (4,) and counts.tolist() == [1, 1, 1, 1]  # each NaN distinct (the Array API)
    np.testing.assert_array_equal(index.numpy(), [3, 0, 1, 2])


def test_a_python_override_and_a_mode_see_the_op() -> None:
    calls: list[str] = []

    def doubled(self: Any, sorted: bool, return_inverse: bool, return_counts: bool, dim: int | None) -> Any:
        calls.append("override")
        return (np.unique(self._array) * 2,)

    handle = library.override("unique", "cpu", doubled)
    try:
        assert dt.unique(dt.tensor([3, 1, 3])).tolist() == [2, 6]
    finally:
        handle.remove()
    assert dt.unique(dt.tensor([3, 1, 3])).tolist() == [1, 3] and calls == ["override"]
    with pytest.raises(TypeError, match="unique"):
        library.override(dt.unique, "cpu", lambda self: None)

    class Log(DispatchMode):
        def __dispatch__(self, op: Any, variant: str, fn: Any, args: Any, kwargs: Any) -> Any:
            calls.append(op.name)
            return fn(*args, **kwargs)

    with Log():
        dt.nonzero(dt.tensor([0, 1]))
    assert calls[-1] == "nonzero"


def test_a_user_data_dependent_op() -> None:
    def positives(self: dt.Tensor) -> Any:
        return self.dtype

    op = data_dependent_op("test_positives")(positives)
    try:

        @op.impl("cpu")
        def _(self: Any) -> Any:
            return (self._array[self._array > 0],)

        assert op.functional(dt.tensor([-1, 2, 3])).tolist() == [2, 3]
        op.register_kernel("cpu", lambda self: (self._array.astype(np.float32),))
        with pytest.raises(TypeError, match="dtype float32"):
            op.functional(dt.tensor([1]))
        op.register_kernel("cpu", lambda self: self._array)
        with pytest.raises(TypeError, match="tuple of 1 arrays"):
            op.functional(dt.tensor([1]))
        with pytest.raises(TypeError, match="test_positives"):
            op.impl("cpu")(lambda self, *, out: None)
        with pytest.raises(dt.NoDataError):
            op.functional(dt.empty((2,), device="meta"))
    finally:
        from devtensor.structured import data_dependent_ops_by_name

        data_dependent_ops_by_name.pop("test_positives", None)


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), elements=st.integers(-2, 2)),
    st.booleans(),
    st.booleans(),
)
def test_unique_against_numpy(x: Any, return_inverse: bool, return_counts: bool) -> None:
    got = dt.unique(dt.tensor(x), return_inverse=return_inverse, return_counts=return_counts)
    values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
    want = [values, *([inverse.reshape(x.shape)] if return_inverse else []), *([counts] if return_counts else [])]
    got_list = [got] if isinstance(got, dt.Tensor) else list(got)
    assert len(got_list) == len(want)
    for g, w in zip(got_list, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w)
    nz = dt.nonzero(dt.tensor(x), as_tuple=True)
    if x.ndim:
        for g, w in zip(nz, np.nonzero(x), strict=True):
            np.testing.assert_array_equal(g.numpy(), w)


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), elements=st.integers(0, 2)),
    st.data(),
)
def test_unique_and_unique_consecutive_along_a_dim(x: Any, data: st.DataObject) -> None:
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    axis = dim % x.ndim
    t = dt.tensor(x)
    if x.size:  # (NumPy's unique along an axis of an empty array is NumPy's own special case)
        values, inverse, counts = dt.unique(t, return_inverse=True, return_counts=True, dim=dim)
        want = np.unique(x, axis=axis, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(values.numpy(), want[0])
        np.testing.assert_array_equal(inverse.numpy(), want[1].reshape(-1))
        np.testing.assert_array_equal(counts.numpy(), want[2])
    # unique_consecutive: a plain loop over the slices
    slices = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
    starts = [i for i in range(len(slices)) if i == 0 or not np.array_equal(slices[i], slices[i - 1])]
    runs, run_inverse, run_counts = dt.unique_consecutive(t, True, True, dim)
    np.testing.assert_array_equal(runs.numpy(), np.take(x, np.array(starts, dtype=np.int64), axis=axis))
    np.testing.assert_array_equal(run_counts.numpy(), np.diff([*starts, len(slices)]))
    np.testing.assert_array_equal(run_inverse.numpy(), np.searchsorted(starts, np.arange(len(slices)), "right") - 1)


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(np.int64, st.integers(0, 12), elements=st.integers(0, 9)),
    st.booleans(),
    st.integers(0, 12),
)
def test_bincount_matches_numpy(x: np.ndarray[Any, Any], weighted: bool, minlength: int) -> None:
    weights = np.arange(x.size, dtype=np.float32) * 0.5 if weighted else None
    got = dt.bincount(dt.tensor(x), None if weights is None else dt.tensor(weights), minlength=minlength)
    expected = np.bincount(x, weights, minlength)
    assert got.dtype == expected.dtype  # int64 counts, float64 weighted sums (NumPy's)
    np.testing.assert_array_equal(got.numpy(), expected)
    assert dt.tensor(x).bincount(minlength=minlength).tolist() == np.bincount(x, minlength=minlength).tolist()


def test_bincount_errors() -> None:
    with pytest.raises(ValueError, match=r"bincount.*non-negative"):
        dt.bincount(dt.tensor([1, -1]))
    with pytest.raises(ValueError, match=r"bincount.*1-d"):
        dt.bincount(dt.tensor([[1]]))
    with pytest.raises(TypeError, match=r"bincount.*float64"):
        dt.bincount(dt.tensor([1.0]))
    with pytest.raises(ValueError, match=r"bincount.*weights"):
        dt.bincount(dt.tensor([1, 2]), dt.tensor([1.0]))
    with pytest.raises(ValueError, match=r"bincount.*minlength"):
        dt.bincount(dt.tensor([1]), minlength=-1)
    with pytest.raises(dt.NoDataError):
        dt.bincount(dt.empty(3, dtype=dt.int64, device="meta"))
