"""Annotation classification: what a meta function's parameter annotations mean to the schema (the parameter
categories), the nearest supported type for an unsupported one, the canonical text codegen writes, and the plan
type of a ``-> PlannedSpec[X]`` return annotation."""

from __future__ import annotations

import collections.abc
import types
import typing
from collections.abc import Sequence
from typing import Any, Final, Union

from devtensor.errors import (
    ArgumentTypeError,
)
from devtensor.generator import Generator
from devtensor.tensor import (
    PlannedSpec,
    Tensor,
    TensorMeta,
)

# Parameter categories, decided from the meta function's annotations.
TENSOR: Final = "Tensor"
TENSOR_OR_SCALAR: Final = "TensorOrScalar"
SCALAR: Final = "Scalar"
TENSOR_LIST: Final = "TensorList"
#: ``Generator | None`` (a random op's ``generator=``): passed as it is; the meta function checks it (its type, and
#: its device against the output's), the kernel draws from it or from the device's default generator.
GENERATOR: Final = "Generator"
OTHER: Final = "other"


#: The non-tensor value types a meta function's parameter may take (also inside ``Sequence[...]``).
_VALUE_TYPES: Final = (bool, int, float, complex, str)
_SEQUENCE_ORIGINS: Final = (list, tuple, Sequence)
_SUPPORTED_TEXT: Final = (
    "Tensor, Tensor | None, Sequence[Tensor] (or list[Tensor], tuple[Tensor, ...]), TensorOrScalar, Scalar, "
    "int, float, bool, complex, str, Literal[...], Sequence[int] (or list[int], tuple[int, ...]; also of "
    "float, bool, str), DTypeLike, and unions of the non-tensor ones; each may be '| None'; Generator | None"
)


def classify(op: str, name: str, hint: Any) -> tuple[str, bool]:
    """(category, optional) of a parameter's resolved annotation ``hint``, strictly.

    Categories: ``Tensor`` (``Tensor``), ``TensorOrScalar`` (``Tensor`` united with Python number types),
    ``Scalar`` (``bool | int | float | complex``), ``TensorList`` (``Sequence[Tensor]``, ``list[Tensor]``,
    ``tuple[Tensor, ...]``), ``Generator`` (``Generator | None``, which must be optional: a random op's
    generator) and ``other`` (values passed to the meta function as they are: the value types ``int``,
    ``float``, ``bool``, ``complex``, ``str``, ``Literal[...]``, sequences of those, ``DTypeLike``, and unions of
    them). ``X | None`` makes any of them optional.

    Raises:
        TypeError: any other annotation (a refined tensor type, ``numpy.ndarray``, ``dict``, ``set``,
            ``Callable``, ``Any``, a tensor united with a non-number, …); the message names the op, the
            parameter and the nearest supported type.
    """
    optional = False
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        args = typing.get_args(hint)
        if type(None) in args:
            optional = True
            args = tuple(a for a in args if a is not type(None))
    else:
        args = (hint,)
    if not args:
        _unsupported(op, name, hint, "Tensor | None (a parameter annotated None takes nothing)")
    if any(_is_refined_tensor(a) for a in args):
        raise ArgumentTypeError(
            f"{op}: parameter '{name}' of the meta function is annotated with a refined tensor type "
            f"{_hint_text(hint)}; meta functions take the generic Tensor (refined types belong to impls); "
            "nearest supported type: Tensor"
        )
    if all(a is Tensor for a in args):
        return TENSOR, optional
    if Tensor in args:
        if all(a is Tensor or a in (bool, int, float, complex) for a in args):
            return TENSOR_OR_SCALAR, optional
        _unsupported(op, name, hint, "TensorOrScalar" + (" | None" if optional else ", or Tensor | None"))
    if any(_is_tensor_sequence(a) for a in args):
        if len(args) == 1 and _tensor_list_ok(args[0]):
            return TENSOR_LIST, optional
        _unsupported(op, name, hint, "Sequence[Tensor]" + (" | None" if optional else ""))
    if set(args) == {bool, int, float, complex}:
        return SCALAR, optional
    if Generator in args:
        if args == (Generator,) and optional:
            return GENERATOR, optional
        _unsupported(op, name, hint, "Generator | None")
    for a in args:
        if not _is_value_type(a):
            _unsupported(op, name, hint, _nearest(a))
    return OTHER, optional


def _is_refined_tensor(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, Tensor) and hint is not Tensor


def _is_tensor_sequence(hint: Any) -> bool:
    """Whether ``hint`` is a sequence type whose items mention Tensor (``Sequence[Tensor | None]`` too)."""
    if typing.get_origin(hint) not in _SEQUENCE_ORIGINS:
        return False
    for item in typing.get_args(hint):
        inner = typing.get_args(item) if typing.get_origin(item) in (Union, types.UnionType) else (item,)
        if any(i is Tensor or _is_refined_tensor(i) for i in inner):
            return True
    return False


def _tensor_list_ok(hint: Any) -> bool:
    items = typing.get_args(hint)
    if typing.get_origin(hint) is tuple:
        return items == (Tensor, ...) or (len(items) > 0 and all(i is Tensor for i in items))
    return items == (Tensor,)


def _is_scalar_value(hint: Any) -> bool:
    if hint in _VALUE_TYPES:
        return True
    if typing.get_origin(hint) is typing.Literal:
        return all(v is None or type(v) in (bool, int, str) for v in typing.get_args(hint))
    return False


def _is_value_type(hint: Any) -> bool:
    """A supported non-tensor annotation (one member of a union, ``None`` removed)."""
    import numpy as np

    if _is_scalar_value(hint):
        return True
    origin = typing.get_origin(hint)
    # DTypeLike's members: np.dtype[Any] | type[np.generic] | str (bare np.dtype and type at run time too)
    if hint is np.dtype or origin is np.dtype or hint is type:
        return True
    if origin is type:
        items = typing.get_args(hint)
        return len(items) == 1 and isinstance(items[0], type) and issubclass(items[0], np.generic)
    if origin in _SEQUENCE_ORIGINS:
        items = typing.get_args(hint)
        if origin is tuple and len(items) == 2 and items[1] is Ellipsis:
            items = items[:1]
        return len(items) > 0 and all(_is_scalar_value(i) for i in items)
    return False


def _nearest(hint: Any) -> str:
    """The supported annotation nearest to the unsupported ``hint`` (for error messages)."""
    import collections.abc
    import enum
    import fractions

    import numpy as np

    origin = typing.get_origin(hint) or hint
    items = typing.get_args(hint)
    if hint is typing.Any or hint is object or isinstance(hint, typing.TypeVar):
        return "Tensor (or TensorOrScalar, Scalar, int, float, str: name the type)"
    if origin is np.ndarray:
        return "Tensor"
    if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        return "Sequence[int] (for the values), or one keyword-only int/float/str parameter per key"
    if origin in (set, frozenset, collections.abc.Set, collections.abc.MutableSet):
        inner = _nearest_scalar(items[0]) if items else "int"
        return f"Sequence[{inner}]"
    if origin is collections.abc.Callable or (isinstance(origin, type) and issubclass(origin, types.FunctionType)):
        return "Literal['name', ...] or str (choose the function by name inside the meta function and impls)"
    if origin in _SEQUENCE_ORIGINS:
        if items and (_is_tensor_sequence(hint) or any(typing.get_origin(i) in _SEQUENCE_ORIGINS for i in items)):
            inner = "Tensor" if _is_tensor_sequence(hint) else "int"
        else:
            inner = _nearest_scalar(items[0]) if items else "int"
        return f"Sequence[{inner}]"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "Literal[...] of the enum's values (str or int)"
    if isinstance(hint, type) and issubclass(hint, (bytes, bytearray)):
        return "str"
    if isinstance(hint, type) and issubclass(hint, fractions.Fraction):
        return "float"
    return _nearest_scalar(hint)


def _nearest_scalar(hint: Any) -> str:
    import decimal

    import numpy as np

    if _is_scalar_value(hint):
        return _hint_text(hint)
    if isinstance(hint, type):
        if issubclass(hint, (np.bool_,)):
            return "bool"
        if issubclass(hint, np.integer):
            return "int"
        if issubclass(hint, (np.floating, decimal.Decimal)):
            return "float"
        if issubclass(hint, np.complexfloating):
            return "complex"
        if issubclass(hint, (bytes, bytearray)):
            return "str"
    return f"one of: {_SUPPORTED_TEXT}"


def _hint_text(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return repr(hint).replace("typing.", "").replace("collections.abc.", "").replace("devtensor.tensor.", "")


def _unsupported(op: str, name: str, hint: Any, nearest: str) -> typing.NoReturn:
    raise ArgumentTypeError(
        f"{op}: parameter '{name}' of the meta function has an unsupported annotation {_hint_text(hint)}; "
        f"nearest supported type: {nearest}"
    )


def plan_text(hint: Any) -> str:
    """The annotation text of a resolved type ``hint`` (a plan's type) as codegen writes it: classes by their
    qualified name (:func:`plan_imports` says where each comes from), generics and unions spelled out."""
    return _render(hint, set())


def plan_imports(hint: Any) -> set[tuple[str, str]]:
    """The ``(module, name)`` pairs the text of :func:`plan_text` needs imported (builtins need none)."""
    needed: set[tuple[str, str]] = set()
    _render(hint, needed)
    return needed


def _render(hint: Any, needed: set[tuple[str, str]]) -> str:
    if hint is None or hint is type(None):
        return "None"
    if hint is Ellipsis:
        return "..."
    if hint is Any:
        needed.add(("typing", "Any"))
        return "Any"
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or origin is types.UnionType:
        return " | ".join(_render(a, needed) for a in args)
    if origin is typing.Literal:
        needed.add(("typing", "Literal"))
        return "Literal[" + ", ".join(repr(v) for v in args) + "]"
    if origin is not None:
        if origin is collections.abc.Callable and args and isinstance(args[0], list):
            inner = "[" + ", ".join(_render(a, needed) for a in args[0]) + "], " + _render(args[1], needed)
        else:
            inner = ", ".join(_render(a, needed) for a in args)
        return f"{_render(origin, needed)}[{inner}]" if args else _render(origin, needed)
    if isinstance(hint, type):
        if hint.__module__ == "builtins":
            return hint.__qualname__
        needed.add((hint.__module__, hint.__qualname__.split(".")[0]))
        return hint.__qualname__
    # A TypeVar, a NewType, a string left unresolved…: typed loosely rather than wrongly.
    needed.add(("typing", "Any"))
    return "Any"


def plan_of(hint: Any) -> tuple[str | None, Any]:
    """(annotation text, resolved type) of ``X`` in a return annotation ``PlannedSpec[X]``; (None, None) for
    any other return annotation (``TensorSpec`` or none: the op has no plan)."""
    if hint is PlannedSpec:
        return "Any", Any
    if typing.get_origin(hint) is not PlannedSpec:
        return None, None
    (plan,) = typing.get_args(hint)
    return plan_text(plan), plan


def tensorize(hint: Any) -> Any:
    """``hint`` with ``TensorMeta`` (a meta function's read-only view of a tensor) replaced by ``Tensor``: the
    schema, and so every variant, takes Tensors either way."""
    if hint is TensorMeta:
        return Tensor
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if not args or origin is typing.Literal:
        return hint
    new = tuple(a if a is Ellipsis else tensorize(a) for a in args)
    if new == args:
        return hint
    if origin is Union or origin is types.UnionType:
        return Union[new]  # noqa: UP007  (built from a tuple)
    return origin[new if len(new) > 1 else new[0]]


def canonical_annotation(hint: Any, category: str, optional: bool) -> str:
    """The annotation text codegen writes for a parameter, rendered from the resolved ``hint`` in the names the
    generated modules import (``Tensor``, ``TensorOrScalar``, ``Scalar``, ``Sequence``, ``Literal``,
    ``DTypeLike``), however the meta function spelled it (``typing.Optional[int]``, ``collections.abc.Sequence``)."""
    none = " | None" if optional else ""
    if category == TENSOR:
        return "Tensor" + none
    if category == TENSOR_OR_SCALAR:
        return "TensorOrScalar" + none
    if category == SCALAR:
        return "Scalar" + none
    if category == GENERATOR:
        return "Generator" + none
    origin = typing.get_origin(hint)
    members = typing.get_args(hint) if origin is Union or origin is types.UnionType else (hint,)
    parts: list[str] = []
    for m in members:
        if m is type(None):
            continue
        text = "DTypeLike" if _is_dtype_like(m) else _leaf_text(m)
        if text == "str" and any(_is_dtype_like(x) for x in members):
            text = "DTypeLike"
        if text not in parts:
            parts.append(text)
    return " | ".join(parts) + none


def _is_dtype_like(hint: Any) -> bool:
    import numpy as np

    return hint is np.dtype or typing.get_origin(hint) is np.dtype or hint is type or typing.get_origin(hint) is type


def _leaf_text(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(v) for v in typing.get_args(hint)) + "]"
    if origin in _SEQUENCE_ORIGINS:
        items = typing.get_args(hint)
        name = "Sequence" if origin is Sequence else origin.__name__
        inner = ", ".join("..." if i is Ellipsis else _leaf_text(i) for i in items)
        return f"{name}[{inner}]"
    if hint is Tensor:
        return "Tensor"
    if isinstance(hint, type):
        return hint.__name__
    return _hint_text(hint)


def check_default(op: str, name: str, hint: Any, category: str, optional: bool, default: object) -> None:
    """A default must fit its annotation where the front relies on it: None only for ``| None``, tensors
    default to None only, a ``Literal`` default is one of its values."""
    if default is None:
        if not optional:
            raise ArgumentTypeError(f"{op}: parameter '{name}' defaults to None but its annotation has no '| None'")
        return
    if category in (TENSOR, TENSOR_LIST):
        raise ArgumentTypeError(f"{op}: parameter '{name}' is a tensor parameter; its default can only be None")
    if category == GENERATOR:
        raise ArgumentTypeError(f"{op}: parameter '{name}' is a generator parameter; its default can only be None")
    if typing.get_origin(hint) is typing.Literal and default not in typing.get_args(hint):
        raise ArgumentTypeError(
            f"{op}: the default {default!r} of parameter '{name}' is not one of {list(typing.get_args(hint))}"
        )
