"""repr and str of tensors, and devtensor's print options (``set_printoptions``, ``get_printoptions``,
``printoptions``): options never set follow NumPy's current ones at print time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import printing


@pytest.fixture(autouse=True)
def _fresh_options() -> Iterator[None]:
    """Every test starts with no option set through devtensor, and leaves none set."""
    token = printing._OPTIONS.set({})
    try:
        yield
    finally:
        printing._OPTIONS.reset(token)


def _body(a: np.ndarray[Any, Any], **kwargs: Any) -> str:
    return np.array2string(a, separator=", ", prefix="tensor(", **kwargs)


# --- empty tensors ------------------------------------------------------------------------------------------------


def test_empty_tensors_show_size_and_dtype() -> None:
    assert repr(dt.empty(0, 3, dtype=dt.float32)) == "tensor([], size=(0, 3), dtype=float32)"
    assert repr(dt.empty(2, 0, 4, dtype=dt.int8)) == "tensor([], size=(2, 0, 4), dtype=int8)"
    assert repr(dt.empty(0)) == "tensor([], dtype=float64)"  # [] is the shape (0,): as PyTorch, no size
    assert str(dt.empty(0, 3)) == repr(dt.empty(0, 3))


def test_empty_cuda_and_meta_tensors(fake_cupy: ModuleType) -> None:
    assert repr(dt.empty(0, 2, device="cuda:1")) == "tensor([], device='cuda:1', size=(0, 2), dtype=float64)"
    assert repr(dt.empty(0, 2, device="meta")) == "tensor(..., device='meta', size=(0, 2), dtype=float64)"


def test_non_empty_repr_is_unchanged() -> None:
    assert repr(dt.tensor([1, 2])) == "tensor([1, 2], dtype=int64)"
    assert repr(dt.tensor(1.5)) == "tensor(1.5, dtype=float64)"


# --- options -----------------------------------------------------------------------------------------------------


def test_unset_options_follow_numpy_at_print_time() -> None:
    a = np.array([1.123456789, 1e-9, 3.0])
    t = dt.tensor(a)
    assert repr(t) == f"tensor({_body(a)}, dtype=float64)"
    with np.printoptions(precision=3, suppress=True, linewidth=20, threshold=2, edgeitems=1):
        assert repr(t) == f"tensor({_body(a)}, dtype=float64)"
        assert get_numpy_view() == dt.get_printoptions()
    assert get_numpy_view() == dt.get_printoptions()


def get_numpy_view() -> dict[str, Any]:
    options = np.get_printoptions()
    return {name: options[name] for name in ("precision", "threshold", "edgeitems", "linewidth", "suppress")}


def test_set_options_apply_to_tensors_only() -> None:
    a = np.array([1.123456789, 1e-9, 3.0])
    t = dt.tensor(a)
    dt.set_printoptions(precision=2, suppress=True)
    assert (
        repr(t)
        == f"tensor({_body(a, precision=2, suppress_small=True)}, dtype=float64)"
        == ("tensor([1.12, 0.  , 3.  ], dtype=float64)")
    )
    assert repr(a) == "array([1.12345679e+00, 1.00000000e-09, 3.00000000e+00])"  # NumPy's own: untouched
    options = dt.get_printoptions()
    assert options["precision"] == 2 and options["suppress"] is True
    assert options["threshold"] == np.get_printoptions()["threshold"]
    dt.set_printoptions(precision=None)  # None leaves an option as it is
    assert dt.get_printoptions()["precision"] == 2


def test_threshold_edgeitems_linewidth() -> None:
    dt.set_printoptions(threshold=5, edgeitems=2)
    assert repr(dt.arange(20)) == "tensor([ 0,  1, ..., 18, 19], dtype=int64)"
    dt.set_printoptions(threshold=1000, linewidth=30)
    text = repr(dt.arange(12))
    assert all(len(line) <= 30 for line in text.splitlines()) and len(text.splitlines()) > 1


def test_cuda_tensors_use_the_options(fake_cupy: ModuleType) -> None:
    with dt.printoptions(precision=1):
        assert repr(dt.tensor([1.25, 2.0], device="cuda:1")) == "tensor([1.2, 2. ], device='cuda:1', dtype=float64)"


def test_printoptions_restores_the_state_before_it() -> None:
    t = dt.tensor([1.0 / 3.0])
    before = repr(t)
    with dt.printoptions(precision=3) as inside:
        assert inside["precision"] == 3 and repr(t) == "tensor([0.333], dtype=float64)"
        with dt.printoptions(precision=1, suppress=True):
            assert repr(t) == "tensor([0.3], dtype=float64)"
        assert repr(t) == "tensor([0.333], dtype=float64)"
    assert repr(t) == before
    # after the block, precision is unset again: it follows NumPy
    with np.printoptions(precision=2):
        assert repr(t) == "tensor([0.33], dtype=float64)"
    with pytest.raises(RuntimeError), dt.printoptions(precision=4):
        raise RuntimeError
    assert repr(t) == before


def test_options_are_context_local() -> None:
    seen: list[str] = []
    t = dt.tensor([1.0 / 3.0])

    def other_thread() -> None:
        seen.append(repr(t))

    with dt.printoptions(precision=2):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert seen == [f"tensor({_body(t.numpy())}, dtype=float64)"]


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"precision": -1}, ValueError, "precision"),
        ({"precision": 2.5}, TypeError, "precision"),
        ({"precision": True}, TypeError, "precision"),
        ({"threshold": -3}, ValueError, "threshold"),
        ({"threshold": "10"}, TypeError, "threshold"),
        ({"edgeitems": -1}, ValueError, "edgeitems"),
        ({"linewidth": 0}, ValueError, "linewidth"),
        ({"suppress": 1}, TypeError, "suppress"),
    ],
)
def test_bad_values_name_the_option_and_change_nothing(kwargs: dict[str, Any], error: type, name: str) -> None:
    dt.set_printoptions(precision=5)
    before = dict(dt.get_printoptions())
    with pytest.raises(dt.DevtensorError, match=f"'{name}'") as info:
        dt.set_printoptions(**kwargs)
    assert isinstance(info.value, error)
    with pytest.raises(error, match=name), dt.printoptions(**kwargs):
        pass
    assert dict(dt.get_printoptions()) == before


def test_numpy_integers_are_accepted_and_unknown_names_refused() -> None:
    dt.set_printoptions(precision=np.int64(3), suppress=np.True_)  # type: ignore[arg-type]
    assert dt.get_printoptions()["precision"] == 3 and dt.get_printoptions()["suppress"] is True
    with pytest.raises(TypeError, match="'sign'"), dt.printoptions(sign="+"):
        pass
