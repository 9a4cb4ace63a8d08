"""movedim, tile, repeat_interleave, einsum, meshgrid, searchsorted (devtensor.kernels.shape_more and
devtensor.multi_ops) and out= for arange/linspace: values against NumPy, views, errors. The generic checks come
from tests/op_samples_shape_more.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

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
    with pytest.raises(dt.ShapeError, match="one per element"):
        dt.repeat_interleave(dt.tensor(x), dt.tensor([1, 2]))  # (6 elements flattened, 2 counts)
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
    # A number input, a sorter (PyTorch's and NumPy's), and their errors.
    assert dt.searchsorted(dt.tensor(s), 2.5).shape == () and dt.searchsorted(dt.tensor(s), 2.5).item() == 3
    u = np.array([5.0, 1.0, 3.0])
    order = dt.tensor(np.argsort(u))
    np.testing.assert_array_equal(
        dt.searchsorted(dt.tensor(u), dt.tensor(v), sorter=order).numpy(), np.searchsorted(u, v, sorter=np.argsort(u))
    )
    with pytest.raises(dt.ShapeError, match="number 'input' needs a 1-D"):
        dt.searchsorted(dt.tensor(np.zeros((3, 2))), 1.0)
    with pytest.raises(ValueError, match="'sorter' is outside"):
        dt.searchsorted(dt.tensor(u), 1.0, sorter=dt.tensor([0, 1, 3]))
    with pytest.raises(TypeError, match="'sorter' must be an int64"):
        dt.searchsorted(dt.tensor(u), 1.0, sorter=dt.tensor([0, 1, 2], dtype="int32"))
    with pytest.raises(dt.ShapeError, match="'sorter' of shape"):
        dt.searchsorted(dt.tensor(u), 1.0, sorter=dt.tensor([0, 1]))
    # An empty row per batch: all zeros (was a raw NumPy reshape error).
    assert dt.searchsorted(dt.zeros((2, 0)), dt.ones((2, 3))).tolist() == [[0, 0, 0], [0, 0, 0]]


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


def words(*parts: str) -> str:
    """A regex matching a message that contains every part, in order."""
    return ".*".join(re.escape(p) for p in parts)


FACTORY_OUT: dict[str, tuple[Callable[..., dt.Tensor], Any]] = {
    "empty": (lambda out, **kw: dt.empty(2, 3, out=out, **kw), None),
    "zeros": (lambda out, **kw: dt.zeros((2, 3), out=out, **kw), np.zeros((2, 3))),
    "ones": (lambda out, **kw: dt.ones(2, 3, out=out, **kw), np.ones((2, 3))),
    "full": (lambda out, **kw: dt.full((2, 3), 7, out=out, **kw), np.full((2, 3), 7)),
    "eye": (lambda out, **kw: dt.eye(2, 3, out=out, **kw), np.eye(2, 3)),
}


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("device", ["cpu", "cuda:0", "meta"])
@pytest.mark.parametrize("name", sorted(FACTORY_OUT))
def test_factory_out(name: str, device: str) -> None:
    # PyTorch's factories take out=: dtype and device default to out's, the out rules of every op apply.
    make, expected = FACTORY_OUT[name]
    o = dt.full((2, 3), 5, dtype="int32", device=device)
    version = o.version
    assert make(o) is o and o.dtype == dt.int32 and o.shape == (2, 3) and o.version == version + 1
    if expected is not None and device != "meta":
        np.testing.assert_array_equal(o.cpu().numpy(), expected.astype(np.int32))
    # An empty out is resized silently; a strided out (a view) is written through.
    fresh = dt.empty((0,), dtype="float32", device=device)
    make(fresh)
    assert fresh.shape == (2, 3) and fresh.dtype == dt.float32
    base = dt.zeros((2, 6), device=device)
    make(base[:, ::2])
    if expected is not None and device != "meta":
        np.testing.assert_array_equal(base.cpu().numpy()[:, ::2], expected)
        np.testing.assert_array_equal(base.cpu().numpy()[:, 1::2], 0)
    # A refused call changes nothing: a dtype that does not cast same_kind, another device.
    keep = dt.zeros((2, 3), dtype="int64", device=device)
    version = keep.version
    with pytest.raises(TypeError, match=words(name, "same_kind")):
        make(keep, dtype="float64")
    with pytest.raises(dt.DeviceMismatchError, match=words(name, "device", "out")):
        make(keep, device="meta" if device != "meta" else "cpu")
    with pytest.raises(TypeError, match=words(name, "out", "Tensor")):
        make(np.zeros((2, 3)))
    assert keep.version == version and keep.shape == (2, 3)
    if device != "meta":
        np.testing.assert_array_equal(keep.cpu().numpy(), 0)


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_repeat_interleave_reads_a_tensor_of_counts(device: str) -> None:
    a = np.arange(6).reshape(2, 3)
    t = dt.tensor(a, device=device)
    got = dt.repeat_interleave(t, dt.tensor([1, 0, 2], device=device), 1)
    np.testing.assert_array_equal(got.cpu().numpy(), np.repeat(a, [1, 0, 2], axis=1))
    np.testing.assert_array_equal(t.repeat_interleave(dt.tensor(2, device=device)).cpu().numpy(), np.repeat(a, 2))
    with pytest.raises(ValueError, match="can not be negative"):
        dt.repeat_interleave(t, dt.tensor([1, -1], device=device), 0)
    with pytest.raises(ValueError, match="output_size=4 is not the sum"):
        dt.repeat_interleave(t, dt.tensor([1, 0, 2], device=device), 1, output_size=4)
    with pytest.raises(dt.ShapeError, match="one per element"):
        dt.repeat_interleave(t, dt.tensor([1, 2, 3], device=device), 0)
    with pytest.raises(dt.NoDataError, match="pass output_size"):
        dt.repeat_interleave(dt.empty(2, 3, device="meta"), dt.empty(2, dtype=dt.int64, device="meta"), 0)
