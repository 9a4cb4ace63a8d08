"""The generic front's argument checks and meta step (:mod:`devtensor.structured.generic`), from per-op tables.

The argument checks walk the parameters in order by category (a tensor, a tensor or a Python number, a number,
a tensor list; other parameters are the meta function's to check), find the call's device (the first tensor's)
and raise the rules' errors (:mod:`devtensor.structured.rules`) in the order the parameters come, ``out`` last.
An argument of no type taken at once goes to :func:`rules.coerce` (NumPy values converted, the ``_raw`` front
called again). The meta step answers from the meta function's inline entries (meta.INLINE) or the memo of its
results (meta.SHAPE_MEMO, meta.MEMO; :func:`devtensor.structured.tables.memo_form`) where it can, else calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import SCALAR_TYPES
from devtensor.meta import ONE
from devtensor.structured import rules
from devtensor.structured.annotations import SCALAR, TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.structured.schema import Param
from devtensor.structured.tables import (
    MEMO_ARRAYS,
    MEMO_INT,
    MEMO_LIST,
    MEMO_REDUCE,
    MEMO_SCALARS,
    _inline_kind,
    memo_form,
    meta_values,
)
from devtensor.tensor import Tensor

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp

__all__ = ["Checks", "T", "TS", "S", "L"]

#: The argument checks' codes: a tensor, a tensor or a number, a number, a tensor list.
T, TS, S, L = 1, 2, 3, 4
_CODES: Final = {TENSOR: T, TENSOR_OR_SCALAR: TS, SCALAR: S, TENSOR_LIST: L}
#: A number parameter without a default that is a number (its value is always type-tested).
_NO_DEFAULT: Final = object()


class Checks:
    """An op variant's tables for the argument checks (:func:`_argument_checks`) and its meta step
    (:attr:`meta_spec`, :attr:`value_tests`); ``binding`` (key, refined class): tensors must be of exactly that
    class (a device binding)."""

    def __init__(
        self, op: StructuredOp, name: str, functional: bool, binding: tuple[DispatchKey, type[Tensor]] | None
    ) -> None:
        params = op.schema.params
        self.npos = npos = sum(not p.kw_only for p in params)
        self.nparams = nparams = len(params)
        self.kw_names = kw_names = tuple(p.name for p in params if p.kw_only)
        #: The tensor-category parameters' indices: the inputs the out and overlap rules see.
        self.tensor_at = tensor_at = tuple(
            i for i, p in enumerate(params) if p.category in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST)
        )
        self.cls = None if binding is None else binding[1]
        self.lists = tuple(p.name for p in params if p.category == TENSOR_LIST)
        self.table, self.named, self.retry = _argument_checks(op, functional, binding, tensor_at)
        values_ = meta_values(op)
        inline, state = _inline_kind(op)
        meta = op.meta

        def call_meta(values: list[Any]) -> Any:
            if kw_names:
                return meta(*values[:npos], **dict(zip(kw_names, values[npos:nparams], strict=True)))
            return meta(*values[:npos])

        self.call_meta = call_meta
        #: The meta result from the inline entries or the memo, else the meta function's (None: always the
        #: meta function's: the front calls it itself).
        self.meta_spec: Callable[[list[Any]], Any] | None = None
        if inline == "unary":
            self.meta_spec = _unary(meta, state)
        elif inline == "binary":
            self.meta_spec = _binary(call_meta, state, functional, nparams == 3)
        elif memo_form(op):
            specs: dict[Any, Any] = values_["_specs"] if "_specs" in values_ else values_["_memo"]
            self.meta_spec = _memo(memo_form(op), specs, params, call_meta)
        self.value_tests, self.recheck = _value_checks(name, params)


def _argument_checks(
    op: StructuredOp,
    functional: bool,
    binding: tuple[DispatchKey, type[Tensor]] | None,
    tensor_at: tuple[int, ...],
) -> tuple[tuple[tuple[int, str, int, bool, Any], ...], Callable[..., Any], Callable[..., Any]]:
    """``(table, named, retry)``. ``table``: ``(index, name, code, optional, a number's default)`` of each
    parameter the argument checks walk (a tensor, a tensor or a number, a number, a tensor list: the codes
    ``T``, ``TS``, ``S``, ``L``; an inplace self is a tensor). ``named(values)``: ``(name, value)`` of the
    tensor-category arguments and out, as rules.mismatch takes them. ``retry(values, raw, arg, refined)``: the
    slow path for an argument of no type taken at once (rules.coerce; ``refined``: a device binding's class
    applies to ``arg``)."""
    params = op.schema.params
    cls = None if binding is None else binding[1]
    npos, nparams = sum(not p.kw_only for p in params), len(params)
    out_kw = tuple(p.name for p in params if p.kw_only) + (("out",) if functional else ())
    table = []
    for i, p in enumerate(params):
        code = _CODES.get(p.category)
        if i == 0 and not functional:
            table.append((0, p.name, T, False, _NO_DEFAULT))
        elif code is not None:
            default = p.default if code == S and p.has_default and type(p.default) in SCALAR_TYPES else _NO_DEFAULT
            table.append((i, p.name, code, p.optional, default))
    names = tuple(params[i].name for i in tensor_at) + (("out",) if functional else ())
    named_at = tensor_at + ((nparams,) if functional else ())

    def named(values: list[Any]) -> tuple[tuple[str, Any], ...]:
        return tuple(zip(names, [values[i] for i in named_at], strict=True))

    def retry(values: list[Any], raw: Callable[..., Any], arg: str, refined: bool) -> Any:
        kwargs = dict(zip(out_kw, values[npos:], strict=False))
        extra = (cls,) if refined and cls is not None else ()
        return rules.coerce(op, raw, tuple(values[:npos]), kwargs, arg, *extra)

    return tuple(table), named, retry


def _unary(meta: Callable[..., Any], cache: dict[Any, Any]) -> Callable[[list[Any]], Any]:
    """A unary inline kind: the meta's dtype entries (meta.INLINE), else the meta function."""

    def spec(values: list[Any]) -> Any:
        self_ = values[0]
        cached = cache.get(self_._dtype)
        return (self_._shape, cached) if cached is not None else meta(self_)

    return spec


def _binary(
    call_meta: Callable[[list[Any]], Any], last: list[Any], functional: bool, scaled: bool
) -> Callable[[list[Any]], Any]:
    """A binary inline kind: both tensors of the dtypes of the entry used last and one shape; or a tensor and a
    Python number (either order) of that entry, an int within its window; alpha at its default or a float for a
    floating-point result (the meta function checks nothing then); else the meta function."""

    def spec(values: list[Any]) -> Any:
        self_, other = values[0], values[1]
        if (not functional or isinstance(self_, Tensor)) and isinstance(other, Tensor):
            entry = last[0]
            fits = self_._dtype is entry[0] and other._dtype is entry[1] and self_._shape == other._shape
            shape = self_._shape
        elif not functional or isinstance(self_, Tensor):
            entry = last[1]
            fits = (
                self_._dtype is entry[0] and type(other) is entry[1] and (not entry[3] or entry[5] <= other <= entry[6])
            )
            shape = self_._shape
        else:
            entry = last[2]
            fits = (
                type(self_) is entry[0] and other._dtype is entry[1] and (not entry[3] or entry[5] <= self_ <= entry[6])
            )
            shape = other._shape
        if fits and (not scaled or values[2] is ONE or (type(values[2]) is float and entry[2].kind in "fc")):
            return (shape, entry[2])
        return call_meta(values)

    return spec


def _memo(
    form: int, specs: dict[Any, Any], params: Sequence[Param], call_meta: Callable[[list[Any]], Any]
) -> Callable[[list[Any]], Any]:
    """The memo of the meta's results looked up by :func:`~devtensor.structured.tables.memo_form`'s key, else the
    meta function."""
    nparams = len(params)
    defaults_at = tuple((i, params[i].default) for i in range(3, nparams))

    def reduce(values: list[Any]) -> Any:
        t, dim = values[0], values[1]
        if (nparams == 3 or values[3] is None) and (dim is None or type(dim) is int):
            found = specs.get((t._shape, t._dtype, dim, values[2]))
            if found is not None:
                return found
        return call_meta(values)

    def arrays(values: list[Any]) -> Any:
        a, b = values[0], values[1]
        found = specs.get((a._shape, a._dtype, b._shape, b._dtype))
        return found if found is not None else call_meta(values)

    def scalars(values: list[Any]) -> Any:
        if all(values[i] is default for i, default in defaults_at):
            a, b, c = values[0], values[1], values[2]
            found = specs.get((a._shape, a._dtype, b._shape, b._dtype, c._shape, c._dtype))
            if found is not None:
                return found
        return call_meta(values)

    def integer(values: list[Any]) -> Any:
        t, n = values[0], values[1]
        if type(n) is int and (nparams == 2 or values[2] is None):
            found = specs.get((t._shape, t._dtype, n))
            if found is not None:
                return found
        return call_meta(values)

    def listed(values: list[Any]) -> Any:
        items, dim = values[0], values[1]
        if type(items) is list and type(dim) is int:
            found = specs.get((dim, *[(t._shape, t._dtype, t._device) for t in items]))
            if found is not None:
                return found
        return call_meta(values)

    forms = {MEMO_REDUCE: reduce, MEMO_ARRAYS: arrays, MEMO_SCALARS: scalars, MEMO_INT: integer, MEMO_LIST: listed}
    return forms[form]


def _value_checks(
    name: str, params: Sequence[Param]
) -> tuple[tuple[tuple[int, bool, type | None, Any], ...], Callable[[list[Any]], None]]:
    """``(tests, recheck)``: the quick tests of bool and Literal arguments (rules.value_tests, by parameter index;
    the front makes them); where one fails, ``recheck(values)``: rules.check_values raises, or returns the values
    to rebind (a NumPy bool as the Python bool)."""
    index = {p.name: i for i, p in enumerate(params)}
    checks = rules.value_checks(params)
    check_at = tuple(index[n] for n, _, _ in checks)
    tests = tuple((index[n], optional, kind, allowed) for n, optional, kind, allowed in rules.value_tests(params))

    def recheck(values: list[Any]) -> None:
        given = {n: values[j] for (n, _, _), j in zip(checks, check_at, strict=True)}
        for j, value in zip(check_at, rules.check_values(name, checks, given), strict=True):
            values[j] = value

    return tests, recheck
