"""Shape ops that copy: ``clone``, ``flip``, ``cat`` and ``stack``.

Unlike the view ops of :mod:`devtensor.kernels.shape` these write new memory: each is a structured op (meta
function + one kernel for both devices, NumPy or CuPy as ``xp``) with functional and out variants and PyTorch's
out rules (see :mod:`devtensor.structured`). Dims are normalised by :func:`devtensor.meta.normalize_dim`.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import result_type
from devtensor.errors import ArgumentValueError, ShapeError
from devtensor.kernels.ufunc_family import D
from devtensor.meta import memoized, normalize_dim, normalize_dims, offers_direct, offers_memo
from devtensor.structured import PlannedSpec, TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = ["cat", "clone", "flip", "stack"]


def _fmt(shape: Sequence[int]) -> str:
    return str(list(shape))


# --- clone, flip (structured: new data, with out) -------------------------------------------------------------


@structured_op("clone", inplace=False, out_may_be_input=True)
def clone(self: TensorMeta) -> TensorSpec:
    """A copy of ``self`` with a new storage (``torch.clone``): same shape, dtype and device, C-contiguous.
    Out variant: ``clone(t, out=o)`` copies into ``o`` (same_kind cast; ``o`` may be ``t`` itself).
    """
    return self.shape, self.dtype


@_ks.clone.xp
def _clone(xp: ModuleType, self: D, *, out: ConstOut[D]) -> None:
    xp.copyto(out.array, self._array, casting="same_kind")


@structured_op("flip", inplace=False)
def flip(self: TensorMeta, dims: int | Sequence[int]) -> PlannedSpec[tuple[int, ...]]:
    """A copy of ``self`` with the order of elements reversed along ``dims`` (an int or a sequence of ints;
    ``torch.flip``, ``np.flip``); a new storage. Functional and out variants.

    Raises:
        IndexError: a dim out of range.  ValueError: a repeated dim.  ArgumentTypeError: ``dims`` not ints.
    """
    return _flip_spec(self, dims)


@memoized
def _flip_spec(self: TensorMeta, dims: int | Sequence[int]) -> PlannedSpec[tuple[int, ...]]:
    axes = normalize_dims("flip", dims, len(self.shape), "dims")
    # The plan: the axes to flip (none for a 0-d tensor, whose dims 0 and -1 name no axis of its array).
    return PlannedSpec(self.shape, self.dtype, axes if self.shape else ())


@_ks.flip.xp
def _flip(xp: ModuleType, self: D, dims: int | Sequence[int], *, plan: tuple[int, ...], out: ConstOut[D]) -> None:
    a = self._array
    xp.copyto(out.array, xp.flip(a, axis=plan) if plan else a, casting="same_kind")


# --- cat, stack -----------------------------------------------------------------------------------------------


def _list_meta(op: str, tensors: Sequence[TensorMeta]) -> None:
    if not tensors:
        raise ArgumentValueError(f"{op}: expected a non-empty list of Tensors (argument 'tensors')")


#: cat's direct path: its CPU kernel is one np.concatenate(arrays, dim, out) call (without the dispatcher).
_CAT_DIRECT: Final[list[Any]] = [None, getattr(np.concatenate, "_implementation", np.concatenate)]


@memoized
def _cat_spec(tensors: Sequence[TensorMeta], dim: int = 0) -> TensorSpec:
    _list_meta("cat", tensors)
    first = tensors[0].shape
    for i, t in enumerate(tensors):
        if not t.shape:
            raise ShapeError(f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated")
        if len(t.shape) != len(first):
            raise ShapeError(
                f"cat: tensors must have the same number of dimensions: got {len(first)} and {len(t.shape)} "
                f"(tensors[0] of shape {_fmt(first)}, tensors[{i}] of shape {_fmt(t.shape)})"
            )
    d = normalize_dim("cat", dim, len(first), "dim")
    total = 0
    for i, t in enumerate(tensors):
        s = t.shape
        if s[:d] != first[:d] or s[d + 1 :] != first[d + 1 :]:
            raise ShapeError(
                f"cat: sizes of tensors must match except in dimension {d}: tensors[0] has shape {_fmt(first)} "
                f"and tensors[{i}] has shape {_fmt(s)}"
            )
        total += s[d]
    dtype = tensors[0].dtype
    if any(t.dtype is not dtype for t in tensors):
        dtype = result_type(*(t.dtype for t in tensors))
    return (*first[:d], total, *first[d + 1 :]), dtype


@structured_op("cat", inplace=False, method=False)
@offers_direct(_CAT_DIRECT)
@offers_memo(_cat_spec)
def cat(tensors: Sequence[TensorMeta], dim: int = 0) -> TensorSpec:
    """The tensors joined along the existing dim ``dim`` (``torch.cat``, ``np.concatenate``): all must have
    the same number of dims (at least 1) and equal sizes except in ``dim``. The result dtype promotes all the
    dtypes (NumPy's ``result_type``); a new storage. Functional and out variants (an out overlapping an input
    is a MemoryOverlapError). All tensors on one device.

    Raises:
        ShapeError: a 0-d tensor, different numbers of dims, or sizes that differ outside ``dim``; the message
            names the shapes and the position.
        ValueError: an empty list.  IndexError: ``dim`` out of range.
    """
    return _cat_spec(tensors, dim)


@structured_op("stack", inplace=False, method=False)
def stack(tensors: Sequence[TensorMeta], dim: int = 0) -> TensorSpec:
    """The tensors joined along a new dim inserted at ``dim`` (``torch.stack``, ``np.stack``): all must have
    the same shape; ``dim`` is in ``[-ndim - 1, ndim]``. The result dtype promotes all the dtypes; a new
    storage. Functional and out variants. All tensors on one device.

    Raises:
        ShapeError: shapes that differ (the message names them and the positions).
        ValueError: an empty list.  IndexError: ``dim`` out of range.
    """
    return _stack_spec(tensors, dim)


@memoized
def _stack_spec(tensors: Sequence[TensorMeta], dim: int = 0) -> TensorSpec:
    _list_meta("stack", tensors)
    first = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != first:
            raise ShapeError(
                f"stack: expects each tensor to be equal size, but got {_fmt(first)} at entry 0 and "
                f"{_fmt(t.shape)} at entry {i}"
            )
    d = normalize_dim("stack", dim, len(first) + 1, "dim", new=True)
    dtype = tensors[0].dtype
    if any(t.dtype is not dtype for t in tensors):
        dtype = result_type(*(t.dtype for t in tensors))
    return (*first[:d], len(tensors), *first[d:]), dtype


@_ks.stack.xp
@_ks.cat.xp
def _join(xp: ModuleType, tensors: Sequence[D], dim: int, *, out: ConstOut[D]) -> None:
    arrays = [t._array for t in tensors]
    o: Any = out.array
    axis = dim if type(dim) is int else operator.index(dim)
    # cat's result has its inputs' rank, stack's one more (its meta functions checked the shapes): one kernel.
    if xp is np:
        if o.ndim == arrays[0].ndim:
            _np_concatenate(arrays, axis, o)  # (positional: NumPy parses it faster)
        else:
            np.stack(arrays, axis=axis, out=o)
        return
    fn = xp.concatenate if o.ndim == arrays[0].ndim else xp.stack
    # CuPy's out= casts no dtype: an out of another dtype gets the result cast into it.
    if o.dtype == np.result_type(*(a.dtype for a in arrays)):
        fn(arrays, axis=axis, out=o)
    else:
        xp.copyto(o, fn(arrays, axis=axis), casting="same_kind")


#: np.concatenate without its __array_function__ dispatcher (the kernel passes it plain arrays only).
_np_concatenate: Final = _CAT_DIRECT[1]
_CAT_DIRECT[0] = cat.table.kernels.get(DispatchKey.CPU)
