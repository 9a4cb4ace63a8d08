"""Per-call time of common small ops beside the NumPy call doing the same work, measured in one process.

For each op (float32, 100 elements or 10x10) it prints devtensor's time per call through the published fronts (the
compiled core's lanes where it is built), through the Python fronts behind them (what ``DEVTENSOR_PURE_PYTHON=1``
runs), NumPy's, and the ratios. Rounds are interleaved (each round times every column once); a column's time is the
best round's, in microseconds per call. The ratios are what the per-call-cost work tracks; absolute times vary with
the machine.

Run: ``python benchmarks/per_call.py [--repeat 7] [--number 20000]``.
"""

from __future__ import annotations

import argparse
import inspect
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import devtensor as dt


def best(fn: Callable[[], object], number: int, repeat: int) -> float:
    """Best microseconds per call of ``fn`` over ``repeat`` runs of ``number`` calls, in CPU time (the process's:
    steadier than wall time on a busy machine, where other processes take the cores between calls)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time)) / number * 1e6


def _cross_entropy(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> Any:
    shifted = x - x.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(y)), y].mean()


def _softmax(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    result: np.ndarray[Any, Any] = e / e.sum(axis=1, keepdims=True)
    return result


def python_front(fn: Any) -> Any:
    """The Python front behind a published front (itself without the compiled core)."""
    return inspect.unwrap(fn)


def cases(
    front: Callable[[Any], Any] = lambda fn: fn,
) -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    """(name, devtensor call, NumPy call) for each measured op; both work on the same memory. ``front`` maps each
    published front to the one to call (:func:`python_front`: the Python fronts)."""
    rng = np.random.default_rng(0)
    a = np.full(100, 0.5, np.float32)
    b = np.ones(100, np.float32)
    c = np.empty(100, np.float32)
    m = rng.standard_normal((10, 10)).astype(np.float32)
    ta, tb, tc, tm = dt.from_numpy(a), dt.from_numpy(b), dt.from_numpy(c), dt.from_numpy(m)
    # NumPy operands (the fronts' NumPy-values path; the typing stubs take tensors and Python numbers only)
    two: Any = np.float32(2)
    b_any: Any = b
    add, add_, exp, neg_, mul, rmul = (
        front(f) for f in (dt.add, dt.Tensor.add_, dt.exp, dt.Tensor.neg_, dt.mul, dt.Tensor.__rmul__)
    )
    total, amax, matmul, softmax, cat = (front(f) for f in (dt.sum, dt.amax, dt.matmul, dt.softmax, dt.cat))
    sub, mul_t, transpose, reshape = (front(f) for f in (dt.sub, dt.Tensor.__mul__, dt.transpose, dt.reshape))
    y = np.zeros(32, np.int64)
    logits = rng.standard_normal((32, 10)).astype(np.float32)
    ty, tlogits = dt.from_numpy(y), dt.from_numpy(logits)
    cross_entropy = front(dt.cross_entropy)
    return [
        ("add", lambda: add(ta, tb), lambda: np.add(a, b)),
        ("add out=", lambda: add(ta, tb, out=tc), lambda: np.add(a, b, out=c)),
        ("add_", lambda: add_(tc, tb), lambda: np.add(c, b, out=c)),
        ("exp out=", lambda: exp(ta, out=tc), lambda: np.exp(a, out=c)),
        ("neg_", lambda: neg_(tc), lambda: np.negative(c, out=c)),
        ("t * np.float32(2)", lambda: mul_t(ta, two), lambda: a * two),
        ("add(t, ndarray)", lambda: add(ta, b_any), lambda: np.add(a, b)),
        ("mul(a, 2.5)", lambda: mul(ta, 2.5), lambda: np.multiply(a, 2.5)),
        ("2.5 * a", lambda: rmul(ta, 2.5), lambda: 2.5 * a),
        ("sub(a, b)", lambda: sub(ta, tb), lambda: np.subtract(a, b)),
        ("exp", lambda: exp(ta), lambda: np.exp(a)),
        ("sum(dim=0)", lambda: total(tm, 0), lambda: np.sum(m, axis=0)),
        ("amax(dim=1)", lambda: amax(tm, 1), lambda: np.amax(m, axis=1)),
        ("matmul", lambda: matmul(tm, tm), lambda: np.matmul(m, m)),
        ("softmax(dim=1)", lambda: softmax(tm, 1), lambda: _softmax(m)),
        ("cross_entropy", lambda: cross_entropy(tlogits, ty), lambda: _cross_entropy(logits, y)),
        ("cat", lambda: cat([ta, tb]), lambda: np.concatenate([a, b])),
        ("transpose", lambda: transpose(tm, 0, 1), lambda: m.transpose(1, 0)),
        ("reshape", lambda: reshape(tm, (100,)), lambda: m.reshape(100)),
    ]


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=20000)
    args = parser.parse_args(argv)
    print(f"{'call':18} | {'compiled µs':>11} | {'Python µs':>9} | {'NumPy µs':>8} | compiled/NumPy | Python/NumPy")
    for (name, ours, numpy_call), (_, python, _) in zip(cases(), cases(python_front), strict=True):
        times = [float("inf")] * 3
        for _ in range(args.repeat):  # (interleaved: each round times every column once)
            for i, fn in enumerate((ours, python, numpy_call)):
                times[i] = min(times[i], best(fn, args.number, 1))
        x, p, y = times
        print(f"{name:18} | {x:11.2f} | {p:9.2f} | {y:8.2f} | {x / y:14.2f} | {p / y:12.2f}")


if __name__ == "__main__":
    main()
