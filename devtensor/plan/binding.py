"""Binding a recorded call to its op's parameters, and the signature check a replay starts with (for
:mod:`devtensor.plan.replay` and :mod:`devtensor.plan.core`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from devtensor.plan.values import Exact, scalar_key

__all__ = ["signature_guard"]


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
