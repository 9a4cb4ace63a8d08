"""Each marked line must fail with the marked mypy error code: a Python number where PyTorch's schema takes a tensor
(``maximum``, ``minimum``, ``atan2``, ``hypot``, ``nextafter``, ``logaddexp``, ``logical_*``, binary ``max``/``min``;
the comparisons, ``fmod`` and ``copysign`` as ``self``) is refused at run time, and so by the declarations."""

from __future__ import annotations

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import CPUTensor


def functionals(t: Tensor) -> None:
    dt.maximum(t, 1)  # E: arg-type
    dt.minimum(0.5, t)  # E: arg-type
    dt.atan2(t, 2.0)  # E: arg-type
    dt.hypot(t, 3)  # E: arg-type
    dt.nextafter(t, 1.0)  # E: arg-type
    dt.logaddexp(t, 0.0)  # E: arg-type
    dt.logical_and(t, True)  # E: arg-type
    dt.logical_or(t, 1)  # E: arg-type
    dt.logical_xor(False, t)  # E: arg-type
    dt.gt(1, t)  # E: arg-type
    dt.eq(1.0, t)  # E: arg-type
    dt.fmod(2.0, t)  # E: arg-type
    dt.copysign(1.0, t)  # E: arg-type


def inplace_and_methods(t: Tensor) -> None:
    dt.maximum_(t, 1)  # E: arg-type
    t.maximum_(1)  # E: arg-type
    t.atan2_(2.0)  # E: arg-type
    t.maximum(1)  # E: call-overload
    t.logical_and(True)  # E: call-overload


def binary_max_min(t: Tensor) -> None:
    dt.max(t, other=4)  # E: call-overload
    t.min(other=1.5)  # E: call-overload


def bindings(c: CPUTensor) -> None:
    dt.cpu.maximum(c, 1)  # E: arg-type
    dt.cpu.gt(1, c)  # E: arg-type
