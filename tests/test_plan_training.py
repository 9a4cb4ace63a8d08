"""The main job through a static plan (examples/train_digits.py's default path): the planned plain step trains
exactly as the same step run eagerly (losses and weights equal bit for bit), a replayed step allocates no more
memory than the NumPy reference with buffers, and the plan's memory is at most the eager step's peak."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from helpers import loaded_example

import devtensor as dt

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    yield from loaded_example(EXAMPLE, "train_digits_plan")


def _data(example: ModuleType) -> Any:
    """Synthetic digits-like data (no scikit-learn needed): 8x8 "images" in [0, 1], 10 classes."""
    rng = np.random.default_rng(7)
    x = rng.random((320, 64), dtype=np.float32)
    y = rng.integers(0, 10, 320).astype(np.int64)
    return example.Data(x, y, x[:40], y[:40])


def _config(example: ModuleType) -> Any:
    return example.Config(hidden=32, batch=32, lr=0.1, epochs=3, seed=0)


def _weights(example: ModuleType) -> Any:
    return example.init_weights(_config(example), 64, 10)


def _setup(example: ModuleType, planned: bool) -> tuple[Any, Any, Any]:
    cfg, data, weights = _config(example), _data(example), _weights(example)
    return cfg, example.PlainMLP(cfg, data, weights, "cpu", planned=planned), example.NumpyMLP(cfg, data, weights)


def test_planned_training_equals_eager_training_bit_for_bit(example: ModuleType) -> None:
    cfg, planned, _ = _setup(example, True)
    _, eager, _ = _setup(example, False)
    losses: list[tuple[bytes, bytes]] = []
    for epoch in range(cfg.epochs):
        for i in example.batch_order(cfg, len(planned.batches), epoch):
            planned.step(*planned.batches[i])
            eager.step(*eager.batches[i])
            losses.append((planned.loss.numpy().tobytes(), eager.loss.numpy().tobytes()))
    assert all(left == right for left, right in losses)
    for name in ("w1", "b1", "w2", "b2"):
        assert getattr(planned, name).numpy().tobytes() == getattr(eager, name).numpy().tobytes(), name
    assert len(planned.train_step.plans) == 1  # one signature: one plan, traced once
    assert planned.accuracy() == eager.accuracy()


@pytest.mark.parametrize("path", ["plan", "buffers"])
def test_the_numpy_reference_trains_the_same_weights_bit_for_bit(example: ModuleType, path: str) -> None:
    """The script prints the NumPy reference's test accuracy beside devtensor's per epoch: the reference computes
    the probabilities as the path's step does (the plain step: exp(log_softmax); the buffered one: softmax), so
    the weights, hence the accuracies, are equal (with softmax's steps against the plain step they differed in the
    last bits, and the digits run printed one epoch's accuracy apart)."""
    cfg, planned, _ = _setup(example, True)
    model = planned if path == "plan" else example.DevtensorMLP(cfg, _data(example), _weights(example), "cpu")
    ref = example.NumpyMLP(cfg, _data(example), _weights(example), log_softmax=path == "plan")
    for epoch in range(cfg.epochs):
        order = example.batch_order(cfg, len(model.batches), epoch)
        model.epoch(order)
        ref.epoch(order)
    for name in ("w1", "b1", "w2", "b2"):
        assert getattr(model, name).numpy().tobytes() == getattr(ref, name).tobytes(), name
    assert model.w1.numpy().tobytes() != _weights(example)["w1"].tobytes()


def test_a_replayed_step_allocates_no_more_than_the_numpy_reference(example: ModuleType) -> None:
    _, model, ref = _setup(example, True)
    for _ in range(3):  # plan, then replays (the first through the fronts: writability checks)
        model.step(*model.batches[0])
        ref.step(*ref.batches[0])

    def peak(fn: Any, *args: Any) -> int:
        tracemalloc.start()
        try:
            fn(*args)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    planned_peak = min(peak(model.step, *model.batches[1]) for _ in range(3))
    numpy_peak = min(peak(ref.step, *ref.batches[1]) for _ in range(3))
    assert planned_peak <= numpy_peak, (planned_peak, numpy_peak)
    assert planned_peak < 8 * 1024  # views and call frames only: no array data (the smallest result is 128 bytes)


def test_plan_memory_at_most_the_eager_peak_on_the_main_jobs_step(example: ModuleType) -> None:
    _, model, _ = _setup(example, True)
    model.step(*model.batches[0])
    (plan,) = model.train_step.plans.values()
    assert plan.memory_bytes <= plan.peak_bytes_eager
    assert plan.direct_ops == len(plan.records)
    # print(plan) lists every op and its buffer
    text = repr(plan)
    assert "log_softmax" in text and "sub_" in text
    assert isinstance(plan, dt.Plan)
