"""Typed declarations of the Tensor methods that are no generated op method: those over the multi-output ops
(``sort``, ``topk``, ``aminmax``, ``max``/``min`` along a dim), the data-dependent ops (``nonzero``, ``unique``,
``unique_consecutive``), ``repeat`` (PyTorch's tiling ``Tensor.repeat(*sizes)``) and ``repeat_interleave``
(:func:`devtensor.multi_ops.repeat_interleave`, which reads a tensor of counts).

:class:`TensorMultiMethods` is a mixin of :class:`devtensor.tensor.Tensor` holding declarations only (under
``TYPE_CHECKING``): :mod:`devtensor.multi_ops` and :mod:`devtensor.data_dependent` attach the functions at import
(the ops' functional fronts, which take ``self`` first, or the Python functions there). Semantics, devices and
errors: the ops' docstrings (:mod:`devtensor.kernels.ordering`, :mod:`devtensor.data_dependent`,
:func:`devtensor.kernels.shape_more.repeat`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal, overload

    from devtensor.kernels.ordering import AminmaxResult, MaxResult, MinResult, SortResult, TopkResult
    from devtensor.tensor import Tensor

__all__ = ["TensorMultiMethods"]


class TensorMultiMethods:
    """Typed declarations of the Tensor methods over multi-output and data-dependent ops, and ``repeat``."""

    __slots__ = ()

    if TYPE_CHECKING:

        def sort(
            self,
            dim: int = -1,
            descending: bool = False,
            *,
            stable: bool = False,
            out: tuple[Tensor, Tensor] | None = None,
            axis: int = ...,
        ) -> SortResult: ...
        def topk(
            self,
            k: int,
            dim: int = -1,
            largest: bool = True,
            sorted: bool = True,
            *,
            out: tuple[Tensor, Tensor] | None = None,
            axis: int = ...,
        ) -> TopkResult: ...
        def aminmax(
            self,
            *,
            dim: int | None = None,
            keepdim: bool = False,
            out: tuple[Tensor, Tensor] | None = None,
            axis: int | None = ...,
            keepdims: bool = ...,
        ) -> AminmaxResult: ...
        @overload
        def max(self) -> Tensor: ...
        @overload
        def max(
            self, dim: int, keepdim: bool = False, *, out: tuple[Tensor, Tensor] | None = None, keepdims: bool = ...
        ) -> MaxResult: ...
        @overload
        def max(
            self, *, axis: int | Sequence[int] | None, keepdims: bool = ..., out: Tensor | None = None
        ) -> Tensor: ...
        @overload
        def max(self, *, keepdims: bool, out: Tensor | None = None) -> Tensor: ...
        @overload
        def max(self, other: Tensor, /, *, out: Tensor | None = None) -> Tensor: ...
        @overload
        def max(self, *, other: Tensor, out: Tensor | None = None) -> Tensor: ...
        def max(self, *args: object, **kwargs: object) -> Tensor | MaxResult: ...
        @overload
        def min(self) -> Tensor: ...
        @overload
        def min(
            self, dim: int, keepdim: bool = False, *, out: tuple[Tensor, Tensor] | None = None, keepdims: bool = ...
        ) -> MinResult: ...
        @overload
        def min(
            self, *, axis: int | Sequence[int] | None, keepdims: bool = ..., out: Tensor | None = None
        ) -> Tensor: ...
        @overload
        def min(self, *, keepdims: bool, out: Tensor | None = None) -> Tensor: ...
        @overload
        def min(self, other: Tensor, /, *, out: Tensor | None = None) -> Tensor: ...
        @overload
        def min(self, *, other: Tensor, out: Tensor | None = None) -> Tensor: ...
        def min(self, *args: object, **kwargs: object) -> Tensor | MinResult: ...
        @overload
        def nonzero(self, *, as_tuple: Literal[False] = False) -> Tensor: ...
        @overload
        def nonzero(self, *, as_tuple: Literal[True]) -> tuple[Tensor, ...]: ...
        @overload
        def nonzero(self, *, as_tuple: bool) -> Tensor | tuple[Tensor, ...]: ...
        def nonzero(self, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]: ...
        @overload
        def unique(
            self,
            sorted: bool = True,
            return_inverse: Literal[False] = False,
            return_counts: Literal[False] = False,
            dim: int | None = None,
            *,
            axis: int | None = ...,
        ) -> Tensor: ...
        @overload
        def unique(
            self,
            sorted: bool = True,
            return_inverse: bool = False,
            return_counts: bool = False,
            dim: int | None = None,
            *,
            axis: int | None = ...,
        ) -> Tensor | tuple[Tensor, ...]: ...
        def unique(
            self,
            sorted: bool = True,
            return_inverse: bool = False,
            return_counts: bool = False,
            dim: int | None = None,
            *,
            axis: int | None = ...,
        ) -> Tensor | tuple[Tensor, ...]: ...
        @overload
        def unique_consecutive(
            self,
            return_inverse: Literal[False] = False,
            return_counts: Literal[False] = False,
            dim: int | None = None,
            *,
            axis: int | None = ...,
        ) -> Tensor: ...
        @overload
        def unique_consecutive(
            self,
            return_inverse: bool = False,
            return_counts: bool = False,
            dim: int | None = None,
            *,
            axis: int | None = ...,
        ) -> Tensor | tuple[Tensor, ...]: ...
        def unique_consecutive(
            self,
            return_inverse: bool = False,
            return_counts: bool = False,
            dim: int | None = None,
            *,
            axis: int | None = ...,
        ) -> Tensor | tuple[Tensor, ...]: ...
        def bincount(self, weights: Tensor | None = None, minlength: int = 0) -> Tensor: ...
        @overload
        def repeat(self, sizes: Sequence[int], /, *, out: Tensor | None = None) -> Tensor: ...
        @overload
        def repeat(self, *sizes: int, out: Tensor | None = None) -> Tensor: ...
        def repeat(self, *sizes: int | Sequence[int], out: Tensor | None = None) -> Tensor: ...
        def repeat_interleave(
            self,
            repeats: Tensor | bool | int | float | complex,
            dim: int | None = None,
            *,
            output_size: int | None = None,
            out: Tensor | None = None,
            axis: int | None = ...,
        ) -> Tensor: ...
