"""``Plan.check``: a step run eagerly and through its plan on copies of the arguments, compared bit for bit."""

from __future__ import annotations

from typing import Any

from devtensor.creation import empty
from devtensor.errors import PlanError
from devtensor.plan.values import decode as _decode
from devtensor.plan.values import fill as _fill
from devtensor.plan.values import leaves as _leaves
from devtensor.plan.values import map_tensors as _map_tensors
from devtensor.plan.values import unflatten as _unflatten
from devtensor.tensor import Tensor

__all__ = ["check_plan", "eager_error"]


def check_plan(plan: Any, args: tuple[Any, ...]) -> None:
    """:meth:`devtensor.plan.core.Plan.check` (see there)."""
    plan._check(args)

    def copies() -> Any:
        made: dict[int, Tensor] = {}

        def copy(tensor: Tensor) -> Tensor:
            if id(tensor) not in made:
                made[id(tensor)] = _layout_copy(tensor)
            return made[id(tensor)]

        return _unflatten(plan._structure, [_map_tensors(leaf, copy) for leaf in _leaves(args)])

    eager_args, planned_args = copies(), copies()
    try:
        want = plan.step(*eager_args)
    except Exception as error:
        try:
            plan(*planned_args, copy_outputs=True)
        except type(error):
            raise error from None  # both runs raise it, as a replay does
        raise PlanError(f"plan.check: the eager run raised {error!r:.200} but the planned run did not") from error
    try:
        got = plan(*planned_args, copy_outputs=True)
    except Exception as error:
        raise PlanError(f"plan.check: the planned run raised {error!r:.200} but the eager run did not") from error
    random = sorted({record.name for record in plan.records if record.nondeterministic})
    note = (
        f" (the step has random ops, {', '.join(random)}, which draw differently in each run: check cannot "
        "compare such a step)"
        if random
        else ""
    )
    pairs = [("the output", _leaves(want), _leaves(got)), ("argument", _leaves(eager_args), _leaves(planned_args))]
    for what, expected, actual in pairs:
        for index, (left, right) in enumerate(zip(expected, actual, strict=True)):
            if isinstance(left, Tensor) and (
                left._shape != right._shape
                or left._dtype != right._dtype
                or left.numpy().tobytes() != right.numpy().tobytes()
            ):
                raise PlanError(f"plan.check: {what} leaf {index} differs between eager and planned runs{note}")


def _layout_copy(tensor: Tensor) -> Tensor:
    """A copy of ``tensor`` whose expanded (stride-0) dimensions stay expanded (a clone of one element along
    them, expanded again), so that writes into it fail as into ``tensor``; a plain clone otherwise."""
    strides = tensor._array.strides
    if 0 in tensor._shape or 0 not in strides:
        return tensor.clone()
    index = tuple(slice(0, 1) if stride == 0 else slice(None) for stride in strides)
    return tensor[index].clone().expand(*tensor._shape)


def eager_error(
    tracer: Any, leaves: list[Any], arg_slots: list[int | None], error: BaseException | None = None
) -> Exception | None:
    """The error eager raises first in the ops recorded before a trace failed, then in the call that failed with
    ``error`` (``tracer.failed``: a check on data, as the overlap of two outs, may come before the meta function's), run
    through their fronts on copies of the example arguments (the step's calls only: nothing outside the step's
    own tensors is touched), or None. The default generator's state is kept and warnings are silenced. None for
    arguments without data."""
    import warnings

    from devtensor.generator import get_rng_state, set_rng_state

    if any(isinstance(leaf, Tensor) and not leaf._backend.has_data for leaf in leaves):
        return None
    values: list[Any] = [None] * len(tracer.slots)
    for leaf, slot in zip(leaves, arg_slots, strict=True):
        if slot is not None and values[slot] is None:
            values[slot] = _layout_copy(leaf)
    state = get_rng_state()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for record in tracer.records:
                args = _decode(record.args, values)
                if record.variant in ("create", "convert") and record.buffer is not None:
                    meta = record.meta_result
                    made = record.func(*args, out=empty(meta._shape, dtype=meta._dtype, device=tracer.device))
                else:
                    made = record.func(*args, **_decode(record.kwargs, values))
                _fill(record.result, made, values)
            if tracer.failed is not None and tracer.failed[3] is error:  # (the call whose error ended the trace)
                func, args, kwargs, _error = tracer.failed
                func(*_decode(args, values), **_decode(kwargs, values))
    except Exception as eager:
        return eager
    finally:
        set_rng_state(state)
    return None
