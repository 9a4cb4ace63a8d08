"""Reading the element type of a DLPack export, to name a dtype devtensor cannot import (``bfloat16``, float8, ...).

NumPy's and CuPy's importers reject such data with a message that does not name the dtype ("Unsupported dtype in
DLTensor"). The DLPack capsule says what it is: its ``DLDataType`` (type code, bits, lanes), which this module
reads without consuming the capsule (its own destructor releases the export, as for any unused capsule). The
layouts are those of the DLPack C header (``dlpack.h``, versions 0.x and 1.x); the type codes are its
``DLDataTypeCode``.
"""

from __future__ import annotations

import ctypes
from typing import Any, Final

__all__ = ["capsule_dtype", "dtype_text", "export_dtype_text", "read_export_dtype"]


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
