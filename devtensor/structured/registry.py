"""The op registry: :class:`StructuredOp`, the :func:`structured_op` decorator, the registered ops by name,
their variants and device bindings, :func:`register_op` / :func:`remove_op`, impl registration (one impl for
several keys through ``xp``) and :class:`KernelRegistrar`.

Thread safety: every change to the registry (defining, replacing or removing an op, caching a device binding)
happens under :data:`devtensor.dispatcher.registry_lock`, and a replacement is one swap: the new op is built
whole first, then put in place of the old one under the lock (registry entry, Tensor methods), then the
bindings compiled for the old one are dropped, still under the lock. A binding is cached only if, under the
lock, the op it was compiled for is still the registered one. So a lookup by name never finds no op or a half
built one, and a call that starts after a replacement returned uses the new op. Calls never take the lock:
readers see one dict entry or the other.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, LiteralString, overload

from typing_extensions import TypeVar

from devtensor.dispatcher import DispatchKey, KernelTable, dispatch_key, registry_lock
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    UnknownOpError,
)
from devtensor.structured.annotations import TENSOR, TENSOR_OR_SCALAR
from devtensor.structured.data_dependent import data_dependent_ops_by_name
from devtensor.structured.fronts import generate_front
from devtensor.structured.multi import multi_ops_by_name
from devtensor.structured.schema import OpSchema, schema_from_meta, stored_schema
from devtensor.structured.stale import skipping_stale, stale_impl
from devtensor.structured.tables import offer_plain_direct
from devtensor.tensor import (
    PlannedSpec,
    Tensor,
    TensorSpec,
)

ops_by_name: dict[str, StructuredOp] = {}


def variant(name: str, kind: str) -> Callable[..., Tensor]:
    """The generated ``kind`` (``"functional"`` or ``"inplace"``) variant of the op ``name``.

    Raises:
        KeyError: no op of that name, or it has no such variant.
    """
    op = ops_by_name[name]
    fn = op.functional if kind == "functional" else op.inplace if kind == "inplace" else None
    if fn is None:
        raise KeyError(f"op {name!r} has no {kind} variant")
    return fn


if TYPE_CHECKING:
    # mypy takes a name MYPY as always true, pyright does not: `not MYPY` blocks are pyright's alone.
    MYPY = False
    if not MYPY:
        from devtensor.kernel_signatures import CPUImplOf, CUDAImplOf, XPImplOf, _CPUName, _CUDAName

#: A StructuredOp's type parameter: the op's name as a Literal where its definition gives one (``structured_op("mm")``,
#: the family helpers), else ``object``. Only pyright reads it (``impl`` checked per op, see docs/design.md).
_K = TypeVar("_K", covariant=True, default=object)
_N = TypeVar("_N", bound=LiteralString)

_bindings: dict[tuple[str, str, DispatchKey], Callable[..., Tensor]] = {}


def bound_variant(name: str, kind: str, key: DispatchKey, cls: type[Tensor]) -> Callable[..., Tensor]:
    """The device binding of the op ``name``'s ``kind`` variant for ``key`` (e.g. ``devtensor.cpu.add``):
    tensors must be ``cls`` instances (refined), and dispatch skips computing the key. Compiled on first use.

    Thread-safe: compiled outside the registry lock, cached under it only while the op it was compiled for is
    still the registered one (a replacement in between makes it compile again, for the new op).

    Raises:
        KeyError: no op of that name, or no such variant.
    """
    cache_key = (name, kind, key)
    fn = _bindings.get(cache_key)
    while fn is None:
        op = ops_by_name[name]
        if kind == "inplace" and op.inplace is None:
            raise KeyError(f"op {name!r} has no inplace variant")
        compiled = generate_front(op, kind, (key, cls))
        with registry_lock:
            if ops_by_name.get(name) is op:
                fn = _bindings.setdefault(cache_key, compiled)
    return fn


def binding_attr(device: str, name: str) -> Callable[..., Tensor]:
    """``devtensor.<device>.<name>``: the binding of op ``name`` (or of its inplace variant for ``name_``),
    cached as an attribute of the module ``devtensor.<device>`` (under the registry lock, while the op is still
    the registered one, so a replacement or removal never leaves a stale binding there).

    Raises:
        AttributeError: no such op (as a module attribute lookup does).
    """
    from devtensor.backends import backend_for_key

    key = dispatch_key(device, op=f"devtensor.{device}")
    cls = backend_for_key(key).tensor_class
    module = sys.modules.get(f"devtensor.{device}")
    while True:
        op = ops_by_name.get(name)
        if op is not None and op.public_functional:
            op_name, kind = name, "functional"
        else:
            op = ops_by_name.get(name[:-1]) if name.endswith("_") else None
            if op is None or op.inplace is None:
                raise AttributeError(f"module 'devtensor.{device}' has no attribute {name!r}")
            op_name, kind = name[:-1], "inplace"
        try:
            fn = bound_variant(op_name, kind, key, cls)
        except KeyError:
            continue  # removed or replaced meanwhile: look again
        with registry_lock:
            if getattr(fn, "op", None) is not ops_by_name.get(op_name):
                continue  # replaced after bound_variant returned
            if module is not None:
                module.__dict__[name] = fn
        return fn


class KernelRegistrar:
    """Registers impls of the op ``op_name``: ``registrar.cpu(fn)`` / ``registrar.cuda(fn)`` (decorators).

    The generated ``kernel_signatures`` modules subclass it per op with typed ``cpu``/``cuda`` signatures, so
    mypy checks each impl against the op's schema (tensor parameters refined to the key's tensor type, the
    output a ConstOut). At run time registration goes through :meth:`StructuredOp.register_kernel`.
    """

    __slots__ = ("op_name",)

    def __init__(self, op_name: str) -> None:
        self.op_name = op_name

    def _op(self) -> StructuredOp:
        op = ops_by_name.get(self.op_name)
        if op is None:
            message = f"{self.op_name}: no op of this name is defined (are its kernel signatures stale?)"
            raise stale_impl(message, ArgumentValueError)
        return op

    @skipping_stale
    def cpu(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Register ``fn`` as the CPU impl; returns it.

        Raises:
            ValueError: no op of this registrar's name is defined.  TypeError: ``fn`` does not match its schema.
        """
        self._op().register_kernel(DispatchKey.CPU, fn)
        return fn

    @skipping_stale
    def cuda(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Register ``fn`` as the CUDA impl; returns it (errors as :meth:`cpu`)."""
        self._op().register_kernel(DispatchKey.CUDA, fn)
        return fn

    @skipping_stale
    def xp(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Register ``fn`` (first parameter ``xp``, the array module) as the CPU and the CUDA impl; returns it
        (errors as :meth:`cpu`)."""
        self._op().impl(DispatchKey.CPU, DispatchKey.CUDA)(fn)
        return fn


def register_op(op: StructuredOp, replacing: StructuredOp | None = None) -> None:
    """Put ``op`` (built with ``register=False``) in the registry under its name, in one step under the registry
    lock: in place of ``replacing`` (which must be the op registered under that name now), or under a free name.
    Then ``op``'s Tensor methods replace ``replacing``'s (when ``op.method``; ``replacing``'s that ``op`` lacks
    are removed) and the device bindings cached under the name are dropped. Lookups by name find either op,
    never none; a call that starts after this returns uses ``op``.

    Raises:
        ValueError: the op registered under the name is not ``replacing`` (another op of that name is defined,
            or ``replacing`` was replaced or removed meanwhile); ``op`` is registered already.
    """
    name = op.name
    with registry_lock:
        current = ops_by_name.get(name)
        if current is op:
            raise ArgumentValueError(f"register_op: op {name!r} is registered already")
        if current is not replacing:
            if replacing is None:
                raise ArgumentValueError(f"structured_op: an op named {name!r} is defined already (remove_op it first)")
            raise ArgumentValueError(
                f"register_op: the op {name!r} to replace is no longer the registered one (replaced or removed)"
            )
        ops_by_name[name] = op
        if op.method:
            if op.public_functional:
                setattr(Tensor, name, op.functional)
            if op.inplace is not None:
                setattr(Tensor, name + "_", op.inplace)
        if replacing is not None:
            _remove_methods(replacing)
        # Also for a new name: ``devtensor.cpu.<name>`` may hold the inplace binding of the op ``<name>[:-1]``,
        # and the op of that exact name comes first.
        _drop_bindings(name)


def remove_op(name: str, op: StructuredOp | None = None) -> StructuredOp:
    """Undefine the op ``name`` (when ``op`` is given, only if it is that op): remove it from the registry, its
    methods from Tensor and its device bindings, in one step under the registry lock; returns it.

    Calls through references to its variants still work (they keep their table); new lookups do not find it.

    Raises:
        KeyError: no op of that name, or (``op`` given) the op of that name is another one.
    """
    with registry_lock:
        current = ops_by_name.get(name)
        if current is None:
            raise KeyError(name)
        if op is not None and current is not op:
            raise KeyError(f"op {name!r} is another op now (it was replaced)")
        del ops_by_name[name]
        _remove_methods(current)
        _drop_bindings(name)
    return current


def _remove_methods(op: StructuredOp) -> None:
    """Remove the Tensor methods ``op`` attached (those still its own: a replacement may have set its own)."""
    if op.method:
        for attr, fn in ((op.name, op.functional), (op.name + "_", op.inplace)):
            if fn is not None and Tensor.__dict__.get(attr) is fn:
                delattr(Tensor, attr)


def _drop_bindings(name: str) -> None:
    """Drop the cached device bindings of the op ``name`` (call under the registry lock: every writer of the
    caches holds it, so they do not change while this iterates)."""
    for cached in [k for k in _bindings if k[0] == name]:
        del _bindings[cached]
    # The device binding modules (devtensor.cpu, devtensor.cuda) keep resolved bindings as module attributes.
    for module_name in ("devtensor.cpu", "devtensor.cuda"):
        module = sys.modules.get(module_name)
        if module is not None:
            for attr in (name, name + "_"):
                module.__dict__.pop(attr, None)


def all_ops() -> list[StructuredOp]:
    """Every structured op defined so far, in definition order."""
    return list(ops_by_name.values())


#: The view ops by name (:mod:`devtensor.views` defines and registers them): the same registry as the structured
#: ops', kept apart because their kernels make views instead of writing an out.
view_ops_by_name: dict[str, Any] = {}


def get_op(name: str) -> Any:
    """The op named ``name``: structured (:class:`StructuredOp`), view (:class:`devtensor.views.ViewOp`) or
    multi-output (:class:`devtensor.structured.multi.MultiOutputOp`) or data-dependent
    (:class:`devtensor.structured.data_dependent.DataDependentOp`). Each has a ``table``
    (:class:`~devtensor.dispatcher.KernelTable`: kernels and overrides per key), ``register_kernel``/
    ``unregister_kernel``, ``impl`` and ``check_handler`` (validates a kernel or an override for the op).

    Raises:
        UnknownOpError (a KeyError): no op of that name; the message suggests the nearest names.
    """
    op: Any = ops_by_name.get(name)
    if op is None:
        op = view_ops_by_name.get(name)
    if op is None:
        op = multi_ops_by_name.get(name)
    if op is None:
        op = data_dependent_ops_by_name.get(name)
    if op is None:
        raise unknown_op("get_op", name)
    return op


def unknown_op(caller: str, name: object) -> UnknownOpError:
    """The error for a registry lookup by ``caller`` of ``name``, which names no op: it names both and suggests
    the nearest op names (difflib's close matches)."""
    import difflib

    text = f"{caller}: no op named {name!r}"
    if isinstance(name, str):
        names = [*ops_by_name, *view_ops_by_name, *multi_ops_by_name, *data_dependent_ops_by_name]
        near = difflib.get_close_matches(name, names, n=3)
        if near:
            text += "; did you mean " + ", ".join(repr(n) for n in near) + "?"
    return UnknownOpError(text)


class StructuredOp(Generic[_K]):
    """An op defined by a meta function and impls per dispatch key; holds its generated variants.

    The type parameter is the op's name as a Literal when its definition gives one (``structured_op("mm")``, the
    family helpers), else ``object``: pyright, which has no plugin, checks ``op.impl(...)`` against the op's kernel
    types by it (devtensor.kernel_signatures' ``CPUImplOf``); it changes nothing at run time.

    Attributes:
        name: the op name (``"add"``).
        meta: the meta function ``meta(*args) -> (shape, dtype)``.
        schema: the :class:`OpSchema` derived from ``meta``'s annotations.
        table: the :class:`~devtensor.dispatcher.KernelTable` (kernels per key, cached handlers).
        functional: the generated functional+out variant ``name(..., out=None)``.
        inplace: the generated inplace variant ``name_(self, ...)``, or None when the op has none.
        out_may_be_input: whether an output may be exactly one of the inputs (same memory and strides).
        nondeterministic: whether each call draws fresh values (the random ops): a call is not a function of its
            arguments, so a cache, a common-subexpression pass or a recorded plan must run it again on each use
            rather than reuse a result.
        public_functional: whether the functional variant is public (a top-level function of the op's name, a
            Tensor method, a device binding). False where that name is another function: ``normal_``'s
            functional (a tensor like ``self`` filled) is not PyTorch's ``normal(mean, std)``. The variant
            still exists (``op.functional``) for dispatch, modes and tests.

    The constructor builds the op whole (schema, table, variants), then registers it (:func:`register_op`: the
    registry entry and the Tensor methods, in one step under the registry lock); with ``register=False`` it
    only builds it, for :func:`register_op` to put in place of another op (as ``custom_op(replace=True)``
    does).
    """

    __slots__ = (
        "doc",
        "functional",
        "inplace",
        "meta",
        "method",
        "module",
        "name",
        "nondeterministic",
        "out_may_be_input",
        "public_functional",
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
        out_may_be_input: bool = False,
        doc: str | None = None,
        schema: OpSchema | None = None,
        register: bool = True,
        nondeterministic: bool = False,
        public_functional: bool = True,
    ) -> None:
        if register and name in ops_by_name:
            raise ArgumentValueError(f"structured_op: an op named {name!r} is defined already (remove_op it first)")
        self.name = name
        # Typed as returning a TensorSpec for the readers that take shape and dtype from it (``[0]``, ``[1]``): a
        # PlannedSpec starts with the same two fields.
        self.meta: Callable[..., TensorSpec] = typing.cast("Callable[..., TensorSpec]", meta)
        #: The module that defined the op (its meta function's): codegen writes declarations per package.
        self.module: str = getattr(meta, "__module__", None) or "__main__"
        # An explicit schema (e.g. parsed from a schema string) replaces the one derived from meta's annotations;
        # a built-in op's comes from the generated module when stored there for this meta function.
        if schema is None and self.module.split(".")[0] == "devtensor":
            stored = stored_schema(name, meta)
            schema = stored[0] if stored is not None else None
        self.schema = schema if schema is not None else schema_from_meta(name, meta)
        self.table = KernelTable(name, self)
        # (a ufunc family meta without a direct path, a custom op's: the built-in's lanes once a plain kernel is in)
        offer_plain_direct(meta, len(self.schema.params))
        self.out_may_be_input = out_may_be_input
        self.nondeterministic = nondeterministic
        self.public_functional = public_functional
        self.method = method
        self.doc = doc if doc is not None else (meta.__doc__ or "")
        self.functional: Callable[..., Tensor] = generate_front(self, "functional")
        self.inplace: Callable[..., Tensor] | None = None
        if inplace:
            if self.schema.params[0].category not in (TENSOR, TENSOR_OR_SCALAR):
                raise ArgumentTypeError(f"{name}: an inplace variant needs a tensor first parameter")
            self.inplace = generate_front(self, "inplace")
        if register:
            register_op(self)

    if TYPE_CHECKING and not MYPY:  # pyright's: the decorator checks the impl per op (by the name Literal) and key

        @overload
        def impl(self, key: _CPUName, /) -> CPUImplOf[_K]: ...
        @overload
        def impl(self, key: _CUDAName, /) -> CUDAImplOf[_K]: ...
        @overload
        def impl(self, key: _CPUName, key2: _CUDAName, /) -> XPImplOf[_K]: ...
        @overload
        def impl(self, key: _CUDAName, key2: _CPUName, /) -> XPImplOf[_K]: ...
        @overload
        def impl(self, *keys: DispatchKey | str) -> Callable[[Callable[..., None]], Callable[..., None]]: ...

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
        resolved = [dispatch_key(key, op=f"{self.name}.impl") for key in keys]

        @skipping_stale
        def register(fn: Callable[..., None]) -> Callable[..., None]:
            takes_xp = check_impl_signature(self, fn, xp_allowed=True)
            for key in resolved:
                self.table.register(key, bind_array_module(key, fn) if takes_xp else fn)
            return fn

        return register

    def check_handler(self, fn: Callable[..., None]) -> None:
        """Check that ``fn`` can be this op's kernel or override for one key (see :meth:`impl`; no ``xp``).

        Raises:
            TypeError: its parameters do not match the schema.
        """
        check_impl_signature(self, fn)

    @skipping_stale
    def register_kernel(self, key: DispatchKey | str, fn: Callable[..., None]) -> None:
        """Register ``fn`` as the impl for ``key`` (replacing any); see :meth:`impl` (``xp`` impls included)."""
        resolved = dispatch_key(key, op=f"{self.name}.register_kernel")
        takes_xp = check_impl_signature(self, fn, xp_allowed=True)
        self.table.register(resolved, bind_array_module(resolved, fn) if takes_xp else fn)

    def __repr__(self) -> str:
        return f"<structured op {self.name}>"


@overload
def structured_op(
    name: _N,
    *,
    inplace: bool = True,
    method: bool = True,
    out_may_be_input: bool = False,
    nondeterministic: bool = False,
    public_functional: bool = True,
) -> Callable[[Callable[..., TensorSpec | PlannedSpec[Any]]], StructuredOp[_N]]: ...
@overload
def structured_op(
    name: None = None,
    *,
    inplace: bool = True,
    method: bool = True,
    out_may_be_input: bool = False,
    nondeterministic: bool = False,
    public_functional: bool = True,
) -> Callable[[Callable[..., TensorSpec | PlannedSpec[Any]]], StructuredOp]: ...
def structured_op(
    name: str | None = None,
    *,
    inplace: bool = True,
    method: bool = True,
    out_may_be_input: bool = False,
    nondeterministic: bool = False,
    public_functional: bool = True,
) -> Callable[[Callable[..., TensorSpec | PlannedSpec[Any]]], StructuredOp[Any]]:
    """Decorator: define a structured op from its meta function; returns the :class:`StructuredOp`.

    Args:
        name: the op name (default: the meta function's name; given as a literal, the op's type carries it, so that
            pyright checks ``op.impl(...)`` against the op's kernel types).
        inplace: generate the inplace variant ``name_``.
        method: attach ``name`` (and ``name_``) as Tensor methods.
        out_may_be_input: an output may be exactly one of the inputs (same memory and strides), as for elementwise ops.
        nondeterministic: each call draws fresh values (random ops; see :class:`StructuredOp`).
        public_functional: the functional variant is public (see :class:`StructuredOp`).
    Raises:
        ValueError: a bad or duplicate name.  TypeError: an unsupported meta signature.
    """

    def define(meta: Callable[..., TensorSpec | PlannedSpec[Any]]) -> StructuredOp[Any]:
        return StructuredOp(
            name or meta.__name__,
            meta,
            inplace=inplace,
            method=method,
            out_may_be_input=out_may_be_input,
            nondeterministic=nondeterministic,
            public_functional=public_functional,
        )

    return define


def check_impl_signature(op: StructuredOp, fn: Callable[..., None], xp_allowed: bool = False) -> bool:
    """Check ``fn``'s parameters against the op's schema: the meta function's names and kinds, then a
    keyword-only ``plan`` for an op with a plan, then a keyword-only ``out``; with ``xp_allowed``, optionally
    preceded by a positional ``xp`` (the array module). Returns whether ``fn`` takes ``xp``.

    Raises:
        TypeError: another parameter list, naming the op, the impl, and what was expected.
    """
    got = _parameter_kinds(fn)
    if got is None:
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
        message = (
            f"{op.name}: impl {getattr(fn, '__qualname__', fn)!r} has parameters ({_fmt_params(got)}), expected "
            f"({_fmt_params(want)}) (names and kinds of the meta function{plan}, plus keyword-only 'out'{xp}; "
            "* marks keyword-only)"
        )
        raise stale_impl(message, ArgumentTypeError)
    return takes_xp


def _parameter_kinds(fn: Callable[..., None]) -> list[tuple[str, bool]] | None:
    """(name, keyword-only) of each parameter of a plain function, read from its code object (what
    ``inspect.signature`` would say, at a fraction of its cost: the built-in ops register some 130 impls at
    import); None for anything else (wrapped or given a ``__signature__``, variadic, not a plain function)."""
    if type(fn) is not types.FunctionType or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
        return None
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    positional = code.co_argcount
    names = code.co_varnames[: positional + code.co_kwonlyargcount]
    return [(name, i >= positional) for i, name in enumerate(names)]


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

    def handler(*args: Any, **kwargs: Any) -> Any:
        # The backend is looked up on first use: a key's backend may be registered after its kernels. (The
        # result is passed on: a data-dependent op's impl returns its arrays.)
        if not found:
            from devtensor.backends import backend_for_key

            found.append(backend_for_key(key))
        return fn(found[0].xp, *args, **kwargs)

    return handler


def _fmt_params(params: list[tuple[str, bool]]) -> str:
    return ", ".join(f"{'*' if kw else ''}{n}" for n, kw in params)
