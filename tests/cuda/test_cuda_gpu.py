"""The CUDA paths on a real GPU with CuPy: the value checks of ``tests/test_cuda_logic.py`` against real CuPy.

Every test is marked ``cuda``; ``tests/conftest.py`` skips them where no GPU (or no CuPy) is present, and this
module imports CuPy only inside its tests, so it is collected everywhere. Tests that need two GPUs skip on one.
"""

from __future__ import annotations

import pickle
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from cuda_cases import CASES, Case, assert_same, run_variants

import devtensor as dt
from devtensor.device import Device
from devtensor.dispatcher import DispatchKey
from devtensor.errors import DeviceMismatchError, MemoryOverlapError
from devtensor.tensor import Tensor
from devtensor.typed import CUDATensor, as_cuda

pytestmark = pytest.mark.cuda

#: GPU transcendental functions may differ from NumPy's by an ulp or two (float64 cases only).
RTOL = 1e-12


@pytest.fixture
def cp() -> ModuleType:
    """The real ``cupy`` module."""
    module: ModuleType = pytest.importorskip("cupy")
    return module


@pytest.fixture
def two_gpus(cp: ModuleType) -> None:
    if int(cp.cuda.runtime.getDeviceCount()) < 2:
        pytest.skip("needs two CUDA devices")


def _host(t: Tensor) -> np.ndarray[Any, Any]:
    return np.array(t.cpu().numpy(), copy=True)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cuda_impl_matches_cpu_impl(cp: ModuleType, case: Case) -> None:
    want = run_variants(case, "cpu")
    got = run_variants(case, "cuda:0")
    assert_same(got, want, rtol=RTOL)


def test_cuda_tensor_holds_a_cupy_array_on_its_device(cp: ModuleType) -> None:
    t = dt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dt.float32, device="cuda:0")
    assert type(t) is CUDATensor and t.device.key is DispatchKey.CUDA
    array = as_cuda(t).array
    assert isinstance(array, cp.ndarray) and array.device.id == 0 and array.dtype == np.float32
    np.testing.assert_array_equal(cp.asnumpy(array), [[1.0, 2.0], [3.0, 4.0]])
    for made in (dt.zeros(3, device="cuda:0"), dt.arange(4, device="cuda:0"), dt.full((2,), 1.5, device="cuda:0")):
        assert isinstance(as_cuda(made).array, cp.ndarray) and made.device is Device("cuda:0")


def test_copies_between_host_and_device(cp: ModuleType) -> None:
    src = dt.tensor([1.0, 2.0, 3.0])
    gpu = src.cuda(0)
    assert gpu.device is Device("cuda:0") and gpu.version == 0
    back = gpu.cpu()
    back.numpy()[0] = -1.0
    np.testing.assert_array_equal(_host(gpu), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(src.numpy(), [1.0, 2.0, 3.0])
    assert gpu.to("cuda:0") is gpu and gpu.to(dt.float32).device is Device("cuda:0")
    view = dt.tensor(np.arange(12.0).reshape(3, 4), device="cuda:0")[:, ::2]
    np.testing.assert_array_equal(_host(view.to(dt.float32)), np.arange(12.0).reshape(3, 4)[:, ::2])


def test_implicit_host_conversion_raises(cp: ModuleType) -> None:
    t = dt.tensor([1.0], device="cuda:0")
    for convert in (np.asarray, lambda x: x.numpy()):
        with pytest.raises(TypeError, match=r"\.cpu\(\)"):
            convert(t)


def test_cupy_arrays_in_and_out(cp: ModuleType) -> None:
    raw = cp.arange(4.0)
    wrapped = dt.asarray(raw)
    assert as_cuda(wrapped).array is raw and wrapped.device is Device("cuda:0")
    shared = dt.from_dlpack(wrapped)
    assert as_cuda(shared).array.data.ptr == raw.data.ptr
    back = cp.from_dlpack(wrapped)
    assert back.data.ptr == raw.data.ptr
    t = pickle.loads(pickle.dumps(dt.tensor([1.5], device="cuda:0")))
    assert t.device is Device("cuda:0") and t.item() == 1.5


def test_overlap_checks_on_the_gpu(cp: ModuleType) -> None:
    x = dt.zeros(8, device="cuda:0")
    dt.add(x[::2], 1.0, out=x[1::2])
    np.testing.assert_array_equal(_host(x), [0.0, 1.0] * 4)
    with pytest.raises(MemoryOverlapError):
        dt.add(x[:-1], 1.0, out=x[1:])


def test_mixed_cpu_and_cuda_raise(cp: ModuleType) -> None:
    with pytest.raises(DeviceMismatchError, match=r"add:.*cpu.*cuda:0"):
        dt.add(dt.tensor([1.0]), dt.tensor([1.0], device="cuda:0"))


@pytest.mark.usefixtures("two_gpus")
def test_guard_runs_kernels_on_the_tensors_device(cp: ModuleType) -> None:
    a = dt.tensor([1.0, 2.0], device="cuda:1")
    with cp.cuda.Device(0):
        r = dt.mul(a, a)
        assert int(cp.cuda.runtime.getDevice()) == 0
    assert r.device is Device("cuda:1") and as_cuda(r).array.device.id == 1
    np.testing.assert_array_equal(_host(r), [1.0, 4.0])
    out = dt.empty(2, device="cuda:1")
    dt.add(a, 1.0, out=out)
    a.neg_()
    np.testing.assert_array_equal(_host(out), [2.0, 3.0])
    np.testing.assert_array_equal(_host(a), [-1.0, -2.0])


@pytest.mark.usefixtures("two_gpus")
def test_copies_and_errors_across_two_gpus(cp: ModuleType) -> None:
    src = dt.tensor(np.arange(12.0).reshape(3, 4), device="cuda:1")
    moved = src[:, ::2].to("cuda:0")
    assert moved.device is Device("cuda:0") and as_cuda(moved).array.device.id == 0
    np.testing.assert_array_equal(_host(moved), np.arange(12.0).reshape(3, 4)[:, ::2])
    with pytest.raises(DeviceMismatchError, match=r"add:.*cuda:1.*cuda:0"):
        dt.add(src, dt.zeros(3, 4, device="cuda:0"))
    t = dt.zeros(3, device="cuda:1")
    t[1] = 5.0
    np.testing.assert_array_equal(_host(t[dt.tensor([1, 0], device="cuda:1")]), [5.0, 0.0])
