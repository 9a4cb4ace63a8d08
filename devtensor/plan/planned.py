"""``dt.planned``: a step called through static plans, one per argument signature (see :mod:`devtensor.plan.core`)."""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, overload

from devtensor import dispatcher, modes
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.plan.core import Plan, entry_class
from devtensor.plan.entry import eager_entry
from devtensor.plan.values import MISS
from devtensor.plan.values import flag as _flag
from devtensor.plan.values import map_tensors as _map_tensors
from devtensor.plan.values import signature as _signature
from devtensor.tensor import Tensor

__all__ = ["Planned", "planned"]


class Planned:
    """A step called through plans, one per argument signature (made by :func:`planned`).

    Attributes:
        step: the function planned.
        plans: the cached plans, least recently used first, keyed by signature.
        maxsize: how many plans are kept.
    """

    def __init__(self, step: Callable[..., Any], maxsize: int) -> None:
        if type(maxsize) is not int or maxsize < 1:
            raise ArgumentValueError(f"planned: expects maxsize a positive int, got {maxsize!r}")
        if not callable(step):
            raise ArgumentTypeError(
                f"planned: argument 'step' must be a callable, got {type(step).__name__} {step!r:.60}"
            )
        self.step = step
        self.maxsize = maxsize
        self.plans: OrderedDict[Any, Plan] = OrderedDict()
        self._last: Plan | None = None
        #: Set when a plan of the step cannot beat the eager step (:attr:`Plan.gains`): it runs eagerly from then on.
        self._eager = False
        self._lock = threading.RLock()

        #: Per instance, the step bound to it (``@dt.planned`` on a method); weak, so instances can go.
        self._bound: weakref.WeakKeyDictionary[Any, Planned] = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, step)
        # Keyword arguments travel as one trailing dict argument (plans take dicts; its keys are part of the
        # signature): this is the step the plans of such calls trace.
        self._keyword_step = functools.wraps(step)(lambda *args: step(*args[:-1], **args[-1]))

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """On an instance, the step bound to it, planned (one :class:`Planned` per instance, made on first use);
        as for functions, ``instance`` is then the step's first argument, fixed at trace time: the plans read
        its attributes once, while tracing."""
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:  # an instance that takes no weak reference: planned per access
            return Planned(functools.partial(self.step, instance), self.maxsize)
        if bound is None:
            bound = self._bound[instance] = Planned(functools.partial(self.step, instance), self.maxsize)
        return bound

    def __call__(self, *args: Any, copy_outputs: bool = False, **kwargs: Any) -> Any:
        """Replay the plan of the arguments' signature (positional and keyword; keyword names in the order
        given), making it first when there is none or it is stale."""
        if copy_outputs is not False:
            copy_outputs = _flag("planned", "copy_outputs", copy_outputs)
        step = self.step
        if self._eager:  # its plan cannot beat the eager step (Plan.gains): eager, the same values
            return step(*args, **kwargs)
        if kwargs:
            args, step = (*args, kwargs), self._keyword_step
        last = self._last
        if last is not None and not modes.ACTIVE[0] and last._generation == dispatcher._generation[0]:
            # The plan used last, tried first: its compiled replay checks the signature (MISS: it differs).
            leaves = args if last._flat else last._leaves_of(args)
            if leaves is not None:
                output = (getattr(last._local, "replay", None) or last._thread_replay())(leaves)
                if output is not MISS:
                    return _map_tensors(output, Tensor.clone) if copy_outputs else output
        structure, _leaves, keys, same = _signature(args)
        key = (structure, keys, same, step is not self.step)
        try:
            made = self.plans.get(key)
        except TypeError:  # an unhashable leaf (an ndarray, ...): the plan refuses it, naming it (PlanError)
            Plan(step, args)
            raise
        if made is None or made._generation != dispatcher._generation[0]:
            with self._lock:  # one thread plans a signature; the others wait and replay its plan
                made = self.plans.get(key)
                if made is None or made._generation != dispatcher._generation[0]:
                    made = self.plans[key] = Plan(step, args)
                    while len(self.plans) > self.maxsize:
                        self.plans.popitem(last=False)
        else:
            with contextlib.suppress(KeyError):  # another thread dropped it meanwhile
                self.plans.move_to_end(key)
        self._last = made
        if not made.gains:
            # (meta tensors never gain, whatever the step: such a call, as Dask's meta run makes, decides nothing)
            self._eager = made.device is None or made.device.type != "meta"
            if self._eager:
                self.__class__ = entry_class(Planned, eager_entry(self.step, self._general))
            return self.step(*args[:-1], **args[-1]) if step is not self.step else step(*args)
        if step is self.step:  # (the plan's entry replays inline: one frame per call of this signature)
            entry = made._owner_class
            if entry is None:
                entry = made._owner_class = made._adopt(self._general, Planned) or Planned
            self.__class__ = entry
        return made(*args, copy_outputs=copy_outputs)

    def _general(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """:meth:`__call__` of the base class: an entry's path when it cannot replay inline."""
        return Planned.__call__(self, *args, **kwargs)


@overload
def planned(step: Callable[..., Any], *, maxsize: int = 8) -> Planned: ...


@overload
def planned(step: None = None, *, maxsize: int = 8) -> Callable[[Callable[..., Any]], Planned]: ...


def planned(
    step: Callable[..., Any] | None = None, *, maxsize: int = 8
) -> Planned | Callable[[Callable[..., Any]], Planned]:
    """Decorator: call ``step`` through a plan made for each argument signature (shapes, dtypes, devices,
    scalar values, nesting), keeping the ``maxsize`` most recently used plans; a plan made stale by a kernel,
    override or fallback registration is made again. ``copy_outputs=`` passes to the plan. Used as
    ``@dt.planned`` or ``@dt.planned(maxsize=4)``.

    On a method (``@dt.planned def forward(self, x)``), each instance gets its own plans, ``self`` fixed at
    trace time. Keyword arguments are part of the signature (names, in the order given, and values).

    Raises:
        ArgumentValueError: ``maxsize`` not a positive int. ArgumentTypeError: ``step`` not callable, or
        ``copy_outputs`` not a bool. PlanError: as :func:`plan`.
    """
    if type(maxsize) is not int or maxsize < 1:
        raise ArgumentValueError(f"planned: expects maxsize a positive int, got {maxsize!r}")
    if step is not None:  # (Planned refuses a step that is not callable: ``dt.planned(3)``)
        return Planned(step, maxsize)
    return lambda fn: Planned(fn, maxsize)
