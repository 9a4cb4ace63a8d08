"""The view ops' fronts compiled from generated source (:mod:`devtensor.views`): :func:`compile_factory`
registers each front's source with linecache, so tracebacks and :func:`inspect.getsource` show it
(:func:`front_source`). The structured ops' fronts are not generated: :mod:`devtensor.structured.generic`."""

from __future__ import annotations

import inspect
import linecache
import textwrap
from collections.abc import Callable
from typing import Any

__all__ = ["compile_factory", "front_source"]


def front_source(fn: Callable[..., Any]) -> str:
    """The source of a front ``fn``, dedented (a view front is defined inside its factory; a structured front's is
    the generic front's). Raises OSError when it cannot be found (as :func:`inspect.getsource`)."""
    return textwrap.dedent(inspect.getsource(fn))


def compile_factory(filename: str, source: str, name: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """Compile the factory ``name`` from ``source`` with the globals ``namespace``, registering the source with
    :mod:`linecache` under ``filename`` so that tracebacks show its lines and :func:`inspect.getsource` finds the
    fronts (``filename`` should look like ``<devtensor.custom.NAME>``)."""
    # An entry with no mtime is never invalidated by linecache.checkcache (attrs registers its generated
    # methods the same way).
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict[str, Any] = dict(namespace)
    exec(compile(source, filename, "exec"), scope)
    factory: Callable[..., Any] = scope[name]
    return factory
