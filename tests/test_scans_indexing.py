"""Value tests for the scans (``cumsum``, ``cumprod``, ``diff``), the indexing and ordering ops (``tril``,
``triu``, ``roll``, ``count_nonzero``, ``argsort``, ``gather``, ``take_along_dim``, ``index_select``, ``take``),
``tensordot`` and ``eye``: hypothesis-drawn tensors against NumPy, PyTorch's argument rules and errors, and the
atomicity of a refused call (an index out of range leaves the out as it was)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import devtensor as dt
import devtensor.array_api as xp

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES: list[np.dtype[Any]] = [
    np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64, np.complex128)
]
REAL = [d for d in DTYPES if d.kind != "c"]
SORTABLE: list[np.dtype[Any]] = [np.dtype(np.int8), np.dtype(np.float64), np.dtype(np.uint8)]


def arrays(dtypes: list[np.dtype[Any]], min_dims: int = 0) -> st.SearchStrategy[Any]:
    shapes = hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=4)
    return st.sampled_from(dtypes).flatmap(lambda d: hnp.arrays(d, shapes))


def same(got: dt.Tensor, want: Any) -> None:
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want, strict=True)


# --- scans ------------------------------------------------------------------------------------------------------


@given(a=arrays(DTYPES), data=st.data())
def test_cumsum_and_cumprod_match_numpy(a: Any, data: st.DataObject) -> None:
    dim = data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    dtype = data.draw(st.sampled_from([None, np.dtype(np.float64), np.dtype(np.int64)]))
    if dtype is not None and dtype.kind == "i" and a.dtype.kind in "fc":
        dtype = None
    for name, fn in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
        got = getattr(dt, name)(dt.tensor(a), dim, dtype=dtype)
        want = fn(a, axis=dim if a.ndim else None, dtype=dtype).reshape(a.shape)
        if want.dtype.kind in "fc":
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, equal_nan=True)
        else:
            same(got, want)


def test_cumsum_inplace_and_out() -> None:
    t = dt.tensor(np.array([[1, 2, 3], [4, 5, 6]], np.int32))
    assert t.cumsum_(1) is t
    same(t, np.array([[1, 3, 6], [4, 9, 15]], np.int32))
    out = dt.empty(2, 3, dtype=dt.float64)
    dt.cumprod(t, 0, out=out)
    same(out, np.cumprod(t.numpy(), axis=0).astype(np.float64))
    with pytest.raises(IndexError, match="cumsum"):
        dt.cumsum(t, 2)


@given(a=arrays(DTYPES, min_dims=1), n=st.integers(0, 5), data=st.data())
def test_diff_matches_numpy(a: Any, n: int, data: st.DataObject) -> None:
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    same(dt.diff(dt.tensor(a), n, dim), np.diff(a, n=n, axis=dim))


@pytest.mark.parametrize("n", [6, 10**9, 2**63 - 1, 2**70])
def test_diff_of_an_order_beyond_the_size_answers_from_the_shape(n: int) -> None:
    # NumPy's diff loops n times (a huge n never returns): the result is empty along dim whatever n is.
    a = np.arange(10.0).reshape(2, 5)
    t = dt.tensor(a)
    same(dt.diff(t, n), np.diff(a, n=5))
    same(t.diff(n, 0), np.diff(a, n=2, axis=0))
    out = dt.empty((2, 0))
    assert dt.diff(t, n, out=out) is out and out.shape == (2, 0)
    same(cast(dt.Tensor, np.diff(t, n=n)), np.diff(a, n=5))  # (NumPy's function on a tensor: devtensor's op)
    same(xp.diff(t, n=n), np.diff(a, n=5))
    same(xp.diff(dt.tensor(np.zeros((2, 0))), n=n), np.zeros((2, 0)))
    assert dt.diff(dt.empty((3, 4), device="meta"), n).shape == (3, 0)


def test_diff_errors() -> None:
    with pytest.raises(ValueError, match="diff"):
        dt.diff(dt.tensor(np.float64(1.0)))
    with pytest.raises(ValueError, match="non-negative"):
        dt.diff(dt.tensor(np.ones(3)), -1)
    # prepend/append: PyTorch's shape rules (the number of dims, the sizes off dim).
    with pytest.raises(dt.ShapeError, match="'prepend' must have the number of dims"):
        dt.diff(dt.tensor(np.ones(3)), prepend=dt.tensor(0.0))
    with pytest.raises(dt.ShapeError, match=r"'append' of shape .* except along dim 0"):
        dt.diff(dt.tensor(np.ones((2, 3))), dim=0, append=dt.tensor(np.zeros((1, 2))))
    same(
        dt.diff(dt.tensor(np.arange(3)), prepend=dt.tensor([0.5]), append=dt.tensor([9.0])),
        np.diff(np.arange(3), prepend=[0.5], append=[9.0]),
    )


# --- tril, triu, roll, count_nonzero ----------------------------------------------------------------------------


@given(a=arrays(DTYPES, min_dims=2), k=st.integers(-5, 5))
def test_tril_triu_match_numpy(a: Any, k: int) -> None:
    same(dt.tril(dt.tensor(a), k), np.tril(a, k))
    same(dt.triu(dt.tensor(a), k), np.triu(a, k))
    t = dt.tensor(a)
    t.tril_(k)
    same(t, np.tril(a, k))


def test_tril_refuses_vectors() -> None:
    with pytest.raises(ValueError, match="tril: input tensor must have at least 2 dimensions"):
        dt.tril(dt.tensor(np.ones(3)))


@given(a=arrays(DTYPES), data=st.data())
def test_roll_matches_numpy(a: Any, data: st.DataObject) -> None:
    shift = data.draw(st.integers(-7, 7))
    same(dt.roll(dt.tensor(a), shift), np.roll(a, shift))
    if a.ndim:
        dims = data.draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True))
        shifts = data.draw(st.lists(st.integers(-7, 7), min_size=len(dims), max_size=len(dims)))
        same(dt.roll(dt.tensor(a), shifts, dims), np.roll(a, shifts, axis=dims))


def test_roll_errors() -> None:
    t = dt.tensor(np.ones((2, 3)))
    with pytest.raises(ValueError, match="roll: shifts and dimensions must align"):
        dt.roll(t, (1, 2), 0)
    with pytest.raises(ValueError, match="roll"):
        dt.roll(t, (1, 2))
    with pytest.raises(IndexError, match="roll"):
        dt.roll(t, 1, 2)


@given(a=arrays(DTYPES), data=st.data())
def test_count_nonzero_matches_numpy(a: Any, data: st.DataObject) -> None:
    same(dt.count_nonzero(dt.tensor(a)), np.int64(np.count_nonzero(a)))
    if a.ndim:
        dims = tuple(data.draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True)))
        same(dt.count_nonzero(dt.tensor(a), dims), np.count_nonzero(a, axis=dims).astype(np.int64))


# --- argsort ----------------------------------------------------------------------------------------------------


def sorted_order(values: list[Any], descending: bool) -> list[int]:
    """The stable order of ``values`` (NaN the largest), by Python's sort."""

    def key(i: int) -> tuple[int, Any]:
        v = values[i]
        nan = isinstance(v, float) and v != v
        if descending:
            return (0, 0) if nan else (1, -v)
        return (1, 0) if nan else (0, v)

    return sorted(range(len(values)), key=key)


@given(
    a=hnp.arrays(
        st.sampled_from(SORTABLE),
        hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6),
        elements={"min_value": 0, "max_value": 3},
    ),
    descending=st.booleans(),
)
def test_stable_argsort_keeps_ties_in_order(a: Any, descending: bool) -> None:
    got = dt.argsort(dt.tensor(a), -1, descending, stable=True).numpy()
    assert got.dtype == np.int64
    for row, want_row in zip(got.reshape(-1, a.shape[-1]), a.reshape(-1, a.shape[-1]), strict=True):
        assert row.tolist() == sorted_order(want_row.tolist(), descending)


def test_argsort_nan_is_largest_and_default_matches_numpy() -> None:
    a = np.array([2.0, np.nan, -1.0, 2.0, 0.5])
    assert dt.argsort(dt.tensor(a)).numpy().tolist() == np.argsort(a).tolist()
    assert dt.argsort(dt.tensor(a), descending=True, stable=True).numpy().tolist() == [1, 0, 3, 4, 2]
    with pytest.raises(TypeError, match="argsort"):
        dt.argsort(dt.tensor(np.array([1j])))


# --- gather, take_along_dim, index_select, take -----------------------------------------------------------------


@given(a=arrays(DTYPES, min_dims=1), data=st.data())
def test_gather_matches_take_along_axis(a: Any, data: st.DataObject) -> None:
    dim = data.draw(st.integers(0, a.ndim - 1))
    if a.shape[dim] == 0:
        return
    shape = tuple(
        data.draw(st.integers(0, n)) if i != dim else data.draw(st.integers(0, 4)) for i, n in enumerate(a.shape)
    )
    index = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(0, a.shape[dim] - 1)))
    part = a[tuple(slice(None) if i == dim else slice(0, n) for i, n in enumerate(shape))]
    same(dt.gather(dt.tensor(a), dim, dt.tensor(index)), np.take_along_axis(part, index, axis=dim))
    if all(n == a.shape[i] for i, n in enumerate(shape) if i != dim):
        same(dt.take_along_dim(dt.tensor(a), dt.tensor(index), dim), np.take_along_axis(a, index, axis=dim))


@given(a=arrays(DTYPES, min_dims=1), data=st.data())
def test_index_select_and_take_match_numpy(a: Any, data: st.DataObject) -> None:
    dim = data.draw(st.integers(0, a.ndim - 1))
    if a.shape[dim]:
        index = data.draw(
            hnp.arrays(np.int64, (data.draw(st.integers(0, 5)),), elements=st.integers(0, a.shape[dim] - 1))
        )
        same(dt.index_select(dt.tensor(a), dim, dt.tensor(index)), np.take(a, index, axis=dim))
    if a.size:
        flat = data.draw(
            hnp.arrays(
                np.int64,
                hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                elements=st.integers(-a.size, a.size - 1),
            )
        )
        same(dt.take(dt.tensor(a), dt.tensor(flat)), np.take(a.reshape(-1), flat))


@pytest.mark.parametrize(
    "call",
    [
        lambda t, i, o: dt.gather(t, 1, i, out=o),
        lambda t, i, o: dt.take_along_dim(t, i, 1, out=o),
        lambda t, i, o: dt.take(t, i, out=o),
    ],
    ids=["gather", "take_along_dim", "take"],
)
def test_index_out_of_range_is_an_index_error_and_writes_nothing(call: Any) -> None:
    t = dt.tensor(np.arange(6.0).reshape(2, 3))
    index = dt.tensor(np.array([[0, 7], [1, 0]]))
    out = dt.full((2, 2), -1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        call(t, index, out)
    same(out, np.full((2, 2), -1.0))
    assert out.version == 0


def test_index_errors_follow_pytorch() -> None:
    t = dt.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.raises(IndexError, match=r"roll: dimension 0 .* 0-d"):
        dt.roll(dt.tensor(1.0), 1, 0)
    with pytest.raises(TypeError, match="gather: expected dtype int32 or int64"):
        dt.gather(t, 0, dt.tensor(np.array([[0]], np.uint8)))
    with pytest.raises(ValueError, match="gather"):
        dt.gather(t, 0, dt.tensor(np.array([0, 1])))
    with pytest.raises(IndexError, match="gather"):
        dt.gather(t, 0, dt.tensor(np.array([[-1]])))
    with pytest.raises(ValueError, match="index_select"):
        dt.index_select(t, 0, dt.tensor(np.zeros((1, 1), np.int64)))
    with pytest.raises(IndexError, match="index_select"):
        dt.index_select(t, 1, dt.tensor(np.array([3])))
    same(dt.index_select(t, 1, dt.tensor(np.array([2, 0], np.int32))), t.numpy()[:, [2, 0]])


# --- tensordot, eye ----------------------------------------------------------------------------------------------


@given(data=st.data())
def test_tensordot_matches_numpy(data: st.DataObject) -> None:
    n = data.draw(st.integers(0, 2))
    shared = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    left = data.draw(st.lists(st.integers(0, 3), max_size=2))
    right = data.draw(st.lists(st.integers(0, 3), max_size=2))
    da, db = data.draw(st.sampled_from(REAL)), data.draw(st.sampled_from(REAL))
    a = data.draw(hnp.arrays(da, (*left, *shared), elements={"min_value": 0, "max_value": 3}))
    b = data.draw(hnp.arrays(db, (*shared, *right), elements={"min_value": 0, "max_value": 3}))
    same(dt.tensordot(dt.tensor(a), dt.tensor(b), n), np.tensordot(a, b, axes=n))


def test_tensordot_dims_lists_and_errors() -> None:
    a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(12.0).reshape(4, 3)
    # (the pair of dim lists is declared as Sequence[int]: op schemas have no nested sequence type)
    pair = cast("Sequence[int]", ([1, 2], [1, 0]))
    same(dt.tensordot(dt.tensor(a), dt.tensor(b), pair), np.tensordot(a, b, axes=([1, 2], [1, 0])))
    with pytest.raises(ValueError, match="tensordot: contracted dimensions need to match"):
        dt.tensordot(dt.tensor(a), dt.tensor(b), cast("Sequence[int]", ([2], [1])))
    with pytest.raises(ValueError, match="tensordot"):
        dt.tensordot(dt.tensor(a), dt.tensor(b), cast("Sequence[int]", ([1, 2], [1])))


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_eye_matches_numpy(device: str) -> None:
    for n, m in ((3, None), (2, 4), (4, 2), (0, 3)):
        for dtype in (None, dt.int32, dt.bool, dt.complex64):
            t = dt.eye(n, m, dtype=dtype, device=device)
            want = np.eye(n, m, dtype=dtype or np.float64)
            assert t.shape == want.shape and t.dtype == want.dtype
            if device == "cpu":
                same(t, want)
    with pytest.raises(ValueError, match="eye: argument 'n' must be greater or equal to 0"):
        dt.eye(-1)
    with pytest.raises(TypeError, match="eye"):
        dt.eye(2.0)  # type: ignore[arg-type]


def test_eye_and_index_ops_on_the_cuda_stand_in(fake_cupy: Any) -> None:
    same_cpu = np.eye(3, 2)
    t = dt.eye(3, 2, device="cuda")
    assert t.device.type == "cuda"
    np.testing.assert_array_equal(t.cpu().numpy(), same_cpu)
    x = dt.tensor(np.arange(6.0).reshape(2, 3), device="cuda")
    with pytest.raises(IndexError, match="take"):
        dt.take(x, dt.tensor(np.array([6]), device="cuda"))
    np.testing.assert_array_equal(dt.argsort(x, 1, True, stable=True).cpu().numpy(), [[2, 1, 0], [2, 1, 0]])
