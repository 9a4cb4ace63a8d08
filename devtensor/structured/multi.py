"""Multi-output structured ops: a meta function returning a tuple of specs, one output per spec.

A meta function annotated ``-> tuple[TensorSpec, TensorSpec]`` (or ``-> MultiSpec`` with ``outputs=`` given)
defines an op with several outputs (``qr``: Q and R). The rest is the single-output op's contract:

* the kernel takes the op's parameters, then a keyword-only ``out``: a tuple of ConstOuts, one per spec, in
  order; it writes each ``out[i].array`` and must do any data-dependent check before its first write;
* the functional front returns a tuple of new tensors (``result``: a NamedTuple class, as PyTorch's
  ``torch.return_types``), or, given ``out=`` (a tuple of tensors, one per output), applies the out rules to
  each: same_kind dtype cast, resize of a wrong-shaped out (with the usual warning), no partial overlap with an
  input (an out exactly an input is computed into a temporary and copied), and no two outs sharing memory
  (MemoryOverlapError); every check runs before any write, and resized outs are swapped in only after the
  kernel succeeded, so a call that raises changes nothing;
* dispatch (a kernel per key, Python overrides, meta tensors running the meta function alone), dispatch
  modes and the generic check of bool and Literal arguments (:func:`rules.check_values`) are the single-output
  ops'. Backend fallbacks (which write one out) do not serve these ops.

The fronts are plain closures, not generated source: they bind arguments through a function with the op's
signature made once (:func:`devtensor.structured.schema.call_binder`: Python's own binding; ``inspect.Signature``'s
cost half of a small ``dt.sort`` call). Multi-output
ops live in their own registry (:data:`multi_ops_by_name`; :func:`devtensor.structured.get_op` finds them), so
codegen's single-output declarations never see them. NumPy arrays as operands are refused (ArgumentTypeError);
the single-output fronts' NumPy conversion is not applied here.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeAlias

from devtensor import modes
from devtensor.dispatcher import META_ONLY, KernelTable, registry_lock
from devtensor.dtypes import SCALAR_TYPES
from devtensor.errors import ArgumentTypeError, ArgumentValueError, MemoryOverlapError
from devtensor.structured import rules
from devtensor.structured.aliases import alias_pairs, alias_parameters, aliased_call
from devtensor.structured.annotations import TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.structured.kernel_registration import KernelRegistration
from devtensor.structured.schema import call_binder, check_op_name, schema_from_meta
from devtensor.tensor import Storage, Tensor, TensorSpec
from devtensor.typed.const_out import new_const_out, set_array

__all__ = ["MultiOutputOp", "MultiSpec", "all_multi_ops", "multi_ops_by_name", "multi_output_op"]

#: The return annotation of a multi-output meta function whose number of outputs ``outputs=`` gives.
MultiSpec: TypeAlias = tuple[TensorSpec, ...]

#: The multi-output ops by name.
multi_ops_by_name: Final[dict[str, MultiOutputOp]] = {}


def all_multi_ops() -> list[MultiOutputOp]:
    """Every multi-output op defined so far, in definition order."""
    return list(multi_ops_by_name.values())


def _count_outputs(name: str, meta: Callable[..., Any], outputs: int | None) -> int:
    """The number of outputs: ``outputs`` when given, else the length of the ``tuple[TensorSpec, ...]`` return
    annotation."""
    if outputs is not None:
        if type(outputs) is not int or outputs < 1:
            raise ArgumentValueError(f"{name}: argument 'outputs' must be a positive int, got {outputs!r}")
        return outputs
    hint = typing.get_type_hints(meta).get("return")
    args = typing.get_args(hint) if typing.get_origin(hint) is tuple else ()
    if not args or Ellipsis in args or any(a != TensorSpec for a in args):
        raise ArgumentTypeError(
            f"{name}: a multi-output meta function is annotated '-> tuple[TensorSpec, TensorSpec, ...]' (one "
            f"TensorSpec per output), or '-> MultiSpec' with outputs= given; got {hint!r}"
        )
    return len(args)


class MultiOutputOp(KernelRegistration):
    """An op with several outputs (see the module docstring).

    Attributes: ``name``, ``meta``, ``schema`` (the parameters, as a single-output op's), ``table`` (kernels and
    overrides per key), ``outputs`` (how many), ``result`` (the tuple class the functional front returns),
    ``functional`` (the front ``name(..., out=None)``), ``doc``, ``module``, ``exact_out_dtypes`` (whether each
    ``out=`` tensor must have exactly its output's dtype). ``inplace`` is always None and ``out_may_be_input``
    False (several outputs are never one input).

    An impl (``impl``, ``register_kernel``: :class:`KernelRegistration`) is as :meth:`StructuredOp.impl`'s, with
    ``out`` a tuple of ConstOuts; an impl whose first parameter is ``xp`` serves several keys.
    """

    __slots__ = (
        "doc",
        "exact_out_dtypes",
        "functional",
        "meta",
        "module",
        "name",
        "outputs",
        "result",
        "schema",
        "table",
    )

    inplace: Final = None
    out_may_be_input: Final = False
    nondeterministic: Final = False
    public_functional: Final = True
    method: Final = False

    def __init__(
        self,
        name: str,
        meta: Callable[..., tuple[TensorSpec, ...]],
        *,
        result: Callable[..., tuple[Tensor, ...]] | None = None,
        outputs: int | None = None,
        doc: str | None = None,
        exact_out_dtypes: bool = False,
    ) -> None:
        check_op_name("multi_output_op", name)
        if name in multi_ops_by_name:
            raise ArgumentValueError(f"multi_output_op: an op named {name!r} is defined already")
        self.name = name
        self.meta = meta
        self.module: str = getattr(meta, "__module__", None) or "__main__"
        self.schema = schema_from_meta(name, meta)
        self.outputs = _count_outputs(name, meta, outputs)
        self.exact_out_dtypes = exact_out_dtypes
        fields = getattr(result, "_fields", None)
        if fields is not None and len(fields) != self.outputs:
            raise ArgumentValueError(f"{name}: the result class has {len(fields)} fields for {self.outputs} outputs")
        self.result: Callable[..., tuple[Tensor, ...]] = result if result is not None else _plain_tuple
        self.table = KernelTable(name, self, fallbacks=False)
        self.doc = doc if doc is not None else (meta.__doc__ or "")
        self.functional: Callable[..., tuple[Tensor, ...]] = _make_front(self)
        with registry_lock:
            multi_ops_by_name[name] = self

    def _check(self, fn: Callable[..., None], xp_allowed: bool = False) -> bool:
        from devtensor.structured.registry import check_impl_signature

        return check_impl_signature(typing.cast(Any, self), fn, xp_allowed)

    def __repr__(self) -> str:
        return f"<multi-output op {self.name}>"


def multi_output_op(
    name: str | None = None,
    *,
    result: Callable[..., tuple[Tensor, ...]] | None = None,
    outputs: int | None = None,
    exact_out_dtypes: bool = False,
) -> Callable[[Callable[..., tuple[TensorSpec, ...]]], MultiOutputOp]:
    """Decorator: define a multi-output op from its meta function (see the module docstring).

    Args:
        name: the op name (default: the meta function's).
        result: the class of the functional front's result, called with the outputs (a NamedTuple such as
            ``QRResult(Q, R)``); a plain tuple when None.
        outputs: the number of outputs, for a meta annotated ``-> MultiSpec``.
        exact_out_dtypes: each ``out=`` tensor must have exactly its output's dtype (ArgumentTypeError
            otherwise), as PyTorch's structured kernels require (``max.dim``, ``sort``, ``topk``, ``aminmax``:
            int64 indices, values of the input's dtype); when False each out takes a same_kind cast.
    Raises:
        ValueError: a bad or duplicate name.  TypeError: an unsupported meta signature or return annotation.
    """

    def define(meta: Callable[..., tuple[TensorSpec, ...]]) -> MultiOutputOp:
        return MultiOutputOp(
            name or meta.__name__, meta, result=result, outputs=outputs, exact_out_dtypes=exact_out_dtypes
        )

    return define


def _plain_tuple(*outs: Tensor) -> tuple[Tensor, ...]:
    return outs


def _wrap(backend: Any, device: Any, array: Any, shape: tuple[int, ...]) -> Tensor:
    """A new tensor owning ``array`` (as the single-output fronts build their result)."""
    t: Tensor = object.__new__(backend.tensor_class)
    t._array = array
    t._device = device
    t._storage = Storage(array)
    t._shape = shape
    t._dtype = array.dtype
    t._write_checked = True
    return t


def _make_front(op: MultiOutputOp) -> Callable[..., tuple[Tensor, ...]]:
    """The functional front of ``op`` (with the dispatch-mode hook) and its raw twin."""
    name = op.name
    params = op.schema.params
    n = op.outputs
    builtin = op.module.split(".")[0] == "devtensor"
    parameters = [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY if p.kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=p.default,
        )
        for p in params
    ]
    parameters.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    signature = inspect.Signature(parameters)
    # NumPy's axis/keepdims (devtensor.structured.aliases): shown in the front's signature, translated by
    # functional before the dispatch modes and raw see the call.
    pairs = alias_pairs(params)
    shown = signature.replace(parameters=parameters + alias_parameters(params))
    aliases = frozenset(a for _, a in pairs)
    tensor_params = [p for p in params if p.category in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST)]
    checks = rules.value_checks(params)
    meta = op.meta
    table = op.table
    exact = op.exact_out_dtypes

    bind = call_binder(name, params, out=True)
    positional = tuple(p.name for p in params if not p.kw_only)
    keywords = tuple(p.name for p in params if p.kw_only)

    def raw(*args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
        try:
            values, out = bind(*args, **kwargs)
        except TypeError as error:
            raise ArgumentTypeError(f"{name}: {error}") from None
        device: Any = None
        first: Tensor | None = None
        inputs: list[Tensor] = []
        named: list[tuple[str, Any]] = []
        for p in tensor_params:
            v = values[p.name]
            named.append((p.name, v))
            if p.category == TENSOR_LIST:
                device, first = rules.list_device(name, p.name, v, device, first)
                inputs.extend(v)
            elif isinstance(v, Tensor):
                if device is None:
                    device, first = v._device, v
                elif v._device is not device:
                    rules.mismatch(name, named)
                inputs.append(v)
            elif not ((v is None and p.optional) or (p.category == TENSOR_OR_SCALAR and type(v) in SCALAR_TYPES)):
                rules.bad_type(name, p.name, v, "a Tensor")
        if out is not None:
            if not isinstance(out, (tuple, list)) or len(out) != n:
                rules.bad_type(name, "out", out, f"a tuple of {n} Tensors")
            for i, o in enumerate(out):
                if not isinstance(o, Tensor):
                    rules.bad_type(name, f"out[{i}]", o, "a Tensor")
                named.append((f"out[{i}]", o))
                if device is None:
                    device, first = o._device, o
                elif o._device is not device:
                    rules.mismatch(name, named)
        if device is None or first is None:
            rules.no_tensor(name)
        if checks:
            rules.check_values(name, checks, values)
        call_args = tuple([values[key] for key in positional])
        call_kwargs = {key: values[key] for key in keywords}
        specs = meta(*call_args, **call_kwargs)
        if not builtin:
            if type(specs) not in (tuple, list) or len(specs) != n:
                raise ArgumentTypeError(
                    f"{name}: the meta function must return a tuple of {n} (shape, dtype) specs, got {specs!r}"
                )
            specs = tuple(rules.checked_spec(name, s) for s in specs)
        handler = table.handlers.get(device.key)
        if handler is None:
            handler = table.resolve(device.key, str(device))
        guard = device._guard
        if out is None:
            backend = first._backend
            # (allocated inside the device guard, as the single-output fronts do: on the tensors' device, not
            # the current one)
            if guard is None:
                arrays = _alloc(name, backend, specs, device)
            else:
                with guard():
                    arrays = _alloc(name, backend, specs, device)
            _run(handler, call_args, call_kwargs, arrays, guard)
            return op.result(*(_wrap(backend, device, a, tuple(s[0])) for a, s in zip(arrays, specs, strict=True)))
        _check_outs_apart(name, out)
        if exact:
            _check_out_dtypes(name, out, specs)
        targets = [
            rules.prepare_out(name, o, s, inputs, False, f"out[{i}]")
            for i, (o, s) in enumerate(zip(out, specs, strict=True))
        ]
        _run(handler, call_args, call_kwargs, targets, guard)
        for o, a in zip(out, targets, strict=True):
            if a is not o._array:
                rules.finish_out(name, o, a)
            o._storage.version += 1
        return op.result(*out)

    def functional(*args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
        if kwargs and aliases and not aliases.isdisjoint(kwargs):
            return aliased_call(name, functional, shown, pairs, args, kwargs)  # type: ignore[no-any-return]
        if modes.ACTIVE[0]:
            return modes.run_modes(op, "functional", functional, raw, args, kwargs)  # type: ignore[no-any-return]
        return raw(*args, **kwargs)

    functional.__signature__ = shown  # type: ignore[attr-defined]
    raw.__signature__ = signature  # type: ignore[attr-defined]
    for fn in (functional, raw):
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = op.doc
        fn.__module__ = "devtensor"
        fn.op = op  # type: ignore[attr-defined]
    return functional


def _alloc(name: str, backend: Any, specs: Sequence[Any], device: Any) -> list[Any]:
    """One new array per spec on the backend's current device."""
    arrays = []
    for spec in specs:
        try:
            arrays.append(backend.alloc(spec[0], spec[1]))
        except (ValueError, MemoryError) as error:
            rules.alloc_failed(name, spec, error, device)
    return arrays


def _run(handler: Any, args: tuple[Any, ...], kwargs: dict[str, Any], arrays: Sequence[Any], guard: Any) -> None:
    """Call ``handler`` with ConstOuts over ``arrays`` (nothing for meta tensors), inside the device guard."""
    if handler is META_ONLY:
        return
    const_outs = []
    for a in arrays:
        c = new_const_out()
        set_array(c, a.view())
        const_outs.append(c)
    if guard is None:
        handler(*args, **kwargs, out=tuple(const_outs))
    else:
        with guard():
            handler(*args, **kwargs, out=tuple(const_outs))


def _check_out_dtypes(name: str, out: Sequence[Tensor], specs: Sequence[TensorSpec]) -> None:
    """PyTorch's structured-kernel out rule: each ``out[i]`` has exactly the dtype of output ``i``."""
    for i, (o, spec) in enumerate(zip(out, specs, strict=True)):
        if o._dtype != spec[1]:
            raise ArgumentTypeError(
                f"{name}: argument 'out[{i}]' must have dtype {spec[1]} (the output's; no cast for this op), got "
                f"{o._dtype}"
            )


def _check_outs_apart(name: str, out: Sequence[Tensor]) -> None:
    """Two outs sharing memory would have one output overwrite another: MemoryOverlapError."""
    for i, a in enumerate(out):
        for j in range(i):
            b = out[j]
            if a._storage.root is b._storage.root and (a is b or a._backend.shares_memory(a._array, b._array)):
                raise MemoryOverlapError(
                    f"{name}: arguments 'out[{j}]' and 'out[{i}]' share memory; each output needs its own tensor"
                )
