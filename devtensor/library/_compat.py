"""The one place where devtensor.library reaches into other devtensor modules' private names.

Each name here stands for a public name the owning module does not offer yet; the rest of the package uses only
these wrappers, so adding the public name later means changing this file alone. Nothing here is public API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from devtensor import device as _device_module
from devtensor import dispatcher as _dispatcher_module
from devtensor import structured as _structured_module
from devtensor.device import Device
from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError

# --- devtensor.dispatcher ----------------------------------------------------------------------------------------

#: The dispatcher's registration lock (``dispatcher._lock``): held while the library changes a kernel table or a
#: fallback, so that a registration and the bookkeeping of its handle happen as one step.
registry_lock = _dispatcher_module._lock


def backend_fallback(key: DispatchKey) -> Callable[..., None] | None:
    """The backend fallback registered for ``key``, or None (reads ``dispatcher._fallbacks``)."""
    return _dispatcher_module._fallbacks.get(key)


def is_key_name(name: str) -> bool:
    """Whether a dispatch key of that name exists (reads ``DispatchKey._interned``)."""
    return name in DispatchKey._interned


def dispatch_key(key: DispatchKey | str) -> DispatchKey:
    """The dispatch key for ``key``: a DispatchKey, a key name (``"CPU"``, ``"Meta"``, an out-of-tree key's) or a
    device type (``"cpu"``, ``"cuda"``, ``"numpy2"``).

    A local stand-in for ``devtensor.dispatcher.dispatch_key`` (being added there): replace the body by a call
    to it once it exists.

    Raises:
        TypeError: ``key`` is neither.  ValueError: an unknown device type.
    """
    if isinstance(key, DispatchKey):
        return key
    if isinstance(key, str):
        named = DispatchKey._interned.get(key)
        return named if named is not None else Device(key).key
    raise ArgumentTypeError(
        f"expected a DispatchKey, a key name such as 'CPU', a Device or a device type such as 'cpu', got {key!r}"
    )


# --- devtensor.device --------------------------------------------------------------------------------------------


def is_device_type(name: str) -> bool:
    """Whether a device type of that name is registered (reads ``device._device_types``)."""
    return name in _device_module._device_types


def device_types() -> Iterator[tuple[str, DispatchKey]]:
    """Every registered device type with its dispatch key, in registration order (a snapshot)."""
    for name, info in list(_device_module._device_types.items()):
        yield name, info.key


# --- devtensor.structured ----------------------------------------------------------------------------------------

#: Names the generated fronts use for themselves (``structured._SOURCE_NAMES``): no parameter may take one.
reserved_source_names: frozenset[str] = _structured_module._SOURCE_NAMES


def check_impl_signature(op: Any, fn: Callable[..., None]) -> None:
    """TypeError unless ``fn`` takes ``op``'s parameters as an impl does (``structured._check_impl_signature``)."""
    _structured_module._check_impl_signature(op, fn)


def drop_device_bindings(op_name: str) -> None:
    """Forget the compiled device bindings (``devtensor.cpu.<name>``, ...) of ``op_name`` (``structured._bindings``)."""
    bindings: dict[tuple[str, str, DispatchKey], Any] | None = getattr(_structured_module, "_bindings", None)
    if bindings is not None:
        for cache_key in [cached for cached in bindings if cached[0] == op_name]:
            bindings.pop(cache_key, None)
