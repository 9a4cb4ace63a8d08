"""The reductions' direct path (devtensor.meta.DIRECT, kind "plan"): while the built-in CPU kernel is the handler,
the fronts of sum, prod, amax, amin, all and any call NumPy's ufunc.reduce themselves; results keep the kernel's
values, dtypes and layouts (C-contiguous, 0-d results as 0-d tensors), and overrides, modes and out= keep theirs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import devtensor as dt
from devtensor import DispatchKey, library
from devtensor.meta import DIRECT
from devtensor.typed import ConstOut, CPUTensor

_OPS: dict[str, Callable[..., Any]] = {
    "sum": np.sum,
    "prod": np.prod,
    "amax": np.amax,
    "amin": np.amin,
    "all": np.all,
    "any": np.any,
}


def test_the_ufunc_reductions_offer_it_and_the_others_do_not() -> None:
    for name in _OPS:
        op = library.get_op(name)
        offer = getattr(op.meta, DIRECT, None)
        assert offer is not None and offer[0] is op.table.kernels[DispatchKey.CPU], name
    for name in ("mean", "var", "argmax", "logsumexp"):
        assert getattr(library.get_op(name).meta, DIRECT, None) is None, name


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple),
    name=st.sampled_from(sorted(_OPS)),
    dtype=st.sampled_from([np.float32, np.int8, np.int64, np.bool_]),
    keepdim=st.booleans(),
    fortran=st.booleans(),
    data=st.data(),
)
def test_values_dtypes_and_layouts_are_numpys(
    shape: tuple[int, ...], name: str, dtype: type, keepdim: bool, fortran: bool, data: st.DataObject
) -> None:
    a: np.ndarray[Any, Any] = (np.arange(int(np.prod(shape)), dtype=np.int64) % 5 - 1).astype(dtype).reshape(shape)
    if fortran:
        a = np.asfortranarray(a)
    dims = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)) if shape else st.none())
    if name in ("amax", "amin") and dtype == np.bool_:
        return  # (refused for bool, as tested with the reductions)
    got = getattr(dt, name)(dt.from_numpy(a), dims, keepdim)
    expected = _OPS[name](a, axis=dims, keepdims=keepdim)
    arr = got.numpy()
    assert arr.dtype == np.asarray(expected).dtype and arr.shape == np.shape(expected)
    assert arr.tolist() == np.asarray(expected).tolist()
    assert isinstance(got._array, np.ndarray) and got._array.flags.c_contiguous and got._array.flags.writeable
    assert got._storage.version == 0


def test_dtype_out_and_a_cast_into_out() -> None:
    a = np.arange(12, dtype=np.int8).reshape(3, 4) * 20
    t = dt.from_numpy(a)
    assert dt.sum(t).dtype == dt.int64 and dt.sum(t).item() == int(a.astype(np.int64).sum())
    assert dt.sum(t, 0, dtype=dt.float64).tolist() == a.sum(0, dtype=np.float64).tolist()
    out = dt.empty(4, dtype=dt.int64)
    assert dt.sum(t, 0, out=out) is out and out.tolist() == a.sum(0).tolist() and out.version == 1
    wide = dt.empty(3, dtype=dt.float64)
    assert dt.amax(dt.from_numpy(a.astype(np.float32)), 1, out=wide) is wide and wide.tolist() == a.max(1).tolist()
    before = wide.tolist()
    with pytest.raises(dt.errors.CastingError):
        dt.sum(dt.from_numpy(a.astype(np.float32)), 1, out=dt.empty(3, dtype=dt.int64))
    assert wide.tolist() == before


def test_an_override_a_mode_and_repeated_calls_keep_their_results() -> None:
    calls: list[str] = []

    def sum_logged(
        self: CPUTensor, dim: object, keepdim: bool, *, dtype: object, plan: object, out: ConstOut[CPUTensor]
    ) -> None:
        calls.append("sum")
        np.sum(self.array, axis=plan.axis, keepdims=keepdim, out=out.array)  # type: ignore[attr-defined]

    t = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    with library.override("sum", "cpu", sum_logged):
        assert t.sum(0).tolist() == [4.0, 6.0] and t.sum().item() == 10.0
    assert calls == ["sum", "sum"]
    for _ in range(3):  # (the meta's cache: dim and keepdim by exact type)
        assert t.sum(1, True).shape == (2, 1) and t.sum(1).shape == (2,) and t.sum((0, 1)).shape == ()
    with pytest.raises(dt.errors.ArgumentTypeError, match="keepdim"):
        t.sum(1, 1)  # type: ignore[call-overload]
    with pytest.raises(dt.errors.ArgumentTypeError, match="dim"):
        t.sum((True, 0))


def test_common_calls_share_specs_only_with_exactly_equal_arguments() -> None:
    # The fronts read a common call's spec by (shape, dtype, dim, keepdim), dim an int or None and no dtype:
    # bools never stand for ints there, and a dtype argument or a tuple dim takes the general cache.
    t = dt.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(2):
        assert t.sum(1).shape == (2,) and t.sum(1, True).shape == (2, 1) and t.sum(None).shape == ()
        assert t.sum(-1).tolist() == [3.0, 12.0] and t.amax(0).tolist() == [3.0, 4.0, 5.0]
        with pytest.raises(dt.errors.ArgumentTypeError, match="dim"):
            t.sum(True)
        assert t.sum(1, dtype=dt.float64).dtype == dt.float64 and t.sum((1,)).shape == (2,)
        with pytest.raises(IndexError, match="sum"):
            t.sum(2)
    assert dt.sum(dt.from_numpy(np.ones((3, 2), np.float32)), 1).tolist() == [2.0, 2.0, 2.0]
