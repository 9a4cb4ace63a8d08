"""Binding a recorded call to its op's parameters, and the signature check a replay starts with (for
:mod:`devtensor.plan.replay` and :mod:`devtensor.plan.core`)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from devtensor.plan.values import MISS, Exact, scalar_key
from devtensor.structured import core as _structured_core

__all__ = ["body_lines", "entry_lines", "guard_head", "signature_guard"]


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
    N and returns MISS (another signature) or ``_SLOW(L)`` (a written argument not yet checked writable, or
    tensor arguments sharing memory) before anything runs.

    A tensor argument is checked in full (type, shape, device, dtype) only when it is not the tensor the last
    passing call had there, with the same shape object: a tensor's type and device never change, and its shape,
    dtype and storage change only together with a new shape object (an out= resize, ``Tensor._become``), while
    ``_write_checked`` stays set. When some argument is new, the writability flags of the ``written`` slots and
    the distinct storage roots are checked too, and only then are the new ones remembered: weakly
    (``_W<leaf>``, a weak reference, and ``_S<leaf>``, its shape), so nothing is kept alive."""
    keys, same, arg_slots = plan._keys, plan._same, plan._arg_slots
    firsts = [leaf for leaf, key in enumerate(keys) if len(key) == 4 and same[leaf] == leaf]

    def slow_entry(L: Any, A: Any, K: dict[str, Any]) -> Any:  # (the entry's: another signature, the general call)
        out = slow(L)
        return ns["_CALL"](A, K) if out is MISS else out

    ns.update(_SLOW=slow, _SLOWE=slow_entry, _REF=weakref.ref, _id=id, _WRITTEN=frozenset(written))
    names = [name for leaf in firsts for name in (f"_W{leaf}", f"_S{leaf}")]
    lines = [f"global {', '.join(names)}"] if names else []
    lines += [f"if len(L) != {len(keys)}: return _MISS"]
    lines += [f"t{arg_slots[leaf]} = L[{leaf}]" for leaf in firsts]
    if firsts:
        lines.append("_n = 0")
    for bit, leaf in enumerate(firsts):
        ns[f"_W{leaf}"], ns[f"_S{leaf}"] = _dead, None
        kind, shape, dtype, device = keys[leaf]
        ns.update({f"_K{leaf}": kind, f"_Z{leaf}": shape, f"_Y{leaf}": dtype, f"_D{leaf}": device})
        t = f"t{arg_slots[leaf]}"
        lines += [
            f"if _W{leaf}() is not {t} or {t}._shape is not _S{leaf}:",
            f"    if type({t}) is not _K{leaf} or {t}._shape != _Z{leaf} or {t}._device is not _D{leaf} or "
            f"({t}._dtype is not _Y{leaf} and {t}._dtype != _Y{leaf}): return _MISS",
            f"    _n |= {1 << bit}",
        ]
    lines += [f"if L[{leaf}] is not L[{first}]: return _MISS" for leaf, first in enumerate(same) if first != leaf]
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
    if not firsts:
        return lines
    checked = [f"t{arg_slots[leaf]}._write_checked" for leaf in firsts if arg_slots[leaf] in written]
    new = [f"if not ({' and '.join(checked)}): return _SLOW(L)"] if checked else []
    roots = [f"t{arg_slots[leaf]}._storage.root" for leaf in firsts]
    if 1 < len(roots) <= 4:  # (a few: compared pairwise, cheaper than a set of ids)
        pairs = " or ".join(f"{x} is {y}" for i, x in enumerate(roots) for y in roots[i + 1 :])
        new.append(f"if {pairs}: return _SLOW(L)")
    elif len(roots) > 4:
        new.append(f"if len({{{', '.join(f'_id({root})' for root in roots)}}}) != {len(roots)}: return _SLOW(L)")
    for bit, leaf in enumerate(firsts):
        t = f"t{arg_slots[leaf]}"
        new.append(f"if _n & {1 << bit}: _W{leaf} = _REF({t}); _S{leaf} = {t}._shape")
    return [*lines, "if _n:", *("    " + line for line in new)]


def entry_lines(
    head: list[str] | None,
    body: list[str],
    flatten: list[str] | None = None,
    ns: dict[str, Any] | None = None,
    args: set[int] | None = None,
) -> list[str]:
    """The source of ``entry(*A, **K)``, a plan's call (a class whose ``__call__`` it is makes ``plan(*args)``
    run it directly): the replay (``head`` and ``body`` inline; with ``head`` None, a call of ``replay``) when
    no keyword is given, no dispatch mode is active, no registration made the plan stale and the calling
    thread's replica is the one of this replay; else, and for another signature, ``_CALL(A, K)`` (the general
    call, which raises naming the argument that differs). ``flatten``: for nested arguments, the lines binding
    ``L``, the leaves, from ``A`` (values.flatten_source, returning ``_CALL(A, K)`` for another nesting); None
    when the arguments are the leaves. With ``ns`` and ``args`` (the argument slots) and the compiled core,
    followed by :func:`body_lines`' (the compiled entry's body, plan/entry.py)."""
    if ns is not None and args is not None and _structured_core.CORE is not None:
        return [*entry_lines(head, body, flatten), *body_lines(ns, sorted(args), body)]
    prologue = [
        "if K or _ACTIVE[0] or _GEN[0] != _G: return _CALL(A, K)",
        "try:",
        "    if _LOC.replay is not replay: return _CALL(A, K)",
        "except AttributeError:",  # (this thread has no replica yet)
        "    return _CALL(A, K)",
        *(flatten if flatten is not None else ["L = A"]),
    ]
    if head is None:
        return [
            "def entry(*A, **K):",
            *("    " + line for line in prologue),
            "    _r = replay(L)",
            "    return _CALL(A, K) if _r is _MISS else _r",
        ]
    own = [line.replace("return _MISS", "return _CALL(A, K)").replace("_SLOW(L)", "_SLOWE(L, A, K)") for line in head]
    return ["def entry(*A, **K):", *("    " + line for line in [*prologue, *own, *body])]


def body_lines(ns: dict[str, Any], args: list[int], body: list[str]) -> list[str]:
    """The source of ``body(...)``, the replay after its signature check, for the compiled entry
    (:mod:`devtensor.plan.entry`): its parameters are what the head binds, each argument's tensor ``tN`` and array
    ``aN`` (``body`` reads no other name of the head's), in ``ns["_BODY_PARAMS"]`` as (slot, whether the array)."""
    params = [(slot, array) for slot in args for array in (False, True)]
    ns["_BODY_PARAMS"] = params
    signature = ", ".join(f"{'at'[not array]}{slot}" for slot, array in params)
    return [f"def body({signature}):", *("    " + line for line in body)]
