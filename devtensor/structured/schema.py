"""The schema of an op: its parameters (:class:`Param`, :class:`OpSchema`), derived from the meta function's
signature and annotations by :func:`schema_from_meta`, and the checks on op and parameter names."""

from __future__ import annotations

import importlib
import inspect
import keyword
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, Final

from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
)
from devtensor.structured.annotations import (
    TENSOR,
    TENSOR_LIST,
    TENSOR_OR_SCALAR,
    canonical_annotation,
    check_default,
    classify,
    plan_of,
    tensorize,
)

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


#: Names reserved for parameters: ``out`` (every front's output argument) and the Python builtins the fronts used
#: when they were generated source (kept reserved, so that an op defined today stays valid should fronts be
#: generated again).
SOURCE_NAMES: Final = frozenset(
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
        "MemoryError",
    }
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

    Annotations may be postponed (``from __future__ import annotations``); see :func:`classify` for the
    supported ones. Defaults are kept as objects (the fronts bind them, never their text).

    Raises:
        TypeError: a parameter is unannotated, variadic, has a reserved name (``out``, a name starting with
            ``_``, a reserved builtin name: SOURCE_NAMES), an annotation that does not resolve or is not supported
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
        if p.name in _RESERVED or p.name in SOURCE_NAMES or p.name.startswith("_"):
            raise ArgumentTypeError(
                f"{name}: parameter name '{p.name}' is reserved (out, xp, names starting with '_', and the "
                f"builtins the generated fronts use: {', '.join(sorted(SOURCE_NAMES - {'out'}))})"
            )
        if p.name not in hints:
            raise ArgumentTypeError(f"{name}: parameter '{p.name}' of the meta function has no annotation")
        hint = tensorize(hints[p.name])
        category, optional = classify(name, p.name, hint)
        if p.default is not p.empty:
            check_default(name, p.name, hint, category, optional, p.default)
        annotation = canonical_annotation(hint, category, optional)
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
    plan, plan_hint = plan_of(hints.get("return"))
    if plan is not None and any(p.name == "plan" for p in params):
        raise ArgumentTypeError(
            f"{name}: parameter name 'plan' is reserved in an op whose meta function returns a PlannedSpec "
            "(its kernels take the plan under that name)"
        )
    return OpSchema(name, tuple(params), plan, plan_hint)


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
        error = ArgumentValueError if isinstance(name, str) else ArgumentTypeError
        raise error(f"{op}: argument '{arg}' must be a plain ASCII identifier, got {name!r}")
    return name


def check_op_name(op: str, name: object) -> str:
    """``name`` if it can name an op: a plain ASCII identifier (:func:`check_identifier`) that does not start
    with ``_`` and is not ``out`` or a reserved builtin name (SOURCE_NAMES).

    Raises:
        ValueError: otherwise, naming ``op`` (the defining function) and the bad name.
    """
    check_identifier(op, "name", name)
    assert isinstance(name, str)
    if name.startswith("_") or name in SOURCE_NAMES:
        raise ArgumentValueError(
            f"{op}: argument 'name' must not start with '_' or be one of {sorted(SOURCE_NAMES)}, got {name!r}"
        )
    return name


# --- schemas stored as data by codegen ---------------------------------------------------------------------------

#: The generated data module that carries the schemas of the built-in ops (``python -m devtensor.codegen``).
GENERATED_MODULE: Final = "devtensor._generated_schemas"


def meta_fingerprint(meta: Callable[..., Any]) -> str | None:
    """What a meta function's schema is derived from, as text, cheaply (no annotation is evaluated): parameter
    names and kinds, defaults, and the annotations as written. None when it cannot be had (not a plain
    function) or would not be stable across processes (an object address in it)."""
    code = getattr(meta, "__code__", None)
    if type(meta) is not types.FunctionType or code is None or hasattr(meta, "__wrapped__"):
        return None
    count = code.co_argcount + code.co_kwonlyargcount
    text = repr(
        (
            code.co_varnames[:count],
            code.co_posonlyargcount,
            code.co_kwonlyargcount,
            code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS),
            meta.__defaults__,
            meta.__kwdefaults__,
            meta.__annotations__,
        )
    )
    return None if " at 0x" in text else text


def schema_data(schema: OpSchema, meta: Callable[..., Any], extra: object = None) -> tuple[Any, ...] | None:
    """The schema as literal data for the generated module: ``(meta fingerprint, params, plan text, extra)``,
    each param ``(name, category, kw_only, has_default, default, optional, annotation)``; ``extra`` is a literal
    the op kind keeps beside it (a view op: whether it returns several views). None when the schema cannot be
    stored (no stable fingerprint, or a default that is not a literal)."""
    key = meta_fingerprint(meta)
    if key is None:
        return None
    params = []
    for p in schema.params:
        if p.has_default and not _is_literal(p.default):
            return None
        default = p.default if p.has_default else None
        params.append((p.name, p.category, p.kw_only, p.has_default, default, p.optional, p.annotation))
    return (key, tuple(params), schema.plan, extra)


def _is_literal(value: object) -> bool:
    if value is None or type(value) in (bool, int, float, str):
        return True
    return type(value) is tuple and all(_is_literal(v) for v in value)


def stored_schema(name: str, meta: Callable[..., Any]) -> tuple[OpSchema, Any] | None:
    """(schema, extra) of the built-in op ``name`` as the generated module stores them (see
    :func:`schema_data`), if stored for this very meta function (same :func:`meta_fingerprint`): deriving a
    schema (annotations evaluated through ``typing.get_type_hints``) is most of what defining an op costs.
    None otherwise (then derive it). The stored schema has no ``plan_hint`` (codegen derives schemas anew)."""
    try:
        module = importlib.import_module(GENERATED_MODULE)
    except ModuleNotFoundError as error:
        if error.name != GENERATED_MODULE:
            raise
        return None
    data = getattr(module, "SCHEMAS", {}).get(name)
    if data is None or data[0] != meta_fingerprint(meta):
        return None
    params = tuple(
        Param(n, category, kw_only, default if has_default else inspect.Parameter.empty, optional, text)
        for n, category, kw_only, has_default, default, optional, text in data[1]
    )
    return OpSchema(name, params, data[2], None), data[3]


def call_binder(name: str, params: Sequence[Any], *, out: bool) -> Callable[..., Any]:
    """The binding of a call to an op's parameters (``params``: its schema's), for the fronts that are closures
    (multi-output and data-dependent ops): a function with the op's signature (with ``out`` keyword-only, last,
    when ``out``) returning the arguments by name, defaults filled, and with ``out`` the pair (arguments, out).
    Python's own binding, whose errors name the op as a generated front's do (``sort() missing 1 required
    positional argument: 'self'``), at a tenth of ``inspect.Signature.bind``'s cost."""
    ns: dict[str, Any] = {}
    parts: list[str] = []
    for at, p in enumerate(params):
        if p.kw_only and "*" not in parts:
            parts.append("*")
        if p.has_default:
            ns[f"_d{at}"] = p.default
        parts.append(f"{p.name}=_d{at}" if p.has_default else p.name)
    if out:
        parts += [*(() if "*" in parts else ("*",)), "out=None"]
    names = "{" + ", ".join(f"{p.name!r}: {p.name}" for p in params) + "}"
    source = f"def {name}({', '.join(parts)}):\n    return {names + ', out' if out else names}\n"
    exec(compile(source, f"<{name} binding>", "exec"), ns)
    made: Callable[..., Any] = ns[name]
    return made
