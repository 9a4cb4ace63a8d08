"""Dispatch keys and the per-op kernel tables.

A :class:`DispatchKey` names a backend (CPU, CUDA, Meta, or one registered out of tree). Keys are interned: one
object per name, compared by identity. Each structured op owns a :class:`KernelTable` mapping key -> kernel;
the resolved handler per key is cached in a plain dict, and every registration clears the caches it can
affect (a kernel: that op's; a backend fallback, which serves every op: every op's), so a call never sees a
stale handler.

Semantics follow PyTorch's dispatcher (RFC-0005 and the Python dispatcher PRs): a kernel registered for the op
and key wins; else the backend fallback for the key; else :class:`~devtensor.errors.NoKernelError`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, ClassVar, Final

from devtensor.errors import ArgumentTypeError, ArgumentValueError, NoKernelError

__all__ = [
    "META_ONLY",
    "DispatchKey",
    "KernelTable",
    "backend_fallback",
    "dispatch_key",
    "key_named",
    "register_fallback",
    "registry_lock",
    "unregister_fallback",
]


class DispatchKey:
    """An interned backend key. ``DispatchKey("CPU") is DispatchKey.CPU``.

    Args:
        name: an identifier, e.g. ``"CPU"``; creating a key with a new name registers it.
    Raises:
        ValueError: the name is not a Python identifier.
    """

    __slots__ = ("index", "name")
    _interned: ClassVar[dict[str, DispatchKey]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()
    name: str
    index: int

    CPU: ClassVar[DispatchKey]
    CUDA: ClassVar[DispatchKey]
    Meta: ClassVar[DispatchKey]

    def __new__(cls, name: str) -> DispatchKey:
        key = cls._interned.get(name)
        if key is not None:
            return key
        if not isinstance(name, str) or not name.isidentifier():
            raise ArgumentValueError(f"DispatchKey: name must be an identifier, got {name!r}")
        with cls._lock:
            key = cls._interned.get(name)
            if key is None:
                key = object.__new__(cls)
                key.name = name
                key.index = len(cls._interned)
                cls._interned[name] = key
        return key

    def __repr__(self) -> str:
        return f"DispatchKey.{self.name}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (DispatchKey, (self.name,))


DispatchKey.CPU = DispatchKey("CPU")
DispatchKey.CUDA = DispatchKey("CUDA")
DispatchKey.Meta = DispatchKey("Meta")


def dispatch_key(key: object, *, op: str = "dispatch_key", arg: str = "key") -> DispatchKey:
    """The dispatch key ``key`` names: a DispatchKey as it is; a Device's key; a string naming a key (``"CPU"``,
    ``"CUDA"``, ``"Meta"``, an out-of-tree key) or a device type (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"meta"``,
    an out-of-tree type), a key name first. The one place where user text becomes a dispatch key.

    Raises:
        ValueError: a string that names neither a key nor a known device type (as ``Device`` raises).
        TypeError: anything else. Either message names ``op`` and ``arg`` (the caller's function and argument).
    """
    if type(key) is DispatchKey:
        return key
    from devtensor.device import Device  # devtensor.device imports this module

    if isinstance(key, Device):
        return key.key
    if isinstance(key, str):
        named = DispatchKey._interned.get(key)
        if named is not None:
            return named
        from devtensor.device import as_device  # (as Device, with the message naming op and argument)

        return as_device(key, op=op, arg=arg).key
    raise ArgumentTypeError(
        f"{op}: argument '{arg}' must be a DispatchKey, a key name such as 'CPU', a Device or a device type such "
        f"as 'cpu', got {key!r}"
    )


#: Returned by a table for the Meta key when it has no kernel: the front runs the meta function only.
META_ONLY: Final = object()

_fallbacks: dict[DispatchKey, Callable[..., None]] = {}
_tables: weakref.WeakSet[KernelTable] = weakref.WeakSet()
#: The registration lock: every change to a kernel table, a fallback or the op registry (defining, replacing and
#: removing ops, caching device bindings: devtensor.structured.registry) happens under it; calls never take it.
#: Reentrant: code that registers and keeps its own bookkeeping (devtensor.library's handles) holds it so that
#: both happen as one step, and so can a user who replaces an op and registers its kernels (calls that miss
#: their handler cache then wait for the whole step).
registry_lock: Final = threading.RLock()
# Every registration anywhere bumps the generation under the lock; a resolve that raced with one does not
# cache what it computed, so no stale handler survives a registration.
_generation = [0]


def key_named(name: str) -> DispatchKey | None:
    """The dispatch key named ``name`` (``"CPU"``, ``"Meta"``, an out-of-tree key's name), or None when no key
    of that name exists. Unlike :class:`DispatchKey` itself, never creates one."""
    return DispatchKey._interned.get(name)


def backend_fallback(key: DispatchKey) -> Callable[..., None] | None:
    """The backend fallback registered for ``key`` (see :func:`register_fallback`), or None."""
    return _fallbacks.get(key)


def _invalidate_all() -> None:
    _generation[0] += 1
    for table in list(_tables):
        table.handlers.clear()


def register_fallback(key: DispatchKey, fallback: Callable[..., None]) -> None:
    """Register a backend fallback: one callable serving every op that has no kernel for ``key``.

    The fallback is called as ``fallback(op, *args, out=const_out, **kwargs)``: the StructuredOp, then the
    op's arguments as the front passes them to an impl (tensors on the fallback's device, a ConstOut). It runs
    inside the common code (meta, out and inplace rules, overlap checks, version bumps), like any impl.
    Registering replaces any earlier fallback for the key; every op's cached handlers are invalidated.
    """
    with registry_lock:
        _fallbacks[key] = fallback
        _invalidate_all()


def unregister_fallback(key: DispatchKey) -> None:
    """Remove the backend fallback for ``key`` (if any); every op's cached handlers are invalidated."""
    with registry_lock:
        _fallbacks.pop(key, None)
        _invalidate_all()


class KernelTable:
    """An op's kernels and Python overrides per dispatch key, with a cached key -> handler dict.

    ``handlers`` is read directly by the fronts: ``handlers.get(key)`` is one dict lookup; a miss goes
    through :meth:`resolve`, which fills it. Resolution order (PyTorch's Python dispatcher): the newest Python
    override for the key, else the kernel, else the backend fallback, else (Meta only) the meta function
    alone, else NoKernelError. Every registration clears the cache.
    """

    __slots__ = ("__weakref__", "fallbacks", "handlers", "kernels", "meta_only_cached", "op", "op_name", "overrides")

    def __init__(self, op_name: str, op: Any = None, *, fallbacks: bool = True, meta_only_cached: bool = True) -> None:
        self.op_name = op_name
        self.op = op
        #: Whether backend fallbacks serve this op (not for view ops: a fallback takes an out, a view makes none).
        self.fallbacks = fallbacks
        #: Whether :data:`META_ONLY` may be cached in ``handlers``: only for ops whose fronts test the cached
        #: handler against it. A view op's front calls whatever it finds there, so its table never caches the
        #: sentinel (other threads read the cache with no lock: a cached-then-removed sentinel would be called).
        self.meta_only_cached = meta_only_cached
        self.kernels: dict[DispatchKey, Callable[..., None]] = {}
        self.overrides: dict[DispatchKey, list[Callable[..., None]]] = {}
        self.handlers: dict[DispatchKey, Any] = {}
        # Under the lock: _invalidate_all iterates the set under it, and a set must not grow while iterated.
        with registry_lock:
            _tables.add(self)

    def register(self, key: DispatchKey, kernel: Callable[..., None]) -> None:
        """Set the kernel for ``key`` (replacing any) and drop cached handlers. A CPU kernel that is a plain ufunc
        kernel of the op's meta's ufunc makes the op's direct path its own (:func:`devtensor.meta.adopt_direct`)."""
        from devtensor.structured.tables import adopt_direct

        with registry_lock:
            self.kernels[key] = kernel
            meta = getattr(self.op, "meta", None)
            if key is DispatchKey.CPU and meta is not None:
                adopt_direct(meta, kernel)
            _generation[0] += 1
            self.handlers.clear()

    def unregister(self, key: DispatchKey) -> None:
        """Remove the kernel for ``key`` (if any) and drop cached handlers."""
        with registry_lock:
            self.kernels.pop(key, None)
            _generation[0] += 1
            self.handlers.clear()

    def push_override(self, key: DispatchKey, fn: Callable[..., None]) -> None:
        """Make ``fn`` the handler for ``key``, above the kernel and any earlier override."""
        with registry_lock:
            self.overrides.setdefault(key, []).append(fn)
            _generation[0] += 1
            self.handlers.clear()

    def remove_override(self, key: DispatchKey, fn: Callable[..., None]) -> bool:
        """Remove the override ``fn`` for ``key`` (wherever it is in the stack); False if it was not there."""
        with registry_lock:
            stack = self.overrides.get(key, [])
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is fn:
                    del stack[i]
                    break
            else:
                return False
            if not stack:
                self.overrides.pop(key, None)
            _generation[0] += 1
            self.handlers.clear()
            return True

    def resolve(self, key: DispatchKey, devices: str) -> Any:
        """The handler for ``key`` (see the class docstring for the order); caches it.

        Raises:
            NoKernelError: nothing serves the key; the message names the op, the key, ``devices`` (the
                devices seen in the call) and the keys that do have kernels.
        """
        with registry_lock:
            generation = _generation[0]
            stack = self.overrides.get(key)
            handler: Any = stack[-1] if stack else self.kernels.get(key)
            if handler is None:
                fallback = _fallbacks.get(key) if self.fallbacks else None
                if fallback is not None:
                    handler = _bind_fallback(fallback, self.op if self.op is not None else self.op_name)
                elif key is DispatchKey.Meta:
                    handler = META_ONLY
                else:
                    have = ", ".join(sorted(k.name for k in self.kernels)) or "none"
                    raise NoKernelError(
                        f"{self.op_name}: no kernel for dispatch key {key.name} (devices: {devices}); "
                        f"keys with kernels: {have}"
                    )
            if generation == _generation[0] and (handler is not META_ONLY or self.meta_only_cached):
                self.handlers[key] = handler
        return handler


def _bind_fallback(fallback: Callable[..., None], op: Any) -> Callable[..., None]:
    def handler(*args: Any, **kwargs: Any) -> None:
        fallback(op, *args, **kwargs)

    return handler
