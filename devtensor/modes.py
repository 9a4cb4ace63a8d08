"""Dispatch modes: context managers that see every op call, for logging, counting and tracing.

A mode is PyTorch's ``TorchDispatchMode`` idea for devtensor's ops: subclass :class:`DispatchMode`, override
``__dispatch__``, and enter it with ``with``. While it is active (in the thread that entered it), every call of
a structured op's functional or inplace variant, and of a view op, goes to
``mode.__dispatch__(op, variant, func, args, kwargs)``
instead, which decides what happens: calling ``func(*args, **kwargs)`` runs the op (through the modes entered
before this one, then the op itself). While a mode's ``__dispatch__`` runs, that mode and those entered after it
are inactive, so ops it calls do not recurse into it. Modes are per thread; with none active anywhere, the
cost on each op call is one list-item truth test.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Self, TypeVar

__all__ = ["DispatchMode", "active_modes"]

_T = TypeVar("_T")
#: How many modes are entered, in all threads together: the fronts test only ``ACTIVE[0]`` (bound
#: there as ``_modes``), so a call with no mode anywhere pays one list-item truth test.
ACTIVE = [0]
_count_lock = threading.Lock()
_local = threading.local()


def _stack() -> list[DispatchMode]:
    """This thread's active modes, innermost last (created empty on first use)."""
    stack: list[DispatchMode] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def active_modes() -> tuple[DispatchMode, ...]:
    """The modes active in this thread, innermost last."""
    return tuple(_stack())


class DispatchMode:
    """Base class of dispatch modes. The default ``__dispatch__`` runs the op unchanged.

    Raises:
        RuntimeError: leaving a mode that is not the innermost active one of this thread.
    """

    def __dispatch__(
        self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Handle one call of ``op`` (a StructuredOp, or a ViewOp) in ``variant`` (``"functional"`` — which
        covers out= — ``"inplace"``, or ``"view"``): ``args``/``kwargs`` as the front received them (``out`` in
        kwargs). Return the result; ``func(*args, **kwargs)`` computes it."""
        return func(*args, **kwargs)

    def __enter__(self) -> Self:
        _stack().append(self)
        with _count_lock:
            ACTIVE[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        stack = _stack()
        if not stack or stack[-1] is not self:
            raise RuntimeError(f"{type(self).__name__}: leaving a dispatch mode that is not the innermost active one")
        stack.pop()
        with _count_lock:
            ACTIVE[0] -= 1


def run_modes(
    op: Any,
    variant: str,
    public: Callable[..., Any],
    raw: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
) -> Any:
    """Called by a front when some mode is active somewhere: hand the call to this thread's innermost mode
    (with it and later ones made inactive meanwhile), or run ``raw`` (the front without this hook) if none."""
    stack = _stack()
    if not stack:
        return raw(*args, **kwargs)
    mode = stack.pop()
    try:
        return mode.__dispatch__(op, variant, public, tuple(args), kwargs)
    finally:
        # Put back only the mode taken out: modes the dispatch left (or entered) below it stay as they are.
        stack.append(mode)


#: What :func:`run_indexing` returns when no active mode records the call: the caller goes on as usual.
NOT_HANDLED: Any = object()


def run_indexing(name: str, tensor: Any, args: tuple[Any, ...]) -> Any:
    """Called by ``Tensor.__getitem__`` (``name`` "getitem", ``args`` (index,)), ``__setitem__`` ("setitem",
    (index, value)) and ``creation.filled`` ("create", ``tensor`` None, (function name, shape, dtype, device,
    fill)) when some mode is active somewhere: hand the call to this thread's innermost mode when it records
    these (``records_indexing`` true: a static plan's tracer), with it made inactive meanwhile, through its
    ``__index_call__(name, tensor, args)``, which may return NOT_HANDLED too; else NOT_HANDLED. Other modes do
    not see these calls."""
    stack = _stack()
    if not stack or not getattr(stack[-1], "records_indexing", False):
        return NOT_HANDLED
    mode = stack.pop()
    try:
        return mode.__index_call__(name, tensor, args)  # type: ignore[attr-defined]
    finally:
        stack.append(mode)


def recording() -> bool:
    """Whether this thread's innermost mode records calls (a static plan's tracer: ``records_indexing``)."""
    stack = _stack()
    return bool(stack) and bool(getattr(stack[-1], "records_indexing", False))


def constant(op: str, made: _T) -> _T:
    """``made``, the new tensor a creation function ``op`` computed from Python values (``tensor`` and
    ``asarray`` of Python data, ``arange``, ``linspace``, ``eye``), or, while a static plan traces, its
    stand-in: the plan records it as a constant copied into a buffer (devtensor.plan)."""
    if ACTIVE[0]:
        traced = run_indexing("constant", made, (op,))
        if traced is not NOT_HANDLED:
            return traced  # type: ignore[no-any-return]
    return made
