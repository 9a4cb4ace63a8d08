"""Property tests of static plans: random sequences of op calls drawn from the op sample registry
(tests/op_samples.py) and a custom op give the same results planned and eager, bit for bit: outputs, the
arguments afterwards (inplace and out= calls write them) and their version counters.

Each drawn call is one sample of one op in one variant: functional, inplace (where PyTorch's rule allows it) or
out= (into an argument of the result's shape and dtype), on arguments that may be strided views; a call may
instead take the previous call's result as its first operand (a chain through the plan's buffers), and a step may
end by writing into a view of an argument. Samples that need no tensor, random ops, ops whose generic meta check
is skipped and calls eager refuses are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_samples import OPS, Sample, builtin_ops

import devtensor as dt
from devtensor import Tensor, library
from devtensor.typed import ConstOut, CPUTensor

BUILTIN = builtin_ops()
#: Samples reach the edges of ops' domains (log of 0, the mean of nothing): NumPy warns, eager and planned alike.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _usable(name: str) -> bool:
    # (data-dependent ops, such as nonzero, are refused by a static plan: tests/test_plan.py covers that)
    op = BUILTIN.get(name)
    entry = OPS[name]
    return (
        op is not None
        and not getattr(op, "nondeterministic", False)
        and not getattr(op, "data_dependent", False)
        and "meta" not in entry.skip
    )


#: (op name, sample) pairs whose samples have at least one tensor operand.
POOL = [(name, sample) for name in sorted(OPS) if _usable(name) for sample in OPS[name].samples if sample.arrays()]


def _triple_meta(self: Tensor) -> Any:
    return self.shape, self.dtype


@pytest.fixture(scope="module")
def triple() -> Any:
    op = library.custom_op("plan_prop_triple", out_may_be_input=True, method=False)(_triple_meta)

    @op.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 3, out=out.array)

    yield op
    library.remove_op("plan_prop_triple")


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, Tensor):
        return (
            isinstance(right, Tensor)
            and left.shape == right.shape
            and left.dtype == right.dtype
            and left.numpy().tobytes() == right.numpy().tobytes()
        )
    if isinstance(left, (tuple, list)):
        return (
            type(left) is type(right)  # (an op's named tuple keeps its class: dt.sort's SortResult)
            and len(left) == len(right)
            and all(_same(a, b) for a, b in zip(left, right, strict=True))
        )
    return bool(left == right)


class _Call:
    """One drawn call: the op's variant and its sample; ``chain``: the first tensor operand is the previous
    call's result instead of an argument."""

    def __init__(self, name: str, sample: Sample, variant: str, chain: bool) -> None:
        self.name, self.sample, self.variant, self.chain = name, sample, variant, chain
        self.out_spec: tuple[tuple[int, ...], Any] | None = None


def _fn(name: str, variant: str) -> Callable[..., Any] | None:
    op = BUILTIN[name]
    fn: Callable[..., Any] | None = getattr(op, "inplace", None) if variant == "inplace" else op.functional
    return fn


def _fits(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _build(calls: list[_Call], custom: Any, write_view: bool) -> tuple[Callable[..., Any], Callable[[], list[Any]]]:
    """The step and a maker of fresh arguments (its tensors, then the out= tensors)."""

    def make() -> list[Any]:
        tensors: list[Any] = []
        for call in calls:
            args, kwargs = call.sample.make("cpu")
            tensors += [leaf for leaf in _leaves([*args, *kwargs.values()]) if isinstance(leaf, Tensor)]
            if call.out_spec is not None:
                tensors.append(dt.zeros(call.out_spec[0], dtype=call.out_spec[1]))
        return tensors

    def step(*tensors: Tensor) -> Any:
        it = iter(tensors)
        outputs: list[Any] = []
        previous: Any = None

        def fill(value: Any) -> Any:
            if isinstance(value, list):
                return [fill(item) for item in value]
            if isinstance(value, np.ndarray) or type(value).__name__ == "Strided":
                return next(it)
            return value

        for call in calls:
            args = [fill(a) for a in call.sample.args]
            kwargs = {k: fill(v) for k, v in call.sample.kwargs.items()}
            first = args[0] if args else None
            if call.chain and isinstance(previous, Tensor) and isinstance(first, Tensor) and _fits(previous, first):
                args[0] = custom.functional(previous)
            if call.out_spec is not None:
                kwargs["out"] = next(it)
            fn = _fn(call.name, call.variant)
            assert fn is not None
            previous = fn(*args, **kwargs)
            outputs.append(previous)
        if write_view and tensors and tensors[0].ndim >= 1 and tensors[0].dtype.kind == "f":
            tensors[0].transpose(0, -1).mul_(2.0)  # a write through a view of an argument
        return outputs

    return step, make


def call_of(name: str, sample: Sample, variant: str, chain: bool) -> _Call | None:
    """A drawn call of ``name``'s ``sample`` in ``variant`` (functional, inplace or out) where PyTorch's rule allows
    it (an inplace call writes a first operand of the result's shape and dtype; ``out=`` takes a tensor result),
    else functional; None when eager refuses the sample. (benchmarks/plan_samples_cost.py draws steps with it.)"""
    args, kwargs = sample.make("cpu")
    functional = _fn(name, "functional")
    assert functional is not None
    try:
        result = functional(*args, **kwargs)
    except Exception:
        return None
    call = _Call(name, sample, "functional", chain)
    if variant == "inplace" and _fn(name, "inplace") is not None and isinstance(result, Tensor):
        first = args[0]
        if isinstance(first, Tensor) and first.shape == result.shape and first.dtype == result.dtype:
            call.variant = "inplace"
    elif variant == "out" and isinstance(result, Tensor) and name in OPS and "out" not in OPS[name].skip:
        call.out_spec = (tuple(result.shape), result.dtype)
    return call


@given(data=st.data())
def test_random_op_sequences_planned_equal_eager(data: st.DataObject, triple: Any) -> None:
    n = data.draw(st.integers(1, 4), label="calls")
    calls: list[_Call] = []
    for _ in range(n):
        name, sample = data.draw(st.sampled_from(POOL), label="op sample")
        variant = data.draw(st.sampled_from(["functional", "inplace", "out"]), label="variant")
        call = call_of(name, sample, variant, data.draw(st.booleans(), label="chain"))
        if call is not None:  # (None: eager refuses this sample, nothing to compare)
            calls.append(call)
    if not calls:
        return
    write_view = data.draw(st.booleans(), label="write through a view")
    step, make = _build(calls, triple, write_view)
    eager_args, planned_args = make(), make()
    try:
        want = step(*eager_args)
    except Exception:
        return  # a chain or a view write eager refuses
    plan = dt.plan(step, *make())
    versions = [t._storage.version for t in planned_args]
    for _ in range(2):  # the first replay checks the arguments' writability through the fronts, the second not
        got = plan(*planned_args)
        assert _same(want, got)
        assert all(_same(e, p) for e, p in zip(eager_args, planned_args, strict=True))
        if _ == 0:
            eager_versions = [t._storage.version for t in eager_args]
            assert [t._storage.version for t in planned_args] == eager_versions
            want = step(*eager_args)
    assert all(t._storage.version >= v for t, v in zip(planned_args, versions, strict=True))


def _lowered_and_kernel_replays(step: Callable[..., Any], make: Callable[[], list[Any]]) -> tuple[bool, bool]:
    """Replay ``step``'s plan lowered (devtensor.lowering) and through the kernels, each twice on its own fresh
    arguments, and compare outputs, arguments and versions bit for bit with each other and with eager. Returns
    (whether some record was lowered, whether eager ran)."""
    from devtensor.plan import replay

    eager_args = make()
    try:
        want = [_copied(step(*eager_args)), _copied(step(*eager_args))]
    except Exception:
        return False, False
    runs = []
    for lower in (True, False):
        replay.LOWER[0] = lower
        try:
            plan = dt.plan(step, *make())
        finally:
            replay.LOWER[0] = True
        args = make()
        outputs = [_copied(plan(*args)), _copied(plan(*args))]
        runs.append((plan._local.replay.__lowered__, outputs, args))
    for _lowered, outputs, args in runs:
        assert _same(want, outputs)
        assert all(_same(e, p) for e, p in zip(eager_args, args, strict=True))
        assert [t._storage.version for t in args] == [t._storage.version for t in eager_args]
    return runs[0][0] > 0, True


#: The ops whose kernels offer a lowering (devtensor.lowering; the ufunc family's one-call ops through their
#: direct path): each must be lowered by some sample below, so the comparison covers it.
LOWERED_OPS = {
    *("add", "sub", "mul", "maximum", "minimum", "exp", "log", "neg", "sqrt", "abs", "relu"),
    *("matmul", "mm", "addmm", "tanh", "sum", "prod", "amax", "amin", "softmax", "log_softmax", "cross_entropy"),
}


def test_lowered_replays_equal_the_kernels_bit_for_bit() -> None:
    """Every op sample, in its functional, inplace and out= variants and with its first operand a buffer of the
    plan (``clone`` of it): a plan whose records are lowered to raw calls replays the values, arguments and
    versions of the same plan through the kernels, and of eager."""
    lowered: set[str] = set()
    for name, sample in POOL:
        functional = _fn(name, "functional")
        assert functional is not None
        args, kwargs = sample.make("cpu")
        try:
            result = functional(*args, **kwargs)
        except Exception:
            continue
        variants = ["functional", "chain"]
        if _fn(name, "inplace") is not None and isinstance(result, Tensor):
            first = args[0] if args else None
            if isinstance(first, Tensor) and _fits(first, result):
                variants.append("inplace")
        if isinstance(result, Tensor) and "out" not in OPS[name].skip:
            variants.append("out")
        for variant in variants:
            call = _Call(name, sample, "inplace" if variant == "inplace" else "functional", False)
            if variant == "out":
                call.out_spec = (tuple(result.shape), result.dtype)
            step, make = _build([call], _Clone, False)
            if variant == "chain":
                call.chain = True
            done, _ran = _lowered_and_kernel_replays(step, make)
            if done:
                lowered.add(name)
    assert lowered >= LOWERED_OPS, sorted(LOWERED_OPS - lowered)


def _copied(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return [_copied(item) for item in value]
    return value


class _Clone:
    """The stand-in of the custom op in :func:`_build`'s chain: ``clone``, a buffer of the plan."""

    @staticmethod
    def functional(t: Tensor) -> Tensor:
        return t.clone()
