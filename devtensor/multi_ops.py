"""Main-namespace functions that are not one op's generated front: ``sort``, ``topk``, ``aminmax`` (typed
multi-output ops).

``sort``, ``topk`` and ``aminmax`` are the functional fronts of multi-output structured ops
(:mod:`devtensor.kernels.ordering`; their docstrings give the semantics, errors and devices), returning
PyTorch's named tuples and taking ``out=`` as a tuple of tensors. ``devtensor.sort`` and the others are these
functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from devtensor.kernels.ordering import AminmaxResult, SortResult, TopkResult
from devtensor.structured import get_op as _get_op
from devtensor.tensor import Tensor

__all__ = ["AminmaxResult", "SortResult", "TopkResult", "aminmax", "sort", "topk"]

if TYPE_CHECKING:

    def sort(
        self: Tensor,
        dim: int = -1,
        descending: bool = False,
        *,
        stable: bool = False,
        out: tuple[Tensor, Tensor] | None = None,
    ) -> SortResult: ...
    def topk(
        self: Tensor,
        k: int,
        dim: int = -1,
        largest: bool = True,
        sorted: bool = True,
        *,
        out: tuple[Tensor, Tensor] | None = None,
    ) -> TopkResult: ...
    def aminmax(
        self: Tensor, *, dim: int | None = None, keepdim: bool = False, out: tuple[Tensor, Tensor] | None = None
    ) -> AminmaxResult: ...

else:
    sort = _get_op("sort").functional
    topk = _get_op("topk").functional
    aminmax = _get_op("aminmax").functional
