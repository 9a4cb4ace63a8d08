"""The precompute channel (a meta function returning a PlannedSpec hands its plan to the kernel) and one kernel for
several dispatch keys (an impl whose first parameter is ``xp`` receives the key's array module)."""

from __future__ import annotations

import itertools
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import library, structured
from devtensor.codegen.kernels import camel, kernels_module
from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.structured import PlannedSpec, TensorSpec
from devtensor.tensor import Tensor
from devtensor.typed import ConstOut, CPUTensor

_counter = itertools.count()


def unique(prefix: str) -> str:
    """An op name no other test uses."""
    return f"{prefix}_xp{next(_counter)}"


pytestmark = pytest.mark.usefixtures("remove_new_ops")


def define_scaled_sum() -> tuple[structured.StructuredOp, list[tuple[str, Any]]]:
    """A custom op ``sum(self * scale, dim)`` whose meta normalises ``dim`` and hands ``(dim, scale)`` to one
    kernel for CPU and CUDA; returns the op and the log of (array module name, plan) of each kernel call."""
    calls: list[tuple[str, Any]] = []

    def meta(self: Tensor, dim: int, *, scale: float = 1.0) -> PlannedSpec[tuple[int, float]]:
        if not -self.ndim <= dim < self.ndim:
            raise IndexError(f"dim {dim} out of range")
        norm = dim % self.ndim
        shape = self.shape[:norm] + self.shape[norm + 1 :]
        return PlannedSpec(shape, self.dtype, (norm, scale))

    op = library.custom_op(unique("scaled_sum"), inplace=False)(meta)

    @op.impl("cpu", "cuda")
    def _(xp: ModuleType, self: Any, dim: int, *, scale: float, plan: tuple[int, float], out: ConstOut[Any]) -> None:
        calls.append((xp.__name__, plan))
        xp.multiply(xp.sum(self.array, axis=plan[0]), plan[1], out=out.array)

    return op, calls


def test_planned_op_passes_the_plan_to_the_kernel() -> None:
    op, calls = define_scaled_sum()
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert op.schema.plan == "tuple[int, float]"
    result = op.functional(x, -1, scale=2.0)
    np.testing.assert_array_equal(result.numpy(), [6.0, 14.0])
    assert calls == [("numpy", (1, 2.0))]
    out = dt.empty(2)
    assert op.functional(x, 0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
    assert calls[-1] == ("numpy", (0, 1.0))


def test_planned_op_on_meta_tensors_runs_the_meta_only() -> None:
    op, calls = define_scaled_sum()
    result = op.functional(dt.empty(2, 3, device="meta"), 0)
    assert result.shape == (3,) and result.device.type == "meta"
    assert calls == []


def test_planned_op_out_rules_read_shape_and_dtype_of_the_spec() -> None:
    op, _ = define_scaled_sum()
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(dt.CastingError):
        op.functional(x, 0, out=dt.empty(2, dtype=dt.int64))
    with pytest.warns(UserWarning, match="resized"):
        out = op.functional(x, 0, out=dt.empty(5))
    assert out.shape == (2,)


def test_planned_inplace_variant() -> None:
    def meta(self: Tensor, *, shift: float) -> PlannedSpec[float]:
        return PlannedSpec(self.shape, self.dtype, shift * 2)

    op = structured.structured_op(unique("shift2"))(meta)

    @op.impl("cpu")
    def _(self: CPUTensor, *, shift: float, plan: float, out: ConstOut[CPUTensor]) -> None:
        np.add(self.array, plan, out=out.array)

    assert op.inplace is not None
    x = dt.tensor([1.0, 2.0])
    assert op.inplace(x, shift=1.5) is x
    np.testing.assert_array_equal(x.numpy(), [4.0, 5.0])


def test_planned_spec_from_a_custom_meta_is_validated() -> None:
    def meta(self: Tensor) -> PlannedSpec[int]:
        return self.shape, self.dtype  # type: ignore[return-value]

    op = structured.structured_op(unique("noplan"))(meta)

    @op.impl("cpu")
    def _(self: CPUTensor, *, plan: int, out: ConstOut[CPUTensor]) -> None: ...

    with pytest.raises(ArgumentTypeError, match="PlannedSpec"):
        op.functional(dt.tensor([1.0]))

    def meta_tuple(self: Tensor) -> PlannedSpec[int]:
        return (np.int64(2),), np.float32, 7  # type: ignore[return-value]

    got: list[int] = []
    op2 = structured.structured_op(unique("tupleplan"))(meta_tuple)

    @op2.impl("cpu")
    def _(self: CPUTensor, *, plan: int, out: ConstOut[CPUTensor]) -> None:
        got.append(plan)
        out.array[...] = 0

    result = op2.functional(dt.tensor([1.0]))
    assert result.shape == (2,) and result.dtype == np.float32 and got == [7]


def test_planned_op_impls_must_take_the_plan() -> None:
    op, _ = define_scaled_sum()
    with pytest.raises(ArgumentTypeError, match="keyword-only 'plan'"):

        @op.impl("cpu")
        def _(self: CPUTensor, dim: int, *, scale: float, out: ConstOut[CPUTensor]) -> None: ...


def test_plan_is_reserved_in_planned_ops_only() -> None:
    def meta(self: Tensor, plan: int) -> PlannedSpec[int]:
        return PlannedSpec(self.shape, self.dtype, plan)

    with pytest.raises(ArgumentTypeError, match="'plan' is reserved"):
        structured.structured_op(unique("planparam"))(meta)

    def meta2(self: Tensor, plan: int) -> TensorSpec:
        return self.shape, self.dtype

    assert library.custom_op(unique("planparam"))(meta2).schema.plan is None


def test_xp_is_a_reserved_parameter_name() -> None:
    def meta(self: Tensor, xp: int) -> TensorSpec:
        return self.shape, self.dtype

    with pytest.raises(ArgumentTypeError, match="reserved"):
        library.custom_op(unique("xpparam"))(meta)


def test_xp_kernel_on_cpu_gets_numpy_without_a_wrapper_frame() -> None:
    op, calls = define_scaled_sum()
    handler = op.table.kernels[DispatchKey.CPU]
    # functools.partial: NumPy bound at registration, no Python frame added per call.
    assert handler.func.__name__ == "_" and handler.args == (np,)  # type: ignore[attr-defined]
    op.functional(dt.tensor([[1.0]]), 0)
    assert calls == [("numpy", (0, 1.0))]


def test_xp_kernel_on_cuda_gets_the_cupy_module_of_the_call_under_the_device_guard(fake_cupy: ModuleType) -> None:
    seen: list[tuple[ModuleType, int]] = []

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    op = library.custom_op(unique("neg_xp"), inplace=True)(meta)

    @op.impl("cpu", "cuda")
    def _(xp: ModuleType, self: Any, *, out: ConstOut[Any]) -> None:
        seen.append((xp, fake_cupy.state.current))
        xp.negative(self.array, out=out.array)

    x = dt.tensor([1.0, -2.0], device="cuda:1")
    assert fake_cupy.state.current == 0
    result = op.functional(x)
    assert seen == [(fake_cupy, 1)]
    assert result.device == dt.Device("cuda:1")
    np.testing.assert_array_equal(result.cpu().numpy(), [-1.0, 2.0])
    assert op.inplace is not None
    op.inplace(x)
    assert seen[-1] == (fake_cupy, 1)
    np.testing.assert_array_equal(x.cpu().numpy(), [-1.0, 2.0])
    op.functional(dt.tensor([3.0]))
    assert seen[-1][0] is np


def test_xp_kernel_sees_each_tests_own_cupy(fake_cupy: ModuleType) -> None:
    """A second test with a fresh stand-in: the module is looked up per call, never kept from an earlier one."""
    test_xp_kernel_on_cuda_gets_the_cupy_module_of_the_call_under_the_device_guard(fake_cupy)


def test_xp_kernel_through_structured_op_and_registrar() -> None:
    seen: list[ModuleType] = []

    def xp_meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    op = structured.structured_op(unique("twice"))(xp_meta)

    def kernel(xp: ModuleType, self: Any, *, out: ConstOut[Any]) -> None:
        seen.append(xp)
        xp.multiply(self.array, 2, out=out.array)

    structured.KernelRegistrar(op.name).xp(kernel)
    assert set(op.table.kernels) == {DispatchKey.CPU, DispatchKey.CUDA}
    np.testing.assert_array_equal(op.functional(dt.tensor([1.5])).numpy(), [3.0])
    assert seen == [np]
    op.register_kernel("cpu", kernel)
    op.functional(dt.tensor([1.5]))
    assert seen == [np, np]


def test_xp_kernel_for_an_out_of_tree_backend_gets_its_array_module() -> None:
    backend = library.register_backend("xptest", key="XpTest")
    seen: list[ModuleType] = []

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    op = library.custom_op(unique("oot_xp"))(meta)

    @op.impl("cpu", "xptest")
    def _(xp: ModuleType, self: Any, *, out: ConstOut[Any]) -> None:
        seen.append(xp)
        xp.abs(self._array, out=out.array)

    x = dt.tensor([-1.0, 2.0], device="xptest")
    result = op.functional(x)
    assert result.device.type == "xptest" and seen == [backend.backend.xp] and seen[0] is np
    np.testing.assert_array_equal(result.cpu().numpy(), [1.0, 2.0])


def test_impl_of_several_keys_without_xp_and_bad_keys() -> None:
    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    op = library.custom_op(unique("multi"))(meta)

    @op.impl("cpu", DispatchKey.Meta)
    def _(self: Any, *, out: ConstOut[Any]) -> None:
        out.array[...] = 1

    assert op.table.kernels[DispatchKey.CPU] is op.table.kernels[DispatchKey.Meta]
    with pytest.raises(ArgumentValueError, match="at least one"):
        op.impl()
    with pytest.raises(ArgumentTypeError, match="'xp' first"):

        @op.impl("cpu")
        def _(array_module: ModuleType, self: Any, *, out: ConstOut[Any]) -> None: ...


def test_codegen_types_plan_and_xp_kernels() -> None:
    op, _ = define_scaled_sum()
    text = kernels_module([op], "test")
    assert "plan: tuple[int, float], out: ConstOut[_CPU1]" in text  # out: its own TypeVar, bound by CPUTensor
    assert "plan: tuple[int, float], out: ConstOut[_XP]" in text
    assert f"def xp(self, fn: {camel(op.name)}XPKernel[_XP])" in text
    compile(text, "<kernel signatures>", "exec")
