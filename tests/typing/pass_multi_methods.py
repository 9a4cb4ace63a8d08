"""Must type-check: the Tensor methods over multi-output and data-dependent ops and ``Tensor.repeat`` (issue 12),
with the result types users rely on (PyTorch's named tuples, a tensor or a tuple of tensors)."""

from __future__ import annotations

from typing import assert_type

import devtensor as dt
from devtensor import Tensor
from devtensor.kernels.ordering import AminmaxResult, MaxResult, MinResult, SortResult, TopkResult
from devtensor.typed import CPUTensor


def multi_output_methods(a: Tensor, b: CPUTensor) -> None:
    assert_type(a.sort(), SortResult)
    assert_type(b.sort(0, descending=True, stable=True).values, Tensor)
    assert_type(a.topk(2, sorted=False), TopkResult)
    assert_type(a.aminmax(dim=0), AminmaxResult)
    assert_type(a.max(), Tensor)
    assert_type(a.max(1), MaxResult)
    assert_type(a.max(a), Tensor)
    assert_type(a.min(0, True).indices, Tensor)
    assert_type(dt.min(a, 0), MinResult)
    assert_type(dt.max(a), Tensor)


def data_dependent_methods(a: Tensor) -> None:
    assert_type(a.nonzero(), Tensor)
    assert_type(a.nonzero(as_tuple=True), tuple[Tensor, ...])
    assert_type(a.unique(), Tensor)
    assert_type(a.unique(return_counts=True), Tensor | tuple[Tensor, ...])
    assert_type(dt.unique(a, dim=0), Tensor)
    assert_type(a.unique_consecutive(), Tensor)


def repeat(a: Tensor) -> None:
    assert_type(a.repeat(2, 3), Tensor)
    assert_type(a.repeat((2, 3)), Tensor)
    assert_type(a.repeat([2, 3], out=a), Tensor)


def numpy_aliases(a: Tensor) -> None:
    assert_type(a.max(axis=0, keepdims=True), Tensor)  # NumPy's keyword: NumPy's result, the values
    assert_type(dt.min(a, axis=(0, 1)), Tensor)
    assert_type(a.max(keepdims=True), Tensor)
    assert_type(a.max(0, keepdims=True), MaxResult)  # a dim: PyTorch's (values, indices)
    assert_type(dt.min(a, dim=1, keepdims=True), MinResult)
    assert_type(a.stride(), tuple[int, ...])
    assert_type(a.stride(0), int)
    assert_type(a.type(), str)
    assert_type(a.type(dt.float32), Tensor)
    assert_type(a.allclose(a), bool)
    assert_type(dt.allclose(a, a), bool)
    assert_type(a.bincount(minlength=3), Tensor)
    assert_type(a.sort(axis=0), SortResult)
    assert_type(dt.topk(a, 2, axis=0), TopkResult)
    assert_type(a.aminmax(axis=0, keepdims=True), AminmaxResult)
    assert_type(dt.unique(a, axis=0), Tensor)
    assert_type(a.unique_consecutive(axis=0), Tensor)
