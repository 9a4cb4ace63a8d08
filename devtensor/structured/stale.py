"""Impl registrations that do not match their op, collected instead of raised while the generator imports a package.

``python -m devtensor.codegen --package mypkg`` imports ``mypkg`` to read its ops' schemas, and importing it runs its
impl registrations. After an op's signature changed, those impls (still written for the old signature) no longer
match and registering them raises: the generator would fail before it could write the declarations against which
the type checker points at each impl to change. Within :func:`collecting_stale_impls`, such a registration is
skipped and its message collected instead (the generator prints them). Registrations outside it raise as always.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["StaleImpl", "collecting_stale_impls", "skipping_stale", "stale_impl"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: While :func:`collecting_stale_impls` is active: the messages of the registrations skipped; None otherwise.
_collected: list[str] | None = None


class StaleImpl(Exception):
    """Raised by :func:`stale_impl` while collecting: the registration in progress is skipped (never escapes a
    registration function decorated with :func:`skipping_stale`)."""


@contextmanager
def collecting_stale_impls() -> Iterator[list[str]]:
    """Within the block, an impl registration that does not match its op's schema, or names no defined op, does not
    raise: its message is appended to the list yielded and the impl is not registered (the registration function
    returns the impl it was given). Not thread-safe: for the generator, which runs on one thread."""
    global _collected
    outer, _collected = _collected, []
    try:
        yield _collected
    finally:
        _collected = outer


def stale_impl(message: str, error: type[Exception]) -> Exception:
    """The exception for a registration that does not fit its op: ``error(message)``, or, while collecting,
    :class:`StaleImpl` with the message recorded. Use as ``raise stale_impl(message, ArgumentTypeError)``."""
    if _collected is None:
        return error(message)
    _collected.append(message)
    return StaleImpl(message)


def skipping_stale(register: _F) -> _F:
    """``register`` (a registration function whose last argument is the impl, positional or ``fn=``), returning
    the impl unregistered when a check inside raised :class:`StaleImpl`."""

    @functools.wraps(register)
    def skipping(*args: Any, **kwargs: Any) -> Any:
        try:
            return register(*args, **kwargs)
        except StaleImpl:
            return kwargs["fn"] if "fn" in kwargs else args[-1]

    return skipping  # type: ignore[return-value]
