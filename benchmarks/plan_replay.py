"""Per-step time of a small MLP SGD step (tests/test_plan.py's, batch 16): eager vs a dt.plan replay.

Run: ``python benchmarks/plan_replay.py``. Prints microseconds per step (best of 5 rounds of 2000 steps) and
the time to build the plan.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

import devtensor as dt
from devtensor import Tensor


def step(w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor, x: Tensor, y: Tensor, lr: float) -> Any:
    """One SGD step of ``softmax(relu(x @ w1 + b1) @ w2 + b2)`` on the mean cross-entropy; returns the loss."""
    pre = x @ w1 + b1
    h = pre.relu()
    logp = dt.log_softmax(h @ w2 + b2, dim=1)
    loss = -(logp * y).sum() / 16.0
    d_logits = (logp.exp() - y) / 16.0
    d_pre = (d_logits @ w2.T) * (pre > 0)
    w2.sub_(h.T @ d_logits, alpha=lr)
    b2.sub_(d_logits.sum(dim=0), alpha=lr)
    w1.sub_(x.T @ d_pre, alpha=lr)
    b1.sub_(d_pre.sum(dim=0), alpha=lr)
    return loss


def main() -> None:
    """Time eager and planned steps and print one line each."""
    rng = np.random.default_rng(0)
    args = [
        dt.tensor((rng.standard_normal((64, 32)) * 0.1).astype(np.float32)),
        dt.tensor(np.zeros(32, np.float32)),
        dt.tensor((rng.standard_normal((32, 10)) * 0.1).astype(np.float32)),
        dt.tensor(np.zeros(10, np.float32)),
        dt.tensor(rng.random((16, 64)).astype(np.float32)),
        dt.tensor(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)]),
    ]
    start = time.perf_counter()
    plan = dt.plan(step, *args, 0.01)
    build = time.perf_counter() - start
    runs: tuple[tuple[str, Callable[..., Any]], ...] = (("eager", step), ("planned", plan))
    for name, fn in runs:
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(2000):
                fn(*args, 0.01)
            best = min(best, (time.perf_counter() - start) / 2000)
        print(f"{name:8s} {best * 1e6:8.1f} us/step")
    print(f"plan build {build * 1e6:8.1f} us ({len(plan.records)} ops)")


if __name__ == "__main__":
    main()
