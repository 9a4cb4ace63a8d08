"""Front generation: the Python source of each structured op's variants (functional with out, inplace, device
bindings), specialised to the op's schema and compiled once per op."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from devtensor import modes
from devtensor.dispatcher import META_ONLY, DispatchKey
from devtensor.dtypes import SCALAR_TYPES
from devtensor.meta import INLINE, ONE
from devtensor.structured import rules
from devtensor.structured.annotations import SCALAR, TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.structured.schema import Param
from devtensor.tensor import (
    PlannedSpec,
    Tensor,
)
from devtensor.typed.const_out import InplaceOut, new_const_out, set_array

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp


_COMMON: Final[dict[str, Any]] = {
    "_Tensor": Tensor,
    "_SCALARS": SCALAR_TYPES,
    "_META_ONLY": META_ONLY,
    "_new": object.__new__,
    "_CO": new_const_out,
    "_COI": InplaceOut,
    "_co_array": set_array,
    "_bad_type": rules.bad_type,
    "_mismatch": rules.mismatch,
    "_no_tensor": rules.no_tensor,
    "_not_refined": rules.not_refined,
    "_alloc_failed": rules.alloc_failed,
    "_checked_spec": rules.checked_spec,
    "_checked_planned_spec": rules.checked_planned_spec,
    "_PlannedSpec": PlannedSpec,
    "_SPEC_SHAPES": rules.SPEC_SHAPES,
    "_SPEC_DTYPES": rules.SPEC_DTYPES,
    "_list_device": rules.list_device,
    "_prepare_out": rules.prepare_out,
    "_prepare_inplace": rules.prepare_inplace,
    "_swap_storage": rules.swap_storage,
    "_check_pair": rules.check_pair,
    "_modes": modes.ACTIVE,
    "_run_modes": modes.run_modes,
    "_check_writable": rules.check_writable,
    "_check_overlap": rules.check_overlap,
}


def _signature_text(params: Sequence[Param], with_out: bool) -> str:
    parts: list[str] = []
    star = False
    for p in params:
        if p.kw_only and not star:
            parts.append("*")
            star = True
        parts.append(f"{p.name}=_d_{p.name}" if p.has_default else p.name)
    if with_out:
        if not star:
            parts.append("*")
        parts.append("out=None")
    return ", ".join(parts)


def _call_text(params: Sequence[Param]) -> str:
    return ", ".join(f"{p.name}={p.name}" if p.kw_only else p.name for p in params)


def _flag(i: int) -> str:
    """The local of the fronts that records whether the ``i``-th parameter (a non-optional TensorOrScalar) got a
    tensor: the overlap checks after the meta function test it instead of calling isinstance again."""
    return f"_k{i}"


def _arg_checks(params: Sequence[Param], all_names: str, first_is_self: bool, refined: bool = False) -> list[str]:
    """Argument checks; ``refined`` (device bindings): tensors must be instances of exactly ``_Cls``. They set
    ``_dev`` (the device of the first tensor; None when there is none yet) and ``_t0`` (that tensor), except
    after a first ``self`` (``first_is_self``), which sets ``_dev`` alone."""
    lines: list[str] = []
    # What is known of ``_dev`` before each parameter: "unset" (nothing yet), "maybe" (None or a device), "set".
    # Known states spare tests: the first tensor parameter sets ``_dev`` and ``_t0`` without testing them.
    state = "set" if first_is_self else "unset"
    first = params[0]
    if state == "unset" and (first.optional or first.category not in (TENSOR, TENSOR_OR_SCALAR)):
        lines += ["    _dev = None", "    _t0 = None"]
        state = "maybe"
    for i, p in enumerate(params):
        n = p.name
        body: list[str] = []
        is_tensor = f"type({n}) is _Cls" if refined else f"isinstance({n}, _Tensor)"
        bad_tensor = (
            f"_not_refined(_name, '{n}', {n}, _Cls)" if refined else f"_bad_type(_name, '{n}', {n}, 'a Tensor')"
        )
        if i == 0 and first_is_self:
            body += [
                f"if not {is_tensor}: {bad_tensor}",
                f"_dev = {n}._device",
            ]
        elif p.category == TENSOR or p.category == TENSOR_OR_SCALAR:
            flagged = p.category == TENSOR_OR_SCALAR and not p.optional
            body.append(f"if {is_tensor}:")
            if flagged:
                body.append(f"    {_flag(i)} = True")
            if state == "set":
                body.append(f"    if {n}._device is not _dev: _mismatch(_name, {all_names})")
            elif state == "unset":
                body += [f"    _dev = {n}._device", f"    _t0 = {n}"]
            else:
                body += [
                    "    if _dev is None:",
                    f"        _dev = {n}._device",
                    f"        _t0 = {n}",
                    f"    elif {n}._device is not _dev: _mismatch(_name, {all_names})",
                ]
            if p.category == TENSOR:
                body.append(f"else: {bad_tensor}")
                if not p.optional:
                    state = "set"
            else:
                bad_value = bad_tensor if refined else f"_bad_type(_name, '{n}', {n}, 'a Tensor or a Python number')"
                if flagged:
                    body += ["else:", f"    {_flag(i)} = False"]
                    if state == "unset":
                        body += ["    _dev = None", "    _t0 = None"]
                    body.append(f"    if type({n}) not in _SCALARS: {bad_value}")
                else:
                    body.append(f"elif type({n}) not in _SCALARS: {bad_value}")
                if state == "unset":
                    state = "maybe"
        elif p.category == TENSOR_LIST:
            body.append(f"_dev, _t0 = _list_device(_name, '{n}', {n}, _dev, _t0)")
            if refined:
                body.append(f"for _x in {n}: type(_x) is _Cls or _not_refined(_name, '{n}', _x, _Cls)")
        elif p.category == SCALAR:
            check = f"type({n}) not in _SCALARS"
            if p.has_default and type(p.default) in SCALAR_TYPES:
                # Most calls leave it at its default, a valid number: one identity test instead of the type test.
                check = f"{n} is not _d_{n} and {check}"
            body.append(f"if {check}: _bad_type(_name, '{n}', {n}, 'a Python number')")
        if body and p.optional and not (i == 0 and first_is_self):
            lines.append(f"    if {n} is not None:")
            lines += ["        " + b for b in body]
        else:
            lines += ["    " + b for b in body]
    return lines


def _guarded(body: list[str], indent: str) -> list[str]:
    """``body`` run directly when the device needs no guard, else inside ``with _dev._guard():``."""
    lines = [f"{indent}if _dev._guard is None:"]
    lines += [f"{indent}    {b}" for b in body]
    lines += [f"{indent}else:", f"{indent}    with _dev._guard():"]
    lines += [f"{indent}        {b}" for b in body]
    return lines


def _impl_call(call: str, array: str, target: str | None = None, inplace: bool = False) -> list[str]:
    """Build the ConstOut over ``array`` (a fresh view; an :class:`InplaceOut` for the ``inplace`` variant) and
    call the handler with it. For an existing ``target`` (out, inplace self), memory made read-only behind
    devtensor's back after its writability was checked and cached makes NumPy refuse the write before writing:
    that surfaces as ReadOnlyError (a try costs nothing in CPython 3.11 when nothing is raised)."""
    call_line = f"    _h({call}, out=_co)"
    if target is None:
        body = [call_line]
    else:
        body = [
            "    try:",
            "    " + call_line,
            "    except ValueError:",
            f"        _check_writable(_name, {target!r}, {target})",
            "        raise",
            # NumPy reports overflow and invalid values (warnings made errors, np.errstate(...='raise')) after
            # writing: the data changed, so the version counter does too.
            "    except (Warning, FloatingPointError):",
            f"        {target}._storage[0] += 1"
            if array == f"{target}._array"
            else f"        if {array} is {target}._array: {target}._storage[0] += 1",
            "        raise",
        ]
    new = "    _co = _COI()" if inplace else "    _co = _CO()"
    return ["if _h is not _META_ONLY:", new, f"    _co_array(_co, {array}.view())", *body]


def _builtin(op: StructuredOp) -> bool:
    """Ops defined inside devtensor: their meta results are trusted, not checked on every call."""
    return op.module.split(".")[0] == "devtensor"


def _overlap_lines(params: Sequence[Param], target: str, indent: str, *, skip_self: bool, first: int = 0) -> list[str]:
    """Inline overlap checks of ``target`` (storage root in ``_root``) against each tensor param (``params`` are
    the op's from index ``first`` on: the flags of :func:`_flag` are numbered by the op's parameters)."""
    op_text = "_name"
    arg = "'self'" if skip_self else "'out'"
    lines: list[str] = []
    for i, p in enumerate(params, first):
        n = p.name
        if p.category in (TENSOR, TENSOR_OR_SCALAR):
            if p.optional:
                is_tensor = f"isinstance({n}, _Tensor) and "
            elif p.category == TENSOR_OR_SCALAR:
                is_tensor = f"{_flag(i)} and "
            else:
                is_tensor = ""  # checked to be a tensor
            cond = f"{is_tensor}{n}._storage[1] is _root"
            if skip_self:
                cond += f" and {n} is not {target}"
            lines.append(f"{indent}if {cond}: _check_pair({op_text}, {arg}, {target}, {n}, _elementwise)")
        elif p.category == TENSOR_LIST:
            lines.append(f"{indent}_check_overlap({op_text}, {arg}, {target}, {n}, _elementwise)")
    if not lines:
        lines.append(f"{indent}pass")
    return lines


def _spec_check_lines(op: StructuredOp) -> list[str]:
    """The validation of a custom op's meta result (built-in ops' are trusted): a shape seen valid before is
    one dict lookup (its value is the canonical tuple of Python ints: an equal tuple of NumPy ints maps to
    it), the dtype one set lookup; anything else goes through :func:`_checked_spec`."""
    if _builtin(op):
        return []
    if op.schema.plan is not None:
        return [
            "    _s = _SPEC_SHAPES.get(_spec[0]) if type(_spec) is _PlannedSpec else None",
            "    if _s is None or _spec[1] not in _SPEC_DTYPES:",
            "        _spec = _checked_planned_spec(_name, _spec)",
            "    elif _s is not _spec[0]:",
            "        _spec = _PlannedSpec(_s, _spec[1], _spec[2])",
        ]
    return [
        "    _s = _SPEC_SHAPES.get(_spec[0]) if type(_spec) is tuple and len(_spec) == 2 else None",
        "    if _s is None or _spec[1] not in _SPEC_DTYPES:",
        "        _spec = _checked_spec(_name, _spec)",
        "    elif _s is not _spec[0]:",
        "        _spec = (_s, _spec[1])",
    ]


def _meta_lines(op: StructuredOp, variant: str) -> tuple[list[str], dict[str, Any]]:
    """The lines computing ``_spec``: the call of the meta function, or, when it offers one (meta.INLINE), its
    common case inline with the call for the rest: one Python call less per op call (a tenth of an elementwise
    op's time at small sizes). Also the globals those lines use."""
    params = op.schema.params
    call = f"    _spec = _meta({_call_text(params)})"
    offer = getattr(op.meta, INLINE, None) if op.schema.plan is None else None
    shape = [(p.name, p.category, p.kw_only, p.optional) for p in params]
    if offer is None:
        return [call], {}
    kind, state = offer
    if kind == "unary" and shape == [("self", TENSOR, False, False)]:
        return [
            "    _c = _mcache.get(self._dtype)",
            "    _spec = (self._shape, _c) if _c is not None else _meta(self)",
        ], {"_mcache": state}
    two = [("self", TENSOR_OR_SCALAR, False, False), ("other", TENSOR_OR_SCALAR, False, False)]
    alpha = [("alpha", SCALAR, True, False)]
    if kind == "binary" and (shape == two or (shape == two + alpha and params[2].default is ONE)):
        # Both tensors (the flags of the argument checks; an inplace self is one), dtypes those of the entry
        # used last, one shape, alpha at its default (the meta function checks nothing then).
        tensors = "_k1" if variant == "inplace" else "_k0 and _k1"
        alpha_test = " and alpha is _ONE" if len(shape) == 3 else ""
        return [
            "    _m = _mlast[0]",
            f"    if {tensors} and self._dtype is _m[0] and other._dtype is _m[1] and self._shape == other._shape"
            f"{alpha_test}:",
            "        _spec = (self._shape, _m[2])",
            "    else:",
            "    " + call,
        ], {"_mlast": state, "_ONE": ONE}
    return [call], {}


def generate_front(
    op: StructuredOp, variant: str, binding: tuple[DispatchKey, type[Tensor]] | None = None
) -> Callable[..., Tensor]:
    """Compile the ``variant`` front of ``op``; with ``binding`` (key, refined class), the device binding: tensors
    must be of that class, and the handler is looked up for that key without computing one."""
    params = op.schema.params
    refined = binding is not None
    meta_lines, meta_names = _meta_lines(op, variant)
    key_text = "_KEY" if refined else "_dev.key"
    tensor_names = [p.name for p in params if p.category in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST)]
    call = _call_text(params) + (", plan=_spec[2]" if op.schema.plan is not None else "")
    if variant == "functional":
        fname = op.name
        inputs = "(" + "".join(f"{n}, " for n in tensor_names) + ")"
        named = "(" + "".join(f"('{n}', {n}), " for n in tensor_names) + "('out', out))"
        lines = [
            f"def {fname}({_signature_text(params, True)}):",
        ]
        lines += _arg_checks(params, named, first_is_self=False, refined=refined)
        lines += [
            "    if out is not None:",
            "        if type(out) is not _Cls: _not_refined(_name, 'out', out, _Cls)"
            if refined
            else "        if not isinstance(out, _Tensor): _bad_type(_name, 'out', out, 'a Tensor')",
            # (a tensor's device is never None: no tensor argument shows as a mismatch first)
            "        if out._device is not _dev:",
            "            if _dev is None: _no_tensor(_name, _lists)",
            "            _mismatch(_name, " + named + ")",
            "    elif _dev is None: _no_tensor(_name, _lists)",
            *meta_lines,
            *_spec_check_lines(op),
            f"    _h = _handlers.get({key_text})",
            f"    if _h is None: _h = _resolve({key_text}, str(_dev))",
            "    if out is None:",
            "        _b = _t0._backend",
        ]
        lines += _guarded(
            [
                "try:",
                "    _arr = _b.alloc(_spec[0], _spec[1])",
                "except ValueError as _e:",
                "    _alloc_failed(_name, _spec, _e)",
                *_impl_call(call, "_arr"),
            ],
            "        ",
        )
        lines += [
            "        _res = _new(_b.tensor_class)",
            "        _res._array = _arr",
            "        _res._device = _dev",
            "        _res._storage = [0, _arr, False]",
            "        _res._shape = _spec[0]",
            "        _res._dtype = _arr.dtype",
            "        _res._wok = True",
            "        return _res",
            # Fast path: out already has the result's shape and dtype and was checked writable before;
            # only the overlap with this call's inputs is left to check. Anything else takes the full rules.
            "    if out._shape != _spec[0] or _spec[1] is not out._dtype or not out._wok:",
            f"        _arr = _prepare_out(_name, out, _spec, {inputs}, _elementwise)",
            "    else:",
            "        _arr = out._array",
            "        _root = out._storage[1]",
            *_overlap_lines(params, "out", "        ", skip_self=False),
        ]
        lines += _guarded(_impl_call(call, "_arr", "out"), "    ")
        lines += [
            "    if _arr is not out._array: _swap_storage(_name, out, _arr)",
            "    out._storage[0] += 1",
            "    return out",
        ]
    else:
        fname = op.name + "_"
        first = params[0].name
        others = "(" + "".join(f"{n}, " for n in tensor_names[1:]) + ")"
        named = "(" + "".join(f"('{n}', {n}), " for n in tensor_names) + ")"
        lines = [f"def {fname}({_signature_text(params, False)}):"]
        if any(p.category == TENSOR_LIST for p in params):
            lines.append("    _t0 = None")  # read by the tensor-list check
        lines += _arg_checks(params, named, first_is_self=True, refined=refined)
        lines += [
            *meta_lines,
            *_spec_check_lines(op),
            f"    _h = _handlers.get({key_text})",
            f"    if _h is None: _h = _resolve({key_text}, str(_dev))",
            f"    if _spec[0] != {first}._shape or _spec[1] is not {first}._dtype or not {first}._wok:",
            f"        _prepare_inplace(_name, {first}, _spec, {others}, _elementwise)",
            "    else:",
            f"        _root = {first}._storage[1]",
            *_overlap_lines(params[1:], first, "        ", skip_self=True, first=1),
        ]
        lines += _guarded(_impl_call(call, f"{first}._array", first, inplace=True), "    ")
        lines += [f"    {first}._storage[0] += 1", f"    return {first}"]
    # The dispatch-mode hook: the public front hands the call to the active modes; ``_raw`` is the same
    # front without the hook, which the modes machinery calls to run the op itself.
    positional = [p.name for p in params if not p.kw_only]
    keywords = [p.name for p in params if p.kw_only] + (["out"] if variant == "functional" else [])
    args_text = "(" + "".join(n + ", " for n in positional) + ")"
    kwargs_text = "{" + ", ".join(f"{k!r}: {k}" for k in keywords) + "}"
    hook = f"    if _modes[0]: return _run_modes(_op, {variant!r}, _public, _raw, {args_text}, {kwargs_text})"
    raw_lines = [lines[0].replace(f"def {fname}(", f"def _raw_{fname}(", 1), *lines[1:]]
    lines = [lines[0], hook, *lines[1:]]
    namespace: dict[str, Any] = dict(_COMMON)
    namespace.update(meta_names)
    namespace.update(
        _name=fname,
        _meta=op.meta,
        _handlers=op.table.handlers,
        _resolve=op.table.resolve,
        _elementwise=op.elementwise,
        _lists=tuple(p.name for p in params if p.category == TENSOR_LIST),
    )
    if binding is not None:
        namespace.update(_KEY=binding[0], _Cls=binding[1])
    for p in params:
        if p.has_default:
            namespace[f"_d_{p.name}"] = p.default
    source = "\n".join(lines) + "\n"
    where = f"devtensor.{binding[0].name.lower()}" if binding is not None else "devtensor"
    code = compile(source + "\n" + "\n".join(raw_lines) + "\n", f"<{where}.{fname}>", "exec")
    exec(code, namespace)
    fn: Callable[..., Tensor] = namespace[fname]
    namespace.update(_public=fn, _raw=namespace[f"_raw_{fname}"], _op=op)
    fn.__doc__ = op.doc
    fn.__qualname__ = fname
    fn.__module__ = where
    fn.__source__ = source  # type: ignore[attr-defined]
    fn.op = op  # type: ignore[attr-defined]
    return fn
