"""Backends: how each device type allocates, converts and describes its arrays.

A :class:`Backend` serves one device type and owns its refined tensor class. ``cpu`` is NumPy, ``cuda`` is CuPy
(imported lazily, on first use of a CUDA device, from ``sys.modules`` or by import, so a stand-in module can
serve tests on machines without a GPU), ``meta`` keeps shape and dtype in a zero-strided NumPy array that owns
no memory.
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor.device import Device, register_device_type
from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import DType
from devtensor.errors import ArgumentValueError, DeviceUnavailableError, NoDataError, OutOfMemoryError
from devtensor.storage import ForeignStorage
from devtensor.tensor import Storage, Tensor
from devtensor.typed.refined import CPUTensor, CUDATensor, MetaTensor

__all__ = [
    "Backend",
    "allocation_error",
    "backend_for",
    "backend_for_key",
    "check_allocation_size",
    "cupy_module",
    "register_backend",
]

_new = object.__new__


class Backend:
    """The array operations of one device type (base class: NumPy on the CPU).

    ``xp`` is the array module (NumPy-compatible). Subclasses override what differs.
    """

    device_type: str = "cpu"
    tensor_class: type[Tensor] = CPUTensor
    has_data: bool = True
    #: ``alloc(shape, dtype)``: an uninitialised array on the current device (call it under the device guard).
    alloc: Any = staticmethod(np.empty)
    #: The NumPy-compatible array module of this backend (a plain attribute, read by every view front's call; a
    #: subclass whose module is imported lazily may make it a property, as CUDA's).
    xp: ModuleType = np

    def guard(self, device: Device) -> AbstractContextManager[Any] | None:
        """The device guard to hold around work on ``device`` (None: no guard needed)."""
        return None

    def empty(self, shape: tuple[int, ...], dtype: DType, device: Device) -> Any:
        """An uninitialised array of ``shape`` and ``dtype`` on ``device``.

        Raises:
            OutOfMemoryError (a MemoryError): the memory is not available.  ValueError: a size NumPy cannot
                express (more bytes than the address space).
        """
        try:
            return np.empty(shape, dtype)
        except MemoryError as error:
            raise allocation_error(f"{self.device_type}.empty", shape, dtype, device, error) from None

    def from_numpy(self, array: np.ndarray[Any, Any], device: Device, copy: bool | None) -> Any:
        """``array`` on ``device``; zero-copy where possible unless ``copy`` is True. Raises OutOfMemoryError
        when a copy does not fit in memory."""
        try:
            return np.array(array, copy=copy)
        except MemoryError as error:
            raise allocation_error(f"{self.device_type}.from_numpy", array.shape, array.dtype, device, error) from None

    def from_other(self, src: Backend, array: Any, device: Device, dtype: DType) -> Any:
        """An array on ``device`` with ``dtype`` holding the data of ``array`` from backend ``src`` (a copy).
        Raises OutOfMemoryError when the copy does not fit in memory."""
        try:
            return src.to_numpy(array).astype(dtype, copy=True)
        except MemoryError as error:
            raise allocation_error(f"{self.device_type}.from_other", array.shape, dtype, device, error) from None

    def to_numpy(self, array: Any) -> np.ndarray[Any, Any]:
        """The data as a NumPy array (shared for CPU, copied from a device)."""
        return array  # type: ignore[no-any-return]

    def to_numpy_shared(self, array: Any, device: Device) -> np.ndarray[Any, Any]:
        """The data as a NumPy array sharing memory (CPU only): a fresh view, so that reshaping or re-dtyping the
        exported array in place cannot desynchronise the tensor."""
        return array.view()  # type: ignore[no-any-return]

    def writeable(self, array: Any) -> bool:
        """Whether the memory can be written."""
        return bool(array.flags.writeable)

    def set_writeable(self, array: Any, value: bool, device: str) -> None:
        """Set ``array``'s writeable flag (``Tensor.flags.writeable = value``), as NumPy's.

        Raises:
            ArgumentValueError (ValueError): True where the memory is read-only (NumPy's refusal: the array's
                base is not writeable, or it is a broadcast view).
        """
        if bool(array.flags.writeable) == value:
            return
        try:
            array.flags.writeable = value
        except ValueError as error:
            raise ArgumentValueError(
                f"flags: cannot set 'writeable' to True: the tensor's memory is read-only ({error})"
            ) from None

    def element_strides(self, array: Any) -> tuple[int, ...]:
        """Strides in elements."""
        item = array.dtype.itemsize
        return tuple(s // item for s in array.strides)

    def address(self, array: Any) -> int:
        """The address of ``array``'s first element (its alignment is what ``view(dtype)`` checks)."""
        return int(array.__array_interface__["data"][0])

    def is_contiguous(self, array: Any) -> bool:
        """Whether ``array`` is C-contiguous."""
        return array.flags.c_contiguous  # type: ignore[no-any-return]  # (a bool in NumPy and CuPy: no bool())

    def storage_root(self, array: Any) -> object:
        """The object owning ``array``'s memory: the end of its ``base`` chain, looking through memoryviews
        (``numpy.asarray(memoryview(a))`` has ``a``'s root). An owner whose ``base`` is itself (Cython's
        ``cython.view.array``, behind SciPy's compiled results) ends the chain."""
        root = array
        while True:
            base = getattr(root, "base", None)
            if base is None and isinstance(root, memoryview):
                base = root.obj
            if base is None or base is root:
                return root
            root = base

    def shares_memory(self, a: Any, b: Any) -> bool:
        """Whether ``a`` and ``b`` share any element's memory (exact where affordable, else conservative)."""
        try:
            # numpy's stub types max_work as Literal[-1, 0] on some versions: too narrow.
            return bool(np.shares_memory(a, b, max_work=100_000))  # type: ignore[arg-type, unused-ignore]
        except np.exceptions.TooHardError:
            return True

    def same_layout(self, a: Any, b: Any) -> bool:
        """Whether ``a`` and ``b`` are the same elements: same data pointer, shape and strides."""
        return bool(
            a.shape == b.shape
            and a.strides == b.strides
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        )

    def wrap(self, array: Any, device: Device, owned: bool = True) -> Tensor:
        """A new tensor over ``array`` with a new storage (version 0). ``owned``: whether devtensor allocated
        the memory (False for the caller's memory wrapped without a copy: such storage is never reallocated)."""
        t = _new(self.tensor_class)
        t._array = array
        t._device = device
        t._storage = Storage(self.storage_root(array)) if owned else ForeignStorage(self.storage_root(array))
        t._shape = array.shape
        t._dtype = array.dtype
        t._write_checked = False
        return t

    def wrap_view(self, array: Any, base: Tensor) -> Tensor:
        """A view tensor over ``array`` sharing ``base``'s storage (and so its version counter)."""
        t = _new(self.tensor_class)
        t._array = array
        t._device = base._device
        # (the shared record's reference count is what tells an out= resize that views are alive: no tracking)
        t._storage = base._storage
        t._shape = array.shape
        t._dtype = array.dtype
        t._write_checked = False
        return t

    def repr(self, tensor: Tensor) -> str:
        """PyTorch-style repr: ``tensor([...], dtype=float32)`` plus the device when not CPU and the size when
        empty, with the print options in effect (:mod:`devtensor.printing`)."""
        from devtensor.printing import format_tensor

        return format_tensor(tensor, self.to_numpy(tensor._array))


#: itemsize -> that many zero bytes: the one element every meta array of that itemsize is made of.
_META_BUFFERS: dict[int, bytes] = {}
_ndarray: Final = np.ndarray


def meta_array(shape: Any, dtype: Any) -> np.ndarray[Any, Any]:
    """The stand-in array of a meta tensor: ``shape`` and ``dtype``, every stride 0 over one element of an
    immutable buffer, so read-only, as ``np.broadcast_to(np.empty((), dtype), shape)`` (the same array, made
    without broadcast_to's Python wrapper: about a tenth of the time).

    Raises:
        ValueError: a negative dimension, or a shape whose size overflows (as NumPy raises for the same).
        TypeError: ``shape`` not a sequence of ints.
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in "biufc":  # (objects cannot live in raw bytes; flexible dtypes get sized by np.empty)
        return np.broadcast_to(np.empty((), dtype), shape)
    size = dtype.itemsize
    try:
        buffer = _META_BUFFERS[size]
    except KeyError:
        buffer = _META_BUFFERS.setdefault(size, bytes(size))
    if type(shape) is not tuple:
        shape = tuple(shape)
    if -1 in shape:  # (ndarray would infer a -1 from the buffer's size; broadcast_to raises NumPy's ValueError)
        return np.broadcast_to(np.empty((), dtype), shape)
    return _ndarray(shape, dtype, buffer, 0, (0,) * len(shape))


#: (shape, dtype) -> a meta array made by :func:`meta_array`, whose views the meta backend's ``alloc`` hands out
#: (a view is a fifth of the cost of a new array, and a new object: a storage's root is never shared). Bounded.
_META_TEMPLATES: dict[tuple[Any, Any], np.ndarray[Any, Any]] = {}
_META_TEMPLATE_LIMIT: Final = 512


def _meta_alloc(shape: tuple[int, ...], dtype: DType) -> np.ndarray[Any, Any]:
    """``alloc`` of the meta backend: a new read-only array object of ``shape`` and ``dtype``, as
    :func:`meta_array` makes (its callers pass a tensor's or a meta function's shape, a tuple of ints, and a
    NumPy dtype). The array's dtype is ``dtype`` itself: equal dtypes can be distinct objects (``np.dtype('q')``
    and ``np.dtype('l')``), and a tensor's dtype is the object its op asked for."""
    template = _META_TEMPLATES.get((shape, dtype))
    if template is not None and template.dtype is dtype:
        return template.view()
    array = meta_array(shape, dtype)
    if len(_META_TEMPLATES) >= _META_TEMPLATE_LIMIT:
        _META_TEMPLATES.clear()
    _META_TEMPLATES[shape, dtype] = array
    return array.view()


class MetaBackend(Backend):
    """The ``meta`` device: shape and dtype only. Arrays are zero-strided broadcasts of one element."""

    device_type = "meta"
    tensor_class = MetaTensor
    has_data = False
    alloc = staticmethod(_meta_alloc)

    def empty(self, shape: tuple[int, ...], dtype: DType, device: Device) -> Any:
        """A data-less stand-in of ``shape`` and ``dtype`` (one element of memory, broadcast)."""
        return meta_array(shape, dtype)

    def from_numpy(self, array: np.ndarray[Any, Any], device: Device, copy: bool | None) -> Any:
        """A stand-in with ``array``'s shape and dtype; its values are dropped."""
        return meta_array(array.shape, array.dtype)

    def from_other(self, src: Backend, array: Any, device: Device, dtype: DType) -> Any:
        """A stand-in with ``array``'s shape and ``dtype`` (moving to meta reads no data)."""
        return meta_array(array.shape, dtype)

    def to_numpy(self, array: Any) -> np.ndarray[Any, Any]:
        """Always raises NoDataError: meta tensors have no data."""
        raise NoDataError("meta tensors have a shape and a dtype but no data; use a cpu or cuda tensor")

    def to_numpy_shared(self, array: Any, device: Device) -> np.ndarray[Any, Any]:
        """Always raises NoDataError: meta tensors have no data."""
        return self.to_numpy(array)

    def writeable(self, array: Any) -> bool:
        """True: writes to meta tensors check their arguments and bump the version, and write nothing."""
        return True

    def set_writeable(self, array: Any, value: bool, device: str) -> None:
        """True is what a meta tensor is; False is refused (ArgumentValueError): a meta tensor has no memory whose
        writes could be refused."""
        if not value:
            raise ArgumentValueError(
                "flags: cannot set 'writeable' to False on a meta tensor (it has no memory; its writes only "
                "check their arguments)"
            )

    def element_strides(self, array: Any) -> tuple[int, ...]:
        """The C-contiguous strides of the shape (as PyTorch's, a length-0 dimension counting as 1); meta views
        do not keep the strides of the tensor they view."""
        strides: list[int] = []
        acc = 1
        for n in reversed(array.shape):
            strides.append(acc)
            acc *= max(n, 1)
        return tuple(reversed(strides))

    def address(self, array: Any) -> int:
        """0: meta tensors have no memory (as a storage offset of 0, every alignment holds)."""
        return 0

    def is_contiguous(self, array: Any) -> bool:
        """True: meta tensors report contiguous strides."""
        return True

    def shares_memory(self, a: Any, b: Any) -> bool:
        """False: meta tensors have no memory, so the overlap checks do not apply to them."""
        return False

    def repr(self, tensor: Tensor) -> str:
        """``tensor(..., device='meta', size=..., dtype=...)``."""
        return f"tensor(..., device='meta', size={tensor.shape}, dtype={tensor.dtype})"


def cupy_module() -> ModuleType:
    """The ``cupy`` module: ``sys.modules['cupy']`` if present (a test stand-in may be), else imported.

    Raises:
        DeviceUnavailableError (RuntimeError): CuPy is not installed (install CuPy's own package for the CUDA
            12 driver, ``pip install cupy-cuda12x``, or the ``cuda`` extra from a clone, ``pip install -e
            ".[cuda]"``; no package index serves devtensor itself).
    """
    mod = sys.modules.get("cupy")
    if mod is not None:
        return mod
    try:
        return importlib.import_module("cupy")
    except ImportError as e:
        raise DeviceUnavailableError(
            "CUDA tensors need CuPy, which is not installed; install CuPy for your CUDA version, e.g. "
            '`pip install cupy-cuda12x` (CUDA 12), or from a devtensor clone `pip install -e ".[cuda]"` '
            '(or keep the tensors on device="cpu")'
        ) from e


def _cuda_alloc(shape: tuple[int, ...], dtype: DType) -> Any:
    """``alloc`` of the CUDA backend: an uninitialised CuPy array on the current device (under the guard).
    CuPy's out-of-memory error becomes devtensor's (the CPU's ``alloc`` is NumPy's ``empty`` itself, whose
    MemoryError the caller converts: a wrapper there would cost every call)."""
    try:
        return cupy_module().empty(shape, dtype)
    except MemoryError as error:
        raise allocation_error("cuda.alloc", shape, dtype, f"cuda:{_cuda_current_index()}", error) from None


class CUDABackend(Backend):
    """CUDA devices through CuPy. Allocation and copies run under the device guard of the target device."""

    device_type = "cuda"
    tensor_class = CUDATensor
    alloc = staticmethod(_cuda_alloc)

    @property
    def xp(self) -> ModuleType:  # type: ignore[override]  # (a property: CuPy is imported on first use)
        """CuPy (imported on first use)."""
        return cupy_module()

    def guard(self, device: Device) -> AbstractContextManager[Any] | None:
        assert device.index is not None
        return cupy_module().cuda.Device(device.index)  # type: ignore[no-any-return]

    def empty(self, shape: tuple[int, ...], dtype: DType, device: Device) -> Any:
        cp = cupy_module()
        assert device.index is not None
        try:
            with cp.cuda.Device(device.index):
                return cp.empty(shape, dtype)
        except MemoryError as error:  # CuPy's OutOfMemoryError is a MemoryError
            raise allocation_error("cuda.empty", shape, dtype, device, error) from None

    def from_numpy(self, array: np.ndarray[Any, Any], device: Device, copy: bool | None) -> Any:
        cp = cupy_module()
        assert device.index is not None
        try:
            with cp.cuda.Device(device.index):
                return cp.array(array, copy=True)
        except MemoryError as error:
            raise allocation_error("cuda.from_numpy", array.shape, array.dtype, device, error) from None

    def from_other(self, src: Backend, array: Any, device: Device, dtype: DType) -> Any:
        """A copy on ``device`` with ``dtype``: from another CUDA device directly, from other backends through
        host memory."""
        cp = cupy_module()
        assert device.index is not None
        try:
            return self._copy_from(cp, src, array, device.index, dtype)
        except MemoryError as error:
            raise allocation_error("cuda.from_other", tuple(array.shape), dtype, device, error) from None

    def _copy_from(self, cp: ModuleType, src: Backend, array: Any, index: int, dtype: DType) -> Any:
        with cp.cuda.Device(index):
            if isinstance(src, CUDABackend):
                # CuPy copies between devices by memcpy, from a contiguous source only: keeping the layout
                # ('K') of a non-contiguous array on another device raises NotImplementedError, 'C' first
                # makes a contiguous copy on the source device. On one device, 'K' keeps the layout.
                order = "K" if int(array.device.id) == index else "C"
                return cp.array(array, dtype=dtype, copy=True, order=order)
            return cp.array(src.to_numpy(array), dtype=dtype, copy=True)

    def to_numpy(self, array: Any) -> np.ndarray[Any, Any]:
        try:
            return cupy_module().asnumpy(array)  # type: ignore[no-any-return]
        except MemoryError as error:  # the host copy does not fit
            raise allocation_error("cuda.to_numpy", tuple(array.shape), array.dtype, "cpu", error) from None

    def to_numpy_shared(self, array: Any, device: Device) -> np.ndarray[Any, Any]:
        raise TypeError(
            f"can't convert a {device} tensor to a NumPy array implicitly; call .cpu() first to copy it to host memory"
        )

    def writeable(self, array: Any) -> bool:
        return True

    def set_writeable(self, array: Any, value: bool, device: str) -> None:
        if not value:
            raise ArgumentValueError(
                f"flags: cannot set 'writeable' to False on a {device} tensor: CuPy arrays have no writeable flag, "
                "so CUDA tensors are always writable"
            )

    def address(self, array: Any) -> int:
        return int(array.data.ptr)

    def shares_memory(self, a: Any, b: Any) -> bool:
        """Exact, through CuPy's kernels on the arrays' device, when the address ranges meet; conservative
        (True) when CuPy cannot answer."""
        # Disjoint address ranges need no kernel; CuPy's exact answer launches kernels (on the arrays' device,
        # which need not be the current one: the overlap checks run before the front enters the device guard).
        if not _ranges_meet(a, b):
            return False
        cp = cupy_module()
        try:
            with cp.cuda.Device(int(a.device.id)):
                return bool(cp.shares_memory(a, b))
        except Exception:
            # Conservative: without an exact answer, memory ranges that meet count as shared.
            return True

    def same_layout(self, a: Any, b: Any) -> bool:
        return bool(a.shape == b.shape and a.strides == b.strides and a.data.ptr == b.data.ptr)


def _ranges_meet(a: Any, b: Any) -> bool:
    def bounds(x: Any) -> tuple[int, int]:
        lo = hi = int(x.data.ptr)
        for n, s in zip(x.shape, x.strides, strict=False):
            if n == 0:
                return (0, 0)
            if s > 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        return lo, hi + x.dtype.itemsize

    (a0, a1), (b0, b1) = bounds(a), bounds(b)
    return a0 < b1 and b0 < a1


_backends: dict[str, Backend] = {}


def register_backend(backend: Backend) -> None:
    """Register ``backend`` for its device type and bind its tensor class to it."""
    _backends[backend.device_type] = backend
    backend.tensor_class._backend = backend


def backend_for(device: Device) -> Backend:
    """The backend serving ``device``'s type. Raises ValueError for a device type with no backend."""
    try:
        return _backends[device.type]
    except KeyError:
        raise ArgumentValueError(f"no backend is registered for device type {device.type!r}") from None


def backend_for_key(key: DispatchKey) -> Backend:
    """The backend of the device type whose tensors dispatch to ``key``.

    Raises:
        ValueError: no registered backend's device type dispatches to ``key``.
    """
    for backend in _backends.values():
        if Device(backend.device_type).key is key:
            return backend
    raise ArgumentValueError(f"no backend is registered for dispatch key {key.name}")


def _cuda_guard(index: int) -> AbstractContextManager[Any]:
    return cupy_module().cuda.Device(index)  # type: ignore[no-any-return]


def _cuda_current_index() -> int:
    try:
        return int(cupy_module().cuda.runtime.getDevice())
    except Exception:
        return 0


register_device_type(
    "cuda",
    DispatchKey.CUDA,
    indexed=True,
    guard=_cuda_guard,
    current_index=_cuda_current_index,
)
register_backend(Backend())
register_backend(CUDABackend())
register_backend(MetaBackend())


def shape_tuple(op: str, arg: str, size: Sequence[Any] | np.ndarray[Any, Any]) -> tuple[int, ...]:
    """``size`` as a tuple of non-negative ints. Raises ArgumentTypeError / ValueError naming op and arg."""
    import operator

    from devtensor.errors import ArgumentTypeError

    if isinstance(size, (str, bytes)) or not isinstance(size, (Sequence, np.ndarray)):
        raise ArgumentTypeError(
            f"{op}: argument '{arg}' must be a sequence of ints, got {type(size).__name__} {size!r}"
        )
    dims: list[int] = []
    for n in size:
        if isinstance(n, (bool, np.bool_)):
            raise ArgumentTypeError(f"{op}: argument '{arg}' must be a sequence of ints, got {tuple(size)!r}")
        try:
            dims.append(operator.index(n))
        except TypeError:
            raise ArgumentTypeError(f"{op}: argument '{arg}' must be a sequence of ints, got {tuple(size)!r}") from None
    if any(n < 0 for n in dims):
        raise ArgumentValueError(f"{op}: argument '{arg}' has a negative dimension: {tuple(dims)!r}")
    return tuple(dims)


def allocation_error(op: str, shape: Sequence[int], dtype: DType, device: object, error: BaseException) -> Exception:
    """The devtensor error for an allocation of ``shape`` and ``dtype`` on ``device`` that failed with ``error``:
    an :class:`~devtensor.errors.OutOfMemoryError` (a ``MemoryError``) naming ``op``, the shape, the dtype and
    the bytes for an out-of-memory error (NumPy's, CuPy's, or ours from a lower layer, renamed to ``op``), an
    ``ArgumentValueError`` for a size the array module cannot express (NumPy's "array is too big"). Callers
    ``raise allocation_error(...) from None``; nothing has been allocated."""
    dims = tuple(int(n) for n in shape)
    nbytes = math.prod(dims) * np.dtype(dtype).itemsize
    if isinstance(error, MemoryError):
        where = error.device if isinstance(error, OutOfMemoryError) else device
        if isinstance(error, OutOfMemoryError):
            detail = error.detail
        else:  # NumPy's message repeats the facts above; CuPy's adds the allocator's view
            detail = "" if type(error).__module__.startswith("numpy") else str(error)
        return OutOfMemoryError(op, dims, np.dtype(dtype).name, nbytes, where, detail)
    return ArgumentValueError(
        f"{op}: cannot allocate a tensor of shape {dims} and dtype {np.dtype(dtype).name} ({nbytes} bytes): {error}"
    )


# The largest array NumPy (and CuPy) can describe: its size in bytes must fit a signed pointer-sized int.
_MAX_BYTES = np.iinfo(np.intp).max


def check_allocation_size(op: str, shape: tuple[int, ...], dtype: DType) -> None:
    """ArgumentValueError naming ``op`` when a tensor of ``shape`` and ``dtype`` would hold more bytes than the
    address space can (NumPy: "array is too big"), on every device, meta included (as PyTorch refuses such a
    size on meta too), before anything is allocated."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > _MAX_BYTES:
        dims = "(" + ", ".join(_compact(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
        raise ArgumentValueError(
            f"{op}: a tensor of shape {dims} and dtype {dtype.name} would take {_compact(nbytes)} bytes, more "
            f"than the {_MAX_BYTES} bytes an array can address"
        )


def _compact(n: int) -> str:
    """``n`` in digits, or in scientific notation when it is longer than 20 digits (``arange(1e308)``)."""
    digits = str(n)
    return digits if len(digits) <= 20 else f"{digits[0]}.{digits[1:4]}e+{len(digits) - 1}"
