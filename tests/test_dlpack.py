"""``from_dlpack(x, /, *, device=None, copy=None)`` as the array API standard (2024.12) specifies it, and DLPack
dtypes devtensor cannot import (bfloat16, float8, vector types) refused with a message that names them.

Unsupported dtypes are made without PyTorch: a fake exporter hands out a NumPy array's DLPack capsule with the
type code in its ``DLDataType`` rewritten (the byte offsets below are the DLPack C header's layout)."""

from __future__ import annotations

import ctypes
import re
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor.dlpack import dtype_text
from devtensor.errors import CopyRequiredError

# --- the fake exporter --------------------------------------------------------------------------------------------

_IS_VALID = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_POINTER = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
# Offset of DLTensor.dtype: in a DLManagedTensor (DLTensor first: data 8, device 8, ndim 4) and in a
# DLManagedTensorVersioned (after version 8, manager_ctx 8, deleter 8, flags 8).
_DTYPE_OFFSET = {b"dltensor": 20, b"dltensor_versioned": 32 + 20}


class FakeExporter:
    """Exports ``array``'s memory through DLPack as (``code``, ``bits``, ``lanes``), on DLPack device
    ``device`` (``(1, 0)``: CPU; ``(2, i)``: the CUDA stand-in's device i). ``dtype``: an optional attribute, as
    PyTorch tensors have."""

    def __init__(self, array: Any, code: int, bits: int, lanes: int = 1, device: tuple[int, int] = (1, 0)) -> None:
        self.array, self.code, self.bits, self.lanes, self.device = array, code, bits, lanes, device

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __dlpack__(self, **kwargs: Any) -> Any:
        kwargs.pop("dl_device", None)
        capsule = self.array.__dlpack__(**kwargs)
        for name, offset in _DTYPE_OFFSET.items():
            if _IS_VALID(capsule, name):
                address = _POINTER(capsule, name) + offset
                ctypes.c_uint8.from_address(address).value = self.code
                ctypes.c_uint8.from_address(address + 1).value = self.bits
                ctypes.c_uint16.from_address(address + 2).value = self.lanes
        return capsule


class TorchLike(FakeExporter):
    """A fake exporter that, as a PyTorch tensor, has its own ``dtype``."""

    dtype = "torch.bfloat16"


def test_the_fake_exporter_exports_what_it_says() -> None:
    a = np.arange(3, dtype=np.uint16)
    same = FakeExporter(a, 1, 16)  # uint16, unchanged
    np.testing.assert_array_equal(dt.from_dlpack(same).numpy(), a, strict=True)
    np.testing.assert_array_equal(dt.from_dlpack(FakeExporter(a, 0, 16)).numpy(), a.view(np.int16), strict=True)


# --- unsupported dtypes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "bits", "lanes", "name"),
    [(4, 16, 1, "bfloat16"), (10, 8, 1, "float8_e4m3fn"), (12, 8, 1, "float8_e5m2"), (2, 16, 2, "float16x2")],
)
def test_unsupported_dtypes_are_named(code: int, bits: int, lanes: int, name: str) -> None:
    exporter = FakeExporter(np.zeros(4, np.uint16 if bits == 16 else np.uint8), code, bits, lanes)
    with pytest.raises(dt.DevtensorError, match=f"from_dlpack: unsupported dtype {name} of a FakeExporter") as info:
        dt.from_dlpack(exporter)
    assert isinstance(info.value, TypeError)


def test_the_exporter_dtype_attribute_is_named_too() -> None:
    with pytest.raises(TypeError, match=r"bfloat16 \(torch\.bfloat16\)"):
        dt.from_dlpack(TorchLike(np.zeros(2, np.uint16), 4, 16))


def test_an_unsupported_dtype_on_cuda_is_named(fake_cupy: ModuleType) -> None:
    g = fake_cupy.zeros(2, np.uint16)
    with fake_cupy.cuda.Device(1):
        g1 = fake_cupy.zeros(2, np.uint16)
    for array, index in ((g, 0), (g1, 1)):
        with pytest.raises(TypeError, match="unsupported dtype bfloat16"):
            dt.from_dlpack(FakeExporter(array, 4, 16, device=(2, index)))


def test_dtype_text() -> None:
    assert dtype_text(4, 16, 1) == "bfloat16"
    assert dtype_text(0, 4, 1) == "int4"
    assert dtype_text(6, 8, 1) == "bool"
    assert dtype_text(5, 64, 1) == "complex64"
    assert dtype_text(2, 32, 4) == "float32x4"
    assert dtype_text(3, 64, 1) == "opaque handle (64 bits)"
    assert dtype_text(99, 8, 1) == "DLPack type code 99 with 8 bits"


def test_objects_without_dlpack_and_bad_copy_are_refused() -> None:
    with pytest.raises(TypeError, match="does not support DLPack"):
        dt.from_dlpack([1.0, 2.0])
    for bad in (1, "yes"):
        with pytest.raises(dt.DevtensorError, match="'copy'"):
            dt.from_dlpack(np.ones(2), copy=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        dt.from_dlpack(np.ones(2), device="nowhere")


# --- device and copy ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs", [{}, {"copy": None}, {"copy": False}, {"device": "cpu"}, {"device": "cpu", "copy": False}]
)
def test_no_copy_shares_memory(kwargs: dict[str, Any]) -> None:
    a = np.arange(4.0)
    t = dt.from_dlpack(a, **kwargs)
    assert t.device.type == "cpu"
    a[0] = 9.0
    assert t.tolist()[0] == 9.0
    # One storage with the array: a partial overlap through the two is caught.
    with pytest.raises(dt.MemoryOverlapError):
        dt.add(t[1:], 1.0, out=dt.from_numpy(a)[:-1])


@pytest.mark.parametrize("device", [None, "cpu"])
def test_copy_true_always_copies(device: str | None) -> None:
    a = np.arange(4.0)
    t = dt.from_dlpack(a, device=device, copy=True)
    a[0] = 9.0
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0] and t.version == 0
    x = dt.tensor([1.0, 2.0])
    y = dt.from_dlpack(x, copy=True)
    y.add_(1)
    assert x.tolist() == [1.0, 2.0] and x.version == 0
    # An owned result can be resized as an out (a shared one never is).
    with pytest.warns(UserWarning, match="resized"):
        dt.add(dt.ones(3), 1, out=y)
    assert y.shape == (3,)


def test_to_meta() -> None:
    m = dt.from_dlpack(np.ones((2, 3), np.float32), device="meta")
    assert m.device.type == "meta" and m.shape == (2, 3) and m.dtype == dt.float32
    with pytest.raises(CopyRequiredError) as info:
        dt.from_dlpack(np.ones(2), device="meta", copy=False)
    assert isinstance(info.value, BufferError) and isinstance(info.value, ValueError)


def test_across_devices(fake_cupy: ModuleType) -> None:
    a = np.arange(3.0)
    g = dt.from_dlpack(a, device="cuda:1")
    assert g.device == dt.Device("cuda", 1) and g.cpu().tolist() == [0.0, 1.0, 2.0]
    a[0] = 7.0
    assert g.cpu().tolist()[0] == 0.0  # a copy
    x = dt.tensor([1.0, 2.0], device="cuda:1")
    back = dt.from_dlpack(x, device="cpu")
    assert back.device.type == "cpu" and back.tolist() == [1.0, 2.0]
    other = dt.from_dlpack(x, device="cuda:0")
    assert other.device == dt.Device("cuda", 0) and other.cpu().tolist() == [1.0, 2.0]
    for device in ("cpu", "cuda:0"):
        with pytest.raises(CopyRequiredError, match=r"copy=False.*cuda:1"):
            dt.from_dlpack(x, device=device, copy=False)
    with pytest.raises(BufferError, match="copy=False"):
        dt.from_dlpack(a, device="cuda:0", copy=False)


def test_cuda_copy_and_share(fake_cupy: ModuleType) -> None:
    x = dt.tensor([1.0, 2.0], device="cuda:1")
    shared = dt.from_dlpack(x, device="cuda:1", copy=False)
    copied = dt.from_dlpack(x, copy=True)
    x.add_(1)
    assert shared.cpu().tolist() == [2.0, 3.0] and copied.cpu().tolist() == [1.0, 2.0]
    assert copied.device is x.device and shared.device is x.device


class CannotExport:
    """A producer whose export fails, as PyTorch's for a tensor that needs grad or NumPy's for a read-only array
    asked for a writable export."""

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise BufferError("cannot export this")


def test_a_producer_that_cannot_export_raises_its_buffer_error() -> None:
    with pytest.raises(BufferError, match="cannot export this"):
        dt.from_dlpack(CannotExport())
    with pytest.raises(BufferError, match="meta tensor") as info:
        dt.from_dlpack(dt.empty(2, device="meta"))
    assert isinstance(info.value, dt.DevtensorError)


@pytest.mark.parametrize(
    "array",
    [np.array(["a", "b"]), np.array([1, "x"], dtype=object), np.array(["2020-01-01"], dtype="datetime64[D]")],
    ids=lambda a: str(a.dtype),
)
def test_arrays_numpy_cannot_export_are_devtensor_buffer_errors(array: Any) -> None:
    dtype = re.escape(str(array.dtype))
    with pytest.raises(BufferError, match=rf"^from_dlpack: argument 'x', a ndarray of dtype {dtype}") as info:
        dt.from_dlpack(array)
    assert isinstance(info.value, dt.DevtensorError)
