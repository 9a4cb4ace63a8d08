"""The CUDA logic on every machine, through the NumPy-backed CuPy stand-in (``tests/fake_cupy.py``).

Dispatch keys, the device guard (asserted through the stand-in's log of current devices), mixed-device and
missing-kernel errors, refinement, copies between devices, and every elementwise op's CUDA impl against its
CPU impl. Tensors live on ``cuda:1`` while device 0 is current unless a test says otherwise: the stand-in
refuses kernels on arrays of a device that is not current (as CuPy without peer access does), so a missing
device guard fails here instead of passing silently.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable, Iterator
from typing import Any

import fake_cupy as fc
import numpy as np
import pytest
from cuda_cases import CASES, Case, assert_same, run_variants

import devtensor as dt
from devtensor import library, structured
from devtensor.backends import cupy_module
from devtensor.device import Device
from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError, DeviceMismatchError, MemoryOverlapError, NoKernelError
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import Tensor
from devtensor.typed import ConstOut, CPUTensor, CUDATensor, as_cpu, as_cuda, is_cpu, is_cuda

pytestmark = pytest.mark.usefixtures("fake_cupy")

CUDA0 = Device("cuda:0")
CUDA1 = Device("cuda:1")


def _host(t: Tensor) -> np.ndarray[Any, Any]:
    return np.array(t.cpu().numpy(), copy=True)


def _cuda_array(t: Tensor) -> fc.ndarray:
    """The stand-in array behind a CUDA tensor (typed ``cupy.ndarray`` by the stubs)."""
    array: object = as_cuda(t).array
    assert isinstance(array, fc.ndarray)
    return array


# --- the stand-in is what devtensor sees ---------------------------------------------------------------------


def test_cupy_module_is_the_stand_in() -> None:
    assert cupy_module() is fc
    assert sys.modules["cupy"] is fc


def test_cupy_module_without_cupy_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # ``None`` in sys.modules makes ``import cupy`` fail as it does where CuPy is not installed.
    monkeypatch.setitem(sys.modules, "cupy", None)
    # What works: CuPy's own package, or the extra from a clone (no index serves devtensor[cuda]).
    hint = r"pip install cupy-cuda12x.*from a devtensor clone `pip install -e \"\.\[cuda\]\"`"
    with pytest.raises(RuntimeError, match=rf"CuPy.*not installed.*{hint}"):
        cupy_module()
    with pytest.raises(RuntimeError, match=hint):
        dt.zeros(2, device="cuda:0")
    with pytest.raises(RuntimeError, match=hint) as info:
        dt.tensor([1.0]).cuda(0)
    assert "devtensor[cuda]" not in str(info.value)


def test_the_stand_in_models_cupys_device_rules() -> None:
    with fc.cuda.Device(1) as dev:
        assert dev.id == 1 and fc.cuda.runtime.getDevice() == 1
        a = fc.arange(6.0)
        with fc.cuda.Device(0):
            assert fc.cuda.runtime.getDevice() == 0
        assert fc.cuda.runtime.getDevice() == 1
    assert fc.state.current == 0 and fc.state.entered == [1, 0]
    assert a.device == fc.cuda.Device(1) and a[1:].device.id == 1 and a[::-1].device.id == 1
    assert a[2].ndim == 0 and a[1:].data.ptr == a.data.ptr + 8
    assert not hasattr(a.flags, "writeable") and a.flags.c_contiguous
    with pytest.raises(ValueError, match=r"resides \(1\).*current device \(0\)"):
        fc.add(a, 1)
    with pytest.raises(ValueError, match="current device"):
        a.fill(0)
    with fc.cuda.Device(1):
        with pytest.raises(TypeError, match="Unsupported type"):
            fc.add(a, np.ones(6))
        assert fc.add(a, 1).device.id == 1
    moved = fc.array(a)  # to the current device, 0
    assert moved.device.id == 0 and moved.data.ptr != a.data.ptr
    with pytest.raises(NotImplementedError, match="non-contiguous"):
        fc.array(a[::2])
    assert fc.array(a[::2], order="C").device.id == 0
    with pytest.raises(fc.cuda.runtime.CUDARuntimeError, match="invalid device ordinal"):
        fc.cuda.Device(2).use()


# --- dispatch keys and placement -----------------------------------------------------------------------------


def test_cuda_tensors_dispatch_to_the_cuda_key() -> None:
    t = dt.tensor([1.0, 2.0], device="cuda:1")
    assert type(t) is CUDATensor
    assert t.device is CUDA1 and t.device.type == "cuda" and t.device.index == 1
    assert t.device.key is DispatchKey.CUDA
    assert Device("cuda:0").key is DispatchKey.CUDA and Device("cuda").key is DispatchKey.CUDA
    assert dt.tensor([1.0]).device.key is DispatchKey.CPU
    # Results of ops dispatch the same way.
    r = dt.add(t, 1.0)
    assert type(r) is CUDATensor and r.device is CUDA1


def test_tensor_lands_on_the_requested_device() -> None:
    t = dt.tensor([[1, 2], [3, 4]], dtype=dt.float32, device="cuda:1")
    array = _cuda_array(t)
    assert array.device.id == 1 and array.data.device_id == 1
    assert array.dtype == np.float32 and t.dtype == np.float32
    np.testing.assert_array_equal(_host(t), np.array([[1, 2], [3, 4]], np.float32))
    assert fc.state.entered == [1]
    assert {dev for _, dev in fc.state.calls} == {1}
    assert fc.state.current == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda: dt.zeros(2, 3, device="cuda:1"),
        lambda: dt.ones((2, 3), device="cuda:1"),
        lambda: dt.empty(2, device="cuda:1"),
        lambda: dt.full((2,), 7, device="cuda:1"),
        lambda: dt.arange(5, device="cuda:1"),
        lambda: dt.linspace(0, 1, 5, device="cuda:1"),
        lambda: dt.tensor([1.0, 2.0], device=1),
        lambda: dt.asarray(np.arange(3.0), device="cuda:1"),
        lambda: dt.zeros_like(dt.zeros(2), device="cuda:1"),
        lambda: dt.full_like(dt.zeros(2), 3.0, device="cuda:1"),
        lambda: dt.tensor([1.0]).to("cuda:1"),
    ],
    ids=[
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "linspace",
        "tensor-int",
        "asarray",
        "zeros_like",
        "full_like",
        "to",
    ],
)
def test_creation_allocates_under_the_guard_of_the_target_device(make: Callable[[], Tensor]) -> None:
    t = make()
    assert t.device is CUDA1 and _cuda_array(t).device.id == 1
    outside = [(name, dev) for name, dev in fc.state.calls if dev != 1]
    assert not outside, f"allocations or kernels outside cuda:1: {outside}"
    assert 1 in fc.state.entered and fc.state.current == 0


def test_like_functions_keep_the_cuda_device() -> None:
    src = dt.zeros(2, 3, dtype=dt.int32, device="cuda:1")
    for like in (dt.empty_like(src), dt.zeros_like(src), dt.ones_like(src), dt.full_like(src, 4)):
        assert like.device is CUDA1 and like.dtype == np.int32 and like.shape == (2, 3)
        assert _cuda_array(like).device.id == 1
    np.testing.assert_array_equal(_host(dt.full_like(src, 4)), np.full((2, 3), 4, np.int32))


def test_bare_cuda_means_the_current_device() -> None:
    fc.cuda.Device(1).use()
    assert dt.zeros(2, device="cuda").device is CUDA1
    assert dt.tensor([1.0]).cuda().device is CUDA1
    fc.cuda.Device(0).use()
    assert dt.zeros(2, device="cuda").device is CUDA0
    assert Device("cuda").resolved() is CUDA0


def test_a_device_that_does_not_exist_is_a_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        dt.zeros(2, device="cuda:5")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        dt.tensor([1.0]).cuda(5)
    assert fc.state.current == 0


# --- the device guard ----------------------------------------------------------------------------------------


def test_functional_kernel_and_allocation_run_on_the_tensors_device() -> None:
    a = dt.tensor([1.0, 2.0, 3.0], device="cuda:1")
    b = dt.tensor([4.0, 5.0, 6.0], device="cuda:1")
    fc.state.clear_log()
    r = dt.mul(a, b)
    assert fc.state.devices_of("empty") == [1]
    assert fc.state.devices_of("multiply") == [1]
    assert fc.state.entered == [1]
    assert fc.state.current == 0
    assert r.device is CUDA1 and _cuda_array(r).device.id == 1
    np.testing.assert_array_equal(_host(r), [4.0, 10.0, 18.0])


def test_guard_follows_the_tensors_not_the_current_device() -> None:
    a = dt.tensor([1.0, -2.0], device="cuda:0")
    with fc.cuda.Device(1):
        fc.state.clear_log()
        r = dt.neg(a)
        assert fc.state.current == 1
    assert fc.state.devices_of("negative") == [0] and fc.state.devices_of("empty") == [0]
    assert r.device is CUDA0
    np.testing.assert_array_equal(_host(r), [-1.0, 2.0])


def test_out_and_inplace_kernels_run_under_the_guard() -> None:
    a = dt.tensor([1.0, 2.0], device="cuda:1")
    out = dt.empty(2, device="cuda:1")
    fc.state.clear_log()
    dt.sub(a, 1.0, out=out)
    assert fc.state.devices_of("subtract") == [1] and fc.state.entered == [1]
    fc.state.clear_log()
    a.exp_()
    assert fc.state.devices_of("exp") == [1] and fc.state.entered == [1]
    fc.state.clear_log()
    a += out  # the inplace operator
    assert fc.state.devices_of("add") == [1]
    assert fc.state.current == 0
    np.testing.assert_allclose(_host(a), np.exp([1.0, 2.0]) + np.array([0.0, 1.0]))


def test_resized_out_is_allocated_under_the_guard() -> None:
    a = dt.tensor([1.0, 2.0, 3.0], device="cuda:1")
    out = dt.empty(0, device="cuda:1")
    fc.state.clear_log()
    dt.add(a, a, out=out)
    assert out.shape == (3,) and _cuda_array(out).device.id == 1
    assert fc.state.devices_of("empty") == [1]
    np.testing.assert_array_equal(_host(out), [2.0, 4.0, 6.0])


def test_the_guard_restores_the_current_device_when_a_kernel_raises() -> None:
    a = dt.tensor([2, 3], device="cuda:1")
    with pytest.raises(ValueError, match="negative integer powers"):
        dt.pow(a, dt.tensor([1, -1], device="cuda:1"))
    assert fc.state.current == 0 and fc.state.stack == []


def test_overlap_checks_are_exact_on_a_device_that_is_not_current() -> None:
    x = dt.zeros(8, device="cuda:1")
    fc.state.clear_log()
    dt.add(x[::2], 1.0, out=x[1::2])  # interleaved: no element shared
    assert fc.state.devices_of("shares_memory") == [1]
    np.testing.assert_array_equal(_host(x), [0.0, 1.0] * 4)
    before = _host(x)
    with pytest.raises(MemoryOverlapError, match="partial overlap"):
        dt.add(x[:-1], 1.0, out=x[1:])
    np.testing.assert_array_equal(_host(x), before)


# --- mixed devices -------------------------------------------------------------------------------------------


def _cpu(values: list[float]) -> Tensor:
    return dt.tensor(values)


def _on(device: str, values: list[float]) -> Tensor:
    return dt.tensor(values, device=device)


@pytest.mark.parametrize(
    ("call", "op", "devices"),
    [
        (lambda: dt.add(_cpu([1.0]), _on("cuda:0", [1.0])), "add", ["cpu", "cuda:0"]),
        (lambda: dt.add(_on("cuda:0", [1.0]), _on("cuda:1", [1.0])), "add", ["cuda:0", "cuda:1"]),
        (lambda: dt.mul(_on("cuda:1", [1.0]), _cpu([1.0])), "mul", ["cuda:1", "cpu"]),
        (lambda: _on("cuda:0", [1.0]) + _on("cuda:1", [1.0]), "add", ["cuda:0", "cuda:1"]),
        (lambda: _on("cuda:0", [1.0]).sub_(_on("cuda:1", [1.0])), "sub_", ["cuda:0", "cuda:1"]),
        (lambda: dt.clamp(_on("cuda:1", [1.0]), min=_on("cuda:0", [0.0])), "clamp", ["cuda:1", "cuda:0"]),
        (
            lambda: dt.where(dt.tensor([True]), _on("cuda:0", [1.0]), _on("cuda:0", [2.0])),
            "where",
            ["cpu", "cuda:0"],
        ),
        (lambda: dt.lt(_on("cuda:0", [1.0]), _on("cuda:1", [1.0])), "lt", ["cuda:0", "cuda:1"]),
    ],
    ids=["cpu-cuda0", "cuda0-cuda1", "cuda1-cpu", "operator", "inplace", "clamp-min", "where-condition", "lt"],
)
def test_mixed_devices_raise_naming_the_op_and_the_devices(
    call: Callable[[], Tensor], op: str, devices: list[str]
) -> None:
    with pytest.raises(DeviceMismatchError) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{op}:"), message
    for device in devices:
        assert device in message, message


@pytest.mark.parametrize(
    ("inputs", "out_device"),
    [("cuda:0", "cuda:1"), ("cpu", "cuda:0"), ("cuda:1", "cpu")],
)
def test_out_on_another_device_raises_and_changes_nothing(inputs: str, out_device: str) -> None:
    a, b = _on(inputs, [1.0, 2.0]), _on(inputs, [3.0, 4.0])
    out = dt.full((2,), 9.0, device=out_device)
    with pytest.raises(DeviceMismatchError) as info:
        dt.add(a, b, out=out)
    message = str(info.value)
    assert message.startswith("add:") and inputs in message and f"{out_device} (out)" in message
    assert out.version == 0 and out.device is Device(out_device)
    np.testing.assert_array_equal(_host(out), [9.0, 9.0])


def test_scalars_mix_with_cuda_tensors() -> None:
    t = dt.tensor([1.0, 2.0], device="cuda:1")
    np.testing.assert_array_equal(_host(2.0 * t + 1), [3.0, 5.0])
    np.testing.assert_array_equal(_host(dt.where(t > 1.5, t, 0.0)), [0.0, 2.0])


# --- refinement ----------------------------------------------------------------------------------------------


def test_refinement_of_cuda_tensors() -> None:
    t: Tensor = dt.tensor([1.0], device="cuda:1")
    assert not is_cpu(t)
    assert is_cuda(t)
    refined = as_cuda(t)
    assert refined is t and refined.index == 1 and _cuda_array(refined).device.id == 1
    assert as_cuda(t, "cuda:1") is t and as_cuda(t, 1) is t and as_cuda(t, CUDA1) is t
    assert CUDATensor.refine(t) is t and CUDATensor.refine(t, "cuda:1") is t
    with pytest.raises(DeviceMismatchError, match=r"as_cuda: expected a tensor on cuda:0, got one on cuda:1"):
        as_cuda(t, "cuda:0")
    with pytest.raises(DeviceMismatchError, match=r"cuda:0.*cuda:1"):
        CUDATensor.refine(t, 0)
    with pytest.raises(DeviceMismatchError, match="expected a tensor on cpu, got one on cuda:1"):
        as_cpu(t)
    with pytest.raises(DeviceMismatchError, match="expected a tensor on cpu"):
        CPUTensor.refine(t)


def test_refinement_of_other_tensors_to_cuda_fails() -> None:
    cpu = dt.tensor([1.0])
    meta = dt.zeros(2, device="meta")
    assert not is_cuda(cpu) and not is_cuda(meta)
    with pytest.raises(DeviceMismatchError, match="expected a tensor on cuda, got one on cpu"):
        as_cuda(cpu)
    with pytest.raises(DeviceMismatchError, match="expected a tensor on cuda:1, got one on meta"):
        CUDATensor.refine(meta, "cuda:1")
    with pytest.raises(ArgumentTypeError, match="expected a Tensor"):
        as_cuda([1.0])  # type: ignore[arg-type]


def test_bare_cuda_refinement_means_the_current_device() -> None:
    t = dt.tensor([1.0], device="cuda:1")
    with pytest.raises(DeviceMismatchError, match="cuda:0"):
        as_cuda(t, "cuda")
    with fc.cuda.Device(1):
        assert as_cuda(t, "cuda") is t


# --- values: each CUDA impl against its CPU impl, three variants ---------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cuda_impl_matches_cpu_impl(case: Case) -> None:
    want = run_variants(case, "cpu")
    fc.state.clear_log()
    got = run_variants(case, "cuda:1")
    assert_same(got, want, rtol=0)
    kernels = [(name, dev) for name, dev in fc.state.calls if dev != 1]
    assert not kernels, f"kernels launched outside cuda:1: {kernels}"


def test_every_elementwise_op_has_a_cuda_case() -> None:
    from devtensor.kernels import elementwise

    covered = {case.op for case in CASES}
    assert set(elementwise.__all__) <= covered, set(elementwise.__all__) - covered
    for name in elementwise.__all__:
        assert DispatchKey.CUDA in getattr(elementwise, name).table.kernels, name


def test_functional_results_on_cuda() -> None:
    a = dt.tensor([[1.0, 4.0]], device="cuda:1")
    np.testing.assert_array_equal(_host(dt.sqrt(a)), [[1.0, 2.0]])
    np.testing.assert_array_equal(_host(dt.div(a, 3, rounding_mode="floor")), [[0.0, 1.0]])


# --- copies between devices ----------------------------------------------------------------------------------


def test_cuda_copies_a_cpu_tensor() -> None:
    src = dt.tensor([1.0, 2.0, 3.0])
    copy = src.cuda(1)
    assert type(copy) is CUDATensor and copy.device is CUDA1 and copy.version == 0
    assert _cuda_array(copy).device.id == 1
    np.testing.assert_array_equal(_host(copy), [1.0, 2.0, 3.0])
    with fc.cuda.Device(1):
        _cuda_array(copy)[0] = 100.0
    np.testing.assert_array_equal(src.numpy(), [1.0, 2.0, 3.0])
    assert src.version == 0 and src.device.type == "cpu"
    assert src.cuda().device is CUDA0


def test_cpu_copies_a_cuda_tensor() -> None:
    src = dt.tensor([1.0, 2.0], device="cuda:1")
    host = src.cpu()
    assert type(host) is CPUTensor and host.version == 0
    host.numpy()[0] = -1.0
    np.testing.assert_array_equal(_host(src), [1.0, 2.0])
    assert src.device is CUDA1 and src.version == 0
    assert host.cpu() is host


def test_to_another_cuda_device_copies() -> None:
    src = dt.tensor([[1, 2, 3], [4, 5, 6]], dtype=dt.int32, device="cuda:1")
    moved = src.to("cuda:0")
    assert moved.device is CUDA0 and _cuda_array(moved).device.id == 0 and moved.dtype == np.int32
    assert _cuda_array(moved).data.ptr != _cuda_array(src).data.ptr
    with fc.cuda.Device(0):
        _cuda_array(moved)[...] = 0
    np.testing.assert_array_equal(_host(src), [[1, 2, 3], [4, 5, 6]])
    assert src.to("cuda:1") is src and src.to(CUDA1) is src
    again = src.to("cuda:1", copy=True)
    assert again is not src and _cuda_array(again).data.ptr != _cuda_array(src).data.ptr
    as_float = src.to(dt.float32)
    assert as_float.device is CUDA1 and as_float.dtype == np.float32
    both = src.to("cuda:0", dt.float64)
    assert both.device is CUDA0 and both.dtype == np.float64
    np.testing.assert_array_equal(_host(both), [[1, 2, 3], [4, 5, 6]])


def test_a_non_contiguous_view_moves_across_devices() -> None:
    src = dt.tensor(np.arange(12.0).reshape(3, 4), device="cuda:1")
    view = src[:, ::2]
    assert not view.is_contiguous()
    moved = view.to("cuda:0")
    assert moved.device is CUDA0 and moved.is_contiguous()
    np.testing.assert_array_equal(_host(moved), np.arange(12.0).reshape(3, 4)[:, ::2])
    np.testing.assert_array_equal(_host(view.cuda(0)), _host(moved))


def test_tensor_and_asarray_of_cuda_data() -> None:
    src = dt.tensor([1.0, 2.0], device="cuda:1")
    same_device = dt.tensor(src)
    assert same_device.device is CUDA1 and _cuda_array(same_device).data.ptr != _cuda_array(src).data.ptr
    assert dt.tensor(src, device="cpu").device.type == "cpu"
    with fc.cuda.Device(1):
        raw = fc.array([1.0, 2.0, 3.0])
    wrapped = dt.asarray(raw)
    assert type(wrapped) is CUDATensor and wrapped.device is CUDA1
    # Zero-copy, through a view: the tensor holds its own array object over raw's memory.
    assert _cuda_array(wrapped).data.ptr == raw.data.ptr and _cuda_array(wrapped) is not raw
    copied = dt.asarray(raw, device="cuda:0")
    assert copied.device is CUDA0 and _cuda_array(copied).device.id == 0
    with pytest.raises(ValueError, match="copy=False"):
        dt.asarray(raw, device="cuda:0", copy=False)
    with pytest.raises(ArgumentTypeError, match=r"cupy\.ndarray"):
        dt.from_numpy(raw)


def test_from_dlpack_shares_memory_and_storage() -> None:
    x = dt.tensor([1.0, 2.0, 3.0, 4.0], device="cuda:1")
    assert x.__dlpack_device__() == (2, 1)
    y = dt.from_dlpack(x)
    assert y.device is CUDA1 and _cuda_array(y).data.ptr == _cuda_array(x).data.ptr
    dt.add(x, 1.0, out=x)
    np.testing.assert_array_equal(_host(y), [2.0, 3.0, 4.0, 5.0])
    # One storage for the overlap checks: a partial overlap through the two wrappers is caught.
    with pytest.raises(MemoryOverlapError):
        dt.add(x[1:], 1.0, out=y[:-1])


def test_pickle_round_trip_keeps_the_device() -> None:
    t = dt.tensor([1.5, 2.5], device="cuda:1")
    back = pickle.loads(pickle.dumps(t))
    assert back.device is CUDA1 and type(back) is CUDATensor
    np.testing.assert_array_equal(_host(back), [1.5, 2.5])


def test_cuda_tensor_protocol_reads_copy_to_the_host() -> None:
    t = dt.tensor([[1.0, 2.0]], device="cuda:1")
    assert "device='cuda:1'" in repr(t)
    assert t.tolist() == [[1.0, 2.0]] and t[0, 1].item() == 2.0 and float(t[0, 0]) == 1.0
    assert not t.is_readonly


@pytest.mark.parametrize(
    "convert",
    [np.asarray, np.array, lambda t: t.numpy(), lambda t: t.__array__()],
    ids=["np.asarray", "np.array", "numpy()", "__array__"],
)
def test_implicit_host_conversion_raises_and_says_cpu(convert: Callable[[Tensor], object]) -> None:
    t = dt.tensor([1.0], device="cuda:1")
    with pytest.raises(TypeError, match=r"cuda:1 tensor.*call \.cpu\(\) first"):
        convert(t)


def test_numpy_values_never_move_to_a_cuda_tensor_behind_the_back() -> None:
    # A NumPy array next to a CUDA tensor names both devices; a NumPy function devtensor lacks is a TypeError
    # (devtensor.numpy_protocols): no device copy behind the back, as in CuPy.
    t = dt.tensor([1.0], device="cuda:1")
    with pytest.raises(DeviceMismatchError, match=r"cpu.*cuda:1"):
        np.add(np.zeros(1), t)
    with pytest.raises(TypeError, match="cuda:1"):
        np.median(t)


# --- a missing CUDA kernel -----------------------------------------------------------------------------------


@pytest.fixture
def cpu_only_op() -> Iterator[structured.StructuredOp]:
    """A throwaway op with a CPU impl only; removed from the op registry afterwards (the codegen check reads it)."""

    @structured_op("cuda_logic_cpu_only", method=False)
    def op(self: Tensor) -> TensorSpec:
        return (self.shape, self.dtype)

    @op.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.copyto(out.array, self.array)

    try:
        yield op
    finally:
        library.remove_op(op)


def test_missing_cuda_kernel_raises_naming_op_key_and_kernels(cpu_only_op: structured.StructuredOp) -> None:
    np.testing.assert_array_equal(cpu_only_op.functional(dt.tensor([1.0, 2.0])).numpy(), [1.0, 2.0])
    t = dt.tensor([1.0, 2.0], device="cuda:1")
    inplace = cpu_only_op.inplace
    assert inplace is not None
    fc.state.clear_log()
    for call in (cpu_only_op.functional, inplace):
        with pytest.raises(NoKernelError) as info:
            call(t)
        message = str(info.value)
        assert message.startswith("cuda_logic_cpu_only:"), message
        assert "dispatch key CUDA" in message and "cuda:1" in message and "keys with kernels: CPU" in message
        assert isinstance(info.value, NotImplementedError)
    assert fc.state.calls == [], "nothing is allocated or launched before the kernel lookup fails"
    assert t.version == 0
    # Meta tensors need no kernel.
    assert cpu_only_op.functional(dt.zeros(3, device="meta")).shape == (3,)


def test_out_and_inplace_with_cupy_flags() -> None:
    # CuPy's flags have no ``writeable``: the front must not read it (it once did, failing every CUDA out=).
    assert not hasattr(fc.empty(1).flags, "writeable")
    a = dt.tensor([1.0, 2.0], device="cuda:1")
    out = dt.empty(2, device="cuda:1")
    dt.add(a, a, out=out)
    a.add_(1.0)
    np.testing.assert_array_equal(_host(out), [2.0, 4.0])
    np.testing.assert_array_equal(_host(a), [2.0, 3.0])


# --- once-known bugs, fixed: kept as regression tests ------------------------------------------------------------


def test_setitem_on_a_device_that_is_not_current() -> None:
    t = dt.zeros(3, device="cuda:1")
    t[1] = 5.0
    np.testing.assert_array_equal(_host(t), [0.0, 5.0, 0.0])


def test_advanced_indexing_on_a_device_that_is_not_current() -> None:
    t = dt.tensor([1.0, 2.0, 3.0], device="cuda:1")
    picked = t[dt.tensor([2, 0], device="cuda:1")]
    np.testing.assert_array_equal(_host(picked), [3.0, 1.0])


def test_clamp_of_bool_with_one_bound_matches_cpu() -> None:
    data = np.array([True, False])
    want = dt.clamp(dt.tensor(data), max=False)
    got = dt.clamp(dt.tensor(data, device="cuda:1"), max=False)
    np.testing.assert_array_equal(_host(got), _host(want))
