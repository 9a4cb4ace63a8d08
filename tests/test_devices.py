"""Device arguments (issue 9, items 3 and 5): every bad ``device=`` is a devtensor error of the matching standard
class; ordinals that are ints by ``__index__`` are accepted; interning is weak, and identity is unique while a
device is alive.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor.device import Device
from devtensor.errors import ArgumentTypeError, ArgumentValueError


@pytest.mark.parametrize("spec", [1.0, b"cpu", bytearray(b"cpu"), [0], (0,), np.float64(0.0), np.True_, object()])
def test_device_specs_of_the_wrong_type_are_type_errors_on_every_creation_function(spec: Any) -> None:
    makers: list[Callable[[], object]] = [
        lambda: dt.empty(2, device=spec),
        lambda: dt.zeros(2, device=spec),
        lambda: dt.full((2,), 1.0, device=spec),
        lambda: dt.arange(2, device=spec),
        lambda: dt.linspace(0, 1, 2, device=spec),
        lambda: dt.tensor([1.0], device=spec),
        lambda: dt.asarray([1.0], device=spec),
        lambda: dt.zeros_like(dt.zeros(2), device=spec),
    ]
    for make in makers:
        with pytest.raises(ArgumentTypeError, match=r"argument .device.: expected a device string, int or Device"):
            make()


@pytest.mark.parametrize("ordinal", [1, np.int64(1), np.uint8(1), np.array(1), np.array(1, dtype=np.int16)])
def test_ordinals_that_are_ints_by_index_are_accepted(ordinal: Any) -> None:
    assert Device(ordinal) is Device("cuda:1")
    assert Device("cuda", ordinal) is Device("cuda:1")


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("ordinal", [np.int64(1), np.array(1)])
def test_creation_takes_numpy_ordinals(ordinal: Any) -> None:
    assert dt.zeros(2, device=ordinal).device is Device("cuda:1")


def test_bad_ordinals() -> None:
    with pytest.raises(ArgumentTypeError, match=r"Device: device index must be a non-negative int, got float 1.5"):
        Device("cuda", 1.5)  # type: ignore[arg-type]  # the point of the test
    with pytest.raises(ArgumentTypeError, match=r"Device: device index must be a non-negative int"):
        Device("cuda", np.array([1]))
    with pytest.raises(ArgumentValueError, match=r"non-negative int"):
        Device(np.int64(-1))  # type: ignore[arg-type]
    with pytest.raises(ArgumentValueError, match=r"non-negative int"):
        Device("cuda", np.int8(-2))
    with pytest.raises(ArgumentValueError, match=r"index"):
        Device(np.int64(0), 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", [" cpu", "cpu ", "cuda: 0", "cuda :1", "me ta", "\tcpu", "cpu\n"])
def test_device_strings_with_spaces_are_refused_everywhere(spec: str) -> None:
    # A typo, not a device: PyTorch refuses them too. Every entry point says so, naming itself and the argument.
    with pytest.raises(ArgumentValueError, match=r"^Device: malformed device string .*spaces"):
        Device(spec)
    calls: list[tuple[str, Callable[[], object]]] = [
        ("zeros: argument 'device'", lambda: dt.zeros(2, device=spec)),
        ("tensor: argument 'device'", lambda: dt.tensor([1.0], device=spec)),
        ("to: argument 'device'", lambda: dt.zeros(2).to(spec)),
        ("to_device: argument 'device'", lambda: dt.zeros(2).to_device(spec)),
        ("Generator: argument 'device'", lambda: dt.Generator(device=spec)),
        ("override: argument 'key'", lambda: dt.library.override("neg", spec, lambda self, *, out: None)),
    ]
    for head, call in calls:
        with pytest.raises(ArgumentValueError, match=rf"^{head}: malformed device string"):
            call()


@pytest.mark.usefixtures("young_heap")
def test_interning_is_weak_but_identity_is_unique_while_alive() -> None:
    gc.collect()
    before = len(Device._interned)
    kept = Device("cuda:12345")
    for i in range(10_000):
        Device(f"cuda:{i + 20_000}")
    gc.collect()
    # Only the devices alive remain: those held elsewhere and the few kept as recently made.
    assert len(Device._interned) <= before + 1 + len(Device._recent)
    assert Device("cuda", 12345) is kept
    t = dt.empty(2, device="meta")
    assert t.device is Device("meta") and Device("cpu") is dt.Device("cpu")


@pytest.mark.usefixtures("young_heap")
def test_a_device_made_again_after_it_died_is_a_fresh_equal_object() -> None:
    first = Device("cuda:54321")
    text = repr(first)
    del first
    for i in range(len(Device._recent) + 1):  # push it out of the recently made ones
        Device(f"cuda:{60_000 + i}")
    gc.collect()
    assert ("cuda", 54321) not in Device._interned  # its entry left with it
    again = Device("cuda:54321")
    assert repr(again) == text and again is Device("cuda", 54321)


def test_threads_making_one_device_get_one_object() -> None:
    found: list[Device] = []
    barrier = threading.Barrier(8)

    def make() -> None:
        barrier.wait()
        found.extend(Device("cuda:777") for _ in range(200))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(d) for d in found}) == 1


def test_cuda_without_cupy_is_device_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # as if CuPy were not installed
    makers: list[Callable[[], dt.Tensor]] = [lambda: dt.zeros(3, device="cuda"), lambda: dt.zeros(3).to("cuda")]
    for make in makers:
        with pytest.raises(dt.DeviceUnavailableError, match="CuPy") as info:
            make()
        assert isinstance(info.value, RuntimeError)
