"""pytest plugin: SciPy's array-API tests with ``devtensor.array_api`` as one more ``xp`` backend.

SciPy's ``conftest.py`` builds its ``xp`` fixture from the list ``scipy.conftest.xp_available_backends`` (NumPy, and
array-api-strict, torch, CuPy, JAX, Dask when ``SCIPY_ARRAY_API`` is set and they import). This plugin, loaded with
``-p`` before pytest collects SciPy, imports that conftest, appends devtensor's namespace (test id ``devtensor``), adds
the namespace's module name to ``xp_known_backends`` (so ``np_only``/``skip_xp_backends`` markers skip it as they skip
torch), and makes the ``xp`` fixture anew over the list. The installed SciPy is not edited.

``DT_SCIPY_BACKENDS`` (comma-separated ids, e.g. ``devtensor,torch``) keeps only those backends; unset keeps all.
The terminal summary says how many tests received each namespace (without xdist; workers keep their own counts).
See README.md beside this file for the command.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # (SciPy reads it when first imported)

import pytest

import devtensor.array_api as dxp

_conftest: Any = importlib.import_module("scipy.conftest")
_conftest.xp_known_backends.add(dxp.__name__)
_conftest.xp_available_backends.append(pytest.param(dxp, id="devtensor", marks=pytest.mark.array_api_backends))
_wanted = os.environ.get("DT_SCIPY_BACKENDS")
_params = [p for p in _conftest.xp_available_backends if not _wanted or p.id in _wanted.split(",")]
# (pytest keeps a fixture's params from its decoration: the fixture is made again over the new list)
_conftest.xp = pytest.fixture(params=_params)(_conftest.xp._get_wrapped_function())

_seen: dict[str, int] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Count the namespace each ``xp`` test received (the proof that devtensor is the one tested)."""
    xp = getattr(item, "funcargs", {}).get("xp")
    if xp is not None:
        _seen[xp.__name__] = _seen.get(xp.__name__, 0) + 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print how many tests ran with each namespace."""
    terminalreporter.write_line(f"xp namespaces used: {_seen}")
