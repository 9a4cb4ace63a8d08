"""One benchmark report: devtensor beside NumPy (and torch, when installed) in one process, with plots.

Measures, interleaved (each round times every library once, in turn; the best round is kept):

* per-call time of common ops (``add`` functional / out / inplace, ``mul`` by a Python number, ``exp``,
  ``sum(dim=0)``, ``amax(dim=1)``, ``softmax(dim=1)``, ``cross_entropy``, ``matmul``, ``cat`` of two, the
  views ``reshape`` and ``transpose``) at sizes from 1 to 1e6 elements (matrices of n x n for the 2-d ops);
  the NumPy reference is the idiomatic NumPy code (``np.add(a, b)``, ``np.sum(m, axis=0)``, softmax as
  max-subtract, exp, sum, divide; cross_entropy as max, exp, sum, log, fancy-indexed target logits, mean);
* the main job (``examples/train_digits.py``, eager path with preallocated buffers) per epoch, beside its NumPy
  reference and (with torch) the same manual-gradient step in torch (needs scikit-learn for the data);
* a functional-style step (``functional_step`` of ``examples/train_digits.py``: a new tensor per op, log_softmax
  once) per epoch, beside ``numpy_functional_step``, the same model in NumPy expressions (equal weights);
* a chain of 1,000 meta ops (``x * 1.0001``) against the same chain on a small real tensor (and torch meta);
* a custom op (``library.custom_op``) against the built-in ``mul`` doing the same work;
* import time (fresh interpreters, best of a few).

It writes a markdown report (times in µs, ratios, the run: date, commit, machine, load and versions) to
``--output`` (default: ``results.md`` in a new temporary folder, never the tracked ``benchmarks/results.md``) and
log-log plots of per-call time against size, one per op, one line per library, into ``plots/`` beside it
(matplotlib: the ``bench`` extra, ``pip install -e '.[bench]'``; without it the plots are skipped), and prints
where it wrote them. ``--output benchmarks/results.md`` replaces the checked-in report and plots (the README's
tables quote that run).

Run: ``python benchmarks/report.py`` (quick: a few minutes on a small machine) or ``--full`` (more sizes and
rounds). torch runs with one thread, so all three libraries use one core.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

# One BLAS thread, as torch gets one: set before NumPy loads its BLAS (a multi-threaded BLAS on a busy small
# machine makes matmul times jump by orders of magnitude between rounds).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import devtensor as dt  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # (the sibling benchmark scripts)
sys.path.insert(0, str(HERE.parent / "examples"))

NDArray = np.ndarray[Any, np.dtype[Any]]
Call = Callable[[], object]
LIBS = ("devtensor", "numpy", "torch")
#: The Python fronts behind devtensor's published fronts (what ``DEVTENSOR_PURE_PYTHON=1`` runs), timed beside them.
PYTHON_FRONTS = "python fronts"


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def interleaved(calls: dict[str, Call], rounds: int, budget: float = 0.02) -> dict[str, float]:
    """Best seconds per call of each of ``calls``, timed in turn in each of ``rounds`` rounds (so a slow spell
    of the machine hits all of them alike). Each timing runs about ``budget`` seconds."""
    numbers: dict[str, int] = {}
    for name, fn in calls.items():
        for _ in range(3):  # (warm up: first calls fill caches, torch's dispatcher among them)
            fn()
        start = time.perf_counter()
        fn()
        once = max(time.perf_counter() - start, 1e-7)
        numbers[name] = max(1, min(100_000, int(budget / once)))
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, fn in calls.items():
            n = numbers[name]
            best[name] = min(best[name], timeit.timeit(fn, number=n) / n)
    return best


# --- per-call cases ----------------------------------------------------------------------------------------


def _np_softmax(x: NDArray) -> NDArray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    result: NDArray = e / e.sum(axis=1, keepdims=True)
    return result


def _np_cross_entropy(x: NDArray, t: NDArray) -> float:
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    return float(np.mean(lse - x[np.arange(len(t)), t]))


def cases(n: int, torch: Any) -> dict[str, dict[str, Call]]:
    """op name -> library -> call, for float32 operands of ``n`` elements (2-d ops: a ``k x k`` matrix with
    ``k = round(sqrt(n))``; cross_entropy: ``[n // 10, 10]`` logits, at least one row, and ``[32, 10]`` at 100)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.empty(n, np.float32)
    k = max(1, round(n**0.5))
    m = rng.standard_normal((k, k)).astype(np.float32)
    rows = 32 if n == 100 else max(1, n // 10)  # (at 100: the 32x10 of a minibatch of the main job)
    logits = rng.standard_normal((rows, 10)).astype(np.float32)
    target = rng.integers(0, 10, rows)
    ta, tb, tc, tm = dt.from_numpy(a), dt.from_numpy(b), dt.from_numpy(c), dt.from_numpy(m)
    tl, tt = dt.from_numpy(logits), dt.from_numpy(target)
    out: dict[str, dict[str, Call]] = {
        "add": {"devtensor": lambda: dt.add(ta, tb), "numpy": lambda: np.add(a, b)},
        "add out=": {"devtensor": lambda: dt.add(ta, tb, out=tc), "numpy": lambda: np.add(a, b, out=c)},
        "add_": {"devtensor": lambda: tc.add_(tb), "numpy": lambda: np.add(c, b, out=c)},
        "mul(a, 2.5)": {"devtensor": lambda: dt.mul(ta, 2.5), "numpy": lambda: np.multiply(a, 2.5)},
        "exp": {"devtensor": lambda: dt.exp(ta), "numpy": lambda: np.exp(a)},
        "sum(dim=0)": {"devtensor": lambda: dt.sum(tm, 0), "numpy": lambda: np.sum(m, axis=0)},
        "amax(dim=1)": {"devtensor": lambda: dt.amax(tm, 1), "numpy": lambda: np.amax(m, axis=1)},
        "softmax(dim=1)": {"devtensor": lambda: dt.softmax(tm, 1), "numpy": lambda: _np_softmax(m)},
        "cross_entropy": {
            "devtensor": lambda: dt.cross_entropy(tl, tt),
            "numpy": lambda: _np_cross_entropy(logits, target),
        },
        "matmul": {"devtensor": lambda: dt.matmul(tm, tm), "numpy": lambda: np.matmul(m, m)},
        "cat": {"devtensor": lambda: dt.cat([ta, tb]), "numpy": lambda: np.concatenate([a, b])},
        "reshape": {"devtensor": lambda: tm.reshape(k * k), "numpy": lambda: m.reshape(k * k)},
        "transpose": {"devtensor": lambda: tm.transpose(0, 1), "numpy": lambda: m.transpose(1, 0)},
    }
    # The same calls through the Python fronts (inspect.unwrap: the front behind a compiled one).
    py = {name: inspect.unwrap(fn) for name, fn in (("add", dt.add), ("add_", dt.Tensor.add_), ("mul", dt.mul))}
    py |= {name: inspect.unwrap(getattr(dt, name)) for name in ("exp", "sum", "amax", "softmax", "matmul", "cat")}
    py |= {"cross_entropy": inspect.unwrap(dt.cross_entropy), "reshape": inspect.unwrap(dt.reshape)}
    py |= {"transpose": inspect.unwrap(dt.transpose)}
    python_calls: dict[str, Call] = {
        "add": lambda: py["add"](ta, tb),
        "add out=": lambda: py["add"](ta, tb, out=tc),
        "add_": lambda: py["add_"](tc, tb),
        "mul(a, 2.5)": lambda: py["mul"](ta, 2.5),
        "exp": lambda: py["exp"](ta),
        "sum(dim=0)": lambda: py["sum"](tm, 0),
        "amax(dim=1)": lambda: py["amax"](tm, 1),
        "softmax(dim=1)": lambda: py["softmax"](tm, 1),
        "cross_entropy": lambda: py["cross_entropy"](tl, tt),
        "matmul": lambda: py["matmul"](tm, tm),
        "cat": lambda: py["cat"]([ta, tb]),
        "reshape": lambda: py["reshape"](tm, (k * k,)),
        "transpose": lambda: py["transpose"](tm, 0, 1),
    }
    for name, call in python_calls.items():
        out[name][PYTHON_FRONTS] = call
    if torch is not None:
        xa, xb, xc, xm = (torch.from_numpy(v) for v in (a, b, c, m))
        xl, xt = torch.from_numpy(logits), torch.from_numpy(target)
        f = torch.nn.functional
        torch_calls: dict[str, Call] = {
            "add": lambda: torch.add(xa, xb),
            "add out=": lambda: torch.add(xa, xb, out=xc),
            "add_": lambda: xc.add_(xb),
            "mul(a, 2.5)": lambda: torch.mul(xa, 2.5),
            "exp": lambda: torch.exp(xa),
            "sum(dim=0)": lambda: torch.sum(xm, 0),
            "amax(dim=1)": lambda: torch.amax(xm, 1),
            "softmax(dim=1)": lambda: torch.softmax(xm, 1),
            "cross_entropy": lambda: f.cross_entropy(xl, xt),
            "matmul": lambda: torch.matmul(xm, xm),
            "cat": lambda: torch.cat([xa, xb]),
            "reshape": lambda: xm.reshape(k * k),
            "transpose": lambda: xm.transpose(0, 1),
        }
        for name, call in torch_calls.items():
            out[name]["torch"] = call
    return out


# --- the main job, meta chains, custom op, import ------------------------------------------------------------


def main_job(torch: Any, rounds: int) -> dict[str, float] | None:
    """Seconds per epoch of the digits MLP step (eager, preallocated buffers) per library; None without
    scikit-learn."""
    import importlib

    td: Any = importlib.import_module("train_digits")  # (examples/, put on the path above)
    try:
        data = td.load_data(0)
    except ImportError:
        return None
    cfg = td.Config(epochs=1)
    weights = td.init_weights(cfg, data.x_train.shape[1], 10)
    model = td.DevtensorMLP(cfg, data, weights, "cpu")
    ref = td.NumpyMLP(cfg, data, weights)
    order = td.batch_order(cfg, len(model.batches), 0)
    calls: dict[str, Call] = {"devtensor": lambda: model.epoch(order), "numpy": lambda: ref.epoch(order)}
    if torch is not None:
        step = _torch_step(torch, cfg, data, weights)
        calls["torch"] = lambda: [step(i) for i in order]
    return interleaved(calls, rounds, budget=0.05)


def functional_batches(cfg: Any, data: Any) -> tuple[list[tuple[NDArray, NDArray]], list[tuple[Any, ...]]]:
    """The digits training set (``data``, examples/train_digits.py's ``load_data``) as the functional steps take
    it: the full minibatches of ``cfg.batch`` rows, (float32 inputs, float32 one-hot targets of 10 classes), as
    NumPy arrays (views of the data) and as CPU tensors (C-contiguous copies)."""
    b = cfg.batch
    n_full = (len(data.x_train) // b) * b
    x, y1h = data.x_train[:n_full], np.eye(10, dtype=np.float32)[data.y_train[:n_full]]
    np_batches = [(x[i : i + b], y1h[i : i + b]) for i in range(0, n_full, b)]
    dt_batches = [tuple(dt.from_numpy(np.ascontiguousarray(v)) for v in batch) for batch in np_batches]
    return np_batches, dt_batches


def functional_step(rounds: int) -> dict[str, float] | None:
    """Seconds per epoch of the digits MLP written functionally (a new tensor per op, no buffers, weights
    rebound each step): ``functional_step`` of examples/train_digits.py beside its NumPy twin
    ``numpy_functional_step`` (the same model in NumPy expressions; the weights agree bit for bit, which
    tests/test_bit_identical_training.py checks); None without scikit-learn."""
    import importlib

    td: Any = importlib.import_module("train_digits")
    try:
        data = td.load_data(0)
    except ImportError:
        return None
    cfg = td.Config(epochs=1)
    weights = td.init_weights(cfg, data.x_train.shape[1], 10)
    lr, inv_b = cfg.lr, 1.0 / cfg.batch
    np_batches, dt_batches = functional_batches(cfg, data)
    order = td.batch_order(cfg, len(np_batches), 0)
    np_w = [weights[k].copy() for k in ("w1", "b1", "w2", "b2")]
    dt_w = [dt.tensor(weights[k]) for k in ("w1", "b1", "w2", "b2")]
    np_step, dt_step = td.numpy_functional_step, td.functional_step

    def numpy_epoch() -> None:
        w1, b1, w2, b2 = np_w
        for i in order:
            w1, b1, w2, b2, loss = np_step(w1, b1, w2, b2, *np_batches[i], lr, inv_b)
            float(loss)
        np_w[:] = [w1, b1, w2, b2]

    def devtensor_epoch() -> None:
        w1, b1, w2, b2 = dt_w
        for i in order:
            w1, b1, w2, b2, loss = dt_step(w1, b1, w2, b2, *dt_batches[i], lr, inv_b)
            float(loss)
        dt_w[:] = [w1, b1, w2, b2]

    return interleaved({"devtensor": devtensor_epoch, "numpy": numpy_epoch}, rounds, budget=0.05)


def functional_step_pure_python(rounds: int) -> str | None:
    """:func:`functional_step` measured in a fresh process with ``DEVTENSOR_PURE_PYTHON=1`` (the Python fronts
    serve every call): its devtensor and NumPy ms per epoch and their ratio, as text; None when it cannot run."""
    code = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import report; "
        f"r = report.functional_step({rounds}); "
        "print('' if r is None else f\"devtensor {r['devtensor'] * 1e3:.2f} ms, NumPy {r['numpy'] * 1e3:.2f} ms "
        "({r['devtensor'] / r['numpy']:.2f}x)\")"
    )
    env = {**os.environ, "DEVTENSOR_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(HERE), str(HERE.parent / "examples")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    text = done.stdout.strip()
    return text or None if done.returncode == 0 else None


def _torch_step(torch: Any, cfg: Any, data: Any, weights: dict[str, NDArray]) -> Callable[[int], None]:
    """The digits step in torch eager mode, with the same manual gradients and buffers as the devtensor one."""
    b = cfg.batch
    n_full = (len(data.x_train) // b) * b
    x = torch.from_numpy(data.x_train[:n_full])
    y = torch.from_numpy(data.y_train[:n_full])
    y1h = torch.nn.functional.one_hot(y, 10).float()
    batches = [(x[i : i + b], x[i : i + b].t(), y[i : i + b], y1h[i : i + b]) for i in range(0, n_full, b)]
    w1, b1 = torch.from_numpy(weights["w1"].copy()), torch.from_numpy(weights["b1"].copy())
    w2, b2 = torch.from_numpy(weights["w2"].copy()), torch.from_numpy(weights["b2"].copy())
    h, logits, probs = torch.empty(b, cfg.hidden), torch.empty(b, 10), torch.empty(b, 10)
    mask, dlogits, dh = torch.empty(b, cfg.hidden, dtype=torch.bool), torch.empty(b, 10), torch.empty(b, cfg.hidden)
    dw1, db1, dw2, db2 = torch.empty_like(w1), torch.empty_like(b1), torch.empty_like(w2), torch.empty_like(b2)
    loss = torch.empty(())
    lr, inv_b = cfg.lr, 1.0 / b
    f = torch.nn.functional
    h_t, w2_t = h.t(), w2.t()

    def step(i: int) -> None:
        xb, xb_t, yb, yb1h = batches[i]
        torch.addmm(b1, xb, w1, out=h)
        h.relu_()
        torch.addmm(b2, h, w2, out=logits)
        torch.softmax(logits, 1, out=probs)
        loss.copy_(f.cross_entropy(logits, yb))
        torch.sub(probs, yb1h, out=dlogits).mul_(inv_b)
        torch.mm(h_t, dlogits, out=dw2)
        torch.sum(dlogits, 0, out=db2)
        torch.mm(dlogits, w2_t, out=dh)
        torch.gt(h, 0, out=mask)
        dh.mul_(mask)
        torch.mm(xb_t, dh, out=dw1)
        torch.sum(dh, 0, out=db1)
        w1.sub_(dw1, alpha=lr)
        b1.sub_(db1, alpha=lr)
        w2.sub_(dw2, alpha=lr)
        b2.sub_(db2, alpha=lr)
        float(loss)

    return step


def meta_chains(torch: Any, rounds: int) -> dict[str, float]:
    """Seconds for a chain of 1,000 ``x * 1.0001``: on a meta tensor, on a small real tensor, on torch meta."""

    def chain(x: Any) -> Call:
        def run() -> None:
            y = x
            for _ in range(1000):
                y = y * 1.0001

        return run

    calls: dict[str, Call] = {
        "devtensor meta": chain(dt.ones(10, 10, device="meta", dtype=dt.float32)),
        "devtensor cpu": chain(dt.ones(10, 10, dtype=dt.float32)),
    }
    if torch is not None:
        calls["torch meta"] = chain(torch.ones(10, 10, device="meta"))
    return interleaved(calls, rounds, budget=0.05)


def custom_op(rounds: int) -> dict[str, float]:
    """Seconds per call at 100 float32 elements of a custom op (own meta and impl), of one defined from the
    built-in mul's meta and kernel, and of the built-in ``mul(a, 2)``."""
    import custom_op as co

    mul2, cmul = co.define_ops()
    a = dt.from_numpy(np.full(100, 0.5, np.float32))
    f2, fc = mul2.functional, cmul.functional
    return interleaved({"builtin mul": lambda: dt.mul(a, 2), "custom": lambda: f2(a), "cmul": lambda: fc(a, 2)}, rounds)


def import_times(torch: Any, repeat: int) -> dict[str, float]:
    """Best seconds of ``import numpy``, ``import numpy, devtensor`` (and ``import torch``) in fresh processes."""
    import import_cost

    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent)
    times = {"numpy": float("inf"), "numpy + devtensor": float("inf")}
    if torch is not None:
        times["torch"] = float("inf")
    import_cost._seconds("import numpy, devtensor", env)  # (writes the bytecode caches, if missing)
    for _ in range(repeat):
        times["numpy"] = min(times["numpy"], import_cost._seconds("import numpy", env))
        times["numpy + devtensor"] = min(
            times["numpy + devtensor"], import_cost._seconds("import numpy, devtensor", env)
        )
        if torch is not None:
            times["torch"] = min(times["torch"], import_cost._seconds("import torch", env))
    return times


# --- the report -----------------------------------------------------------------------------------------------


def _us(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:.2f}" if us < 100 else f"{us:.0f}"


def _ratio(x: float, y: float | None) -> str:
    return "—" if y is None else f"{x / y:.2f}x"


def write_plots(results: dict[int, dict[str, dict[str, float]]], folder: Path) -> list[str]:
    """One log-log plot per op (seconds per call against size, one line per library); the file names."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): no plots", file=sys.stderr)
        return []
    folder.mkdir(exist_ok=True)
    sizes = sorted(results)
    names = []
    for op in results[sizes[0]]:
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        for lib in LIBS:
            points = [(n, results[n][op][lib] * 1e6) for n in sizes if lib in results[n][op]]
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=lib)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("elements")
        ax.set_ylabel("µs per call")
        ax.set_title(op)
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        slug = op[:-1] + " inplace" if op.endswith("_") else op  # (add_ and add apart)
        name = re.sub(r"[^0-9a-zA-Z]+", "_", slug).strip("_") + ".png"
        fig.savefig(folder / name, dpi=90)
        plt.close(fig)
        names.append(name)
    return names


def run_description(full: bool) -> str:
    """Which run this is: the command, date and time (UTC), the source tree's commit (``-dirty`` with
    uncommitted changes; "unknown" outside a git checkout), the machine and its load average when it started."""
    try:
        commit = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    load = "unknown" if not hasattr(os, "getloadavg") else " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"Written by `python benchmarks/report.py{' --full' if full else ''}` at "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on commit {commit}. "
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, load average {load} (1, 5, 15 min) at the start"
    )


def report(args: argparse.Namespace, plots_folder: Path) -> str:
    """Run every measurement (the plots into ``plots_folder``); the markdown text."""
    started = run_description(args.full)
    torch: Any = None if args.no_torch else _torch()
    sizes = [1, 100, 10_000, 1_000_000] if not args.full else [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
    rounds = 9 if args.full else 5
    per_size: dict[int, dict[str, dict[str, float]]] = {}
    for n in sizes:
        per_size[n] = {op: interleaved(calls, rounds) for op, calls in cases(n, torch).items()}
        print(f"measured size {n}", file=sys.stderr)
    has_torch = torch is not None
    versions = f"NumPy {np.__version__}" + (f", torch {torch.__version__} (1 thread)" if has_torch else ", no torch")
    lines = ["# Benchmark results", ""]
    lines.append(f"{started}, Python {platform.python_version()}, {versions}.")
    lines += [
        "",
        "Times are the best of interleaved rounds in one process, in µs per call (float32). The NumPy column is",
        "the idiomatic NumPy code for the same work; ratios are devtensor's time over the other library's.",
        "",
        "## Per call, 100 elements (10x10 for the 2-d ops, 32x10 logits for cross_entropy)",
        "",
        "The Python-fronts columns time the same calls through the Python front behind each compiled one (what",
        "`DEVTENSOR_PURE_PYTHON=1`, or a machine without a C compiler, runs).",
        "",
        "| call | devtensor µs | NumPy µs | vs NumPy | Python fronts µs | vs NumPy |"
        + (" torch µs | vs torch |" if has_torch else ""),
        "|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if has_torch else ""),
    ]
    for op, t in per_size[100].items():
        row = f"| `{op}` | {_us(t['devtensor'])} | {_us(t['numpy'])} | {_ratio(t['devtensor'], t['numpy'])} |"
        row += f" {_us(t[PYTHON_FRONTS])} | {_ratio(t[PYTHON_FRONTS], t['numpy'])} |"
        if has_torch:
            row += f" {_us(t['torch'])} | {_ratio(t['devtensor'], t['torch'])} |"
        lines.append(row)
    lines += ["", "## Per call against size (devtensor / NumPy)", ""]
    lines.append("| call | " + " | ".join(f"{n:g}" for n in sizes) + " |")
    lines.append("|---|" + "---:|" * len(sizes))
    for op in per_size[sizes[0]]:
        cells = [_ratio(per_size[n][op]["devtensor"], per_size[n][op]["numpy"]) for n in sizes]
        lines.append(f"| `{op}` | " + " | ".join(cells) + " |")
    plots = write_plots(per_size, plots_folder)
    if plots:
        lines += ["", "Plots (µs per call against elements, log-log): " + ", ".join(f"`plots/{p}`" for p in plots)]
    job = None if args.skip_job else main_job(torch, 3 if not args.full else 5)
    lines += ["", "## Main job (examples/train_digits.py, one epoch, eager path)", ""]
    if job is None:
        lines.append("Skipped (needs scikit-learn for the data).")
    else:
        lines.append("| library | ms per epoch | devtensor over it |")
        lines.append("|---|---:|---:|")
        for lib, seconds in job.items():
            lines.append(f"| {lib} | {seconds * 1e3:.2f} | {_ratio(job['devtensor'], seconds)} |")
    functional = None if args.skip_job else functional_step(3 if not args.full else 5)
    lines += ["", "## A functional-style training step (new tensors per op, no buffers), one epoch", ""]
    if functional is None:
        lines.append("Skipped (needs scikit-learn for the data).")
    else:
        ms = {lib: seconds * 1e3 for lib, seconds in functional.items()}
        lines.append(
            f"devtensor {ms['devtensor']:.2f} ms, NumPy {ms['numpy']:.2f} ms "
            f"({_ratio(functional['devtensor'], functional['numpy'])})."
        )
        pure = functional_step_pure_python(3 if not args.full else 5)
        if pure is not None:
            lines.append(f"With the Python fronts only (`DEVTENSOR_PURE_PYTHON=1`, another process): {pure}.")
    chains = meta_chains(torch, rounds)
    lines += ["", "## A chain of 1,000 `x * 1.0001` (10x10)", "", "| tensors | µs per op |", "|---|---:|"]
    for name, seconds in chains.items():
        lines.append(f"| {name} | {seconds * 1e3:.2f} |")
    custom = custom_op(rounds)
    lines += ["", "## A custom op beside the built-in `mul(a, 2)`, 100 elements", "", "| op | µs |", "|---|---:|"]
    for name, seconds in custom.items():
        lines.append(f"| {name} | {_us(seconds)} |")
    imports = import_times(torch, 3 if not args.full else 7)
    lines += ["", "## Import time (fresh interpreter, best of a few)", "", "| import | ms |", "|---|---:|"]
    for name, seconds in imports.items():
        lines.append(f"| {name} | {seconds * 1e3:.1f} |")
    return "\n".join(lines) + "\n"


def output_paths(output: Path | None) -> tuple[Path, Path]:
    """The report's file and its plots' folder (``plots/`` beside it): ``output`` as given, or ``results.md`` in a
    new temporary folder when it is None. Creates the report's folder (the plots' folder is made by
    :func:`write_plots`, when there are plots)."""
    if output is None:
        output = Path(tempfile.mkdtemp(prefix="devtensor-bench-")) / "results.md"
    output.parent.mkdir(parents=True, exist_ok=True)
    return output, output.parent / "plots"


def main(argv: list[str] | None = None) -> None:
    """Measure, write the report to ``--output`` (default: a new temporary folder) and the plots beside it, print
    the markdown and where both went."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--full", action="store_true", help="more sizes and rounds (slower)")
    parser.add_argument("--no-torch", action="store_true", help="leave torch out even when it is installed")
    parser.add_argument("--skip-job", action="store_true", help="leave the main job out")
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="the markdown file to write, plots into plots/ beside it (default: results.md in a new temporary "
        "folder; benchmarks/results.md replaces the checked-in report)",
    )
    args = parser.parse_args(argv)
    output, plots = output_paths(args.output)
    text = report(args, plots)
    output.write_text(text, encoding="utf-8")
    print(text)
    print(f"wrote {output}" + (f" and the plots in {plots}" if plots.is_dir() else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
