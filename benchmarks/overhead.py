"""Per-call time of devtensor's ``add`` (functional, out, inplace) beside NumPy and PyTorch doing the same work.

For float32 tensors of 1, 100, 10_000 and 1_000_000 elements it prints, per variant, the time of one call of
devtensor, of the NumPy call doing the same work (``np.add(a, b)``, ``np.add(a, b, out=c)``,
``np.add(a, b, out=a)``) and their ratio, and of the eager ``torch.add`` call when torch is installed.
Times are the best of several ``timeit`` repeats (microseconds per call). Torch runs with one thread so that
all three libraries do the work on one core.

Run: ``python benchmarks/overhead.py`` (``--quick`` for fewer repeats).
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import devtensor as dt

SIZES = (1, 100, 10_000, 1_000_000)


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """Best seconds per call of ``fn`` over ``repeat`` timeit runs, each sized to take at least ~0.1 s."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def measure(n: int, repeat: int) -> dict[str, dict[str, float]]:
    """Seconds per call for each variant ('functional', 'out', 'inplace') and library ('devtensor', 'numpy',
    'torch' when installed) at ``n`` float32 elements."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.empty_like(a)
    # Both libraries work on the very same memory (from_numpy is zero-copy): the alignment of a copy alone can
    # change NumPy's loop speed by 2x at 10_000 elements.
    na, nb, nc = a, b, c
    ta, tb, tc = dt.from_numpy(na), dt.from_numpy(nb), dt.from_numpy(nc)
    results: dict[str, dict[str, float]] = {
        "functional": {
            "devtensor": best_time(lambda: dt.add(ta, tb), repeat),
            "numpy": best_time(lambda: np.add(na, nb), repeat),
        },
        "out": {
            "devtensor": best_time(lambda: dt.add(ta, tb, out=tc), repeat),
            "numpy": best_time(lambda: np.add(na, nb, out=nc), repeat),
        },
        "inplace": {
            "devtensor": best_time(lambda: ta.add_(tb), repeat),
            "numpy": best_time(lambda: np.add(na, nb, out=na), repeat),
        },
    }
    torch = _torch()
    if torch is not None:
        xa, xb, xc = torch.from_numpy(na), torch.from_numpy(nb), torch.from_numpy(nc)
        results["functional"]["torch"] = best_time(lambda: torch.add(xa, xb), repeat)
        results["out"]["torch"] = best_time(lambda: torch.add(xa, xb, out=xc), repeat)
        results["inplace"]["torch"] = best_time(lambda: xa.add_(xb), repeat)
    return results


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 7
    have_torch = _torch() is not None
    header = f"{'elements':>10} {'variant':>10} {'devtensor us':>13} {'numpy us':>10} {'dt/np':>7}"
    if have_torch:
        header += f" {'torch us':>10} {'dt/torch':>9}"
    print(header)
    for n in SIZES:
        for variant, row in measure(n, repeat).items():
            line = (
                f"{n:>10} {variant:>10} {row['devtensor'] * 1e6:>13.3f} {row['numpy'] * 1e6:>10.3f}"
                f" {row['devtensor'] / row['numpy']:>7.2f}"
            )
            if "torch" in row:
                line += f" {row['torch'] * 1e6:>10.3f} {row['devtensor'] / row['torch']:>9.2f}"
            print(line)


if __name__ == "__main__":
    main()
