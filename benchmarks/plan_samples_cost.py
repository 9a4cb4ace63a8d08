"""One-op steps of the op samples planned against eager, by instruction counts (load-independent).

Run under callgrind, which counts each segment the script runs through ``exec`` into a file of its own::

    valgrind --tool=callgrind --branch-sim=yes --collect-atstart=no --toggle-collect=builtin_exec \\
        --dump-after=builtin_exec --callgrind-out-file=/tmp/cg/out python benchmarks/plan_samples_cost.py run [--fresh]
    python benchmarks/plan_samples_cost.py report /tmp/cg/out

``run`` makes, per op sample of tests/op_samples.py (its first two per op, the steps of plan_replay.py's
``samples``), the eager step, its ``dt.plan`` and its ``dt.planned``, warms them (``--warmup`` calls: CPython
specializes a function's code after some runs), then runs ``--calls`` calls of each as one ``exec`` (eager,
plan, planned, in that order; the cyclic garbage collector off, whose passes would fall in any segment) and
writes the order of the segments to ``--names``. ``report`` reads the dumps
(the last three per sample) and prints, per kind, how many steps cost more than eager by over 0% and 5% in
instructions and in callgrind's cycle estimate (instructions plus 10 per mispredicted branch of its simple
predictor, which a real CPU beats on the interpreter's jumps), and the costliest ones: figures the machine's
load does not move.
"""

from __future__ import annotations

import argparse
import gc
import glob
from pathlib import Path
from typing import Any

from plan_replay import one_op_steps  # (the sibling script, first on sys.path when run)

import devtensor as dt
from devtensor import Tensor


def run(calls: int, warmup: int, names_file: str, fresh: bool = False) -> None:
    """Make and time (as ``exec`` segments) each one-op step: eager, plan, planned; with ``fresh``, each call
    gets new argument tensors (copies made beforehand, as a step called with a new batch each time)."""
    steps: list[tuple[str, Any, Any, Any, tuple[Any, ...]]] = []
    for name, index, step, args in one_op_steps():
        try:
            step(*args)
            plan = dt.plan(step, *args)
            fast = dt.planned(step)
            for _ in range(warmup):  # (past CPython's specialization of the replay's code)
                plan(*args)
                fast(*args)
                step(*args)
        except Exception:
            continue
        steps.append((f"{name}[{index}]", step, plan, fast, args))
    source = "for a in A: f(*a)" if fresh else f"for _ in range({calls}): f(*a)"
    code = compile(source, "<segment>", "exec")  # (compiled once: not counted)
    gc.collect()
    gc.disable()  # (a collection would fall in whichever segment crosses its threshold; eager frees by count)
    try:
        with open(names_file, "w") as names:
            for label, step, plan, fast, args in steps:
                for fn in (step, plan, fast):
                    made = [tuple(a.clone() if isinstance(a, Tensor) else a for a in args) for _ in range(calls)]
                    exec(code, {"f": fn, "a": args, "A": made if fresh else ()})
                names.write(label + "\n")
    finally:
        gc.enable()


def _counts(path: str) -> tuple[int, int]:
    """A dump's instructions and callgrind's cycle estimate, Ir + 10 (Bcm + Bim)."""
    events: list[str] = []
    totals: list[int] = []
    with open(path) as dump:
        for line in dump:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:"):
                totals = [int(v) for v in line.split()[1:]]
    values = dict(zip(events, totals, strict=False))
    ir = values.get("Ir", 0)
    return ir, ir + 10 * (values.get("Bcm", 0) + values.get("Bim", 0))


def report(prefix: str, names_file: str, show: int) -> None:
    """Print the counts of steps costlier than eager (see the module's docstring)."""
    names = Path(names_file).read_text().split()
    dumps = sorted(glob.glob(prefix + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
    counts = [_counts(path) for path in dumps[-3 * len(names) :]]
    rows: list[tuple[str, list[float], list[float]]] = []
    for i, label in enumerate(names):
        eager, plan, fast = counts[3 * i : 3 * i + 3]
        rows.append((label, [plan[k] / eager[k] for k in (0, 1)], [fast[k] / eager[k] for k in (0, 1)]))
    print(f"one-op steps of the op samples ({len(rows)}), cost / eager's (callgrind; instructions, cycle estimate):")
    for kind, at in (("dt.plan", 1), ("dt.planned", 2)):
        for measure, k in (("instructions", 0), ("cycle estimate", 1)):
            ratios = sorted((r[1] if at == 1 else r[2])[k] for r in rows)
            print(
                f"  {kind:10s} {measure:14s} median {ratios[len(ratios) // 2]:.2f}x, costlier than eager: "
                f"{sum(r > 1.0 for r in ratios)} (by over 5%: {sum(r > 1.05 for r in ratios)})"
            )
    for label, plan_ratio, fast_ratio in sorted(rows, key=lambda r: -max(r[1][0], r[2][0]))[:show]:
        print(f"    {label}: instructions plan {plan_ratio[0]:.3f}x, planned {fast_ratio[0]:.3f}x")


def main() -> None:
    """Run or report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("action", choices=["run", "report"])
    parser.add_argument("prefix", nargs="?", default="/tmp/cg/out", help="the dumps' prefix (report)")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--names", default="/tmp/plan_samples_cost.names")
    parser.add_argument("--show", type=int, default=25)
    parser.add_argument("--fresh", action="store_true", help="new argument tensors for each call (run)")
    options = parser.parse_args()
    if options.action == "run":
        run(options.calls, options.warmup, options.names, options.fresh)
    else:
        report(options.prefix, options.names, options.show)


if __name__ == "__main__":
    main()
