"""The common rules the fronts apply around a kernel: argument and device errors, the validation of custom meta
results, PyTorch's out and inplace rules (dtype casting, resize, writability), and the overlap checks.

The rules, in full (PyTorch's where it has one):

- **out resize.** An ``out`` of the result's shape is written in place. Of another shape it is resized (new
  memory of the result's shape and ``out``'s dtype, the version carried forward and bumped), with a UserWarning
  when it had elements (PyTorch's deprecation; an empty out silently), unless: it is also an input (ShapeError,
  never resized); its memory is not devtensor's (``from_numpy``, ``asarray`` without a copy, ``from_dlpack``:
  ShapeError, as PyTorch's storage from NumPy is not resizable; the caller's array would silently stop seeing the
  tensor); or another tensor is alive on its memory (a view of it, or the base it views: ShapeError, the others
  would stop seeing it; read from the reference count of the record they share,
  :func:`~devtensor.storage.others_alive`). Read-only memory is a ReadOnlyError first. A refused resize changes
  nothing.
- **out an input.** ``out`` exactly one of the inputs (the same elements) is fine for every op: ops whose kernel
  may write over its input (``out_may_be_input``: elementwise ops, ``addmm``, ``clone``) write directly; every
  other op (matmul family, softmax, flip, reductions, cat, …) writes a temporary that is then copied into
  ``out`` (as NumPy does), so the values are the functional call's; an inplace variant of such an op with another
  input exactly ``self`` likewise. A partial overlap between ``out`` (or an inplace ``self``) and an input is a
  MemoryOverlapError (PyTorch's rule), whatever the op.
- **floating-point conditions.** Divide by zero, invalid and overflow are properties of the values, not bad
  input: the result is written and the version bumped, then NumPy's warning is emitted. If a warnings filter or
  ``np.errstate(...='raise')`` makes it an error, the write has happened (as in NumPy): the one exception to "a
  call that raises changes nothing"; the version moves if and only if the data moved (an out being resized keeps
  its memory and version then). See :func:`complete_after_condition`.
"""

from __future__ import annotations

import ast
import operator
import os
import sys
import typing
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

import numpy as np

from devtensor.device import Device
from devtensor.dtypes import SUPPORTED, check_cast, to_dtype
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    CastingError,
    DeviceMismatchError,
    MemoryOverlapError,
    ReadOnlyError,
    ShapeError,
    short_repr,
)
from devtensor.storage import drop_kept_views, memory_held_elsewhere, others_alive
from devtensor.tensor import (
    PlannedSpec,
    Storage,
    Tensor,
    TensorSpec,
    check_no_internal_overlap,
)


def bad_type(op: str, arg: str, value: object, expected: str) -> typing.NoReturn:
    raise ArgumentTypeError(
        f"{op}: argument '{arg}' must be {expected}, got {type(value).__name__} {short_repr(value)}"
    )


def mismatch(op: str, named: Sequence[tuple[str, Any]]) -> typing.NoReturn:
    seen: list[str] = []
    for arg, value in named:
        if isinstance(value, Tensor):
            seen.append(f"{value.device} ({arg})")
        elif isinstance(value, (list, tuple)):
            seen.extend(f"{v.device} ({arg}[{i}])" for i, v in enumerate(value) if isinstance(v, Tensor))
    raise DeviceMismatchError(
        f"{op}: expected all tensors to be on the same device, but found tensors on {', '.join(seen)}"
    )


def alloc_failed(op: str, spec: TensorSpec, error: Exception, device: Device | None = None) -> typing.NoReturn:
    """A result that cannot be allocated: OutOfMemoryError (a MemoryError) naming the op, shape, dtype, bytes and
    device when the memory is not there; ArgumentValueError for a size NumPy cannot express (too many elements
    for the address space, too many dims)."""
    from devtensor.backends import allocation_error  # (backends imports the tensor classes this module uses)

    if isinstance(error, MemoryError):
        raise allocation_error(op, spec[0], spec[1], device, error) from None
    raise ArgumentValueError(f"{op}: cannot allocate the result of shape {tuple(spec[0])}: {error}") from None


# Shapes already validated by checked_spec (tuples of non-negative Python ints), bounded; and the dtypes a
# meta function may return as they are.
SPEC_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {}
SPEC_DTYPES: Final = SUPPORTED


def exact_shape(shape: tuple[Any, ...]) -> bool:
    """Whether every dim of ``shape`` is exactly a Python int (not a float, bool or NumPy integer equal to one):
    the fronts' test that a cache hit of an equal shape is the same answer the full check gives."""
    return all(type(d) is int for d in shape)


def checked_spec(op: str, spec: object) -> TensorSpec:
    """A custom op's meta result, validated: ``(shape, dtype)`` with a tuple of non-negative ints (Python ints or
    integers by ``__index__``, such as NumPy's; not floats, even whole ones) and a supported dtype (a user meta
    function may return anything; built-in ones are trusted). The same answer every time: the fronts' cache of
    shapes seen valid only skips this for a result this function would accept (see :func:`exact_shape`).

    Raises:
        ArgumentTypeError: not a 2-tuple; a shape that is not a tuple (a list, …) or has a dim that is not an
            int; no dtype or an unsupported one.
        ArgumentValueError: a negative dim.
    """
    if not isinstance(spec, tuple) or len(spec) != 2:
        raise ArgumentTypeError(f"{op}: the meta function must return (shape, dtype), got {short_repr(spec)}")
    raw_shape, raw_dtype = spec
    if not isinstance(raw_shape, tuple):
        raise ArgumentTypeError(
            f"{op}: the meta function returned a shape that is not a tuple of ints: {type(raw_shape).__name__} "
            f"{short_repr(raw_shape)}"
        )
    try:
        shape = tuple(operator.index(d) for d in raw_shape)
    except TypeError:
        raise ArgumentTypeError(
            f"{op}: the meta function returned a shape that is not a tuple of ints: {short_repr(raw_shape)}"
        ) from None
    if any(d < 0 for d in shape):
        raise ArgumentValueError(f"{op}: the meta function returned a negative dimension: {shape}")
    if raw_dtype is None:
        raise ArgumentTypeError(f"{op}: the meta function returned no dtype")
    if len(SPEC_SHAPES) >= 4096:
        SPEC_SHAPES.clear()
    SPEC_SHAPES[shape] = shape
    return (shape, to_dtype(raw_dtype, op=op, arg="the meta function's dtype"))


def checked_planned_spec(op: str, spec: object) -> PlannedSpec[Any]:
    """A custom op's meta result when its meta is annotated ``-> PlannedSpec[...]``: a PlannedSpec (or a
    ``(shape, dtype, plan)`` tuple) whose shape and dtype pass :func:`checked_spec`."""
    if not isinstance(spec, tuple) or len(spec) != 3:
        raise ArgumentTypeError(f"{op}: the meta function must return a PlannedSpec(shape, dtype, plan), got {spec!r}")
    shape, dtype = checked_spec(op, (spec[0], spec[1]))
    return PlannedSpec(shape, dtype, spec[2])


def not_refined(op: str, arg: str, value: object, cls: type[Tensor]) -> typing.NoReturn:
    if isinstance(value, Tensor):
        raise DeviceMismatchError(
            f"{op}: argument '{arg}' must be a {cls.__name__} (this is a device binding), got a tensor on "
            f"{value.device}"
        )
    raise ArgumentTypeError(f"{op}: argument '{arg}' must be a {cls.__name__}, got {type(value).__name__}")


def no_tensor(op: str, lists: tuple[str, ...] = ()) -> typing.NoReturn:
    if lists:
        names = " or ".join(f"'{n}'" for n in lists)
        raise ArgumentValueError(f"{op}: argument {names} must be a non-empty list of Tensors")
    raise ArgumentTypeError(f"{op}: expected at least one Tensor argument, got only Python numbers")


class NumPyArgument(Exception):
    """Raised by :func:`list_device` for a NumPy value in a tensor list: the front catches it and calls again
    with the NumPy values converted (:func:`devtensor.numpy_values.coerce_call`). Never reaches a caller."""


def coerce(*args: Any) -> Any:
    """The fronts' slow path for an argument of no type they take at once (NumPy values):
    :func:`devtensor.numpy_values.coerce_call`."""
    if not _COERCE:
        from devtensor.numpy_values import coerce_call  # (it imports the structured package)

        _COERCE.append(coerce_call)
    return _COERCE[0](*args)


_COERCE: list[Any] = []


def list_device(op: str, arg: str, value: object, dev: Device | None, first: Tensor | None) -> tuple[Any, Any]:
    if not isinstance(value, (list, tuple)):
        bad_type(op, arg, value, "a list or tuple of Tensors")
    for i, t in enumerate(value):
        if not isinstance(t, Tensor):
            if isinstance(t, (np.ndarray, np.generic)):
                raise NumPyArgument(arg)
            bad_type(op, f"{arg}[{i}]", t, "a Tensor")
        if dev is None:
            dev, first = t._device, t
        elif t._device is not dev:
            raise DeviceMismatchError(
                f"{op}: expected all tensors to be on the same device, but found {dev} and {t._device} ({arg}[{i}])"
            )
    return dev, first


def flat_tensors(args: Iterable[Any]) -> Iterator[Tensor]:
    """The tensors among ``args``, including those inside lists and tuples (one level deep, as tensor lists)."""
    for arg in args:
        if isinstance(arg, Tensor):
            yield arg
        elif isinstance(arg, (list, tuple)):
            yield from (item for item in arg if isinstance(item, Tensor))


def check_writable(op: str, arg: str, t: Tensor) -> None:
    if t._backend.has_data and not t._backend.writeable(t._array):
        raise ReadOnlyError(
            f"{op}: argument '{arg}' is read-only (it wraps read-only memory, e.g. a non-writeable NumPy array)"
        )


def check_overlap(op: str, arg: str, out: Tensor, inputs: Sequence[Any], out_may_be_input: bool) -> bool:
    """Partial overlap between ``out`` and any input is an error (MemoryOverlapError). Returns whether ``out`` is
    exactly one of the inputs of an op that cannot write over its input (not ``out_may_be_input``): the caller
    then computes into a temporary and copies (see :func:`check_pair`)."""
    root = out._storage.root
    through = False
    for x in inputs:
        if isinstance(x, Tensor):
            if x._storage.root is root and check_pair(op, arg, out, x, out_may_be_input):
                through = True
        elif isinstance(x, (list, tuple)):
            through = check_overlap(op, arg, out, x, out_may_be_input) or through
    return through


def check_pair(op: str, arg: str, out: Tensor, x: Tensor, out_may_be_input: bool) -> bool:
    """The overlap rule for the written-to tensor ``out`` and an input ``x`` of the same storage (PyTorch's):
    partial overlap raises MemoryOverlapError; ``x`` exactly ``out`` (the same elements) is fine when the op may
    write over its input (``out_may_be_input``: elementwise ops) and otherwise returns True: the front computes
    into a temporary and copies it into ``out`` (as NumPy does for an output that is an input), so the values
    are the functional call's. False: no overlap, or an alias the kernel handles."""
    backend = out._backend
    if x is out or backend.same_layout(x._array, out._array):
        return not out_may_be_input
    if backend.shares_memory(x._array, out._array):
        raise MemoryOverlapError(
            f"{op}: unsupported operation: some elements of an input and of the written-to tensor '{arg}' "
            "refer to a single memory location (partial overlap); call .clone() on the input first"
        )
    return False


def temporary(op: str, target: Tensor) -> Any:
    """A new array of ``target``'s shape and dtype on its device, for an op that cannot write over its input
    when ``target`` (out, or an inplace self) is one: the kernel writes it, :func:`finish_out` copies it in.

    Raises:
        OutOfMemoryError: the memory for it is not there (nothing has changed).
    """
    backend = target._backend
    spec = (target._shape, target._dtype)
    guard = backend.guard(target._device)
    try:
        if guard is None:
            return backend.alloc(target._shape, target._dtype)
        with guard:
            return backend.alloc(target._shape, target._dtype)
    except (ValueError, MemoryError) as e:
        alloc_failed(op, spec, e, target._device)


#: Variants (by name: ``float_power_``, ``gather`` for its out=) whose out or inplace ``self`` must have the result
#: dtype exactly, where PyTorch refuses the cast the same_kind rule allows; the value says why (the error's end).
EXACT_DTYPE: Final[dict[str, str]] = {}


def check_exact_dtype(op: str, arg: str, result: Any, target: Any) -> None:
    """Raise CastingError when ``op`` (a variant's name) is in :data:`EXACT_DTYPE` and the dtype ``target`` of its
    out or inplace ``self`` (``arg``) is not the result dtype ``result``; else the same_kind rule (check_cast)."""
    if op in EXACT_DTYPE:
        raise CastingError(
            f"{op}: argument '{arg}' has dtype {target.name}, but the result is {result.name} and {op} writes no "
            f"other dtype ({EXACT_DTYPE[op]})"
        )
    check_cast(op, arg, result, target)


def prepare_inplace(op: str, self: Tensor, spec: TensorSpec, others: Sequence[Any], out_may_be_input: bool) -> Any:
    """PyTorch's inplace rules: the result shape equals ``self.shape`` (self never broadcasts), the result
    dtype casts to ``self.dtype`` (same_kind), self is writable, has no internal overlap, and does not
    partially overlap another input (``others``). Returns the array to write: ``self``'s own, or a temporary
    (:func:`temporary`) when another input is exactly ``self`` and the op cannot write over its input."""
    if spec[0] != self._shape:
        raise ShapeError(
            f"{op}: output with shape {list(self._shape)} doesn't match the broadcast shape {list(spec[0])} "
            "(an inplace op never broadcasts self)"
        )
    arr = self._array
    if spec[1] is not arr.dtype:
        check_exact_dtype(op, "self", spec[1], arr.dtype)
    if self._backend.has_data:
        if not self._write_checked:
            check_writable(op, "self", self)
            check_no_internal_overlap(op, "self", self)
            self._write_checked = True
        root = self._storage.root
        through = False
        for x in others:
            if isinstance(x, Tensor):
                # (self passed again is an input like any other: fine where the op may write over its input)
                if x._storage.root is root and check_pair(op, "self", self, x, out_may_be_input):
                    through = True
            elif isinstance(x, (list, tuple)):
                through = check_overlap(op, "self", self, x, out_may_be_input) or through
        if through:
            return temporary(op, self)
    return arr


def prepare_out(
    op: str, out: Tensor, spec: TensorSpec, inputs: Sequence[Any], out_may_be_input: bool, arg: str = "out"
) -> Any:
    """PyTorch's out rules; returns the array to write: ``out``'s own, or a new one when out must be resized
    (the caller swaps it in after the impl succeeded). Errors name the argument ``arg`` (``"out[1]"`` for the
    second out of a multi-output op)."""
    arr = out._array
    if spec[1] is not arr.dtype:
        check_exact_dtype(op, arg, spec[1], arr.dtype)
    shape = spec[0]
    if out._shape != shape:
        backend = out._backend
        root = out._storage.root
        for x in flat_tensors(inputs):
            if x is out or (x._storage.root is root and backend.shares_memory(x._array, arr)):
                raise ShapeError(
                    f"{op}: argument '{arg}' of shape {list(out._shape)} is also an input and would need a resize "
                    f"to {list(shape)}; an out that is also an input is never resized"
                )
        check_writable(op, arg, out)  # (read-only memory is the first reason: it is never written at all)
        if not out._storage.owned:
            # The caller's memory (from_numpy, asarray, from_dlpack): new memory for out would silently leave
            # the caller's array behind (PyTorch: such storage is not resizable). Nothing has changed yet.
            raise ShapeError(
                f"{op}: argument '{arg}' of shape {list(out._shape)} wraps memory devtensor does not own (from "
                f"from_numpy, asarray or from_dlpack) and cannot be resized to {list(shape)}; pass an out of that "
                "shape"
            )
        del arr, root  # (memory_held_elsewhere counts the references to out's memory: none may be this call's)
        if others_alive(out) or memory_held_elsewhere(out):
            drop_kept_views()  # (static plans' kept views of their arguments are a cache: dropped, counted again)
        if others_alive(out) or memory_held_elsewhere(out):
            # A view, a tensor with live views, or a NumPy array or DLPack export of its memory: resizing would
            # give out new memory that the others do not see (PyTorch resizes the shared storage in place
            # instead). Refused; nothing has changed yet.
            raise ShapeError(
                f"{op}: argument '{arg}' of shape {list(out._shape)} shares its memory with live views (tensors, "
                f"NumPy arrays or DLPack exports) and cannot be resized to {list(shape)}; pass an out of that shape"
            )
        guard = backend.guard(out._device)
        try:
            if guard is None:
                return backend.alloc(shape, out._dtype)
            with guard:
                return backend.alloc(shape, out._dtype)
        except (ValueError, MemoryError) as e:
            alloc_failed(op, spec, e, out._device)
    if out._backend.has_data:
        if not out._write_checked:
            check_writable(op, arg, out)
            check_no_internal_overlap(op, arg, out)
            out._write_checked = True
        if check_overlap(op, arg, out, inputs, out_may_be_input):
            return temporary(op, out)
    return arr


def finish_out(op: str, out: Tensor, array: Any) -> None:
    """After the impl wrote ``array`` instead of ``out``'s own: a temporary of ``out``'s shape (``out`` was an
    input of an op that cannot write over its input) is copied into ``out``; an array of another shape is the
    resized result, given to ``out`` by :func:`swap_storage`. The caller bumps the version."""
    if array.shape == out._shape:
        copy_back(out, array)
    else:
        swap_storage(op, out, array)


def copy_back(target: Tensor, array: Any) -> None:
    """Copy the temporary ``array`` (same shape and dtype) into ``target``'s memory, on its device."""
    backend = target._backend
    if not backend.has_data:
        return
    guard = backend.guard(target._device)
    if guard is None:
        target._array[...] = array
    else:
        with guard:
            target._array[...] = array


def complete_after_condition(
    target: Tensor, array: Any, inputs: Sequence[Any], handler: Any, const_out: Any, /, *args: Any, **kwargs: Any
) -> None:
    """The rule for a floating-point condition (divide by zero, invalid, overflow: a property of the values,
    not bad input) that a warnings filter or ``np.errstate(...='raise')`` turned into an error while the impl
    wrote ``array`` for ``target`` (out, or an inplace self): the result is written and the version bumped, then
    the error propagates (the front re-raises it), as NumPy's ufuncs do. A kernel may have stopped between two
    steps; when none of its inputs is the memory it writes (a fresh temporary, or an out no input shares), it is
    run again to the end with the conditions silenced (its inputs are unchanged, so the values are the same).
    When the written memory is also an input the kernel cannot be re-run: it must itself write completely before
    reporting (one ufunc call does; several steps run under ``kernels.ufunc_family.deferred_conditions``).
    Called only on that exception path: nothing of this is on the path of a call that succeeds."""
    if array is not target._array and array.shape != target._shape:
        return  # the resized result of an out: out keeps its memory and version (its data did not move)
    if array is not target._array or not any(
        x._storage.root is target._storage.root and target._backend.shares_memory(x._array, array)
        for x in flat_tensors(inputs)
    ):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            handler(*args, out=const_out, **kwargs)
    written_then_raised(target, array)


def written_then_raised(target: Tensor, array: Any) -> None:
    """The impl wrote ``array`` completely and then a floating-point condition surfaced as an error (a warning
    made an error, ``np.errstate(...='raise')``): the result counts as written, as NumPy's does. ``target``'s
    own memory or a temporary for it (copied in) moves its version; a resized result is dropped, so ``out``
    keeps its memory and its version (the version moves if and only if the data moved)."""
    if array is target._array:
        target._storage.version += 1
    elif array.shape == target._shape:
        copy_back(target, array)
        target._storage.version += 1


def caller_level() -> int:
    """The ``stacklevel`` that attributes a warning issued by the caller of this function to the first frame
    outside devtensor (its package, and the fronts and plan replays it compiles at run time): the user's line
    (``warnings.warn``'s ``skip_file_prefixes`` is Python 3.12+, so the level is counted)."""
    frame = sys._getframe(2)
    level = 2
    # (a plan's replay runs in code located in the step's file, its namespace marked: devtensor.plan.replay)
    while frame is not None and (
        frame.f_code.co_filename.startswith(_OWN_FILES) or "__plan_replay__" in frame.f_globals
    ):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


#: The files of devtensor's own frames (see :func:`caller_level`).
_OWN_FILES: Final = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep, "<devtensor.", "<plan ")


def swap_storage(op: str, out: Tensor, array: Any) -> None:
    """Give ``out`` the resized ``array`` (after the impl succeeded): a new storage that carries the old version
    forward. Resizing an out that had elements warns first (PyTorch's deprecation), so a warning turned into an
    error leaves ``out`` as it was."""
    if out._array.size:
        warnings.warn(
            f"{op}: an output with one or more elements was resized since it had shape {list(out._shape)}, "
            f"which does not match the required output shape {list(array.shape)}. Resizing a non-empty out is "
            "deprecated (as in PyTorch): pass an out with no elements or of the right shape.",
            UserWarning,
            stacklevel=caller_level(),
        )
    out._storage = Storage(array, out._storage.version)
    out._array = array
    out._shape = array.shape
    out._dtype = array.dtype
    out._write_checked = True


# --- checks of bool and Literal arguments -----------------------------------------------------------------------

#: A bool or Literal parameter's check: (name, optional, allowed values; None for a bool).
ValueCheck: typing.TypeAlias = tuple[str, bool, tuple[Any, ...] | None]
_CHOICES: dict[str, tuple[Any, ...] | bool | None] = {}


def _choices(annotation: str) -> tuple[Any, ...] | bool | None:
    """What a parameter's annotation text (as schemas keep it: ``bool``, ``Literal['a', 'b'] | None``) allows:
    None for a bool, the values for a Literal, False for anything else (not checked here: the meta function does)."""
    found = _CHOICES.get(annotation)
    if found is not None or annotation in _CHOICES:
        return found
    text = annotation.removesuffix(" | None")
    result: tuple[Any, ...] | bool | None = False
    if text == "bool":
        result = None
    elif text.startswith("Literal[") and text.endswith("]") and "|" not in text:
        try:
            values = ast.literal_eval("(" + text[len("Literal[") : -1] + ",)")
        except (ValueError, SyntaxError):
            values = None
        if isinstance(values, tuple) and values:
            result = values
    _CHOICES[annotation] = result
    return result


def value_checks(params: Sequence[Any]) -> tuple[ValueCheck, ...]:
    """The checks :func:`check_values` makes for an op's schema parameters: one per ``bool`` or ``Literal[...]``
    parameter (optionally ``| None``); computed once per op, so a call only walks these."""
    checks: list[ValueCheck] = []
    for p in params:
        choices = _choices(p.annotation)
        if choices is not False:
            checks.append((p.name, p.optional, typing.cast(tuple[Any, ...] | None, choices)))
    return tuple(checks)


def check_values(op: str, checks: tuple[ValueCheck, ...], values: typing.MutableMapping[str, Any]) -> tuple[Any, ...]:
    """Check the bool and Literal arguments of a call to ``op`` against their annotations (``checks`` from
    :func:`value_checks`; ``values``: the bound arguments by name). A NumPy bool given for a bool parameter is
    taken as the Python bool (NumPy and PyTorch accept ``np.True_`` where a bool is expected): it is replaced in
    ``values``. Returns the checked values in the order of ``checks`` (each front rebinds its parameters to
    them; every name of ``checks`` must then be in ``values``).

    Raises:
        ArgumentTypeError (TypeError): a bool parameter given anything but a bool or a NumPy bool (ints
            included, as PyTorch refuses them); a Literal parameter given a value of a type none of its values
            has (a wrong type is a TypeError, whatever the parameter).
        ArgumentValueError (ValueError): a Literal parameter given a value of the right type that is not one of
            its values. Each names the op, the argument and the value.
    """
    for name, optional, allowed in checks:
        if name not in values:
            continue
        v = values[name]
        if v is None and optional:
            continue
        if allowed is None:
            if type(v) is not bool:
                if type(v) is not np.bool_:
                    bad_type(op, name, v, "a bool")
                values[name] = bool(v)
            continue
        if any(type(v) is type(a) and v == a for a in allowed):
            continue
        expected = "one of " + ", ".join(repr(a) for a in allowed) + (" or None" if optional else "")
        if any(type(v) is type(a) for a in allowed):
            raise ArgumentValueError(f"{op}: argument '{name}' must be {expected}, got {short_repr(v)}")
        bad_type(op, name, v, expected)
    return tuple(values.get(name) for name, _, _ in checks)


#: One inline test of :func:`value_tests`: (name, optional, the Literal's value type or None for a bool, values).
ValueTest: typing.TypeAlias = tuple[str, bool, type | None, tuple[Any, ...] | None]


def value_tests(params: Sequence[Any]) -> tuple[ValueTest, ...]:
    """The quick tests a front makes of its ``bool`` and ``Literal[...]`` arguments before the meta function (a bool:
    two identity tests; a Literal of one value type: a type test and a membership test; a Literal of mixed types is
    left to its meta function); only when one fails does the front call :func:`check_values` (every check of
    :func:`value_checks`), which raises the precise error or returns the values to rebind (a NumPy bool as the
    Python bool). Empty for an op without such parameters."""
    tests: list[ValueTest] = []
    for name, optional, allowed in value_checks(params):
        if allowed is None:
            tests.append((name, optional, None, None))
            continue
        kinds = {type(a) for a in allowed}
        if len(kinds) == 1:
            tests.append((name, optional, kinds.pop(), allowed))
    return tuple(tests)
