"""The fill value of ``full`` and ``full_like`` (and the creation functions that fill): the dtype a value gives by
default, as NumPy's ``full`` infers it, and the value checked to fit a dtype (a Python number, PyTorch's checked
conversion) or cast into it (a 0-d tensor or array, as ``astype``)."""

from __future__ import annotations

import numpy as np

from devtensor.dtypes import SCALAR_TYPES, DType, Scalar, plain_number, python_scalar, to_dtype
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ScalarOverflowError
from devtensor.meta import check_scalar_fits, int_text
from devtensor.tensor import Tensor

__all__ = ["array_fill_value", "check_fill", "fill_dtype"]


def fill_dtype(op: str, fill_value: object) -> DType:
    """The dtype NumPy's ``full`` infers from a Python number or NumPy scalar ``fill_value``.

    Raises:
        ArgumentTypeError: ``fill_value`` is no number.  ScalarOverflowError: an int no supported dtype holds.
    """
    if isinstance(fill_value, np.generic) and type(fill_value) not in SCALAR_TYPES:
        # A NumPy scalar's own dtype, as np.full infers it (np.float64 is also a float: same answer).
        return to_dtype(fill_value.dtype, op=op, arg="fill_value")
    if type(fill_value) not in SCALAR_TYPES:
        number = plain_number(fill_value)  # (a subclass of a Python number, such as a tensor's size)
        if number is None:
            raise ArgumentTypeError(
                f"{op}: argument 'fill_value' must be a Python number, got {type(fill_value).__name__}"
            )
        fill_value = number
    dtype = np.asarray(fill_value).dtype
    if dtype.kind == "O":  # an int beyond int64 and uint64
        raise ScalarOverflowError(
            f"{op}: argument 'fill_value', Python integer {int_text(fill_value)}, does not fit any supported "  # type: ignore[arg-type]
            "integer dtype (int64 or uint64)"
        )
    return dtype


def array_fill_value(op: str, value: object, dtype: DType | None) -> tuple[DType, Scalar] | None:
    """For a 0-d tensor or a 0-d NumPy array as the fill value (NumPy's ``full`` and the standard take one;
    PyTorch takes a 0-d tensor as its Scalar): the dtype (``dtype``, else the value's own, as ``np.full``
    infers it) and the value cast into it as ``Tensor.to``/``astype`` casts (unchecked, as NumPy's ``full``);
    None for any other value.

    Raises:
        ArgumentValueError: an array or tensor of more than 0 dims; a tensor without data (meta).
    """
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ArgumentValueError(
                f"{op}: argument 'fill_value' must be a number or a 0-d tensor, got a tensor of shape "
                f"{list(value.shape)}"
            )
        dt = dtype or value.dtype
        if value.device.type == "meta":
            raise ArgumentValueError(f"{op}: argument 'fill_value' is a meta tensor, which has no value")
        cast_value = value if value.dtype == dt else value.to(dt)
        return dt, cast_value.item()
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise ArgumentValueError(
                f"{op}: argument 'fill_value' must be a number or a 0-d array, got an array of shape "
                f"{list(value.shape)}"
            )
        dt = dtype or to_dtype(value.dtype, op=op, arg="fill_value")
        with np.errstate(invalid="ignore", over="ignore"):  # astype's cast, as np.full's copyto (unsafe)
            item = value.astype(dt)[()]
        return dt, python_scalar(op, "fill_value", item)
    return None


def check_fill(op: str, value: object, dtype: DType) -> Scalar:
    """The fill value as a Python number (a NumPy scalar converted: it takes no part in promotion), checked to
    fit ``dtype`` (into bool: 0 to 1, as arange and linspace refuse values outside bool's range)."""
    number = python_scalar(op, "fill_value", value)
    check_scalar_fits(op, number, dtype, "fill_value", bool_range=True)
    return number
