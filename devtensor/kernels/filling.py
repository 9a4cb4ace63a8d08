"""PyTorch's inplace writes of a whole tensor: ``fill_``, ``zero_`` and ``copy_``.

Each is a structured op whose only public variant is the inplace one (``t.fill_(v)``, ``dt.fill_(t, v)``; the
functional ``fill``/``zero``/``copy`` exist for dispatch, modes and tests, ``public_functional=False``, as the
samplers of :mod:`devtensor.kernels.random`), so the common code gives them PyTorch's inplace rules: a read-only
or expanded (stride-0) ``self`` is refused, a ``src`` partially overlapping ``self`` is a MemoryOverlapError, a
call that raises writes nothing, and a successful one bumps the version once. One kernel for both devices (NumPy
or CuPy as ``xp``).
"""

from __future__ import annotations

import warnings
from types import ModuleType

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dtypes import python_scalar
from devtensor.errors import ShapeError
from devtensor.kernels.ufunc_family import D
from devtensor.meta import broadcast_shapes, check_scalar_fits
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import Tensor, TensorMeta, TensorMetaOrScalar
from devtensor.typed import ConstOut

__all__ = ["copy", "fill", "zero"]


@structured_op("fill", out_may_be_input=True, public_functional=False)
def fill(self: TensorMeta, value: TensorMetaOrScalar) -> TensorSpec:
    """``self.fill_(value)``: every element of ``self`` set to ``value`` (``torch.Tensor.fill_``; NumPy's
    ``ndarray.fill``). ``value`` is a Python number (or NumPy scalar), checked to fit ``self``'s dtype as PyTorch
    converts scalars, or a 0-d tensor on ``self``'s device, cast as ``Tensor.to`` casts (NumPy's assignment).

    Shapes: any ``self``. Dtypes: all. Devices: cpu, cuda; meta checks only.

    Raises:
        ShapeError (ValueError): ``value`` a tensor of more than 0 dims.
        ScalarOverflowError (OverflowError), CastingError (TypeError), ArgumentValueError (ValueError): a number
            that does not fit the dtype (an int out of range, a complex into a real dtype, NaN into an integer).
        DeviceMismatchError (ValueError): a tensor ``value`` on another device.
        MemoryOverlapError (ValueError): a ``value`` that is an element of ``self`` (``t.fill_(t[0, 1])``; the
            common inplace rule on tensor arguments, where PyTorch reads the value first): pass ``t[0, 1].item()``
            or a clone.
    """
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(
                f"fill_: only supports a 0-dimension value tensor, but got a tensor with {value.ndim} dimension(s) "
                f"(shape {list(value.shape)})"
            )
    else:
        check_scalar_fits("fill_", python_scalar("fill_", "value", value), self.dtype)
    return self.shape, self.dtype


@_ks.fill.xp
def _fill(xp: ModuleType, self: D, value: D | bool | int | float | complex, *, out: ConstOut[D]) -> None:
    if isinstance(value, Tensor):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # (the cast Tensor.to makes)
            xp.copyto(out.array, value._array, casting="unsafe")
    else:
        out.array.fill(python_scalar("fill_", "value", value))


@structured_op("zero", out_may_be_input=True, public_functional=False)
def zero(self: TensorMeta) -> TensorSpec:
    """``self.zero_()``: every element of ``self`` set to 0 (``torch.Tensor.zero_``). Shapes, dtypes: any.
    Devices: cpu, cuda; meta checks only."""
    return self.shape, self.dtype


@_ks.zero.xp
def _zero(xp: ModuleType, self: D, *, out: ConstOut[D]) -> None:
    out.array.fill(0)


@structured_op("copy", out_may_be_input=True, public_functional=False)
def copy(self: TensorMeta, src: TensorMeta, non_blocking: bool = False) -> TensorSpec:
    """``self.copy_(src, non_blocking=False)``: ``src``'s values written into ``self`` (``torch.Tensor.copy_``):
    ``src`` broadcasts to ``self``'s shape and is cast to ``self``'s dtype as ``Tensor.to`` casts (NumPy's
    ``astype``: any dtype into any; a complex ``src`` into a real ``self`` keeps the real part, as PyTorch).
    ``non_blocking`` is accepted and has no effect (devtensor's copies are synchronous).

    Shapes: ``src`` broadcastable to ``self``. Dtypes: any. Devices: cpu, cuda, both tensors on one device (a
    copy between devices is ``src.to(self.device)`` first; PyTorch's ``copy_`` moves it); meta checks only.

    Raises:
        ShapeError (ValueError): ``src`` does not broadcast to ``self``'s shape.
        MemoryOverlapError (ValueError): ``src`` partially overlaps ``self`` (PyTorch's rule).
        DeviceMismatchError (ValueError): ``src`` on another device.
    """
    if src.shape != self.shape and broadcast_shapes("copy_", self.shape, src.shape) != self.shape:
        raise ShapeError(
            f"copy_: the source of shape {list(src.shape)} must be broadcastable to self's shape {list(self.shape)}"
        )
    return self.shape, self.dtype


@_ks.copy.xp
def _copy(xp: ModuleType, self: D, src: D, non_blocking: bool, *, out: ConstOut[D]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # (PyTorch keeps the real part too)
        xp.copyto(out.array, src._array, casting="unsafe")
