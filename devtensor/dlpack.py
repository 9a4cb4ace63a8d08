"""``from_dlpack`` (the Array API standard's import of any DLPack producer's data), and reading the element type of
a DLPack export, to name a dtype devtensor cannot import (``bfloat16``, float8, ...).

NumPy's and CuPy's importers reject such data with a message that does not name the dtype ("Unsupported dtype in
DLTensor"). The DLPack capsule says what it is: its ``DLDataType`` (type code, bits, lanes), which this module
reads without consuming the capsule (its own destructor releases the export, as for any unused capsule). The
layouts are those of the DLPack C header (``dlpack.h``, versions 0.x and 1.x); the type codes are its
``DLDataTypeCode``.
"""

from __future__ import annotations

import ctypes
from typing import Any, Final, cast

import numpy as np

from devtensor.backends import backend_for
from devtensor.creation import check_data_dtype, cupy_ndarray_type
from devtensor.device import Device, DeviceLike, as_device
from devtensor.dtypes import as_bool, to_dtype
from devtensor.errors import ArgumentTypeError, ArgumentValueError, CopyRequiredError, DLPackExportError
from devtensor.storage import ForeignStorage
from devtensor.tensor import Tensor

__all__ = ["capsule_dtype", "dtype_text", "export_dtype_text", "from_dlpack", "read_export_dtype"]


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.c_void_p),
        ("strides", ctypes.c_void_p),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensorVersioned(ctypes.Structure):
    # (DLManagedTensor, the unversioned export, starts with its DLTensor)
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


# Own prototypes of the C API calls (setting restype on ctypes.pythonapi's shared ones would change them for all).
_IS_VALID: Final = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi)
)
_GET_POINTER: Final = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)

#: DLPack's type codes (``DLDataTypeCode``) by their names in NumPy's and PyTorch's terms.
_CODES: Final = {
    0: "int",
    1: "uint",
    2: "float",
    3: "opaque handle",
    4: "bfloat",
    5: "complex",
    6: "bool",
    7: "float8_e3m4",
    8: "float8_e4m3",
    9: "float8_e4m3b11fnuz",
    10: "float8_e4m3fn",
    11: "float8_e4m3fnuz",
    12: "float8_e5m2",
    13: "float8_e5m2fnuz",
    14: "float8_e8m0fnu",
    15: "float6_e2m3fn",
    16: "float6_e3m2fn",
    17: "float4_e2m1fn",
}


def dtype_text(code: int, bits: int, lanes: int) -> str:
    """A DLPack ``DLDataType`` in words: ``bfloat16``, ``int4``, ``float8_e4m3fn``, ``float32x4`` (4 lanes)."""
    name = _CODES.get(code)
    if name is None:
        text = f"DLPack type code {code} with {bits} bits"
    elif name == "bool" or "_" in name:  # the name says the width
        text = name
    elif name == "opaque handle":
        text = f"opaque handle ({bits} bits)"
    else:
        text = f"{name}{bits}"
    return text if lanes == 1 else f"{text}x{lanes}"


def capsule_dtype(capsule: Any) -> tuple[int, int, int] | None:
    """``(code, bits, lanes)`` of the DLPack ``capsule`` (named ``dltensor`` or ``dltensor_versioned``, not yet
    consumed), or None when it is no such capsule."""
    for name, versioned in ((b"dltensor_versioned", True), (b"dltensor", False)):
        try:
            if not _IS_VALID(capsule, name):
                continue
            address = _GET_POINTER(capsule, name)
        except (TypeError, ctypes.ArgumentError):
            return None
        if not address:
            return None
        if versioned:
            dtype = _DLManagedTensorVersioned.from_address(address).dl_tensor.dtype
        else:
            dtype = _DLTensor.from_address(address).dtype
        return (int(dtype.code), int(dtype.bits), int(dtype.lanes))
    return None


def read_export_dtype(obj: Any) -> tuple[int, int, int] | None:
    """``(code, bits, lanes)`` of what ``obj`` exports through DLPack, read from a fresh export; None when it
    cannot export again or the export is no DLPack capsule. Never raises (it serves errors about to be raised)."""
    try:
        try:
            capsule = obj.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer of DLPack < 1.0 takes no max_version
            capsule = obj.__dlpack__()
        return capsule_dtype(capsule)
    except Exception:  # whatever a producer raises: the caller words its own error
        return None


def export_dtype_text(obj: Any) -> str | None:
    """The element type of what ``obj`` exports through DLPack, in words: from a fresh export's ``DLDataType``,
    and the exporter's own ``dtype`` attribute when it has one (``bfloat16 (torch.bfloat16)``); None when neither
    tells. Never raises."""
    found = read_export_dtype(obj)
    read = None if found is None else dtype_text(*found)
    own = getattr(obj, "dtype", None)
    own_text = None if own is None else str(own)
    if read is None:
        return own_text
    return read if own_text is None or own_text == read else f"{read} ({own_text})"


# --- from_dlpack --------------------------------------------------------------------------------------------


def from_dlpack(x: Any, /, *, device: DeviceLike | None = None, copy: bool | None = None) -> Tensor:
    """A tensor of the data of ``x``, any object with ``__dlpack__`` and ``__dlpack_device__`` (NumPy and CuPy
    arrays, PyTorch tensors, devtensor tensors), as the array API standard's ``from_dlpack`` (2024.12).

    ``device``: the device of the result; None keeps the data's device (CPU data gives a CPU tensor, CUDA data a
    tensor on that CUDA device). ``copy``: None shares the memory of ``x`` when the result is on its device and
    copies otherwise; True always copies (the result owns its memory); False never copies, and a ``device`` other
    than the data's is then an error.

    A result that shares memory has its own version counter. For NumPy arrays and devtensor tensors it is known to
    share the producer's memory, so an op that writes one of them while reading the other is checked for overlap.

    Raises:
        ArgumentTypeError (TypeError): ``x`` does not support DLPack; its data has a dtype devtensor does not
            support (``bfloat16``, float8 types, ...: the message names it, from the DLPack export and the
            exporter's ``dtype``); ``copy`` is not None or a bool.
        CopyRequiredError (BufferError, ValueError): ``copy=False`` with a ``device`` other than the data's.
        DLPackExportError (BufferError): the producer cannot export (a meta tensor, a NumPy array of strings,
            objects or datetimes).
        ValueError: a DLPack device type other than CPU (1), CUDA (2) or CUDA managed memory (13); a bad ``device``.
    """
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise ArgumentTypeError(f"from_dlpack: argument 'x' does not support DLPack: {type(x).__name__}")
    copy = as_bool("from_dlpack", "copy", copy, optional=True)
    target = None if device is None else as_device(device, op="from_dlpack")
    try:
        dev_type, dev_id = x.__dlpack_device__()
    except BufferError as e:
        raise _export_error(x, e) from None
    if int(dev_type) == 1:
        source = as_device("cpu")
    elif int(dev_type) in (2, 13):  # kDLCUDA, kDLCUDAManaged (CuPy's managed-memory arrays)
        source = Device("cuda", int(dev_id))
    else:
        raise ArgumentValueError(
            f"from_dlpack: unsupported DLPack device type {dev_type} (supported: 1 = CPU, 2 = CUDA, 13 = CUDA managed)"
        )
    if target is not None and target is not source:
        if copy is False:
            raise CopyRequiredError(
                f"from_dlpack: copy=False, but the data is on {source} and device={str(target)!r} needs a copy"
            )
        return _dlpack_import(x, source).to(target)
    result = _dlpack_import(x, source)
    return result.to(source, copy=True) if copy else result


def _dlpack_import(x: Any, source: Device) -> Tensor:
    """A tensor sharing the memory of the DLPack producer ``x``, whose data is on ``source``."""
    if source.type == "cpu":
        try:
            array = np.from_dlpack(x)
        except (RuntimeError, TypeError, BufferError) as e:  # NumPy: "Unsupported dtype in DLTensor." (bfloat16, …)
            if isinstance(e, BufferError) and _unsupported_export(x) is None:
                raise _export_error(x, e) from None  # the producer cannot export (a BufferError)
            raise _import_error(x, e) from None
        check_data_dtype("from_dlpack", array, "x")
        # A view, so that the tensor's array object is its own even if the import handed back a shared one.
        result = backend_for(source).wrap(array.view(np.ndarray), source, owned=False)
        # NumPy's import ends its ``base`` chain at a capsule, which hides the producer's memory from the
        # overlap checks; for producers we know, use their storage root so that the tensor and other wrappers of
        # the same memory are compared as one storage (partial-overlap errors, no resize of an input).
        if isinstance(x, Tensor):
            result._storage.root = x._storage.root
            # (wrap(owned=False) made a ForeignStorage); x is never resized away from the memory result shares
            cast(ForeignStorage, result._storage).shared = x._storage
        elif isinstance(x, np.ndarray):
            result._storage.root = backend_for(source).storage_root(x)
        return result
    from devtensor.backends import cupy_module

    cupy = cupy_module()
    assert source.index is not None
    with cupy.cuda.Device(source.index):
        try:
            array = cupy.from_dlpack(x)
        except (RuntimeError, TypeError, ValueError, BufferError) as e:
            if _unsupported_export(x) is None:
                if isinstance(e, BufferError):
                    raise _export_error(x, e) from None
                raise
            raise _import_error(x, e) from None
    to_dtype(array.dtype, op="from_dlpack", arg="x")
    cuda_backend = backend_for(source)
    cuda_result = cuda_backend.wrap(array.view(), source, owned=False)
    # As for CPU data: known producers share their storage root, so the overlap checks see one storage.
    cuda_type = cupy_ndarray_type()
    if isinstance(x, Tensor):
        cuda_result._storage.root = x._storage.root
        cast(ForeignStorage, cuda_result._storage).shared = x._storage  # as for CPU data
    elif cuda_type is not None and isinstance(x, cuda_type):
        cuda_result._storage.root = cuda_backend.storage_root(x)
    return cuda_result


# DLPack (type code, bits) that devtensor imports: ints, uints, floats of 16-64 bits, complex64/128, bool.
_DLPACK_SUPPORTED = {
    *((code, bits) for code in (0, 1) for bits in (8, 16, 32, 64)),
    *((2, bits) for bits in (16, 32, 64)),
    (5, 64),
    (5, 128),
    (6, 8),
}


def _unsupported_export(x: Any) -> str | None:
    """The dtype of what ``x`` exports, in words, when devtensor does not support it; None when it does or when
    the export cannot be read."""
    found = read_export_dtype(x)
    if found is None or ((found[0], found[1]) in _DLPACK_SUPPORTED and found[2] == 1):
        return None
    return export_dtype_text(x)


def _export_error(x: Any, error: BufferError) -> DLPackExportError:
    """The error for a producer ``x`` that cannot export its data (``error``, its BufferError), naming its type
    and dtype (NumPy's message names neither)."""
    if isinstance(error, DLPackExportError):
        return DLPackExportError(f"from_dlpack: {error}")
    dtype = getattr(x, "dtype", None)
    what = f"a {type(x).__name__}" + (f" of dtype {dtype}" if dtype is not None else "")
    return DLPackExportError(
        f"from_dlpack: argument 'x', {what}, cannot export its data through DLPack ({error}); devtensor supports "
        "bool, int8-64, uint8-64, float16/32/64, complex64/128"
    )


def _import_error(x: Any, error: Exception) -> ArgumentTypeError:
    """The error for data of ``x`` an array module refused to import (``error``), naming its dtype."""
    what = _unsupported_export(x)
    if what is not None:
        return ArgumentTypeError(
            f"from_dlpack: unsupported dtype {what} of a {type(x).__name__} (devtensor supports bool, int8-64, "
            "uint8-64, float16/32/64, complex64/128); convert it first, e.g. to float32"
        )
    named = export_dtype_text(x)
    dtype = f" of dtype {named}" if named else ""
    return ArgumentTypeError(f"from_dlpack: cannot import a {type(x).__name__}{dtype}: {error}")
