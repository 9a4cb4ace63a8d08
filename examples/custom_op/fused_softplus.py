"""A custom op defined outside devtensor: a fused ``softplus`` with ``beta`` and ``threshold``, CPU and CUDA.

``softplus(x, beta=1.0, threshold=20.0) = log(1 + exp(beta * x)) / beta``, and ``x`` itself where
``beta * x > threshold`` (PyTorch's ``torch.nn.functional.softplus``, the reference for the semantics).
Composed from devtensor ops it would take five calls and four temporaries; as one op it is one front call, one
meta check and one kernel per device.

The op is defined with :func:`devtensor.library.custom_op` from its annotated meta function (its tensor
parameter typed ``TensorMeta``, so mypy rejects a meta function that reads data), and its impls are registered
with the typed decorators of ``softplus_kernels.py``, generated from the op's schema by

    PYTHONPATH=examples/custom_op python -m devtensor.codegen --package fused_softplus \
        --out examples/custom_op/softplus_kernels.py

so mypy checks each impl against the op (tensor parameters refined to the key's type, a ConstOut output); the
schema is checked again at run time when they register. The variants:

* ``softplus(x, beta, threshold)`` (functional) and ``softplus(x, ..., out=y)`` (out),
* ``softplus_(x, ...)`` (inplace),

typed below for mypy and bound at run time to the op's generated fronts (``softplus_op.functional`` /
``softplus_op.inplace``; the op is named ``fused_softplus``, as op names are one registry and devtensor has a
built-in ``softplus``), which run devtensor's common code: argument and device checks, the meta function, the
out and inplace rules, overlap checks, the device guard and version bumps.

Shapes: any; the result has ``x``'s shape. Dtypes: float16, float32, float64 (the result keeps ``x``'s dtype);
other dtypes raise ArgumentTypeError (a TypeError), as PyTorch's softplus. Devices: CPU (NumPy), CUDA (CuPy),
meta (shape and dtype only), and any out-of-tree device with a kernel or a fallback.

Raises: ArgumentTypeError (TypeError) for a non-float tensor or a non-number ``beta``/``threshold``;
ValueError for ``beta == 0``; the usual out/inplace errors (CastingError, ShapeError, MemoryOverlapError).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import softplus_kernels

from devtensor import Tensor, library
from devtensor.backends import cupy_module
from devtensor.errors import ArgumentTypeError
from devtensor.structured import TensorSpec
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut, CPUTensor, CUDATensor

__all__ = ["softplus", "softplus_", "softplus_op", "softplus_reference"]

NDArray = np.ndarray[Any, np.dtype[Any]]
_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


@library.custom_op("fused_softplus", out_may_be_input=True)
def softplus_op(self: TensorMeta, beta: float = 1.0, threshold: float = 20.0) -> TensorSpec:
    """Softplus, ``log(1 + exp(beta * x)) / beta`` (``x`` where ``beta * x > threshold``), elementwise.

    Shapes: the result has ``self``'s shape. Dtypes: float16/32/64, kept. Devices: ``self``'s.
    Raises: ArgumentTypeError for a non-float ``self`` or non-number ``beta``/``threshold``; ValueError for
    ``beta == 0``. Semantics: PyTorch's ``torch.nn.functional.softplus``.
    """
    if self.dtype not in _FLOATS:
        raise ArgumentTypeError(f"fused_softplus: argument 'self' must be a floating-point tensor, got {self.dtype}")
    for name, value in (("beta", beta), ("threshold", threshold)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ArgumentTypeError(f"fused_softplus: argument '{name}' must be a real number, got {value!r}")
    if beta == 0:
        raise ValueError("fused_softplus: argument 'beta' must not be 0")
    return self.shape, self.dtype


@softplus_kernels.fused_softplus.cpu
def _softplus_cpu(self: CPUTensor, beta: float, threshold: float, *, out: ConstOut[CPUTensor]) -> None:
    x = self.array
    z = np.multiply(x, beta, dtype=x.dtype)
    linear = z > threshold
    # log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|)): no overflow, and cheaper than np.logaddexp.
    t = np.abs(z)
    np.negative(t, out=t)
    np.exp(t, out=t)
    np.log1p(t, out=t)
    np.maximum(z, 0, out=z)
    z += t
    z /= beta
    np.copyto(z, x, where=linear)
    np.copyto(out.array, z)  # last: out may be x itself (the inplace variant)


@softplus_kernels.fused_softplus.cuda
def _softplus_cuda(self: CUDATensor, beta: float, threshold: float, *, out: ConstOut[CUDATensor]) -> None:
    cp = cupy_module()
    x = self.array
    z = cp.multiply(x, beta, dtype=x.dtype)
    # log(1 + exp(z)) = max(z, 0) + log(1 + exp(-|z|)): no overflow for large z.
    soft = (cp.maximum(z, 0) + cp.log(1 + cp.exp(-abs(z)))) / beta
    cp.copyto(out.array, cp.where(z > threshold, x, soft))


def softplus_reference(x: NDArray, beta: float = 1.0, threshold: float = 20.0) -> NDArray:
    """The NumPy reference: PyTorch's formula in float64, cast back to ``x``'s dtype."""
    z = x.astype(np.float64) * beta
    result = np.where(z > threshold, x.astype(np.float64), np.log1p(np.exp(np.minimum(z, threshold))) / beta)
    return result.astype(x.dtype)


if TYPE_CHECKING:

    def softplus(self: Tensor, beta: float = 1.0, threshold: float = 20.0, *, out: Tensor | None = None) -> Tensor: ...

    def softplus_(self: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor: ...

else:
    softplus = softplus_op.functional
    softplus_ = softplus_op.inplace
