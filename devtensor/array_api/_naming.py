"""Errors of the Array API namespace's functions named as the caller wrote the call.

The namespace's functions run devtensor's ops under PyTorch's names (``xp.max`` runs ``amax``, ``xp.sort`` runs
``argsort``, ``xp.count_nonzero`` runs ``sum``; ``axis`` is passed as ``dim``), so an op's error would name an op
and an argument the caller never wrote. :func:`name_errors` wraps each function so that such an error names the
standard's function and its argument names instead (same error type; only the error path pays, plus one call
frame per call).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable
from typing import Any, Final

from devtensor.errors import DevtensorError, as_called

__all__ = ["STANDARD_NAMES", "name_errors"]

#: (the op's argument name, the standard's) renamed in the messages.
STANDARD_NAMES: Final = (("dim", "axis"), ("dims", "axis"), ("keepdim", "keepdims"))


def _named(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DevtensorError as error:
            raise as_called(error, None, name, STANDARD_NAMES) from None

    return call


def name_errors(namespace: dict[str, Any], names: Iterable[str], prefix: str = "") -> None:
    """Replace each plain function ``namespace[name]`` (a module's globals) defined in that module by a wrapper
    whose devtensor errors start with ``prefix + name`` (``"linalg."`` for the linalg extension) and use the
    standard's argument names (:data:`STANDARD_NAMES`); the wrapper keeps the function's name, docstring and
    signature (``functools.wraps``). Functions imported from another module keep their own wrapper."""
    for name in names:
        fn = namespace[name]
        if isinstance(fn, types.FunctionType) and fn.__module__ == namespace["__name__"]:
            namespace[name] = _named(prefix + name, fn)
