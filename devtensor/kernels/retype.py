"""``view(dtype)``'s meta part (:func:`devtensor.kernels.shape.view`, PyTorch's dtype overload of ``Tensor.view``):
whether view's argument spells a dtype, and the spec of the view that reads ``self``'s bits as that dtype, checked by
PyTorch's rule for a different itemsize. The kernel is view's own (``array.view(dtype)`` for a :class:`Retype`
plan)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from devtensor.dtypes import to_dtype
from devtensor.errors import ViewError
from devtensor.tensor import Tensor
from devtensor.views import ViewSpec

__all__ = ["Retype", "dtype_spelling", "retype_spec"]


def _fmt(shape: Sequence[int]) -> str:
    return str(list(shape))


def dtype_spelling(shape: object) -> tuple[object] | None:
    """``(spelling,)`` when view's ``shape`` argument is a dtype's spelling rather than sizes: a dtype object, a
    type (``float``, ``np.float32``; an unsupported one is refused by to_dtype, naming ``dtype``) or a string, as
    passed to the functional or as the method's one spread argument (``t.view(float)`` binds ``(float,)``)."""
    if isinstance(shape, tuple) and len(shape) == 1:
        shape = shape[0]
    if isinstance(shape, (np.dtype, type, str)):
        return (shape,)
    return None


class Retype(NamedTuple):
    """The plan of ``view(dtype)``: the dtype the array is read as (the kernel's ``array.view(dtype)``)."""

    dtype: np.dtype[Any]


def retype_spec(self: Tensor, spelling: object) -> ViewSpec:
    """The spec of ``self.view(dtype)`` (PyTorch's rule, :func:`view`); ViewError naming the condition that fails."""
    new = to_dtype(spelling, op="view", arg="dtype")
    old = self._dtype
    shape = self._shape
    if new.itemsize == old.itemsize:
        return ViewSpec(shape, Retype(new), dtype=new)
    what = f"a tensor of dtype {old.name} (itemsize {old.itemsize}) as dtype {new.name} (itemsize {new.itemsize})"
    if not shape:
        raise ViewError(
            f"view: argument 'dtype' = {new.name}: cannot view {what}: the tensor is 0-d, and a "
            "different itemsize changes the size of the last dimension"
        )
    strides = self.stride()
    if strides[-1] != 1:
        raise ViewError(
            f"view: argument 'dtype' = {new.name}: cannot view {what}: the last dimension's stride "
            f"must be 1, the tensor's strides are {_fmt(strides)}"
        )
    if new.itemsize < old.itemsize:
        ratio = old.itemsize // new.itemsize
        return ViewSpec((*shape[:-1], shape[-1] * ratio), Retype(new), dtype=new)
    ratio = new.itemsize // old.itemsize
    if shape[-1] % ratio:
        raise ViewError(
            f"view: argument 'dtype' = {new.name}: cannot view {what}: the last dimension's size "
            f"({shape[-1]}) must be a multiple of {ratio}"
        )
    for d, s in enumerate(strides[:-1]):
        if s % ratio and shape[d] != 1:
            raise ViewError(
                f"view: argument 'dtype' = {new.name}: cannot view {what}: the stride of dimension "
                f"{d} ({s}) must be a multiple of {ratio}"
            )
    if self._backend.address(self._array) % new.itemsize:
        raise ViewError(
            f"view: argument 'dtype' = {new.name}: cannot view {what}: the first element's offset "
            f"in its storage must be a multiple of {ratio} elements"
        )
    return ViewSpec((*shape[:-1], shape[-1] // ratio), Retype(new), dtype=new)
