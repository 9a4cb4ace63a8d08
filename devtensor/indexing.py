"""Indexing tensors: an index converted for the tensor's array module (tensors, lists and NumPy arrays as index
arrays; float slice bounds refused), and ``tensor[index] = value`` (:func:`set_items`, the body of
:meth:`devtensor.tensor.Tensor.__setitem__`)."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from devtensor import modes as _modes
from devtensor.arguments import list_index
from devtensor.dtypes import SCALAR_TYPES, plain_number
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DeviceMismatchError,
    IndexOutOfRangeError,
    NoDataError,
    ReadOnlyError,
    ScalarOverflowError,
    ShapeError,
)

if TYPE_CHECKING:
    from devtensor.device import Device
    from devtensor.dtypes import Scalar
    from devtensor.tensor import Tensor

__all__ = ["convert_index", "set_items"]


def convert_index(op: str, index: Any, device: Device) -> tuple[Any, bool]:
    """(index for the backing array, whether the result is a view)."""
    from devtensor.tensor import Tensor  # (tensor imports this module)

    parts = index if type(index) is tuple else (index,)
    out: list[Any] = []
    is_view = True
    for part in parts:
        if type(part) is int:  # (the common parts first: ints, slices and None take no other check)
            out.append(part)
            continue
        if type(part) is list:
            # As NumPy and PyTorch: a list of ints (or bools) is an advanced index, as the same integer (bool)
            # tensor would be; an empty list selects nothing.
            part = list_index(op, part)
        if type(part) is np.ndarray and part.dtype.kind in "iub":
            # As PyTorch: a NumPy index array indexes as a tensor would, copied to the indexed tensor's device.
            from devtensor.creation import asarray  # (creation imports tensor)

            part = asarray(part, device=device)
        if part is None or part is Ellipsis or type(part) is slice:
            out.append(part)
        elif isinstance(part, Tensor):
            if part._device is not device:
                raise DeviceMismatchError(f"{op}: index tensor is on {part._device}, expected {device}")
            if part.dtype.kind not in "iub":
                raise ArgumentTypeError(f"{op}: tensors used as indices must be integer or bool, got {part.dtype}")
            if part._backend.has_data:
                out.append(part._array)
            elif part.dtype.kind == "b":
                raise NoDataError(
                    f"{op}: a bool (mask) index on the meta device selects a data-dependent number of elements; "
                    "the result shape is unknown without data"
                )
            else:
                # Meta: the result shape depends on the index's shape only; its (absent) values do not matter.
                out.append(np.zeros(part._shape, np.intp))
            is_view = False
        elif isinstance(part, (bool, np.bool_)):
            out.append(bool(part))
            is_view = False
        else:
            try:
                out.append(operator.index(part))
            except TypeError:
                raise ArgumentTypeError(
                    f"{op}: only ints, slices, None, ..., and integer or bool tensors or NumPy arrays are valid "
                    f"indices, got {type(part).__name__} {part!r}"
                ) from None
    if is_view and Ellipsis not in out:
        # A trailing ``...`` makes NumPy return a 0-d view instead of a scalar for a full integer index.
        out.append(Ellipsis)
    return tuple(out), is_view


def set_items(self: Tensor, index: Any, value: Tensor | Scalar | np.ndarray[Any, Any] | np.generic) -> None:
    """``tensor[index] = value`` (:meth:`Tensor.__setitem__`): write ``value`` (a Python number, or a tensor on
    the same device broadcasting to the indexed shape) into the indexed elements, casting as NumPy's assignment
    does; bumps the version once. A NumPy
    scalar is written as its Python value; a NumPy array as a CPU tensor over its memory (into a CPU tensor
    only: DeviceMismatchError otherwise, as CuPy).

    As in NumPy and PyTorch, leading dimensions of length 1 of a tensor ``value`` are dropped before it is
    broadcast (``t[0:2] = ones(1, 2)`` works). Python numbers must be representable in the tensor's dtype
    (PyTorch's checked conversion): a complex number into a real tensor, an int out of the integer dtype's
    range, or a NaN/infinity into an integer tensor is an error (NumPy raises the same classes).

    Raises:
        ReadOnlyError: the tensor wraps read-only memory.
        MemoryOverlapError: the indexed elements overlap each other (a stride-0 dimension of length > 1,
            as in a broadcast view): the write would be ambiguous.
        ShapeError: ``value`` does not broadcast to the indexed shape.
        DeviceMismatchError: ``value`` or a tensor index on another device.
        ArgumentTypeError: ``value`` is neither a Tensor nor a Python number, or a bad index type.
        CastingError (TypeError): a complex Python number written into a real tensor.
        ScalarOverflowError (OverflowError): a Python int out of range, or an infinite float into an
            integer tensor.
        ValueError: a NaN written into an integer tensor; ArgumentValueError for a zero slice step.
        IndexError: an index out of range.
        NoDataError: a bool tensor index on a meta tensor (the indexed shape depends on data).
    Nothing is written, and the version counter does not change, when it raises.
    """
    from devtensor.tensor import (  # (tensor imports this module)
        Tensor,
        _device_guard,
        _Target,
        check_no_internal_overlap,
    )

    if _modes.ACTIVE[0] and _modes.run_indexing("setitem", self, (index, value)) is not _modes.NOT_HANDLED:
        return
    key, is_view = convert_index("__setitem__", index, self._device)
    if isinstance(value, (np.ndarray, np.generic)):
        from devtensor.numpy_values import setitem_value  # (it imports this module)

        value = setitem_value(value, self)  # a Tensor or a Python number
    elif not isinstance(value, Tensor) and type(value) not in SCALAR_TYPES:
        number = plain_number(value)  # (a subclass of a Python number, such as a tensor's size)
        if number is not None:
            value = number
    if isinstance(value, Tensor):
        if value._device is not self._device:
            raise DeviceMismatchError(
                f"__setitem__: argument 'value' is on {value._device}, expected {self._device} "
                "(the device of the tensor written to)"
            )
        source: Any = value._array
    elif type(value) in SCALAR_TYPES:
        from devtensor.meta import check_scalar_fits  # (meta imports this module)

        check_scalar_fits("__setitem__", value, self._dtype)  # type: ignore[arg-type]  # tested just above
        source = value
    else:
        raise ArgumentTypeError(
            f"__setitem__: argument 'value' must be a Tensor or a Python number, got {type(value).__name__}"
        )
    backend = self._backend
    if not backend.writeable(self._array) and backend.has_data:
        raise ReadOnlyError("__setitem__: the tensor written to is read-only (it wraps read-only memory)")
    guard = _device_guard(self._device)
    try:
        with guard:
            target = self._array[key]
    except (IndexError, OverflowError) as e:  # (OverflowError: NumPy's for an int in [2**63, 2**64))
        why = e if isinstance(e, IndexError) else "index out of bounds"
        raise IndexOutOfRangeError(f"__setitem__: {why} (tensor of shape {self.shape}, index {index!r})") from None
    except ValueError as e:  # e.g. a zero slice step (as __getitem__)
        raise ArgumentValueError(f"__setitem__: {e} (index {index!r})") from None
    except TypeError as e:  # a slice bound that is no int (t[1.5:]): NumPy's message names no op
        raise ArgumentTypeError(f"__setitem__: {e} (index {index!r})") from None
    vshape: tuple[int, ...] = source.shape if isinstance(value, Tensor) else ()
    tshape: tuple[int, ...] = getattr(target, "shape", ())
    # NumPy and PyTorch drop leading length-1 dimensions of the value before broadcasting it.
    stripped = vshape
    while len(stripped) > len(tshape) and stripped[0] == 1:
        stripped = stripped[1:]
    try:
        bshape = np.broadcast_shapes(stripped, tshape)
    except ValueError:
        bshape = None
    if bshape != tshape:
        raise ShapeError(
            f"__setitem__: argument 'value' of shape {vshape} cannot broadcast to the indexed shape {tshape}"
        )
    if backend.has_data:
        # A view target must not have internal overlap; an advanced-index target writes into self.
        check_no_internal_overlap("__setitem__", "self", self if not is_view else _Target(target))
        if stripped != vshape:
            source = source.reshape(stripped)
        try:
            with _device_guard(self._device):
                self._array[key] = source
        except (Warning, FloatingPointError):
            # NumPy reports a cast that overflows (as a warning made an error) after writing: the data
            # changed, so the version does too.
            self._storage.version += 1
            raise
        except OverflowError as e:
            raise ScalarOverflowError(f"__setitem__: {e} (tensor of dtype {self._dtype})") from None
    self._storage.version += 1
