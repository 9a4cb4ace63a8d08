"""Memory planning of a static plan: the functional results' buffers share one arena by liveness.

A recorded op that makes a new tensor (a functional call without ``out=``) asks for a buffer of its result's
shape and dtype. A buffer is live from the op that writes it to the last op that reads or writes it or any view
of it (views share their base's storage, so liveness is tracked per storage of the meta stand-ins); buffers the
step returns stay live to the end. Buffers are placed at byte offsets in one arena per plan, largest first,
each in the tightest gap left by the buffers already placed whose lifetimes overlap its own (the greedy-by-size
offset planner of TensorFlow Lite's memory planner, described in Pisarchyk and Lee, "Efficient Memory
Management for Deep Neural Net Inference", 2020); a buffer is a view of its bytes with its own dtype and shape.

A buffer may also take exactly the bytes of an input of the op that writes it when that input is a buffer of the
same shape and dtype whose last use is that op, and the op may write over its input (``out_may_be_input``:
elementwise ops; the call then writes in place, as NumPy code reusing its arrays does): the step touches less
memory. The two lifetimes meet at that one op, where the output is exactly the input (never a partial overlap).

``peak_bytes_eager`` is the eager run's peak of live results by the same liveness (a result freed right after
its last use, as a step that drops its references at once would). Exact packing is NP-hard, so the arena is not
promised to reach that peak in general; it is reported beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from devtensor.creation import empty
from devtensor.dtypes import uint8
from devtensor.tensor import Tensor

__all__ = ["MemoryPlan", "plan_memory"]


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Where each buffer lives: ``offsets[b]`` the byte offset of buffer ``b`` in the arena of ``arena_bytes``;
    ``peak_bytes_eager`` the eager run's peak of live results (bytes)."""

    offsets: tuple[int, ...]
    arena_bytes: int
    peak_bytes_eager: int


def plan_memory(
    requests: Sequence[tuple[int, int, int, Any]],
    uses: Sequence[Sequence[Any]],
    kept: set[Any],
    reuse: Mapping[int, int] | None = None,
    early: set[Any] | frozenset[Any] = frozenset(),
) -> MemoryPlan:
    """Place buffers in one arena by liveness.

    Args:
        requests: per buffer, ``(record index, nbytes, alignment, storage key)``: the op that makes it, its size,
            the alignment its dtype needs (its itemsize), and the key of its stand-in's storage (shared by its
            views).
        uses: per record, the storage keys it reads or writes.
        kept: the storage keys live to the end (the step's outputs).
        reuse: per buffer, a buffer of the same size whose bytes it may take exactly (an input of the op that
            writes it, last used there; see the module's docstring): taken when no other buffer live then is
            in the way, else the buffer is placed as any other.
        early: the storage keys live from the first record on (created tensors filled once, at planning: their
            bytes must hold through every replay, before the record that made them too); the eager peak counts
            them from that record, as eager makes them there.
    Returns:
        the :class:`MemoryPlan`.
    """
    last: dict[Any, int] = {}
    for index, keys in enumerate(uses):
        for key in keys:
            last[key] = index
    end = len(uses)
    eager = [(record, end if key in kept else max(record, last.get(key, record))) for record, _n, _a, key in requests]
    lives = [(0 if key in early else start, stop) for (start, stop), (*_, key) in zip(eager, requests, strict=True)]
    change = [0] * (end + 2)
    for (_record, nbytes, _align, _key), (start, stop) in zip(requests, eager, strict=True):
        change[start] += nbytes
        change[stop + 1] -= nbytes
    peak = live = 0
    for delta in change:
        live += delta
        peak = max(peak, live)
    offsets = [0] * len(requests)
    placed: list[int] = []
    placed_set: set[int] = set()
    for buffer in sorted(range(len(requests)), key=lambda b: (-requests[b][1], b)):
        nbytes, align = requests[buffer][1], max(requests[buffer][2], 1)
        start, stop = lives[buffer]
        source = reuse.get(buffer) if reuse else None
        if source is not None and source in placed_set and lives[source][1] == start:
            low = offsets[source]
            if not any(
                offsets[other] < low + nbytes and low < offsets[other] + requests[other][1]
                for other in placed
                if other != source and lives[other][0] <= stop and start <= lives[other][1]
            ):
                offsets[buffer] = low  # exactly the input's bytes, which the op writes over
                placed.append(buffer)
                placed_set.add(buffer)
                continue
        taken = sorted(
            (offsets[other], offsets[other] + requests[other][1])
            for other in placed
            if lives[other][0] <= stop and start <= lives[other][1]
        )
        best: int | None = None
        best_gap = 0
        cursor = 0
        for low, high in taken:
            offset = -(-cursor // align) * align
            gap = low - offset
            if gap >= nbytes and (best is None or gap < best_gap):
                best, best_gap = offset, gap
            cursor = max(cursor, high)
        offsets[buffer] = best if best is not None else -(-cursor // align) * align
        placed.append(buffer)
        placed_set.add(buffer)
    arena = max((offset + request[1] for offset, request in zip(offsets, requests, strict=True)), default=0)
    return MemoryPlan(tuple(offsets), arena, peak)


def make_buffers(
    memory: MemoryPlan, specs: Sequence[tuple[tuple[int, ...], Any]], device: Any
) -> tuple[list[Tensor], int]:
    """The buffers of ``specs`` (shape, dtype per buffer) on ``device`` as views of the arena, and the bytes of
    the arena. On CPU and CUDA the arena is raw bytes viewed as each buffer's dtype; other devices (out-of-tree
    backends, whose arrays may not reinterpret bytes) get one buffer per request."""
    if getattr(device, "type", None) not in ("cpu", "cuda"):
        buffers = [empty(shape, dtype=dtype, device=device) for shape, dtype in specs]
        for buffer in buffers:
            buffer._write_checked = True
        return buffers, sum(int(buffer._array.nbytes) for buffer in buffers)
    arena = empty((max(memory.arena_bytes, 1),), dtype=uint8, device=device)
    buffers = []
    # (buffers of one layout at one offset, one taking the other's bytes, share one array: NumPy sees an op's
    # output and input as the same object, not two arrays it must prove equal, as its ufuncs otherwise do)
    arrays: dict[tuple[int, tuple[int, ...], Any], Any] = {}
    for (shape, dtype), offset in zip(specs, memory.offsets, strict=True):
        nbytes = math.prod(shape) * dtype.itemsize
        array = arrays.get((offset, shape, dtype))
        if array is None:
            array = arrays[offset, shape, dtype] = arena._array[offset : offset + nbytes].view(dtype).reshape(shape)
        buffer = arena._backend.wrap_view(array, arena)
        buffer._write_checked = True  # fresh memory devtensor allocated: writable
        buffers.append(buffer)
    return buffers, memory.arena_bytes
