"""Stride arithmetic of views, in elements: the C-contiguous strides of a shape, and PyTorch's rule for the
strides of a view of another shape on the same memory (``view``, ``reshape``). Pure functions of shapes and
strides, used by the view ops' meta functions (:mod:`devtensor.kernels.shape`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["contiguous_strides", "view_strides"]


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The C-contiguous strides, in elements, of ``shape`` (size-0 and size-1 dims count as 1)."""
    strides: list[int] = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def view_strides(
    old_shape: tuple[int, ...], old_strides: tuple[int, ...], new_shape: tuple[int, ...]
) -> tuple[int, ...] | None:
    """The strides (in elements) of a view of shape ``new_shape`` on memory laid out as ``old_shape`` with
    ``old_strides``, or None when no such view exists (PyTorch's rule for ``view``).

    The old dims are grouped into chunks that are contiguous with each other (``stride[d] == stride[d + 1] *
    size[d + 1]``); a view exists when every chunk is exactly covered by consecutive new dims. Tensors without
    elements can take any shape.
    """
    if math.prod(old_shape) == 0:
        return old_strides if old_shape == new_shape else contiguous_strides(new_shape)
    if not old_shape:
        return (1,) * len(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = old_strides[d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)
