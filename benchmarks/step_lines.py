"""Where the main job's eager step spends its time: each line of ``DevtensorMLP.step`` (examples/train_digits.py)
timed inside the running step, beside the same line of ``NumpyMLP.step``, over whole epochs, interleaved, best
of several rounds. A line timed alone runs with warm caches; inside the step every op costs more, on both sides,
so this is the breakdown that adds up to the per-epoch ratio.

With ``--functional``, the same for ``functional_step`` beside ``numpy_functional_step`` (a new tensor per op, the
weights rebound each step).

Run: ``python benchmarks/step_lines.py`` (``--rounds N``, ``--functional``). Prints µs per step for each line
(devtensor, NumPy, ratio, difference) and the totals. The lines mirror the step functions; keep them in step with
those.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
td: Any = importlib.import_module("train_digits")  # (the example, beside the benchmarks)
from report import functional_batches  # noqa: E402  # (the sibling script)

LINES = (
    "addmm (hidden)",
    "relu_",
    "addmm (logits)",
    "softmax + loss",
    "sub, mul_ (dlogits)",
    "mm + sum (dw2, db2)",
    "mm (dh)",
    "gt, mul_ (mask)",
    "mm (dw1)",
    "sum (db1)",
    "4 x sub_(alpha=lr)",
    "float(loss)",
)


FUNCTIONAL_LINES = (
    "relu(addmm) (hidden)",
    "addmm (logits)",
    "log_softmax",
    "loss (mul, sum, mul)",
    "dlogits (exp, sub, mul)",
    "dh (mm, .T, gt, mul)",
    "w1 (.T, mm, mul, sub)",
    "b1 (sum, mul, sub)",
    "w2 (.T, mm, mul, sub)",
    "b2 (sum, mul, sub)",
    "float(loss)",
)


def _add(times: list[float], stamps: tuple[float, ...]) -> None:
    """Each line's seconds (the difference of consecutive clock readings) added to ``times``."""
    for k in range(len(stamps) - 1):
        times[k] += stamps[k + 1] - stamps[k]


def devtensor_epoch(m: Any, order: list[int], times: list[float]) -> None:
    """One epoch of ``DevtensorMLP.step``'s lines, each line's seconds added to ``times``."""
    clock = time.perf_counter
    lr, inv_b = m.cfg.lr, 1.0 / m.cfg.batch
    for i in order:
        xb, xb_t, yb, yb1h = m.batches[i]
        t0 = clock()
        dt.addmm(m.b1, xb, m.w1, out=m.h)
        t1 = clock()
        m.h.relu_()
        t2 = clock()
        dt.addmm(m.b2, m.h, m.w2, out=m.logits)
        t3 = clock()
        dt.softmax(m.logits, 1, out=m.probs)
        dt.cross_entropy(m.logits, yb, out=m.loss)
        t4 = clock()
        dt.sub(m.probs, yb1h, out=m.dlogits).mul_(inv_b)
        t5 = clock()
        dt.mm(m.h_t, m.dlogits, out=m.dw2)
        dt.sum(m.dlogits, 0, out=m.db2)
        t6 = clock()
        dt.mm(m.dlogits, m.w2_t, out=m.dh)
        t7 = clock()
        dt.gt(m.h, 0, out=m.mask)
        m.dh.mul_(m.mask)
        t8 = clock()
        dt.mm(xb_t, m.dh, out=m.dw1)
        t9 = clock()
        dt.sum(m.dh, 0, out=m.db1)
        t10 = clock()
        m.w1.sub_(m.dw1, alpha=lr)
        m.b1.sub_(m.db1, alpha=lr)
        m.w2.sub_(m.dw2, alpha=lr)
        m.b2.sub_(m.db2, alpha=lr)
        t11 = clock()
        float(m.loss)
        t12 = clock()
        _add(times, (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12))


def numpy_epoch(n: Any, order: list[int], times: list[float]) -> None:
    """One epoch of ``NumpyMLP.step``'s lines, grouped as :func:`devtensor_epoch`'s."""
    clock = time.perf_counter
    lr, inv_b = n.cfg.lr, 1.0 / n.cfg.batch
    for i in order:
        xb, xb_t, yb, yb1h = n.batches[i]
        t0 = clock()
        np.matmul(xb, n.w1, out=n.h)
        n.h += n.b1
        t1 = clock()
        np.maximum(n.h, 0, out=n.h)
        t2 = clock()
        np.matmul(n.h, n.w2, out=n.logits)
        n.logits += n.b2
        t3 = clock()
        np.max(n.logits, axis=1, keepdims=True, out=n.rowmax)
        np.subtract(n.logits, n.rowmax, out=n.probs)
        np.exp(n.probs, out=n.probs)
        np.sum(n.probs, axis=1, keepdims=True, out=n.rowsum)
        loss: Any = np.mean(np.log(n.rowsum[:, 0]) + n.rowmax[:, 0] - n.logits[np.arange(len(yb)), yb])
        n.probs /= n.rowsum
        t4 = clock()
        np.subtract(n.probs, yb1h, out=n.dlogits)
        n.dlogits *= inv_b
        t5 = clock()
        np.matmul(n.h.T, n.dlogits, out=n.dw2)
        np.sum(n.dlogits, axis=0, out=n.db2)
        t6 = clock()
        np.matmul(n.dlogits, n.w2.T, out=n.dh)
        t7 = clock()
        np.greater(n.h, 0, out=n.mask)
        n.dh *= n.mask
        t8 = clock()
        np.matmul(xb_t, n.dh, out=n.dw1)
        t9 = clock()
        np.sum(n.dh, axis=0, out=n.db1)
        t10 = clock()
        n.w1 -= lr * n.dw1
        n.b1 -= lr * n.db1
        n.w2 -= lr * n.dw2
        n.b2 -= lr * n.db2
        t11 = clock()
        float(loss)
        t12 = clock()
        _add(times, (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12))


def functional_epoch(step_data: Any, order: list[int], times: list[float], weights: list[Any]) -> None:
    """One epoch of the lines of ``td.functional_step`` on devtensor tensors, or, with ``numpy`` (the last item of
    ``step_data``: batches, lr, 1/batch, numpy), of ``td.numpy_functional_step`` on NumPy arrays; each line's
    seconds added to ``times``, ``weights`` rebound to the epoch's last."""
    clock = time.perf_counter
    batches, lr, inv_b, numpy = step_data
    w1, b1, w2, b2 = weights
    for i in order:
        xb, yb1h = batches[i]
        t0 = clock()
        h: Any = np.maximum(xb @ w1 + b1, 0) if numpy else dt.relu(dt.addmm(b1, xb, w1))
        t1 = clock()
        logits: Any = h @ w2 + b2 if numpy else dt.addmm(b2, h, w2)
        t2 = clock()
        if numpy:
            shifted = logits - logits.max(axis=1, keepdims=True)
            logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        else:
            logp = dt.log_softmax(logits, 1)
        t3 = clock()
        loss = (logp * yb1h).sum() * -inv_b
        t4 = clock()
        dlogits = ((np.exp(logp) if numpy else logp.exp()) - yb1h) * inv_b
        t5 = clock()
        dh = (dlogits @ w2.T) * (h > 0)
        t6 = clock()
        w1 = w1 - lr * (xb.T @ dh)
        t7 = clock()
        b1 = b1 - lr * dh.sum(0)
        t8 = clock()
        w2 = w2 - lr * (h.T @ dlogits)
        t9 = clock()
        b2 = b2 - lr * dlogits.sum(0)
        t10 = clock()
        float(loss)
        t11 = clock()
        _add(times, (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11))
    weights[:] = [w1, b1, w2, b2]


def _functional(cfg: Any, data: Any, weights: dict[str, Any], rounds: int) -> tuple[list[float], list[float], int]:
    """Best seconds per line over ``rounds`` interleaved epochs of both functional steps, and the steps an epoch."""
    lr, inv_b = cfg.lr, 1.0 / cfg.batch
    np_batches, dt_batches = functional_batches(cfg, data)
    names = ("w1", "b1", "w2", "b2")
    np_w, dt_w = [weights[k].copy() for k in names], [dt.tensor(weights[k]) for k in names]
    order = list(range(len(np_batches)))
    best_d, best_n = _best_of(
        lambda times: functional_epoch((dt_batches, lr, inv_b, False), order, times, dt_w),
        lambda times: functional_epoch((np_batches, lr, inv_b, True), order, times, np_w),
        len(FUNCTIONAL_LINES),
        rounds,
    )
    return best_d, best_n, len(order)


def _best_of(
    devtensor: Callable[[list[float]], None], numpy: Callable[[list[float]], None], lines: int, rounds: int
) -> tuple[list[float], list[float]]:
    """Each line's best seconds over ``rounds`` rounds, each round running one epoch of ``devtensor`` then one of
    ``numpy`` (each adds its lines' seconds to the list it is given)."""
    best_d, best_n = [float("inf")] * lines, [float("inf")] * lines
    for _ in range(rounds):
        times = [0.0] * lines
        devtensor(times)
        best_d = [min(b, t) for b, t in zip(best_d, times, strict=True)]
        times = [0.0] * lines
        numpy(times)
        best_n = [min(b, t) for b, t in zip(best_n, times, strict=True)]
    return best_d, best_n


def main() -> None:
    """Time both steps line by line and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--functional", action="store_true", help="the functional-style step instead")
    args = parser.parse_args()
    cfg = td.Config(epochs=1)
    data = td.load_data(0)
    weights = td.init_weights(cfg, data.x_train.shape[1], 10)
    lines = FUNCTIONAL_LINES if args.functional else LINES
    if args.functional:
        best_d, best_n, steps = _functional(cfg, data, weights, args.rounds)
    else:
        m = td.DevtensorMLP(cfg, data, weights, "cpu")
        n = td.NumpyMLP(cfg, data, weights)
        order = list(range(len(m.batches)))
        steps = len(order)
        best_d, best_n = _best_of(
            lambda times: devtensor_epoch(m, order, times),
            lambda times: numpy_epoch(n, order, times),
            len(LINES),
            args.rounds,
        )
    per_step = 1e6 / steps
    print(f"{'line':24s} {'devtensor µs':>13s} {'NumPy µs':>9s} {'ratio':>6s} {'diff µs':>8s}")
    for name, d, v in zip(lines, best_d, best_n, strict=True):
        print(f"{name:24s} {d * per_step:13.2f} {v * per_step:9.2f} {d / v:5.2f}x {(d - v) * per_step:8.2f}")
    total_d, total_n = sum(best_d), sum(best_n)
    print(f"{'step':24s} {total_d * per_step:13.2f} {total_n * per_step:9.2f} {total_d / total_n:5.2f}x")


if __name__ == "__main__":
    main()
