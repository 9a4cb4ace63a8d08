"""Static plans against eager calls and NumPy, in one process, interleaved, best of several rounds.

Run: ``python benchmarks/plan_replay.py`` (``--rounds N``). Prints:

- the main job's step (examples/train_digits.py's plain :func:`train_step`, batch 32, hidden 128) per epoch:
  replayed through a plan, run eagerly, and the NumPy reference with preallocated buffers;
- a two-layer tanh net's training step with weight decay (addmm, tanh, cross_entropy, softmax, mm of transposed
  views, sum, ``sub_(..., alpha=)``), batch 32, 64 -> 128 -> 10: plan, eager, and NumPy with preallocated buffers
  (the same work as hand-written ``out=`` calls); its plan's build cost and memory;
- a 1-d heat stencil step at N = 1001 (``add(u[2:], u[:-2], out=lap)``, ``sub(lap, u[1:-1], alpha=2.0, out=lap)``,
  ``mul``, ``add(..., out=un[1:-1])``): plan, eager, NumPy with ``out=`` buffers;
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
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import devtensor as dt
from devtensor import Tensor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def _best(
    fns: dict[str, Callable[[], Any]], rounds: int, number: int, clock: Callable[[], float] = time.perf_counter
) -> dict[str, float]:
    """Seconds per call of each function: the best of ``rounds`` rounds of ``number`` calls, rounds interleaved,
    timed by ``clock`` (wall time by default; :func:`time.process_time` for the process's CPU time)."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            start = clock()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (clock() - start) / number)
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


def tanh_step(
    w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor, x: Tensor, y: Tensor, onehot: Tensor, lr: float, wd: float
) -> Tensor:
    """One SGD step with weight decay of a two-layer tanh net (``x`` [B, D], ``y`` int64 classes [B], ``onehot``
    [B, C]); updates the weights in place and returns the mean cross-entropy (0-d)."""
    h = dt.tanh(dt.addmm(b1, x, w1))
    logits = dt.addmm(b2, h, w2)
    loss = dt.cross_entropy(logits, y)
    dlogits = (dt.softmax(logits, 1) - onehot) * (1.0 / x.shape[0])
    dh = dt.mm(dlogits, w2.T) * (1.0 - h * h)
    w2.sub_(dt.mm(h.T, dlogits) + w2 * wd, alpha=lr)
    b2.sub_(dlogits.sum(0), alpha=lr)
    w1.sub_(dt.mm(x.T, dh) + w1 * wd, alpha=lr)
    b1.sub_(dh.sum(0), alpha=lr)
    return loss


class TanhNumpy:
    """:func:`tanh_step` in NumPy with every result preallocated (``out=`` calls; the same work)."""

    def __init__(self, w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any, onehot: Any) -> None:
        self.w1, self.b1, self.w2, self.b2, self.x, self.y, self.onehot = w1, b1, w2, b2, x, y, onehot
        n, d = x.shape
        hidden, c = w2.shape
        f = x.dtype
        self.h = np.empty((n, hidden), f)
        self.logits = np.empty((n, c), f)
        self.e = np.empty((n, c), f)
        self.m = np.empty((n, 1), f)
        self.s = np.empty((n, 1), f)
        self.p = np.empty((n, c), f)
        self.dh = np.empty((n, hidden), f)
        self.t = np.empty((n, hidden), f)
        self.g1 = np.empty((d, hidden), f)
        self.g2 = np.empty((hidden, c), f)
        self.wd1 = np.empty((d, hidden), f)
        self.wd2 = np.empty((hidden, c), f)
        self.db1 = np.empty(hidden, f)
        self.db2 = np.empty(c, f)
        self.rows = np.arange(n)

    def step(self, lr: float, wd: float) -> Any:
        """One step; returns the loss (a NumPy scalar)."""
        x, h, logits, e, m, s, p = self.x, self.h, self.logits, self.e, self.m, self.s, self.p
        n = x.shape[0]
        np.matmul(x, self.w1, out=h)
        np.add(h, self.b1, out=h)
        np.tanh(h, out=h)
        np.matmul(h, self.w2, out=logits)
        np.add(logits, self.b2, out=logits)
        # cross_entropy
        np.maximum.reduce(logits, axis=1, keepdims=True, out=m)
        np.subtract(logits, m, out=e)
        np.exp(e, out=e)
        np.add.reduce(e, axis=1, keepdims=True, out=s)
        np.log(s, out=s)
        np.add(s, m, out=s)
        loss = (s[:, 0] - logits[self.rows, self.y]).sum() / n
        # softmax (its own row maxima, as the step's softmax computes them)
        np.maximum.reduce(logits, axis=1, keepdims=True, out=m)
        np.subtract(logits, m, out=p)
        np.exp(p, out=p)
        np.add.reduce(p, axis=1, keepdims=True, out=s)
        np.divide(p, s, out=p)
        np.subtract(p, self.onehot, out=p)
        np.multiply(p, 1.0 / n, out=p)
        np.matmul(p, self.w2.T, out=self.dh)
        np.multiply(h, h, out=self.t)
        np.subtract(1.0, self.t, out=self.t)
        np.multiply(self.dh, self.t, out=self.dh)
        np.matmul(h.T, p, out=self.g2)
        np.multiply(self.w2, wd, out=self.wd2)
        np.add(self.g2, self.wd2, out=self.g2)
        np.multiply(self.g2, lr, out=self.g2)
        np.subtract(self.w2, self.g2, out=self.w2)
        np.add.reduce(p, axis=0, out=self.db2)
        np.multiply(self.db2, lr, out=self.db2)
        np.subtract(self.b2, self.db2, out=self.b2)
        np.matmul(x.T, self.dh, out=self.g1)
        np.multiply(self.w1, wd, out=self.wd1)
        np.add(self.g1, self.wd1, out=self.g1)
        np.multiply(self.g1, lr, out=self.g1)
        np.subtract(self.w1, self.g1, out=self.w1)
        np.add.reduce(self.dh, axis=0, out=self.db1)
        np.multiply(self.db1, lr, out=self.db1)
        np.subtract(self.b1, self.db1, out=self.b1)
        return loss


def tanh_net(rounds: int) -> dict[str, float]:
    """The tanh net's step: plan, eager, NumPy with buffers (per step), build cost, memory."""
    rng = np.random.default_rng(1)
    n, d, hidden, c = 32, 64, 128, 10
    w = [
        (rng.standard_normal((d, hidden)) * 0.1).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, c)) * 0.1).astype(np.float32),
        np.zeros(c, np.float32),
    ]
    xs = rng.standard_normal((n, d)).astype(np.float32)
    ys = rng.integers(0, c, n)
    onehot = np.zeros((n, c), np.float32)
    onehot[np.arange(n), ys] = 1.0
    lr, wd = 0.05, 1e-4
    x, y, oh = dt.tensor(xs), dt.tensor(ys), dt.tensor(onehot)
    p1, pb1, p2, pb2 = (dt.tensor(a.copy()) for a in w)
    e1, eb1, e2, eb2 = (dt.tensor(a.copy()) for a in w)
    args = (p1, pb1, p2, pb2, x, y, oh, lr, wd)
    eager_args = (e1, eb1, e2, eb2, x, y, oh, lr, wd)
    plan = dt.plan(tanh_step, *args)
    ref = TanhNumpy(w[0].copy(), w[1].copy(), w[2].copy(), w[3].copy(), xs, ys, onehot)
    best = _best(
        {"plan": lambda: plan(*args), "eager": lambda: tanh_step(*eager_args), "numpy": lambda: ref.step(lr, wd)},
        rounds,
        50,
    )
    print("two-layer tanh net with weight decay (batch 32, 64-128-10 float32), us per step:")
    for name, seconds in best.items():
        print(f"  {name:6s} {seconds * 1e6:8.1f} us  {seconds / best['numpy']:5.2f}x NumPy with buffers")
    build = _best(
        {"build": lambda: dt.plan(tanh_step, *args), "step": lambda: tanh_step(*eager_args)},
        max(3, rounds // 5),
        3,
    )
    print(
        f"  building the plan: {build['build'] * 1e3:.2f} ms = {build['build'] / build['step']:.1f} eager steps; "
        f"plan memory {plan.memory_bytes} bytes, eager peak of live results {plan.peak_bytes_eager} bytes"
    )
    return {k: v / best["numpy"] for k, v in best.items()}


def heat_step(u: Tensor, un: Tensor, lap: Tensor, k: float) -> None:
    """One explicit step of the 1-d heat equation: ``un[1:-1] = u[1:-1] + k * (u[2:] - 2 u[1:-1] + u[:-2])``."""
    dt.add(u[2:], u[:-2], out=lap)
    dt.sub(lap, u[1:-1], alpha=2.0, out=lap)
    dt.mul(lap, k, out=lap)
    dt.add(u[1:-1], lap, out=un[1:-1])


def stencil(rounds: int) -> dict[str, float]:
    """The heat stencil step at N = 1001: plan, eager, NumPy with ``out=`` buffers (per step)."""
    n = 1001
    u0 = np.sin(np.linspace(0.0, np.pi, n))
    u, un, lap = dt.tensor(u0), dt.tensor(np.zeros(n)), dt.tensor(np.zeros(n - 2))
    nu, nun, nlap, tmp = u0.copy(), np.zeros(n), np.zeros(n - 2), np.zeros(n - 2)
    k = 0.25
    plan = dt.plan(heat_step, u, un, lap, k)

    def numpy_step() -> None:
        np.add(nu[2:], nu[:-2], out=nlap)
        np.multiply(nu[1:-1], 2.0, out=tmp)
        np.subtract(nlap, tmp, out=nlap)
        np.multiply(nlap, k, out=nlap)
        np.add(nu[1:-1], nlap, out=nun[1:-1])

    best = _best(
        {"plan": lambda: plan(u, un, lap, k), "eager": lambda: heat_step(u, un, lap, k), "numpy": numpy_step},
        rounds,
        200,
    )
    print("1-d heat stencil step, N = 1001 float64, us per step:")
    for name, seconds in best.items():
        print(f"  {name:6s} {seconds * 1e6:8.2f} us  {seconds / best['numpy']:5.2f}x NumPy with out= buffers")
    return {k_: v / best["numpy"] for k_, v in best.items()}


def one_op_steps() -> Iterator[tuple[str, int, Any, tuple[Any, ...]]]:
    """(op name, sample index, step, arguments) for the first two op samples of tests/op_samples.py of each
    deterministic, data-independent op with a functional variant and a tensor positional argument: the step calls
    the op's functional with the sample's keywords. Warnings are ignored from the first step on."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    op_samples: Any = importlib.import_module("op_samples")
    ops = op_samples.builtin_ops()
    import warnings

    warnings.simplefilter("ignore")
    for name in sorted(op_samples.OPS):
        op = ops.get(name)
        if op is None or getattr(op, "nondeterministic", False) or getattr(op, "data_dependent", False):
            continue
        functional = getattr(op, "functional", None)
        if functional is None:
            continue
        for index, sample in enumerate(op_samples.OPS[name].samples[:2]):
            args, kwargs = sample.make("cpu")
            if not any(isinstance(a, Tensor) for a in args):
                continue

            def step(*a: Any, fn: Any = functional, kw: Any = kwargs) -> Any:
                return fn(*a, **kw)

            yield name, index, step, tuple(args)


def samples(rounds: int, show: int = 8) -> None:
    """Each op sample of tests/op_samples.py (its first two per op) as a one-op step: ``dt.planned`` and
    ``dt.plan`` (warm) against the eager call, best of ``rounds`` rounds of 20 calls, interleaved, in the
    process's CPU time (the shared machine's other work moves wall time); prints the medians, how many are slower
    than eager by over 5%, and the ``show`` slowest of those."""
    ratios: list[tuple[float, float, str]] = []
    for name, _, step, args in one_op_steps():
        try:
            step(*args)
            plan = dt.plan(step, *args)
            plan(*args)
            fast = dt.planned(step)
            fast(*args)
        except Exception:
            continue
        best = _best(
            {"eager": partial(step, *args), "plan": partial(plan, *args), "planned": partial(fast, *args)},
            rounds,
            20,
            time.process_time,
        )
        ratios.append((best["planned"] / best["eager"], best["plan"] / best["eager"], name))
    planned = sorted(r[0] for r in ratios)
    plain = sorted(r[1] for r in ratios)
    slower = [r for r in ratios if r[0] > 1.05]
    print(f"one-op steps of the op samples ({len(ratios)} samples), time / eager's:")
    print(f"  dt.planned median {planned[len(planned) // 2]:.2f}x, slower than eager by over 5%: {len(slower)}")
    print(
        f"  dt.plan    median {plain[len(plain) // 2]:.2f}x, slower than eager by over 5%: "
        f"{sum(r[1] > 1.05 for r in ratios)}"
    )
    for ratio, plain_ratio, name in sorted(slower, reverse=True)[:show]:
        print(f"    {name}: planned {ratio:.2f}x, plan {plain_ratio:.2f}x")


def main() -> None:
    """Run the measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--sample-rounds", type=int, default=None, help="rounds per op sample (default rounds // 5)")
    parser.add_argument("--show", type=int, default=8, help="how many of the slower op samples to name")
    parser.add_argument("--only", choices=["main", "tanh", "stencil", "elementwise", "samples"], default=None)
    options = parser.parse_args()
    rounds = options.rounds
    if options.only in (None, "main"):
        main_job(rounds)
    if options.only in (None, "tanh"):
        tanh_net(rounds)
    if options.only in (None, "stencil"):
        stencil(rounds)
    if options.only in (None, "elementwise"):
        elementwise(rounds)
    if options.only in (None, "samples"):
        samples(options.sample_rounds or max(3, rounds // 5), options.show)


if __name__ == "__main__":
    main()
