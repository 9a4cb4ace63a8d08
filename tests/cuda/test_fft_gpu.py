"""``devtensor.fft`` on a real GPU with CuPy (marked ``cuda``; skipped where no GPU or CuPy is present): every
transform and shift runs ``cupy.fft`` and agrees with ``numpy.fft`` on the CPU, in the input's precision. The
stand-in (tests/fake_cupy.py) checks the same paths everywhere; this checks that real CuPy's ``cupy.fft`` takes the
arguments the kernels pass (``n``/``axis``, ``s``/``axes``, ``norm`` by name, strided inputs)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import devtensor as dt

pytestmark = pytest.mark.cuda


@pytest.fixture
def cp() -> ModuleType:
    """The real ``cupy`` module."""
    module: ModuleType = pytest.importorskip("cupy")
    return module


def host(t: dt.Tensor) -> np.ndarray[Any, Any]:
    return np.array(t.cpu().numpy(), copy=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int32])
@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
def test_transforms_agree_with_numpy(cp: ModuleType, dtype: Any, norm: str | None) -> None:
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((4, 6, 8)) * 10).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * a[::-1]
    single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
    tol = 1e-4 if single else 1e-10
    x = dt.tensor(a, device="cuda")
    strided = dt.tensor(np.repeat(a, 2, axis=-1), device="cuda")[..., ::2]
    for name, kwargs, np_kwargs in (
        ("fft", {"n": 10, "dim": 1}, {"n": 10, "axis": 1}),
        ("ifft", {}, {}),
        ("fftn", {"s": (3, 5), "dim": (0, 2)}, {"s": (3, 5), "axes": (0, 2)}),
        ("ifftn", {}, {}),
        ("irfft", {"dim": 0}, {"axis": 0}),
        ("hfft", {"n": 9}, {"n": 9}),
        ("irfftn", {"dim": (1, 2)}, {"axes": (1, 2)}),
        ("rfft", {}, {}),
        ("ihfft", {"dim": 1}, {"axis": 1}),
        ("rfftn", {"s": (4, 4)}, {"s": (4, 4), "axes": (1, 2)}),
    ):
        if name in ("rfft", "ihfft", "rfftn") and np.dtype(dtype).kind == "c":
            continue
        want = getattr(np.fft, name)(a, norm=norm, **np_kwargs)
        for operand in (x, strided):
            got = getattr(dt.fft, name)(operand, norm=norm, **kwargs)
            assert got.device == x.device
            assert got.dtype == want.dtype, name  # NumPy 2 keeps single precision too
            scale = max(1.0, float(np.abs(want).max()))
            np.testing.assert_allclose(host(got), want, rtol=tol, atol=tol * scale, err_msg=name)


def test_shifts_frequencies_and_out(cp: ModuleType) -> None:
    a = np.arange(30.0).reshape(5, 6)
    x = dt.tensor(a, device="cuda")
    np.testing.assert_array_equal(host(dt.fft.fftshift(x)), np.fft.fftshift(a))
    np.testing.assert_array_equal(host(dt.fft.ifftshift(x, dim=1)), np.fft.ifftshift(a, axes=1))
    np.testing.assert_array_equal(host(dt.fft.fftfreq(7, 0.5, device="cuda")), np.fft.fftfreq(7, 0.5))
    out = dt.empty(5, 4, dtype=dt.complex128, device="cuda")
    assert dt.fft.rfft(x, out=out) is out
    np.testing.assert_allclose(host(out), np.fft.rfft(a), atol=1e-10)


def test_second_device(cp: ModuleType) -> None:
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    a = np.arange(16.0)
    x = dt.tensor(a, device="cuda:1")
    got = dt.fft.fft(x)
    assert got.device == x.device
    np.testing.assert_allclose(host(got), np.fft.fft(a), atol=1e-10)
