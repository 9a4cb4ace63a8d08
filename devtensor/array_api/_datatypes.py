"""The Array API standard's data type functions (``astype``, ``can_cast``, ``finfo``, ``iinfo``, ``isdtype``,
``result_type``) over devtensor's dtypes (NumPy dtype objects)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from devtensor import dtypes as _dtypes
from devtensor.device import Device
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.tensor import Tensor

__all__ = ["astype", "can_cast", "finfo", "finfo_object", "iinfo", "iinfo_object", "isdtype", "result_type"]

_KINDS: dict[str, str] = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def _dtype_of(op: str, value: object) -> np.dtype[Any]:
    if isinstance(value, Tensor):
        return value.dtype
    return _dtypes.to_dtype(value, op=op)


def astype(x: Tensor, dtype: Any, /, *, copy: bool = True, device: Device | str | None = None) -> Tensor:
    """``x`` converted to ``dtype`` (and moved to ``device`` when given): a new tensor unless ``copy`` is False and
    nothing changes (then ``x`` itself). Casting follows NumPy's ``astype`` (unsafe casting; the standard leaves
    complex-to-real and float-to-int values unspecified).

    Raises:
        ArgumentTypeError: ``x`` is not a tensor, or ``dtype`` is not a supported dtype.
    """
    if not isinstance(x, Tensor):
        raise ArgumentTypeError(f"astype: argument 'x' must be a Tensor, got {type(x).__name__}")
    return x.to(device, _dtypes.to_dtype(dtype, op="astype"), copy=copy)


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` (a dtype or a tensor) casts to the dtype ``to`` under the standard's promotion rules
    (NumPy's ``can_cast`` with ``casting="safe"``)."""
    return bool(np.can_cast(_dtype_of("can_cast", from_), _dtypes.to_dtype(to, op="can_cast"), casting="safe"))


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating dtype (the standard's ``finfo_object``): ``bits``, ``eps``, ``max``, ``min``,
    ``smallest_normal`` (Python floats) and ``dtype``. For a complex dtype, those of its real component."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype[Any]


@dataclass(frozen=True)
class iinfo_object:
    """Limits of an integer dtype (the standard's ``iinfo_object``): ``bits``, ``max``, ``min``, ``dtype``."""

    bits: int
    max: int
    min: int
    dtype: np.dtype[Any]


def finfo(type: Any, /) -> finfo_object:
    """Machine limits of the floating or complex dtype ``type`` (a dtype or a tensor), as NumPy's ``finfo``.

    Raises:
        ArgumentValueError: an integer or bool dtype.
    """
    dtype = _dtype_of("finfo", type)
    if dtype.kind not in "fc":
        raise ArgumentValueError(f"finfo: argument 'type' must be a floating or complex dtype, got {dtype}")
    info = np.finfo(dtype)
    return finfo_object(
        int(info.bits), float(info.eps), float(info.max), float(info.min), float(info.smallest_normal), info.dtype
    )


def iinfo(type: Any, /) -> iinfo_object:
    """Limits of the integer dtype ``type`` (a dtype or a tensor), as NumPy's ``iinfo``.

    Raises:
        ArgumentValueError: a floating, complex or bool dtype.
    """
    dtype = _dtype_of("iinfo", type)
    if dtype.kind not in "iu":
        raise ArgumentValueError(f"iinfo: argument 'type' must be an integer dtype, got {dtype}")
    info = np.iinfo(dtype)
    return iinfo_object(int(info.bits), int(info.max), int(info.min), dtype)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of the standard's kind names (``"bool"``, ``"signed
    integer"``, ``"unsigned integer"``, ``"integral"``, ``"real floating"``, ``"complex floating"``,
    ``"numeric"``), or a tuple of those.

    Raises:
        ArgumentTypeError: ``dtype`` is not a dtype; ``kind`` is none of the above.
        ArgumentValueError: an unknown kind name.
    """
    if not isinstance(dtype, np.dtype):
        raise ArgumentTypeError(f"isdtype: argument 'dtype' must be a dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ArgumentValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KINDS)}")
        return dtype.kind in _KINDS[kind]
    if isinstance(kind, np.dtype):
        return dtype == kind
    raise ArgumentTypeError(f"isdtype: argument 'kind' must be a dtype, a kind name or a tuple, got {kind!r}")


def result_type(*arrays_and_dtypes: Any) -> np.dtype[Any]:
    """The dtype the standard's promotion gives for tensors, dtypes and Python scalars (weak, NEP 50): NumPy's
    ``result_type``.

    Raises:
        ArgumentValueError: no arguments, or Python scalars only (the standard defines no result for them; a
            ValueError as array-api-strict's and array-api-compat's namespaces raise, so that callers catching
            TypeError for undefined mixed-kind promotions do not take it for one).
        ArgumentTypeError: an argument of none of those kinds; dtypes NumPy cannot promote.
    """
    if not arrays_and_dtypes:
        raise ArgumentValueError("result_type: at least one array or dtype is required")
    operands = [x.dtype if isinstance(x, Tensor) else x for x in arrays_and_dtypes]
    if all(type(x) in _dtypes.SCALAR_TYPES for x in operands):
        raise ArgumentValueError("result_type: at least one array or dtype is required besides Python scalars")
    try:
        return _dtypes.to_dtype(np.result_type(*operands), op="result_type")
    except TypeError as e:
        raise ArgumentTypeError(f"result_type: {e}") from None
