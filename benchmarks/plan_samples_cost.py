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
import importlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plan_replay import one_op_steps  # (the sibling script, first on sys.path when run)

import devtensor as dt
from devtensor import Tensor


def mixed_steps(count: int, seed: int) -> Iterator[tuple[str, int, Any, tuple[Any, ...]]]:
    """``count`` random steps of 2 to 4 op-sample calls, drawn as tests/test_plan_properties.py draws them
    (functional, inplace or out= where allowed, each call's first operand the previous result or not), labelled
    with their ops."""
    props: Any = importlib.import_module("test_plan_properties")  # (tests/ is on sys.path: one_op_steps)
    rng = random.Random(seed)
    for index in range(count):
        calls = []
        for _ in range(rng.randint(2, 4)):
            name, sample = rng.choice(props.POOL)
            call = props.call_of(name, sample, rng.choice(["functional", "inplace", "out"]), rng.random() < 0.5)
            if call is not None:
                calls.append(call)
        if len(calls) > 1:
            step, make = props._build(calls, props._Clone, False)
            label = "+".join(call.name + ("_" if call.variant == "inplace" else "") for call in calls)
            yield label, index, step, tuple(make())


def run(calls: int, warmup: int, names_file: str, fresh: bool = False, mixed: int = 0) -> None:
    """Make and time (as ``exec`` segments) each one-op step (or ``mixed`` random steps of several ops): eager,
    plan, planned, each on its own copies of the arguments; with ``fresh``, each call gets new argument tensors
    (copies made beforehand, as a step called with a new batch each time)."""
    steps: list[tuple[str, Any, Any, Any, tuple[Any, ...]]] = []
    drawn = list(one_op_steps())
    made = mixed_steps(mixed, 0) if mixed else iter(drawn)
    for name, index, step, args in made:
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
                    copies = [tuple(a.clone() if isinstance(a, Tensor) else a for a in args) for _ in range(calls)]
                    exec(code, {"f": fn, "a": copies[0], "A": copies if fresh else ()})
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
    print(f"steps of the op samples ({len(rows)}), cost / eager's (callgrind; instructions, cycle estimate):")
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
    parser.add_argument("--mixed", type=int, default=0, help="time this many random steps of 2-4 ops instead (run)")
    options = parser.parse_args()
    if options.action == "run":
        run(options.calls, options.warmup, options.names, options.fresh, options.mixed)
    else:
        report(options.prefix, options.names, options.show)


if __name__ == "__main__":
    main()
