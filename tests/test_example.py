"""The main job, in a reduced form: the digits MLP trains to an accuracy a broken gradient cannot reach, matches
the plain-NumPy reference, and a training step allocates nothing after the first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from devtensor.backends import Backend

pytest.importorskip("sklearn")

from helpers import loaded_example

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    yield from loaded_example(EXAMPLE, "train_digits")


def test_reduced_training_reaches_the_floor_and_matches_numpy(example: ModuleType) -> None:
    result = example.train(example.Config(epochs=4), verbose=False)
    # Chance is 0.1; a wrong gradient sign or a missing term stays far below this after 4 epochs.
    assert result.accuracy >= 0.9
    assert abs(result.accuracy - result.numpy_accuracy) <= 0.02


def test_a_step_allocates_no_tensor_after_the_first(example: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = example.Config(epochs=1)
    data = example.load_data(cfg.seed)
    model = example.DevtensorMLP(cfg, data, example.init_weights(cfg, data.x_train.shape[1], 10), "cpu")
    model.step(*model.batches[0])
    versions = [t.version for t in (model.w1, model.b1, model.w2, model.b2)]
    made: list[str] = []
    real_alloc = Backend.alloc

    def counting_alloc(shape: Any, dtype: Any) -> Any:
        made.append("alloc")
        return real_alloc(shape, dtype)

    def counting_wrap(self: Backend, array: Any, device: Any) -> Any:
        made.append("wrap")
        return Backend.wrap(self, array, device)

    def counting_view(self: Backend, array: Any, base: Any) -> Any:
        made.append("view")
        return Backend.wrap_view(self, array, base)

    monkeypatch.setattr(Backend, "alloc", staticmethod(counting_alloc))
    monkeypatch.setattr(type(model.w1._backend), "wrap", counting_wrap)
    monkeypatch.setattr(type(model.w1._backend), "wrap_view", counting_view)
    for batch in model.batches[1:6]:
        model.step(*batch)
    assert made == []
    # Each of the 5 steps updated each parameter once, in place.
    assert [t.version for t in (model.w1, model.b1, model.w2, model.b2)] == [v + 5 for v in versions]
