"""Must type-check: one impl for CPU and CUDA at once (``@<op>.xp``), generic over a TypeVar constrained to the
two refined tensor types; it receives the array module first."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import TypeVar

from devtensor import kernel_signatures as ks
from devtensor.dtypes import Scalar
from devtensor.typed import ConstOut, CPUTensor, CUDATensor

D = TypeVar("D", CPUTensor, CUDATensor)


@ks.mm.xp
def mm_any(xp: ModuleType, self: D, mat2: D, *, out: ConstOut[D]) -> None:
    xp.matmul(self.array, mat2.array, out=out.array)


@ks.add.xp
def add_any(xp: ModuleType, self: D | Scalar, other: D | Scalar, *, alpha: Scalar, out: ConstOut[D]) -> None:
    a = self.array if isinstance(self, (CPUTensor, CUDATensor)) else self
    b = other.array if isinstance(other, (CPUTensor, CUDATensor)) else other
    xp.add(a, b, out=out.array)


@ks.exp.xp
def exp_any(xp: ModuleType, self: D, *, out: ConstOut[D]) -> None:
    xp.exp(self.array, out=out.array)


@ks.cat.xp
def cat_any(xp: ModuleType, tensors: Sequence[D], dim: int, *, out: ConstOut[D]) -> None:
    xp.concatenate([t.array for t in tensors], axis=dim, out=out.array)
