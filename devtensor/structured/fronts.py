"""The structured ops' published fronts: the generic front (:mod:`devtensor.structured.generic`) of each op
variant and device binding, behind the compiled core's lanes where the core is built
(:func:`devtensor.structured.core.lazy_front`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from devtensor.dispatcher import DispatchKey
from devtensor.structured.core import lazy_front
from devtensor.structured.generic import front_signature, make_front
from devtensor.structured.tables import (
    _inline_kind as _inline_kind,  # (re-exported: devtensor.plan imports it from here)
)
from devtensor.tensor import Tensor

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp


def generate_front(
    op: StructuredOp, variant: str, binding: tuple[DispatchKey, type[Tensor]] | None = None
) -> Callable[..., Tensor]:
    """The published ``variant`` front of ``op``: with the compiled core, a ``devtensor._core.Front`` (the op's
    C lane where it has one) whose Python front is built on the first call the lane leaves
    (:func:`devtensor.structured.core.lazy_front`); without it, the Python front itself, built now. With
    ``binding`` (key, refined class), the device binding's Python front (built on its first use by
    :mod:`devtensor.structured.registry`)."""
    return lazy_front(op, variant, build_front, binding)


def build_front(
    op: StructuredOp, variant: str, binding: tuple[DispatchKey, type[Tensor]] | None = None
) -> Callable[..., Tensor]:
    """The Python front of ``op``'s ``variant`` (:func:`devtensor.structured.generic.make_front`); with ``binding``
    (key, refined class), the device binding: tensors must be of that class, and the handler is looked up for that
    key without computing one. It carries the op's signature (``inspect.signature``), docstring, name, module and
    ``op``, and pickles by its qualified name (``devtensor.add``, ``devtensor.cpu.add_``)."""
    device = binding[0].name.lower() if binding is not None else None
    fname = op.name if variant == "functional" else op.name + "_"
    fn, raw = make_front(op, variant, binding)
    fn.__name__ = fn.__qualname__ = fname
    raw.__name__ = raw.__qualname__ = f"_raw_{fname}"
    fn.__doc__ = op.doc
    fn.__module__ = raw.__module__ = f"devtensor.{device}" if device is not None else "devtensor"
    fn.op = op  # type: ignore[attr-defined]
    fn.__signature__ = front_signature(op.schema.params, variant == "functional")  # type: ignore[attr-defined]
    return fn
