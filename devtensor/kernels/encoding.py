"""``one_hot`` (``torch.nn.functional.one_hot``): class indices as one-hot rows."""

from __future__ import annotations

from types import ModuleType
from typing import Final

from devtensor import dtypes
from devtensor import kernel_signatures as _ks
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.kernels.class_indices import check_classes
from devtensor.kernels.ufunc_family import D
from devtensor.meta import int_arg, memoized
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = ["one_hot"]

_INT64: Final = dtypes.int64


# --- one_hot ---------------------------------------------------------------------------------------------


@structured_op("one_hot", inplace=False, method=False)
def one_hot(self: TensorMeta, num_classes: int = -1) -> TensorSpec:
    """One-hot encoding of class indices (``torch.nn.functional.one_hot``): ``result[..., k]`` is 1 where
    ``self[...] == k``, else 0.

    Shapes: ``self`` of any shape ``S`` (an integer tensor of class indices) gives ``[*S, num_classes]``.
    Dtypes: any integer input (not bool); the result is int64, as PyTorch's.
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give the shape and dtype only.
    ``num_classes`` must be given (>= 0). PyTorch's default ``-1`` infers it as ``self.max() + 1``, which
    reads the data; a meta function sees only shapes and dtypes, so here ``-1`` is a ValueError that asks for
    ``num_classes`` (pass ``int(t.amax()) + 1`` to get PyTorch's inference).
    Variants: functional and out (``one_hot(t, n, out=o)``); no inplace variant, no Tensor method (as PyTorch).

    Raises:
        ArgumentTypeError (TypeError): a non-integer ``self``; ``num_classes`` not an int.
        ValueError: ``num_classes`` is -1 (needs the data) or below -1.
        IndexError: an index of ``self`` outside ``[0, num_classes)`` (raised by the impl before any write).
        CastingError (TypeError), DeviceMismatchError, MemoryOverlapError (ValueError): the out rules.
    """
    return _one_hot_spec(self, num_classes)


@memoized
def _one_hot_spec(self: TensorMeta, num_classes: int = -1) -> TensorSpec:
    if self.dtype.kind not in "iu":
        raise ArgumentTypeError(
            f"one_hot: argument 'self' must be an integer tensor of class indices, got dtype {self.dtype.name}"
        )
    n = int_arg("one_hot", "num_classes", num_classes)
    if n == -1:
        raise ArgumentValueError(
            "one_hot: num_classes=-1 (infer it as self.max() + 1, as PyTorch does) needs the tensor's data, which "
            "a meta function cannot read; pass num_classes explicitly, e.g. one_hot(t, int(t.amax()) + 1)"
        )
    if n < 0:
        raise ArgumentValueError(f"one_hot: argument 'num_classes' must be >= 0, got {n}")
    return ((*self.shape, n), _INT64)


@_ks.one_hot.xp
def _one_hot(xp: ModuleType, self: D, num_classes: int, *, out: ConstOut[D]) -> None:
    idx, o = self._array, out.array
    check_classes(xp, "one_hot", "self", idx, num_classes)
    if o.size == 0:
        return
    # Indices are in [0, n) now, so int64 holds them whatever their dtype (uint64 included).
    xp.equal(idx.astype(_INT64, copy=False)[..., None], xp.arange(num_classes, dtype=_INT64), out=o)
