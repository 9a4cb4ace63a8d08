"""The Array API standard's searching, statistical, sorting, set, utility, indexing and linear-algebra functions
over devtensor's ops, with the standard's names and defaults (``axis``/``keepdims``; ``correction=0`` for ``std``
and ``var``, where PyTorch's default is 1)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import devtensor as _dt
from devtensor.array_api._naming import name_errors
from devtensor.dtypes import as_bool, check_choice
from devtensor.errors import ArgumentValueError, ShapeError
from devtensor.meta import normalize_dim
from devtensor.structured import get_op as _get_op
from devtensor.tensor import Tensor

__all__ = [
    "all",
    "any",
    "argmax",
    "argmin",
    "argsort",
    "count_nonzero",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "matmul",
    "matrix_transpose",
    "max",
    "mean",
    "min",
    "nonzero",
    "prod",
    "searchsorted",
    "sort",
    "std",
    "sum",
    "take",
    "take_along_axis",
    "tensordot",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "var",
    "vecdot",
    "where",
]

Axis = int | tuple[int, ...] | None


def _dim(axis: int | Sequence[int] | None) -> Any:
    return tuple(axis) if isinstance(axis, Sequence) else axis


# --- statistical and utility ---------------------------------------------------------------------------------


def sum(x: Tensor, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """The sum over ``axis`` (all when None): :func:`devtensor.sum` (integers accumulate in int64/uint64)."""
    return _dt.sum(x, _dim(axis), keepdims, dtype=dtype)


def prod(x: Tensor, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """The product over ``axis``: :func:`devtensor.prod`."""
    return _dt.prod(x, _dim(axis), keepdims, dtype=dtype)


def mean(x: Tensor, /, *, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """The arithmetic mean over ``axis`` (floating ``x``): :func:`devtensor.mean`."""
    return _dt.mean(x, _dim(axis), keepdims)


def std(x: Tensor, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False) -> Tensor:
    """The standard deviation over ``axis`` with ``correction`` (default 0, the standard's): :func:`devtensor.std`."""
    return _dt.std(x, _dim(axis), keepdims, correction=correction)


def var(x: Tensor, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False) -> Tensor:
    """The variance over ``axis`` with ``correction`` (default 0, the standard's): :func:`devtensor.var`."""
    return _dt.var(x, _dim(axis), keepdims, correction=correction)


def max(x: Tensor, /, *, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """The maximum over ``axis`` (NaN propagates): :func:`devtensor.amax`."""
    return _dt.amax(x, _dim(axis), keepdims)


def min(x: Tensor, /, *, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """The minimum over ``axis`` (NaN propagates): :func:`devtensor.amin`."""
    return _dt.amin(x, _dim(axis), keepdims)


def all(x: Tensor, /, *, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true: :func:`devtensor.all`."""
    return _dt.all(x, _dim(axis), keepdims)


def any(x: Tensor, /, *, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Whether any element over ``axis`` is true: :func:`devtensor.any`."""
    return _dt.any(x, _dim(axis), keepdims)


def _cumulative(op: str, x: Tensor, axis: int | None, dtype: Any, include_initial: bool) -> Tensor:
    include_initial = as_bool(op, "include_initial", include_initial)
    if axis is None:
        if x.ndim > 1:
            raise ArgumentValueError(f"{op}: argument 'axis' is required for a tensor of {x.ndim} dimensions")
        if x.ndim == 0:
            raise ArgumentValueError(f"{op}: a 0-d tensor has no axis to accumulate along")
        axis = 0
    if include_initial and x.ndim == 0:
        raise ArgumentValueError(f"{op}: a 0-d tensor has no axis to prepend the initial value along (axis={axis!r})")
    a = normalize_dim(op, axis, x.ndim)
    fn = getattr(_dt, "cumsum" if op == "cumulative_sum" else "cumprod")
    result: Tensor = fn(x, a, dtype=dtype)
    if include_initial:
        shape = list(result.shape)
        shape[a] = 1
        start = _dt.full(tuple(shape), 0 if op == "cumulative_sum" else 1, dtype=result.dtype, device=x.device)
        result = _dt.cat([start, result], a)
    return result


def cumulative_sum(
    x: Tensor, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Tensor:
    """Running sums along ``axis`` (optional for 1-d ``x``), with a leading zero when ``include_initial``:
    :func:`devtensor.cumsum`."""
    return _cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(
    x: Tensor, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Tensor:
    """Running products along ``axis``, with a leading one when ``include_initial``: :func:`devtensor.cumprod`."""
    return _cumulative("cumulative_prod", x, axis, dtype, include_initial)


def diff(
    x: Tensor, /, *, axis: int = -1, n: int = 1, prepend: Tensor | None = None, append: Tensor | None = None
) -> Tensor:
    """The ``n``-th forward difference along ``axis`` (after joining ``prepend`` and ``append``), as NumPy's
    ``diff``; computed with slices and :func:`devtensor.sub`.

    Raises:
        ArgumentValueError: negative ``n``.
    """
    a = normalize_dim("diff", axis, x.ndim)
    if n < 0:
        raise ArgumentValueError(f"diff: argument 'n' must be non-negative, got {n}")
    parts = [t for t in (prepend, x, append) if t is not None]
    result = _dt.cat(parts, a) if len(parts) > 1 else x
    lead = (slice(None),) * a
    # Bounded by the size: once the axis is empty, more differences change nothing (n may be huge).
    size = result.shape[a]
    for _ in range(n if n <= size else size or 1):  # (this module's min and max are the Array API's)
        result = _dt.sub(result[(*lead, slice(1, None))], result[(*lead, slice(None, -1))])
    return result


def count_nonzero(x: Tensor, /, *, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """The number of non-zero elements over ``axis`` (int64): :func:`devtensor.sum` of :func:`devtensor.ne`."""
    return _dt.sum(_dt.ne(x, 0), _dim(axis), keepdims, dtype="int64")


# --- searching -----------------------------------------------------------------------------------------------


def argmax(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """The index of the first maximum along ``axis`` (of the flattened tensor when None), int64."""
    if axis is None and keepdims:
        return _dt.reshape(_dt.argmax(x), (1,) * x.ndim)
    return _dt.argmax(x, axis, keepdims)


def argmin(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """The index of the first minimum along ``axis`` (of the flattened tensor when None), int64."""
    if axis is None and keepdims:
        return _dt.reshape(_dt.argmin(x), (1,) * x.ndim)
    return _dt.argmin(x, axis, keepdims)


def nonzero(x: Tensor, /) -> tuple[Tensor, ...]:
    """The indices of the non-zero elements, one int64 tensor per dimension (C order); the count depends on the
    data: :func:`devtensor.nonzero`.

    Raises:
        ShapeError: a 0-d tensor (the standard requires the error).
    """
    if x.ndim == 0:
        raise ShapeError("nonzero: a 0-d tensor has no dimensions to index")
    return tuple(_dt.nonzero(x, as_tuple=True))


def searchsorted(x1: Tensor, x2: Tensor, /, *, side: str = "left", sorter: Tensor | None = None) -> Tensor:
    """For each element of ``x2``, the index where it would be inserted into the sorted 1-d ``x1`` (``side``:
    "left" first such index, "right" last), int64 of ``x2``'s shape: :func:`devtensor.searchsorted`.

    Raises:
        ArgumentValueError: ``side`` neither "left" nor "right"; ``x1`` not 1-d.
    """
    check_choice("searchsorted", "side", side, ("left", "right"))
    if x1.ndim != 1:
        raise ArgumentValueError(f"searchsorted: argument 'x1' must be 1-d, got shape {x1.shape}")
    if sorter is not None:
        x1 = x1[sorter]
    return _dt.searchsorted(x1, x2, side=side)


def where(condition: Tensor, x1: Any, x2: Any, /) -> Tensor:
    """Elements of ``x1`` where ``condition`` is true, else of ``x2`` (broadcast): :func:`devtensor.where`."""
    result: Tensor = _dt.where(condition, x1, x2)
    return result


# --- sorting and sets ----------------------------------------------------------------------------------------


def argsort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """The indices that sort ``x`` along ``axis`` (int64): :func:`devtensor.argsort`."""
    return _dt.argsort(x, axis, descending=descending, stable=stable)


def sort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """``x`` sorted along ``axis``: :func:`devtensor.gather` of :func:`devtensor.argsort`."""
    order = argsort(x, axis=axis, descending=descending, stable=stable)
    return _dt.gather(x, normalize_dim("sort", axis, x.ndim), order)


class UniqueAllResult(NamedTuple):
    """The standard's ``unique_all`` result: ``values``, ``indices`` (first occurrences), ``inverse_indices``
    (``x``'s shape), ``counts``."""

    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    """The standard's ``unique_counts`` result: ``values``, ``counts``."""

    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    """The standard's ``unique_inverse`` result: ``values``, ``inverse_indices`` (``x``'s shape)."""

    values: Tensor
    inverse_indices: Tensor


_unique_all = _get_op("unique_all").functional


def _unique(x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    # The main namespace's data-dependent op behind the standard's four functions (every NaN distinct, as the
    # standard requires; devtensor.unique is PyTorch's and has no first indices).
    result: tuple[Tensor, Tensor, Tensor, Tensor] = _unique_all(x)
    return result


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """The unique elements of ``x`` (sorted), their first indices, the inverse indices and the counts: the op
    ``unique_all`` (:mod:`devtensor.data_dependent`; every NaN distinct)."""
    return UniqueAllResult(*_unique(x))


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """The unique elements of ``x`` (sorted) and their counts."""
    values, _, _, counts = _unique(x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """The unique elements of ``x`` (sorted) and the inverse indices (``x``'s shape)."""
    values, _, inverse, _ = _unique(x)
    return UniqueInverseResult(values, inverse)


def unique_values(x: Tensor, /) -> Tensor:
    """The unique elements of ``x``, sorted."""
    return _unique(x)[0]


# --- indexing and linear algebra -----------------------------------------------------------------------------


def take(x: Tensor, indices: Tensor, /, *, axis: int | None = None) -> Tensor:
    """The elements of ``x`` at ``indices`` (1-d, integer) along ``axis`` (optional for 1-d ``x``).

    Raises:
        ArgumentValueError: ``axis`` missing for a tensor of more than one dimension.
    """
    if axis is None:
        if x.ndim != 1:
            raise ArgumentValueError(f"take: argument 'axis' is required for a tensor of {x.ndim} dimensions")
        axis = 0
    a = normalize_dim("take", axis, x.ndim)
    return x[(slice(None),) * a + (indices,)]


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """The elements of ``x`` at ``indices`` along ``axis`` (same number of dimensions; negative indices count from
    the end, as NumPy's): :func:`devtensor.gather`."""
    a = normalize_dim("take_along_axis", axis, x.ndim)
    if indices.numel() and _dt.any(_dt.lt(indices, 0)).item():
        indices = _dt.where(_dt.lt(indices, 0), _dt.add(indices, x.shape[a]), indices)
    return _dt.gather(x, a, indices)


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The matrix product (NumPy's ``matmul`` rules): :func:`devtensor.matmul`."""
    return _dt.matmul(x1, x2)


def matrix_transpose(x: Tensor, /) -> Tensor:
    """``x`` with its last two axes swapped (a view).

    Raises:
        ShapeError: fewer than two dimensions.
    """
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: argument 'x' must have at least 2 dimensions, got shape {x.shape}")
    return _dt.transpose(x, -1, -2)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Tensor:
    """The tensor contraction over ``axes``: :func:`devtensor.tensordot`."""
    dims: Any = axes  # (a pair of axis lists: the op's schema types it as a flat sequence)
    return _dt.tensordot(x1, x2, dims=dims)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along ``axis`` (``x1`` conjugated, broadcast over the other axes).

    Raises:
        ShapeError: the lengths along ``axis`` differ.
    """
    a = operator.index(axis)
    if a >= 0:
        raise ArgumentValueError(f"vecdot: argument 'axis' must be negative (counted from the end), got {a}")
    if -a > x1.ndim or -a > x2.ndim or x1.shape[a] != x2.shape[a]:
        raise ShapeError(f"vecdot: shapes {x1.shape} and {x2.shape} differ along axis {a}")
    # (devtensor.linalg.vecdot: the product's dtype, as the standard asks; a sum would widen small integers)
    return _dt.linalg.vecdot(x1, x2, dim=a)


# Errors name the standard's function and arguments (xp.max's, not amax's 'dim').
name_errors(globals(), __all__)
