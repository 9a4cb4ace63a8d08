"""Each marked line must fail with the marked mypy error code: string options are Literal types; NumPy's keyword
names (axis, keepdims, ddof) are typed as the parameters they stand for."""

from __future__ import annotations

import devtensor as dt
from devtensor import Tensor
from devtensor.typed import CPUTensor


def rounding(x: Tensor, y: Tensor, c: CPUTensor, mode: str) -> None:
    dt.div(x, y, rounding_mode="round")  # E: arg-type
    x.div(y, rounding_mode="ceil")  # E: call-overload
    x.div_(y, rounding_mode="Floor")  # E: arg-type
    dt.div_(x, y, rounding_mode="")  # E: arg-type
    dt.cpu.div(c, 2, rounding_mode="round")  # E: arg-type
    dt.div(x, y, rounding_mode=mode)  # E: arg-type
    dt.div(x, y, rounding_mode="trunc")
    dt.div(x, y, rounding_mode="floor")
    dt.div(x, y, rounding_mode=None)


def numpy_keyword_names(x: Tensor) -> None:
    x.sum(axis="0")  # E: call-overload
    dt.var(x, ddof="1")  # E: arg-type
    x.mean(keepdims=1.5)  # E: call-overload
    x.cumsum(axis=0)  # E: call-overload
