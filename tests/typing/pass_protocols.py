"""Must type-check: the operators and array API attributes of issue 10 (``@``, ``& | ^ ~ << >>``, unary ``+``,
``.T``, ``.mT``, ``astype``, ``to_device``, ``round``, ``format``) with the result types users rely on."""

from __future__ import annotations

import weakref
from typing import assert_type

import numpy as np

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import CPUTensor


def matmul_operators(a: Tensor, b: CPUTensor) -> None:
    assert_type(a @ a, Tensor)
    assert_type(b @ b, CPUTensor)
    b @= b
    assert_type(b, CPUTensor)


def bitwise_operators(a: Tensor, b: CPUTensor) -> None:
    assert_type(a & a, Tensor)
    assert_type(a | 1, Tensor)
    assert_type(1 ^ a, Tensor)
    assert_type(a << 2, Tensor)
    assert_type(3 >> a, Tensor)
    assert_type(~a, Tensor)
    assert_type(+a, Tensor)
    b &= 1
    b |= b
    b ^= True
    b <<= 1
    b >>= 1
    assert_type(b, CPUTensor)


def attributes(a: Tensor, b: CPUTensor) -> None:
    assert_type(a.T, Tensor)
    assert_type(a.mT, Tensor)
    assert_type(b.astype(dt.float32), CPUTensor)
    assert_type(a.astype(np.int64, copy=False), Tensor)
    assert_type(a.to_device("cpu"), Tensor)
    assert_type(round(a), Tensor)
    assert_type(round(a, 2), Tensor)
    assert_type(dt.round(a, decimals=1), Tensor)
    assert_type(f"{a:.2f}", str)
    ref: weakref.ref[Tensor] = weakref.ref(a)
    print(ref)


def view_dtype_and_flags(t: Tensor) -> None:
    # PyTorch's view(dtype), every dtype spelling; the shape forms unchanged
    assert_type(t.view(float), Tensor)
    assert_type(t.view(dt.int32), Tensor)
    assert_type(t.view(np.uint8), Tensor)
    assert_type(t.view("f4"), Tensor)
    assert_type(t.view(2, 3), Tensor)
    assert_type(t.view((6,)), Tensor)
    assert_type(dt.view(t, dt.float32), Tensor)
    # NumPy's live flags: writeable settable, the layout read
    flags = t.flags
    flags.writeable = False
    assert_type(flags.c_contiguous, bool)
    assert_type(t.flags["WRITEABLE"], bool)
    t.flags["W"] = True
