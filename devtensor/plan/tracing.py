"""Tracing a step for a static plan (:mod:`devtensor.plan.core`): the dispatch mode that records every op call,
indexing, creation and conversion of the step on meta stand-ins, and the records it keeps."""

from __future__ import annotations

import functools
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devtensor import modes
from devtensor.creation import filled
from devtensor.device import Device
from devtensor.dtypes import DType
from devtensor.errors import PlanError, ShapeError
from devtensor.modes import DispatchMode
from devtensor.plan.values import Slot as _Slot
from devtensor.plan.values import rebuild
from devtensor.structured.multi import MultiOutputOp
from devtensor.tensor import Tensor


def _describe(value: Any) -> str:
    """A short text of a tensor (shape and dtype) or a scalar, for the table and messages."""
    if isinstance(value, Tensor):
        return f"{list(value.shape)} {value.dtype}"
    return value if isinstance(value, str) else repr(value)


#: What rules.prepare_out's refusal to resize an out with live views says (the tracer keeps its views alive).
_LIVE_VIEWS = "shares its memory with live views"


def _resize_message(name: str, label: str, before: Any, after: Any) -> str:
    """The PlanError's text for an op resizing an ``out=`` tensor: a replay could not follow (an argument's shape is
    part of the signature, a buffer's is fixed)."""
    return (
        f"dt.plan: {name} resizes its {label} tensor from {list(before)} to {list(after)} (as eager does, with its "
        "warning); a plan keeps every shape it traced: pass an out of the result's shape"
    )


def _resized(op: Any, args: Any, kwargs: dict[str, Any], sized: list[Any]) -> list[tuple[Any, str, Any]]:
    """The out= tensors of a call (``sized``: index, label, tensor, shape) whose shape differs from the one the
    op's meta function gives for the call: (the shape wanted, the label, the shape before); none when the meta
    function raises or the op has none."""
    meta = getattr(op, "meta", None)
    if not sized or meta is None:
        return []
    try:
        spec = meta(*args, **{key: value for key, value in kwargs.items() if key != "out"})
        specs = spec if isinstance(op, MultiOutputOp) else (spec,)
        wanted = [(tuple(specs[max(at, 0)][0]), label, shape) for at, label, _, shape in sized]
    except Exception:
        return []
    return [item for item in wanted if item[0] != tuple(item[2])]


@dataclass(slots=True)
class _Record:
    """One recorded op call: the front to call, its arguments with tensors replaced by slots, the slot its
    result fills and the buffer passed as ``out`` (functional calls with a single tensor result)."""

    op: Any
    name: str
    variant: str
    func: Callable[..., Any]
    args: Any
    kwargs: dict[str, Any]
    result: Any
    meta_result: Any
    buffer: int | None
    nondeterministic: bool
    raw_args: tuple[Any, ...]
    raw_kwargs: dict[str, Any]
    out_before: tuple[tuple[int, ...], DType] | None
    #: The line of the step that made the call (0: unknown), which the replay's code reports for it.
    line: int = 0
    #: A functional call of a multi-output op: per output, the buffer passed in ``out``'s tuple.
    outs: tuple[int, ...] | None = None

    def buffered(self) -> list[tuple[int, Any]]:
        """The plan's buffers this call writes its results into, each with its result's slot."""
        if self.outs is not None:
            return list(zip(self.outs, self.result, strict=True))
        return [] if self.buffer is None else [(self.buffer, self.result)]


def step_code(step: Any) -> Any:
    """The code object of the function ``step`` is or wraps (through ``__wrapped__``, ``functools.partial`` and
    bound methods: the function whose frames make the calls), or None (a callable of another kind)."""
    for _ in range(8):
        inner = getattr(step, "__wrapped__", None) or getattr(step, "func", None) or getattr(step, "__func__", None)
        if inner is None:
            return getattr(step, "__code__", None)
        step = inner
    return None


def _step_line(error: BaseException, step: Callable[..., Any]) -> str:
    """``file:line`` of the innermost frame of ``step``'s code in ``error``'s traceback, or ''."""
    import traceback  # (here: only a failing step reports; the module costs devtensor's import ~3 ms)

    code = getattr(step, "__code__", None)
    found = ""
    after = False
    for frame, line in traceback.walk_tb(error.__traceback__):
        if after:  # the call the step's line made: item, numpy, __bool__, __getitem__, ...
            found += f" in {frame.f_code.co_name}"
            after = False
        if frame.f_code is code:
            found = f" (line {line} of {getattr(step, '__qualname__', 'step')}, {frame.f_code.co_filename})"
            after = True
    return found


class _IndexOp:
    """What a record of ``t[index]`` or ``t[index] = value`` names as its op (indexing is no registered op)."""

    __slots__ = ("name",)
    nondeterministic = False

    def __init__(self, name: str) -> None:
        self.name = name


_INDEX_OPS = {
    "getitem": (_IndexOp("getitem"), Tensor.__getitem__),
    "setitem": (_IndexOp("setitem"), Tensor.__setitem__),
}


#: The creation functions a plan records: those that make a tensor from its shape, dtype and a fill value, and
#: the random factories (an empty tensor a recorded random op then fills: drawn afresh on each replay).
_CREATION = frozenset(
    {
        *("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like"),
        *("rand", "randn", "randint", "uniform", "normal", "randperm", "rand_like", "randn_like", "randint_like"),
    }
)


def _convert_fresh(dtype: DType, source: Tensor) -> Tensor:
    """``source`` converted to ``dtype`` as eager's ``to`` converts it (a new tensor, the source's layout kept):
    the replay of a conversion of an argument or a view, whose layout a plan's signature does not fix."""
    return source.to(dtype, copy=True)


def _convert(source: Tensor, *, out: Tensor) -> Tensor:
    """Write ``source`` into ``out``, cast to its dtype (NumPy's unsafe cast, as ``astype``); the replay of a
    dtype conversion (``to``, ``astype``, ``type``) on the plan's device."""
    guard = out._device._guard
    if guard is None:
        out._array[...] = source._array
    else:
        with guard():
            out._array[...] = source._array
    return out


def _refill(fill: Any, *, out: Tensor) -> Tensor:
    """Fill ``out`` with ``fill`` as the creation function did (nothing for ``empty``); the replay of a creation."""
    if fill is not None:
        guard = out._device._guard
        if guard is None:
            out._array.fill(fill)
        else:
            with guard():
                out._array.fill(fill)
    return out


class _Tracer(DispatchMode):
    """The dispatch mode that records op calls, indexing included, on meta stand-ins (see :func:`plan`)."""

    #: ``t[index]`` and ``t[index] = value`` come here too (devtensor.modes.run_indexing).
    records_indexing = True

    def __init__(self, slots: dict[int, int], keep: list[Any], device: Device, code: Any = None) -> None:
        #: The step's code object: each record keeps the line of its frame that made the call.
        self.code = code
        self.slots = slots
        self.keep = keep
        self.device = device
        self.records: list[_Record] = []
        self.buffers: list[tuple[tuple[int, ...], DType]] = []
        #: The last call that raised while tracing: its front, arguments and keywords (slots for tensors), and the
        #: error it raised; None before any.
        self.failed: tuple[Any, Any, dict[str, Any], BaseException] | None = None
        #: A CUDA graph's plan: its arguments are copied into C-contiguous static inputs and nothing may allocate
        #: during a replay, so every conversion writes a buffer (see :meth:`convert`).
        self.static_inputs = False

    def encode(self, value: Any, name: str) -> Any:
        """``value`` with its tensors replaced by slots (PlanError for a tensor that is neither an argument of the
        step nor made by a recorded op)."""
        if isinstance(value, Tensor):
            slot = self.slots.get(id(value))
            if slot is not None:
                return _Slot(slot)
            raise PlanError(
                f"dt.plan: {name} got a tensor that is neither an argument of the step nor made by a recorded op "
                f"(a tensor from outside the step, or one sharing the memory of a NumPy array, as asarray and "
                f"from_numpy make): pass it as an argument"
            )
        if isinstance(value, tuple):
            return rebuild(value, (self.encode(item, name) for item in value))
        if isinstance(value, list):
            return [self.encode(item, name) for item in value]
        if isinstance(value, dict):
            return {key: self.encode(item, name) for key, item in value.items()}
        return value

    def new_slot(self, value: Any) -> Any:
        """Give each tensor in a result a new slot; the result's structure with slots in place."""
        if isinstance(value, Tensor):
            known = self.slots.get(id(value))
            if known is not None:  # an out= or inplace call returns its argument
                return _Slot(known)
            self.keep.append(value)
            self.slots[id(value)] = len(self.slots)
            return _Slot(self.slots[id(value)])
        if isinstance(value, (tuple, list)):
            items = [self.new_slot(item) for item in value]
            return rebuild(value, items) if isinstance(value, tuple) else items
        return value

    def __index_call__(self, name: str, tensor: Tensor, args: tuple[Any, ...]) -> Any:
        """Record ``tensor[index]`` (a view for basic indices, made once of a buffer and per replay of an
        argument; a copy for integer tensor indices) or ``tensor[index] = value`` (replayed through
        ``Tensor.__setitem__``, its checks and version bump included)."""
        if name == "create":
            return self.create(*args)
        if name == "convert":
            return self.convert(tensor, *args)
        if name == "constant":
            return self.constant(tensor, *args)
        op, func = _INDEX_OPS[name]
        return self.__dispatch__(op, "index", typing.cast("Callable[..., Any]", func), (tensor, *args), {})

    def create(self, name: str, shape: tuple[int, ...], dtype: DType, device: Device, fill: Any) -> Any:
        """Record a creation call (empty, zeros, ones, full and their ``_like`` forms) on the plan's device: the
        plan gives the tensor a buffer, filled once at planning when the step never writes it nor returns it,
        else on each replay. Other creation calls, or on another device, are not recorded (NOT_HANDLED)."""
        if name not in _CREATION or (device is not self.device and device.type != "meta"):
            return modes.NOT_HANDLED  # (meta: the device of a stand-in, for the *_like forms)
        result = filled(name, shape, dtype, Device("meta"), None)
        buffer = len(self.buffers)
        self.buffers.append((shape, dtype))
        slot = self.new_slot(result)
        func = functools.partial(_refill, fill)
        self.records.append(
            _Record(_IndexOp(name), name, "create", func, (), {}, slot, result, buffer, False, (), {}, None)
        )
        return result

    def constant(self, tensor: Tensor, name: str) -> Any:
        """Record a tensor made from Python values (``tensor``, ``asarray``, ``arange``, ``linspace``, ``eye``) on
        the plan's device: a buffer the constant is copied into (once when the step never writes nor returns it,
        else on each replay). On another device: NOT_HANDLED (a PlanError where an op uses it)."""
        if tensor._device is not self.device:
            return modes.NOT_HANDLED
        result = filled(name, tensor._shape, tensor._dtype, Device("meta"), None)
        buffer = len(self.buffers)
        self.buffers.append((tensor._shape, tensor._dtype))
        slot = self.new_slot(result)
        func = functools.partial(_convert, tensor)
        self.records.append(
            _Record(_IndexOp(name), name, "create", func, (), {}, slot, result, buffer, False, (), {}, None)
        )
        return result

    def convert(self, tensor: Tensor, device: Device | None, dtype: DType, copy: bool) -> Any:
        """Record ``tensor.to(device, dtype)`` (``astype``, ``cpu``, ``to_device``, ... end there) of a tensor of the
        step: on the plan's device, ``tensor`` itself when nothing changes (as eager), else a conversion into a
        buffer on each replay. PlanError for a move to another device; NOT_HANDLED for a tensor from outside."""
        if tensor._device.type != "meta" or id(tensor) not in self.slots:
            return modes.NOT_HANDLED
        if device is not None and device is not self.device:
            raise PlanError(
                f"dt.plan: to: the step moves a tensor to {device}, but the plan runs on {self.device}; a plan "
                "does not record moves between devices: move the tensor outside the step"
            )
        if dtype == tensor._dtype and not copy:
            return tensor
        source = self.encode(tensor, "to")
        result = filled("to", tensor._shape, dtype, Device("meta"), None)
        slot = self.new_slot(result)
        made = {r.result.index for r in self.records if r.buffer is not None and type(r.result) is _Slot}
        if self.static_inputs or source.index in made:
            # (a buffer of the plan is C-contiguous, so eager's copy, which keeps the source's layout, is too)
            buffer = len(self.buffers)
            self.buffers.append((tensor._shape, dtype))
            record = _Record(
                _IndexOp("to"), "to", "convert", _convert, (source,), {}, slot, result, buffer, False, (), {}, None
            )
        else:
            # An argument's layout is not in the plan's signature (nor a view's): eager's copy keeps it (PyTorch's
            # preserve_format), so a later reduction sums in its order; made on each replay, as eager makes it.
            fresh = functools.partial(_convert_fresh, dtype)
            record = _Record(
                _IndexOp("to"), "to", "convert", fresh, (source,), {}, slot, result, None, False, (), {}, None
            )
        self.records.append(record)
        return result

    def __dispatch__(
        self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Run the call on the meta stand-ins and record it."""
        if getattr(op, "data_dependent", False):
            raise PlanError(f"dt.plan: {op.name} has a data-dependent result shape; a static plan cannot record it")
        name = str(op.name) if variant != "inplace" else f"{op.name}_"
        if variant == "functional" and kwargs.get("out") is not None:
            name += ".out"
        enc_args = self.encode(args, name)
        enc_kwargs = {key: self.encode(value, name) for key, value in kwargs.items()}
        out = kwargs.get("out")
        out_before = (out._shape, out._dtype) if isinstance(out, Tensor) else None
        # (per out= tensor, its place and shape before the call; a multi-output op's out= is a tuple of them)
        sized = [(-1, "out=", out, out._shape)] if isinstance(out, Tensor) else []
        if isinstance(out, (tuple, list)):
            sized = [(i, f"out[{i}]", o, o._shape) for i, o in enumerate(out) if isinstance(o, Tensor)]
        try:
            result = func(*args, **kwargs)
        except Exception as error:
            self.failed = (func, enc_args, enc_kwargs, error)  # (checking.eager_error runs it eagerly)
            if not isinstance(error, ShapeError):
                raise
            # The stand-ins' views stay alive while tracing, so a resize that eager makes may be refused here for
            # them (rules.prepare_out's last check, live views): the resize's PlanError, as below. Any other error
            # is eager's own, unchanged.
            if _LIVE_VIEWS in str(error):
                for after, label, before in _resized(op, args, kwargs, sized):
                    raise PlanError(_resize_message(name, label, before, after)) from error
            raise
        for _, label, tensor, shape in sized:
            if tensor._shape != shape:
                raise PlanError(_resize_message(name, label, shape, tensor._shape))
        buffer = None
        if variant == "functional" and "out" in kwargs and kwargs["out"] is None and isinstance(result, Tensor):
            buffer = len(self.buffers)
            self.buffers.append((result._shape, result._dtype))
        outs = None
        if (
            variant == "functional"
            and kwargs.get("out") is None
            and isinstance(op, MultiOutputOp)
            and isinstance(result, tuple)
            and all(isinstance(item, Tensor) and id(item) not in self.slots for item in result)
        ):
            # (one buffer per output: the replay calls the kernel with their ConstOuts, as the front would)
            outs = tuple(range(len(self.buffers), len(self.buffers) + len(result)))
            self.buffers += [(item._shape, item._dtype) for item in result]
        if variant == "index" and isinstance(result, Tensor) and result._storage is args[0]._storage:
            variant = "view"  # basic indexing: a view of its base
        slot = self.new_slot(result)
        nondeterministic = bool(getattr(op, "nondeterministic", False))
        self.records.append(
            _Record(
                op,
                name,
                variant,
                func,
                enc_args,
                enc_kwargs,
                slot,
                result,
                buffer,
                nondeterministic,
                args,
                dict(kwargs),
                out_before,
                self.line(),
                outs,
            )
        )
        return result

    def line(self) -> int:
        """The line of the innermost frame of the step's code (the call being recorded), or 0."""
        frame = sys._getframe(1)
        code = self.code
        while frame is not None and code is not None:
            if frame.f_code is code:
                return frame.f_lineno or 0
            frame = frame.f_back  # type: ignore[assignment]
        return 0
