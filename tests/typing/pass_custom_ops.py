"""Must type-check: custom ops as first-class ops (README's softplus and ptp): called as the op itself and through
``devtensor.ops.<namespace>``, typed by the meta function's parameters; ``.inplace`` of an op that has one."""

from __future__ import annotations

from typing import assert_type

import numpy as np

import devtensor as dt
from devtensor import Tensor, library
from devtensor.library import CustomOp, InplaceCustomOp
from devtensor.structured import TensorSpec
from devtensor.tensor import PlannedSpec, TensorMeta
from devtensor.typed import ConstOut, CPUTensor


@library.custom_op("typing_ns::typing_softplus", out_may_be_input=True)
def softplus_op(self: TensorMeta, beta: float = 1.0, threshold: float = 20.0) -> TensorSpec:
    return self.shape, self.dtype


@softplus_op.impl("cpu")
def softplus_cpu(self: CPUTensor, beta: float, threshold: float, *, out: ConstOut[CPUTensor]) -> None:
    np.copyto(out.array, np.logaddexp(0, self.array * beta) / beta)


@library.custom_op("typing_scale_declared", inplace=True)
def scale_op(self: TensorMeta, factor: float) -> TensorSpec:
    return self.shape, self.dtype


@library.custom_op("typing_ns::typing_ptp", inplace=False)
def ptp_op(self: TensorMeta, dim: int, keepdim: bool = False) -> PlannedSpec[int]:
    return PlannedSpec(self.shape[:dim] + self.shape[dim + 1 :], self.dtype, dim)


def calls(x: Tensor, c: CPUTensor) -> None:
    typed: InplaceCustomOp[...] = softplus_op
    assert_type(softplus_op(x), Tensor)
    assert_type(softplus_op(c, beta=2.0, threshold=10.0), Tensor)
    assert_type(softplus_op.functional(x, beta=2.0), Tensor)
    assert_type(softplus_op.functional(x, out=x), Tensor)
    assert_type(softplus_op.inplace(x), Tensor)
    assert_type(softplus_op.inplace(c, 2.0), Tensor)
    assert_type(scale_op.inplace(x, 0.5), Tensor)
    assert_type(ptp_op(x, 0), Tensor)
    assert_type(ptp_op(x, dim=-1, keepdim=True), Tensor)
    assert_type(ptp_op.functional(x, 1, out=x), Tensor)
    assert_type(ptp_op.qualname, str)
    assert_type(ptp_op.namespace, str)
    found: CustomOp[...] = dt.ops.typing_ns.typing_ptp
    assert_type(found(x, 0), Tensor)
    assert_type(dt.ops.typing_ns.typing_softplus(x), Tensor)
    print(library.get_op("typing_ns::typing_ptp"), found.inplace is None, typed)
