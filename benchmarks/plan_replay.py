"""Static plans against eager calls and NumPy, in one process, interleaved, best of several rounds.

Run: ``python benchmarks/plan_replay.py`` (``--rounds N``). Prints:

- the main job's step (examples/train_digits.py's plain :func:`train_step`, batch 32, hidden 128) per epoch:
  replayed through a plan, run eagerly, and the NumPy reference with preallocated buffers;
- the cost of building that plan, in eager steps;
- a chain of 20 elementwise multiplies at 100 float32 elements, per op: replayed, eager, and bare NumPy calls
  into preallocated outputs;
- the plan's memory beside the eager step's peak of live results.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import devtensor as dt
from devtensor import Tensor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def _best(fns: dict[str, Callable[[], Any]], rounds: int, number: int) -> dict[str, float]:
    """Seconds per call of each function: the best of ``rounds`` rounds of ``number`` calls, rounds interleaved."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def main_job(rounds: int) -> None:
    """The digits step per epoch: plan, eager, NumPy; the plan's build cost and memory."""
    td: Any = importlib.import_module("train_digits")
    cfg = td.Config(epochs=1)
    data = td.load_data(cfg.seed)
    weights = td.init_weights(cfg, data.x_train.shape[1], 10)
    planned = td.PlainMLP(cfg, data, weights, "cpu", planned=True)
    eager = td.PlainMLP(cfg, data, weights, "cpu", planned=False)
    ref = td.NumpyMLP(cfg, data, weights)
    order = td.batch_order(cfg, len(ref.batches), 0)
    for model in (planned, eager, ref):
        model.epoch(order)
    best = _best(
        {"plan": lambda: planned.epoch(order), "eager": lambda: eager.epoch(order), "numpy": lambda: ref.epoch(order)},
        rounds,
        1,
    )
    numpy_s = best["numpy"]
    print("main job (examples/train_digits.py's train_step), ms per epoch:")
    for name, seconds in best.items():
        print(f"  {name:6s} {seconds * 1e3:8.2f} ms  {seconds / numpy_s:5.2f}x NumPy")
    xb, _, _, yb1h = planned.batches[0]
    args = (planned.w1, planned.b1, planned.w2, planned.b2, xb, yb1h, cfg.lr, 1.0 / cfg.batch)
    code_cache = sys.modules["devtensor.plan.replay"]._CODE

    def cold_build() -> None:
        code_cache.clear()  # a first plan of the step: its replay's source compiled, not found in the cache
        dt.plan(td.train_step, *args)

    fns = {"build": cold_build, "rebuild": lambda: dt.plan(td.train_step, *args), "step": lambda: td.train_step(*args)}
    build = _best(fns, rounds, 3)
    print(
        f"  building the plan: {build['build'] * 1e3:.2f} ms = {build['build'] / build['step']:.1f} eager steps "
        f"({build['rebuild'] / build['step']:.1f} when its compiled replay is cached: another signature)"
    )
    plan = dt.plan(td.train_step, *args)
    print(f"  plan memory {plan.memory_bytes} bytes, eager peak of live results {plan.peak_bytes_eager} bytes")


def elementwise(rounds: int) -> None:
    """Per op of a chain of 20 multiplies at 100 float32 elements: plan replay, eager, bare NumPy."""
    n = 20

    def chain(a: Tensor, b: Tensor) -> Tensor:
        for _ in range(n):
            a = a * b
        return a

    a = dt.tensor(np.random.default_rng(0).random(100, np.float32))
    b = dt.tensor(np.ones(100, np.float32))
    plan = dt.plan(chain, a, b)
    na, nb = a.numpy(), b.numpy()
    outs = [np.empty(100, np.float32) for _ in range(n)]

    def bare() -> None:
        x = na
        for out in outs:
            np.multiply(x, nb, out=out)
            x = out

    best = _best({"plan": lambda: plan(a, b), "eager": lambda: chain(a, b), "numpy": bare}, rounds, 200)
    print("elementwise multiply, 100 float32 elements, per op (chain of 20):")
    for name, seconds in best.items():
        print(f"  {name:6s} {seconds / n * 1e9:8.0f} ns  {seconds / best['numpy']:5.2f}x NumPy")


def main() -> None:
    """Run both measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    main_job(rounds)
    elementwise(rounds)


if __name__ == "__main__":
    main()
