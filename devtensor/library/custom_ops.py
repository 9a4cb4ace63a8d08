"""Custom ops: :func:`custom_op` defines an op from user code (its meta function, its annotations or a schema
string), :func:`get_op` finds any structured op, :func:`remove_op` undefines a custom one.

A custom op is a :class:`~devtensor.structured.StructuredOp` exactly like a built-in one: same fronts and
common code; only the registration path and the right to be replaced or removed differ. :func:`get_op` also
finds view ops (:class:`~devtensor.views.ViewOp`), so overrides, kernels and the checker reach them too.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, overload

from devtensor import structured
from devtensor.dispatcher import registry_lock
from devtensor.errors import ArgumentTypeError, ArgumentValueError, UnknownOpError, short_repr
from devtensor.library.custom_op_classes import CustomOp, InplaceCustomOp, P, split_qualname
from devtensor.library.schema_parser import parse_schema, validated_schema
from devtensor.meta import INLINE
from devtensor.structured import (
    TENSOR,
    TENSOR_OR_SCALAR,
    DataDependentOp,
    MultiOutputOp,
    OpSchema,
    PlannedSpec,
    StructuredOp,
    TensorSpec,
    check_op_name,
    schema_from_meta,
)
from devtensor.structured.registry import register_op, unknown_op
from devtensor.tensor import Tensor
from devtensor.views import ViewOp, all_view_ops

if TYPE_CHECKING:
    from devtensor.kernel_signatures import ViewOpName

__all__ = [
    "CustomOp",
    "InplaceCustomOp",
    "MetaFunction",
    "OpLike",
    "custom_op",
    "get_op",
    "remove_op",
    "split_qualname",
]

OpLike = StructuredOp | ViewOp | Callable[..., Any] | str

#: A custom op's meta function: returns the result's ``(shape, dtype)``, or a ``PlannedSpec(shape, dtype, plan)``
#: whose plan the kernels receive as ``plan=``.
MetaFunction = Callable[..., TensorSpec | PlannedSpec[Any]]


# Typed by what is given: a view op or a view op's name (the generated Literal ViewOpName) gives a ViewOp, a
# structured op or any other name a StructuredOp (so that `get_op("mm").impl(...)` takes a structured op's impl);
# a variant or front, which may be either kind's, gives the union. (mypy sees an overlap in a class deriving from both
# ViewOp and StructuredOp, and in a name of a view op held as a plain str: neither is a ViewOp given as a str.)
@overload
def get_op(op: ViewOp | ViewOpName) -> ViewOp: ...  # type: ignore[overload-overlap]
@overload
def get_op(op: StructuredOp | str) -> StructuredOp: ...
@overload
def get_op(op: Callable[..., Any]) -> StructuredOp | ViewOp: ...
def get_op(op: OpLike) -> StructuredOp | ViewOp:
    """The op for ``op``: a :class:`StructuredOp` or :class:`~devtensor.views.ViewOp` as it is, one of the generated
    variants of an op (``devtensor.add``, ``devtensor.add_``, ``devtensor.cpu.add``, ``devtensor.transpose``) or
    the front of a multi-output or data-dependent op (``devtensor.sort``, ``devtensor.unique``), or an op name
    (any op :func:`devtensor.structured.get_op` finds). Either kind has a ``table`` (kernels
    and overrides per key), ``register_kernel``, ``impl`` and ``check_handler``.

    Raises:
        UnknownOpError (a KeyError): no op of that name; the message suggests the nearest names.
        ArgumentTypeError (TypeError): ``op`` is none of the above.
    """
    return find_op(op, "get_op")


def find_op(op: OpLike, caller: str) -> StructuredOp | ViewOp:
    """:func:`get_op` for the registry entry point ``caller`` (``override``, ``register_kernel``, ...): its
    errors name ``caller``."""
    if isinstance(op, (StructuredOp, ViewOp)):
        return op
    if isinstance(op, str):
        namespace, plain = split_qualname(caller, op)
        if namespace is not None:
            custom = _custom_ops.get(plain)
            if custom is None or custom.namespace != namespace or structured.ops_by_name.get(plain) is not custom:
                raise UnknownOpError(f"{caller}: no custom op {op!r} (namespace {namespace!r}, name {plain!r})")
            return custom
        try:
            found_op: StructuredOp | ViewOp = structured.get_op(op)
        except UnknownOpError:
            raise unknown_op(caller, op) from None
        return found_op
    found = getattr(op, "op", None)
    if isinstance(found, (StructuredOp, ViewOp)):
        return found
    if isinstance(found, (MultiOutputOp, DataDependentOp)):
        # (the front of a multi-output or data-dependent op: the op, as its name would give it; these share the
        # registration interface the callers use: table, impl, register_kernel, check_handler)
        same: StructuredOp | ViewOp = structured.get_op(found.name)
        return same
    raise ArgumentTypeError(f"{caller}: expected an op, one of its variants or an op name, got {short_repr(op)}")


#: The ops defined through :func:`custom_op` (by name): these may be replaced and removed.
_custom_ops: dict[str, CustomOp[...]] = {}


def _is_builtin(op: StructuredOp) -> bool:
    """An op devtensor defines itself (not through :func:`custom_op`): never replaced or removed here."""
    return _custom_ops.get(op.name) is not op and op.module.split(".")[0] == "devtensor"


_Meta = Callable[P, TensorSpec | PlannedSpec[Any]]


# The overloads say, from the flags as written, whether the op has an inplace variant: declared (inplace=True), or
# implied by out_may_be_input=True; any other op is a CustomOp, whose inplace is Optional for the type checker (an
# elementwise meta helper may still give it one at run time). The op is called with the meta function's parameters
# (P), unless a schema gives them: its defaults are not the meta's, so its calls are not checked.
@overload
def custom_op(
    name: str | None = None,
    *,
    schema: None = None,
    inplace: Literal[True],
    method: bool = False,
    out_may_be_input: bool = False,
    replace: bool = False,
    doc: str | None = None,
    module: str | None = None,
    namespace: str | None = None,
) -> Callable[[_Meta[P]], InplaceCustomOp[P]]: ...
@overload
def custom_op(
    name: str | None = None,
    *,
    schema: None = None,
    inplace: None = None,
    method: bool = False,
    out_may_be_input: Literal[True],
    replace: bool = False,
    doc: str | None = None,
    module: str | None = None,
    namespace: str | None = None,
) -> Callable[[_Meta[P]], InplaceCustomOp[P]]: ...
@overload
def custom_op(
    name: str | None = None,
    *,
    schema: None = None,
    inplace: bool | None = None,
    method: bool = False,
    out_may_be_input: bool = False,
    replace: bool = False,
    doc: str | None = None,
    module: str | None = None,
    namespace: str | None = None,
) -> Callable[[_Meta[P]], CustomOp[P]]: ...
@overload
def custom_op(
    name: str | None = None,
    *,
    schema: str | OpSchema,
    inplace: Literal[True],
    method: bool = False,
    out_may_be_input: bool = False,
    replace: bool = False,
    doc: str | None = None,
    module: str | None = None,
    namespace: str | None = None,
) -> Callable[[MetaFunction], InplaceCustomOp[...]]: ...
@overload
def custom_op(
    name: str | None = None,
    *,
    schema: str | OpSchema,
    inplace: None = None,
    method: bool = False,
    out_may_be_input: Literal[True],
    replace: bool = False,
    doc: str | None = None,
    module: str | None = None,
    namespace: str | None = None,
) -> Callable[[MetaFunction], InplaceCustomOp[...]]: ...
@overload
def custom_op(
    name: str | None = None,
    *,
    schema: str | OpSchema,
    inplace: bool | None = None,
    method: bool = False,
    out_may_be_input: bool = False,
    replace: bool = False,
    doc: str | None = None,
    module: str | None = None,
    namespace: str | None = None,
) -> Callable[[MetaFunction], CustomOp[...]]: ...
def custom_op(
    name: str | None = None,
    *,
    schema: str | OpSchema | None = None,
    inplace: bool | None = None,
    method: bool = False,
    out_may_be_input: bool = False,
    replace: bool = False,
    doc: str | None = None,
    module: str | None = None,
    namespace: str | None = None,
) -> Callable[[MetaFunction], CustomOp[...]]:
    """Decorator: define an op from user code with its meta function; returns the op, a :class:`CustomOp` (an
    :class:`InplaceCustomOp` when it has an inplace variant), which is a :class:`StructuredOp`.

    The meta function takes the op's parameters and returns ``(shape, dtype)`` of the result (or, annotated
    ``-> PlannedSpec[X]``, a ``PlannedSpec(shape, dtype, plan)``: the kernels then take a keyword-only ``plan: X``
    before ``out``, the values the meta function computed), checking the arguments first (errors name the op,
    the argument and the value). Its annotations are the schema (resolved with ``typing.get_type_hints``, so
    ``from __future__ import annotations`` works): ``Tensor``, ``Tensor | None``, ``Sequence[Tensor]`` /
    ``list[Tensor]``, ``TensorOrScalar``, ``Scalar``, ``int``, ``float``, ``bool``,
    ``str``, ``Literal[...]``, ``Sequence[int]`` / ``tuple[int, ...]``, ``DTypeLike``, each optionally ``| None``,
    with defaults; and ``Generator | None = None`` for a random op's generator (the meta function checks it, e.g.
    with :func:`devtensor.kernels.random.check_generator`; kernels draw from ``generator.stream``).
    Or give ``schema`` as a string, PyTorch style (see :func:`parse_schema`); the meta function
    must then have the schema's parameter names and kinds (its annotations are not read).

    Register impls with ``op.impl("cpu")`` / ``op.impl("cuda")`` (or :func:`register_kernel`); call the op as
    ``op(x, ...)`` or ``devtensor.ops.<namespace>.<name>(x, ...)`` (typed with the meta's parameters),
    ``op.functional`` (with ``out=`` for the out variant) and, where it has one, ``op.inplace``.

    The namespace groups ops as PyTorch's ``torch.ops.<namespace>``: ``custom_op("mylib::softplus")`` (or
    ``namespace="mylib"``) defines the op ``softplus`` of namespace ``mylib``; without one, the namespace is the
    top-level package of the defining module (``mypkg`` for ``mypkg.ops``; ``main`` for ``__main__``). Op names
    stay unique across namespaces (they also name Tensor methods and the ``devtensor.cpu`` bindings).

    Thread-safe: the op is built whole, then put in place of the one it replaces in one step under the
    registry lock (:data:`devtensor.dispatcher.registry_lock`): lookups by name (:func:`get_op`, Tensor
    methods, ``devtensor.cpu.<name>``) find the old op or the new one, never none, and a call that starts
    after this returns uses the new one. Its kernels are registered after it is defined: a call in between
    raises NoKernelError. To replace an op together with its kernels, hold the (reentrant) lock around both
    (``with registry_lock: op = custom_op(...)(meta); op.impl("cpu")(kernel)``): calls of the new op then wait
    for the kernels (calls never take the lock otherwise).

    Args:
        name: the op name, optionally qualified ``"<namespace>::<name>"`` (default: the schema string's, else
            the meta function's ``__name__``).
        schema: a schema string or :class:`OpSchema`, instead of the meta's annotations.
        inplace: generate the inplace variant ``name_``. Default: only where one can succeed, i.e. the first
            parameter is a (non-optional) tensor and the op says its result may be written over an input
            (``out_may_be_input=True``) or its meta function is one of devtensor's elementwise ones
            (:func:`devtensor.meta.unary_ufunc_meta`, :func:`~devtensor.meta.binary_ufunc_meta`). A reduction or
            any op whose result has another shape has none unless declared.
        method: attach ``name`` (and ``name_``) as Tensor methods (default False: a user package should not
            change the Tensor class unless it asks to).
        out_may_be_input: an output may be exactly one of the inputs (same memory and strides), as ``add``'s.
        replace: redefine an op of that name defined by user code (built-in ops cannot be replaced: override
            their kernels with :func:`override` instead).
        doc: the docstring of the variants (default: the meta function's).
        module: the module the op belongs to (``op.module``; default: the module applying the decorator).
            ``python -m devtensor.codegen --package P`` declares the ops of the modules in package ``P``.
        namespace: the op's namespace (see above); must agree with a qualified ``name`` or schema name.
    Raises:
        ValueError: a bad name or namespace (not a plain ASCII identifier, a keyword, starting with ``_``, or
            ``out`` and the other reserved names; namespaces given twice that differ); an op or view op of that
            name exists (and ``replace`` is False, or it is
            built-in); a Tensor method would shadow an existing Tensor attribute; a malformed schema string.
        TypeError: an unsupported annotation (the message names the parameter and the nearest supported type),
            an unannotated or variadic parameter, a meta signature that does not match ``schema``;
            ``inplace=True`` or ``out_may_be_input=True`` (which implies an inplace variant) for an op whose
            first parameter is not a tensor (pass ``inplace=False`` with the latter).
    """

    def define(meta: MetaFunction) -> CustomOp[...]:
        # The op belongs to the module that defines it (the decorator's caller), which need not be the meta
        # function's (a meta made by a helper such as devtensor.meta.binary_ufunc_meta): codegen and
        # ``--package`` select ops by this module.
        owner = module if module is not None else sys._getframe(1).f_globals.get("__name__", "__main__")
        return _define(name, meta, schema, inplace, method, out_may_be_input, replace, doc, str(owner), namespace)

    return define


def _define(
    name: str | None,
    meta: MetaFunction,
    schema: str | OpSchema | None,
    inplace: bool | None,
    method: bool,
    out_may_be_input: bool,
    replace: bool,
    doc: str | None,
    module: str,
    namespace: str | None = None,
) -> CustomOp[...]:
    """:func:`custom_op`'s work once the defining module is known; nothing is registered unless all checks pass."""
    if not callable(meta):
        raise ArgumentTypeError(f"custom_op: the meta function must be callable, got {meta!r}")
    if namespace is not None:
        if not isinstance(namespace, str):
            raise ArgumentTypeError(f"custom_op: argument 'namespace' must be a str, got {short_repr(namespace)}")
        split_qualname("custom_op", f"{namespace}::x")  # (checks it)
    for qualified in (name, schema):
        if isinstance(qualified, str) and "::" in qualified.split("(", 1)[0]:
            given, plain = split_qualname("custom_op", qualified.split("(", 1)[0].strip())
            if namespace is not None and given != namespace:
                raise ArgumentValueError(
                    f"custom_op: namespace {namespace!r} differs from the one of {qualified.split('(', 1)[0]!r}"
                )
            namespace = given
            if qualified is name:
                name = plain
            else:
                schema = plain + "(" + qualified.split("(", 1)[1]
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
        try:
            parsed = schema_from_meta(op_name, meta)
        except ArgumentTypeError as error:
            # An annotation that does not evaluate (a name missing from the meta's module under postponed
            # annotations) leaves the evaluation error as the cause: say that a schema string avoids reading it.
            if error.__cause__ is None or isinstance(error.__cause__, ArgumentTypeError):
                raise
            raise ArgumentTypeError(
                f"{error}. An explicit schema works without the annotations (they are then not read): "
                f"custom_op({op_name!r}, schema={_schema_outline(op_name, meta)!r}), each <type> written as "
                "parse_schema reads it (Tensor, Tensor?, Scalar, int, float, bool, str, int[], ScalarType?, ...)"
            ) from error.__cause__
    else:
        parsed = validated_schema(op_name, parsed)
        _check_meta_matches(op_name, meta, parsed)
    first = parsed.params[0]
    legal_inplace = first.category in (TENSOR, TENSOR_OR_SCALAR)
    if inplace is None:
        if out_may_be_input and not (legal_inplace and not first.optional):
            # (the type checker gives such an op an inplace variant: say so here rather than lack one silently)
            raise ArgumentTypeError(
                f"{op_name}: out_may_be_input=True implies an inplace variant, which needs a (non-optional) tensor "
                "first parameter; pass inplace=False"
            )
        # Only where one can succeed: an elementwise op writes its result over its first input; any other op
        # (a reduction, a matmul) has a result of another shape, and its inplace variant could only fail.
        inplace = legal_inplace and not first.optional and (out_may_be_input or INLINE in getattr(meta, "__dict__", {}))
    elif inplace and not legal_inplace:
        raise ArgumentTypeError(f"{op_name}: an inplace variant needs a tensor first parameter")
    if namespace is None:
        namespace = module.split(".", 1)[0].strip("_") or "main"

    # Checks and swap under the registry lock, as one step: two threads replacing one op each replace the op
    # registered at that moment, and readers find the old op or the new one, never none (see register_op).
    with registry_lock:
        existing = structured.ops_by_name.get(op_name)
        if any(view.name == op_name for view in all_view_ops()):
            raise ArgumentValueError(f"custom_op: {op_name!r} is a view op of devtensor; choose another name")
        if existing is not None:
            if _is_builtin(existing):
                raise ArgumentValueError(
                    f"custom_op: {op_name!r} is a built-in op of devtensor and cannot be redefined; use "
                    "library.override(op, key, fn) to change what it does for a dispatch key"
                )
            if not replace:
                raise ArgumentValueError(
                    f"custom_op: an op named {op_name!r} is defined already (by module {existing.module!r}); "
                    "pass replace=True to redefine it, or choose another name"
                )
        if method:
            owned: set[str] = set()  # methods the op being replaced attached: replacing them shadows nothing
            if existing is not None and existing.method:
                owned = {op_name, op_name + "_"}
            for attr in (op_name, op_name + "_") if inplace else (op_name,):
                if attr not in owned and any(attr in cls.__dict__ for cls in Tensor.__mro__ if cls is not object):
                    raise ArgumentValueError(
                        f"custom_op: a Tensor method {attr!r} would shadow an existing Tensor attribute"
                    )
        op: CustomOp[...] = (InplaceCustomOp if inplace else CustomOp)(
            op_name,
            meta,
            inplace=inplace,
            method=method,
            out_may_be_input=out_may_be_input,
            doc=doc,
            schema=parsed,
            register=False,
        )
        op.module = module
        op.namespace = namespace
        register_op(op, replacing=existing)
        _custom_ops[op_name] = op
    return op


def _schema_outline(op_name: str, meta: Callable[..., Any]) -> str:
    """A schema string to fill in for ``meta``: its parameter names, defaults and ``*``, with ``<type>``
    placeholders (the annotations are what failed to resolve)."""
    parts: list[str] = []
    star = False
    for param in inspect.signature(meta).parameters.values():
        if param.kind == param.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        default = "" if param.default is param.empty else f"={param.default!r}"
        parts.append(f"<type> {param.name}{default}")
    return f"{op_name}({', '.join(parts)}) -> Tensor"


def remove_op(op: OpLike) -> StructuredOp:
    """Undefine a custom op (by op, variant or name): remove it from the registry, its Tensor methods and its
    cached device bindings; returns it. Existing references to its variants keep working.

    Thread-safe: one step under the registry lock (:data:`devtensor.dispatcher.registry_lock`).

    Raises:
        UnknownOpError (a KeyError): no such op (the message suggests near names); given an op or a variant,
            the op of its name is not that op any more (it was replaced: remove the current one by name).
        ValueError: a built-in op of devtensor (they cannot be removed).
    """
    # Under the registry lock: the op found is the one removed (a concurrent replacement cannot slip between).
    with registry_lock:
        found: StructuredOp | ViewOp = find_op(op, "remove_op")
        if isinstance(found, ViewOp):
            raise ArgumentValueError(
                f"remove_op: {found.name!r} is a built-in view op of devtensor and cannot be removed"
            )
        if _is_builtin(found):
            raise ArgumentValueError(f"remove_op: {found.name!r} is a built-in op of devtensor and cannot be removed")
        # By name: the op registered now; by op or variant: that op only (a replaced one is not defined any more).
        try:
            removed = structured.remove_op(found.name, None if isinstance(op, str) else found)
        except KeyError as error:  # (replaced: structured.remove_op's message says so; removed: its name only)
            text = str(error.args[0]) if error.args else found.name
            raise UnknownOpError(f"remove_op: {text if text != found.name else f'no op named {text!r}'}") from None
        if _custom_ops.get(found.name) is found:
            del _custom_ops[found.name]
    # structured.remove_op also drops the op's device bindings (devtensor.cpu.<name>).
    return removed


def _check_meta_matches(op_name: str, meta: Callable[..., Any], schema: OpSchema) -> None:
    """TypeError unless ``meta`` has the schema's parameter names and kinds, in order."""
    try:
        signature = inspect.signature(meta)
    except (TypeError, ValueError) as error:
        raise ArgumentTypeError(f"{op_name}: the meta function has no inspectable signature") from error
    meta_params = [(param.name, param.kind == param.KEYWORD_ONLY) for param in signature.parameters.values()]
    schema_params = [(param.name, param.kw_only) for param in schema.params]
    if meta_params != schema_params:

        def listed(params: list[tuple[str, bool]]) -> str:
            return ", ".join(("*" if kw_only else "") + name for name, kw_only in params)

        raise ArgumentTypeError(
            f"{op_name}: the meta function has parameters ({listed(meta_params)}), but the schema has "
            f"({listed(schema_params)}) (same names and kinds needed; * marks keyword-only)"
        )
