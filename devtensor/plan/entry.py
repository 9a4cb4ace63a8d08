"""A plan's call in C: the compiled core's replay entry and eager entry (``devtensor/_core_entry.h``).

A replay of a short step costs little more than its call: the generated Python entry (binding.entry_lines), with
its ``*A, **K``, its thread-local lookup and its signature check line by line, cost more than an eager one-op call
through the compiled core. Where the core is built, a flat plan's call is :func:`replay_entry`: the same tests in
C (the same rule, test for test: tests/test_plan_entry.py runs both on the same calls), then the replay's body, a
generated function of the arguments' tensors and arrays (binding.body_lines). Which thread may replay inline is the
entry's ``owner``: the thread holding the plan's first replica (set when a thread leases it, cleared when it
goes back to the pool), where the Python entry reads the thread-local replay. Without the core (or for nested
arguments, a CUDA graph) the generated Python entry serves, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devtensor import dispatcher
from devtensor.plan.values import Exact, Slot, has_tensor, scalar_key, slot_indices
from devtensor.structured import core as _structured_core

__all__ = ["calls_front", "direct_front", "eager_entry", "replay_entry", "set_general"]


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
    body, kwnames = ns["body"], None
    body_params = tuple((first_leaf[slot], int(array), None) for slot, array in params)
    front = direct_front(plan)
    if front is not None:
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
        )
    except (TypeError, ValueError):  # (a signature the compiled entry does not take: the Python entry serves)
        return None


def direct_front(plan: Any) -> Any | None:
    """The compiled front of a plan of one view of an argument, returned (its view lane, _core_view.h, takes the
    call in C): the replay is that call as the step makes it, with no frame (the step's own included), so it
    beats the eager step. Views warn of nothing, so no warning's location depends on the frame it comes from.
    None for any other plan."""
    core = _structured_core.CORE
    if core is None or len(plan.records) != 1:
        return None
    record = plan.records[0]
    front: Any = getattr(record.op, "functional", None)
    if (
        record.variant != "view"
        or record.buffer is not None
        or type(front) is not core.Front
        or front.__wrapped__ is not record.func
        or plan._output != record.result
        or type(record.args[0] if record.args else None) is not Slot
        or record.args[0].index not in plan._arg_slots
    ):
        return None
    values = (*record.args[1:], *record.kwargs.values())
    return None if slot_indices(values) or has_tensor(values) else front


def calls_front(entry: Any) -> bool:
    """Whether ``entry`` is a compiled entry calling a compiled front directly (:func:`direct_front`)."""
    core = _structured_core.CORE
    return core is not None and type(entry) is core.Entry and type(entry.body) is core.Front


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
