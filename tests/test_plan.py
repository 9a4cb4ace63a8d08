"""Static plans (devtensor.plan): tracing on meta stand-ins, replay equal to eager bit for bit, signature checks,
invalidation by registrations, ``planned``'s cache, random ops drawing afresh."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import Tensor, library
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.plan.planned import Planned
from devtensor.typed import ConstOut, CPUTensor


def _weights(seed: int = 0) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    rng = np.random.default_rng(seed)
    w1 = dt.tensor((rng.standard_normal((64, 32)) * 0.1).astype(np.float32))
    b1 = dt.tensor(np.zeros(32, np.float32))
    w2 = dt.tensor((rng.standard_normal((32, 10)) * 0.1).astype(np.float32))
    b2 = dt.tensor(np.zeros(10, np.float32))
    return w1, b1, w2, b2


def _batch(seed: int) -> tuple[Tensor, Tensor]:
    rng = np.random.default_rng(seed)
    x = dt.tensor(rng.random((16, 64)).astype(np.float32))
    onehot = np.zeros((16, 10), np.float32)
    onehot[np.arange(16), rng.integers(0, 10, 16)] = 1.0
    return x, dt.tensor(onehot)


def mlp_step(w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor, x: Tensor, y: Tensor, lr: float) -> Any:
    """A plainly written SGD step of a one-hidden-layer MLP (as examples/train_digits.py's model)."""
    pre = x @ w1 + b1
    h = pre.relu()
    logits = h @ w2 + b2
    logp = dt.log_softmax(logits, dim=1)
    loss = -(logp * y).sum() / 16.0
    d_logits = (logp.exp() - y) / 16.0
    d_w2 = h.T @ d_logits
    d_b2 = d_logits.sum(dim=0)
    d_h = d_logits @ w2.T
    d_pre = d_h * (pre > 0)
    d_w1 = x.T @ d_pre
    d_b1 = d_pre.sum(dim=0)
    w1.sub_(d_w1, alpha=lr)
    b1.sub_(d_b1, alpha=lr)
    w2.sub_(d_w2, alpha=lr)
    b2.sub_(d_b2, alpha=lr)
    return {"loss": loss, "logits": logits}


def test_mlp_steps_replay_bit_identical_to_eager() -> None:
    planned_w = _weights()
    eager_w = _weights()
    x, y = _batch(0)
    plan = dt.plan(mlp_step, *planned_w, x, y, 0.5)
    assert plan.direct_ops == len(plan.records)  # every op replays as a direct kernel or ufunc call
    assert all(w.tolist() == e.tolist() for w, e in zip(planned_w, eager_w, strict=True))  # planning touches nothing
    versions = [w._storage.version for w in planned_w]
    for seed in range(5):
        x, y = _batch(seed)
        got = plan(*planned_w, x, y, 0.5)
        want = mlp_step(*eager_w, x, y, 0.5)
        assert got.keys() == want.keys()
        for key in want:
            assert got[key].numpy().tobytes() == want[key].numpy().tobytes()
        for w, e in zip(planned_w, eager_w, strict=True):
            assert w.numpy().tobytes() == e.numpy().tobytes()
    assert [w._storage.version - v for w, v in zip(planned_w, versions, strict=True)] == [5, 5, 5, 5]


def test_outputs_live_in_the_plans_buffers_unless_copied() -> None:
    def step(a: Tensor) -> Tensor:
        return a * 2.0

    plan = dt.plan(step, dt.tensor([1.0, 2.0]))
    first = plan(dt.tensor([1.0, 2.0]))
    second = plan(dt.tensor([5.0, 6.0]))
    assert first is second and first.tolist() == [10.0, 12.0]
    assert any(first is buffer for buffer in plan.buffers)
    copied = plan(dt.tensor([1.0, 2.0]), copy_outputs=True)
    plan(dt.tensor([3.0, 3.0]))
    assert copied.tolist() == [2.0, 4.0]


def test_outputs_of_each_kind() -> None:
    a = dt.tensor([1.0, 2.0])
    assert dt.plan(lambda t: None, a)(a) is None
    out = dt.plan(lambda t: (t + 1, [t * 3]), a)(a)
    assert isinstance(out, tuple) and out[0].tolist() == [2.0, 3.0] and out[1][0].tolist() == [3.0, 6.0]
    assert dt.plan(lambda t: t, a)(a) is a  # an argument returned is the argument
    with pytest.raises(dt.PlanError, match="must return"):
        dt.plan(lambda t: 3, a)


def test_nested_arguments_views_and_out() -> None:
    def step(params: dict[str, Tensor], pair: tuple[Tensor, Tensor]) -> Tensor:
        dt.add(pair[0], pair[1], out=params["acc"])
        return params["acc"].T.sum(dim=1)

    acc = dt.tensor(np.zeros((2, 3), np.float32))
    a = dt.tensor(np.ones((2, 3), np.float32))
    b = dt.tensor(np.full((2, 3), 2.0, np.float32))
    plan = dt.plan(step, {"acc": acc}, (a, b))
    assert acc.tolist() == [[0.0] * 3] * 2
    version = acc._storage.version
    assert plan({"acc": acc}, (a, b)).tolist() == [6.0, 6.0, 6.0]
    assert acc.tolist() == [[3.0] * 3] * 2 and acc._storage.version == version + 1


@pytest.mark.parametrize(
    ("step", "where"),
    [
        (lambda t: t * t.sum().item(), "item"),
        (lambda t: t.numpy(), "numpy"),
        (lambda t: t.tolist(), "tolist"),
        (lambda t: t if t.sum() > 0 else -t, "__bool__"),
        (lambda t: t * float(t.sum()), "__float__"),
        (lambda t: t[t > 0], "__getitem__"),
    ],
)
def test_data_reads_while_tracing_raise_plan_error(step: Any, where: str) -> None:
    a = dt.tensor([1.0, -2.0])
    with pytest.raises(dt.PlanError, match=f"line .* in {where}") as info:
        dt.plan(step, a)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, dt.DevtensorError)


def test_signature_mismatch_names_the_argument() -> None:
    a = dt.tensor([1.0, 2.0])
    plan = dt.plan(lambda t, s: t * s, a, 2.0)
    with pytest.raises(dt.PlanError, match=r"leaf 0 .*shape \[3\].*shape \[2\]"):
        plan(dt.tensor([1.0, 2.0, 3.0]), 2.0)
    with pytest.raises(dt.PlanError, match=r"leaf 0 .*float32.*float64"):
        plan(dt.tensor(np.ones(2, np.float32)), 2.0)
    with pytest.raises(dt.PlanError, match=r"leaf 1 is float 3\.0, the plan was made for float 2\.0"):
        plan(a, 3.0)
    with pytest.raises(dt.PlanError, match="nesting"):
        plan((a,), 2.0)
    same = dt.plan(lambda t, u: t + u, a, a)
    with pytest.raises(dt.PlanError, match="same tensor"):
        same(a, a.clone())
    assert same(a, a).tolist() == [2.0, 4.0]


def test_registration_after_planning_invalidates_and_planned_replans() -> None:
    a = dt.tensor([1.0, 2.0])
    plan = dt.plan(lambda t: t.exp(), a)
    calls = []

    @dt.planned
    def fast(t: Tensor) -> Tensor:
        calls.append(1)
        return t.exp()

    fast(a)

    def fake_exp(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 10, out=out.array)

    with library.override("exp", "cpu", fake_exp):
        with pytest.raises(dt.PlanError, match="registered or removed after planning"):
            plan(a)
        assert fast(a).tolist() == [10.0, 20.0]
    with pytest.raises(dt.PlanError, match="after planning"):
        plan(a)
    assert fast(a).tolist() == np.exp(np.array([1.0, 2.0])).tolist()
    assert len(calls) == 3  # traced once, then again after each registration change


def test_planned_keeps_one_plan_per_signature_bounded() -> None:
    traces = []

    @dt.planned(maxsize=2)
    def fast(t: Tensor, k: int) -> Tensor:
        traces.append(k)
        return t * k

    a = dt.tensor([1.0, 2.0])
    assert fast(a, 2).tolist() == [2.0, 4.0]
    assert fast(a, 2).tolist() == [2.0, 4.0]
    assert fast(a, 3).tolist() == [3.0, 6.0]
    assert fast(dt.tensor([1.0]), 3).tolist() == [3.0]
    assert traces == [2, 3, 3]
    assert len(fast.plans) == 2
    fast(a, 2)
    assert traces == [2, 3, 3, 2]


def test_random_ops_draw_afresh_on_each_replay() -> None:
    def step(t: Tensor) -> Tensor:
        return (t * 0.0).exponential_()

    plan = dt.plan(step, dt.tensor(np.zeros(64)))
    first = plan(dt.tensor(np.zeros(64)), copy_outputs=True)
    second = plan(dt.tensor(np.zeros(64)), copy_outputs=True)
    assert not np.array_equal(first.numpy(), second.numpy())
    assert "(random)" in repr(plan)


def test_print_shows_a_table() -> None:
    w = _weights()
    x, y = _batch(0)
    text = repr(dt.plan(mlp_step, *w, x, y, 0.5))
    with pytest.raises(ArgumentValueError, match="maxsize"):
        dt.planned(maxsize=0)
    assert text.startswith("Plan(mlp_step, ")
    assert "log_softmax" in text and "sub_" in text and "[16, 10] float32" in text and " b0" in text


def test_tensors_no_recorded_op_made_are_refused() -> None:
    outside = dt.tensor([1.0, 2.0])
    # (a tensor made outside the step, or over a NumPy array's memory, may change between replays)
    for step in (lambda t: t * outside, lambda t: dt.asarray(np.ones(2)) + t):
        with pytest.raises(dt.PlanError, match="neither an argument of the step nor made by a recorded op"):
            dt.plan(step, dt.tensor([1.0, 2.0]))


def test_check_compares_eager_and_planned_runs_on_copies() -> None:
    w = _weights()
    before = [t.numpy().tobytes() for t in w]
    x, y = _batch(1)
    plan = dt.plan(mlp_step, *w, x, y, 0.5)
    plan.check(*w, x, y, 0.5)
    assert [t.numpy().tobytes() for t in w] == before

    def noisy(t: Tensor) -> Tensor:
        return (t * 0.0).exponential_()

    with pytest.raises(dt.PlanError, match="the output leaf 0 differs"):
        dt.plan(noisy, dt.tensor(np.zeros(8))).check(dt.tensor(np.zeros(8)))


def test_custom_ops_take_part_and_modes_see_the_trace() -> None:
    def meta(self: Tensor) -> Any:
        return self.shape, self.dtype

    name = "plan_test_triple"
    op = library.custom_op(name, out_may_be_input=True, method=False)(meta)
    try:

        @op.impl("cpu")
        def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
            np.multiply(self.array, 3, out=out.array)

        a = dt.tensor([1.0, 2.0])
        with library.LoggingMode() as mode:
            plan = dt.plan(lambda t: op.functional(t) + 1, a)
        assert mode.names == [name, "add"]
        assert plan(a).tolist() == [4.0, 7.0]
    finally:
        library.remove_op(name)


def _expand_add(x: Tensor) -> Tensor:
    t = x * 1.0
    t.expand(3, 5).add_(x)
    return t


def _index_expand_mul(x: Tensor) -> Tensor:
    t = x * 1.0
    t[None].expand(3, 5).mul_(2)
    return t


def _created_expand_add(x: Tensor) -> Tensor:
    t = dt.zeros(5)
    t.expand(3, 5).add_(x)
    return t


def _created_expand_out(x: Tensor) -> Tensor:
    t = dt.zeros(5)
    dt.add(x.expand(3, 5), 1.0, out=t.expand(3, 5))
    return t


@pytest.mark.parametrize("step", [_expand_add, _index_expand_mul, _created_expand_add, _created_expand_out])
def test_writes_into_expanded_views_of_tensors_the_step_made_raise_as_eager(step: Any) -> None:
    x = dt.arange(5.0)
    with pytest.raises(dt.MemoryOverlapError) as eager:
        step(x)
    with pytest.raises(dt.MemoryOverlapError) as planned:
        dt.plan(step, x)(x)
    assert str(planned.value) == str(eager.value)


def test_flags_must_be_bools() -> None:
    a = dt.ones(3)
    plan = dt.plan(lambda t: t * 2.0, a)
    with pytest.raises(ArgumentTypeError, match="'copy_outputs' must be a bool, got str 'yes'"):
        plan(a, copy_outputs="yes")  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="'cuda_graph' must be a bool, got int 1"):
        dt.plan(lambda t: t * 2.0, a, cuda_graph=1)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="'step' must be a callable, got int 3"):
        dt.plan(3, a)  # type: ignore[arg-type]
    stepped = dt.planned(lambda t: t * 2.0)
    with pytest.raises(ArgumentTypeError, match="planned: argument 'copy_outputs' must be a bool"):
        stepped(a, copy_outputs=1)  # type: ignore[arg-type]
    copied = plan(a, copy_outputs=np.True_)  # type: ignore[arg-type]  # NumPy bools are bools, as in NumPy and PyTorch
    assert copied.tolist() == [2.0, 2.0, 2.0] and copied._storage is not plan(a)._storage


def test_print_shows_out_targets() -> None:
    def step(x: Tensor, y: Tensor, o: Tensor) -> Tensor:
        dt.add(x, y, out=o)
        return o

    a = dt.ones(3)
    text = repr(dt.plan(step, a, a * 2, dt.zeros(3)))
    assert "add.out  functional  %0, %1, out=%2" in text


def test_planned_on_methods_with_keywords() -> None:
    traces: list[float] = []

    class Model:
        def __init__(self, scale: float) -> None:
            self.scale = scale

        @dt.planned
        def forward(self, x: Tensor, shift: float = 0.0) -> Tensor:
            traces.append(self.scale)
            return x * self.scale + shift

    a = dt.ones(3)
    one, two = Model(2.0), Model(3.0)
    assert one.forward(a).tolist() == [2.0] * 3
    assert one.forward(a).tolist() == [2.0] * 3
    assert two.forward(a).tolist() == [3.0] * 3
    assert traces == [2.0, 3.0]  # a plan per instance, replayed
    assert one.forward(a, shift=1.0).tolist() == [3.0] * 3
    assert one.forward(a, shift=1.0).tolist() == [3.0] * 3
    assert one.forward(a, 1.0).tolist() == [3.0] * 3
    assert traces == [2.0, 3.0, 2.0, 2.0]
    assert isinstance(Model.__dict__["forward"], Planned) and Model.forward is Model.__dict__["forward"]


def test_planned_refuses_what_plan_refuses() -> None:
    with pytest.raises(ArgumentTypeError, match="planned: argument 'step' must be a callable, got int 3"):
        dt.planned(3)  # type: ignore[call-overload]
    stepped = dt.planned(lambda t: t * 2.0)
    with pytest.raises(dt.PlanError, match="argument leaf 0 is a ndarray"):
        stepped(np.ones(3))


def test_nan_and_signed_zero_scalars_match_exactly() -> None:
    a = dt.ones(3)
    nan = float("nan")
    plan = dt.plan(lambda t, s: t * s, a, nan)
    assert np.isnan(plan(a, float("nan")).numpy()).all()  # another NaN object matches
    zero = dt.plan(lambda t, s: t * s, a, 0.0)
    with pytest.raises(dt.PlanError, match=r"argument leaf 1 is float -0\.0, the plan was made for float 0\.0"):
        zero(a, -0.0)  # t * -0.0 is -0.0: not the plan's result
    traces: list[int] = []

    @dt.planned
    def scaled(t: Tensor, s: float) -> Tensor:
        traces.append(1)
        return t * s

    scaled(a, nan)
    scaled(a, float("nan"))
    assert len(traces) == 1
    assert np.signbit(scaled(a, -0.0).numpy()).all() and len(traces) == 2


@pytest.mark.parametrize(
    "step",
    [
        lambda x: x.to(dt.float32) * 2,
        lambda x: x.astype(dt.float32),
        lambda x: x.astype(dt.int64) + 1,
        lambda x: (x * 2).to(dt.float64, copy=True).add_(1.0),
        lambda x: x.cpu() + 1,
        lambda x: x.to("cpu") + 1,
        lambda x: x.to_device("cpu") + 1,
    ],
)
def test_conversions_inside_the_step_replay_as_eager(step: Any) -> None:
    x = dt.arange(5.0) * 1.5
    plan = dt.plan(step, x)
    want = step(x)
    for _ in range(2):
        got = plan(x)
        assert got.dtype == want.dtype and got.numpy().tobytes() == want.numpy().tobytes()
    assert x.tolist() == [0.0, 1.5, 3.0, 4.5, 6.0]


@pytest.mark.parametrize(
    "step,buffered",
    [
        (lambda x: x.to(dt.float64).sum(), False),  # an argument: its layout is not in the signature
        (lambda x: (x * 2).T.to(dt.float64).sum(0), False),  # a view of a buffer: transposed
        (lambda x: (x * 2).to(dt.float64).sum(0), True),  # a buffer: C-contiguous, as eager's copy of it
    ],
)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_conversions_keep_the_sources_layout_as_eager(step: Any, buffered: bool, layout: str) -> None:
    """Eager's ``to`` copies keep the source's layout (PyTorch's preserve_format, NumPy's order K), so a later
    reduction sums in that order: a plan converts an argument or a view on each replay as eager does (bit for bit,
    the result's strides too), and a buffer of its own into a buffer (both C-contiguous)."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))

    def make() -> Tensor:
        return dt.tensor(base.copy()) if layout == "contiguous" else dt.tensor(base.T.copy()).T

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        plan, fast = dt.plan(step, make()), dt.planned(step)
        assert [r.buffer is not None for r in plan.records if r.variant == "convert"] == [buffered]
        for _ in range(3):
            want = step(make())
            for got in (plan(make()), fast(make())):
                assert got.numpy().tobytes() == want.numpy().tobytes() and got.shape == want.shape


def test_moves_to_another_device_inside_the_step_are_named() -> None:
    with pytest.raises(dt.PlanError, match="moves a tensor to meta, but the plan runs on cpu"):
        dt.plan(lambda x: x.to("meta"), dt.ones(3))


@pytest.mark.parametrize(
    "step",
    [
        lambda x: dt.randn(5) + x,
        lambda x: dt.rand(5, dtype=dt.float32) + x,
        lambda x: dt.rand_like(x) + x,
        lambda x: dt.randn_like(x) + x,
        lambda x: dt.randint(0, 1000, (5,)) + x,
        lambda x: dt.randperm(1000)[:5] + x,
        lambda x: dt.normal(x, 1.0),
        lambda x: dt.normal(0.0, 1.0, (5,)) + x,
    ],
)
def test_random_factories_inside_the_step_draw_afresh(step: Any) -> None:
    x = dt.zeros(5)
    plan = dt.plan(step, x)
    first = plan(x, copy_outputs=True)
    second = plan(x, copy_outputs=True)
    assert first.shape == (5,) and first.dtype == step(x).dtype
    assert not np.array_equal(first.numpy(), second.numpy())


def test_check_keeps_expanded_arguments_and_names_random_ops() -> None:
    plan = dt.plan(lambda t: t.add_(1.0), dt.zeros(3))
    expanded = dt.zeros(1).expand(3)
    with pytest.raises(dt.MemoryOverlapError, match=r"add_: .* argument 'self'"):
        plan(expanded)
    with pytest.raises(dt.MemoryOverlapError, match=r"add_: .* argument 'self'"):
        plan.check(expanded)  # as the replay: the copies stay expanded
    assert expanded.tolist() == [0.0, 0.0, 0.0]
    twice = dt.plan(lambda a, b: a.add_(b), dt.ones(3), dt.ones(3))
    shared = dt.ones(3)
    twice_same = dt.plan(lambda a, b: a.add_(b), shared, shared)
    twice.check(dt.ones(3), dt.ones(3))
    twice_same.check(shared, shared)  # one tensor passed twice: one copy, as the plan was made for
    assert shared.tolist() == [1.0, 1.0, 1.0]

    def noisy(t: Tensor) -> Tensor:
        return (t * 0.0).exponential_()

    with pytest.raises(dt.PlanError, match=r"output leaf 0 differs .*random ops, exponential_, which draw"):
        dt.plan(noisy, dt.tensor(np.zeros(8))).check(dt.tensor(np.zeros(8)))


@pytest.mark.parametrize(
    "step",
    [
        lambda x: dt.linspace(0, 1, 5) + x,
        lambda x: dt.arange(5) * x,
        lambda x: dt.arange(5.0).add_(x),  # written: copied in again on each replay
        lambda x: dt.eye(5) @ x,
        lambda x: dt.arange(5, dtype=dt.float32),
        lambda x: dt.tensor([1.0, 2.0, 3.0, 4.0, 5.0]) * x,
        lambda x: dt.tensor([[0.5] * 5]).mul_(x),  # written: copied in again on each replay
        lambda x: dt.tensor(np.arange(5.0)) - x,
        lambda x: dt.asarray([2.0] * 5, dtype=dt.float32) + x,
    ],
)
def test_constants_inside_the_step_replay_as_eager(step: Any) -> None:
    x = dt.ones(5)
    plan = dt.plan(step, x)
    want = step(x)
    for _ in range(2):
        got = plan(x, copy_outputs=True)
        assert got.dtype == want.dtype and got.numpy().tobytes() == want.numpy().tobytes()


# --- Threads: each concurrent replay of one plan has its own buffers -------------------------------------------


def _thread_step(x: Tensor, w: Tensor) -> Any:
    h = dt.tanh(x @ w)
    return h * 2.0 - 1.0, (h * h).sum(1)


def _thread_inputs(count: int) -> list[tuple[Tensor, Tensor]]:
    rng = np.random.default_rng(7)
    w = dt.tensor(rng.standard_normal((48, 48)).astype(np.float32) * 0.2)
    return [(dt.tensor(rng.standard_normal((96, 48)).astype(np.float32)), w) for _ in range(count)]


def _replay_in_threads(call: Any, inputs: list[tuple[Tensor, Tensor]], rounds: int) -> list[str]:
    """Run ``call(*inputs[i])`` ``rounds`` times in thread ``i`` (all threads started together); the mismatches
    against the single-threaded eager results, compared right after each call (outputs without copies live in
    the thread's buffers until its next replay)."""
    import threading

    want = [[o.numpy().copy() for o in _thread_step(*args)] for args in inputs]
    barrier = threading.Barrier(len(inputs))
    wrong: list[str] = []

    def work(index: int) -> None:
        barrier.wait()
        for round_ in range(rounds):
            got = call(*inputs[index])
            for out, expected in zip(got, want[index], strict=True):
                if out.numpy().tobytes() != expected.tobytes():
                    wrong.append(f"thread {index} round {round_}")

    threads = [threading.Thread(target=work, args=(index,)) for index in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return wrong


@pytest.mark.parametrize("copy", [False, True])
def test_concurrent_replays_of_one_plan_never_share_buffers(copy: bool) -> None:
    inputs = _thread_inputs(6)
    plan = dt.plan(_thread_step, *inputs[0])
    assert _replay_in_threads(lambda x, w: plan(x, w, copy_outputs=copy), inputs, 60) == []
    assert plan._made <= 7  # the building thread's buffers and one set per other thread, at most


@pytest.mark.parametrize("copy", [False, True])
def test_concurrent_calls_of_one_planned_function_never_share_buffers(copy: bool) -> None:
    inputs = _thread_inputs(6)
    step = dt.planned(_thread_step)
    assert _replay_in_threads(lambda x, w: step(x, w, copy_outputs=copy), inputs, 60) == []
    assert len(step.plans) == 1  # one signature: one plan, planned once although six threads called at once


def test_threads_beyond_the_pool_run_the_step_eagerly_and_buffers_go_back_to_the_pool() -> None:
    import threading

    inputs = _thread_inputs(5)
    plan = dt.plan(_thread_step, *inputs[0])
    plan.max_threads = 2
    assert _replay_in_threads(plan, inputs, 30) == []
    assert plan._made == 2
    # A thread that ended gave its buffers back: a new thread takes them, the building thread keeps its own.
    seen: list[Any] = []
    thread = threading.Thread(target=lambda: seen.append(plan(*inputs[1])[1]))
    thread.start()
    thread.join()
    assert plan._made == 2
    assert all(seen[0] is not buffer for buffer in plan.buffers)
    assert np.array_equal(seen[0].numpy(), _thread_step(*inputs[1])[1].numpy())


def test_a_step_resizing_an_out_tensor_is_refused_at_planning_naming_the_op() -> None:
    import warnings

    def grows(a: Tensor) -> None:
        v = dt.cat([a, a])
        dt.add(v, v, out=a)  # eager resizes a to [2, 3], with its warning

    def shrinks(a: Tensor, empty: Tensor) -> None:
        a.neg_()
        dt.sum(empty, 0, out=a)  # eager resizes a to [3]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(dt.PlanError, match=r"add\.out resizes its out= tensor from \[1, 3\] to \[2, 3\]"):
            dt.plan(grows, dt.ones(1, 3))
        with pytest.raises(dt.PlanError, match=r"sum\.out resizes its out= tensor from \[1, 3\] to \[3\]"):
            dt.plan(shrinks, dt.ones(1, 3), dt.zeros(0, 3))


def test_a_resize_of_an_out_with_a_view_taken_before_is_refused_at_planning_as_a_resize() -> None:
    """A step that takes a view of a tensor, drops it, then resizes that tensor as an out= (eager resizes it, the
    view being gone): tracing keeps the stand-ins' views alive, so the front refused the resize (ShapeError:
    live views), an error eager never raises; it is the resize's PlanError, single and multi-output ops alike."""
    import warnings

    def single(a: Tensor, b: Tensor) -> Tensor:
        b.T.add_(1.0)
        dt.add(a, 1.0, out=b)  # eager resizes b from [0, 3] to [1, 1]
        return b

    def multi(x: Tensor, i: Tensor) -> Tensor:
        v = dt.zeros(3, 3)
        v.T.add_(1.0)
        dt.topk(x, 3, -1, out=(v, i))  # eager resizes v from [3, 3] to [4, 3]
        return v

    cases: list[tuple[Callable[..., Any], tuple[Tensor, ...], str]] = [
        (single, (dt.ones(1, 1), dt.zeros(0, 3)), r"add\.out resizes its out= tensor from \[0, 3\] to \[1, 1\]"),
        (
            multi,
            (dt.ones(4, 4), dt.zeros(4, 3, dtype=dt.int64)),
            r"topk\.out resizes its out\[0\] tensor from \[3, 3\]",
        ),
    ]
    for step, args, message in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # (eager's resize warning)
            step(*(a.clone() for a in args))  # eager runs
            for run in (dt.planned(step), lambda *a, s=step: dt.plan(s, *a)):
                with pytest.raises(dt.PlanError, match=message):
                    run(*args)


def test_planned_refuses_a_resizing_step_at_planning_and_changes_nothing() -> None:
    """The steps of the fuzzing that found plans and eager apart (a resize of an out= argument): dt.planned, as
    dt.plan, refuses them while tracing (on meta stand-ins) with a PlanError naming the op, before any write to
    the arguments; so Plan.check, which needs a plan, never reports the planned run raising where eager did
    not."""
    import warnings

    def grows(a0: Tensor) -> None:
        v0 = dt.cat([a0, a0])
        dt.add(v0, v0, out=a0)

    def shrinks(a0: Tensor, a1: Tensor) -> Tensor:
        a0.neg_()
        v1 = dt.neg(a0)
        dt.sum(a1, 0, out=a0)
        return v1

    cases: list[tuple[Callable[..., Any], tuple[Tensor, ...], str]] = [
        (grows, (dt.ones(1, 3),), "add.out"),
        (shrinks, (dt.ones(1, 3), dt.zeros(0, 3)), "sum.out"),
    ]
    for step, args, op in cases:
        before = [(a.tolist(), a.shape, a._storage.version) for a in args]
        for run in (dt.planned(step), lambda *a, s=step: dt.plan(s, *a)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # (the traced resize's warning, as eager's)
                with pytest.raises(dt.PlanError, match=rf"{re.escape(op)} resizes its out= tensor"):
                    run(*args)
            assert [(a.tolist(), a.shape, a._storage.version) for a in args] == before


def test_planning_raises_the_error_eager_raises_first() -> None:
    def step(a: Tensor) -> None:
        _ = a**-1  # eager: pow's kernel refuses an integer to a negative power (no meta function sees it)
        dt.sum(a, 0, out=a)  # tracing: sum's out would need a resize and is an input

    a = dt.tensor(np.arange(1, 7).reshape(2, 3))
    before = a.numpy().copy()
    for run in (step, lambda t: dt.plan(step, t)):
        with pytest.raises(ArgumentValueError, match=r"pow: integers to negative integer powers"):
            run(a)
    assert np.array_equal(a.numpy(), before) and a._storage.version == 0
    # An error that eager raises first anyway comes from the trace, unchanged.
    with pytest.raises(dt.errors.ShapeError, match=r"sum: argument 'out' of shape \[2, 3\] is also an input"):
        dt.plan(lambda t: dt.sum(t, 0, out=t), a)


def test_planning_raises_the_error_eager_raises_first_within_the_failing_call() -> None:
    """A call whose out= tensors overlap (a check on memory, which meta stand-ins cannot make) and whose out dtype
    is wrong (the meta function's check): eager raises the overlap first, and so does planning, which runs the
    call that failed while tracing eagerly on copies of the arguments; nothing is written."""

    def step(x: Tensor, a0: Tensor) -> Any:
        return dt.max(x, 0, out=(a0, a0[:]))

    x, a0 = dt.tensor(np.arange(9.0).reshape(3, 3)), dt.zeros(3, dtype=dt.float32)
    for run in (step, lambda *t: dt.plan(step, *t), dt.planned(step)):
        with pytest.raises(dt.MemoryOverlapError, match=r"max: arguments 'out\[0\]' and 'out\[1\]' share memory"):
            run(x, a0)
    assert a0.tolist() == [0.0, 0.0, 0.0] and a0._storage.version == 0


def test_planned_runs_a_step_eagerly_when_its_plan_cannot_gain() -> None:
    def fronts(a: Tensor) -> tuple[Tensor, Tensor]:
        return a[[1, 0]], a[[0, 1]]  # (index copies: through their fronts)

    def work(a: Tensor) -> Tensor:
        return a * 2.0 + 1.0

    a = dt.tensor(np.arange(6.0).reshape(2, 3))
    fast_fronts, fast_work = dt.planned(fronts), dt.planned(work)
    fast_fronts(dt.empty(2, 3, dtype=dt.float64, device="meta"))  # meta tensors never gain: this decides nothing
    decided = [fast_fronts._eager]
    got = fast_fronts(a)
    decided.append(fast_fronts._eager)
    assert decided == [False, True]
    assert got[0].tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]] and got[1].tolist() == a.tolist()
    assert fast_work(a).tolist() == work(a).tolist() and not fast_work._eager


def _layout(t: Tensor) -> tuple[Any, ...]:
    """What a returned view's identity is made of: values, shape, strides, dtype, class, whether it shares
    ``t``'s storage, version."""
    array = t._array
    return (array.tobytes(), t.shape, array.strides, t.dtype, type(t), t._storage.version, array.flags.writeable)


def _views_step(a: Tensor) -> tuple[Tensor, ...]:
    return (a.reshape(12), a.flatten(), a.contiguous(), a.reshape(2, 6), a[1:, :2],
            *a.chunk(3, 1), *dt.split(a, [1, 3], 0))  # fmt: skip


@pytest.mark.parametrize("contiguous", [True, False])
def test_returned_views_of_arguments_replay_without_their_fronts(contiguous: bool) -> None:
    """A view of an argument the step returns (reshape, view, flatten, contiguous, slicing, split, chunk) is a
    new tensor on each replay, made by its front when the argument's array is new and, on the same array, over
    a new NumPy view of the layout the front gave (a strided argument's reshape and contiguous: a C-order copy
    in a new storage): the same values, layout, storage and version as eager's, and the plan gains."""
    made = [dt.tensor(np.arange(24.0).reshape(4, 6)) for _ in range(2)]
    args = [m.reshape(4, 6)[:, :3] * 1.0 if contiguous else m[:, ::2] for m in made]  # [4, 3] each
    assert all(arg.is_contiguous() == contiguous for arg in args)
    plan = dt.plan(_views_step, args[0])
    assert plan.gains
    for arg in (*args, args[0], args[0]):  # (a new array: the fronts; the same again: the kept layouts)
        for _ in range(2):
            replayed, eager = plan(arg), _views_step(arg)
            assert len(replayed) == len(eager) == 10
            for got, want in zip(replayed, eager, strict=True):
                assert got is not want and got is not arg and _layout(got) == _layout(want)
                assert (got._storage is arg._storage) == (want._storage is arg._storage)
            arg.add_(1.0)  # a write through the argument shows in the next replay's views, as in eager's


def test_a_step_of_single_views_of_arguments_gains_only_without_the_compiled_core() -> None:
    """Views of arguments made without their fronts count as gains only when the compiled core (whose view lane
    makes them in C) is absent: decided at plan time; ``dt.planned`` then runs such a step eagerly, with eager's
    results."""
    from devtensor.structured import core

    def step(t: Tensor) -> tuple[Tensor, Tensor]:
        return t.reshape(3, 2), t.T

    a = dt.tensor(np.arange(6.0).reshape(2, 3))
    plan = dt.plan(step, a)
    assert plan.gains == (core.CORE is None)
    fast = dt.planned(step)
    for _ in range(3):
        got, want = fast(a), step(a)
        assert all(_layout(g) == _layout(w) and g._storage is a._storage for g, w in zip(got, want, strict=True))
    assert fast._eager == (core.CORE is not None)


def test_nested_arguments_replay_through_a_compiled_flattener() -> None:
    def step(a: Tensor, sizes: tuple[int, int], opts: dict[str, float]) -> Tensor:
        return a.reshape(sizes) * opts["scale"]

    a = dt.tensor(np.arange(6.0))
    plan = dt.plan(step, a, (2, 3), {"scale": 2.0})
    assert plan._leaves_of((a, (2, 3), {"scale": 2.0})) == [a, 2, 3, 2.0]
    assert plan._leaves_of((a, [2, 3], {"scale": 2.0})) is None  # a list where the plan had a tuple
    assert plan._leaves_of((a, (2, 3), {"other": 2.0})) is None
    assert plan(a, (2, 3), {"scale": 2.0}).tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    with pytest.raises(dt.PlanError, match="nesting"):
        plan(a, (2, 3, 1), {"scale": 2.0})
    with pytest.raises(dt.PlanError, match="argument leaf 1"):
        plan(a, (3, 2), {"scale": 2.0})
    fast = dt.planned(step)
    for scale in (2.0, 3.0, 2.0):  # keyword-free nesting, then the signature cache
        assert fast(a, (3, 2), {"scale": scale}).tolist() == step(a, (3, 2), {"scale": scale}).tolist()
    assert len(fast.plans) == 2
