"""A tensor holds its own array object (issue 9, item 2).

``from_numpy``, ``asarray``, ``from_dlpack`` and ``tensor`` wrap a view of (or copy) the caller's array, never
the caller's array object itself: reassigning that object's ``shape``, ``dtype`` or flags afterwards changes
nothing of the tensor, while the memory stays shared (a write through either is seen by the other), as PyTorch's
``from_numpy`` keeps its own sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import devtensor as dt

WRAPPERS: dict[str, Callable[[np.ndarray[Any, Any]], dt.Tensor]] = {
    "from_numpy": dt.from_numpy,
    "asarray": dt.asarray,
    "asarray_same_dtype": lambda a: dt.asarray(a, dtype=a.dtype, device="cpu"),
    "from_dlpack": dt.from_dlpack,
}


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_reassigning_the_callers_shape_changes_nothing_of_the_tensor(name: str) -> None:
    arr = np.zeros(4)
    t = WRAPPERS[name](arr)
    arr.shape = (2, 2)
    assert t.shape == (4,) and t.numpy().shape == (4,)
    assert (t + 1).shape == (4,)
    arr[1, 1] = 5.0  # the memory stays shared
    assert t.numpy().tolist() == [0.0, 0.0, 0.0, 5.0]
    t.add_(1)
    assert np.array_equal(arr, [[1.0, 1.0], [1.0, 6.0]])


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_reassigning_the_callers_dtype_changes_nothing_of_the_tensor(name: str) -> None:
    arr = np.arange(4, dtype=np.float64)
    t = WRAPPERS[name](arr)
    arr.dtype = np.dtype(np.int64)  # type: ignore[misc, assignment, unused-ignore]  # exactly what the test is about
    assert t.dtype == dt.float64 and t.numpy().dtype == np.float64
    assert t.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert (t * 2).numpy().tolist() == [0.0, 2.0, 4.0, 6.0]


def test_tensor_copies_so_nothing_of_the_caller_reaches_it() -> None:
    arr = np.zeros(4)
    t = dt.tensor(arr)
    arr.shape = (2, 2)
    arr[0, 0] = 1.0
    assert t.shape == (4,) and t.numpy().tolist() == [0.0] * 4


def test_the_tensor_never_holds_the_callers_object_and_shares_its_storage_root() -> None:
    arr = np.zeros((2, 3))
    for name, wrap in WRAPPERS.items():
        t = wrap(arr)
        held = t._array
        assert held is not arr, name
        assert np.shares_memory(held, arr), name
    # Two wrappers of one array are one storage for the overlap checks: writing one while reading the other
    # at a partial overlap is refused, exactly as before.
    a = dt.from_numpy(arr)
    b = dt.from_numpy(arr)
    assert a._storage.root is b._storage.root


class _SelfBasedOwner:
    """Memory whose owner names itself as its ``base``, as Cython's ``cython.view.array`` does (SciPy's compiled
    results, e.g. ``Rotation.magnitude()``, are NumPy arrays over a memoryview of one)."""

    def __init__(self, data: np.ndarray[Any, Any]) -> None:
        self.data = data
        self.__array_interface__ = data.__array_interface__

    @property
    def base(self) -> _SelfBasedOwner:
        return self


def test_arrays_over_an_owner_that_is_its_own_base_are_wrapped() -> None:
    data = np.arange(3.0)
    arr = np.asarray(_SelfBasedOwner(data))
    for name, wrap in WRAPPERS.items():
        t = wrap(arr)
        assert t.numpy().tolist() == [0.0, 1.0, 2.0], name
        assert np.shares_memory(t._array, data), name


def test_subclasses_are_wrapped_as_plain_arrays() -> None:
    m = np.ma.masked_array(np.arange(3.0), mask=[False, True, False])
    t = dt.from_numpy(m)
    assert type(t._array) is np.ndarray and t.numpy().tolist() == [0.0, 1.0, 2.0]


def test_read_only_arrays_stay_read_only_through_the_view() -> None:
    arr = np.zeros(3)
    arr.flags.writeable = False
    for wrap in (dt.from_numpy, dt.asarray):
        t = wrap(arr)
        with pytest.raises(dt.ReadOnlyError):
            t.add_(1)
        assert arr.tolist() == [0.0] * 3 and t.version == 0


def test_asarray_copy_true_is_a_copy_with_its_own_memory() -> None:
    arr = np.zeros(3)
    t = dt.asarray(arr, copy=True)
    arr[0] = 1.0
    assert t.numpy().tolist() == [0.0] * 3


@pytest.mark.usefixtures("fake_cupy")
def test_cuda_arrays_are_wrapped_through_a_view_too() -> None:
    import fake_cupy as fc

    with fc.cuda.Device(1):
        raw = fc.zeros(4)
    for wrap in (dt.asarray, dt.from_dlpack):
        t = wrap(raw)
        assert t.device == dt.Device("cuda:1")
        held = t._array
        assert held is not raw and held.data.ptr == raw.data.ptr
        raw.shape = (2, 2)
        assert t.shape == (4,) and held.shape == (4,)
        raw.shape = (4,)
