"""Static plans replayed as CUDA graphs (``dt.plan(..., cuda_graph=True)``), through the CuPy stand-in's streams
and graphs (tests/fake_cupy.py): the capture records the replay's kernels once, each call copies the arguments in,
launches the graph and copies written arguments back; an op that allocates or synchronises during the capture
is refused naming it."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import Tensor


def _step(w: Tensor, x: Tensor, lr: float) -> Tensor:
    h = (x @ w).relu()
    loss = (h * h).sum()
    w.sub_(lr * (x.T @ h))  # (sub_ with alpha= allocates a temporary on CUDA: not capturable)
    return loss


def _args(seed: int) -> tuple[Tensor, Tensor]:
    rng = np.random.default_rng(seed)
    w = dt.tensor(rng.standard_normal((4, 3)).astype(np.float32), device="cuda")
    x = dt.tensor(rng.standard_normal((5, 4)).astype(np.float32), device="cuda")
    return w, x


def test_a_cuda_graph_replays_the_step_as_eager(fake_cupy: ModuleType) -> None:
    w, x = _args(0)
    w_eager = w.clone()
    plan = dt.plan(_step, w, x, 0.1, cuda_graph=True)
    assert plan.cuda_graph is not None
    for seed in range(3):
        x = _args(seed)[1]
        version = w._storage.version
        fake_cupy.state.clear_log()
        got = plan(w, x, 0.1)
        launches = [name for name, _ in fake_cupy.state.calls]
        # copies in (w, x), the graph, the written argument copied back: the kernels ran inside the graph
        assert launches == ["__setitem__", "__setitem__", "graph", "__setitem__"]
        want = _step(w_eager, x, 0.1)
        assert got.cpu().numpy().tobytes() == want.cpu().numpy().tobytes()
        assert w.cpu().numpy().tobytes() == w_eager.cpu().numpy().tobytes()
        assert w._storage.version == version + 1


def test_allocation_during_capture_is_refused_naming_the_op(fake_cupy: ModuleType) -> None:
    def step(w: Tensor, g: Tensor) -> Tensor:
        w.sub_(g, alpha=0.5)  # the CUDA kernel of sub_ with alpha= allocates alpha * g
        return w * 2.0

    w = _args(0)[0]
    with pytest.raises(dt.PlanError, match=r"op 0 \(sub_\) cannot be captured into a CUDA graph.*allocat"):
        dt.plan(step, w, w.clone(), cuda_graph=True)


def test_host_synchronisation_during_capture_is_refused(fake_cupy: ModuleType) -> None:
    from devtensor import library
    from devtensor.typed import ConstOut

    def meta(self: Tensor) -> Any:
        return self.shape, self.dtype

    op = library.custom_op("plan_graph_host", method=False)(meta)
    try:

        @op.impl("cuda")
        def _(self: Any, *, out: ConstOut[Any]) -> None:
            self.array.get()  # a copy to the host: a synchronisation
            out.array[...] = self.array

        x = dt.tensor(np.ones(3, np.float32), device="cuda")
        with pytest.raises(dt.PlanError, match=r"op 0 \(plan_graph_host\) cannot be captured"):
            dt.plan(lambda t: op.functional(t), x, cuda_graph=True)
    finally:
        library.remove_op("plan_graph_host")


def test_cuda_graph_needs_cuda_arguments_and_no_argument_returned(fake_cupy: ModuleType) -> None:
    with pytest.raises(dt.PlanError, match="CUDA device"):
        dt.plan(lambda t: t + 1, dt.tensor([1.0]), cuda_graph=True)
    x = dt.tensor([1.0], device="cuda")
    for step in (lambda t: t.add_(1.0), lambda t: t.unsqueeze(0)):
        with pytest.raises(dt.PlanError, match="cannot return an argument"):
            dt.plan(step, x, cuda_graph=True)
