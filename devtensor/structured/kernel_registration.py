"""Kernel registration shared by the op kinds that keep a :class:`~devtensor.dispatcher.KernelTable` of their own
(multi-output ops, :mod:`devtensor.structured.multi`; data-dependent ops, :mod:`devtensor.structured.data_dependent`):
``impl``, ``register_kernel``, ``unregister_kernel`` and ``check_handler``. Each kind says, through its ``_check``,
which parameters an impl of it takes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devtensor.dispatcher import DispatchKey, KernelTable, dispatch_key
from devtensor.errors import ArgumentValueError
from devtensor.structured.stale import skipping_stale

__all__ = ["KernelRegistration"]


class KernelRegistration:
    """Mixin: registration of impls per dispatch key into ``self.table``, each checked by ``self._check(fn,
    xp_allowed)`` (which raises TypeError for parameters that do not fit the op, and returns whether ``fn`` takes
    the array module ``xp`` first)."""

    __slots__ = ()

    name: str
    table: KernelTable

    def _check(self, fn: Callable[..., Any], xp_allowed: bool = False) -> bool:
        raise NotImplementedError  # (each op kind defines its own)

    def impl(self, *keys: DispatchKey | str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering the impl for each of ``keys`` (DispatchKeys, or device types such as
        ``"cpu"``); the impl takes the parameters the op kind asks for (see its ``impl`` notes). An impl whose
        first parameter is ``xp`` serves several keys (it receives the key's array module first).

        Raises:
            TypeError: the impl's parameters do not match the schema.  ValueError: no key given.
        """
        from devtensor.structured.registry import bind_array_module

        if not keys:
            raise ArgumentValueError(f"{self.name}.impl: give at least one dispatch key or device type")
        resolved = [dispatch_key(key, op=f"{self.name}.impl") for key in keys]

        @skipping_stale
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            takes_xp = self._check(fn, xp_allowed=True)
            for key in resolved:
                self.table.register(key, bind_array_module(key, fn) if takes_xp else fn)
            return fn

        return register

    def register_kernel(self, key: DispatchKey | str, fn: Callable[..., Any]) -> None:
        """Register ``fn`` as the impl for ``key`` (replacing any); see :meth:`impl`."""
        self.impl(key)(fn)

    def unregister_kernel(self, key: DispatchKey | str) -> None:
        """Remove the impl for ``key`` (overrides stay)."""
        self.table.unregister(dispatch_key(key, op=f"{self.name}.unregister_kernel"))

    def check_handler(self, fn: Callable[..., Any]) -> None:
        """Check that ``fn`` can be this op's kernel or override for one key. Raises TypeError otherwise."""
        self._check(fn)
