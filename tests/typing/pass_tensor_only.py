"""Correct code around the ops whose schema takes tensors only: two tensors (or NumPy arrays) there, a number where
the schema takes one (``other`` of the comparisons, ``fmod``, ``copysign``), and the operators with numbers."""

from __future__ import annotations

import numpy as np

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import CPUTensor


def tensors(t: Tensor, u: Tensor, c: CPUTensor) -> None:
    r: Tensor = dt.maximum(t, u)
    r = dt.minimum(t, np.ones(3))
    r = dt.atan2(t, u)
    r = dt.logical_and(t, u)
    r = dt.gt(t, 1)
    r = dt.fmod(t, 2.0)
    r = dt.copysign(t, -1.0)
    r = t.maximum(u)
    r = t.maximum_(u)
    r = dt.max(t, other=u)
    r = dt.max(t, u)
    r = t < 2
    r = 2 + t
    r = dt.maximum(t, dt.tensor(1.0))
    k: CPUTensor = dt.cpu.maximum(c, c)
    k = dt.cpu.gt(c, 1)
    print(r, k)
