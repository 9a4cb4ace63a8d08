"""Each marked line must fail with the marked mypy error code: impls for CPU and CUDA at once (``@<op>.xp``)
take the array module first and tensors of one refined type, never a plain Tensor or CPU and CUDA mixed."""

from __future__ import annotations

from types import ModuleType

from devtensor import kernel_signatures as ks
from devtensor.dtypes import Scalar
from devtensor.tensor import Tensor
from devtensor.typed import ConstOut, CPUTensor, CUDATensor


@ks.mm.xp  # E: type-var
def plain_tensor(xp: ModuleType, self: Tensor, mat2: Tensor, *, out: ConstOut[Tensor]) -> None: ...


@ks.mm.xp  # E: arg-type
def mixed_out(xp: ModuleType, self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CUDATensor]) -> None: ...


@ks.mm.xp  # E: arg-type
def mixed_params(xp: ModuleType, self: CPUTensor, mat2: CUDATensor, *, out: ConstOut[CPUTensor]) -> None: ...


@ks.mm.xp  # E: kernel-signature
def no_xp(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


@ks.exp.xp  # E: arg-type
def xp_not_module(xp: int, self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


@ks.add.xp  # E: arg-type
def add_mixed(
    xp: ModuleType, self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[CUDATensor]
) -> None: ...


@ks.add.xp  # E: arg-type
def add_cpu_only(
    xp: ModuleType, self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[CPUTensor]
) -> None: ...


# (pyright: through a Protocol whose __call__ is generic over both device types; see docs/design.md)
@ks.add.xp  # E: arg-type
def add_cuda_only(
    xp: ModuleType, self: CUDATensor | Scalar, other: CUDATensor | Scalar, *, alpha: Scalar, out: ConstOut[CUDATensor]
) -> None: ...


@ks.add.xp  # E: arg-type
def add_plain(
    xp: ModuleType, self: Tensor | Scalar, other: Tensor | Scalar, *, alpha: Scalar, out: ConstOut[Tensor]
) -> None: ...
