"""Static plans' direct replay (devtensor.plan.replay) and memory planning (devtensor.plan.memory): kernels called
without the fronts, views of arguments re-made, writes and version bumps as eager, overlapping arguments through
the fronts, buffers sharing memory by liveness."""

from __future__ import annotations

import re
import threading
import warnings
from typing import Any

import numpy as np
import pytest
from test_plan import _batch, _weights, mlp_step

import devtensor as dt
from devtensor import Tensor, library
from devtensor.kernels.ordering import SortResult
from devtensor.plan.memory import plan_memory
from devtensor.plan.planned import Planned
from devtensor.structured import multi_ops_by_name, multi_output_op
from devtensor.tensor import TensorMeta, TensorSpec


def _same(left: Any, right: Any) -> bool:
    return bool(
        left.dtype == right.dtype and left.shape == right.shape and left.numpy().tobytes() == right.numpy().tobytes()
    )


def test_views_of_arguments_are_remade_on_each_replay_and_alias_them() -> None:
    def step(a: Tensor) -> tuple[Tensor, Tensor]:
        return a.transpose(0, 1), a.transpose(0, 1) * 2.0

    a = dt.tensor(np.arange(6.0).reshape(2, 3))
    plan = dt.plan(step, a)
    assert plan.direct_ops == len(plan.records)
    view, doubled = plan(a)
    assert view._storage is a._storage and view.shape == (3, 2)
    b = dt.tensor(np.ones((2, 3)))
    view_b, doubled_b = plan(b)
    assert view_b._storage is b._storage and doubled_b is doubled and doubled.tolist() == [[2.0, 2.0]] * 3


def test_writes_into_arguments_bump_versions_as_eager() -> None:
    def step(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
        dt.add(a, b, out=c)
        a.mul_(2.0)
        c.sub_(b, alpha=0.5)
        a.transpose(0, 1).add_(1.0)  # a write through a view of an argument
        return (c * a).sum(dim=0)

    def args() -> list[Tensor]:
        rng = np.random.default_rng(3)
        return [dt.tensor(rng.standard_normal((3, 4)).astype(np.float32)) for _ in range(3)]

    eager, planned = args(), args()
    plan = dt.plan(step, *planned)
    for _ in range(3):  # the first replay runs through the fronts (the arguments' writability is not checked yet)
        want = step(*eager)
        got = plan(*planned)
        assert _same(want, got)
        assert all(_same(e, p) for e, p in zip(eager, planned, strict=True))
        assert [t._storage.version for t in eager] == [t._storage.version for t in planned]


def test_arguments_sharing_memory_replay_as_eager() -> None:
    def step(a: Tensor, b: Tensor) -> Tensor:
        a.add_(b)
        return a * b

    plan = dt.plan(step, dt.tensor(np.zeros(3)), dt.tensor(np.zeros(3)))
    eager_base = dt.tensor(np.arange(7.0))
    planned_base = dt.tensor(np.arange(7.0))
    want = step(eager_base[0:3], eager_base[3:6])  # one storage, no overlap
    got = plan(planned_base[0:3], planned_base[3:6])
    assert _same(want, got) and _same(eager_base, planned_base)
    with pytest.raises(dt.MemoryOverlapError):  # partial overlap: the fronts' check, as eager
        plan(planned_base[0:3], planned_base[1:4])
    assert _same(eager_base, planned_base)


def test_the_same_tensor_twice_where_the_plan_had_two() -> None:
    plan = dt.plan(lambda t, u: t.add_(u), dt.tensor([1.0]), dt.tensor([2.0]))
    a = dt.tensor([1.0])
    with pytest.raises(dt.PlanError, match="same tensor"):
        plan(a, a)
    fast = dt.planned(lambda t, u: t.add_(u))
    fast(dt.tensor([1.0]), dt.tensor([2.0]))
    assert fast(a, a).tolist() == [2.0] and len(fast.plans) == 2


def test_scalars_first_promotion_and_kernels_with_plans() -> None:
    def step(a: Tensor, i: Tensor) -> tuple[Tensor, ...]:
        return 2.0 - a, i + 1.5, dt.sum(a, dim=1, keepdim=True), dt.log_softmax(a, dim=0), a.clamp(-0.5, 0.5)

    rng = np.random.default_rng(0)
    a = dt.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    i = dt.tensor(np.arange(5))
    plan = dt.plan(step, a, i)
    for got, want in zip(plan(a, i), step(a, i), strict=True):
        assert _same(got, want)


def test_a_replay_runs_no_front() -> None:
    w = _weights()
    x, y = _batch(0)
    plan = dt.plan(mlp_step, *w, x, y, 0.5)
    plan(*w, x, y, 0.5)  # checks the arguments' writability through the fronts once
    fast = dt.planned(mlp_step)
    fast(*w, x, y, 0.5)
    with library.LoggingMode() as mode:
        plan(*w, x, y, 0.5)
        fast(*w, x, y, 0.5)
    assert mode.names == ["plan(mlp_step)", "plan(mlp_step)"]  # a replay is one event for dispatch modes
    with library.LoggingMode() as mode:
        dt.plan(mlp_step, *w, x, y, 0.5)
    assert "log_softmax" in mode.names  # modes see the ops while tracing


def test_buffers_share_memory_by_liveness() -> None:
    def chain(t: Tensor) -> Tensor:
        for _ in range(6):
            t = (t + 1.0) * 0.5
        return t

    a = dt.tensor(np.ones(1000, np.float32))
    plan = dt.plan(chain, a)
    assert plan.peak_bytes_eager == 2 * 4000  # two live results at a time
    # each elementwise result takes the bytes of the input it consumes last (memory.plan_memory's reuse): one
    # buffer, written in place, as NumPy code reusing its array would
    assert plan.memory_bytes == 4000
    assert len({b._array.__array_interface__["data"][0] for b in plan.buffers}) == 1
    assert _same(plan(a), chain(a)) and _same(plan(a), chain(a))
    assert "4000 bytes" in repr(plan)


def test_planned_memory_at_most_the_eager_peak_on_the_tests_models() -> None:
    w = _weights()
    x, y = _batch(0)
    plan = dt.plan(mlp_step, *w, x, y, 0.5)
    assert plan.memory_bytes <= plan.peak_bytes_eager
    assert plan.memory_bytes < sum(int(b._array.nbytes) for b in plan.buffers)
    outputs = plan(*w, x, y, 0.5)
    assert outputs["logits"]._storage is not None  # outputs stay valid (live to the end of the step)


def test_outputs_are_never_overwritten_within_a_step() -> None:
    def step(t: Tensor) -> tuple[Tensor, Tensor]:
        first = t + 1.0
        later = ((t * 3.0) - 2.0) / 4.0
        return first, later

    a = dt.tensor(np.arange(8.0))
    got = dt.plan(step, a)(a)
    want = step(a)
    assert _same(got[0], want[0]) and _same(got[1], want[1])


def test_memory_planner_places_overlapping_lifetimes_apart() -> None:
    # three buffers: 0 lives over records 0-1, 1 over 1-2, 2 over 2-3
    requests = [(0, 100, 4, "a"), (1, 100, 4, "b"), (2, 100, 4, "c")]
    uses = [["a"], ["a", "b"], ["b", "c"], ["c"]]
    memory = plan_memory(requests, uses, {"c"})
    assert memory.arena_bytes == memory.peak_bytes_eager == 200
    assert memory.offsets[0] != memory.offsets[1] and memory.offsets[1] != memory.offsets[2]


def test_memory_planner_reuse_takes_exactly_the_input_bytes() -> None:
    # buffer 1 is made by record 1 from buffer 0, whose last use that is: it takes buffer 0's bytes; buffer 2
    # (record 2 from buffer 1, which record 3 still reads) cannot take buffer 1's, nor buffer 3 buffer 0's (its
    # lifetime does not end where buffer 3's starts)
    requests = [(0, 100, 4, "a"), (1, 100, 4, "b"), (2, 100, 4, "c"), (3, 100, 4, "d")]
    uses = [["a"], ["a", "b"], ["b", "c"], ["b", "c", "d"], ["d"]]
    memory = plan_memory(requests, uses, {"d"}, {1: 0, 2: 1, 3: 0})
    assert memory.offsets[1] == memory.offsets[0]
    assert len({memory.offsets[1], memory.offsets[2], memory.offsets[3]}) == 3
    assert memory.arena_bytes == memory.peak_bytes_eager == 300
    # another buffer live at the reuse, in the way of the source's bytes: no reuse
    requests = [(0, 100, 4, "a"), (1, 100, 4, "b")]
    assert plan_memory(requests, [["a"], ["a", "b"], ["b"]], {"b"}, {1: 0}).offsets[1] == 0
    assert plan_memory(requests, [["a"], ["a", "b"], ["a", "b"]], {"b"}, {1: 0}).offsets[1] == 100


def test_buffers_reuse_only_a_dying_input_of_an_elementwise_op_and_stay_exact() -> None:
    def step(t: Tensor, w: Tensor) -> tuple[Tensor, Tensor]:
        u = t * 2.0
        v = dt.exp(u)  # u's last use, elementwise: v takes u's bytes
        s = dt.softmax(v, 0)  # softmax may not write over its input: its own buffer
        z = s + s.T  # s read through a view beside it: its own buffer
        q = z * 3.0  # z dies here: q takes z's bytes
        w.sub_(q + 1.0, alpha=0.5)  # (q + 1.0) * 0.5 computed in q + 1.0's own buffer, which dies there
        return v, q

    def args() -> tuple[Tensor, Tensor]:
        return dt.tensor(np.linspace(-1.0, 1.0, 9).reshape(3, 3)), dt.tensor(np.arange(9.0).reshape(3, 3))

    t, w = args()
    plan = dt.plan(step, t, w)
    assert plan.memory_bytes <= plan.peak_bytes_eager
    t2, w2 = args()
    for _ in range(3):
        got = plan(t, w)
        want = step(t2, w2)
        assert all(_same(g, e) for g, e in zip(got, want, strict=True))
        assert _same(w, w2) and w._storage.version == w2._storage.version
    at = [
        plan.buffers[record.buffer]._array.__array_interface__["data"][0]
        for record in plan.records
        if record.buffer is not None
    ]  # u, v, s, z, q, q + 1.0
    assert at[1] == at[0] and at[2] != at[1] and at[3] != at[2] and at[4] == at[3] and at[5] != at[4]
    assert plan.buffers[1]._array is plan.buffers[0]._array  # (one array: NumPy sees out is the input)


def test_buffers_of_other_ops_reuse_only_their_first_argument() -> None:
    # addmm and scatter may write over their first argument only: mat1 (or src), a dying buffer of out's shape
    # and dtype, keeps its own bytes, as the kernels read it after writing out
    def step(b: Tensor, m: Tensor, idx: Tensor) -> tuple[Tensor, Tensor]:
        m1 = m * 2.0
        first = dt.addmm(b, m1, m)
        src = m + 1.0
        second = dt.scatter(m * 3.0, 0, idx, src)
        return first, second

    def args() -> tuple[Tensor, Tensor, Tensor]:
        m = dt.tensor(np.arange(9.0).reshape(3, 3) / 7.0)
        return dt.tensor(np.ones((3, 3))), m, dt.tensor(np.array([[2, 0, 1], [0, 1, 2], [1, 2, 0]]))

    plan = dt.plan(step, *args())
    a, e = args(), args()
    for _ in range(2):
        got, want = plan(*a), step(*e)
        assert all(_same(g, w) for g, w in zip(got, want, strict=True))


def test_indexing_inside_the_step_is_recorded() -> None:
    def step(t: Tensor, idx: Tensor) -> tuple[Tensor, ...]:
        u = t[0] + 1.0  # a view of an argument, re-made on each replay
        v = t[:, 1:] * 2.0
        w = (t * 3.0)[1]  # a view of a buffer, made once
        t[0, 0] = 5.0  # setitem on an argument: written, version bumped
        g = t[idx]  # an integer tensor index: a copy
        z = t + 0.0
        z[1] = u
        return u, v, w, g, z, z[0, 1:], t[1]

    def args() -> tuple[Tensor, Tensor]:
        return dt.tensor(np.arange(6.0).reshape(2, 3)), dt.tensor([1, 0])

    planned, eager = args(), args()
    plan = dt.plan(step, *planned)
    assert [record.name for record in plan.records].count("getitem") == 6
    for _ in range(3):
        got, want = plan(*planned), step(*eager)
        assert all(_same(g, w) for g, w in zip(got, want, strict=True))
        assert _same(planned[0], eager[0]) and planned[0]._storage.version == eager[0]._storage.version
    assert got[6]._storage is planned[0]._storage  # the view aliases the argument


@pytest.mark.parametrize(("step", "name"), [(lambda t: dt.nonzero(t), "nonzero"), (lambda t: dt.unique(t), "unique")])
def test_data_dependent_ops_are_refused_naming_the_op_and_line(step: Any, name: str) -> None:
    with pytest.raises(dt.PlanError, match=f"{name} has a data-dependent result shape.*line \\d+ of <lambda>"):
        dt.plan(step, dt.tensor([1.0, 0.0]))


def test_creation_inside_the_step_is_recorded() -> None:
    def step(t: Tensor) -> tuple[Tensor, ...]:
        z = dt.zeros(3)  # never written: filled once, at planning
        acc = dt.zeros(3)  # written: filled again on each replay
        acc.add_(t)
        scale = dt.full((3,), 2.5) * dt.ones_like(t)
        return z + t, acc, scale, dt.full_like(t, 7.0)

    a = dt.tensor([1.0, 2.0, 3.0])
    plan = dt.plan(step, a)
    assert [r.variant for r in plan.records].count("create") == 5
    for _ in range(3):
        assert all(_same(g, w) for g, w in zip(plan(a), step(a), strict=True))
    assert plan.memory_bytes <= plan.peak_bytes_eager + 2 * 24  # (the two filled-once tensors stay live)


def test_creation_on_another_device_is_not_recorded() -> None:
    # (arange on the plan's own device is recorded, as a constant: tests/test_plan.py)
    with pytest.raises(dt.PlanError, match="neither an argument"):
        dt.plan(lambda t: dt.arange(3, device="meta") + t, dt.tensor([1.0, 2.0, 3.0]))


# --- Lowered replays: views of arguments kept between replays, one floating-point state per step -------------


def _heat(u: Tensor, un: Tensor, lap: Tensor, k: float) -> None:
    dt.add(u[2:], u[:-2], out=lap)
    dt.sub(lap, u[1:-1], alpha=2.0, out=lap)
    dt.mul(lap, k, out=lap)
    dt.add(u[1:-1], lap, out=un[1:-1])


def test_views_of_arguments_are_kept_until_the_argument_changes() -> None:
    rng = np.random.default_rng(5)

    def args() -> list[Any]:
        return [dt.tensor(rng.standard_normal(11)), dt.zeros(11, dtype=dt.float64), dt.zeros(9, dtype=dt.float64)]

    first, second = args(), args()
    plan = dt.plan(_heat, *first, 0.25)
    assert plan._local.replay.__lowered__ == 4  # every op lowered, the views made through no front per replay
    for planned in (first, second, first):  # another argument, then the first again: the views follow
        u, un, lap = planned
        eu, eun, elap = eager = [t.clone() for t in planned]
        _heat(eu, eun, elap, 0.25)
        plan(u, un, lap, 0.25)
        plan(u, un, lap, 0.25)
        _heat(eu, eun, elap, 0.25)
        assert all(_same(e, p) for e, p in zip(eager, planned, strict=True))


def test_a_read_only_argument_written_through_a_view_raises_as_eager() -> None:
    frozen = np.zeros(11)
    frozen.flags.writeable = False
    u, lap = dt.tensor(np.linspace(0.0, 1.0, 11)), dt.zeros(9, dtype=dt.float64)
    plan = dt.plan(_heat, u, dt.zeros(11, dtype=dt.float64), lap, 0.25)
    plan(u, dt.zeros(11, dtype=dt.float64), lap, 0.25)  # checked once: the replays are lowered
    for run in (_heat, plan):
        with pytest.raises(dt.errors.ReadOnlyError, match=r"add: argument 'out' is read-only"):
            run(u, dt.from_numpy(frozen), lap, 0.25)


def test_floating_point_conditions_are_reported_once_after_the_steps_last_write() -> None:
    def step(a: Tensor, b: Tensor, c: Tensor, d: Tensor) -> None:
        dt.sub(a, b, alpha=1e308, out=c)  # the product overflows: a condition of a two-step kernel
        dt.add(c, 1.0, out=d)

    def args() -> list[Tensor]:
        return [dt.tensor(np.array([1.0, 2.0])), dt.tensor(np.array([10.0, 0.0])), dt.zeros(2), dt.zeros(2)]

    planned = args()
    plan = dt.plan(step, *planned)
    with pytest.warns(RuntimeWarning):  # (the first replay goes through the fronts: the arguments' write check)
        plan(*planned)
    assert plan._local.replay.__lowered__ == 2
    with pytest.warns(RuntimeWarning, match="overflow encountered") as caught:
        plan(*planned)
    assert len(caught) == 1 and caught[0].filename == __file__
    # As the error the caller asks for: every write happens first, then the condition is raised.
    planned[2][:] = 0.0
    planned[3][:] = 0.0
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        plan(*planned)
    assert planned[2].tolist() == [-np.inf, 2.0] and planned[3].tolist() == [-np.inf, 3.0]
    # (eager raises at the first op, after its write: the second op's out keeps its values)


def _log_step(a: Tensor) -> Tensor:
    b = a * 2.0
    return dt.log(b)  # log(0): divide by zero, NumPy's own warning (one ufunc call: no deferral)


def test_a_replayed_ops_floating_point_warning_names_the_steps_line() -> None:
    """NumPy's warning from a replayed one-ufunc op names the step's file, line and module, as the eager call's
    does from the step's frame (the replay's code is located in the step: replay._locate); the condition
    raised by the caller's state is raised after the write, as eagerly."""
    line = _log_step.__code__.co_firstlineno + 2
    a = dt.tensor(np.array([0.0, 1.0]))
    plan, fast = dt.plan(_log_step, a), dt.planned(_log_step)
    assert plan._local.replay.__lowered__ == 2
    for run in (plan, fast, fast):
        with pytest.warns(RuntimeWarning, match="divide by zero encountered in log") as caught:
            got = run(a)
        assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert _same(got, _log_step(a))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=re.escape(__name__))  # the step's module
        plan(a)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError, match="divide by zero"):
        plan(a)
    assert plan.buffers[-1].tolist()[1] == np.log(2.0)  # (written before the error)


def test_quiet_kernels_keep_their_rule_inside_the_steps_recording_state() -> None:
    """softmax's and cross_entropy's steps run as their kernels do, divide, invalid and over ignored and under as
    the caller has it: in a replay, within the step's one recording state (the quiet calls' conditions kept
    apart, their underflow alone joining the step's), reported once after the last write at the caller's line."""

    def step(x: Tensor, y: Tensor, out: Tensor) -> tuple[Tensor, Tensor]:
        dt.mul(dt.softmax(x, 1), 2.0, out=out)
        return dt.cross_entropy(x, y), dt.log_softmax(x, 1)

    x = dt.tensor(np.array([[np.inf, 1.0], [0.0, -1000.0], [2.0, 3.0]]))  # inf: invalid steps; -1000: underflow
    y = dt.tensor(np.array([1, 0, 1]))
    eager_out, planned_out = dt.zeros(3, 2, dtype=dt.float64), dt.zeros(3, 2, dtype=dt.float64)
    plan = dt.plan(step, x, y, planned_out)
    with np.errstate(all="ignore"):
        plan(x, y, planned_out)  # (the first replay goes through the fronts: the arguments' write check)
    assert plan._local.replay.__lowered__ == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the caller's default state: nothing is reported, as eagerly
        want = step(x, y, eager_out)
        got = plan(x, y, planned_out)
    assert all(_same(w, g) for w, g in zip((*want, eager_out), (*got, planned_out), strict=True))
    with np.errstate(under="warn"):
        with pytest.warns(RuntimeWarning, match="underflow encountered"):
            step(x, y, eager_out)
        with pytest.warns(RuntimeWarning, match="underflow encountered") as caught:
            plan(x, y, planned_out)
    assert len(caught) == 1 and caught[0].filename == __file__
    planned_out.zero_()
    with np.errstate(under="raise"), pytest.raises(FloatingPointError, match="underflow"):
        plan(x, y, planned_out)
    assert _same(planned_out, eager_out)  # (every write happens first, then the condition is raised)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left over from the raising replay is reported later
        plan(x, y, planned_out)


def test_a_custom_ops_kernel_offers_its_lowering_as_built_in_ones_do() -> None:
    from devtensor.lowering import LOWERINGS, Lowering, lowers
    from devtensor.plan import replay
    from devtensor.typed import ConstOut, CPUTensor

    def _meta(self: Tensor) -> Any:
        return self.shape, self.dtype

    op = library.custom_op("plan_lowered_triple", out_may_be_input=True, method=False)(_meta)

    @op.impl("cpu")
    def triple_cpu(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 3, out=out.array)

    @lowers(triple_cpu)
    def _lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: None) -> bool:
        lw.call(np.multiply, args["self"], 3, out=out)
        return True

    def step(a: Tensor) -> Tensor:
        return op.functional(a) + 1.0

    try:
        a = dt.tensor(np.arange(4.0))
        replay.LOWER[0] = False
        kernel = dt.plan(step, a)
        replay.LOWER[0] = True
        lowered = dt.plan(step, a)
        assert lowered._local.replay.__lowered__ == 2 and kernel._local.replay.__lowered__ == 0
        assert _same(lowered(a), step(a)) and _same(kernel(a), step(a))
    finally:
        replay.LOWER[0] = True
        LOWERINGS.pop(triple_cpu, None)
        library.remove_op("plan_lowered_triple")


def test_a_replay_checks_an_argument_again_once_it_changes() -> None:
    # The replay's head checks each argument in full only when it is not the tensor (with the shape object) the
    # last full check passed: a resize, an inplace view op, another tensor or a tensor passed twice is seen.
    def step(a: Tensor, b: Tensor) -> Tensor:
        return a @ b + 1.0

    a, b = dt.tensor(np.arange(4.0).reshape(2, 2)), dt.tensor(np.ones((2, 2)))
    plan = dt.plan(step, a, b)
    assert _same(plan(a, b), step(a, b))
    a.t_()  # (the same shape, another layout: replayed on the transposed array)
    assert _same(plan(a, b), step(a, b))
    grown = dt.empty(0, dtype=dt.float64)
    dt.add(dt.ones(2, 3), 1.0, out=grown)  # resized by eager, from no elements to [2, 3]
    with pytest.raises(dt.PlanError, match="argument leaf 1"):
        plan(a, grown)
    with pytest.raises(dt.PlanError, match="argument leaf 0"):
        plan(a.to(dt.float32), b)
    with pytest.raises(dt.PlanError, match="same tensor"):
        plan(b, b)  # the same tensor twice, where the plan had two
    c = dt.tensor(np.full((2, 2), 3.0))
    assert _same(plan(a, c), step(a, c)) and _same(plan(a, b), step(a, b))


def test_plans_and_planned_steps_are_called_through_their_entry_as_before() -> None:
    def step(x: Tensor, scale: float = 2.0) -> Tensor:
        return x * scale + 1.0

    x = dt.tensor(np.arange(6.0).reshape(2, 3))
    plan = dt.plan(step, x)
    assert isinstance(plan, dt.Plan) and type(plan).__name__ == "Plan"
    out = plan(x)
    assert plan(x) is out and plan(x, copy_outputs=True) is not out and _same(plan(x, copy_outputs=True), out)
    with pytest.raises(TypeError):
        plan(x, scale=3.0)  # type: ignore[call-arg]
    with library.LoggingMode() as mode:
        plan(x)
    assert mode.names == [plan.name]
    fast = dt.planned(step)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((x,), {}), ((x, 3.0), {}), ((x,), {"scale": 4.0})]
    for args, kwargs in [*calls, ((x,), {}), ((x[:1],), {})]:
        assert _same(fast(*args, **kwargs), step(*args, **kwargs))
    assert isinstance(fast, Planned) and _same(fast(x, copy_outputs=True), step(x))
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(fast(x).clone()))
    thread.start()
    thread.join()
    assert _same(results[0], step(x)) and results[0] is not fast(x)


def test_planned_views_only_steps_match_eager() -> None:
    # Views of arguments made by their kernels (layout-free views) replay planned; others run eagerly.
    x = dt.tensor(np.arange(6.0).reshape(2, 3))
    steps: list[Any] = [lambda t: t.unsqueeze(0), lambda t: t.transpose(0, 1), lambda t: t.reshape(3, 2)]
    for step in steps:
        fast = dt.planned(step)
        for _ in range(3):
            got, want = fast(x), step(x)
            assert _same(got, want) and got._storage is x._storage and got is not fast(x)
            assert got.stride() == want.stride()
        assert _same(fast(x, copy_outputs=True), step(x))  # (keywords take the general call)


@pytest.mark.parametrize("dtype", [dt.int64, dt.int32, dt.uint8, dt.uint64])
def test_cross_entropys_class_check_replays_as_eager(dtype: Any) -> None:
    # The lowered replay checks the classes while gathering the target logits (ravel_multi_index): a bad class
    # index raises eager's IndexError before any write of the step after it; good ones give eager's bits.
    def step(x: Tensor, w: Tensor, t: Tensor) -> Tensor:
        loss = dt.cross_entropy(x @ w, t)
        w.sub_(w * 0.5)
        return loss

    rng = np.random.default_rng(7)
    x = dt.tensor(rng.standard_normal((5, 3)).astype(np.float32))
    w, we = (dt.tensor(np.full((3, 4), 0.25, np.float32)) for _ in range(2))
    plan = dt.plan(step, x, w, dt.zeros(5, dtype=dtype))
    assert plan._local.replay.__lowered__ == len(plan.records)
    bad = [-1, -4, 4, -5, 200] if dtype.kind == "i" else [4, 200]
    for value in [None, *bad]:
        t = dt.tensor(np.array([0, 3, 1, 2, 1]).astype(dtype.name))
        if value is not None:
            t[2] = value
        try:
            want: Any = step(x, we, t)
        except IndexError as error:
            want = error
        if isinstance(want, Exception):
            with pytest.raises(type(want)) as raised:
                plan(x, w, t)
            assert str(raised.value) == str(want) and "class index" in str(want)
        else:
            assert _same(plan(x, w, t), want)
        assert _same(w, we) and w.version == we.version


# --- multi-output ops (sort, topk, max/min/aminmax over a dim, linalg qr/svd/eigh/slogdet, custom ones) ---------


def _multi_steps() -> list[tuple[str, Any, tuple[Any, ...]]]:
    """(label, step, arguments): each multi-output op's functional call on float64 and float32 data."""
    rng = np.random.default_rng(11)
    m = rng.standard_normal((4, 4))
    spd = m @ m.T + 4 * np.eye(4)
    steps: list[tuple[str, Any, tuple[Any, ...]]] = [
        ("sort", lambda a: dt.sort(a, 1, descending=True), (m,)),
        ("topk", lambda a: dt.topk(a, 2, dim=0, largest=False), (m,)),
        ("max", lambda a: dt.max(a, 1, keepdim=True), (m,)),
        ("min", lambda a: dt.min(a, 0), (m,)),
        ("aminmax", lambda a: dt.aminmax(a, dim=1), (m,)),
        ("qr", lambda a: dt.linalg.qr(a), (m,)),
        ("svd", lambda a: dt.linalg.svd(a, full_matrices=False), (m,)),
        ("eigh", lambda a: dt.linalg.eigh(a), (spd,)),
        ("slogdet", lambda a: dt.linalg.slogdet(a), (m,)),
        # a result used by the ops after it (its buffers are read by a direct call) and one element returned
        ("sort then mul", lambda a: dt.sort(a, 0).values * 2.0 + dt.max(a, 1).indices.sum(), (m,)),
    ]
    return [(f"{label} {dtype.__name__}", step, tuple(x.astype(dtype) for x in arrays))
            for label, step, arrays in steps for dtype in (np.float64, np.float32)]  # fmt: skip


def _same_value(want: Any, got: Any) -> bool:
    if isinstance(want, Tensor):
        return isinstance(got, Tensor) and _same(want, got)
    return (
        type(want) is type(got)  # (a named tuple keeps its class: dt.sort's SortResult, its .values)
        and len(want) == len(got)
        and all(_same_value(w, g) for w, g in zip(want, got, strict=True))
    )


@pytest.mark.parametrize("label,step,arrays", _multi_steps(), ids=[s[0] for s in _multi_steps()])
def test_multi_output_ops_replay_their_kernels_into_buffers(label: str, step: Any, arrays: tuple[Any, ...]) -> None:
    """A multi-output op's functional call replays as its kernel writing the plan's buffers (no front: no
    binding, meta function nor allocation per replay), equal to eager bit for bit, its result of the op's
    named-tuple class; through ``dt.planned`` too, which therefore does not fall back to eager."""
    plan = dt.plan(step, *(dt.tensor(x) for x in arrays))
    assert plan.gains and plan._local.replay.__calls__ >= 1
    fast = dt.planned(step)
    for scale in (1.0, -3.0):  # (new data each time: the replay writes the same buffers again)
        args = tuple(dt.tensor(x * scale) for x in arrays)
        want = step(*args)
        assert _same_value(want, plan(*args))
        assert _same_value(want, plan(*args, copy_outputs=True))
        assert _same_value(want, fast(*args))
    assert not fast._eager


def test_a_multi_output_kernels_data_check_raises_in_the_replay_as_eager() -> None:
    """A custom multi-output op takes part as the built-in ones: its kernel, called by the replay, raises its own
    error on data as eager does, and the arguments are unchanged."""

    def split_sign_meta(self: TensorMeta) -> tuple[TensorSpec, TensorSpec]:
        return ((self.shape, self.dtype), (self.shape, self.dtype))

    op = multi_output_op("plan_split_sign")(split_sign_meta)
    try:

        @op.impl("cpu")
        def _(self: Any, *, out: tuple[Any, Any]) -> None:
            if np.isnan(self._array).any():
                raise ValueError("plan_split_sign: argument 'self' holds NaN")
            np.maximum(self._array, 0.0, out=out[0].array)
            np.minimum(self._array, 0.0, out=out[1].array)

        def step(a: Tensor) -> Tensor:
            pos, neg = op.functional(a)
            return pos - neg

        a = dt.tensor(np.array([1.0, -2.0, 3.0]))
        plan = dt.plan(step, a)
        assert plan._local.replay.__calls__ == 2
        assert plan(a).tolist() == [1.0, 2.0, 3.0] == step(a).tolist()
        bad = dt.tensor(np.array([1.0, np.nan]))
        plan = dt.plan(step, bad.clone().fill_(0.0))
        for run in (step, plan):
            with pytest.raises(ValueError, match=r"plan_split_sign: argument 'self' holds NaN"):
                run(bad)
            assert np.isnan(bad.numpy()[1]) and bad._storage.version == 0
    finally:
        multi_ops_by_name.pop("plan_split_sign", None)


def test_named_tuples_pass_through_plans_with_their_class() -> None:
    """A step returning an op's named tuple (``dt.sort``'s), or taking one as an argument, gets and gives the same
    class planned as eager: ``.values`` works on the plan's result, ``copy_outputs`` keeps it."""
    a = dt.tensor(np.array([[3.0, 1.0], [0.0, 2.0]]))
    sorted_a = dt.sort(a, 1)

    def first(r: SortResult) -> Tensor:
        return r.values * 2.0 + r.indices

    for run in (dt.plan(lambda t: dt.sort(t, 1), a), dt.planned(lambda t: dt.sort(t, 1))):
        for _ in range(2):
            got = run(a)
            assert type(got) is type(sorted_a) and got.values.tolist() == [[1.0, 3.0], [0.0, 2.0]]
    assert type(dt.plan(lambda t: dt.sort(t), a)(a, copy_outputs=True)) is type(sorted_a)
    assert dt.plan(first, sorted_a)(sorted_a).tolist() == first(sorted_a).tolist() == [[3.0, 6.0], [0.0, 5.0]]
    fast = dt.planned(first)
    assert [fast(sorted_a).tolist() for _ in range(3)] == [[[3.0, 6.0], [0.0, 5.0]]] * 3


def test_a_multi_output_ops_resized_out_tuple_is_refused_at_planning_naming_the_op() -> None:
    """A multi-output op's ``out=`` tuple that eager resizes (with its warning), an argument or a tensor the step
    made: refused at planning with a PlanError naming the op and the out, as a single out's resize is (a replay
    could not follow: it raised ShapeError where eager resized, or was planned for the traced shapes), nothing
    written."""
    import warnings

    def into_arguments(x: Tensor, v: Tensor, i: Tensor) -> tuple[Tensor, Tensor]:
        dt.sort(x, 1, out=(v, i))  # eager resizes v and i from [3] to [2, 3]
        return v * 2.0, i + 1

    def into_made(x: Tensor, i: Tensor) -> Tensor:
        v = dt.zeros_like(x)
        dt.max(x, 1, out=(v, i))  # eager resizes v from [2, 3] to [2]
        return v + 0.0

    x = dt.tensor(np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]))
    cases: list[tuple[Any, tuple[Tensor, ...], str]] = [
        (into_arguments, (x, dt.zeros(3), dt.zeros(3, dtype=dt.int64)), r"sort\.out resizes its out\[0\] tensor"),
        (into_made, (x, dt.zeros(2, dtype=dt.int64)), r"max\.out resizes its out\[0\] tensor from \[2, 3\] to \[2\]"),
    ]
    for step, args, message in cases:
        before = [(a.tolist(), a.shape, a._storage.version) for a in args]
        for run in (dt.planned(step), lambda *a, s=step: dt.plan(s, *a)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # (the traced resize's warning, as eager's)
                with pytest.raises(dt.PlanError, match=message):
                    run(*args)
            assert [(a.tolist(), a.shape, a._storage.version) for a in args] == before


def test_a_created_tensor_filled_once_keeps_its_bytes_through_the_whole_replay() -> None:
    """A tensor the step creates and never writes nor returns is filled once, at planning: its bytes must hold
    through every replay, so no buffer of an earlier record (a clone, a multi-output op's outputs) may take them
    (the memory plan counted it live only from the record that made it: the earlier ones overwrote it)."""

    def after_clone(a: Tensor) -> Tensor:
        a.clone()
        z = dt.zeros_like(a)
        return z + 1.0

    def after_sort(a: Tensor) -> Tensor:
        dt.sort(a, 1)
        z = dt.ones(2, 3)
        return z * 2.0

    a = dt.tensor(np.arange(6.0).reshape(2, 3))
    for step in (after_clone, after_sort):
        want = step(a)
        plan = dt.plan(step, a)
        fast = dt.planned(step)
        for _ in range(2):
            assert _same(plan(a), want) and _same(fast(a), want)
