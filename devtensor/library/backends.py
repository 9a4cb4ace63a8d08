"""Out-of-tree backends and what serves them: :func:`register_backend` adds a device type (its dispatch key,
refined tensor class and :class:`~devtensor.backends.Backend`); :func:`register_kernel` gives an op a kernel for a
key; :func:`register_fallback` serves every op without one (:func:`cpu_fallback` is a ready fallback).

The model is PyTorch's: a backend is a dispatch key with kernels per op, and a boxed fallback for the ops without
one (``torch.library.Library.impl`` and ``fallback``); the front's common code runs around them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from devtensor import backends, dispatcher, structured
from devtensor.backends import Backend, backend_for
from devtensor.device import Device, is_device_type, register_device_type
from devtensor.dispatcher import DispatchKey, backend_fallback, key_named
from devtensor.errors import ArgumentTypeError, ArgumentValueError, DeviceMismatchError
from devtensor.library.custom_ops import OpLike, find_op
from devtensor.library.handles import KeyLike, RegistrationHandle, as_key, register_stacked
from devtensor.structured import StructuredOp, check_identifier, flat_tensors
from devtensor.structured.stale import skipping_stale
from devtensor.tensor import Tensor
from devtensor.typed.const_out import ConstOut, make_const_out
from devtensor.views import ViewOp, all_view_ops

__all__ = [
    "NumpyBackend",
    "OutOfTreeBackend",
    "cpu_fallback",
    "register_backend",
    "register_fallback",
    "register_kernel",
]


@skipping_stale
def register_kernel(op: OpLike, key: KeyLike, fn: Callable[..., None]) -> RegistrationHandle:
    """Register ``fn`` as the kernel (impl) of ``op`` for ``key`` (a DispatchKey or a device type such as
    ``"cpu"`` or an out-of-tree ``"numpy2"``), replacing any; returns the handle that undoes it (see
    :class:`~devtensor.library.RegistrationHandle` for the order of undoing several).

    ``fn`` takes the op's parameters (same names and kinds; tensors refined to the key's tensor class), then a
    keyword-only ``plan`` when the op's meta function returns a ``PlannedSpec``, then a keyword-only ``out`` (a
    :class:`~devtensor.typed.ConstOut`), writes the result into ``out.array`` and returns None, as every impl.
    With a first parameter named ``xp`` it receives the key's array module first
    (:func:`devtensor.structured.bind_array_module`: NumPy on CPU, the CuPy module on CUDA, an out-of-tree
    backend's ``xp``), so one body can serve several keys. It runs inside the common code of the fronts (meta,
    out/inplace rules, overlap checks, device guard, version bumps). A kernel wins over the key's backend
    fallback. For a view op (``"transpose"``), ``fn`` is a view kernel (:data:`devtensor.views.ViewKernel`).

    Raises:
        TypeError: ``fn``'s parameters do not match the op's schema (a view op's: ``fn`` is not callable).
        ValueError: an unknown device type.  KeyError: no such op.
    """
    found: StructuredOp | ViewOp = find_op(op, "register_kernel")
    resolved = as_key(key, "register_kernel")
    kernel: Callable[..., None] = fn
    if isinstance(found, StructuredOp):
        if structured.check_impl_signature(found, fn, xp_allowed=True):
            kernel = structured.bind_array_module(resolved, fn)
    else:
        found.check_handler(fn)

    def installed() -> Callable[..., None] | None:
        return found.table.kernels.get(resolved)

    def install(content: Callable[..., None] | None) -> None:
        if content is None:
            found.table.unregister(resolved)
        else:
            found.table.register(resolved, content)  # checked above against the op's schema

    return register_stacked("kernel", found, resolved, fn, installed, install, kernel)


def register_fallback(key: KeyLike, fn: Callable[..., None]) -> RegistrationHandle:
    """Register the backend fallback of ``key``: one callable serving every structured op that has no kernel (and
    no override) for ``key``. Called as ``fn(op, *args, out=const_out, **kwargs)`` inside the common code (the
    op's meta has run, the output is prepared, version bumps follow). :func:`cpu_fallback` is a ready one.

    Replaces an earlier fallback for the key while registered; returns the handle that undoes it (fallbacks
    stack as kernels do: see :class:`~devtensor.library.RegistrationHandle`).

    Raises:
        TypeError: ``fn`` is not callable.  ValueError: an unknown device type.
    """
    if not callable(fn):
        raise ArgumentTypeError(f"register_fallback: expected a callable, got {fn!r}")
    resolved = as_key(key)

    def installed() -> Callable[..., None] | None:
        return backend_fallback(resolved)

    def install(fallback: Callable[..., None] | None) -> None:
        if fallback is None:
            dispatcher.unregister_fallback(resolved)
        else:
            dispatcher.register_fallback(resolved, fallback)

    return register_stacked("fallback", None, resolved, fn, installed, install)


def _to_cpu(value: Any) -> Any:
    """``value`` with every tensor (also inside lists and tuples) replaced by a CPU copy."""
    if isinstance(value, Tensor):
        return value.to("cpu", copy=True)
    if isinstance(value, list):
        return [_to_cpu(item) for item in value]
    if isinstance(value, tuple):
        items = [_to_cpu(item) for item in value]
        # A NamedTuple (a meta function's plan may be one) keeps its class.
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def cpu_fallback(op: StructuredOp, *args: Any, out: ConstOut[Any], **kwargs: Any) -> None:
    """A backend fallback that runs ``op``'s CPU handler on CPU copies of the inputs and copies the result back.

    For any backend whose :class:`~devtensor.backends.Backend` can convert to and from NumPy (``to_numpy``,
    ``from_numpy``) and whose array module has ``copyto`` (NumPy-backed backends, CuPy): register it with
    ``library.register_fallback("numpy2", library.cpu_fallback)``, and every built-in and custom op with a CPU
    kernel runs on that device. Tensors (also inside lists) are copied to the CPU (``Tensor.to("cpu",
    copy=True)``); the CPU handler (override, kernel or CPU fallback, as a CPU call would use) writes a fresh
    host array of the output's shape and dtype; that is then copied into ``out``. The inputs are never written,
    so inplace calls (``self`` is the output) are correct too. The front's common code runs around it as
    around any kernel (meta, out/inplace rules, version bumps).

    Raises:
        NoKernelError: the op has no CPU kernel either.  ValueError: no tensor argument to take the device from.
    """
    first_tensor = next(flat_tensors((*args, *kwargs.values())), None)
    if first_tensor is None:
        raise ArgumentValueError(f"{op.name}: cpu_fallback needs a tensor argument")
    device = first_tensor.device
    backend = backend_for(device)
    handler = op.table.handlers.get(DispatchKey.CPU)
    if handler is None:
        handler = op.table.resolve(DispatchKey.CPU, f"cpu (fallback for {device})")
    host = np.empty(out.shape, out.dtype)
    cpu_args = tuple(_to_cpu(arg) for arg in args)
    cpu_kwargs = {name: _to_cpu(value) for name, value in kwargs.items()}
    handler(*cpu_args, out=make_const_out(host), **cpu_kwargs)
    backend.xp.copyto(out.array, backend.from_numpy(host, device, None))


# --- out-of-tree backends ------------------------------------------------------------------------------------


class NumpyBackend(Backend):
    """A NumPy-backed :class:`~devtensor.backends.Backend` for an out-of-tree device type: arrays are
    ``numpy.ndarray`` in host memory, exactly as the CPU's, under another device type and dispatch key."""

    def __init__(self, device_type: str, tensor_class: type[Tensor]) -> None:
        self.device_type = device_type
        self.tensor_class = tensor_class

    def to_numpy_shared(self, array: Any, device: Device) -> np.ndarray[Any, Any]:
        """Refuses: a tensor of another device type does not hand out its memory as a CPU array (use .cpu())."""
        raise ArgumentTypeError(f"can't convert a {device} tensor to a NumPy array implicitly; call .cpu() first")


@dataclass(frozen=True, slots=True)
class OutOfTreeBackend:
    """A device type registered by :func:`register_backend`.

    Attributes:
        name: the device type (``"numpy2"``); ``Device(name)`` is its device.
        key: its dispatch key (kernels, overrides and the fallback are registered for it).
        tensor_class: the refined tensor class of its tensors (every tensor on it is an instance).
        backend: the :class:`~devtensor.backends.Backend` that allocates and converts its arrays.
    """

    name: str
    key: DispatchKey
    tensor_class: type[Tensor]
    backend: Backend

    @property
    def device(self) -> Device:
        """The device (unindexed types have exactly one)."""
        return Device(self.name)

    def refine(self, tensor: Tensor) -> Tensor:
        """``tensor`` itself if it lives on this backend (type it with the backend's class in your code).

        Raises:
            DeviceMismatchError: it does not.
        """
        if type(tensor) is self.tensor_class:
            return tensor
        raise DeviceMismatchError(f"expected a tensor on {self.name}, got one on {tensor.device}")


def register_backend(
    name: str,
    *,
    key: str | None = None,
    tensor_class: type[Tensor] | None = None,
    backend: Backend | None = None,
    view_kernels_from: str | None = "cpu",
) -> OutOfTreeBackend:
    """Register an out-of-tree device type ``name`` with its dispatch key, refined tensor class and backend.

    Tensors are then created on it as anywhere (``devtensor.tensor(data, device=name)``, ``t.to(name)``), and
    every structured op dispatches on its key: a kernel (``op.impl(name)``, :func:`register_kernel`), an
    override, or the backend fallback (:func:`register_fallback`), with no kernel an error naming the key.
    The fronts' common code (meta checks, out and inplace rules, overlap checks, version bumps) comes for free.

    Args:
        name: the device type: a lowercase ASCII identifier not registered yet.
        key: the dispatch key's name (default: ``name`` capitalised, ``"Numpy2"``); a new key.
        tensor_class: the refined tensor class: a direct subclass of ``Tensor`` with ``__slots__ = ()`` that no
            other backend uses; define it in your package so that kernels can be typed with it (add an ``array``
            property typed as your array type). Default: one made here (``<Name>Tensor``).
        backend: the Backend serving the device type (``device_type`` must be ``name``, ``tensor_class`` the
            class above). Default: :class:`NumpyBackend`, NumPy arrays in host memory.
        view_kernels_from: copy the view kernels (reshape, permute, …) of this device type to the new key, for
            backends whose arrays have the same API (default ``"cpu"``: right for NumPy-backed backends); None
            leaves view ops without kernels on the new device.
    Returns:
        The :class:`OutOfTreeBackend` record. Device types stay registered for the process's lifetime.
    Raises:
        ValueError: a bad or registered name, a key that exists already, a tensor class that is not a fresh
            slotted Tensor subclass, or a backend for another device type or class.
    """
    check_identifier("register_backend", "name", name)
    if not name.islower():
        raise ArgumentValueError(f"register_backend: a device type name must be lowercase, got {name!r}")
    if is_device_type(name):
        raise ArgumentValueError(f"register_backend: device type {name!r} is registered already")
    key_name = key if key is not None else name.capitalize()
    check_identifier("register_backend", "key", key_name)
    if key_named(key_name) is not None:
        raise ArgumentValueError(f"register_backend: dispatch key {key_name!r} exists already")
    if tensor_class is None:
        tensor_class = backend.tensor_class if backend is not None else _make_tensor_class(name)
    _check_tensor_class(tensor_class)
    if backend is None:
        backend = NumpyBackend(name, tensor_class)
    elif not isinstance(backend, Backend):
        raise ArgumentTypeError(f"register_backend: argument 'backend' must be a Backend, got {backend!r}")
    if backend.device_type != name or backend.tensor_class is not tensor_class:
        raise ArgumentValueError(
            f"register_backend: the backend serves device type {backend.device_type!r} with "
            f"{backend.tensor_class.__name__}; expected {name!r} with {tensor_class.__name__}"
        )
    source_key = Device(view_kernels_from).key if view_kernels_from is not None else None
    dispatch_key = DispatchKey(key_name)
    register_device_type(name, dispatch_key)
    backends.register_backend(backend)
    if source_key is not None:
        for view in all_view_ops():
            kernel = view.kernels.get(source_key)
            if kernel is not None:
                view.register_kernel(dispatch_key, kernel)
    return OutOfTreeBackend(name, dispatch_key, tensor_class, backend)


def _make_tensor_class(name: str) -> type[Tensor]:
    """A fresh refined tensor class for device type ``name`` (``numpy2`` -> ``Numpy2Tensor``)."""
    title = "".join(part.capitalize() for part in name.split("_"))
    cls = type(
        f"{title}Tensor",
        (Tensor,),
        {
            "__slots__": (),
            "__doc__": f"A tensor proven to live on the out-of-tree device {name!r} (``array``: its backing array).",
            "__module__": __name__,
            "array": property(attrgetter("_array"), doc="The backing array (writes bypass the version counter)."),
        },
    )
    return cls


def _check_tensor_class(cls: object) -> None:
    """ValueError unless ``cls`` can be a new backend's tensor class (see :func:`register_backend`)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise ArgumentTypeError(f"register_backend: tensor_class must be a subclass of Tensor, got {cls!r}")
    if cls is Tensor:
        raise ArgumentValueError("register_backend: tensor_class must be a new subclass of Tensor, not Tensor itself")
    if cls.__bases__ != (Tensor,):
        # A subclass of CPUTensor (say) would make mypy take this device's tensors for CPU tensors.
        raise ArgumentValueError(
            f"register_backend: tensor_class must subclass Tensor directly, got {cls.__name__} with bases "
            f"{', '.join(base.__name__ for base in cls.__bases__)}"
        )
    if cls.__dict__.get("__slots__", None) != ():
        raise ArgumentValueError(f"register_backend: {cls.__name__} must declare __slots__ = ()")
    if "_backend" in cls.__dict__:
        raise ArgumentValueError(f"register_backend: {cls.__name__} belongs to another backend already")
