"""The generic front: one Python front for every structured op, variant and device binding, reading per-op tables
built from the op's definition when the front is made (no per-op code is generated).

:func:`make_front` returns the public front and its ``_raw`` twin (the same front without the dispatch-mode hook,
which :func:`devtensor.modes.run_modes` calls to run the op itself). A call, in order:

1. **binding** (:class:`_Binder`): the arguments bound to the op's schema (positional, keyword-only, defaults),
   with Python's TypeErrors for arguments that do not bind; a NumPy alias (``axis=``) re-calls the front with the
   PyTorch name (:func:`devtensor.structured.aliases.aliased`);
2. the **dispatch-mode hook** (public front only);
3. the **argument checks** (:mod:`devtensor.structured.front_checks`): tensors, numbers and tensor lists by the
   parameters' categories, one device, and ``out``; anything else (NumPy values) takes the slow path
   :func:`devtensor.structured.rules.coerce`, which converts and calls the ``_raw`` front again;
4. the **meta result**: the meta's inline entries (meta.INLINE), the memo of its results (meta.SHAPE_MEMO,
   meta.MEMO) or the meta function itself; a custom op's result is validated;
5. the **handler** for the device's key (:class:`~devtensor.dispatcher.KernelTable`), and the **kernel call**
   (:mod:`devtensor.structured.front_calls`): the direct call while the handler is the built-in kernel
   (meta.DIRECT), else the handler with a ConstOut; the out and inplace rules of
   :mod:`devtensor.structured.rules` (resize, overlap, temporaries, the floating-point rule) around it.

With the compiled core, the C lanes take the commonest calls and forward every other one here
(:func:`devtensor.structured.core.lazy_front`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from devtensor import modes
from devtensor.dispatcher import DispatchKey
from devtensor.structured import rules
from devtensor.structured.aliases import NO_ALIAS, aliased, alias_pairs
from devtensor.structured.annotations import TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.structured.front_calls import Calls
from devtensor.structured.front_checks import Checks
from devtensor.structured.schema import Param
from devtensor.tensor import PlannedSpec, Tensor

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp

__all__ = ["front_signature", "make_front"]

#: The default of a required parameter in a binder's table.
_REQUIRED: Final = object()


def _names(names: Sequence[str]) -> str:
    """Python's listing of argument names in its missing-argument TypeError: 'a', 'a' and 'b', 'a', 'b', and 'c'."""
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


class _Binder:
    """The binding of a call's arguments to a front's parameters: the op's, then ``out`` (functional), then the
    NumPy aliases (keyword-only). ``bind`` returns the values in that order, defaults filled in; an argument that
    does not bind is Python's TypeError for the call, naming the front (``add()``) and the argument."""

    def __init__(self, fname: str, params: Sequence[Param], with_out: bool, pairs: tuple[tuple[str, str], ...]):
        paired = {n for n, _ in pairs}
        names = [p.name for p in params] + (["out"] if with_out else []) + [a for _, a in pairs]
        defaults: list[Any] = [
            NO_ALIAS if p.name in paired else p.default if p.has_default else _REQUIRED for p in params
        ]
        defaults += [None] * with_out + [NO_ALIAS] * len(pairs)
        self.fname = fname
        self.names = tuple(names)
        self.npos = sum(not p.kw_only for p in params)
        self.index = {n: i for i, n in enumerate(names)}
        self.tails = tuple(tuple(defaults[n:]) for n in range(self.npos + 1))
        self.required = tuple(i for i, d in enumerate(defaults) if d is _REQUIRED)
        self.kw_required = any(i >= self.npos for i in self.required)
        self.least = sum(1 for i in self.required if i < self.npos)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        n = len(args)
        if n > self.npos:
            self.too_many(n)
        values = list(args)
        values += self.tails[n]
        if kwargs:
            index = self.index
            for k, v in kwargs.items():
                i = index.get(k)
                if i is None:
                    raise TypeError(f"{self.fname}() got an unexpected keyword argument '{k}'")
                if i < n:
                    raise TypeError(f"{self.fname}() got multiple values for argument '{k}'")
                values[i] = v
        if n < self.least or self.kw_required:
            missing = [i for i in self.required if values[i] is _REQUIRED]
            if missing:
                self.missing(missing)
        return values

    def too_many(self, n: int) -> None:
        npos, least = self.npos, self.least
        takes = f"{npos} positional argument{'s' * (npos != 1)}" if least == npos else f"from {least} to {npos} "
        if least != npos:
            takes += "positional arguments"
        raise TypeError(f"{self.fname}() takes {takes} but {n} {'was' if n == 1 else 'were'} given")

    def missing(self, missing: list[int]) -> None:
        positional = [self.names[i] for i in missing if i < self.npos]
        names = positional or [self.names[i] for i in missing]
        kind = "positional" if positional else "keyword-only"
        raise TypeError(
            f"{self.fname}() missing {len(names)} required {kind} argument{'s' * (len(names) != 1)}: {_names(names)}"
        )


def front_signature(params: Sequence[Param], with_out: bool) -> inspect.Signature:
    """The signature a front over ``params`` shows (``inspect.signature``, ``help``): the op's parameters with their
    defaults, a keyword-only ``out=None`` when ``with_out``, then the NumPy aliases, keyword-only, defaulting to
    :data:`~devtensor.structured.aliases.NO_ALIAS` (not passed)."""
    empty = inspect.Parameter.empty
    shown = [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY if p.kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=p.default if p.has_default else empty,
        )
        for p in params
    ]
    if with_out:
        shown.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    shown += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=NO_ALIAS) for _, a in alias_pairs(params)]
    return inspect.Signature(shown)


def _spec_checker(op: StructuredOp, name: str) -> Callable[[Any], Any] | None:
    """The validation of a custom op's meta result (built-in ops' are trusted: None): a shape seen valid before is
    one dict lookup (its value is the canonical tuple of Python ints: an equal tuple of NumPy ints maps to it),
    the dtype one set lookup; anything else goes through :func:`rules.checked_spec`. A hit on another object than
    the cached one counts only for exact Python ints ((5.0,) == (5,)), so a result is judged the same whether
    cached or not; a list (unhashable) is never looked up: the full check names it."""
    if op.module.split(".")[0] == "devtensor":
        return None
    shapes, dtypes, exact = rules.SPEC_SHAPES, rules.SPEC_DTYPES, rules.exact_shape
    if op.schema.plan is not None:
        full = rules.checked_planned_spec

        def planned(spec: Any) -> Any:
            shape = shapes.get(spec[0]) if type(spec) is PlannedSpec and type(spec[0]) is tuple else None
            if shape is None or spec[1] not in dtypes or (shape is not spec[0] and not exact(spec[0])):
                spec = full(name, spec)
            return spec

        return planned
    checked = rules.checked_spec

    def plain(spec: Any) -> Any:
        shape = shapes.get(spec[0]) if type(spec) is tuple and len(spec) == 2 and type(spec[0]) is tuple else None
        if shape is None or spec[1] not in dtypes or (shape is not spec[0] and not exact(spec[0])):
            spec = checked(name, spec)
        return spec

    return plain


def make_front(
    op: StructuredOp, variant: str, binding: tuple[DispatchKey, type[Tensor]] | None = None
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(public, raw)``: the ``variant`` (``"functional"`` or ``"inplace"``) front of ``op`` and its twin without
    the dispatch-mode hook; with ``binding`` (key, refined class), the device binding's: tensors must be of exactly
    that class, and the handler is looked up for that key. Every table is read from ``op`` here, once."""
    functional = variant == "functional"
    params = op.schema.params
    fname = op.name if functional else op.name + "_"
    pairs = alias_pairs(params)
    binder = _Binder(fname, params, functional, pairs)
    bind = binder.bind
    nvalues = len(params) + functional
    arg_names = binder.names[:nvalues]
    alias_at = tuple((binder.index[n], binder.index[a], n, a, p.default) for n, a in pairs for p in params if p.name == n)
    npos = binder.npos
    kw_names = arg_names[npos:]
    checks = Checks(op, fname, functional, binding)
    calls = Calls(op, fname, functional, binding, checks)
    spec_check = _spec_checker(op, fname)
    meta_spec = checks.meta_spec
    check_args = checks.check_args
    run = calls.functional if functional else calls.inplace
    active, run_modes = modes.ACTIVE, modes.run_modes

    def call(front: Callable[..., Any], values: list[Any]) -> Any:
        # (the slow path of a call that passed a NumPy alias: aliases.aliased re-calls ``front`` by keyword)
        arguments = dict(zip(arg_names, values, strict=False))
        given = tuple((n, a, values[j], default) for _i, j, n, a, default in alias_at)
        return aliased(fname, front, arguments, given)

    if pairs:

        def aliases(front: Callable[..., Any], values: list[Any]) -> Any:
            for _i, j, _n, _a, _default in alias_at:
                if values[j] is not NO_ALIAS:
                    return call(front, values)
            for i, _j, _n, _a, default in alias_at:
                if values[i] is NO_ALIAS:
                    values[i] = default
            return None

    def public(*args: Any, **kwargs: Any) -> Any:
        values = bind(args, kwargs)
        if pairs:
            result = aliases(public, values)
            if result is not None:
                return result
        if active[0]:
            return run_modes(op, variant, public, raw, tuple(values[:npos]), dict(zip(kw_names, values[npos:])))
        return _body(values)

    def raw(*args: Any, **kwargs: Any) -> Any:
        values = bind(args, kwargs)
        if pairs:
            result = aliases(raw, values)
            if result is not None:
                return result
        return _body(values)

    def _body(values: list[Any]) -> Any:
        found = check_args(values, raw)
        if type(found) is not tuple:
            return found  # (the slow path's result: NumPy values converted)
        spec = meta_spec(values)
        if spec_check is not None:
            spec = spec_check(spec)
        return run(values, spec, found)

    return public, raw


#: The categories whose values are tensors (or hold them): the inputs the out and overlap rules see.
TENSOR_CATEGORIES: Final = (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST)
