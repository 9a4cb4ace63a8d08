"""Argument conversions every meta function uses (re-exported by :mod:`devtensor.meta`): an int argument
(:func:`int_arg`), a sequence of ints (:func:`ints_arg`), and dims normalised into a tensor's range
(:func:`normalize_dim`, :func:`normalize_dims`, PyTorch's ``maybe_wrap_dim``), and a Python list used as an index
(:func:`list_index`)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from devtensor.device import as_index
from devtensor.errors import ArgumentTypeError, ArgumentValueError, IndexOutOfRangeError, short_repr

__all__ = ["clamped_offset", "int_arg", "ints_arg", "list_index", "normalize_dim", "normalize_dims"]


def int_arg(op: str, arg: str, value: object) -> int:
    """``value`` as an int: a Python int or anything with ``__index__`` (NumPy integers), never a bool.

    Raises:
        ArgumentTypeError (TypeError): anything else; names the op, the argument and the value.
    """
    if type(value) is int:
        return value
    index = as_index(value)
    if index is None:
        raise ArgumentTypeError(
            f"{op}: argument '{arg}' must be an int, got {type(value).__name__} {short_repr(value)}"
        )
    return index


def clamped_offset(offset: int, rows: int, cols: int) -> int:
    """A diagonal ``offset`` of ``rows`` x ``cols`` matrices brought into ``[-rows, cols]``: the same diagonal
    (or none) and the same triangles, as an int NumPy takes (it refuses one beyond a C long with a raw
    OverflowError, and ``tril``/``triu`` negate it: -2**63 overflows too)."""
    return max(-rows, min(cols, offset))


def ints_arg(op: str, arg: str, value: object, *, allow_int: bool = False) -> tuple[int, ...]:
    """``value`` as a tuple of ints: a list or tuple of ints (a single int too when ``allow_int``); items as
    :func:`int_arg` takes them.

    Raises:
        ArgumentTypeError (TypeError): not a sequence (nor an int where allowed), or an item that is not an int.
    """
    if type(value) is tuple:
        for item in value:
            if type(item) is not int:
                break
        else:
            return value
    if allow_int and not isinstance(value, bool):
        try:
            return (operator.index(value),)  # type: ignore[arg-type]
        except TypeError:
            pass
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        expected = "an int or a sequence of ints" if allow_int else "a sequence of ints"
        raise ArgumentTypeError(
            f"{op}: argument '{arg}' must be {expected}, got {type(value).__name__} {short_repr(value)}"
        )
    result: list[int] = []
    for item in value:
        if isinstance(item, bool):
            raise ArgumentTypeError(f"{op}: argument '{arg}' must contain ints, got {short_repr(value)}")
        try:
            result.append(operator.index(item))
        except TypeError:
            raise ArgumentTypeError(f"{op}: argument '{arg}' must contain ints, got {short_repr(value)}") from None
    return tuple(result)


def normalize_dim(op: str, dim: object, ndim: int, arg: str = "dim", *, new: bool = False) -> int:
    """``dim`` normalised into ``range(ndim)``: negative dims count from the end, and a 0-d tensor takes ``0``
    and ``-1`` (both give 0), as PyTorch's ``maybe_wrap_dim``. ``dim`` is taken as :func:`int_arg` takes it.
    ``new``: ``dim`` places a new dimension (``unsqueeze``, ``stack``), so ``ndim`` is the input's plus one.

    Raises:
        ArgumentTypeError (TypeError): ``dim`` is not an int (bools are not).
        IndexOutOfRangeError (IndexError): ``dim`` out of range; names the op, the argument, the dim and the
            valid range.
    """
    d = dim if type(dim) is int else int_arg(op, arg, dim)
    n = ndim if ndim > 0 else 1
    if not -n <= d < n:
        raise IndexOutOfRangeError(
            f"{op}: dimension out of range: argument '{arg}' is {d}, expected to be in range of [{-n}, {n - 1}] "
            + (f"(a new dimension of {ndim - 1}-d tensors)" if new else f"(a tensor of {ndim} dimension(s))")
        )
    return d + n if d < 0 else d


def normalize_dims(op: str, dims: object, ndim: int, arg: str = "dim", *, allow_int: bool = True) -> tuple[int, ...]:
    """The distinct dims ``dims`` names (a sequence of ints, or one int when ``allow_int``), each normalised by
    :func:`normalize_dim`, in the order given.

    Raises:
        ArgumentTypeError, IndexOutOfRangeError: as :func:`ints_arg` and :func:`normalize_dim`.
        ArgumentValueError (ValueError): a dim named twice (``(1, -1)`` of a 2-d tensor); names it.
    """
    raw = ints_arg(op, arg, dims, allow_int=allow_int)
    result = tuple(normalize_dim(op, d, ndim, arg) for d in raw)
    if len(set(result)) != len(result):
        for i, d in enumerate(result):
            if d in result[:i]:
                raise ArgumentValueError(
                    f"{op}: dim {d} appears multiple times in the list of dims (argument '{arg}' = {raw})"
                )
    return result


def list_index(op: str, part: list[Any]) -> np.ndarray[Any, Any]:
    """A list index as the NumPy index array it stands for (intp for an empty list, as NumPy).

    Raises:
        ArgumentTypeError: a list of other than (nested) ints or bools: floats, slices, tensors, ragged lists.
    """
    if not part:
        return np.zeros(0, np.intp)
    try:
        array = np.asarray(part)
    except (ValueError, TypeError):  # ragged, or items NumPy cannot make an array of
        array = None
    if array is None or array.dtype.kind not in "iub":
        raise ArgumentTypeError(
            f"{op}: a list index must hold ints or bools only (as an integer or bool tensor index), got {part!r}"
        )
    return array
