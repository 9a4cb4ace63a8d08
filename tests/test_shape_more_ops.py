"""movedim, tile, repeat_interleave, einsum, meshgrid, searchsorted (devtensor.kernels.shape_more and
devtensor.multi_ops) and out= for arange/linspace: values against NumPy, views, errors. The generic checks come
from tests/op_samples_shape_more.py."""

from __future__ import annotations

import numpy as np
import pytest

import devtensor as dt


def test_movedim_is_a_view() -> None:
    base = dt.tensor(np.arange(24.0).reshape(2, 3, 4))
    moved = dt.movedim(base, (0, 2), (2, 0))
    np.testing.assert_array_equal(moved.numpy(), np.moveaxis(base.numpy(), (0, 2), (2, 0)))
    moved[0, 0, 0] = -1.0
    assert base.numpy()[0, 0, 0] == -1.0
    assert base.movedim(-1, 0).shape == (4, 2, 3)
    with pytest.raises(ValueError, match="movedim"):
        dt.movedim(base, (0, 1), 2)


def test_tile_and_repeat_interleave() -> None:
    x = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(dt.tile(dt.tensor(x), (2, 1, 2)).numpy(), np.tile(x, (2, 1, 2)))
    np.testing.assert_array_equal(dt.tensor(x).repeat_interleave(2, 0).numpy(), np.repeat(x, 2, axis=0))
    np.testing.assert_array_equal(dt.repeat_interleave(dt.tensor(x), 3).numpy(), np.repeat(x, 3))
    with pytest.raises(TypeError, match="data-dependent"):
        dt.repeat_interleave(dt.tensor(x), dt.tensor([1, 2]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-negative"):
        dt.tile(dt.tensor(x), (-1,))


def test_einsum_forms_and_errors() -> None:
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    ta, tb = dt.tensor(a), dt.tensor(b)
    np.testing.assert_array_equal(dt.einsum("ij,jk->ik", ta, tb).numpy(), a @ b)
    np.testing.assert_array_equal(dt.einsum("ij,jk", [ta, tb]).numpy(), a @ b)
    np.testing.assert_array_equal(dt.einsum("ji", ta).numpy(), a.T)
    np.testing.assert_array_equal(dt.einsum("...i->...", ta).numpy(), a.sum(-1))
    out = dt.empty((2, 4))
    assert dt.einsum("ij,jk->ik", ta, tb, out=out) is out
    assert dt.einsum("ij,jk->ik", dt.empty((2, 3), device="meta"), dt.empty((3, 4), device="meta")).shape == (2, 4)
    with pytest.raises(ValueError, match="names 2 operands"):
        dt.einsum("ij,jk", ta)
    with pytest.raises(ValueError, match="label 'j'"):
        dt.einsum("ij,jk", ta, ta)
    with pytest.raises(ValueError, match="output label"):
        dt.einsum("ij->iz", ta)


def test_meshgrid_views() -> None:
    x, y = np.arange(3), np.arange(4.0)
    for indexing in ("ij", "xy"):
        got = dt.meshgrid(dt.tensor(x), dt.tensor(y), indexing=indexing)
        want = np.meshgrid(x, y, indexing=indexing)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g.numpy(), w)
    tx = dt.tensor(x)
    grid = dt.meshgrid([tx, dt.tensor(y)])[0]
    assert grid._storage.root is tx._storage.root
    with pytest.raises(ValueError, match="indexing"):
        dt.meshgrid(tx, indexing="yx")


def test_searchsorted() -> None:
    s = np.array([1.0, 2.0, 2.0, 4.0])
    v = np.array([[0.0, 2.0], [3.0, 5.0]])
    np.testing.assert_array_equal(dt.searchsorted(dt.tensor(s), dt.tensor(v)).numpy(), np.searchsorted(s, v))
    right = dt.searchsorted(dt.tensor(s), dt.tensor(v), right=True)
    np.testing.assert_array_equal(right.numpy(), np.searchsorted(s, v, side="right"))
    assert dt.searchsorted(dt.tensor(s), dt.tensor(v), out_int32=True).dtype == dt.int32
    with pytest.raises(ValueError, match="contradict"):
        dt.searchsorted(dt.tensor(s), dt.tensor(v), side="left", right=True)
    with pytest.raises(ValueError, match="leading dims"):
        dt.searchsorted(dt.tensor(np.zeros((3, 2))), dt.tensor(v))


def test_arange_linspace_out() -> None:
    o = dt.empty((5,), dtype="float32")
    assert dt.arange(5, out=o) is o
    np.testing.assert_array_equal(o.numpy(), np.arange(5, dtype=np.float32))
    o = dt.zeros((4,))
    before = o._storage.version
    dt.linspace(0, 1, 4, out=o)
    np.testing.assert_array_equal(o.numpy(), np.linspace(0, 1, 4))
    assert o._storage.version == before + 1
    empty = dt.empty((0,), dtype="int64")
    dt.arange(2, 7, out=empty)
    np.testing.assert_array_equal(empty.numpy(), np.arange(2, 7))
    keep = dt.zeros((3,), dtype="int64")
    with pytest.raises(TypeError, match="same_kind"):
        dt.arange(0.5, 3.0, dtype="float64", out=keep)
    np.testing.assert_array_equal(keep.numpy(), 0)
    with pytest.raises(dt.DeviceMismatchError):
        dt.linspace(0, 1, 3, device="meta", out=dt.zeros(3))
