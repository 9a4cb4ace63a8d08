"""The ``devtensor.linalg`` norms and products: vector_norm, matrix_norm, norm, trace, diagonal, cross, vecdot.

Registered as ``linalg_<name>`` ops without a top-level function or method (:mod:`devtensor.linalg` exposes
them under PyTorch's names), one kernel for both devices. Norms compute in the dtype rules of
:mod:`devtensor.kernels.linalg_solvers` (bool and integers as float64) and give the real dtype of that precision;
float16, which LAPACK lacks, computes in float32 and gives float16 (PyTorch's half norms accumulate in float
too); values follow ``numpy.linalg.norm`` / ``numpy.linalg.vector_norm`` / ``matrix_norm``.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.arguments import clamped_offset
from devtensor.dtypes import DType, DTypeLike, to_dtype
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from devtensor.kernels.linalg_solvers import decomposition_call, linalg_dtype, real_dtype
from devtensor.kernels.ufunc_family import D
from devtensor.meta import broadcast_shapes, ints_arg, normalize_dim, normalize_dims, ufunc_result_dtype
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut


def _fmt(shape: tuple[int, ...]) -> str:
    return str(list(shape))


_F16: Final = to_dtype("float16")
_F32: Final = to_dtype("float32")


def _norm_dtype(op: str, x: TensorMeta, dtype: DTypeLike | None) -> DType:
    """The dtype of a norm's precision: ``dtype`` when given (``x`` must cast to it safely in kind), else ``x``'s
    (float16 kept: :func:`_compute_dtype` computes it in float32)."""
    if dtype is None:
        return _F16 if x.dtype == _F16 else linalg_dtype(op, x.dtype, "x")
    d = to_dtype(dtype, op=op)
    d = _F16 if d == _F16 else linalg_dtype(op, d, "dtype")
    if x.dtype.kind == "c" and d.kind != "c":
        raise ArgumentTypeError(f"{op}: argument 'dtype' must be complex for a complex input, got {d.name}")
    return d


def _compute_dtype(op: str, a: Any, dtype: DTypeLike | None) -> DType:
    """The dtype a norm kernel computes the array ``a`` in: its precision's (:func:`_norm_dtype`), float32 for
    float16; the result is cast to the out's dtype on the write."""
    d = (_F16 if a.dtype == _F16 else linalg_dtype(op, a.dtype)) if dtype is None else to_dtype(dtype)
    return _F32 if d == _F16 else d


def _reduced(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


# --- vector_norm ---------------------------------------------------------------------------------------------


def _vector_dims(x: TensorMeta, dim: int | Sequence[int] | None) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(len(x.shape)))
    return normalize_dims("linalg_vector_norm", dim, len(x.shape))


@structured_op("linalg_vector_norm", inplace=False, method=False, public_functional=False)
def linalg_vector_norm(
    x: TensorMeta,
    ord: float = 2,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike | None = None,
) -> TensorSpec:
    """The vector ``ord``-norm of ``x`` over ``dim`` (every dimension when None), of the real dtype
    (``torch.linalg.vector_norm``; values as ``numpy.linalg.vector_norm``): ``sum(|x|**ord)**(1/ord)``;
    ``inf``/``-inf`` the largest/smallest ``|x|``, ``0`` the number of non-zeros. ``dtype`` computes in that
    dtype. Raises ShapeError for ``ord`` ±inf (or negative) over an empty dimension (no value to pick)."""
    dims = _vector_dims(x, dim)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ArgumentTypeError(f"linalg_vector_norm: argument 'ord' must be a number, got {ord!r}")
    size = math.prod(x.shape[d] for d in dims) if x.shape else 1  # (a 0-d x: dim 0 and -1 name its one value)
    if size == 0 and (ord < 0 or math.isinf(ord)):
        raise ShapeError(
            f"linalg_vector_norm: ord={ord} needs a non-empty reduction, got shape {_fmt(x.shape)} over {dims}"
        )
    return _reduced(x.shape, dims, keepdim), real_dtype(_norm_dtype("linalg_vector_norm", x, dtype))


def vector_norm_array(xp: ModuleType, a: Any, ord: float, axis: tuple[int, ...], keepdims: bool) -> Any:
    """The vector norm of the array ``a`` (of the compute dtype) over ``axis`` (see :func:`linalg_vector_norm`)."""
    m = xp.abs(a)
    if ord == math.inf:
        return m.max(axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return m.min(axis=axis, keepdims=keepdims)
    if ord == 0:
        return (m != 0).sum(axis=axis, keepdims=keepdims).astype(m.dtype)
    if ord == 1:
        return m.sum(axis=axis, keepdims=keepdims)
    if ord == 2:
        return xp.sqrt((m * m).sum(axis=axis, keepdims=keepdims))
    return ((m**ord).sum(axis=axis, keepdims=keepdims)) ** (1.0 / ord)


@_ks.linalg_vector_norm.xp
def _vector_norm(
    xp: ModuleType,
    x: D,
    ord: float,
    dim: int | Sequence[int] | None,
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[D],
) -> None:
    a = x._array
    compute = _compute_dtype("linalg_vector_norm", a, dtype)
    axis = tuple(range(a.ndim)) if dim is None or a.ndim == 0 else normalize_dims("linalg_vector_norm", dim, a.ndim)
    out.array[...] = vector_norm_array(xp, a.astype(compute, copy=False), ord, axis, keepdim)


# --- matrix_norm ---------------------------------------------------------------------------------------------

_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _matrix_dims(op: str, x: TensorMeta | Any, ord: float | str, dim: Sequence[int]) -> tuple[int, int]:
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        # A wrong type (a list, a bool) is a TypeError; a number or string not among them a ValueError.
        right_type = isinstance(ord, (int, float, str, np.integer, np.floating)) and not isinstance(ord, bool)
        raise (ArgumentValueError if right_type else ArgumentTypeError)(
            f"{op}: argument 'ord' must be one of 'fro', 'nuc', inf, -inf, 1, -1, 2, -2, got {ord!r}"
        )
    dims = normalize_dims(op, dim, len(x.shape), allow_int=False)
    if len(dims) != 2 or dims[0] == dims[1]:
        raise ArgumentValueError(f"{op}: argument 'dim' must name two different dimensions, got {dim!r}")
    return dims[0], dims[1]


_MINIMUM_OVER: Final = {-2: "singular values", -1: "columns", -math.inf: "rows"}


@structured_op("linalg_matrix_norm", inplace=False, method=False, public_functional=False)
def linalg_matrix_norm(
    A: TensorMeta,
    ord: float | str = "fro",
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: DTypeLike | None = None,
) -> TensorSpec:
    """The matrix norm of the matrices of ``A`` over its dimensions ``dim`` (rows, columns), of the real dtype
    (``torch.linalg.matrix_norm``; values as ``numpy.linalg.matrix_norm``): ``"fro"`` (Frobenius), ``"nuc"``
    (sum of singular values), ``2``/``-2`` (largest/smallest singular value), ``1``/``-1`` (max/min column
    sum of ``|A|``), ``inf``/``-inf`` (max/min row sum). Empty matrices: 0 (PyTorch's values), except for the
    minima over nothing. Raises ShapeError for ``A`` with fewer than 2 dimensions, and for ``-2`` of matrices
    with no singular value, ``-1`` with no column and ``-inf`` with no row (PyTorch raises there too)."""
    if len(A.shape) < 2:
        raise ShapeError(f"linalg_matrix_norm: argument 'A' must have at least 2 dimensions, got shape {_fmt(A.shape)}")
    d0, d1 = _matrix_dims("linalg_matrix_norm", A, ord, dim)
    # PyTorch's rule for empty matrices: a norm that is a maximum or a sum over nothing is 0; one that is a
    # minimum over nothing (no singular value, column or row) has no value.
    rows, cols = A.shape[d0], A.shape[d1]
    over = {-2: min(rows, cols), -1: cols, -math.inf: rows}.get(ord) if not isinstance(ord, str) else None
    if over == 0:
        assert not isinstance(ord, str)
        raise ShapeError(
            f"linalg_matrix_norm: ord={ord!r} is a minimum over the {_MINIMUM_OVER[ord]} "
            f"of the matrices, and matrices of shape {_fmt(A.shape)} have none"
        )
    return _reduced(A.shape, (d0, d1), keepdim), real_dtype(_norm_dtype("linalg_matrix_norm", A, dtype))


def matrix_norm_array(xp: ModuleType, a: Any, ord: float | str, dims: tuple[int, int], keepdims: bool) -> Any:
    """The matrix norm of the array ``a`` (of the compute dtype) over ``dims`` (see :func:`linalg_matrix_norm`)."""
    m = xp.moveaxis(a, dims, (-2, -1))
    if ord == "fro":
        r = vector_norm_array(xp, m, 2, (-2, -1), False)
    elif m.size == 0 or (ord in ("nuc", 2) and 0 in m.shape[-2:]):
        # Empty matrices (the meta refused the minima over nothing): a maximum or sum over nothing is 0, and one
        # over columns or rows of zeros is 0 too (PyTorch's values).
        r = xp.zeros(m.shape[:-2], m.real.dtype)
    elif ord in ("nuc", 2, -2):
        s = decomposition_call("linalg_matrix_norm", xp, xp.linalg.svd, m, compute_uv=False)
        r = s.sum(axis=-1) if ord == "nuc" else s.max(axis=-1) if ord == 2 else s.min(axis=-1)
    elif ord in (1, -1):
        col = xp.abs(m).sum(axis=-2)
        r = col.max(axis=-1) if ord == 1 else col.min(axis=-1)
    else:
        row = xp.abs(m).sum(axis=-1)
        r = row.max(axis=-1) if ord == math.inf else row.min(axis=-1)
    if keepdims:
        r = xp.expand_dims(r, tuple(sorted(dims)))
    return r


@_ks.linalg_matrix_norm.xp
def _matrix_norm(
    xp: ModuleType,
    A: D,
    ord: float | str,
    dim: Sequence[int],
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[D],
) -> None:
    a = A._array
    compute = _compute_dtype("linalg_matrix_norm", a, dtype)
    dims = _matrix_dims("linalg_matrix_norm", a, ord, dim)
    out.array[...] = matrix_norm_array(xp, a.astype(compute, copy=False), ord, dims, keepdim)


# --- norm ----------------------------------------------------------------------------------------------------


def _norm_plan(A: TensorMeta | Any, ord: float | str | None, dim: int | Sequence[int] | None) -> tuple[str, Any]:
    """("vector", dims) or ("matrix", (d0, d1)): how ``torch.linalg.norm`` reads its arguments."""
    ndim = len(A.shape)
    if isinstance(dim, int) and not isinstance(dim, bool):
        dims: Any = (dim,)
    elif dim is None:
        if ord is None:
            return "vector", None
        if ndim not in (1, 2):
            raise ShapeError(
                f"linalg_norm: with ord given and dim=None, 'A' must be 1-D or 2-D, got shape {_fmt(A.shape)}"
            )
        dims = tuple(range(ndim))
    else:
        dims = ints_arg("linalg_norm", "dim", dim)  # (a bool, a float, a str: ArgumentTypeError naming 'dim')
    if len(dims) == 1:
        if isinstance(ord, str):
            raise ArgumentValueError(f"linalg_norm: ord={ord!r} is a matrix norm, but one dimension was given")
        return "vector", dims
    if len(dims) == 2:
        return "matrix", dims
    raise ArgumentValueError(f"linalg_norm: argument 'dim' must name one or two dimensions, got {dim!r}")


@structured_op("linalg_norm", inplace=False, method=False, public_functional=False)
def linalg_norm(
    A: TensorMeta,
    ord: float | str | None = None,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike | None = None,
) -> TensorSpec:
    """A vector or matrix norm (``torch.linalg.norm``, ``numpy.linalg.norm``): with ``dim`` one dimension, the
    vector norm (:func:`linalg_vector_norm`, ``ord`` default 2); two dimensions, the matrix norm
    (:func:`linalg_matrix_norm`, ``ord`` default "fro"); ``dim=None``: with ``ord=None`` the 2-norm of ``A``
    flattened, else ``A`` must be 1-D (vector norm) or 2-D (matrix norm)."""
    kind, dims = _norm_plan(A, ord, dim)
    if kind == "vector":
        return linalg_vector_norm.meta(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    return linalg_matrix_norm.meta(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)


@_ks.linalg_norm.xp
def _norm(
    xp: ModuleType,
    A: D,
    ord: float | str | None,
    dim: int | Sequence[int] | None,
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[D],
) -> None:
    a = A._array
    kind, dims = _norm_plan(a, ord, dim)
    a = a.astype(_compute_dtype("linalg_norm", a, dtype), copy=False)
    if kind == "matrix":
        d = normalize_dims("linalg_norm", dims, a.ndim)
        out.array[...] = matrix_norm_array(xp, a, "fro" if ord is None else ord, (d[0], d[1]), keepdim)
        return
    axis = tuple(range(a.ndim)) if dims is None or a.ndim == 0 else normalize_dims("linalg_norm", dims, a.ndim)
    out.array[...] = vector_norm_array(xp, a, 2 if ord is None else typing.cast(float, ord), axis, keepdim)


# --- trace, diagonal -----------------------------------------------------------------------------------------


@structured_op("linalg_trace", inplace=False, method=False, public_functional=False)
def linalg_trace(A: TensorMeta, offset: int = 0, *, dtype: DTypeLike | None = None) -> TensorSpec:
    """The sum of the ``offset`` diagonal of each matrix of ``A [..., m, n]`` (above the main diagonal for a
    positive ``offset``), shape ``[...]`` (the Array API's ``linalg.trace``; values as ``numpy.trace`` over the
    last two axes). Result dtype: ``dtype`` when given, else NumPy's for ``np.trace`` (small integers widen to
    int64, as ``np.sum``)."""
    if len(A.shape) < 2:
        raise ShapeError(f"linalg_trace: argument 'A' must have at least 2 dimensions, got shape {_fmt(A.shape)}")
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise ArgumentTypeError(f"linalg_trace: argument 'offset' must be an int, got {offset!r}")
    return A.shape[:-2], _trace_dtype(A.dtype, dtype)


def _trace_dtype(a: DType, dtype: DTypeLike | None) -> DType:
    """NumPy's result dtype for ``np.trace`` of an array of dtype ``a`` with ``dtype=dtype``."""
    arg = None if dtype is None else to_dtype(dtype, op="linalg_trace")
    return to_dtype(np.trace(np.zeros((1, 1), a), dtype=arg).dtype)


@_ks.linalg_trace.xp
def _trace(xp: ModuleType, A: D, offset: int, *, dtype: DTypeLike | None, out: ConstOut[D]) -> None:
    k = clamped_offset(offset, *A._array.shape[-2:])
    out.array[...] = A._array.diagonal(k, -2, -1).sum(axis=-1, dtype=_trace_dtype(A._array.dtype, dtype))


@structured_op("linalg_diagonal", inplace=False, method=False, public_functional=False)
def linalg_diagonal(A: TensorMeta, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> TensorSpec:
    """The ``offset`` diagonal of the matrices of ``A`` over dimensions ``dim1``, ``dim2``, as a new tensor
    (``torch.linalg.diagonal`` returns a view; this is a copy): the two dimensions are removed and the diagonal
    appended last, as ``numpy.diagonal``. Same dtype."""
    ndim = len(A.shape)
    if ndim < 2:
        raise ShapeError(f"linalg_diagonal: argument 'A' must have at least 2 dimensions, got shape {_fmt(A.shape)}")
    d1 = normalize_dim("linalg_diagonal", dim1, ndim, "dim1")
    d2 = normalize_dim("linalg_diagonal", dim2, ndim, "dim2")
    if d1 == d2:
        raise ArgumentValueError(f"linalg_diagonal: arguments 'dim1' and 'dim2' name the same dimension {d1}")
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise ArgumentTypeError(f"linalg_diagonal: argument 'offset' must be an int, got {offset!r}")
    m, n = A.shape[d1], A.shape[d2]
    length = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    rest = tuple(s for i, s in enumerate(A.shape) if i not in (d1, d2))
    return (*rest, length), A.dtype


@_ks.linalg_diagonal.xp
def _diagonal(xp: ModuleType, A: D, *, offset: int, dim1: int, dim2: int, out: ConstOut[D]) -> None:
    ndim = A._array.ndim
    k = clamped_offset(offset, A._array.shape[dim1 % ndim], A._array.shape[dim2 % ndim])
    out.array[...] = A._array.diagonal(k, dim1 % ndim, dim2 % ndim)


# --- cross, vecdot -------------------------------------------------------------------------------------------


@structured_op("linalg_cross", inplace=False, method=False, public_functional=False)
def linalg_cross(input: TensorMeta, other: TensorMeta, *, dim: int = -1) -> TensorSpec:
    """The cross product of 3-vectors along ``dim`` of ``input`` and ``other`` (broadcast against each other;
    ``torch.linalg.cross``, ``numpy.cross``): both of one number of dims (PyTorch's rule; NumPy's broadcasts
    those too). Result dtype: NumPy's for ``np.multiply``; bool is refused."""
    if len(input.shape) != len(other.shape):
        raise ShapeError(
            f"linalg_cross: inputs must have the same number of dimensions, got shapes {_fmt(input.shape)} and "
            f"{_fmt(other.shape)}"
        )
    shape = broadcast_shapes("linalg_cross", input.shape, other.shape)
    if not shape:
        raise ShapeError("linalg_cross: arguments must have at least 1 dimension, got 0-d tensors")
    d = normalize_dim("linalg_cross", dim, len(shape))
    for name, s in (("input", input.shape), ("other", other.shape)):
        k = d - (len(shape) - len(s))
        if k < 0 or s[k] != 3:
            raise ShapeError(f"linalg_cross: argument '{name}' of shape {_fmt(s)} must have size 3 along dim {dim}")
    dtype = ufunc_result_dtype("linalg_cross", np.multiply, input.dtype, other.dtype)
    if dtype.kind == "b":
        raise ArgumentTypeError("linalg_cross: not supported for bool tensors")
    return shape, dtype


@_ks.linalg_cross.xp
def _cross(xp: ModuleType, input: D, other: D, *, dim: int, out: ConstOut[D]) -> None:
    shape = out.shape
    dtype = np.result_type(input._array.dtype, other._array.dtype)
    d = dim % len(shape) - len(shape)  # (negative: the same axis of either operand once broadcast)
    a = xp.moveaxis(xp.broadcast_to(input._array, shape), d, -1).astype(dtype, copy=False)
    b = xp.moveaxis(xp.broadcast_to(other._array, shape), d, -1).astype(dtype, copy=False)
    o = xp.moveaxis(out.array, d, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c0, c1, c2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    o[..., 0] = c0
    o[..., 1] = c1
    o[..., 2] = c2


@structured_op("linalg_vecdot", inplace=False, method=False, public_functional=False)
def linalg_vecdot(x: TensorMeta, y: TensorMeta, *, dim: int = -1) -> TensorSpec:
    """The dot product ``sum(conj(x) * y)`` along ``dim`` of ``x`` and ``y`` broadcast against each other
    (``torch.linalg.vecdot``, ``numpy.vecdot``). Result dtype: NumPy's for ``np.multiply``. Raises ShapeError
    when the sizes along ``dim`` differ."""
    shape = broadcast_shapes("linalg_vecdot", x.shape, y.shape)
    if not shape:
        raise ShapeError("linalg_vecdot: arguments must have at least 1 dimension, got 0-d tensors")
    d = normalize_dim("linalg_vecdot", dim, len(shape))
    dtype = ufunc_result_dtype("linalg_vecdot", np.multiply, x.dtype, y.dtype)
    return shape[:d] + shape[d + 1 :], dtype


@_ks.linalg_vecdot.xp
def _vecdot(xp: ModuleType, x: D, y: D, *, dim: int, out: ConstOut[D]) -> None:
    a, b = x._array, y._array
    ndim = max(a.ndim, b.ndim)
    d = dim % ndim - ndim
    if a.dtype.kind == "c":
        a = a.conj()
    out.array[...] = (a * b).sum(axis=d)
