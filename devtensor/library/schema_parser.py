"""Schema strings: PyTorch-style op signatures (``softplus(Tensor self, float beta=1.0) -> Tensor``) parsed into
an :class:`~devtensor.structured.OpSchema` by a small tokenizer and a recursive-descent parser (no ``eval`` or
``exec``: defaults reach the fronts as objects, never as text), and the checks every explicit schema passes.

The grammar follows PyTorch's native function schemas (``aten/src/ATen/native/README.md``), restricted to ops
with one Tensor result and no alias annotations.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Final, NamedTuple

from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.structured import (
    GENERATOR,
    OTHER,
    SCALAR,
    SOURCE_NAMES,
    TENSOR,
    TENSOR_LIST,
    TENSOR_OR_SCALAR,
    OpSchema,
    Param,
    check_identifier,
    check_op_name,
)

__all__ = ["check_param_name", "parse_schema", "validated_schema"]


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
    "Generator": (GENERATOR, "Generator", "none"),
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
    """One token: its kind (the regex group that matched, or ``"end"``), its text and its offset in the schema."""

    kind: str
    text: str
    offset: int


def _tokenize(text: str) -> list[_Token]:
    """The tokens of ``text``, ending with an ``"end"`` token; ValueError at the first character no token fits."""
    tokens: list[_Token] = []
    offset = 0
    while offset < len(text):
        if text[offset:].strip() == "":
            break
        match = _TOKEN.match(text, offset)
        if match is None or match.lastgroup is None:
            raise ArgumentValueError(
                f"parse_schema: unexpected character {text[offset:].lstrip()[:1]!r} at {offset} in {text!r}"
            )
        tokens.append(_Token(match.lastgroup, match.group(match.lastgroup), match.start(match.lastgroup)))
        offset = match.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


class _Parser:
    """Recursive descent over the tokens of one schema string; every error names the offset and the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.position = 0

    def error(self, message: str) -> ValueError:
        token = self.tokens[self.position]
        return ArgumentValueError(f"parse_schema: {message} at position {token.offset} in {self.text!r}")

    def peek(self, text: str | None = None, kind: str | None = None) -> bool:
        token = self.tokens[self.position]
        return (text is None or token.text == text) and (kind is None or token.kind == kind)

    def take(self, text: str | None = None, kind: str | None = None, what: str = "") -> _Token:
        if not self.peek(text, kind):
            raise self.error(f"expected {what or text or kind}, got {self.tokens[self.position].text or 'the end'!r}")
        token = self.tokens[self.position]
        self.position += 1
        return token

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
        return_type = self.take(kind="name", what="the return type").text
        if return_type != "Tensor" or not self.peek(kind="end"):
            raise self.error("the return type must be 'Tensor' (one result)")
        if not params:
            raise ArgumentValueError(f"parse_schema: {name}: an op needs at least one (tensor) parameter")
        return validated_schema(name, OpSchema(name, tuple(params)))

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
        param_name = self.take(kind="name", what="a parameter name").text
        check_param_name(op, param_name)
        default: Any = _EMPTY
        if self.peek("="):
            self.take("=")
            default = self.default(kind, optional, f"{op}: parameter '{param_name}'", length)
        if category == TENSOR and default is not _EMPTY and default is not None:
            raise self.error(f"tensor parameter '{param_name}' can only default to None")
        if category == GENERATOR and not optional:
            raise self.error(f"generator parameter '{param_name}' must be optional: 'Generator? {param_name}=None'")
        if optional:
            annotation += " | None"
        return Param(param_name, category, kw_only, default, optional, annotation)

    def default(self, kind: str, optional: bool, where: str, length: int = 1) -> Any:
        token = self.tokens[self.position]
        if token.text == "None":
            self.position += 1
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
        token = self.tokens[self.position]
        if kind in ("bool", "scalar") and token.text in ("True", "False"):
            self.position += 1
            return token.text == "True"
        if kind == "str":
            if token.kind != "string":
                raise self.error(f"{where}: expected a quoted string default")
            self.position += 1
            return token.text[1:-1]
        if token.kind != "number" or kind == "bool":
            raise self.error(f"{where}: expected a {kind} default, got {token.text or 'the end'!r}")
        self.position += 1
        text = token.text
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


def validated_schema(op_name: str, schema: OpSchema) -> OpSchema:
    """An explicit schema, checked as strictly as one derived from annotations (its names reach generated
    source), renamed to ``op_name``.

    Raises:
        TypeError: no parameters, a parameter that is not a Param, a first parameter that is not a tensor.
        ValueError: a bad, reserved or duplicate name, an unknown category, a positional parameter after
            keyword-only ones, or one without a default after one with a default.
    """
    if not isinstance(schema, OpSchema) or not schema.params:
        raise ArgumentTypeError(f"{op_name}: a schema needs at least one parameter")
    seen: set[str] = set()
    star = False
    for param in schema.params:
        if not isinstance(param, Param):
            raise ArgumentTypeError(f"{op_name}: schema parameters must be Param objects, got {param!r}")
        check_param_name(op_name, param.name)
        if param.name in seen:
            raise ArgumentValueError(f"{op_name}: duplicate parameter name {param.name!r} in the schema")
        seen.add(param.name)
        if param.category not in (TENSOR, TENSOR_OR_SCALAR, SCALAR, TENSOR_LIST, GENERATOR, OTHER):
            raise ArgumentValueError(f"{op_name}: parameter '{param.name}' has an unknown category {param.category!r}")
        if star and not param.kw_only:
            raise ArgumentValueError(f"{op_name}: positional parameter '{param.name}' after keyword-only ones")
        star = star or param.kw_only
    if schema.params[0].category not in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST):
        raise ArgumentTypeError(f"{op_name}: the first parameter must be a Tensor (or a tensor list)")
    positional_defaults = False
    for param in schema.params:
        if not param.kw_only:
            if positional_defaults and not param.has_default:
                raise ArgumentValueError(
                    f"{op_name}: parameter '{param.name}' without a default follows one with a default"
                )
            positional_defaults = positional_defaults or param.has_default
    return OpSchema(op_name, schema.params)


def check_param_name(op_name: str, name: object) -> str:
    """``name`` if it may name a parameter: a plain ASCII identifier, not reserved by the view fronts.

    Raises:
        TypeError / ValueError: not an identifier (see :func:`~devtensor.structured.check_identifier`), or
            reserved (``out``, a leading ``_``, a name the fronts use); the message names ``op_name``.
    """
    check_identifier(op_name, "parameter name", name)
    assert isinstance(name, str)
    if name.startswith("_") or name in SOURCE_NAMES:
        raise ArgumentValueError(
            f"{op_name}: parameter name {name!r} is reserved (out, names starting with '_', and "
            f"{', '.join(sorted(SOURCE_NAMES - {'out'}))})"
        )
    return name
