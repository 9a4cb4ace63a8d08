"""Dispatch modes that come ready: :class:`CountingMode` counts op calls, :class:`LoggingMode` records and logs
them (:class:`CallRecord`).

The machinery they build on (:class:`DispatchMode`, :func:`active_modes`) is :mod:`devtensor.modes`, which the
fronts import; it stays a module of its own, below this package, so that the fronts need nothing
from the library. Modes are PyTorch's ``TorchDispatchMode`` idea.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from devtensor.modes import DispatchMode, active_modes
from devtensor.structured import StructuredOp
from devtensor.tensor import Tensor

__all__ = ["CallRecord", "CountingMode", "DispatchMode", "LoggingMode", "active_modes", "variant_name"]


def variant_name(op: Any, variant: str, kwargs: Mapping[str, Any]) -> str:
    """The name of one call's variant: ``add`` (functional), ``add.out`` (with ``out=``), ``add_`` (inplace)."""
    if variant == "inplace":
        return f"{op.name}_"
    if kwargs.get("out") is not None:
        return f"{op.name}.out"
    return str(op.name)


class CountingMode(DispatchMode):
    """A dispatch mode that counts op calls: ``counts["add"]`` (functional), ``counts["add.out"]`` (out
    variant), ``counts["add_"]`` (inplace). Counts the calls of the thread that entered it; ops run unchanged.

    Example: ``with library.CountingMode() as m: model(x)`` then ``m.counts.most_common()``.
    """

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def __dispatch__(
        self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Count the call, then run it."""
        self.counts[variant_name(op, variant, kwargs)] += 1
        return func(*args, **kwargs)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One op call seen by a :class:`LoggingMode`: the op, the variant's name (``add``, ``add.out``, ``add_``),
    the arguments as passed, and a short text of them (tensors as ``Tensor(shape, dtype, device)``)."""

    op: StructuredOp
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    text: str


def _describe(value: Any) -> str:
    """A short text of one argument: tensors by shape, dtype and device, long reprs cut at 40 characters."""
    if isinstance(value, Tensor):
        return f"Tensor({list(value.shape)}, {value.dtype}, {value.device})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(item) for item in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class LoggingMode(DispatchMode):
    """A dispatch mode that records every op call (``calls``: :class:`CallRecord`) and logs it at DEBUG level
    to the ``devtensor.library`` logger (or calls ``sink(text)`` when given, e.g. ``print``).

    Records the calls of the thread that entered it, including ops that other ops call. Ops run unchanged.
    """

    def __init__(self, sink: Callable[[str], object] | None = None) -> None:
        self.calls: list[CallRecord] = []
        self.sink = sink

    def __dispatch__(
        self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Record the call, then run it."""
        name = variant_name(op, variant, kwargs)
        parts = [_describe(arg) for arg in args]
        parts += [f"{keyword}={_describe(value)}" for keyword, value in kwargs.items() if value is not None]
        text = f"{name}({', '.join(parts)})"
        self.calls.append(CallRecord(op, name, args, dict(kwargs), text))
        if self.sink is not None:
            self.sink(text)
        else:
            import logging  # (here: the logging package costs the import of devtensor ~4 ms)

            logging.getLogger("devtensor.library").debug("%s", text)
        return func(*args, **kwargs)

    @property
    def names(self) -> list[str]:
        """The variant names of the recorded calls, in order."""
        return [call.name for call in self.calls]
