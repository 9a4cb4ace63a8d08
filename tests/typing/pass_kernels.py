"""Must type-check: impls whose signatures match their op's kernel signature, registered with the typed
decorators (the built-in kernels use the same mechanism)."""

from __future__ import annotations

import numpy as np

from devtensor import kernel_signatures as ks
from devtensor.dtypes import Scalar
from devtensor.typed import ConstOut, CPUTensor, CUDATensor


@ks.add.cpu
def add_cpu(self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[CPUTensor]) -> None:
    np.add(
        self.array if isinstance(self, CPUTensor) else self,
        other.array if isinstance(other, CPUTensor) else other,
        out=out.array,
    )


@ks.exp.cuda
def exp_cuda(self: CUDATensor, *, out: ConstOut[CUDATensor]) -> None:
    out.array[...] = self.array


@ks.mm.cpu
def mm_cpu(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
    np.matmul(self.array, mat2.array, out=out.array)


@ks.clamp.cpu
def clamp_cpu(
    self: CPUTensor, min: CPUTensor | Scalar | None, max: CPUTensor | Scalar | None, *, out: ConstOut[CPUTensor]
) -> None:
    low = min.array if isinstance(min, CPUTensor) else min
    high = max.array if isinstance(max, CPUTensor) else max
    np.clip(self.array, low, high, out=out.array)


@ks.where.cuda
def where_cuda(
    condition: CUDATensor, self: CUDATensor | Scalar, other: CUDATensor | Scalar, *, out: ConstOut[CUDATensor]
) -> None: ...


@ks.sub.cpu
def sub_cpu_any_number(
    self: CPUTensor | bool | int | float | complex,
    other: CPUTensor | Scalar,
    *,
    alpha: Scalar,
    out: ConstOut[CPUTensor],
) -> None: ...
