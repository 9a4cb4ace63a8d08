"""Shared test configuration: hypothesis profiles, the GPU marker, the ``fake_cupy`` fixture and the
``remove_new_ops`` fixture."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from types import ModuleType

import fake_cupy
import pytest
from helpers import reset_dispatch_modes
from hypothesis import HealthCheck, settings

import devtensor as dt
from devtensor import library
from devtensor.structured import all_ops

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile("dev", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _has_gpu() -> bool:
    try:
        import cupy

        return bool(cupy.cuda.runtime.getDeviceCount() > 0)
    except Exception:
        return False


HAS_GPU = _has_gpu()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="needs a CUDA GPU with CuPy installed")
    for item in items:
        if "cuda" in item.keywords and not HAS_GPU:
            item.add_marker(skip)


@pytest.fixture(name="fake_cupy")
def fake_cupy_fixture() -> Iterator[ModuleType]:
    """Install the NumPy-backed CuPy stand-in (``tests/fake_cupy.py``) as ``sys.modules['cupy']`` for one test.

    The stand-in starts fresh (two fake devices, device 0 current, empty logs). devtensor looks CuPy up in
    ``sys.modules`` on every use and caches nothing of it, so nothing else needs clearing; afterwards the
    previous ``cupy`` (the real one, or none) is back. Tests read the logs through ``fake_cupy.state``.
    """
    saved = {name: mod for name, mod in sys.modules.items() if name == "cupy" or name.startswith("cupy.")}
    for name in saved:
        del sys.modules[name]
    fake_cupy.reset()
    sys.modules["cupy"] = fake_cupy
    try:
        yield fake_cupy
    finally:
        for name in [n for n in sys.modules if n == "cupy" or n.startswith("cupy.")]:
            del sys.modules[name]
        sys.modules.update(saved)
        fake_cupy.reset()


@pytest.fixture
def remove_new_ops() -> Iterator[None]:
    """Every op a test defines is removed afterwards, with its cached ``devtensor.cpu`` bindings, and any dispatch
    mode the test left active is dropped, so codegen checks and later tests see the built-in registry only.

    Use it per file with ``pytestmark = pytest.mark.usefixtures("remove_new_ops")``.
    """
    before = {op.name for op in all_ops()}
    try:
        yield
    finally:
        for op in all_ops():
            if op.name not in before:
                library.remove_op(op)
                vars(dt.cpu).pop(op.name, None)
                vars(dt.cpu).pop(op.name + "_", None)
        reset_dispatch_modes()


@pytest.fixture
def young_heap() -> Iterator[None]:
    """For a test that calls ``gc.collect()`` to collect what it made: every object alive before the test is
    frozen for its duration (``gc.freeze``: left out of collections), so a collection scans the test's own objects
    only. In a process that has run thousands of tests a full collection took 3-13 s on a loaded 2-core machine
    (test_out_resize.py's collections: 130 s of one suite run's 750 worker-seconds). Garbage the test makes is
    still collected; only what existed before the test is left alone, as it would be by the test anyway."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
