"""A meta function whose postponed annotation names something its module does not define (issue 9, item 12)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from devtensor.structured import TensorSpec
from devtensor.tensor import TensorMeta

if TYPE_CHECKING:  # visible to mypy only: at run time the annotation below cannot be resolved
    from collections.abc import Sequence as Dims


def scale_meta(self: TensorMeta, dims: Dims[int], *, factor: float = 2.0) -> TensorSpec:
    """The result has ``self``'s shape and dtype."""
    return self.shape, self.dtype
