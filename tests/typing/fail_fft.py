"""Each marked line must fail with the marked mypy error code: devtensor.fft's argument types."""

from __future__ import annotations

import numpy as np

import devtensor as dt
import devtensor.array_api.fft as xfft
from devtensor import Tensor


def wrong(x: Tensor) -> None:
    dt.fft.fft(x, norm="backwards")  # E: arg-type
    dt.fft.fft(x, out=np.zeros(4))  # E: arg-type
    dt.fft.fftn(x, axes=(0,))  # E: call-arg
    dt.fft.rfft(np.zeros(4))  # E: arg-type
    xfft.fft(x, 4)  # E: call-arg
    dt.fft_fft(x)  # E: attr-defined
