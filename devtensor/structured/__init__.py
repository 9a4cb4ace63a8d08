"""Structured ops: one definition (a meta function plus an impl per dispatch key), three generated variants.

This is the one public way to define an op; the built-in ops use it too::

    @structured_op(out_may_be_input=True)
    def add(self: TensorOrScalar, other: TensorOrScalar, *, alpha: Scalar = 1) -> TensorSpec:
        return binary_meta("add", np.add, self, other)          # checks + (shape, dtype) of the result

    @add.impl("cpu")
    def _(self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[CPUTensor]) -> None:
        np.add(arr(self), arr(other), out=out.array)

From that, :class:`StructuredOp` generates (with exact signatures, as Python source compiled once per op):

* the functional variant ``add(self, other, *, alpha=1, out=None)``: allocates the output from the meta
  result on the arguments' device, or, given ``out=``, applies the out rules;
* the inplace variant ``add_(self, other, *, alpha=1)``: ``self`` is the output;
* Tensor methods (``t.add(...)``, ``t.add_(...)``).

Around the impl, every variant runs the common code: argument type checks, the dispatch key from
the devices of all tensor arguments (``out`` included; mixed devices raise DeviceMismatchError), one cached
lookup of the handler, the meta function, the variant's output checks (PyTorch's rules: inplace shape and
same_kind dtype; out device, dtype, resize with a UserWarning for non-empty outs, no resize of an out that is
also an input), internal- and partial-overlap errors, the device guard, and one version bump per mutated
tensor. Every check runs before any write, and a resized out is only swapped in after the impl succeeded, so a
call that raises changes nothing. Meta tensors run the meta function only.

A meta function annotated ``-> PlannedSpec[X]`` returns ``PlannedSpec(shape, dtype, plan)``; the kernels then
take a keyword-only ``plan: X`` before ``out`` (values the meta function computed: normalised dims, the result
dtype...). An impl whose first parameter is ``xp`` serves several keys with one body (``@op.impl("cpu",
"cuda")``): it receives the key's array module first (numpy, the cupy module of the call, an out-of-tree
backend's ``xp``); :func:`bind_array_module`.

The package by concern: :mod:`~devtensor.structured.annotations` (what a meta function's annotations mean),
:mod:`~devtensor.structured.schema` (:class:`Param`, :class:`OpSchema`, :func:`schema_from_meta`, name checks),
:mod:`~devtensor.structured.rules` (the out/inplace rules, overlap and writability checks, resize, errors),
:mod:`~devtensor.structured.generic` (the generic front; its tables in
:mod:`~devtensor.structured.tables`), :mod:`~devtensor.structured.fronts` (publishing the fronts) and
:mod:`~devtensor.structured.registry`
(:class:`StructuredOp`, :func:`structured_op`, the registry, bindings, :func:`remove_op`, :class:`KernelRegistrar`);
:mod:`~devtensor.structured.multi` (multi-output ops: :func:`multi_output_op`, :class:`MultiOutputOp`);
:mod:`~devtensor.structured.data_dependent` (data-dependent ops: :func:`data_dependent_op`,
:class:`DataDependentOp`).
This module re-exports their public names.
"""

from __future__ import annotations

from devtensor.structured.annotations import (
    GENERATOR,
    OTHER,
    SCALAR,
    TENSOR,
    TENSOR_LIST,
    TENSOR_OR_SCALAR,
    plan_imports,
    plan_text,
)
from devtensor.structured.data_dependent import (
    DataDependentOp,
    all_data_dependent_ops,
    data_dependent_op,
    data_dependent_ops_by_name,
)
from devtensor.structured.multi import MultiOutputOp, MultiSpec, all_multi_ops, multi_ops_by_name, multi_output_op
from devtensor.structured.registry import (
    KernelRegistrar,
    StructuredOp,
    all_ops,
    bind_array_module,
    binding_attr,
    bound_variant,
    check_impl_signature,
    get_op,
    ops_by_name,
    remove_op,
    structured_op,
    variant,
    view_ops_by_name,
)
from devtensor.structured.rules import flat_tensors
from devtensor.structured.schema import (
    SOURCE_NAMES,
    OpSchema,
    Param,
    check_identifier,
    check_op_name,
    schema_from_meta,
)
from devtensor.tensor import PlannedSpec, TensorOrScalar, TensorSpec

__all__ = [
    "GENERATOR",
    "OTHER",
    "SCALAR",
    "SOURCE_NAMES",
    "TENSOR",
    "TENSOR_LIST",
    "TENSOR_OR_SCALAR",
    "DataDependentOp",
    "KernelRegistrar",
    "MultiOutputOp",
    "MultiSpec",
    "OpSchema",
    "Param",
    "PlannedSpec",
    "StructuredOp",
    "TensorOrScalar",
    "TensorSpec",
    "all_data_dependent_ops",
    "all_multi_ops",
    "all_ops",
    "bind_array_module",
    "binding_attr",
    "bound_variant",
    "check_identifier",
    "check_impl_signature",
    "check_op_name",
    "flat_tensors",
    "get_op",
    "data_dependent_op",
    "data_dependent_ops_by_name",
    "multi_ops_by_name",
    "multi_output_op",
    "ops_by_name",
    "plan_imports",
    "plan_text",
    "remove_op",
    "schema_from_meta",
    "structured_op",
    "variant",
    "view_ops_by_name",
]
