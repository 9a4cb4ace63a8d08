"""The out= resize rule and storage ownership: an out of the wrong shape is resized (PyTorch's rule: a
UserWarning when it had elements) unless another tensor is alive on its memory (a view, or the base of one) or
devtensor does not own the memory (from_numpy, asarray, from_dlpack): then an error and nothing changes."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import devtensor as dt

pytestmark = pytest.mark.usefixtures("young_heap")  # (its tests collect the views they drop)


def _resize_warns(out: dt.Tensor) -> None:
    with pytest.warns(UserWarning, match="resized"):
        dt.add(dt.arange(5), 1, out=out)
    assert out.shape == (5,)
    np.testing.assert_array_equal(np.asarray(out.cpu()), [1, 2, 3, 4, 5])


def _refused(out: dt.Tensor, reason: str) -> None:
    # (the array by id: the exception's traceback frames stay alive until collected, and a reference to the
    # array held there would count as one more holder of out's memory)
    before = (out.shape, out.version, id(out._array))
    with pytest.raises(dt.ShapeError, match=reason) as info:
        dt.add(dt.arange(5, device=out.device), 1, out=out)
    assert "add" in str(info.value) and "'out'" in str(info.value)
    assert (out.shape, out.version, id(out._array)) == before


@pytest.mark.parametrize(
    "make_view",
    [
        lambda o: o.contiguous(),
        lambda o: o[0],
        lambda o: o.view(-1),
        lambda o: o.transpose(0, 1),
        lambda o: o.unsqueeze(0),
    ],
)
def test_a_view_counts_only_while_alive(make_view: Callable[[dt.Tensor], dt.Tensor]) -> None:
    o = dt.zeros(2, 3, dtype=dt.int64)
    v = make_view(o)
    if v is not o:
        _refused(o, "live views")
        del v
        gc.collect()
    _resize_warns(o)


def test_a_view_with_its_base_alive_is_not_resized_and_alone_it_is() -> None:
    base = dt.zeros(2, 3, dtype=dt.int64)
    row = base[1]
    _refused(row, "live views")
    del base
    gc.collect()
    _resize_warns(row)


def test_the_unused_expression_from_the_issue() -> None:
    o = dt.zeros(2, 3, dtype=dt.int64)
    o.contiguous()  # a view made and dropped at once
    _resize_warns(o)


def test_many_dropped_views_leave_nothing_behind() -> None:
    o = dt.zeros(4)
    keep = o[1:]
    for _ in range(10_000):
        o[0:2]
    assert "tensors=2" in repr(o._storage)  # o and keep: views are counted, not recorded
    _refused(o, "live views")
    del keep
    assert "tensors=1" in repr(o._storage)
    _resize_warns(o)


def test_holders_that_are_not_tensors_do_not_count() -> None:
    o = dt.zeros(2, 3, dtype=dt.int64)
    o.transpose(0, 1).contiguous()  # a view made and dropped inside an expression
    planned = dt.plan(lambda x: x.transpose(0, 1) * 2, o)  # a plan keeps its stand-ins' storages by key only
    planned(o)
    _resize_warns(o)


def test_a_view_in_a_reference_cycle_counts_until_collected() -> None:
    o = dt.zeros(2, 3, dtype=dt.int64)
    gc.disable()  # (so that the collector runs exactly where the test says)
    try:
        cycle: list[Any] = [o[0]]
        cycle.append(cycle)
        del cycle
        _refused(o, "live views")
        gc.collect()
        _resize_warns(o)
    finally:
        gc.enable()


def test_empty_out_resizes_without_a_warning() -> None:
    o = dt.empty(0, dtype=dt.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dt.add(dt.arange(5), 1, out=o)
    assert o.shape == (5,)


@pytest.mark.parametrize(
    "wrap",
    [
        dt.from_numpy,
        dt.asarray,
        dt.from_dlpack,
        lambda a: dt.asarray(a, copy=None),
    ],
)
def test_memory_of_the_caller_is_never_reallocated(wrap: Callable[[np.ndarray], dt.Tensor]) -> None:
    arr = np.zeros(8, np.int64)
    o = wrap(arr)
    _refused(o, "does not own")
    assert arr.shape == (8,) and not arr.any()
    # The right shape is fine: written in place, seen by the caller.
    dt.add(dt.arange(8), 1, out=o)
    np.testing.assert_array_equal(arr, np.arange(1, 9))


def test_a_copy_is_owned() -> None:
    arr = np.zeros(8, np.int64)
    o = dt.asarray(arr, copy=True)
    _resize_warns(o)
    assert not arr.any()


def test_views_of_caller_memory_are_not_reallocated_either() -> None:
    arr = np.zeros((2, 4), np.int64)
    row = dt.from_numpy(arr)[0]
    _refused(row, "does not own|live views")


def test_a_tensor_exported_with_from_dlpack_is_not_resized_away() -> None:
    t = dt.zeros(3, dtype=dt.int64)
    shared = dt.from_dlpack(t)
    _refused(t, "live views")
    _refused(shared, "does not own")
    del shared
    gc.collect()
    _resize_warns(t)


def test_cuda_stand_in(fake_cupy: ModuleType) -> None:
    o = dt.zeros(2, 3, dtype=dt.int64, device="cuda")
    v = o[0]
    _refused(o, "live views")
    del v
    with pytest.warns(UserWarning, match="resized"):
        dt.add(dt.arange(5, device="cuda"), 1, out=o)
    assert o.shape == (5,)
    raw = fake_cupy.zeros(8, np.int64)
    for wrap in (dt.asarray, dt.from_dlpack):
        w = wrap(raw)
        _refused(w, "does not own")
        assert raw.shape == (8,)


def test_a_loaded_tensor_owns_its_memory(tmp_path: Any) -> None:
    path = tmp_path / "t.dt"
    dt.save(dt.zeros(3, dtype=dt.int64), path)
    o = dt.load(path)
    _resize_warns(o)


@pytest.mark.parametrize(
    "hold",
    [
        lambda o: o.numpy(),
        lambda o: np.asarray(o),
        lambda o: o.numpy()[1:],
        lambda o: dt.from_numpy(o.numpy()),
        lambda o: dt.asarray(o.numpy(), copy=False),
        lambda o: dt.from_dlpack(np.from_dlpack(o)),
    ],
    ids=["numpy()", "np.asarray", "numpy view", "from_numpy", "asarray", "dlpack via NumPy"],
)
def test_memory_held_through_numpy_or_dlpack_counts_while_alive(hold: Callable[[dt.Tensor], Any]) -> None:
    """An array or tensor that reaches out's memory outside devtensor's records (through NumPy or DLPack) would
    stop seeing out after a resize: refused while it is alive, as a view is."""
    o = dt.zeros(2, 3, dtype=dt.int64)
    held = hold(o)
    _refused(o, "live views")
    del held
    gc.collect()
    _resize_warns(o)


def test_the_resize_warning_names_the_callers_line() -> None:
    o = dt.zeros(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dt.add(dt.ones(3), 1, out=o)
        dt.cat([dt.ones(2), dt.ones(2)], out=dt.zeros(1))
    assert [(w.category, w.filename) for w in caught] == [(UserWarning, __file__)] * 2
