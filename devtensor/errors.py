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
    "CopyRequiredError",
    "DeviceMismatchError",
    "DeviceUnavailableError",
    "DLPackExportError",
    "IndexOutOfRangeError",
    "DevtensorError",
    "LinAlgError",
    "MemoryOverlapError",
    "NoDataError",
    "PlanError",
    "NoKernelError",
    "OutOfMemoryError",
    "ReadOnlyError",
    "ScalarOverflowError",
    "ShapeError",
    "UnknownOpError",
    "ViewError",
    "as_called",
    "short_repr",
]


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters (a tensor's or a list's repr can be long)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_called(
    error: BaseException, ops: tuple[str, ...] | None, caller: str, names: tuple[tuple[str, str], ...] = ()
) -> BaseException:
    """``error``, raised by one of the ops ``ops`` (any op when None) that a function or alias ``caller`` runs,
    as the user's call should name it: for a devtensor error whose message starts ``"<op>: "`` or ``"<op>_: "``,
    a new error of the same type whose message starts ``"<caller>: "``, with each ``argument 'name'`` of
    ``names`` (pairs ``(the op's name, the name the user passed)``) renamed; any other error unchanged. Only the
    error path pays (callers catch, then re-raise the result ``from None``)."""
    if not isinstance(error, DevtensorError) or isinstance(error, OutOfMemoryError):
        return error  # (OutOfMemoryError's constructor takes its parts, not a message)
    text = str(error)
    if ops is None:
        head, sep, rest = text.partition(": ")
        if not sep or not head.replace("_", "a").replace(".", "a").isalnum():
            return error
    else:
        for op in ops:
            if text.startswith(f"{op}: ") or text.startswith(f"{op}_: "):
                rest = text.partition(": ")[2]
                break
        else:
            return error
    for name, given in names:
        rest = rest.replace(f"argument '{name}'", f"argument '{given}'")
    return type(error)(f"{caller}: {rest}")


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


class CopyRequiredError(DevtensorError, BufferError, ValueError):
    """``copy=False`` was asked for, but the call needs a copy (``from_dlpack`` to another device). A
    ``BufferError``, as the array API standard requires of ``from_dlpack``, and a ``ValueError``, as NumPy's
    ``asarray(copy=False)`` raises."""


class DLPackExportError(DevtensorError, BufferError):
    """Data that cannot go through DLPack: a producer that cannot export it (a meta tensor, NumPy's strings,
    objects, datetimes, structured or long-double arrays). A ``BufferError``, as DLPack producers raise."""


class DeviceMismatchError(DevtensorError, ValueError):
    """A tensor on the wrong device: a failed refinement, or tensors of one call on different devices."""


class ShapeError(DevtensorError, ValueError):
    """Shapes that cannot broadcast, or an output/inplace shape that does not match the result's."""


class UnknownOpError(DevtensorError, KeyError):
    """No op of the name given to a registry entry point (``library.get_op``, ``override``, ``register_kernel``,
    ``remove_op``, ...): a ``KeyError``, as a lookup by name raises; the message names the entry point and the
    name, and suggests the nearest op names."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""  # (KeyError's own str() quotes the message)


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


class LinAlgError(DevtensorError, RuntimeError):
    """A linear-algebra input the computation is not defined for: a singular matrix (``inv``, ``solve``), one
    that is not positive-definite (``cholesky``), an algorithm that did not converge (``svd``, ``eigh``). A
    RuntimeError, as PyTorch's ``torch.linalg.LinAlgError``; the message names the op."""


class NoDataError(DevtensorError, RuntimeError):
    """Reading data from a meta tensor, which has a shape and a dtype but no data."""


class PlanError(DevtensorError, RuntimeError):
    """A static plan (``devtensor.plan``) that cannot be built or replayed: the step reads data or has a
    data-dependent shape while tracing, a replay's arguments do not match the plan's signature, or a kernel was
    registered or removed after planning. The message names the op or the argument."""


class OutOfMemoryError(DevtensorError, MemoryError):
    """An allocation the device could not serve (NumPy's or CuPy's out-of-memory error): a ``MemoryError``, as
    NumPy raises (PyTorch's ``torch.OutOfMemoryError`` is a ``RuntimeError``; devtensor keeps Python's class).

    The message names the op, the shape, the dtype, the bytes asked for and the device; the same facts are
    attributes (``op``, ``shape``, ``dtype``, ``nbytes``, ``device``) for code that retries smaller.
    """

    def __init__(
        self,
        op: str,
        shape: tuple[int, ...] | None,
        dtype: object,
        nbytes: int | None,
        device: object,
        detail: str = "",
    ) -> None:
        self.op = op
        self.shape = shape  # None: not known (data NumPy ran out of memory reading)
        self.dtype = dtype
        self.nbytes = nbytes  # None: not known
        self.device = device
        self.detail = detail
        size = "" if nbytes is None else f" {nbytes} bytes" + (f" ({_human(nbytes)})" if nbytes >= 1024 else "")
        what = "" if shape is None else f" for shape {shape} and dtype {dtype}"
        text = f"{op}: out of memory allocating{size}{what} on {device}"
        super().__init__(text + (f" ({detail})" if detail else ""))

    def __reduce__(self) -> tuple[object, ...]:
        # Exceptions pickle through ``args``; this one's constructor takes the facts instead.
        return (type(self), (self.op, self.shape, self.dtype, self.nbytes, self.device, self.detail))


def _human(nbytes: int) -> str:
    """``nbytes`` (at least 1024) in binary units, as NumPy's out-of-memory message writes them (``7.28 TiB``)."""
    value = nbytes / 1024
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            return f"{value:.3g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


class DeviceUnavailableError(DevtensorError, RuntimeError):
    """Tensors belong on a device type this process cannot use (CUDA without CuPy or without a GPU, or a device
    type that is not registered), e.g. when loading an archive (``devtensor.load``). A ``RuntimeError``, as
    PyTorch raises when ``torch.load`` meets CUDA tensors without CUDA; the message suggests ``device="cpu"``."""
