"""The classes of custom ops (:class:`CustomOp`, :class:`InplaceCustomOp`: what :func:`~devtensor.library.custom_op`
returns) and qualified op names (``"<namespace>::<name>"``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, ParamSpec

from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentValueError
from devtensor.structured import StructuredOp
from devtensor.tensor import Tensor

__all__ = ["CustomOp", "InplaceCustomOp", "P", "split_qualname"]

P = ParamSpec("P")
if TYPE_CHECKING:
    MYPY = False  # mypy takes a name MYPY as always true, pyright does not: `not MYPY` blocks are pyright's alone


class CustomOp(StructuredOp, Generic[P]):
    """A custom op (:func:`custom_op`): a :class:`~devtensor.structured.StructuredOp` (same fronts, kernel table,
    ``impl``, ``register_kernel``, ``functional`` with ``out=``) that also has a namespace, as PyTorch's
    ``torch.ops.<namespace>.<name>``, and is called like its functional variant.

    ``P`` is the meta function's parameters: ``op(x, beta=2.0)`` is type-checked against them and returns a
    :class:`~devtensor.tensor.Tensor` (``op.functional(..., out=t)`` takes ``out`` as well, untyped otherwise).
    An op with an inplace variant is an :class:`InplaceCustomOp`; on this class ``inplace`` is None at run time
    for the type checker too (``op.inplace(x)`` is a type error, not a run-time ShapeError).

    Attributes:
        namespace: the op's namespace (``"mylib"`` of ``custom_op("mylib::softplus")``); the op is
            ``devtensor.ops.<namespace>.<name>``.
    """

    __slots__ = ("namespace",)

    namespace: str

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Tensor:
        """The functional variant: ``op(x, ...)`` is ``op.functional(x, ...)`` (the same checks and errors)."""
        return self.functional(*args, **kwargs)

    if TYPE_CHECKING and not MYPY:
        # pyright reads StructuredOp.impl as overloads over devtensor's op names (see there); a custom op's impl
        # keeps the plain form, so that pyright does not scan them on each registration (its types are the
        # generated registrars' to check, or the mypy plugin's).
        def impl(self, *keys: DispatchKey | str) -> Callable[[Callable[..., None]], Callable[..., None]]: ...

    @property
    def qualname(self) -> str:
        """``"<namespace>::<name>"``, the name :func:`get_op`, :func:`override` and the others also take."""
        return f"{self.namespace}::{self.name}"

    def __repr__(self) -> str:
        return f"<custom op {self.qualname}>"


class InplaceCustomOp(CustomOp[P]):
    """A :class:`CustomOp` with an inplace variant (declared with ``inplace=True``, or implied by
    ``out_may_be_input=True`` or an elementwise meta function): ``op.inplace(x, ...)`` writes the result into
    ``x`` and returns it, typed with the meta function's parameters."""

    __slots__ = ()

    if TYPE_CHECKING:
        # (the slot StructuredOp declares as Optional, never None on this class)
        inplace: Callable[P, Tensor]


def split_qualname(caller: str, name: str) -> tuple[str | None, str]:
    """``(namespace, name)`` of ``"ns::name"`` (``(None, name)`` without ``::``); both parts are checked as names.

    Raises:
        ValueError: an empty or malformed part (naming ``caller`` and the text).
    """
    if "::" not in name:
        return None, name
    namespace, _, plain = name.partition("::")
    if "::" in plain or not namespace.isidentifier() or not namespace.isascii() or namespace.startswith("_"):
        raise ArgumentValueError(
            f"{caller}: a qualified op name is '<namespace>::<name>' with a namespace that is a plain ASCII "
            f"identifier not starting with '_', got {name!r}"
        )
    return namespace, plain
