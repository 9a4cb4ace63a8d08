"""The Array API standard's creation functions, with the standard's signatures, over devtensor's creation
functions (plain functions: no dispatch, as the main namespace's)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import devtensor as _dt
from devtensor.array_api._naming import name_errors
from devtensor.device import DeviceLike
from devtensor.dtypes import check_choice, to_dtype
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.tensor import Tensor

__all__ = [
    "arange",
    "asarray",
    "diag",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "logspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
]


def _shape(op: str, shape: int | Sequence[int]) -> tuple[int, ...]:
    try:
        return (operator.index(shape),) if not isinstance(shape, Sequence) else tuple(operator.index(d) for d in shape)
    except TypeError:
        raise ArgumentTypeError(f"{op}: argument 'shape' must be an int or a sequence of ints, got {shape!r}") from None


def arange(
    start: int | float | Tensor, /, stop: int | float | Tensor | None = None, step: int | float | Tensor = 1, *,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:  # fmt: skip
    """Values from ``start`` to ``stop`` (exclusive) by ``step`` (``arange(n)``: 0..n-1): devtensor's
    :func:`~devtensor.arange`, whose dtype default (int64 for ints, float64 otherwise) is the standard's. The
    bounds may be 0-d arrays. A ``step`` pointing away from ``stop`` gives an empty array (the standard's rule;
    devtensor.arange raises there, as PyTorch does)."""
    if stop is None:
        start, stop = 0, start
    try:
        away = (_value(stop) - _value(start)) * _value(step) < 0
    except TypeError:
        away = False  # (devtensor.arange names the argument that is not a number)
    if away:
        if dtype is None:  # devtensor.arange's default: int64 when every argument is an int
            ints = all(isinstance(_value(v), (int, np.integer, np.bool_)) for v in (start, stop, step))
            dtype = _dt.int64 if ints else _dt.float64
        return _dt.arange(0, 0, dtype=dtype, device=device)
    return _dt.arange(start, stop, step, dtype=dtype, device=device)


def _value(x: Any) -> Any:
    """A 0-d array's value (a number as it is): for the comparisons of :func:`arange`."""
    return x.item() if isinstance(x, (Tensor, np.ndarray)) and x.ndim == 0 else x


def asarray(obj: Any, /, *, dtype: Any = None, device: DeviceLike | None = None, copy: bool | None = None) -> Tensor:
    """``obj`` (a tensor, a NumPy array, a DLPack exporter, nested sequences, a Python scalar) as a tensor:
    devtensor's :func:`~devtensor.asarray` (``copy=None`` shares memory when it can, ``False`` never copies)."""
    return _dt.asarray(obj, dtype=dtype, device=device, copy=copy)


def empty(shape: int | Sequence[int], *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """An uninitialised tensor of ``shape`` (default dtype float64)."""
    return _dt.empty(_shape("empty", shape), dtype=dtype, device=device)


def empty_like(x: Tensor, /, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """An uninitialised tensor of ``x``'s shape (and dtype and device unless given)."""
    return _dt.empty_like(x, dtype=dtype, device=device)


def zeros(shape: int | Sequence[int], *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """Zeros of ``shape`` (default dtype float64)."""
    return _dt.zeros(_shape("zeros", shape), dtype=dtype, device=device)


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """Zeros of ``x``'s shape (and dtype and device unless given)."""
    return _dt.zeros_like(x, dtype=dtype, device=device)


def ones(shape: int | Sequence[int], *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """Ones of ``shape`` (default dtype float64)."""
    return _dt.ones(_shape("ones", shape), dtype=dtype, device=device)


def ones_like(x: Tensor, /, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """Ones of ``x``'s shape (and dtype and device unless given)."""
    return _dt.ones_like(x, dtype=dtype, device=device)


def full(
    shape: int | Sequence[int], fill_value: bool | int | float | complex | Tensor | np.ndarray[Any, Any], *,
    dtype: Any = None, device: DeviceLike | None = None,
) -> Tensor:  # fmt: skip
    """``fill_value`` in a tensor of ``shape``; the dtype default follows a number's kind (bool, int64,
    float64, complex128), as the standard's defaults, and a 0-d array's (tensor's) own dtype, as NumPy's."""
    return _dt.full(_shape("full", shape), fill_value, dtype=dtype, device=device)


def full_like(
    x: Tensor, /, fill_value: bool | int | float | complex | Tensor | np.ndarray[Any, Any], *, dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:  # fmt: skip
    """``fill_value`` (a number, or a 0-d array or tensor) in a tensor of ``x``'s shape (and dtype and device
    unless given)."""
    return _dt.full_like(x, fill_value, dtype=dtype, device=device)


def linspace(
    start: int | float | complex | Tensor, stop: int | float | complex | Tensor, /, num: int, *, dtype: Any = None,
    device: DeviceLike | None = None, endpoint: bool = True,
) -> Tensor:  # fmt: skip
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when ``endpoint``): devtensor's
    :func:`~devtensor.linspace` (real bounds; complex bounds are computed with NumPy on the host). The bounds
    may be 0-d arrays."""
    start, stop = _value(start), _value(stop)
    if isinstance(start, complex) or isinstance(stop, complex):
        values = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype or np.complex128)
        return _dt.asarray(values, device=device)
    if endpoint:
        return _dt.linspace(start, stop, num, dtype=dtype, device=device)
    n = operator.index(num)
    if n < 0:
        raise ArgumentValueError(f"linspace: argument 'num' must be non-negative, got {n}")
    return _dt.linspace(start, stop, n + 1, dtype=dtype, device=device)[:n]


def logspace(
    start: int | float | Tensor, stop: int | float | Tensor, /, num: int = 50, *, endpoint: bool = True,
    base: float = 10.0, dtype: Any = None, device: DeviceLike | None = None,
) -> Tensor:  # fmt: skip
    """``base ** linspace(start, stop, num, endpoint=endpoint)``: ``num`` values evenly spaced on a log scale
    (NumPy's and PyTorch's ``logspace``; not a function of the standard, but SciPy's array-API code calls it).
    Computed in float64 (the bounds may be 0-d arrays), then cast to ``dtype`` when given (NumPy's rule).

    Raises:
        As :func:`linspace` (a negative ``num``, a bad dtype or device); ArgumentTypeError: ``base`` is not a real
            number.
    """
    if type(base) not in (int, float):
        raise ArgumentTypeError(f"logspace: argument 'base' must be a real number, got {base!r}")
    result = _dt.pow(float(base), linspace(start, stop, num, dtype=_dt.float64, device=device, endpoint=endpoint))
    return result if dtype is None else result.to(dtype=to_dtype(dtype, op="logspace"))


def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: DeviceLike | None = None
) -> Tensor:
    """A 2-d tensor with ones on the ``k``-th diagonal and zeros elsewhere (default dtype float64):
    :func:`devtensor.eye`; another diagonal is a slice of a taller (``k`` > 0) or wider (``k`` < 0) identity
    (ones at ``(i, i + k)``), made contiguous."""
    rows = operator.index(n_rows)
    cols = rows if n_cols is None else operator.index(n_cols)
    k = operator.index(k)
    if k == 0:
        return _dt.eye(rows, cols, dtype=dtype, device=device)
    # Rows k.. of eye(rows + k, cols) have their one at (i, i + k); past the last column none is left, so the
    # shift is capped there (the same for k < 0 with columns).
    if k > 0:
        shift = min(k, cols)
        return _dt.eye(rows + shift, cols, dtype=dtype, device=device)[shift:].contiguous()
    shift = min(-k, rows)
    return _dt.eye(rows, cols + shift, dtype=dtype, device=device)[:, shift:].contiguous()


def from_dlpack(x: Any, /, *, device: DeviceLike | None = None, copy: bool | None = None) -> Tensor:
    """A tensor over the memory of the DLPack exporter ``x``: devtensor's :func:`~devtensor.from_dlpack`."""
    return _dt.from_dlpack(x, device=device, copy=copy)


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids from 1-d tensors (``indexing`` "xy": Cartesian, "ij": matrix), as NumPy's
    ``meshgrid``: expanded views (broadcast), one per input.

    Raises:
        ArgumentValueError: an ``indexing`` other than "xy" or "ij"; inputs not 1-d.
    """
    check_choice("meshgrid", "indexing", indexing, ("xy", "ij"))
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ArgumentValueError(f"meshgrid: argument 'arrays[{i}]' must be 1-d, got shape {a.shape}")
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and len(arrays) >= 2 and i < 2:
            pos = 1 - i
        view = [1] * len(arrays)
        view[pos] = a.shape[0]
        out.append(_dt.broadcast_to(_dt.reshape(a, tuple(view)), tuple(shape)))
    return out


def tril(x: Tensor, /, *, k: int = 0) -> Tensor:
    """The lower triangle (on and below the ``k``-th diagonal) of the last two dims of ``x``; zeros above."""
    return _dt.tril(x, k)


def triu(x: Tensor, /, *, k: int = 0) -> Tensor:
    """The upper triangle (on and above the ``k``-th diagonal) of the last two dims of ``x``; zeros below."""
    return _dt.triu(x, k)


def diag(v: Tensor, /, k: int = 0) -> Tensor:
    """Not in the standard (NumPy's, CuPy's and PyTorch's namespaces have it, and SciPy's ``RBFInterpolator``
    calls ``xp.diag``): the matrix with the 1-d ``v`` on its ``k``-th diagonal, or the ``k``-th diagonal of the
    2-d ``v`` (:func:`devtensor.diag`, whose errors it raises)."""
    return _dt.diag(v, k)


# Errors name the standard's function and its arguments (eye of a non-int, linspace's endpoint, ...).
name_errors(
    globals(),
    [
        "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace", "meshgrid",
        "ones", "ones_like", "tril", "triu", "zeros", "zeros_like", "diag",
    ],
)  # fmt: skip
