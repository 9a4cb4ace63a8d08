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
from devtensor.plan.values import Exact, scalar_key
from devtensor.structured import core as _structured_core

__all__ = ["eager_entry", "replay_entry", "set_general"]


def replay_entry(plan: Any, ns: dict[str, Any], general: Callable[..., Any]) -> Any | None:
    """The compiled entry of ``plan``'s replay compiled into ``ns`` (its ``body``, ``_BODY_PARAMS``, ``_WRITTEN``
    and ``_SLOWE``), calling ``general(A, K)`` for the calls it does not take; None without the core or a body."""
    core = _structured_core.CORE
    params = ns.get("_BODY_PARAMS")
    if core is None or params is None or "body" not in ns or not plan._flat:
        return None
    keys, same, arg_slots, written = plan._keys, plan._same, plan._arg_slots, ns["_WRITTEN"]
    first_leaf = {arg_slots[leaf]: leaf for leaf, key in enumerate(keys) if len(key) == 4 and same[leaf] == leaf}
    tensors = tuple((leaf, *keys[leaf], arg_slots[leaf] in written) for leaf in sorted(first_leaf.values()))
    scalars = tuple((leaf, key[0], key[1], type(key[1]) is Exact) for leaf, key in enumerate(keys) if len(key) == 2)
    pairs = tuple((leaf, first) for leaf, first in enumerate(same) if first != leaf)
    body_params = tuple((first_leaf[slot], array) for slot, array in params)
    try:
        return core.replay_entry(
            general,
            ns["_SLOWE"],
            ns["body"],
            dispatcher._generation,
            plan._generation,
            len(keys),
            tensors,
            scalars,
            pairs,
            body_params,
            scalar_key,
        )
    except (TypeError, ValueError):  # (a signature the compiled entry does not take: the Python entry serves)
        return None


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


def set_general(entry: Any, call: Callable[..., Any]) -> None:
    """Make ``call`` the general path of ``entry``, a compiled entry or a generated one (its namespace's
    ``_CALL``, which the slow path calls for another signature too)."""
    if not hasattr(entry, "__globals__"):
        entry.general = call
        entry = entry.body
    entry.__globals__["_CALL"] = call
