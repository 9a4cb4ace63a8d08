"""Activations: ``relu`` (an inline unary meta, NumPy's maximum with 0 as its direct call, a plan lowering) and
``softplus`` (``torch.nn.functional.softplus``'s signature and formula, computed with NumPy's ufuncs)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, Final, TypeVar

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import DType
from devtensor.errors import ArgumentTypeError
from devtensor.kernels.random import real_arg
from devtensor.kernels.ufunc_family import D, quiet
from devtensor.lowering import Lowering, lowers
from devtensor.meta import INLINE, offers_direct
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = ["relu", "softplus"]

_M = TypeVar("_M", bound=Callable[..., Any])


@structured_op("softplus", inplace=False, method=False, out_may_be_input=True)
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


# --- relu ------------------------------------------------------------------------------------------------


#: relu's inline meta cache (meta.INLINE): each dtype relu accepts, mapped to itself (the result's dtype); the
#: fronts read it instead of calling the meta function, which fills it.
_RELU_DTYPES: Final[dict[Any, DType]] = {}
#: relu's direct path (meta.DIRECT): [the registered CPU kernel (set below), the array kernel].
_RELU_DIRECT: Final[list[Any]] = [None, None]


def _inline_unary(cache: dict[Any, DType]) -> Callable[[_M], _M]:
    """Mark a one-tensor meta function as offering the fronts the inline cache hit of the ufunc
    family's unary metas (meta.INLINE): ``cache`` maps each accepted dtype to the result's, and the meta fills it."""

    def mark(meta: _M) -> _M:
        meta.__dict__[INLINE] = ("unary", cache)
        return meta

    return mark


@structured_op("relu", out_may_be_input=True)
@offers_direct(_RELU_DIRECT)
@_inline_unary(_RELU_DTYPES)
def relu(self: TensorMeta) -> TensorSpec:
    """``max(self, 0)``, elementwise (``torch.relu``; values as ``np.maximum(self, 0)``: NaN propagates).

    Shapes: the result has ``self``'s shape. Dtypes: integers and floats keep theirs; bool and complex are
    refused (ArgumentTypeError, as PyTorch). Devices: cpu (NumPy), cuda (CuPy), meta (shape and dtype only).
    Variants: functional ``relu(t)`` / ``t.relu()``, out ``relu(t, out=o)`` (may be ``t`` itself) and inplace
    ``relu_(t)`` / ``t.relu_()``, with PyTorch's out and inplace rules.

    Raises:
        ArgumentTypeError (TypeError): a bool or complex input.
        CastingError (TypeError): the result dtype does not cast (same_kind) to ``out.dtype``.
        DeviceMismatchError, MemoryOverlapError, ReadOnlyError (ValueError): as for every elementwise op.
    """
    dtype = self.dtype
    if dtype.kind not in "iuf":
        raise ArgumentTypeError(f"relu: argument 'self' must be an integer or floating tensor, got {dtype.name}")
    _RELU_DTYPES[dtype] = dtype
    return (self.shape, dtype)


def _relu_arrays(a: Any, out: Any = None) -> Any:
    """relu on arrays: ``np.maximum(a, 0)`` into ``out`` (a new array when None), which it returns: relu's
    direct path (meta.DIRECT: while the built-in CPU kernel, the same one ufunc call, is the handler, the
    fronts and plan replays call this with the arrays, without a ConstOut); 0 is a weak Python int,
    so the result keeps ``a``'s dtype, as the meta function says. (The fronts pass ``out`` positionally, the
    plan replays by keyword.)"""
    return _np_maximum(a, 0, out=out)


@_ks.relu.xp
def _relu(xp: ModuleType, self: D, *, out: ConstOut[D]) -> None:
    xp.maximum(self._array, 0, out=out.array)


@lowers(_relu)
def _relu_lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: None) -> bool:
    """relu's lowering (devtensor.lowering): the kernel's one ``np.maximum(self, 0, out=)`` call."""
    lw.call(np.maximum, args["self"], 0, out=out)
    return True


_np_maximum: Final = np.maximum
_RELU_DIRECT[1] = _relu_arrays
_RELU_DIRECT[0] = relu.table.kernels.get(DispatchKey.CPU)
