"""Promises of ``devtensor.library`` around custom ops: device bindings and kernel handles never go stale, dispatch
modes see every call (view ops included) and survive being exited out of order, tensor-list parameters work in
every variant and in ``library.check``, meta results are validated, and library errors are devtensor errors that
name the op. (``tests/test_library.py`` holds the library's main tests.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from helpers import raises_devtensor_error_naming, unique

import devtensor as dt
from devtensor import library
from devtensor import modes as modes_mod
from devtensor.tensor import Tensor, TensorMeta, TensorSpec
from devtensor.typed import ConstOut, CPUTensor

pytestmark = pytest.mark.usefixtures("remove_new_ops")


def _identity_meta(self: Tensor) -> TensorSpec:
    return self.shape, self.dtype


def _define_fill_op(name: str, value: float, *, replace: bool = False) -> Any:
    """A custom elementwise op whose CPU impl fills its output with ``value``."""
    op = library.custom_op(name, replace=replace, out_may_be_input=True)(_identity_meta)

    @op.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = value

    return op


# --- a replaced / removed custom op keeps running through devtensor.cpu.<name> ------------------------------


def test_device_binding_is_not_stale_after_replace_and_remove() -> None:
    name = unique("stale")
    x = dt.zeros(2)
    try:
        _define_fill_op(name, 1.0)
        assert getattr(dt.cpu, name)(x).tolist() == [1.0, 1.0]
        _define_fill_op(name, 2.0, replace=True)
        assert getattr(dt.cpu, name)(x).tolist() == [2.0, 2.0]  # once [1.0, 1.0]: the old op runs
        library.remove_op(name)
        with pytest.raises(AttributeError):
            getattr(dt.cpu, name)  # remove_op promises to drop the op's cached device bindings
    finally:
        vars(dt.cpu).pop(name, None)
        vars(dt.cpu).pop(name + "_", None)


# --- kernel handles removed out of order resurrect a removed kernel ------------------------------------------


def test_kernel_handles_removed_out_of_order_restore_the_original_kernel() -> None:
    op = _define_fill_op(unique("handles"), 1.0)

    def fill11(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = 11

    def fill22(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = 22

    h1 = library.register_kernel(op, "cpu", fill11)
    h2 = library.register_kernel(op, "cpu", fill22)
    h1.remove()
    h2.remove()
    assert op.functional(dt.zeros(1)).tolist() == [1.0]  # once [11.0]: h1's kernel is back


# --- a mode exited inside another mode's __dispatch__ comes back; the mode count goes negative -------------


def test_mode_exited_during_another_modes_dispatch_stays_exited() -> None:
    outer = library.CountingMode()

    class ExitOuter(library.DispatchMode):
        def __dispatch__(
            self,
            op: Any,
            variant: str,
            func: Callable[..., Any],
            args: tuple[Any, ...],
            kwargs: dict[str, Any],
        ) -> Any:
            with contextlib.suppress(RuntimeError):  # refusing the exit is acceptable too
                outer.__exit__(None, None, None)
            return func(*args, **kwargs)

    a = dt.ones(2)
    outer.__enter__()
    inner = ExitOuter()
    inner.__enter__()
    _ = a + 1
    inner.__exit__(None, None, None)
    for mode in reversed(modes_mod.active_modes()):  # leave whatever is still active, innermost first
        mode.__exit__(None, None, None)
    assert modes_mod.active_modes() == ()
    assert modes_mod.ACTIVE[0] == 0  # once -1: `outer` was restored to the stack after its exit
    with library.LoggingMode(sink=lambda text: None) as log:
        _ = a + 1
    assert log.names == ["add"]  # once []: modes stop seeing calls


# --- dispatch modes do not see view ops ------------------------------------------------------------------


def test_dispatch_modes_see_view_op_calls() -> None:
    # README: "dispatch modes (DispatchMode, CountingMode, LoggingMode) see every op call"
    t = dt.ones(2, 3)
    with library.CountingMode() as mode:
        t.reshape(6)
        dt.transpose(t, 0, 1)
    assert mode.counts["reshape"] == 1  # once 0: view ops bypass the modes
    assert mode.counts["transpose"] == 1


# --- the inplace variant of any custom op with a tensor-list parameter crashes --------------------------------


def _accumulate_meta(self: TensorMeta, others: Sequence[TensorMeta]) -> TensorSpec:
    return self.shape, self.dtype


def _accumulate_cpu(self: CPUTensor, others: Sequence[CPUTensor], *, out: ConstOut[CPUTensor]) -> None:
    total = self.array.copy()
    for t in others:
        total += t.array
    out.array[...] = total


def _define_accumulate() -> tuple[str, Any]:
    name = unique("acc")
    op: Any = library.custom_op(name, inplace=True)(_accumulate_meta)
    op.impl("cpu")(_accumulate_cpu)
    return name, op


@pytest.mark.parametrize("front", ["op.inplace", "devtensor.cpu binding"])
def test_inplace_variant_of_a_custom_op_with_a_tensor_list_parameter_runs(front: str) -> None:
    name, op = _define_accumulate()
    x = dt.ones(2)
    y = dt.full((2,), 2.0)
    # once UnboundLocalError "cannot access local variable '_t0'" from the generated inplace front, for every
    # call (the functional and out variants work)
    result = op.inplace(x, [y]) if front == "op.inplace" else getattr(dt.cpu, name + "_")(x, [y])
    assert result is x
    assert x.tolist() == [3.0, 3.0]
    assert x.version == 1


def test_library_check_passes_a_correct_op_with_a_tensor_list_parameter() -> None:
    _, op = _define_accumulate()
    report = library.check(op, [library.Sample((dt.ones(2), [dt.full((2,), 2.0)]))], keys=["cpu", "meta"])
    # once two "exception" problems (the inplace runs raise UnboundLocalError)
    assert report.ok, str(report)


# --- devtensor.library errors outside the hierarchy -----------------------------------------------------------


def _meta_with_dict(self: TensorMeta, table: dict[str, int]) -> TensorSpec:
    return self.shape, self.dtype


def _impl_without_out(self: CPUTensor) -> None:
    pass


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: library.parse_schema("f(Tensor self) -> Tensor(a)"), "parse_schema"),
        (lambda: library.custom_op(unique("dictop"))(_meta_with_dict), "dictop"),
        (lambda: library.override("add", "cpu", _impl_without_out), "add"),  # type: ignore[kernel-signature]
    ],
    ids=["parse_schema", "custom_op-annotation", "override-signature"],
)
def test_library_errors_are_in_the_devtensor_hierarchy(call: Callable[[], object], op: str) -> None:
    # parse_schema raises plain ValueError for malformed text (its tokenizer's errors are ArgumentValueError);
    # custom_op/override raise plain TypeError for an unsupported annotation or a mismatched impl
    raises_devtensor_error_naming(call, op)


# --- a custom op's meta result is not validated: tensors of unsupported dtypes, NumPy ints in shapes ----------


def _object_dtype_meta(self: TensorMeta) -> TensorSpec:
    return self.shape, np.dtype(object)


def _numpy_int_shape_meta(self: TensorMeta) -> TensorSpec:
    shape: Any = tuple(np.int64(n) for n in self.shape)  # a meta author's slip mypy would not see in untyped code
    return shape, self.dtype


def _fill_one(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
    out.array[...] = 1


@pytest.mark.parametrize("meta", [_object_dtype_meta, _numpy_int_shape_meta], ids=["object-dtype", "numpy-int-shape"])
def test_meta_results_are_validated(meta: Callable[[TensorMeta], TensorSpec]) -> None:
    op: Any = library.custom_op(unique("badmeta"))(meta)
    op.impl("cpu")(_fill_one)
    try:
        result = op.functional(dt.ones(2))
    except TypeError as error:
        assert isinstance(error, dt.DevtensorError)
        return
    # once a tensor of dtype object, and a tensor whose .shape is (np.int64(2),)
    assert result.dtype in {dt.float64, dt.float32, dt.int64, dt.bool}
    assert all(type(n) is int for n in result.shape)


# --- register_backend takes a CPUTensor subclass as an out-of-tree backend's tensor class -------------------


def test_register_backend_refuses_a_tensor_class_that_is_a_cpu_tensor() -> None:
    class SubTensor(CPUTensor):
        __slots__ = ()

    # docstring: "tensor_class: the refined tensor class: a direct subclass of Tensor"; a CPUTensor subclass is
    # accepted, so mypy then types every tensor of the new device as a CPUTensor (is_cpu says False at run time)
    with pytest.raises(ValueError) as info:
        library.register_backend(unique("sub"), tensor_class=SubTensor)
    assert isinstance(info.value, dt.DevtensorError)
