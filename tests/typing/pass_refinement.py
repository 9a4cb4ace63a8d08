"""Must type-check: refinement narrows, bindings keep refined types, generic calls give Tensor."""

from __future__ import annotations

from typing import Any, assert_type

import numpy as np

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import ConstOut, CPUTensor, CUDATensor, as_cpu, as_cuda, is_cpu, is_cuda


def narrowing(t: Tensor) -> None:
    if is_cpu(t):
        assert_type(t, CPUTensor)
        assert_type(t.array, np.ndarray[Any, np.dtype[Any]])
    else:
        assert_type(t, Tensor)
    if is_cuda(t):
        assert_type(t, CUDATensor)
        assert_type(t.index, int)


def refinement(t: Tensor, u: Tensor) -> None:
    x = as_cpu(t)
    assert_type(x, CPUTensor)
    assert_type(CPUTensor.refine(u), CPUTensor)
    assert_type(as_cuda(u, "cuda:1"), CUDATensor)


def variants(x: CPUTensor, t: Tensor) -> None:
    assert_type(dt.cpu.add(x, x), CPUTensor)
    assert_type(dt.cpu.add(x, 2.0, alpha=3), CPUTensor)
    assert_type(dt.cpu.add_(x, 1), CPUTensor)
    assert_type(dt.cpu.sum(x, 0, keepdim=True), CPUTensor)
    assert_type(dt.add(x, x), CPUTensor)
    assert_type(dt.add(t, t, out=t), Tensor)
    assert_type(x.add_(x), CPUTensor)
    assert_type(t.add_(1), Tensor)
    assert_type(dt.add_(x, 1), CPUTensor)
    assert_type(x + 1, CPUTensor)
    assert_type(x.__iadd__(1), CPUTensor)
    assert_type(dt.div(t, 2, rounding_mode="floor"), Tensor)
    assert_type(t.reshape(2, 3), Tensor)
    assert_type(t.reshape((2, 3)), Tensor)


def cuda_binding(g: CUDATensor) -> None:
    assert_type(dt.cuda.mul(g, g), CUDATensor)
    assert_type(dt.cuda.matmul(g, g), CUDATensor)


def const_out_reads(out: ConstOut[CPUTensor], gout: ConstOut[CUDATensor]) -> None:
    assert_type(out.array, np.ndarray[Any, np.dtype[Any]])
    assert_type(out.shape, tuple[int, ...])
    assert_type(out.dtype, np.dtype[Any])
    out.array[...] = 0  # writing data is what an impl does
    np.add(out.array, 1, out=out.array)
    gout.array.fill(0)
