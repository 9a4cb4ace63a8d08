"""Small helpers shared by several test files.

This is the one test module that touches private devtensor names (``devtensor.modes._stack``,
``devtensor.views._view_ops``); when the modules move, only this file changes.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import devtensor as dt
from devtensor import modes as modes_mod
from devtensor import views
from devtensor.errors import ArgumentTypeError
from devtensor.numpy_values import binary_call, refused_number

__all__ = [
    "SUPPORTED_DTYPES",
    "call_with_numbers",
    "loaded_example",
    "raises_devtensor_error_naming",
    "remove_view_op",
    "reset_dispatch_modes",
    "unique",
]

#: Every dtype devtensor supports, in the order devtensor exports them (bool, signed, unsigned, float, complex).
SUPPORTED_DTYPES = [
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
]

_counter = itertools.count()


def unique(prefix: str) -> str:
    """A name (of an op or a device type) no other test uses: ``prefix`` plus a process-wide counter."""
    return f"{prefix}_u{next(_counter)}"


def reset_dispatch_modes() -> None:
    """Drop every active dispatch mode, including any a test left on the stack after a failure."""
    modes_mod._stack().clear()
    modes_mod.ACTIVE[0] = 0


def remove_view_op(name: str) -> None:
    """Drop a view op a test defined from the view-op registry (there is no public way to undefine a view op yet)."""
    views._view_ops.pop(name, None)


def raises_devtensor_error_naming(call: Callable[[], object], op: str) -> BaseException:
    """Run ``call``; it must raise a ``DevtensorError`` whose message names ``op``. Returns the error."""
    with pytest.raises(Exception) as info:
        call()
    assert isinstance(info.value, dt.DevtensorError), f"{type(info.value).__name__}: {info.value}"
    assert op in str(info.value)
    return info.value


def loaded_example(path: Path, name: str) -> Iterator[ModuleType]:
    """The body of a module-scoped fixture: the example script at ``path`` imported as the module ``name``,
    registered in ``sys.modules`` while the tests use it (dataclasses look their module up while a class is
    made), then removed. Use as ``yield from loaded_example(EXAMPLE, "train_digits_plan")``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(name, None)


def call_with_numbers(name: str, fn: Callable[..., dt.Tensor], a: object, b: object, **kwargs: object) -> dt.Tensor:
    """``fn(a, b, **kwargs)`` for the binary op ``name``; where PyTorch's schema refuses a Python number in that
    place (``maximum(t, 0)``, ``gt(0, t)``), first that the call raises ArgumentTypeError naming the op and the
    argument, then NumPy's freedom through ``devtensor.numpy_values.binary_call`` (the value compared)."""
    refused = refused_number(name, a, b)
    if refused is None:
        return fn(a, b, **kwargs)
    with pytest.raises(ArgumentTypeError, match=rf"{name}: argument '{refused}' must be a tensor"):
        fn(a, b, **kwargs)
    result: dt.Tensor = binary_call(name, a, b, **kwargs)
    return result
