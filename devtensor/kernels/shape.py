"""The shape and view family: reshape, view, transpose, permute, flatten, squeeze, unsqueeze, expand,
broadcast_to, contiguous, split, chunk (view ops), and clone, flip, cat, stack (structured ops).

Semantics follow PyTorch's ops of the same names (NumPy's where PyTorch defers to it, e.g. dtype promotion in
``cat``/``stack``).

**View ops** (:mod:`devtensor.views`) return tensors sharing memory, storage and version counter with their base:
a write through the view bumps the base's version and the other way round. They have a functional variant and a
Tensor method, no out and no inplace variant. Some produce new data where a view cannot express the result:

* always views: ``view`` (an error when impossible), ``transpose``, ``permute``, ``squeeze``, ``unsqueeze``,
  ``expand``, ``broadcast_to``, ``split``, ``chunk``;
* views when possible, else a copy with a new storage (version 0): ``reshape`` and ``flatten`` (a view exactly
  when PyTorch's ``view`` would succeed), ``contiguous`` (a view, of the same memory, when the tensor is
  C-contiguous already).

**Copy ops** are structured ops (:mod:`devtensor.structured`) with functional and out variants: ``clone``,
``flip``, ``cat``, ``stack``. Their results always have a new storage. They live in
:mod:`devtensor.kernels.copying` (re-exported here).

Dims may be negative (counting from the end); a 0-d tensor accepts the dims 0 and -1 where PyTorch's does.
Errors: IndexError for dims out of range, :class:`~devtensor.errors.ShapeError` (a ValueError) for shapes that
do not fit, :class:`~devtensor.errors.ViewError` (a ShapeError and a RuntimeError) for an impossible view,
ArgumentTypeError (a TypeError) for arguments of the wrong type; each names the op, the argument and the value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from devtensor.dtypes import DTypeLike
from devtensor.errors import ArgumentValueError, ShapeError, ViewError
from devtensor.kernels.retype import Retype, dtype_spelling, retype_spec
from devtensor.meta import int_arg, ints_arg, normalize_dim, normalize_dims
from devtensor.strides import view_strides
from devtensor.tensor import Tensor
from devtensor.tensor_protocols import TRANSPOSE_2D
from devtensor.views import RESHAPE_KERNEL, RESHAPE_SPECS, ViewSpec, view_op

__all__ = [
    "broadcast_to",
    "cat",
    "chunk",
    "clone",
    "contiguous",
    "expand",
    "flatten",
    "flip",
    "permute",
    "reshape",
    "split",
    "squeeze",
    "stack",
    "transpose",
    "unsqueeze",
    "view",
]


# --- argument helpers ---------------------------------------------------------------------------------------


def _fmt(shape: Sequence[int]) -> str:
    return str(list(shape))


# (requested sizes, tensor shape) -> result shape, for calls that succeeded (errors are recomputed).
_infer_cache: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, ...]] = {}
_MAX_CACHE = 4096


def _infer_size(op: str, arg: str, shape: object, tensor_shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with its one ``-1`` inferred from the number of elements (PyTorch's ``infer_size``); cached."""
    sizes = ints_arg(op, arg, shape)
    key = (sizes, tensor_shape)
    hit = _infer_cache.get(key)
    if hit is not None:
        return hit
    result = _infer_size_uncached(op, arg, sizes, tensor_shape)
    if len(_infer_cache) >= _MAX_CACHE:
        _infer_cache.clear()
    _infer_cache[key] = result
    return result


def _infer_size_uncached(op: str, arg: str, sizes: tuple[int, ...], tensor_shape: tuple[int, ...]) -> tuple[int, ...]:
    numel = math.prod(tensor_shape)
    infer = -1
    known = 1
    for i, n in enumerate(sizes):
        if n == -1:
            if infer >= 0:
                raise ShapeError(f"{op}: only one dimension can be inferred (argument '{arg}' = {_fmt(sizes)})")
            infer = i
        elif n < 0:
            raise ShapeError(f"{op}: invalid shape dimension {n} (argument '{arg}' = {_fmt(sizes)})")
        else:
            known *= n
    if infer >= 0:
        if known == 0:
            raise ShapeError(
                f"{op}: cannot reshape a tensor of {numel} elements into shape {_fmt(sizes)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if numel % known == 0:
            return (*sizes[:infer], numel // known, *sizes[infer + 1 :])
    elif known == numel:
        return sizes
    raise ShapeError(
        f"{op}: shape {_fmt(sizes)} is invalid for a tensor of {numel} elements (shape {_fmt(tensor_shape)})"
    )


def _as_strided(xp: ModuleType, array: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    item = array.dtype.itemsize
    return xp.lib.stride_tricks.as_strided(array, shape=shape, strides=tuple(s * item for s in strides))


# --- reshape, view, flatten -----------------------------------------------------------------------------------

# plan: the shape itself for a C-contiguous base (the array's own reshape is a view: the common case, known by
# the plan's exact type), else a _Layout: the strides PyTorch's rule computed for a view, or None for a copy.


class _Layout(NamedTuple):
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None


_contiguous_specs: dict[tuple[int, ...], ViewSpec] = {}
_ndarray = np.ndarray


def _reshape_spec(self: Tensor, shape: tuple[int, ...]) -> ViewSpec:
    if self._backend.is_contiguous(self._array):
        spec = _contiguous_specs.get(shape)
        if spec is None:
            if len(_contiguous_specs) >= _MAX_CACHE:
                _contiguous_specs.clear()
            spec = _contiguous_specs[shape] = ViewSpec(shape, shape)
        return spec
    strides = view_strides(self.shape, self.stride(), shape)
    return ViewSpec(shape, _Layout(shape, strides), copy=strides is None)


def _reshape_kernel(xp: ModuleType, array: Any, plan: Any) -> Any:  # (a shape, a _Layout or view's Retype)
    if type(plan) is tuple:
        return array.reshape(plan)
    if type(plan) is Retype:
        return array.view(plan.dtype)
    shape, strides = plan
    if strides is not None:
        return _as_strided(xp, array, shape, strides)
    return array.copy(order="C").reshape(shape)


def _remember(sizes: tuple[int, ...], self: Tensor, spec: ViewSpec) -> ViewSpec:
    """``spec`` (of ``self`` reshaped to ``sizes`` as asked), kept in views.RESHAPE_SPECS (by the sizes as asked
    and the tensor's shape) for the inline lookup of reshape's and view's metas and fronts when it is a
    contiguous tensor's."""
    if type(spec.plan) is tuple:
        if len(RESHAPE_SPECS) >= _MAX_CACHE:
            RESHAPE_SPECS.clear()
        RESHAPE_SPECS[sizes, self._shape] = spec
    return spec


@view_op(varargs="shape")
def reshape(self: Tensor, shape: Sequence[int]) -> ViewSpec:
    """``self`` with the shape ``shape`` (one entry may be -1: inferred from the number of elements), in C
    order (``torch.reshape``, ``np.reshape``). A view sharing storage and version counter when the strides
    allow it (exactly when ``view`` would succeed), else a C-contiguous copy with a new storage.
    ``t.reshape(2, 3)`` is ``t.reshape((2, 3))``. Any dtype and device; meta tensors give the shape.

    Raises:
        ShapeError: the number of elements differs, several -1, a -1 that is ambiguous (no elements), or a
            negative size.
        ArgumentTypeError: ``shape`` is not a sequence of ints.
    """
    if type(shape) is tuple:
        # (the common case, a contiguous tensor's spec by one lookup on the int sizes and the shape, inline)
        for size in shape:
            if type(size) is not int:
                break
        else:
            spec = RESHAPE_SPECS.get((shape, self._shape))
            # (C-contiguity: a NumPy array's own flag, read inline; other arrays ask their backend)
            a = self._array
            if spec is not None and ((type(a) is _ndarray and a.flags.c_contiguous) or self._backend.is_contiguous(a)):
                return spec
    sizes = ints_arg("reshape", "shape", shape)
    return _remember(sizes, self, _reshape_spec(self, _infer_size("reshape", "shape", sizes, self._shape)))


@view_op(name="view", varargs="shape")
def view(self: Tensor, shape: Sequence[int] | DTypeLike) -> ViewSpec:
    """A view of ``self`` with the shape ``shape`` (one entry may be -1), in C order, sharing storage and
    version counter (``torch.Tensor.view``). ``t.view(2, 3)`` is ``t.view((2, 3))``. Meta tensors report
    C-contiguous strides, so on them a view is possible whenever the sizes fit.

    ``t.view(dtype)`` (PyTorch's other overload, NumPy's ``ndarray.view(dtype)``): the same memory read as
    ``dtype`` (a dtype, a NumPy scalar type, ``bool``/``int``/``float``/``complex`` or a dtype name, as ``dtype=``
    takes), sharing storage and version counter. The same itemsize keeps the shape and strides (a 0-d tensor
    too); a different itemsize scales the last dimension by the ratio of the itemsizes, and needs ``self`` to
    have at least one dimension whose stride is 1; going to a larger itemsize, the last size, the other strides
    and the first element's address must be multiples of the ratio (of the new itemsize, for the address: as
    PyTorch's storage offset). Given positionally only (``dtype=`` as a keyword is not taken: README, choices).

    Raises:
        ViewError (a ShapeError and a RuntimeError): the strides of ``self`` cannot express the new shape
            (at least one dimension spans across two contiguous subspaces); ``reshape`` copies instead; or,
            for a dtype, a layout the itemsize change does not fit (named above).
        ShapeError, ArgumentTypeError: as ``reshape``; ArgumentTypeError: a type or string naming no supported
            dtype.
    """
    if type(shape) is tuple:
        for size in shape:  # (reshape's inline lookup: the spec of a contiguous tensor is the same for both)
            if type(size) is not int:
                break
        else:
            spec = RESHAPE_SPECS.get((shape, self._shape))
            # (C-contiguity: a NumPy array's own flag, read inline; other arrays ask their backend)
            a = self._array
            if spec is not None and ((type(a) is _ndarray and a.flags.c_contiguous) or self._backend.is_contiguous(a)):
                return spec
    spelling = dtype_spelling(shape)
    if spelling is not None:
        return retype_spec(self, spelling[0])
    sizes = ints_arg("view", "shape", shape)
    new = _infer_size("view", "shape", sizes, self._shape)
    spec = _reshape_spec(self, new)
    if spec.copy:
        raise ViewError(
            f"view: view size is not compatible with input tensor's size and stride (at least one dimension spans "
            f"across two contiguous subspaces): a tensor of shape {_fmt(self.shape)} and strides "
            f"{_fmt(self.stride())} cannot be viewed as shape {_fmt(new)}; use .reshape(...) instead"
        )
    return _remember(sizes, self, spec)


@view_op()
def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> ViewSpec:
    """``self`` with the dims ``start_dim..end_dim`` (inclusive) merged into one (``torch.flatten``); a 0-d
    tensor gives shape ``[1]``. A view when the strides allow it (as ``reshape``), else a copy with a new storage.

    Raises:
        IndexError: a dim out of range.  ValueError: ``start_dim`` comes after ``end_dim``.
    """
    shape = self.shape
    key = (shape, start_dim, end_dim) if type(start_dim) is int and type(end_dim) is int else None
    if key is not None:
        hit = _flatten_shapes.get(key)
        if hit is not None:
            return _reshape_spec(self, hit)
    new = _flatten_shape(shape, start_dim, end_dim)
    if key is not None:
        if len(_flatten_shapes) >= _MAX_CACHE:
            _flatten_shapes.clear()
        _flatten_shapes[key] = new
    return _reshape_spec(self, new)


_flatten_shapes: dict[tuple[tuple[int, ...], int, int], tuple[int, ...]] = {}


def _flatten_shape(shape: tuple[int, ...], start_dim: int, end_dim: int) -> tuple[int, ...]:
    start = normalize_dim("flatten", start_dim, len(shape), "start_dim")
    end = normalize_dim("flatten", end_dim, len(shape), "end_dim")
    if start > end:
        raise ArgumentValueError(
            f"flatten: start_dim cannot come after end_dim (start_dim={start_dim}, end_dim={end_dim} for a tensor "
            f"of shape {_fmt(shape)})"
        )
    if not shape:
        return (1,)
    return (*shape[:start], math.prod(shape[start : end + 1]), *shape[end + 1 :])


for _op in (reshape, view, flatten):
    _op.impl("cpu", "cuda")(_reshape_kernel)
RESHAPE_KERNEL[0] = _reshape_kernel  # (the fronts of reshape and view call array.reshape while it is the handler)


# --- transpose, permute ---------------------------------------------------------------------------------------


def _transpose_kernel(xp: ModuleType, array: Any, plan: tuple[int, ...]) -> Any:
    if plan is _SWAP_2D:
        return array.T  # (the same view as transpose((1, 0)), for a third of the time)
    return array.transpose(plan)


_SWAP_2D = (1, 0)  # the plan of every 2-d transpose (the meta hands this one object: known by identity)


@view_op()
def transpose(self: Tensor, dim0: int, dim1: int) -> ViewSpec:
    """A view of ``self`` with the dims ``dim0`` and ``dim1`` swapped (``torch.transpose``, ``np.swapaxes``),
    sharing storage and version counter. A 0-d tensor takes dims 0/-1 and gives itself.

    Raises:
        IndexError: a dim out of range.  ArgumentTypeError: a dim that is not an int.
    """
    shape = self._shape  # (the slot: no property frame)
    key = (shape, dim0, dim1) if type(dim0) is int and type(dim1) is int else None
    if key is not None:
        hit = _transpose_specs.get(key)
        if hit is not None:
            return hit
    ndim = len(shape)
    d0 = normalize_dim("transpose", dim0, ndim, "dim0")
    d1 = normalize_dim("transpose", dim1, ndim, "dim1")
    order = list(range(ndim))
    if ndim:
        order[d0], order[d1] = order[d1], order[d0]
    plan = tuple(order)
    spec = ViewSpec(tuple(shape[d] for d in order), _SWAP_2D if plan == _SWAP_2D else plan)
    if key is not None:
        if len(_transpose_specs) >= _MAX_CACHE:
            _transpose_specs.clear()
        _transpose_specs[key] = spec
    return spec


_transpose_specs: dict[tuple[tuple[int, ...], int, int], ViewSpec] = {}


@view_op(varargs="dims")
def permute(self: Tensor, dims: Sequence[int]) -> ViewSpec:
    """A view of ``self`` with its dims reordered: result dim ``i`` is ``self``'s dim ``dims[i]``
    (``torch.permute``, ``np.transpose``), sharing storage and version counter. ``t.permute(1, 0)`` is
    ``t.permute((1, 0))``.

    Raises:
        ShapeError: ``len(dims)`` differs from ``self.ndim``.  ValueError: a repeated dim.
        IndexError: a dim out of range.
    """
    ndim = len(self.shape)
    raw = ints_arg("permute", "dims", dims)
    if len(raw) != ndim:
        raise ShapeError(
            f"permute: the number of dims ({len(raw)}, argument 'dims' = {_fmt(raw)}) does not match the number "
            f"of dimensions of the tensor ({ndim}, shape {_fmt(self.shape)})"
        )
    order = normalize_dims("permute", raw, ndim, "dims", allow_int=False) if ndim else ()
    return ViewSpec(tuple(self.shape[d] for d in order), order)


for _op in (transpose, permute):
    _op.impl("cpu", "cuda")(_transpose_kernel)
TRANSPOSE_2D[:] = [transpose.table.handlers, _transpose_kernel]  # (x.T makes the view itself meanwhile)


# --- squeeze, unsqueeze ---------------------------------------------------------------------------------------


def _squeeze_kernel(xp: ModuleType, array: Any, plan: tuple[int, ...]) -> Any:
    return array.squeeze(axis=plan) if plan else array.view()


@view_op()
def squeeze(self: Tensor, dim: int | Sequence[int] | None = None) -> ViewSpec:
    """A view of ``self`` without its size-1 dims: all of them (``dim=None``), or those among ``dim`` (an int
    or a sequence); as PyTorch's ``squeeze``, a named dim whose size is not 1 is left as is (NumPy would raise).
    Shares storage and version counter.

    Raises:
        IndexError: a dim out of range.  ValueError: a repeated dim.
    """
    shape = self.shape
    if dim is None:
        drop = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        named = normalize_dims("squeeze", dim, len(shape), "dim")
        drop = tuple(sorted(d for d in named if shape and shape[d] == 1))
    return ViewSpec(tuple(n for i, n in enumerate(shape) if i not in drop), drop)


@view_op()
def unsqueeze(self: Tensor, dim: int) -> ViewSpec:
    """A view of ``self`` with a size-1 dim inserted at ``dim`` (``torch.unsqueeze``, ``np.expand_dims``);
    ``dim`` is in ``[-ndim - 1, ndim]``. Shares storage and version counter.

    Raises:
        IndexError: ``dim`` out of range.  ArgumentTypeError: ``dim`` is not an int.
    """
    shape = self._shape
    key = (shape, dim) if type(dim) is int else None
    spec = _unsqueeze_specs.get(key)
    if spec is None:
        d = normalize_dim("unsqueeze", dim, len(shape) + 1, "dim", new=True)
        spec = ViewSpec((*shape[:d], 1, *shape[d:]), d)
        if key is not None:
            if len(_unsqueeze_specs) >= _MAX_CACHE:
                _unsqueeze_specs.clear()
            _unsqueeze_specs[key] = spec
    return spec


_unsqueeze_specs: dict[tuple[tuple[int, ...], int] | None, ViewSpec] = {}
#: Per dim d, the index inserting a new axis before dim d (NumPy arrays have at most 64 dims).
_UNSQUEEZE_INDEX = [(slice(None),) * d + (None, Ellipsis) for d in range(65)]


squeeze.impl("cpu", "cuda")(_squeeze_kernel)


@unsqueeze.impl("cpu", "cuda")
def _unsqueeze(xp: ModuleType, array: Any, plan: int) -> Any:
    return array[_UNSQUEEZE_INDEX[plan]]


# --- expand, broadcast_to ------------------------------------------------------------------------------------


def _expand_spec(op: str, arg: str, self: Tensor, sizes_arg: object) -> ViewSpec:
    sizes = ints_arg(op, arg, sizes_arg)
    shape = self.shape
    ndim, n = len(shape), len(sizes)
    if n < ndim:
        raise ShapeError(
            f"{op}: the number of sizes provided ({n}, argument '{arg}' = {_fmt(sizes)}) must be greater or equal "
            f"to the number of dimensions in the tensor ({ndim}, shape {_fmt(shape)})"
        )
    if sizes == shape:
        return ViewSpec(shape, None)
    old_strides = self.stride()
    lead = n - ndim
    new_shape: list[int] = []
    new_strides: list[int] = []
    for i, size in enumerate(sizes):
        if i < lead:
            if size < 0:
                raise ShapeError(
                    f"{op}: the expanded size of the tensor ({size}) isn't allowed in a leading, non-existing "
                    f"dimension {i} (argument '{arg}' = {_fmt(sizes)}, tensor shape {_fmt(shape)})"
                )
            new_shape.append(size)
            new_strides.append(0)
            continue
        current = shape[i - lead]
        if size == -1:
            size = current
        if size < 0 or (size != current and current != 1):
            raise ShapeError(
                f"{op}: the expanded size of the tensor ({size}) must match the existing size ({current}) at "
                f"non-singleton dimension {i}. Target sizes: {_fmt(sizes)}. Tensor sizes: {_fmt(shape)}"
            )
        new_shape.append(size)
        new_strides.append(old_strides[i - lead] if size == current else 0)
    result = tuple(new_shape)
    return ViewSpec(result, (result, tuple(new_strides)))


def _expand_kernel(xp: ModuleType, array: Any, plan: tuple[tuple[int, ...], tuple[int, ...]] | None) -> Any:
    if plan is None:
        return array.view()
    return _as_strided(xp, array, plan[0], plan[1])


@view_op(varargs="size")
def expand(self: Tensor, size: Sequence[int]) -> ViewSpec:
    """A view of ``self`` with size-1 dims repeated to ``size`` and new leading dims prepended, without copying
    (stride 0; ``torch.Tensor.expand``); -1 keeps a dim's size. ``t.expand(2, -1)`` is ``t.expand((2, -1))``.
    Shares storage and version counter; the view has internal overlap, so ops refuse to write into it
    (MemoryOverlapError) — ``clone`` it first.

    Raises:
        ShapeError: fewer sizes than dims, a size that differs from a non-1 dim, a negative size (or -1 in a
            new leading dim).
        ArgumentTypeError: ``size`` is not a sequence of ints.
    """
    return _expand_spec("expand", "size", self, size)


@view_op()
def broadcast_to(self: Tensor, shape: Sequence[int]) -> ViewSpec:
    """A view of ``self`` broadcast to ``shape`` (``torch.broadcast_to``, same as ``expand``; NumPy's
    ``broadcast_to`` rules, plus -1 to keep a dim). Unlike NumPy's, the view is writable when ``self`` is, but
    ops refuse to write into its overlapping elements (MemoryOverlapError).

    Raises:
        ShapeError: ``self`` does not broadcast to ``shape``.  ArgumentTypeError: ``shape`` is not a sequence
            of ints.
    """
    return _expand_spec("broadcast_to", "shape", self, shape)


for _op in (expand, broadcast_to):
    _op.impl("cpu", "cuda")(_expand_kernel)


# --- contiguous ----------------------------------------------------------------------------------------------


@view_op()
def contiguous(self: Tensor) -> ViewSpec:
    """``self`` laid out C-contiguously (``torch.Tensor.contiguous``): a view of the same memory (sharing
    storage and version counter) when ``self`` is C-contiguous already, else a C-contiguous copy with a new
    storage. Meta tensors count as contiguous.
    """
    copy = not self._backend.is_contiguous(self._array)
    return ViewSpec(self.shape, copy, copy=copy)


@contiguous.impl("cpu", "cuda")
def _contiguous(xp: ModuleType, array: Any, plan: bool) -> Any:
    return array.copy(order="C") if plan else array.view()


# --- split, chunk --------------------------------------------------------------------------------------------


def _pieces(op: str, self: Tensor, d: int, bounds: Sequence[tuple[int, int]]) -> tuple[ViewSpec, ...]:
    shape = self.shape
    return tuple(ViewSpec((*shape[:d], stop - start, *shape[d + 1 :]), (d, start, stop)) for start, stop in bounds)


def _equal_bounds(n: int, size: int) -> list[tuple[int, int]]:
    count = max(-(-n // size), 1)
    return [(i * size, min((i + 1) * size, n)) for i in range(count)]


@view_op()
def split(self: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[ViewSpec, ...]:
    """Views of consecutive pieces of ``self`` along ``dim`` (``torch.split``): with an int, pieces of that
    size (the last one smaller if the size does not divide; one empty piece for an empty dim); with a sequence,
    pieces of those sizes, which must sum to the dim's size. Each piece shares storage and version counter with
    ``self``. Returns a tuple of tensors.

    Raises:
        ShapeError: a 0-d tensor, or sections that do not sum to the dim's size.
        ValueError: a negative size, or a size of 0 for a non-empty dim.  IndexError: ``dim`` out of range.
    """
    if not self.shape:
        raise ShapeError("split: expects at least a 1-dimensional tensor, got a 0-d tensor")
    d = normalize_dim("split", dim, len(self.shape), "dim")
    n = self.shape[d]
    if isinstance(split_size_or_sections, bool) or not isinstance(split_size_or_sections, Sequence):
        size = int_arg("split", "split_size_or_sections", split_size_or_sections)
        if size < 0 or (size == 0 and n != 0):
            raise ArgumentValueError(
                f"split: split_size must be positive (0 only for an empty dimension), got {size} for dimension "
                f"{d} of size {n}"
            )
        return _pieces("split", self, d, _equal_bounds(n, size) if size else [(0, 0)])
    sections = ints_arg("split", "split_size_or_sections", split_size_or_sections)
    if any(s < 0 for s in sections):
        raise ArgumentValueError(f"split: split sizes must be non-negative, got {_fmt(sections)}")
    if sum(sections) != n:
        raise ShapeError(
            f"split: split sizes must sum exactly to {n} (the size of dimension {d} of the tensor of shape "
            f"{_fmt(self.shape)}), but got split sizes {_fmt(sections)}"
        )
    starts = [sum(sections[:i]) for i in range(len(sections))]
    return _pieces("split", self, d, [(s, s + k) for s, k in zip(starts, sections, strict=True)])


@view_op()
def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[ViewSpec, ...]:
    """``self`` split into at most ``chunks`` views along ``dim`` (``torch.chunk``): pieces of size
    ``ceil(size / chunks)``, the last one smaller, so fewer than ``chunks`` pieces may come back; an empty dim
    gives ``chunks`` empty pieces. Each piece shares storage and version counter with ``self``.

    Raises:
        ShapeError: a 0-d tensor.  ValueError: ``chunks`` < 1.  IndexError: ``dim`` out of range.
    """
    count = int_arg("chunk", "chunks", chunks)
    if not self.shape:
        raise ShapeError("chunk: expects at least a 1-dimensional tensor, got a 0-d tensor")
    if count <= 0:
        raise ArgumentValueError(f"chunk: argument 'chunks' must be greater than 0, got {count}")
    d = normalize_dim("chunk", dim, len(self.shape), "dim")
    n = self.shape[d]
    size = -(-n // count)
    bounds = [(0, 0)] * count if n == 0 else _equal_bounds(n, size)
    return _pieces("chunk", self, d, bounds)


def _slice_kernel(xp: ModuleType, array: Any, plan: tuple[int, int, int]) -> Any:
    d, start, stop = plan
    return array[(slice(None),) * d + (slice(start, stop),)]


for _op in (split, chunk):
    _op.impl("cpu", "cuda")(_slice_kernel)


# The copy ops, defined after the view ops (their definition order is the registry's and the generated files').
from devtensor.kernels.copying import cat, clone, flip, stack  # noqa: E402
