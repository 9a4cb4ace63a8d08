"""Kernels lowered to raw array calls, for static plans (devtensor.plan.replay).

A kernel may offer a *lowering* next to its body: a function that, given the arrays of one recorded call and
its meta function's plan, emits the raw array-module calls the kernel would make for that call, with every
decision the kernel takes per call (dtypes, axes, coefficients, which branch) taken once, at plan time. A plan's
replay then runs those calls alone, no kernel frame, no ConstOut. A kernel without a lowering (or a lowering that
declines a call: it returns False) replays through its body as before.

A lowering is registered for the kernel function itself (the function a ``functools.partial`` handler wraps):
``@lowers(_mm)`` above ``def _mm_lowering(lw, args, out, plan) -> bool``. ``args`` maps the op's parameter names
to the call's values: an array (a buffer of the plan: a constant), a :class:`Ref` (an argument's array, or a
view of one, read on each replay) or a Python value; ``out`` is the written array (an inplace call's ``self``
too). Lowerings emit calls with :meth:`Lowering.call` into temporaries from :meth:`Lowering.temp` (allocated once
per set of the plan's buffers) and set :attr:`Lowering.deferred` when the calls are several steps whose
floating-point conditions eager reports after the last write (kernels/ufunc_family.py's deferred_conditions):
the replay then records conditions for the whole step with one state switch and reports them after its last
write, at the caller's line. What calls alone cannot say (a result a later step reads, a branch on a value, an
error turned into the kernel's) a lowering writes as a line of source, :meth:`Lowering.line`, into the replay
itself: no helper frame per replay. A lowering must give the kernel's values bit for bit (tests/test_plan_replay.py
compares lowered and kernel replays for every op that offers one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LOWERINGS", "Local", "Lowering", "Ref", "kernel_function", "lowers"]


class Ref:
    """An array the replay supplies on each call (an argument's, or a view of one), with the shape and dtype the
    plan's signature fixes."""

    __slots__ = ("dtype", "name", "shape")

    def __init__(self, name: str, shape: tuple[int, ...], dtype: Any) -> None:
        self.name = name
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)


class Local:
    """A value a lowered step computes on each replay for a later step to read (:meth:`Lowering.line`): a local
    variable of the generated replay, named by the compiler."""

    __slots__ = ()


class Lowering:
    """The calls one recorded op lowers to (see the module's docstring). ``xp``: the plan's array module;
    ``alloc(shape, dtype)``: a new array on the plan's device."""

    __slots__ = ("_alloc", "calls", "deferred", "quiet", "spare", "temps", "xp")

    def __init__(self, xp: Any, alloc: Callable[[tuple[int, ...], Any], Any]) -> None:
        self.xp = xp
        self._alloc = alloc
        #: The steps: ``(fn, args, kwargs)`` for a call, ``(template, values, {})`` for a line of source.
        self.calls: list[tuple[Callable[..., Any] | str, tuple[Any, ...], dict[str, Any]]] = []
        self.temps: list[Any] = []
        #: Whether the calls' floating-point conditions must be reported after the last write (several steps).
        self.deferred = False
        #: Whether the calls run in the quiet state (divide, invalid and over ignored, under as the caller has
        #: it: kernels/ufunc_family.py's ``quiet``), as kernels whose steps make such conditions on purpose do.
        self.quiet = False
        #: The ids of the arrays among the call's that the lowered calls may write over: buffers of the plan
        #: that no later op reads (their last use is this call) and that no other argument shares memory with.
        self.spare: frozenset[int] = frozenset()

    def temp(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A temporary array (allocated now, once per set of buffers, reused on every replay)."""
        array = self._alloc(shape, dtype)
        self.temps.append(array)
        return array

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Emit ``fn(*args, **kwargs)``: arrays and :class:`Ref` among the arguments, its result unused."""
        self.calls.append((fn, args, kwargs))

    def line(self, template: str, *values: Any) -> None:
        """Emit one statement: ``template`` with each ``{}`` replaced by the source of the next value (a
        :class:`Ref` or :class:`Local` by its name, anything else as a constant of the replay), e.g.
        ``lw.line("{} = {}({})", total, np.add.reduce, x)``; ``try:``/``except ...:`` with a simple statement on one
        line each, as Python allows."""
        self.calls.append((template, values, {}))


#: Per kernel function, its lowering ``lower(lw, args, out, plan) -> bool`` (False: not this call).
LOWERINGS: dict[Any, Callable[[Lowering, dict[str, Any], Any, Any], bool]] = {}


def lowers(
    kernel: Any,
) -> Callable[
    [Callable[[Lowering, dict[str, Any], Any, Any], bool]], Callable[[Lowering, dict[str, Any], Any, Any], bool]
]:
    """Decorator: register the decorated function as ``kernel``'s lowering (see the module's docstring)."""

    def register(
        lower: Callable[[Lowering, dict[str, Any], Any, Any], bool],
    ) -> Callable[[Lowering, dict[str, Any], Any, Any], bool]:
        LOWERINGS[kernel] = lower
        return lower

    return register


def kernel_function(handler: Any) -> Any:
    """The function a resolved handler runs: ``handler.func`` for a ``functools.partial`` (the ``xp`` kernels
    are registered bound to their array module), else the handler."""
    return getattr(handler, "func", handler)
