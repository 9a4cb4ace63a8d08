"""Memoized meta results (devtensor.meta.memoized): keys by exact type and value, no NaN, no failures, bounded."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import meta as meta_module
from devtensor.errors import ArgumentTypeError, ShapeError
from devtensor.meta import _memo_key, _Uncacheable, memoized


def test_keys_tell_exact_types_and_signed_zeros_apart() -> None:
    a = dt.zeros(2, 3)
    assert _memo_key((a, 1)) != _memo_key((a, True))
    assert _memo_key((0.0,)) != _memo_key((-0.0,))
    assert _memo_key((1.0,)) != _memo_key((1,))
    assert _memo_key(([0, 1],)) != _memo_key(((0, 1),))
    assert _memo_key(([0, 1],)) == _memo_key(([0, 1],))
    assert _memo_key((complex(0.0, 0.0),)) != _memo_key((complex(0.0, -0.0),))
    # A tensor is keyed on its shape, dtype and device, not its identity or data.
    assert _memo_key((a,)) == _memo_key((dt.ones(2, 3),))
    assert _memo_key((a,)) != _memo_key((dt.zeros(2, 3, device="meta"),))
    assert _memo_key((a,)) != _memo_key((dt.zeros(2, 3, dtype=dt.float32),))


@pytest.mark.parametrize("value", [math.nan, complex(math.nan, 0.0), object(), np.float32(1.0)])
def test_nan_and_unknown_objects_are_not_keys(value: object) -> None:
    with pytest.raises(_Uncacheable):
        _memo_key((value,))


def test_only_successes_are_cached_and_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []

    def spec(x: int, y: float) -> tuple[int, float]:
        calls.append((x, y))
        if x < 0:
            raise ValueError("negative")
        return x, y

    cached = memoized(spec)
    assert cached(1, 2.0) == (1, 2.0)
    assert cached(1, 2.0) == (1, 2.0)
    assert len(calls) == 1
    for _ in range(2):
        with pytest.raises(ValueError, match="negative"):
            cached(-1, 2.0)
    assert len(calls) == 3
    cached(1, math.nan)
    cached(1, math.nan)
    assert len(calls) == 5  # NaN: never cached
    monkeypatch.setattr(meta_module, "_MEMO_LIMIT", 4)
    for i in range(10):
        cached(i, 0.5)
    calls.clear()
    cached(9, 0.5)  # the newest entries are there
    assert calls == []


def test_a_cached_valid_argument_does_not_let_an_equal_invalid_one_through() -> None:
    m = dt.ones(2, 2, dtype=dt.int64)
    dt.addmm(m, m, m, alpha=2)  # integral results take an int alpha: 2 is cached ...
    for _ in range(2):
        with pytest.raises(ArgumentTypeError, match="alpha"):
            dt.addmm(m, m, m, alpha=2.0)  # ... and 2.0 (== 2, the same hash) is still refused


def test_memoized_ops_give_the_same_results_and_errors_on_every_call() -> None:
    x = dt.ones(3, 4)
    y = dt.ones(4, 5)
    for _ in range(3):
        assert dt.matmul(x, y).shape == (3, 5)
        assert dt.cat([x, x], 1).shape == (3, 8)
        assert dt.cat((x, x)).shape == (6, 4)
        assert dt.matmul(dt.ones(3, 4, device="meta"), dt.ones(4, 5, device="meta")).device.type == "meta"
        with pytest.raises(ShapeError):
            dt.matmul(x, x)
        with pytest.raises(IndexError):
            dt.cat([x, x], 2)
