"""Python overrides: :func:`override` puts a Python callable above an op's kernel for one dispatch key.

This is PyTorch's Python dispatcher (``torch.library.Library.impl`` from Python, ``py_impl``): the newest
override of an (op, key) wins over older ones, the kernel and the backend fallback, until its handle removes it.
"""

from __future__ import annotations

from collections.abc import Callable

from devtensor.dispatcher import registry_lock
from devtensor.library.custom_ops import OpLike, find_op
from devtensor.library.handles import KeyLike, RegistrationHandle, as_key
from devtensor.structured.stale import skipping_stale

__all__ = ["override"]


@skipping_stale
def override(op: OpLike, key: KeyLike, fn: Callable[..., None]) -> RegistrationHandle:
    """Make the Python callable ``fn`` the handler of ``op`` for ``key``, above its kernel, its fallback and any
    earlier override (PyTorch's Python dispatcher: the newest registration wins); returns the handle that
    undoes it (a :class:`~devtensor.library.RegistrationHandle` of kind ``"override"``; removing overrides in
    any order leaves the newest remaining one on top).

    ``fn`` is called exactly like an impl (same parameters, keyword-only ``out`` ConstOut; validated as one), and
    runs inside the common code, so meta checks, out/inplace rules and version bumps still apply. Works for
    built-in and custom ops, on any key (including Meta: the override then runs instead of "meta only"), and for
    view ops (``"transpose"``): there ``fn`` is called as the op's view kernel (``fn(xp, array, plan)``, see
    :data:`devtensor.views.ViewKernel`) and returns the view's array; the view front still makes the view share
    its base's storage and version.
    Thread-safe: registration and removal happen under the dispatcher's lock and invalidate the op's cached
    handlers, so no call started after ``override``/``remove`` returns uses a stale handler.

    Raises:
        TypeError: ``fn``'s parameters do not match the op's schema (a view op's: ``fn`` is not callable).
        KeyError: no such op.
    """
    found = find_op(op, "override")
    resolved = as_key(key, "override")
    found.check_handler(fn)  # the op's own rule: the impl signature, or (a view op) a callable
    with registry_lock:
        found.table.push_override(resolved, fn)
        return RegistrationHandle("override", found, resolved, fn, _remove_override)


def _remove_override(handle: RegistrationHandle) -> None:
    """Take ``handle``'s override out of its op's override stack, wherever it is in it."""
    handle.op.table.remove_override(handle.key, handle.fn)
