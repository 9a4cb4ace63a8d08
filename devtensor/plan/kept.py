"""What a plan's compiled replay (devtensor.plan.replay) keeps and calls at run time, outside its generated source:
the layouts of the views of arguments a step returns (kept per argument array, made again without their front),
the sets of floating-point conditions a replay records, and where its code says it is (the step's file and
lines, for NumPy's warnings and tracebacks)."""

from __future__ import annotations

from types import CodeType
from typing import Any

import numpy as np

from devtensor.kernels.ufunc_family import report_conditions
from devtensor.plan.values import slot_indices
from devtensor.storage import KeptViews
from devtensor.structured.rules import check_writable
from devtensor.tensor import Tensor, check_no_internal_overlap

__all__ = [
    "last_uses",
    "spare_arrays",
    "write_check",
    "kept_views_lines",
    "keep_layout_lines",
    "keep_layouts_lines",
    "locate",
    "report_seen",
    "keep_underflow",
    "step_lines",
]


def kept_views_lines(cache: str, base: int, views: list[tuple[int, str]]) -> list[str]:
    """The lines making the views of argument slot ``base`` taken before any front call (``views``: per view,
    its slot and the source of its front's call): made again when the argument's array object differs from the
    one they were made of, and kept in ``cache`` (a :class:`KeptViews`' name) only when all are views (share the
    argument's storage). Two entries: steps that swap two arguments each time (``u`` and ``u_new``) keep both."""
    names = ", ".join(f"t{slot}" for slot, _make in views) + ","
    arrays = ", ".join(f"v{slot}" for slot, _make in views) + ","
    shared = " and ".join(f"t{slot}._storage is t{base}._storage" for slot, _make in views)
    # (the entry read once: a resize elsewhere may drop it meanwhile, storage.drop_kept_views)
    return [
        f"_k = {cache}.entry",
        f"if _k is None or _k[0] is not a{base}:",
        f"    _k = {cache}.other",
        f"    if _k is not None and _k[0] is a{base}:",
        f"        {cache}.other, {cache}.entry = {cache}.entry, _k",
        "    else:",
        *(f"        t{slot} = {make}" for slot, make in views),
        f"        _k = (a{base}, ({names}), ({', '.join(f't{slot}._array' for slot, _make in views)},))",
        f"        if {shared}: {cache}.other, {cache}.entry = {cache}.entry, _k",
        f"{names} = _k[1]",
        f"{arrays} = _k[2]",
    ]


def keep_layout_lines(ns: dict[str, Any], cache: str, array: str, base: str, made: str, front: str) -> list[str]:
    """The source making ``made`` (a name), a returned view of ``base`` whose layout depends on the strides of
    ``base``'s array (``array``, a source): by ``front`` (the front's call) when ``array`` is not the one of the
    last such call (``cache``, a :class:`KeptViews` named in ``ns``), which keeps its layout
    (:func:`_keep_layout`); else a new tensor over a new NumPy view of the kept array (the same memory, shape and
    strides: the front's result for the same array), or a new C-order copy (:func:`_copy_layout`)."""
    ns.update(_KEEPV=_keep_layout, _COPYV=_copy_layout, _NEWT=object.__new__)
    t = made
    return [
        f"_k = {cache}.entry",
        f"if _k is None or _k[0] is not {array}:",
        f"    {t} = {front}",
        f"    _KEEPV({cache}, {array}, {base}, {t})",
        "elif _k[1] is None:",
        f"    {t} = _COPYV(_k, {array}, {base}._device)",
        "else:",
        f"    {t} = _NEWT(_k[2])",
        f"    {t}._array = _k[1].view()",
        f"    {t}._device = {base}._device",
        f"    {t}._storage = {base}._storage",
        f"    {t}._shape = _k[3]",
        f"    {t}._dtype = _k[4]",
        f"    {t}._write_checked = False",
    ]


def keep_layouts_lines(ns: dict[str, Any], cache: str, array: str, base: str, front: str) -> list[str]:
    """As :func:`keep_layout_lines` for a multi-view op (split, chunk, unbind), binding ``_r`` to its tuple of
    views: the front's, or new tensors over new NumPy views of the arrays it made (:func:`_many_layouts`)."""
    ns.update(_KEEPM=_keep_layouts, _MANYV=_many_layouts)
    return [
        f"_k = {cache}.entry",
        f"if _k is None or _k[0] is not {array}:",
        f"    _r = {front}",
        f"    _KEEPM({cache}, {array}, {base}, _r)",
        "else:",
        f"    _r = _MANYV(_k, {base})",
    ]


def step_lines(source: str) -> dict[int, int]:
    """Per line of a replay's source, the step's line of the call it belongs to (its ``#@`` marker)."""
    return {at: int(line.rpartition("  #@")[2]) for at, line in enumerate(source.split("\n"), 1) if "  #@" in line}


def locate(code: Any, step: Any, lines: dict[int, int]) -> Any:
    """``code`` (a replay's module, compiled) with its functions' instructions located in the step: the file
    and first line of ``step`` (its code object; None: the replay's own name and first line) and, per
    instruction, the step's line of the call it replays (``lines``: source line -> step line), the step's first
    line for the others (the signature check, the kept views). NumPy warns from a replay's frame (a
    floating-point condition under the caller's "warn"), and CPython names the frame's file and line: so a
    condition of a replayed op is reported at the step's line of that op, with the step's module (the
    namespace's ``__name__``), as its eager call reports it; a traceback through a replay shows the step's
    lines. The location table has no columns, one entry per line change or eight instructions: CPython finds
    a frame's line by walking that table, which a warning does each time."""
    consts = tuple(locate(item, step, lines) if isinstance(item, CodeType) else item for item in code.co_consts)
    filename = step.co_filename if step is not None else code.co_filename
    if code.co_name == "<module>":
        return code.replace(co_consts=consts, co_filename=filename)
    first = step.co_firstlineno if step is not None else code.co_firstlineno
    table = bytearray()
    previous = first
    for start, end, line in code.co_lines():
        units = (end - start) // 2
        target = None if line is None else (lines.get(line, first) if step is not None else first)
        while units > 0:
            length = min(units, 8)
            units -= length
            if target is None:  # (no location: code 15)
                table.append(0x80 | (15 << 3) | (length - 1))
                continue
            table.append(0x80 | (13 << 3) | (length - 1))  # (no columns: code 13, the line delta follows)
            delta, previous = target - previous, target
            value = (-delta << 1) | 1 if delta < 0 else delta << 1  # (a signed varint: 6 bits a byte)
            while value >= 64:
                table.append(0x40 | (value & 63))
                value >>= 6
            table.append(value)
    return code.replace(co_consts=consts, co_filename=filename, co_firstlineno=first, co_linetable=bytes(table))


def report_seen(seen: set[str]) -> None:
    """Report the conditions a replay recorded (``report_conditions``), emptying its set first."""
    found = set(seen)
    seen.clear()
    report_conditions(found)


def keep_underflow(seen: set[str], quiet: set[str]) -> None:
    """After a quiet block of a replay: its underflow (which the quiet state leaves as the caller has it) joins
    the step's conditions; the others (divide, invalid, over: ignored there) are dropped."""
    if "underflow" in quiet:
        seen.add("underflow")
    quiet.clear()


def _keep_layout(cache: KeptViews, array: Any, base: Tensor, made: Any) -> None:
    """After a front made ``made`` of ``base`` (whose array is ``array``), keep in ``cache`` how the next replays
    on the same array make it without the front (see :func:`keep_layout_lines`): for a new tensor over a
    NumPy view of ``base``'s memory, ``(array, the view's array, its class, shape, dtype)``; for a copy (a
    strided argument reshaped, made contiguous) whose bytes are ``array``'s in C order, ``(array, None, the
    backend's wrap, the shape to give the C-order copy or None)``. Nothing for anything else (``base`` itself,
    another device's arrays)."""
    if not (
        isinstance(made, Tensor)
        and made is not base
        and type(made._array) is np.ndarray
        and type(array) is np.ndarray
        and base._device._guard is None
    ):
        return
    new = made._array
    if made._storage is base._storage:
        cache.entry = (array, new, type(made), made._shape, made._dtype)
    elif (
        type(made) is base._backend.tensor_class
        and new.dtype == array.dtype
        and new.flags.c_contiguous
        and new.size == array.size
        and new.tobytes() == array.tobytes()  # (checked once per argument array: the copy is array's C order)
    ):
        cache.entry = (array, None, base._backend.wrap, None if new.shape == array.shape else new.shape)


def _keep_layouts(cache: KeptViews, array: Any, base: Tensor, made: Any) -> None:
    """:func:`_keep_layout` for a multi-view op's tuple of views ``made``: kept when every one is a new tensor
    over a NumPy view of ``base``'s memory."""
    if not (type(made) is tuple and type(array) is np.ndarray and base._device._guard is None):
        return
    layouts = []
    for view in made:
        if not (
            isinstance(view, Tensor)
            and view is not base
            and view._storage is base._storage
            and type(view._array) is np.ndarray
        ):
            return
        layouts.append((view._array, type(view), view._shape, view._dtype))
    cache.entry = (array, tuple(layouts))


def _many_layouts(entry: tuple[Any, ...], base: Tensor) -> tuple[Tensor, ...]:
    """The views :func:`_keep_layouts` described by ``entry``, made again: new tensors over new NumPy views of
    the kept arrays, sharing ``base``'s storage (as ``Backend.wrap_view`` wraps them)."""
    made = []
    device, storage = base._device, base._storage
    for array, kind, shape, dtype in entry[1]:
        t = object.__new__(kind)
        t._array = array.view()
        t._device = device
        t._storage = storage
        t._shape = shape
        t._dtype = dtype
        t._write_checked = False
        made.append(t)
    return tuple(made)


def _copy_layout(entry: tuple[Any, ...], array: Any, device: Any) -> Tensor:
    """The copy :func:`_keep_layout` described by ``entry``, made again of ``array``: a C-order copy in a new
    storage, as the view op's front makes it."""
    new = array.copy(order="C")
    return entry[2](new if entry[3] is None else new.reshape(entry[3]), device)  # type: ignore[no-any-return]


def write_check(where: tuple[str, str], tensor: Tensor) -> None:
    """The write check a front runs once per tensor (read-only memory, internal overlap), for a view of an
    argument a lowered or direct call writes: raises as the front would, else marks the view checked."""
    check_writable(where[0], where[1], tensor)
    check_no_internal_overlap(where[0], where[1], tensor)
    tensor._write_checked = True


def last_uses(plan: Any, outputs: set[int], filled_once: set[Any]) -> tuple[dict[Any, int], set[Any]]:
    """Per storage key of ``plan``'s tensors, the last record using it; and the keys kept to the end (those of
    the ``outputs`` slots, and ``filled_once``)."""
    storage = plan._slot_storage
    last: dict[Any, int] = {}
    for at, record in enumerate(plan.records):
        for slot in slot_indices((record.args, record.kwargs, record.result)):
            last[storage[slot]] = at
    return last, {storage[slot] for slot in outputs} | filled_once


def spare_arrays(
    storage: list[Any], static: dict[int, Any], last: dict[Any, int], kept: set[Any], index: int, record: Any
) -> frozenset[int]:
    """The ids of the arrays of buffers that record ``index`` reads last and may write over (Lowering.spare): a
    buffer of the plan (in ``static``), not kept, no later record using its storage, and no other argument of
    the call (its buffer included) on the same storage."""
    slots = slot_indices((record.args, record.kwargs))
    if record.buffer is not None:
        slots.append(record.result.index)
    spare = set()
    for slot in slots:
        key = storage[slot]
        if (
            slot in static
            and key not in kept
            and last.get(key) == index
            and all(other == slot for other in slots if storage[other] == key)
        ):
            spare.add(id(static[slot]._array))
    return frozenset(spare)
