"""Per-call cost of two devtensor source trees side by side, in one process, beside NumPy.

Loads ``devtensor`` (and ``examples/train_digits.py``) once from each tree, keeps both module sets, and swaps
them into ``sys.modules`` before each timing (so imports done at call time resolve to the tree being timed).
Every round times each case for the first tree, the second tree and NumPy in turn (interleaved: a slow spell of
the machine hits all three alike); the best round is kept. Times are the process's CPU time
(``time.process_time``), so that on a machine shared with other work the time this process spends waiting for a
core is not counted; ``--wall`` times wall-clock time instead.

Run: ``python benchmarks/compare_trees.py BASE_TREE HEAD_TREE [--rounds 9]``, for example with a git worktree of
main as ``BASE_TREE`` and this checkout as ``HEAD_TREE``. Prints µs per call and the ratios to NumPy. The cases:
calls at 100 elements (10 x 10 matrices), the ops with a one-call NumPy equivalent at 1e6 elements (the names
ending in ``1e6``; 1000 x 1000 for the reductions) and the main job's epoch.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

Call = Callable[[], object]
NDArray = np.ndarray[Any, np.dtype[Any]]
_OURS = ("devtensor", "train_digits")


def _ours(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in _OURS)


def load(tree: Path) -> dict[str, ModuleType]:
    """devtensor and train_digits imported from ``tree``; returns their ``sys.modules`` entries."""
    for name in [n for n in sys.modules if _ours(n)]:
        del sys.modules[name]
    paths = [str(tree), str(tree / "examples")]
    sys.path[:0] = paths
    try:
        devtensor = importlib.import_module("devtensor")
        importlib.import_module("train_digits")
    finally:
        del sys.path[: len(paths)]
    if Path(devtensor.__file__ or "").resolve().parent.parent != tree.resolve():
        raise SystemExit(f"devtensor did not load from {tree}: {devtensor.__file__}")
    return {n: m for n, m in sys.modules.items() if _ours(n)}


def activate(modules: dict[str, ModuleType]) -> None:
    """Make ``modules`` the ones ``import devtensor...`` finds."""
    for name in [n for n in sys.modules if _ours(n)]:
        del sys.modules[name]
    sys.modules.update(modules)


def _np_softmax(x: NDArray) -> NDArray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    result: NDArray = e / e.sum(axis=1, keepdims=True)
    return result


def _np_log_softmax(x: NDArray) -> NDArray:
    s = x - x.max(axis=1, keepdims=True)
    result: NDArray = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
    return result


def _np_softmax_out(x: NDArray, o: NDArray) -> NDArray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    result: NDArray = np.divide(e, e.sum(axis=1, keepdims=True), out=o)
    return result


def _np_cross_entropy(x: NDArray, t: NDArray) -> float:
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    return float(np.mean(lse - x[np.arange(len(t)), t]))


class Data:
    """The operands, shared by both trees and NumPy."""

    def __init__(self) -> None:
        rng = np.random.default_rng(0)
        self.a = rng.standard_normal(100).astype(np.float32)
        self.b = rng.standard_normal(100).astype(np.float32)
        self.c = np.empty(100, np.float32)
        self.m = rng.standard_normal((10, 10)).astype(np.float32)
        self.logits = rng.standard_normal((32, 10)).astype(np.float32)
        self.target = rng.integers(0, 10, 32)
        self.bias = rng.standard_normal(10).astype(np.float32)
        # The 1e6-element cases: a vector pair, and a 1000 x 1000 matrix for the reductions.
        self.big_a = rng.standard_normal(10**6).astype(np.float32)
        self.big_b = rng.standard_normal(10**6).astype(np.float32)
        self.big_c = np.empty(10**6, np.float32)
        self.big_m = rng.standard_normal((1000, 1000)).astype(np.float32)


def numpy_cases(d: Data) -> dict[str, Call]:
    """The NumPy reference of each case."""
    a, b, c, m = d.a, d.b, d.c, d.m
    c2 = c.copy()
    o = np.empty((10, 10), np.float32)
    mask, row = np.empty(100, bool), np.empty(10, np.float32)
    return {
        "add": lambda: np.add(a, b),
        "add out=": lambda: np.add(a, b, out=c),
        "add_": lambda: np.add(c, b, out=c),
        "mul(a, 2.5)": lambda: np.multiply(a, 2.5),
        "exp": lambda: np.exp(a),
        "sub_(b, alpha=0.1)": lambda: np.subtract(c2, np.multiply(b, 0.1), out=c2),
        "sum(dim=0)": lambda: np.sum(m, axis=0),
        "amax(dim=1)": lambda: np.amax(m, axis=1),
        "softmax(dim=1)": lambda: _np_softmax(m),
        "cross_entropy": lambda: _np_cross_entropy(d.logits, d.target),
        "log_softmax(dim=1)": lambda: _np_log_softmax(m),
        "softmax(dim=1, out=)": lambda: _np_softmax_out(m, o),
        "matmul": lambda: np.matmul(m, m),
        "matmul(m.T, m)": lambda: np.matmul(m.T, m),
        "addmm": lambda: m @ m + d.bias,
        "gt(h, 0)": lambda: np.greater(a, 0),
        "h > 0": lambda: a > 0,
        "addmm out=": lambda: np.add(np.matmul(m, m, out=o), d.bias, out=o),
        "relu_": lambda: np.maximum(c2, 0, out=c2),
        "gt(h, 0, out=)": lambda: np.greater(a, 0, out=mask),
        "mul_(bool mask)": lambda: np.multiply(c2, mask, out=c2),
        "mul_(0.5)": lambda: np.multiply(c2, 0.5, out=c2),
        "sub(out=)": lambda: np.subtract(a, b, out=c),
        "sum(dim=0, out=)": lambda: np.sum(m, axis=0, out=row),
        "cat": lambda: np.concatenate([a, b]),
        "reshape": lambda: m.reshape(100),
        "transpose": lambda: m.transpose(1, 0),
        "add 1e6": lambda: np.add(d.big_a, d.big_b),
        "add out= 1e6": lambda: np.add(d.big_a, d.big_b, out=d.big_c),
        "mul(a, 2.5) 1e6": lambda: np.multiply(d.big_a, 2.5),
        "exp 1e6": lambda: np.exp(d.big_a),
        "sum(dim=0) 1e6": lambda: np.sum(d.big_m, axis=0),
        "amax(dim=1) 1e6": lambda: np.amax(d.big_m, axis=1),
        "cat 1e6": lambda: np.concatenate([d.big_a, d.big_b]),
    }


def devtensor_cases(dt: Any, d: Data) -> dict[str, Call]:
    """The devtensor calls of each case (on tensors sharing ``d``'s memory)."""
    ta, tb, tc, tm = dt.from_numpy(d.a), dt.from_numpy(d.b), dt.from_numpy(d.c), dt.from_numpy(d.m)
    tc2 = dt.from_numpy(d.c.copy())
    tl, tt, tbias = dt.from_numpy(d.logits), dt.from_numpy(d.target), dt.from_numpy(d.bias)
    to = dt.empty(10, 10, dtype=dt.float32)
    mask, row = dt.empty(100, dtype=dt.bool), dt.empty(10, dtype=dt.float32)
    big_a, big_b, big_c = dt.from_numpy(d.big_a), dt.from_numpy(d.big_b), dt.from_numpy(d.big_c)
    big_m = dt.from_numpy(d.big_m)
    return {
        "add": lambda: dt.add(ta, tb),
        "add out=": lambda: dt.add(ta, tb, out=tc),
        "add_": lambda: tc.add_(tb),
        "mul(a, 2.5)": lambda: dt.mul(ta, 2.5),
        "exp": lambda: dt.exp(ta),
        "sub_(b, alpha=0.1)": lambda: tc2.sub_(tb, alpha=0.1),
        "sum(dim=0)": lambda: dt.sum(tm, 0),
        "amax(dim=1)": lambda: dt.amax(tm, 1),
        "softmax(dim=1)": lambda: dt.softmax(tm, 1),
        "cross_entropy": lambda: dt.cross_entropy(tl, tt),
        "log_softmax(dim=1)": lambda: dt.log_softmax(tm, 1),
        "softmax(dim=1, out=)": lambda: dt.softmax(tm, 1, out=to),
        "matmul": lambda: dt.matmul(tm, tm),
        "matmul(m.T, m)": lambda: dt.matmul(tm.T, tm),
        "addmm": lambda: dt.addmm(tbias, tm, tm),
        "gt(h, 0)": lambda: dt.gt(ta, 0),
        "h > 0": lambda: ta > 0,
        "addmm out=": lambda: dt.addmm(tbias, tm, tm, out=to),
        "relu_": lambda: tc2.relu_(),
        "gt(h, 0, out=)": lambda: dt.gt(ta, 0, out=mask),
        "mul_(bool mask)": lambda: tc2.mul_(mask),
        "mul_(0.5)": lambda: tc2.mul_(0.5),
        "sub(out=)": lambda: dt.sub(ta, tb, out=tc),
        "sum(dim=0, out=)": lambda: dt.sum(tm, 0, out=row),
        "cat": lambda: dt.cat([ta, tb]),
        "reshape": lambda: tm.reshape(100),
        "transpose": lambda: tm.transpose(0, 1),
        "add 1e6": lambda: dt.add(big_a, big_b),
        "add out= 1e6": lambda: dt.add(big_a, big_b, out=big_c),
        "mul(a, 2.5) 1e6": lambda: dt.mul(big_a, 2.5),
        "exp 1e6": lambda: dt.exp(big_a),
        "sum(dim=0) 1e6": lambda: dt.sum(big_m, 0),
        "amax(dim=1) 1e6": lambda: dt.amax(big_m, 1),
        "cat 1e6": lambda: dt.cat([big_a, big_b]),
    }


def main_job(td: Any) -> tuple[Call, Call]:
    """(devtensor epoch, NumPy epoch) of examples/train_digits.py as that tree has it."""
    data = td.load_data(0)
    cfg = td.Config(epochs=1)
    weights = td.init_weights(cfg, data.x_train.shape[1], 10)
    model = td.DevtensorMLP(cfg, data, weights, "cpu")
    ref = td.NumpyMLP(cfg, data, weights)
    order = td.batch_order(cfg, len(model.batches), 0)
    return (lambda: model.epoch(order)), (lambda: ref.epoch(order))


_TIMER: list[Callable[[], float]] = [time.process_time]


def _number(fn: Call, budget: float) -> int:
    for _ in range(3):
        fn()
    start = time.perf_counter()
    fn()
    return max(1, min(100_000, int(budget / max(time.perf_counter() - start, 1e-7))))


def compare(
    base: Path, head: Path, rounds: int, budget: float, only: str = ""
) -> list[tuple[str, float, float, float]]:
    """(case, base µs, head µs, NumPy µs) per case whose name contains ``only`` (all by default), the main job
    last (µs per epoch)."""
    d = Data()
    trees = []
    for tree in (base, head):
        modules = load(tree)
        cases = devtensor_cases(modules["devtensor"], d)
        try:
            cases["main job / epoch"], np_epoch = main_job(modules["train_digits"])
        except ImportError:  # (no scikit-learn)
            np_epoch = None
        trees.append((modules, cases))
    ref = numpy_cases(d)
    if np_epoch is not None:
        ref["main job / epoch"] = np_epoch
    rows = []
    for name in trees[1][1]:
        if name not in trees[0][1] or only not in name:
            continue
        calls: list[tuple[dict[str, ModuleType] | None, Call]] = [(m, c[name]) for m, c in trees]
        calls.append((None, ref[name]))
        numbers = []
        for mods, fn in calls:
            if mods is not None:
                activate(mods)
            numbers.append(_number(fn, budget * (5 if name.startswith("main") else 1)))
        best = [float("inf")] * len(calls)
        for _ in range(rounds):
            for i, (mods, fn) in enumerate(calls):
                if mods is not None:
                    activate(mods)
                best[i] = min(best[i], timeit.Timer(fn, timer=_TIMER[0]).timeit(numbers[i]) / numbers[i])
        rows.append((name, best[0] * 1e6, best[1] * 1e6, best[2] * 1e6))
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("base", type=Path)
    parser.add_argument("head", type=Path)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--budget", type=float, default=0.02, help="seconds per timing (default 0.02)")
    parser.add_argument("--only", default="", help="only the cases whose name contains this text")
    parser.add_argument("--wall", action="store_true", help="time wall-clock time, not CPU time")
    args = parser.parse_args(argv)
    if args.wall:
        _TIMER[0] = time.perf_counter
    rows = compare(args.base, args.head, args.rounds, args.budget, args.only)
    print(f"{'call':20} | {'base µs':>9} | {'head µs':>9} | {'NumPy µs':>9} | base/NumPy | head/NumPy")
    print(f"{'-' * 20}-|-{'-' * 9}-|-{'-' * 9}-|-{'-' * 9}-|------------|-----------")
    for name, x, y, z in rows:
        print(f"{name:20} | {x:9.2f} | {y:9.2f} | {z:9.2f} | {x / z:9.2f}x | {y / z:9.2f}x")


if __name__ == "__main__":
    main()
