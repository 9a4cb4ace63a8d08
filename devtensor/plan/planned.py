"""``dt.planned``: a step called through static plans, one per argument signature (see :mod:`devtensor.plan.core`)."""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, overload

from devtensor import dispatcher, modes
from devtensor.errors import ArgumentValueError
from devtensor.plan.core import Plan, _map_tensors, _signature
from devtensor.plan.values import MISS
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
        self.step = step
        self.maxsize = maxsize
        self.plans: OrderedDict[Any, Plan] = OrderedDict()
        self._last: Plan | None = None
        functools.update_wrapper(self, step)

    def __call__(self, *args: Any, copy_outputs: bool = False) -> Any:
        """Replay the plan of ``args``'s signature, making it first when there is none or it is stale."""
        last = self._last
        if last is not None and last._flat and not modes.ACTIVE[0] and last._generation == dispatcher._generation[0]:
            # The plan used last, tried first: its compiled replay checks the signature (MISS: it differs).
            output = last._replay(args)
            if output is not MISS:
                return _map_tensors(output, Tensor.clone) if copy_outputs else output
        structure, _leaves, keys, same = _signature(args)
        key = (structure, keys, same)
        made = self.plans.get(key)
        if made is None or made._generation != dispatcher._generation[0]:
            made = self.plans[key] = Plan(self.step, args)
            while len(self.plans) > self.maxsize:
                self.plans.popitem(last=False)
        else:
            self.plans.move_to_end(key)
        self._last = made
        return made(*args, copy_outputs=copy_outputs)


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

    Raises:
        ArgumentValueError: ``maxsize`` not a positive int. PlanError: as :func:`plan`.
    """
    if type(maxsize) is not int or maxsize < 1:
        raise ArgumentValueError(f"planned: expects maxsize a positive int, got {maxsize!r}")
    if step is not None:
        return Planned(step, maxsize)
    return lambda fn: Planned(fn, maxsize)
