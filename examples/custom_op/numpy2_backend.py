"""A small out-of-tree backend: the device kind ``numpy2``, a second CPU-like device backed by NumPy.

What a backend package does, in four steps:

1. define its refined tensor class (``Numpy2Tensor``: ``array`` is a ``numpy.ndarray``), so kernels are typed;
2. register the device type, its dispatch key (``Numpy2``), the class and a Backend with
   :func:`devtensor.library.register_backend` (the default NumPy-backed Backend serves here);
3. register a backend fallback: every op without a ``numpy2`` kernel of its own runs its CPU kernel on CPU
   copies of the inputs and copies the result back (:func:`devtensor.library.cpu_fallback`), counted here;
4. register native kernels for the ops that matter (``add``, ``mul`` and the custom ``softplus``): they win
   over the fallback.

Every op on ``numpy2`` tensors gets devtensor's common code for free: the meta checks, the out and inplace rules,
overlap checks and version bumps run in the op's front before and after the kernel or the fallback.
``NATIVE`` and ``FALLBACK`` count the calls each path served.
"""

from __future__ import annotations

from collections import Counter
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np
from fused_softplus import softplus_op

import devtensor as dt
from devtensor import Tensor, library
from devtensor.dtypes import Scalar
from devtensor.structured import StructuredOp
from devtensor.typed import ConstOut

__all__ = ["FALLBACK", "NATIVE", "NUMPY2", "Numpy2Tensor"]


class Numpy2Tensor(Tensor):
    """A tensor proven to live on the ``numpy2`` device: ``array`` is its ``numpy.ndarray``."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def array(self) -> np.ndarray[Any, np.dtype[Any]]:
            """The backing NumPy array (writes through it bypass the version counter)."""
            ...

    else:
        array = property(attrgetter("_array"), doc="The backing NumPy array.")


#: Calls served by native ``numpy2`` kernels and by the fallback, per op name.
NATIVE: Counter[str] = Counter()
FALLBACK: Counter[str] = Counter()

NUMPY2 = library.register_backend("numpy2", tensor_class=Numpy2Tensor)


def _fallback(op: StructuredOp, *args: Any, out: ConstOut[Any], **kwargs: Any) -> None:
    FALLBACK[op.name] += 1
    library.cpu_fallback(op, *args, out=out, **kwargs)


library.register_fallback("numpy2", _fallback)


# ``ConstOut[T].array`` is typed for CPUTensor (NumPy) and CUDATensor (CuPy); an out-of-tree class is not known
# to it, so these kernels take ``ConstOut[Any]`` and annotate the array they write.


def _arr(x: Numpy2Tensor | Scalar) -> Any:
    return x.array if isinstance(x, Numpy2Tensor) else x


def _add(self: Numpy2Tensor | Scalar, other: Numpy2Tensor | Scalar, *, alpha: Scalar, out: ConstOut[Any]) -> None:
    NATIVE["add"] += 1
    target: np.ndarray[Any, np.dtype[Any]] = out.array
    if alpha == 1:
        np.add(_arr(self), _arr(other), out=target)
    else:
        np.add(_arr(self), np.multiply(_arr(other), alpha), out=target)


def _mul(self: Numpy2Tensor | Scalar, other: Numpy2Tensor | Scalar, *, out: ConstOut[Any]) -> None:
    NATIVE["mul"] += 1
    target: np.ndarray[Any, np.dtype[Any]] = out.array
    np.multiply(_arr(self), _arr(other), out=target)


def _softplus(self: Numpy2Tensor, beta: float, threshold: float, *, out: ConstOut[Any]) -> None:
    NATIVE["softplus"] += 1
    x = self.array
    z = np.multiply(x, beta, dtype=x.dtype)
    linear = z > threshold
    np.logaddexp(0, z, out=z)
    np.divide(z, beta, out=z)
    np.copyto(z, x, where=linear)
    target: np.ndarray[Any, np.dtype[Any]] = out.array
    np.copyto(target, z)


library.register_kernel(dt.add, "numpy2", _add)
library.register_kernel(dt.mul, "numpy2", _mul)
library.register_kernel(softplus_op, "numpy2", _softplus)
