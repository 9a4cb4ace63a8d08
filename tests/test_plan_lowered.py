"""Lowered replays (devtensor.lowering) against the kernels' and eager, at the edges the op samples do not reach:
cross_entropy's steps written into the replay (the gather by a buffer's flat view or by ``take``, the class check,
the total computed again when not finite, an ``out=`` argument) and the ``alpha=`` product's call for floating
operands and Python scalars (no ``dtype=``: the loop NumPy picks anyway), compared bit for bit, with the
floating-point conditions each reports and the error each raises."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import Tensor
from devtensor.plan import replay


def _outcome(call: Callable[[], Any], args: list[Tensor], mode: str) -> tuple[Any, ...]:
    """What ``call()`` does under ``np.errstate(all=mode)``: its result's and the arguments' bytes and versions
    (or the error's type), the conditions warned. As the step as a whole: a replay with lowered steps records the
    conditions of the step and reports each once after its last write, without an op's name (eager: each op's
    own, "invalid value encountered in matmul"), so the conditions are compared as a set."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(all=mode):  # type: ignore[arg-type]
        warnings.simplefilter("always")
        try:
            result = call()
            results = result if isinstance(result, tuple) else (result,)
            got: Any = [(r.dtype, r.shape, r.numpy().tobytes()) for r in results]
        except FloatingPointError:
            got = FloatingPointError
    state = [(a.dtype, a.numpy().tobytes(), a.version) for a in args]
    return got, state, {str(w.message).partition(" in ")[0] for w in caught}


def _compare(
    step: Callable[..., Any], make: Callable[[], list[Tensor]], mode: str, lowered: int, deferred: bool = True
) -> None:
    """``step`` eagerly, planned lowered and planned through the kernels, each on its own fresh arguments, twice
    (a replay on the same tensors) after a first call (through the fronts): the same outcomes; the lowered plan
    lowered ``lowered`` records. Under "raise" a lowered replay makes every write of the step before raising
    (eager raises after the op's own): it raises where eager does; one whose steps are single calls
    (``deferred=False``) runs in the caller's state and raises as eager, after the write and its version bump."""
    eager = make()
    want = [_outcome(lambda: step(*eager), eager, mode) for _ in range(3)]
    for lower in (True, False):
        replay.LOWER[0] = lower
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                plan = dt.plan(step, *make())
        finally:
            replay.LOWER[0] = True
        assert plan._local.replay.__lowered__ == (lowered if lower else 0)
        args = make()
        got = [_outcome(functools.partial(plan, *args), args, mode) for _ in range(3)]
        if mode != "raise" or not lower or not deferred:
            assert got == want
        else:  # (the writes of the step before the error: see the docstring)
            assert [result is FloatingPointError for result, _, _ in got] == [
                result is FloatingPointError for result, _, _ in want
            ]


@pytest.mark.parametrize("mode", ["warn", "raise", "ignore"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", ["finite", "inf", "nan", "large"])
def test_cross_entropys_lowered_steps_replay_the_kernel(rows: str, dtype: Any, mode: str) -> None:
    # The loss of a buffer (x @ w: the target logits by its flat view) and of an argument, contiguous or strided
    # (by take), into an out= argument; a non-finite row takes the total computed again with finite maxima.
    def step(x: Tensor, w: Tensor, s: Tensor, t: Tensor, out: Tensor) -> tuple[Tensor, Tensor]:
        dt.cross_entropy(s, t, out=out)
        return dt.cross_entropy(x @ w, t), dt.cross_entropy(x, t)

    def make() -> list[Tensor]:
        rng = np.random.default_rng(3)
        x = rng.standard_normal((5, 3)).astype(dtype) * (1e30 if rows == "large" else 1.0)
        if rows != "finite" and rows != "large":
            x[1, 2] = np.inf if rows == "inf" else np.nan
        wide = np.repeat(x, 2, axis=1)
        t = np.array([0, 2, 1, 2, 0])
        return [
            dt.tensor(x),
            dt.tensor(np.eye(3, dtype=dtype)),
            dt.tensor(wide)[:, ::2],
            dt.tensor(t),
            dt.zeros((), dtype=dtype),
        ]

    _compare(step, make, mode, 4)


@pytest.mark.parametrize("mode", ["warn", "raise"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("alpha", [0.05, -3, 1e-30, 7e4, 3.5e38, 1e300, 2**70, float("inf"), float("nan")])
def test_alpha_products_replay_the_kernels_loop(alpha: Any, dtype: Any, mode: str) -> None:
    # The product into a spare buffer (w.sub_(g + w * 0.5, alpha=)) and into a temporary (add of two arguments):
    # without dtype= for a floating operand and a Python float or int, the same values, conditions and errors.
    def step(w: Tensor, g: Tensor) -> Tensor:
        w.sub_(g + w * 0.5, alpha=alpha)
        return dt.add(w, g, alpha=alpha)

    def make() -> list[Tensor]:
        values = np.array([1.0, -2.0, 0.0, 3e-5, 6e4], dtype)
        return [dt.tensor(values), dt.tensor(values[::-1].copy())]

    _compare(step, make, mode, 4)


@pytest.mark.parametrize("mode", ["raise", "warn"])
def test_a_write_raising_its_condition_moves_the_version_as_eager(mode: str) -> None:
    # The caller's state raising after a write (out=, inplace, a reduction into out=): the data moved, so the
    # version does, as the fronts count it (rules.written_then_raised), lowered or through the kernel.
    def step(a: Tensor, b: Tensor, c: Tensor, s: Tensor) -> Tensor:
        dt.add(a, b, out=c)
        a.mul_(b)
        dt.sum(c, 0, out=s)
        return c

    def make() -> list[Tensor]:
        big = np.array([3e38, -3e38, 1.0], np.float32)
        args = [dt.tensor(big), dt.tensor(big.copy()), dt.zeros(3, dtype=dt.float32), dt.zeros((), dtype=dt.float32)]
        for t in args:  # (written once before: the replays skip the fronts from the first, raising or not)
            t.mul_(1)
        return args

    _compare(step, make, mode, 3, deferred=False)
