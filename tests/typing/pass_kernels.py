"""Must type-check: impls whose signatures match their op's kernel signature, registered with the typed
decorators (the built-in kernels use the same mechanism)."""

from __future__ import annotations

from types import ModuleType
from typing import Any, TypeVar

import numpy as np

from devtensor import kernel_signatures as ks
from devtensor import library
from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import Scalar
from devtensor.kernels.elementwise import exp
from devtensor.kernels.linalg import mm
from devtensor.library import get_op
from devtensor.structured import StructuredOp, TensorSpec, structured_op
from devtensor.tensor import Tensor
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


# An optional tensor parameter takes the key's refined type or None.
@ks.cross_entropy_full.cpu
def cross_entropy_ok(
    input: CPUTensor,
    target: CPUTensor,
    weight: CPUTensor | None,
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
    *,
    out: ConstOut[CPUTensor],
) -> None: ...


# Registration forms the plugin checks (devtensor_mypy), written correctly.
D = TypeVar("D", CPUTensor, CUDATensor)


@mm.impl("cpu", "cuda")
def mm_both(xp: ModuleType, self: D, mat2: D, *, out: ConstOut[D]) -> None:
    xp.matmul(self.array, mat2.array, out=out.array)


@mm.impl(DispatchKey.CPU)
def mm_impl_cpu(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


library.override("mm", "cpu", mm_impl_cpu)


def mm_cuda(self: CUDATensor, mat2: CUDATensor, *, out: ConstOut[CUDATensor]) -> None: ...


library.register_kernel(mm, "cuda", mm_cuda)

# get_op by name: a structured op's name gives a StructuredOp (its impl, not a view op's kernel).
get_op("mm").impl("cuda")(mm_cuda)
get_op("mm").register_kernel("cpu", mm_impl_cpu)
library.override(get_op("mm"), "cpu", mm_impl_cpu)


# By name, through get_op and through the registrars, pyright (no plugin) takes the op's impl type per key, and
# rejects an impl taking more than the schema positionally: the correct forms, typed impls not yet registered.
def mm_cpu_typed(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


def mm_cuda_typed(self: CUDATensor, mat2: CUDATensor, *, out: ConstOut[CUDATensor]) -> None: ...


def mm_xp_typed(xp: ModuleType, self: D, mat2: D, *, out: ConstOut[D]) -> None: ...


def untyped_impl() -> Any: ...


library.override("mm", "cpu", mm_cpu_typed)
library.override("mm", "CUDA", mm_cuda_typed)
library.register_kernel("mm", "cpu", mm_cpu_typed)
library.register_kernel("mm", DispatchKey.CUDA, mm_cuda_typed)
library.register_kernel("mm", "cuda", mm_xp_typed)
library.register_kernel("mm", "numpy2", mm_xp_typed)
library.register_kernel("mm", "cpu", untyped_impl())
get_op("mm").impl("cpu")(mm_cpu_typed)
get_op("mm").impl("cpu", "cuda")(mm_xp_typed)
get_op("mm").impl("cuda")(mm_xp_typed)
mm.impl("cpu")(mm_xp_typed)
get_op("mm").impl("cpu")(untyped_impl())
ks.mm.cpu(mm_cpu_typed)
ks.mm.xp(mm_xp_typed)
ks.mm.cpu(untyped_impl())


@structured_op()
def metadata_only(self: Tensor, other: Tensor) -> TensorSpec:
    if self.ndim != other.dim() or self.size(0) != len(other) or self.numel() != other.numel():
        raise ValueError("metadata_only: shapes differ")
    return self.shape, self.dtype


# An op object's type carries its name (structured_op("mm"), the family helpers): pyright checks op.impl(...) and
# override(op, ...) by it, as by name; an op typed StructuredOp (its name unknown) takes any impl.
mm.impl("cpu")(mm_cpu_typed)
mm.impl("cuda", "cpu")(mm_xp_typed)
library.override(mm, "cuda", mm_cuda_typed)


@exp.impl("cuda")
def exp_cuda_impl(self: CUDATensor, *, out: ConstOut[CUDATensor]) -> None: ...


def any_op(op: StructuredOp) -> None:
    @op.impl("cpu")
    def anything(x: int) -> None: ...
