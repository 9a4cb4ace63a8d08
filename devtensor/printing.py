"""How tensors print: ``repr``/``str`` of every device, and devtensor's print options.

``set_printoptions``, ``get_printoptions`` and the context manager ``printoptions`` are devtensor's own options
(PyTorch's names and semantics for the five options both libraries share with NumPy). An option never set here
follows NumPy's value at print time (``numpy.get_printoptions()``), so ``np.set_printoptions`` and
``np.printoptions`` keep working for tensors as they do for arrays; one set here applies to tensors only. The
options are context-local (a ``contextvars.ContextVar``, as NumPy 2 keeps its own): a ``printoptions`` block in one
thread or task does not change how another prints.

A tensor prints as PyTorch's do: ``tensor([[1., 2.]], dtype=float32)``, the device when it is not the CPU, and
for an empty tensor its size (``tensor([], size=(0, 3), dtype=float32)``: the brackets alone do not show it);
values as NumPy's ``array2string`` formats them.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, TypedDict

import numpy as np

from devtensor.errors import ArgumentTypeError, ArgumentValueError

if TYPE_CHECKING:
    from devtensor.tensor import Tensor

__all__ = ["PrintOptions", "format_tensor", "get_printoptions", "printoptions", "set_printoptions"]


class PrintOptions(TypedDict):
    """The print options in effect (``get_printoptions()``)."""

    precision: int
    threshold: int
    edgeitems: int
    linewidth: int
    suppress: bool


_NAMES: Final = ("precision", "threshold", "edgeitems", "linewidth", "suppress")
#: The options set through devtensor (name -> value); an absent name follows NumPy's current value.
_OPTIONS: ContextVar[dict[str, Any]] = ContextVar("devtensor_printoptions", default={})  # noqa: B039 (never mutated)


def _checked(name: str, value: object) -> int | bool:
    """``value`` for option ``name``, checked (NumPy's ranges: linewidth >= 1, the other ints >= 0)."""
    if name == "suppress":
        if type(value) is not bool and not isinstance(value, np.bool_):
            raise ArgumentTypeError(
                f"set_printoptions: argument 'suppress' must be a bool, got {type(value).__name__} {value!r}"
            )
        return bool(value)
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"set_printoptions: argument '{name}' must be an int, got bool {value!r}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ArgumentTypeError(
            f"set_printoptions: argument '{name}' must be an int, got {type(value).__name__} {value!r}"
        ) from None
    low = 1 if name == "linewidth" else 0
    if number < low:
        raise ArgumentValueError(f"set_printoptions: argument '{name}' must be >= {low}, got {number}")
    return number


def set_printoptions(
    precision: int | None = None,
    threshold: int | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    suppress: bool | None = None,
) -> None:
    """Set how tensors print (``torch.set_printoptions``; the meaning of each option is NumPy's).

    ``precision``: digits after the decimal point of floats; ``threshold``: the number of elements above which a
    tensor prints summarized (``...``); ``edgeitems``: the elements kept at each edge of a summarized dim;
    ``linewidth``: characters per line; ``suppress``: print tiny floats as 0 instead of in scientific notation.
    An option passed as None is left as it is; one never set follows NumPy's current value. Use
    :func:`printoptions` to set options for a block only.

    Raises:
        ArgumentTypeError (TypeError): an option of the wrong type (an int option given a float or a bool;
            ``suppress`` not a bool); names the option.
        ArgumentValueError (ValueError): a negative int option, or ``linewidth`` below 1; names the option.
    """
    given = dict(zip(_NAMES, (precision, threshold, edgeitems, linewidth, suppress), strict=True))
    changes = {name: _checked(name, value) for name, value in given.items() if value is not None}
    if changes:
        _OPTIONS.set({**_OPTIONS.get(), **changes})


def get_printoptions() -> PrintOptions:
    """The print options in effect for tensors now: those set through devtensor, NumPy's current value for the
    others (see :func:`set_printoptions` for their meaning)."""
    own = _OPTIONS.get()
    numpy_options = np.get_printoptions()
    return PrintOptions(
        precision=own.get("precision", numpy_options["precision"]),
        threshold=own.get("threshold", numpy_options["threshold"]),
        edgeitems=own.get("edgeitems", numpy_options["edgeitems"]),
        linewidth=own.get("linewidth", numpy_options["linewidth"]),
        suppress=own.get("suppress", numpy_options["suppress"]),
    )


@contextmanager
def printoptions(**options: Any) -> Iterator[PrintOptions]:
    """A context manager: :func:`set_printoptions` with ``options`` for the ``with`` block, then the options as
    they were before it (options never set follow NumPy again). Yields the options in effect inside the block.

    Raises:
        ArgumentTypeError (TypeError): an unknown option name; as :func:`set_printoptions` for bad values. Nothing
            is changed when it raises.
    """
    unknown = sorted(set(options) - set(_NAMES))
    if unknown:
        raise ArgumentTypeError(f"printoptions: unknown option {unknown[0]!r} (options: {', '.join(_NAMES)})")
    token = _OPTIONS.set(_OPTIONS.get())
    try:
        set_printoptions(**options)
        yield get_printoptions()
    finally:
        _OPTIONS.reset(token)


def format_tensor(tensor: Tensor, array: np.ndarray[Any, Any]) -> str:
    """The repr of ``tensor``, whose values are ``array`` (on the host), with the print options in effect."""
    own = _OPTIONS.get()
    data = np.array2string(
        array,
        separator=", ",
        prefix="tensor(",
        precision=own.get("precision"),
        threshold=own.get("threshold"),
        edgeitems=own.get("edgeitems"),
        max_line_width=own.get("linewidth"),
        suppress_small=own.get("suppress"),
    )
    device = "" if tensor.device.type == "cpu" else f", device='{tensor.device}'"
    size = f", size={tensor.shape}" if array.size == 0 and tensor.shape != (0,) else ""
    return f"tensor({data}{device}{size}, dtype={tensor.dtype})"
