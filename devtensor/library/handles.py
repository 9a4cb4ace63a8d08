"""One handle type for everything the library registers: kernels, Python overrides and backend fallbacks.

:func:`~devtensor.library.register_kernel`, :func:`~devtensor.library.override` and
:func:`~devtensor.library.register_fallback` each return a :class:`RegistrationHandle`. Registrations of one kind
for one place (an op's kernel for a key, an op's override for a key, a key's fallback) stack: the newest one still
registered is in force, and removing handles in any order leaves the newest remaining one, or what was there
before them all (PyTorch's Python dispatcher behaves the same way for its registrations).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Self

from devtensor.device import Device
from devtensor.dispatcher import DispatchKey, dispatch_key, registry_lock

__all__ = ["KeyLike", "RegistrationHandle", "RegistrationKind", "as_key", "register_stacked"]

KeyLike = DispatchKey | str | Device
RegistrationKind = Literal["kernel", "override", "fallback"]


def as_key(key: KeyLike, op: str = "library") -> DispatchKey:
    """The dispatch key for ``key``: a DispatchKey, a key name (``"CPU"``), a Device or a device type (``"cpu"``)
    (:func:`devtensor.dispatcher.dispatch_key`; errors name ``op`` and the argument ``key``).

    Raises:
        TypeError: none of these.  ValueError: an unknown device type.
    """
    return dispatch_key(key, op=op, arg="key")


class RegistrationHandle:
    """Undoes one registration: a kernel (``kind == "kernel"``, from ``register_kernel``), a Python override
    (``"override"``, from ``override``) or a backend fallback (``"fallback"``, from ``register_fallback``).

    ``remove()`` takes the registration out and returns True, or returns False when it was removed already
    (removing twice is harmless). Handles of one kind for one op and key may be removed in any order: the newest
    registration still active stays in force, and once all are removed, what was there before the first of them
    is back. A handle is a context manager that removes its registration on exit. No call that starts after
    ``remove()`` returns uses the removed callable (removal happens under the dispatcher's lock and clears the
    cached handlers).

    Attributes:
        kind: ``"kernel"``, ``"override"`` or ``"fallback"``.
        op: the op registered for (a :class:`~devtensor.structured.StructuredOp` or a
            :class:`~devtensor.views.ViewOp`); None for a fallback (it serves every op).
        key: the :class:`~devtensor.dispatcher.DispatchKey` registered for.
        fn: the registered callable (as given: an ``xp`` kernel is installed bound to the key's array module).
    """

    __slots__ = ("_active", "_installed", "_undo", "fn", "key", "kind", "op")

    def __init__(
        self,
        kind: RegistrationKind,
        op: Any,
        key: DispatchKey,
        fn: Callable[..., None],
        undo: Callable[[RegistrationHandle], None],
        installed: Callable[..., None] | None = None,
    ) -> None:
        self.kind = kind
        self.op = op
        self.key = key
        self.fn = fn
        self._undo = undo
        # What the registration put in the table: ``fn`` itself, or ``fn`` bound to an array module.
        self._installed = fn if installed is None else installed
        self._active = True

    @property
    def active(self) -> bool:
        """Whether the registration is still in place (False after ``remove()``)."""
        return self._active

    def remove(self) -> bool:
        """Take the registration out; True if this call removed it, False if it was removed already."""
        with registry_lock:
            if not self._active:
                return False
            self._active = False
            self._undo(self)
            return True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        target = f"{self.kind} for" if self.op is None else f"{self.kind} of {self.op.name} for"
        return f"<{target} {self.key.name} ({'active' if self._active else 'removed'})>"


# --- stacked registrations (kernels and fallbacks: one slot each, which the newest handle's callable fills) ---------

Installed = Callable[..., None] | None


@dataclass(slots=True)
class _Slot:
    """The handles of one kind for one (op, key), oldest first, and what filled the slot before the first of them."""

    before: Installed
    live: list[RegistrationHandle]
    read: Callable[[], Installed]
    write: Callable[[Installed], None]


_slots: dict[tuple[str, object, DispatchKey], _Slot] = {}


def register_stacked(
    kind: RegistrationKind,
    op: Any,
    key: DispatchKey,
    fn: Callable[..., None],
    read: Callable[[], Installed],
    write: Callable[[Installed], None],
    installed: Callable[..., None] | None = None,
) -> RegistrationHandle:
    """Fill a one-callable slot (``read`` gives its content, ``write`` sets it; None empties it) with ``fn`` (or
    with ``installed``, what stands for ``fn`` in the slot, such as an ``xp`` kernel bound to its array module)
    and return the handle that undoes it, stacking with earlier handles of the same ``kind``, ``op`` and ``key``.

    ``write`` runs first: if it raises (say, ``fn`` does not fit the op), nothing has changed.
    """
    content = fn if installed is None else installed
    with registry_lock:
        before = read()
        write(content)
        slot_id = (kind, op, key)
        slot = _slots.get(slot_id)
        if slot is None:
            slot = _slots[slot_id] = _Slot(before, [], read, write)
        handle = RegistrationHandle(kind, op, key, fn, _remove_stacked, content)
        slot.live.append(handle)
        return handle


def _remove_stacked(handle: RegistrationHandle) -> None:
    """Take ``handle`` off its slot's stack and refill the slot (called with the registry lock held)."""
    slot_id = (handle.kind, handle.op, handle.key)
    slot = _slots[slot_id]
    filled_by_handles = slot.live[-1]._installed
    slot.live.remove(handle)
    if not slot.live:
        del _slots[slot_id]
    # A registration made since then outside the handles (``op.impl``, the dispatcher's own register_fallback)
    # replaced the handles' callable: leave it in place.
    if slot.read() is filled_by_handles:
        slot.write(slot.live[-1]._installed if slot.live else slot.before)
