"""Closeness: ``isclose`` (an op) and ``allclose`` (a function over it), PyTorch's names and signatures, NumPy's
values (``np.isclose``/``np.allclose``: ``|self - other| <= atol + rtol * |other|``, infinities close only to
themselves, NaN close to NaN only with ``equal_nan``). NumPy's ``np.isclose``/``np.allclose`` on tensors run these
(:mod:`devtensor.numpy_extra`).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from devtensor import dtypes
from devtensor import kernel_signatures as _ks
from devtensor.errors import ArgumentValueError
from devtensor.kernels.random import real_arg
from devtensor.kernels.ufunc_family import D, quiet
from devtensor.meta import broadcast_shapes
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import Tensor, TensorMeta
from devtensor.typed import ConstOut

__all__ = ["allclose", "isclose"]


def _tolerances(op: str, rtol: object, atol: object) -> tuple[float, float]:
    r, a = real_arg(op, "rtol", rtol), real_arg(op, "atol", atol)
    for name, value in (("rtol", r), ("atol", a)):
        if not value >= 0:
            raise ArgumentValueError(f"{op}: argument '{name}' must be greater than or equal to zero, got {value}")
    return r, a


@structured_op("isclose", inplace=False)
def isclose(
    self: TensorMeta, other: TensorMeta, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> TensorSpec:
    """Whether each element of ``self`` is close to ``other``'s (``torch.isclose``; values as ``np.isclose``):
    ``|self - other| <= atol + rtol * |other|`` (not symmetric, as both define it), an infinity close only to
    the same infinity, NaN close to NaN only with ``equal_nan``. Computed in ``other``'s floating type (integers
    and bools as float64, NumPy's); the dtypes need not be equal (PyTorch requires it; NumPy promotes).

    Shapes: ``self`` and ``other`` broadcast. Result: bool, the broadcast shape, on the tensors' device.
    Variants: functional ``isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)`` / ``a.isclose(b)`` and out.

    Raises:
        ArgumentTypeError (TypeError): ``rtol``/``atol`` not real numbers; ``equal_nan`` not a bool.
        ArgumentValueError (ValueError): a negative (or NaN) ``rtol`` or ``atol``.
        ShapeError (ValueError): shapes that do not broadcast.
    """
    _tolerances("isclose", rtol, atol)
    return broadcast_shapes("isclose", self.shape, other.shape), dtypes.bool_


@_ks.isclose.xp
def _isclose(xp: ModuleType, self: D, other: D, rtol: float, atol: float, equal_nan: bool, *, out: ConstOut[D]) -> None:
    with quiet(xp):  # (inf - inf: NumPy's isclose warns of nothing)
        xp.copyto(out.array, xp.isclose(self._array, other._array, float(rtol), float(atol), equal_nan))


def allclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``self`` is close to ``other``'s (``torch.allclose``; values as ``np.allclose``):
    :func:`isclose` reduced by ``all``, a Python bool (reading a CUDA result waits for it). Also
    ``Tensor.allclose``.

    Raises:
        as :func:`isclose`.
    """
    close: Any = isclose.functional(self, other, rtol, atol, equal_nan)
    return bool(close.all())
