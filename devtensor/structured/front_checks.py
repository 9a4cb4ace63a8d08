"""The generic front's argument checks and meta step (:mod:`devtensor.structured.generic`), from per-op tables.

The argument checks walk the parameters in order by category (a tensor, a tensor or a Python number, a number,
a tensor list; other parameters are the meta function's to check), find the call's device (the first tensor's)
and raise the rules' errors (:mod:`devtensor.structured.rules`) in the order the parameters come, ``out`` last.
An argument of no type taken at once goes to :func:`rules.coerce` (NumPy values converted, the ``_raw`` front
called again). The meta step answers from the meta function's inline entries (meta.INLINE) or the memo of its
results (meta.SHAPE_MEMO, meta.MEMO; :func:`devtensor.structured.tables.memo_form`) where it can, else calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import SCALAR_TYPES
from devtensor.meta import ONE
from devtensor.structured import rules
from devtensor.structured.annotations import SCALAR, TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
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

__all__ = ["Checks"]

# The argument checks' codes: a tensor, a tensor or a number, a number, a tensor list.
_T, _TS, _S, _L = 1, 2, 3, 4
_CODES: Final = {TENSOR: _T, TENSOR_OR_SCALAR: _TS, SCALAR: _S, TENSOR_LIST: _L}
#: A number parameter without a default that is a number (its value is always type-tested).
_NO_DEFAULT: Final = object()


class Checks:
    """An op variant's argument checks and meta step; ``binding`` (key, refined class): tensors must be of exactly
    that class (a device binding)."""

    def __init__(
        self, op: StructuredOp, name: str, functional: bool, binding: tuple[DispatchKey, type[Tensor]] | None
    ) -> None:
        params = op.schema.params
        self.op, self.name, self.functional = op, name, functional
        self.cls = None if binding is None else binding[1]
        self.npos = sum(not p.kw_only for p in params)
        self.nparams = len(params)
        self.kw_names = tuple(p.name for p in params if p.kw_only)
        self.out_kw = self.kw_names + (("out",) if functional else ())
        self.lists = tuple(p.name for p in params if p.category == TENSOR_LIST)
        # (index, name, code, optional, a number's default): the parameters the checks walk.
        table = []
        for i, p in enumerate(params):
            code = _CODES.get(p.category)
            if i == 0 and not functional:
                table.append((0, p.name, _T, False, _NO_DEFAULT))  # (an inplace self: a tensor)
            elif code is not None:
                default = p.default if code == _S and p.has_default and type(p.default) in SCALAR_TYPES else _NO_DEFAULT
                table.append((i, p.name, code, p.optional, default))
        self.table = tuple(table)
        #: The tensor-category parameters' indices: the inputs the out and overlap rules see.
        self.tensor_at = tuple(i for i, p in enumerate(params) if p.category in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST))
        self.meta = op.meta
        self.inline, self.state = _inline_kind(op)
        self.scaled = len(params) == 3
        self.form = memo_form(op) if self.inline is None else 0
        values = meta_values(op)
        self.specs = values.get("_specs", values.get("_memo"))
        checks = rules.value_checks(params)
        index = {p.name: i for i, p in enumerate(params)}
        self.value_checks = checks
        self.check_at = tuple(index[n] for n, _, _ in checks)
        self.tests = tuple((index[n], optional, kind, allowed) for n, optional, kind, allowed in rules.value_tests(params))
        self.defaults_at = tuple((i, params[i].default) for i in range(3, len(params)))
        self.plan = op.schema.plan is not None
        self.meta_spec: Callable[[list[Any]], Any] = {
            "unary": self._unary,
            "binary": self._binary_inplace if not functional else self._binary,
        }.get(self.inline or "", self._general)

    # --- arguments ---------------------------------------------------------------------------------------------

    def named(self, values: list[Any]) -> tuple[tuple[str, Any], ...]:
        """``(name, value)`` of the tensor-category arguments (and ``out``), as rules.mismatch takes them."""
        named = tuple((self.op.schema.params[i].name, values[i]) for i in self.tensor_at)
        return named + ((("out", values[self.nparams]),) if self.functional else ())

    def retry(self, values: list[Any], raw: Callable[..., Any], name: str, refined: bool) -> Any:
        """The slow path for an argument of no type taken at once (:func:`rules.coerce`)."""
        kwargs = dict(zip(self.out_kw, values[self.npos :], strict=False))
        extra = (self.cls,) if refined and self.cls is not None else ()
        return rules.coerce(self.op, raw, tuple(values[: self.npos]), kwargs, name, *extra)

    def check_args(self, values: list[Any], raw: Callable[..., Any]) -> Any:
        """``(device, first tensor)`` of a call whose arguments pass the checks; the slow path's result for an
        argument of another type. Raises the rules' errors (device mismatch, no tensor, a device binding's
        class)."""
        cls = self.cls
        device = first = None
        for i, pname, code, optional, default in self.table:
            v = values[i]
            if optional and v is None:
                continue
            if code == _T or code == _TS:
                if type(v) is cls if cls is not None else isinstance(v, Tensor):
                    if device is None:
                        device, first = v._device, v
                    elif v._device is not device:
                        rules.mismatch(self.name, self.named(values))
                elif code == _T or type(v) not in SCALAR_TYPES:
                    return self.retry(values, raw, pname, True)
            elif code == _S:
                if v is not default and type(v) not in SCALAR_TYPES:
                    return self.retry(values, raw, pname, False)
            else:
                try:
                    device, first = rules.list_device(self.name, pname, v, device, first)
                except rules.NumPyArgument:
                    return self.retry(values, raw, pname, True)
                if cls is not None:
                    for item in v:
                        type(item) is cls or rules.not_refined(self.name, pname, item, cls)
        if self.functional:
            out = values[self.nparams]
            if out is not None:
                if not (type(out) is cls if cls is not None else isinstance(out, Tensor)):
                    return self.retry(values, raw, "out", True)
                if out._device is not device:
                    if device is None:
                        rules.no_tensor(self.name, self.lists)
                    rules.mismatch(self.name, self.named(values))
            elif device is None:
                rules.no_tensor(self.name, self.lists)
        return device, first

    # --- the meta result ---------------------------------------------------------------------------------------

    def call_meta(self, values: list[Any]) -> Any:
        if self.kw_names:
            return self.meta(*values[: self.npos], **dict(zip(self.kw_names, values[self.npos : self.nparams])))
        return self.meta(*values[: self.npos])

    def _unary(self, values: list[Any]) -> Any:
        self_ = values[0]
        cached = self.state.get(self_._dtype)
        return (self_._shape, cached) if cached is not None else self.meta(self_)

    def _alpha(self, values: list[Any], last: Any) -> bool:
        # (alpha at its default, or a float for a floating-point result: the meta function checks nothing then)
        alpha = values[2]
        return alpha is ONE or type(alpha) is float and last[2].kind in "fc"

    def _binary(self, values: list[Any]) -> Any:
        self_, other = values[0], values[1]
        if isinstance(self_, Tensor):
            if isinstance(other, Tensor):
                last = self.state[0]
                if (
                    self_._dtype is last[0]
                    and other._dtype is last[1]
                    and self_._shape == other._shape
                    and (not self.scaled or self._alpha(values, last))
                ):
                    return (self_._shape, last[2])
                return self.call_meta(values)
            return self._number(values, self_, other)
        last = self.state[2]
        if (
            type(self_) is last[0]
            and other._dtype is last[1]
            and (not last[3] or last[5] <= self_ <= last[6])
            and (not self.scaled or self._alpha(values, last))
        ):
            return (other._shape, last[2])
        return self.call_meta(values)

    def _number(self, values: list[Any], self_: Any, other: Any) -> Any:
        last = self.state[1]
        if (
            self_._dtype is last[0]
            and type(other) is last[1]
            and (not last[3] or last[5] <= other <= last[6])
            and (not self.scaled or self._alpha(values, last))
        ):
            return (self_._shape, last[2])
        return self.call_meta(values)

    def _binary_inplace(self, values: list[Any]) -> Any:
        self_, other = values[0], values[1]
        if isinstance(other, Tensor):
            last = self.state[0]
            if (
                self_._dtype is last[0]
                and other._dtype is last[1]
                and self_._shape == other._shape
                and (not self.scaled or self._alpha(values, last))
            ):
                return (self_._shape, last[2])
            return self.call_meta(values)
        return self._number(values, self_, other)

    def _check_values(self, values: list[Any]) -> None:
        for i, optional, kind, allowed in self.tests:
            v = values[i]
            if optional and v is None:
                continue
            if v is not True and v is not False if kind is None else type(v) is not kind or v not in allowed:
                names = {n: values[j] for (n, _, _), j in zip(self.value_checks, self.check_at, strict=True)}
                checked = rules.check_values(self.name, self.value_checks, names)
                for j, value in zip(self.check_at, checked, strict=True):
                    values[j] = value
                return

    def _general(self, values: list[Any]) -> Any:
        if self.tests:
            self._check_values(values)
        form = self.form
        if form:
            spec = self._memo(form, values)
            if spec is not None:
                return spec
        return self.call_meta(values)

    def _memo(self, form: int, values: list[Any]) -> Any:
        specs = self.specs
        if form == MEMO_REDUCE:
            t, dim = values[0], values[1]
            if (self.nparams == 3 or values[3] is None) and (dim is None or type(dim) is int):
                return specs.get((t._shape, t._dtype, dim, values[2]))
            return None
        if form == MEMO_ARRAYS:
            a, b = values[0], values[1]
            return specs.get((a._shape, a._dtype, b._shape, b._dtype))
        if form == MEMO_SCALARS:
            for i, default in self.defaults_at:
                if values[i] is not default:
                    return None
            a, b, c = values[0], values[1], values[2]
            return specs.get((a._shape, a._dtype, b._shape, b._dtype, c._shape, c._dtype))
        if form == MEMO_INT:
            t, n = values[0], values[1]
            if type(n) is int and (self.nparams == 2 or values[2] is None):
                return specs.get((t._shape, t._dtype, n))
            return None
        assert form == MEMO_LIST
        items, dim = values[0], values[1]
        if type(items) is list and type(dim) is int:
            return specs.get((dim, *[(t._shape, t._dtype, t._device) for t in items]))
        return None

