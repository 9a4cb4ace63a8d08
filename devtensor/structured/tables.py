"""The per-op tables the structured fronts read, built once per op from its definition (schema, meta function,
kernel table): the inline common case the meta function offers (meta.INLINE), the direct call (meta.DIRECT) and
its kind, the memo of meta results the front looks up (meta.SHAPE_MEMO, meta.MEMO), and which compiled-core lane
the op takes. The generic front (:mod:`devtensor.structured.generic`) and the compiled core's lanes
(:func:`devtensor.structured.core.lazy_front`) read the same tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from devtensor.meta import DIRECT, FRESH_C, INLINE, MEMO, ONE, SHAPE_MEMO, UFUNC
from devtensor.structured import rules
from devtensor.structured.annotations import SCALAR, TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.structured.schema import Param

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp

__all__ = [
    "MEMO_ARRAYS",
    "PLAIN_KERNELS",
    "MEMO_INT",
    "MEMO_LIST",
    "MEMO_REDUCE",
    "MEMO_SCALARS",
    "NO_MEMO",
    "UNARY_CALL",
    "adopt_direct",
    "memo_form",
    "memo_lane",
    "meta_values",
    "offer_plain_direct",
    "ufunc_lane",
    "unary_call_lane",
]


def _own_marks(meta: Callable[..., Any]) -> dict[str, Any]:
    """The marks (meta.INLINE, meta.UFUNC, ...) ``meta`` offers: its attribute dict; none for a wrapper
    (``functools.wraps`` copies the wrapped function's marks, and a wrapper's results need not be that function's)
    or a callable object without a ``__dict__``."""
    marks: dict[str, Any] = getattr(meta, "__dict__", {})
    return {} if "__wrapped__" in marks else marks


def _inline_kind(op: StructuredOp) -> tuple[str | None, Any]:
    """(``"unary"`` or ``"binary"``, the meta's state) when the op's meta function offers an inline common case
    (meta.INLINE) that fits the op's parameters; (None, None) otherwise."""
    offer = _own_marks(op.meta).get(INLINE) if op.schema.plan is None else None
    if offer is None:
        return None, None
    kind, state = offer
    params = op.schema.params
    shape = [(p.name, p.category, p.kw_only, p.optional) for p in params]
    if kind == "unary" and shape == [("self", TENSOR, False, False)]:
        return kind, state
    two = [("self", TENSOR_OR_SCALAR, False, False), ("other", TENSOR_OR_SCALAR, False, False)]
    alpha = [("alpha", SCALAR, True, False)]
    if kind == "binary" and (shape == two or (shape == two + alpha and params[2].default is ONE)):
        return kind, state
    return None, None


def _call_direct(op: StructuredOp) -> str | None:
    """The kind of direct path (meta.DIRECT) the op offers as one NumPy call that is not an inline ufunc case:
    ``"arrays"`` (every parameter a required positional tensor: the call takes their arrays in order and
    ``out=``; matmul, mm), ``"list"`` (a tensor list and an int dim: the call takes the list's arrays, the dim
    and the out positionally; cat), ``"plan"`` (an op with a plan whose tensors are required positional ones
    and whose other arguments the meta function turned into its plan: the call takes the tensors' arrays in
    order, the plan and the out positionally; softmax, log_softmax), ``"scalars"`` (required positional tensors,
    then keyword Python numbers with defaults: the call takes the arrays, the numbers and the out positionally,
    and allocates the result itself, given no out, when every number is its default and every tensor has the
    result's dtype; addmm); None for other ops."""
    if getattr(op.meta, DIRECT, None) is None or _inline_kind(op)[0] is not None:
        return None
    params = op.schema.params
    if op.schema.plan is not None:
        tensors = [p for p in params if p.category == TENSOR]
        lists = any(p.category in (TENSOR_LIST, TENSOR_OR_SCALAR) for p in params)
        plain = all(not p.kw_only and not p.optional for p in tensors)
        return "plan" if tensors and plain and not lists else None
    if params and all(p.category == TENSOR and not p.kw_only and not p.optional for p in params):
        return "arrays"
    tensors = [p for p in params if p.category == TENSOR]
    rest = params[len(tensors) :]
    numbers = rest and all(p.category == SCALAR and p.kw_only and p.has_default for p in rest)
    if numbers and tensors and all(not p.kw_only and not p.optional for p in tensors):
        return "scalars"
    if len(params) == 2 and params[0].category == TENSOR_LIST and not params[1].kw_only:
        return "list"
    return None


def _int_memo(params: Sequence[Param]) -> bool:
    """Parameters ``(tensor, int)``, or ``(tensor, int, dtype=None)``: a memo keyed by (shape, dtype, int)."""
    if len(params) == 2:
        return True
    last = params[-1]
    return len(params) == 3 and last.name == "dtype" and last.has_default and last.default is None


#: The general path's lookup of the meta's result before calling it (:func:`memo_form`); the codes are the
#: compiled core's memo lanes' where the two match (see below). NO_MEMO: the meta function is called.
NO_MEMO: Final = 0


def memo_form(op: StructuredOp) -> int:
    """How the front looks up ``op``'s meta result before calling its meta function (an op with no inline kind):
    MEMO_REDUCE, a reduction's common call ``(self, dim, keepdim[, dtype])``, dim an int or None and no dtype, by
    (shape, dtype, dim, keepdim) in meta.SHAPE_MEMO; MEMO_ARRAYS, two tensors by their (shape, dtype) (matmul,
    mm); MEMO_SCALARS, three tensors and keyword numbers at their defaults, by the tensors' (shape, dtype)
    (addmm); MEMO_INT, ``(tensor, int[, dtype=None])`` by (shape, dtype, int) (softmax); MEMO_LIST, a tensor list
    and an int dim by meta.MEMO's key (cat); NO_MEMO for other ops. Only MEMO_REDUCE is taken by an op with a
    bool or Literal argument (its check comes first: :func:`devtensor.structured.rules.value_tests`)."""
    if _inline_kind(op)[0] is not None:
        return NO_MEMO
    params = op.schema.params
    checks = bool(rules.value_tests(params))
    specs = getattr(op.meta, SHAPE_MEMO, None)
    names = [p.name for p in params]
    categories = [p.category for p in params]
    if specs is not None and names[:3] == ["self", "dim", "keepdim"] and names[3:] in ([], ["dtype"]):
        return MEMO_REDUCE
    if specs is not None and not checks and categories == [TENSOR, TENSOR]:
        return MEMO_ARRAYS
    if (
        specs is not None
        and not checks
        and categories[:3] == [TENSOR] * 3
        and all(p.kw_only and p.has_default for p in params[3:])
    ):
        return MEMO_SCALARS
    if specs is not None and not checks and categories[:1] == [TENSOR] and _int_memo(params):
        return MEMO_INT
    if _call_direct(op) == "list" and getattr(op.meta, MEMO, None) is not None and not checks:
        return MEMO_LIST
    return NO_MEMO


def meta_values(op: StructuredOp) -> dict[str, Any]:
    """The meta function's objects the fronts read: ``_meta_cache`` (a unary inline kind's dtype entries) or
    ``_meta_last`` (a binary one's last entries), ``_direct`` (meta.DIRECT, where the front makes the direct
    call), ``_specs`` (meta.SHAPE_MEMO) or ``_memo`` (meta.MEMO) where :func:`memo_form` looks it up."""
    kind, state = _inline_kind(op)
    direct = getattr(op.meta, DIRECT, None)
    values: dict[str, Any] = {}
    if kind is not None:
        values["_meta_cache" if kind == "unary" else "_meta_last"] = state
        if direct is not None:
            values["_direct"] = direct
        return values
    if _call_direct(op) is not None:
        values["_direct"] = direct
    form = memo_form(op)
    if form == MEMO_LIST:
        values["_memo"] = getattr(op.meta, MEMO)
    elif form != NO_MEMO:
        values["_specs"] = getattr(op.meta, SHAPE_MEMO)
    return values


#: The compiled core's memo lanes (``devtensor/_core.c``; codes shared with it): a functional call without out whose
#: meta result the meta's memo holds (meta.SHAPE_MEMO, read as the Python front reads it) and whose direct call
#: allocates the result. REDUCE: ``(self, dim, keepdim[, dtype])`` (sum, amax, ...); INT: ``(self, int)``
#: (softmax, log_softmax); ARRAYS: two tensors (matmul, mm); SCALARS: three tensors and keyword numbers at their
#: defaults (addmm); LIST: a list of tensors and an int dim, keyed by meta.MEMO (cat).
MEMO_REDUCE, MEMO_INT, MEMO_ARRAYS, MEMO_SCALARS, MEMO_LIST = 3, 4, 5, 6, 7


#: The compiled core's lane for a unary op with an inline dtype entry whose direct call is no ufunc (relu): the
#: allocating path of the generic front's direct call (a 1-d or C-contiguous self; the call allocates).
UNARY_CALL: Final = 8


def unary_call_lane(op: StructuredOp) -> bool:
    """Whether ``op`` takes the compiled core's UNARY_CALL lane (functional, no out): a unary inline meta kind and a
    plain direct call that is no ufunc."""
    kind, _state = _inline_kind(op)
    direct = getattr(op.meta, DIRECT, None)
    return kind == "unary" and direct is not None and _call_direct(op) is None and not isinstance(direct[1], np.ufunc)


def memo_lane(op: StructuredOp) -> tuple[int, tuple[Any, ...], int] | None:
    """``(kind, defaults, fresh_c)`` when ``op``'s functional front reads a memo of meta results inline and makes
    the direct call that allocates the result (:func:`memo_form`, :func:`meta_values`): the lane's kind
    (the ``MEMO_*`` codes), the defaults it fills in (REDUCE: ``(has a dim default, dim's, keepdim's)``;
    SCALARS: the numbers'; LIST: dim's), and meta.FRESH_C (0: the result's layout is tested as the Python front
    tests it). None for other ops."""
    values = meta_values(op)
    kind = _call_direct(op)
    params = op.schema.params
    if kind == "list" and "_memo" in values and "_direct" in values and params[1].has_default:
        return MEMO_LIST, (params[1].default,), 0
    if "_specs" not in values or "_direct" not in values:
        return None
    names = [p.name for p in params]
    categories = [p.category for p in params]
    checks = rules.value_tests(params)
    fresh = int(getattr(op.meta, FRESH_C, 0))
    if kind == "plan" and names[:3] == ["self", "dim", "keepdim"] and names[3:] in ([], ["dtype"]):
        dim, keepdim = params[1], params[2]
        if keepdim.has_default and not params[0].kw_only and not dim.kw_only and not keepdim.kw_only:
            return MEMO_REDUCE, (dim.has_default, dim.default if dim.has_default else None, keepdim.default), fresh
        return None
    if kind == "plan" and not checks and categories[:1] == [TENSOR] and _int_memo(params) and not params[1].kw_only:
        return MEMO_INT, (), fresh
    if kind == "arrays" and not checks and categories == [TENSOR, TENSOR]:
        return MEMO_ARRAYS, (), fresh
    numbers = params[3:]
    if kind == "scalars" and not checks and categories[:3] == [TENSOR] * 3 and numbers:
        return (
            (MEMO_SCALARS, tuple(p.default for p in numbers), 0)
            if all(p.kw_only and p.has_default for p in numbers)
            else None
        )
    return None


def ufunc_lane(op: StructuredOp) -> bool:
    """Whether ``op``'s fronts have the compiled core's one-pass lane (``devtensor/_core.c``): an inline meta
    kind, a direct path whose call is the plain one, and a NumPy ufunc as the direct call."""
    kind, _state = _inline_kind(op)
    direct = getattr(op.meta, DIRECT, None)
    return kind is not None and direct is not None and _call_direct(op) is None and isinstance(direct[1], np.ufunc)


#: The CPU kernels whose whole body is ``ufunc(*arrays, out=out.array)`` for every call they get (the ufunc family
#: registers its ones): kernel -> ufunc. A custom op registering one of them takes the direct path of its ufunc.
PLAIN_KERNELS: Final[dict[Any, np.ufunc]] = {}


def offer_plain_direct(meta: Callable[..., Any], params: int) -> None:
    """Give ``meta`` (a meta.UFUNC meta function of ``params`` parameters, no direct path yet) the direct path
    ``[None, ufunc]`` (meta.DIRECT), which :func:`adopt_direct` completes when a plain kernel of that ufunc is
    registered. Not for a meta with ``alpha`` (its second NumPy step is the built-in ``add``/``sub``'s own), nor for
    a function wrapping one (``functools.wraps`` copies the mark)."""
    marks = _own_marks(meta)
    ufunc = marks.get(UFUNC)
    if ufunc is not None and DIRECT not in marks and params == ufunc.nin:
        marks[DIRECT] = [None, ufunc]


def adopt_direct(meta: Callable[..., Any], kernel: Callable[..., None]) -> None:
    """On registering ``kernel`` as an op's CPU kernel: where it is a plain kernel (:data:`PLAIN_KERNELS`) of the
    ufunc of ``meta``'s direct path, that path is the kernel's (the fronts take it while it is the handler)."""
    direct = getattr(meta, "__dict__", {}).get(DIRECT)
    if isinstance(direct, list) and PLAIN_KERNELS.get(kernel) is direct[1]:
        direct[0] = kernel
