"""NumPy's keyword names for PyTorch's: ``axis`` for ``dim``, ``keepdims`` for ``keepdim``, ``ddof`` for
``correction``.

PyTorch's argument parser accepts ``axis`` and ``keepdims`` wherever a function takes ``dim`` and ``keepdim``
(``t.sum(axis=0, keepdims=True)``), so that NumPy code, and libraries that call NumPy's method spelling on array
chunks (Dask: ``chunk.sum(axis=..., keepdims=..., dtype=...)``), run on tensors. devtensor's fronts do the same for
every structured op (built-in or custom) with an optional ``dim``, ``keepdim`` or ``correction`` parameter (a
parameter with a default; ``ddof``, NumPy's name for ``var``/``std``'s ``correction``, is devtensor's addition:
PyTorch's parser has no alias for it): the front gets each alias as a keyword-only parameter whose default is
:data:`NO_ALIAS`, and a call that passes one puts the value under the op's own name and goes on (the generic
fronts, :mod:`devtensor.structured.generic` and :mod:`devtensor.view_front`; the multi-output fronts take the
slow path :func:`aliased_call`, which calls the front again). A call of positional arguments only passes no alias
and pays nothing for them.

Only the name is an alias, never NumPy's semantics: ``t.var(axis=0)`` is PyTorch's ``var`` (``correction=1``),
not NumPy's (``ddof=0``).

An error of the call names the argument as the caller spelled it (``t.sum(axis=5)``: "argument 'axis'").
Passing both names (``t.sum(dim=0, axis=1)``, ``t.sum(None, axis=0)``, ``t.var(ddof=0, correction=1)``) is an
ArgumentTypeError (TypeError) naming the op and both arguments, as PyTorch's "got multiple values", whatever the
PyTorch name's value: so that the front can tell a PyTorch name passed at its default from one not passed, a
parameter that has an alias defaults to :data:`NO_ALIAS` too, and the front puts the real default in its place
(one identity test per such parameter, after the alias test). The fronts' ``__signature__`` shows the real
defaults (:func:`~devtensor.structured.generic.front_signature`).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from devtensor.errors import ArgumentTypeError, DevtensorError, as_called

if TYPE_CHECKING:
    from devtensor.structured.schema import Param

__all__ = [
    "NO_ALIAS",
    "NUMPY_ALIASES",
    "alias_pairs",
    "alias_parameters",
    "aliased",
    "aliased_call",
    "both_given",
    "missing",
    "required_aliases",
]

#: PyTorch's parameter name -> NumPy's name for it.
NUMPY_ALIASES: Final[dict[str, str]] = {"dim": "axis", "keepdim": "keepdims", "correction": "ddof"}


class _NoAlias:
    """The type of :data:`NO_ALIAS`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_ALIAS"

    def __reduce__(self) -> str:
        return "NO_ALIAS"


#: The default of an alias parameter in a front: "not passed".
NO_ALIAS: Final = _NoAlias()


def alias_pairs(params: Sequence[Param], required: bool = False) -> tuple[tuple[str, str], ...]:
    """``(PyTorch name, NumPy name)`` for each parameter of ``params`` that gets an alias: named in
    :data:`NUMPY_ALIASES`, with a default, and no other parameter already called by the alias's name. With
    ``required`` (view ops: ``unsqueeze(axis=0)``), also a required one that no later positional parameter
    without a default follows (so that it can take the :data:`NO_ALIAS` default: see :func:`required_aliases`)."""
    names = {p.name for p in params}
    return tuple(
        (p.name, NUMPY_ALIASES[p.name])
        for i, p in enumerate(params)
        if p.name in NUMPY_ALIASES
        and NUMPY_ALIASES[p.name] not in names
        and (p.has_default or (required and not p.kw_only and _last_required(params, i)))
    )


def _last_required(params: Sequence[Param], index: int) -> bool:
    return all(q.has_default or q.kw_only for q in params[index + 1 :])


def required_aliases(params: Sequence[Param]) -> tuple[str, ...]:
    """The required parameters among ``alias_pairs(params, required=True)``: the front gives each the
    :data:`NO_ALIAS` default and raises Python's own missing-argument TypeError when neither name is passed."""
    paired = {name for name, _ in alias_pairs(params, required=True)}
    return tuple(p.name for p in params if p.name in paired and not p.has_default)


def missing(op: str, name: str, alias: str) -> typing.NoReturn:
    """A required parameter with an alias given under neither name: Python's TypeError for a missing argument."""
    raise ArgumentTypeError(f"{op}() missing 1 required argument: '{name}' (or NumPy's '{alias}')")


def both_given(op: str, name: str, alias: str) -> typing.NoReturn:
    """An alias and its PyTorch name both passed: ArgumentTypeError (TypeError) naming the op and both."""
    raise ArgumentTypeError(f"{op}: got both '{name}' and '{alias}' (NumPy's name for '{name}'); pass one of them")


def aliased(
    op: str, front: Callable[..., Any], arguments: dict[str, Any], given: tuple[tuple[str, str, Any, Any], ...]
) -> Any:
    """The slow path of a front called with an alias: ``front(**arguments)`` with each alias's value put under
    the PyTorch name. ``given`` holds ``(PyTorch name, NumPy name, the alias's value, the PyTorch parameter's
    default)`` per alias parameter of the front; an alias at :data:`NO_ALIAS` was not passed.

    The PyTorch name of a parameter with an alias defaults to :data:`NO_ALIAS` in the front too, so
    ``arguments`` holds NO_ALIAS for one not passed (the re-called front puts the default in its place).

    Raises:
        ArgumentTypeError (TypeError): an alias and its PyTorch name both passed (at any value), naming ``op`` and
            both arguments; nothing ran.
        DevtensorError: as ``front``, an ``argument '<PyTorch name>'`` in its message renamed to the alias passed.
    """
    passed = []
    for name, alias, value, _default in given:
        if value is NO_ALIAS:
            continue
        if arguments[name] is not NO_ALIAS:
            both_given(op, name, alias)
        arguments[name] = value
        passed.append((name, alias))
    try:
        return front(**arguments)
    except DevtensorError as error:
        raise as_called(error, (op,), op, tuple(passed)) from None


# --- the closure fronts (multi-output and data-dependent ops) -------------------------------------------------


def alias_parameters(params: Sequence[Param]) -> list[inspect.Parameter]:
    """The keyword-only alias parameters (default :data:`NO_ALIAS`) a closure front's shown signature ends with,
    one per pair of :func:`alias_pairs`."""
    return [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=NO_ALIAS) for _, a in alias_pairs(params)]


def aliased_call(
    op: str,
    front: Callable[..., Any],
    shown: inspect.Signature,
    pairs: tuple[tuple[str, str], ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """The slow path of a closure front (multi-output and data-dependent ops, which bind through
    ``inspect.Signature``) called with a NumPy alias in ``kwargs``: binds ``args``/``kwargs`` to ``shown`` (the
    op's parameters and :func:`alias_parameters`) and calls ``front`` again with each alias's value under the
    PyTorch name, by the single-output fronts' rule (:func:`aliased`: both names passed is an error, whatever
    the PyTorch name's value).

    Raises:
        ArgumentTypeError (TypeError): arguments that do not bind (naming ``op``); an alias and its PyTorch name
            both passed, as :func:`aliased`.
    """
    try:
        bound = shown.bind(*args, **kwargs)
    except TypeError as error:
        raise ArgumentTypeError(f"{op}: {error}") from None
    # Only the arguments passed are bound (no defaults applied), so the call front gets is the one with
    # PyTorch's names: positional where they were, keywords where the aliases were.
    arguments = bound.arguments
    passed = []
    for name, alias in pairs:
        value = arguments.pop(alias, NO_ALIAS)
        if value is NO_ALIAS:
            continue
        if name in arguments:
            both_given(op, name, alias)
        arguments[name] = value
        passed.append((name, alias))
    try:
        return front(*bound.args, **bound.kwargs)
    except DevtensorError as error:
        raise as_called(error, (op,), op, tuple(passed)) from None
