"""Direct replay of a static plan: the recorded ops compiled once into one generated Python function.

Each recorded call of a structured op becomes, where it can, the call its eager front would end in, with
everything the front works out per call (argument checks, dispatch, the meta function, the result's allocation)
done once at compile time:

- on the CPU, the raw NumPy calls its kernel lowers to (devtensor.lowering: the ufunc family with ``alpha``
  folded, matmul/mm/addmm, tanh, the ufunc.reduce reductions, softmax/log_softmax, cross_entropy), the whole step
  then in one floating-point state that records conditions and reports them after the last write;
- the op's single ufunc call when the op has the direct path (its meta function offers one, the kernel resolved
  for the plan's device is the built-in one, ``alpha`` at its default): ``ufunc(a, b, out=buffer_array)``;
- else the resolved kernel, called as the front calls it: the op's parameters bound by its schema, ``plan=`` the
  meta function's plan for ops with one, ``out=`` a ConstOut over the output (made once for the plan's own
  buffers, per replay over a caller's tensor);
- views of the plan's buffers are made once; views of arguments are kept between replays and made again (by
  the front) when the argument's array object changes; a view the step returns is made on each replay;
- anything else (ops of other kinds, calls whose arguments are not plain, writes into memory shared with an
  input, a device without a kernel) calls the op's front, as eager does.

Inplace and out= writes into the caller's tensors bump their versions as the fronts do. The generated function
first checks that the written arguments passed their writability check before (``_write_checked``) and that no
two tensor arguments share memory; when not, the replay goes through the fronts (the eager checks run there).
Results are the same kernels on the same inputs as eager, so equal bit for bit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from devtensor.dispatcher import META_ONLY
from devtensor.kernels.ufunc_family import EXTOBJ, Recorder, lower_ufunc, recording_state_of
from devtensor.lowering import LOWERINGS, Lowering, Ref, kernel_function
from devtensor.meta import DIRECT, ONE
from devtensor.plan.binding import _bind, entry_lines, guard_head, signature_guard
from devtensor.plan.emit import bump_on_condition, call_line, lowered_lines
from devtensor.plan.kept import (
    keep_underflow,
    last_uses,
    locate,
    report_seen,
    spare_arrays,
    step_lines,
    write_check,
)
from devtensor.plan.replay_views import ViewLines, compiled_front
from devtensor.plan.tracing import step_code
from devtensor.plan.values import MISS, Slot, flatten_source, has_tensor, slot_indices
from devtensor.structured.fronts import _inline_kind
from devtensor.tensor import Tensor, check_no_internal_overlap
from devtensor.typed.const_out import InplaceOut, new_const_out, set_array

__all__ = ["compile_replay", "signature_guard"]

_PLAIN = (bool, int, float, complex, type(None))
#: Whether records are lowered to raw calls (devtensor.lowering); the tests turn it off to compare a lowered
#: replay with the kernels' own (item 0: a list, so that it can be switched).
LOWER = [True]
#: The most lines of a replay that its entry repeats inline (binding.entry_lines).
_INLINE_LINES = 40
#: Compiled replay sources, bounded (oldest dropped first): re-planning a step reuses its code object.
_CODE: dict[tuple[Any, str], Any] = {}


class _Compiler(ViewLines):
    """Builds the source of one plan's replay function and the namespace it runs in (its views: ViewLines)."""

    def __init__(
        self,
        plan: Any,
        backend: Any,
        slow: Callable[[Any], Any],
        progress: list[int] | None = None,
        static: dict[int, Any] | None = None,
    ) -> None:
        self.progress = progress
        self.filled_once = plan._filled_once()
        self.plan = plan
        self.backend = backend
        self.ns: dict[str, Any] = {"_id": id, "_SLOW": slow, "_NCO": new_const_out, "_SET": set_array}
        # (the module a warning from the replay names, as warnings filters read it: the step's own)
        self.ns["__name__"] = getattr(plan.step, "__module__", None) or __name__
        self.ns["__plan_replay__"] = True  # (rules.caller_level skips its frames: their code is the step's file)
        self.ns["_IO"] = InplaceOut
        self.ns["_WCHECK"] = write_check
        self.ns["_MISS"] = MISS
        self.static: dict[int, Any] = dict(plan._static if static is None else static)
        self.outputs = set(slot_indices(plan._output))
        #: A plan of meta tensors: resolving a kernel for the Meta key would cache the meta-only sentinel in a
        #: view op's handlers, which its front then calls (issue 29's race): nothing is resolved for it.
        self.meta = plan.device is not None and plan.device.type == "meta"
        self.args = {slot for slot in plan._arg_slots if slot is not None}
        self.defined = set(self.args)
        self.written: set[int] = set()
        self.lines: list[str] = []
        self.direct_count = 0
        #: How many records were lowered to raw calls (devtensor.lowering).
        self.lowered = 0
        #: How many op calls run without their front (lowered, the one ufunc call, or the kernel itself).
        self.calls = 0
        self.kernel_views = 0
        #: Where the last quiet block of lowered calls ends in ``lines`` (adjacent ones are merged).
        self.quiet_end = -1
        #: How many records call their front so far (which may resize an argument: its array changes).
        self.fronts = 0
        #: Whether some lowered record needs its floating-point conditions reported after its last write.
        self.deferred = False
        #: The views of arguments kept between replays (slot -> its cache's name), made again when the
        #: argument's array changes.
        self.cached: dict[int, str] = {}
        #: Per argument slot, the kept views of it taken before any front call: (slot, the source making it).
        self.hoisted: dict[int, list[tuple[int, str]]] = {}
        #: Per write into a tensor, (its first line, its end, the version bump): see :meth:`bumped`.
        self.bumps: list[tuple[int, int, str]] = []
        #: The names of the lowered steps' locals (devtensor.lowering.Local) in the generated source.
        self.locals: dict[Any, str] = {}
        self.at, (self.last, self.kept) = 0, last_uses(plan, self.outputs, self.filled_once)  # (at: the record now)

    def const(self, value: Any) -> str:
        name = f"_c{len(self.ns)}"
        self.ns[name] = value
        return name

    def tensor(self, slot: int) -> str:
        if slot in self.static:
            name = f"_t{slot}"
            self.ns[name] = self.static[slot]
            return name
        return f"t{slot}"

    def array(self, slot: int) -> str:
        if slot in self.static:
            name = f"_a{slot}"
            self.ns[name] = self.static[slot]._array
            return name
        if slot in self.cached:
            return f"v{slot}"
        return f"a{slot}" if slot in self.args else f"t{slot}._array"

    def src(self, value: Any) -> str:
        """Python source evaluating to ``value`` with slots replaced by their tensors."""
        if type(value) is Slot:
            return self.tensor(value.index)
        if type(value) is tuple:
            return "(" + "".join(self.src(item) + ", " for item in value) + ")"
        make = getattr(type(value), "_make", None) if isinstance(value, tuple) else None
        if make is not None:  # a named tuple (values.rebuild): its class's _make
            return f"{self.const(make)}((" + "".join(self.src(item) + ", " for item in value) + "))"
        if type(value) is list:
            return "[" + ", ".join(self.src(item) for item in value) + "]"
        if type(value) is dict:
            return "{" + ", ".join(f"{self.const(k)}: {self.src(v)}" for k, v in value.items()) + "}"
        if isinstance(value, Tensor):
            return self.const(value)
        return self.const(value)

    def assign(self, result: Any, expr: str) -> None:
        """Bind the result slots a call defines (new, non-static ones) from ``expr``."""
        if type(result) is Slot:
            if result.index not in self.defined and result.index not in self.static:
                self.lines.append(f"t{result.index} = {expr}")
                self.defined.add(result.index)
        elif isinstance(result, (tuple, list)):
            for index, item in enumerate(result):
                self.assign(item, f"{expr}[{index}]")

    def front_call(self, record: Any) -> str:
        """The source of the call through the op's front (eager's path, with the plan's buffer as ``out``)."""
        parts = [self.src(value) for value in record.args]
        for key, value in record.kwargs.items():
            if not (key == "out" and record.buffer is not None):
                parts.append(f"{key}={self.src(value)}")
        if record.buffer is not None:
            parts.append(f"out={self.tensor(record.result.index)}")
        return f"{self.const(compiled_front(record))}({', '.join(parts)})"

    def fallback(self, index: int, record: Any) -> None:
        """The call through the op's front."""
        self.fronts += 1
        self.lines.append(f"_r = {self.front_call(record)}")
        self.assign(record.result, "_r")

    def compile(self) -> Callable[[Any], Any]:
        """The replay function ``replay(leaves) -> output``."""
        if self.progress is not None:
            self.ns["_P"] = self.progress
        before = 0
        for index, record in enumerate(self.plan.records):
            self.at = index
            if self.progress is not None:
                self.lines.append(f"_P[0] = {index}")  # which op a failure (a CUDA graph capture) comes from
            if self.meta:  # (meta tensors compute nothing: every call through its front, no kernel resolved)
                self.fallback(index, record)
            elif record.variant == "create" and self.plan._slot_storage[record.result.index] in self.filled_once:
                record.func(out=self.static[record.result.index])  # never written nor returned: filled once
            elif record.variant == "view":
                self.view(index, record)
            elif (record.outs is not None and self.multi(record)) or self.direct(index, record):
                self.calls += 1
            else:
                self.fallback(index, record)
            if record.line:  # (the step's line of the call, which the replay's code reports: see _locate)
                for at in range(max(0, before - 2), len(self.lines)):  # (a quiet block merged drops 2 lines)
                    if "  #@" not in self.lines[at]:
                        self.lines[at] += f"  #@{record.line}"
            before = len(self.lines)
        output = self.src(self.plan._output)
        if not self.deferred:  # (in the recording state no condition raises before the end of the body)
            self.lines = bump_on_condition(self.lines, self.bumps, self.ns)
        self.lines[:0] = self.kept_views()
        if self.deferred:
            # One floating-point state for the whole step: every condition recorded, reported after the last
            # write at the caller's line (the eager rule of multi-step kernels, kept for the step as a whole).
            # The recorder, its sets and its derived states are this replay's own (a replica serves one thread at
            # a time); the sets are emptied when reported, or when the body raises (nothing is reported then).
            recorder = Recorder()
            states: dict[Any, Any] = {}
            self.ns.update(_REC=recorder, _SEEN=recorder.seen, _QS=set(), _STATES=states, _EXT=EXTOBJ)
            self.ns.update(_REPORT=report_seen, _KEEPU=keep_underflow)
            self.ns["_STATE"] = functools.partial(recording_state_of, recorder, states)
            self.lines = [
                "_tok = _EXT.get()",
                "_tok = _EXT.set(_STATES.get(_tok) or _STATE(_tok))",
                "try:",
                *("    " + line for line in self.lines),
                "except BaseException:",
                "    _REC.seen = _SEEN",
                "    _SEEN.clear()",
                "    _QS.clear()",
                "    raise",
                "finally:",
                "    _EXT.reset(_tok)",
                "if _SEEN: _REPORT(_SEEN)",
            ]
        head = guard_head(self.plan, self.written, self.ns["_SLOW"], self.ns)
        head += [f"a{slot} = t{slot}._array" for slot in sorted(self.args)]
        body = self.lines or ["pass"]
        guard = self.plan.device._guard if self.plan.device is not None else None
        if guard is not None:
            self.ns["_GUARD"] = guard
            body = ["with _GUARD():", *("    " + line for line in body)]
        lines = ["def replay(L):", *("    " + line for line in [*head, *body, f"return {output}"])]
        if self.progress is None:
            # (the replay inline in short steps, where a frame counts; a longer one is called: compiled once)
            inline = len(head) + len(body) <= _INLINE_LINES
            flatten = None
            if not self.plan._flat:  # nested arguments: their leaves read inline (values.flatten_source)
                found, leaves = flatten_source(self.plan._structure, "A", "return _CALL(A, K)", self.const)
                flatten = [*found, f"L = {leaves}"]
            lines += entry_lines(head if inline else None, [*body, f"return {output}"], flatten, self.ns, self.args)
        source = "\n".join(lines)
        step = step_code(self.plan.step)
        key = (step, source)
        code = _CODE.get(key)
        if code is None:  # the same step planned for another signature compiles to the same source
            code = compile(source, f"<plan replay of {getattr(self.plan.step, '__qualname__', 'step')}>", "exec")
            code = locate(code, step, step_lines(source))
            if len(_CODE) >= 256:
                _CODE.pop(next(iter(_CODE)))
            _CODE[key] = code
        exec(code, self.ns)
        replay: Callable[[Any], Any] = self.ns["replay"]
        replay.__source__ = source  # type: ignore[attr-defined]  # for print(plan.replay_source)
        replay.__lowered__ = self.lowered  # type: ignore[attr-defined]  # how many records were lowered
        # How many op calls skip their front; two views made by their kernels count (with new arguments each call
        # too, they beat the eager views' binding and meta functions; one: the compiled entry's direct view).
        calls = self.calls + (self.kernel_views if self.kernel_views >= 2 else 0)
        replay.__calls__ = calls  # type: ignore[attr-defined]
        return replay

    def ref(self, value: Any) -> Any:
        """A lowering's view of a bound value: a buffer's array, a :class:`Ref` for an argument's (or a cached
        view's) array, a Python value as it is."""
        if type(value) is not Slot:
            return value
        if value.index in self.static:
            return self.static[value.index]._array
        meta = self.plan._slot_meta[value.index]
        return Ref(self.array(value.index), meta._shape, meta._dtype)

    def lower(self, record: Any, op: Any, bound: dict[str, Any], handler: Any, spec: Any, target: Slot) -> bool:
        """Emit the raw calls the kernel lowers this call to (devtensor.lowering): the ufunc family's one call
        (alpha folded) when the op has the direct path, else the kernel's registered lowering; False when there
        is none or it declines (plain values only, NumPy only, NumPy's state variable needed)."""
        if not LOWER[0] or self.backend is None or self.backend.xp is not np or EXTOBJ is None:
            return False
        params = op.schema.params
        if not all(type(bound[p.name]) is Slot or type(bound[p.name]) in _PLAIN for p in params):
            return False
        lw = Lowering(np, lambda shape, dtype: np.empty(shape, dtype))
        lw.spare = spare_arrays(self.plan._slot_storage, self.static, self.last, self.kept, self.at, record)
        out = self.ref(target)
        ufunc = getattr(op.meta, DIRECT, None)
        lowering = LOWERINGS.get(kernel_function(handler))
        if lowering is not None:  # (the kernel's own first: relu's direct call is a Python function)
            args = {p.name: self.ref(bound[p.name]) for p in params}
            if record.variant == "inplace":
                args[params[0].name] = out
            done = lowering(lw, args, out, spec[2] if op.schema.plan is not None else None)
        elif ufunc is not None and handler is ufunc[0] and _inline_kind(op)[0] is not None:
            operands = [self.ref(bound[p.name]) for p in params if p.name != "alpha"]
            alpha = bound.get("alpha") if "alpha" in bound else None
            if record.variant == "inplace":
                operands[0] = out  # (NumPy's in-place fast path, as the kernel passes out's own array)
            done = lower_ufunc(lw, ufunc[1], operands, None if alpha is ONE else alpha, out)
        else:
            return False
        if not done:
            return False
        start = len(self.lines)
        self.lines += lowered_lines(lw, self.ns, self.const, self.locals)
        if lw.quiet:
            # The quiet state of the kernels (divide, invalid and over ignored, under as the caller has it) inside
            # the step's recording state: the conditions of these calls go to a set of their own (``_QS``), of
            # which only underflow is kept (two stores, where a state switch costs two contextvar changes).
            if start == self.quiet_end:  # right after another quiet block (softmax, then cross_entropy): one
                del self.lines[start - 2 : start]  # (its restoring lines dropped: the two blocks are one)
            else:
                self.lines.insert(start, "_REC.seen = _QS")
            self.lines += ["_REC.seen = _SEEN", "if _QS: _KEEPU(_SEEN, _QS)"]
            self.quiet_end = len(self.lines)
            self.deferred = True
        self.deferred = self.deferred or lw.deferred
        return True

    def bumped(self, begin: int, bump: list[str]) -> None:
        """The version bump of a write (``lines[begin:]``, whose target ``bump`` names, or none): kept in
        :attr:`bumps` for :func:`emit.bump_on_condition`, the caller's state raising after the write."""
        if bump:
            self.bumps.append((begin, len(self.lines), bump[0]))
        self.lines += bump

    def call(self, func: str, parts: list[str]) -> None:
        """Emit ``func(*parts)`` (``parts``: sources, ``name=source`` for keywords; emit.call_line)."""
        self.lines.append(call_line(self.ns, self.const, func, parts))

    def multi(self, record: Any) -> bool:
        """Emit the kernel call of a multi-output op's functional call, its outputs the plan's buffers (the
        ConstOuts over them made once); False when the call must go through the front. Its checks (devices,
        values, the meta function's) hold for the signature; what a kernel checks on data it checks here too."""
        op, device = record.op, self.plan.device
        bound = _bind(op, record.args, record.kwargs)
        slots = slot_indices(record.result)
        if bound is None or device is None or any(has_tensor(v) for v in bound.values()):
            return False
        if len(slots) != len(record.outs) or not all(slot in self.static for slot in slots):
            return False
        try:
            handler = op.table.resolve(device.key, str(device))
        except Exception:  # the front raises it at replay, as eager would
            return False
        if handler is META_ONLY:
            return False
        outs = []
        for slot in slots:
            const_out = new_const_out()
            set_array(const_out, self.static[slot]._array.view())
            outs.append(const_out)
        params = op.schema.params
        call = [self.src(bound[p.name]) for p in params if not p.kw_only]
        call += [f"{p.name}={self.src(bound[p.name])}" for p in params if p.kw_only]
        self.call(self.const(handler), [*call, f"out={self.const(tuple(outs))}"])
        self.direct_count += 1
        return True

    def direct(self, index: int, record: Any) -> bool:
        """Emit the direct call of a structured op's kernel (or ufunc); False when the call must go through the
        front (see the module's docstring)."""
        op = record.op
        if record.variant not in ("functional", "inplace") or not hasattr(op, "table") or self.plan.device is None:
            return False
        bound = _bind(op, record.args, record.kwargs)
        if bound is None or any(has_tensor(v) for v in bound.values()):
            return False
        out = record.kwargs.get("out")
        if record.variant == "inplace":
            target, first = record.args[0] if record.args else None, True
        elif out is not None:
            target, first = out, False
        elif record.buffer is not None:
            target, first = record.result, False
        else:
            return False
        if type(target) is not Slot or not (
            target.index in self.static or target.index in self.args or target.index in self.cached
        ):
            return False
        fresh = record.variant == "functional" and out is None
        if not fresh and target.index in self.static:
            # A write into a tensor the step made (a buffer, or a view of one: expand gives it stride 0): the
            # front's overlap check, which the direct call skips, runs once here, so planning raises as eager does.
            check_no_internal_overlap(
                record.name.removesuffix(".out"), "self" if first else "out", self.static[target.index]
            )
        inputs = [v for v in slot_indices(list(bound.values())) if not (first and v == target.index)]
        storages = self.plan._slot_storage
        shared = [v for v in inputs if storages[v] == storages[target.index]]
        if not fresh and shared and not (op.out_may_be_input and all(v == target.index for v in shared)):
            return False  # memory shared with an input: the front's overlap handling (an exact alias is fine)
        spec: Any
        try:
            if fresh and op.schema.plan is None and isinstance(record.meta_result, Tensor):
                spec = (record.meta_result._shape, record.meta_result._dtype)  # what the meta function gave
            else:
                spec = op.meta(*record.raw_args, **{k: v for k, v in record.raw_kwargs.items() if k != "out"})
            handler = op.table.resolve(self.plan.device.key, str(self.plan.device))
        except Exception:  # the front raises it at replay, as eager would
            return False
        if handler is META_ONLY:
            return False
        meta_target = self.plan._slot_meta[target.index] if not fresh else None
        if record.out_before is not None:
            shape, dtype = record.out_before
        elif meta_target is not None:
            shape, dtype = meta_target._shape, meta_target._dtype
        else:
            shape, dtype = spec[0], spec[1]
        if spec[0] != shape or spec[1] is not dtype:
            return False  # eager resizes or refuses: the front does
        bump = [] if fresh else [f"{self.tensor(target.index)}._storage.version += 1"]
        if target.index in self.args and not fresh:
            self.written.add(target.index)
        if target.index in self.cached and not fresh:
            # A view of an argument, made when the argument's array changed: its write check once per view.
            name = self.const((record.name.removesuffix(".out"), "self" if first else "out"))
            self.lines.append(f"if not t{target.index}._write_checked: _WCHECK({name}, t{target.index})")
        begin = len(self.lines)
        if self.lower(record, op, bound, handler, spec, target):
            self.bumped(begin, bump)
            self.direct_count += 1
            self.lowered += 1
            return True
        ufunc = getattr(op.meta, DIRECT, None)
        params = op.schema.params
        plain = all(type(bound[p.name]) is Slot or type(bound[p.name]) in _PLAIN for p in params if p.name != "alpha")
        if (
            ufunc is not None
            and handler is ufunc[0]
            and _inline_kind(op)[0] is not None
            and bound.get("alpha", ONE) is ONE
            and plain
        ):
            sources = [
                self.array(v.index) if type(v) is Slot else self.const(v)
                for v in (bound[p.name] for p in params if p.name != "alpha")
            ]
            self.call(self.const(ufunc[1]), [*sources, f"out={self.array(target.index)}"])
            self.bumped(begin, bump)
            self.direct_count += 1
            return True
        call = [self.src(bound[p.name]) for p in params if not p.kw_only]
        call += [f"{p.name}={self.src(bound[p.name])}" for p in params if p.kw_only]
        if op.schema.plan is not None:
            call.append(f"plan={self.const(spec[2])}")
        if target.index in self.static:
            const_out = InplaceOut() if first else new_const_out()
            set_array(const_out, self.static[target.index]._array.view())
            call.append(f"out={self.const(const_out)}")
        else:
            self.lines += [f"_o = {'_IO' if first else '_NCO'}()", f"_SET(_o, a{target.index}.view())"]
            call.append("out=_o")
        self.call(self.const(handler), call)
        self.bumped(begin, bump)
        self.direct_count += 1
        return True


def compile_replay(
    plan: Any,
    backend: Any,
    slow: Callable[[Any], Any],
    progress: list[int] | None = None,
    static: dict[int, Any] | None = None,
) -> tuple[Callable[[Any], Any], int]:
    """The generated replay function of ``plan`` (see the module's docstring) and how many of its ops are direct
    calls. ``backend``: the arguments' backend; ``slow(leaves)``: the replay through the fronts; ``progress``:
    a list whose item 0 the replay sets to the index of the op it is at; ``static``: per result slot its buffer
    (a replica's; default the plan's own)."""
    compiler = _Compiler(plan, backend, slow, progress, static)
    return compiler.compile(), compiler.direct_count
