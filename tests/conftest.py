"""Shared test configuration: hypothesis profiles, the GPU marker and the ``fake_cupy`` fixture."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from types import ModuleType

import fake_cupy
import pytest
from hypothesis import HealthCheck, settings

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
