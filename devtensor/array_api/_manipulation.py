"""The Array API standard's manipulation functions over devtensor's view and shape ops (``reshape``, ``permute``,
``cat``, ``stack``, ``flip``, ``broadcast_to``, ...): the results are views where the op makes views."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

import devtensor as _dt
from devtensor.array_api._naming import name_errors
from devtensor.dtypes import as_bool
from devtensor.errors import ArgumentValueError, ShapeError
from devtensor.meta import normalize_dim
from devtensor.tensor import Tensor

__all__ = [
    "broadcast_arrays",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "moveaxis",
    "permute_dims",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "tile",
    "unstack",
]


def _axes(op: str, axis: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    items = (axis,) if not isinstance(axis, Sequence) else tuple(axis)
    return tuple(normalize_dim(op, a, ndim) for a in items)


def broadcast_arrays(*arrays: Tensor) -> list[Tensor]:
    """The tensors broadcast against each other (views of the broadcast shape), NumPy's broadcasting.

    Raises:
        ShapeError: shapes that do not broadcast.
    """
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise ShapeError(
            f"broadcast_arrays: shapes {[list(a.shape) for a in arrays]} cannot be broadcast to a single shape"
        ) from None  # (the words of NumPy's and PyTorch's message, which callers match)
    return [_dt.broadcast_to(a, shape) for a in arrays]


def broadcast_to(x: Tensor, /, shape: Sequence[int]) -> Tensor:
    """``x`` broadcast to ``shape`` (a view): :func:`devtensor.broadcast_to`."""
    return _dt.broadcast_to(x, tuple(shape))


def concat(arrays: Sequence[Tensor], /, *, axis: int | None = 0) -> Tensor:
    """The tensors joined along ``axis`` (``None``: flattened first): :func:`devtensor.cat`."""
    items = list(arrays)
    if axis is None:
        return _dt.cat([_dt.reshape(a, (-1,)) for a in items], 0)
    return _dt.cat(items, axis)


def expand_dims(x: Tensor, /, axis: int = 0) -> Tensor:
    """``x`` with a new dimension of length 1 at ``axis`` (in ``[-ndim - 1, ndim]``): :func:`devtensor.unsqueeze`."""
    return _dt.unsqueeze(x, axis)


def flip(x: Tensor, /, *, axis: int | Sequence[int] | None = None) -> Tensor:
    """``x`` with the order of elements reversed along ``axis`` (all axes when None): :func:`devtensor.flip`."""
    dims = tuple(range(x.ndim)) if axis is None else _axes("flip", axis, x.ndim)
    return _dt.flip(x, dims)


def moveaxis(x: Tensor, source: int | Sequence[int], destination: int | Sequence[int], /) -> Tensor:
    """``x`` with the axes ``source`` moved to ``destination`` (a view), as NumPy's ``moveaxis``.

    Raises:
        ArgumentValueError: ``source`` and ``destination`` of different lengths, or repeated axes.
    """
    src = _axes("moveaxis", source, x.ndim)
    dst = _axes("moveaxis", destination, x.ndim)
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ArgumentValueError(f"moveaxis: invalid source {source!r} and destination {destination!r}")
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return _dt.permute(x, tuple(order))


def permute_dims(x: Tensor, /, axes: Sequence[int]) -> Tensor:
    """``x`` with its axes permuted (a view): :func:`devtensor.permute`."""
    return _dt.permute(x, tuple(axes))


def repeat(x: Tensor, repeats: int | Tensor, /, *, axis: int | None = None) -> Tensor:
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (``x`` flattened when None), as NumPy's
    ``repeat``: an int ``repeats`` is :func:`devtensor.repeat_interleave`; a tensor ``repeats`` gives a count per
    element (its values decide the shape; a one-element tensor serves every element) and runs through ops on
    ``x``'s device: the run ends (:func:`devtensor.cumsum`), each output position's source
    (:func:`devtensor.searchsorted`), then :func:`devtensor.index_select`.

    Raises:
        ArgumentValueError: negative repeats; a ``repeats`` tensor of the wrong length.
    """
    if axis is None:
        x = _dt.reshape(x, (-1,))
        axis = 0
    axis = normalize_dim("repeat", axis, x.ndim)
    n = x.shape[axis] if x.ndim else 1
    if not isinstance(repeats, Tensor):
        count = operator.index(repeats)
        if count < 0:
            raise ArgumentValueError(f"repeat: argument 'repeats' must be non-negative, got {count}")
        return _dt.repeat_interleave(x, count, axis)
    counts = _dt.reshape(repeats, (-1,))
    if counts.shape[0] == 1:
        counts = _dt.broadcast_to(counts, (n,))
    if counts.shape[0] != n:
        raise ArgumentValueError(f"repeat: argument 'repeats' has {counts.shape[0]} counts for an axis of length {n}")
    if n and bool((counts < 0).any()):
        raise ArgumentValueError(f"repeat: argument 'repeats' must be non-negative, got {counts.tolist()}")
    ends = _dt.cumsum(counts, 0, dtype="int64")
    total = int(ends[-1].item()) if n else 0
    positions = _dt.arange(total, dtype="int64", device=x.device)
    index = _dt.searchsorted(ends, positions, right=True)
    return _dt.index_select(x, axis, index)


def reshape(x: Tensor, /, shape: Sequence[int], *, copy: bool | None = None) -> Tensor:
    """``x`` with a new shape (one dim may be -1): a view when the layout allows (``copy=False`` requires one:
    :func:`devtensor.view`), a copy when ``copy`` is True."""
    target = tuple(shape)
    copy = as_bool("reshape", "copy", copy, optional=True)
    if copy is False:
        return _dt.view(x, target)
    result = _dt.reshape(x, target)
    return _dt.clone(result) if copy else result


def roll(x: Tensor, /, shift: int | Sequence[int], *, axis: int | Sequence[int] | None = None) -> Tensor:
    """``x`` with its elements shifted by ``shift`` along ``axis`` (the flattened tensor when None), wrapping
    around, as NumPy's ``roll``: :func:`devtensor.roll`."""
    dims = None if axis is None else (axis if isinstance(axis, int) else tuple(axis))
    return _dt.roll(x, shift if isinstance(shift, int) else tuple(shift), dims)


def squeeze(x: Tensor, /, axis: int | Sequence[int]) -> Tensor:
    """``x`` without the length-1 dimensions ``axis`` (a view).

    Raises:
        ShapeError: a dimension in ``axis`` whose length is not 1 (the standard requires the error; PyTorch would
            leave it).
    """
    axes = _axes("squeeze", axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ShapeError(f"squeeze: axis {a} of shape {x.shape} has length {x.shape[a]}, not 1")
    return _dt.squeeze(x, axes)


def stack(arrays: Sequence[Tensor], /, *, axis: int = 0) -> Tensor:
    """The tensors joined along a new axis ``axis``: :func:`devtensor.stack`."""
    return _dt.stack(list(arrays), axis)


def tile(x: Tensor, repetitions: Sequence[int], /) -> Tensor:
    """``x`` repeated ``repetitions`` times along each axis (leading ones added to the shorter of the two), as
    NumPy's ``tile``: :func:`devtensor.tile`."""
    return _dt.tile(x, tuple(repetitions))


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The views of ``x`` along ``axis``, one per index.

    Raises:
        IndexError: ``axis`` out of range (a 0-d tensor has none).
    """
    a = normalize_dim("unstack", axis, x.ndim)
    return tuple(x[(slice(None),) * a + (i,)] for i in range(x.shape[a]))


# Errors name the standard's function and arguments (xp.concat's 'axis', not cat's 'dim').
name_errors(globals(), __all__)
