"""Activations beyond :mod:`devtensor.kernels.nn`'s: ``softplus`` (``torch.nn.functional.softplus``'s signature
and formula, computed with NumPy's ufuncs)."""

from __future__ import annotations

from types import ModuleType

from devtensor import kernel_signatures as _ks
from devtensor.errors import ArgumentTypeError
from devtensor.kernels.random import real_arg
from devtensor.kernels.ufunc_family import D, quiet
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = ["softplus"]


@structured_op(inplace=False, method=False, out_may_be_input=True)
def softplus(self: TensorMeta, beta: float = 1.0, threshold: float = 20.0) -> TensorSpec:
    """``log(1 + exp(beta * self)) / beta`` elementwise, and ``self`` itself where ``beta * self > threshold``
    (``torch.nn.functional.softplus``; computed as ``np.log1p(np.exp(beta * x)) / beta`` in ``self``'s dtype).

    Shapes: any; result ``self``'s shape and dtype, on its device. Dtypes: floating (float16, float32, float64).
    Variants: functional ``softplus(t, beta=1.0, threshold=20.0)`` and out (PyTorch has no inplace form nor
    method). ``beta`` 0 gives inf or NaN, with no warning (NumPy's values, not an error).

    Raises:
        ArgumentTypeError (TypeError): a non-floating (or complex) ``self``; ``beta``/``threshold`` not real
            numbers.
    """
    if self.dtype.kind != "f":
        raise ArgumentTypeError(f"softplus: only floating-point inputs are supported, got {self.dtype.name}")
    real_arg("softplus", "beta", beta)
    real_arg("softplus", "threshold", threshold)
    return self.shape, self.dtype


@_ks.softplus.xp
def _softplus(xp: ModuleType, self: D, beta: float, threshold: float, *, out: ConstOut[D]) -> None:
    x = self._array
    b = x.dtype.type(beta)
    with quiet(xp):
        scaled = x * b
        soft = xp.log1p(xp.exp(scaled)) / b
        xp.copyto(out.array, xp.where(scaled > threshold, x, soft), casting="same_kind")
