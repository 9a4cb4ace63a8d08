"""Must type-check: devtensor.fft (torch.fft's signatures, out=, the factories) and the Array API extension."""

from __future__ import annotations

from typing import assert_type

import devtensor as dt
import devtensor.array_api.fft as xfft
from devtensor import Tensor


def transforms(x: Tensor, o: Tensor) -> None:
    assert_type(dt.fft.fft(x), Tensor)
    assert_type(dt.fft.ifft(x, 8, 0, "ortho", out=o), Tensor)
    assert_type(dt.fft.rfft(x, n=4, dim=-1, norm="forward"), Tensor)
    assert_type(dt.fft.irfft(x, norm=None), Tensor)
    assert_type(dt.fft.hfft(x), Tensor)
    assert_type(dt.fft.ihfft(x), Tensor)
    assert_type(dt.fft.fftn(x, s=(4, 4), dim=(0, 1)), Tensor)
    assert_type(dt.fft.ifftn(x, 4, 0), Tensor)
    assert_type(dt.fft.rfftn(x, dim=[0]), Tensor)
    assert_type(dt.fft.irfftn(x, out=o), Tensor)
    assert_type(dt.fft.fftshift(x, dim=(0,)), Tensor)
    assert_type(dt.fft.ifftshift(x, 1, out=o), Tensor)
    assert_type(dt.fft.fftfreq(8, 0.5, dtype=dt.float32, device="cpu"), Tensor)
    assert_type(dt.fft.rfftfreq(8, out=o), Tensor)


def array_api(x: Tensor) -> None:
    assert_type(xfft.fft(x, n=4, axis=0, norm="ortho"), Tensor)
    assert_type(xfft.irfftn(x, s=[4, 4], axes=[0, 1]), Tensor)
    assert_type(xfft.fftfreq(4, d=2.0, dtype=dt.float64, device="cpu"), Tensor)
    assert_type(xfft.fftshift(x, axes=[0]), Tensor)
