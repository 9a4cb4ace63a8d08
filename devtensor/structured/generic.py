"""The generic front: one Python front for every structured op, variant and device binding, reading per-op tables
built from the op's definition when the front is made (no per-op code is generated).

:func:`make_front` returns the public front and its ``_raw`` twin (the same front without the dispatch-mode hook,
which :func:`devtensor.modes.run_modes` calls to run the op itself). A call, in order:

1. **binding** (:class:`Binder`): the arguments bound to the op's schema (positional, keyword-only, defaults),
   with Python's TypeErrors for arguments that do not bind; a NumPy alias (``axis=``) re-calls the front with the
   PyTorch name (:func:`devtensor.structured.aliases.aliased`);
2. the **dispatch-mode hook** (public front only);
3. the **argument checks** (tables of :mod:`devtensor.structured.front_checks`): tensors, numbers and tensor
   lists by the parameters' categories, one device, and ``out``; anything else (NumPy values) takes the slow path
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
from devtensor.dtypes import SCALAR_TYPES
from devtensor.errors import DevtensorError, as_called
from devtensor.structured import core, rules
from devtensor.structured.aliases import NO_ALIAS, alias_pairs, both_given
from devtensor.structured.annotations import TENSOR_LIST
from devtensor.structured.front_calls import (
    NOT,
    OUT,
    OWN,
    TEMP,
    allocate,
    one_pass_lane,
    spec_checker,
    writer,
)
from devtensor.structured.front_checks import TS, Checks, S, T
from devtensor.structured.schema import Param
from devtensor.tensor import Storage, Tensor

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


class Binder:
    """The binding of a call's arguments to a front's parameters: the op's, then ``out`` (functional), then the
    NumPy aliases (keyword-only). ``bind`` returns the values in that order, defaults filled in; an argument that
    does not bind is Python's TypeError for the call, naming the front (``add()``) and the argument."""

    def __init__(
        self,
        fname: str,
        params: Sequence[Param],
        with_out: bool,
        pairs: tuple[tuple[str, str], ...],
    ):
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
        # (a call with no keyword argument passes no alias: its parameters' real defaults)
        real = [p.default if p.name in paired else d for p, d in zip(params, defaults, strict=False)]
        real += defaults[len(params) :]
        self.quick_tails = tuple(tuple(real[n:]) for n in range(self.npos + 1))
        self.required = tuple(i for i, d in enumerate(defaults) if d is _REQUIRED)
        self.kw_required = any(i >= self.npos for i in self.required)
        self.least = sum(1 for i in self.required if i < self.npos)
        #: The positional parameters without a default, a required one with an alias (a view op's ``dim``)
        #: included: a call of at least as many positional arguments and no keyword binds at once.
        self.quick_least = sum(1 for p in params if not p.kw_only and not p.has_default)

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


def front_signature(params: Sequence[Param], with_out: bool, required: bool = False) -> inspect.Signature:
    """The signature a front over ``params`` shows (``inspect.signature``, ``help``): the op's parameters with their
    defaults, a keyword-only ``out=None`` when ``with_out``, then the NumPy aliases, keyword-only, defaulting to
    :data:`~devtensor.structured.aliases.NO_ALIAS` (not passed); ``required``: a view op's, whose required ``dim``
    may take an alias too (:func:`~devtensor.structured.aliases.alias_pairs`)."""
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
    pairs = alias_pairs(params, required)
    shown += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=NO_ALIAS) for _, a in pairs]
    return inspect.Signature(shown)


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
    binder = Binder(fname, params, functional, pairs)
    bind, tails, npos, least = binder.bind, binder.quick_tails, binder.npos, binder.quick_least
    # (a call of positional arguments only, all the required ones, binds by filling in the defaults)
    quick = not binder.kw_required
    nparams = len(params)
    nvalues = nparams + functional
    kw_names = binder.names[npos:nvalues]
    kw_index = {k: i for i, k in enumerate(binder.names) if npos <= i < nvalues}
    defaults = {p.name: p.default for p in params}
    alias_at = tuple((binder.index[n], binder.index[a], n, a, defaults[n]) for n, a in pairs)
    active, run_modes = modes.ACTIVE, modes.run_modes
    # The tables.
    checks = Checks(op, fname, functional, binding)
    table, named, retry, lists, cls = checks.table, checks.named, checks.retry, checks.lists, checks.cls
    meta_spec, meta, op_kw = checks.meta_spec, op.meta, checks.kw_names
    value_tests, recheck = checks.value_tests, checks.recheck
    spec_check = spec_checker(op, fname)
    key = None if binding is None else binding[0]
    handlers, resolve = op.table.handlers, op.table.resolve
    may = op.out_may_be_input
    tensor_at = checks.tensor_at
    write, direct_fresh = writer(op, fname, checks)
    # (without the compiled core, whose C lane takes these calls first, the same lane in Python)
    lane = one_pass_lane(op, fname) if functional and binding is None and core.CORE is None else None
    # (index, a tensor list?) of the inputs an out or an inplace self is checked against for overlap
    overlap_at = tuple((i, params[i].category == TENSOR_LIST) for i in tensor_at if functional or i != 0)
    others_at = tuple(i for i in tensor_at if i != 0)
    scalars = SCALAR_TYPES

    fronts: list[Callable[..., Any]] = []

    def aliases(values: list[Any]) -> tuple[tuple[str, str], ...]:
        # (each NumPy alias passed: its value put under PyTorch's name, as aliases.aliased does, both names passed
        # being an error; each parameter with an alias not passed gets its default. Returns the pairs passed.)
        passed: tuple[tuple[str, str], ...] = ()
        for i, j, n, a, _default in alias_at:
            if values[j] is not NO_ALIAS:
                if values[i] is not NO_ALIAS:
                    both_given(fname, n, a)
                values[i] = values[j]
                passed += ((n, a),)
        for i, _j, _n, _a, default in alias_at:
            if values[i] is NO_ALIAS:
                values[i] = default
        return passed

    def check_from(values: list[Any], raw: Callable[..., Any], entries: Any, device: Any, first: Any) -> Any:
        # The argument checks of ``entries`` (the table, or its part after the tensors checked at once), from the
        # device and first tensor found so far: ``(device, first)``, or the slow path's result (rules.coerce).
        for i, pname, code, optional, default in entries:
            v = values[i]
            if optional and v is None:
                continue
            if code <= TS:
                if type(v) is cls if cls is not None else isinstance(v, Tensor):
                    if device is None:
                        device, first = v._device, v
                    elif v._device is not device:
                        rules.mismatch(fname, named(values))
                elif code == T or type(v) not in scalars:
                    return retry(values, raw, pname, True)
            elif code == S:
                if v is not default and type(v) not in scalars:
                    return retry(values, raw, pname, False)
            else:
                try:
                    device, first = rules.list_device(fname, pname, v, device, first)
                except rules.NumPyArgument:
                    return retry(values, raw, pname, True)
                if cls is not None:
                    for item in v:
                        type(item) is cls or rules.not_refined(fname, pname, item, cls)
        return device, first

    # The argument checks' common case at once: the leading required tensor parameters (a tensor-or-number one
    # taken as a tensor) all tensors of one device (of exactly the binding's class for a device binding). Any
    # other call runs the full checks, which then raise the first error in the parameters' order.
    lead = 0
    while lead < len(table) and table[lead][2] <= TS and not table[lead][3]:
        lead += 1
    lead_at = tuple(entry[0] for entry in table[:lead])
    lead_rest = lead_at[1:]
    rest = table[lead:]

    def front(hooked: bool) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            n = len(args)
            passed: tuple[tuple[str, str], ...]
            if kwargs and not alias_at and quick and least <= n <= npos:
                # (keywords that are keyword-only parameters or out: the binder's loop inline; anything else, the
                # binder, for its errors)
                values = list(args)
                values += tails[n]
                for k, v in kwargs.items():
                    i = kw_index.get(k)
                    if i is None:
                        values = bind(args, kwargs)
                        break
                    values[i] = v
                passed = ()
            elif kwargs or not quick or n < least or n > npos:
                values = bind(args, kwargs)
                passed = aliases(values) if alias_at else ()
            else:
                values = list(args)
                values += tails[n]  # (the real defaults: no alias was passed)
                passed = ()
            # (an error of a call with a NumPy alias names the argument as the caller spelled it; a try costs
            # nothing in CPython 3.11 when nothing is raised)
            try:
                raw = fronts[1]
                if hooked and active[0]:
                    kwargs = dict(zip(kw_names, values[npos:nvalues], strict=True))
                    return run_modes(op, variant, fronts[0], raw, tuple(values[:npos]), kwargs)
                if lane is not None:
                    done = lane(values)
                    if done is not NOT:
                        return done
                device = first = None
                if lead_at:
                    first = values[lead_at[0]]
                    if cls is None:
                        if isinstance(first, Tensor):
                            device = first._device
                            for i in lead_rest:
                                v = values[i]
                                if not isinstance(v, Tensor) or v._device is not device:
                                    device = None
                                    break
                    elif type(first) is cls:
                        device = first._device
                        for i in lead_rest:
                            v = values[i]
                            if type(v) is not cls or v._device is not device:
                                device = None
                                break
                if device is None:
                    found = check_from(values, raw, table, None, None)
                    if type(found) is not tuple:
                        return found  # (NumPy values converted: the call's result)
                    device, first = found
                elif rest:
                    found = check_from(values, raw, rest, device, first)
                    if type(found) is not tuple:
                        return found
                    device, first = found
                out = values[nparams] if functional else None
                if out is not None:
                    if not (type(out) is cls if cls is not None else isinstance(out, Tensor)):
                        return retry(values, raw, "out", True)
                    if out._device is not device:
                        if device is None:
                            rules.no_tensor(fname, lists)
                        rules.mismatch(fname, named(values))
                elif device is None:
                    rules.no_tensor(fname, lists)
                # The meta result.
                for i, optional, kind, allowed in value_tests:  # (bool and Literal arguments)
                    v = values[i]
                    if (
                        v is not True and v is not False if kind is None else type(v) is not kind or v not in allowed
                    ) and (not optional or v is not None):
                        recheck(values)
                        break
                if meta_spec is not None:
                    spec = meta_spec(values)
                elif op_kw:
                    spec = meta(*values[:npos], **dict(zip(op_kw, values[npos:nparams], strict=True)))
                else:
                    spec = meta(*values[:npos])
                if spec_check is not None:
                    spec = spec_check(spec)
                dkey = key if key is not None else device.key
                handler = handlers.get(dkey)
                if handler is None:
                    handler = resolve(dkey, str(device))
                guard = device._guard
                if not functional:
                    return inplace(values, spec, handler, guard)
                if out is not None:
                    return into_out(values, spec, handler, guard, out)
                # A new result: made by the direct call, or allocated and written.
                backend = first._backend  # type: ignore[union-attr]  # (set with the device)
                array: Any = direct_fresh(values, spec, handler, device) if direct_fresh is not None else NOT
                if array is NOT:
                    if guard is None:
                        array = allocate(fname, write, values, spec, handler, device, backend)
                    else:
                        with guard():
                            array = allocate(fname, write, values, spec, handler, device, backend)
                result = _new_object(backend.tensor_class)
                result._array = array
                result._device = device
                # (the record made inline, as Storage(array) makes it, without the call)
                result._storage = storage = _new_object(Storage)
                storage.root = array
                storage.version = 0
                result._shape = spec[0]
                result._dtype = array.dtype
                result._write_checked = True
                return result

            except DevtensorError as error:
                if passed:
                    raise as_called(error, (fname,), fname, passed) from None
                raise

        return call

    def overlaps_checked(values: list[Any], target: Tensor, arg: str) -> Any:
        # The array to write for ``target`` (out=, an inplace self) that fits the result: its own, or a temporary
        # where an input is exactly ``target`` and the op cannot write over its input (rules.check_pair and
        # check_overlap say so; they raise for a partial overlap). Self passed again to an op that may write over
        # its input needs no check.
        array = target._array
        root = target._storage.root
        for i, is_list in overlap_at:
            v = values[i]
            if is_list:
                if rules.check_overlap(fname, arg, target, v, may) and not may:
                    array = rules.temporary(fname, target)
            elif (
                isinstance(v, Tensor)
                and v._storage.root is root
                and (not may or v is not target)
                and rules.check_pair(fname, arg, target, v, may)
                and not may
            ):
                array = rules.temporary(fname, target)
        return array

    def into_out(values: list[Any], spec: Any, handler: Any, guard: Any, out: Tensor) -> Tensor:
        inputs = tuple(map(values.__getitem__, tensor_at))
        if out._shape != spec[0] or spec[1] is not out._dtype or not out._write_checked:
            array = rules.prepare_out(fname, out, spec, inputs, may)
        else:
            # Fast path: out already has the result's shape and dtype and was checked writable before; only the
            # overlap with this call's inputs is left to check.
            array = overlaps_checked(values, out, "out")
        if guard is None:
            write(values, spec, handler, array, out, inputs, OUT)
        else:
            with guard():
                write(values, spec, handler, array, out, inputs, OUT)
        # (a resized result, or a temporary when out is an input of an op that cannot write over it)
        if array is not out._array:
            rules.finish_out(fname, out, array)
        out._storage.version += 1
        return out

    def inplace(values: list[Any], spec: Any, handler: Any, guard: Any) -> Tensor:
        self_: Tensor = values[0]
        if spec[0] != self_._shape or spec[1] is not self_._dtype or not self_._write_checked:
            others = tuple(map(values.__getitem__, others_at))
            array = rules.prepare_inplace(fname, self_, spec, others, may)
        else:
            array = overlaps_checked(values, self_, "self")
        # An op that may write over its input writes self's own memory always; else another input exactly self
        # (self passed again included) is computed into a temporary, copied in.
        mode, inputs = (OWN, ()) if may else (TEMP, tuple(map(values.__getitem__, tensor_at)))
        if may:
            array = self_._array
        if guard is None:
            write(values, spec, handler, array, self_, inputs, mode)
        else:
            with guard():
                write(values, spec, handler, array, self_, inputs, mode)
        if not may and array is not self_._array:
            rules.copy_back(self_, array)
        self_._storage.version += 1
        return self_

    fronts += [front(True), front(False)]
    return fronts[0], fronts[1]


_new_object: Final = object.__new__
