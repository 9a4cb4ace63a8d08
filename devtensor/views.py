"""View ops: ops whose result shares memory, storage and version counter with their input.

A view op produces no new data, so it does not fit the out-kernel model of structured ops
(:mod:`devtensor.structured`); it has its own definition API, in the same spirit: a *meta function* that checks
the arguments and describes the result, and a *view kernel* per dispatch key that produces the view array from
the base array. NumPy and CuPy share the array API, so one generic kernel serves both::

    @view_op(varargs="dims")
    def permute(self: Tensor, dims: Sequence[int]) -> ViewSpec:
        \"\"\"docstring: shapes, dtypes, devices, errors, semantics source\"\"\"
        order = ...checks...                   # errors name the op, the argument and the value
        return ViewSpec(tuple(self.shape[d] for d in order), plan=order)

    @permute.impl("cpu", "cuda")
    def _permute(xp: ModuleType, array: Any, plan: tuple[int, ...]) -> Any:
        return array.transpose(plan)           # xp: the backend's array module (numpy or cupy)

From that, :class:`ViewOp` makes (the generic view front, :mod:`devtensor.view_front`, with the meta's signature):

* the functional variant ``permute(self, dims)`` (no out, no inplace: a view has nothing to write);
* the Tensor method ``t.permute(dims)``; with ``varargs="dims"`` the method also takes the sequence spread
  out, as PyTorch's: ``t.permute(1, 0)`` is ``t.permute((1, 0))``.

Around the kernel, the front checks ``self`` is a Tensor, runs the meta function (the meta validates every other
argument), looks the kernel up in the op's per-key table (one dict lookup; registering or unregistering a
kernel edits that same dict, so no handler is ever stale), calls it with the backend's array module, the base
array and the meta's ``plan``, and wraps the result as ``backend.wrap_view(array, base)`` does: the view shares
the base's storage record, so a write through either bumps the one version counter they share.

A meta function returns a :class:`ViewSpec` (one result) or a tuple of them (several views, as ``split``); its
return annotation says which. A spec with ``copy=True`` asks for a copy instead of a view (``reshape`` of a
tensor whose strides cannot express the new shape): the kernel then returns new memory, which the front wraps
with a new storage (version 0) and produces under the device guard. Meta tensors run the meta function only:
the front gives them a meta array of the spec's shape, still sharing the base's storage for a view.

Meta functions read metadata only (shape, dtype, strides); never data. On the meta device every tensor reports
the C-contiguous strides of its shape, so ``view`` on a meta tensor succeeds whenever the sizes allow it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NamedTuple, TypeAlias

from devtensor.dispatcher import META_ONLY, DispatchKey, KernelTable, dispatch_key
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.structured import TENSOR, OpSchema, all_ops, schema_from_meta, view_ops_by_name
from devtensor.structured.core import lazy_view_front
from devtensor.structured.schema import stored_schema
from devtensor.tensor import Tensor

__all__ = [
    "ViewKernel",
    "ViewOp",
    "ViewSpec",
    "all_view_ops",
    "view_op",
    "view_variant",
]


class ViewSpec(NamedTuple):
    """What a view op's meta function returns for one result.

    Attributes:
        shape: the result's shape (used as is for meta tensors).
        plan: anything the view kernel needs, precomputed by the meta function (normalized dims, strides…).
        copy: the result is new memory, not a view (the front gives it a new storage, version 0).
        dtype: the result's dtype when it differs from the base's (``view(dtype)``, which reinterprets the bits),
            else None. The kernel's array carries it; meta tensors read it here.
    """

    shape: tuple[int, ...]
    plan: Any = None
    copy: bool = False
    dtype: Any = None


#: A view kernel: ``kernel(xp, array, plan) -> array``; ``xp`` is the backend's array module (numpy, cupy),
#: ``array`` the base's array, ``plan`` the spec's plan. It returns a view of ``array`` (or, for a spec with
#: ``copy=True``, new memory). It must not write to ``array``.
ViewKernel: TypeAlias = Callable[[ModuleType, Any, Any], Any]

#: The view ops by name: the op registry's (devtensor.structured.get_op finds them there).
_view_ops: dict[str, ViewOp] = view_ops_by_name


def all_view_ops() -> list[ViewOp]:
    """Every view op defined so far, in definition order."""
    return list(_view_ops.values())


def view_variant(name: str) -> Callable[..., Any]:
    """The functional variant of the view op ``name``.

    Raises:
        KeyError: no view op of that name.
    """
    return _view_ops[name].functional


class ViewOp:
    """An op returning views of its first argument, defined by a meta function and a view kernel per key.

    Attributes:
        name: the op name (``"permute"``).
        meta: the meta function ``meta(self, ...) -> ViewSpec | tuple[ViewSpec, ...]``.
        schema: the :class:`~devtensor.structured.OpSchema` derived from ``meta``'s annotations.
        multi: whether the op returns a tuple of views (the meta's return annotation is a tuple).
        varargs: the parameter the Tensor method also accepts spread out (``t.permute(1, 0)``), or None.
        kernels: the view kernel per dispatch key (the table the front reads directly).
        functional: the functional variant ``name(self, ...)``.
        method: the callable attached as ``Tensor.<name>`` (the functional, or its varargs form), or None.
        module: the module that defined the op (its meta function's); codegen declares devtensor's own ops.
    """

    __slots__ = ("doc", "functional", "meta", "method", "module", "multi", "name", "schema", "table", "varargs")

    def __init__(
        self,
        name: str,
        meta: Callable[..., Any],
        *,
        method: bool = True,
        varargs: str | None = None,
        doc: str | None = None,
    ) -> None:
        if name in _view_ops or any(op.name == name for op in all_ops()):
            raise ArgumentValueError(f"view_op: an op named {name!r} is defined already")
        module: str = getattr(meta, "__module__", None) or "__main__"
        # A built-in view op's schema, result count and varargs come from the generated module when stored there
        # for this meta function (deriving them evaluates its annotations).
        stored = stored_schema(name, meta) if module.split(".")[0] == "devtensor" else None
        if stored is not None and stored[1] == (stored[1][0], varargs):
            schema, (multi, _) = stored
        else:
            stored = None
            schema = schema_from_meta(name, meta)
        first = schema.params[0]
        if first.category != TENSOR or first.optional or first.kw_only:
            raise ArgumentTypeError(
                f"{name}: the first parameter of a view op's meta function must be a positional Tensor"
            )
        for p in schema.params[1:]:
            if p.category != "other":
                raise ArgumentTypeError(
                    f"{name}: a view op takes exactly one tensor (its base); parameter '{p.name}' is annotated "
                    f"{p.annotation}"
                )
        if method and name in _tensor_attributes():
            raise ArgumentValueError(
                f"view_op: a Tensor method named {name!r} would shadow an existing Tensor attribute"
            )
        self.name = name
        self.meta = meta
        self.module = module
        self.schema = schema
        self.multi: bool = multi if stored is not None else _returns_multi(name, meta)
        self.varargs = varargs if stored is not None else _check_varargs(name, schema, meta, varargs)
        self.doc = doc if doc is not None else (meta.__doc__ or "")
        # Kernels and overrides per key, as every op has (backend fallbacks write outs: none for view ops).
        self.table = KernelTable(name, self, fallbacks=False, meta_only_cached=False)
        # (with the compiled core, Fronts whose view lane takes the common call: devtensor.structured.core)
        self.functional: Callable[..., Any] = lazy_view_front(self, False, _front)
        self.method: Callable[..., Any] | None = None
        if method:
            self.method = self.functional if varargs is None else lazy_view_front(self, True, _front)
            setattr(Tensor, name, self.method)
        _view_ops[name] = self

    def impl(self, *keys: DispatchKey | str) -> Callable[[ViewKernel], ViewKernel]:
        """Decorator registering one view kernel for each of ``keys`` (DispatchKeys or device types such as
        ``"cpu"``, ``"cuda"``). See :data:`ViewKernel` for the kernel's signature.

        Raises:
            ValueError: no key given, or an unknown device type.
        """
        if not keys:
            raise ArgumentValueError(f"{self.name}.impl: give at least one dispatch key or device type")
        resolved = [dispatch_key(k, op=f"{self.name}.impl") for k in keys]

        def register(fn: ViewKernel) -> ViewKernel:
            self.check_handler(fn)
            for key in resolved:
                self.table.register(key, fn)
            return fn

        return register

    @property
    def kernels(self) -> dict[DispatchKey, ViewKernel]:
        """The view kernel per dispatch key (read it; register through :meth:`impl`/:meth:`register_kernel`)."""
        return self.table.kernels

    def check_handler(self, fn: ViewKernel) -> None:
        """Check that ``fn`` can be this op's view kernel or override (a callable; see :data:`ViewKernel`).

        Raises:
            TypeError: ``fn`` is not callable.
        """
        if not callable(fn):
            raise ArgumentTypeError(f"{self.name}: a view kernel must be callable, got {fn!r}")

    def register_kernel(self, key: DispatchKey | str, fn: ViewKernel) -> None:
        """Register ``fn`` as the view kernel for ``key`` (replacing any). Takes effect on the next call."""
        if not callable(fn):
            raise ArgumentTypeError(f"{self.name}.register_kernel: argument 'fn' must be callable, got {fn!r}")
        self.table.register(dispatch_key(key, op=f"{self.name}.register_kernel"), fn)

    def unregister_kernel(self, key: DispatchKey | str) -> None:
        """Remove the view kernel for ``key`` (if any). Takes effect on the next call."""
        self.table.unregister(dispatch_key(key, op=f"{self.name}.unregister_kernel"))

    def __repr__(self) -> str:
        return f"<view op {self.name}>"


def view_op(
    name: str | None = None,
    *,
    method: bool = True,
    varargs: str | None = None,
) -> Callable[[Callable[..., Any]], ViewOp]:
    """Decorator: define a view op from its meta function; returns the :class:`ViewOp`.

    Args:
        name: the op name (default: the meta function's name).
        method: attach the op as a Tensor method.
        varargs: the name of the meta's second parameter (annotated ``Sequence[...]``, or a union whose first
            member is that: view's ``Sequence[int] | DTypeLike``, whose other members the method takes as its one
            argument) that the Tensor method also accepts spread out, as PyTorch's ``t.reshape(2, 3)``.
    Raises:
        ValueError: a bad or duplicate name, or a method that would shadow a Tensor attribute.
        TypeError: an unsupported meta signature or return annotation, or a bad ``varargs``.
    """

    def define(meta: Callable[..., Any]) -> ViewOp:
        return ViewOp(name or meta.__name__, meta, method=method, varargs=varargs)

    return define


# --- definition-time checks ---------------------------------------------------------------------------------


def _tensor_attributes() -> set[str]:
    names: set[str] = set()
    for cls in Tensor.__mro__:
        if cls is object or cls.__name__ == "TensorOpMethods":
            continue
        names.update(cls.__dict__)
    return names


def _returns_multi(name: str, meta: Callable[..., Any]) -> bool:
    hint = typing.get_type_hints(meta).get("return")
    if hint is ViewSpec:
        return False
    origin = typing.get_origin(hint)
    if origin in (tuple, list, Sequence) and typing.get_args(hint)[:1] == (ViewSpec,):
        return True
    raise ArgumentTypeError(
        f"{name}: a view op's meta function must be annotated '-> ViewSpec' or '-> tuple[ViewSpec, ...]'"
    )


def _check_varargs(name: str, schema: OpSchema, meta: Callable[..., Any], varargs: str | None) -> str | None:
    if varargs is None:
        return None
    params = schema.params
    if len(params) < 2 or params[1].name != varargs or params[1].kw_only:
        raise ArgumentTypeError(
            f"{name}: varargs={varargs!r} must name the second, positional parameter of the meta function"
        )
    hint = typing.get_type_hints(meta)[varargs]
    if isinstance(hint, types.UnionType):  # (a sequence first, then what else it takes in its place: view's dtype)
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) not in (Sequence, tuple, list):
        raise ArgumentTypeError(
            f"{name}: the varargs parameter '{varargs}' must be annotated Sequence[...], got {hint!r}"
        )
    return varargs


# --- the common code the fronts call ---------------------------------------------------------------


def _bad_self(op: str, value: object) -> Tensor:
    """``self`` of a view op that is not a tensor: a NumPy array (or scalar) as a CPU tensor over its memory
    (:func:`devtensor.numpy_values.tensor_operand`; the view then views the caller's memory), else
    ArgumentTypeError."""
    from devtensor.numpy_values import is_numpy_value, tensor_operand  # (it imports the structured package)

    if is_numpy_value(value):
        result: Tensor = tensor_operand(op, "self", value, None, ())
        return result
    raise ArgumentTypeError(f"{op}: argument 'self' must be a Tensor, got {type(value).__name__}")


def _unserved(op: ViewOp, self: Tensor, spec: Any) -> Any:
    """No kernel for a meta tensor's key (its handler is META_ONLY): meta arrays of the spec's shape."""
    backend = self._backend
    specs: Sequence[ViewSpec] = spec if op.multi else (spec,)
    results = []
    for s in specs:
        array = backend.alloc(s.shape, self._dtype if s.dtype is None else s.dtype)
        results.append(backend.wrap(array, self._device) if s.copy else backend.wrap_view(array, self))
    return tuple(results) if op.multi else results[0]


def _miss(op: ViewOp, self: Tensor, spec: Any) -> Any:
    """The front's slow path, on a miss of the handler cache: resolve the handler for ``self``'s key (an
    override, else the kernel; NoKernelError when none) and run it; meta tensors with no kernel get meta arrays
    (:func:`_unserved`). The table never caches "meta only" (``meta_only_cached`` false), so the fast path,
    in any thread, never sees it."""
    handler = op.table.resolve(self._device.key, str(self._device))
    if handler is META_ONLY:
        return _unserved(op, self, spec)
    return _many(self, handler, spec, op.name) if op.multi else _one(self, handler, spec, op.name)


def _one(self: Tensor, kernel: ViewKernel, spec: ViewSpec, op: str = "view") -> Tensor:
    try:
        backend = self._backend
        if not spec.copy:  # (the common case, _run_kernel's first branch inline: one frame less per view)
            return backend.wrap_view(kernel(backend.xp, self._array, spec.plan), self)
        return _run_kernel(self, kernel, spec)
    except (ValueError, OverflowError) as e:  # sizes NumPy cannot represent (expand/reshape to 10**20 elements)
        _too_large(op, spec, e)


def _too_large(op: str, spec: ViewSpec, error: Exception) -> typing.NoReturn:
    """A kernel's ValueError or OverflowError: a size NumPy cannot represent (expand/reshape to 10**20
    elements), as ArgumentValueError naming the op and the shape."""
    raise ArgumentValueError(f"{op}: cannot make the result of shape {tuple(spec.shape)}: {error}") from None


def _rare(op: ViewOp, self: Tensor, kernel: ViewKernel | None, spec: ViewSpec) -> Tensor:
    """A single-result front's path off the common case: no cached handler (:func:`_miss`), or a spec asking
    for a copy (:func:`_one`)."""
    if kernel is None:
        return _miss(op, self, spec)  # type: ignore[no-any-return]
    return _one(self, kernel, spec, op.name)


def _run_kernel(self: Tensor, kernel: ViewKernel, spec: ViewSpec) -> Tensor:
    backend = self._backend
    if not spec.copy:
        return backend.wrap_view(kernel(backend.xp, self._array, spec.plan), self)
    guard = self._device._guard
    if guard is None:
        array = kernel(backend.xp, self._array, spec.plan)
    else:
        with guard():
            array = kernel(backend.xp, self._array, spec.plan)
    return backend.wrap(array, self._device)


def _many(self: Tensor, kernel: ViewKernel, specs: Sequence[ViewSpec], op: str = "view") -> tuple[Tensor, ...]:
    return tuple([_one(self, kernel, s, op) for s in specs])


def _is_sequence(value: object) -> bool:
    if type(value) is int:
        return False
    return type(value) in (tuple, list) or (isinstance(value, Sequence) and not isinstance(value, (str, bytes)))


def _reshapes(op: ViewOp) -> bool:
    """Whether the op is devtensor's reshape or view, whose fronts (the generic view front, the compiled view lane)
    call the array's own reshape while the handler is the built-in kernel (:data:`RESHAPE_KERNEL`) and the plan is
    a shape, and read :data:`RESHAPE_SPECS` before the meta function."""
    return op.name in ("reshape", "view") and op.module.split(".")[0] == "devtensor"


#: The built-in kernel of reshape and view (registered by devtensor.kernels.shape): its plan, when a tuple, is
#: the shape the array's own reshape takes (a view of a C-contiguous array).
RESHAPE_KERNEL: list[Any] = [None]

#: (sizes as asked, a tensor's shape) -> the spec of that C-contiguous tensor's reshape to those sizes, for calls
#: that succeeded (kept by devtensor.kernels.shape; bounded there): reshape's and view's metas and fronts read it
#: inline.
RESHAPE_SPECS: dict[tuple[tuple[int, ...], tuple[int, ...]], ViewSpec] = {}


def _front(op: ViewOp, method: bool = False) -> Callable[..., Any]:
    """The view op's front (or varargs method): the generic view front (:mod:`devtensor.view_front`) over the
    op's tables, with its name, docstring, module and ``op``."""
    from devtensor.view_front import make_view_front

    fn = make_view_front(op, method)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = op.doc
    fn.__module__ = "devtensor"
    fn.op = op  # type: ignore[attr-defined]
    return fn
