"""Source-line builders of the structured fronts (:mod:`devtensor.structured.fronts`): the kernel call with
its ConstOut and guards, and the inline common case of elementwise metas with the direct path (one ufunc call
made by the front itself, while the built-in CPU kernel is the handler)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from devtensor.meta import DIRECT, FRESH_C, INLINE, MEMO, ONE, SHAPE_MEMO
from devtensor.structured import rules
from devtensor.structured.annotations import SCALAR, TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.structured.schema import Param

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp


def _call_text(params: Sequence[Param]) -> str:
    return ", ".join(f"{p.name}={p.name}" if p.kw_only else p.name for p in params)


def _guarded(body: list[str], indent: str) -> list[str]:
    """``body`` run directly when the device needs no guard, else inside ``with _device._guard():``."""
    lines = [f"{indent}if _device._guard is None:"]
    lines += [f"{indent}    {b}" for b in body]
    lines += [f"{indent}else:", f"{indent}    with _device._guard():"]
    lines += [f"{indent}        {b}" for b in body]
    return lines


def _protected(call: str, target: str | None, on_condition: str) -> list[str]:
    """``call``, for an existing ``target`` (out, inplace self) in a try: memory made read-only behind devtensor's
    back after its writability was checked and cached makes NumPy refuse the write before writing, which
    surfaces as ReadOnlyError; a floating-point condition made an error runs ``on_condition``."""
    if target is None:
        return [f"    {call}"]
    text = f"try:\n    {call}\nexcept ValueError:\n    _check_writable(_name, {target!r}, {target})\n    raise\n"
    text += f"except (Warning, FloatingPointError):\n    {on_condition}\n    raise"
    return ["    " + line for line in text.splitlines()]


def _impl_call(
    call: str, array: str, target: str | None = None, inplace: bool = False, inputs: str = "()"
) -> list[str]:
    """Build the ConstOut over ``array`` (a fresh view; an :class:`InplaceOut` for the ``inplace`` variant when
    ``array`` is self's own) and call the handler with it, under :func:`_protected` for an existing ``target`` (a
    try costs nothing in CPython 3.11 when nothing is raised)."""
    # A floating-point condition made an error (a warnings filter, np.errstate(...='raise')): the result is written
    # (the kernel run to the end where it can be: rules.complete_after_condition), the version bumped, then the
    # error propagates. An inplace self's own memory: the kernel wrote it all.
    body = _protected(
        f"_handler({call}, out=_const_out)",
        target,
        f"{target}._storage.version += 1"
        if array == f"{target}._array"
        else f"_complete_after_condition({target}, {array}, {inputs}, _handler, _const_out, {call})",
    )
    if not inplace:
        new = "    _const_out = _new_const_out()"
    elif array == f"{target}._array":
        new = "    _const_out = _InplaceOut()"
    else:  # (a temporary is not self's memory: a kernel must not read self through it)
        new = f"    _const_out = _InplaceOut() if {array} is {target}._array else _new_const_out()"
    return ["if _handler is not _META_ONLY:", new, f"    _set_out_array(_const_out, {array}.view())", *body]


def _inline_kind(op: StructuredOp) -> tuple[str | None, Any]:
    """(``"unary"`` or ``"binary"``, the meta's state) when the op's meta function offers an inline common case
    (meta.INLINE) that fits the op's parameters; (None, None) otherwise."""
    offer = getattr(op.meta, INLINE, None) if op.schema.plan is None else None
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


def _list_arrays(items: str) -> str:
    """The expression of the arrays of the tensor list ``items`` (two tensors without a comprehension's frame)."""
    return f"([{items}[0]._array, {items}[1]._array] if len({items}) == 2 else [_t._array for _t in {items}])"


def _meta_lines(op: StructuredOp, variant: str) -> tuple[list[str], dict[str, Any]]:
    """The lines computing ``_spec``: the call of the meta function, or, when it offers one (meta.INLINE), its
    common case inline with the call for the rest: one Python call less per op call (a tenth of an elementwise
    op's time at small sizes); before a call, the generic check of bool and Literal arguments
    (:func:`rules.value_check_lines`; inline ops have none). Also the per-op values those lines use."""
    params = op.schema.params
    call = f"    _spec = _meta({_call_text(params)})"
    kind, state = _inline_kind(op)
    direct = getattr(op.meta, DIRECT, None)
    extra = {"_direct": direct} if direct is not None and kind is not None else {}
    if kind == "unary":
        return [
            "    _cached_dtype = _meta_cache.get(self._dtype)",
            "    _spec = (self._shape, _cached_dtype) if _cached_dtype is not None else _meta(self)",
        ], {"_meta_cache": state, **extra}
    if kind == "binary":
        # Both tensors (the flags of the argument checks; an inplace self is one), dtypes those of the entry
        # used last, one shape, alpha at its default (the meta function checks nothing then).
        # A float alpha for a floating-point result needs no check either (the meta function's own test).
        # A tensor and a Python number, or a number and a tensor: the meta's entry for that order, when it has
        # no int to range-check or the int is within the entry's window.
        inplace = variant == "inplace"
        tensors = "_other_is_tensor" if inplace else "_self_is_tensor and _other_is_tensor"
        alpha_test = (
            " and (alpha is _ONE or type(alpha) is _float and _last[2].kind in 'fc')" if len(params) == 3 else ""
        )
        values = {"_meta_last": state, "_ONE": ONE, **extra}
        lines = [
            f"    if {tensors}:",
            "        _last = _meta_last[0]",
            "        if self._dtype is _last[0] and other._dtype is _last[1]"
            f" and self._shape == other._shape{alpha_test}:",
            "            _spec = (self._shape, _last[2])",
            "        else:",
            "        " + call,
            "    else:" if inplace else "    elif _self_is_tensor:",
            "        _last = _meta_last[1]",
            "        if self._dtype is _last[0] and type(other) is _last[1]"
            f" and (not _last[3] or _last[5] <= other <= _last[6]){alpha_test}:",
            "            _spec = (self._shape, _last[2])",
            "        else:",
            "        " + call,
        ]
        if inplace:
            return lines, values
        return [
            *lines,
            "    else:",
            "        _last = _meta_last[2]",
            "        if type(self) is _last[0] and other._dtype is _last[1]"
            f" and (not _last[3] or _last[5] <= self <= _last[6]){alpha_test}:",
            "            _spec = (other._shape, _last[2])",
            "        else:",
            "        " + call,
        ], values
    checks, values = rules.value_check_lines(params)
    kind = _call_direct(op)
    if kind is not None:
        values = {**values, "_direct": direct}
    memo = getattr(op.meta, MEMO, None)
    specs = getattr(op.meta, SHAPE_MEMO, None)
    names = [p.name for p in params]
    if specs is not None and names[:3] == ["self", "dim", "keepdim"] and names[3:] in ([], ["dtype"]):
        # A reduction's common call (dim an int or None, no dtype; keepdim a bool by the checks above) by
        # (shape, dtype, dim, keepdim) inline (meta.SHAPE_MEMO).
        test = "dtype is None and " * (len(names) == 4) + "(dim is None or type(dim) is _int)"
        return [
            *checks,
            f"    _spec = _specs.get((self._shape, self._dtype, dim, keepdim)) if {test} else None",
            f"    if _spec is None: {call.strip()}",
        ], {**values, "_specs": specs}
    if specs is not None and not checks and [p.category for p in params] == [TENSOR, TENSOR]:
        # The meta's results by (shape, dtype) of both tensors looked up inline (meta.SHAPE_MEMO: matmul, mm).
        a, b = (p.name for p in params)
        return [
            f"    _spec = _specs.get(({a}._shape, {a}._dtype, {b}._shape, {b}._dtype))",
            f"    if _spec is None: {call.strip()}",
        ], {**values, "_specs": specs}
    if (
        specs is not None
        and not checks
        and [p.category for p in params][:3] == [TENSOR] * 3
        and all(p.kw_only and p.has_default for p in params[3:])
    ):
        # Three tensors and keyword scalars (addmm): the meta's results for the scalars at their defaults, by
        # (shape, dtype) of the three tensors, looked up inline (meta.SHAPE_MEMO).
        key = ", ".join(f"{p.name}._shape, {p.name}._dtype" for p in params[:3])
        defaults = " and ".join(f"{p.name} is _default_{p.name}" for p in params[3:]) or "True"
        return [
            f"    _spec = _specs.get(({key})) if {defaults} else None",
            f"    if _spec is None: {call.strip()}",
        ], {**values, "_specs": specs}
    if specs is not None and not checks and [p.category for p in params][:1] == [TENSOR] and _int_memo(params):
        # The meta's results by (shape, dtype, int) looked up inline (meta.SHAPE_MEMO); with a dtype= parameter
        # (softmax), only at its default None.
        t, n = params[0].name, params[1].name
        dtype = " and dtype is None" if len(params) == 3 else ""
        return [
            f"    _spec = _specs.get(({t}._shape, {t}._dtype, {n})) if type({n}) is _int{dtype} else None",
            f"    if _spec is None: {call.strip()}",
        ], {**values, "_specs": specs}
    if kind == "list" and memo is not None and not checks:
        # The meta's memo looked up inline (meta.MEMO), keyed as meta.memoized keys a list and an int.
        # Two tensors (the common case) keyed without a comprehension's frame.
        items, dim = params[0].name, params[1].name
        each = "(_t._shape, _t._dtype, _t._device)"
        return [
            f"    if type({items}) is list and type({dim}) is _int:",
            f"        if len({items}) == 2:",
            f"            _t0, _t1 = {items}",
            f"            _spec = _memo.get(({dim}, {each.replace('_t.', '_t0.')}, {each.replace('_t.', '_t1.')}))",
            f"        else: _spec = _memo.get(({dim}, *[{each} for _t in {items}]))",
            "    else: _spec = None",
            f"    if _spec is None: {call.strip()}",
        ], {**values, "_memo": memo}
    return [*checks, call], values


def _direct_impl_call(
    op: StructuredOp, call: str, array: str = "_out_array", target: str | None = None, inputs: str = "()"
) -> list[str]:
    """A front's kernel call (:func:`_impl_call`), after the direct path when the op offers one (meta.DIRECT):
    while the handler is the built-in CPU kernel (one ufunc call), the front makes that call into ``array`` (an
    inplace self's also as the first input, for NumPy's in-place fast path), under :func:`_protected`."""
    inplace = target is not None and array == f"{target}._array"
    lines = _impl_call(call, array, target, inplace=inplace, inputs=inputs)
    if "_direct" not in _meta_lines(op, "functional")[1]:
        return lines
    kind = _call_direct(op)
    if kind is not None:
        params = op.schema.params
        test = ""
        if kind == "arrays":
            direct = "_direct[1](" + "".join(f"{p.name}._array, " for p in params) + f"out={array})"
        elif kind == "scalars":
            arrays = "".join(f"{p.name}._array, " if p.category == TENSOR else f"{p.name}, " for p in params)
            direct = f"_direct[1]({arrays}{array})"
        elif kind == "plan":
            arrays = "".join(f"{p.name}._array, " for p in params if p.category == TENSOR)
            direct = f"_direct[1]({arrays}_spec[2], {array})"
        else:  # (an int dim only: other index types take the kernel's conversion)
            test = f" and type({params[1].name}) is _int"
            direct = f"_direct[1]({_list_arrays(params[0].name)}, {params[1].name}, {array})"
        body = _protected(direct, target, f"_written_then_raised({target}, {array})")
        return [f"if _handler is _direct[0]{test}:", *body, "el" + lines[0], *lines[1:]]
    scaled = len(op.schema.params) == 3  # (alpha: the ufunc for alpha 1, else the two steps of _direct[2])
    first = array if inplace else "self._array"
    if _inline_kind(op)[0] != "unary":
        first = (first if inplace else "self._array if _self_is_tensor else self") + ", other._array if"
        first += " _other_is_tensor else other, out="
    direct = f"_direct[1]({first}{', ' * (first[-1] != '=')}{array})"  # (one ufunc call writes all, then reports)
    body = _protected(direct, target, f"_written_then_raised({target}, {array})")
    if not scaled:
        return ["if _handler is _direct[0]:", *body, "el" + lines[0], *lines[1:]]
    # (the two steps write all, then report the conditions of both)
    two = _protected(
        f"_direct[2]({first[: -len(', out=')]}, alpha, {array})", target, f"_written_then_raised({target}, {array})"
    )
    return [
        "if _handler is _direct[0] and alpha is _ONE:",
        *body,
        "elif _handler is _direct[0]:",
        *two,
        "el" + lines[0],
        *lines[1:],
    ]


def _direct_result_lines(op: StructuredOp) -> list[str]:
    """For an op with the direct path (meta.DIRECT), the functional front's lines that let the ufunc allocate
    the result itself (NumPy allocates and writes a fresh result faster than it writes into ``np.empty``'s), the
    last line an ``else:`` for the allocating path; [] for other ops. Only where the array is the one the
    allocating path would make: on the CPU (no device guard), an array (a 0-d ufunc result is a NumPy scalar
    unless asked with ``out=...``), C-contiguous (1-d; a ufunc asked for C order; every tensor operand
    C-contiguous, as NumPy lays a fresh result out as its inputs otherwise; or up to meta.FRESH_C dims whatever
    the operands' layouts), of the meta's dtype (the direct ops' meta functions resolve dtypes as NumPy's ufunc
    does)."""
    if "_direct" not in _meta_lines(op, "functional")[1]:
        return []
    kind = _call_direct(op)
    if kind == "plan":
        # The call allocates the result itself, given no out, where its first tensor is C-contiguous and of the
        # result's dtype (the allocating path's array: C-contiguous).
        first = next(p.name for p in op.schema.params if p.category == TENSOR)
        arrays = ", ".join(f"{p.name}._array" for p in op.schema.params if p.category == TENSOR)
        layout = f"_spec[1] is {first}._dtype and {first}._array.flags.c_contiguous"
        if getattr(op.meta, FRESH_C, 0):  # (the call lays out any result itself: meta.FRESH_C)
            layout = ""
        return _allocating_lines(layout, f"_direct[1]({arrays}, _spec[2])")
    if kind == "scalars":
        params = op.schema.params
        tensors = [p.name for p in params if p.category == TENSOR]
        numbers = [p.name for p in params if p.category != TENSOR]
        layout = " and ".join(
            [*(f"{n} is _default_{n}" for n in numbers), *(f"_spec[1] is {t}._dtype" for t in tensors)]
        )
        return _allocating_lines(
            layout, f"_direct[1]({', '.join(f'{t}._array' for t in tensors)}, {', '.join(numbers)})"
        )
    if kind == "list":
        # NumPy lays a fresh result out by its inputs: it allocates where that is the allocating path's array, a
        # 1-d result (C-contiguous), whose dtype NumPy's promotion gives as the meta function's (result_type).
        items, dim = (p.name for p in op.schema.params)
        return [
            f"if _handler is _direct[0] and type({dim}) is _int and len(_spec[0]) == 1 and _device._guard is None:",
            "    try:",
            f"        _out_array = _direct[1]({_list_arrays(items)}, {dim})",
            "    except (ValueError, MemoryError) as _error:  # (a result too big: the allocating path's error)",
            "        _alloc_failed(_name, _spec, _error, _device)",
            "else:",
        ]
    if kind == "arrays":
        names = [p.name for p in op.schema.params]
        operands = ", ".join(f"{n}._array" for n in names)
        layout = " and ".join(f"{n}._array.flags.c_contiguous" for n in names)
        fresh_c = getattr(op.meta, FRESH_C, 0)
        if fresh_c:  # (the call lays such a result out in C order whatever the operands' layouts: meta.FRESH_C)
            return _allocating_lines(f"0 < len(_spec[0]) <= {fresh_c}", f"_direct[1]({operands})")
    elif _inline_kind(op)[0] == "unary":
        operands = "self._array"
        layout = "self._array.flags.c_contiguous"
    else:
        operands = "self._array if _self_is_tensor else self, other._array if _other_is_tensor else other"
        layout = (
            "(not _self_is_tensor or self._array.flags.c_contiguous)"
            " and (not _other_is_tensor or other._array.flags.c_contiguous)"
        )
    alpha = ""
    call = f"_direct[1]({operands})"
    # A ufunc lays out a result of 2 or more dims in C order when asked (order="C": cheaper than testing the
    # operands' layouts), so any layout takes the direct path; 1-d results are C-contiguous anyway.
    ordered = kind is None and isinstance(getattr(op.meta, DIRECT)[1], np.ufunc)
    if ordered:
        # (and a 0-d result as a 0-d array, not the NumPy scalar a ufunc returns without out=...)
        call = (
            f"_direct[1]({operands}) if len(_spec[0]) == 1 else _direct[1]({operands}, order='C') if _spec[0]"
            f" else _direct[1]({operands}, out=...)"
        )
    if len(op.schema.params) == 3 and kind is None:
        # (alpha != 1: the two steps allocate too, for two tensors of one dtype, the result's; in the operands'
        # layout, so only where that is C order)
        alpha = " and (alpha is _ONE or _self_is_tensor and _other_is_tensor and self._dtype is other._dtype)"
        call = f"({call}) if alpha is _ONE else _direct[2](self._array, other._array, alpha, None)"
        if ordered:
            ordered = False
            layout = "(alpha is _ONE or (self._array.flags.c_contiguous and other._array.flags.c_contiguous))"
    if ordered:
        return _allocating_lines("", call, alpha)
    return _allocating_lines(f"(len(_spec[0]) == 1 or (_spec[0] and {layout}))", call, alpha)


def _allocating_lines(layout: str, call: str, alpha: str = "") -> list[str]:
    """The lines of :func:`_direct_result_lines` for the result's ``layout`` test and the allocating ``call``."""
    return [
        f"if _handler is _direct[0]{alpha} and _device._guard is None{' and ' * bool(layout)}{layout}:",
        "    try:",
        f"        _out_array = {call}",
        "    except (ValueError, MemoryError) as _error:  # (a result too big: the allocating path's error)",
        "        _alloc_failed(_name, _spec, _error, _device)",
        "else:",
    ]


#: The lanes' device test: no device guard, and the op's built-in CPU kernel is the handler.
_BUILT_IN: Final = "_device._guard is None and _handlers.get(_device.key) is _direct[0]"
#: An out the ufunc may write as it is (besides its dtype): self's shape and device, its writability checked
#: before, no root shared with self.
_OUT_FITS: Final = (
    "out._shape == self._shape and out._device is _device and out._write_checked and"
    " self._storage.root is not out._storage.root"
)


#: The compiled core's memo lanes (``devtensor/_core.c``; codes shared with it): a functional call without out whose
#: meta result the meta's memo holds (meta.SHAPE_MEMO, read as the Python front reads it) and whose direct call
#: allocates the result. REDUCE: ``(self, dim, keepdim[, dtype])`` (sum, amax, ...); INT: ``(self, int)``
#: (softmax, log_softmax); ARRAYS: two tensors (matmul, mm); SCALARS: three tensors and keyword numbers at their
#: defaults (addmm); LIST: a list of tensors and an int dim, keyed by meta.MEMO (cat).
MEMO_REDUCE, MEMO_INT, MEMO_ARRAYS, MEMO_SCALARS, MEMO_LIST = 3, 4, 5, 6, 7


#: The compiled core's lane for a unary op with an inline dtype entry whose direct call is no ufunc (relu): the
#: allocating path of :func:`_direct_result_lines` (a 1-d or C-contiguous self; the call allocates).
UNARY_CALL: Final = 8


def unary_call_lane(op: StructuredOp) -> bool:
    """Whether ``op`` takes the compiled core's UNARY_CALL lane (functional, no out): a unary inline meta kind and a
    plain direct call that is no ufunc."""
    kind, _state = _inline_kind(op)
    direct = getattr(op.meta, DIRECT, None)
    return kind == "unary" and direct is not None and _call_direct(op) is None and not isinstance(direct[1], np.ufunc)


def memo_lane(op: StructuredOp) -> tuple[int, tuple[Any, ...], int] | None:
    """``(kind, defaults, fresh_c)`` when ``op``'s functional front reads a memo of meta results inline and makes
    the direct call that allocates the result (:func:`_meta_lines`, :func:`_direct_result_lines`): the lane's kind
    (the ``MEMO_*`` codes), the defaults it fills in (REDUCE: ``(has a dim default, dim's, keepdim's)``;
    SCALARS: the numbers'; LIST: dim's), and meta.FRESH_C (0: the result's layout is tested as the Python front
    tests it). None for other ops."""
    values = _meta_lines(op, "functional")[1]
    kind = _call_direct(op)
    params = op.schema.params
    if kind == "list" and "_memo" in values and "_direct" in values and params[1].has_default:
        return MEMO_LIST, (params[1].default,), 0
    if "_specs" not in values or "_direct" not in values:
        return None
    names = [p.name for p in params]
    categories = [p.category for p in params]
    checks, _values = rules.value_check_lines(params)
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
    """Whether ``op``'s fronts have the one-pass lane (:func:`_lane_lines`): an inline meta kind, a direct path
    whose call is the plain one, and a NumPy ufunc as the direct call (the compiled core's lanes,
    ``devtensor/_core.c``, are offered for the same ops)."""
    kind, _state = _inline_kind(op)
    direct = getattr(op.meta, DIRECT, None)
    return kind is not None and direct is not None and _call_direct(op) is None and isinstance(direct[1], np.ufunc)


def _lane_lines(op: StructuredOp) -> list[str]:
    """A functional ufunc front's first lines: the common case in one pass, before the general checks (which it
    would pass: the same tests, in fewer steps). No out, alpha at its default, ``self`` a tensor and ``other`` a
    tensor of ``self``'s device and shape or a Python float or int (or such a number and a tensor: ``2 * x``),
    dtypes those of the meta's entry used last for that form (an int within the entry's window), no device
    guard, the op's CPU kernel the handler: the ufunc allocates the result (C order, a 0-d one as an array),
    which the lane wraps. With ``out``, the same case into an ``out`` that fits the result exactly, checked
    writable before and sharing no memory with the operands: the ufunc writes ``out``'s array. [] for other
    ops."""
    if not ufunc_lane(op):
        return []
    kind, _state = _inline_kind(op)
    if kind == "unary":
        return [
            "if out is None and isinstance(self, _Tensor):",
            "    _device = self._device",
            f"    if _meta_cache.get(self._dtype) is not None and {_BUILT_IN}:",
            *_lane_result("self", "self._array", "_meta_cache[self._dtype]"),
            "elif isinstance(out, _Tensor) and isinstance(self, _Tensor):",
            "    _device = self._device",
            f"    if _meta_cache.get(self._dtype) is out._dtype and {_OUT_FITS} and {_BUILT_IN}:",
            *_lane_out("self._array"),
        ]
    alpha = " and alpha is _ONE" if len(op.schema.params) == 3 else ""
    number = "(_last[{i}] is _float or _last[{i}] is _int and (not _last[3] or _last[5] <= {n} <= _last[6]))"
    return [
        f"if out is None{alpha} and isinstance(self, _Tensor):",
        "    _device = self._device",
        *_operands_lines(number.format(i=1, n="other"), ""),
        f"    if _lane and self._dtype is _last[0] and {_BUILT_IN}:",
        *_lane_result("self", "self._array, _other", "_last[2]"),
        f"elif out is None{alpha} and isinstance(other, _Tensor):",
        "    _device = other._device",
        "    _last = _meta_last[2]",
        f"    if type(self) is _last[0] and {number.format(i=0, n='self')} and other._dtype is _last[1] and"
        f" {_BUILT_IN}:",
        *_lane_result("other", "self, other._array", "_last[2]"),
        # out=: the same operands into an out of the result's device, shape and dtype that passed its writability
        # check and shares no memory with self or other (the general path's out checks, in one test).
        f"elif isinstance(out, _Tensor){alpha} and isinstance(self, _Tensor):",
        "    _device = self._device",
        *_operands_lines(number.format(i=1, n="other"), " and other._storage.root is not out._storage.root"),
        f"    if _lane and self._dtype is _last[0] and out._dtype is _last[2] and {_OUT_FITS} and {_BUILT_IN}:",
        *_lane_out("self._array, _other"),
    ]


def _operands_lines(number: str, tensor_test: str) -> list[str]:
    """The binary lanes' choice of the meta's entry for ``other`` (a tensor of self's device and shape, with
    ``tensor_test`` too, or a Python number passing ``number``): ``_last``, ``_lane`` and ``_other``."""
    return [
        "    if isinstance(other, _Tensor):",
        "        _last = _meta_last[0]",
        "        if other._dtype is not _last[1]: _last = _meta_last[3]  # (the entry before: x * y beside x * mask)",
        "        _lane = other._device is _device and other._dtype is _last[1] and self._shape == other._shape"
        f"{tensor_test}",
        "        _other = other._array",
        "    else:",
        "        _last = _meta_last[1]",
        f"        _lane = type(other) is _last[1] and {number}",
        "        _other = other",
    ]


def _lane_out(operands: str) -> list[str]:
    """The out= lane's call into ``out``'s own array, with the general path's handling of its errors."""
    return [
        "        try:",
        f"            _direct[1]({operands}, out=out._array)",
        "        except ValueError:",
        "            _check_writable(_name, 'out', out)",
        "            raise",
        "        except (Warning, FloatingPointError):",
        "            _written_then_raised(out, out._array)",
        "            raise",
        "        out._storage.version += 1",
        "        return out",
    ]


def _lane_result(tensor: str, operands: str, dtype: str) -> list[str]:
    """The lane's call (the result has ``tensor``'s shape and class) and the result's wrapping."""
    return [
        f"        _shape = {tensor}._shape",
        "        try:",
        f"            _out_array = _direct[1]({operands}) if len(_shape) == 1 else _direct[1]({operands}, order='C')"
        f" if _shape else _direct[1]({operands}, out=...)",
        "        except (ValueError, MemoryError) as _error:  # (no memory: the allocating path's error)",
        f"            _alloc_failed(_name, (_shape, {dtype}), _error, _device)",
        # (a tensor's class is its backend's tensor_class; the ufunc's result dtype is the meta's, canonical)
        f"        _result = _new_object(type({tensor}))",
        "        _result._array = _out_array",
        "        _result._device = _device",
        "        _result._storage = _storage = _new_object(_Storage)",
        "        _storage.root = _out_array",
        "        _storage.version = 0",
        "        _result._shape = _shape",
        f"        _result._dtype = {dtype}",
        "        _result._write_checked = True",
        "        return _result",
    ]
