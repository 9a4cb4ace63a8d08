"""A plan's call: the compiled entry (devtensor/_core_entry.h, devtensor/plan/entry.py) against the generated Python
entry (binding.entry_lines) on the same calls, and dt.planned's eager entry."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import devtensor as dt
from devtensor import Tensor, dispatcher, modes
from devtensor.errors import ArgumentTypeError
from devtensor.plan.entry import calls_front, set_general
from devtensor.structured.core import CORE

needs_core = pytest.mark.skipif(CORE is None, reason="the compiled core is not built (or DEVTENSOR_PURE_PYTHON=1)")


def _step(t: Tensor, u: Tensor, s: float) -> Tensor:
    t.add_(u)
    return t * s


class _Other(type(dt.tensor([1.0]))):  # type: ignore[misc]  # (a Tensor subclass: another exact type)
    __slots__ = ()


def _other(src: Tensor) -> Tensor:
    """``src``'s fields in a tensor of class ``_Other``."""
    made = object.__new__(_Other)
    for name in ("_array", "_device", "_dtype", "_shape", "_storage", "_write_checked"):
        setattr(made, name, getattr(src, name))
    return made


def _variant(name: str, base: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Arguments of ``_step`` differing from ``base`` (the plan's example) as ``name`` says."""
    t, u, s = base
    fresh = dt.tensor(np.full((2, 3), 0.5, dtype=np.float32))
    made: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
        "same": ((t, u, s), {}),
        "new tensors": ((dt.tensor(np.ones((2, 3), np.float32)), fresh, s), {}),
        "checked new": ((t, fresh, s), {}),
        "shape": ((dt.tensor(np.ones((3, 2), np.float32)), u, s), {}),
        "dtype": ((t, dt.tensor(np.ones((2, 3))), s), {}),
        "scalar value": ((t, u, 3.0), {}),
        "scalar type": ((t, u, 2), {}),
        "same tensor twice": ((t, t, s), {}),
        "a view of the other": ((t, t[:], s), {}),
        "not a tensor": ((t, np.ones((2, 3), np.float32), s), {}),
        "fewer": ((t, u), {}),
        "keyword": ((t, u), {"s": s}),
        "subclass": ((t, _other(fresh), s), {}),
    }
    return made[name]


_NAMES = [
    "same",
    "new tensors",
    "checked new",
    "shape",
    "dtype",
    "scalar value",
    "scalar type",
    "same tensor twice",
    "a view of the other",
    "not a tensor",
    "fewer",
    "keyword",
    "subclass",
]


def _outcome(entry: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        out = entry(*args, **kwargs)
    except Exception as error:  # (both must raise the same)
        return ("raised", type(error))
    return out if isinstance(out, tuple) and out and out[0] == "general" else ("result", id(out))


def _entries(step: Any, base: list[Any]) -> tuple[Any, Any]:
    """The compiled and the generated entry of ``step``'s plan for ``base``, their general call answering
    ("general", how many positional arguments, the keyword names)."""
    plan = dt.plan(step, *base)
    compiled: Any = plan._entry
    assert type(compiled) is CORE.Entry  # type: ignore[union-attr]
    set_general(compiled, plan._entry_ns, lambda a, k: ("general", len(a), tuple(k)))
    return compiled, plan._entry_ns["entry"]


@needs_core
@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=8))
def test_compiled_entry_takes_the_calls_the_python_entry_takes(names: list[str]) -> None:
    base = [dt.tensor(np.ones((2, 3), np.float32)), dt.tensor(np.ones((2, 3), np.float32)), 2.0]
    compiled, python = _entries(_step, base)
    for name in names:
        args, kwargs = _variant(name, base)
        want = _outcome(python, args, kwargs)
        got = _outcome(compiled, args, kwargs)
        assert got == want, name


def _nested(t: Tensor, sizes: tuple[int, int], opts: dict[str, Any]) -> Tensor:
    t.add_(opts["u"])
    scale: float = opts["s"]
    return t.reshape(sizes) * scale


def _nested_variant(name: str, base: list[Any]) -> tuple[Any, ...]:
    """Arguments of ``_nested`` differing from ``base`` (the plan's example) as ``name`` says."""
    t, sizes, opts = base
    fresh = dt.tensor(np.full((2, 3), 0.5, dtype=np.float32))
    return {
        "same": (t, sizes, opts),
        "an equal dict": (t, (3, 2), {"u": opts["u"], "s": 2.0}),
        "a new tensor inside": (t, sizes, {"u": fresh, "s": 2.0}),
        "a list for the tuple": (t, [3, 2], opts),
        "another size": (t, (6, 1), opts),
        "a longer tuple": (t, (3, 2, 1), opts),
        "the keys in another order": (t, sizes, {"s": 2.0, "u": opts["u"]}),
        "another key": (t, sizes, {"u": opts["u"], "z": 2.0}),
        "a key more": (t, sizes, {**opts, "z": 1}),
        "the same tensor twice": (t, sizes, {"u": t, "s": 2.0}),
        "a tuple for the dict": (t, sizes, ("u", "s")),
        "fewer": (t, sizes),
    }[name]


_NESTED = [
    "same",
    "an equal dict",
    "a new tensor inside",
    "a list for the tuple",
    "another size",
    "a longer tuple",
    "the keys in another order",
    "another key",
    "a key more",
    "the same tensor twice",
    "a tuple for the dict",
    "fewer",
]


@needs_core
@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_NESTED), min_size=1, max_size=8))
def test_compiled_entry_reads_nested_arguments_as_the_python_entry(names: list[str]) -> None:
    base = [dt.tensor(np.ones((2, 3), np.float32)), (3, 2), {"u": dt.tensor(np.ones((2, 3), np.float32)), "s": 2.0}]
    compiled, python = _entries(_nested, base)
    for name in names:
        args = _nested_variant(name, base)
        assert _outcome(compiled, args, {}) == _outcome(python, args, {}), name


@needs_core
@pytest.mark.parametrize("planned_with", [-0.0, 0.0, float("nan"), complex(0.0, 1.0)])
def test_compiled_entry_tells_scalars_apart_as_the_python_entry(planned_with: Any) -> None:
    """Scalars that ``==`` does not tell apart (a zero's sign, NaN: values.Exact keys) are matched by their key."""
    base = [dt.tensor(np.ones((2, 3), np.float32)), dt.tensor(np.ones((2, 3), np.float32)), planned_with]
    compiled, python = _entries(_step, base)
    for value in (-0.0, 0.0, float("nan"), 2.0, complex(0.0, 1.0), complex(-0.0, 1.0), 0):
        args = (base[0], base[1], value)
        assert _outcome(compiled, args, {}) == _outcome(python, args, {}), value


@needs_core
def test_compiled_entry_leaves_modes_stale_plans_and_other_threads_to_the_general_call() -> None:
    base = [dt.tensor(np.ones((2, 3), np.float32)), dt.tensor(np.ones((2, 3), np.float32)), 2.0]
    plan = dt.plan(_step, *base)
    compiled: Any = plan._entry
    set_general(compiled, plan._entry_ns, lambda a, k: "general")
    assert compiled(*base) is not None and compiled(*base) != "general"
    modes.ACTIVE[0] += 1
    try:
        assert compiled(*base) == "general"
    finally:
        modes.ACTIVE[0] -= 1
    seen: list[Any] = []
    worker = threading.Thread(target=lambda: seen.append(compiled(*base)))
    worker.start()
    worker.join()
    assert seen == ["general"]
    dispatcher._generation[0] += 1
    try:
        assert compiled(*base) == "general"
    finally:
        dispatcher._generation[0] -= 1


@needs_core
def test_a_thread_taking_the_first_replica_replays_through_the_compiled_entry() -> None:
    def step(a: Tensor) -> Tensor:
        return dt.exp(a)

    x = dt.tensor(np.linspace(0, 1, 6, dtype=np.float32))
    results: list[Any] = []

    def first() -> None:
        results.append(dt.planned(step))
        fast = results[0]
        results.append(fast(x).numpy().copy())

    worker = threading.Thread(target=first)
    worker.start()
    worker.join()  # (its replica is back in the pool: the entry has no owner)
    fast = results[0]
    plan = fast._last
    assert plan._entry.owner == 0
    assert np.array_equal(fast(x).numpy(), np.exp(x.numpy()))  # takes the first replica: now this thread's
    assert plan._entry.owner == threading.get_ident()


def test_planned_eager_entry_calls_the_step_and_keeps_keywords() -> None:
    def step(a: Tensor) -> tuple[Tensor, Tensor]:
        return a.reshape(3, 2), a.T

    x = dt.tensor(np.arange(6.0).reshape(2, 3))
    fast = dt.planned(step)
    fast(x)
    assert fast._eager == (CORE is not None)  # (views gain without the core: test_plan's single views test)
    if CORE is not None:
        entry: Any = type(fast).__call__
        assert type(entry) is CORE.Entry and entry.body is fast.step
    for got in (fast(x), fast(x, copy_outputs=True)):
        assert np.array_equal(got[0].numpy(), x.numpy().reshape(3, 2)) and np.array_equal(got[1].numpy(), x.numpy().T)
    with pytest.raises(ArgumentTypeError, match="copy_outputs"):
        fast(x, copy_outputs="yes")  # type: ignore[arg-type]


@needs_core
@pytest.mark.parametrize(
    "step,kernel",
    [
        (lambda t: t.transpose(0, 1), True),
        (lambda t: t.T, True),
        (lambda t: dt.movedim(t, source=0, destination=1), True),
        (lambda t: t.permute(1, 0), True),
        (lambda t: t.reshape(3, 2), False),
        (lambda t: t.unsqueeze(-1), True),
        (lambda t: t.squeeze(), True),
    ],
)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_a_plan_of_one_view_calls_its_compiled_front_or_kernel(step: Any, kernel: bool, layout: str) -> None:
    """A one-view plan's compiled entry makes the view as the step does, with no frame: by the view's compiled
    front, or (transpose, permute, movedim, squeeze, unsqueeze, whose spec holds for any strides) by its view
    kernel with the spec worked out at planning, the array wrapped in C. Either way a fresh view of the argument
    per call, with eager's class, layout, storage and version, for new arguments and strided ones; other
    signatures go through the general call."""
    base = np.arange(6.0).reshape(2, 3)

    def make() -> Tensor:
        return dt.tensor(base) if layout == "contiguous" else dt.tensor(base.T.copy()).T

    x = make()
    plan = dt.plan(step, x)
    assert plan.gains and calls_front(plan._entry)
    assert (plan._entry.view is not None) is kernel  # type: ignore[union-attr]
    assert (type(plan._entry.body) is CORE.Front) is not kernel  # type: ignore[union-attr]
    fast = dt.planned(step)
    for arg in (x, x, make(), make()):
        for got in (fast(arg), plan(arg)):
            want = step(arg)
            assert got is not fast(arg) and type(got) is type(want)
            assert (got._storage is arg._storage) is (want._storage is arg._storage)  # (reshape of strided: a copy)
            assert got._shape == want._shape and got._array.strides == want._array.strides
            assert got.dtype == want.dtype and got.version == want.version
            assert np.array_equal(got.numpy(), want.numpy())
    y = dt.tensor(np.arange(6.0).reshape(3, 2))  # (another signature: planned again)
    assert np.array_equal(fast(y).numpy(), step(y).numpy()) and len(fast.plans) == 2


@needs_core
@pytest.mark.parametrize(
    "step",
    [lambda t: dt.split(t, 2), lambda t: dt.chunk(t, 3, 1), lambda t: t.split([1, 3], 0)],
    ids=["split", "chunk", "split-sizes"],
)
def test_a_plan_of_one_multi_view_op_calls_its_python_front(step: Any) -> None:
    """split and chunk have Python fronts: a plan of one such call (its result the step's) calls that front from
    the compiled entry with no frame between, as eager calls it: new views of the argument on each call, for new
    arguments too (the kept layouts of a body would be made again each time)."""
    x = dt.tensor(np.arange(24.0).reshape(4, 6))
    plan = dt.plan(step, x)
    assert plan.gains and calls_front(plan._entry)
    fast = dt.planned(step)
    for arg in (x, x, dt.tensor(np.arange(24.0).reshape(4, 6) * 2), dt.tensor(np.ones((6, 4))).T):
        for got in (plan(arg), fast(arg)):
            want = step(arg)
            assert type(got) is type(want) and len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                assert g._storage is arg._storage and g._array.strides == w._array.strides
                assert g.shape == w.shape and np.array_equal(g.numpy(), w.numpy())


@needs_core
@pytest.mark.parametrize(
    "step",
    [lambda t: t.T.unsqueeze(0), lambda t: t.T.T, lambda t: t.permute(1, 0).squeeze(), lambda t: (t.T, t.unsqueeze(1))],
    ids=["T.unsqueeze", "T.T", "permute.squeeze", "T,unsqueeze"],
)
def test_views_made_by_their_kernels_make_a_plan_gain(step: Any) -> None:
    """Two or more views of arguments by ops whose spec holds for any strides are made by their view kernels (the
    tensor wrapped in C, core.view_tensor), no front: that beats eager's views even for new arguments each call,
    so ``dt.planned`` replays the plan; the views are eager's (class, layout, storage, version)."""
    base = np.arange(6.0).reshape(2, 3)
    x = dt.tensor(base)
    plan = dt.plan(step, x)
    assert plan.gains
    fast = dt.planned(step)
    for arg in (x, x, dt.tensor(base * 2), dt.tensor(base.T.copy()).T):
        for got in (plan(arg), fast(arg)):
            want = step(arg)
            for g, w in zip(*((v,) if isinstance(v, Tensor) else v for v in (got, want)), strict=True):
                assert type(g) is type(w) and g._storage is arg._storage and g.version == w.version
                assert g._shape == w._shape and g._array.strides == w._array.strides
                assert np.array_equal(g.numpy(), w.numpy())
    assert not fast._eager


@needs_core
def test_view_tensor_checks_its_arguments() -> None:
    """core.view_tensor (a replay's view wrap) takes a Tensor class, an array, a tensor and a shape tuple, and
    gives what Backend.wrap_view gives; anything else is a TypeError."""
    assert CORE is not None
    x = dt.tensor(np.arange(6.0).reshape(2, 3))
    made = CORE.view_tensor(type(x), x._array.T, x, (3, 2))
    want = x._backend.wrap_view(x._array.T, x)
    assert type(made) is type(want) and made._storage is x._storage and made._shape == want._shape
    assert made._dtype == want._dtype and made._device is want._device and made._write_checked is False
    for bad in [(int, x._array, x, (3, 2)), (type(x), x._array, 3, (3, 2)), (type(x), x._array, x, [3, 2]), ()]:
        with pytest.raises(TypeError, match="view_tensor"):
            CORE.view_tensor(*bad)
