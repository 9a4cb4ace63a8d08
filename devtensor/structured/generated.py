"""The modules ``python -m devtensor.codegen`` writes, as the fronts use them: a generated factory is taken only
when it was generated for the op's present definition (its fingerprint) and with the present common names."""

from __future__ import annotations

import importlib
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

__all__ = ["front_source", "generated_factory", "usable_module"]


def generated_factory(module_name: str, name: str, key: str) -> Callable[..., Any] | None:
    """The factory ``name`` of the generated module ``module_name`` (``devtensor._generated_fronts``,
    ``devtensor._generated_bindings``) if it was generated for the fingerprint ``key``; else None (also when the
    module was not generated yet: the first run of codegen)."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise
        return None
    if getattr(module, "FINGERPRINTS", {}).get(name) != key or not usable_module(module):
        return None
    factory: Callable[..., Any] = getattr(module, name)
    return factory


def usable_module(module: Any) -> bool:
    """Whether a generated fronts module was generated with the present :data:`COMMON` names (and, for view
    fronts, :data:`devtensor.views.VIEW_COMMON`'s): its factories' globals are those."""
    names = getattr(module, "COMMON_NAMES", None)
    from devtensor.structured.fronts import _COMMON_NAMES  # (fronts imports this module)

    if names != _COMMON_NAMES:
        return False
    view_names = getattr(module, "VIEW_COMMON_NAMES", None)
    if view_names is None:
        return True  # the bindings module has no view fronts
    from devtensor.views import VIEW_COMMON

    return bool(view_names == tuple(sorted(VIEW_COMMON)))


def front_source(fn: Callable[..., Any]) -> str:
    """The source of a generated front ``fn`` (built-in or custom), dedented (the front is defined inside its
    factory). Raises OSError when it cannot be found (as :func:`inspect.getsource`)."""
    return textwrap.dedent(inspect.getsource(fn))
