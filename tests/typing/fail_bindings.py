"""Each marked line must fail with the marked mypy error code: device bindings take refined tensors only."""

from __future__ import annotations

import numpy as np

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import CPUTensor, CUDATensor


def unproven(t: Tensor, c: CPUTensor, g: CUDATensor) -> None:
    dt.cpu.add(t, c)  # E: arg-type
    dt.cpu.add(g, g)  # E: arg-type
    dt.cpu.add(c, g)  # E: arg-type
    dt.cuda.mul(g, c)  # E: arg-type
    dt.cpu.exp(c, out=g)  # E: arg-type


def generic_array(t: Tensor) -> None:
    print(t.array)  # E: attr-defined


def variants(c: CPUTensor, t: Tensor) -> None:
    dt.add(c, t, alhpa=2)  # E: call-arg
    dt.add(c, t, out=np.empty(3))  # E: arg-type
    c.sum(dimm=0)  # E: call-overload
