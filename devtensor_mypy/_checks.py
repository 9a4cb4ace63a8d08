"""The helpers of devtensor's mypy plugin (:mod:`devtensor_mypy`): the names it knows, the lookups of ops and
registrars in mypy's analysis, and the exact signature checks."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from mypy import errorcodes as codes
from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    ARG_NAMED,
    ARG_NAMED_OPT,
    ARG_STAR,
    ARG_STAR2,
    Block,
    CallExpr,
    ClassDef,
    ComparisonExpr,
    Context,
    Decorator,
    Expression,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    Import,
    ImportAll,
    ImportFrom,
    IndexExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    OpExpr,
    OverloadedFuncDef,
    RefExpr,
    Statement,
    StrExpr,
    TryStmt,
    TypeInfo,
    Var,
    WhileStmt,
    WithStmt,
)
from mypy.subtypes import is_subtype
from mypy.types import (
    CallableType,
    Instance,
    LiteralType,
    Overloaded,
    TupleType,
    Type,
    UnionType,
    get_proper_type,
)

KERNEL_SIGNATURE: Final = ErrorCode(
    "kernel-signature", "A kernel registration does not match its op's schema exactly", "devtensor"
)
META_DATA_READ: Final = ErrorCode("meta-data-read", "A meta function reads tensor data", "devtensor")

_REGISTRAR: Final = "devtensor.structured.registry.KernelRegistrar"
_STRUCTURED_OP: Final = "devtensor.structured.registry.StructuredOp"
_PLAIN_TENSOR: Final = "devtensor.tensor.Tensor"
_TENSOR_CLASSES: Final = ("devtensor.tensor.Tensor.", "devtensor._generated_methods.TensorOpMethods.")
#: What a meta function may use of a Tensor: TensorMeta's members and a few more pieces of metadata.
_METADATA: Final = frozenset(
    {
        "shape",
        "dtype",
        "ndim",
        "device",
        "strides",
        "stride",
        "numel",
        "dim",
        "size",
        "element_size",
        "is_contiguous",
        "__len__",
    }
)
_META_DECORATORS: Final = ("structured_op", "custom_op")
_KEYS: Final = {"cpu": "cpu", "cuda": "cuda"}


class _DecoratorFinder:
    """Collects, in one module: the meta functions (decorated by structured_op / custom_op) and, for each
    decorator expression, the Decorator node it belongs to. (A plain walk over statements: a compiled mypy's
    visitor classes cannot be subclassed by an interpreted plugin.)"""

    def __init__(self) -> None:
        self.metas: set[FuncItem] = set()
        self.decorated: dict[int, Decorator] = {}

    def walk(self, statements: list[Statement]) -> None:
        for stmt in statements:
            if isinstance(stmt, Decorator):
                self._decorator(stmt)
                self.walk(stmt.func.body.body)
            elif isinstance(stmt, OverloadedFuncDef):
                self.walk(list(stmt.items))
            elif isinstance(stmt, FuncDef):
                self.walk(stmt.body.body)
            elif isinstance(stmt, ClassDef):
                self.walk(stmt.defs.body)
            else:
                for block in _blocks(stmt):
                    self.walk(block.body)

    def _decorator(self, o: Decorator) -> None:
        for d in o.decorators:
            self.decorated[id(d)] = o
            callee = d.callee if isinstance(d, CallExpr) else d
            if (
                isinstance(callee, RefExpr)
                and callee.fullname.startswith("devtensor.")
                and callee.fullname.rsplit(".", 1)[1] in _META_DECORATORS
            ):
                self.metas.add(o.func)


def _blocks(stmt: Statement) -> list[Block]:
    """The blocks a compound statement holds (if/while/for/with/try bodies)."""
    blocks: list[Block | None] = []
    if isinstance(stmt, Block):
        blocks.append(stmt)
    elif isinstance(stmt, IfStmt):
        blocks += [*stmt.body, stmt.else_body]
    elif isinstance(stmt, (ForStmt, WhileStmt)):
        blocks += [stmt.body, stmt.else_body]
    elif isinstance(stmt, WithStmt):
        blocks.append(stmt.body)
    elif isinstance(stmt, TryStmt):
        blocks += [stmt.body, *stmt.handlers, stmt.else_body, stmt.finally_body]
    return [b for b in blocks if b is not None]


# --- helpers ---------------------------------------------------------------------------------------------------


def _member_used(context: Context) -> str:
    """What a Tensor method hook's call site uses, for the message: ``Tensor.<name>``, an operator, indexing."""
    if isinstance(context, CallExpr) and isinstance(context.callee, MemberExpr):
        return f"calls Tensor.{context.callee.name}()"
    if isinstance(context, MemberExpr):
        return f"uses Tensor.{context.name}"
    if isinstance(context, (OpExpr, ComparisonExpr)):
        op = context.op if isinstance(context, OpExpr) else context.operators[0]
        return f"computes with the operator {op!r}"
    if isinstance(context, IndexExpr):
        return "indexes a Tensor"
    if isinstance(context, ForStmt):
        return "iterates over a Tensor"
    return "uses a Tensor's data"


_PRI_MED: Final = 10  # mypy's priority of an ordinary import (mypy.build.PRI_MED)
_GENERATED_HEAD: Final = b'"""Generated by `python -m devtensor.codegen`'
_MAX_SCANNED: Final = 2000  # files read per package at most, looking for generated modules


def _imports_devtensor(file: MypyFile) -> bool:
    for imp in file.imports:
        ids = [name for name, _ in imp.ids] if isinstance(imp, Import) else []
        ids += [imp.id] if isinstance(imp, (ImportFrom, ImportAll)) else []
        if any(i == "devtensor" or i.startswith("devtensor.") for i in ids):
            return True
    return False


def _package_root(file: MypyFile) -> tuple[Path, str, bool] | None:
    """(directory to scan, module-name prefix of its files, recursively?) for ``file``: its top package's
    directory, or, for a top-level module, its own directory (not recursively)."""
    if not file.path:
        return None
    path = Path(file.path)
    depth = file.fullname.count(".")
    is_init = path.stem == "__init__"
    if depth == 0 and not is_init:
        return path.parent, "", False
    up = depth if is_init else depth - 1
    root = path.parent
    for _ in range(up):
        root = root.parent
    return root, file.fullname.split(".", 1)[0] + ".", True


def _generated_modules(root: Path, prefix: str, recursive: bool) -> list[str]:
    """The modules under ``root`` whose file starts as the generator writes it (``kernels_module``)."""
    found: list[str] = []
    try:
        paths = root.rglob("*.py") if recursive else root.glob("*.py")
        for count, path in enumerate(paths):
            if count >= _MAX_SCANNED:
                break
            with open(path, "rb") as f:
                if f.read(len(_GENERATED_HEAD)) != _GENERATED_HEAD:
                    continue
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append(prefix + ".".join(parts) if parts else prefix.rstrip("."))
    except OSError:
        return found
    return sorted(found)


def _registrar_meta(info: TypeInfo) -> str | None:
    """A generated registrar class's ``meta_function`` (the fullname of its op's meta function)."""
    sym = info.names.get("meta_function")
    value = sym.node.final_value if sym is not None and isinstance(sym.node, Var) else None
    return value if isinstance(value, str) and info.has_base(_REGISTRAR) else None


def _meta_of(expr: Expression) -> str | None:
    """The fullname of the meta function an op expression refers to (``softplus_op``, defined by a decorator)."""
    if isinstance(expr, RefExpr) and isinstance(expr.node, Decorator):
        return expr.node.func.fullname
    return None


def _check_both_devices(checker: TypeChecker, context: Context, op: str, registrar: TypeInfo, impl: Type) -> None:
    """``@<op>.xp`` of an op with tensor-or-number parameters, in a file generated before the registrars held one
    form per checker (``if MYPY:``), is overloaded with a second, generic form for pyright, which also lets through an
    impl of one device type only: hold the impl to the first form, which wants both (an overload per device type).
    Files generated now give mypy the first form alone (see ``codegen.kernels._xp_protocol``)."""
    node = registrar.get_method("xp")
    typ = get_proper_type(node.type) if isinstance(node, OverloadedFuncDef) and node.type else None
    if not isinstance(typ, Overloaded) or not typ.items[0].arg_types[1:]:
        return
    wanted = typ.items[0].arg_types[1]
    if not is_subtype(impl, wanted):
        checker.fail(
            f"impl of '{op}' (xp) must take the tensors of either device type ({get_proper_type(wanted)}: one "
            "overload per device type); it serves one only",
            context,
            code=codes.ARG_TYPE,
        )


def _plain_tensor_in(typ: Type) -> bool:
    """Whether ``typ`` holds a plain ``Tensor`` (not a refined one): itself, in a union, or as a type argument
    (``Sequence[Tensor]``, ``ConstOut[Tensor]``)."""
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        return any(_plain_tensor_in(item) for item in proper.items)
    if isinstance(proper, Instance):
        return proper.type.fullname == _PLAIN_TENSOR or any(_plain_tensor_in(arg) for arg in proper.args)
    return False


def _check_refined_xp(checker: TypeChecker, context: Context, op: str, registrar: TypeInfo, impl: Type) -> None:
    """``@<op>.xp`` of an op with tensor-or-number parameters takes, for mypy, a Protocol with one overload per
    device type: a plain ``Tensor`` (or ``Tensor | Scalar``) parameter fits both, so mypy accepts it; the run-time
    types are the refined ones only, as for every other registrar. Report such a parameter."""
    typ = _method_type(registrar, "xp")
    proto = get_proper_type(typ.arg_types[1]) if typ is not None and len(typ.arg_types) > 1 else None
    node = proto.type.get_method("__call__") if isinstance(proto, Instance) else None
    if not isinstance(node, OverloadedFuncDef):
        return
    impl = get_proper_type(impl)
    if not isinstance(impl, CallableType):
        return
    plain = [
        name or f"#{i}"
        for i, (name, arg) in enumerate(zip(impl.arg_names, impl.arg_types, strict=True))
        if i and _plain_tensor_in(arg)
    ]
    if plain:
        checker.fail(
            f"impl of '{op}' (xp) takes a plain Tensor for {', '.join(repr(n) for n in plain)}: an xp impl takes the "
            "tensors of one refined type (CPUTensor or CUDATensor: a TypeVar constrained to the two)",
            context,
            code=codes.ARG_TYPE,
        )


def _withdraw_call_errors(checker: TypeChecker, line: int) -> None:
    """Drop mypy's own errors and notes on ``line`` (a registration's decorator line) of the module being checked:
    the plugin reported the registration's shape itself, naming the op, key and parameters; mypy's message for it
    reads ``expected "...Kernel[Never, Never]"`` (it cannot infer a Protocol's TypeVars from another shape)."""
    errors = checker.msg.errors
    infos = errors.error_info_map.get(errors.file)
    if infos:
        infos[:] = [i for i in infos if i.line != line or i.code is KERNEL_SIGNATURE]


def _registrar_use(context: Context) -> MemberExpr | None:
    """The ``<registrar>.<method>`` expression of a registration: the decorator, or the callee of a call."""
    if isinstance(context, Decorator):
        return next((d for d in context.decorators if isinstance(d, MemberExpr)), None)
    if isinstance(context, CallExpr) and isinstance(context.callee, MemberExpr):
        return context.callee
    return None


def _registrar_op_name(used: MemberExpr | None, registrar: TypeInfo) -> str:
    """The op a typed registrar registers for: the attribute it was read as (``ks.softplus.cpu``)."""
    if used is not None and isinstance(used.expr, (NameExpr, MemberExpr)):
        return used.expr.name
    return registrar.name


def _callee_name(context: object) -> str | None:
    if isinstance(context, CallExpr) and isinstance(context.callee, (NameExpr, MemberExpr)):
        return context.callee.name
    return None


def _named_op(typ: Type) -> str | None:
    """The name a ``StructuredOp[Literal["name"]]`` carries (see :func:`_with_name`)."""
    typ = get_proper_type(typ)
    if isinstance(typ, Instance) and typ.type.has_base(_STRUCTURED_OP) and typ.args:
        name = get_proper_type(typ.args[0])
        if isinstance(name, LiteralType) and isinstance(name.value, str):
            return name.value
    return None


def _with_name(typ: Type, name: str, api: TypeChecker) -> Type:
    """``StructuredOp[...]`` (or a callable returning one, ``structured_op(name)``'s) with the type argument the
    literal ``name``: mypy infers ``str`` for the ``LiteralString`` TypeVar, pyright keeps the literal."""
    proper = get_proper_type(typ)
    if isinstance(proper, CallableType):
        return proper.copy_modified(ret_type=_with_name(proper.ret_type, name, api))
    if isinstance(proper, Instance) and proper.type.has_base(_STRUCTURED_OP) and len(proper.args) == 1:
        return proper.copy_modified(args=[LiteralType(name, api.named_type("builtins.str"))])
    return typ


def _op_name(expr: Expression) -> str | None:
    """The op an expression names: a string literal, an op defined by ``@structured_op`` / ``@custom_op``
    (its ``name`` argument, else the meta function's name), or ``get_op("name")``."""
    # (a qualified name, "mylib::softplus", is named by its op name: op names are unique across namespaces)
    if isinstance(expr, StrExpr):
        return expr.value.rpartition("::")[2]
    if isinstance(expr, CallExpr) and isinstance(expr.callee, (NameExpr, MemberExpr)) and expr.callee.name == "get_op":
        if expr.args and isinstance(expr.args[0], StrExpr):
            return expr.args[0].value.rpartition("::")[2]
        return None
    if isinstance(expr, RefExpr) and isinstance(expr.node, Var) and expr.node.type is not None:
        # an op made by a family helper (``exp = unary_ufunc("exp", ...)``): its type carries the name
        return _named_op(expr.node.type)
    if isinstance(expr, RefExpr) and isinstance(expr.node, Decorator):
        for d in expr.node.decorators:
            callee = d.callee if isinstance(d, CallExpr) else d
            if not (isinstance(callee, RefExpr) and callee.fullname.rsplit(".", 1)[-1] in _META_DECORATORS):
                continue
            if isinstance(d, CallExpr):
                for i, (arg, name) in enumerate(zip(d.args, d.arg_names, strict=True)):
                    if name == "name" or (name is None and i == 0):
                        return arg.value.rpartition("::")[2] if isinstance(arg, StrExpr) else None
            return expr.node.func.name
        # Read from mypy's cache a Decorator has no decorator expressions left: an op is then known by its
        # type, and named by its meta function (an op renamed by name= is not recognised this way).
        typ = get_proper_type(expr.node.var.type) if expr.node.var.type else None
        if not expr.node.decorators and isinstance(typ, Instance) and typ.type.has_base(_STRUCTURED_OP):
            return expr.node.func.name
    return None


def _key_name(expr: Expression) -> str | None:
    """``"cpu"`` / ``"cuda"`` for the literal keys (a device-type string, ``DispatchKey.CPU`` / ``.CUDA``)."""
    if isinstance(expr, StrExpr):
        return _KEYS.get(expr.value)
    if isinstance(expr, MemberExpr):
        return _KEYS.get(expr.name.lower())
    return None


def _method_type(info: TypeInfo, method: str) -> CallableType | None:
    """A registrar's method type; of an overloaded one (``xp`` of an op with tensor-or-number parameters), its
    first item, the form written for mypy."""
    node = info.get_method(method)
    if isinstance(node, Decorator):
        node = node.func
    typ = get_proper_type(node.type) if isinstance(node, (FuncDef, OverloadedFuncDef)) and node.type else None
    if isinstance(typ, Overloaded):
        typ = typ.items[0]
    return typ if isinstance(typ, CallableType) else None


def _bound_method(registrar: TypeInfo, method: str) -> CallableType | None:
    """The registrar's ``method`` (``cpu``, ``cuda``, ``xp``) as a callable without ``self``."""
    typ = _method_type(registrar, method)
    if typ is None or not typ.arg_types:
        return None
    return typ.copy_modified(arg_types=typ.arg_types[1:], arg_kinds=typ.arg_kinds[1:], arg_names=typ.arg_names[1:])


def _protocol_call(registrar: TypeInfo, method: str) -> CallableType | None:
    """``__call__`` of the kernel Protocol the registrar's ``method`` takes (its first item if overloaded)."""
    typ = _method_type(registrar, method)
    if typ is None or len(typ.arg_types) < 2:
        return None
    proto = get_proper_type(typ.arg_types[1])
    if not isinstance(proto, Instance):
        return None
    node = proto.type.get_method("__call__")
    call = get_proper_type(node.type) if isinstance(node, (FuncDef, OverloadedFuncDef)) and node.type else None
    if isinstance(call, Overloaded):
        call = call.items[0]
    return call if isinstance(call, CallableType) else None


def _check_exact(
    api: object, context: Context, op: str, method: str, expected: CallableType, impl: CallableType
) -> bool:
    """Report an impl whose parameters are not the op's by name and kind, as the run-time check refuses it: a
    missing, extra or misnamed parameter, ``*args``/``**kwargs``, a keyword-only parameter taken positionally or
    the reverse. Returns whether it reported (the caller then skips mypy's own check of the types, whose message
    would be about ``Never``)."""
    if not isinstance(api, TypeChecker):
        return False
    want = [
        (str(n), k in (ARG_NAMED, ARG_NAMED_OPT))
        for n, k in zip(expected.arg_names[1:], expected.arg_kinds[1:], strict=True)
    ]
    got = [
        ("*" * (k == ARG_STAR) + "**" * (k == ARG_STAR2) + str(n), k in (ARG_NAMED, ARG_NAMED_OPT))
        for n, k in zip(impl.arg_names, impl.arg_kinds, strict=True)
    ]
    if got == want:
        return False
    api.fail(
        f"impl of '{op}' ({method}) has parameters ({_fmt(got)}), expected ({_fmt(want)}): the op's parameters by "
        "name and kind, then keyword-only 'out' (the run-time check refuses this)",
        context,
        code=KERNEL_SIGNATURE,
    )
    return True


def _check_against_meta(
    checker: TypeChecker, context: Context, op: str, op_expr: Expression, impl: CallableType
) -> None:
    """For an op without a kernel Protocol whose meta function mypy sees (``op_expr`` names it): the impl's
    parameter names and kinds must be the meta's, then a keyword-only ``plan`` when the meta returns a
    PlannedSpec, then a keyword-only ``out``; an ``xp`` first is allowed. Every mismatch is reported (no
    Protocol checks this op's impls)."""
    if not (isinstance(op_expr, RefExpr) and isinstance(op_expr.node, Decorator)):
        return
    meta = op_expr.node.func
    want = [(str(n), k in (ARG_NAMED, ARG_NAMED_OPT)) for n, k in zip(meta.arg_names, meta.arg_kinds, strict=True)]
    ret = get_proper_type(meta.type.ret_type) if isinstance(meta.type, CallableType) else None
    if isinstance(ret, TupleType):  # a NamedTuple type: PlannedSpec[X] is one
        ret = ret.partial_fallback
    if isinstance(ret, Instance) and ret.type.fullname == "devtensor.tensor.PlannedSpec":
        want.append(("plan", True))
    want.append(("out", True))
    got = [
        ("*" * (k == ARG_STAR) + "**" * (k == ARG_STAR2) + str(n), k in (ARG_NAMED, ARG_NAMED_OPT))
        for n, k in zip(impl.arg_names, impl.arg_kinds, strict=True)
    ]
    if got[:1] == [("xp", False)]:
        got = got[1:]
    if got != want:
        checker.fail(
            f"impl of '{op}' has parameters ({_fmt(got)}), expected ({_fmt(want)}): the names and kinds of the meta "
            "function, plus keyword-only 'out' (the run-time check refuses this)",
            context,
            code=KERNEL_SIGNATURE,
        )


def _fmt(params: list[tuple[str, bool]]) -> str:
    parts: list[str] = []
    star = False
    for name, kw in params:
        if kw and not star and not name.startswith("*"):
            parts.append("*")
            star = True
        parts.append(name)
    return ", ".join(parts)


def _meta_error(api: object, context: Context, meta: FuncItem, what: str) -> None:
    if isinstance(api, TypeChecker):
        api.fail(
            f"meta function '{meta.name}' {what}: a meta function may read only tensor metadata "
            "(annotate its tensor parameters TensorMeta)",
            context,
            code=META_DATA_READ,
        )
