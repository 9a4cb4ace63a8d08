"""The source of a front, as :func:`inspect.getsource` finds it (every front's source is registered with linecache
when it is built: :func:`devtensor.structured.fronts.compile_factory`)."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import Any

__all__ = ["front_source"]


def front_source(fn: Callable[..., Any]) -> str:
    """The source of a front ``fn`` (built-in or custom; a compiled front shows its Python front's), dedented (the
    front is defined inside its factory). Raises OSError when it cannot be found (as :func:`inspect.getsource`)."""
    return textwrap.dedent(inspect.getsource(fn))
