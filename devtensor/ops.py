"""``devtensor.ops.<namespace>.<name>``: the custom ops by namespace, as PyTorch's ``torch.ops.<namespace>.<name>``.

A custom op defined with ``library.custom_op("mylib::softplus")`` (or ``namespace="mylib"``, or by default the
top-level package of its module) is ``devtensor.ops.mylib.softplus``: the op itself (a
:class:`~devtensor.library.CustomOp`), called as its functional variant, with ``.functional`` (``out=``),
``.inplace`` where it has one, ``.impl``, ``.qualname``. Lookups see the ops registered now: a replaced op is found
as its replacement, a removed one is gone.

Namespaces exist on first access (as in PyTorch: ``devtensor.ops.mylib`` before mylib's ops are defined is an
empty namespace); an unknown op in one is an AttributeError naming the namespace, the name and the ops it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from devtensor.library.custom_ops import CustomOp

__all__ = ["OpNamespace"]


class OpNamespace:
    """The custom ops of one namespace: ``devtensor.ops.<namespace>``; attribute ``<name>`` is the op."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def _ops(self) -> dict[str, Any]:
        from devtensor import structured
        from devtensor.library.custom_ops import _custom_ops

        # (only the op registered under its name now: one replaced by a built-in-named op never lingers)
        return {
            name: op
            for name, op in list(_custom_ops.items())
            if op.namespace == self.name and structured.ops_by_name.get(name) is op
        }

    def __getattr__(self, name: str) -> CustomOp[...]:
        if name.startswith("__"):
            raise AttributeError(name)
        ops = self._ops()
        op = ops.get(name)
        if op is None:
            held = ", ".join(sorted(ops)) or "none yet"
            raise AttributeError(
                f"devtensor.ops.{self.name}: no custom op named {name!r} in namespace {self.name!r} (its ops: {held})"
            )
        found: CustomOp[...] = op
        return found

    def __dir__(self) -> list[str]:
        return sorted(self._ops())

    def __repr__(self) -> str:
        return f"<devtensor.ops namespace {self.name!r}>"


def __getattr__(name: str) -> OpNamespace:
    """``devtensor.ops.<namespace>``: the namespace (see the module docstring)."""
    if name.startswith("_") or not name.isidentifier():
        raise AttributeError(f"module 'devtensor.ops' has no attribute {name!r}")
    return OpNamespace(name)


def __dir__() -> list[str]:
    from devtensor.library.custom_ops import _custom_ops

    return sorted({op.namespace for op in list(_custom_ops.values())} | set(__all__))
