"""Each marked line must fail with the marked mypy error code: impls checked against their op's signature."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from devtensor import kernel_signatures as ks
from devtensor.dtypes import Scalar
from devtensor.tensor import Tensor
from devtensor.typed import ConstOut, CPUTensor, CUDATensor


@ks.mm.cpu  # E: type-var
def cuda_params(self: CUDATensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


@ks.mm.cpu  # E: type-var
def generic_params(self: Tensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


@ks.mm.cpu  # E: kernel-signature
def missing_param(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


@ks.mm.cpu  # E: kernel-signature
def extra_param(self: CPUTensor, mat2: CPUTensor, extra: int, *, out: ConstOut[CPUTensor]) -> None: ...


@ks.add.cpu  # E: arg-type
def wrong_scalar(
    self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, alpha: str, out: ConstOut[CPUTensor]
) -> None: ...


@ks.mm.cpu  # E: kernel-signature
def no_out(self: CPUTensor, mat2: CPUTensor) -> None: ...


@ks.mm.cpu  # E: type-var
def cuda_out(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CUDATensor]) -> None: ...


def const_out_metadata(out: ConstOut[CPUTensor], other: np.ndarray[Any, Any]) -> None:
    out.shape = (3,)  # E: misc
    out.dtype = np.dtype(np.float32)  # E: misc
    out.strides = (1,)  # E: misc
    out.array = other  # E: arg-type
    out.array = np.exp(other)  # E: arg-type
    out.array += other  # E: arg-type
    out.array = cast(Any, other)  # E: arg-type
    out.resize_((3,))  # E: attr-defined
    out.set_(other)  # E: attr-defined


def meta_reads_data() -> None:
    from devtensor.structured import TensorSpec, structured_op
    from devtensor.tensor import TensorMeta

    @structured_op("typing_peek", inplace=False)
    def peek(self: TensorMeta, other: TensorMeta) -> TensorSpec:
        print(self.numpy())  # E: attr-defined
        print(other.item())  # E: attr-defined
        print(self[0])  # E: index
        print(other.array)  # E: attr-defined
        return (self.shape, self.dtype)


# A plain Tensor where the schema takes a tensor-or-number, or an optional tensor(-or-number), is not the key's
# refined type: each such parameter has its own TypeVar, as tensor parameters do.
@ks.add.cpu  # E: type-var
def add_plain_tensor(
    self: Tensor | Scalar, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[CPUTensor]
) -> None: ...


@ks.sub.cuda  # E: type-var
def sub_plain_other(
    self: CUDATensor | Scalar, other: Tensor | Scalar, *, alpha: Scalar, out: ConstOut[CUDATensor]
) -> None: ...


@ks.mul.cpu  # E: type-var
def mul_plain(self: Tensor | Scalar, other: Tensor | Scalar, *, out: ConstOut[CPUTensor]) -> None: ...


@ks.clamp.cpu  # E: type-var
def clamp_plain_bound(
    self: CPUTensor, min: Tensor | Scalar | None, max: CPUTensor | Scalar | None, *, out: ConstOut[CPUTensor]
) -> None: ...


@ks.where.cpu  # E: type-var
def where_plain(
    condition: CPUTensor, self: Tensor | Scalar, other: CPUTensor | Scalar, *, out: ConstOut[CPUTensor]
) -> None: ...


@ks.add.cpu  # E: type-var
def add_plain_out(
    self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[Tensor]
) -> None: ...


@ks.mm.cuda  # E: type-var
def mm_plain_out(self: CUDATensor, mat2: CUDATensor, *, out: ConstOut[Tensor]) -> None: ...


@ks.add.cpu  # E: arg-type
def add_no_scalar(self: CPUTensor, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[CPUTensor]) -> None: ...


@ks.clamp.cpu  # E: arg-type
def clamp_no_none(
    self: CPUTensor, min: CPUTensor | Scalar, max: CPUTensor | Scalar | None, *, out: ConstOut[CPUTensor]
) -> None: ...


# An optional tensor parameter: a plain `Tensor | None` is not the key's refined type (both checkers).
@ks.cross_entropy_full.cpu  # E: type-var
def cross_entropy_plain_weight(
    input: CPUTensor,
    target: CPUTensor,
    weight: Tensor | None,
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
    *,
    out: ConstOut[CPUTensor],
) -> None: ...
