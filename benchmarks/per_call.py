"""Per-call time of common small ops beside the NumPy call doing the same work, measured in one process.

For each op (float32, 100 elements or 10x10) it prints devtensor's time per call, NumPy's, and the ratio. Times
are the best of ``--repeat`` timeit runs of ``--number`` calls (microseconds per call). The ratios are what the
per-call-cost work tracks; absolute times vary with the machine.

Run: ``python benchmarks/per_call.py [--repeat 7] [--number 20000]``.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import devtensor as dt


def best(fn: Callable[[], object], number: int, repeat: int) -> float:
    """Best microseconds per call of ``fn`` over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def _softmax(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    result: np.ndarray[Any, Any] = e / e.sum(axis=1, keepdims=True)
    return result


def cases() -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    """(name, devtensor call, NumPy call) for each measured op; both work on the same memory."""
    rng = np.random.default_rng(0)
    a = np.full(100, 0.5, np.float32)
    b = np.ones(100, np.float32)
    c = np.empty(100, np.float32)
    m = rng.standard_normal((10, 10)).astype(np.float32)
    ta, tb, tc, tm = dt.from_numpy(a), dt.from_numpy(b), dt.from_numpy(c), dt.from_numpy(m)
    # NumPy operands (the fronts' NumPy-values path; the typing stubs take tensors and Python numbers only)
    two: Any = np.float32(2)
    b_any: Any = b
    return [
        ("add", lambda: dt.add(ta, tb), lambda: np.add(a, b)),
        ("add out=", lambda: dt.add(ta, tb, out=tc), lambda: np.add(a, b, out=c)),
        ("add_", lambda: tc.add_(tb), lambda: np.add(c, b, out=c)),
        ("exp out=", lambda: dt.exp(ta, out=tc), lambda: np.exp(a, out=c)),
        ("neg_", lambda: tc.neg_(), lambda: np.negative(c, out=c)),
        ("t * np.float32(2)", lambda: ta * two, lambda: a * two),
        ("add(t, ndarray)", lambda: dt.add(ta, b_any), lambda: np.add(a, b)),
        ("mul(a, 2.5)", lambda: dt.mul(ta, 2.5), lambda: np.multiply(a, 2.5)),
        ("exp", lambda: dt.exp(ta), lambda: np.exp(a)),
        ("sum(dim=0)", lambda: dt.sum(tm, 0), lambda: np.sum(m, axis=0)),
        ("amax(dim=1)", lambda: dt.amax(tm, 1), lambda: np.amax(m, axis=1)),
        ("matmul", lambda: dt.matmul(tm, tm), lambda: np.matmul(m, m)),
        ("softmax(dim=1)", lambda: dt.softmax(tm, 1), lambda: _softmax(m)),
        ("cat", lambda: dt.cat([ta, tb]), lambda: np.concatenate([a, b])),
        ("transpose", lambda: tm.transpose(0, 1), lambda: m.transpose(1, 0)),
        ("reshape", lambda: tm.reshape(100), lambda: m.reshape(100)),
    ]


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=20000)
    args = parser.parse_args(argv)
    print(f"{'call':18} | {'devtensor µs':>12} | {'NumPy µs':>8} | ratio")
    for name, ours, numpy_call in cases():
        x = best(ours, args.number, args.repeat)
        y = best(numpy_call, args.number, args.repeat)
        print(f"{name:18} | {x:12.2f} | {y:8.2f} | {x / y:.2f}")


if __name__ == "__main__":
    main()
