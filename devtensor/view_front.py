"""The generic front of view ops (:mod:`devtensor.views`): one Python front for every view op, reading per-op tables
(the schema's parameters, defaults and NumPy aliases, the meta function, the kernel table), with no per-op code
generated.

A call: the arguments bound to the op's schema (:class:`devtensor.structured.generic.Binder`, Python's TypeErrors
for arguments that do not bind); a NumPy alias (``axis=``) put under PyTorch's name (both given is an error; a
required ``dim`` given under neither name is Python's missing-argument TypeError,
:func:`devtensor.structured.aliases.missing`); the dispatch-mode hook (variant ``"view"``); ``self`` a tensor (a
NumPy value is taken as a CPU tensor over its memory, :func:`devtensor.views._bad_self`); the meta function (for
devtensor's reshape and view, their memo of C-contiguous reshapes first); the kernel for ``self``'s key; and the
view wrapped as ``Backend.wrap_view`` wraps it (a copy, a cache miss and multi-result ops take the helpers of
:mod:`devtensor.views`).

The varargs Tensor method (``t.permute(1, 0)``) is the same front taking the sequence spread out; under an active
mode it calls the functional front, whose hook the modes see.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from devtensor import modes
from devtensor.errors import DevtensorError, as_called
from devtensor.structured.aliases import NO_ALIAS, alias_pairs, both_given, missing, required_aliases
from devtensor.structured.generic import Binder, front_signature
from devtensor.tensor import Tensor

if TYPE_CHECKING:
    from devtensor.views import ViewOp

__all__ = ["make_view_front"]

_new: Final = object.__new__


def make_view_front(op: ViewOp, method: bool = False) -> Callable[..., Any]:
    """The view op's functional front; with ``method``, its varargs Tensor method (``t.permute(1, 0)``). Every table
    is read from ``op`` here, once."""
    from devtensor import views  # (views defines the ops this front serves, and imports this module lazily)

    params = op.schema.params
    name = op.name
    npos = sum(not p.kw_only for p in params)
    nparams = len(params)
    kw_names = tuple(p.name for p in params if p.kw_only)
    meta, handlers = op.meta, op.table.handlers
    multi = op.multi
    bad_self, rare, too_large, miss, many = views._bad_self, views._rare, views._too_large, views._miss, views._many
    is_sequence = views._is_sequence
    # devtensor's reshape and view: the array's own reshape while the built-in kernel is the handler and the plan
    # is a shape, and their memo of C-contiguous reshapes read before the meta function
    reshapes = views._reshapes(op)
    reshape_kernel, reshape_specs = views.RESHAPE_KERNEL, views.RESHAPE_SPECS
    active, run_modes = modes.ACTIVE, modes.run_modes
    pairs = () if method else alias_pairs(params, required=True)
    needed = set(required_aliases(params))
    binder = Binder(name, params, False, pairs)
    tails = tuple(tail[: nparams - n] for n, tail in enumerate(binder.quick_tails))  # (no alias slots)
    # (the numbers of positional arguments a call with no keyword binds at once: every required one given)
    quick = frozenset(range(binder.quick_least, npos + 1)) if not binder.kw_required else frozenset()
    alias_at = tuple(
        (binder.index[n], binder.index[a], n, a, p.default, n in needed)
        for n, a in pairs
        for p in params
        if p.name == n
    )
    # the varargs method's keyword-only rest (``t.permute(*dims)`` has none)
    rest = params[2:]
    rest_at = {p.name: i for i, p in enumerate(rest, start=2)}
    rest_defaults = tuple(p.default if p.has_default else NO_ALIAS for p in rest)
    fronts: list[Callable[..., Any]] = []

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], tuple[tuple[str, str], ...]]:
        # (a call with keywords or a missing positional argument: the values and the aliases passed)
        values = binder.bind(args, kwargs)
        passed: tuple[tuple[str, str], ...] = ()
        for i, j, pname, alias, _default, _required in alias_at:
            if values[j] is not NO_ALIAS:
                if values[i] is not NO_ALIAS:
                    both_given(name, pname, alias)
                values[i] = values[j]
                passed += ((pname, alias),)
        for i, _j, pname, alias, default, required in alias_at:
            if values[i] is NO_ALIAS:
                if required:
                    missing(name, pname, alias)
                values[i] = default
        return values[:nparams], passed

    def bind_method(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        if not args:
            raise TypeError(f"{name}() missing 1 required positional argument: '{params[0].name}'")
        sequence: Any = args[1:]
        if len(sequence) == 1 and type(sequence[0]) is not int and is_sequence(sequence[0]):
            sequence = sequence[0]
        values = [args[0], sequence, *rest_defaults]
        for k, v in kwargs.items():
            i = rest_at.get(k)
            if i is None:
                raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
            values[i] = v
        for i, p in enumerate(rest, start=2):
            if values[i] is NO_ALIAS:
                raise TypeError(f"{name}() missing 1 required keyword-only argument: '{p.name}'")
        return values

    def front(hooked: bool) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            passed: tuple[tuple[str, str], ...] = ()
            if method:
                if kwargs or not args or rest:
                    values: Any = bind_method(args, kwargs)
                else:  # (bind_method's common case inline)
                    sequence = args[1:]
                    if len(sequence) == 1 and type(sequence[0]) is not int and is_sequence(sequence[0]):
                        sequence = sequence[0]
                    values = (args[0], sequence)
                if active[0]:  # (the functional front, whose hook the modes see)
                    return op.functional(*values[:2], **{p.name: values[i] for i, p in enumerate(rest, start=2)})
            elif kwargs:
                values, passed = bind(args, kwargs)
            elif len(args) == nparams:
                values = args
            elif len(args) in quick:
                values = args + tails[len(args)]
            else:
                values, passed = bind(args, kwargs)
            try:
                if hooked and active[0]:
                    kw = dict(zip(kw_names, values[npos:nparams], strict=True))
                    return run_modes(op, "view", fronts[0], fronts[1], tuple(values[:npos]), kw)
                self_ = values[0]
                if not isinstance(self_, Tensor):
                    self_ = bad_self(name, self_)
                    values = (self_, *values[1:])
                spec: Any = None
                if reshapes:
                    shape = values[1]
                    if type(shape) is tuple:
                        # (sizes exactly ints: 4.0 must not hit 4's entry; an unhashable size goes to the meta)
                        for size in shape:
                            if type(size) is not int:
                                break
                        else:
                            spec = reshape_specs.get((shape, self_._shape))
                            if spec is not None and not (
                                type(self_._array) is np.ndarray and self_._array.flags.c_contiguous
                            ):
                                spec = None
                if spec is not None:
                    pass
                elif kw_names:
                    spec = meta(*values[:npos], **dict(zip(kw_names, values[npos:nparams], strict=True)))
                else:
                    spec = meta(*values)
                kernel = handlers.get(self_._device.key)
                if multi:
                    if kernel is None:
                        return miss(op, self_, spec)
                    return many(self_, kernel, spec, name)
                # (spec[2]: ViewSpec.copy, spec[1]: its plan)
                if kernel is None or spec[2]:
                    return rare(op, self_, kernel, spec)
                if reshapes and kernel is reshape_kernel[0] and type(spec[1]) is tuple:
                    try:
                        array = self_._array.reshape(spec[1])
                    except (ValueError, OverflowError) as error:
                        too_large(name, spec, error)
                    view = _new(type(self_))
                    view._shape = spec[1]
                    view._dtype = self_._dtype
                else:
                    backend = self_._backend
                    try:
                        array = kernel(backend.xp, self_._array, spec[1])
                    except (ValueError, OverflowError) as error:
                        too_large(name, spec, error)
                    view = _new(backend.tensor_class)
                    view._shape = array.shape
                    view._dtype = array.dtype
                view._array = array
                # (Backend.wrap_view inline: the view shares the base's device and storage)
                view._device = self_._device
                view._storage = self_._storage
                view._write_checked = False
                return view
            except DevtensorError as error:
                if passed:  # (an error names the argument as the caller spelled it)
                    raise as_called(error, (name,), name, passed) from None
                raise

        return call

    fronts += [front(not method), front(False)]  # (the method hands a call under a mode to the functional)
    public = fronts[0]
    if method:
        shown = [
            inspect.Parameter(params[0].name, inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter(params[1].name, inspect.Parameter.VAR_POSITIONAL),
            *(
                inspect.Parameter(
                    p.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=p.default if p.has_default else inspect.Parameter.empty,
                )
                for p in rest
            ),
        ]
        public.__signature__ = inspect.Signature(shown)  # type: ignore[attr-defined]
    else:
        public.__signature__ = front_signature(params, False, required=True)  # type: ignore[attr-defined]
    return public
