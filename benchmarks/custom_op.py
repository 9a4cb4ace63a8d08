"""Per-call time of a custom op (devtensor.library.custom_op) beside a built-in op doing the same work, and beside
``torch.library.custom_op`` when torch is installed.

For float32 tensors of 1, 100, 10_000 and 1_000_000 elements (as ``benchmarks/overhead.py``) it times, per
variant (functional, out, inplace):

* ``builtin``: devtensor's built-in ``mul(a, 2)`` (``mul(a, 2, out=c)``, ``a.mul_(2)``);
* ``mul2``: a custom op ``mul2(a)`` (meta: shape and dtype of ``a``; CPU impl: ``np.multiply(a, 2, out=...)``);
* ``cmul``: a custom op defined from the built-in ``mul``'s own meta function and impl, so only the definition
  path differs: the cost of being a custom op;
* ``torch``: ``torch.mul(x, 2)`` (``out=``, ``mul_``), and ``torch_custom``: ``torch.library.custom_op`` ops doing
  the same (functional; out and inplace declared with ``mutates_args``), with one torch thread.

Times are the best of several ``timeit`` repeats (microseconds per call); ``mul2/builtin`` and ``cmul/builtin``
are the ratios to the built-in op. ``cmul`` takes the built-in's own lanes and direct path (its meta carries its
ufunc and its CPU kernel is a plain ufunc kernel: devtensor/structured/tables.py), so it costs what ``mul`` costs;
``mul2`` runs its meta function and its kernel as Python calls on every call, where the built-in's call is one
ufunc call, so at small sizes it costs about twice the built-in.

Run: ``python benchmarks/custom_op.py`` (``--quick`` for fewer repeats).
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import devtensor as dt
from devtensor import Tensor, library
from devtensor.meta import binary_ufunc_meta
from devtensor.structured import StructuredOp, TensorSpec
from devtensor.typed import ConstOut, CPUTensor

SIZES = (1, 100, 10_000, 1_000_000)
VARIANTS = ("functional", "out", "inplace")


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """Best seconds per call of ``fn`` over ``repeat`` timeit runs, each sized to take at least ~0.1 s."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def define_ops() -> tuple[StructuredOp, StructuredOp]:
    """The two custom ops: ``bench_mul2`` (its own meta and impl) and ``bench_cmul`` (the built-in mul's)."""

    def bench_mul2(self: Tensor) -> TensorSpec:
        """``self * 2``, same shape and dtype (float inputs)."""
        return self.shape, self.dtype

    mul2 = library.custom_op(out_may_be_input=True, replace=True)(bench_mul2)

    @mul2.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 2, out=out.array)

    builtin = library.get_op("mul")
    cmul = library.custom_op("bench_cmul", out_may_be_input=True, replace=True, schema=builtin.schema)(
        binary_ufunc_meta("bench_cmul", np.multiply)
    )
    cmul.register_kernel("cpu", builtin.table.kernels[dt.DispatchKey.CPU])
    return mul2, cmul


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def _torch_custom_ops(torch: Any) -> dict[str, Callable[..., Any]]:
    """``torch.library.custom_op`` versions of mul2: functional, out (mutates out), inplace (mutates x)."""

    def mul2(x: Any) -> Any:
        return torch.mul(x, 2)

    def mul2_out(x: Any, out: Any) -> None:
        torch.mul(x, 2, out=out)

    def mul2_(x: Any) -> None:
        x.mul_(2)

    # torch infers the schema from the annotations; under postponed annotations they are strings naming a
    # local import, so give them as objects.
    tensor = torch.Tensor
    mul2.__annotations__ = {"x": tensor, "return": tensor}
    mul2_out.__annotations__ = {"x": tensor, "out": tensor, "return": None}
    mul2_.__annotations__ = {"x": tensor, "return": None}
    define = torch.library.custom_op
    return {
        "functional": define("dtbench::mul2", mutates_args=())(mul2),
        "out": define("dtbench::mul2_out", mutates_args=("out",))(mul2_out),
        "inplace": define("dtbench::mul2_", mutates_args=("x",))(mul2_),
    }


def measure(n: int, repeat: int, ops: tuple[StructuredOp, StructuredOp], torch_ops: Any) -> dict[str, dict[str, float]]:
    """Seconds per call, per variant, for each contender, at ``n`` float32 elements."""
    mul2, cmul = ops
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    ta, tc = dt.from_numpy(a.copy()), dt.from_numpy(np.empty_like(a))
    f2, fc = mul2.functional, cmul.functional
    i2, ic = mul2.inplace, cmul.inplace
    assert i2 is not None and ic is not None
    results: dict[str, dict[str, float]] = {
        "functional": {
            "builtin": best_time(lambda: dt.mul(ta, 2), repeat),
            "mul2": best_time(lambda: f2(ta), repeat),
            "cmul": best_time(lambda: fc(ta, 2), repeat),
        },
        "out": {
            "builtin": best_time(lambda: dt.mul(ta, 2, out=tc), repeat),
            "mul2": best_time(lambda: f2(ta, out=tc), repeat),
            "cmul": best_time(lambda: fc(ta, 2, out=tc), repeat),
        },
        "inplace": {
            "builtin": best_time(lambda: ta.mul_(2), repeat),
            "mul2": best_time(lambda: i2(ta), repeat),
            "cmul": best_time(lambda: ic(ta, 2), repeat),
        },
    }
    if torch_ops is not None:
        torch, custom = torch_ops
        xa, xc = torch.from_numpy(a.copy()), torch.from_numpy(np.empty_like(a))
        results["functional"]["torch"] = best_time(lambda: torch.mul(xa, 2), repeat)
        results["functional"]["torch_custom"] = best_time(lambda: custom["functional"](xa), repeat)
        results["out"]["torch"] = best_time(lambda: torch.mul(xa, 2, out=xc), repeat)
        results["out"]["torch_custom"] = best_time(lambda: custom["out"](xa, xc), repeat)
        results["inplace"]["torch"] = best_time(lambda: xa.mul_(2), repeat)
        results["inplace"]["torch_custom"] = best_time(lambda: custom["inplace"](xa), repeat)
    return results


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 7
    ops = define_ops()
    torch = _torch()
    torch_ops = (torch, _torch_custom_ops(torch)) if torch is not None else None
    header = (
        f"{'elements':>10} {'variant':>10} {'builtin us':>11} {'mul2 us':>9} {'mul2/builtin':>13}"
        f" {'cmul us':>9} {'cmul/builtin':>13}"
    )
    if torch is not None:
        header += f" {'torch us':>9} {'torch_custom us':>16}"
    print(header)
    for n in SIZES:
        with np.errstate(over="ignore"):  # the inplace runs multiply the same data by 2 until it is inf
            rows = measure(n, repeat, ops, torch_ops)
        for variant, row in rows.items():
            base = row["builtin"]
            line = (
                f"{n:>10} {variant:>10} {base * 1e6:>11.3f} {row['mul2'] * 1e6:>9.3f} {row['mul2'] / base:>13.2f}"
                f" {row['cmul'] * 1e6:>9.3f} {row['cmul'] / base:>13.2f}"
            )
            if "torch" in row:
                line += f" {row['torch'] * 1e6:>9.3f} {row['torch_custom'] * 1e6:>16.3f}"
            print(line)
    for op in ops:
        library.remove_op(op)


if __name__ == "__main__":
    main()
