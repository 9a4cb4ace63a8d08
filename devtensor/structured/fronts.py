"""Front generation: the Python source of each structured op's variants (functional with out, inplace, device
bindings), specialised to the op's schema and compiled once per op."""

from __future__ import annotations

import linecache
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from devtensor import modes
from devtensor.dispatcher import META_ONLY, DispatchKey
from devtensor.dtypes import SCALAR_TYPES
from devtensor.structured import rules
from devtensor.structured.aliases import ALIAS_COMMON, alias_lines, alias_pairs, alias_signature, shown_signature
from devtensor.structured.annotations import SCALAR, TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.structured.core import lazy_front
from devtensor.structured.front_lines import (
    _call_text,
    _direct_impl_call,
    _direct_result_lines,
    _guarded,
    _impl_call,
    _lane_lines,
    _meta_lines,
)
from devtensor.structured.front_lines import (
    _inline_kind as _inline_kind,  # (re-exported: devtensor.plan imports it from here)
)
from devtensor.structured.generated import front_source as front_source  # (its public path)
from devtensor.structured.schema import Param
from devtensor.tensor import (
    PlannedSpec,
    Storage,
    Tensor,
)
from devtensor.typed.const_out import InplaceOut, new_const_out, set_array

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp


#: The names every front's source uses besides its per-op values (:func:`front_values`): the fronts, compiled
#: at run time (:func:`compile_factory`), see these as globals.
COMMON: Final[dict[str, Any]] = {
    "_Tensor": Tensor,
    "_SCALARS": SCALAR_TYPES,
    "_META_ONLY": META_ONLY,
    "_new_object": object.__new__,
    "_new_const_out": new_const_out,
    "_InplaceOut": InplaceOut,
    "_set_out_array": set_array,
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
    "_exact_shape": rules.exact_shape,
    "_list_device": rules.list_device,
    "_prepare_out": rules.prepare_out,
    "_prepare_inplace": rules.prepare_inplace,
    "_swap_storage": rules.swap_storage,
    "_finish_out": rules.finish_out,
    "_copy_back": rules.copy_back,
    "_temporary": rules.temporary,
    "_complete_after_condition": rules.complete_after_condition,
    "_written_then_raised": rules.written_then_raised,
    "_Storage": Storage,
    "_int": int,  # (a parameter may be named int: the direct path's dim test reads the builtin)
    "_float": float,
    "_check_pair": rules.check_pair,
    "_modes": modes.ACTIVE,
    "_run_modes": modes.run_modes,
    "_check_writable": rules.check_writable,
    "_check_overlap": rules.check_overlap,
    "_coerce": rules.coerce,
    "_NumPyArgument": rules.NumPyArgument,
    **ALIAS_COMMON,
}


def _flag(name: str) -> str:
    """The local of the fronts that records whether the parameter ``name`` (a non-optional TensorOrScalar) got a
    tensor: the overlap checks after the meta function test it instead of calling isinstance again."""
    return f"_{name}_is_tensor"


def _retry(params: Sequence[Param], variant: str, name: str, refined: bool) -> str:
    """The statement a front runs for an argument ``name`` of no type it takes at once: the slow path that
    converts NumPy values (:func:`devtensor.numpy_values.coerce_call`) and calls the front again without the
    dispatch-mode hook, or raises the argument's type error."""
    positional = "(" + "".join(f"{p.name}, " for p in params if not p.kw_only) + ")"
    keywords = [p.name for p in params if p.kw_only] + (["out"] if variant == "functional" else [])
    kwargs = "{" + ", ".join(f"{k!r}: {k}" for k in keywords) + "}"
    return f"return _coerce(_op, _raw, {positional}, {kwargs}, {name!r}{', _Class' if refined else ''})"


def _list_check(params: Sequence[Param], variant: str, name: str, refined: bool) -> list[str]:
    """The full check of the tensor list ``name`` (rules.list_device: its type, its items', their device)."""
    return [
        "try:",
        f"    _device, _first_tensor = _list_device(_name, '{name}', {name}, _device, _first_tensor)",
        f"except _NumPyArgument: {_retry(params, variant, name, refined)}",
    ]


def _arg_checks(
    params: Sequence[Param], all_names: str, first_is_self: bool, refined: bool = False, variant: str = "functional"
) -> list[str]:
    """Argument checks; ``refined`` (device bindings): tensors must be instances of exactly ``_Class``. They set
    ``_device`` (the device of the first tensor; None when there is none yet) and ``_first_tensor`` (that
    tensor), except after a first ``self`` (``first_is_self``), which sets ``_device`` alone. An argument of
    another type takes the slow path of :func:`_retry` (NumPy values are converted there)."""
    lines: list[str] = []
    # What is known of ``_device`` before each parameter: "unset" (nothing yet), "maybe" (None or a device), "set".
    # Known states spare tests: the first tensor parameter sets ``_device`` and ``_first_tensor`` without testing them.
    state = "set" if first_is_self else "unset"
    first = params[0]
    if state == "unset" and (first.optional or first.category not in (TENSOR, TENSOR_OR_SCALAR)):
        lines += ["    _device = None", "    _first_tensor = None"]
        state = "maybe"
    for i, p in enumerate(params):
        n = p.name
        body: list[str] = []
        is_tensor = f"type({n}) is _Class" if refined else f"isinstance({n}, _Tensor)"
        bad_tensor = _retry(params, variant, n, refined)
        if i == 0 and first_is_self:
            body += [
                f"if not {is_tensor}: {bad_tensor}",
                f"_device = {n}._device",
            ]
        elif p.category == TENSOR or p.category == TENSOR_OR_SCALAR:
            flagged = p.category == TENSOR_OR_SCALAR and not p.optional
            body.append(f"if {is_tensor}:")
            if flagged:
                body.append(f"    {_flag(n)} = True")
            if state == "set":
                body.append(f"    if {n}._device is not _device: _mismatch(_name, {all_names})")
            elif state == "unset":
                body += [f"    _device = {n}._device", f"    _first_tensor = {n}"]
            else:
                body += [
                    "    if _device is None:",
                    f"        _device = {n}._device",
                    f"        _first_tensor = {n}",
                    f"    elif {n}._device is not _device: _mismatch(_name, {all_names})",
                ]
            if p.category == TENSOR:
                body.append(f"else: {bad_tensor}")
                if not p.optional:
                    state = "set"
            else:
                bad_value = bad_tensor
                if flagged:
                    body += ["else:", f"    {_flag(n)} = False"]
                    if state == "unset":
                        body += ["    _device = None", "    _first_tensor = None"]
                    body.append(f"    if type({n}) not in _SCALARS: {bad_value}")
                else:
                    body.append(f"elif type({n}) not in _SCALARS: {bad_value}")
                if state == "unset":
                    state = "maybe"
        elif p.category == TENSOR_LIST:
            if i == 0 and not first_is_self:
                # The common case inline (a list of tensors on one device: the first sets the device), else
                # the full check with its errors: a Python call less per call (a sixth of cat's time).
                body += [
                    f"if type({n}) is list and {n}:",
                    f"    _first_tensor = {n}[0]",
                    "    if isinstance(_first_tensor, _Tensor): _device = _first_tensor._device",
                    f"    for _item in {n}:",
                    "        if not isinstance(_item, _Tensor) or _item._device is not _device:",
                    "            _device = _first_tensor = None",
                    "            break",
                    "if _device is None:",
                ]
                body += ["    " + b for b in _list_check(params, variant, n, refined)]
            else:
                body += _list_check(params, variant, n, refined)
            if refined:
                body.append(f"for _item in {n}: type(_item) is _Class or _not_refined(_name, '{n}', _item, _Class)")
        elif p.category == SCALAR:
            check = f"type({n}) not in _SCALARS"
            if p.has_default and type(p.default) in SCALAR_TYPES:
                # Most calls leave it at its default, a valid number: one identity test instead of the type test.
                check = f"{n} is not _default_{n} and {check}"
            body.append(f"if {check}: {_retry(params, variant, n, False)}")
        if body and p.optional and not (i == 0 and first_is_self):
            lines.append(f"    if {n} is not None:")
            lines += ["        " + b for b in body]
        else:
            lines += ["    " + b for b in body]
    return lines


def _builtin(op: StructuredOp) -> bool:
    """Ops defined inside devtensor: their meta results are trusted, not checked on every call."""
    return op.module.split(".")[0] == "devtensor"


def _overlap_lines(
    params: Sequence[Param], target: str, indent: str, *, skip_self: bool, through: bool, first: int = 0
) -> list[str]:
    """Inline overlap checks of ``target`` (storage root in ``_out_root``) against each tensor param (``params`` are
    the op's from index ``first`` on: the flags of :func:`_flag` are numbered by the op's parameters).
    ``through``: the op cannot write over its input, so ``target`` exactly an input makes ``_out_array`` a
    temporary (rules.check_pair returns True then); an inplace self passed again is then checked too."""
    op_text = "_name"
    arg = "'self'" if skip_self else "'out'"
    act = f"_out_array = _temporary(_name, {target})"
    lines: list[str] = []
    for p in params:
        n = p.name
        if p.category in (TENSOR, TENSOR_OR_SCALAR):
            if p.optional:
                is_tensor = f"isinstance({n}, _Tensor) and "
            elif p.category == TENSOR_OR_SCALAR:
                is_tensor = f"{_flag(n)} and "
            else:
                is_tensor = ""  # checked to be a tensor
            cond = f"{is_tensor}{n}._storage.root is _out_root"
            if skip_self and not through:
                cond += f" and {n} is not {target}"
            check = f"_check_pair({op_text}, {arg}, {target}, {n}, _out_may_be_input)"
            lines.append(f"{indent}if {cond} and {check}: {act}" if through else f"{indent}if {cond}: {check}")
        elif p.category == TENSOR_LIST:
            check = f"_check_overlap({op_text}, {arg}, {target}, {n}, _out_may_be_input)"
            lines.append(f"{indent}if {check}: {act}" if through else f"{indent}{check}")
    if not lines:
        lines.append(f"{indent}pass")
    return lines


def _spec_check_lines(op: StructuredOp) -> list[str]:
    """The validation of a custom op's meta result (built-in ops' are trusted): a shape seen valid before is
    one dict lookup (its value is the canonical tuple of Python ints: an equal tuple of NumPy ints maps to
    it), the dtype one set lookup; anything else goes through :func:`_checked_spec`."""
    if _builtin(op):
        return []
    # (5.0,) == (5,): a hit on another object than the cached one counts only for exact Python ints, so a result is
    # judged the same whether cached or not; a list (unhashable) is never looked up: the full check names it.
    if op.schema.plan is not None:
        return [
            "    _shape = _SPEC_SHAPES.get(_spec[0]) if type(_spec) is _PlannedSpec and type(_spec[0]) is tuple"
            " else None",
            "    if _shape is None or _spec[1] not in _SPEC_DTYPES or (_shape is not _spec[0] and not"
            " _exact_shape(_spec[0])):",
            "        _spec = _checked_planned_spec(_name, _spec)",
        ]
    return [
        "    _shape = _SPEC_SHAPES.get(_spec[0]) if type(_spec) is tuple and len(_spec) == 2 and type(_spec[0]) is"
        " tuple else None",
        "    if _shape is None or _spec[1] not in _SPEC_DTYPES or (_shape is not _spec[0] and not"
        " _exact_shape(_spec[0])):",
        "        _spec = _checked_spec(_name, _spec)",
    ]


def _variant_lines(op: StructuredOp, variant: str, refined: bool) -> tuple[str, list[str]]:
    """(function name, source lines) of the ``variant`` front of ``op``, without the dispatch-mode hook;
    ``refined``: the device binding (tensors must be exactly ``_Class``; the handler is looked up for ``_KEY``)."""
    params = op.schema.params
    meta_lines = _meta_lines(op, variant)[0]
    key_text = "_KEY" if refined else "_device.key"
    tensor_names = [p.name for p in params if p.category in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST)]
    call = _call_text(params) + (", plan=_spec[2]" if op.schema.plan is not None else "")
    if variant == "functional":
        fname = op.name
        inputs = "(" + "".join(f"{n}, " for n in tensor_names) + ")"
        named = "(" + "".join(f"('{n}', {n}), " for n in tensor_names) + "('out', out))"
        lines = [f"def {fname}({alias_signature(params, True)}):"]
        if not refined:
            lines += [f"    {line}" for line in _lane_lines(op)]
        lines += _arg_checks(params, named, first_is_self=False, refined=refined)
        retry_out = _retry(params, variant, "out", refined)
        lines += [
            "    if out is not None:",
            f"        if type(out) is not _Class: {retry_out}"
            if refined
            else f"        if not isinstance(out, _Tensor): {retry_out}",
            # (a tensor's device is never None: no tensor argument shows as a mismatch first)
            "        if out._device is not _device:",
            "            if _device is None: _no_tensor(_name, _lists)",
            "            _mismatch(_name, " + named + ")",
            "    elif _device is None: _no_tensor(_name, _lists)",
            *meta_lines,
            *_spec_check_lines(op),
            f"    _handler = _handlers.get({key_text})",
            f"    if _handler is None: _handler = _resolve({key_text}, str(_device))",
            "    if out is None:",
            "        _backend = _first_tensor._backend",
        ]
        allocating = [
            "try:",
            "    _out_array = _backend.alloc(_spec[0], _spec[1])",
            "except (ValueError, MemoryError) as _error:",
            "    _alloc_failed(_name, _spec, _error, _device)",
            *_direct_impl_call(op, call),
        ]
        direct = _direct_result_lines(op)
        if direct:
            lines += [f"        {line}" for line in direct] + _guarded(allocating, "            ")
        else:
            lines += _guarded(allocating, "        ")
        lines += [
            "        _result = _new_object(_backend.tensor_class)",
            "        _result._array = _out_array",
            "        _result._device = _device",
            # (the record made inline, as Storage(_out_array) makes it, without the call: every functional call)
            "        _result._storage = _storage = _new_object(_Storage)",
            "        _storage.root = _out_array",
            "        _storage.version = 0",
            "        _result._shape = _spec[0]",
            "        _result._dtype = _out_array.dtype",
            "        _result._write_checked = True",
            "        return _result",
            # Fast path: out already has the result's shape and dtype and was checked writable before;
            # only the overlap with this call's inputs is left to check. Anything else takes the full rules.
            "    if out._shape != _spec[0] or _spec[1] is not out._dtype or not out._write_checked:",
            f"        _out_array = _prepare_out(_name, out, _spec, {inputs}, _out_may_be_input)",
            "    else:",
            "        _out_array = out._array",
            "        _out_root = out._storage.root",
            *_overlap_lines(params, "out", "        ", skip_self=False, through=not op.out_may_be_input),
        ]
        lines += _guarded(_direct_impl_call(op, call, "_out_array", "out", inputs), "    ")
        lines += [
            # (a resized result, or a temporary when out is an input of an op that cannot write over it)
            "    if _out_array is not out._array: _finish_out(_name, out, _out_array)",
            "    out._storage.version += 1",
            "    return out",
        ]
    else:
        fname = op.name + "_"
        first = params[0].name
        others = "(" + "".join(f"{n}, " for n in tensor_names[1:]) + ")"
        named = "(" + "".join(f"('{n}', {n}), " for n in tensor_names) + ")"
        lines = [f"def {fname}({alias_signature(params, False)}):"]
        if any(p.category == TENSOR_LIST for p in params):
            lines.append("    _first_tensor = None")  # read by the tensor-list check
        lines += _arg_checks(params, named, first_is_self=True, refined=refined, variant="inplace")
        lines += [
            *meta_lines,
            *_spec_check_lines(op),
            f"    _handler = _handlers.get({key_text})",
            f"    if _handler is None: _handler = _resolve({key_text}, str(_device))",
            f"    if _spec[0] != {first}._shape or _spec[1] is not {first}._dtype or not {first}._write_checked:",
        ]
        if op.out_may_be_input:
            # Writes self's own memory always: no temporary, nothing more on the hot path.
            lines += [
                f"        _prepare_inplace(_name, {first}, _spec, {others}, _out_may_be_input)",
                "    else:",
                f"        _out_root = {first}._storage.root",
                *_overlap_lines(params[1:], first, "        ", skip_self=True, through=False),
            ]
            lines += _guarded(_direct_impl_call(op, call, f"{first}._array", first), "    ")
        else:
            # Another input exactly self (self passed again included): computed into a temporary, copied in.
            lines += [
                f"        _out_array = _prepare_inplace(_name, {first}, _spec, {others}, _out_may_be_input)",
                "    else:",
                f"        _out_array = {first}._array",
                f"        _out_root = {first}._storage.root",
                *_overlap_lines(params[1:], first, "        ", skip_self=True, through=True),
            ]
            every = "(" + "".join(f"{n}, " for n in tensor_names) + ")"
            lines += _guarded(_impl_call(call, "_out_array", first, inplace=True, inputs=every), "    ")
            lines.append(f"    if _out_array is not {first}._array: _copy_back({first}, _out_array)")
        lines += [f"    {first}._storage.version += 1", f"    return {first}"]
    return fname, lines


def _value_names(op: StructuredOp, variant: str, refined: bool) -> list[str]:
    """The names of the per-op values a front's factory takes (see :func:`front_values`), in order."""
    names = ["_name", "_op", "_meta", "_handlers", "_resolve", "_out_may_be_input", "_lists"]
    names += sorted(_meta_lines(op, variant)[1])
    if refined:
        names += ["_KEY", "_Class"]
    names += [f"_default_{p.name}" for p in op.schema.params if p.has_default]
    return names


def front_values(
    op: StructuredOp, variant: str, binding: tuple[DispatchKey, type[Tensor]] | None = None
) -> dict[str, Any]:
    """The per-op values a front's factory binds (its keyword arguments): the op, its meta function, its handler
    table, its defaults (the objects, never their text), the inline meta state, and for a device binding the
    key and the refined tensor class."""
    values: dict[str, Any] = {
        "_name": op.name if variant == "functional" else op.name + "_",
        "_op": op,
        "_meta": op.meta,
        "_handlers": op.table.handlers,
        "_resolve": op.table.resolve,
        "_out_may_be_input": op.out_may_be_input,
        "_lists": tuple(p.name for p in op.schema.params if p.category == TENSOR_LIST),
    }
    values.update(_meta_lines(op, variant)[1])
    if binding is not None:
        values.update(_KEY=binding[0], _Class=binding[1])
    for p in op.schema.params:
        if p.has_default:
            values[f"_default_{p.name}"] = p.default
    return values


def factory_name(op_name: str, variant: str, device: str | None = None) -> str:
    """The name of the factory of a front: ``make_add``, ``make_add_`` (inplace), ``make_cpu_add`` (binding)."""
    return "make_" + (f"{device}_" if device else "") + op_name + ("_" if variant == "inplace" else "")


def factory_source(op: StructuredOp, variant: str, device: str | None = None) -> str:
    """The source of the factory of ``op``'s ``variant`` front (for the device binding of ``device`` when given):
    ``def make_...(*, <per-op values>)`` defining the public front (with the dispatch-mode hook) and ``_raw``, the
    same front without the hook (the modes machinery calls it to run the op itself), returning both."""
    refined = device is not None
    fname, lines = _variant_lines(op, variant, refined)
    params = op.schema.params
    positional = [p.name for p in params if not p.kw_only]
    keywords = [p.name for p in params if p.kw_only] + (["out"] if variant == "functional" else [])
    args_text = "(" + "".join(n + ", " for n in positional) + ")"
    kwargs_text = "{" + ", ".join(f"{k!r}: {k}" for k in keywords) + "}"
    hook = f"    if _modes[0]: return _run_modes(_op, {variant!r}, _public, _raw, {args_text}, {kwargs_text})"
    raw_lines = [lines[0].replace(f"def {fname}(", f"def _raw_{fname}(", 1), *lines[1:]]
    raw_lines[1:1] = alias_lines(params, variant, "_raw")
    body = [
        lines[0],
        *alias_lines(params, variant, "_public"),
        hook,
        *lines[1:],
        "",
        *raw_lines,
        "",
        f"_public, _raw = {fname}, _raw_{fname}",
        "return _public, _raw",
    ]
    values = ", ".join(_value_names(op, variant, refined))
    return (
        "\n".join(
            [f"def {factory_name(op.name, variant, device)}(*, {values}):", *("    " + b if b else "" for b in body)]
        )
        + "\n"
    )


def compile_factory(filename: str, source: str, name: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """Compile the factory ``name`` from ``source`` in ``namespace`` (it gets the names of :data:`COMMON` too),
    registering the source with :mod:`linecache` under ``filename`` so that tracebacks show its lines and
    :func:`inspect.getsource` finds the fronts (``filename`` should look like ``<devtensor.custom.softplus>``)."""
    # An entry with no mtime is never invalidated by linecache.checkcache (attrs registers its generated
    # methods the same way).
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict[str, Any] = dict(COMMON)
    scope.update(namespace)
    exec(compile(source, filename, "exec"), scope)
    factory: Callable[..., Any] = scope[name]
    return factory


def generate_front(
    op: StructuredOp, variant: str, binding: tuple[DispatchKey, type[Tensor]] | None = None
) -> Callable[..., Tensor]:
    """The published ``variant`` front of ``op``: with the compiled core, a ``devtensor._core.Front`` (the op's
    C lane where it has one) whose Python front is built on the first call the lane leaves
    (:func:`devtensor.structured.core.lazy_front`); without it, the Python front itself, built now. With
    ``binding`` (key, refined class), the device binding's Python front (built on its first use by
    :mod:`devtensor.structured.registry`)."""
    return lazy_front(op, variant, build_front, binding)


def build_front(
    op: StructuredOp, variant: str, binding: tuple[DispatchKey, type[Tensor]] | None = None
) -> Callable[..., Tensor]:
    """The Python front of ``op``'s ``variant``; with ``binding`` (key, refined class), the device binding: tensors
    must be of that class, and the handler is looked up for that key without computing one.

    Its source comes from the generator (:func:`factory_source`), specialised to the op's schema, and is compiled
    here, registered with :mod:`linecache` (``<devtensor.add>``, ``<devtensor.cpu.add_>``,
    ``<devtensor.custom.NAME>``) for tracebacks and :func:`inspect.getsource`. Built-in and custom ops alike: no
    front is checked in.
    """
    device = binding[0].name.lower() if binding is not None else None
    name = factory_name(op.name, variant, device)
    where = f"devtensor.{device}" if device is not None else "devtensor"
    kind = "" if _builtin(op) else "custom."
    filename = f"<{where}.{kind}{op.name}{'_' if variant == 'inplace' else ''}>"
    source = factory_source(op, variant, device)
    factory = compile_factory(filename, source, name, {})
    fn, _ = factory(**front_values(op, variant, binding))
    fn.__source__ = source
    fn.__doc__ = op.doc
    fn.__qualname__ = fn.__name__
    fn.__module__ = f"devtensor.{device}" if device is not None else "devtensor"
    fn.op = op
    if alias_pairs(op.schema.params):
        # (the real defaults, not the NO_ALIAS that tells the front a parameter with an alias was not passed)
        fn.__signature__ = shown_signature(fn, op.schema.params)
    return fn  # type: ignore[no-any-return]
