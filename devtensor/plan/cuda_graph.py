"""A static plan replayed as one CUDA graph (``dt.plan(..., cuda_graph=True)``).

The plan's compiled replay runs once on static input tensors (one per tensor argument, allocated with the plan)
inside a CuPy stream capture (``Stream.begin_capture()`` / ``end_capture()``), which records its kernels into a
CUDA graph instead of running them. Each call then copies the arguments into the static inputs, launches the
graph (``Graph.launch()``) and copies the arguments the step writes back into them, bumping their versions as the
eager step's writes would. Outputs live in the plan's buffers, as for any plan. A kernel that allocates or
synchronises with the host during the capture makes CUDA refuse it: the plan is refused with a PlanError naming
the op. This is the CUDA-graph side of PyTorch's ``torch.cuda.graphs`` (static inputs, static outputs).
"""

from __future__ import annotations

from typing import Any

from devtensor.backends import cupy_module
from devtensor.creation import empty
from devtensor.errors import PlanError
from devtensor.plan.values import Slot, slot_indices
from devtensor.tensor import Tensor

__all__ = ["CudaGraph"]


class CudaGraph:
    """The CUDA graph of a plan and its static inputs (see the module's docstring)."""

    def __init__(self, plan: Any, leaves: list[Any]) -> None:
        device = plan.device
        if device is None or device.type != "cuda":
            raise PlanError(f"dt.plan: cuda_graph=True needs tensor arguments on a CUDA device, got {device}")
        arg_slots = {slot for slot in plan._arg_slots if slot is not None}
        if any(slot in arg_slots or plan._slot_storage[slot] in self._arg_storages(plan) for slot in self._outs(plan)):
            raise PlanError(
                "dt.plan: with cuda_graph=True the step cannot return an argument or a view of one (the graph "
                "works on static copies of the arguments)"
            )
        self.plan = plan
        self.static: list[Any] = []
        for leaf, slot in zip(leaves, plan._arg_slots, strict=True):
            if slot is None:
                self.static.append(leaf)
                continue
            static = empty(leaf._shape, dtype=leaf._dtype, device=leaf._device)
            static._write_checked = True  # fresh memory devtensor allocated: writable
            self.static.append(static)
        # How many times the step writes each argument's memory (its version bumps per replay).
        writes: dict[int, int] = {}
        storage_to_leaf = {plan._slot_storage[slot]: i for i, slot in enumerate(plan._arg_slots) if slot is not None}
        for record in plan.records:
            target = _written(record)
            if target is not None and plan._slot_storage[target] in storage_to_leaf:
                leaf = storage_to_leaf[plan._slot_storage[target]]
                writes[leaf] = writes.get(leaf, 0) + 1
        self.writes = writes
        cp = cupy_module()
        guard = device._guard
        progress = [-1]
        replay = plan._compile_with_progress(progress)
        with guard() if guard is not None else _nothing():
            self.stream = cp.cuda.Stream(non_blocking=True)
            with self.stream:
                self.stream.begin_capture()
                try:
                    self.output = replay(self.static)
                except Exception as error:
                    self.stream.end_capture()
                    index = progress[0]
                    name = plan.records[index].name if index >= 0 else "the replay's head"
                    raise PlanError(
                        f"dt.plan: op {index} ({name}) cannot be captured into a CUDA graph (it allocates or "
                        f"synchronises with the host during the capture): {error}"
                    ) from error
                self.graph = self.stream.end_capture()

    @staticmethod
    def _outs(plan: Any) -> list[int]:
        return slot_indices(plan._output)

    @staticmethod
    def _arg_storages(plan: Any) -> list[Any]:
        return [plan._slot_storage[slot] for slot in plan._arg_slots if slot is not None]

    def __call__(self, leaves: Any) -> Any:
        """Copy ``leaves``' tensors into the static inputs, launch the graph, copy the written ones back."""
        pairs = [(leaf, static) for leaf, static in zip(leaves, self.static, strict=True) if isinstance(leaf, Tensor)]
        device = self.plan.device
        guard = device._guard
        with guard() if guard is not None else _nothing():
            for leaf, static in pairs:
                static._array[...] = leaf._array
            self.graph.launch(self.stream)
            self.stream.synchronize()
            for index, count in self.writes.items():
                leaf = leaves[index]
                leaf._array[...] = self.static[index]._array
                leaf._storage.version += count
        return self.output


def _written(record: Any) -> int | None:
    """The slot a record writes in place (inplace self, out=, setitem's tensor), or None."""
    if record.variant == "inplace" or record.name == "setitem":
        first = record.args[0] if record.args else None
        return first.index if type(first) is Slot else None
    out = record.kwargs.get("out")
    return out.index if type(out) is Slot else None


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
