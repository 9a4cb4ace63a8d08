"""Use a custom op and an out-of-tree backend defined outside devtensor, and check every result against NumPy.

* ``fused_softplus.py`` defines the op ``softplus(x, beta=1.0, threshold=20.0)`` with
  :func:`devtensor.library.custom_op` and CPU (NumPy) and CUDA (CuPy) impls;
* ``numpy2_backend.py`` registers the device kind ``numpy2`` (NumPy-backed) with a CPU-copy fallback and native
  ``add``, ``mul`` and ``softplus`` kernels.

The script runs the op's variants (functional, out, inplace, meta) on the CPU, on CUDA when a GPU and CuPy are
present, and built-in and custom ops on ``numpy2`` (native kernels and the fallback); each result is compared
with NumPy (``fused_softplus.softplus_reference`` for softplus) and printed. Then it times the fused op against
the same formula composed from five devtensor ops, and runs :func:`devtensor.library.check` over the op.
Exit status 0 when everything matches, 1 otherwise.

Run: ``python examples/custom_op/run.py`` (``--n N`` elements, default 100000; ``--device cuda`` to insist on
the GPU part, which otherwise runs only when available).
"""

from __future__ import annotations

import argparse
import sys
import timeit
from typing import Any

import numpy as np
from fused_softplus import softplus, softplus_, softplus_op, softplus_reference
from numpy2_backend import FALLBACK, NATIVE

import devtensor as dt
from devtensor import Tensor, library
from devtensor.errors import ArgumentTypeError

NDArray = np.ndarray[Any, np.dtype[Any]]


class Results:
    """Collects comparisons with NumPy and prints one line each."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def expect(self, label: str, got: Tensor, want: NDArray, rtol: float = 1e-5, atol: float = 1e-6) -> None:
        """Compare ``got`` (any device with data) with ``want``: dtype, shape and values within tolerance."""
        values = got.cpu().numpy()
        ok = values.dtype == want.dtype and values.shape == want.shape and np.allclose(values, want, rtol, atol)
        err = float(np.max(np.abs(values.astype(np.float64) - want), initial=0.0)) if values.shape == want.shape else -1
        status = "ok" if ok else "MISMATCH"
        print(f"  {label:<44} {got.device!s:>7} {values.dtype!s:>8} max|err| {err:.2e}  {status}")
        if not ok:
            self.failures.append(label)

    def require(self, label: str, condition: bool, detail: str = "") -> None:
        """Record a check that is not a value comparison."""
        print(f"  {label:<44} {detail}  {'ok' if condition else 'FAILED'}")
        if not condition:
            self.failures.append(label)


def _cuda_available() -> bool:
    try:
        dt.empty(1, device="cuda")
    except Exception:
        return False
    return True


def run_cpu(results: Results, x_np: NDArray) -> None:
    """The custom op's variants on the CPU and on the meta device."""
    print("softplus on the CPU (custom op: meta function + NumPy impl)")
    x = dt.from_numpy(x_np.copy())
    results.expect("softplus(x)", softplus(x), softplus_reference(x_np))
    results.expect("softplus(x, beta=2.0, threshold=5.0)", softplus(x, 2.0, 5.0), softplus_reference(x_np, 2.0, 5.0))
    out = dt.empty(x_np.shape[0], dtype=dt.float32)
    version = out.version
    softplus(x, beta=0.5, out=out)
    results.expect("softplus(x, beta=0.5, out=out)", out, softplus_reference(x_np, 0.5))
    results.require("  out's version bumped once", out.version == version + 1, f"{version} -> {out.version}")
    y = x.clone()
    softplus_(y, threshold=1.0)
    results.expect("softplus_(y, threshold=1.0)", y, softplus_reference(x_np, 1.0, 1.0))
    x64 = dt.from_numpy(x_np.astype(np.float64))
    results.expect("softplus(x float64)", softplus(x64), softplus_reference(x_np.astype(np.float64)), 1e-12, 1e-12)
    m = softplus(x.to("meta"))
    results.require("softplus(meta x): shape and dtype only", m.shape == x.shape and m.dtype == x.dtype, f"{m!r}"[:40])
    try:
        softplus(dt.arange(3))
    except ArgumentTypeError as error:
        results.require("softplus(int64 tensor) raises", True, f"{error}"[:60])
    else:
        results.require("softplus(int64 tensor) raises", False)


def run_cuda(results: Results, x_np: NDArray) -> None:
    """The custom op's variants on the current CUDA device (CuPy impl)."""
    print("softplus on CUDA (CuPy impl)")
    x = dt.from_numpy(x_np.copy()).to("cuda")
    results.expect("softplus(x)", softplus(x), softplus_reference(x_np))
    results.expect("softplus(x, beta=2.0, threshold=5.0)", softplus(x, 2.0, 5.0), softplus_reference(x_np, 2.0, 5.0))
    out = dt.empty(x_np.shape[0], dtype=dt.float32, device=x.device)
    softplus(x, beta=0.5, out=out)
    results.expect("softplus(x, beta=0.5, out=out)", out, softplus_reference(x_np, 0.5))
    softplus_(x)
    results.expect("softplus_(x)", x, softplus_reference(x_np))


def run_numpy2(results: Results, x_np: NDArray) -> None:
    """Built-in and custom ops on the out-of-tree ``numpy2`` device: native kernels and the CPU-copy fallback."""
    print("the out-of-tree device numpy2 (native kernels: add, mul, softplus; everything else: the fallback)")
    NATIVE.clear()
    FALLBACK.clear()
    x = dt.from_numpy(x_np.copy()).to("numpy2")
    results.expect("softplus(x)  [native]", softplus(x), softplus_reference(x_np))
    results.expect("add(x, x, alpha=2)  [native]", dt.add(x, x, alpha=2), x_np + 2 * x_np)
    results.expect("mul(x, 3.0)  [native]", dt.mul(x, 3.0), x_np * np.float32(3.0))
    results.expect("exp(x * 0.1)  [fallback]", dt.exp(dt.mul(x, 0.1)), np.exp(x_np * np.float32(0.1)))
    k = x_np.shape[0] - x_np.shape[0] % 4
    a = x[:k].reshape(4, k // 4)
    results.expect("sum(a, dim=1)  [fallback]", dt.sum(a, 1), x_np[:k].reshape(4, -1).sum(axis=1), 1e-4, 1e-3)
    results.expect(
        "matmul(a, a.transpose(0, 1))  [fallback]",
        dt.matmul(a, a.transpose(0, 1)),
        x_np[:k].reshape(4, -1) @ x_np[:k].reshape(4, -1).T,
        1e-4,
        1e-2,
    )
    out = dt.empty(x_np.shape[0], dtype=dt.float32, device="numpy2")
    dt.tanh(x, out=out)
    results.expect("tanh(x, out=out)  [fallback, out]", out, np.tanh(x_np))
    y = x.clone()
    version = y.version
    dt.sigmoid_(y)
    results.expect("sigmoid_(y)  [fallback, inplace]", y, 1 / (1 + np.exp(-x_np)), 1e-5, 1e-6)
    results.require("  y's version bumped once", y.version == version + 1, f"{version} -> {y.version}")
    try:
        dt.add_(x[1:], x[:-1])
    except dt.MemoryOverlapError:
        results.require("partial overlap on numpy2 is refused", True, "MemoryOverlapError")
    else:
        results.require("partial overlap on numpy2 is refused", False)
    print(f"  calls served natively: {dict(NATIVE)}; by the fallback: {dict(FALLBACK)}")
    results.require("native kernels won over the fallback", NATIVE["add"] >= 1 and FALLBACK["add"] == 0)


def run_timing(x_np: NDArray) -> None:
    """Time the fused op against the same formula composed from devtensor ops (CPU)."""
    x = dt.from_numpy(x_np.copy())

    def composed() -> Tensor:
        z = dt.mul(x, 1.0)
        return dt.where(dt.gt(z, 20.0), x, dt.div(dt.log(dt.add(dt.exp(z), 1.0)), 1.0))

    number = 20
    fused_s = min(timeit.repeat(lambda: softplus(x), number=number, repeat=3)) / number
    composed_s = min(timeit.repeat(composed, number=number, repeat=3)) / number
    print(
        f"timing ({x_np.shape[0]} float32 elements): fused {fused_s * 1e6:.1f} us, composed {composed_s * 1e6:.1f} us"
    )


def run_check(results: Results, x_np: NDArray) -> None:
    """devtensor.library.check over the op: every variant on every key that serves it."""
    small = dt.from_numpy(x_np[:16].copy())
    samples = [
        ((small,), {}),
        ((small,), {"beta": 2.0, "threshold": 1.0}),
        ((small.reshape(4, 4).transpose(0, 1),), {}),
    ]
    report = library.check(softplus_op, samples, reference=softplus_reference)
    keys = sorted({key for _, key, _ in report.runs})
    print(f"library.check(softplus): {len(report.runs)} runs on {', '.join(keys)}: {len(report.problems)} problems")
    for problem in report.problems:
        print(f"  {problem}")
    results.require("library.check(softplus) finds no problem", report.ok)


def main(argv: list[str] | None = None) -> int:
    """Run everything; 0 when all results match NumPy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=100_000, help="elements per tensor (default 100000)")
    parser.add_argument("--device", choices=("auto", "cuda"), default="auto", help="'cuda' requires the GPU part")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    x_np = (rng.standard_normal(max(args.n, 16)) * 8).astype(np.float32)
    results = Results()
    run_cpu(results, x_np)
    if args.device == "cuda" or _cuda_available():
        run_cuda(results, x_np)
    else:
        print("softplus on CUDA: skipped (no GPU or no CuPy)")
    run_numpy2(results, x_np)
    run_timing(x_np)
    run_check(results, x_np)
    if results.failures:
        print(f"FAILED: {', '.join(results.failures)}")
        return 1
    print("all results match NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
