"""Devices: ``cpu``, ``cuda:N``, ``meta`` and any device type registered out of tree.

A :class:`Device` is interned: parsing the same spec twice gives the same object while the first is alive, so
the front compares devices by identity. The table holds its devices weakly (tensors hold theirs), so creating
many distinct devices keeps none of them alive. Parsing follows PyTorch's ``torch.device``: ``"cpu"``,
``"cuda"``, ``"cuda:1"``, ``"meta"``, a non-negative int ``N`` meaning ``cuda:N``, or a Device;
``Device("cuda", 1)`` is ``cuda:1``.
"""

from __future__ import annotations

import operator
import threading
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, SupportsIndex, TypeAlias

from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError, ArgumentValueError

__all__ = ["Device", "DeviceLike", "as_device", "as_index", "device_types", "is_device_type", "register_device_type"]


@dataclass(frozen=True, slots=True)
class _DeviceType:
    name: str
    key: DispatchKey
    indexed: bool
    guard: Callable[[int], AbstractContextManager[Any]] | None
    current_index: Callable[[], int] | None


_device_types: dict[str, _DeviceType] = {}


def register_device_type(
    name: str,
    key: DispatchKey,
    *,
    indexed: bool = False,
    guard: Callable[[int], AbstractContextManager[Any]] | None = None,
    current_index: Callable[[], int] | None = None,
) -> None:
    """Register a device type (e.g. ``"cuda"``) and the dispatch key its tensors dispatch to.

    Args:
        name: lowercase identifier, the text before ``:`` in a device string.
        key: the dispatch key of tensors on this device type.
        indexed: whether devices carry an index (``cuda:0``); unindexed types (``cpu``) reject one.
        guard: for indexed types, ``guard(index)`` returns the context manager that makes that device current
            around a kernel call (the device guard); ``None`` when no guard is needed.
        current_index: for indexed types, returns the index that a bare ``"name"`` means on creation.
    Raises:
        ValueError: the name is not a lowercase identifier, or is registered already.
    """
    if not (name.isidentifier() and name.islower()):
        raise ArgumentValueError(f"register_device_type: name must be a lowercase identifier, got {name!r}")
    if name in _device_types:
        raise ArgumentValueError(f"register_device_type: device type {name!r} is registered already")
    _device_types[name] = _DeviceType(name, key, indexed, guard, current_index)


def is_device_type(name: str) -> bool:
    """Whether a device type named ``name`` is registered (``"cpu"``, ``"meta"``, ``"cuda"``, out-of-tree ones)."""
    return name in _device_types


def device_types() -> list[tuple[str, DispatchKey]]:
    """Every registered device type with the dispatch key of its tensors, in registration order (a snapshot)."""
    return [(name, info.key) for name, info in list(_device_types.items())]


register_device_type("cpu", DispatchKey.CPU)
register_device_type("meta", DispatchKey.Meta)


class Device:
    """A device: a type (``"cpu"``, ``"cuda"``, ``"meta"``, …) and, for indexed types, an index.

    ``Device(spec)`` accepts a string (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"meta"``), a non-negative int
    (``N`` means ``cuda:N``, as in PyTorch) or a Device; ``Device("cuda", 1)`` takes the index separately.
    An int is anything with ``__index__`` other than a bool (a NumPy integer, a 0-d integer array), as NumPy
    takes sizes. Devices are interned (weakly: while one is alive, parsing its spec again gives that object),
    hashable, and compare equal when type and index are equal. ``Device("cuda")`` has index ``None`` ("the
    current CUDA device"); tensors always live on an indexed device.

    Devices are immutable: assigning an attribute raises AttributeError.

    Raises:
        ValueError: an unknown device type, a malformed string, a negative index (or one with leading zeros, as
            PyTorch), an index on an unindexed type, or a bool.
        ArgumentTypeError (a TypeError): a spec that is not a str, an int or a Device (a float, bytes, None…),
            or an index that is not an int.
    """

    __slots__ = ("__weakref__", "_guard", "index", "key", "type")
    # (type, index) -> a weak reference to the live Device; an entry leaves with its Device (see _forget).
    _interned: ClassVar[dict[tuple[str, int | None], weakref.ref[Device]]] = {}
    # Strong references to the devices made last (bounded, oldest dropped first); identity stays unique because
    # _interned keeps answering for every device alive.
    _recent: ClassVar[dict[tuple[str, int | None], Device]] = {}
    # Reentrant: a collection inside the locked region may run _forget's callback on this thread.
    _lock: ClassVar[threading.RLock] = threading.RLock()
    type: str
    index: int | None
    key: DispatchKey
    _guard: Callable[[], AbstractContextManager[Any]] | None

    def __new__(cls, spec: DeviceLike, index: SupportsIndex | None = None) -> Device:
        if type(spec) is Device:
            if index is not None and index != spec.index:
                raise ArgumentValueError(f"Device: got device {spec} and a different index {index!r}")
            return spec
        dev_type, parsed_index = _parse(spec, index)
        key = (dev_type, parsed_index)
        ref = cls._interned.get(key)
        found = ref() if ref is not None else None
        if found is not None:
            return found
        info = _device_types[dev_type]
        with cls._lock:
            ref = cls._interned.get(key)
            found = ref() if ref is not None else None
            if found is None:
                found = object.__new__(cls)
                _set = object.__setattr__
                _set(found, "type", dev_type)
                _set(found, "index", parsed_index)
                _set(found, "key", info.key)
                guard = info.guard
                bound = _bind_guard(guard, parsed_index) if guard is not None and parsed_index is not None else None
                _set(found, "_guard", bound)
                cls._interned[key] = weakref.ref(found, _forget(key, cls._interned, cls._lock))
                # The last few devices made stay alive, so that a spec parsed again and again with no tensor
                # holding its device (Device("cuda:1") in a loop) does not make a new object each time.
                recent = cls._recent
                recent[key] = found
                if len(recent) > _RECENT_LIMIT:
                    del recent[next(iter(recent))]
        return found

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Device is immutable (interned): cannot assign '{name}'")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Device is immutable (interned): cannot delete '{name}'")

    def __copy__(self) -> Device:
        return self

    def __deepcopy__(self, memo: object) -> Device:
        return self

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Device, (str(self),))

    def resolved(self) -> Device:
        """This device with a concrete index: ``cuda`` becomes ``cuda:<current device>``; others unchanged."""
        if self.index is not None:
            return self
        info = _device_types[self.type]
        if not info.indexed:
            return self
        current = info.current_index
        return Device(self.type, current() if current is not None else 0)


# How many recently made devices Device keeps alive.
_RECENT_LIMIT = 16


def _forget(
    key: tuple[str, int | None],
    table: dict[tuple[str, int | None], weakref.ref[Device]],
    lock: threading.RLock,
) -> Callable[[weakref.ref[Device]], None]:
    """The callback that drops ``key``'s entry when its Device dies, unless a new Device took the key since.
    It holds the table and the lock itself: at interpreter exit the module's globals may be gone."""

    def forget(ref: weakref.ref[Device]) -> None:
        with lock:
            if table.get(key) is ref:
                del table[key]

    return forget


def _bind_guard(
    guard: Callable[[int], AbstractContextManager[Any]], index: int
) -> Callable[[], AbstractContextManager[Any]]:
    def enter() -> AbstractContextManager[Any]:
        return guard(index)

    return enter


def as_index(value: object) -> int | None:
    """``value`` as an int when it is one by ``__index__`` (int, NumPy integer, 0-d integer array), as NumPy takes
    sizes and indices; None for anything else, bools included."""
    if isinstance(value, int):
        return None if isinstance(value, bool) else int(value)
    if isinstance(value, (str, bytes, float)):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]  # checking exactly that
    except TypeError:
        return None


def _parse(spec: object, index: object) -> tuple[str, int | None]:
    if isinstance(spec, bool):
        raise ArgumentValueError(f"Device: expected a device string, int or Device, got the bool {spec!r}")
    as_int = as_index(spec)
    if as_int is not None:
        if index is not None:
            raise ArgumentValueError(f"Device: got an int device {as_int} and an index {index!r}")
        dev_type, raw_index = "cuda", str(as_int)
    elif isinstance(spec, str):
        if spec != "".join(spec.split()):  # (" cpu" and "cuda: 0" are typos: PyTorch refuses them too)
            raise ArgumentValueError(
                f"Device: malformed device string {spec!r} (spaces; expected e.g. 'cpu' or 'cuda:0')"
            )
        dev_type, sep, raw_index = spec.partition(":")
        if sep and not raw_index:
            raise ArgumentValueError(f"Device: malformed device string {spec!r} (expected e.g. 'cuda:0')")
        if sep and index is not None:
            raise ArgumentValueError(f"Device: got device string {spec!r} with an index and an index {index!r}")
    else:
        raise ArgumentTypeError(f"Device: expected a device string, int or Device, got {type(spec).__name__} {spec!r}")
    info = _device_types.get(dev_type)
    if info is None:
        known = ", ".join(sorted(_device_types))
        raise ArgumentValueError(f"Device: unknown device type {dev_type!r} in {spec!r}; known types: {known}")
    parsed: int | None = None
    if raw_index:
        if not (raw_index.isascii() and raw_index.isdigit()):
            raise ArgumentValueError(f"Device: device index must be a non-negative int, got {raw_index!r} in {spec!r}")
        if len(raw_index) > 1 and raw_index[0] == "0":
            raise ArgumentValueError(f"Device: device index must not have leading zeros, got {raw_index!r} in {spec!r}")
        parsed = int(raw_index)
    elif index is not None:
        index_int = as_index(index)
        if index_int is None:  # (bools included: True is not a device index)
            raise ArgumentTypeError(
                f"Device: device index must be a non-negative int, got {type(index).__name__} {index!r}"
            )
        if index_int is None or index_int < 0:
            raise ArgumentValueError(f"Device: device index must be a non-negative int, got {index!r}")
        parsed = index_int
    if parsed is not None and not info.indexed:
        raise ArgumentValueError(f"Device: device type {dev_type!r} takes no index, got {spec!r} with index {parsed}")
    return dev_type, parsed


DeviceLike: TypeAlias = "Device | str | int"


def as_device(
    spec: DeviceLike | None, default: Device | None = None, *, op: str | None = None, arg: str = "device"
) -> Device:
    """Parse ``spec`` into a concrete Device (``cuda`` resolves to the current CUDA device).

    Returns ``default`` (resolved) when ``spec`` is None; ``cpu`` when both are None.

    Raises:
        ArgumentTypeError, ArgumentValueError: as ``Device``; with ``op``, the message names the op and its
            argument ``arg`` (``zeros: argument 'device': unknown device type 'gpu' ...``).
    """
    if spec is None:
        return (default or CPU).resolved()
    if op is None:
        return Device(spec).resolved()
    try:
        return Device(spec).resolved()
    except (ArgumentTypeError, ArgumentValueError) as error:
        detail = str(error).removeprefix("Device: ")
        raise type(error)(f"{op}: argument '{arg}': {detail}") from None


CPU: Device = Device("cpu")
META: Device = Device("meta")
