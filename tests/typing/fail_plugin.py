"""Each marked line must fail with the marked mypy error code: what devtensor's mypy plugin
(``plugins = devtensor_mypy``) adds to the kernel Protocols: registrations checked exactly against the
op's schema in every form, and meta functions kept off tensor data."""

from __future__ import annotations

from typing import Any

from devtensor import kernel_signatures as ks
from devtensor import library
from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import Scalar
from devtensor.kernels.elementwise import exp
from devtensor.kernels.linalg import mm
from devtensor.library import get_op
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import PlannedSpec, Tensor, TensorMeta
from devtensor.typed import ConstOut, CPUTensor, CUDATensor

# --- typed registrars: what a Protocol lets through but the run-time check refuses -------------------------------


@ks.mm.cpu  # E: kernel-signature
def out_positional(self: CPUTensor, mat2: CPUTensor, out: ConstOut[CPUTensor]) -> None: ...


@ks.mm.cpu  # E: kernel-signature !pyright
def extra_defaulted(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor], fast: bool = True) -> None: ...


@ks.add.cuda  # E: kernel-signature
def alpha_positional(
    self: CUDATensor | Scalar, other: CUDATensor | Scalar, alpha: Scalar = 1, *, out: ConstOut[CUDATensor]
) -> None: ...


@ks.exp.cpu  # E: kernel-signature !pyright
def variadic(*args: Any, **kwargs: Any) -> None: ...


@ks.mm.xp  # E: kernel-signature
def xp_extra(xp: Any, self: CPUTensor, mat2: CPUTensor, k: int = 0, *, out: ConstOut[CPUTensor]) -> None: ...


# --- op.impl(...): typed like the registrars, and checked exactly -------------------------------------------------


@mm.impl("cpu")  # E: type-var
def impl_wrong_out(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CUDATensor]) -> None: ...


@mm.impl(DispatchKey.CUDA)  # E: type-var !pyright
def impl_plain(self: Tensor, mat2: CUDATensor, *, out: ConstOut[CUDATensor]) -> None: ...


@mm.impl("cpu")  # E: kernel-signature
def impl_extra(self: CPUTensor, mat2: CPUTensor, k: int = 0, *, out: ConstOut[CPUTensor]) -> None: ...


@get_op("mm").impl("cuda")  # E: kernel-signature
def impl_out_positional(self: CUDATensor, mat2: CUDATensor, out: ConstOut[CUDATensor]) -> None: ...


@mm.impl("cpu")  # E: kernel-signature
def impl_missing(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


@exp.impl("cuda")  # E: type-var
def exp_cpu_tensors(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


# --- library.override / library.register_kernel --------------------------------------------------------------


def plain_self(self: Tensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


def out_pos(self: CPUTensor, mat2: CPUTensor, out: ConstOut[CPUTensor]) -> None: ...


def cpu_impl(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None: ...


library.override("mm", "cpu", plain_self)  # E: type-var
library.override(mm, "cpu", out_pos)  # E: kernel-signature
library.register_kernel("mm", "cuda", cpu_impl)  # E: type-var
library.register_kernel("mm", DispatchKey.CPU, out_pos)  # E: kernel-signature
library.register_kernel("mm", "cpu", cpu_impl)
library.override("mm", "cpu", cpu_impl)


# --- meta functions annotated Tensor (not TensorMeta) that read data ---------------------------------------------


@structured_op()
def reads_data(self: Tensor, other: Tensor) -> TensorSpec:
    self.numpy()  # E: meta-data-read !pyright
    self.item()  # E: meta-data-read !pyright
    other[0]  # E: meta-data-read !pyright
    self + 1  # E: meta-data-read
    self.sum()  # E: meta-data-read !pyright
    for row in other:  # E: meta-data-read !pyright
        print(row)
    print(self.to("cpu"))  # E: meta-data-read !pyright
    print(self.shape, self.dtype, self.size(0), self.numel(), len(other))
    return self.shape, self.dtype


@library.custom_op("reads_data_custom")
def custom_reads(self: Tensor) -> TensorSpec:
    self.tolist()  # E: meta-data-read !pyright
    return self.shape, self.dtype


@structured_op(name="meta_only_op")
def meta_only(self: TensorMeta) -> TensorSpec:
    self.numpy()  # E: attr-defined
    return self.shape, self.dtype


# --- a custom op without generated kernel signatures: names and kinds from its meta function ---------------------


@library.custom_op("plugin_scale")
def scale(self: TensorMeta, factor: float, *, bias: float = 0.0) -> TensorSpec:
    return self.shape, self.dtype


@scale.impl("cpu")
def scale_cpu(self: CPUTensor, factor: float, *, bias: float, out: ConstOut[CPUTensor]) -> None: ...


@scale.impl("cpu", "cuda")
def scale_xp(xp: Any, self: Any, factor: float, *, bias: float, out: Any) -> None: ...


@scale.impl("cpu")  # E: kernel-signature !pyright
def scale_bias_positional(self: CPUTensor, factor: float, bias: float, *, out: ConstOut[CPUTensor]) -> None: ...


@scale.impl("cuda")  # E: kernel-signature !pyright
def scale_missing_bias(self: CUDATensor, factor: float, *, out: ConstOut[CUDATensor]) -> None: ...


library.register_kernel(scale, "cpu", scale_cpu)
library.override(scale, "cpu", out_pos)  # E: kernel-signature !pyright


# An op whose meta hands a plan to its impls (-> PlannedSpec[X]): the impl takes a keyword-only plan before out.
@library.custom_op("typing_ptp_planned")
def ptp_planned(self: TensorMeta, dim: int) -> PlannedSpec[int]:
    return PlannedSpec(self.shape[:dim] + self.shape[dim + 1 :], self.dtype, dim)


@ptp_planned.impl("cpu")  # E: kernel-signature !pyright
def ptp_without_plan(self: CPUTensor, dim: int, *, out: ConstOut[CPUTensor]) -> None: ...


@ptp_planned.impl("cpu")
def ptp_with_plan(self: CPUTensor, dim: int, *, plan: int, out: ConstOut[CPUTensor]) -> None: ...


# A custom op named with its namespace ("ns::name"): the plugin knows it by its op name.
@library.custom_op("typing_plugin_ns::plugin_shift")
def shift(self: TensorMeta, by: float) -> TensorSpec:
    return self.shape, self.dtype


@shift.impl("cpu")
def shift_cpu(self: CPUTensor, by: float, *, out: ConstOut[CPUTensor]) -> None: ...


@shift.impl("cpu")  # E: kernel-signature !pyright
def shift_out_positional(self: CPUTensor, by: float, out: ConstOut[CPUTensor]) -> None: ...


library.override(shift, "cpu", out_pos)  # E: kernel-signature !pyright
