"""How fast a pure-Python front could make the functional-style training step: the step of
``functional_step`` (examples/train_digits.py: a new tensor per op, the weights rebound each step) written five
ways, timed per epoch, interleaved, best of several rounds:

* ``numpy``: ``numpy_functional_step``, the same model in NumPy expressions (the reference);
* ``wrapped``: NumPy's calls on the tensors' arrays, each result wrapped in a new tensor as the generated fronts
  wrap one (the tensor and its storage), with no check and no Python frame per op: the floor for any front that
  returns devtensor tensors;
* ``lean``: one small Python function per op with the checks every front makes at least (no mode active, the
  operands are tensors on one device without a device guard, of the expected dtypes, the built-in kernel is the
  handler), then the NumPy call and the wrap. Nothing else: no broadcasting, ``out=``, ``alpha``, Python-int
  range or floating-point rule. A lower bound for a front that keeps devtensor's guarantees;
* ``lean+fp``: ``lean`` with addmm's steps under devtensor's ``deferred_conditions`` and log_softmax's under
  ``quiet``, as the built-in kernels run them (each switches NumPy's floating-point state, a context variable,
  and back);
* ``devtensor``: ``functional_step`` itself.

Then the same for ``softmax(dim=1)`` of a 10x10 float32 tensor per call (report.py's case): the idiomatic NumPy
code; the kernel alone (devtensor's CPU kernel on the array, its floating-point state switch included); the
kernel and the wrap; ``inline`` (a lean front with the kernel's steps written into it, no kernel frame); and
``dt.softmax``.

The lean fronts here are for measurement only (they skip checks devtensor needs); every way computes the same
values. Run: ``python benchmarks/step_floor.py`` (``--rounds N``). Prints µs per step (per call) and the ratio to
NumPy for each. Needs scikit-learn (the digits data).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # (one BLAS thread, as report.py)
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import devtensor as dt  # noqa: E402
from devtensor.device import as_device  # noqa: E402
from devtensor.kernels.ufunc_family import deferred_conditions, quiet  # noqa: E402
from devtensor.storage import Storage  # noqa: E402
from devtensor.tensor import Tensor  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
td: Any = importlib.import_module("train_digits")  # (the example, beside the benchmarks)
from report import functional_batches, interleaved  # noqa: E402  # (the sibling script)

Step = Callable[..., tuple[Any, ...]]
_mm, _add, _sub, _mul, _exp, _log, _gt, _max = (
    np.matmul,
    np.add,
    np.subtract,
    np.multiply,
    np.exp,
    np.log,
    np.greater,
    np.maximum,
)
_rmax: Any = np.maximum.reduce
_rsum: Any = np.add.reduce
_F32, _BOOL = np.dtype(np.float32), np.dtype(np.bool_)


def _wrap(array: Any, like: Tensor) -> Any:
    """``array`` as a new tensor on ``like``'s device and class, made as the generated fronts make a result."""
    result = object.__new__(type(like))
    result._array = array
    result._device = like._device
    result._storage = storage = object.__new__(Storage)
    storage.root = array
    storage.version = 0
    result._shape = array.shape
    result._dtype = array.dtype
    result._write_checked = True
    return result


def _addmm_steps(s: Any, m1: Any, m2: Any) -> Any:
    o = _mm(m1, m2)
    _add(o, s, out=o)
    return o


def _log_softmax_steps(x: Any) -> Any:
    shifted = _sub(x, _rmax(x, 1, None, None, True))
    return _sub(shifted, _log(_rsum(_exp(shifted), 1, None, None, True)))


def wrapped_step(w1: Any, b1: Any, w2: Any, b2: Any, xb: Any, yb1h: Any, lr: float, inv_b: float) -> tuple[Any, ...]:
    """The step on the tensors' arrays, each result wrapped: no checks, no frame per op."""
    w = _wrap
    h = w(_max(w(_addmm_steps(b1._array, xb._array, w1._array), xb)._array, 0), xb)
    logp = w(_log_softmax_steps(w(_addmm_steps(b2._array, h._array, w2._array), xb)._array), xb)
    loss = w(_mul(w(_rsum(w(_mul(logp._array, yb1h._array), xb)._array, None, None, out=...), xb)._array, -inv_b), xb)
    dlogits = w(_mul(w(_sub(w(_exp(logp._array), xb)._array, yb1h._array), xb)._array, inv_b), xb)
    dh = w(_mul(w(_mm(dlogits._array, w(w2._array.T, xb)._array), xb)._array, w(_gt(h._array, 0), xb)._array), xb)
    g1 = w(_mm(w(xb._array.T, xb)._array, dh._array), xb)
    g2 = w(_mm(w(h._array.T, xb)._array, dlogits._array), xb)
    return (
        w(_sub(w1._array, w(_mul(lr, g1._array), xb)._array), xb),
        w(_sub(b1._array, w(_mul(lr, w(_rsum(dh._array, 0), xb)._array), xb)._array), xb),
        w(_sub(w2._array, w(_mul(lr, g2._array), xb)._array), xb),
        w(_sub(b2._array, w(_mul(lr, w(_rsum(dlogits._array, 0), xb)._array), xb)._array), xb),
        loss,
    )


def lean_ops(fp_states: bool) -> dict[str, Callable[..., Any]]:
    """The lean fronts by op name; ``fp_states``: addmm and log_softmax switch the floating-point state as
    devtensor's kernels do."""
    modes = [False]
    handlers = {as_device("cpu").key: True}

    def ready(t: Any) -> bool:
        d = t._device
        return d._guard is None and handlers.get(d.key) is True

    def binary(ufunc: Any) -> Callable[[Any, Any], Any]:
        def op(a: Any, b: Any) -> Any:
            if modes[0]:
                raise RuntimeError("a mode is active")
            if isinstance(a, Tensor):
                if isinstance(b, Tensor):
                    if b._device is a._device and a._dtype is _F32 and b._dtype in (_F32, _BOOL) and ready(a):
                        return _wrap(ufunc(a._array, b._array), a)
                elif type(b) is float and a._dtype is _F32 and ready(a):
                    return _wrap(ufunc(a._array, b), a)
            elif type(a) is float and isinstance(b, Tensor) and b._dtype is _F32 and ready(b):
                return _wrap(ufunc(a, b._array), b)
            raise TypeError("not the lean path")

        return op

    def unary(fn: Callable[..., Any]) -> Callable[..., Any]:
        def op(a: Any, *args: Any) -> Any:
            if modes[0]:
                raise RuntimeError("a mode is active")
            if isinstance(a, Tensor) and a._dtype is _F32 and ready(a):
                return _wrap(fn(a._array, *args), a)
            raise TypeError("not the lean path")

        return op

    def addmm_fp(s: Any, m1: Any, m2: Any) -> Any:
        with deferred_conditions():
            return _addmm_steps(s, m1, m2)

    def log_softmax_fp(x: Any) -> Any:
        with quiet():
            return _log_softmax_steps(x)

    addmm_kernel = addmm_fp if fp_states else _addmm_steps

    def addmm(s: Any, m1: Any, m2: Any) -> Any:
        if modes[0]:
            raise RuntimeError("a mode is active")
        if isinstance(s, Tensor) and isinstance(m1, Tensor) and isinstance(m2, Tensor):
            d = s._device
            same = m1._device is d and m2._device is d
            if same and s._dtype is _F32 and m1._dtype is _F32 and m2._dtype is _F32 and ready(s):
                return _wrap(addmm_kernel(s._array, m1._array, m2._array), s)
        raise TypeError("not the lean path")

    def total(a: Any, dim: int | None = None) -> Any:
        return _rsum(a, None, None, out=...) if dim is None else _rsum(a, dim)

    return {
        "add": binary(_add),
        "sub": binary(_sub),
        "mul": binary(_mul),
        "matmul": binary(_mm),
        "gt": binary(_gt),
        "exp": unary(_exp),
        "relu": unary(lambda a: _max(a, 0)),
        "sum": unary(total),
        "T": unary(lambda a: a.T),
        "log_softmax": unary(log_softmax_fp if fp_states else _log_softmax_steps),
        "addmm": addmm,
    }


def lean_step(ops: dict[str, Callable[..., Any]]) -> Step:
    """``functional_step`` through the lean fronts ``ops``."""
    sub, mul, mm, tr, total = ops["sub"], ops["mul"], ops["matmul"], ops["T"], ops["sum"]
    addmm, relu, log_softmax, exp, gt = ops["addmm"], ops["relu"], ops["log_softmax"], ops["exp"], ops["gt"]

    def step(w1: Any, b1: Any, w2: Any, b2: Any, xb: Any, yb1h: Any, lr: float, inv_b: float) -> tuple[Any, ...]:
        h = relu(addmm(b1, xb, w1))
        logp = log_softmax(addmm(b2, h, w2))
        loss = mul(total(mul(logp, yb1h)), -inv_b)
        dlogits = mul(sub(exp(logp), yb1h), inv_b)
        dh = mul(mm(dlogits, tr(w2)), gt(h, 0.0))
        return (
            sub(w1, mul(lr, mm(tr(xb), dh))),
            sub(b1, mul(lr, total(dh, 0))),
            sub(w2, mul(lr, mm(tr(h), dlogits))),
            sub(b2, mul(lr, total(dlogits, 0))),
            loss,
        )

    return step


def softmax_floors(rounds: int) -> dict[str, float]:
    """Seconds per ``softmax(x, 1)`` call of a 10x10 float32 tensor, each way of the module docstring."""
    from devtensor.kernels.nn import SoftmaxPlan, _softmax_cpu
    from devtensor.kernels.ufunc_family import EXTOBJ, QUIET, quiet_extobj

    x = np.random.default_rng(0).standard_normal((10, 10)).astype(np.float32)
    t = dt.from_numpy(x.copy())
    plan = SoftmaxPlan(1, False, _F32)
    specs = {(t._shape, t._dtype, 1): (t._shape, t._dtype)}
    handlers = {t._device.key: True}
    quiet_states: Any = QUIET  # (NumPy 2's cached quiet states: not None there)

    def np_softmax() -> Any:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def inline(self: Any, dim: Any) -> Any:
        if isinstance(self, Tensor) and type(dim) is int:
            spec = specs.get((self._shape, self._dtype, dim))
            d = self._device
            if spec is not None and d._guard is None and handlers.get(d.key) is True:
                a = self._array
                caller = EXTOBJ.get()
                token = EXTOBJ.set(quiet_states.get(caller) or quiet_extobj())
                try:
                    o = _sub(a, _rmax(a, dim, None, None, True))
                    _exp(o, o)
                    np.divide(o, _rsum(o, dim, None, None, True), o)
                finally:
                    EXTOBJ.reset(token)
                return _wrap(o, self)
        raise TypeError("not the lean path")

    return interleaved(
        {
            "numpy": np_softmax,
            "kernel": lambda: _softmax_cpu(x, plan),
            "kernel+wrap": lambda: _wrap(_softmax_cpu(x, plan), t),
            "inline": lambda: inline(t, 1),
            "devtensor": lambda: dt.softmax(t, 1),
        },
        rounds,
    )


def main() -> None:
    """Time the five steps per epoch and softmax's ways per call, and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    cfg = td.Config(epochs=1)
    data = td.load_data(0)
    weights = td.init_weights(cfg, data.x_train.shape[1], 10)
    lr, inv_b = cfg.lr, 1.0 / cfg.batch
    np_batches, dt_batches = functional_batches(cfg, data)
    names = ("w1", "b1", "w2", "b2")
    steps: dict[str, tuple[Step, list[Any], list[Any]]] = {
        "numpy": (td.numpy_functional_step, [weights[k].copy() for k in names], np_batches),
        "wrapped": (wrapped_step, [dt.tensor(weights[k]) for k in names], dt_batches),
        "lean": (lean_step(lean_ops(False)), [dt.tensor(weights[k]) for k in names], dt_batches),
        "lean+fp": (lean_step(lean_ops(True)), [dt.tensor(weights[k]) for k in names], dt_batches),
        "devtensor": (td.functional_step, [dt.tensor(weights[k]) for k in names], dt_batches),
    }
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(args.rounds):
        for name, (step, w, batches) in steps.items():
            start = time.perf_counter()
            w1, b1, w2, b2 = w
            for xb, yb in batches:
                w1, b1, w2, b2, loss = step(w1, b1, w2, b2, xb, yb, lr, inv_b)
                float(loss)
            best[name] = min(best[name], (time.perf_counter() - start) / len(batches))
            w[:] = [w1, b1, w2, b2]
    final = {name: np.asarray(w[0]) for name, (_, w, _) in steps.items()}
    for name, w1 in final.items():  # (the same values every way: the rewrites compute what the step computes)
        np.testing.assert_allclose(w1, final["numpy"], rtol=1e-4, atol=1e-5, err_msg=name)
    print(f"{'step':10s} {'µs':>7s} {'vs NumPy':>9s}")
    for name, seconds in best.items():
        print(f"{name:10s} {seconds * 1e6:7.2f} {seconds / best['numpy']:8.2f}x")
    calls = softmax_floors(args.rounds)
    print(f"\n{'softmax':12s} {'µs':>6s} {'vs NumPy':>9s}")
    for name, seconds in calls.items():
        print(f"{name:12s} {seconds * 1e6:6.2f} {seconds / calls['numpy']:8.2f}x")


if __name__ == "__main__":
    main()
