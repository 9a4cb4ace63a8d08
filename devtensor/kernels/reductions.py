"""The reduction family: sum, prod, mean, amax, amin, argmax, argmin, std, var, logsumexp, all and any.

Each op is one structured op (meta function + CPU impl in NumPy + CUDA impl in CuPy). Every reduction takes
``dim`` (an int, a tuple of ints, or None for all dimensions; negative dims count from the end) and
``keepdim`` (keep each reduced dimension with size 1). Values and result dtypes follow NumPy 2
(``np.sum``, ``np.mean``, …); argument names and the out rules follow PyTorch. The meta functions compute the
result dtype by asking NumPy itself (cached per dtype), so they agree with NumPy by construction.

Functional and out variants are generated (``sum(t, 1)``, ``sum(t, 1, out=o)``, ``t.sum(1)``); reductions have
no inplace variant, and an out may not alias the input.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from devtensor import dtypes
from devtensor import kernel_signatures as _ks
from devtensor.backends import cupy_module
from devtensor.dtypes import DType, to_dtype
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from devtensor.meta import normalize_dim, normalize_dims
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut, CPUTensor, CUDATensor

if TYPE_CHECKING:
    from devtensor.dtypes import DTypeLike
else:
    # devtensor.dtypes.DTypeLike is a string alias, which typing.get_type_hints cannot combine with ``| None``
    # when it builds the schema; at run time the schema only needs a type here (the meta checks the value).
    DTypeLike = np.dtype | type | str

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "logsumexp",
    "mean",
    "prod",
    "std",
    "sum",
    "var",
]

_INT64: Final = dtypes.int64
_BOOL: Final = dtypes.bool_
_FLOAT32: Final = dtypes.float32
_FLOAT64: Final = dtypes.float64
_FLOAT16: Final = dtypes.float16

# --- dims -----------------------------------------------------------------------------------------------

# (dim as given, ndim) -> normalized dims, sorted; only valid combinations are cached.
_dims_cache: dict[tuple[object, int], tuple[int, ...]] = {}
_MAX_CACHE: Final = 4096


def reduction_dims(op: str, dim: object, ndim: int) -> tuple[int, ...]:
    """The dims ``dim`` names, normalized to ``range(ndim)`` and sorted.

    ``None`` means every dimension; an int one; a tuple (or list) of ints those (``()`` none, as NumPy's
    ``axis=()``). A 0-d tensor accepts the dims ``0`` and ``-1`` (as PyTorch) and has nothing to reduce, so its
    dims are ``()``.

    Raises:
        ArgumentTypeError (TypeError): ``dim`` is not an int, a tuple/list of ints or None (bools are not ints).
        IndexError: a dim out of range; names the op and the dim.
        ValueError: a dim named twice (``(1, -1)`` on a 2-d tensor); names the op and the dim.
    """
    # Only exact ints are cache keys: 1.0 and True hash like 1 but are refused.
    cacheable = dim is None or type(dim) is int or (type(dim) is tuple and _all_ints(dim))
    if cacheable:
        try:
            return _dims_cache[(dim, ndim)]
        except KeyError:
            pass
    if dim is None:
        dims: tuple[int, ...] = tuple(range(ndim))
    elif isinstance(dim, (tuple, list)):
        named = normalize_dims(op, dim, ndim)
        dims = tuple(sorted(named)) if ndim else ()
    else:
        dims = (_one_dim(op, dim, ndim),) if ndim else _zero_d_dims(op, dim)
    if cacheable:
        if len(_dims_cache) >= _MAX_CACHE:
            _dims_cache.clear()
        _dims_cache[(dim, ndim)] = dims
    return dims


def _all_ints(dims: tuple[object, ...]) -> bool:
    return builtins.all(type(d) is int for d in dims)


def _one_dim(op: str, d: object, ndim: int) -> int:
    if isinstance(d, bool) or not isinstance(d, int):
        raise ArgumentTypeError(
            f"{op}: argument 'dim' must be an int, a tuple of ints or None, got {type(d).__name__} {d!r}"
        )
    return normalize_dim(op, d, ndim)


def _zero_d_dims(op: str, d: object) -> tuple[int, ...]:
    _one_dim(op, d, 0)  # checks it; a 0-d tensor has nothing to reduce
    return ()


def reduced_shape(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    """The shape left after reducing ``dims`` of ``shape``: those dims removed, or set to 1 with ``keepdim``."""
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def _check_keepdim(op: str, keepdim: object) -> None:
    if type(keepdim) is not bool:
        raise ArgumentTypeError(f"{op}: argument 'keepdim' must be a bool, got {type(keepdim).__name__} {keepdim!r}")


def _axis(dims: tuple[int, ...], ndim: int) -> tuple[int, ...] | None:
    """NumPy's ``axis`` for ``dims``: None when every dimension is reduced (0-d tensors included)."""
    return None if len(dims) == ndim else dims


def _check_nonempty(op: str, shape: tuple[int, ...], dims: tuple[int, ...]) -> None:
    """Reductions without identity (max, min, argmax, argmin) fail over an empty dim, as NumPy's do."""
    for d in dims:
        if shape[d] == 0:
            raise ShapeError(
                f"{op}: cannot reduce over dimension {d} of size 0 (tensor of shape {list(shape)}): the reduction "
                "has no identity (NumPy raises ValueError for the same; pass a dim whose size is not 0)"
            )


# --- result dtypes, from NumPy itself ---------------------------------------------------------------------

_dtype_cache: dict[tuple[str, DType, DType | None], DType] = {}


def _numpy_result(op: str, fn: Callable[..., Any], dtype: DType, arg: DType | None) -> DType:
    """The dtype NumPy's ``fn`` (np.sum, np.mean, …) returns for an array of ``dtype`` with ``dtype=arg``."""
    key = (op, dtype, arg)
    try:
        return _dtype_cache[key]
    except KeyError:
        pass
    if arg is not None and dtype.kind == "c" and arg.kind != "c":
        # NumPy discards the imaginary part with a ComplexWarning; PyTorch refuses. Refuse: it loses data.
        raise ArgumentTypeError(
            f"{op}: argument 'dtype' must be complex for a complex input ({dtype.name}), got {arg.name}"
        )
    probe = np.zeros((1,), dtype)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = np.asarray(fn(probe) if arg is None else fn(probe, dtype=arg)).dtype
    except TypeError as e:
        raise ArgumentTypeError(
            f"{op}: not supported for dtype {dtype.name}" + (f" with dtype={arg.name}" if arg else "") + f": {e}"
        ) from None
    result = _dtype_cache[key] = to_dtype(found, op=op)
    return result


def _float_result(op: str, dtype: DType) -> DType:
    """Result dtype of a reduction that needs floats (logsumexp): floats keep theirs, bool and integers give
    float64 (NumPy's ``mean`` rule); complex is refused."""
    if dtype.kind == "f":
        return dtype
    if dtype.kind in "biu":
        return _FLOAT64
    raise ArgumentTypeError(f"{op}: not supported for dtype {dtype.name} (needs a real input)")


def _compute_dtype(dtype: DType) -> DType:
    """float16 is computed in float32 (as NumPy's mean does), then cast."""
    return _FLOAT32 if dtype == _FLOAT16 else dtype


def _optional_dtype(op: str, dtype: object) -> DType | None:
    return None if dtype is None else to_dtype(dtype, op=op)


def _no_complex(op: str, dtype: DType) -> None:
    if dtype.kind == "c":
        raise ArgumentTypeError(f"{op}: not supported for complex dtype {dtype.name} (complex numbers have no order)")


# --- writing results ---------------------------------------------------------------------------------------


def _write(xp: Any, out: Any, result: DType, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """``fn(*args, **kwargs)`` written into ``out``: directly through ``out=`` when ``out`` has the result dtype
    ``result``; else computed then cast into ``out`` (same_kind; the front checked it)."""
    if out.dtype == result:
        fn(*args, out=out, **kwargs)
    else:
        xp.copyto(out, fn(*args, **kwargs), casting="same_kind")


_COMMON_DOC = """
    Args:
        dim: {dim_doc}
        keepdim: keep each reduced dimension, with size 1.
    Shapes: the input's shape without the reduced dims (with ``keepdim``: those dims of size 1).
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give the result's shape and dtype only.
    Variants: functional ``{name}(t, ...)`` / ``t.{name}(...)`` and out ``{name}(t, ..., out=o)`` (PyTorch's out
        rules: the result dtype must cast to ``out.dtype`` under same_kind; an ``out`` of another shape is
        resized, with a UserWarning when it had elements). No inplace variant.

    Raises:
        ArgumentTypeError (TypeError): a bad type of ``dim``; ``keepdim`` not a bool{extra_type}.
        IndexError: a dim out of range.
        ValueError: a dim given twice (names it){extra_value}.
        CastingError (TypeError): the result dtype does not cast (same_kind) to ``out.dtype``.
        DeviceMismatchError, MemoryOverlapError (ValueError): ``out`` on another device, or overlapping the input.
"""


_DIM_DOC: Final = (
    "the dimension(s) to reduce: an int, a tuple of ints (``()`` reduces none, as NumPy's ``axis=()``),\n"
    "            or None for all; negative dims count from the end. A 0-d tensor accepts ``0`` and ``-1``."
)
_ARG_DIM_DOC: Final = (
    "the dimension to reduce: an int (negative counts from the end; a 0-d tensor accepts ``0`` and\n"
    "            ``-1``), or None for the index into the flattened tensor."
)


def _doc(name: str, summary: str, extra_type: str = "", extra_value: str = "") -> str:
    dim_doc = _ARG_DIM_DOC if name in ("argmax", "argmin") else _DIM_DOC
    common = _COMMON_DOC.format(name=name, extra_type=extra_type, extra_value=extra_value, dim_doc=dim_doc)
    return summary.strip() + "\n" + common


_DTYPE_ARG_DOC = """
    ``dtype``: the dtype to compute and return in (as NumPy's ``dtype=`` argument); a complex input needs a
    complex ``dtype`` (ArgumentTypeError otherwise, as PyTorch: NumPy would silently drop the imaginary part).
"""

# --- sum, prod, mean -------------------------------------------------------------------------------------


@structured_op(inplace=False)
def sum(
    self: TensorMeta,
    dim: int | tuple[int, ...] | None = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike | None = None,
) -> TensorSpec:
    """Sum of the elements over ``dim`` (``torch.sum``; values and dtypes as ``np.sum``).

    Result dtype: NumPy 2's for ``np.sum``: bool and signed integers give int64, unsigned integers uint64,
    floats and complex keep theirs; with ``dtype=`` that dtype. The sum over an empty dimension is 0.
    """
    _check_keepdim("sum", keepdim)
    dims = reduction_dims("sum", dim, self.ndim)
    result = _numpy_result("sum", np.sum, self.dtype, _optional_dtype("sum", dtype))
    return (reduced_shape(self.shape, dims, keepdim), result)


def _sum_body(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any, out: Any) -> None:
    result = _numpy_result("sum", np.sum, a.dtype, _optional_dtype("sum", dtype))
    axis = _axis(reduction_dims("sum", dim, a.ndim), a.ndim)
    _write(xp, out, result, xp.sum, a, axis=axis, dtype=result, keepdims=keepdim)


@_ks.sum.cpu
def _sum_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[CPUTensor],
) -> None:
    _sum_body(np, self.array, dim, keepdim, dtype, out.array)


@_ks.sum.cuda
def _sum_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[CUDATensor],
) -> None:
    _sum_body(cupy_module(), self.array, dim, keepdim, dtype, out.array)


@structured_op(inplace=False)
def prod(
    self: TensorMeta,
    dim: int | tuple[int, ...] | None = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike | None = None,
) -> TensorSpec:
    """Product of the elements over ``dim`` (``torch.prod``; values and dtypes as ``np.prod``).

    Result dtype: NumPy 2's for ``np.prod`` (bool and signed integers give int64, unsigned integers uint64,
    floats and complex keep theirs; integers wrap around on overflow as NumPy's); with ``dtype=`` that dtype.
    The product over an empty dimension is 1.
    """
    _check_keepdim("prod", keepdim)
    dims = reduction_dims("prod", dim, self.ndim)
    result = _numpy_result("prod", np.prod, self.dtype, _optional_dtype("prod", dtype))
    return (reduced_shape(self.shape, dims, keepdim), result)


def _prod_body(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any, out: Any) -> None:
    result = _numpy_result("prod", np.prod, a.dtype, _optional_dtype("prod", dtype))
    axis = _axis(reduction_dims("prod", dim, a.ndim), a.ndim)
    _write(xp, out, result, xp.prod, a, axis=axis, dtype=result, keepdims=keepdim)


@_ks.prod.cpu
def _prod_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[CPUTensor],
) -> None:
    _prod_body(np, self.array, dim, keepdim, dtype, out.array)


@_ks.prod.cuda
def _prod_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[CUDATensor],
) -> None:
    _prod_body(cupy_module(), self.array, dim, keepdim, dtype, out.array)


@structured_op(inplace=False)
def mean(
    self: TensorMeta,
    dim: int | tuple[int, ...] | None = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike | None = None,
) -> TensorSpec:
    """Arithmetic mean of the elements over ``dim`` (``torch.mean``; values and dtypes as ``np.mean``).

    Result dtype: NumPy's for ``np.mean``: bool and integers give float64, floats and complex keep theirs
    (float16 is accumulated in float32, as NumPy does); with ``dtype=`` that dtype (an integer ``dtype``
    gives NumPy's truncated integer mean). The mean over an empty dimension is nan, with NumPy's
    RuntimeWarning ("Mean of empty slice") on the CPU.
    """
    _check_keepdim("mean", keepdim)
    dims = reduction_dims("mean", dim, self.ndim)
    result = _numpy_result("mean", np.mean, self.dtype, _optional_dtype("mean", dtype))
    return (reduced_shape(self.shape, dims, keepdim), result)


def _mean_body(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any, out: Any) -> None:
    arg = _optional_dtype("mean", dtype)
    result = _numpy_result("mean", np.mean, a.dtype, arg)
    axis = _axis(reduction_dims("mean", dim, a.ndim), a.ndim)
    if arg is None and a.dtype == np.float16:
        # NumPy accumulates float16 in float32 only when it allocates the result; into a float16 out= it would
        # add up in float16 and overflow (mean of [60000, 60000] -> inf). Compute, then cast into out.
        xp.copyto(out, xp.mean(a, axis=axis, dtype=np.float32, keepdims=keepdim), casting="same_kind")
        return
    # dtype=None keeps NumPy's own result dtype.
    _write(xp, out, result, xp.mean, a, axis=axis, dtype=arg, keepdims=keepdim)


@_ks.mean.cpu
def _mean_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[CPUTensor],
) -> None:
    _mean_body(np, self.array, dim, keepdim, dtype, out.array)


@_ks.mean.cuda
def _mean_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    dtype: DTypeLike | None,
    out: ConstOut[CUDATensor],
) -> None:
    _mean_body(cupy_module(), self.array, dim, keepdim, dtype, out.array)


# --- amax, amin ------------------------------------------------------------------------------------------


@structured_op(inplace=False)
def amax(self: TensorMeta, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> TensorSpec:
    """Maximum of the elements over ``dim`` (``torch.amax``; values as ``np.amax``: NaN propagates).

    Result dtype: the input's. Reducing over a dimension of size 0 (or, with ``dim=None``, an empty tensor)
    is a ShapeError (a ValueError, as NumPy raises) naming the dim. Complex inputs are refused (as PyTorch).
    """
    return _extremum_meta("amax", self, dim, keepdim)


def _extremum_meta(op: str, self: TensorMeta, dim: object, keepdim: bool) -> TensorSpec:
    _check_keepdim(op, keepdim)
    _no_complex(op, self.dtype)
    shape = self.shape
    dims = reduction_dims(op, dim, len(shape))
    _check_nonempty(op, shape, dims)
    return (reduced_shape(shape, dims, keepdim), self.dtype)


def _extremum_body(xp: Any, name: str, a: Any, dim: Any, keepdim: bool, out: Any) -> None:
    axis = _axis(reduction_dims(name, dim, a.ndim), a.ndim)
    _write(xp, out, a.dtype, getattr(xp, name), a, axis=axis, keepdims=keepdim)


@_ks.amax.cpu
def _amax_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CPUTensor],
) -> None:
    _extremum_body(np, "amax", self.array, dim, keepdim, out.array)


@_ks.amax.cuda
def _amax_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CUDATensor],
) -> None:
    _extremum_body(cupy_module(), "amax", self.array, dim, keepdim, out.array)


@structured_op(inplace=False)
def amin(self: TensorMeta, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> TensorSpec:
    """Minimum of the elements over ``dim`` (``torch.amin``; values as ``np.amin``: NaN propagates).

    Result dtype: the input's. Reducing over a dimension of size 0 (or, with ``dim=None``, an empty tensor)
    is a ShapeError (a ValueError, as NumPy raises) naming the dim. Complex inputs are refused (as PyTorch).
    """
    return _extremum_meta("amin", self, dim, keepdim)


@_ks.amin.cpu
def _amin_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CPUTensor],
) -> None:
    _extremum_body(np, "amin", self.array, dim, keepdim, out.array)


@_ks.amin.cuda
def _amin_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CUDATensor],
) -> None:
    _extremum_body(cupy_module(), "amin", self.array, dim, keepdim, out.array)


# --- argmax, argmin --------------------------------------------------------------------------------------


@structured_op(inplace=False)
def argmax(self: TensorMeta, dim: int | None = None, keepdim: bool = False) -> TensorSpec:
    """Index of the maximum along ``dim`` (``torch.argmax``; values as ``np.argmax``: the first maximal
    element wins, and the first NaN counts as the maximum).

    ``dim=None`` gives the index into the flattened tensor (0-d result; with ``keepdim`` every dimension of
    size 1, as NumPy's ``keepdims``). Result dtype: int64. Reducing over a dimension of size 0 (or an empty
    tensor with ``dim=None``) is a ShapeError (a ValueError, as NumPy raises) naming the dim. Complex inputs
    are refused (as PyTorch).
    """
    return _arg_meta("argmax", self, dim, keepdim)


def _arg_meta(op: str, self: TensorMeta, dim: object, keepdim: bool) -> TensorSpec:
    _check_keepdim(op, keepdim)
    _no_complex(op, self.dtype)
    if isinstance(dim, (tuple, list)):
        raise ArgumentTypeError(f"{op}: argument 'dim' must be an int or None, got {type(dim).__name__} {dim!r}")
    shape = self.shape
    dims = reduction_dims(op, dim, len(shape))
    _check_nonempty(op, shape, dims)
    return (reduced_shape(shape, dims, keepdim), _INT64)


def _arg_body(xp: Any, name: str, a: Any, dim: int | None, keepdim: bool, out: Any) -> None:
    dims = reduction_dims(name, dim, a.ndim)
    axis = None if dim is None or a.ndim == 0 else dims[0]
    fn = getattr(xp, name)
    if out.dtype == _INT64:
        fn(a, axis=axis, out=out, keepdims=keepdim)
    else:
        xp.copyto(out, fn(a, axis=axis, keepdims=keepdim), casting="same_kind")


@_ks.argmax.cpu
def _argmax_cpu(self: CPUTensor, dim: int | None, keepdim: bool, *, out: ConstOut[CPUTensor]) -> None:
    _arg_body(np, "argmax", self.array, dim, keepdim, out.array)


@_ks.argmax.cuda
def _argmax_cuda(self: CUDATensor, dim: int | None, keepdim: bool, *, out: ConstOut[CUDATensor]) -> None:
    _arg_body(cupy_module(), "argmax", self.array, dim, keepdim, out.array)


@structured_op(inplace=False)
def argmin(self: TensorMeta, dim: int | None = None, keepdim: bool = False) -> TensorSpec:
    """Index of the minimum along ``dim`` (``torch.argmin``; values as ``np.argmin``: the first minimal
    element wins, and the first NaN counts as the minimum).

    ``dim=None`` gives the index into the flattened tensor (0-d result; with ``keepdim`` every dimension of
    size 1, as NumPy's ``keepdims``). Result dtype: int64. Reducing over a dimension of size 0 (or an empty
    tensor with ``dim=None``) is a ShapeError (a ValueError, as NumPy raises) naming the dim. Complex inputs
    are refused (as PyTorch).
    """
    return _arg_meta("argmin", self, dim, keepdim)


@_ks.argmin.cpu
def _argmin_cpu(self: CPUTensor, dim: int | None, keepdim: bool, *, out: ConstOut[CPUTensor]) -> None:
    _arg_body(np, "argmin", self.array, dim, keepdim, out.array)


@_ks.argmin.cuda
def _argmin_cuda(self: CUDATensor, dim: int | None, keepdim: bool, *, out: ConstOut[CUDATensor]) -> None:
    _arg_body(cupy_module(), "argmin", self.array, dim, keepdim, out.array)


# --- std, var --------------------------------------------------------------------------------------------


def _check_correction(op: str, correction: object) -> float:
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise ArgumentTypeError(
            f"{op}: argument 'correction' must be an int or a float, got {type(correction).__name__} {correction!r}"
        )
    if not math.isfinite(correction) or correction < 0:
        raise ArgumentValueError(f"{op}: argument 'correction' must be finite and >= 0, got {correction!r}")
    return correction


def _moment_meta(
    op: str, fn: Callable[..., Any], self: TensorMeta, dim: object, keepdim: bool, correction: object
) -> TensorSpec:
    _check_keepdim(op, keepdim)
    _check_correction(op, correction)
    dims = reduction_dims(op, dim, self.ndim)
    return (reduced_shape(self.shape, dims, keepdim), _numpy_result(op, fn, self.dtype, None))


def _moment_body(xp: Any, name: str, a: Any, dim: Any, keepdim: bool, correction: int | float, out: Any) -> None:
    result = _numpy_result(name, getattr(np, name), a.dtype, None)
    axis = _axis(reduction_dims(name, dim, a.ndim), a.ndim)
    # NumPy converts an int ddof to a C long before computing (and after preparing out): a huge int goes in
    # as the float it is equal to, which gives the same inf/nan a huge float correction does.
    ddof = float(correction) if type(correction) is int and abs(correction) >= 2**62 else correction
    _write(xp, out, result, getattr(xp, name), a, axis=axis, ddof=ddof, keepdims=keepdim)


@structured_op(inplace=False)
def var(
    self: TensorMeta,
    dim: int | tuple[int, ...] | None = None,
    keepdim: bool = False,
    *,
    correction: int | float = 1,
) -> TensorSpec:
    """Variance over ``dim``: ``sum(|x - mean|**2) / (N - correction)`` (``torch.var``; values as
    ``np.var`` with ``ddof=correction``).

    ``correction`` (default 1, Bessel's correction, as PyTorch; 0 gives the population variance) is a
    non-negative int or float. Result dtype: NumPy's for ``np.var``: bool and integers give float64, floats
    keep theirs, complex gives the matching real dtype. When ``N - correction <= 0`` the result is inf or nan,
    with NumPy's RuntimeWarning on the CPU.
    """
    return _moment_meta("var", np.var, self, dim, keepdim, correction)


@_ks.var.cpu
def _var_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    correction: int | float,
    out: ConstOut[CPUTensor],
) -> None:
    _moment_body(np, "var", self.array, dim, keepdim, correction, out.array)


@_ks.var.cuda
def _var_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    correction: int | float,
    out: ConstOut[CUDATensor],
) -> None:
    _moment_body(cupy_module(), "var", self.array, dim, keepdim, correction, out.array)


@structured_op(inplace=False)
def std(
    self: TensorMeta,
    dim: int | tuple[int, ...] | None = None,
    keepdim: bool = False,
    *,
    correction: int | float = 1,
) -> TensorSpec:
    """Standard deviation over ``dim``: the square root of :func:`var` (``torch.std``; values as ``np.std``
    with ``ddof=correction``).

    ``correction`` (default 1, as PyTorch) is a non-negative int or float. Result dtype: NumPy's for
    ``np.std``: bool and integers give float64, floats keep theirs, complex gives the matching real dtype.
    When ``N - correction <= 0`` the result is inf or nan, with NumPy's RuntimeWarning on the CPU.
    """
    return _moment_meta("std", np.std, self, dim, keepdim, correction)


@_ks.std.cpu
def _std_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    correction: int | float,
    out: ConstOut[CPUTensor],
) -> None:
    _moment_body(np, "std", self.array, dim, keepdim, correction, out.array)


@_ks.std.cuda
def _std_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    correction: int | float,
    out: ConstOut[CUDATensor],
) -> None:
    _moment_body(cupy_module(), "std", self.array, dim, keepdim, correction, out.array)


# --- logsumexp -------------------------------------------------------------------------------------------


@structured_op(inplace=False)
def logsumexp(self: TensorMeta, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> TensorSpec:
    """``log(sum(exp(self)))`` over ``dim``, computed stably (``torch.logsumexp``; values as
    ``scipy.special.logsumexp``): the maximum ``m`` of each reduced slice is subtracted before ``exp`` and
    added back after ``log``, so huge logits do not overflow.

    Result dtype: floats keep theirs (float16 is computed in float32); bool and integers give float64
    (NumPy's ``mean`` rule); complex is refused (ArgumentTypeError). A slice of only ``-inf`` gives ``-inf``;
    any ``+inf`` gives ``+inf``; NaN propagates. The logsumexp over an empty dimension is ``-inf`` (the log of
    an empty sum).
    """
    _check_keepdim("logsumexp", keepdim)
    dims = reduction_dims("logsumexp", dim, self.ndim)
    return (reduced_shape(self.shape, dims, keepdim), _float_result("logsumexp", self.dtype))


def logsumexp_body(xp: Any, a: Any, axis: Any, out: Any) -> None:
    """Write the stable logsumexp of ``a`` over ``axis`` (NumPy-style: int, tuple or None) into ``out``.
    Shared with the nn ops; ``xp`` is NumPy or CuPy."""
    compute = _compute_dtype(_float_result("logsumexp", a.dtype))
    x = a.astype(compute, copy=False)
    if x.size == 0:
        # Either the result is empty too, or a reduced dim is empty: the log of an empty sum.
        out.fill(-math.inf)
        return
    if x.ndim == 0:
        x = x.reshape(1)  # arithmetic on 0-d arrays gives scalars, which cannot be written in place
    m = xp.amax(x, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    e = x - m
    xp.exp(e, out=e)
    s = xp.sum(e, axis=axis, keepdims=True)
    xp.log(s, out=s)
    xp.add(s, m, out=s)
    xp.copyto(out, s.reshape(out.shape), casting="same_kind")


@_ks.logsumexp.cpu
def _logsumexp_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CPUTensor],
) -> None:
    a = self.array
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logsumexp_body(np, a, _axis(reduction_dims("logsumexp", dim, a.ndim), a.ndim), out.array)


@_ks.logsumexp.cuda
def _logsumexp_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CUDATensor],
) -> None:
    a = self.array
    logsumexp_body(cupy_module(), a, _axis(reduction_dims("logsumexp", dim, a.ndim), a.ndim), out.array)


# --- all, any --------------------------------------------------------------------------------------------


@structured_op(inplace=False)
def all(self: TensorMeta, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> TensorSpec:
    """Whether every element over ``dim`` is true (non-zero) (``torch.all``; values as ``np.all``).

    Result dtype: bool, for every input dtype (NaN counts as true). Over an empty dimension the result is True.
    """
    _check_keepdim("all", keepdim)
    dims = reduction_dims("all", dim, self.ndim)
    return (reduced_shape(self.shape, dims, keepdim), _BOOL)


def _logical_body(xp: Any, name: str, a: Any, dim: Any, keepdim: bool, out: Any) -> None:
    axis = _axis(reduction_dims(name, dim, a.ndim), a.ndim)
    _write(xp, out, _BOOL, getattr(xp, name), a, axis=axis, keepdims=keepdim)


@_ks.all.cpu
def _all_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CPUTensor],
) -> None:
    _logical_body(np, "all", self.array, dim, keepdim, out.array)


@_ks.all.cuda
def _all_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CUDATensor],
) -> None:
    _logical_body(cupy_module(), "all", self.array, dim, keepdim, out.array)


@structured_op(inplace=False)
def any(self: TensorMeta, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> TensorSpec:
    """Whether any element over ``dim`` is true (non-zero) (``torch.any``; values as ``np.any``).

    Result dtype: bool, for every input dtype (NaN counts as true). Over an empty dimension the result is False.
    """
    _check_keepdim("any", keepdim)
    dims = reduction_dims("any", dim, self.ndim)
    return (reduced_shape(self.shape, dims, keepdim), _BOOL)


@_ks.any.cpu
def _any_cpu(
    self: CPUTensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CPUTensor],
) -> None:
    _logical_body(np, "any", self.array, dim, keepdim, out.array)


@_ks.any.cuda
def _any_cuda(
    self: CUDATensor,
    dim: int | tuple[int, ...] | None,
    keepdim: bool,
    *,
    out: ConstOut[CUDATensor],
) -> None:
    _logical_body(cupy_module(), "any", self.array, dim, keepdim, out.array)


# --- docstrings ------------------------------------------------------------------------------------------

_DOCS: Final = {
    sum: ("sum", "", _DTYPE_ARG_DOC),
    prod: ("prod", "", _DTYPE_ARG_DOC),
    mean: ("mean", "", _DTYPE_ARG_DOC),
    amax: ("amax", "; a complex input", ""),
    amin: ("amin", "; a complex input", ""),
    argmax: ("argmax", "; a complex input; a tuple dim", ""),
    argmin: ("argmin", "; a complex input; a tuple dim", ""),
    var: ("var", "; ``correction`` not a number", ""),
    std: ("std", "; ``correction`` not a number", ""),
    logsumexp: ("logsumexp", "; a complex input", ""),
    all: ("all", "", ""),
    any: ("any", "", ""),
}

for _op, (_name, _extra_type, _extra_doc) in _DOCS.items():
    _extra_value = ""
    if _op in (amax, amin, argmax, argmin):
        _extra_value = "; ShapeError (a ValueError): reducing over a dimension of size 0"
    elif _op in (var, std):
        _extra_value = "; ``correction`` negative or not finite"
    _text = _doc(_name, (_op.meta.__doc__ or "") + _extra_doc, _extra_type, _extra_value)
    _op.meta.__doc__ = _op.doc = _op.functional.__doc__ = _text
