"""devtensor.library: custom ops, out-of-tree backends, Python overrides, dispatch modes and an op checker.

The public face of the machinery the built-in ops use (:mod:`devtensor.structured`, :mod:`devtensor.dispatcher`,
:mod:`devtensor.modes`), for code outside devtensor. The RFC's promise (RFC-0005, structured kernels): "you define
a meta part and a CPU and a CUDA part, and the framework puts it all together".

Custom ops::

    from devtensor import library
    from devtensor.structured import TensorSpec

    @library.custom_op(elementwise=True)
    def softplus(self: Tensor, beta: float = 1.0, threshold: float = 20.0) -> TensorSpec:
        return self.shape, self.dtype                  # checks + (shape, dtype) of the result

    @softplus.impl("cpu")
    def _(self: CPUTensor, beta: float, threshold: float, *, out: ConstOut[CPUTensor]) -> None:
        ...                                            # write the result into out.array

    softplus.functional(x, beta=2.0)                   # functional, and with out=: the out variant
    softplus.inplace(x)                                # inplace (softplus_)

The op is a :class:`~devtensor.structured.StructuredOp`, exactly like a built-in: same generated fronts, same
common code (argument checks, dispatch key, meta, out/inplace rules, overlap checks, device guard, version
bumps). ``python -m devtensor.codegen --package mypkg --out mypkg/kernel_signatures.py`` writes typed
registration decorators for a package's ops (see :mod:`devtensor.codegen`).

Out-of-tree backends: :func:`register_backend` adds a device type, its dispatch key, a refined tensor class and
a :class:`~devtensor.backends.Backend`; :func:`register_kernel` / ``op.impl(key)`` give kernels for built-in or
custom ops; :func:`register_fallback` serves every op without one (:func:`cpu_fallback` is a ready one).

Python overrides: :func:`override` puts a Python callable above an op's kernel for one key and returns a handle
that undoes it. Dispatch modes (:class:`DispatchMode`, :class:`CountingMode`, :class:`LoggingMode`) see every op
call. :func:`check` runs samples through every variant and key, as ``torch.library.opcheck``.

Safety: every name that reaches generated source (op names, parameter names) is a validated plain ASCII
identifier (:func:`~devtensor.structured.check_op_name`); schema strings are parsed by a small tokenizer (no
``eval``/``exec``), and defaults reach the fronts as objects, never as text.
"""

from __future__ import annotations

import inspect
import logging
import re
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Final, NamedTuple, Self

import numpy as np

from devtensor import device as _device_mod
from devtensor import dispatcher, structured
from devtensor.backends import Backend, backend_for
from devtensor.backends import register_backend as _register_backend_object
from devtensor.device import Device, register_device_type
from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.modes import DispatchMode, active_modes
from devtensor.structured import (
    OTHER,
    SCALAR,
    TENSOR,
    TENSOR_LIST,
    TENSOR_OR_SCALAR,
    OpSchema,
    Param,
    StructuredOp,
    TensorSpec,
    check_identifier,
    check_op_name,
    schema_from_meta,
)
from devtensor.tensor import Tensor
from devtensor.typed.const_out import ConstOut, make_const_out

__all__ = [
    "CallRecord",
    "CheckProblem",
    "CheckReport",
    "CountingMode",
    "DispatchMode",
    "FallbackHandle",
    "KernelHandle",
    "LoggingMode",
    "OutOfTreeBackend",
    "OverrideHandle",
    "Sample",
    "active_modes",
    "check",
    "cpu_fallback",
    "custom_op",
    "get_op",
    "override",
    "parse_schema",
    "register_backend",
    "register_fallback",
    "register_kernel",
    "remove_op",
]

_log = logging.getLogger("devtensor.library")

OpLike = StructuredOp | Callable[..., Any] | str
KeyLike = DispatchKey | str | Device


# --- ops ----------------------------------------------------------------------------------------------------


def get_op(op: OpLike) -> StructuredOp:
    """The :class:`StructuredOp` for ``op``: an op, one of its generated variants (``devtensor.add``,
    ``devtensor.add_``, ``devtensor.cpu.add``), or an op name.

    Raises:
        KeyError: no structured op of that name (view ops have no kernels to override or check).
        TypeError: ``op`` is none of the above.
    """
    if isinstance(op, StructuredOp):
        return op
    if isinstance(op, str):
        for candidate in structured.all_ops():
            if candidate.name == op:
                return candidate
        raise KeyError(f"no structured op named {op!r}")
    found = getattr(op, "op", None)
    if isinstance(found, StructuredOp):
        return found
    raise ArgumentTypeError(f"expected a StructuredOp, one of its variants or an op name, got {op!r}")


#: The ops defined through :func:`custom_op` (by name): these may be replaced and removed.
_custom_ops: dict[str, StructuredOp] = {}


def _is_builtin(op: StructuredOp) -> bool:
    """An op devtensor defines itself (not through :func:`custom_op`): never replaced or removed here."""
    return _custom_ops.get(op.name) is not op and op.module.split(".")[0] == "devtensor"


def custom_op(
    name: str | None = None,
    *,
    schema: str | OpSchema | None = None,
    inplace: bool | None = None,
    method: bool = False,
    elementwise: bool = False,
    replace: bool = False,
    doc: str | None = None,
    module: str | None = None,
) -> Callable[[Callable[..., TensorSpec]], StructuredOp]:
    """Decorator: define an op from user code with its meta function; returns the :class:`StructuredOp`.

    The meta function takes the op's parameters and returns ``(shape, dtype)`` of the result, checking the
    arguments first (errors name the op, the argument and the value). Its annotations are the schema (resolved
    with ``typing.get_type_hints``, so ``from __future__ import annotations`` works): ``Tensor``, ``Tensor |
    None``, ``Sequence[Tensor]`` / ``list[Tensor]``, ``TensorOrScalar``, ``Scalar``, ``int``, ``float``, ``bool``,
    ``str``, ``Literal[...]``, ``Sequence[int]`` / ``tuple[int, ...]``, ``DTypeLike``, each optionally ``| None``,
    with defaults. Or give ``schema`` as a string, PyTorch style (see :func:`parse_schema`); the meta function
    must then have the schema's parameter names and kinds (its annotations are not read).

    Register impls with ``op.impl("cpu")`` / ``op.impl("cuda")`` (or :func:`register_kernel`); call the op
    through ``op.functional`` (with ``out=`` for the out variant) and ``op.inplace``.

    Args:
        name: the op name (default: the schema string's, else the meta function's ``__name__``).
        schema: a schema string or :class:`OpSchema`, instead of the meta's annotations.
        inplace: generate the inplace variant ``name_`` (default: when the first parameter is a Tensor).
        method: attach ``name`` (and ``name_``) as Tensor methods (default False: a user package should not
            change the Tensor class unless it asks to).
        elementwise: an output may be exactly one of the inputs (same memory and strides), as ``add``'s.
        replace: redefine an op of that name defined by user code (built-in ops cannot be replaced: override
            their kernels with :func:`override` instead).
        doc: the docstring of the variants (default: the meta function's).
        module: the module the op belongs to (``op.module``; default: the module applying the decorator).
            ``python -m devtensor.codegen --package P`` declares the ops of the modules in package ``P``.
    Raises:
        ValueError: a bad name (not a plain ASCII identifier, a keyword, starting with ``_``, or ``out`` and the
            other reserved names); an op or view op of that name exists (and ``replace`` is False, or it is
            built-in); a Tensor method would shadow an existing Tensor attribute; a malformed schema string.
        TypeError: an unsupported annotation (the message names the parameter and the nearest supported type),
            an unannotated or variadic parameter, a meta signature that does not match ``schema``.
    """

    def define(meta: Callable[..., TensorSpec]) -> StructuredOp:
        # The op belongs to the module that defines it (the decorator's caller), which need not be the meta
        # function's (a meta made by a helper such as devtensor.meta.binary_ufunc_meta): codegen and
        # ``--package`` select ops by this module.
        owner = module if module is not None else sys._getframe(1).f_globals.get("__name__", "__main__")
        return _define(name, meta, schema, inplace, method, elementwise, replace, doc, str(owner))

    return define


def _define(
    name: str | None,
    meta: Callable[..., TensorSpec],
    schema: str | OpSchema | None,
    inplace: bool | None,
    method: bool,
    elementwise: bool,
    replace: bool,
    doc: str | None,
    module: str,
) -> StructuredOp:
    if not callable(meta):
        raise ArgumentTypeError(f"custom_op: the meta function must be callable, got {meta!r}")
    parsed: OpSchema | None
    if isinstance(schema, str):
        parsed = parse_schema(schema)
        if name is not None and name != parsed.name:
            raise ArgumentValueError(f"custom_op: name {name!r} differs from the schema's name {parsed.name!r}")
        name = parsed.name
    elif isinstance(schema, OpSchema):
        parsed = schema
        name = name if name is not None else schema.name
    elif schema is None:
        parsed = None
    else:
        raise ArgumentTypeError(f"custom_op: argument 'schema' must be a str or an OpSchema, got {schema!r}")
    if name is None:
        name = getattr(meta, "__name__", None)
    op_name = check_op_name("custom_op", name)
    if parsed is None:
        parsed = schema_from_meta(op_name, meta)
    else:
        parsed = _validated_schema(op_name, parsed)
        _check_meta_matches(op_name, meta, parsed)
    first = parsed.params[0]
    legal_inplace = first.category in (TENSOR, TENSOR_OR_SCALAR)
    if inplace is None:
        inplace = legal_inplace and not first.optional
    elif inplace and not legal_inplace:
        raise ArgumentTypeError(f"{op_name}: an inplace variant needs a tensor first parameter")

    existing = next((o for o in structured.all_ops() if o.name == op_name), None)
    from devtensor.views import all_view_ops

    if any(v.name == op_name for v in all_view_ops()):
        raise ArgumentValueError(f"custom_op: {op_name!r} is a view op of devtensor; choose another name")
    if existing is not None:
        if _is_builtin(existing):
            raise ArgumentValueError(
                f"custom_op: {op_name!r} is a built-in op of devtensor and cannot be redefined; use "
                "library.override(op, key, fn) to change what it does for a dispatch key"
            )
        if not replace:
            raise ArgumentValueError(
                f"custom_op: an op named {op_name!r} is defined already (by module {existing.module!r}); pass "
                "replace=True to redefine it, or choose another name"
            )
    if method:
        owned = set()
        if existing is not None and existing.method:
            owned = {op_name, op_name + "_"}
        for attr in (op_name, op_name + "_") if inplace else (op_name,):
            if attr not in owned and any(attr in cls.__dict__ for cls in Tensor.__mro__ if cls is not object):
                raise ArgumentValueError(
                    f"custom_op: a Tensor method {attr!r} would shadow an existing Tensor attribute"
                )
    if existing is not None:
        remove_op(existing)
    op = StructuredOp(
        op_name,
        meta,
        inplace=inplace,
        method=method,
        elementwise=elementwise,
        doc=doc,
        schema=parsed,
    )
    op.module = module
    _custom_ops[op_name] = op
    return op


def remove_op(op: OpLike) -> StructuredOp:
    """Undefine a custom op (by op, variant or name): remove it from the registry, its Tensor methods and its
    cached device bindings; returns it. Existing references to its variants keep working.

    Raises:
        KeyError: no such op.  ValueError: a built-in op of devtensor (they cannot be removed).
    """
    found = get_op(op)
    if _is_builtin(found):
        raise ArgumentValueError(f"remove_op: {found.name!r} is a built-in op of devtensor and cannot be removed")
    removed = structured.remove_op(found.name)
    if _custom_ops.get(found.name) is found:
        del _custom_ops[found.name]
    # Device bindings (devtensor.cpu.<name>) are compiled per op name on first use; drop this op's.
    bindings: dict[tuple[str, str, DispatchKey], Any] | None = getattr(structured, "_bindings", None)
    if bindings is not None:
        for cache_key in [k for k in bindings if k[0] == found.name]:
            bindings.pop(cache_key, None)
    return removed


def _validated_schema(op_name: str, schema: OpSchema) -> OpSchema:
    """An explicit schema, checked as strictly as one derived from annotations (names reach generated source)."""
    if not isinstance(schema, OpSchema) or not schema.params:
        raise ArgumentTypeError(f"{op_name}: a schema needs at least one parameter")
    seen: set[str] = set()
    star = False
    for p in schema.params:
        if not isinstance(p, Param):
            raise ArgumentTypeError(f"{op_name}: schema parameters must be Param objects, got {p!r}")
        _check_param_name(op_name, p.name)
        if p.name in seen:
            raise ArgumentValueError(f"{op_name}: duplicate parameter name {p.name!r} in the schema")
        seen.add(p.name)
        if p.category not in (TENSOR, TENSOR_OR_SCALAR, SCALAR, TENSOR_LIST, OTHER):
            raise ArgumentValueError(f"{op_name}: parameter '{p.name}' has an unknown category {p.category!r}")
        if star and not p.kw_only:
            raise ArgumentValueError(f"{op_name}: positional parameter '{p.name}' after keyword-only ones")
        star = star or p.kw_only
    if schema.params[0].category not in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST):
        raise ArgumentTypeError(f"{op_name}: the first parameter must be a Tensor (or a tensor list)")
    positional_defaults = False
    for p in schema.params:
        if not p.kw_only:
            if positional_defaults and not p.has_default:
                raise ArgumentValueError(
                    f"{op_name}: parameter '{p.name}' without a default follows one with a default"
                )
            positional_defaults = positional_defaults or p.has_default
    return OpSchema(op_name, schema.params)


def _check_param_name(op_name: str, name: object) -> str:
    check_identifier(op_name, "parameter name", name)
    assert isinstance(name, str)
    if name.startswith("_") or name in structured._SOURCE_NAMES:
        raise ArgumentValueError(
            f"{op_name}: parameter name {name!r} is reserved (out, names starting with '_', and "
            f"{', '.join(sorted(structured._SOURCE_NAMES - {'out'}))})"
        )
    return name


def _check_meta_matches(op_name: str, meta: Callable[..., Any], schema: OpSchema) -> None:
    try:
        sig = inspect.signature(meta)
    except (TypeError, ValueError) as error:
        raise ArgumentTypeError(f"{op_name}: the meta function has no inspectable signature") from error
    got = [(p.name, p.kind == p.KEYWORD_ONLY) for p in sig.parameters.values()]
    want = [(p.name, p.kw_only) for p in schema.params]
    if got != want:

        def fmt(params: list[tuple[str, bool]]) -> str:
            return ", ".join(("*" if kw else "") + n for n, kw in params)

        raise ArgumentTypeError(
            f"{op_name}: the meta function has parameters ({fmt(got)}), but the schema has ({fmt(want)}) "
            "(same names and kinds needed; * marks keyword-only)"
        )


# --- schema strings -----------------------------------------------------------------------------------------

#: schema type -> (category, annotation text used by codegen, element kind of defaults)
_SCHEMA_TYPES: Final[dict[str, tuple[str, str, str]]] = {
    "Tensor": (TENSOR, "Tensor", "none"),
    "Tensor[]": (TENSOR_LIST, "Sequence[Tensor]", "none"),
    "TensorOrScalar": (TENSOR_OR_SCALAR, "TensorOrScalar", "scalar"),
    "Scalar": (SCALAR, "Scalar", "scalar"),
    "int": (OTHER, "int", "int"),
    "int[]": (OTHER, "Sequence[int]", "int[]"),
    "float": (OTHER, "float", "float"),
    "float[]": (OTHER, "Sequence[float]", "float[]"),
    "bool": (OTHER, "bool", "bool"),
    "bool[]": (OTHER, "Sequence[bool]", "bool[]"),
    "str": (OTHER, "str", "str"),
    "ScalarType": (OTHER, "DTypeLike", "none"),
}
_MAX_SCHEMA: Final = 4000
_TOKEN: Final = re.compile(
    r"""\s*(?:
        (?P<arrow>->)
      | (?P<number>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|-?inf\b|nan\b)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<string>'[^'\\\n]*'|"[^"\\\n]*")
      | (?P<punct>[()\[\],=*?])
    )""",
    re.VERBOSE,
)


class _Token(NamedTuple):
    kind: str
    text: str
    pos: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None or match.lastgroup is None:
            raise ArgumentValueError(
                f"parse_schema: unexpected character {text[pos:].lstrip()[:1]!r} at {pos} in {text!r}"
            )
        tokens.append(_Token(match.lastgroup, match.group(match.lastgroup), match.start(match.lastgroup)))
        pos = match.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def error(self, message: str) -> ValueError:
        tok = self.tokens[self.i]
        return ArgumentValueError(f"parse_schema: {message} at position {tok.pos} in {self.text!r}")

    def peek(self, text: str | None = None, kind: str | None = None) -> bool:
        tok = self.tokens[self.i]
        return (text is None or tok.text == text) and (kind is None or tok.kind == kind)

    def take(self, text: str | None = None, kind: str | None = None, what: str = "") -> _Token:
        if not self.peek(text, kind):
            raise self.error(f"expected {what or text or kind}, got {self.tokens[self.i].text or 'the end'!r}")
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def parse(self) -> OpSchema:
        name = self.take(kind="name", what="the op name").text
        check_op_name("parse_schema", name)
        self.take("(")
        params: list[Param] = []
        kw_only = False
        seen: set[str] = set()
        if not self.peek(")"):
            while True:
                if self.peek("*"):
                    if kw_only:
                        raise self.error("a second '*'")
                    self.take("*")
                    kw_only = True
                else:
                    param = self.param(name, kw_only)
                    if param.name in seen:
                        raise self.error(f"duplicate parameter name {param.name!r}")
                    seen.add(param.name)
                    params.append(param)
                if self.peek(")"):
                    break
                self.take(",")
        self.take(")")
        self.take("->", what="'->'")
        ret = self.take(kind="name", what="the return type").text
        if ret != "Tensor" or not self.peek(kind="end"):
            raise self.error("the return type must be 'Tensor' (one result)")
        if not params:
            raise ArgumentValueError(f"parse_schema: {name}: an op needs at least one (tensor) parameter")
        return _validated_schema(name, OpSchema(name, tuple(params)))

    def param(self, op: str, kw_only: bool) -> Param:
        base = self.take(kind="name", what="a parameter type").text
        type_text = base
        length = 1
        if self.peek("["):
            self.take("[")
            if self.peek(kind="number"):  # PyTorch's int[2]: a fixed length (its scalar default is repeated)
                size = self.take(kind="number").text
                if not size.isdigit() or int(size) < 1:
                    raise self.error(f"a list length must be a positive int, got {size!r}")
                length = int(size)
            self.take("]")
            type_text += "[]"
        optional = False
        if self.peek("?"):
            self.take("?")
            optional = True
        if self.peek("("):
            raise self.error("alias annotations such as Tensor(a!) are not supported (ops write only their output)")
        if type_text not in _SCHEMA_TYPES:
            raise self.error(f"unknown type {type_text!r} (supported: {', '.join(_SCHEMA_TYPES)}, each with '?')")
        category, annotation, kind = _SCHEMA_TYPES[type_text]
        pname = self.take(kind="name", what="a parameter name").text
        _check_param_name(op, pname)
        default: Any = _EMPTY
        if self.peek("="):
            self.take("=")
            default = self.default(kind, optional, f"{op}: parameter '{pname}'", length)
        if category == TENSOR and default is not _EMPTY and default is not None:
            raise self.error(f"tensor parameter '{pname}' can only default to None")
        if optional:
            annotation += " | None"
        return Param(pname, category, kw_only, default, optional, annotation)

    def default(self, kind: str, optional: bool, where: str, length: int = 1) -> Any:
        tok = self.tokens[self.i]
        if tok.text == "None":
            self.i += 1
            if not optional:
                raise self.error(f"{where} defaults to None but its type has no '?'")
            return None
        if kind.endswith("[]"):
            item = kind[:-2]
            if self.peek(kind="number") and item == "int":
                value = self.scalar(item, where)  # PyTorch's int[2] stride=1: one value for every element
                return (value,) * length
            self.take("[")
            items: list[Any] = []
            while not self.peek("]"):
                items.append(self.scalar(item, where))
                if not self.peek("]"):
                    self.take(",")
            self.take("]")
            return tuple(items)
        if kind == "none":
            raise self.error(f"{where} can only default to None")
        return self.scalar(kind, where)

    def scalar(self, kind: str, where: str) -> Any:
        tok = self.tokens[self.i]
        if kind in ("bool", "scalar") and tok.text in ("True", "False"):
            self.i += 1
            return tok.text == "True"
        if kind == "str":
            if tok.kind != "string":
                raise self.error(f"{where}: expected a quoted string default")
            self.i += 1
            return tok.text[1:-1]
        if tok.kind != "number" or kind == "bool":
            raise self.error(f"{where}: expected a {kind} default, got {tok.text or 'the end'!r}")
        self.i += 1
        text = tok.text
        is_int = re.fullmatch(r"-?\d+", text) is not None
        if kind == "int":
            if not is_int:
                raise self.error(f"{where}: expected an int default, got {text!r}")
            return int(text)
        if kind == "float":
            return float(text)
        return int(text) if is_int else float(text)  # Scalar


_EMPTY: Final = inspect.Parameter.empty


def parse_schema(text: str) -> OpSchema:
    """Parse a PyTorch-style schema string into an :class:`OpSchema` (no ``eval``/``exec``).

    Grammar: ``name(Type arg[=default], ..., *, Type kwarg[=default], ...) -> Tensor``. Types: ``Tensor``,
    ``Tensor?``, ``Tensor[]``, ``TensorOrScalar`` (devtensor's Tensor-or-number), ``Scalar``, ``int``, ``int[]``
    (also ``int[N]``), ``float``, ``float[]``, ``bool``, ``bool[]``, ``str``, ``ScalarType`` (a dtype); ``?``
    makes any type optional (``| None``). Defaults are literals of the type: ints, floats (``1.0``, ``1e-5``,
    ``inf``, ``nan``), ``True``/``False``, quoted strings without backslashes, ``[1, 2]`` lists (kept as tuples),
    ``None`` for optional types. Every name must be a plain ASCII identifier; op names must not start with
    ``_``; parameter names must not be reserved (``out``, names starting with ``_``, builtins the fronts use).

    Example: ``"softplus(Tensor self, float beta=1.0, float threshold=20.0) -> Tensor"``.

    Raises:
        ValueError: malformed text, an unknown type, a bad or reserved name, a default that does not fit its type.
        TypeError: ``text`` is not a str, or the first parameter is not a tensor.
    """
    if not isinstance(text, str):
        raise ArgumentTypeError(f"parse_schema: expected a str, got {type(text).__name__}")
    if len(text) > _MAX_SCHEMA:
        raise ArgumentValueError(f"parse_schema: schema string longer than {_MAX_SCHEMA} characters")
    if not text.isascii():
        raise ArgumentValueError(f"parse_schema: schema strings are ASCII only, got {text!r}")
    return _Parser(text).parse()


# --- kernels, overrides and fallbacks ------------------------------------------------------------------------


def _as_key(key: KeyLike) -> DispatchKey:
    if isinstance(key, DispatchKey):
        return key
    if isinstance(key, Device):
        return key.key
    if isinstance(key, str):
        named = DispatchKey._interned.get(key)  # a key name: "CPU", "CUDA", "Meta", …
        return named if named is not None else Device(key).key
    raise ArgumentTypeError(
        f"expected a DispatchKey, a key name such as 'CPU', a Device or a device type such as 'cpu', got {key!r}"
    )


# Kernels registered through handles, per (op, key): the kernel that was there before the first of them, and the
# live handles in registration order. The newest live handle's kernel is the one in the table.
_kernel_stacks: dict[tuple[StructuredOp, DispatchKey], tuple[Callable[..., None] | None, list[KernelHandle]]] = {}


class KernelHandle:
    """Undoes a :func:`register_kernel`.

    Handles for one op and key stack: removing one (in any order) takes its kernel out, and the table then holds
    the newest kernel still registered through a handle, or the one that was there before them all. ``remove()``
    is idempotent. Usable as a context manager (the kernel is registered while the block runs).
    """

    __slots__ = ("_removed", "fn", "key", "op")

    def __init__(self, op: StructuredOp, key: DispatchKey, fn: Callable[..., None]) -> None:
        self.op = op
        self.key = key
        self.fn = fn
        self._removed = False

    def remove(self) -> bool:
        """Unregister this kernel; False when it was removed already."""
        with dispatcher._lock:
            if self._removed:
                return False
            self._removed = True
            base, live = _kernel_stacks[(self.op, self.key)]
            live.remove(self)
            current = live[-1].fn if live else base
            if not live:
                del _kernel_stacks[(self.op, self.key)]
            if current is None:
                self.op.table.unregister(self.key)
            else:
                self.op.table.register(self.key, current)
            return True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<kernel of {self.op.name} for {self.key.name}{' (removed)' if self._removed else ''}>"


def register_kernel(op: OpLike, key: KeyLike, fn: Callable[..., None]) -> KernelHandle:
    """Register ``fn`` as the kernel (impl) of ``op`` for ``key`` (a DispatchKey or a device type such as
    ``"cpu"`` or an out-of-tree ``"numpy2"``), replacing any; returns a handle that undoes it (see
    :class:`KernelHandle` for the order of undoing several).

    ``fn`` takes the op's parameters (same names and kinds; tensors refined to the key's tensor class) plus a
    keyword-only ``out`` (a :class:`~devtensor.typed.ConstOut`), writes the result into ``out.array`` and returns
    None, as every impl. It runs inside the common code of the fronts (meta, out/inplace rules, overlap checks,
    device guard, version bumps). A kernel wins over the key's backend fallback.

    Raises:
        TypeError: ``fn``'s parameters do not match the op's schema.  ValueError: an unknown device type.
    """
    found = get_op(op)
    resolved = _as_key(key)
    with dispatcher._lock:
        base = found.table.kernels.get(resolved)
        found.register_kernel(resolved, fn)
        handle = KernelHandle(found, resolved, fn)
        _kernel_stacks.setdefault((found, resolved), (base, []))[1].append(handle)
    return handle


class OverrideHandle:
    """A Python override of one (op, key), as returned by :func:`override`.

    ``remove()`` takes the override off (False when it was off already: removing twice is harmless); the
    handle is a context manager that removes it on exit. Calls after ``remove()`` returns never use it.
    """

    __slots__ = ("_active", "fn", "key", "op")

    def __init__(self, op: StructuredOp, key: DispatchKey, fn: Callable[..., None]) -> None:
        self.op = op
        self.key = key
        self.fn = fn
        self._active = True

    @property
    def active(self) -> bool:
        """Whether the override is still registered."""
        return self._active

    def remove(self) -> bool:
        """Take the override off; True if this call removed it."""
        with dispatcher._lock:
            if not self._active:
                return False
            self._active = False
            return self.op.table.remove_override(self.key, self.fn)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        state = "active" if self._active else "removed"
        return f"<override of {self.op.name} for {self.key.name} ({state})>"


def override(op: OpLike, key: KeyLike, fn: Callable[..., None]) -> OverrideHandle:
    """Make the Python callable ``fn`` the handler of ``op`` for ``key``, above its kernel, its fallback and any
    earlier override (PyTorch's Python dispatcher: the newest registration wins); returns the handle that
    undoes it.

    ``fn`` is called exactly like an impl (same parameters, keyword-only ``out`` ConstOut; validated as one), and
    runs inside the common code, so meta checks, out/inplace rules and version bumps still apply. Works for
    built-in and custom ops, on any key (including Meta: the override then runs instead of "meta only").
    Thread-safe: registration and removal happen under the dispatcher's lock and invalidate the op's cached
    handlers, so no call started after ``override``/``remove`` returns uses a stale handler.

    Raises:
        TypeError: ``fn``'s parameters do not match the op's schema.  KeyError: no such op.
    """
    found = get_op(op)
    resolved = _as_key(key)
    structured._check_impl_signature(found, fn)
    found.table.push_override(resolved, fn)
    return OverrideHandle(found, resolved, fn)


class FallbackHandle:
    """Undoes a :func:`register_fallback` (idempotent; does nothing if another fallback replaced it)."""

    __slots__ = ("_removed", "fn", "key")

    def __init__(self, key: DispatchKey, fn: Callable[..., None]) -> None:
        self.key = key
        self.fn = fn
        self._removed = False

    def remove(self) -> bool:
        """Unregister the fallback; True if this call removed it."""
        with dispatcher._lock:
            if self._removed:
                return False
            self._removed = True
            if dispatcher._fallbacks.get(self.key) is not self.fn:
                return False
            dispatcher.unregister_fallback(self.key)
            return True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_fallback(key: KeyLike, fn: Callable[..., None]) -> FallbackHandle:
    """Register the backend fallback of ``key``: one callable serving every structured op that has no kernel (and
    no override) for ``key``. Called as ``fn(op, *args, out=const_out, **kwargs)`` inside the common code (the
    op's meta has run, the output is prepared, version bumps follow). :func:`cpu_fallback` is a ready one.

    Replaces an earlier fallback for the key. Returns a handle that unregisters it.

    Raises:
        TypeError: ``fn`` is not callable.  ValueError: an unknown device type.
    """
    if not callable(fn):
        raise ArgumentTypeError(f"register_fallback: expected a callable, got {fn!r}")
    resolved = _as_key(key)
    dispatcher.register_fallback(resolved, fn)
    return FallbackHandle(resolved, fn)


def _flat_inputs(args: Iterable[Any]) -> Iterator[Tensor]:
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (t for t in a if isinstance(t, Tensor))


def _to_cpu(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.to("cpu", copy=True)
    if isinstance(value, list):
        return [_to_cpu(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_cpu(v) for v in value)
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
    devices = [t.device for t in _flat_inputs((*args, *kwargs.values()))]
    if not devices:
        raise ArgumentValueError(f"{op.name}: cpu_fallback needs a tensor argument")
    device = devices[0]
    backend = backend_for(device)
    handler = op.table.handlers.get(DispatchKey.CPU)
    if handler is None:
        handler = op.table.resolve(DispatchKey.CPU, f"cpu (fallback for {device})")
    host = np.empty(out.shape, out.dtype)
    cpu_args = tuple(_to_cpu(a) for a in args)
    cpu_kwargs = {k: _to_cpu(v) for k, v in kwargs.items()}
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
        from devtensor.errors import DeviceMismatchError

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
    if name in _device_mod._device_types:
        raise ArgumentValueError(f"register_backend: device type {name!r} is registered already")
    key_name = key if key is not None else name.capitalize()
    check_identifier("register_backend", "key", key_name)
    if key_name in DispatchKey._interned:
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
    _register_backend_object(backend)
    if source_key is not None:
        from devtensor.views import all_view_ops

        for view in all_view_ops():
            kernel = view.kernels.get(source_key)
            if kernel is not None:
                view.register_kernel(dispatch_key, kernel)
    return OutOfTreeBackend(name, dispatch_key, tensor_class, backend)


def _make_tensor_class(name: str) -> type[Tensor]:
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
    if not (isinstance(cls, type) and issubclass(cls, Tensor)) or cls is Tensor:
        raise ArgumentValueError(f"register_backend: tensor_class must be a subclass of Tensor, got {cls!r}")
    if cls.__bases__ != (Tensor,):
        # A subclass of CPUTensor (say) would make mypy take this device's tensors for CPU tensors.
        raise ArgumentValueError(
            f"register_backend: tensor_class must subclass Tensor directly, got {cls.__name__} with bases "
            f"{', '.join(b.__name__ for b in cls.__bases__)}"
        )
    if cls.__dict__.get("__slots__", None) != ():
        raise ArgumentValueError(f"register_backend: {cls.__name__} must declare __slots__ = ()")
    if "_backend" in cls.__dict__:
        raise ArgumentValueError(f"register_backend: {cls.__name__} belongs to another backend already")


# --- dispatch modes ------------------------------------------------------------------------------------------


def _variant_name(op: Any, variant: str, kwargs: Mapping[str, Any]) -> str:
    if variant == "inplace":
        return f"{op.name}_"
    if kwargs.get("out") is not None:
        return f"{op.name}.out"
    return str(op.name)


class CountingMode(DispatchMode):
    """A dispatch mode that counts op calls: ``counts["add"]`` (functional), ``counts["add.out"]`` (out
    variant), ``counts["add_"]`` (inplace). Counts the calls of the thread that entered it; ops run unchanged.

    Example: ``with library.CountingMode() as m: model(x)`` then ``m.counts.most_common()``.
    """

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def __dispatch__(
        self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Count the call, then run it."""
        self.counts[_variant_name(op, variant, kwargs)] += 1
        return func(*args, **kwargs)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One op call seen by a :class:`LoggingMode`: the op, the variant's name (``add``, ``add.out``, ``add_``),
    the arguments as passed, and a short text of them (tensors as ``Tensor(shape, dtype, device)``)."""

    op: StructuredOp
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    text: str


def _describe(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"Tensor({list(value.shape)}, {value.dtype}, {value.device})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class LoggingMode(DispatchMode):
    """A dispatch mode that records every op call (``calls``: :class:`CallRecord`) and logs it at DEBUG level
    to the ``devtensor.library`` logger (or calls ``sink(text)`` when given, e.g. ``print``).

    Records the calls of the thread that entered it, including ops that other ops call. Ops run unchanged.
    """

    def __init__(self, sink: Callable[[str], object] | None = None) -> None:
        self.calls: list[CallRecord] = []
        self.sink = sink

    def __dispatch__(
        self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Record the call, then run it."""
        name = _variant_name(op, variant, kwargs)
        parts = [_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items() if v is not None]
        text = f"{name}({', '.join(parts)})"
        self.calls.append(CallRecord(op, name, args, dict(kwargs), text))
        if self.sink is not None:
            self.sink(text)
        else:
            _log.debug("%s", text)
        return func(*args, **kwargs)

    @property
    def names(self) -> list[str]:
        """The variant names of the recorded calls, in order."""
        return [c.name for c in self.calls]


# --- the checker ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample for :func:`check`: positional and keyword arguments (tensors on any device; they are copied
    to each checked device, so the sample itself is never written)."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CheckProblem:
    """One problem found by :func:`check`.

    ``kind``: ``"meta"`` (meta and real output disagree, or the meta function fails or depends on data),
    ``"exception"`` (a variant raised), ``"values"`` (variants or devices disagree), ``"unwritten"`` (the kernel
    left output elements unwritten), ``"mutation"`` (an argument other than the output changed), ``"version"``
    (wrong version bumps), ``"result"`` (the wrong object, shape, dtype or device came back).
    """

    kind: str
    op: str
    key: str
    variant: str
    sample: int
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.op} on {self.key}, {self.variant}, sample {self.sample}: {self.message}"


@dataclass
class CheckReport:
    """What :func:`check` found: ``problems`` (empty when all is well), ``runs`` (``(sample, key, variant)`` run)
    and ``skipped`` (why a key or variant was not run)."""

    op: str
    problems: list[CheckProblem] = field(default_factory=list)
    runs: list[tuple[int, str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    def kinds(self) -> set[str]:
        """The kinds of the problems found."""
        return {p.kind for p in self.problems}

    def raise_if_failed(self) -> None:
        """Raise AssertionError listing the problems, if any."""
        if self.problems:
            raise AssertionError(str(self))

    def __str__(self) -> str:
        head = f"check({self.op}): {len(self.runs)} runs, {len(self.problems)} problem(s)"
        lines = [head, *(f"  {p}" for p in self.problems), *(f"  skipped: {s}" for s in self.skipped)]
        return "\n".join(lines)


_TOLERANCES: Final[dict[str, tuple[float, float]]] = {
    "float16": (1e-3, 1e-3),
    "float32": (1.3e-6, 1e-5),
    "complex64": (1.3e-6, 1e-5),
}
_META_ERROR_HINTS: Final = (
    "non-broadcastable output",
    "could not broadcast",
    "Cannot cast ufunc",
    "output parameter",
    "output array",
    "wrong dimensions",
    "wrong number of dimensions",
    "shape mismatch",
    "does not match",
)


class _Checker:
    def __init__(
        self,
        op: StructuredOp,
        reference: Callable[..., Any] | None,
        rtol: float | None,
        atol: float | None,
        report: CheckReport,
    ) -> None:
        self.op = op
        self.reference = reference
        self.rtol = rtol
        self.atol = atol
        self.report = report
        self.signature = inspect.signature(op.functional)

    # helpers -------------------------------------------------------------------------------------------

    def problem(self, kind: str, key: str, variant: str, sample: int, message: str) -> None:
        self.report.problems.append(CheckProblem(kind, self.op.name, key, variant, sample, message))

    def tolerances(self, dtype: np.dtype[Any]) -> tuple[float, float]:
        rtol, atol = _TOLERANCES.get(dtype.name, (1e-7, 1e-7))
        return (self.rtol if self.rtol is not None else rtol, self.atol if self.atol is not None else atol)

    def close(self, a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            rtol, atol = self.tolerances(a.dtype)
            return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(a, b))

    def split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The sample bound to the op's signature (defaults applied), split as the front calls meta."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        values.pop("out", None)
        positional = tuple(values[p.name] for p in self.op.schema.params if not p.kw_only)
        keywords = {p.name: values[p.name] for p in self.op.schema.params if p.kw_only}
        return positional, keywords

    @staticmethod
    def move(value: Any, device: Device, memo: dict[int, Tensor]) -> Any:
        if isinstance(value, Tensor):
            moved = memo.get(id(value))
            if moved is None:
                moved = memo[id(value)] = value.to(device, copy=True)
            return moved
        if isinstance(value, list):
            return [_Checker.move(v, device, memo) for v in value]
        if isinstance(value, tuple):
            return tuple(_Checker.move(v, device, memo) for v in value)
        return value

    def fresh(self, sample: Sample, device: Device) -> tuple[tuple[Any, ...], dict[str, Any]]:
        memo: dict[int, Tensor] = {}
        args = tuple(self.move(a, device, memo) for a in sample.args)
        kwargs = {k: self.move(v, device, memo) for k, v in sample.kwargs.items()}
        return args, kwargs

    @staticmethod
    def host(t: Tensor) -> np.ndarray[Any, Any] | None:
        if t.device.type == "meta":
            return None
        return np.array(t.to("cpu").numpy(), copy=True)

    @staticmethod
    def labelled(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Tensor]]:
        found: list[tuple[str, Tensor]] = []

        def visit(label: str, value: Any) -> None:
            if isinstance(value, Tensor):
                found.append((label, value))
            elif isinstance(value, (list, tuple)):
                for i, v in enumerate(value):
                    visit(f"{label}[{i}]", v)

        for i, a in enumerate(args):
            visit(f"args[{i}]", a)
        for k, v in kwargs.items():
            visit(k, v)
        return found

    def snapshot(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Tensor, Any, int]]:
        return [(label, t, self.host(t), t.version) for label, t in self.labelled(args, kwargs)]

    def check_inputs(
        self,
        before: list[tuple[str, Tensor, Any, int]],
        written: Tensor | None,
        key: str,
        variant: str,
        index: int,
    ) -> None:
        for label, t, data, version in before:
            if t is written:
                continue
            if data is not None:
                now = self.host(t)
                assert now is not None
                if not (now.shape == data.shape and np.array_equal(now, data, equal_nan=data.dtype.kind in "fc")):
                    bumped = "" if t.version != version else " (and its version counter was not bumped)"
                    self.problem(
                        "mutation",
                        key,
                        variant,
                        index,
                        f"input {label} was modified{bumped}; only the output may be written",
                    )
                    continue
            if t.version != version:
                self.problem(
                    "version", key, variant, index, f"the version of input {label} changed ({version} -> {t.version})"
                )

    def exception(self, error: BaseException, key: str, variant: str, index: int) -> None:
        text = f"{type(error).__name__}: {error}"
        if isinstance(error, (ValueError, TypeError)) and any(h in str(error) for h in _META_ERROR_HINTS):
            self.problem(
                "meta",
                key,
                variant,
                index,
                f"the kernel could not write its result into the output the meta function described ({text})",
            )
        else:
            where = "".join(traceback.format_exception_only(type(error), error)).strip()
            self.problem("exception", key, variant, index, f"raised {where}")

    # one sample on one device ------------------------------------------------------------------------

    def run_key(
        self, index: int, sample: Sample, device: Device, spec0: TensorSpec | None
    ) -> np.ndarray[Any, Any] | None:
        """Run every variant of the sample on ``device``; the functional result on the host (None for meta or
        failure)."""
        key = device.key.name
        try:
            args, kwargs = self.fresh(sample, device)
            meta_args, meta_kwargs = self.split(args, kwargs)
        except Exception as error:
            self.report.skipped.append(f"sample {index} on {device}: cannot move it there ({error})")
            return None
        try:
            spec: TensorSpec = self.op.meta(*meta_args, **meta_kwargs)
        except Exception as error:
            self.problem("meta", key, "meta", index, f"the meta function raised {type(error).__name__}: {error}")
            return None
        shape, dtype = tuple(spec[0]), np.dtype(spec[1])
        if spec0 is not None and (shape != tuple(spec0[0]) or dtype != spec0[1]):
            self.problem(
                "meta",
                key,
                "meta",
                index,
                f"the meta function gives {list(shape)} {dtype} here but {list(spec0[0])} {spec0[1]} on the "
                "sample's own device (a meta function must read metadata only)",
            )
        functional = self.run_functional(index, sample, device, shape, dtype)
        out_values = self.run_out(index, sample, device, shape, dtype)
        if functional is not None and out_values is not None and not self.close(out_values, functional):
            self.problem("values", key, "out", index, "the out variant's values differ from the functional's")
        self.run_inplace(index, sample, device, shape, dtype, functional)
        return functional

    def run_functional(
        self, index: int, sample: Sample, device: Device, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> np.ndarray[Any, Any] | None:
        key = device.key.name
        args, kwargs = self.fresh(sample, device)
        before = self.snapshot(args, kwargs)
        self.report.runs.append((index, str(device), "functional"))
        try:
            result: Any = self.op.functional(*args, **kwargs)
        except Exception as error:
            self.exception(error, key, "functional", index)
            return None
        if not isinstance(result, Tensor):
            self.problem("result", key, "functional", index, f"returned {type(result).__name__}, not a Tensor")
            return None
        if result.device is not device or result.shape != shape or result.dtype != dtype:
            self.problem(
                "meta",
                key,
                "functional",
                index,
                f"the result is {list(result.shape)} {result.dtype} on {result.device}; the meta function says "
                f"{list(shape)} {dtype} on {device}",
            )
        if result.version != 0:
            self.problem("version", key, "functional", index, f"a new result has version {result.version}, not 0")
        self.check_inputs(before, None, key, "functional", index)
        return self.host(result)

    @staticmethod
    def sentinel(shape: tuple[int, ...], dtype: np.dtype[Any], which: int) -> np.ndarray[Any, Any]:
        """The host array an out is filled with before run ``which`` (0 or 1: two different values)."""
        if dtype.kind == "b":
            value: Any = which == 0
        elif dtype.kind in "fc":
            value = np.nan if which == 0 else 7.0
        elif dtype.kind == "u":
            value = 123 if which == 0 else 45
        else:
            value = -123 if which == 0 else 45
        return np.full(shape, value, dtype=dtype)

    def sentinel_out(self, shape: tuple[int, ...], dtype: np.dtype[Any], device: Device, which: int) -> Tensor:
        from devtensor.creation import from_numpy

        return from_numpy(self.sentinel(shape, dtype, which)).to(device, copy=True)

    def run_out(
        self, index: int, sample: Sample, device: Device, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> np.ndarray[Any, Any] | None:
        key = device.key.name
        results: list[np.ndarray[Any, Any] | None] = []
        for which in (0, 1):
            args, kwargs = self.fresh(sample, device)
            out = self.sentinel_out(shape, dtype, device, which)
            version = out.version
            before = self.snapshot(args, kwargs)
            if which == 0:
                self.report.runs.append((index, str(device), "out"))
            try:
                result = self.op.functional(*args, **kwargs, out=out)
            except Exception as error:
                self.exception(error, key, "out", index)
                return None
            if result is not out:
                self.problem("result", key, "out", index, "the out variant did not return its out tensor")
            if out.shape != shape or out.dtype != dtype:
                self.problem("result", key, "out", index, f"out became {list(out.shape)} {out.dtype}")
            if out.version != version + 1:
                self.problem(
                    "version", key, "out", index, f"out's version went {version} -> {out.version}; expected +1"
                )
            self.check_inputs(before, out, key, "out", index)
            results.append(self.host(out))
        first, second = results
        if first is None or second is None:
            return None
        # An element the kernel did not write keeps its sentinel in both runs (and the two sentinels differ);
        # exact, and blind to nondeterministic kernels whose written values differ slightly between runs.
        kept = _equal_elements(first, self.sentinel(shape, dtype, 0)) & _equal_elements(
            second, self.sentinel(shape, dtype, 1)
        )
        if kept.any():
            count = int(kept.sum())
            self.problem(
                "unwritten",
                key,
                "out",
                index,
                f"{count} of {first.size} output elements were not written by the kernel (they kept the "
                "sentinel the out tensor was filled with)",
            )
        return second

    def run_inplace(
        self,
        index: int,
        sample: Sample,
        device: Device,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        functional: np.ndarray[Any, Any] | None,
    ) -> None:
        key = device.key.name
        if self.op.inplace is None:
            return
        args, kwargs = self.fresh(sample, device)
        meta_args, _ = self.split(args, kwargs)
        target = meta_args[0]
        if not isinstance(target, Tensor):
            return
        if target.shape != shape or not np.can_cast(dtype, target.dtype, "same_kind"):
            self.report.skipped.append(
                f"sample {index} on {device}: inplace (result {list(shape)} {dtype} does not fit self "
                f"{list(target.shape)} {target.dtype})"
            )
            return
        before = self.snapshot(args, kwargs)
        version = target.version
        self.report.runs.append((index, str(device), "inplace"))
        try:
            result = self.op.inplace(*args, **kwargs)
        except Exception as error:
            self.exception(error, key, "inplace", index)
            return
        if result is not target:
            self.problem("result", key, "inplace", index, "the inplace variant did not return self")
        if target.version != version + 1:
            self.problem(
                "version", key, "inplace", index, f"self's version went {version} -> {target.version}; expected +1"
            )
        self.check_inputs(before, target, key, "inplace", index)
        values = self.host(target)
        if values is not None and functional is not None:
            expected = functional.astype(target.dtype, casting="unsafe")
            if not self.close(values, expected):
                self.problem(
                    "values", key, "inplace", index, "the inplace variant's values differ from the functional's"
                )

    def compare_reference(self, index: int, sample: Sample, result: np.ndarray[Any, Any]) -> None:
        assert self.reference is not None

        def to_host(value: Any) -> Any:
            if isinstance(value, Tensor):
                return np.array(value.to("cpu").numpy(), copy=True)
            if isinstance(value, (list, tuple)):
                return type(value)(to_host(v) for v in value)
            return value

        try:
            expected = np.asarray(self.reference(*to_host(sample.args), **to_host(sample.kwargs)))
        except Exception as error:
            self.report.skipped.append(f"sample {index}: the reference raised {type(error).__name__}: {error}")
            return
        if expected.shape != result.shape or expected.dtype != result.dtype:
            self.problem(
                "meta",
                "CPU",
                "functional",
                index,
                f"the meta function says {list(result.shape)} {result.dtype}; the reference computes "
                f"{list(expected.shape)} {expected.dtype}",
            )
        elif not self.close(result, expected):
            self.problem("values", "CPU", "functional", index, "the result differs from the reference's")


def _equal_elements(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    same: np.ndarray[Any, Any] = a == b
    if a.dtype.kind in "fc":
        same |= np.isnan(a) & np.isnan(b)
    return same


def _candidate_devices(op: StructuredOp, keys: Sequence[KeyLike] | None) -> tuple[list[Device], list[str]]:
    """Devices to check on: the given ones, or every device type whose key serves the op."""
    skipped: list[str] = []
    if keys is not None:
        devices: list[Device] = []
        for k in keys:
            if isinstance(k, DispatchKey):
                types = [t for t, info in _device_mod._device_types.items() if info.key is k]
                if not types:
                    raise ArgumentValueError(f"check: no device type dispatches to {k!r}")
                k = types[0]
            devices.append(Device(k).resolved())
        return devices, skipped
    devices = []
    for type_name, info in list(_device_mod._device_types.items()):
        served = (
            info.key in (DispatchKey.CPU, DispatchKey.Meta)
            or info.key in op.table.kernels
            or bool(op.table.overrides.get(info.key))
            or info.key in dispatcher._fallbacks
        )
        if not served:
            continue
        try:
            dev = Device(type_name).resolved()
            backend_for(dev).empty((1,), np.dtype(np.float32), dev)
        except Exception as error:
            skipped.append(f"{type_name}: unavailable ({type(error).__name__}: {error})")
            continue
        devices.append(dev)
    return devices, skipped


def check(
    op: OpLike,
    samples: Iterable[Sample | tuple[Sequence[Any], Mapping[str, Any]]],
    *,
    keys: Sequence[KeyLike] | None = None,
    reference: Callable[..., Any] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    raise_on_error: bool = False,
) -> CheckReport:
    """Check an op like ``torch.library.opcheck``: run each sample through every variant on every available
    dispatch key and report what disagrees.

    For each sample (``Sample(args, kwargs)`` or an ``(args, kwargs)`` pair) and each device (``keys``, or by
    default: CPU, Meta, the sample's devices, and every other registered device type whose key has a kernel,
    override or fallback for the op and that can hold the sample; CUDA only with a GPU), on fresh copies of the
    sample's tensors:

    * the meta function runs and gives the same (shape, dtype) on every device (it may read metadata only);
    * the functional variant returns a new Tensor (version 0) of the meta's shape and dtype on that device;
    * the out variant, twice with outs pre-filled with two different sentinels, returns ``out``, bumps its
      version by exactly one and writes every element (elements that differ between the two runs kept their
      sentinel: the kernel did not write them); its values equal the functional's;
    * the inplace variant (where the result fits ``self``: same shape, same_kind castable) returns ``self``,
      bumps its version by one, and equals the functional result cast to ``self``'s dtype;
    * no variant writes any argument other than its output (data compared before/after) or bumps its version;
    * results on every device with data equal those on the first one (CPU), within ``rtol``/``atol`` (default
      per dtype: float16 1e-3/1e-3, float32 1.3e-6/1e-5, others 1e-7/1e-7; integers and bools exactly);
    * with ``reference`` (a NumPy function of the sample with tensors as arrays), the CPU result has the
      reference's shape, dtype and values: this catches a meta function whose dtype or shape differs from what
      the computation really produces when the kernel casts or broadcasts silently into the output.

    A kernel that cannot write into the output the meta function described (NumPy's broadcast or cast errors
    on ``out=``) is reported as a meta problem. View ops are not checked.

    Returns:
        A :class:`CheckReport`; with ``raise_on_error=True`` an AssertionError listing the problems is raised
        instead when there are any.
    Raises:
        KeyError / TypeError: ``op`` is not a structured op.  ValueError: a malformed sample or an unknown key.
    """
    found = get_op(op)
    report = CheckReport(found.name)
    checker = _Checker(found, reference, rtol, atol, report)
    devices, unavailable = _candidate_devices(found, keys)
    report.skipped.extend(unavailable)
    for index, raw in enumerate(samples):
        sample = _as_sample(raw)
        home = _home_device(sample)
        ordered = list(devices)
        if keys is None and home is not None and home not in ordered:
            ordered.insert(0, home)
        ordered.sort(key=lambda d: (d.type != "cpu", d.type == "meta"))
        spec0: TensorSpec | None = None
        try:
            meta_args, meta_kwargs = checker.split(sample.args, sample.kwargs)
            spec0 = found.meta(*meta_args, **meta_kwargs)
        except Exception as error:
            checker.problem(
                "meta", str(home), "meta", index, f"the meta function raised {type(error).__name__}: {error}"
            )
            continue
        baseline: tuple[str, np.ndarray[Any, Any]] | None = None
        for device in ordered:
            result = checker.run_key(index, sample, device, spec0)
            if result is None:
                continue
            if baseline is None:
                baseline = (str(device), result)
                if reference is not None and device.type == "cpu":
                    checker.compare_reference(index, sample, result)
            elif result.dtype != baseline[1].dtype or not checker.close(result, baseline[1]):
                checker.problem(
                    "values",
                    device.key.name,
                    "functional",
                    index,
                    f"the result ({result.dtype}) differs from the one on {baseline[0]} ({baseline[1].dtype})",
                )
    if raise_on_error:
        report.raise_if_failed()
    return report


def _as_sample(raw: Sample | tuple[Sequence[Any], Mapping[str, Any]]) -> Sample:
    if isinstance(raw, Sample):
        return raw
    if isinstance(raw, tuple) and len(raw) == 2 and isinstance(raw[0], (tuple, list)) and isinstance(raw[1], Mapping):
        return Sample(tuple(raw[0]), dict(raw[1]))
    raise ArgumentValueError(f"check: a sample must be a Sample or an (args, kwargs) pair, got {raw!r}")


def _home_device(sample: Sample) -> Device | None:
    for t in _flat_inputs((*sample.args, *sample.kwargs.values())):
        return t.device
    return None
