"""Data-dependent structured ops: ops whose result shapes depend on the input's values (``nonzero``, ``unique``).

Such an op cannot be planned from shapes and dtypes alone: its meta function cannot know the result's size.
A :class:`DataDependentOp` is defined like a structured op, from an annotated meta function, with the
differences that follow from that:

* the meta function checks the arguments and returns the result's dtype (one output: the front returns a
  tensor) or a tuple of dtypes (the front returns a tuple of tensors, one per dtype); no shapes;
* an impl takes the op's parameters (optionally ``xp``, the array module, first, for an impl of several keys)
  and *returns* a tuple of arrays, one per dtype, on the input's device; there is no ``out`` (nothing can be
  sized before the values are known), so no out= variant and no inplace variant;
* ``data_dependent`` is True (structured, multi-output and view ops have no such attribute:
  ``getattr(op, "data_dependent", False)`` tells them apart), so a static plan (a graph capture, an
  ahead-of-time shape pass) can refuse the op by that attribute;
* a meta tensor has no values to size the result by: NoDataError (unless a Python override for Meta serves).

The rest is every op's: the generic check of bool and Literal arguments (:func:`rules.check_values`), the op
registry (:func:`devtensor.structured.get_op` finds these ops; their registry is
:data:`data_dependent_ops_by_name`), a kernel table per dispatch key with Python overrides
(:func:`devtensor.library.override`) above the kernels, the device check of tensor arguments, the device
guard, dispatch modes (variant ``"functional"``). Backend fallbacks (which write an out) do not serve them.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from devtensor import modes
from devtensor.dispatcher import META_ONLY, KernelTable, registry_lock
from devtensor.errors import ArgumentTypeError, ArgumentValueError, NoDataError
from devtensor.structured import rules
from devtensor.structured.aliases import alias_pairs, alias_parameters, aliased_call
from devtensor.structured.annotations import TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.structured.kernel_registration import KernelRegistration
from devtensor.structured.schema import call_binder, check_op_name, schema_from_meta
from devtensor.tensor import Tensor

__all__ = ["DataDependentOp", "all_data_dependent_ops", "data_dependent_op", "data_dependent_ops_by_name"]

#: The data-dependent ops by name.
data_dependent_ops_by_name: Final[dict[str, DataDependentOp]] = {}


def all_data_dependent_ops() -> list[DataDependentOp]:
    """Every data-dependent op defined so far, in definition order."""
    return list(data_dependent_ops_by_name.values())


class DataDependentOp(KernelRegistration):
    """An op whose result shapes depend on its input's values (see the module docstring).

    Attributes: ``name``, ``meta``, ``schema`` (the parameters, as a structured op's), ``table`` (kernels and
    overrides per key), ``functional`` (the front ``name(...)``, no ``out``), ``doc``, ``module``,
    ``public_functional`` (whether the main namespace exports the front; False for an op behind another API).
    ``data_dependent`` is True, ``inplace`` None.

    An impl (``impl``, ``register_kernel``: :class:`KernelRegistration`) takes the op's parameters (an impl whose
    first parameter is ``xp`` serves several keys) and returns a tuple of arrays, one per output.
    """

    __slots__ = ("doc", "functional", "meta", "module", "name", "public_functional", "schema", "table")

    data_dependent: Final = True
    inplace: Final = None
    out_may_be_input: Final = False
    nondeterministic: Final = False
    method: Final = False

    def __init__(
        self,
        name: str,
        meta: Callable[..., Any],
        *,
        doc: str | None = None,
        public: bool = True,
    ) -> None:
        check_op_name("data_dependent_op", name)
        if name in data_dependent_ops_by_name:
            raise ArgumentValueError(f"data_dependent_op: an op named {name!r} is defined already")
        self.name = name
        self.meta = meta
        self.module: str = getattr(meta, "__module__", None) or "__main__"
        self.schema = schema_from_meta(name, meta)
        self.table = KernelTable(name, self, fallbacks=False)
        self.doc = doc if doc is not None else (meta.__doc__ or "")
        self.public_functional = public
        self.functional: Callable[..., Any] = _make_front(self)
        with registry_lock:
            data_dependent_ops_by_name[name] = self

    def _check(self, fn: Callable[..., Any], xp_allowed: bool = False) -> bool:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError) as e:
            raise ArgumentTypeError(f"{self.name}: impl {fn!r} has no inspectable signature") from e
        got = [(p.name, p.kind == p.KEYWORD_ONLY) for p in sig.parameters.values()]
        takes_xp = xp_allowed and got[:1] == [("xp", False)]
        want = [(p.name, p.kw_only) for p in self.schema.params]
        if takes_xp:
            want.insert(0, ("xp", False))
        if got != want:

            def fmt(params: list[tuple[str, bool]]) -> str:
                return ", ".join(f"*{n}" if kw else n for n, kw in params)

            raise ArgumentTypeError(
                f"{self.name}: impl {getattr(fn, '__qualname__', fn)!r} has parameters ({fmt(got)}), expected "
                f"({fmt(want)}) (names and kinds of the meta function, no 'out': a data-dependent impl returns its "
                "arrays; optionally 'xp' first, for an impl of several keys; * marks keyword-only)"
            )
        return takes_xp

    def __repr__(self) -> str:
        return f"<data-dependent op {self.name}>"


def data_dependent_op(
    name: str | None = None, *, public: bool = True
) -> Callable[[Callable[..., Any]], DataDependentOp]:
    """Decorator: define a data-dependent op from its meta function (see the module docstring), which returns
    the result's dtype or a tuple of dtypes.

    Raises:
        ValueError: a bad or duplicate name.  TypeError: an unsupported meta signature.
    """

    def define(meta: Callable[..., Any]) -> DataDependentOp:
        return DataDependentOp(name or meta.__name__, meta, public=public)

    return define


def _make_front(op: DataDependentOp) -> Callable[..., Any]:
    """The functional front of ``op`` (with the dispatch-mode hook) and its raw twin."""
    name = op.name
    params = op.schema.params
    builtin = op.module.split(".")[0] == "devtensor"
    signature = inspect.Signature(
        [
            inspect.Parameter(
                p.name,
                inspect.Parameter.KEYWORD_ONLY if p.kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=p.default,
            )
            for p in params
        ]
    )
    # NumPy's axis for dim (devtensor.structured.aliases), as the multi-output fronts.
    pairs = alias_pairs(params)
    shown = signature.replace(parameters=[*signature.parameters.values(), *alias_parameters(params)])
    aliases = frozenset(a for _, a in pairs)
    tensor_params = [p for p in params if p.category in (TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST)]
    checks = rules.value_checks(params)
    meta = op.meta
    table = op.table

    bind = call_binder(name, params, out=False)
    positional = tuple(p.name for p in params if not p.kw_only)
    keywords = tuple(p.name for p in params if p.kw_only)

    def raw(*args: Any, **kwargs: Any) -> Any:
        try:
            values = bind(*args, **kwargs)
        except TypeError as error:
            raise ArgumentTypeError(f"{name}: {error}") from None
        device: Any = None
        first: Tensor | None = None
        named: list[tuple[str, Any]] = []
        for p in tensor_params:
            v = values[p.name]
            named.append((p.name, v))
            if p.category == TENSOR_LIST:
                device, first = rules.list_device(name, p.name, v, device, first)
            elif isinstance(v, Tensor):
                if device is None:
                    device, first = v._device, v
                elif v._device is not device:
                    rules.mismatch(name, named)
            elif not (v is None and p.optional):
                rules.bad_type(name, p.name, v, "a Tensor")
        if device is None or first is None:
            rules.no_tensor(name)
        if checks:
            rules.check_values(name, checks, values)
        call_args = tuple([values[key] for key in positional])
        call_kwargs = {key: values[key] for key in keywords}
        wanted = meta(*call_args, **call_kwargs)
        single = not isinstance(wanted, tuple)
        dtypes: tuple[Any, ...] = (wanted,) if single else wanted
        handler = table.handlers.get(device.key)
        if handler is None:
            handler = table.resolve(device.key, str(device))
        if handler is META_ONLY:
            raise NoDataError(
                f"{name}: the result's shape depends on the values of the input, and a tensor on {device} has none"
            )
        guard = device._guard
        if guard is None:
            arrays = handler(*call_args, **call_kwargs)
        else:
            with guard():
                arrays = handler(*call_args, **call_kwargs)
        if not builtin:
            arrays = _checked_arrays(name, arrays, dtypes)
        backend = first._backend
        results = tuple(backend.wrap(a, device) for a in arrays)
        return results[0] if single else results

    def functional(*args: Any, **kwargs: Any) -> Any:
        if kwargs and aliases and not aliases.isdisjoint(kwargs):
            return aliased_call(name, functional, shown, pairs, args, kwargs)
        if modes.ACTIVE[0]:
            return modes.run_modes(op, "functional", functional, raw, args, kwargs)
        return raw(*args, **kwargs)

    functional.__signature__ = shown  # type: ignore[attr-defined]
    raw.__signature__ = signature  # type: ignore[attr-defined]
    for fn in (functional, raw):
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = op.doc
        fn.__module__ = "devtensor"
        fn.op = op  # type: ignore[attr-defined]
    return functional


def _checked_arrays(name: str, arrays: object, dtypes: tuple[Any, ...]) -> tuple[Any, ...]:
    """A user impl's result: a tuple of arrays, one per dtype the meta function gave, of those dtypes."""
    if type(arrays) not in (tuple, list) or len(typing.cast(tuple[Any, ...], arrays)) != len(dtypes):
        raise ArgumentTypeError(
            f"{name}: the impl must return a tuple of {len(dtypes)} arrays (one per dtype of the meta function), "
            f"got {type(arrays).__name__}"
        )
    found = tuple(typing.cast(tuple[Any, ...], arrays))
    for i, (a, d) in enumerate(zip(found, dtypes, strict=True)):
        if getattr(a, "dtype", None) != np.dtype(d):
            raise ArgumentTypeError(
                f"{name}: the impl's result {i} has dtype {getattr(a, 'dtype', type(a).__name__)}, the meta "
                f"function gave {np.dtype(d)}"
            )
    return found
