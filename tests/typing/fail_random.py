"""Each marked line must fail with the marked mypy error code: the random API's argument types."""

from __future__ import annotations

import numpy as np

import devtensor as dt
from devtensor import Tensor


def wrong(x: Tensor) -> None:
    dt.rand(3, generator=np.random.default_rng(0))  # E: arg-type
    x.uniform_(generator=0)  # E: arg-type
    dt.randint(1.5, 5, (2,))  # E: call-overload
    dt.multinomial(x, 2, out=np.zeros(2))  # E: arg-type
    x.uniform(0.0, 1.0)  # E: attr-defined
    dt.random(x)  # E: operator
