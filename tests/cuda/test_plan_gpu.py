"""Static plans on a real GPU: a plan replays a training step on CUDA tensors bit for bit as eager, directly and
as a CUDA graph (CuPy stream capture). Marked ``cuda``: skipped where no GPU (or no CuPy) is present."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

import devtensor as dt
from devtensor import Tensor

pytestmark = pytest.mark.cuda


@pytest.fixture
def cp() -> ModuleType:
    """The real ``cupy`` module."""
    module: ModuleType = pytest.importorskip("cupy")
    return module


def _step(w: Tensor, x: Tensor, lr: float) -> Tensor:
    h = (x @ w).relu()
    loss = (h * h).sum()
    w.sub_(lr * (x.T @ h))
    return loss


@pytest.mark.parametrize("cuda_graph", [False, True])
def test_a_plan_on_cuda_replays_as_eager(cp: ModuleType, cuda_graph: bool) -> None:
    rng = np.random.default_rng(0)
    w = dt.tensor(rng.standard_normal((64, 32)).astype(np.float32), device="cuda")
    w_eager = w.clone()
    plan = dt.plan(_step, w, dt.empty(16, 64, device="cuda"), 0.01, cuda_graph=cuda_graph)
    for seed in range(3):
        x = dt.tensor(np.random.default_rng(seed).standard_normal((16, 64)).astype(np.float32), device="cuda")
        got = plan(w, x, 0.01)
        want = _step(w_eager, x, 0.01)
        assert got.cpu().numpy().tobytes() == want.cpu().numpy().tobytes()
        assert w.cpu().numpy().tobytes() == w_eager.cpu().numpy().tobytes()
