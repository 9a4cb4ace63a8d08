"""Ranges: ``arange`` and ``linspace`` (PyTorch's names and arguments, NumPy's values and default dtypes).

Both return a tensor with a new storage (version 0) on ``device`` (default: the CPU). No value wraps around into an
integer or bool dtype (NumPy wraps silently; PyTorch refuses bool ``arange``): such a call raises
ScalarOverflowError naming the dtype's range.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from devtensor.backends import allocation_error, backend_for, check_allocation_size
from devtensor.creation import constant, on_device, optional_dtype
from devtensor.device import DeviceLike, as_device
from devtensor.dtypes import DType
from devtensor.errors import ArgumentTypeError, ArgumentValueError, DeviceMismatchError, ScalarOverflowError
from devtensor.structured import rules
from devtensor.tensor import Tensor

__all__ = ["arange", "linspace"]

_DEFAULT_FLOAT = np.dtype(np.float64)
_INT64 = np.dtype(np.int64)


def _number(op: str, arg: str, value: object) -> int | float:
    """``value`` as a Python int or float: Python and NumPy real numbers, 0-d real arrays (as NumPy's arange
    takes them) and 0-d real tensors (as PyTorch's Scalar arguments take them); bool counts as int.

    Raises:
        ArgumentTypeError: anything else (a complex number or tensor, a string, ...).
        ArgumentValueError: a tensor or array that is not 0-d.
        NoDataError: a 0-d meta tensor (its value is unknown).
    """
    if isinstance(value, (Tensor, np.ndarray)) and value.dtype.kind in "biuf":
        if value.ndim != 0:
            raise ArgumentValueError(
                f"{op}: argument '{arg}' must be a number or a 0-d tensor, got a {type(value).__name__} of shape "
                f"{tuple(value.shape)}"
            )
        value = value.item() if isinstance(value, Tensor) else value[()]
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    raise ArgumentTypeError(f"{op}: argument '{arg}' must be a real number, got {type(value).__name__} {value!r}")


def arange(
    start: float | Tensor,
    end: float | Tensor | None = None,
    step: float | Tensor = 1,
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """Values from ``start`` (inclusive) to ``end`` (exclusive) spaced by ``step``; ``arange(n)`` is 0..n-1.

    Length ``ceil((end - start) / step)`` (at least 0); dtype default as NumPy's ``arange`` (int64 when all of
    ``start``, ``end``, ``step`` are ints, float64 if any is a float). Python and NumPy real numbers, 0-d real
    arrays and 0-d real tensors (their value, as PyTorch's Scalar arguments) are accepted.
    Values are NumPy's; into an integer or bool dtype PyTorch's: ``start``, ``end`` and ``step`` truncated to
    ints first (NumPy extends the difference of its first two values instead).

    No value wraps around: into an integer or bool dtype every value must lie in the dtype's range (bool: 0
    and 1), else ScalarOverflowError (NumPy wraps silently; PyTorch refuses bool ``arange``).

    ``out=``: the values are written into ``out`` and ``out`` is returned, with the out rules of every op
    (:func:`devtensor.structured.rules.prepare_out`): the dtype defaults to ``out``'s, a given ``dtype`` must
    cast to it (same_kind), a wrong-shaped ``out`` is resized, ``device`` defaults to ``out``'s device and must
    be it if given (DeviceMismatchError), and a refused call leaves ``out`` as it was.

    Raises:
        ArgumentTypeError: a non-number argument; ``out`` not a Tensor.
        ValueError: ``step`` is 0 or of the wrong sign (``end - start`` and ``step`` of opposite signs: PyTorch's
            rule; NumPy returns an empty array); a bound is NaN or infinite; more elements than an array can
            address.
        ScalarOverflowError (OverflowError): a value outside an integer or bool dtype's range.
        OutOfMemoryError (MemoryError): the memory is not available.
    """
    if end is None:
        start, end = 0, start
    start = _number("arange", "start", start)
    end = _number("arange", "end", end)
    step = _number("arange", "step", step)
    if step == 0:
        raise ArgumentValueError("arange: argument 'step' must be nonzero")
    if (end - start) * step < 0:
        # PyTorch refuses a step pointing away from end (NumPy and the Array API return an empty array:
        # devtensor.array_api.arange does).
        raise ArgumentValueError(
            f"arange: argument 'step' ({step}) points away from 'end' ({end}) as seen from 'start' ({start})"
        )
    all_int = type(start) is int and type(end) is int and type(step) is int
    if not all_int:
        for value in (start, end, step):
            if type(value) is float and not math.isfinite(value):
                raise ArgumentValueError(f"arange: arguments must be finite, got start={start}, end={end}, step={step}")
    dt = optional_dtype("arange", dtype) or (
        out_dtype("arange", out) if out is not None else (_INT64 if all_int else _DEFAULT_FLOAT)
    )
    if not all_int and dt.kind in "iub":
        # PyTorch's rule for an integer dtype: start, end and step truncated into it first, then an integer range
        # (NumPy instead extends the difference of its first two values).
        start, end, step = math.trunc(start), math.trunc(end), math.trunc(step)
        if step == 0:
            raise ArgumentValueError(
                f"arange: argument 'step' truncated into dtype {dt.name} is 0 (PyTorch's rule for integer dtypes)"
            )
        all_int = True
    dev = as_device(device, op="arange") if out is None else out_device("arange", out, device)
    if all_int:
        length = max(0, int(-((start - end) // step)))  # exact ceil for ints of any size
    else:
        span = (end - start) / step
        if not math.isfinite(span):  # (1e308 - -1e308) overflows to inf
            raise ArgumentValueError(
                f"arange: the range from {start} to {end} by {step} has more elements than an array can address"
            )
        length = max(0, math.ceil(span))
    if length > _ALWAYS_ADDRESSABLE:
        check_allocation_size("arange", (length,), dt)
    bounds = _INT_RANGES.get(dt)
    if bounds is not None and length > 0:
        # NumPy writes start and start + step into the dtype (truncating floats) and extends that difference.
        if type(start) is int and type(step) is int:
            first, delta = start, step
        else:
            first = math.trunc(start)
            delta = math.trunc(start + step) - first
        last = first + (length - 1) * delta
        low, high = (first, last) if delta >= 0 else (last, first)
        if low < bounds[0] or high > bounds[1]:
            _check_int_range("arange", dt, low, high, "values")
    backend = backend_for(dev)
    if out is not None:
        return _into_out("arange", out, (length,), dt, lambda: _arange_values(start, end, step, dt, dev, length))
    if not backend.has_data:
        return backend.wrap(backend.empty((length,), dt, dev), dev)
    values = _arange_values(start, end, step, dt, dev, length)
    return constant(
        "arange", on_device("arange", dev, values, copy=True) if dev.type != "cpu" else backend.wrap(values, dev)
    )


def _arange_values(start: int | float, end: int | float, step: int | float, dt: DType, dev: Any, length: int) -> Any:
    """arange's values as a NumPy array of dtype ``dt`` (checked: no value wraps around)."""
    try:
        if dt.kind == "b":
            # The values are 0 and 1 (checked above); NumPy's arange refuses bool beyond length 2.
            values = np.arange(start, end, step, dtype=np.int64).astype(dt)
        else:
            values = np.arange(start, end, step, dtype=dt)
    except MemoryError as error:
        raise allocation_error("arange", (length,), dt, dev, error) from None
    return values


def out_dtype(op: str, out: object) -> DType:
    """``out``'s dtype (the creation functions' default dtype when given ``out=``, as PyTorch's)."""
    if not isinstance(out, Tensor):
        raise ArgumentTypeError(f"{op}: argument 'out' must be a Tensor, got {type(out).__name__}")
    return out.dtype


def out_device(op: str, out: Tensor, device: DeviceLike | None) -> Any:
    """``out``'s device; a ``device`` given must be it (DeviceMismatchError)."""
    if device is not None:
        dev = as_device(device, op=op)
        if dev != out._device:
            raise DeviceMismatchError(
                f"{op}: argument 'device' ({dev}) and argument 'out' (on {out._device}) must be on one device"
            )
    return out._device


def _into_out(op: str, out: Tensor, shape: tuple[int, ...], dt: DType, values: Any) -> Tensor:
    """Write the values (``values()``: a NumPy array of ``shape`` and dtype ``dt``) into ``out`` with the out
    rules (:func:`devtensor.structured.rules.prepare_out`: same_kind cast into out's dtype, resize); every check
    runs before the write, so a refused call changes nothing."""
    target = rules.prepare_out(op, out, (shape, dt), (), False)
    backend = out._backend
    if backend.has_data:
        host = values()
        guard = backend.guard(out._device)
        if guard is None:
            target[...] = host
        else:
            with guard:
                target[...] = backend.xp.asarray(host)
        if target is not out._array:
            rules.finish_out(op, out, target)
    elif target is not out._array:
        rules.finish_out(op, out, target)
    out._storage.version += 1
    return out


# A 1-d length up to this fits the address space with any supported dtype (16 bytes at most per element).
_ALWAYS_ADDRESSABLE = np.iinfo(np.intp).max // 16


# The value range of each bool and integer dtype (numpy.iinfo is slow enough to show in arange's time).
_INT_RANGES: dict[DType, tuple[int, int]] = {np.dtype(np.bool_): (0, 1)} | {
    np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
}


def _int_linspace(start: float, end: float, n: int, dt: DType) -> Any:
    """linspace into the integer dtype ``dt`` as PyTorch computes it (``n`` > 1): both bounds truncated into the
    dtype, then float64 values stepped from ``start`` for the first ``n // 2`` and from ``end`` for the rest (so
    both ends are exact), truncated."""
    start, end = math.trunc(start), math.trunc(end)  # (PyTorch converts both bounds into the dtype first)
    step = (end - start) / (n - 1)
    i = np.arange(n, dtype=np.float64)
    half = n // 2
    values = np.empty(n, np.float64)
    values[:half] = start + step * i[:half]
    values[half:] = end - step * (n - 1 - i[half:])
    return np.trunc(values).astype(dt)


def _check_int_range(op: str, dtype: DType, low: int | float, high: int | float, what: str) -> None:
    """ScalarOverflowError naming the dtype's range when ``low``..``high`` leaves an integer or bool dtype."""
    bounds = _INT_RANGES.get(dtype)
    if bounds is None:
        return
    lo, hi = bounds
    if low < lo or high > hi:
        raise ScalarOverflowError(
            f"{op}: {what} from {low} to {high} do not fit dtype {dtype.name} (range {lo} to {hi}); "
            "devtensor does not wrap around"
        )


def linspace(
    start: float | Tensor,
    end: float | Tensor,
    steps: int,
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included (``torch.linspace``,
    ``np.linspace``); dtype default float64. Values are NumPy's, except into an integer dtype: there PyTorch's
    (the bounds truncated into the dtype, then computed in float64 from both ends, ``start + i * step`` for the
    first half and ``end - (steps - 1 - i) * step`` for the rest, then truncated toward zero; NumPy 2 rounds
    down). None wraps around: into an integer or
    bool dtype both bounds must be finite and, truncated, lie in the dtype's range (bool: 0 and 1). The bounds
    may be 0-d real tensors (their values, as PyTorch's overload taking tensors). ``out=``: as :func:`arange`'s
    (dtype and device default to ``out``'s, the out rules apply).

    Raises:
        ArgumentTypeError: non-number bounds or a non-int ``steps``; ``out`` not a Tensor.
        ValueError: negative ``steps``, more elements than an array can address, or a NaN bound with an integer
            or bool dtype.
        ScalarOverflowError (OverflowError): an infinite bound, or one outside the range, of an integer or bool
            dtype.
        OutOfMemoryError (MemoryError): the memory is not available.
    """
    start = _number("linspace", "start", start)
    end = _number("linspace", "end", end)
    if isinstance(steps, bool):
        raise ArgumentTypeError("linspace: argument 'steps' must be an int, got bool")
    try:
        n = operator.index(steps)
    except TypeError:
        raise ArgumentTypeError(f"linspace: argument 'steps' must be an int, got {type(steps).__name__}") from None
    if n < 0:
        raise ArgumentValueError(f"linspace: argument 'steps' must be non-negative, got {n}")
    dt = optional_dtype("linspace", dtype) or (out_dtype("linspace", out) if out is not None else _DEFAULT_FLOAT)
    dev = as_device(device, op="linspace") if out is None else out_device("linspace", out, device)
    if n > _ALWAYS_ADDRESSABLE:
        check_allocation_size("linspace", (n,), dt)
    if dt.kind in "iub" and n > 0:
        bounds = (start, end) if n > 1 else (start,)
        for name, bound in zip(("start", "end"), bounds, strict=False):
            if bound != bound:
                raise ArgumentValueError(f"linspace: argument '{name}' is NaN; dtype {dt.name} cannot represent it")
            if math.isinf(bound):
                raise ScalarOverflowError(f"linspace: argument '{name}' is infinite; dtype {dt.name} cannot hold it")
        whole = [math.trunc(b) for b in bounds]
        _check_int_range("linspace", dt, min(whole), max(whole), "values")
    backend = backend_for(dev)

    def values() -> Any:
        try:
            if dt.kind in "iu" and n > 1:
                return _int_linspace(start, end, n, dt)
            return np.linspace(start, end, n, dtype=dt)
        except MemoryError as error:
            raise allocation_error("linspace", (n,), dt, dev, error) from None

    if out is not None:
        return _into_out("linspace", out, (n,), dt, values)
    if not backend.has_data:
        return backend.wrap(backend.empty((n,), dt, dev), dev)
    return constant("linspace", on_device("linspace", dev, values(), copy=dev.type != "cpu"))
