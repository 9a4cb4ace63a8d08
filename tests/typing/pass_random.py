"""Must type-check: the random API (generators, factories in PyTorch's forms, the inplace samplers as functions,
methods and CPU bindings keeping the refined type, an xp kernel taking a generator)."""

from __future__ import annotations

from types import ModuleType
from typing import assert_type

import numpy as np

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import CPUTensor


def generators() -> None:
    g = dt.Generator(0)
    assert_type(g.manual_seed(np.int64(3)), dt.Generator)
    assert_type(dt.manual_seed(1), dt.Generator)
    assert_type(g.initial_seed(), int)
    assert_type(dt.seed(), int)
    dt.Generator(device="cuda")
    dt.set_rng_state(dt.get_rng_state())


def factories(x: Tensor, g: dt.Generator) -> None:
    assert_type(dt.rand(2, 3, generator=g, dtype=dt.float32), Tensor)
    assert_type(dt.randn((2, 3), device="cpu"), Tensor)
    assert_type(dt.randint(10, (3,)), Tensor)
    assert_type(dt.randint(-5, 5, [2, 2], dtype=dt.int8, out=x), Tensor)
    assert_type(dt.uniform(0.0, 2.0, (4,)), Tensor)
    assert_type(dt.normal(0.0, 1.0, (4,)), Tensor)
    assert_type(dt.normal(x, 2.0, generator=g), Tensor)
    assert_type(dt.bernoulli(x), Tensor)
    assert_type(dt.randperm(5), Tensor)
    assert_type(dt.multinomial(x, 3, True, generator=g), Tensor)


def samplers(x: Tensor, c: CPUTensor, g: dt.Generator) -> None:
    assert_type(c.uniform_(0.0, 1.0, generator=g), CPUTensor)
    assert_type(dt.normal_(c, 0.0, 2.0), CPUTensor)
    assert_type(x.random_(0, 10), Tensor)
    assert_type(x.bernoulli_(0.25), Tensor)
    assert_type(x.bernoulli_(x), Tensor)
    assert_type(dt.cpu.uniform_(c, generator=g), CPUTensor)
    assert_type(x.multinomial(2), Tensor)


@dt.kernel_signatures.uniform.xp
def uniform_kernel(
    xp: ModuleType,
    self: CPUTensor,
    from_: float,
    to: float,
    *,
    generator: dt.Generator | None,
    out: dt.typed.ConstOut[CPUTensor],
) -> None:
    out.array[...] = from_
