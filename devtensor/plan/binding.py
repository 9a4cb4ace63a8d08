"""Binding a recorded call to its op's parameters, and the signature check a replay starts with (for
:mod:`devtensor.plan.replay` and :mod:`devtensor.plan.core`)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from devtensor.plan.values import MISS, Exact, scalar_key

__all__ = ["entry_lines", "guard_head", "signature_guard"]


def _bind(op: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The op's parameters bound to a call's values (defaults filled), or None when the call does not bind."""
    params = op.schema.params
    positional = [p for p in params if not p.kw_only]
    if len(args) > len(positional):
        return None
    bound = {p.name: value for p, value in zip(positional, args, strict=False)}
    names = {p.name for p in params}
    for key, value in kwargs.items():
        if key == "out":
            continue
        if key not in names or key in bound:
            return None
        bound[key] = value
    for p in params:
        if p.name not in bound:
            if not p.has_default:
                return None
            bound[p.name] = p.default
    return bound


def signature_guard(plan: Any) -> Callable[[Any], bool]:
    """The signature check of a compiled replay: whether leaves ``L`` match the plan's (type, shape, device and
    dtype per tensor, type and value per scalar, the same tensor where the plan had one)."""
    count = len(plan._keys)
    tensors = [(leaf, *key) for leaf, key in enumerate(plan._keys) if len(key) == 4 and plan._same[leaf] == leaf]
    scalars = [(leaf, *key) for leaf, key in enumerate(plan._keys) if len(key) == 2]
    same = [(leaf, first) for leaf, first in enumerate(plan._same) if first != leaf]

    def guard(L: Any) -> bool:
        if len(L) != count:
            return False
        for leaf, kind, shape, dtype, device in tensors:
            t = L[leaf]
            if type(t) is not kind or t._shape != shape or t._device is not device:
                return False
            if t._dtype is not dtype and t._dtype != dtype:
                return False
        for leaf, kind, value in scalars:
            x = L[leaf]
            if type(x) is not kind or not (
                x is value or x == value or (type(value) is Exact and scalar_key(x) == value)
            ):
                return False
        return all(L[leaf] is L[first] for leaf, first in same)

    return guard


def _dead() -> None:
    """A dead weak reference's answer: the cache of :func:`guard_head` before its first check."""


def guard_head(plan: Any, written: set[int], slow: Callable[[Any], Any], ns: dict[str, Any]) -> list[str]:
    """The head of a compiled replay (its lines, in ``ns``'s names): binds ``tN`` to the tensor argument of slot
    N and returns MISS (another signature) or ``slow(L)`` (a written argument not yet checked writable, or tensor
    arguments sharing memory) before anything runs.

    The full checks (:func:`signature_guard`, the writability flags of the ``written`` slots, distinct storage
    roots) run when some tensor argument is not the one the last full check passed, or has another shape object;
    else they hold still: a tensor's type and device never change, and its shape, dtype and storage change only
    together with a new shape object (an out= resize, ``Tensor._become``), while ``_write_checked`` stays set.
    Those tensors are held weakly (``_W<leaf>``) with their shapes (``_S<leaf>``): nothing is kept alive."""
    keys, same, arg_slots = plan._keys, plan._same, plan._arg_slots
    tensors = [leaf for leaf, key in enumerate(keys) if len(key) == 4]
    firsts = [leaf for leaf in tensors if same[leaf] == leaf]
    checks = [leaf for leaf in firsts if arg_slots[leaf] in written]
    guard = signature_guard(plan)

    def full(L: Any) -> Any:
        if not guard(L):
            return MISS
        if not all(L[leaf]._write_checked for leaf in checks):
            return slow(L)
        if len({id(L[leaf]._storage.root) for leaf in firsts}) != len(firsts):
            return slow(L)
        for leaf in tensors:
            ns[f"_W{leaf}"] = weakref.ref(L[leaf])
            ns[f"_S{leaf}"] = L[leaf]._shape
        return None

    ns["_FULL"] = full
    lines = [f"if len(L) != {len(keys)}: return _MISS"]
    lines += [f"t{arg_slots[leaf]} = L[{leaf}]" for leaf in firsts]
    if tensors:
        for leaf in tensors:
            ns[f"_W{leaf}"] = _dead
        tests = [
            f"_W{leaf}() is not t{arg_slots[leaf]} or t{arg_slots[leaf]}._shape is not _S{leaf}"
            if same[leaf] == leaf
            else f"_W{leaf}() is not L[{leaf}]"
            for leaf in tensors
        ]
        lines += [f"if {' or '.join(tests)}:", "    _m = _FULL(L)", "    if _m is not None: return _m"]
    for leaf, key in enumerate(keys):
        if len(key) == 2:
            kind, value = key
            consts = len(ns)
            ns[f"_k{consts}"], ns[f"_v{consts}"] = kind, value
            x, v = f"L[{leaf}]", f"_v{consts}"
            test = f"{x} is {v} or {x} == {v}"
            if type(value) is Exact:
                ns["_SKEY"] = scalar_key
                test += f" or _SKEY({x}) == {v}"
            lines.append(f"if type({x}) is not _k{consts} or not ({test}): return _MISS")
    return lines


def entry_lines(head: list[str] | None, body: list[str]) -> list[str]:
    """The source of ``entry(*L, **K)``, a flat plan's call (a class whose ``__call__`` it is makes
    ``plan(*args)`` run it directly): the replay (``head`` and ``body`` inline; with ``head`` None, a call of
    ``replay``) when no keyword is given, no dispatch mode is active, no registration made the plan stale and
    the calling thread's replica is the one of this replay; else, and for another signature, ``_CALL(L, K)``
    (the general call, which raises naming the argument that differs)."""
    prologue = [
        "if K or _ACTIVE[0] or _GEN[0] != _G: return _CALL(L, K)",
        "try:",
        "    if _LOC.replay is not replay: return _CALL(L, K)",
        "except AttributeError:",  # (this thread has no replica yet)
        "    return _CALL(L, K)",
    ]
    if head is None:
        return [
            "def entry(*L, **K):",
            *("    " + line for line in prologue),
            "    _r = replay(L)",
            "    return _CALL(L, K) if _r is _MISS else _r",
        ]
    own = [
        line.replace("return _MISS", "return _CALL(L, K)").replace(
            "if _m is not None: return _m", "if _m is not None: return _CALL(L, K) if _m is _MISS else _m"
        )
        for line in head
    ]
    return ["def entry(*L, **K):", *("    " + line for line in [*prologue, *own, *body])]
