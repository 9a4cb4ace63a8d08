"""A plan's call in C: the compiled core's replay entry and eager entry (``devtensor/_core_entry.h``).

A replay of a short step costs little more than its call: the generated Python entry (binding.entry_lines), with
its ``*A, **K``, its thread-local lookup and its signature check line by line, cost more than an eager one-op call
through the compiled core. Where the core is built, a flat plan's call is :func:`replay_entry`: the same tests in
C (the same rule, test for test: tests/test_plan_entry.py runs both on the same calls), then the replay's body, a
generated function of the arguments' tensors and arrays (binding.body_lines). Which thread may replay inline is the
entry's ``owner``: the thread holding the plan's first replica (set when a thread leases it, cleared when it
goes back to the pool), where the Python entry reads the thread-local replay. A plan of one view of an argument
calls that view's compiled front (:func:`direct_front`) or its view kernel (:func:`direct_view`) from C instead of
a body. Without the core (or for nested arguments, a CUDA graph) the generated Python entry serves, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devtensor import dispatcher
from devtensor.plan.replay_views import view_kernel
from devtensor.plan.values import Exact, Slot, has_tensor, scalar_key, slot_indices
from devtensor.structured import core as _structured_core
from devtensor.tensor import Tensor

__all__ = ["calls_front", "direct_front", "direct_view", "eager_entry", "replay_entry", "set_general"]


def replay_entry(plan: Any, ns: dict[str, Any], general: Callable[..., Any]) -> Any | None:
    """The compiled entry of ``plan``'s replay compiled into ``ns`` (its ``body``, ``_BODY_PARAMS``, ``_WRITTEN``
    and ``_SLOWE``), calling ``general(A, K)`` for the calls it does not take: the body called with the arguments'
    tensors and arrays, or, for a plan of one view of an argument, that view's compiled front called as the step
    calls it (:func:`direct_front`); None without the core or a body."""
    core = _structured_core.CORE
    params = ns.get("_BODY_PARAMS")
    if core is None or params is None or "body" not in ns:
        return None
    keys, same, arg_slots, written = plan._keys, plan._same, plan._arg_slots, ns["_WRITTEN"]
    first_leaf = {arg_slots[leaf]: leaf for leaf, key in enumerate(keys) if len(key) == 4 and same[leaf] == leaf}
    tensors = tuple((leaf, *keys[leaf], arg_slots[leaf] in written) for leaf in sorted(first_leaf.values()))
    scalars = tuple((leaf, key[0], key[1], type(key[1]) is Exact) for leaf, key in enumerate(keys) if len(key) == 2)
    pairs = tuple((leaf, first) for leaf, first in enumerate(same) if first != leaf)
    body, kwnames, view = ns["body"], None, None
    body_params = tuple((first_leaf[slot], int(array), None) for slot, array in params)
    front = direct_front(plan)
    made = direct_view(plan)
    if made is not None:
        kernel, xp, spec_plan, cls, shape, base = made
        body, view = kernel, (cls, shape, first_leaf[base])
        body_params = ((0, 2, xp), (first_leaf[base], 1, None), (0, 2, spec_plan))
    elif front is not None:
        record = plan.records[0]
        body, kwnames = front, tuple(record.kwargs)
        body_params = tuple(
            (first_leaf[value.index], 0, None) if type(value) is Slot else (0, 2, value)
            for value in (*record.args, *record.kwargs.values())
        )
    try:
        return core.replay_entry(
            general,
            ns["_SLOWE"],
            body,
            dispatcher._generation,
            plan._generation,
            len(keys),
            tensors,
            scalars,
            pairs,
            body_params,
            scalar_key,
            kwnames,
            None if plan._flat else plan._structure,
            view,
        )
    except (TypeError, ValueError):  # (a signature the compiled entry does not take: the Python entry serves)
        return None


def direct_front(plan: Any) -> Any | None:
    """The front of a plan of one view of an argument, returned: its compiled front (the view lane, _core_view.h,
    takes the call in C), or the Python front of a multi-view op (split, chunk): the replay is that call as the
    step makes it, with no frame between (the step's own included), so it beats the eager step. Views warn of
    nothing, so no warning's location depends on the frame it comes from. None for any other plan."""
    core = _structured_core.CORE
    if core is None or len(plan.records) != 1:
        return None
    record = plan.records[0]
    front: Any = getattr(record.op, "functional", None)
    if (
        record.variant != "view"
        or record.buffer is not None
        or not (front is record.func or (type(front) is core.Front and front.__wrapped__ is record.func))
        or plan._output != record.result
        or type(record.args[0] if record.args else None) is not Slot
        or record.args[0].index not in plan._arg_slots
    ):
        return None
    values = (*record.args[1:], *record.kwargs.values())
    return None if slot_indices(values) or has_tensor(values) else front


def direct_view(plan: Any) -> tuple[Any, Any, Any, type, tuple[int, ...], int] | None:
    """For a plan of one view of an argument by an op whose view spec holds whatever the argument's strides
    (transpose, permute, movedim, squeeze, unsqueeze: replay_views.view_kernel), the view kernel resolved for the
    plan's device, the array module, the spec's plan, the tensor class, the view's shape and the base's slot:
    the compiled entry calls the kernel on the argument's array and wraps the view as the view lane does, so the
    replay is the eager call's last steps only (no binding, no meta function: ``x.T`` planned costs less than
    ``x.T``). None for any other plan (or one the front must make: a copy, no kernel)."""
    if direct_front(plan) is None or plan._backend is None:
        return None
    record = plan.records[0]
    made = view_kernel(record, plan.device) if isinstance(record.meta_result, Tensor) else None
    if made is None:
        return None
    kernel, spec = made
    backend = plan._backend
    return kernel, backend.xp, spec.plan, backend.tensor_class, record.meta_result._shape, record.args[0].index


def calls_front(entry: Any) -> bool:
    """Whether ``entry`` is a compiled entry calling a view's front (:func:`direct_front`) or its view kernel
    (:func:`direct_view`) directly, not a replay's generated body (whose namespace marks it)."""
    core = _structured_core.CORE
    if core is None or type(entry) is not core.Entry:
        return False
    return entry.view is not None or "__plan_replay__" not in getattr(entry.body, "__globals__", {})


def eager_entry(step: Callable[..., Any], general: Callable[..., Any]) -> Callable[..., Any]:
    """The call of a planned step that runs eagerly (its plans cannot gain): the step itself, or, with keyword
    arguments (``copy_outputs=``, the step's own), ``general(A, K)``; compiled where the core is (no frame
    between the call and the step)."""
    core = _structured_core.CORE
    if core is not None:
        made: Callable[..., Any] = core.eager_entry(step, general)
        return made

    def entry(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            return general(args, kwargs)
        return step(*args)

    return entry


def set_general(entry: Any, ns: dict[str, Any], call: Callable[..., Any]) -> None:
    """Make ``call`` the general path of ``entry``, a compiled entry or a generated one, of the replay compiled
    into ``ns`` (whose ``_CALL`` the slow path calls for another signature, and the generated entry for any call
    it does not take)."""
    if not hasattr(entry, "__globals__"):
        entry.general = call
    ns["_CALL"] = call
