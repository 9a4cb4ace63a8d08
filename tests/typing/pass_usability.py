"""Must type-check: correct user code that the annotations once rejected (lists for dims, ``size`` by overload,
``item`` as a real number, ``to``/``cpu`` keeping the refined type, Literal options)."""

from __future__ import annotations

import math
from typing import assert_type

import numpy as np

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import CPUTensor, CUDATensor, MetaTensor


def dims_as_lists(x: Tensor) -> None:
    assert_type(dt.sum(x, [0, 1]), Tensor)
    dt.mean(x, [0], keepdim=True)
    dt.amax(x, (0, 1))
    dt.var(x, [1], correction=0)
    x.sum([0, 1])
    x.logsumexp([-1])


def sizes(x: Tensor) -> None:
    assert_type(x.size(), tuple[int, ...])
    assert_type(x.size(0), int)
    assert_type(x.size(dim=-1), int)
    doubled: int = x.size(0) * 2
    rows, cols = x.size()
    print(doubled, rows, cols)
    count: int = x.size  # NumPy's and the array API's attribute, an int
    assert_type(x.size == 0, bool)
    print(count + 1, range(x.size))


def numpy_keyword_names(x: Tensor) -> None:
    assert_type(x.sum(axis=0, keepdims=True, dtype=np.float32), Tensor)
    assert_type(dt.mean(x, axis=(0, 1)), Tensor)
    assert_type(x.var(axis=[0], ddof=0), Tensor)
    assert_type(dt.argmax(x, axis=1, keepdims=True), Tensor)
    assert_type(dt.cat([x, x], axis=1), Tensor)
    assert_type(x.ravel(), Tensor)


def items(x: Tensor) -> None:
    root: float = math.sqrt(x.item())
    assert_type(x.item(), bool | int | float)
    z: complex = complex(x.item())
    print(root, float(x.item()) + 1.0, z, int(x.item()) // 2)


def refined_conversions(c: CPUTensor, g: CUDATensor, t: Tensor) -> None:
    assert_type(c.to(dt.float32), CPUTensor)
    assert_type(c.to(np.float64), CPUTensor)
    assert_type(c.to(dtype=dt.int64), CPUTensor)
    assert_type(c.to(None, dt.int64, copy=True), CPUTensor)
    assert_type(g.to(dt.float16), CUDATensor)
    assert_type(c.cpu(), CPUTensor)
    assert_type(g.cpu(), CPUTensor)
    assert_type(t.cpu(), CPUTensor)
    assert_type(t.cuda(), CUDATensor)
    assert_type(c.cuda(1), CUDATensor)
    assert_type(t.to("cpu"), CPUTensor)
    assert_type(t.to("cuda", dt.float32), CUDATensor)
    assert_type(t.to("meta"), MetaTensor)
    assert_type(t.to(dt.float32), Tensor)
    assert_type(t.to("cuda:1"), Tensor)
    assert_type(t.to(dt.Device("cpu")), Tensor)
    c.to(dt.float32).array.sum()


def options(x: Tensor, y: Tensor) -> None:
    dt.div(x, y, rounding_mode="trunc")
    x.div_(y, rounding_mode="floor")
    dt.div(x, 2, rounding_mode=None)
