"""The values of a recorded call: tensors replaced by slots (:class:`Slot`) and back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MISS", "Slot", "decode", "fill", "slot_indices"]

#: What a compiled replay returns when its arguments do not match the plan's signature (nothing ran).
MISS: Any = type("_Miss", (), {"__repr__": lambda self: "MISS", "__slots__": ()})()


@dataclass(frozen=True, slots=True)
class Slot:
    """A value the replay fills in: an argument tensor, a recorded op's result."""

    index: int


def decode(value: Any, values: Any) -> Any:
    """``value`` with slots replaced by the replay's tensors."""
    if type(value) is Slot:
        return values[value.index]
    if isinstance(value, tuple):
        return tuple(decode(item, values) for item in value)
    if isinstance(value, list):
        return [decode(item, values) for item in value]
    if isinstance(value, dict):
        return {key: decode(item, values) for key, item in value.items()}
    return value


def fill(result: Any, value: Any, values: list[Any]) -> None:
    """Store a call's result tensors in their slots (``result``: the recorded structure of slots)."""
    if type(result) is Slot:
        values[result.index] = value
    elif isinstance(result, (tuple, list)):
        for item, got in zip(result, value, strict=True):
            fill(item, got, values)


def slot_indices(value: Any) -> list[int]:
    """The slot indices in a nested value, in order."""
    if type(value) is Slot:
        return [value.index]
    if isinstance(value, (tuple, list)):
        return [index for item in value for index in slot_indices(item)]
    if isinstance(value, dict):
        return [index for item in value.values() for index in slot_indices(item)]
    return []
