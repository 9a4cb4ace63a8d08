"""The random ops on a real GPU with CuPy (marked ``cuda``; skipped where no GPU or CuPy is present): every
sampler runs on CuPy's generator, each stream is reproducible per seed, and the CUDA stream differs from the
CPU's. The stand-in (tests/fake_cupy.py) checks the same paths everywhere; this checks that real CuPy's API
(``RandomState.random_sample``, ``standard_normal``, ``randint``, ``permutation``) is the one the stand-in models."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import devtensor as dt

pytestmark = pytest.mark.cuda


@pytest.fixture
def cp() -> ModuleType:
    """The real ``cupy`` module."""
    module: ModuleType = pytest.importorskip("cupy")
    return module


def host(t: dt.Tensor) -> np.ndarray[Any, Any]:
    return np.array(t.cpu().numpy(), copy=True)


def test_every_sampler_runs_and_is_reproducible(cp: ModuleType) -> None:
    def draws(seed: int) -> list[np.ndarray[Any, Any]]:
        g = dt.Generator(seed, device="cuda")
        out = [dt.rand(1000, device="cuda", generator=g, dtype=dtype) for dtype in (dt.float16, dt.float32, dt.float64)]
        out += [
            dt.randn(1000, device="cuda", generator=g, dtype=dt.float32),
            dt.randint(-5, 5, (1000,), device="cuda", generator=g),
            dt.empty(1000, dtype=dt.uint8, device="cuda").random_(generator=g),
            dt.randperm(100, device="cuda", generator=g),
            dt.bernoulli(dt.full((1000,), 0.3, device="cuda"), generator=g),
            dt.multinomial(dt.tensor([[1.0, 0.0, 3.0]], device="cuda"), 500, True, generator=g),
            dt.multinomial(dt.tensor([1.0, 2.0, 3.0, 0.0], device="cuda"), 3, generator=g),
            dt.empty(1000, device="cuda").exponential_(generator=g),
            dt.empty(1000, dtype=dt.int32, device="cuda").geometric_(0.5, generator=g),
            dt.empty(1000, device="cuda").log_normal_(generator=g),
            dt.empty(1000, device="cuda").cauchy_(generator=g),
        ]
        assert all(t.device.type == "cuda" for t in out)
        return [host(t) for t in out]

    a, b = draws(7), draws(7)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert a[0].max() < 1.0 and a[2].min() >= 0.0
    assert set(a[4].tolist()) <= set(range(-5, 5))
    assert sorted(a[6].tolist()) == list(range(100))
    assert abs(a[7].mean() - 0.3) < 0.06
    assert set(a[8].ravel().tolist()) <= {0, 2}
    assert len(set(a[9].tolist())) == 3 and 3 not in a[9].tolist()


def test_cuda_and_cpu_streams_differ_and_manual_seed_reaches_cuda(cp: ModuleType) -> None:
    cpu = host(dt.rand(50, generator=dt.Generator(3)))
    cuda = host(dt.rand(50, device="cuda", generator=dt.Generator(3, device="cuda")))
    assert not np.array_equal(cpu, cuda)
    dt.manual_seed(5)
    first = host(dt.randn(20, device="cuda"))
    dt.manual_seed(5)
    np.testing.assert_array_equal(host(dt.randn(20, device="cuda")), first)
