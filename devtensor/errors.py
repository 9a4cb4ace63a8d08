"""The one error hierarchy of devtensor.

Every error devtensor raises on bad input is an instance of :class:`DevtensorError` *and* of the standard
exception a Python user would catch for that mistake (``TypeError``, ``ValueError``, ``RuntimeError``), so
``except ValueError`` works as it does for NumPy, and ``except DevtensorError`` catches everything of ours.
Messages name the op, the argument and the offending value.
"""

from __future__ import annotations

__all__ = [
    "ArgumentTypeError",
    "ArgumentValueError",
    "CastingError",
    "DeviceMismatchError",
    "IndexOutOfRangeError",
    "DevtensorError",
    "MemoryOverlapError",
    "NoDataError",
    "NoKernelError",
    "ReadOnlyError",
    "ScalarOverflowError",
    "ShapeError",
    "ViewError",
]


class DevtensorError(Exception):
    """Base class of every error devtensor raises for bad input or an unsupported call."""


class ArgumentValueError(DevtensorError, ValueError):
    """An argument of the right type with a bad value (an unknown ``rounding_mode``, a duplicate ``dim``, an
    empty tensor list, a negative size, …)."""


class IndexOutOfRangeError(DevtensorError, IndexError):
    """A dim, an index or a class index out of range (an ``IndexError``, as NumPy and PyTorch raise)."""


class ArgumentTypeError(DevtensorError, TypeError):
    """An argument of the wrong Python type (e.g. a list where an op takes a Tensor or a Python number)."""


class CastingError(DevtensorError, TypeError):
    """A result dtype that cannot be cast to the output's dtype under the same_kind rule.

    ``TypeError`` as NumPy's ``UFuncTypeError``; the message follows PyTorch's
    "result type X can't be cast to the desired output type Y".
    """


class DeviceMismatchError(DevtensorError, ValueError):
    """A tensor on the wrong device: a failed refinement, or tensors of one call on different devices."""


class ShapeError(DevtensorError, ValueError):
    """Shapes that cannot broadcast, or an output/inplace shape that does not match the result's."""


class ViewError(ShapeError, RuntimeError):
    """A view that the tensor's strides cannot express (``view`` of a non-contiguous tensor): a ShapeError,
    and a ``RuntimeError`` as PyTorch raises for it. ``reshape`` copies instead."""


class MemoryOverlapError(DevtensorError, ValueError):
    """An output that partially overlaps an input, or whose own elements overlap (a stride-0 dimension)."""


class ReadOnlyError(DevtensorError, ValueError):
    """A write into a tensor wrapping read-only memory (NumPy raises ``ValueError`` for the same)."""


class ScalarOverflowError(DevtensorError, OverflowError):
    """A Python integer scalar that does not fit the integer dtype it is used with (as NumPy 2 raises)."""


class NoKernelError(DevtensorError, NotImplementedError):
    """No kernel, override or fallback for an op at a dispatch key (PyTorch raises NotImplementedError)."""


class NoDataError(DevtensorError, RuntimeError):
    """Reading data from a meta tensor, which has a shape and a dtype but no data."""
