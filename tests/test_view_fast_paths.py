"""The inline common cases of the view fronts, indexing and the scalar exits (issue 11) behave exactly as the
general paths: cached specs never accept what the meta refuses, views share storage and version, and errors
name the op and the value."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import library
from devtensor.errors import ArgumentTypeError, ViewError


def _m() -> dt.Tensor:
    return dt.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4).copy())


@pytest.mark.parametrize("op", ["reshape", "view"])
def test_a_cached_spec_never_takes_sizes_that_are_not_ints(op: str) -> None:
    t = _m()
    getattr(t, op)(4, 3)  # (the spec of (4, 3) on a contiguous (3, 4) tensor is now cached)
    for bad in [(4.0, 3), (True, 12), (np.float64(4), 3)]:
        with pytest.raises(ArgumentTypeError, match=op):
            getattr(t, op)(*bad)
    assert getattr(t, op)(np.int64(4), 3).shape == (4, 3)  # NumPy ints are ints, as before
    # Sizes that cannot be hashed reach the meta too: a 0-d integer array is an index (NumPy's and PyTorch's
    # rule), a list or a 1-d array is named in the error.
    assert getattr(t, op)((np.array(4), 3)).shape == (4, 3)
    assert getattr(dt, op)(t, (np.array(4), 3)).shape == (4, 3)
    for unhashable in [([4], 3), (np.array([4, 3]),)]:
        with pytest.raises(ArgumentTypeError, match=f"{op}.*'shape'.*ints"):
            getattr(t, op)(*unhashable)


def test_reshape_and_view_of_a_non_contiguous_tensor_after_the_contiguous_case_is_cached() -> None:
    t = _m()
    t.reshape(12)
    t.view(12)
    tt = t.T  # (4, 3), not contiguous
    r = tt.reshape(12)  # a copy: the cached contiguous spec must not apply
    np.testing.assert_array_equal(r.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4).T.reshape(12))
    assert r._storage is not t._storage
    with pytest.raises(ViewError):
        tt.view(12)
    v = t[:, :2].reshape(3, 2)  # strided, still a view
    assert v._storage is t._storage


def test_transpose_of_2d_and_other_ranks() -> None:
    t = _m()
    for v in (t.T, t.transpose(0, 1), t.transpose(-1, -2), dt.transpose(t, 1, 0)):
        assert v.shape == (4, 3) and v._storage is t._storage
        np.testing.assert_array_equal(v.numpy(), t.numpy().T)
    c = dt.zeros(2, 3, 4)
    assert c.transpose(0, 2).shape == (4, 3, 2)
    with pytest.raises(dt.ShapeError, match="T: the tensor must have 2 dims"):
        _ = c.T
    with pytest.raises(IndexError, match="transpose"):
        t.transpose(0, 2)


def test_unsqueeze_cached_specs() -> None:
    t = _m()
    for dim, shape in [(0, (1, 3, 4)), (1, (3, 1, 4)), (2, (3, 4, 1)), (-1, (3, 4, 1)), (-3, (1, 3, 4))]:
        for _ in range(2):
            v = t.unsqueeze(dim)
            assert v.shape == shape and v._storage is t._storage
            np.testing.assert_array_equal(v.numpy(), np.expand_dims(t.numpy(), dim))
    with pytest.raises(IndexError, match=re.escape("range of [-3, 2] (a new dimension of 2-d tensors)")):
        t.unsqueeze(3)
    with pytest.raises(ArgumentTypeError, match="unsqueeze"):
        t.unsqueeze(1.0)  # type: ignore[call-overload]


def test_int_indexes_are_views_sharing_the_version() -> None:
    t = _m()
    row, item = t[1], t[1, 2]
    assert row.shape == (4,) and item.shape == () and type(item._array) is np.ndarray
    assert row._storage is t._storage and item._storage is t._storage
    t.add_(1)
    assert row.version == item.version == t.version == 1
    assert float(item) == 7.0 and item.item() == 7.0 and float(t[-1, -1]) == 12.0
    with pytest.raises(IndexError, match=r"__getitem__.*index \(3, 0\)"):
        t[3, 0]
    with pytest.raises(IndexError, match="__getitem__"):
        t[5]
    assert t[True, 0].shape == (1, 4)  # a bool is no int: NumPy's meaning, a copy
    assert t[np.int64(1), 2].item() == 7.0


def test_scalar_exits() -> None:
    for value, kind in [(1.5, float), (3, int), (True, bool), (1 + 2j, complex)]:
        z = dt.tensor(value)
        assert type(z.item()) is kind and z.item() == value
    assert float(dt.tensor(3)) == 3.0 and float(dt.tensor([2.5])) == 2.5
    with pytest.raises(ValueError, match="item: a Tensor with 2 elements"):
        dt.zeros(2).item()
    with pytest.raises(ValueError, match="item: a Tensor with 2 elements"):
        float(dt.zeros(2))
    with pytest.raises(dt.NoDataError):
        float(dt.zeros((), device="meta"))
    with pytest.raises(dt.NoDataError):
        dt.zeros(1, device="meta").item()


@pytest.mark.parametrize("name", ["reshape", "view"])
def test_reshape_and_view_call_a_kernel_or_override_registered_in_place_of_the_builtin(name: str) -> None:
    """The fronts call the array's reshape themselves only while the built-in kernel is the handler."""
    calls: list[str] = []

    def kernel(xp: Any, array: Any, plan: Any) -> Any:
        calls.append("kernel")
        return array.reshape(plan if type(plan) is tuple else plan[0])

    t = _m()
    with library.register_kernel(name, "cpu", kernel):
        v = getattr(t, name)(4, 3)
        w = getattr(dt, name)(t, (2, 6))
    assert calls == ["kernel", "kernel"] and v.shape == (4, 3) and w.shape == (2, 6)

    def override(xp: Any, array: Any, plan: Any) -> Any:
        calls.append("override")
        return array.reshape(plan if type(plan) is tuple else plan[0])

    with library.override(name, "cpu", override):
        assert getattr(t, name)(12).shape == (12,)
    assert calls[-1] == "override" and len(calls) == 3
    assert getattr(t, name)(6, 2).shape == (6, 2) and len(calls) == 3  # the built-in again


def test_T_takes_a_registered_kernel_an_override_and_a_mode_as_transpose_does() -> None:
    """``x.T`` makes the view itself only while transpose's built-in kernel is the handler and no mode is on."""
    calls: list[str] = []

    def kernel(xp: Any, array: Any, plan: Any) -> Any:
        calls.append("kernel")
        return array.transpose(plan)

    t = _m()
    with library.register_kernel("transpose", "cpu", kernel):
        assert t.T.shape == (4, 3)
    with library.override("transpose", "cpu", kernel):
        assert t.T.shape == (4, 3)
    assert calls == ["kernel", "kernel"]

    class Seen(dt.modes.DispatchMode):
        def __dispatch__(self, op: Any, variant: str, func: Any, args: Any, kwargs: Any) -> Any:
            calls.append(op.name)
            return func(*args, **kwargs)

    with Seen():
        v = t.T
    assert calls[-1] == "transpose" and v._storage is t._storage
    m = dt.zeros(2, 3, device="meta").T
    assert m.shape == (3, 2) and m.device.type == "meta"
    w = t.T
    t.add_(1.0)
    assert w.version == t.version == 1 and w.numpy().tolist() == t.numpy().T.tolist()
