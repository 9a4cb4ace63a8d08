"""The Tensor methods over multi-output and data-dependent ops (``sort``, ``topk``, ``aminmax``, ``max``/``min``,
``nonzero``, ``unique``, ``unique_consecutive``) and ``Tensor.repeat``: the method gives the function's result,
values against NumPy, PyTorch's forms of ``max``/``min``, errors."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import devtensor as dt
from devtensor.multi_ops import MaxResult, MinResult


def same(got: Any, want: Any) -> None:
    if isinstance(got, tuple):
        assert isinstance(want, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
        return
    assert isinstance(got, dt.Tensor) and got.dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got.cpu().numpy(), want)


@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_methods_give_the_functions_results(device: str, fake_cupy: object) -> None:
    a = np.array([[1.0, 3.0, 2.0], [4.0, 0.0, np.nan]])
    t = dt.tensor(a, device=device)
    pairs: list[tuple[Any, Any]] = [
        (t.sort(1, True, stable=True), dt.sort(t, 1, True, stable=True)),
        (t.topk(2, 0, False), dt.topk(t, 2, 0, False)),
        (t.aminmax(dim=1, keepdim=True), dt.aminmax(t, dim=1, keepdim=True)),
        (t.max(1), dt.max(t, 1)),
        (t.min(0, True), dt.min(t, 0, True)),
        (t.max(), dt.max(t)),
        (t.nonzero(), dt.nonzero(t)),
        (t.nonzero(as_tuple=True), dt.nonzero(t, as_tuple=True)),
        (t.unique(return_counts=True), dt.unique(t, return_counts=True)),
        (t.unique_consecutive(), dt.unique_consecutive(t)),
    ]
    for got, want in pairs:
        assert type(got) is type(want)
        same(got, tuple(w.cpu().numpy() for w in want) if isinstance(want, tuple) else want.cpu().numpy())
        for r in got if isinstance(got, tuple) else (got,):
            assert str(r.device) == device


def test_max_and_min_forms() -> None:
    a = np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 4.0]])
    t = dt.tensor(a)
    same(t.max(), np.array(5.0))
    same(dt.min(t), np.array(0.0))
    r = t.max(1)
    assert isinstance(r, MaxResult)
    same(r.values, a.max(1))
    same(r.indices, a.argmax(1))
    r2 = t.min(dim=1, keepdim=True)
    assert isinstance(r2, MinResult)
    same((r2.values, r2.indices), (a.min(1, keepdims=True), a.argmin(1, keepdims=True)))
    other = dt.tensor([3.0, 3.0, 3.0])
    same(t.max(other), np.maximum(a, 3.0))
    same(dt.min(t, other), np.minimum(a, 3.0))
    outs = (dt.empty((2,)), dt.empty((2,), dtype=dt.int64))
    assert dt.max(t, 1, out=outs) == outs
    same(outs[1], a.argmax(1))
    with pytest.raises(TypeError, match="keepdim"):
        t.max(keepdim=True)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="max"):
        dt.tensor([1j]).max(0)
    with pytest.raises(IndexError, match="min"):
        t.min(2)
    with pytest.raises(ValueError, match="max"):
        dt.empty((2, 0)).max(1)


def test_max_and_min_take_other_by_keyword_and_numpy_arrays() -> None:
    a = np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 4.0]])
    b = np.array([3.0, 1.0, 2.0])
    t = dt.tensor(a)
    for fn, reference in ((dt.max, np.maximum), (dt.min, np.minimum)):
        same(fn(t, other=dt.tensor(b)), reference(a, b))
        # An array is an 'other' (as fn(b, t) is), not a dim; arrays are not in the typed signatures.
        same(fn(t, b), reference(a, b))  # type: ignore[call-overload]
        same(fn(b, t), reference(b, a))  # type: ignore[call-overload]
    same(t.max(other=dt.tensor(b)), np.maximum(a, b))
    same(t.min(b), np.minimum(a, b))  # type: ignore[call-overload]
    with pytest.raises(dt.errors.ArgumentTypeError, match="max: got 'other' with 'dim'"):
        dt.max(t, 0, other=t)  # type: ignore[call-overload]
    with pytest.raises(dt.errors.ArgumentTypeError, match="min: argument 'keepdim' does not apply"):
        dt.min(t, b, True)  # type: ignore[call-overload]
    # other= is the elementwise form only: a number there is a type error naming 'other' and the value (PyTorch's
    # schema takes a tensor), never read as a dim
    for name, value in (("max", 4), ("min", 1.5), ("max", [1, 2, 3]), ("min", "2")):
        for call in (getattr(dt, name), getattr(dt.Tensor, name)):
            pattern = rf"^{name}: argument 'other' must be a Tensor.*got \w+ {re.escape(repr(value))}"
            with pytest.raises(TypeError, match=pattern):
                call(t, other=value)


def test_max_and_min_errors_name_the_function_called() -> None:
    with pytest.raises(ValueError, match=r"^max: cannot reduce over dimension 0 of size 0"):
        dt.empty(0).max()
    with pytest.raises(ValueError, match=r"^min: cannot reduce"):
        dt.min(dt.empty(0))
    with pytest.raises(TypeError, match=r"^max: not supported for complex"):
        dt.tensor([1j]).max()
    with pytest.raises(dt.errors.DeviceMismatchError, match=r"^min: "):
        dt.min(dt.ones(2), dt.ones(2, device="meta"))


@pytest.mark.parametrize(
    ("call", "outs", "bad"),
    [
        (lambda t, out: t.max(0, out=out), (dt.empty(3), dt.empty(3)), 1),  # float indices
        (lambda t, out: t.min(0, out=out), (dt.empty(3), dt.empty(3, dtype=dt.int32)), 1),
        (lambda t, out: dt.sort(t, out=out), (dt.empty((2, 3)), dt.empty((2, 3))), 1),
        (
            lambda t, out: dt.topk(t, 1, out=out),
            (dt.empty((2, 1), dtype=dt.float32), dt.empty((2, 1), dtype=dt.int64)),
            0,
        ),
        (lambda t, out: dt.aminmax(t, out=out), (dt.empty(()), dt.empty((), dtype=dt.int64)), 0),
    ],
)
def test_multi_output_outs_need_their_outputs_dtype(call: Any, outs: Any, bad: int) -> None:
    """PyTorch's structured kernels (max.dim, sort, topk, aminmax) require each out's exact dtype: int64
    indices, values of the input's dtype (int64 input for aminmax here, float64 otherwise)."""
    t = dt.tensor([[1, 5, 2], [4, 0, 4]]) if bad == 0 and outs[0].ndim == 0 else dt.tensor([[1.0, 5, 2], [4, 0, 4]])
    versions = [o.version for o in outs]
    with pytest.raises(dt.errors.ArgumentTypeError, match=rf"argument 'out\[{bad}\]' must have dtype"):
        call(t, outs)
    assert [o.version for o in outs] == versions  # nothing written


def test_repeat_tiles_as_pytorch() -> None:
    a = np.arange(6.0).reshape(2, 3)
    t = dt.tensor(a)
    same(t.repeat(2, 1), np.tile(a, (2, 1)))
    same(t.repeat((1, 2)), np.tile(a, (1, 2)))
    same(t.repeat([3, 1, 2]), np.tile(a, (3, 1, 2)))
    same(dt.tensor(2.0).repeat(3), np.array([2.0, 2.0, 2.0]))
    out = dt.empty((4, 3))
    assert t.repeat(2, 1, out=out) is out
    same(out, np.tile(a, (2, 1)))
    with pytest.raises(ValueError, match="repeat: argument 'repeats' has 1 entries"):
        t.repeat(2)
    with pytest.raises(ValueError, match="non-negative"):
        t.repeat(-1, 1)
    with pytest.raises(TypeError, match="repeat"):
        t.repeat(1.5, 1)  # type: ignore[call-overload]
    assert not hasattr(dt, "repeat")  # a method only, as in PyTorch


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), elements=st.integers(-3, 3)
    ),
    st.data(),
)
def test_max_min_along_a_dim_against_numpy(a: Any, data: st.DataObject) -> None:
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    keepdim = data.draw(st.booleans())
    t = dt.tensor(a)
    for got, fn, arg in ((t.max(dim, keepdim), np.max, np.argmax), (t.min(dim, keepdim), np.min, np.argmin)):
        same(got.values, fn(a, axis=dim, keepdims=keepdim))
        same(got.indices, arg(a, axis=dim, keepdims=keepdim).astype(np.int64))
    reps = data.draw(st.lists(st.integers(0, 2), min_size=a.ndim, max_size=a.ndim + 1))
    same(t.repeat(*reps), np.tile(a, reps))


@pytest.mark.usefixtures("fake_cupy")
def test_multi_output_results_are_allocated_on_the_inputs_device_not_the_current_one() -> None:
    # (the CuPy stand-in's current device is 0; the outputs are allocated under the input's device guard)
    t = dt.tensor(np.array([[3.0, 1.0], [2.0, 5.0]]), device="cuda:1")
    for result in (dt.sort(t, 0), t.topk(1), t.aminmax(dim=1), t.max(0)):
        for r in result:
            assert r.device == dt.Device("cuda", 1)
    np.testing.assert_array_equal(dt.sort(t, 0).values.cpu().numpy(), [[2.0, 1.0], [3.0, 5.0]])
