"""The main job's eager step gives the same bytes as the kernels it replaced.

The per-call-cost work rewrote kernels (ufunc ``reduce`` methods instead of ``np.sum``/``np.amax``, ``addmm``
writing the product into its output, ``sub_(..., alpha=)`` without ``np.result_type``, a cheaper
``cross_entropy``). Those rewrites must not change a single bit. This test trains the example's
:class:`DevtensorMLP` for a few epochs beside :class:`OldKernels`, plain NumPy calls written exactly as the
earlier kernels made them (``np.sum(axis=...)``, a temporary for ``addmm``, ``np.take_along_axis`` and
``np.mean`` for the loss, ...), from the same weights and minibatches, and compares the weights' and the
losses' bytes. Both run here, on this machine: no stored digest.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from helpers import loaded_example

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"
NDArray = np.ndarray[Any, np.dtype[Any]]


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    yield from loaded_example(EXAMPLE, "train_digits_bits")


class OldKernels:
    """The MLP step as the earlier kernels computed it, one NumPy call per kernel step."""

    def __init__(self, cfg: Any, x: NDArray, y: NDArray, weights: dict[str, NDArray]) -> None:
        self.cfg = cfg
        b = cfg.batch
        n_full = (len(x) // b) * b
        y1h = np.equal(y[:n_full, None], np.arange(10)).astype(np.float32)
        self.batches = [(x[i : i + b], x[i : i + b].T, y[i : i + b], y1h[i : i + b]) for i in range(0, n_full, b)]
        self.w1, self.b1 = weights["w1"].copy(), weights["b1"].copy()
        self.w2, self.b2 = weights["w2"].copy(), weights["b2"].copy()
        f32 = np.float32
        self.h = np.empty((b, cfg.hidden), f32)
        self.mask = np.empty((b, cfg.hidden), bool)
        self.logits = np.empty((b, 10), f32)
        self.probs = np.empty((b, 10), f32)
        self.dlogits = np.empty((b, 10), f32)
        self.dh = np.empty((b, cfg.hidden), f32)
        self.dw1, self.db1 = np.empty_like(self.w1), np.empty_like(self.b1)
        self.dw2, self.db2 = np.empty_like(self.w2), np.empty_like(self.b2)
        self.losses: list[bytes] = []

    @staticmethod
    def addmm(s: NDArray, m1: NDArray, m2: NDArray, out: NDArray) -> None:
        dtype = np.result_type(s.dtype, m1.dtype, m2.dtype)
        prod = np.matmul(m1.astype(dtype, copy=False), m2.astype(dtype, copy=False))
        np.add(prod, s.astype(dtype, copy=False), out=prod)
        np.copyto(out, prod, casting="same_kind")

    @staticmethod
    def sub_(a: NDArray, b: NDArray, alpha: float) -> None:
        np.subtract(a, np.multiply(b, alpha, dtype=np.result_type(a.dtype, b.dtype)), out=a)

    def cross_entropy(self, x: NDArray, t: NDArray) -> bytes:  # (``self`` unused: also called unbound)
        lo, hi = int(np.amin(t)), int(np.amax(t))
        assert lo >= 0 and hi < x.shape[1]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            m = np.amax(x, axis=1, keepdims=True)
            m = np.where(np.isfinite(m), m, 0)
            e = x - m
            np.exp(e, out=e)
            s = np.sum(e, axis=1, keepdims=True)
            np.log(s, out=s)
            np.add(s, m, out=s)
            lse = np.empty((x.shape[0],), x.dtype)
            np.copyto(lse, s.reshape(lse.shape), casting="same_kind")
            picked = np.take_along_axis(x, t.astype(np.int64, copy=False)[:, None], axis=1)[:, 0]
            np.subtract(lse, picked, out=lse)
            loss = np.empty((), x.dtype)
            np.copyto(loss, np.mean(lse), casting="same_kind")
        return loss.tobytes()

    def step(self, xb: NDArray, xb_t: NDArray, yb: NDArray, yb1h: NDArray) -> None:
        lr, inv_b = self.cfg.lr, 1.0 / self.cfg.batch
        self.addmm(self.b1, xb, self.w1, self.h)
        np.maximum(self.h, 0, out=self.h)
        self.addmm(self.b2, self.h, self.w2, self.logits)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (the old softmax kernel)
            m = np.amax(self.logits, axis=1, keepdims=True)
            np.subtract(self.logits, m, out=self.probs)
            np.exp(self.probs, out=self.probs)
            np.divide(self.probs, np.sum(self.probs, axis=1, keepdims=True), out=self.probs)
        self.losses.append(self.cross_entropy(self.logits, yb))
        np.subtract(self.probs, yb1h, out=self.dlogits)
        np.multiply(self.dlogits, inv_b, out=self.dlogits)
        np.matmul(self.h.T, self.dlogits, out=self.dw2)
        np.sum(self.dlogits, axis=(0,), out=self.db2)
        np.matmul(self.dlogits, self.w2.T, out=self.dh)
        np.greater(self.h, 0, out=self.mask)
        np.multiply(self.dh, self.mask, out=self.dh)
        np.matmul(xb_t, self.dh, out=self.dw1)
        np.sum(self.dh, axis=(0,), out=self.db1)
        self.sub_(self.w1, self.dw1, lr)
        self.sub_(self.b1, self.db1, lr)
        self.sub_(self.w2, self.dw2, lr)
        self.sub_(self.b2, self.db2, lr)


def test_eager_training_step_is_bit_identical_to_the_earlier_kernels(example: ModuleType) -> None:
    rng = np.random.default_rng(7)
    # Synthetic digits-like data (no scikit-learn needed): 8x8 "images" in [0, 1], 10 classes.
    x = rng.random((320, 64), dtype=np.float32)
    y = rng.integers(0, 10, 320).astype(np.int64)
    data = example.Data(x, y, x[:40], y[:40])
    cfg = example.Config(hidden=32, batch=32, lr=0.1, epochs=3, seed=0)
    weights = example.init_weights(cfg, 64, 10)
    model = example.DevtensorMLP(cfg, data, weights, "cpu")
    old = OldKernels(cfg, x, y, weights)
    losses: list[bytes] = []
    for epoch in range(cfg.epochs):
        order = example.batch_order(cfg, len(model.batches), epoch)
        for i in order:
            model.step(*model.batches[i])
            losses.append(model.loss.numpy().tobytes())
            old.step(*old.batches[i])
    assert losses == old.losses
    for name in ("w1", "b1", "w2", "b2"):
        assert getattr(model, name).numpy().tobytes() == getattr(old, name).tobytes(), name
    # The weights moved: the comparison is not of two untouched copies.
    assert model.w1.numpy().tobytes() != weights["w1"].tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("special", [None, np.inf, -np.inf, np.nan, 3e38])
def test_cross_entropy_bytes_match_the_earlier_kernel(dtype: Any, special: float | None) -> None:
    import warnings

    import devtensor as dt

    rng = np.random.default_rng(3)
    x = (rng.standard_normal((6, 5)) * 4).astype(dtype)
    if special is not None and np.dtype(dtype).kind == "f":
        with np.errstate(over="ignore"):
            x[2, :] = special
            x[4, 1] = special
    t = rng.integers(0, 5, 6)
    compute = np.float32 if dtype == np.float16 else (np.float64 if np.dtype(dtype).kind == "i" else dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = OldKernels.cross_entropy(None, x.astype(compute), t)  # type: ignore[arg-type]
        got = dt.cross_entropy(dt.from_numpy(x), dt.from_numpy(t)).numpy()
    # (float16 is computed in float32, then rounded to float16, as before)
    assert got.tobytes() == np.frombuffer(expected, compute).astype(got.dtype).tobytes()


def test_functional_step_matches_its_numpy_twin_bit_for_bit(example: ModuleType) -> None:
    """benchmarks/report.py times the example's functional_step beside numpy_functional_step as "the same model
    in NumPy": they compute the same weights and losses, bit for bit, over a few epochs."""
    import devtensor as dt

    rng = np.random.default_rng(11)
    x = rng.random((256, 64), dtype=np.float32)
    y1h = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]
    cfg = example.Config(hidden=32, batch=32, lr=0.1, epochs=3, seed=0)
    weights = example.init_weights(cfg, 64, 10)
    np_w = [weights[k].copy() for k in ("w1", "b1", "w2", "b2")]
    dt_w = [dt.tensor(weights[k]) for k in ("w1", "b1", "w2", "b2")]
    for _ in range(cfg.epochs):
        for i in range(0, len(x), cfg.batch):
            xb, yb1h = x[i : i + cfg.batch], y1h[i : i + cfg.batch]
            *np_w, np_loss = example.numpy_functional_step(*np_w, xb, yb1h, cfg.lr, 1.0 / cfg.batch)
            *dt_w, dt_loss = example.functional_step(
                *dt_w, dt.from_numpy(xb), dt.from_numpy(yb1h), cfg.lr, 1.0 / cfg.batch
            )
            assert dt_loss.numpy().tobytes() == np.asarray(np_loss).tobytes()
    for name, a, b in zip(("w1", "b1", "w2", "b2"), np_w, dt_w, strict=True):
        assert b.numpy().tobytes() == a.tobytes(), name
    assert np_w[0].tobytes() != weights["w1"].tobytes()
