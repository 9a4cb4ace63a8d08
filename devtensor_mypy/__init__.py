"""devtensor's mypy plugin: kernel registrations checked against their op's schema exactly, and meta functions
kept off tensor data. Enable it with ``plugins = devtensor_mypy`` in the ``[mypy]`` section of a mypy config (the
project's own ``mypy.ini`` does). It is a top-level module, installed with devtensor, that imports mypy only: mypy
loads it without importing devtensor and NumPy (``devtensor.mypy_plugin``, its former name, still works but
imports the package first). What it knows of the ops it reads from mypy's own analysis of the declarations
(``kernel_signatures`` modules, meta functions), never from the running package.

What plain mypy checks without it: the typed registrars (``@kernel_signatures.<op>.cpu`` / ``.cuda`` / ``.xp``)
hold an impl to the op's kernel Protocol, so a wrong or missing parameter, a plain ``Tensor`` (or
``ConstOut[Tensor]``) where the key's refined type belongs, or a missing number/None case is an error. A
Protocol cannot say "exactly these parameters": an impl with an extra parameter that has a default, one that
takes a keyword-only parameter (``out``, ``plan``, …) positionally, or one with ``*args`` / ``**kwargs`` is a
valid subtype, yet the run-time check (``check_impl_signature``) refuses it at registration.

What the plugin adds (error code ``kernel-signature`` unless said otherwise):

* every registration form is checked against the schema's parameter names and kinds, as the run-time check
  does: the typed registrars, ``op.impl(keys)`` used as a decorator (``op`` an op defined with
  ``@structured_op`` / ``@library.custom_op`` in reach of mypy, an op object whose type carries its name,
  ``StructuredOp[Literal["exp"]]``, as the family helpers' do, or ``get_op("name")``), and
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
* ``@<op>.xp`` of an op with tensor-or-number parameters (typed for mypy by one overload per device type, which a
  plain ``Tensor`` fits) with a plain ``Tensor`` parameter: ``arg-type``, naming the parameters;
* in a meta function (decorated with ``structured_op`` or ``custom_op``), using a ``Tensor`` parameter for
  anything but the metadata ``TensorMeta`` offers (``shape``, ``dtype``, ``ndim``, ``device``, ``strides``,
  ``numel()``, ``dim()``, ``size()``; also ``element_size()``, ``is_contiguous()``, ``len()``) is an error with
  code ``meta-data-read``: ``.numpy()``, ``.item()``, ``.tolist()``, indexing, iteration, ``.to()``, the backing
  array, ops called as methods or operators. Annotating the parameter ``TensorMeta`` gets the same from plain
  mypy.

Not checked (the run-time check still refuses these at registration): registrations whose op or key mypy cannot
see as literals (an op held in a variable, a key computed at run time), ``op.impl(key)(fn)`` called without
decorator syntax (types are checked, as the key's impl or an ``xp`` impl; names and kinds are not), impls that
are not plain functions (overloaded, ``functools.partial``), an op that mypy reads from its cache and that was
renamed (``structured_op(name=...)`` in another module: then known by its meta function's name only), and data
reads a meta function makes through a builtin conversion (``float(t)``, ``bool(t)``, ``if t:``) or by passing the
tensor to another function.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.checker import TypeChecker
from mypy.nodes import (
    ARG_POS,
    CallExpr,
    Decorator,
    Expression,
    FuncItem,
    MemberExpr,
    MypyFile,
    RefExpr,
    StrExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import AttributeContext, FunctionContext, MethodContext, Plugin
from mypy.types import CallableType, Instance, Overloaded, Type, get_proper_type
from mypy.typevars import fill_typevars_with_any

from devtensor_mypy._checks import (
    _METADATA,
    _PRI_MED,
    _REGISTRAR,
    _STRUCTURED_OP,
    _TENSOR_CLASSES,
    _bound_method,
    _callee_name,
    _check_against_meta,
    _check_both_devices,
    _check_exact,
    _check_refined_xp,
    _DecoratorFinder,
    _generated_modules,
    _imports_devtensor,
    _key_name,
    _member_used,
    _meta_error,
    _meta_of,
    _op_name,
    _package_root,
    _protocol_call,
    _registrar_meta,
    _registrar_op_name,
    _registrar_use,
    _with_name,
    _withdraw_call_errors,
)

__all__ = ["DevtensorPlugin", "plugin"]

#: The functions whose first argument, a literal, names the op they define (kept in the op's type).
_NAMING = (
    "devtensor.structured.registry.structured_op",
    "devtensor.kernels.ufunc_family.unary_ufunc",
    "devtensor.kernels.ufunc_family.binary_ufunc",
    "devtensor.kernels.reduction_family.reduction",
)


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
        cls, _, method = fullname.rpartition(".")
        if method == "impl" and (cls == _STRUCTURED_OP or self._is_structured_op(cls)):
            return self._op_impl  # (mypy names a method by the receiver's class: CustomOp's too)
        if method in ("cpu", "cuda", "xp") and self._is_registrar(cls):
            return self._typed_registrar
        return None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        if fullname.startswith("devtensor.library.") and fullname.rsplit(".", 1)[1] in ("override", "register_kernel"):
            return self._library_registration
        if fullname in ("devtensor.library.custom_ops.get_op", "devtensor.structured.registry.get_op"):
            return self._get_op
        if fullname in _NAMING:
            return self._named
        return None

    def _named(self, ctx: FunctionContext) -> Type:
        """``structured_op("mm")`` and the family helpers (``unary_ufunc("exp", ...)``): the op's type keeps its
        name as a Literal (``StructuredOp[Literal["exp"]]``), so that an op object read from mypy's cache is known
        by name (see ``_op_name``)."""
        name = ctx.args[0][0] if ctx.args and ctx.args[0] else None
        if isinstance(name, StrExpr) and isinstance(ctx.api, TypeChecker):
            return _with_name(ctx.default_return_type, name.value, ctx.api)
        return ctx.default_return_type

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
                return fill_typevars_with_any(node.node)  # (StructuredOp is generic: its name Literal, for pyright)
        return ctx.default_return_type

    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        if fullname.startswith(_TENSOR_CLASSES) and fullname.rsplit(".", 1)[1] in ("_array", "_storage"):
            return self._tensor_attribute
        return None

    # --- typed registrars ----------------------------------------------------------------------------------

    def _is_structured_op(self, fullname: str) -> bool:
        """A subclass of StructuredOp (``devtensor.library.CustomOp``, ``InplaceCustomOp``)."""
        node = self.lookup_fully_qualified(fullname) if fullname.startswith("devtensor.") else None
        info = node.node if node is not None else None
        return isinstance(info, TypeInfo) and info.has_base(_STRUCTURED_OP)

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
            elif used.name == "xp" and isinstance(ctx.api, TypeChecker):
                _check_both_devices(ctx.api, ctx.context, op, receiver.type, impl)
                _check_refined_xp(ctx.api, ctx.context, op, receiver.type, impl)
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
        if bound is not None and decorator is None and method != "xp":
            # Called, not decorating a def (``op.impl("cuda")(fn)``): fn may be the key's impl or an xp impl (the
            # run time takes either for one key); which one the plugin cannot tell from a def, so both forms.
            xp = _bound_method(registrar, "xp")
            return Overloaded([bound, xp]) if xp is not None else bound
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


def plugin(version: str) -> type[DevtensorPlugin]:
    """mypy's entry point: the plugin class (any mypy version the project supports)."""
    return DevtensorPlugin
