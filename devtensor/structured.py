"""Structured ops: one definition (a meta function plus an impl per dispatch key), three generated variants.

This is the one public way to define an op; the built-in ops use it too::

    @structured_op(elementwise=True)
    def add(self: TensorOrScalar, other: TensorOrScalar, *, alpha: Scalar = 1) -> TensorSpec:
        return binary_meta("add", np.add, self, other)          # checks + (shape, dtype) of the result

    @add.impl("cpu")
    def _(self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[CPUTensor]) -> None:
        np.add(arr(self), arr(other), out=out.array)

From that, :class:`StructuredOp` generates (with exact signatures, as Python source compiled once per op):

* the functional variant ``add(self, other, *, alpha=1, out=None)``: allocates the output from the meta
  result on the arguments' device, or, given ``out=``, applies the out rules;
* the inplace variant ``add_(self, other, *, alpha=1)``: ``self`` is the output;
* Tensor methods (``t.add(...)``, ``t.add_(...)``).

Around the impl, every variant runs the common code of DESIGN.md: argument type checks, the dispatch key from
the devices of all tensor arguments (``out`` included; mixed devices raise DeviceMismatchError), one cached
lookup of the handler, the meta function, the variant's output checks (PyTorch's rules: inplace shape and
same_kind dtype; out device, dtype, resize with a UserWarning for non-empty outs, no resize of an out that is
also an input), internal- and partial-overlap errors, the device guard, and one version bump per mutated
tensor. Every check runs before any write, and a resized out is only swapped in after the impl succeeded, so a
call that raises changes nothing. Meta tensors run the meta function only.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import keyword
import operator
import sys
import types
import typing
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final, Union

from devtensor import modes
from devtensor.device import Device
from devtensor.dispatcher import META_ONLY, DispatchKey, KernelTable
from devtensor.dtypes import SCALAR_TYPES, SUPPORTED, check_cast, to_dtype
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DeviceMismatchError,
    MemoryOverlapError,
    ReadOnlyError,
    ShapeError,
)
from devtensor.meta import INLINE, ONE
from devtensor.tensor import (
    PlannedSpec,
    Tensor,
    TensorMeta,
    TensorOrScalar,
    TensorSpec,
    check_no_internal_overlap,
    new_storage,
)
from devtensor.typed.const_out import InplaceOut, new_const_out, set_array

__all__ = [
    "OpSchema",
    "Param",
    "PlannedSpec",
    "StructuredOp",
    "TensorOrScalar",
    "TensorSpec",
    "all_ops",
    "structured_op",
]


# Parameter categories, decided from the meta function's annotations.
TENSOR: Final = "Tensor"
TENSOR_OR_SCALAR: Final = "TensorOrScalar"
SCALAR: Final = "Scalar"
TENSOR_LIST: Final = "TensorList"
OTHER: Final = "other"

#: ``out`` is every impl's output; ``xp`` the array module a kernel for several keys takes first.
_RESERVED: Final = frozenset({"out", "xp"})


class Param:
    """One parameter of an op's schema: name, category, keyword-only or not, default, optional (``| None``)."""

    __slots__ = ("annotation", "category", "default", "kw_only", "name", "optional")

    def __init__(
        self,
        name: str,
        category: str,
        kw_only: bool,
        default: Any,
        optional: bool,
        annotation: str,
    ) -> None:
        self.name = name
        self.category = category
        self.kw_only = kw_only
        self.default = default
        self.optional = optional
        self.annotation = annotation

    @property
    def has_default(self) -> bool:
        return self.default is not inspect.Parameter.empty

    def __repr__(self) -> str:
        return f"Param({self.name}: {self.annotation}, {self.category})"


class OpSchema:
    """An op's parameters, derived from its annotated meta function.

    Attributes:
        name: the op name.
        params: the parameters, in order.
        plan: None, or (the meta function is annotated ``-> PlannedSpec[X]``) the text of ``X`` as codegen
            writes it: the kernels then take a keyword-only ``plan`` argument before ``out``.
        plan_hint: the resolved ``X`` (``typing.Any`` for a bare ``PlannedSpec``; None without a plan).
    """

    __slots__ = ("name", "params", "plan", "plan_hint")

    def __init__(self, name: str, params: tuple[Param, ...], plan: str | None = None, plan_hint: Any = None) -> None:
        self.name = name
        self.params = params
        self.plan = plan
        self.plan_hint = plan_hint

    @property
    def tensor_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.category in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST))

    def __repr__(self) -> str:
        return f"OpSchema({self.name}, {list(self.params)})"


#: Names the generated fronts' source uses besides its ``_``-prefixed globals (Python builtins it calls): an
#: op or parameter of that name would shadow them inside the front. ``out`` is every front's output argument.
#: (tests/test_library.py checks this set against the names in every generated front.)
_SOURCE_NAMES: Final = frozenset(
    {
        "out",
        "isinstance",
        "type",
        "str",
        "len",
        "tuple",
        "list",
        "dict",
        "object",
        "getattr",
        "ValueError",
        "Warning",
        "FloatingPointError",
    }
)
#: The non-tensor value types a meta function's parameter may take (also inside ``Sequence[...]``).
_VALUE_TYPES: Final = (bool, int, float, complex, str)
_SEQUENCE_ORIGINS: Final = (list, tuple, Sequence)
_SUPPORTED_TEXT: Final = (
    "Tensor, Tensor | None, Sequence[Tensor] (or list[Tensor], tuple[Tensor, ...]), TensorOrScalar, Scalar, "
    "int, float, bool, complex, str, Literal[...], Sequence[int] (or list[int], tuple[int, ...]; also of "
    "float, bool, str), DTypeLike, and unions of the non-tensor ones; each may be '| None'"
)


def _classify(op: str, name: str, hint: Any) -> tuple[str, bool]:
    """(category, optional) of a parameter's resolved annotation ``hint``, strictly.

    Categories: ``Tensor`` (``Tensor``), ``TensorOrScalar`` (``Tensor`` united with Python number types),
    ``Scalar`` (``bool | int | float | complex``), ``TensorList`` (``Sequence[Tensor]``, ``list[Tensor]``,
    ``tuple[Tensor, ...]``) and ``other`` (values passed to the meta function as they are: the value types
    ``int``, ``float``, ``bool``, ``complex``, ``str``, ``Literal[...]``, sequences of those, ``DTypeLike``, and
    unions of them). ``X | None`` makes any of them optional.

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


def _resolve_hints(op: str, meta: Callable[..., Any], sig: inspect.Signature) -> dict[str, Any]:
    """The meta function's annotations, evaluated (string annotations, e.g. under ``from __future__ import
    annotations``, in the meta's module). An annotation that does not evaluate raises a TypeError naming the
    parameter: with postponed annotations, every name used must be a global of the meta's module."""
    try:
        return typing.get_type_hints(meta)
    except Exception as error:
        cause = error
    globalns = getattr(inspect.unwrap(meta), "__globals__", {})
    for p in sig.parameters.values():
        if p.annotation is p.empty:
            continue
        holder = types.SimpleNamespace(__annotations__={p.name: p.annotation}, __globals__=globalns)
        try:
            typing.get_type_hints(holder)
        except Exception as error:
            raise ArgumentTypeError(
                f"{op}: the annotation {p.annotation!r} of parameter '{p.name}' of the meta function does not "
                f"resolve ({type(error).__name__}: {error}); with postponed annotations every name in it must be "
                "a global of the meta function's module"
            ) from error
    raise ArgumentTypeError(f"{op}: the meta function's annotations do not resolve: {cause}") from cause


def schema_from_meta(name: str, meta: Callable[..., Any]) -> OpSchema:
    """The schema of an op from its meta function's signature and (resolved) annotations.

    Annotations may be postponed (``from __future__ import annotations``); see :func:`_classify` for the
    supported ones. Defaults are kept as objects (the generated fronts bind them, never their text).

    Raises:
        TypeError: a parameter is unannotated, variadic, has a reserved name (``out``, a name starting with
            ``_``, a builtin the generated fronts use), an annotation that does not resolve or is not supported
            (the message names the nearest supported type), a default ``None`` without ``| None``, a tensor
            default other than None, or a ``Literal`` default outside its values; the first parameter is not a
            tensor.
        ValueError: the op name or a parameter name is not a plain ASCII identifier (or is a keyword or dunder).
    """
    check_op_name("structured_op", name)
    sig = inspect.signature(meta)
    hints = _resolve_hints(name, meta, sig)
    params: list[Param] = []
    for p in sig.parameters.values():
        check_identifier(name, "parameter name", p.name)
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ArgumentTypeError(f"{name}: the meta function may not take *args or **kwargs (parameter '{p.name}')")
        if p.name in _RESERVED or p.name in _SOURCE_NAMES or p.name.startswith("_"):
            raise ArgumentTypeError(
                f"{name}: parameter name '{p.name}' is reserved (out, xp, names starting with '_', and the "
                f"builtins the generated fronts use: {', '.join(sorted(_SOURCE_NAMES - {'out'}))})"
            )
        if p.name not in hints:
            raise ArgumentTypeError(f"{name}: parameter '{p.name}' of the meta function has no annotation")
        hint = _tensorize(hints[p.name])
        category, optional = _classify(name, p.name, hint)
        if p.default is not p.empty:
            _check_default(name, p.name, hint, category, optional, p.default)
        annotation = _canonical_annotation(hint, category, optional)
        params.append(
            Param(
                p.name,
                category,
                p.kind == p.KEYWORD_ONLY,
                p.default,
                optional,
                annotation,
            )
        )
    if not params or params[0].category not in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST):
        raise ArgumentTypeError(f"{name}: the first parameter of the meta function must be a Tensor (or a tensor list)")
    plan, plan_hint = _plan_of(hints.get("return"))
    if plan is not None and any(p.name == "plan" for p in params):
        raise ArgumentTypeError(
            f"{name}: parameter name 'plan' is reserved in an op whose meta function returns a PlannedSpec "
            "(its kernels take the plan under that name)"
        )
    return OpSchema(name, tuple(params), plan, plan_hint)


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


def _plan_of(hint: Any) -> tuple[str | None, Any]:
    """(annotation text, resolved type) of ``X`` in a return annotation ``PlannedSpec[X]``; (None, None) for
    any other return annotation (``TensorSpec`` or none: the op has no plan)."""
    if hint is PlannedSpec:
        return "Any", Any
    if typing.get_origin(hint) is not PlannedSpec:
        return None, None
    (plan,) = typing.get_args(hint)
    return plan_text(plan), plan


def _tensorize(hint: Any) -> Any:
    """``hint`` with ``TensorMeta`` (a meta function's read-only view of a tensor) replaced by ``Tensor``: the
    schema, and so every variant, takes Tensors either way."""
    if hint is TensorMeta:
        return Tensor
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if not args or origin is typing.Literal:
        return hint
    new = tuple(a if a is Ellipsis else _tensorize(a) for a in args)
    if new == args:
        return hint
    if origin is Union or origin is types.UnionType:
        return Union[new]  # noqa: UP007  (built from a tuple)
    return origin[new if len(new) > 1 else new[0]]


def _canonical_annotation(hint: Any, category: str, optional: bool) -> str:
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


def _check_default(op: str, name: str, hint: Any, category: str, optional: bool, default: object) -> None:
    """A default must fit its annotation where the front relies on it: None only for ``| None``, tensors
    default to None only, a ``Literal`` default is one of its values."""
    if default is None:
        if not optional:
            raise ArgumentTypeError(f"{op}: parameter '{name}' defaults to None but its annotation has no '| None'")
        return
    if category in (TENSOR, TENSOR_LIST):
        raise ArgumentTypeError(f"{op}: parameter '{name}' is a tensor parameter; its default can only be None")
    if typing.get_origin(hint) is typing.Literal and default not in typing.get_args(hint):
        raise ArgumentTypeError(
            f"{op}: the default {default!r} of parameter '{name}' is not one of {list(typing.get_args(hint))}"
        )


def check_identifier(op: str, arg: str, name: object) -> str:
    """``name`` if it is a plain, non-keyword, non-dunder ASCII Python identifier; else ValueError naming op/arg.

    ASCII only: Python's NFKC normalisation makes non-ASCII look-alikes (fullwidth letters, ligatures) the same
    identifier as their ASCII forms, so they could sneak past a reserved-name check.
    """
    if (
        not isinstance(name, str)
        or not name.isascii()
        or not name.isidentifier()
        or keyword.iskeyword(name)
        or name.startswith("__")
    ):
        raise ArgumentValueError(f"{op}: argument '{arg}' must be a plain ASCII identifier, got {name!r}")
    return name


def check_op_name(op: str, name: object) -> str:
    """``name`` if it can name an op: a plain ASCII identifier (:func:`check_identifier`) that does not start
    with ``_`` (the generated fronts' globals do) and is not ``out`` or a builtin the fronts call.

    Raises:
        ValueError: otherwise, naming ``op`` (the defining function) and the bad name.
    """
    check_identifier(op, "name", name)
    assert isinstance(name, str)
    if name.startswith("_") or name in _SOURCE_NAMES:
        raise ArgumentValueError(
            f"{op}: argument 'name' must not start with '_' or be one of {sorted(_SOURCE_NAMES)}, got {name!r}"
        )
    return name


# --- the registry of ops --------------------------------------------------------------------------------

_ops: dict[str, StructuredOp] = {}


def variant(name: str, kind: str) -> Callable[..., Tensor]:
    """The generated ``kind`` (``"functional"`` or ``"inplace"``) variant of the op ``name``.

    Raises:
        KeyError: no op of that name, or it has no such variant.
    """
    op = _ops[name]
    fn = op.functional if kind == "functional" else op.inplace if kind == "inplace" else None
    if fn is None:
        raise KeyError(f"op {name!r} has no {kind} variant")
    return fn


_bindings: dict[tuple[str, str, DispatchKey], Callable[..., Tensor]] = {}


def bound_variant(name: str, kind: str, key: DispatchKey, cls: type[Tensor]) -> Callable[..., Tensor]:
    """The device binding of the op ``name``'s ``kind`` variant for ``key`` (e.g. ``devtensor.cpu.add``):
    tensors must be ``cls`` instances (refined), and dispatch skips computing the key. Compiled on first use.

    Raises:
        KeyError: no op of that name, or no such variant.
    """
    cache_key = (name, kind, key)
    fn = _bindings.get(cache_key)
    if fn is None:
        op = _ops[name]
        if kind == "inplace" and op.inplace is None:
            raise KeyError(f"op {name!r} has no inplace variant")
        fn = _bindings[cache_key] = _generate(op, kind, (key, cls))
    return fn


def binding_attr(device: str, name: str) -> Callable[..., Tensor]:
    """``devtensor.<device>.<name>``: the binding of op ``name`` (or of its inplace variant for ``name_``).

    Raises:
        AttributeError: no such op (as a module attribute lookup does).
    """
    from devtensor.backends import backend_for
    from devtensor.device import Device

    key = Device(device).key
    cls = backend_for(Device(device) if device != "cuda" else Device("cuda", 0)).tensor_class
    if name in _ops:
        return bound_variant(name, "functional", key, cls)
    if name.endswith("_") and name[:-1] in _ops and _ops[name[:-1]].inplace is not None:
        return bound_variant(name[:-1], "inplace", key, cls)
    raise AttributeError(f"module 'devtensor.{device}' has no attribute {name!r}")


class KernelRegistrar:
    """Registers impls of the op ``op_name``: ``registrar.cpu(fn)`` / ``registrar.cuda(fn)`` (decorators).

    The generated ``kernel_signatures`` modules subclass it per op with typed ``cpu``/``cuda`` signatures, so
    mypy checks each impl against the op's schema (tensor parameters refined to the key's tensor type, the
    output a ConstOut). At run time registration goes through :meth:`StructuredOp.register_kernel`.
    """

    __slots__ = ("op_name",)

    def __init__(self, op_name: str) -> None:
        self.op_name = op_name

    def cpu(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Register ``fn`` as the CPU impl; returns it."""
        _ops[self.op_name].register_kernel(DispatchKey.CPU, fn)
        return fn

    def cuda(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Register ``fn`` as the CUDA impl; returns it."""
        _ops[self.op_name].register_kernel(DispatchKey.CUDA, fn)
        return fn

    def xp(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Register ``fn`` (first parameter ``xp``, the array module) as the CPU and the CUDA impl; returns it."""
        _ops[self.op_name].impl(DispatchKey.CPU, DispatchKey.CUDA)(fn)
        return fn


def remove_op(name: str) -> StructuredOp:
    """Undefine the op ``name``: remove it from the registry and its methods from Tensor; returns it.

    Calls through references to its variants still work (they keep their table); new lookups do not find it.

    Raises:
        KeyError: no op of that name.
    """
    op = _ops.pop(name)
    for cached in [k for k in _bindings if k[0] == name]:
        del _bindings[cached]
    # The device binding modules (devtensor.cpu, devtensor.cuda) keep resolved bindings as module attributes.
    for module_name in ("devtensor.cpu", "devtensor.cuda"):
        module = sys.modules.get(module_name)
        if module is not None:
            for attr in (name, name + "_"):
                module.__dict__.pop(attr, None)
    if op.method:
        for attr, fn in ((name, op.functional), (name + "_", op.inplace)):
            if fn is not None and Tensor.__dict__.get(attr) is fn:
                delattr(Tensor, attr)
    return op


def all_ops() -> list[StructuredOp]:
    """Every structured op defined so far, in definition order."""
    return list(_ops.values())


class StructuredOp:
    """An op defined by a meta function and impls per dispatch key; holds its generated variants.

    Attributes:
        name: the op name (``"add"``).
        meta: the meta function ``meta(*args) -> (shape, dtype)``.
        schema: the :class:`OpSchema` derived from ``meta``'s annotations.
        table: the :class:`~devtensor.dispatcher.KernelTable` (kernels per key, cached handlers).
        functional: the generated functional+out variant ``name(..., out=None)``.
        inplace: the generated inplace variant ``name_(self, ...)``, or None when the op has none.
        elementwise: whether an output may be exactly one of the inputs (same memory and strides).
    """

    __slots__ = (
        "doc",
        "elementwise",
        "functional",
        "inplace",
        "meta",
        "method",
        "module",
        "name",
        "schema",
        "table",
    )

    def __init__(
        self,
        name: str,
        meta: Callable[..., TensorSpec | PlannedSpec[Any]],
        *,
        inplace: bool = True,
        method: bool = True,
        elementwise: bool = False,
        doc: str | None = None,
        schema: OpSchema | None = None,
    ) -> None:
        if name in _ops:
            raise ArgumentValueError(f"structured_op: an op named {name!r} is defined already (remove_op it first)")
        self.name = name
        # Typed as returning a TensorSpec for the readers that take shape and dtype from it (``[0]``, ``[1]``): a
        # PlannedSpec starts with the same two fields.
        self.meta: Callable[..., TensorSpec] = typing.cast("Callable[..., TensorSpec]", meta)
        # An explicit schema (e.g. parsed from a schema string) replaces the one derived from meta's annotations.
        self.schema = schema if schema is not None else schema_from_meta(name, meta)
        self.table = KernelTable(name, self)
        self.elementwise = elementwise
        self.method = method
        self.doc = doc if doc is not None else (meta.__doc__ or "")
        #: The module that defined the op (its meta function's): codegen writes declarations per package.
        self.module: str = getattr(meta, "__module__", None) or "__main__"
        self.functional: Callable[..., Tensor] = _generate(self, "functional")
        self.inplace: Callable[..., Tensor] | None = None
        if inplace:
            if self.schema.params[0].category not in (TENSOR, TENSOR_OR_SCALAR):
                raise ArgumentTypeError(f"{name}: an inplace variant needs a tensor first parameter")
            self.inplace = _generate(self, "inplace")
        if method:
            setattr(Tensor, name, self.functional)
            if self.inplace is not None:
                setattr(Tensor, name + "_", self.inplace)
        _ops[name] = self

    def impl(self, *keys: DispatchKey | str) -> Callable[[Callable[..., None]], Callable[..., None]]:
        """Decorator registering the impl for each of ``keys`` (DispatchKeys, or device types such as ``"cpu"``).

        The impl takes the op's parameters (same names, same positional/keyword kinds; tensors refined to the
        key's type), then, when the meta function returns a :class:`PlannedSpec`, a keyword-only ``plan`` (the
        spec's plan), then a keyword-only ``out`` (a ConstOut); it writes the result into ``out.array`` and
        returns None. It must do any data-dependent check before its first write.

        An impl whose first parameter is named ``xp`` serves several keys with one body: it receives the key's
        array module first (see :func:`bind_array_module`), e.g. ``@op.impl("cpu", "cuda")``.

        Raises:
            TypeError: the impl's parameters do not match the schema; a key that is not a DispatchKey or str.
            ValueError: no key given, or an unknown device type.
        """
        if not keys:
            raise ArgumentValueError(f"{self.name}.impl: give at least one dispatch key or device type")
        resolved = [_key_of(key) for key in keys]

        def register(fn: Callable[..., None]) -> Callable[..., None]:
            takes_xp = _check_impl_signature(self, fn, xp_allowed=True)
            for key in resolved:
                self.table.register(key, bind_array_module(key, fn) if takes_xp else fn)
            return fn

        return register

    def register_kernel(self, key: DispatchKey | str, fn: Callable[..., None]) -> None:
        """Register ``fn`` as the impl for ``key`` (replacing any); see :meth:`impl` (``xp`` impls included)."""
        resolved = _key_of(key)
        takes_xp = _check_impl_signature(self, fn, xp_allowed=True)
        self.table.register(resolved, bind_array_module(resolved, fn) if takes_xp else fn)

    def __repr__(self) -> str:
        return f"<structured op {self.name}>"


def structured_op(
    name: str | None = None,
    *,
    inplace: bool = True,
    method: bool = True,
    elementwise: bool = False,
) -> Callable[[Callable[..., TensorSpec | PlannedSpec[Any]]], StructuredOp]:
    """Decorator: define a structured op from its meta function; returns the :class:`StructuredOp`.

    Args:
        name: the op name (default: the meta function's name).
        inplace: generate the inplace variant ``name_``.
        method: attach ``name`` (and ``name_``) as Tensor methods.
        elementwise: the op is elementwise, so an output may be exactly one of its inputs.
    Raises:
        ValueError: a bad or duplicate name.  TypeError: an unsupported meta signature.
    """

    def define(meta: Callable[..., TensorSpec | PlannedSpec[Any]]) -> StructuredOp:
        return StructuredOp(
            name or meta.__name__,
            meta,
            inplace=inplace,
            method=method,
            elementwise=elementwise,
        )

    return define


def _key_of(key: DispatchKey | str) -> DispatchKey:
    """A dispatch key from a DispatchKey, a key name (``"CPU"``, ``"CUDA"``, ``"Meta"``) or a device type
    (``"cpu"``, ``"cuda"``, an out-of-tree one)."""
    if isinstance(key, DispatchKey):
        return key
    if isinstance(key, str):
        named = DispatchKey._interned.get(key)
        return named if named is not None else Device(key).key
    raise ArgumentTypeError(f"impl: argument 'key' must be a DispatchKey or a device type, got {key!r}")


def _check_impl_signature(op: StructuredOp, fn: Callable[..., None], xp_allowed: bool = False) -> bool:
    """Check ``fn``'s parameters against the op's schema: the meta function's names and kinds, then a
    keyword-only ``plan`` for an op with a plan, then a keyword-only ``out``; with ``xp_allowed``, optionally
    preceded by a positional ``xp`` (the array module). Returns whether ``fn`` takes ``xp``.

    Raises:
        TypeError: another parameter list, naming the op, the impl, and what was expected.
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        raise ArgumentTypeError(f"{op.name}: impl {fn!r} has no inspectable signature") from e
    got = [(p.name, p.kind == p.KEYWORD_ONLY) for p in sig.parameters.values()]
    takes_xp = xp_allowed and got[:1] == [("xp", False)]
    want = [(p.name, p.kw_only) for p in op.schema.params]
    if op.schema.plan is not None:
        want.append(("plan", True))
    want.append(("out", True))
    if takes_xp:
        want.insert(0, ("xp", False))
    if got != want:
        plan = ", keyword-only 'plan'" if op.schema.plan is not None else ""
        xp = "; optionally 'xp' first, for an impl of several keys" if xp_allowed and not takes_xp else ""
        raise ArgumentTypeError(
            f"{op.name}: impl {getattr(fn, '__qualname__', fn)!r} has parameters ({_fmt_params(got)}), expected "
            f"({_fmt_params(want)}) (names and kinds of the meta function{plan}, plus keyword-only 'out'{xp}; "
            "* marks keyword-only)"
        )
    return takes_xp


def bind_array_module(key: DispatchKey, fn: Callable[..., None]) -> Callable[..., None]:
    """``fn`` (an impl whose first parameter is ``xp``) as the handler for ``key``: called with the key's array
    module first. CPU: ``numpy``, bound once (``functools.partial``: no extra Python frame per call). Every
    other key: its backend's ``xp`` (:func:`devtensor.backends.backend_for_key`), read at each call, so CUDA
    gets the ``cupy`` module of that moment (:func:`devtensor.backends.cupy_module`; nothing of it is cached)
    and an out-of-tree backend its own array module (``numpy`` for a NumPy-backed one).
    """
    if key is DispatchKey.CPU:
        import numpy

        return functools.partial(fn, numpy)
    found: list[Any] = []

    def handler(*args: Any, **kwargs: Any) -> None:
        # The backend is looked up on first use: a key's backend may be registered after its kernels.
        if not found:
            from devtensor.backends import backend_for_key

            found.append(backend_for_key(key))
        fn(found[0].xp, *args, **kwargs)

    return handler


def _fmt_params(params: list[tuple[str, bool]]) -> str:
    return ", ".join(f"{'*' if kw else ''}{n}" for n, kw in params)


# --- the common code the generated fronts call -------------------------------------------------------------


def _bad_type(op: str, arg: str, value: object, expected: str) -> typing.NoReturn:
    raise ArgumentTypeError(f"{op}: argument '{arg}' must be {expected}, got {type(value).__name__} {_short(value)}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _mismatch(op: str, named: Sequence[tuple[str, Any]]) -> typing.NoReturn:
    seen: list[str] = []
    for arg, value in named:
        if isinstance(value, Tensor):
            seen.append(f"{value.device} ({arg})")
        elif isinstance(value, (list, tuple)):
            seen.extend(f"{v.device} ({arg}[{i}])" for i, v in enumerate(value) if isinstance(v, Tensor))
    raise DeviceMismatchError(
        f"{op}: expected all tensors to be on the same device, but found tensors on {', '.join(seen)}"
    )


def _alloc_failed(op: str, spec: TensorSpec, error: ValueError) -> typing.NoReturn:
    """A result NumPy cannot allocate (too many elements for the address space, too many dims)."""
    raise ArgumentValueError(f"{op}: cannot allocate the result of shape {tuple(spec[0])}: {error}") from None


# Shapes already validated by _checked_spec (tuples of non-negative Python ints), bounded; and the dtypes a
# meta function may return as they are.
_SPEC_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {}
_SPEC_DTYPES: Final = SUPPORTED


def _checked_spec(op: str, spec: object) -> TensorSpec:
    """A custom op's meta result, validated: ``(shape, dtype)`` with a tuple of non-negative Python ints and a
    supported dtype (a user meta function may return anything; built-in ones are trusted)."""
    if not isinstance(spec, tuple) or len(spec) != 2:
        raise ArgumentTypeError(f"{op}: the meta function must return (shape, dtype), got {spec!r}")
    raw_shape, raw_dtype = spec
    try:
        shape = tuple(operator.index(d) for d in raw_shape)
    except TypeError:
        raise ArgumentTypeError(f"{op}: the meta function returned a shape that is not ints: {raw_shape!r}") from None
    if any(d < 0 for d in shape):
        raise ArgumentValueError(f"{op}: the meta function returned a negative dimension: {shape}")
    if raw_dtype is None:
        raise ArgumentTypeError(f"{op}: the meta function returned no dtype")
    if len(_SPEC_SHAPES) >= 4096:
        _SPEC_SHAPES.clear()
    _SPEC_SHAPES[shape] = shape
    return (shape, to_dtype(raw_dtype, op=op, arg="the meta function's dtype"))


def _checked_planned_spec(op: str, spec: object) -> PlannedSpec[Any]:
    """A custom op's meta result when its meta is annotated ``-> PlannedSpec[...]``: a PlannedSpec (or a
    ``(shape, dtype, plan)`` tuple) whose shape and dtype pass :func:`_checked_spec`."""
    if not isinstance(spec, tuple) or len(spec) != 3:
        raise ArgumentTypeError(f"{op}: the meta function must return a PlannedSpec(shape, dtype, plan), got {spec!r}")
    shape, dtype = _checked_spec(op, (spec[0], spec[1]))
    return PlannedSpec(shape, dtype, spec[2])


def _not_refined(op: str, arg: str, value: object, cls: type[Tensor]) -> typing.NoReturn:
    if isinstance(value, Tensor):
        raise DeviceMismatchError(
            f"{op}: argument '{arg}' must be a {cls.__name__} (this is a device binding), got a tensor on "
            f"{value.device}"
        )
    raise ArgumentTypeError(f"{op}: argument '{arg}' must be a {cls.__name__}, got {type(value).__name__}")


def _no_tensor(op: str, lists: tuple[str, ...] = ()) -> typing.NoReturn:
    if lists:
        names = " or ".join(f"'{n}'" for n in lists)
        raise ArgumentValueError(f"{op}: argument {names} must be a non-empty list of Tensors")
    raise ArgumentTypeError(f"{op}: expected at least one Tensor argument, got only Python numbers")


def _list_device(op: str, arg: str, value: object, dev: Device | None, first: Tensor | None) -> tuple[Any, Any]:
    if not isinstance(value, (list, tuple)):
        _bad_type(op, arg, value, "a list or tuple of Tensors")
    for i, t in enumerate(value):
        if not isinstance(t, Tensor):
            _bad_type(op, f"{arg}[{i}]", t, "a Tensor")
        if dev is None:
            dev, first = t._device, t
        elif t._device is not dev:
            raise DeviceMismatchError(
                f"{op}: expected all tensors to be on the same device, but found {dev} and {t._device} ({arg}[{i}])"
            )
    return dev, first


def _flat_tensors(args: Sequence[Any]) -> list[Tensor]:
    found: list[Tensor] = []
    for a in args:
        if isinstance(a, Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(t for t in a if isinstance(t, Tensor))
    return found


def _check_writable(op: str, arg: str, t: Tensor) -> None:
    if t._backend.has_data and not t._backend.writeable(t._array):
        raise ReadOnlyError(
            f"{op}: argument '{arg}' is read-only (it wraps read-only memory, e.g. a non-writeable NumPy array)"
        )


def _check_overlap(op: str, arg: str, out: Tensor, inputs: Sequence[Any], elementwise: bool) -> None:
    """Partial overlap between ``out`` and any input is an error; exact aliasing only for elementwise ops."""
    root = out._storage[1]
    for x in inputs:
        if isinstance(x, Tensor):
            if x._storage[1] is root:
                _check_pair(op, arg, out, x, elementwise)
        elif isinstance(x, (list, tuple)):
            _check_overlap(op, arg, out, x, elementwise)


def _check_pair(op: str, arg: str, out: Tensor, x: Tensor, elementwise: bool) -> None:
    backend = out._backend
    if x is out or backend.same_layout(x._array, out._array):
        if elementwise:
            return
        raise MemoryOverlapError(
            f"{op}: argument '{arg}' is also an input; this op cannot write into one of its inputs"
        )
    if backend.shares_memory(x._array, out._array):
        raise MemoryOverlapError(
            f"{op}: unsupported operation: some elements of an input and of the written-to tensor '{arg}' "
            "refer to a single memory location (partial overlap); call .clone() on the input first"
        )


def _prepare_inplace(op: str, self: Tensor, spec: TensorSpec, others: Sequence[Any], elementwise: bool) -> None:
    """PyTorch's inplace rules: the result shape equals ``self.shape`` (self never broadcasts), the result
    dtype casts to ``self.dtype`` (same_kind), self is writable, has no internal overlap, and does not
    partially overlap another input (``others``)."""
    if spec[0] != self._shape:
        raise ShapeError(
            f"{op}: output with shape {list(self._shape)} doesn't match the broadcast shape {list(spec[0])} "
            "(an inplace op never broadcasts self)"
        )
    arr = self._array
    if spec[1] is not arr.dtype:
        check_cast(op, "self", spec[1], arr.dtype)
    if self._backend.has_data:
        if not self._wok:
            _check_writable(op, "self", self)
            check_no_internal_overlap(op, "self", self)
            self._wok = True
        root = self._storage[1]
        for x in others:
            if isinstance(x, Tensor):
                if x._storage[1] is root and x is not self:
                    _check_pair(op, "self", self, x, elementwise)
            elif isinstance(x, (list, tuple)):
                _check_overlap(op, "self", self, [t for t in x if t is not self], elementwise)


def _prepare_out(op: str, out: Tensor, spec: TensorSpec, inputs: Sequence[Any], elementwise: bool) -> Any:
    """PyTorch's out rules; returns the array to write: ``out``'s own, or a new one when out must be resized
    (the caller swaps it in after the impl succeeded)."""
    arr = out._array
    if spec[1] is not arr.dtype:
        check_cast(op, "out", spec[1], arr.dtype)
    shape = spec[0]
    if out._shape != shape:
        backend = out._backend
        root = out._storage[1]
        for x in _flat_tensors(inputs):
            if x is out or (x._storage[1] is root and backend.shares_memory(x._array, arr)):
                raise ShapeError(
                    f"{op}: argument 'out' of shape {list(out._shape)} is also an input and would need a resize "
                    f"to {list(shape)}; an out that is also an input is never resized"
                )
        if out._storage[2]:
            # A view, or a tensor with views: resizing would give out new memory that the others do not see
            # (PyTorch resizes the shared storage in place instead). Refused; nothing has changed yet.
            raise ShapeError(
                f"{op}: argument 'out' of shape {list(out._shape)} shares its memory with views and cannot be "
                f"resized to {list(shape)}; pass an out of that shape"
            )
        _check_writable(op, "out", out)
        guard = backend.guard(out._device)
        try:
            if guard is None:
                return backend.alloc(shape, arr.dtype)
            with guard:
                return backend.alloc(shape, arr.dtype)
        except ValueError as e:
            _alloc_failed(op, spec, e)
    if out._backend.has_data:
        if not out._wok:
            _check_writable(op, "out", out)
            check_no_internal_overlap(op, "out", out)
            out._wok = True
        _check_overlap(op, "out", out, inputs, elementwise)
    return arr


def _swap_storage(op: str, out: Tensor, array: Any) -> None:
    """Give ``out`` the resized ``array`` (after the impl succeeded): a new storage that carries the old version
    forward. Resizing an out that had elements warns first (PyTorch's deprecation), so a warning turned into an
    error leaves ``out`` as it was."""
    if out._array.size:
        warnings.warn(
            f"{op}: an output with one or more elements was resized since it had shape {list(out._shape)}, "
            f"which does not match the required output shape {list(array.shape)}. Resizing a non-empty out is "
            "deprecated (as in PyTorch): pass an out with no elements or of the right shape.",
            UserWarning,
            stacklevel=3,
        )
    out._storage = new_storage(array, out._storage[0])
    out._array = array
    out._shape = array.shape
    out._dtype = array.dtype
    out._wok = True


# --- source generation -------------------------------------------------------------------------------------

_COMMON: Final[dict[str, Any]] = {
    "_Tensor": Tensor,
    "_SCALARS": SCALAR_TYPES,
    "_META_ONLY": META_ONLY,
    "_new": object.__new__,
    "_CO": new_const_out,
    "_COI": InplaceOut,
    "_co_array": set_array,
    "_bad_type": _bad_type,
    "_mismatch": _mismatch,
    "_no_tensor": _no_tensor,
    "_not_refined": _not_refined,
    "_alloc_failed": _alloc_failed,
    "_checked_spec": _checked_spec,
    "_checked_planned_spec": _checked_planned_spec,
    "_PlannedSpec": PlannedSpec,
    "_SPEC_SHAPES": _SPEC_SHAPES,
    "_SPEC_DTYPES": _SPEC_DTYPES,
    "_list_device": _list_device,
    "_prepare_out": _prepare_out,
    "_prepare_inplace": _prepare_inplace,
    "_swap_storage": _swap_storage,
    "_check_pair": _check_pair,
    "_modes": modes.ACTIVE,
    "_run_modes": modes.run_modes,
    "_check_writable": _check_writable,
    "_check_overlap": _check_overlap,
}


def _signature_text(params: Sequence[Param], with_out: bool) -> str:
    parts: list[str] = []
    star = False
    for p in params:
        if p.kw_only and not star:
            parts.append("*")
            star = True
        parts.append(f"{p.name}=_d_{p.name}" if p.has_default else p.name)
    if with_out:
        if not star:
            parts.append("*")
        parts.append("out=None")
    return ", ".join(parts)


def _call_text(params: Sequence[Param]) -> str:
    return ", ".join(f"{p.name}={p.name}" if p.kw_only else p.name for p in params)


def _flag(i: int) -> str:
    """The local of the fronts that records whether the ``i``-th parameter (a non-optional TensorOrScalar) got a
    tensor: the overlap checks after the meta function test it instead of calling isinstance again."""
    return f"_k{i}"


def _arg_checks(params: Sequence[Param], all_names: str, first_is_self: bool, refined: bool = False) -> list[str]:
    """Argument checks; ``refined`` (device bindings): tensors must be instances of exactly ``_Cls``. They set
    ``_dev`` (the device of the first tensor; None when there is none yet) and ``_t0`` (that tensor), except
    after a first ``self`` (``first_is_self``), which sets ``_dev`` alone."""
    lines: list[str] = []
    # What is known of ``_dev`` before each parameter: "unset" (nothing yet), "maybe" (None or a device), "set".
    # Known states spare tests: the first tensor parameter sets ``_dev`` and ``_t0`` without testing them.
    state = "set" if first_is_self else "unset"
    first = params[0]
    if state == "unset" and (first.optional or first.category not in (TENSOR, TENSOR_OR_SCALAR)):
        lines += ["    _dev = None", "    _t0 = None"]
        state = "maybe"
    for i, p in enumerate(params):
        n = p.name
        body: list[str] = []
        is_tensor = f"type({n}) is _Cls" if refined else f"isinstance({n}, _Tensor)"
        bad_tensor = (
            f"_not_refined(_name, '{n}', {n}, _Cls)" if refined else f"_bad_type(_name, '{n}', {n}, 'a Tensor')"
        )
        if i == 0 and first_is_self:
            body += [
                f"if not {is_tensor}: {bad_tensor}",
                f"_dev = {n}._device",
            ]
        elif p.category == TENSOR or p.category == TENSOR_OR_SCALAR:
            flagged = p.category == TENSOR_OR_SCALAR and not p.optional
            body.append(f"if {is_tensor}:")
            if flagged:
                body.append(f"    {_flag(i)} = True")
            if state == "set":
                body.append(f"    if {n}._device is not _dev: _mismatch(_name, {all_names})")
            elif state == "unset":
                body += [f"    _dev = {n}._device", f"    _t0 = {n}"]
            else:
                body += [
                    "    if _dev is None:",
                    f"        _dev = {n}._device",
                    f"        _t0 = {n}",
                    f"    elif {n}._device is not _dev: _mismatch(_name, {all_names})",
                ]
            if p.category == TENSOR:
                body.append(f"else: {bad_tensor}")
                if not p.optional:
                    state = "set"
            else:
                bad_value = bad_tensor if refined else f"_bad_type(_name, '{n}', {n}, 'a Tensor or a Python number')"
                if flagged:
                    body += ["else:", f"    {_flag(i)} = False"]
                    if state == "unset":
                        body += ["    _dev = None", "    _t0 = None"]
                    body.append(f"    if type({n}) not in _SCALARS: {bad_value}")
                else:
                    body.append(f"elif type({n}) not in _SCALARS: {bad_value}")
                if state == "unset":
                    state = "maybe"
        elif p.category == TENSOR_LIST:
            body.append(f"_dev, _t0 = _list_device(_name, '{n}', {n}, _dev, _t0)")
            if refined:
                body.append(f"for _x in {n}: type(_x) is _Cls or _not_refined(_name, '{n}', _x, _Cls)")
        elif p.category == SCALAR:
            check = f"type({n}) not in _SCALARS"
            if p.has_default and type(p.default) in SCALAR_TYPES:
                # Most calls leave it at its default, a valid number: one identity test instead of the type test.
                check = f"{n} is not _d_{n} and {check}"
            body.append(f"if {check}: _bad_type(_name, '{n}', {n}, 'a Python number')")
        if body and p.optional and not (i == 0 and first_is_self):
            lines.append(f"    if {n} is not None:")
            lines += ["        " + b for b in body]
        else:
            lines += ["    " + b for b in body]
    return lines


def _guarded(body: list[str], indent: str) -> list[str]:
    """``body`` run directly when the device needs no guard, else inside ``with _dev._guard():``."""
    lines = [f"{indent}if _dev._guard is None:"]
    lines += [f"{indent}    {b}" for b in body]
    lines += [f"{indent}else:", f"{indent}    with _dev._guard():"]
    lines += [f"{indent}        {b}" for b in body]
    return lines


def _impl_call(call: str, array: str, target: str | None = None, inplace: bool = False) -> list[str]:
    """Build the ConstOut over ``array`` (a fresh view; an :class:`InplaceOut` for the ``inplace`` variant) and
    call the handler with it. For an existing ``target`` (out, inplace self), memory made read-only behind
    devtensor's back after its writability was checked and cached makes NumPy refuse the write before writing:
    that surfaces as ReadOnlyError (a try costs nothing in CPython 3.11 when nothing is raised)."""
    call_line = f"    _h({call}, out=_co)"
    if target is None:
        body = [call_line]
    else:
        body = [
            "    try:",
            "    " + call_line,
            "    except ValueError:",
            f"        _check_writable(_name, {target!r}, {target})",
            "        raise",
            # NumPy reports overflow and invalid values (warnings made errors, np.errstate(...='raise')) after
            # writing: the data changed, so the version counter does too.
            "    except (Warning, FloatingPointError):",
            f"        {target}._storage[0] += 1"
            if array == f"{target}._array"
            else f"        if {array} is {target}._array: {target}._storage[0] += 1",
            "        raise",
        ]
    new = "    _co = _COI()" if inplace else "    _co = _CO()"
    return ["if _h is not _META_ONLY:", new, f"    _co_array(_co, {array}.view())", *body]


def _builtin(op: StructuredOp) -> bool:
    """Ops defined inside devtensor: their meta results are trusted, not checked on every call."""
    return op.module.split(".")[0] == "devtensor"


def _overlap_lines(params: Sequence[Param], target: str, indent: str, *, skip_self: bool, first: int = 0) -> list[str]:
    """Inline overlap checks of ``target`` (storage root in ``_root``) against each tensor param (``params`` are
    the op's from index ``first`` on: the flags of :func:`_flag` are numbered by the op's parameters)."""
    op_text = "_name"
    arg = "'self'" if skip_self else "'out'"
    lines: list[str] = []
    for i, p in enumerate(params, first):
        n = p.name
        if p.category in (TENSOR, TENSOR_OR_SCALAR):
            if p.optional:
                is_tensor = f"isinstance({n}, _Tensor) and "
            elif p.category == TENSOR_OR_SCALAR:
                is_tensor = f"{_flag(i)} and "
            else:
                is_tensor = ""  # checked to be a tensor
            cond = f"{is_tensor}{n}._storage[1] is _root"
            if skip_self:
                cond += f" and {n} is not {target}"
            lines.append(f"{indent}if {cond}: _check_pair({op_text}, {arg}, {target}, {n}, _elementwise)")
        elif p.category == TENSOR_LIST:
            lines.append(f"{indent}_check_overlap({op_text}, {arg}, {target}, {n}, _elementwise)")
    if not lines:
        lines.append(f"{indent}pass")
    return lines


def _spec_check_lines(op: StructuredOp) -> list[str]:
    """The validation of a custom op's meta result (built-in ops' are trusted): a shape seen valid before is
    one dict lookup (its value is the canonical tuple of Python ints: an equal tuple of NumPy ints maps to
    it), the dtype one set lookup; anything else goes through :func:`_checked_spec`."""
    if _builtin(op):
        return []
    if op.schema.plan is not None:
        return [
            "    _s = _SPEC_SHAPES.get(_spec[0]) if type(_spec) is _PlannedSpec else None",
            "    if _s is None or _spec[1] not in _SPEC_DTYPES:",
            "        _spec = _checked_planned_spec(_name, _spec)",
            "    elif _s is not _spec[0]:",
            "        _spec = _PlannedSpec(_s, _spec[1], _spec[2])",
        ]
    return [
        "    _s = _SPEC_SHAPES.get(_spec[0]) if type(_spec) is tuple and len(_spec) == 2 else None",
        "    if _s is None or _spec[1] not in _SPEC_DTYPES:",
        "        _spec = _checked_spec(_name, _spec)",
        "    elif _s is not _spec[0]:",
        "        _spec = (_s, _spec[1])",
    ]


def _meta_lines(op: StructuredOp, variant: str) -> tuple[list[str], dict[str, Any]]:
    """The lines computing ``_spec``: the call of the meta function, or, when it offers one (meta.INLINE), its
    common case inline with the call for the rest: one Python call less per op call (a tenth of an elementwise
    op's time at small sizes). Also the globals those lines use."""
    params = op.schema.params
    call = f"    _spec = _meta({_call_text(params)})"
    offer = getattr(op.meta, INLINE, None) if op.schema.plan is None else None
    shape = [(p.name, p.category, p.kw_only, p.optional) for p in params]
    if offer is None:
        return [call], {}
    kind, state = offer
    if kind == "unary" and shape == [("self", TENSOR, False, False)]:
        return [
            "    _c = _mcache.get(self._dtype)",
            "    _spec = (self._shape, _c) if _c is not None else _meta(self)",
        ], {"_mcache": state}
    two = [("self", TENSOR_OR_SCALAR, False, False), ("other", TENSOR_OR_SCALAR, False, False)]
    alpha = [("alpha", SCALAR, True, False)]
    if kind == "binary" and (shape == two or (shape == two + alpha and params[2].default is ONE)):
        # Both tensors (the flags of the argument checks; an inplace self is one), dtypes those of the entry
        # used last, one shape, alpha at its default (the meta function checks nothing then).
        tensors = "_k1" if variant == "inplace" else "_k0 and _k1"
        alpha_test = " and alpha is _ONE" if len(shape) == 3 else ""
        return [
            "    _m = _mlast[0]",
            f"    if {tensors} and self._dtype is _m[0] and other._dtype is _m[1] and self._shape == other._shape"
            f"{alpha_test}:",
            "        _spec = (self._shape, _m[2])",
            "    else:",
            "    " + call,
        ], {"_mlast": state, "_ONE": ONE}
    return [call], {}


def _generate(
    op: StructuredOp, variant: str, binding: tuple[DispatchKey, type[Tensor]] | None = None
) -> Callable[..., Tensor]:
    """Compile the ``variant`` front of ``op``; with ``binding`` (key, refined class), the device binding: tensors
    must be of that class, and the handler is looked up for that key without computing one."""
    params = op.schema.params
    refined = binding is not None
    meta_lines, meta_names = _meta_lines(op, variant)
    key_text = "_KEY" if refined else "_dev.key"
    tensor_names = [p.name for p in params if p.category in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST)]
    call = _call_text(params) + (", plan=_spec[2]" if op.schema.plan is not None else "")
    if variant == "functional":
        fname = op.name
        inputs = "(" + "".join(f"{n}, " for n in tensor_names) + ")"
        named = "(" + "".join(f"('{n}', {n}), " for n in tensor_names) + "('out', out))"
        lines = [
            f"def {fname}({_signature_text(params, True)}):",
        ]
        lines += _arg_checks(params, named, first_is_self=False, refined=refined)
        lines += [
            "    if out is not None:",
            "        if type(out) is not _Cls: _not_refined(_name, 'out', out, _Cls)"
            if refined
            else "        if not isinstance(out, _Tensor): _bad_type(_name, 'out', out, 'a Tensor')",
            # (a tensor's device is never None: no tensor argument shows as a mismatch first)
            "        if out._device is not _dev:",
            "            if _dev is None: _no_tensor(_name, _lists)",
            "            _mismatch(_name, " + named + ")",
            "    elif _dev is None: _no_tensor(_name, _lists)",
            *meta_lines,
            *_spec_check_lines(op),
            f"    _h = _handlers.get({key_text})",
            f"    if _h is None: _h = _resolve({key_text}, str(_dev))",
            "    if out is None:",
            "        _b = _t0._backend",
        ]
        lines += _guarded(
            [
                "try:",
                "    _arr = _b.alloc(_spec[0], _spec[1])",
                "except ValueError as _e:",
                "    _alloc_failed(_name, _spec, _e)",
                *_impl_call(call, "_arr"),
            ],
            "        ",
        )
        lines += [
            "        _res = _new(_b.tensor_class)",
            "        _res._array = _arr",
            "        _res._device = _dev",
            "        _res._storage = [0, _arr, False]",
            "        _res._shape = _spec[0]",
            "        _res._dtype = _arr.dtype",
            "        _res._wok = True",
            "        return _res",
            # Fast path: out already has the result's shape and dtype and was checked writable before;
            # only the overlap with this call's inputs is left to check. Anything else takes the full rules.
            "    if out._shape != _spec[0] or _spec[1] is not out._dtype or not out._wok:",
            f"        _arr = _prepare_out(_name, out, _spec, {inputs}, _elementwise)",
            "    else:",
            "        _arr = out._array",
            "        _root = out._storage[1]",
            *_overlap_lines(params, "out", "        ", skip_self=False),
        ]
        lines += _guarded(_impl_call(call, "_arr", "out"), "    ")
        lines += [
            "    if _arr is not out._array: _swap_storage(_name, out, _arr)",
            "    out._storage[0] += 1",
            "    return out",
        ]
    else:
        fname = op.name + "_"
        first = params[0].name
        others = "(" + "".join(f"{n}, " for n in tensor_names[1:]) + ")"
        named = "(" + "".join(f"('{n}', {n}), " for n in tensor_names) + ")"
        lines = [f"def {fname}({_signature_text(params, False)}):"]
        if any(p.category == TENSOR_LIST for p in params):
            lines.append("    _t0 = None")  # read by the tensor-list check
        lines += _arg_checks(params, named, first_is_self=True, refined=refined)
        lines += [
            *meta_lines,
            *_spec_check_lines(op),
            f"    _h = _handlers.get({key_text})",
            f"    if _h is None: _h = _resolve({key_text}, str(_dev))",
            f"    if _spec[0] != {first}._shape or _spec[1] is not {first}._dtype or not {first}._wok:",
            f"        _prepare_inplace(_name, {first}, _spec, {others}, _elementwise)",
            "    else:",
            f"        _root = {first}._storage[1]",
            *_overlap_lines(params[1:], first, "        ", skip_self=True, first=1),
        ]
        lines += _guarded(_impl_call(call, f"{first}._array", first, inplace=True), "    ")
        lines += [f"    {first}._storage[0] += 1", f"    return {first}"]
    # The dispatch-mode hook: the public front hands the call to the active modes; ``_raw`` is the same
    # front without the hook, which the modes machinery calls to run the op itself.
    positional = [p.name for p in params if not p.kw_only]
    keywords = [p.name for p in params if p.kw_only] + (["out"] if variant == "functional" else [])
    args_text = "(" + "".join(n + ", " for n in positional) + ")"
    kwargs_text = "{" + ", ".join(f"{k!r}: {k}" for k in keywords) + "}"
    hook = f"    if _modes[0]: return _run_modes(_op, {variant!r}, _public, _raw, {args_text}, {kwargs_text})"
    raw_lines = [lines[0].replace(f"def {fname}(", f"def _raw_{fname}(", 1), *lines[1:]]
    lines = [lines[0], hook, *lines[1:]]
    namespace: dict[str, Any] = dict(_COMMON)
    namespace.update(meta_names)
    namespace.update(
        _name=fname,
        _meta=op.meta,
        _handlers=op.table.handlers,
        _resolve=op.table.resolve,
        _elementwise=op.elementwise,
        _lists=tuple(p.name for p in params if p.category == TENSOR_LIST),
    )
    if binding is not None:
        namespace.update(_KEY=binding[0], _Cls=binding[1])
    for p in params:
        if p.has_default:
            namespace[f"_d_{p.name}"] = p.default
    source = "\n".join(lines) + "\n"
    where = f"devtensor.{binding[0].name.lower()}" if binding is not None else "devtensor"
    code = compile(source + "\n" + "\n".join(raw_lines) + "\n", f"<{where}.{fname}>", "exec")
    exec(code, namespace)
    fn: Callable[..., Tensor] = namespace[fname]
    namespace.update(_public=fn, _raw=namespace[f"_raw_{fname}"], _op=op)
    fn.__doc__ = op.doc
    fn.__qualname__ = fname
    fn.__module__ = where
    fn.__source__ = source  # type: ignore[attr-defined]
    fn.op = op  # type: ignore[attr-defined]
    return fn
