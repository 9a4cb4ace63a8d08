"""The Python operators of Tensor (``a + b``, ``a += b``, ``a == b``, ``-a``, ...), bound to the elementwise ops'
functional and inplace variants, as PyTorch's: ``a // b`` is ``div(a, b, rounding_mode="floor")``; reflected
operators (``2 - a``) swap the operands. ``& | ^ << >> ~`` are the bitwise ops, unary ``+`` is ``positive``,
``a @ b`` is ``matmul(a, b)`` and ``a @= b`` is ``matmul(a, b, out=a)`` (NumPy's rule: ``a`` is never resized, so a
product of another shape is a ShapeError, and a dtype that does not cast same_kind a CastingError).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from devtensor.kernels.bitwise import (
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    positive,
)
from devtensor.kernels.elementwise import abs, add, div, eq, ge, gt, le, lt, mul, ne, neg, pow, remainder, sub
from devtensor.kernels.linalg import matmul
from devtensor.structured.core import reflected
from devtensor.tensor import Tensor

__all__: list[str] = []


def _reflected(fn: Callable[..., Tensor], **kwargs: Any) -> Callable[[Tensor, Any], Tensor]:
    if not kwargs:  # (the common case without building a keyword dict per call)
        compiled = reflected(fn)  # (the compiled core's lane, operands swapped, where fn has one)
        if compiled is not None:
            return compiled

        def swapped(self: Tensor, other: Any) -> Tensor:
            return fn(other, self)

        return swapped

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


def _imatmul(self: Tensor, other: Any) -> Tensor:
    # The product into self: out is an input, so it is never resized (ShapeError), as NumPy's ``a @= b``.
    return matmul.functional(self, other, out=self)


def _bind_operators() -> None:
    assert add.inplace and sub.inplace and mul.inplace and div.inplace and remainder.inplace and pow.inplace
    bitwise = {"and": bitwise_and, "or": bitwise_or, "xor": bitwise_xor}
    bitwise |= {"lshift": bitwise_left_shift, "rshift": bitwise_right_shift}
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
        "__matmul__": matmul.functional,
        "__rmatmul__": _reflected(matmul.functional),
        "__imatmul__": _imatmul,
        "__invert__": bitwise_not.functional,
        "__pos__": positive.functional,
    }
    for short, op in bitwise.items():
        assert op.inplace is not None
        table[f"__{short}__"] = op.functional
        table[f"__r{short}__"] = _reflected(op.functional)
        table[f"__i{short}__"] = op.inplace
    for name, fn in table.items():
        setattr(Tensor, name, fn)


_bind_operators()
