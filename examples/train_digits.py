"""Train a one-hidden-layer MLP with hand-written gradients on scikit-learn's handwritten digits, with devtensor.

The data is ``sklearn.datasets.load_digits`` (1797 8x8 images, 10 classes; shipped inside scikit-learn, no
download), scaled to [0, 1] and split 80/20 into a training and a held-out test set (stratified, fixed seed).
The model is ``softmax(relu(x @ W1 + b1) @ W2 + b2)`` trained by minibatch SGD on the mean cross-entropy.

By default the training step is written plainly (:func:`train_step`: one new tensor per op, no buffers) and run
through a static plan (``dt.planned``): traced once on meta stand-ins, its results preallocated (sharing memory by
liveness) and its ops replayed as direct kernel calls, so a step allocates no tensor. ``--eager`` runs the same
step eagerly (losses and weights equal to the planned run's bit for bit); ``--buffers`` runs the hand-buffered
eager step (:class:`DevtensorMLP`: buffers allocated once before training, filled through the out= and inplace
variants of devtensor's ops).
The same algorithm, written in plain NumPy with the same initial weights, minibatches and buffers, runs beside
it; per epoch the script prints the loss, the test accuracy of both and the seconds per epoch of both. The NumPy
step computes the probabilities as the devtensor step does (:func:`train_step`'s ``exp(log_softmax)``, the
buffered step's ``softmax``: equal in exact arithmetic, not in float32), so the two agree bit for bit on the CPU.

Run: ``python examples/train_digits.py`` (``--eager`` or ``--buffers`` for an eager step, ``--device cuda`` to
train on a GPU, ``--epochs N``).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import devtensor as dt
from devtensor import Tensor

NDArray = np.ndarray[Any, np.dtype[Any]]


@dataclass
class Data:
    """Train/test split of the digits: features float32 [N, 64] in [0, 1], labels int64 [N]."""

    x_train: NDArray
    y_train: NDArray
    x_test: NDArray
    y_test: NDArray


def load_data(seed: int = 0) -> Data:
    """The digits dataset, scaled to [0, 1], split 80/20 (stratified by class, ``seed`` fixes the split)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)
    return Data(x_train, y_train, x_test, y_test)


@dataclass
class Config:
    """Hyperparameters: hidden width, minibatch size, learning rate, epochs, seed."""

    hidden: int = 128
    batch: int = 32
    lr: float = 0.1
    epochs: int = 30
    seed: int = 0


def init_weights(cfg: Config, n_in: int, n_out: int) -> dict[str, NDArray]:
    """He-initialised weights (float32), the same for both implementations."""
    rng = np.random.default_rng(cfg.seed)
    return {
        "w1": (rng.standard_normal((n_in, cfg.hidden)) * np.sqrt(2.0 / n_in)).astype(np.float32),
        "b1": np.zeros(cfg.hidden, np.float32),
        "w2": (rng.standard_normal((cfg.hidden, n_out)) * np.sqrt(2.0 / cfg.hidden)).astype(np.float32),
        "b2": np.zeros(n_out, np.float32),
    }


def batch_order(cfg: Config, n_batches: int, epoch: int) -> list[int]:
    """The order minibatches are visited in during ``epoch`` (shuffled, reproducible)."""
    return list(np.random.default_rng(cfg.seed + 1 + epoch).permutation(n_batches))


class DevtensorMLP:
    """The MLP on devtensor tensors: parameters, per-step buffers and per-batch views, all made up front."""

    def __init__(self, cfg: Config, data: Data, weights: dict[str, NDArray], device: str) -> None:
        self.setup(cfg, data, weights, device)
        b, n_classes = cfg.batch, 10
        f32 = dt.float32
        self.h = dt.empty(b, cfg.hidden, dtype=f32, device=device)
        self.h_t = self.h.transpose(0, 1)
        self.mask = dt.empty(b, cfg.hidden, dtype=dt.bool, device=device)
        self.logits = dt.empty(b, n_classes, dtype=f32, device=device)
        self.probs = dt.empty(b, n_classes, dtype=f32, device=device)
        self.dlogits = dt.empty(b, n_classes, dtype=f32, device=device)
        self.dh = dt.empty(b, cfg.hidden, dtype=f32, device=device)
        self.dw1 = dt.empty_like(self.w1)
        self.db1 = dt.empty_like(self.b1)
        self.dw2 = dt.empty_like(self.w2)
        self.db2 = dt.empty_like(self.b2)
        self.loss = dt.empty((), dtype=f32, device=device)

    def setup(self, cfg: Config, data: Data, weights: dict[str, NDArray], device: str) -> None:
        """The data on the device, its minibatches (views) and the parameters."""
        self.cfg = cfg
        n_classes = 10
        b = cfg.batch
        n_full = (len(data.x_train) // b) * b
        # Data on the device; minibatches are views made once (no copy, no allocation per step).
        x = dt.tensor(data.x_train[:n_full], device=device)
        y = dt.tensor(data.y_train[:n_full], device=device)
        y1h = dt.one_hot(y, n_classes).to(dtype=dt.float32)
        self.batches = [
            (x[i : i + b], x[i : i + b].transpose(0, 1), y[i : i + b], y1h[i : i + b]) for i in range(0, n_full, b)
        ]
        self.x_test = dt.tensor(data.x_test, device=device)
        self.y_test = dt.tensor(data.y_test, device=device)
        self.w1, self.b1 = dt.tensor(weights["w1"], device=device), dt.tensor(weights["b1"], device=device)
        self.w2, self.b2 = dt.tensor(weights["w2"], device=device), dt.tensor(weights["b2"], device=device)
        self.w2_t = self.w2.transpose(0, 1)

    def step(self, xb: Tensor, xb_t: Tensor, yb: Tensor, yb1h: Tensor) -> None:
        """One SGD step on a minibatch; every result goes into a preallocated buffer."""
        lr, inv_b = self.cfg.lr, 1.0 / self.cfg.batch
        # forward
        dt.addmm(self.b1, xb, self.w1, out=self.h)
        self.h.relu_()
        dt.addmm(self.b2, self.h, self.w2, out=self.logits)
        dt.softmax(self.logits, 1, out=self.probs)
        dt.cross_entropy(self.logits, yb, out=self.loss)
        # backward: d(mean CE)/d logits = (softmax - onehot) / batch
        dt.sub(self.probs, yb1h, out=self.dlogits).mul_(inv_b)
        dt.mm(self.h_t, self.dlogits, out=self.dw2)
        dt.sum(self.dlogits, 0, out=self.db2)
        dt.mm(self.dlogits, self.w2_t, out=self.dh)
        dt.gt(self.h, 0, out=self.mask)
        self.dh.mul_(self.mask)
        dt.mm(xb_t, self.dh, out=self.dw1)
        dt.sum(self.dh, 0, out=self.db1)
        # SGD update, in place
        self.w1.sub_(self.dw1, alpha=lr)
        self.b1.sub_(self.db1, alpha=lr)
        self.w2.sub_(self.dw2, alpha=lr)
        self.b2.sub_(self.db2, alpha=lr)

    def epoch(self, order: list[int]) -> float:
        """One pass over the minibatches in ``order``; returns the mean training loss."""
        total = 0.0
        for i in order:
            self.step(*self.batches[i])
            total += float(self.loss)
        return total / len(order)

    def accuracy(self) -> float:
        """Accuracy on the held-out test set."""
        hidden = dt.addmm(self.b1, self.x_test, self.w1).relu_()
        logits = dt.addmm(self.b2, hidden, self.w2)
        pred = dt.argmax(logits, 1)
        return float(dt.mean(dt.eq(pred, self.y_test).to(dtype=dt.float32)))


def train_step(
    w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor, xb: Tensor, yb1h: Tensor, lr: float, inv_b: float
) -> Tensor:
    """One SGD step of the MLP on a minibatch (``xb`` [B, 64], ``yb1h`` one-hot [B, 10], ``inv_b`` = 1 / B),
    written plainly: each op makes a new tensor. Updates the weights in place and returns the minibatch's mean
    cross-entropy (a 0-d tensor). ``log_softmax`` is computed once and gives both the loss and the probabilities,
    as the NumPy reference shares its row maxima and sums."""
    # forward
    h = (xb @ w1 + b1).relu_()
    logits = h @ w2 + b2
    logp = dt.log_softmax(logits, 1)
    loss = (logp * yb1h).sum() * -inv_b
    # backward: d(mean CE)/d logits = (softmax - onehot) / batch
    dlogits = (logp.exp() - yb1h) * inv_b
    dw2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dh = (dlogits @ w2.T) * (h > 0)
    dw1 = xb.T @ dh
    db1 = dh.sum(0)
    # SGD update, in place
    w1.sub_(lr * dw1)
    b1.sub_(lr * db1)
    w2.sub_(lr * dw2)
    b2.sub_(lr * db2)
    return loss


def functional_step(
    w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor, xb: Tensor, yb1h: Tensor, lr: float, inv_b: float
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """One SGD step of the MLP in functional style: every op makes a new tensor, nothing is updated in place.
    Returns the new weights ``(w1, b1, w2, b2)`` and the minibatch's mean cross-entropy (0-d). The same model
    as :func:`train_step`; :func:`numpy_functional_step` is the same computation in NumPy expressions (the
    weights agree bit for bit)."""
    h = dt.relu(dt.addmm(b1, xb, w1))
    logits = dt.addmm(b2, h, w2)
    logp = dt.log_softmax(logits, 1)
    loss = (logp * yb1h).sum() * -inv_b
    dlogits = (logp.exp() - yb1h) * inv_b
    dh = (dlogits @ w2.T) * (h > 0)
    return w1 - lr * (xb.T @ dh), b1 - lr * dh.sum(0), w2 - lr * (h.T @ dlogits), b2 - lr * dlogits.sum(0), loss


def numpy_functional_step(
    w1: NDArray, b1: NDArray, w2: NDArray, b2: NDArray, xb: NDArray, yb1h: NDArray, lr: float, inv_b: float
) -> tuple[NDArray, NDArray, NDArray, NDArray, Any]:
    """:func:`functional_step` written with NumPy expressions (log_softmax spelled out: the row maximum
    subtracted, then the log of the sum of exponentials)."""
    h = np.maximum(xb @ w1 + b1, 0)
    logits = h @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = (logp * yb1h).sum() * -inv_b
    dlogits = (np.exp(logp) - yb1h) * inv_b
    dh = (dlogits @ w2.T) * (h > 0)
    return w1 - lr * (xb.T @ dh), b1 - lr * dh.sum(0), w2 - lr * (h.T @ dlogits), b2 - lr * dlogits.sum(0), loss


class PlainMLP(DevtensorMLP):
    """The MLP trained by :func:`train_step`: through a static plan (``planned``, made at the first step, one per
    minibatch signature; the plan preallocates every result), or eagerly. No hand-made buffers."""

    def __init__(self, cfg: Config, data: Data, weights: dict[str, NDArray], device: str, planned: bool) -> None:
        self.setup(cfg, data, weights, device)
        self.train_step = dt.planned(train_step) if planned else train_step

    def step(self, xb: Tensor, xb_t: Tensor, yb: Tensor, yb1h: Tensor) -> None:
        """One SGD step on a minibatch (``xb_t``, ``yb``: unused; the step makes its transposes itself)."""
        self.loss = self.train_step(self.w1, self.b1, self.w2, self.b2, xb, yb1h, self.cfg.lr, 1.0 / self.cfg.batch)


class NumpyMLP:
    """The same algorithm in plain NumPy, with the same buffers-and-views discipline.

    The probabilities are computed as the devtensor step beside it computes them, so that the weights agree bit
    for bit: ``log_softmax=False`` as :meth:`DevtensorMLP.step`'s ``softmax`` (``exp(shifted) / rowsum``),
    ``log_softmax=True`` as :func:`train_step`'s ``exp(log_softmax)`` (``exp(shifted - log(rowsum))``). The two
    are equal in exact arithmetic but round differently in float32: over 30 epochs that moves the test accuracy of
    some epochs by one test sample."""

    def __init__(self, cfg: Config, data: Data, weights: dict[str, NDArray], log_softmax: bool = False) -> None:
        self.cfg = cfg
        self.log_softmax = log_softmax
        b = cfg.batch
        n_full = (len(data.x_train) // b) * b
        x, y = data.x_train[:n_full], data.y_train[:n_full]
        y1h = np.eye(10, dtype=np.float32)[y]
        self.batches = [(x[i : i + b], x[i : i + b].T, y[i : i + b], y1h[i : i + b]) for i in range(0, n_full, b)]
        self.x_test, self.y_test = data.x_test, data.y_test
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
        self.rowmax = np.empty((b, 1), f32)
        self.rowsum = np.empty((b, 1), f32)

    def step(self, xb: NDArray, xb_t: NDArray, yb: NDArray, yb1h: NDArray) -> float:
        """One SGD step; returns the minibatch's mean cross-entropy."""
        lr, inv_b = self.cfg.lr, 1.0 / self.cfg.batch
        np.matmul(xb, self.w1, out=self.h)
        self.h += self.b1
        np.maximum(self.h, 0, out=self.h)
        np.matmul(self.h, self.w2, out=self.logits)
        self.logits += self.b2
        np.max(self.logits, axis=1, keepdims=True, out=self.rowmax)
        np.subtract(self.logits, self.rowmax, out=self.probs)
        if self.log_softmax:  # train_step's steps: log_softmax (as devtensor's kernel computes it), then exp
            np.exp(self.probs, out=self.dlogits)  # (dlogits as scratch space until its turn)
            np.sum(self.dlogits, axis=1, keepdims=True, out=self.rowsum)
            np.log(self.rowsum, out=self.rowsum)
            self.probs -= self.rowsum
            np.multiply(self.probs, yb1h, out=self.dlogits)
            loss = float(self.dlogits.sum() * -inv_b)
            np.exp(self.probs, out=self.probs)
        else:  # DevtensorMLP.step's: softmax (as devtensor's kernel computes it)
            np.exp(self.probs, out=self.probs)
            np.sum(self.probs, axis=1, keepdims=True, out=self.rowsum)
            loss = float(np.mean(np.log(self.rowsum[:, 0]) + self.rowmax[:, 0] - self.logits[np.arange(len(yb)), yb]))
            self.probs /= self.rowsum
        np.subtract(self.probs, yb1h, out=self.dlogits)
        self.dlogits *= inv_b
        np.matmul(self.h.T, self.dlogits, out=self.dw2)
        np.sum(self.dlogits, axis=0, out=self.db2)
        np.matmul(self.dlogits, self.w2.T, out=self.dh)
        np.greater(self.h, 0, out=self.mask)
        self.dh *= self.mask
        np.matmul(xb_t, self.dh, out=self.dw1)
        np.sum(self.dh, axis=0, out=self.db1)
        self.w1 -= lr * self.dw1
        self.b1 -= lr * self.db1
        self.w2 -= lr * self.dw2
        self.b2 -= lr * self.db2
        return loss

    def epoch(self, order: list[int]) -> float:
        """One pass over the minibatches in ``order``; returns the mean training loss."""
        return sum(self.step(*self.batches[i]) for i in order) / len(order)

    def accuracy(self) -> float:
        """Accuracy on the held-out test set."""
        hidden = np.maximum(self.x_test @ self.w1 + self.b1, 0)
        pred = np.argmax(hidden @ self.w2 + self.b2, axis=1)
        return float(np.mean(pred == self.y_test))


@dataclass
class Result:
    """Final test accuracies and mean seconds per epoch of both implementations."""

    accuracy: float
    numpy_accuracy: float
    seconds_per_epoch: float
    numpy_seconds_per_epoch: float


#: The devtensor paths :func:`train` runs: the plan of the plain step, the plain step eagerly, the hand-buffered step.
PATHS = {
    "plan": "planned step (dt.plan of train_step)",
    "eager": "eager step (train_step)",
    "buffers": "eager step on hand-made buffers",
}


def train(cfg: Config, device: str = "cpu", verbose: bool = True, path: str = "plan") -> Result:
    """Train both implementations for ``cfg.epochs`` epochs on the same data, order and initial weights; devtensor
    by the ``path`` named in :data:`PATHS`."""
    data = load_data(cfg.seed)
    weights = init_weights(cfg, data.x_train.shape[1], 10)
    if path == "buffers":
        model: DevtensorMLP = DevtensorMLP(cfg, data, weights, device)
    else:
        model = PlainMLP(cfg, data, weights, device, planned=path == "plan")
    ref = NumpyMLP(cfg, data, weights, log_softmax=path != "buffers")
    times: list[float] = []
    ref_times: list[float] = []
    if verbose:
        print(f"digits: {len(data.x_train)} train / {len(data.x_test)} test samples, device {device}, {PATHS[path]}")
        probs = "exp(log_softmax)" if ref.log_softmax else "softmax"
        print(f"numpy reference: the same step, probabilities as {probs} (the weights agree bit for bit on the CPU)")
        print(f"{'epoch':>5} {'loss':>8} {'test acc':>9} {'numpy acc':>10} {'devtensor s':>12} {'numpy s':>8}")
    for epoch in range(cfg.epochs):
        order = batch_order(cfg, len(model.batches), epoch)
        start = time.perf_counter()
        loss = model.epoch(order)
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        ref.epoch(order)
        ref_times.append(time.perf_counter() - start)
        if verbose:
            print(
                f"{epoch + 1:>5} {loss:>8.4f} {model.accuracy():>9.4f} {ref.accuracy():>10.4f}"
                f" {times[-1]:>12.4f} {ref_times[-1]:>8.4f}"
            )
    result = Result(model.accuracy(), ref.accuracy(), float(np.mean(times)), float(np.mean(ref_times)))
    if verbose:
        print(f"final test accuracy: {result.accuracy:.4f} (numpy reference: {result.numpy_accuracy:.4f})")
        print(
            f"time per epoch: devtensor ({path}) {result.seconds_per_epoch * 1e3:.1f} ms, "
            f"numpy {result.numpy_seconds_per_epoch * 1e3:.1f} ms "
            f"({result.seconds_per_epoch / result.numpy_seconds_per_epoch:.2f}x)"
        )
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda / cuda:N (needs a GPU and CuPy)")
    parser.add_argument("--epochs", type=int, default=Config.epochs)
    parser.add_argument("--seed", type=int, default=Config.seed)
    parser.add_argument("--eager", action="store_true", help="run the plain step eagerly, not through a plan")
    parser.add_argument("--buffers", action="store_true", help="run the hand-buffered eager step")
    args = parser.parse_args(argv)
    if args.device.startswith("cuda"):
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() == 0:
                raise RuntimeError("no CUDA device")
        except Exception as e:
            print(
                f"--device {args.device} needs a CUDA GPU and CuPy (pip install -e '.[cuda]' from the clone): {e}",
                file=sys.stderr,
            )
            return 2
    path = "buffers" if args.buffers else "eager" if args.eager else "plan"
    result = train(Config(epochs=args.epochs, seed=args.seed), device=args.device, path=path)
    return 0 if result.accuracy >= 0.95 else 1


if __name__ == "__main__":
    raise SystemExit(main())
