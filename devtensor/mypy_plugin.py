"""devtensor's mypy plugin: kernel registrations checked against their op's schema exactly, and meta functions
kept off tensor data. Enable it with ``plugins = devtensor.mypy_plugin`` in the ``[mypy]`` section of a mypy
config (the project's own ``mypy.ini`` does).

What plain mypy checks without it: the typed registrars (``@kernel_signatures.<op>.cpu`` / ``.cuda`` / ``.xp``)
hold an impl to the op's kernel Protocol, so a wrong or missing parameter, a plain ``Tensor`` (or
``ConstOut[Tensor]``) where the key's refined type belongs, or a missing number/None case is an error. A
Protocol cannot say "exactly these parameters": an impl with an extra parameter that has a default, one that
takes a keyword-only parameter (``out``, ``plan``, …) positionally, or one with ``*args`` / ``**kwargs`` is a
valid subtype, yet the run-time check (``check_impl_signature``) refuses it at registration.

What the plugin adds (error code ``kernel-signature`` unless said otherwise):

* every registration form is checked against the schema's parameter names and kinds, as the run-time check
  does: the typed registrars, ``op.impl(keys)`` used as a decorator (``op`` an op defined with
  ``@structured_op`` / ``@library.custom_op`` in reach of mypy, or ``get_op("name")``), and
  ``library.override(op, key, fn)`` / ``library.register_kernel(op, key, fn)`` with ``op`` a string literal, such
  an op, or ``get_op("name")``;
* an op with no kernel Protocol (a custom op without generated signatures) whose meta function mypy sees: its
  impls' parameter names and kinds against the meta's (plus ``plan`` for a PlannedSpec, keyword-only ``out``,
  an optional ``xp`` first), every mismatch reported;
* ``op.impl(...)``, ``override`` and ``register_kernel`` are also type-checked against the op's kernel
  Protocol (the same errors as the typed registrars: ``arg-type``, ``type-var``), for ops that have one in
  ``devtensor.kernel_signatures`` or in the ``kernel_signatures`` module of the calling module's top package
  (``python -m devtensor.codegen --package mypkg``); keys ``"cpu"``, ``"cuda"`` (or ``DispatchKey.CPU`` /
  ``.CUDA``), both at once for an ``xp`` impl;
* in a meta function (decorated with ``structured_op`` or ``custom_op``), using a ``Tensor`` parameter for
  anything but the metadata ``TensorMeta`` offers (``shape``, ``dtype``, ``ndim``, ``device``, ``strides``,
  ``numel()``, ``dim()``, ``size()``; also ``element_size()``, ``is_contiguous()``, ``len()``) is an error with
  code ``meta-data-read``: ``.numpy()``, ``.item()``, ``.tolist()``, indexing, iteration, ``.to()``, the backing
  array, ops called as methods or operators. Annotating the parameter ``TensorMeta`` gets the same from plain
  mypy.

Not checked (the run-time check still refuses these at registration): registrations whose op or key mypy cannot
see as literals (an op held in a variable, a key computed at run time), ``op.impl(key)(fn)`` called without
decorator syntax (types are checked, names and kinds are not), impls that are not plain functions (overloaded,
``functools.partial``), an op that mypy reads from its cache and that was renamed (``structured_op(name=...)``
in another module: then known by its meta function's name only), and data reads a meta function makes through a
builtin conversion (``float(t)``, ``bool(t)``, ``if t:``) or by passing the tensor to another function.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    ARG_NAMED,
    ARG_NAMED_OPT,
    ARG_POS,
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
from mypy.options import Options
from mypy.plugin import AttributeContext, FunctionContext, MethodContext, Plugin
from mypy.types import CallableType, Instance, Overloaded, TupleType, Type, get_proper_type

__all__ = ["DevtensorPlugin", "plugin"]

KERNEL_SIGNATURE: Final = ErrorCode(
    "kernel-signature", "A kernel registration does not match its op's schema exactly", "devtensor"
)
META_DATA_READ: Final = ErrorCode("meta-data-read", "A meta function reads tensor data", "devtensor")

_REGISTRAR: Final = "devtensor.structured.registry.KernelRegistrar"
_STRUCTURED_OP: Final = "devtensor.structured.registry.StructuredOp"
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


class DevtensorPlugin(Plugin):
    """The plugin (see the module docstring for what it checks)."""

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        # Per checked module (keyed by its tree: a daemon re-parses a changed module): the meta functions
        # defined in it, and the Decorator each decorator expression belongs to.
        self._metas: dict[int, tuple[MypyFile, set[FuncItem]]] = {}
        self._decorated: dict[int, tuple[MypyFile, dict[int, Decorator]]] = {}
        # Per directory scanned: the generated kernel-signature modules in it (see get_additional_deps).
        self._generated: dict[str, list[str]] = {}

    # --- hooks ---------------------------------------------------------------------------------------------

    def get_additional_deps(self, file: MypyFile) -> list[tuple[int, str, int]]:
        """A module of a user's package that imports devtensor depends on the package's generated kernel-signature
        modules (whatever their names): mypy then analyses them first, whatever the order it visits modules in, so
        the registrations in the module are checked against them, and rechecks the module when they change (its
        cached result is not reused against a regenerated file)."""
        if file.fullname.split(".", 1)[0] == "devtensor" or not _imports_devtensor(file):
            return []
        return [(_PRI_MED, module, -1) for module in self._generated_near(file) if module != file.fullname]

    def _generated_near(self, file: MypyFile) -> list[str]:
        """The generated kernel-signature modules of ``file``'s top package (of its directory, for a top-level
        module), found by their first line; cached per directory."""
        found = _package_root(file)
        if found is None:
            return []
        root, prefix, recursive = found
        key = str(root)
        if key not in self._generated:
            self._generated[key] = _generated_modules(root, prefix, recursive)
        return self._generated[key]

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        if fullname.startswith(_TENSOR_CLASSES):
            name = fullname.rsplit(".", 1)[1]
            return None if name in _METADATA else self._tensor_method
        if fullname == f"{_STRUCTURED_OP}.impl":
            return self._op_impl
        cls, _, method = fullname.rpartition(".")
        if method in ("cpu", "cuda", "xp") and self._is_registrar(cls):
            return self._typed_registrar
        return None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        if fullname.startswith("devtensor.library.") and fullname.rsplit(".", 1)[1] in ("override", "register_kernel"):
            return self._library_registration
        if fullname in ("devtensor.library.custom_ops.get_op", "devtensor.structured.registry.get_op"):
            return self._get_op
        return None

    def _get_op(self, ctx: FunctionContext) -> Type:
        """``get_op("name")`` of a structured op (one with typed kernel signatures) is a StructuredOp, not the
        declared ``StructuredOp | ViewOp``: its ``impl`` is then checked like any op's."""
        args = ctx.args[0] if ctx.args else []
        checker = ctx.api
        if len(args) == 1 and isinstance(args[0], StrExpr) and isinstance(checker, TypeChecker):
            node = self.lookup_fully_qualified(_STRUCTURED_OP)
            if isinstance(node.node if node is not None else None, TypeInfo) and self._registrar(
                checker, args[0].value
            ):
                assert node is not None and isinstance(node.node, TypeInfo)
                return Instance(node.node, [])
        return ctx.default_return_type

    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        if fullname.startswith(_TENSOR_CLASSES) and fullname.rsplit(".", 1)[1] in ("_array", "_storage"):
            return self._tensor_attribute
        return None

    # --- typed registrars ----------------------------------------------------------------------------------

    def _is_registrar(self, fullname: str) -> bool:
        node = self.lookup_fully_qualified(fullname) if "." in fullname else None
        info = node.node if node is not None else None
        return isinstance(info, TypeInfo) and info.has_base(_REGISTRAR) and info.fullname != _REGISTRAR

    def _typed_registrar(self, ctx: MethodContext) -> Type:
        """``@kernel_signatures.<op>.cpu`` and friends, after mypy checked the call: an impl whose parameter names
        and kinds are not the op's gets one ``kernel-signature`` error naming the op, the key and the expected
        parameters; mypy's own errors for it are withdrawn (see :func:`_withdraw_call_errors`)."""
        receiver = get_proper_type(ctx.type)
        used = _registrar_use(ctx.context)
        if not (isinstance(receiver, Instance) and used is not None and ctx.arg_types and ctx.arg_types[0]):
            return ctx.default_return_type
        expected = _protocol_call(receiver.type, used.name)
        impl = get_proper_type(ctx.arg_types[0][0])
        if expected is not None and isinstance(impl, CallableType):
            op = _registrar_op_name(used, receiver.type)
            if _check_exact(ctx.api, ctx.context, op, used.name, expected, impl) and isinstance(ctx.api, TypeChecker):
                _withdraw_call_errors(ctx.api, ctx.context.line)
        return ctx.default_return_type

    # --- op.impl(...) ----------------------------------------------------------------------------------------

    def _op_impl(self, ctx: MethodContext) -> Type:
        """``op.impl(keys)``: the decorator it returns takes what the op's typed registrar for those keys takes."""
        call = ctx.context
        if not isinstance(call, CallExpr) or not isinstance(call.callee, MemberExpr) or not ctx.args:
            return ctx.default_return_type
        op = _op_name(call.callee.expr)
        named = [_key_name(arg) for arg in ctx.args[0]]
        keys = {k for k in named if k is not None}
        if op is None or not keys or len(keys) < len(set(named)):
            return ctx.default_return_type
        checker = ctx.api
        if not isinstance(checker, TypeChecker):
            return ctx.default_return_type
        decorator = self._decorator_of(checker, call)
        impl = decorator.func.type if decorator is not None else None
        takes_xp = isinstance(impl, CallableType) and impl.arg_names[:1] == ["xp"]
        method = "xp" if takes_xp or len(keys) > 1 else next(iter(keys))
        found = self._find_registrar(checker, op, _meta_of(call.callee.expr))
        registrar, op = found if found is not None else (None, op)
        if registrar is None:
            # No kernel Protocol (a custom op without generated signatures): names and kinds from its meta.
            if isinstance(impl, CallableType) and decorator is not None:
                _check_against_meta(checker, decorator, op, call.callee.expr, impl)
            return ctx.default_return_type
        if method == "xp" and not takes_xp and decorator is not None:
            return ctx.default_return_type  # an impl of several keys without xp: types beyond the Protocols
        if isinstance(impl, CallableType) and decorator is not None:
            expected = _protocol_call(registrar, method)
            if expected is not None and _check_exact(checker, decorator, op, method, expected, impl):
                return ctx.default_return_type  # reported: not type-checked further (see _registrar_signature)
        bound = _bound_method(registrar, method)
        return bound if bound is not None else ctx.default_return_type

    def _decorator_of(self, checker: TypeChecker, expr: Expression) -> Decorator | None:
        tree = checker.tree
        entry = self._decorated.get(id(tree))
        table = entry[1] if entry is not None and entry[0] is tree else self._scan(tree)
        return table.get(id(expr))

    # --- library.override / library.register_kernel ----------------------------------------------------------

    def _library_registration(self, ctx: FunctionContext) -> Type:
        checker = ctx.api
        if not isinstance(checker, TypeChecker) or len(ctx.args) < 3 or not all(ctx.args[:3]):
            return ctx.default_return_type
        op = _op_name(ctx.args[0][0])
        key = _key_name(ctx.args[1][0])
        fn_expr = ctx.args[2][0]
        impl = get_proper_type(ctx.arg_types[2][0])
        if isinstance(fn_expr, RefExpr) and isinstance(fn_expr.node, Decorator):
            # A function registered already (its type is then the registrar's Protocol): its own signature.
            own = get_proper_type(fn_expr.node.func.type) if fn_expr.node.func.type else None
            impl = own if isinstance(own, CallableType) else impl
        if op is None or key is None or not isinstance(impl, CallableType):
            return ctx.default_return_type
        found = self._find_registrar(checker, op, _meta_of(ctx.args[0][0]))
        registrar, op = found if found is not None else (None, op)
        if registrar is None:
            _check_against_meta(checker, fn_expr, op, ctx.args[0][0], impl)
            return ctx.default_return_type
        function = "override" if ctx.context and _callee_name(ctx.context) == "override" else "register_kernel"
        method = "xp" if function == "register_kernel" and impl.arg_names[:1] == ["xp"] else key
        expected = _protocol_call(registrar, method)
        if expected is not None and _check_exact(checker, fn_expr, op, method, expected, impl):
            return ctx.default_return_type  # reported: not type-checked further (see _registrar_signature)
        bound = _bound_method(registrar, method)
        if bound is not None:
            checker.expr_checker.check_call(bound, [fn_expr], [ARG_POS], fn_expr)
        return ctx.default_return_type

    def _registrar(self, checker: TypeChecker, op: str) -> TypeInfo | None:
        """The typed registrar class of the op named ``op`` (see :meth:`_find_registrar`)."""
        found = self._find_registrar(checker, op, None)
        return found[0] if found is not None else None

    def _find_registrar(self, checker: TypeChecker, op: str, meta: str | None) -> tuple[TypeInfo, str] | None:
        """The typed registrar class of ``op``: in a generated kernel-signature module of the checked module's top
        package (any name: see :meth:`get_additional_deps`), or in ``devtensor.kernel_signatures``; the one whose
        ``meta_function`` is ``meta`` (the fullname of the op's meta function) when given and found, else the one
        named ``op``; with the op's name (the registrar's variable). Modules are taken from the build by name, not
        as attributes of their package (a package read from mypy's cache does not list its submodules)."""
        top = checker.tree.fullname.split(".", 1)[0]
        near = self._generated_near(checker.tree) if top != "devtensor" else []
        modules = self._modules or {}
        trees = [modules.get(m) for m in (*near, "devtensor.kernel_signatures")]
        for tree in trees:
            if tree is None or meta is None or tree.fullname == "devtensor.kernel_signatures":
                continue  # (built-in ops are found by name: no need to scan some 300 registrars)
            for name, sym in tree.names.items():
                typ = get_proper_type(sym.node.type) if isinstance(sym.node, Var) and sym.node.type else None
                if isinstance(typ, Instance) and _registrar_meta(typ.type) == meta:
                    return typ.type, name
        for tree in trees:
            entry = tree.names.get(op) if tree is not None else None
            var = entry.node if entry is not None else None
            typ = get_proper_type(var.type) if isinstance(var, Var) and var.type else None
            if isinstance(typ, Instance) and typ.type.has_base(_REGISTRAR):
                return typ.type, op
        return None

    # --- meta functions --------------------------------------------------------------------------------------

    def _in_meta(self, api: object) -> FuncItem | None:
        if not isinstance(api, TypeChecker):
            return None
        entry = self._metas.get(id(api.tree))
        if entry is None or entry[0] is not api.tree:
            self._scan(api.tree)
            entry = self._metas[id(api.tree)]
        metas = entry[1]
        if not metas:
            return None
        for frame in api.scope.stack:
            if isinstance(frame, FuncItem) and frame in metas:
                return frame
        return None

    def _tensor_method(self, ctx: MethodContext) -> Type:
        meta = self._in_meta(ctx.api)
        if meta is not None:
            _meta_error(ctx.api, ctx.context, meta, _member_used(ctx.context))
        return ctx.default_return_type

    def _tensor_attribute(self, ctx: AttributeContext) -> Type:
        meta = self._in_meta(ctx.api)
        if meta is not None:
            _meta_error(ctx.api, ctx.context, meta, _member_used(ctx.context))
        return ctx.default_attr_type

    def _scan(self, tree: MypyFile) -> dict[int, Decorator]:
        finder = _DecoratorFinder()
        finder.walk(tree.defs)
        self._metas[id(tree)] = (tree, finder.metas)
        self._decorated[id(tree)] = (tree, finder.decorated)
        return finder.decorated


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


def _op_name(expr: Expression) -> str | None:
    """The op an expression names: a string literal, an op defined by ``@structured_op`` / ``@custom_op``
    (its ``name`` argument, else the meta function's name), or ``get_op("name")``."""
    if isinstance(expr, StrExpr):
        return expr.value
    if isinstance(expr, CallExpr) and isinstance(expr.callee, (NameExpr, MemberExpr)) and expr.callee.name == "get_op":
        if expr.args and isinstance(expr.args[0], StrExpr):
            return expr.args[0].value
        return None
    if isinstance(expr, RefExpr) and isinstance(expr.node, Decorator):
        for d in expr.node.decorators:
            callee = d.callee if isinstance(d, CallExpr) else d
            if not (isinstance(callee, RefExpr) and callee.fullname.rsplit(".", 1)[-1] in _META_DECORATORS):
                continue
            if isinstance(d, CallExpr):
                for i, (arg, name) in enumerate(zip(d.args, d.arg_names, strict=True)):
                    if name == "name" or (name is None and i == 0):
                        return arg.value if isinstance(arg, StrExpr) else None
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
    node = info.get_method(method)
    if isinstance(node, Decorator):
        node = node.func
    typ = get_proper_type(node.type) if isinstance(node, (FuncDef, OverloadedFuncDef)) and node.type else None
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


def plugin(version: str) -> type[DevtensorPlugin]:
    """mypy's entry point: the plugin class (any mypy version the project supports)."""
    return DevtensorPlugin
