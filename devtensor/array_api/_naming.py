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

from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DevtensorError,
    IndexOutOfRangeError,
    ScalarOverflowError,
    as_called,
    short_repr,
)

__all__ = ["STANDARD_NAMES", "name_errors"]

#: (the op's argument name, the standard's) renamed in the messages.
STANDARD_NAMES: Final = (("dim", "axis"), ("dims", "axis"), ("keepdim", "keepdims"))


def _named(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    import inspect

    # The ops' names of the first two operands (PyTorch's self/input and other) as this function's (x, x1, x2).
    params = [p.name for p in inspect.signature(fn).parameters.values()][:2]
    operands = tuple(zip(("self", "other"), params, strict=False))
    names = STANDARD_NAMES + tuple((op, ours) for op, ours in operands if ours in ("x", "x1", "x2"))
    if params[:1] == ["x"]:
        names += (("input", "x"),)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DevtensorError as error:
            raise as_called(error, None, name, names) from None
        except (TypeError, AttributeError, IndexError, ValueError, OverflowError) as error:
            # A built-in error of the function's own argument handling (None where an array belongs, an int
            # where a sequence does): devtensor's error of the same standard type, naming the function and,
            # where it can be told, the argument and its value.
            raise builtin_error(name, fn, args, kwargs, error) from None

    return call


_BUILTIN_KINDS: Final = (
    (OverflowError, ScalarOverflowError),
    (IndexError, IndexOutOfRangeError),
    (ValueError, ArgumentValueError),
    (TypeError, ArgumentTypeError),
    (AttributeError, ArgumentTypeError),
)


def builtin_error(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], error: Exception
) -> DevtensorError:
    """The devtensor error for the built-in ``error`` that ``fn(*args, **kwargs)`` raised, called as ``name``:
    of the same standard type (an AttributeError, a missing method of an argument, as a TypeError), naming
    ``name`` and the argument whose value's type the message names when exactly one argument has that type."""
    import inspect
    import re

    from devtensor.tensor import Tensor

    kind: type[DevtensorError] = ArgumentTypeError
    for builtin, ours in _BUILTIN_KINDS:
        if isinstance(error, builtin):
            kind = ours
            break
    culprit = None
    found = re.search(r"'(\w+)' object", str(error))
    if found is not None:
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs).arguments
        except (TypeError, ValueError):
            bound = {}
        named = [(k, v) for k, v in bound.items() if type(v).__name__ == found.group(1) and not isinstance(v, Tensor)]
        if len(named) == 1:
            culprit = named[0]
    if culprit is None:
        return kind(f"{name}: {error}")
    arg, value = culprit
    if isinstance(error, AttributeError):
        got = f"{type(value).__name__} {short_repr(value)}"
        return kind(f"{name}: argument '{arg}' must be an array (a Tensor), got {got}")
    return kind(f"{name}: argument '{arg}' of type {type(value).__name__} ({short_repr(value)}) is not valid: {error}")


def name_errors(namespace: dict[str, Any], names: Iterable[str], prefix: str = "") -> None:
    """Replace each plain function ``namespace[name]`` (a module's globals) defined in that module by a wrapper
    whose devtensor errors start with ``prefix + name`` (``"linalg."`` for the linalg extension) and use the
    standard's argument names (:data:`STANDARD_NAMES`); the wrapper keeps the function's name, docstring and
    signature (``functools.wraps``). Functions imported from another module keep their own wrapper."""
    for name in names:
        fn = namespace[name]
        if isinstance(fn, types.FunctionType) and fn.__module__ == namespace["__name__"]:
            namespace[name] = _named(prefix + name, fn)
