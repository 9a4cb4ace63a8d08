"""The values of a recorded call: tensors replaced by slots (:class:`Slot`) and back; a plan's argument signature
(nesting, leaves, what each leaf must match) and flags."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from devtensor.errors import ArgumentTypeError
from devtensor.tensor import Tensor

__all__ = [
    "MISS",
    "Exact",
    "Slot",
    "decode",
    "fill",
    "flag",
    "flatten",
    "flattener",
    "key_text",
    "leaf_key",
    "leaves",
    "map_tensors",
    "rebuild",
    "scalar_key",
    "signature",
    "slot_indices",
    "unflatten",
]

#: What a compiled replay returns when its arguments do not match the plan's signature (nothing ran).
MISS: Any = type("_Miss", (), {"__repr__": lambda self: "MISS", "__slots__": ()})()


@dataclass(frozen=True, slots=True)
class Slot:
    """A value the replay fills in: an argument tensor, a recorded op's result."""

    index: int


def rebuild(like: tuple[Any, ...] | type, items: Iterable[Any]) -> tuple[Any, ...]:
    """A tuple of ``items`` of ``like``'s kind (``like``: a tuple, or its class): a named tuple (an op's result
    type, as ``dt.sort``'s, PyTorch's ``torch.return_types``) of the same class, any other tuple a plain one."""
    kind = like if isinstance(like, type) else type(like)
    if kind is not tuple and hasattr(kind, "_fields") and hasattr(kind, "_make"):
        made: tuple[Any, ...] = kind._make(items)
        return made
    return tuple(items)


def decode(value: Any, values: Any) -> Any:
    """``value`` with slots replaced by the replay's tensors (named tuples keep their class)."""
    if type(value) is Slot:
        return values[value.index]
    if isinstance(value, tuple):
        return rebuild(value, (decode(item, values) for item in value))
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


def has_tensor(value: Any) -> bool:
    """Whether a nested value holds a tensor (a real one: a recorded call's tensors are slots)."""
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(has_tensor(item) for item in value)
    if isinstance(value, dict):
        return any(has_tensor(item) for item in value.values())
    return False


@dataclass(frozen=True, slots=True)
class Exact:
    """A float or complex scalar of a plan's signature that ``==`` does not tell apart (NaN never equals
    itself; ``0.0 == -0.0``), kept as its text: NaN matches NaN, and -0.0 and 0.0 differ (``x * s`` differs)."""

    text: str

    def __repr__(self) -> str:
        return self.text


def scalar_key(value: Any) -> Any:
    """What a scalar argument of a plan must match: the value itself, or :class:`Exact` for a float or complex
    with a NaN or a zero part."""
    kind = type(value)
    if kind is float:
        if value != value or value == 0.0:
            return Exact(repr(value))
    elif kind is complex and (value != value or value.real == 0.0 or value.imag == 0.0):
        return Exact(repr(value))
    return value


def flag(where: str, name: str, value: Any) -> bool:
    """``value`` as a bool (a Python or NumPy bool; ArgumentTypeError naming ``where`` and ``name`` otherwise: a
    string or an int is not taken for a flag)."""
    if type(value) is bool or isinstance(value, np.bool_):
        return bool(value)
    raise ArgumentTypeError(f"{where}: argument '{name}' must be a bool, got {type(value).__name__} {value!r:.60}")


def flatten(value: Any, leaves: list[Any]) -> Any:
    """The structure of a nested argument (tuples, lists, dicts) with leaves replaced by their index."""
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(flatten(item, leaves) for item in value))
    if isinstance(value, dict):
        return (dict, tuple((key, flatten(item, leaves)) for key, item in value.items()))
    leaves.append(value)
    return len(leaves) - 1


#: Compiled flatteners by structure, bounded (oldest dropped first).
_FLATTENERS: dict[Any, Callable[[tuple[Any, ...]], list[Any] | None]] = {}


def flattener(structure: Any) -> Callable[[tuple[Any, ...]], list[Any] | None]:
    """A compiled :func:`flatten` for one structure: ``fn(args)`` is the leaves of ``args`` when their nesting is
    ``structure`` (the same container types, lengths and dict keys in order), else None. A replay of nested
    arguments (a tuple of sizes, ``dt.planned``'s keyword dict) reads its leaves with it instead of flattening.
    Made once per structure (cached)."""
    try:
        made = _FLATTENERS.get(structure)
    except TypeError:  # (an unhashable dict key: compiled each time)
        return _compile_flattener(structure)
    if made is None:
        if len(_FLATTENERS) >= 256:
            _FLATTENERS.pop(next(iter(_FLATTENERS)))
        made = _FLATTENERS[structure] = _compile_flattener(structure)
    return made


def flatten_source(structure: Any, args: str, fail: str, const: Callable[[Any], str]) -> tuple[list[str], str]:
    """The source reading the leaves of ``args`` (a name) nested as ``structure``: its lines (each container's
    type and length checked, dict keys in order; ``fail``, a statement, when one differs) and the expression of
    the leaves' list; ``const(value)`` names a constant in the namespace the source runs in. For
    :func:`flattener` and a plan's entry."""
    lines: list[str] = []
    leaves: dict[int, str] = {}
    count = [0]

    def visit(node: Any, expr: str) -> None:
        if isinstance(node, int):
            leaves[node] = expr
            return
        kind, items = node
        name = f"x{count[0]}"
        count[0] += 1
        kname = const(kind)
        lines.append(f"{name} = {expr}")
        lines.append(f"if type({name}) is not {kname} or len({name}) != {len(items)}: {fail}")
        if kind is dict:
            keys = const(tuple(key for key, _item in items))
            lines.append(f"if tuple({name}) != {keys}: {fail}")
            for key, item in items:
                visit(item, f"{name}[{const(key)}]")
        else:
            for index, item in enumerate(items):
                visit(item, f"{name}[{index}]")

    visit(structure, args)
    return lines, "[" + ", ".join(leaves[index] for index in range(len(leaves))) + "]"


def _compile_flattener(structure: Any) -> Callable[[tuple[Any, ...]], list[Any] | None]:
    consts: dict[str, Any] = {}

    def const(value: Any) -> str:
        name = f"K{len(consts)}"
        consts[name] = value
        return name

    lines, leaves = flatten_source(structure, "A", "return None", const)
    source = "def flat(A):\n" + "\n".join("    " + line for line in [*lines, f"return {leaves}"])
    namespace: dict[str, Any] = dict(consts)
    exec(compile(source, "<devtensor.plan flattener>", "exec"), namespace)
    fn: Callable[[tuple[Any, ...]], list[Any] | None] = namespace["flat"]
    return fn


def leaf_key(value: Any) -> tuple[Any, ...]:
    """What a leaf of the signature must match: a tensor's type, shape, dtype and device; a scalar's value."""
    if isinstance(value, Tensor):
        return (type(value), value._shape, value._dtype, value._device)
    return (type(value), scalar_key(value))


def signature(args: tuple[Any, ...]) -> tuple[Any, list[Any], tuple[Any, ...], tuple[int, ...]]:
    """The structure, leaves, leaf keys and identity pattern (index of the first leaf that is the same tensor)
    of a call's arguments."""
    leaves: list[Any] = []
    structure = flatten(args, leaves)
    first: dict[int, int] = {}
    same = tuple(
        first.setdefault(id(leaf), index) if isinstance(leaf, Tensor) else index for index, leaf in enumerate(leaves)
    )
    return structure, leaves, tuple(leaf_key(leaf) for leaf in leaves), same


def key_text(key: tuple[Any, ...]) -> str:
    """A leaf key (:func:`leaf_key`) as text, for messages."""
    if len(key) == 4:
        return f"a {key[0].__name__} of shape {list(key[1])}, {key[2]}, on {key[3]}"
    return f"{key[0].__name__} {key[1]!r}"


def map_tensors(value: Any, fn: Callable[[Tensor], Any]) -> Any:
    """``value`` (nested tuples, lists, dicts) with ``fn`` applied to each tensor."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, tuple):
        return rebuild(value, (map_tensors(item, fn) for item in value))
    if isinstance(value, list):
        return [map_tensors(item, fn) for item in value]
    if isinstance(value, dict):
        return {key: map_tensors(item, fn) for key, item in value.items()}
    return value


def leaves(value: Any) -> list[Any]:
    """The leaves of a nested value (tuples, lists, dicts), in :func:`_flatten`'s order."""
    leaves: list[Any] = []
    flatten(value, leaves)
    return leaves


def unflatten(structure: Any, leaves: list[Any]) -> Any:
    """The nested value of a :func:`flatten` structure with its leaves."""
    if isinstance(structure, int):
        return leaves[structure]
    kind, items = structure
    if kind is dict:
        return {key: unflatten(item, leaves) for key, item in items}
    if kind is list:
        return [unflatten(item, leaves) for item in items]
    made = rebuild(kind, (unflatten(item, leaves) for item in items))
    return made if type(made) is kind else kind(made)  # (another tuple subclass: built from the plain tuple)
