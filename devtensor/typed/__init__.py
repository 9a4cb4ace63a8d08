"""Device-refined tensor types, refinement functions, ``TypeIs`` predicates and the const-out type.

See :mod:`devtensor.typed.refined` and :mod:`devtensor.typed.const_out`.
"""

from devtensor.typed.const_out import ConstOut
from devtensor.typed.refined import (
    CPUTensor,
    CUDATensor,
    MetaTensor,
    as_cpu,
    as_cuda,
    as_meta,
    is_cpu,
    is_cuda,
    is_meta,
)

__all__ = [
    "CPUTensor",
    "CUDATensor",
    "ConstOut",
    "MetaTensor",
    "as_cpu",
    "as_cuda",
    "as_meta",
    "is_cpu",
    "is_cuda",
    "is_meta",
]
