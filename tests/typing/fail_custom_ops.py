"""Each marked line must fail with the marked mypy error code: calls of custom ops checked against their meta
function's parameters; no inplace variant where none can exist."""

from __future__ import annotations

from devtensor import Tensor, library
from devtensor.tensor import PlannedSpec, TensorMeta


@library.custom_op("typing_fail_ns::typing_fail_ptp")
def ptp_op(self: TensorMeta, dim: int, keepdim: bool = False) -> PlannedSpec[int]:
    return PlannedSpec(self.shape[:dim] + self.shape[dim + 1 :], self.dtype, dim)


@library.custom_op("typing_fail_ns::typing_fail_sum", inplace=False, out_may_be_input=True)
def sum_op(self: TensorMeta, dim: int) -> PlannedSpec[int]:
    return PlannedSpec(self.shape[:dim] + self.shape[dim + 1 :], self.dtype, dim)


def calls(x: Tensor) -> None:
    ptp_op.inplace(x, 0)  # E: misc
    sum_op.inplace(x, 0)  # E: misc
    ptp_op(x, dim="0")  # E: arg-type
    ptp_op(x, 0, keep=True)  # E: call-arg
    ptp_op(x)  # E: call-arg
