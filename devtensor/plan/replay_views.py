"""The views of a plan's replay (:mod:`devtensor.plan.replay`): views of the plan's buffers made once, views of
arguments kept between replays (made again when the argument's array object changes), a view the step returns
made on each replay: by the view kernel with the spec the meta function computed where that spec holds for any
strides (:func:`view_kernel`), else by the op's compiled front (:func:`compiled_front`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from devtensor.dispatcher import META_ONLY
from devtensor.plan.kept import keep_layout_lines, keep_layouts_lines, kept_views_lines
from devtensor.plan.values import Slot, decode, slot_indices
from devtensor.storage import KeptViews
from devtensor.structured import core as _structured_core
from devtensor.tensor import Tensor

__all__ = ["LAYOUT_FREE", "ViewLines", "compiled_front", "view_kernel"]

#: The view ops whose spec holds whatever the base's strides (the meta function saw a contiguous stand-in; their
#: kernels transpose, squeeze or index the array); the others call their front on each replay: reshape, view,
#: flatten, contiguous (a copy or a view by layout), expand and broadcast_to (their spec holds strides), the
#: multi-view ops.
LAYOUT_FREE = frozenset({"transpose", "permute", "movedim", "squeeze", "unsqueeze"})
_VIEW_GAINS = int(_structured_core.CORE is None)  # (a returned view of an argument gains only without _core_view.h)


def view_kernel(record: Any, device: Any) -> tuple[Any, Any] | None:
    """The view kernel resolved for ``device`` and the spec the meta function gives for ``record``, a view op
    whose spec holds whatever its base's strides (LAYOUT_FREE), for a replay to make the view with, no front; None
    for other ops, or when the front must make it (a copy, no kernel, an error it raises at replay as eager
    would)."""
    if device is None or record.op.name not in LAYOUT_FREE:
        return None
    try:
        spec = record.op.meta(*record.raw_args, **record.raw_kwargs)
        kernel = record.op.table.resolve(device.key, str(device))
    except Exception:
        return None
    return None if spec.copy or kernel is META_ONLY else (kernel, spec)


def compiled_front(record: Any) -> Any:
    """The front a replay calls for ``record`` (a call through its front): the op's compiled front
    (devtensor/_core*.h) where it wraps the recorded Python front, as eager calls it (its lanes: a view of an
    argument made again when the argument is new costs what the eager view costs), else the recorded one."""
    core = _structured_core.CORE
    if core is not None:
        for name in ("functional", "inplace"):
            front: Any = getattr(record.op, name, None)
            if type(front) is core.Front and front.__wrapped__ is record.func:
                return front
    return record.func


class ViewLines:
    """The view ops' part of the replay compiler (replay._Compiler), whose state and helpers it uses."""

    plan: Any
    backend: Any
    ns: dict[str, Any]
    lines: list[str]
    static: dict[int, Any]
    args: set[int]
    cached: dict[int, str]
    hoisted: dict[int, list[tuple[int, str]]]
    defined: set[int]
    outputs: set[int]
    fronts: int
    calls: int
    direct_count: int
    #: How many views of arguments the replay makes by their view kernels, no front (two beat eager's fronts).
    kernel_views: int

    if TYPE_CHECKING:

        def const(self, value: Any) -> str: ...
        def tensor(self, slot: int) -> str: ...
        def array(self, slot: int) -> str: ...
        def src(self, value: Any) -> str: ...
        def assign(self, result: Any, expr: str) -> None: ...
        def front_call(self, record: Any) -> str: ...
        def fallback(self, index: int, record: Any) -> None: ...

    def view(self, index: int, record: Any) -> None:
        """A view op: made once of a buffer, per replay (view kernel, precomputed spec) of an argument."""
        base = record.args[0] if record.args else None
        if type(base) is not Slot:
            self.fallback(index, record)
            return
        if base.index in self.static:
            values: dict[int, Any] = dict(self.static)
            made = record.func(*decode(record.args, values), **decode(record.kwargs, values))
            results = made if isinstance(made, tuple) else (made,)
            slots = record.result if isinstance(record.result, tuple) else (record.result,)
            root = self.static[base.index]._storage
            if all(isinstance(r, Tensor) and r._storage is root for r in results) and len(results) == len(slots):
                for slot, tensor in zip(slots, results, strict=True):
                    self.static[slot.index] = tensor
                self.direct_count += 1
                return
            self.fallback(index, record)
            return
        if (
            (base.index not in self.args and base.index not in self.cached)
            or slot_indices((record.args[1:], record.kwargs))
            or not (
                type(record.result) is Slot
                or (type(record.result) is tuple and all(type(r) is Slot for r in record.result))
            )
        ):
            self.fallback(index, record)
            return
        result = record.result
        if type(result) is not Slot:  # (split, chunk, unbind: new tensors per replay, as eager makes)
            self.layout_views(record, base)
            return
        if result.index in self.outputs:
            self.fresh_view(index, record, base)  # a new tensor per replay, as eager returns
            return
        # A view of an argument (or of such a view): made through the front when the argument's array object
        # changes (a new argument, or one resized), else the one made before. A result that is no view (reshape
        # of a strided argument copies) is not kept: made on each replay, as eager does.
        slot = result.index
        cache = self.const(KeptViews())
        self.cached[slot] = cache
        rest = "".join(f", {self.src(value)}" for value in record.args[1:])
        rest += "".join(f", {key}={self.src(value)}" for key, value in record.kwargs.items())
        base_src = self.tensor(base.index)
        hoist = base.index in self.args and not self.fronts
        make = self.kernel_view(record, f"a{base.index}" if hoist else "_b", base_src)
        self.kernel_views += make is not None
        make = make or f"{self.const(compiled_front(record))}({base_src}{rest})"
        if hoist:
            # Before any front call an argument's array is the head's (only a front resizes): the views of one
            # argument are made together, with one check per replay (see :meth:`kept_views`).
            self.hoisted.setdefault(base.index, []).append((slot, make))
            self.defined.add(slot)
            self.direct_count += 1
            return
        self.lines += [
            f"_b = {base_src}._array",
            f"_k = {cache}.entry",
            "if _k is None or _k[0] is not _b:",
            f"    _k = {cache}.other",
            "    if _k is not None and _k[0] is _b:",
            f"        {cache}.other, {cache}.entry = {cache}.entry, _k",
            "    else:",
            f"        _k = (_b, {make})",
            f"        if _k[1]._storage is {base_src}._storage: {cache}.other, {cache}.entry = {cache}.entry, _k",
            f"t{slot} = _k[1]",
            f"v{slot} = t{slot}._array",
        ]
        self.defined.add(slot)
        self.direct_count += 1

    def kept_views(self) -> list[str]:
        """The lines making the views of arguments taken before any front call (kept.kept_views_lines)."""
        return [
            line
            for base, views in self.hoisted.items()
            for line in kept_views_lines(self.const(KeptViews()), base, views)
        ]

    def fresh_view(self, index: int, record: Any, base: Slot) -> None:
        """A view of an argument the step returns, made on each replay: by the view kernel with the spec the meta
        function computed for the ops whose spec does not depend on strides, else (:meth:`layout_view`) a new
        array over the layout the front gave for the same argument array."""
        op = record.op
        if self.backend is None:
            self.fallback(index, record)
            return
        if op.name not in LAYOUT_FREE:
            self.layout_view(index, record, base)
            return
        make = self.kernel_view(record, self.array(base.index), self.tensor(base.index))
        if make is None:
            self.fallback(index, record)
            return
        self.lines.append(f"t{record.result.index} = {make}")
        self.defined.add(record.result.index)
        self.direct_count += 1
        self.calls += _VIEW_GAINS  # (the view kernel without its front)
        self.kernel_views += 1

    def kernel_view(self, record: Any, array: str, base: str) -> str | None:
        """The source making ``record``'s view of ``base`` (a source; ``array``: its array's) by the view kernel
        with the spec worked out now, wrapped as the front wraps it, for the ops whose spec holds whatever the
        base's strides (LAYOUT_FREE); None for others, or when the front must make it (a copy, no kernel, an
        error it raises at replay as eager would)."""
        made = view_kernel(record, self.plan.device) if self.backend is not None else None
        if made is None:
            return None
        kernel, spec = made
        call = f"{self.const(kernel)}({self.const(self.backend.xp)}, {array}, {self.const(spec.plan)})"
        core, shape = _structured_core.CORE, getattr(record.meta_result, "_shape", None)
        if core is not None and type(shape) is tuple:  # (the tensor made in C: no wrap_view frame per replay)
            cls = self.const(self.backend.tensor_class)
            return f"{self.const(core.view_tensor)}({cls}, {call}, {base}, {self.const(shape)})"
        return f"{self.const(self.backend.wrap_view)}({call}, {base})"

    def layout_view(self, index: int, record: Any, base: Slot) -> None:
        """A returned view of an argument whose layout depends on the argument's strides (reshape, view, flatten,
        expand, contiguous...): made by its front when the argument's array object changes, else over the layout
        the front gave (kept.keep_layout_lines; a KeptViews, dropped before a resize counts views)."""
        cache, slot = self.const(KeptViews()), record.result.index
        array, src = self.base_array(base), self.tensor(base.index)
        # (a view op's front resizes nothing: self.fronts unchanged)
        self.lines += keep_layout_lines(self.ns, cache, array, src, f"t{slot}", self.front_call(record))
        self.defined.add(slot)
        self.direct_count += 1
        self.calls += _VIEW_GAINS  # (no front on the replays of one argument array)

    def base_array(self, base: Slot) -> str:
        """The source of the array of a view's base (an argument, or a kept view of one): the head's read of an
        argument's before any front call (only a front resizes), else read where the view is made."""
        if base.index in self.args and self.fronts:
            return f"{self.tensor(base.index)}._array"
        return self.array(base.index)

    def layout_views(self, record: Any, base: Slot) -> None:
        """A multi-view op of an argument (split, chunk, unbind): as :meth:`layout_view`, new tensors over the
        layouts its front gave for the same argument array (kept.keep_layouts_lines)."""
        cache = self.const(KeptViews())
        array, src = self.base_array(base), self.tensor(base.index)
        self.lines += keep_layouts_lines(self.ns, cache, array, src, self.front_call(record))
        self.assign(record.result, "_r")
        self.direct_count += 1
        self.calls += 1
