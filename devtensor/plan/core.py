"""Static plans: trace a step once on meta stand-ins, plan its memory, replay the recorded ops directly.

``dt.plan(step, *args)`` runs ``step`` once on meta tensors shaped like the tensor arguments (shape, dtype; no
data, so nothing is computed and no argument is read or written) under a dispatch mode that records every op
call the fronts see (functional, out=, inplace and view variants of built-in and custom ops). The meta
functions run then, once: each functional call's result shape and dtype is known, and the plan gives it a
buffer on the arguments' device, buffers sharing memory by liveness (:mod:`devtensor.plan.memory`). The
recorded ops are compiled into one generated function (:mod:`devtensor.plan.replay`) that calls each op's
resolved kernel (or its single ufunc call) with precomputed arguments and the preallocated outputs, so a
replay, ``plan(*args)``, runs no dispatch, no meta function and allocates no result; results equal eager bit for
bit (the same kernels on the same inputs). This is the structured-kernels idea that shapes can be inferred once
and memory preallocated for the out-kernels; Python control flow is fixed at trace time, as under ``jax.jit``.

Creation (``empty``, ``zeros``, ..., the random factories, ``arange``, ``linspace``, ``eye``) and dtype
conversions inside ``step`` are recorded; ``dt.tensor`` and ``asarray`` are not (a tensor made by them reaches a
recorded op unknown: PlanError). See docs/design.md.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from typing import Any

from devtensor import dispatcher, modes
from devtensor.creation import empty
from devtensor.device import Device
from devtensor.dtypes import DType
from devtensor.errors import ArgumentTypeError, NoDataError, PlanError
from devtensor.plan.checking import check_plan, eager_error
from devtensor.plan.cuda_graph import CudaGraph
from devtensor.plan.entry import calls_front, replay_entry, set_general
from devtensor.plan.memory import make_buffers, plan_memory
from devtensor.plan.replay import compile_replay, signature_guard
from devtensor.plan.tracing import _describe, _step_line, _Tracer, step_code
from devtensor.plan.values import MISS
from devtensor.plan.values import Slot as _Slot
from devtensor.plan.values import decode as _decode
from devtensor.plan.values import fill as _fill
from devtensor.plan.values import flag as _flag
from devtensor.plan.values import flattener as _flattener
from devtensor.plan.values import key_text as _key_text
from devtensor.plan.values import map_tensors as _map_tensors
from devtensor.plan.values import scalar_key as _scalar_key
from devtensor.plan.values import signature as _signature
from devtensor.plan.values import slot_indices as _slot_indices
from devtensor.plan.values import unflatten as _unflatten
from devtensor.structured.fronts import _inline_kind
from devtensor.tensor import Tensor

__all__ = ["Plan", "plan"]

_SCALAR_TYPES = (bool, int, float, complex, str, type(None))
#: The default of :attr:`Plan.max_threads`: how many threads may replay one plan at once, each into its own buffers.
MAX_THREADS = 16


class _Replica:
    """One set of a plan's buffers and the replay compiled to use them; one thread replays through it at a time.
    ``entry``: the plan's compiled entry (plan/entry.py) when it replays into this replica, else None."""

    __slots__ = ("buffers", "entry", "replay")

    def __init__(self, buffers: list[Tensor], replay: Callable[[Any], Any], entry: Any = None) -> None:
        self.buffers = buffers
        self.replay = replay
        self.entry = entry


class _Lease:
    """A thread's hold on a replica, kept in the plan's thread-local storage: when the thread ends its locals go,
    and the replica goes back to the plan's pool (``list.append`` is atomic; no lock in a finaliser)."""

    __slots__ = ("free", "replica")

    def __init__(self, replica: _Replica, free: list[_Replica]) -> None:
        self.replica = replica
        self.free = free

    def __del__(self) -> None:
        if self.replica.entry is not None:  # (before it is back in the pool: another thread may take it then)
            self.replica.entry.owner = 0
        self.free.append(self.replica)


class Plan:
    """A static plan of one step for one argument signature (see :func:`plan`). Call it with arguments of that
    signature to replay the step.

    Attributes:
        records: the recorded op calls, in order (``print(plan)`` shows them as a table).
        buffers: the preallocated result tensors, on the arguments' device.
        memory_bytes: the bytes of all buffers (outputs included).
    """

    def __init__(self, step: Callable[..., Any], args: tuple[Any, ...], cuda_graph: bool = False) -> None:
        if not callable(step):
            raise ArgumentTypeError(f"plan: argument 'step' must be a callable, got {type(step).__name__} {step!r:.60}")
        cuda_graph = _flag("plan", "cuda_graph", cuda_graph)
        structure, leaves, keys, same = _signature(args)
        devices = {leaf._device for leaf in leaves if isinstance(leaf, Tensor)}
        if len(devices) > 1:
            names = ", ".join(sorted(str(device) for device in devices))
            raise PlanError(f"dt.plan: the tensor arguments must be on one device, got {names}")
        for index, leaf in enumerate(leaves):
            if not isinstance(leaf, (Tensor, *_SCALAR_TYPES)):
                raise PlanError(
                    f"dt.plan: argument leaf {index} is a {type(leaf).__name__}; plans take tensors and Python "
                    f"scalars, also nested in tuples, lists and dicts"
                )
        self.step = step
        #: The name dispatch modes see for a replay: ``plan(<the step's qualified name>)``.
        self.name = f"plan({getattr(step, '__qualname__', 'step')})"
        self.device: Device | None = next(iter(devices)) if devices else None
        self._structure = structure
        self._keys = keys
        self._same = same
        # Flat arguments (no tuple, list or dict) with no tensor passed twice: the replay's cheap check.
        self._flat = structure == (tuple, tuple(range(len(leaves)))) and same == tuple(range(len(leaves)))
        #: The leaves of nested arguments of this structure, read by compiled code (None: not this structure).
        self._leaves_of: Callable[[tuple[Any, ...]], list[Any] | None] = list if self._flat else _flattener(structure)
        slots: dict[int, int] = {}
        keep: list[Any] = []
        stand_ins: list[Any] = []
        #: For each argument leaf, the slot its tensor fills (None for scalars).
        self._arg_slots: list[int | None] = []
        for index, leaf in enumerate(leaves):
            if isinstance(leaf, Tensor):
                if same[index] != index:
                    stand_ins.append(stand_ins[same[index]])
                    self._arg_slots.append(self._arg_slots[same[index]])
                    continue
                stand_in = empty(leaf._shape, dtype=leaf._dtype, device="meta")
                keep.append(stand_in)
                slots[id(stand_in)] = len(slots)
                stand_ins.append(stand_in)
                self._arg_slots.append(slots[id(stand_in)])
            else:
                stand_ins.append(leaf)
                self._arg_slots.append(None)
        meta_args = _unflatten(structure, stand_ins)
        tracer = _Tracer(slots, keep, self.device if self.device is not None else Device("cpu"), step_code(step))
        tracer.static_inputs = cuda_graph
        generation = dispatcher._generation[0]
        try:
            with tracer:
                meta_result = step(*meta_args)
        except NoDataError as error:
            raise PlanError(
                f"dt.plan: the step reads data or has a data-dependent shape while tracing{_step_line(error, step)}: "
                f"{error}"
            ) from error
        except PlanError as error:
            raise PlanError(f"{error}{_step_line(error, step)}") from error
        except Exception as error:
            # An op's check failed while tracing; eager may fail earlier, in a kernel's check on data (pow of an
            # integer to a negative power) that no meta function makes: the error eager raises first is raised.
            earlier = eager_error(tracer, leaves, self._arg_slots, error)
            if earlier is not None:
                raise earlier from None
            raise
        self._generation = generation
        self.records = tracer.records
        self._nslots = len(slots)
        self._output = tracer.encode(_check_output(meta_result), "the step's return value")
        #: Per slot, its meta stand-in and its storage's id (views share it; ids: see storage.others_alive).
        self._slot_meta: list[Any] = keep
        self._slot_storage: list[int] = [id(tensor._storage) for tensor in keep]
        device = self.device if self.device is not None else Device("cpu")
        memory = plan_memory(*self._liveness(tracer.buffers), self._reuse(tracer.buffers), self._filled_once())
        self._memory = (memory, tracer.buffers, device)
        self.buffers, self.memory_bytes = make_buffers(memory, tracer.buffers, device)
        self.peak_bytes_eager: int = memory.peak_bytes_eager
        #: Per result slot that lives in a buffer, the buffer (the compiled replay holds them as constants).
        self._static: dict[int, Tensor] = self._static_of(self.buffers)
        backend = next((type(leaf)._backend for leaf in leaves if isinstance(leaf, Tensor)), None)
        self._backend = backend
        replay, self.direct_ops = compile_replay(self, backend, functools.partial(self._replay_slow, self.buffers))
        #: The first replica's replay with the call inline (binding.entry_lines; None for nested arguments, a
        #: CUDA graph): the ``__call__`` of this plan's class, or of the ``dt.planned`` that made it.
        #: Where the core is built, the compiled entry (plan/entry.py) of flat arguments.
        ns = self._entry_ns = replay.__globals__
        self._entry: Callable[..., Any] | None = (
            None if cuda_graph else replay_entry(self, ns, self._general) or ns.get("entry")
        )
        #: The class of the ``dt.planned`` that made this plan while the plan is its last used (its ``__call__``
        #: is this plan's entry), made on first use.
        self._owner_class: type | None = None
        if ns.get("entry") is not None:
            replay.__globals__.update(
                _CALL=self._general, _LOC=None, _ACTIVE=modes.ACTIVE, _GEN=dispatcher._generation, _G=generation
            )
        #: The CUDA graph the replay runs as (``cuda_graph=True``), or None.
        self.cuda_graph: CudaGraph | None = None
        if cuda_graph:
            self.cuda_graph = graph = CudaGraph(self, leaves)
            guard = signature_guard(self)

            def graph_replay(leaves: Any) -> Any:
                return graph(leaves) if guard(leaves) else MISS

            replay = graph_replay
        # Threads: each thread replays through its own copy of the buffers (a replica), so concurrent replays
        # never share one; a thread holds its replica until it ends (then the replica goes back to the pool),
        # and the pool is bounded: a thread beyond it runs the step eagerly (fresh results, the same values).
        self._pool_lock = threading.Lock()
        self._free: list[_Replica] = []
        self._made = 1
        #: How many replicas (the plan's buffers and its compiled replay) threads may hold at once; a CUDA graph
        #: is captured on one set of buffers, so a graph plan has one.
        self.max_threads = 1 if cuda_graph else MAX_THREADS
        self._local = threading.local()
        compiled = self._entry if self._entry is not None and self._entry is not ns.get("entry") else None
        self._lease(_Replica(self.buffers, replay, compiled))
        if self._entry is not None:
            ns["_LOC"] = self._local
            self.__class__ = entry_class(Plan, self._entry)
        #: Whether a replay can beat the eager step: some op call runs without its front (lowered to raw calls,
        #: its one ufunc call, or its kernel called directly), or the compiled entry calls the step's one view's
        #: front with no frame between (plan/entry.py). A plan of views only, or of calls that all go through
        #: their fronts, cannot: ``dt.planned`` runs such a step eagerly.
        self.gains = cuda_graph or getattr(replay, "__calls__", 0) > 0 or calls_front(self._entry)

    def _static_of(self, buffers: list[Tensor]) -> dict[int, Tensor]:
        """Per result slot that lives in a buffer, its buffer among ``buffers``."""
        return {slot.index: buffers[buffer] for record in self.records for buffer, slot in record.buffered()}

    def _lease(self, replica: _Replica) -> Callable[[Any], Any]:
        """Give ``replica`` to this thread (back in the pool when the thread ends); its replay."""
        self._local.lease = _Lease(replica, self._free)
        self._local.replay = replica.replay
        if replica.entry is not None:
            replica.entry.owner = threading.get_ident()
        return replica.replay

    def _thread_replay(self) -> Callable[[Any], Any]:
        """This thread's replay function: its replica's (taken from the pool or made on the first replay in the
        thread), or, when the pool is full, :meth:`_replay_eager`."""
        replay: Callable[[Any], Any] | None = getattr(self._local, "replay", None)
        if replay is not None:
            return replay
        with self._pool_lock:
            if self._free:
                replica = self._free.pop()
            elif self._made < self.max_threads:
                self._made += 1
                replica = None
            else:
                self._local.replay = self._replay_eager
                return self._replay_eager
        if replica is None:
            memory, specs, device = self._memory
            buffers = make_buffers(memory, specs, device)[0]
            compiled = compile_replay(
                self, self._backend, functools.partial(self._replay_slow, buffers), static=self._static_of(buffers)
            )[0]
            replica = _Replica(buffers, compiled)
        return self._lease(replica)

    def _replay_eager(self, leaves: Any) -> Any:
        """The replay of a thread beyond :attr:`max_threads`: the step run eagerly (MISS for another signature);
        takes a replica as soon as one is back in the pool."""
        if self._free:
            del self._local.replay
            return self._thread_replay()(leaves)
        if not self._guard(leaves):
            return MISS
        return self.step(*_unflatten(self._structure, list(leaves)))

    @functools.cached_property
    def _guard(self) -> Callable[[Any], bool]:
        return signature_guard(self)

    def _filled_once(self) -> set[Any]:
        """The storage keys of the tensors created in the step that it never writes nor returns: filled at planning
        only (they stay live through the whole replay)."""
        storage = self._slot_storage
        written = set()
        for record in self.records:
            first = record.args[0] if record.args else None
            if (record.variant == "inplace" or record.name == "setitem") and type(first) is _Slot:
                written.add(storage[first.index])
            out = record.kwargs.get("out")
            if type(out) is _Slot:
                written.add(storage[out.index])
        outputs = {storage[slot] for slot in _slot_indices(self._output)}
        created = {storage[record.result.index] for record in self.records if record.variant == "create"}
        return created - written - outputs

    def _compile_with_progress(self, progress: list[int]) -> Callable[[Any], Any]:
        """The replay compiled to set ``progress[0]`` to the index of the op it is at (for CUDA graph capture)."""
        return compile_replay(self, self._backend, functools.partial(self._replay_slow, self.buffers), progress)[0]

    def _liveness(self, specs: list[tuple[tuple[int, ...], DType]]) -> tuple[Any, list[list[Any]], set[Any]]:
        """The inputs of :func:`plan_memory`: buffer requests, storages each record uses, storages kept."""
        storage = self._slot_storage
        requests = []
        for index, record in enumerate(self.records):
            for buffer, result in record.buffered():
                shape, dtype = specs[buffer]
                nbytes = math.prod(shape) * dtype.itemsize
                requests.append((index, nbytes, dtype.itemsize, storage[result.index]))
        uses = [
            [storage[slot] for slot in _slot_indices((record.args, record.kwargs, record.result))]
            for record in self.records
        ]
        kept = {storage[slot] for slot in _slot_indices(self._output)} | self._filled_once()
        return requests, uses, kept

    def _reuse(self, specs: list[tuple[tuple[int, ...], DType]]) -> dict[int, int]:
        """Per buffer, the buffer whose bytes it may take exactly (memory.plan_memory's ``reuse``): a tensor
        argument of the functional call that makes it, of an op that may write over its input
        (``out_may_be_input``), that is itself a buffer of the same shape and dtype, not kept, last used by
        that call, and the call's only argument on its storage (no view of it passed beside it); any operand of
        the ufunc family's elementwise ops, else the first argument only."""
        storage = self._slot_storage
        kept = {storage[slot] for slot in _slot_indices(self._output)} | self._filled_once()
        last: dict[int, int] = {}
        for index, record in enumerate(self.records):
            for slot in _slot_indices((record.args, record.kwargs, record.result)):
                last[storage[slot]] = index
        own = {record.result.index: record.buffer for record in self.records if record.buffer is not None}
        reuse: dict[int, int] = {}
        for index, record in enumerate(self.records):
            if (
                record.buffer is None
                or record.variant != "functional"
                or record.kwargs.get("out") is not None
                or not getattr(record.op, "out_may_be_input", False)
            ):
                continue
            inputs = _slot_indices((record.args, record.kwargs))
            # (any operand of the ufunc family's elementwise ops; of the others, only the first argument, which
            # the kernel may write over: scatter's src or addmm's mat1 as out would be read after being written)
            first = record.args[0] if record.args else None
            candidates = (
                inputs if _inline_kind(record.op)[0] is not None else [first.index] if type(first) is _Slot else []
            )
            for slot in candidates:
                source = own.get(slot)
                key = storage[slot]
                if (
                    source is not None
                    and specs[source] == specs[record.buffer]
                    and key not in kept
                    and last[key] == index
                    and all(other == slot for other in inputs if storage[other] == key)
                ):
                    reuse[record.buffer] = source
                    break
        return reuse

    def _check(self, args: tuple[Any, ...]) -> list[Any]:
        """The argument leaves, after checking them against the signature (PlanError naming the argument)."""
        if dispatcher._generation[0] != self._generation:
            raise PlanError(
                "plan: a kernel, override or fallback was registered or removed after planning; make a new plan "
                "(dt.planned does so by itself)"
            )
        if self._flat and len(args) == len(self._keys):
            keys = tuple(
                (type(arg), arg._shape, arg._dtype, arg._device)
                if isinstance(arg, Tensor)
                else (type(arg), _scalar_key(arg))
                for arg in args
            )
            if keys == self._keys:
                tensors = [id(arg) for arg in args if isinstance(arg, Tensor)]
                if len(set(tensors)) == len(tensors):
                    return list(args)
        structure, leaves, keys, same = _signature(args)
        if structure != self._structure:
            raise PlanError(
                "plan: the arguments' nesting (tuples, lists, dicts, their lengths) differs from the plan's"
            )
        if keys != self._keys:
            for index, (key, expected) in enumerate(zip(keys, self._keys, strict=True)):
                if key != expected:
                    raise PlanError(
                        f"plan: argument leaf {index} is {_key_text(key)}, the plan was made for {_key_text(expected)}"
                    )
        if same != self._same:
            raise PlanError(
                "plan: which arguments are the same tensor differs from the arguments the plan was made for"
            )
        return leaves

    def __call__(self, *args: Any, copy_outputs: bool = False) -> Any:
        """Replay the step on ``args`` (same signature as at planning, else PlanError naming the argument).

        Returns the step's outputs; tensors among them that the step computed live in the plan's buffers and
        are overwritten by the next replay, unless ``copy_outputs`` is true (then they are independent copies).
        Inplace and out= ops on the arguments write them and bump their versions as eager calls do. An active
        dispatch mode sees the replay as one call (op: this plan, variant ``"plan"``), not its ops.
        """
        if copy_outputs is not False:
            copy_outputs = _flag("plan", "copy_outputs", copy_outputs)
        if modes.ACTIVE[0] or dispatcher._generation[0] != self._generation:
            if modes.ACTIVE[0]:
                return modes.run_modes(self, "plan", self, self._call, args, {"copy_outputs": copy_outputs})
            return self._call(*args, copy_outputs=copy_outputs)
        # (_call's common case inline: one frame less per replay)
        leaves = args if self._flat else self._leaves_of(args)
        if leaves is None:
            self._check(args)  # raises: the nesting differs
        output = (getattr(self._local, "replay", None) or self._thread_replay())(leaves)
        if output is MISS:
            self._check(args)  # raises, naming the argument that differs
        if copy_outputs:
            output = _map_tensors(output, Tensor.clone)
        return output

    def _general(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """:meth:`__call__` of the base class: the entry's path when it cannot replay inline."""
        return Plan.__call__(self, *args, **kwargs)

    def _adopt(self, call: Callable[[tuple[Any, ...], dict[str, Any]], Any], base: type) -> type | None:
        """Give this plan's entry to ``call``'s owner (``dt.planned``): the entry's general path becomes
        ``call``, this plan is called through :meth:`__call__` again, and the class (of ``base``) whose
        ``__call__`` the entry is, or None when there is no entry, is returned."""
        if self._entry is None:
            return None
        self.__class__ = Plan
        set_general(self._entry, self._entry_ns, call)
        return entry_class(base, self._entry)

    def _call(self, *args: Any, copy_outputs: bool = False) -> Any:
        """The replay, without the dispatch-mode hook."""
        if dispatcher._generation[0] != self._generation:
            self._check(args)  # raises: stale
        replay = getattr(self._local, "replay", None) or self._thread_replay()
        leaves = args if self._flat else self._leaves_of(args)
        output = replay(leaves if leaves is not None else self._check(args))
        if output is MISS:
            self._check(args)  # raises, naming the argument that differs
        if copy_outputs:
            output = _map_tensors(output, Tensor.clone)
        return output

    def _replay_slow(self, buffers: list[Tensor], leaves: Any) -> Any:
        """The compiled replay's path when a written argument has not passed its writability check yet or
        tensor arguments share memory: MISS when the identity pattern differs, else the replay through the
        fronts (whose checks handle the overlap as eager calls do)."""
        if _signature(tuple(leaves))[3] != self._same:
            return MISS
        return self._replay_fronts(list(leaves), buffers)

    def _replay_fronts(self, leaves: list[Any], buffers: list[Tensor]) -> Any:
        """The replay through the ops' fronts (their checks and dispatch run), into ``buffers`` (a replica's)."""
        values: list[Any] = [None] * self._nslots
        for leaf, slot in zip(leaves, self._arg_slots, strict=True):
            if slot is not None:
                values[slot] = leaf
        values.extend(reversed(buffers))  # buffers at negative slot indices (-1 - n)
        for slot, buffer in self._static_of(buffers).items():
            values[slot] = buffer
        for record in self.records:
            kwargs = record.kwargs if record.buffer is None else {**record.kwargs, "out": _Slot(-1 - record.buffer)}
            if record.outs is not None:
                kwargs = {**record.kwargs, "out": tuple(_Slot(-1 - b) for b in record.outs)}
            out = record.func(*_decode(record.args, values), **_decode(kwargs, values))
            _fill(record.result, out, values)
        return _decode(self._output, values)

    def check(self, *args: Any) -> None:
        """Run the step eagerly and through the plan, each on its own copies of ``args``'s tensors, and compare
        the outputs and the copies afterwards bit for bit (shape, dtype, bytes). ``args`` are not touched. The
        copies keep what a replay's checks see: a tensor passed twice is one copy, and an expanded (stride-0)
        dimension stays expanded (a write into it raises MemoryOverlapError in both runs, as in a replay).

        Raises:
            PlanError: the signature does not match (as a replay), some output or argument differs (the message
                names which, and the step's random ops, which draw differently in each run), or one run raised
                where the other did not. The eager run's error when both raise it.
        """
        check_plan(self, args)

    def __repr__(self) -> str:
        rows = [("#", "op", "variant", "inputs", "output", "buffer")]
        for index, record in enumerate(self.records):
            inputs = ", ".join(
                [_describe(value) for value in _tensor_leaves(record.args)]
                + [f"{key}={_describe(value)}" for key, item in record.kwargs.items() for value in _tensor_leaves(item)]
            )
            output = ", ".join(_describe(value) for value in _tensor_leaves(record.meta_result))
            buffer = "" if record.buffer is None else f"b{record.buffer}"
            variant = record.variant + (" (random)" if record.nondeterministic else "")
            rows.append((str(index), record.name, variant, inputs, output, buffer))
        widths = [max(len(row[column]) for row in rows) for column in range(6)]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
        name = getattr(self.step, "__qualname__", "step")
        head = f"Plan({name}, {len(self.records)} ops, {len(self.buffers)} buffers, {self.memory_bytes} bytes)"
        return "\n".join([head, *lines])


def entry_class(base: type, entry: Callable[..., Any]) -> type:
    """A subclass of ``base`` (same layout, same names) whose ``__call__`` is ``entry``: called as a static
    function, so that calling an instance runs ``entry`` itself, with no frame of a method in between."""
    # (a compiled entry is no descriptor: the class's attribute is called as it is)
    call = staticmethod(entry) if hasattr(entry, "__get__") else entry
    names = {"__call__": call, "__slots__": (), "__module__": base.__module__}
    return type(base.__name__, (base,), {**names, "__qualname__": base.__qualname__, "__doc__": base.__doc__})


def _tensor_leaves(value: Any) -> list[Any]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _tensor_leaves(item)]
    if type(value) is _Slot:
        return [f"%{value.index}"]
    return []


def _check_output(value: Any) -> Any:
    """The step's return value, checked: None, a tensor, or tuples, lists and dicts of tensors (nested)."""

    def ok(item: Any) -> bool:
        if isinstance(item, Tensor):
            return True
        if isinstance(item, (tuple, list)):
            return all(ok(inner) for inner in item)
        return isinstance(item, dict) and all(ok(inner) for inner in item.values())

    if value is not None and not ok(value):
        raise PlanError(
            f"dt.plan: the step must return None, a tensor, or a tuple, list or dict of tensors, got {value!r:.60}"
        )
    return value


def plan(step: Callable[..., Any], *args: Any, cuda_graph: bool = False) -> Plan:
    """Trace ``step(*args)`` once on meta stand-ins of the tensor arguments and return a :class:`Plan` that
    replays it.

    Args:
        step: a function of tensors and Python scalars (also nested in tuples, lists, dicts) returning None, a
            tensor, or a tuple, list or dict of tensors. Its Python control flow is fixed at trace time.
        args: example arguments: their shapes, dtypes, devices and scalar values make the plan's signature;
            their data is not read and they are not written.
        cuda_graph: replay as one CUDA graph (tensor arguments on a CUDA device): the replay is captured once
            through CuPy's stream capture; each call copies the arguments into the graph's static inputs,
            launches it, and copies back the arguments the step writes (see devtensor/plan/cuda_graph.py).

    Raises:
        PlanError: the step reads data (``item()``, ``numpy()``, ``bool()``, ...) or has a data-dependent shape
            (boolean-mask indexing, ``nonzero``, ``unique``) while tracing (the message names the op and the step's
            line); it uses a tensor that is not an argument nor made by a recorded op (a creation function inside
            the step, a tensor from outside); an op resizes its out= tensor (named); the tensor arguments are on
            several devices; an argument or the return value is of another type; with ``cuda_graph``: the
            arguments are not on a CUDA device, the step returns an argument, or an op allocates or synchronises
            with the host during the capture (named).
        Errors of the ops themselves (shape, dtype, device checks) as eager calls raise them.
    """
    return Plan(step, args, cuda_graph)
