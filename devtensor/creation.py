"""Creation functions: ``tensor``, ``asarray``, ``from_numpy``, ``from_dlpack``, ``empty``, ``zeros``, ``ones``,
``full`` and the ``*_like`` family (ranges, ``arange`` and ``linspace``, are in :mod:`devtensor.ranges`).

Names and arguments follow PyTorch (``dtype=``, ``device=``, ``end``, ``steps``); default dtypes follow NumPy,
which devtensor's promotion follows too: Python floats give float64, ints int64, and ``empty``/``zeros``/
``ones`` default to float64. ``device`` accepts anything :class:`~devtensor.device.Device` parses and defaults
to the CPU. Every function returns a tensor with a new storage (version 0), except ``asarray`` and
``from_numpy``/``from_dlpack``, which wrap existing memory without a copy where they can (through a view: a
tensor always holds its own array object).

Errors: every bad argument is a devtensor error (``devtensor.errors``) of the standard class; an allocation that
fails is an ``OutOfMemoryError`` (a ``MemoryError``) naming the op, the shape, the dtype and the bytes; no value
wraps around into an integer or bool dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from devtensor import modes as _modes
from devtensor.backends import Backend, allocation_error, backend_for, check_allocation_size, shape_tuple
from devtensor.device import Device, DeviceLike, as_device, as_index
from devtensor.dtypes import DType, Scalar, as_bool, to_dtype
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DeviceUnavailableError,
    OutOfMemoryError,
    ScalarOverflowError,
    short_repr,
)
from devtensor.fill_values import array_fill_value, check_fill, fill_dtype
from devtensor.meta import int_text
from devtensor.modes import constant as constant  # (creation functions end in it; ranges imports it here)
from devtensor.tensor import Tensor

__all__ = [
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "tensor",
    "zeros",
    "zeros_like",
]

_DEFAULT_FLOAT = np.dtype(np.float64)
_INT64 = np.dtype(np.int64)


def optional_dtype(op: str, dtype: Any) -> DType | None:
    """``dtype`` (any ``dtype=`` argument) as a NumPy dtype, or None for None.

    Raises:
        ArgumentTypeError: not a dtype devtensor supports; names ``op``.
    """
    return None if dtype is None else to_dtype(dtype, op=op)


def check_data_dtype(op: str, array: np.ndarray[Any, Any], arg: str = "data", value: object = None) -> None:
    """ArgumentTypeError naming ``op`` and ``arg`` unless ``array``'s dtype is one devtensor supports; for text
    (strings or bytes) one that names the value (``value``, the data as passed, else ``array``) rather than listing
    the dtypes it is not."""
    if array.dtype.kind in "SU":
        raise ArgumentTypeError(
            f"{op}: Unsupported value {short_repr(array if value is None else value)} for argument '{arg}': strings "
            f"(dtype {array.dtype}) are not numbers; pass numbers, sequences of numbers or arrays of a supported dtype"
        )
    to_dtype(array.dtype, op=op, arg=arg)


def _host_array(op: str, data: object, dtype: DType | None) -> np.ndarray[Any, Any]:
    try:
        array = np.asarray(data, dtype=dtype)
    except OverflowError as e:
        raise ScalarOverflowError(f"{op}: a value of argument 'data' does not fit dtype {dtype}: {e}") from None
    except (TypeError, ValueError) as e:
        if dtype is not None and _holds_nan(data):
            # NaN into an integer dtype is a bad value, not a bad type: ValueError, as NumPy and dt.full raise.
            raise ArgumentValueError(
                f"{op}: argument 'data' holds NaN, which dtype {dtype.name} cannot represent"
            ) from None
        raise ArgumentTypeError(f"{op}: cannot convert argument 'data' of type {type(data).__name__}: {e}") from None
    except MemoryError as e:  # the shape is not known before NumPy has read the data
        raise OutOfMemoryError(op, None, dtype.name if dtype is not None else None, None, "cpu", str(e)) from None
    if array.dtype.kind == "O":
        huge = next((v for v in array.flat if isinstance(v, int) and not -(2**63) <= v < 2**64), None)
        if huge is not None:  # the mistake dt.full makes a ScalarOverflowError: the same class here
            raise ScalarOverflowError(
                f"{op}: a value of argument 'data', Python integer {int_text(huge)}, does not fit any supported "
                f"integer dtype (int64 or uint64)"
            )
        raise ArgumentTypeError(
            f"{op}: argument 'data' of type {type(data).__name__} does not convert to a numeric dtype (NumPy made an "
            "object array: a non-number, or a Python int beyond the int64/uint64 range?)"
        )
    check_data_dtype(op, array, value=data)
    return array


def _holds_nan(data: object) -> bool:
    """Whether ``data`` (which failed to convert to a requested dtype) holds a NaN; only on the error path."""
    try:
        probe = np.asarray(data)
    except Exception:
        return False
    return probe.dtype.kind in "fc" and bool(np.isnan(probe).any())


def on_device(op: str, device: Device, array: np.ndarray[Any, Any], copy: bool | None) -> Tensor:
    """A tensor on ``device`` holding ``array`` (a NumPy array; moved, or copied when ``copy``).

    Raises:
        OutOfMemoryError (MemoryError): the device has no memory for it; names ``op``.
    """
    backend = backend_for(device)
    try:
        moved = backend.from_numpy(array, device, copy)
    except MemoryError as error:
        raise allocation_error(op, array.shape, array.dtype, device, error) from None
    return backend.wrap(moved, device)


def _from_other(op: str, dst: Backend, src: Backend, array: Any, device: Device, dtype: DType) -> Tensor:
    """A copy of ``array`` (from backend ``src``) on ``device`` with ``dtype``; out of memory names ``op``."""
    try:
        moved = dst.from_other(src, array, device, dtype)
    except MemoryError as error:
        raise allocation_error(op, array.shape, dtype, device, error) from None
    return dst.wrap(moved, device)


def tensor(data: object, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences of Python numbers, a NumPy array, a Tensor).

    Args:
        data: the values; its shape is the tensor's shape.
        dtype: the element dtype (default: inferred as NumPy does; a Tensor keeps its dtype).
        device: where to put it (default: the CPU; for a Tensor, its device).
    Returns:
        A Tensor with its own storage, version 0.
    Python numbers are converted checked, as NumPy 2 converts them: NaN into an integer dtype is a ValueError,
    an infinity or an int out of the dtype's range an OverflowError. Arrays and tensors are cast as
    ``Tensor.to`` casts (NumPy's ``astype``: unchecked, as PyTorch's ``.to``).

    Raises:
        ArgumentTypeError (TypeError): data NumPy cannot convert, an unsupported (e.g. string) dtype, or a device
            of the wrong type.
        ArgumentValueError (ValueError): a malformed device, or a NaN among Python numbers into an integer dtype.
        ScalarOverflowError (OverflowError): a Python number out of the dtype's range.
        OutOfMemoryError (MemoryError): the memory for the copy is not available.
    """
    dt = optional_dtype("tensor", dtype)
    if isinstance(data, Tensor):
        target = as_device(device, data.device, op="tensor")
        return _from_other("tensor", backend_for(target), data._backend, data._array, target, dt or data.dtype)
    target = as_device(device, op="tensor")
    return constant("tensor", on_device("tensor", target, _host_array("tensor", data, dt), copy=True))


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

    The tensor never holds ``obj`` itself but a view of it (see :func:`from_numpy`).

    Raises:
        ValueError: ``copy=False`` but a copy is needed; NaN into an integer dtype (as :func:`tensor`).
        ArgumentTypeError: unconvertible data or an unsupported dtype; ``copy`` not None or a bool (a NumPy
            bool is taken as one).
        OutOfMemoryError (MemoryError): the memory for a copy is not available.
    """
    copy = as_bool("asarray", "copy", copy, optional=True)
    dt = optional_dtype("asarray", dtype)
    if isinstance(obj, Tensor):
        target = as_device(device, obj.device, op="asarray")
        if target is obj.device and (dt is None or dt == obj.dtype) and not copy:
            return obj
        if copy is False:
            raise ArgumentValueError("asarray: copy=False, but a device or dtype change needs a copy")
        return obj.to(target, dt or obj.dtype, copy=True)
    # CuPy arrays first: a CuPy stand-in may subclass numpy.ndarray.
    cuda_type = cupy_ndarray_type()
    if cuda_type is not None and isinstance(obj, cuda_type):
        here = Device("cuda", int(obj.device.id))  # type: ignore[attr-defined]
        target = as_device(device, here, op="asarray")
        if target is here and (dt is None or dt == obj.dtype) and not copy:  # type: ignore[attr-defined]
            to_dtype(obj.dtype, op="asarray", arg="obj")  # type: ignore[attr-defined]
            # A view: the tensor holds its own array object, so reassigning the caller's array's shape or dtype
            # changes nothing of the tensor (the memory stays shared).
            return backend_for(here).wrap(obj.view(), here, owned=False)  # type: ignore[attr-defined]
        if copy is False:
            raise ArgumentValueError("asarray: copy=False, but a device or dtype change needs a copy")
        return _from_other("asarray", backend_for(target), backend_for(here), obj, target, dt or obj.dtype)  # type: ignore[attr-defined]
    if isinstance(obj, np.ndarray):
        target = as_device(device, op="asarray")
        needs_copy = target.type != "cpu" or (dt is not None and dt != obj.dtype)
        if needs_copy and copy is False:
            raise ArgumentValueError("asarray: copy=False, but a device or dtype change needs a copy")
        if not needs_copy:
            check_data_dtype("asarray", obj, "obj")
            backend = backend_for(target)
            # A plain view (no subclass semantics), never the caller's object itself: see from_numpy.
            plain = obj.view(np.ndarray)
            if copy:
                try:
                    plain = plain.copy()
                except MemoryError as error:
                    raise allocation_error("asarray", plain.shape, plain.dtype, target, error) from None
            return backend.wrap(plain, target, owned=bool(copy))
        return on_device("asarray", target, _host_array("asarray", obj, dt), copy=True)
    if copy is False:
        raise ArgumentValueError(f"asarray: copy=False, but a {type(obj).__name__} must be copied into a tensor")
    target = as_device(device, op="asarray")
    return constant("asarray", on_device("asarray", target, _host_array("asarray", obj, dt), copy=True))


def cupy_ndarray_type() -> type | None:
    """CuPy's ndarray class when CuPy (or the test stand-in) is imported already, else None (never imports it)."""
    import sys

    mod = sys.modules.get("cupy")
    return getattr(mod, "ndarray", None) if mod is not None else None


def from_numpy(array: np.ndarray[Any, Any]) -> Tensor:
    """A CPU tensor sharing memory with ``array`` (zero-copy, as ``torch.from_numpy``).

    The tensor holds a view of ``array``, not ``array`` itself: writes through either are seen by the other,
    but assigning ``array.shape`` or ``array.dtype`` afterwards changes nothing of the tensor (as PyTorch's
    tensor keeps its own sizes). Read-only arrays are accepted; writing into the tensor then raises
    ReadOnlyError and changes nothing.

    Raises:
        ArgumentTypeError: ``array`` is not a NumPy array, or its dtype is unsupported or not native-endian.
    """
    cuda_type = cupy_ndarray_type()
    if cuda_type is not None and isinstance(array, cuda_type):
        raise ArgumentTypeError(
            "from_numpy: argument 'array' must be a numpy.ndarray, got a cupy.ndarray (CUDA memory); "
            "use devtensor.asarray or devtensor.from_dlpack for CuPy arrays"
        )
    if not isinstance(array, np.ndarray):
        raise ArgumentTypeError(f"from_numpy: argument 'array' must be a numpy.ndarray, got {type(array).__name__}")
    check_data_dtype("from_numpy", array, "array")
    cpu = as_device("cpu")
    # A plain view: the tensor's own array object (see above), and no subclass semantics (np.matrix, a masked
    # array… keep their own indexing and reductions).
    return backend_for(cpu).wrap(array.view(np.ndarray), cpu, owned=False)


def size_arg(op: str, size: tuple[Any, ...]) -> tuple[int, ...]:
    """The shape given as ``*size`` (ints, or one sequence of ints) to a factory ``op`` (``empty``, ``rand``, …).

    Raises:
        ArgumentTypeError (TypeError): a non-int size.  ArgumentValueError (ValueError): a negative one.
    """
    # One sequence (list, tuple, 1-d array) is the whole shape; an int by __index__ (a NumPy integer, a 0-d
    # integer array) is one dimension, as NumPy takes it.
    if (
        len(size) == 1
        and isinstance(size[0], (Sequence, np.ndarray))
        and not isinstance(size[0], str)
        and as_index(size[0]) is None
    ):
        return shape_tuple(op, "size", size[0])
    return shape_tuple(op, "size", size)


def filled(op: str, shape: tuple[int, ...], dtype: DType, device: Device, fill: Scalar | None) -> Tensor:
    """A new tensor of ``shape``, ``dtype`` on ``device``, filled with ``fill`` (uninitialised for None).

    Raises:
        ValueError: more bytes than an array can address.  OutOfMemoryError (MemoryError): names ``op``.
    """
    if _modes.ACTIVE[0]:  # a static plan's tracer records creation calls (devtensor.plan)
        made = _modes.run_indexing("create", None, (op, shape, dtype, device, fill))
        if made is not _modes.NOT_HANDLED:
            return made  # type: ignore[no-any-return]
    backend: Backend = backend_for(device)
    if not backend.has_data:  # nothing is allocated, so no allocator checks the size: check it here
        check_allocation_size(op, shape, dtype)
    try:
        array = backend.empty(shape, dtype, device)
    except (MemoryError, ValueError) as error:  # out of memory; NumPy's "array is too big"
        check_allocation_size(op, shape, dtype)  # the same message on every device for a size too big
        raise allocation_error(op, shape, dtype, device, error) from None
    if fill is not None and backend.has_data:
        guard = backend.guard(device)
        if guard is None:
            array.fill(fill)
        else:
            with guard:
                array.fill(fill)
    return backend.wrap(array, device)


def empty(*size: Any, dtype: Any = None, device: DeviceLike | None = None, out: Tensor | None = None) -> Tensor:
    """An uninitialised tensor of shape ``size`` (ints, or one sequence of ints); dtype default float64. An
    int is anything with ``__index__`` but a bool (NumPy integers, 0-d integer arrays), as NumPy takes sizes.

    ``out=``: ``out`` is returned, resized to ``size`` where it differs (its values are then unspecified), with
    the out rules of :func:`into_out` (dtype and device default to ``out``'s), as PyTorch's factories take out=.

    Raises:
        ArgumentTypeError: a non-int size, an unsupported dtype, a device of the wrong type; ``out`` not a Tensor.
        ValueError: a negative size, a malformed device, or more bytes than an array can address (on every
            device, meta included).
        OutOfMemoryError (MemoryError): the memory is not available; names the op, shape, dtype and bytes.
    """
    shape = size_arg("empty", size)
    if out is not None:
        return into_out("empty", out, shape, dtype, device, None)
    return filled("empty", shape, optional_dtype("empty", dtype) or _DEFAULT_FLOAT, as_device(device, op="empty"), None)


def zeros(*size: Any, dtype: Any = None, device: DeviceLike | None = None, out: Tensor | None = None) -> Tensor:
    """A tensor of shape ``size`` filled with 0 (dtype default float64). ``out=`` as :func:`empty`'s, filled.
    Raises as :func:`empty`."""
    shape = size_arg("zeros", size)
    if out is not None:
        return into_out("zeros", out, shape, dtype, device, _fill_with(0))
    return filled("zeros", shape, optional_dtype("zeros", dtype) or _DEFAULT_FLOAT, as_device(device, op="zeros"), 0)


def ones(*size: Any, dtype: Any = None, device: DeviceLike | None = None, out: Tensor | None = None) -> Tensor:
    """A tensor of shape ``size`` filled with 1 (dtype default float64). ``out=`` as :func:`empty`'s, filled.
    Raises as :func:`empty`."""
    shape = size_arg("ones", size)
    if out is not None:
        return into_out("ones", out, shape, dtype, device, _fill_with(1))
    return filled("ones", shape, optional_dtype("ones", dtype) or _DEFAULT_FLOAT, as_device(device, op="ones"), 1)


def _fill_with(value: Scalar) -> Callable[[Any], None]:
    """A writer for :func:`into_out` filling the array with ``value``."""

    def write(array: Any) -> None:
        array.fill(value)

    return write


def into_out(op: str, out: object, shape: tuple[int, ...], dtype: Any, device: DeviceLike | None, write: Any) -> Tensor:
    """A factory's ``out=`` (PyTorch's factories take one): ``out`` of ``shape`` holding what ``write(array)``
    writes (None: nothing, for ``empty``), returned. The dtype defaults to ``out``'s and a given one must cast to
    it (same_kind); ``device`` defaults to ``out``'s and must be it if given; a wrong-shaped ``out`` is resized
    (:func:`devtensor.structured.rules.prepare_out`, the rules of every op's out=). Every check runs before the
    write, so a refused call changes nothing; the version counter is bumped once.

    Raises:
        ArgumentTypeError: ``out`` not a Tensor.  DeviceMismatchError: ``device`` is not ``out``'s device.
        CastingError: ``dtype`` does not cast to ``out``'s (same_kind).  ShapeError: ``out`` cannot be resized.
    """
    from devtensor.ranges import out_device, out_dtype  # (ranges imports this module)
    from devtensor.structured import rules

    dt = optional_dtype(op, dtype) or out_dtype(op, out)
    assert isinstance(out, Tensor)
    dev = out_device(op, out, device)
    target = rules.prepare_out(op, out, (shape, dt), (), False)
    backend = out._backend
    if write is not None and backend.has_data:
        guard = backend.guard(dev)
        if guard is None:
            write(target)
        else:
            with guard:
                write(target)
    if target is not out._array:
        rules.finish_out(op, out, target)
    out._storage.version += 1
    return out


def full(
    size: Sequence[int] | int,
    fill_value: Scalar | Tensor | np.ndarray[Any, Any],
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """A tensor of shape ``size`` (a sequence of ints, or one int as NumPy's ``full`` takes) filled with
    ``fill_value``; dtype default as NumPy infers it from the value (bool, int64, float64, complex128), or
    ``out``'s with ``out=`` (as :func:`empty`'s, filled; the value must fit ``out``'s dtype).

    A Python number (or NumPy scalar) must be representable in the dtype (PyTorch's checked conversion): floats
    are truncated into integer dtypes, but NaN, infinities, out-of-range ints and complex values into real dtypes
    are errors; into bool the value must lie in 0..1 (as ``arange`` and ``linspace``
    check). A 0-d tensor or 0-d NumPy array (on any device) gives its own dtype by default and is cast as
    ``Tensor.to`` casts, as NumPy's ``full`` does (reading a CUDA tensor's value waits for it).

    Raises:
        ArgumentTypeError: ``fill_value`` is not a Python number, NumPy scalar, 0-d tensor or 0-d array; bad size
            or dtype.
        ArgumentValueError: an array or tensor of more than 0 dims, or a meta tensor, as ``fill_value``.
        ScalarOverflowError (OverflowError): an int out of the integer dtype's range (bool's: 0 to 1; NumPy and
            PyTorch make any nonzero value True), an infinity into an integer or bool dtype, or an int no
            supported dtype holds (beyond int64 and uint64).
        CastingError (TypeError): a complex value into a real dtype.
        ValueError: a negative size, a bad device, or NaN into an integer or bool dtype.
        OutOfMemoryError (MemoryError): as :func:`empty`.
    """
    shape = shape_tuple("full", "size", (size,) if as_index(size) is not None else size)  # type: ignore[arg-type]  # any input
    if out is not None:
        from devtensor.ranges import out_dtype  # (ranges imports this module)

        dt = optional_dtype("full", dtype) or out_dtype("full", out)
        array_fill = array_fill_value("full", fill_value, dt)
        value = array_fill[1] if array_fill is not None else check_fill("full", fill_value, dt)
        return into_out("full", out, shape, dt, device, _fill_with(value))
    array_fill = array_fill_value("full", fill_value, optional_dtype("full", dtype))
    if array_fill is not None:
        return filled("full", shape, array_fill[0], as_device(device, op="full"), array_fill[1])
    dt = optional_dtype("full", dtype) or fill_dtype("full", fill_value)
    value = check_fill("full", fill_value, dt)
    return filled("full", shape, dt, as_device(device, op="full"), value)


def _like(op: str, t: object, dtype: Any, device: DeviceLike | None) -> tuple[tuple[int, ...], DType, Device]:
    if not isinstance(t, Tensor):
        raise ArgumentTypeError(f"{op}: argument 'input' must be a Tensor, got {type(t).__name__}")
    return t.shape, optional_dtype(op, dtype) or t.dtype, as_device(device, t.device, op=op)


def empty_like(input: Tensor, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """An uninitialised tensor with ``input``'s shape (and its dtype and device unless given)."""
    shape, dt, dev = _like("empty_like", input, dtype, device)
    return filled("empty_like", shape, dt, dev, None)


def eye(
    n: int, m: int | None = None, *, dtype: Any = None, device: DeviceLike | None = None, out: Tensor | None = None
) -> Tensor:
    """The ``n`` x ``m`` matrix (``m`` defaults to ``n``) with ones on its main diagonal and zeros elsewhere
    (``torch.eye``; values as ``np.eye``); dtype default float64 (NumPy's, where PyTorch's is float32), any
    supported dtype (bool gives True on the diagonal); on ``device`` (default cpu; meta gives shape and dtype).
    ``out=`` as :func:`empty`'s, written.

    Raises:
        ArgumentTypeError (TypeError): ``n`` or ``m`` not an int; ``dtype`` not a dtype.
        ArgumentValueError (ValueError): ``n`` or ``m`` negative.
    """
    rows = _dim_size("eye", "n", n)
    cols = rows if m is None else _dim_size("eye", "m", m)
    if out is not None:

        def write(array: Any) -> None:
            array.fill(0)
            k = min(rows, cols)
            array[np.arange(k), np.arange(k)] = 1  # (out may be strided: index, not a flat view)

        return into_out("eye", out, (rows, cols), dtype, device, write)
    dtype_ = optional_dtype("eye", dtype) or _DEFAULT_FLOAT
    dev = as_device(device, op="eye")
    result = filled("eye", (rows, cols), dtype_, dev, 0)
    if rows and cols and backend_for(dev).has_data:
        # The diagonal as a strided view of the zeros (every cols + 1 elements of the flat matrix), filled with 1.
        diagonal = slice(0, min(rows, cols) * (cols + 1), cols + 1)
        array = result._array
        guard = backend_for(dev).guard(dev)
        if guard is None:
            array.reshape(-1)[diagonal] = 1
        else:
            with guard:
                array.reshape(-1)[diagonal] = 1
    return constant("eye", result)


def _dim_size(op: str, arg: str, value: object) -> int:
    if isinstance(value, bool) or as_index(value) is None:
        raise ArgumentTypeError(f"{op}: argument '{arg}' must be an int, got {type(value).__name__} {value!r}")
    size = as_index(value)
    assert size is not None
    if size < 0:
        raise ArgumentValueError(f"{op}: argument '{arg}' must be greater or equal to 0, got {size}")
    return size


def zeros_like(input: Tensor, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """Zeros with ``input``'s shape (and its dtype and device unless given)."""
    shape, dt, dev = _like("zeros_like", input, dtype, device)
    return filled("zeros_like", shape, dt, dev, 0)


def ones_like(input: Tensor, *, dtype: Any = None, device: DeviceLike | None = None) -> Tensor:
    """Ones with ``input``'s shape (and its dtype and device unless given)."""
    shape, dt, dev = _like("ones_like", input, dtype, device)
    return filled("ones_like", shape, dt, dev, 1)


def full_like(
    input: Tensor,
    fill_value: Scalar | Tensor | np.ndarray[Any, Any],
    *,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """``fill_value`` with ``input``'s shape (and its dtype and device unless given); a number must be
    representable in the dtype, a 0-d tensor or array is cast (as :func:`full`). Raises as :func:`full`, and
    ArgumentTypeError when ``input`` is no Tensor."""
    shape, dt, dev = _like("full_like", input, dtype, device)
    array_fill = array_fill_value("full_like", fill_value, dt)
    value = check_fill("full_like", fill_value, dt) if array_fill is None else array_fill[1]
    return filled("full_like", shape, dt, dev, value)


def _rebuild(array: np.ndarray[Any, Any], device: str) -> Tensor:
    """Unpickling: a tensor on ``device`` holding ``array``'s values (a copy: pickle's buffer may be shared or
    read-only). A CUDA tensor unpickled in a process that cannot use CUDA (a Dask worker without a GPU or CuPy)
    raises DeviceUnavailableError saying so, rather than landing silently on the CPU."""
    try:
        return tensor(array, device=device)
    except DeviceUnavailableError as error:
        raise DeviceUnavailableError(
            f"unpickling a tensor of shape {list(array.shape)} and dtype {array.dtype} on {device}: {error}"
        ) from error


def _rebuild_without_data(shape: tuple[int, ...], dtype: str, device: str) -> Tensor:
    """Unpickling a tensor without data (meta): a tensor of ``shape`` and ``dtype`` on ``device``."""
    return empty(shape, dtype=dtype, device=device)
