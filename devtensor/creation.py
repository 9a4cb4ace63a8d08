"""Creation functions: ``tensor``, ``asarray``, ``from_numpy``, ``from_dlpack``, ``empty``, ``zeros``, ``ones``,
``full``, ``arange``, ``linspace`` and the ``*_like`` family.

Names and arguments follow PyTorch (``dtype=``, ``device=``, ``end``, ``steps``); default dtypes follow NumPy,
which devtensor's promotion follows too: Python floats give float64, ints int64, and ``empty``/``zeros``/
``ones`` default to float64. ``device`` accepts anything :class:`~devtensor.device.Device` parses and defaults
to the CPU. Every function returns a tensor with a new storage (version 0), except ``asarray`` and
``from_numpy``/``from_dlpack``, which wrap existing memory without a copy where they can.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from devtensor.backends import Backend, backend_for, shape_tuple
from devtensor.device import Device, DeviceLike, as_device
from devtensor.dtypes import SCALAR_TYPES, DType, Scalar, to_dtype
from devtensor.errors import ArgumentTypeError
from devtensor.tensor import Tensor

__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "from_dlpack",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "ones",
    "ones_like",
    "tensor",
    "zeros",
    "zeros_like",
]

_DEFAULT_FLOAT = np.dtype(np.float64)


def _dtype_or_none(op: str, dtype: Any) -> DType | None:
    return None if dtype is None else to_dtype(dtype, op=op)


def _check_data_dtype(op: str, array: np.ndarray[Any, Any]) -> None:
    to_dtype(array.dtype, op=op, arg="data")


def _host_array(op: str, data: object, dtype: DType | None) -> np.ndarray[Any, Any]:
    try:
        array = np.asarray(data, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise ArgumentTypeError(f"{op}: cannot convert argument 'data' of type {type(data).__name__}: {e}") from None
    _check_data_dtype(op, array)
    return array


def _on(device: Device, array: np.ndarray[Any, Any], copy: bool | None) -> Tensor:
    backend = backend_for(device)
    return backend.wrap(backend.from_numpy(array, device, copy), device)


def tensor(data: object, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences of Python numbers, a NumPy array, a Tensor).

    Args:
        data: the values; its shape is the tensor's shape.
        dtype: the element dtype (default: inferred as NumPy does; a Tensor keeps its dtype).
        device: where to put it (default: the CPU; for a Tensor, its device).
    Returns:
        A Tensor with its own storage, version 0.
    Raises:
        ArgumentTypeError (TypeError): data NumPy cannot convert, or an unsupported (e.g. string) dtype.
        ValueError: a malformed device.
    """
    dt = _dtype_or_none("tensor", dtype)
    if isinstance(data, Tensor):
        target = as_device(device, data.device)
        src = data._backend
        dst = backend_for(target)
        return dst.wrap(dst.from_other(src, data._array, target, dt or data.dtype), target)
    target = as_device(device)
    return _on(target, _host_array("tensor", data, dt), copy=True)


def asarray(
    obj: object,
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
    copy: bool | None = None,
) -> Tensor:
    """``obj`` as a tensor, sharing memory when it can (the Array API's ``asarray``).

    A Tensor already matching ``dtype``/``device`` is returned as is (unless ``copy=True``); a NumPy array on
    the CPU and a CuPy array on its own device are wrapped without a copy when the dtype matches; anything
    else is converted as :func:`tensor` does.

    Raises:
        ValueError: ``copy=False`` but a copy is needed.
        ArgumentTypeError: unconvertible data or an unsupported dtype.
    """
    dt = _dtype_or_none("asarray", dtype)
    if isinstance(obj, Tensor):
        target = as_device(device, obj.device)
        if target is obj.device and (dt is None or dt == obj.dtype) and not copy:
            return obj
        if copy is False:
            raise ValueError("asarray: copy=False, but a device or dtype change needs a copy")
        return obj.to(target, dt or obj.dtype, copy=True)
    if isinstance(obj, np.ndarray):
        target = as_device(device)
        needs_copy = target.type != "cpu" or (dt is not None and dt != obj.dtype)
        if needs_copy and copy is False:
            raise ValueError("asarray: copy=False, but a device or dtype change needs a copy")
        if not needs_copy:
            _check_data_dtype("asarray", obj)
            backend = backend_for(target)
            return backend.wrap(obj.copy() if copy else obj, target)
        return _on(target, _host_array("asarray", obj, dt), copy=True)
    cuda_type = _cupy_ndarray_type()
    if cuda_type is not None and isinstance(obj, cuda_type):
        here = Device("cuda", int(obj.device.id))  # type: ignore[attr-defined]
        target = as_device(device, here)
        if target is here and (dt is None or dt == obj.dtype) and not copy:  # type: ignore[attr-defined]
            to_dtype(obj.dtype, op="asarray", arg="obj")  # type: ignore[attr-defined]
            return backend_for(here).wrap(obj, here)
        if copy is False:
            raise ValueError("asarray: copy=False, but a device or dtype change needs a copy")
        src = backend_for(here)
        dst = backend_for(target)
        return dst.wrap(dst.from_other(src, obj, target, dt or obj.dtype), target)  # type: ignore[attr-defined]
    if copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} must be copied into a tensor")
    target = as_device(device)
    return _on(target, _host_array("asarray", obj, dt), copy=True)


def _cupy_ndarray_type() -> type | None:
    import sys

    mod = sys.modules.get("cupy")
    return getattr(mod, "ndarray", None) if mod is not None else None


def from_numpy(array: np.ndarray[Any, Any]) -> Tensor:
    """A CPU tensor sharing memory with ``array`` (zero-copy, as ``torch.from_numpy``).

    Read-only arrays are accepted; writing into the tensor then raises ReadOnlyError and changes nothing.

    Raises:
        ArgumentTypeError: ``array`` is not a NumPy array, or its dtype is unsupported or not native-endian.
    """
    if not isinstance(array, np.ndarray):
        raise ArgumentTypeError(f"from_numpy: argument 'array' must be a numpy.ndarray, got {type(array).__name__}")
    _check_data_dtype("from_numpy", array)
    cpu = as_device("cpu")
    return backend_for(cpu).wrap(array, cpu)


def from_dlpack(obj: Any) -> Tensor:
    """A tensor sharing memory with ``obj``, any object with ``__dlpack__`` and ``__dlpack_device__``
    (NumPy and CuPy arrays, PyTorch tensors, devtensor tensors). CPU data gives a CPU tensor, CUDA data a
    tensor on that CUDA device.

    Raises:
        ArgumentTypeError: ``obj`` does not support DLPack, or has an unsupported dtype.
        BufferError: the producer cannot export (e.g. a meta tensor).
        ValueError: a DLPack device type other than CPU (1) or CUDA (2).
    """
    if not hasattr(obj, "__dlpack__") or not hasattr(obj, "__dlpack_device__"):
        raise ArgumentTypeError(f"from_dlpack: argument 'obj' does not support DLPack: {type(obj).__name__}")
    dev_type, dev_id = obj.__dlpack_device__()
    if int(dev_type) == 1:
        array = np.from_dlpack(obj)
        _check_data_dtype("from_dlpack", array)
        cpu = as_device("cpu")
        return backend_for(cpu).wrap(array, cpu)
    if int(dev_type) == 2:
        from devtensor.backends import cupy_module

        target = Device("cuda", int(dev_id))
        with cupy_module().cuda.Device(int(dev_id)):
            array = cupy_module().from_dlpack(obj)
        to_dtype(array.dtype, op="from_dlpack", arg="obj")
        return backend_for(target).wrap(array, target)
    raise ValueError(f"from_dlpack: unsupported DLPack device type {dev_type} (supported: 1 = CPU, 2 = CUDA)")


def _size(op: str, size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], Sequence) and not isinstance(size[0], str):
        return shape_tuple(op, "size", size[0])
    return shape_tuple(op, "size", size)


def _filled(op: str, shape: tuple[int, ...], dtype: DType, device: Device, fill: Scalar | None) -> Tensor:
    backend: Backend = backend_for(device)
    array = backend.empty(shape, dtype, device)
    if fill is not None and backend.has_data:
        guard = backend.guard(device)
        if guard is None:
            array.fill(fill)
        else:
            with guard:
                array.fill(fill)
    return backend.wrap(array, device)


def empty(*size: Any, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """An uninitialised tensor of shape ``size`` (ints, or one sequence of ints); dtype default float64.

    Raises:
        ArgumentTypeError: a non-int size or unsupported dtype.  ValueError: a negative size or bad device.
    """
    shape = _size("empty", size)
    return _filled(
        "empty",
        shape,
        _dtype_or_none("empty", dtype) or _DEFAULT_FLOAT,
        as_device(device),
        None,
    )


def zeros(*size: Any, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """A tensor of shape ``size`` filled with 0 (dtype default float64). Raises as :func:`empty`."""
    shape = _size("zeros", size)
    return _filled(
        "zeros",
        shape,
        _dtype_or_none("zeros", dtype) or _DEFAULT_FLOAT,
        as_device(device),
        0,
    )


def ones(*size: Any, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """A tensor of shape ``size`` filled with 1 (dtype default float64). Raises as :func:`empty`."""
    shape = _size("ones", size)
    return _filled(
        "ones",
        shape,
        _dtype_or_none("ones", dtype) or _DEFAULT_FLOAT,
        as_device(device),
        1,
    )


def _fill_dtype(op: str, fill_value: object) -> DType:
    if type(fill_value) not in SCALAR_TYPES:
        raise ArgumentTypeError(f"{op}: argument 'fill_value' must be a Python number, got {type(fill_value).__name__}")
    return np.asarray(fill_value).dtype


def full(
    size: Sequence[int],
    fill_value: Scalar,
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``; dtype default as NumPy infers it from the value
    (bool, int64, float64, complex128).

    Raises:
        ArgumentTypeError: ``fill_value`` is not a Python number; bad size or dtype.
        ScalarOverflowError: NumPy's OverflowError when the value does not fit the dtype.
    """
    shape = shape_tuple("full", "size", size)
    dt = _dtype_or_none("full", dtype) or _fill_dtype("full", fill_value)
    _check_fill("full", fill_value, dt)
    return _filled("full", shape, dt, as_device(device), fill_value)


def _check_fill(op: str, value: object, dtype: DType) -> None:
    if type(value) not in SCALAR_TYPES:
        raise ArgumentTypeError(f"{op}: argument 'fill_value' must be a Python number, got {type(value).__name__}")
    if type(value) is int and dtype.kind in "iu":
        from devtensor.meta import _check_int_scalar

        _check_int_scalar(op, "fill_value", value, dtype)


def _like(op: str, t: object, dtype: Any, device: DeviceLike | None) -> tuple[tuple[int, ...], DType, Device]:
    if not isinstance(t, Tensor):
        raise ArgumentTypeError(f"{op}: argument 'input' must be a Tensor, got {type(t).__name__}")
    return t.shape, _dtype_or_none(op, dtype) or t.dtype, as_device(device, t.device)


def empty_like(input: Tensor, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """An uninitialised tensor with ``input``'s shape (and its dtype and device unless given)."""
    shape, dt, dev = _like("empty_like", input, dtype, device)
    return _filled("empty_like", shape, dt, dev, None)


def zeros_like(input: Tensor, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """Zeros with ``input``'s shape (and its dtype and device unless given)."""
    shape, dt, dev = _like("zeros_like", input, dtype, device)
    return _filled("zeros_like", shape, dt, dev, 0)


def ones_like(input: Tensor, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """Ones with ``input``'s shape (and its dtype and device unless given)."""
    shape, dt, dev = _like("ones_like", input, dtype, device)
    return _filled("ones_like", shape, dt, dev, 1)


def full_like(
    input: Tensor,
    fill_value: Scalar,
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """``fill_value`` with ``input``'s shape (and its dtype and device unless given). Raises as :func:`full`."""
    shape, dt, dev = _like("full_like", input, dtype, device)
    _check_fill("full_like", fill_value, dt)
    return _filled("full_like", shape, dt, dev, fill_value)


def _number(op: str, arg: str, value: object) -> Scalar:
    if type(value) not in (bool, int, float) and not isinstance(value, (int, float)):
        raise ArgumentTypeError(f"{op}: argument '{arg}' must be a real Python number, got {type(value).__name__}")
    return value  # type: ignore[return-value]


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """Values from ``start`` (inclusive) to ``end`` (exclusive) spaced by ``step``; ``arange(n)`` is 0..n-1.

    Length ``ceil((end - start) / step)`` (at least 0); dtype default as NumPy's ``arange`` (int64 for ints,
    float64 if any argument is a float).

    Raises:
        ArgumentTypeError: a non-number argument.  ValueError: ``step`` is 0.
    """
    if end is None:
        start, end = 0, start
    for arg, v in (("start", start), ("end", end), ("step", step)):
        _number("arange", arg, v)
    if step == 0:
        raise ValueError("arange: argument 'step' must be nonzero")
    dt = _dtype_or_none("arange", dtype) or np.arange(start, start, step).dtype
    dev = as_device(device)
    backend = backend_for(dev)
    if not backend.has_data:
        length = max(0, math.ceil((end - start) / step))
        return backend.wrap(backend.empty((length,), dt, dev), dev)
    return (
        _on(dev, np.arange(start, end, step, dtype=dt), copy=True)
        if dev.type != "cpu"
        else backend.wrap(np.arange(start, end, step, dtype=dt), dev)
    )


def linspace(
    start: float,
    end: float,
    steps: int,
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included (``torch.linspace``,
    ``np.linspace``); dtype default float64.

    Raises:
        ArgumentTypeError: non-number bounds or a non-int ``steps``.  ValueError: negative ``steps``.
    """
    _number("linspace", "start", start)
    _number("linspace", "end", end)
    if isinstance(steps, bool):
        raise ArgumentTypeError("linspace: argument 'steps' must be an int, got bool")
    try:
        n = operator.index(steps)
    except TypeError:
        raise ArgumentTypeError(f"linspace: argument 'steps' must be an int, got {type(steps).__name__}") from None
    if n < 0:
        raise ValueError(f"linspace: argument 'steps' must be non-negative, got {n}")
    dt = _dtype_or_none("linspace", dtype) or _DEFAULT_FLOAT
    dev = as_device(device)
    backend = backend_for(dev)
    if not backend.has_data:
        return backend.wrap(backend.empty((n,), dt, dev), dev)
    return _on(dev, np.linspace(start, end, n, dtype=dt), copy=dev.type != "cpu")


def _rebuild(array: np.ndarray[Any, Any], device: str) -> Tensor:
    """Unpickling: a tensor on ``device`` holding ``array``'s values."""
    return tensor(array, device=device)
