"""Helpers for writing meta functions: broadcasting and ufunc result dtypes, cached.

A meta function checks its arguments and returns ``(shape, dtype)`` of the result. These helpers answer the
usual questions for elementwise ops from caches (one dict lookup after the first call of a combination):

* :func:`broadcast_shapes` follows NumPy's broadcasting rules;
* :func:`unary_ufunc_meta`, :func:`binary_ufunc_meta` build the meta function of a ufunc-like op, and
  :func:`ufunc_meta` computes one for any number of arguments; all take the result dtype from NumPy's own type
  resolution for the ufunc (``ufunc.resolve_dtypes``), with Python scalars weak as NEP 50 says, and checks that
  Python ints fit the integer dtype they are used with (NumPy 2 raises OverflowError for that too, at call time);
  :func:`check_python_ints` does the same for ops whose operands all meet in the result dtype, and
  :func:`check_int_scalar` for one value;
* :func:`normalize_dim` and :func:`normalize_dims` check and normalise dimension arguments: the one dim rule of
  every op (PyTorch's ``maybe_wrap_dim``), with one message for one mistake; :func:`int_arg` and
  :func:`ints_arg` check int and int-sequence arguments (all four defined in :mod:`devtensor.arguments`).

Errors name the op and the arguments.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, Final, NoReturn, TypeVar, cast

import numpy as np

from devtensor.arguments import int_arg, ints_arg, normalize_dim, normalize_dims
from devtensor.dtypes import DType, Scalar
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    CastingError,
    ScalarOverflowError,
    ShapeError,
    short_repr,
)
from devtensor.tensor import Tensor, TensorOrScalar, TensorSpec

__all__ = [
    "binary_ufunc_meta",
    "broadcast_shapes",
    "check_int_scalar",
    "check_scalar_fits",
    "check_python_ints",
    "int_arg",
    "int_bounds",
    "int_text",
    "ints_arg",
    "memoized",
    "normalize_dim",
    "normalize_dims",
    "ufunc_meta",
    "ufunc_result_dtype",
    "unary_ufunc_meta",
]

#: The attribute through which the meta functions made here offer the fronts (devtensor.structured)
#: to inline their common case, saving a Python call per op call: ``("unary", cache)`` for
#: :func:`unary_ufunc_meta` (``cache`` maps ``self``'s dtype to the result's), ``("binary", last)`` for
#: :func:`binary_ufunc_meta` (``last[0]`` is the entry used last for two tensors, ``last[1]`` for a tensor and a
#: Python number, ``last[2]`` for a Python number and a tensor, ``last[3]`` the two tensors' entry before
#: ``last[0]``: ``(self's dtype or type, other's dtype or type, result dtype, ints to range-check, loop dtypes, the
#: lowest and highest Python int passing the range check)``). What the fronts compute inline is exactly what the
#: meta function would return; any other case calls it.
INLINE: Final = "_devtensor_inline"

#: The attribute naming the ``TensorOrScalar`` parameters of a meta function that refuse a Python number at run
#: time (PyTorch's schema wants a tensor there: :func:`binary_ufunc_meta`'s ``numbers``), a tuple of names. The
#: typed declarations (devtensor.codegen) type those parameters as tensors; the schema keeps ``TensorOrScalar``,
#: the parameter shape of the fronts' compiled elementwise lane, which so takes the tensor calls as before.
TENSOR_ONLY: Final = "_devtensor_tensor_only"

#: The attribute through which a meta function whose op's built-in CPU kernel is one ufunc call offers the
#: generated functional fronts the direct path: a list ``[kernel, ufunc]`` (the ufunc family sets ``kernel`` to
#: the op's registered CPU kernel). While that kernel is the handler (no override, no other kernel registered),
#: the front calls ``ufunc(*arrays, out=result)`` itself: the same call the kernel makes, without its frame and
#: ConstOut. Ops with ``alpha`` (add, sub) add a third item: the function of the two NumPy steps for an alpha
#: other than 1 (``kernels.ufunc_family``), which the fronts call likewise.
DIRECT: Final = "_devtensor_direct"

#: The attribute naming the NumPy ufunc a meta function made by :func:`unary_ufunc_meta` or :func:`binary_ufunc_meta`
#: computes as (a custom op on one may take the built-in's direct path: tables.offer_plain_direct); none for a unary
#: meta given ``dtypes`` (the ufunc's own call does not make its result dtypes).
UFUNC: Final = "_devtensor_ufunc"

#: With the direct path: up to how many result dims its one NumPy call allocates C-contiguous results whatever
#: the operands' layouts (np.matmul: 2, core dims only), so the fronts let it allocate for transposed operands;
#: for a call taking a plan (a reduction's: 64, NumPy's most), also of the meta's dtype, 0-d results as arrays.
FRESH_C: Final = "_devtensor_fresh_c"

#: The attribute through which a meta function of a tensor list and an int dim (``cat``) offers the generated
#: fronts its :func:`memoized` results (see :func:`offers_memo`): the memo dict, keyed as :func:`memoized` keys a
#: list and an int, ``(dim, (shape, dtype, device) per tensor...)``. A hit is exactly its result; a miss calls it.
MEMO: Final = "_devtensor_memo"

#: A meta function of a tensor and an int (softmax's ``dim``) offers the fronts its successful results by
#: ``(shape, dtype, the int)`` (all they depend on), one of two tensors (matmul's) by ``(shape, dtype, shape,
#: dtype)``, a reduction's ``(self, dim, keepdim)`` by ``(shape, dtype, dim, keepdim)`` for dim an int or None and
#: no dtype argument: a hit is exactly its result; a miss calls it.
SHAPE_MEMO: Final = "_devtensor_shape_memo"

_M = TypeVar("_M", bound=Callable[..., Any])


def offers_direct(direct: list[Any], fresh_c: int = 0) -> Callable[[_M], _M]:
    """Mark a meta function as offering the direct path (:data:`DIRECT`): ``direct`` is [the op's built-in CPU
    kernel, set once it is registered; the one NumPy call that kernel makes]. Applied below ``structured_op``, so
    the op's fronts are made with it (devtensor.structured.tables says which calls fit); ``fresh_c``: FRESH_C."""

    def mark(meta: _M) -> _M:
        meta.__dict__[DIRECT] = direct
        if fresh_c:
            meta.__dict__[FRESH_C] = fresh_c
        return meta

    return mark


def offers_specs(specs: dict[Any, Any]) -> Callable[[_M], _M]:
    """Mark a meta function as offering the fronts ``specs`` (:data:`SHAPE_MEMO`): its successful results, which
    it keeps there keyed as that says, and which the fronts read inline (one frame less per op call)."""

    def mark(meta: _M) -> _M:
        meta.__dict__[SHAPE_MEMO] = specs
        return meta

    return mark


def offers_memo(spec: Callable[..., Any]) -> Callable[[_M], _M]:
    """Mark a meta function ``meta(tensors, dim)`` that returns ``spec(tensors, dim)``, ``spec`` being
    :func:`memoized`, as offering ``spec``'s memo to the fronts (:data:`MEMO`): they look a list of tensors and an
    int dim up in it inline, two Python calls less per op call."""

    def mark(meta: _M) -> _M:
        meta.__dict__[MEMO] = spec.__dict__[MEMO]
        return meta

    return mark


_broadcast_cache: dict[tuple[tuple[int, ...], ...], tuple[int, ...]] = {}
_MAX_CACHE: Final = 4096


def broadcast_shapes(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of ``shapes`` (NumPy's rules: align right, 1 stretches, equal sizes match).

    Raises:
        ShapeError (a ValueError): the shapes do not broadcast; names the op and every shape.
    """
    try:
        return _broadcast_cache[shapes]
    except KeyError:
        pass
    try:
        result = np.broadcast_shapes(*shapes)
    except ValueError:
        listed = " and ".join(str(list(s)) for s in shapes)
        raise ShapeError(f"{op}: shapes {listed} cannot be broadcast together") from None
    if len(_broadcast_cache) >= _MAX_CACHE:
        _broadcast_cache.clear()
    _broadcast_cache[shapes] = result
    return result


# (ufunc, operand dtypes or weak scalar types) -> (result dtype, indices of int scalars to range-check, loop dtypes)
_resolve_cache: dict[tuple[Any, ...], tuple[DType, tuple[int, ...], tuple[DType, ...]]] = {}
_IINFO: Final[dict[DType, tuple[int, int]]] = {}


def _resolve(op: str, ufunc: np.ufunc, operands: tuple[Any, ...]) -> tuple[DType, tuple[int, ...], tuple[DType, ...]]:
    key = (ufunc, *operands)
    try:
        return _resolve_cache[key]
    except KeyError:
        pass
    # NumPy's resolver takes Python int/float/complex as weak scalars; bool is the lowest kind, so a bool
    # dtype promotes identically.
    given = tuple(np.dtype(np.bool_) if o is bool else o for o in operands) + (None,) * ufunc.nout
    try:
        loop = ufunc.resolve_dtypes(given)
    except TypeError as e:
        names = ", ".join(o.__name__ if isinstance(o, type) else str(o) for o in operands)
        raise ArgumentTypeError(f"{op}: not supported for argument dtypes ({names}): {e}") from None
    # Python ints must fit the dtype NumPy 2 converts them to, or it raises OverflowError naming no op: the loop
    # dtype, except that an int meeting a bool loop (the logical ops) is converted to the default integer,
    # int64, first, and that a comparison with an integer tensor compares out-of-range ints exactly (NumPy 2;
    # a bool tensor compares in an int64 loop, where the int must fit).
    exact = ufunc in _COMPARISONS and any(isinstance(o, np.dtype) and o.kind in "iu" for o in operands)
    targets = tuple(_INT64 if d.kind == "b" else d for d in loop[: ufunc.nin])
    int_scalars = tuple(i for i, o in enumerate(operands) if o is int and not (exact and targets[i].kind in "iu"))
    entry = (loop[ufunc.nin], int_scalars, targets)
    _resolve_cache[key] = entry
    return entry


_COMPARISONS: Final = frozenset({np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal})
_INT64: Final = np.dtype(np.int64)


def int_bounds(dtype: DType) -> tuple[int, int]:
    """``(min, max)`` of the integer ``dtype`` (cached; ``np.iinfo``'s values as Python ints)."""
    bounds = _IINFO.get(dtype)
    if bounds is None:
        info = np.iinfo(dtype)
        bounds = _IINFO[dtype] = (int(info.min), int(info.max))
    return bounds


def check_int_scalar(op: str, arg: str, value: int, dtype: DType) -> None:
    """Raise ScalarOverflowError (an OverflowError) naming the op and the argument ``arg`` when the Python int
    ``value`` does not fit ``dtype``: out of the integer dtype's range, or too large for a float/complex one."""
    if dtype.kind in "fc":
        try:
            float(value)
        except OverflowError:
            raise ScalarOverflowError(
                f"{op}: Python integer {int_text(value)} (argument '{arg}') is too large to convert to {dtype.name}"
            ) from None
        return
    bounds = _IINFO.get(dtype) or int_bounds(dtype)
    if not bounds[0] <= value <= bounds[1]:
        raise ScalarOverflowError(
            f"{op}: Python integer {int_text(value)} (argument '{arg}') is out of bounds for {dtype.name} "
            f"[{bounds[0]}, {bounds[1]}]"
        )


def int_text(value: int) -> str:
    """``value`` for an error message: its digits, or ``~10**N`` (with its sign) from 61 digits on, which keeps
    messages short and never meets Python's limit on converting huge ints to text."""
    if -_BIG_INT < value < _BIG_INT:
        return str(value)
    return f"{'-' if value < 0 else ''}~10**{int(math.log10(-value if value < 0 else value))}"


_BIG_INT: Final = 10**60


def ufunc_result_dtype(op: str, ufunc: np.ufunc, *operands: DType | type) -> DType:
    """The result dtype NumPy's ``ufunc`` gives for tensor dtypes and weak Python scalar types (cached).

    Raises:
        ArgumentTypeError: NumPy has no loop for these dtypes (e.g. ``neg`` of bool, ``remainder`` of complex).
    """
    return _resolve(op, ufunc, operands)[0]


def unary_ufunc_meta(
    op: str, ufunc: np.ufunc, dtypes: dict[DType, DType] | None = None
) -> Callable[[Tensor], TensorSpec]:
    """The meta function of a one-argument elementwise op computed as NumPy's ``ufunc``: it returns ``self``'s
    shape and the dtype NumPy's ``ufunc`` gives for its dtype (``exp`` of int8 is float16, as in NumPy), or
    ``dtypes[dtype]`` where given (an op whose result dtypes differ from its ufunc's: ``reciprocal``).

    The returned meta raises ArgumentTypeError when NumPy has no loop for the dtype (``neg`` of bool).
    """
    cache: dict[Any, DType] = dict(dtypes or {})

    def meta(self: Tensor) -> TensorSpec:
        try:
            return (self._shape, cache[self._dtype])
        except KeyError:
            dtype = cache[self._dtype] = _resolve(op, ufunc, (self._dtype,))[0]
            return (self._shape, dtype)

    meta.__name__ = meta.__qualname__ = op
    meta.__dict__[INLINE] = ("unary", cache)  # (the fronts inline the cache hit)
    if not dtypes:  # (with dtypes of its own, the ufunc's one call would not make the meta's result dtype)
        meta.__dict__[UFUNC] = ufunc
    return meta


def binary_ufunc_meta(
    op: str, ufunc: np.ufunc, *, alpha: bool = False, numbers: str = "both"
) -> Callable[..., TensorSpec]:
    """The meta function ``meta(self, other)`` (with ``*, alpha=1`` when ``alpha``) of a two-argument
    elementwise op computed as NumPy's ``ufunc``: the broadcast shape of the tensor arguments and NumPy's result
    dtype, Python numbers weak (NEP 50). ``alpha`` (``add``/``sub``) follows PyTorch's rule: bool for bool
    results, no float for integral ones, no complex for real ones.

    The returned meta raises ShapeError (shapes that do not broadcast), ArgumentTypeError (no NumPy loop, or
    a bad ``alpha``) and ScalarOverflowError (a Python int out of range of the integer dtype it meets).
    ``numbers`` says where PyTorch's schema takes a Python number: ``"both"``, ``"other"`` (``eq(t, 2)`` but not
    ``eq(2, t)``) or ``"none"`` (``maximum``); elsewhere the meta raises ArgumentTypeError, before any entry is
    kept, so the fronts' inline entries for that form stay empty and every such call reaches the meta.
    """
    # (operand dtypes or types) -> (da, db, result dtype, int scalars to range-check, loop dtypes, and the
    # smallest and largest Python int ``other`` that passes the check: see _int_window)
    cache: dict[Any, dict[Any, _Entry]] = {}
    # The entries used last (each swapped whole, so threads always see a consistent one): [0] for two tensors
    # (or two Python numbers), [1] for a tensor and a Python number (``x * 0.5`` beside ``x * mask``), [2] for a
    # Python number and a tensor (``0.5 * x``), [3] the entry [0] held before (two tensors).
    empty: _Entry = (None, None, _NO_DTYPE, (), (), 1, 0)
    last: list[_Entry] = [empty, empty, empty, empty]

    def meta(self: TensorOrScalar, other: TensorOrScalar, *, alpha: Scalar = 1) -> TensorSpec:
        slot = 0
        if isinstance(self, Tensor):
            shape = self._shape
            da: Any = self._dtype
            if isinstance(other, Tensor):
                db: Any = other._dtype
                if other._shape != shape:
                    shape = broadcast_shapes(op, shape, other._shape)
            else:
                if numbers == "none":
                    _not_a_number(op, "other", other)
                db = type(other)
                slot = 1
        else:
            if numbers != "both":
                _not_a_number(op, "self", self)
            da = type(self)
            if isinstance(other, Tensor):
                shape = other._shape
                db = other._dtype
                slot = 2
            else:
                shape = ()
                db = type(other)
        # The last combination seen, by identity (a hit is two ``is`` tests, a dict lookup hashes two dtypes).
        entry = last[slot]
        if entry[0] is not da or entry[1] is not db:
            try:
                entry = cache[da][db]
            except KeyError:
                result, checks, loops = _resolve(op, ufunc, (da, db))
                entry = cache.setdefault(da, {})[db] = (da, db, result, checks, loops, *_int_window(checks, loops))
            if slot == 0:
                last[3] = last[0]  # (the entry before, which the fronts' lane also tries: x * y beside x * mask)
            last[slot] = entry
        if entry[3]:
            for i in entry[3]:
                check_int_scalar(op, _BINARY_NAMES[i], (self, other)[i], entry[4][i])  # type: ignore[arg-type]
        # (a float alpha for float results is valid: no call)
        if (
            alpha is not ONE
            and (alpha != 1 or type(alpha) is not int)
            and (type(alpha) is not float or entry[2].kind not in "fc")
        ):
            _check_alpha(op, alpha, entry[2], other)
        return (shape, entry[2])

    if not alpha:
        # The op has no alpha: hide the parameter from the signature the schema is derived from, so no
        # variant takes it; the meta itself still runs with its default (no extra call frame per op call).
        sig = inspect.signature(meta)
        meta.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values() if p.name != "alpha"])  # type: ignore[attr-defined]
        meta.__annotations__ = {k: v for k, v in meta.__annotations__.items() if k != "alpha"}
    meta.__name__ = meta.__qualname__ = op
    # The fronts inline the common cases (see INLINE): two tensors of one shape whose dtypes are those
    # of ``last[0]``, or a tensor and a Python number (no int to range-check, or an int within the entry's
    # window) those of ``last[1]`` (the number first: ``last[2]``); alpha left at 1 or, for a floating-point
    # result, a float.
    meta.__dict__[INLINE] = ("binary", last)
    meta.__dict__[UFUNC] = ufunc
    meta.__dict__[TENSOR_ONLY] = {"both": (), "other": ("self",), "none": ("self", "other")}[numbers]
    return meta


def _not_a_number(op: str, arg: str, value: object) -> NoReturn:
    """PyTorch's schema of ``op`` takes a tensor as ``arg``: a Python number there is an ArgumentTypeError."""
    raise ArgumentTypeError(
        f"{op}: argument '{arg}' must be a tensor, not {type(value).__name__} {short_repr(value)} (PyTorch's "
        "schema; a number goes in as devtensor.tensor(number), or through devtensor.array_api)"
    )


_Entry = tuple[Any, Any, DType, tuple[int, ...], tuple[DType, ...], int, int]
_FLOAT_SAFE: Final = 2**1023  # (every Python int of smaller magnitude converts to a float)


def _int_window(checks: tuple[int, ...], loops: tuple[DType, ...]) -> tuple[int, int]:
    """For a binary ufunc entry with one Python int to range-check (a tensor and an int), the ints that pass
    :func:`check_int_scalar`: the loop dtype's range (every int below 2**1023 in magnitude for float and complex
    loops); an empty window (1, 0) for other entries."""
    if len(checks) != 1:
        return 1, 0
    dtype = loops[checks[0]]
    if dtype.kind in "fc":
        return -_FLOAT_SAFE, _FLOAT_SAFE
    return _IINFO.get(dtype) or int_bounds(dtype)


def _check_alpha(op: str, alpha: Scalar, result: DType, other: TensorOrScalar) -> None:
    kind = result.kind
    if type(alpha) not in (bool, int, float, complex):
        raise ArgumentTypeError(f"{op}: argument 'alpha' must be a Python number, got {type(alpha).__name__}")
    if type(alpha) is bool and kind != "b":
        raise ArgumentTypeError(
            f"{op}: a bool argument 'alpha' ({alpha!r}) is only supported for boolean results (PyTorch's rule), "
            f"and the result is {result.name}"
        )
    if kind == "b" and type(alpha) is not bool:
        raise ArgumentTypeError(f"{op}: for boolean inputs, argument 'alpha' must be a bool, got {alpha!r}")
    if kind in "iu" and type(alpha) not in (bool, int):
        raise ArgumentTypeError(
            f"{op}: for integral inputs, argument 'alpha' must not be a floating point number, got {alpha!r}"
        )
    if kind != "c" and type(alpha) is complex:
        raise ArgumentTypeError(f"{op}: for non-complex inputs, argument 'alpha' must not be complex, got {alpha!r}")
    if type(alpha) is int and kind in "iu":
        # The kernel scales a tensor ``other`` in the result dtype, and a Python ``other`` in Python: both the
        # factor and a Python product must fit the result's integer dtype.
        check_int_scalar(op, "alpha", alpha, result)
        if type(other) is int:
            check_int_scalar(op, "alpha * other", alpha * other, result)


_BINARY_NAMES: Final = ("self", "other")
#: ``alpha is ONE``: alpha at its default (ints this small are cached objects), valid without further tests.
ONE: Final = 1
_NO_DTYPE: Final = np.dtype(np.void)  # fills the empty cache entry (its operand types match nothing)


def check_python_ints(op: str, dtype: DType, names: tuple[str, ...], *args: Any) -> None:
    """For an op whose arguments all meet in the result ``dtype`` (``where``): raise ScalarOverflowError (an
    OverflowError) naming the op and the argument when a Python int among ``args`` is out of range of ``dtype``,
    an integer dtype, or too large for a float or complex one (NumPy raises a bare OverflowError there). Does
    nothing for other dtypes; ``names`` name ``args``."""
    if dtype.kind in "iufc":
        for name, a in zip(names, args, strict=True):
            if type(a) is int:
                check_int_scalar(op, name, a, dtype)


def ufunc_meta(op: str, ufunc: np.ufunc, names: tuple[str, ...], *args: Any) -> tuple[tuple[int, ...], DType]:
    """Meta of an elementwise op with any number of arguments computed as NumPy's ``ufunc``: broadcast shape of
    the tensor arguments and NumPy's result dtype (NEP 50 weak scalars). ``names`` are the argument names for
    errors.

    Raises:
        ShapeError: the tensor shapes do not broadcast.
        ArgumentTypeError: no NumPy loop for the dtypes.
        ScalarOverflowError (an OverflowError): a Python int out of range of the integer dtype it meets.
    """
    shape: tuple[int, ...] | None = None
    operands: list[Any] = []
    mixed = False
    for a in args:
        if isinstance(a, Tensor):
            s = a._shape
            if shape is None:
                shape = s
            elif s != shape:
                mixed = True
            operands.append(a._dtype)
        else:
            operands.append(type(a))
    if mixed:
        shape = broadcast_shapes(op, *(a._shape for a in args if isinstance(a, Tensor)))
    dtype, int_scalars, loop = _resolve(op, ufunc, tuple(operands))
    for i in int_scalars:
        check_int_scalar(op, names[i], args[i], loop[i])
    return (shape if shape is not None else (), dtype)


# --- dimension and int arguments ------------------------------------------------------------------------


def check_scalar_fits(op: str, value: Scalar, dtype: DType, arg: str = "value", *, bool_range: bool = False) -> None:
    """Raise when the Python number ``value`` (argument ``arg``) cannot be written into an element of ``dtype``
    (PyTorch's checked scalar conversion; NumPy raises the same exception classes with messages that name no
    op, or for a float into an integer dtype wraps silently). With ``bool_range`` (the creation functions' fill
    values, as arange and linspace check their bounds) a value into bool must lie in 0..1: ScalarOverflowError
    naming that range, ArgumentValueError for NaN; without it any number converts to bool as in PyTorch."""
    kind = dtype.kind
    if type(value) is complex and kind != "c":
        raise CastingError(f"{op}: argument '{arg}' {value!r} is complex; it cannot be written into dtype {dtype.name}")
    if kind == "b" and bool_range:
        # NumPy and PyTorch make any nonzero value True, so full(..., 2, dtype=bool) would pass silently.
        if type(value) is bool:
            return
        if value != value:
            raise ArgumentValueError(f"{op}: argument '{arg}' is NaN; it cannot be written into dtype bool")
        if not 0 <= value <= 1:  # type: ignore[operator]  # (real: complex was refused above)
            shown = int_text(value) if type(value) is int else repr(value)
            raise ScalarOverflowError(
                f"{op}: argument '{arg}' {shown} is out of bool's range (0 to 1); devtensor does not wrap around"
            )
        return
    if kind in "iu":
        if type(value) is int:
            check_int_scalar(op, arg, value, dtype)
        elif type(value) is float:
            if value != value:
                raise ArgumentValueError(f"{op}: argument '{arg}' is NaN; it cannot be written into dtype {dtype.name}")
            if value in (float("inf"), float("-inf")):
                raise ScalarOverflowError(
                    f"{op}: argument '{arg}' {value!r} is infinite; it cannot be written into dtype {dtype.name}"
                )
            check_int_scalar(op, arg, int(value), dtype)


# --- memoized meta results -----------------------------------------------------------------------------------


class _Uncacheable(Exception):
    """An argument :func:`memoized` cannot key on (a NaN, an object of an unknown type)."""


#: Argument types keyed on (type, value): the value alone would let ``1`` and ``True`` share an entry.
_EXACT_KEYS: Final = frozenset({bool, int, str, type(None), np.dtype, type})
_MEMO_LIMIT: Final = 1024
_F = TypeVar("_F", bound=Callable[..., Any])


def _memo_key(args: tuple[Any, ...] | list[Any]) -> tuple[Any, ...]:
    """The memo key of meta-function arguments: per tensor its shape, dtype and device (what a meta function of
    a non-view op reads); per number, string, dtype or type its exact type and value (``0.0`` and ``-0.0``
    apart); lists and tuples item by item, with their type. Raises _Uncacheable for a NaN or another object."""
    key: list[Any] = []
    for a in args:
        if isinstance(a, Tensor):
            key.append((a._shape, a._dtype, a._device))
            continue
        kind = type(a)
        if kind in _EXACT_KEYS or isinstance(a, np.dtype):
            key.append((kind, a))
        elif kind is float:
            if a != a:
                raise _Uncacheable
            key.append((float, a, math.copysign(1.0, a)))
        elif kind is complex:
            if a != a:
                raise _Uncacheable
            key.append((complex, a, math.copysign(1.0, a.real), math.copysign(1.0, a.imag)))
        elif kind is list or kind is tuple:
            # (a tensor list, cat's and stack's, item by item here: no recursive call for its tensors)
            items: list[Any] = [kind]
            for x in a:
                if isinstance(x, Tensor):
                    items.append((x._shape, x._dtype, x._device))
                else:
                    items.append(_memo_key((x,)))
            key.append(tuple(items))
        else:
            raise _Uncacheable
    return tuple(key)


def memoized(meta: _F) -> _F:
    """``meta`` with its successful results memoized (a repeated call is one key build and one dict lookup).

    For meta functions that read of their tensor arguments only the shape, dtype and device (not strides:
    not for view ops) and whose result depends on nothing else: the key holds those per tensor and every other
    argument by exact type and value (``keepdim=1`` and ``keepdim=True`` are two entries, ``0.0`` and ``-0.0``
    two, a list and a tuple of the same dims two; a NaN or an argument of another type is never cached: the
    call goes to ``meta``). Failed calls are not cached: they raise again, with the same error, every time.
    The memo holds at most 1024 entries (then it starts afresh). The returned function has ``meta``'s
    signature, name and docstring (``__wrapped__`` is ``meta``), so an op's schema is unchanged.
    """
    memo: dict[tuple[Any, ...], Any] = {}

    @functools.wraps(meta)
    def cached(*args: Any, **kwargs: Any) -> Any:
        key: Any
        try:
            # The common calls (two tensors: matmul, cross_entropy; a tensor and an int: softmax, sum; a list
            # of tensors and an int: cat) keyed flat, without _memo_key's frame; their keys (tuples whose first
            # item is a shape or an int) cannot equal _memo_key's (tuples of per-argument tuples).
            if len(args) == 2 and not kwargs:
                a, b = args
                if isinstance(a, Tensor):
                    if isinstance(b, Tensor):
                        key = (a._shape, a._dtype, a._device, b._shape, b._dtype, b._device)
                        return memo[key]
                    if type(b) is int:
                        key = (a._shape, a._dtype, a._device, b)
                        return memo[key]
                elif type(a) is list and type(b) is int:  # (a tensor list and a dim: cat, stack; first item an int)
                    items: list[Any] = [b]
                    for t in a:
                        if not isinstance(t, Tensor):
                            break
                        items.append((t._shape, t._dtype, t._device))
                    else:
                        key = tuple(items)
                        return memo[key]
            key = _memo_key(args)
            if kwargs:
                key = (key, tuple(kwargs), _memo_key(tuple(kwargs.values())))
            return memo[key]
        except KeyError:
            pass
        except _Uncacheable:
            return meta(*args, **kwargs)
        result = meta(*args, **kwargs)
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        memo[key] = result
        return result

    cached.__dict__[MEMO] = memo
    return cast(_F, cached)
