"""The Python operators of Tensor (``a + b``, ``a += b``, ``a == b``, ``-a``, ...), bound to the elementwise ops'
functional and inplace variants, as PyTorch's: ``a // b`` is ``div(a, b, rounding_mode="floor")``; reflected
operators (``2 - a``) swap the operands.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from devtensor.kernels.elementwise import abs, add, div, eq, ge, gt, le, lt, mul, ne, neg, pow, remainder, sub
from devtensor.tensor import Tensor

__all__: list[str] = []


def _reflected(fn: Callable[..., Tensor], **kwargs: Any) -> Callable[[Tensor, Any], Tensor]:
    def op(self: Tensor, other: Any) -> Tensor:
        return fn(other, self, **kwargs)

    return op


def _with(fn: Callable[..., Tensor], **kwargs: Any) -> Callable[[Tensor, Any], Tensor]:
    def op(self: Tensor, other: Any) -> Tensor:
        return fn(self, other, **kwargs)

    return op


def _comparison(fn: Callable[..., Tensor]) -> Callable[[Tensor, Any], Any]:
    # ``t == None`` and other non-numeric objects fall back to Python's identity comparison, as for any object;
    # numbers and arrays that are not accepted operands (NumPy scalars and arrays) raise, as ``t < x`` does,
    # rather than silently compare by identity.
    def op(self: Tensor, other: Any) -> Any:
        if isinstance(other, (Tensor, numbers.Number, np.generic, np.ndarray)):
            return fn(self, other)
        return NotImplemented

    return op


def _inplace_with(fn: Callable[..., Tensor], **kwargs: Any) -> Callable[[Tensor, Any], Tensor]:
    def op(self: Tensor, other: Any) -> Tensor:
        return fn(self, other, **kwargs)

    return op


def _bind_operators() -> None:
    assert add.inplace and sub.inplace and mul.inplace and div.inplace and remainder.inplace and pow.inplace
    table: dict[str, Any] = {
        "__add__": add.functional,
        "__radd__": _reflected(add.functional),
        "__iadd__": add.inplace,
        "__sub__": sub.functional,
        "__rsub__": _reflected(sub.functional),
        "__isub__": sub.inplace,
        "__mul__": mul.functional,
        "__rmul__": _reflected(mul.functional),
        "__imul__": mul.inplace,
        "__truediv__": div.functional,
        "__rtruediv__": _reflected(div.functional),
        "__itruediv__": div.inplace,
        "__floordiv__": _with(div.functional, rounding_mode="floor"),
        "__rfloordiv__": _reflected(div.functional, rounding_mode="floor"),
        "__ifloordiv__": _inplace_with(div.inplace, rounding_mode="floor"),
        "__mod__": remainder.functional,
        "__rmod__": _reflected(remainder.functional),
        "__imod__": remainder.inplace,
        "__pow__": pow.functional,
        "__rpow__": _reflected(pow.functional),
        "__ipow__": pow.inplace,
        "__neg__": neg.functional,
        "__abs__": abs.functional,
        "__eq__": _comparison(eq.functional),
        "__ne__": _comparison(ne.functional),
        "__lt__": lt.functional,
        "__le__": le.functional,
        "__gt__": gt.functional,
        "__ge__": ge.functional,
    }
    for name, fn in table.items():
        setattr(Tensor, name, fn)


_bind_operators()
