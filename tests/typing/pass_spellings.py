"""Correct code the README promises, by kind: NumPy scalars and arrays as operands, every dtype spelling, and refined
tensor types flowing through ops (an op whose tensors share one refined type returns it)."""

from __future__ import annotations

from typing import Any, assert_type

import numpy as np

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import CPUTensor, CUDATensor

NDArray = np.ndarray[Any, np.dtype[np.float64]]


def numpy_operands(t: Tensor, a: NDArray) -> None:
    assert_type(t * np.float32(2), Tensor)
    assert_type(t * np.int64(3), Tensor)
    assert_type(t + np.bool_(True), Tensor)
    assert_type(dt.add(t, a), Tensor)
    assert_type(dt.add(t, 1, alpha=np.float32(2)), Tensor)
    assert_type(dt.mm(t, a), Tensor)
    assert_type(dt.cat([t, a]), Tensor)
    assert_type(dt.where(t > 0, a, 0), Tensor)
    t += np.float64(1)


def dtype_spellings(t: Tensor) -> None:
    dt.zeros(3, dtype=float)
    assert_type(t.to(float), Tensor)
    assert_type(t.to(int), Tensor)
    assert_type(t.to(np.float32), Tensor)
    assert_type(t.sum(dtype=float), Tensor)
    assert_type(dt.sum(t, dtype="float32"), Tensor)
    assert_type(t.cumsum(0, dtype=complex), Tensor)


def refinement_through_ops(c: CPUTensor, g: CUDATensor, t: Tensor) -> None:
    assert_type(c + 1, CPUTensor)
    assert_type(1 + c, CPUTensor)
    assert_type(-c, CPUTensor)
    assert_type(c * c, CPUTensor)
    assert_type(c @ c, CPUTensor)
    assert_type(c == 1, CPUTensor)
    assert_type(c < c, CPUTensor)
    assert_type(dt.add(c, c), CPUTensor)
    assert_type(dt.add(c, 1.5), CPUTensor)
    assert_type(dt.exp(g), CUDATensor)
    assert_type(c[0], CPUTensor)
    assert_type(g[1:, None], CUDATensor)
    assert_type(c.sum(0), CPUTensor)
    assert_type(c.exp(), CPUTensor)
    assert_type(dt.add(c, c, out=c), CPUTensor)
    assert_type(dt.cat([c, c]), CPUTensor)
    assert_type(dt.cpu.add(c[0], c + 1), CPUTensor)
    # Mixed or unrefined operands give a Tensor.
    assert_type(c + t, Tensor)
    assert_type(t + c, Tensor)
    assert_type(dt.add(c, t), Tensor)
    c += 1
    c += t
    assert_type(c, CPUTensor)
