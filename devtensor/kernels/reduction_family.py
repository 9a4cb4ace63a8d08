"""The reduction family: ops that reduce ``dim`` of one tensor (sum, prod, amax, argmax, mean, var, ...).

An entry names the op, its result-dtype rule and the rules it adds to the shared ones; the family generates the
meta function, the kernel (one for both devices: NumPy's or CuPy's function of the op's name) and the docstring:

    sum = reduction("sum", like_numpy(np.sum), dtype_arg=True, doc="Sum of the elements over ``dim`` ...")

Shared rules: ``dim`` is an int, a tuple of ints, or None for every dimension (negative dims count from the end;
:func:`reduction_dims`), ``keepdim`` keeps each reduced dimension with size 1 (a bool). Optional rules: a keyword
``dtype`` (NumPy's ``dtype=``), a keyword ``correction`` (``ddof``), one dim only (``argmax``), no complex input
(``ordered``), no empty reduced dimension (``nonempty``: reductions without identity). The meta function
normalises the dims and computes the result dtype once, into a :class:`ReductionPlan` the kernel reads.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, LiteralString, NamedTuple, TypeVar, cast

import numpy as np

from devtensor import dtypes
from devtensor.device import as_index
from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import DType, to_dtype
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from devtensor.kernels.reduction_docs import DTYPE_ARG_DOC, family_doc
from devtensor.kernels.ufunc_family import D, register_xp
from devtensor.lowering import Lowering, lowers
from devtensor.meta import normalize_dim, normalize_dims, offers_direct, offers_specs
from devtensor.structured import PlannedSpec, StructuredOp
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

if TYPE_CHECKING:
    from devtensor.dtypes import DTypeLike
else:
    # devtensor.dtypes.DTypeLike is a string alias, which typing.get_type_hints cannot combine with ``| None``
    # when it builds the schema; at run time the schema only needs a type here (the meta checks the value).
    DTypeLike = np.dtype | type | str

__all__ = [
    "floating",
    "same_dtype",
    "DTypeLike",
    "ReductionPlan",
    "compute_dtype",
    "float_result",
    "fixed",
    "like_numpy",
    "reduced_shape",
    "reduction",
    "reduction_dims",
    "write",
]

_INT64: Final = dtypes.int64
_BOOL: Final = dtypes.bool_
_FLOAT32: Final = dtypes.float32
_FLOAT64: Final = dtypes.float64
_FLOAT16: Final = dtypes.float16

# --- dims -----------------------------------------------------------------------------------------------

# (dim as given, ndim) -> normalized dims, sorted; only valid combinations are cached.
_MAX_DIMS: Final = 64  # (NumPy's: a reduction's direct call lays out any result C-contiguous, meta.FRESH_C)
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
    if as_index(d) is None:  # (NumPy integers are ints, as for every op's dims; bools are not)
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


def float_result(op: str, dtype: DType, arg: str | None = None) -> DType:
    """Result dtype of an op that computes in floats (logsumexp, softmax): floats keep theirs, bool and integers
    give float64 (NumPy's ``mean`` rule); complex is refused (ArgumentTypeError naming the op, and the argument
    ``arg`` when given)."""
    if dtype.kind == "f":
        return dtype
    if dtype.kind in "biu":
        return _FLOAT64
    if arg is not None:
        raise ArgumentTypeError(f"{op}: argument '{arg}' must be a real tensor, got dtype {dtype.name}")
    raise ArgumentTypeError(f"{op}: not supported for dtype {dtype.name} (needs a real input)")


def compute_dtype(dtype: DType) -> DType:
    """float16 is computed in float32 (as NumPy's mean does), then cast."""
    return _FLOAT32 if dtype == _FLOAT16 else dtype


def _optional_dtype(op: str, dtype: object) -> DType | None:
    return None if dtype is None else to_dtype(dtype, op=op)


def _no_complex(op: str, dtype: DType) -> None:
    if dtype.kind == "c":
        raise ArgumentTypeError(f"{op}: not supported for complex dtype {dtype.name} (complex numbers have no order)")


def _check_correction(op: str, correction: object) -> float:
    if isinstance(correction, (np.integer, np.floating)):
        correction = correction.item()  # a NumPy number counts as its Python value
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise ArgumentTypeError(
            f"{op}: argument 'correction' must be an int or a float, got {type(correction).__name__} {correction!r}"
        )
    if not math.isfinite(correction):
        # (a negative correction is fine: NumPy's ddof and PyTorch's correction accept it, dividing by N - c)
        raise ArgumentValueError(f"{op}: argument 'correction' must be finite, got {correction!r}")
    return correction


# --- dtype rules: (op, input dtype, ``dtype`` argument or None) -> result dtype -----------------------------

#: A result-dtype rule of an entry.
DTypeRule = Callable[[str, DType, DType | None], DType]


def like_numpy(fn: Callable[..., Any]) -> DTypeRule:
    """The rule "as NumPy's ``fn`` (np.sum, np.var, ...) gives for the input dtype and ``dtype=``", asked of
    NumPy itself (cached): it agrees with NumPy by construction. A complex input with a real ``dtype=`` is
    refused (ArgumentTypeError, as PyTorch; NumPy would drop the imaginary part)."""

    def rule(op: str, dtype: DType, arg: DType | None) -> DType:
        return _numpy_result(op, fn, dtype, arg)

    return rule


def fixed(result: DType) -> DTypeRule:
    """The rule "always ``result``" (bool for ``all``, int64 for ``argmax``)."""
    return lambda op, dtype, arg: result


def same_dtype(op: str, dtype: DType, arg: DType | None) -> DType:
    """The rule "the input's dtype" (``amax``)."""
    return dtype


def floating(op: str, dtype: DType, arg: DType | None) -> DType:
    """The rule "floats keep theirs, bool and integers give float64, complex is refused" (``logsumexp``)."""
    return float_result(op, dtype)


# --- the plan: what the meta function computed for the kernel ---------------------------------------------


class ReductionPlan:
    """What a reduction's kernel needs, computed once by its meta function.

    Attributes:
        axis: NumPy's ``axis`` (None for every dimension, an int for one-dim ops, else a tuple).
        dtype: the result dtype.
        compute: the dtype to compute in (``dtype``, or float32 for float16 means, as NumPy accumulates them).
        keepdim: whether the reduced dims stay, of size 1 (NumPy's ``keepdims``).
    """

    # A plain class, not a NamedTuple: code that copies tuple arguments element by element (a CPU fallback
    # moving tensors to the host) would turn a NamedTuple into a plain tuple.
    __slots__ = ("axis", "compute", "dtype", "keepdim")

    def __init__(self, axis: int | tuple[int, ...] | None, dtype: DType, compute: DType, keepdim: bool) -> None:
        self.axis = axis
        self.dtype = dtype
        self.compute = compute
        self.keepdim = keepdim

    def __repr__(self) -> str:
        return f"ReductionPlan(axis={self.axis!r}, dtype={self.dtype}, compute={self.compute}, keepdim={self.keepdim})"


class _Rules(NamedTuple):
    name: str
    result: DTypeRule
    dtype_arg: bool
    correction: bool
    single_dim: bool
    ordered: bool
    nonempty: bool
    float16_in_float32: bool


def _spec(r: _Rules, self: TensorMeta, dim: object, keepdim: bool, arg: Any) -> tuple[Any, DType, ReductionPlan]:
    """(result shape, result dtype, plan) of the reduction ``r`` of ``self``, every rule checked in order."""
    op = r.name
    _check_keepdim(op, keepdim)
    if r.ordered:
        _no_complex(op, self.dtype)
    if r.single_dim and isinstance(dim, (tuple, list)):
        raise ArgumentTypeError(f"{op}: argument 'dim' must be an int or None, got {type(dim).__name__} {dim!r}")
    if r.correction and arg is not None:  # (None: PyTorch's default, 1)
        _check_correction(op, arg)
    shape = self.shape
    ndim = len(shape)
    dims = reduction_dims(op, dim, ndim)
    if r.nonempty:
        _check_nonempty(op, shape, dims)
    given = _optional_dtype(op, arg) if r.dtype_arg else None
    result = r.result(op, self.dtype, given)
    compute = _FLOAT32 if r.float16_in_float32 and given is None and self.dtype == _FLOAT16 else result
    if r.single_dim:
        axis: int | tuple[int, ...] | None = None if dim is None or ndim == 0 else dims[0]
    else:
        axis = _axis(dims, ndim)
    return reduced_shape(shape, dims, keepdim), result, ReductionPlan(axis, result, compute, keepdim)


# --- meta functions and kernels, one per signature ---------------------------------------------------------


def _planned(
    r: _Rules, cache: dict[Any, PlannedSpec[ReductionPlan]], self: TensorMeta, dim: object, keepdim: bool, arg: Any
) -> PlannedSpec[ReductionPlan]:
    """:func:`_spec` as a PlannedSpec, cached per argument combination that succeeded (types included in the key:
    ``True`` and ``1`` hash alike, and only one of them is valid)."""
    # A tuple holding True equals one holding 1: tuples of exact ints only.
    cacheable = type(dim) is not tuple or _all_ints(dim)
    key = (self.shape, self.dtype, dim, type(dim), keepdim, type(keepdim), arg, type(arg))
    if cacheable:
        try:
            return cache[key]
        except (KeyError, TypeError):  # (TypeError: an unhashable argument, e.g. a list of dims)
            pass
    spec = PlannedSpec(*_spec(r, self, dim, keepdim, arg))
    if cacheable:
        try:
            if len(cache) >= _MAX_CACHE:
                cache.clear()
            cache[key] = spec
        except TypeError:
            pass
    return spec


def _metas(r: _Rules) -> Callable[..., PlannedSpec[ReductionPlan]]:
    # The common calls (dim an int or None, keepdim a bool, no dtype) keep their specs by (shape, dtype, dim,
    # keepdim), which the fronts read inline (meta.SHAPE_MEMO); the others go through _planned's cache.
    cache: dict[Any, PlannedSpec[ReductionPlan]] = {}
    specs: dict[Any, PlannedSpec[ReductionPlan]] = {}
    if r.dtype_arg:

        def meta(
            self: TensorMeta,
            dim: int | tuple[int, ...] | list[int] | None = None,
            keepdim: bool = False,
            *,
            dtype: DTypeLike | None = None,
        ) -> PlannedSpec[ReductionPlan]:
            if dtype is None and (dim is None or type(dim) is int) and (keepdim is True or keepdim is False):
                return _common(r, specs, self, dim, keepdim)
            return _planned(r, cache, self, dim, keepdim, dtype)

    elif r.correction:

        def meta(  # type: ignore[misc]
            self: TensorMeta,
            dim: int | tuple[int, ...] | list[int] | None = None,
            keepdim: bool = False,
            *,
            correction: int | float | None = 1,
        ) -> PlannedSpec[ReductionPlan]:
            return _planned(r, cache, self, dim, keepdim, correction)

    elif r.single_dim:

        def meta(self: TensorMeta, dim: int | None = None, keepdim: bool = False) -> PlannedSpec[ReductionPlan]:  # type: ignore[misc]
            return _planned(r, cache, self, dim, keepdim, None)

    else:

        def meta(  # type: ignore[misc]
            self: TensorMeta, dim: int | tuple[int, ...] | list[int] | None = None, keepdim: bool = False
        ) -> PlannedSpec[ReductionPlan]:
            if (dim is None or type(dim) is int) and (keepdim is True or keepdim is False):
                return _common(r, specs, self, dim, keepdim)
            return _planned(r, cache, self, dim, keepdim, None)

    meta.__name__ = meta.__qualname__ = r.name
    if not r.correction and not r.single_dim:
        offers_specs(specs)(meta)
    return meta


def _common(
    r: _Rules, specs: dict[Any, PlannedSpec[ReductionPlan]], self: TensorMeta, dim: int | None, keepdim: bool
) -> PlannedSpec[ReductionPlan]:
    """:func:`_spec` of a common call (see :func:`_metas`), kept in ``specs`` when it succeeds (bounded)."""
    key = (self.shape, self.dtype, dim, keepdim)
    spec = specs.get(key)
    if spec is None:
        spec = PlannedSpec(*_spec(r, self, dim, keepdim, None))
        if len(specs) >= _MAX_CACHE:
            specs.clear()
        specs[key] = spec
    return spec


def _order_matters(a: Any, out: Any) -> bool:
    """Whether writing the reduction of ``a`` straight into the C-ordered ``out`` may round otherwise than NumPy's
    own call without ``out``: NumPy lays a fresh result out as its input (K order), and the layout of the
    operands decides which dimension its iterator sums along (pairwise summation runs along the inner loop), so
    a result of 2 or more dims of an input that is not C-contiguous (a transpose, a strided slice) is computed
    fresh and copied, giving ``np.sum``'s and ``np.mean``'s values bit for bit. A 0-d or 1-d result has one
    layout only."""
    return bool(out.ndim >= 2 and not a.flags.c_contiguous)


def write(
    xp: ModuleType, fn: Callable[..., Any], a: Any, keepdim: bool, plan: ReductionPlan, out: Any, **kw: Any
) -> None:
    """``fn(a, axis=plan.axis, keepdims=keepdim, **kw)`` into ``out``: directly (``out=``) when ``out`` has the
    dtype ``plan.compute`` and its layout cannot change the rounding (:func:`_order_matters`), else computed,
    then cast into ``out`` (same_kind; the front checked it)."""
    if out.dtype == plan.compute and not _order_matters(a, out):
        fn(a, axis=plan.axis, keepdims=keepdim, out=out, **kw)
    else:
        xp.copyto(out, fn(a, axis=plan.axis, keepdims=keepdim, **kw), casting="same_kind")


#: The ufunc whose ``reduce`` method NumPy's function of this name calls for an ndarray (``np.sum`` is
#: ``np.add.reduce(a, axis, dtype, out, keepdims=...)``; ``np.all`` passes ``dtype=bool``): the kernels call the
#: method itself, skipping the function's Python wrapper (about 1 µs), with the same values bit for bit.
_REDUCE_UFUNCS: Final[dict[str, tuple[np.ufunc, DType | None]]] = {
    "sum": (np.add, None),
    "prod": (np.multiply, None),
    "amax": (np.maximum, None),
    "amin": (np.minimum, None),
    "all": (np.logical_and, _BOOL),
    "any": (np.logical_or, _BOOL),
}


def _reduce_calls(r: _Rules, function: str, ufunc: np.ufunc, fixed_dtype: DType | None) -> tuple[Any, Any]:
    """The kernel of a reduction NumPy computes with ``ufunc.reduce`` (see ``_REDUCE_UFUNCS``) and its NumPy call,
    which is also the direct path's (meta.DIRECT, kind "plan"): ``direct(array, plan, out=None)`` writes into
    ``out`` (cast same_kind when its dtype is not the plan's compute dtype), or, without one, returns a fresh
    result as the allocating path lays it out (C-contiguous, of the plan's dtype; ``out=...`` makes NumPy return a
    0-d array, not a scalar, for a full reduction)."""
    reduce = ufunc.reduce
    by_plan = r.dtype_arg  # (NumPy's dtype= is the plan's compute dtype; else the ufunc's fixed one or None)

    def direct(a: Any, plan: ReductionPlan, out: Any = None) -> Any:
        dtype = plan.compute if by_plan else fixed_dtype
        if out is None:
            result = reduce(a, plan.axis, dtype, out=..., keepdims=plan.keepdim)
            return result if result.ndim < 2 or result.flags.c_contiguous else np.ascontiguousarray(result)
        if out.dtype == plan.compute and not _order_matters(a, out):
            reduce(a, plan.axis, dtype, out, keepdims=plan.keepdim)
        else:
            np.copyto(out, reduce(a, plan.axis, dtype, keepdims=plan.keepdim), casting="same_kind")
        return out

    def kernel(xp: ModuleType, self: D, dim: object, keepdim: bool, *, plan: ReductionPlan, out: ConstOut[D]) -> None:
        if xp is np:
            direct(self._array, plan, out.array)
        else:
            kw = {"dtype": plan.compute} if by_plan else {}
            write(xp, getattr(xp, function), self._array, keepdim, plan, out.array, **kw)

    def kernel_dtype(  # (the kernel of the ops with ``dtype=``)
        xp: ModuleType, self: D, dim: object, keepdim: bool, *, dtype: object, plan: ReductionPlan, out: ConstOut[D]
    ) -> None:
        kernel(xp, self, dim, keepdim, plan=plan, out=out)

    chosen = kernel_dtype if by_plan else kernel
    chosen.__name__ = chosen.__qualname__ = f"{r.name}_kernel"

    @lowers(chosen)
    def lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: ReductionPlan) -> bool:
        # (the family's lowering, devtensor.lowering: the CPU kernel's one ufunc.reduce call with the plan's
        # axis, dtype and keepdims; an out of another dtype, cast by copyto, replays the kernel)
        if out.dtype != plan.compute:
            return False
        # (one axis given as an int and keepdims positionally: the same reduction, parsed faster by NumPy)
        axis = plan.axis[0] if type(plan.axis) is tuple and len(plan.axis) == 1 else plan.axis
        lw.call(reduce, args["self"], axis, plan.compute if by_plan else fixed_dtype, out, plan.keepdim)
        return True

    return chosen, direct


def _kernel(r: _Rules, function: str) -> Callable[..., None]:
    np_fn = getattr(np, function)  # (NumPy's looked up once; another module's at each call)
    if r.dtype_arg:

        def kernel(
            xp: ModuleType, self: D, dim: object, keepdim: bool, *, dtype: object, plan: ReductionPlan, out: ConstOut[D]
        ) -> None:
            write(
                xp,
                np_fn if xp is np else getattr(xp, function),
                self._array,
                keepdim,
                plan,
                out.array,
                dtype=plan.compute,
            )

    elif r.correction:

        def kernel(  # type: ignore[misc]
            xp: ModuleType,
            self: D,
            dim: object,
            keepdim: bool,
            *,
            correction: int | float | None,
            plan: ReductionPlan,
            out: ConstOut[D],
        ) -> None:
            if correction is None:  # (PyTorch's correction=None: the default, Bessel's 1)
                correction = 1
            # NumPy converts an int ddof to a C long before computing (and after preparing out): a huge int goes
            # in as the float it is equal to, which gives the same inf/nan a huge float correction does.
            ddof = float(correction) if type(correction) is int and builtins.abs(correction) >= 2**62 else correction
            write(xp, np_fn if xp is np else getattr(xp, function), self._array, keepdim, plan, out.array, ddof=ddof)

    else:

        def kernel(  # type: ignore[misc]
            xp: ModuleType, self: D, dim: object, keepdim: bool, *, plan: ReductionPlan, out: ConstOut[D]
        ) -> None:
            write(xp, np_fn if xp is np else getattr(xp, function), self._array, keepdim, plan, out.array)

    kernel.__name__ = kernel.__qualname__ = f"{r.name}_kernel"
    return kernel


#: An op's name, kept as a Literal in the op's type (StructuredOp[...]: pyright checks its impls by it).
_N = TypeVar("_N", bound=LiteralString)


def reduction(
    name: _N,
    result: DTypeRule,
    *,
    doc: str,
    dtype_arg: bool = False,
    correction: bool = False,
    single_dim: bool = False,
    ordered: bool = False,
    nonempty: bool = False,
    float16_in_float32: bool = False,
    errors: str = "",
    function: str | None = None,
    kernel: Callable[..., None] | None = None,
) -> StructuredOp[_N]:
    """Define the reduction ``name(self, dim=None, keepdim=False)`` (functional, out, method; no inplace).

    Args:
        result: the result-dtype rule (:func:`like_numpy`, :func:`fixed`, :func:`same_dtype`, :func:`floating`).
        doc: the op's summary (semantics and their source: PyTorch's and NumPy's names); the shared argument,
            variant and error sections are appended.
        dtype_arg: the op takes a keyword ``dtype=None`` (NumPy's ``dtype=``: the dtype to compute and return in).
        correction: the op takes a keyword ``correction=1`` (a finite int or float, negative too: NumPy's
            ``ddof``; None is the default 1, as PyTorch's).
        single_dim: ``dim`` is one int or None (the flattened tensor), not a tuple (``argmax``).
        ordered: complex inputs are refused (they have no order).
        nonempty: reducing over a dimension of size 0 is a ShapeError (no identity: ``amax``, ``argmax``).
        float16_in_float32: without ``dtype=``, float16 is accumulated in float32 (``mean``, as NumPy's).
        errors: more TypeErrors for the docstring (``"; a complex input"``), when the dtype rule raises them.
        function: the name of the NumPy (and CuPy) function the default kernel calls (default: ``name``).
        kernel: the kernel ``kernel(xp, self, dim, keepdim, *, ..., plan, out)`` (``plan`` a
            :class:`ReductionPlan`); by default NumPy's (CuPy's) ``function`` with ``axis``, ``keepdims``,
            ``out`` (and ``dtype``, or ``ddof``).
    Returns the StructuredOp.
    """
    rules = _Rules(name, result, dtype_arg, correction, single_dim, ordered, nonempty, float16_in_float32)
    meta = _metas(rules)
    extra_type = ("; a complex input" if ordered else "") + ("; a tuple dim" if single_dim else "")
    extra_type += ("; ``correction`` not a number" if correction else "") + errors
    extra_value = "; ShapeError (a ValueError): reducing over a dimension of size 0" if nonempty else ""
    extra_value += "; ``correction`` not finite" if correction else ""
    text = family_doc(name, doc + (DTYPE_ARG_DOC if dtype_arg else ""), extra_type, extra_value)
    meta.__doc__ = text
    direct: list[Any] | None = None
    function = function or name
    if kernel is None and function in _REDUCE_UFUNCS and not correction and not single_dim:
        # The fronts call NumPy's ufunc.reduce themselves while this kernel is the CPU handler.
        kernel, call = _reduce_calls(rules, function, *_REDUCE_UFUNCS[function])
        direct = [None, call]
        offers_direct(direct, fresh_c=_MAX_DIMS)(meta)
    op = cast("StructuredOp[_N]", StructuredOp(name, meta, inplace=False))
    op.functional.__doc__ = text
    register_xp(op, kernel or _kernel(rules, function))
    if direct is not None:
        direct[0] = op.table.kernels.get(DispatchKey.CPU)
    return op
