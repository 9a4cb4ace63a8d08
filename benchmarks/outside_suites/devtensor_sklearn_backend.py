"""pytest plugin: scikit-learn's array-API tests with ``devtensor.array_api`` as one more namespace.

scikit-learn's tests parametrize over ``sklearn.utils._array_api.yield_namespace_device_dtype_combinations`` and
``yield_namespaces``, called when each test module is imported. This plugin, loaded with ``-p`` before collection,
replaces both so they also yield devtensor (``("devtensor.array_api", None, "float64")`` and ``"float32"``, as they
yield torch on the CPU), and re-points modules already imported that bound the originals by name.
``_array_api_for_tests`` then imports ``devtensor.array_api`` and takes the namespace from
``Tensor.__array_namespace__``. The installed scikit-learn is not edited. ``DT_SKLEARN_ONLY=1`` yields devtensor
alone. See README.md beside this file for the command.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from typing import Any

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # (SciPy reads it when first imported)

_NAME = "devtensor.array_api"
_array_api: Any = importlib.import_module("sklearn.utils._array_api")
_original_combinations = _array_api.yield_namespace_device_dtype_combinations
_original_namespaces = _array_api.yield_namespaces
_only = os.environ.get("DT_SKLEARN_ONLY") == "1"


def yield_namespace_device_dtype_combinations(include_numpy_namespaces: bool = True) -> Iterator[tuple[Any, ...]]:
    """scikit-learn's (namespace, device, dtype) combinations, then devtensor on its default device in float64 and
    float32."""
    if not _only:
        for combination in _original_combinations(include_numpy_namespaces=include_numpy_namespaces):
            if combination[0] != _NAME:  # (the original reads the replaced yield_namespaces)
                yield combination
    yield _NAME, None, "float64"
    yield _NAME, None, "float32"


def yield_namespaces(include_numpy_namespaces: bool = True) -> Iterator[str]:
    """scikit-learn's namespaces, then devtensor's."""
    if not _only:
        yield from _original_namespaces(include_numpy_namespaces=include_numpy_namespaces)
    yield _NAME


_replacements = {
    id(_original_combinations): yield_namespace_device_dtype_combinations,
    id(_original_namespaces): yield_namespaces,
}
for _module in list(sys.modules.values()):
    if _module is sys.modules[__name__]:
        continue
    for _attr, _value in list(getattr(_module, "__dict__", {}).items()):
        if id(_value) in _replacements:
            setattr(_module, _attr, _replacements[id(_value)])
