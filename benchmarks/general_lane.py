"""The compiled core's general lane (``devtensor/_core_general.h``) against the Python front it spares, side by side
in one process: each call timed with the front's general table set (the lane takes the call) and with it removed
(the call goes to the op's Python front, as before the lane existed), interleaved, best of several rounds.

Calls (100 float32 elements; ops without a kind lane, custom ops, a device binding, the meta device):
``where``, ``where(out=)``, ``clamp``, ``clamp_``, ``gather``, ``index_select``, ``fmod``, a custom op ``mul2``
(functional, out=, inplace; benchmarks/custom_op.py's), ``cmul`` (a custom op over the built-in mul's meta and
kernel), ``devtensor.cpu.where``, and ``add`` of a meta tensor and a number. NumPy's own call is shown beside
where there is one.

Run: ``python benchmarks/general_lane.py`` (``--rounds N``).
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np
from custom_op import define_ops

import devtensor as dt


def _best(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    mul2, cmul = define_ops()
    a = dt.tensor(np.arange(100, dtype=np.float32))
    b = dt.ones(100, dtype=dt.float32)
    out = dt.empty(100, dtype=dt.float32)
    idx = dt.tensor(np.arange(0, 100, 7))
    cond = a > 50
    m = dt.ones(100, device="meta")
    an, bn, cn, on = a.numpy(), b.numpy(), cond.numpy(), out.numpy()
    c: Any = a
    mul2_: Any = mul2.inplace
    calls: list[tuple[str, Any, Callable[[], object], Callable[[], object] | None]] = [
        ("where", dt.where, lambda: dt.where(cond, a, b), lambda: np.where(cn, an, bn)),
        ("where out=", dt.where, lambda: dt.where(cond, a, b, out=out), None),
        ("clamp", dt.clamp, lambda: dt.clamp(a, 1.0, 3.0), lambda: np.clip(an, 1.0, 3.0)),
        ("clamp_", dt.clamp_, lambda: out.clamp_(0.0, 1000.0), lambda: np.clip(on, 0.0, 1000.0, out=on)),
        ("gather", dt.gather, lambda: dt.gather(a, 0, idx), None),
        ("index_select", dt.index_select, lambda: dt.index_select(a, 0, idx), None),
        ("fmod", dt.fmod, lambda: dt.fmod(a, 3.0), lambda: np.fmod(an, 3.0)),
        ("custom mul2", mul2.functional, lambda: mul2.functional(a), lambda: np.multiply(an, 2)),
        ("custom mul2 out=", mul2.functional, lambda: mul2.functional(a, out=out), None),
        ("custom mul2_", mul2_, lambda: mul2_(out), None),
        ("custom cmul", cmul.functional, lambda: cmul.functional(a, 2), None),
        ("cpu.where", dt.cpu.where, lambda: dt.cpu.where(c > 50, c, c), None),
        ("meta add", dt.add, lambda: dt.add(m, 2.0), None),
    ]
    print("| call | general lane µs | Python front µs | lane / front | NumPy µs |")
    print("|---|---:|---:|---:|---:|")
    with np.errstate(all="ignore"):
        for label, front, call, numpy_call in calls:
            call()
            call()
            table = front.general
            lane: list[float] = []
            python: list[float] = []
            ref: list[float] = []
            for _ in range(args.rounds):
                front.general = table
                lane.append(_best(call, 2000))
                front.general = None
                python.append(_best(call, 2000))
                if numpy_call is not None:
                    ref.append(_best(numpy_call, 2000))
            front.general = table
            shown = f"{min(ref):.2f}" if ref else ""
            print(f"| {label} | {min(lane):.2f} | {min(python):.2f} | {min(lane) / min(python):.2f} | {shown} |")


if __name__ == "__main__":
    main()
