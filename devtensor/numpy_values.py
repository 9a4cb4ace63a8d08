"""NumPy values as op arguments: the slow path of the fronts for arguments that are neither tensors nor Python
numbers (subclasses of Python numbers, such as a tensor's ``size``, are taken here as the plain number).

A front tests its tensor arguments with one ``isinstance`` and its numbers with one ``type(x) in`` set lookup;
anything else lands here (:func:`coerce_call`), once per call and never on the path of a call with tensors and
Python numbers only. The rules (NumPy's NEP 50 and CuPy's device rule):

- **NumPy scalars** (``np.float32(2)``, ``np.int64(1)``, ``np.bool_(True)``) where an op takes a tensor are
  strongly typed values, as NumPy 2 treats them: they become 0-d tensors of their own dtype on the device of the
  call, so ``float32 tensor * np.float64(2)`` is float64 and ``int8 tensor + np.int64(1)`` is int64. Note that
  ``np.float64`` is a subclass of ``float`` and ``np.bool_`` is not a ``bool``: the fronts test exact types, so
  no NumPy scalar is taken for a weak Python number.
- **NumPy scalars where a value takes no part in promotion** (``alpha``, fill values, ``__setitem__`` values) are
  converted to the Python value (``.item()``) and must fit as a Python number would.
- **NumPy arrays** (any ``numpy.ndarray``, 0-d included; masked arrays and ``np.matrix`` are refused, their mask or
  matrix semantics would be dropped) where an op takes a tensor are wrapped without a copy as
  CPU tensors over the caller's memory (never resized as an ``out``). An array that shares memory with a tensor
  argument of the call becomes a view of that tensor's storage, so the overlap checks and the version counter see
  one memory (``add(t, t.numpy()[::-1], out=t)`` is a partial overlap). Against tensors on another device (CUDA,
  meta) they raise DeviceMismatchError naming both devices: there is no implicit transfer, as in CuPy.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from devtensor.device import Device, as_device
from devtensor.dtypes import NUMPY_SCALARS, SCALAR_TYPES, plain_number, python_scalar, result_type, to_dtype
from devtensor.errors import ArgumentTypeError, DeviceMismatchError, ScalarOverflowError
from devtensor.meta import check_int_scalar
from devtensor.storage import Storage
from devtensor.structured.annotations import SCALAR, TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR
from devtensor.tensor import Tensor

if typing.TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp

__all__ = [
    "binary_call",
    "coerce_call",
    "refused_number",
    "is_numpy_value",
    "python_scalar",
    "setitem_value",
    "tensor_operand",
]


def is_numpy_value(value: object) -> bool:
    """Whether ``value`` is a NumPy array or a NumPy number (a bool, integer, floating or complex scalar)."""
    return isinstance(value, (np.ndarray, *NUMPY_SCALARS))


def tensor_operand(op: str, arg: str, value: object, device: Device | None, tensors: Sequence[Tensor]) -> Any:
    """``value`` as a tensor operand of a call on ``device`` (None: the call has no tensor, so the CPU, where a
    NumPy value lives): a NumPy scalar as a 0-d tensor of its dtype on ``device``, a NumPy array wrapped without a
    copy (a view of the storage of whichever of ``tensors`` it shares memory with). Anything else is returned as
    it is.

    Raises:
        ArgumentTypeError: a NumPy value of a dtype devtensor does not support (strings, datetimes, objects...).
        DeviceMismatchError: a NumPy array where the call's tensors are on a device other than the CPU.
    """
    if isinstance(value, np.ndarray):
        if isinstance(value, (np.ma.MaskedArray, np.matrix)):
            # Their meaning (a mask, matrix semantics) would be dropped silently by a plain tensor operand.
            raise ArgumentTypeError(
                f"{op}: argument '{arg}' is a {type(value).__name__}, whose {_MEANING[type(value) is np.matrix]} "
                "a tensor cannot keep; convert it explicitly (np.asarray(x), or x.filled(...) for a masked array)"
            )
        cpu, backend = _cpu()
        if device is not None and device is not cpu:
            raise DeviceMismatchError(
                f"{op}: argument '{arg}' is a NumPy array (on cpu) but the call's tensors are on {device}; there is "
                f"no implicit transfer (as in CuPy): convert it with devtensor.asarray(..., device='{device}')"
            )
        to_dtype(value.dtype, op=op, arg=arg)
        root = backend.storage_root(value)
        for t in tensors:
            if t._device is cpu and t._storage.root is root:
                # The caller's array over a tensor's memory: one storage, so overlaps and versions are seen.
                return backend.wrap_view(value, t)
        return backend.wrap(value, cpu, owned=False)
    if isinstance(value, NUMPY_SCALARS):
        dtype = to_dtype(value.dtype, op=op, arg=arg)
        cpu, cpu_backend = _cpu()
        target = device if device is not None else cpu
        data = np.array(value)
        if target is cpu:
            return cpu_backend.wrap(data, target)
        from devtensor.backends import backend_for  # (backends imports the tensor classes)

        backend = backend_for(target)
        guard = target._guard
        if guard is None:
            return backend.wrap(backend.from_other(cpu_backend, data, target, dtype), target)
        with guard():
            return backend.wrap(backend.from_other(cpu_backend, data, target, dtype), target)
    return value


_CPU: list[Any] = []
_MEANING: typing.Final = {False: "mask", True: "matrix semantics"}


def _cpu() -> tuple[Device, Any]:
    """The CPU device and its backend, looked up once (and so kept interned)."""
    if not _CPU:
        from devtensor.backends import backend_for  # (backends imports the tensor classes)

        cpu = as_device("cpu")
        _CPU.extend((cpu, backend_for(cpu)))
    return _CPU[0], _CPU[1]


_EXPECTED: typing.Final = {
    TENSOR: "a Tensor",
    TENSOR_OR_SCALAR: "a Tensor or a Python number",
    SCALAR: "a Python number",
    TENSOR_LIST: "a list or tuple of Tensors",
}


def setitem_value(value: np.ndarray[Any, Any] | np.generic, target: Tensor) -> Any:
    """A NumPy value written by ``target[index] = value``: a NumPy scalar as its Python value (written values take
    no part in promotion), a NumPy array as a tensor over its memory (:func:`tensor_operand`, so an array over
    ``target``'s own memory is a view of its storage).

    Raises:
        ArgumentTypeError: a NumPy scalar that is no number, or an array of an unsupported dtype.
        DeviceMismatchError: a NumPy array written into a tensor that is not on the CPU.
    """
    if isinstance(value, np.ndarray):
        return tensor_operand("__setitem__", "value", value, target._device, (target,))
    return python_scalar("__setitem__", "value", value)


def _call_device(values: dict[str, Any]) -> tuple[Device | None, list[Tensor]]:
    """The device of the call (its first tensor's, in parameter order) and every tensor argument."""
    tensors: list[Tensor] = []
    for value in values.values():
        if isinstance(value, Tensor):
            tensors.append(value)
        elif isinstance(value, (list, tuple)):
            tensors.extend(v for v in value if isinstance(v, Tensor))
    return (tensors[0]._device if tensors else None), tensors


#: Per op schema: its positional parameter names, the category of each parameter (``out`` a tensor), and the
#: position of each positional tensor operand.
_SHAPES: dict[Any, tuple[tuple[str, ...], dict[str, str], dict[str, int]]] = {}


def coerce_call(
    op: StructuredOp,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    arg: str,
    cls: type[Tensor] | None = None,
) -> Any:
    """Call the front ``fn`` (the variant being called, without the dispatch-mode hook) again with the NumPy
    values among ``args``/``kwargs`` converted (see the module docstring); ``arg`` is the parameter the front
    rejected, ``cls`` the refined class of a device binding (``devtensor.cpu.add``). When there is nothing to
    convert, the error the front would have raised for ``arg`` is raised.

    Raises:
        ArgumentTypeError: ``arg`` is of no accepted type (the front's own message), or a NumPy value of an
            unsupported dtype.
        DeviceMismatchError: a NumPy array where the call's tensors are on another device.
    """
    shape = _SHAPES.get(op.schema)
    if shape is None:
        positional_names = tuple(p.name for p in op.schema.params if not p.kw_only)
        categories = {p.name: p.category for p in op.schema.params}
        categories["out"] = TENSOR
        operands = {n: i for i, n in enumerate(positional_names) if categories[n] in (TENSOR, TENSOR_OR_SCALAR)}
        shape = _SHAPES[op.schema] = (positional_names, categories, operands)
    positional, category, operand_index = shape
    index = operand_index.get(arg)
    if index is not None and cls is None and index < len(args):
        new_args = _one_cpu_operand(op, fn, args, kwargs, index, positional[index])
        if new_args is not None:
            return fn(*new_args, **kwargs)
    name = _front_name(op, fn)
    values: dict[str, Any] = dict(zip(positional, args, strict=False))
    values.update(kwargs)
    device, tensors = _call_device(values)
    changed = False
    new: Any
    for key, value in values.items():
        kind = category.get(key)
        if kind in (TENSOR, TENSOR_OR_SCALAR):
            if not isinstance(value, (np.ndarray, np.generic)):
                # A subclass of a Python number (a tensor's size) is that number, where an op takes numbers.
                number = plain_number(value) if kind == TENSOR_OR_SCALAR else None
                if number is None:
                    continue
                new = number
            else:
                new = tensor_operand(name, key, value, device, tensors)
        elif kind == TENSOR_LIST and isinstance(value, (list, tuple)):
            items = [tensor_operand(name, f"{key}[{i}]", v, device, tensors) for i, v in enumerate(value)]
            new = items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        elif kind == SCALAR and isinstance(value, NUMPY_SCALARS):
            new = value.item()
        elif kind == SCALAR and (number := plain_number(value)) is not None:
            new = number
        else:
            continue
        if new is not value:
            values[key] = new
            changed = True
    if not changed:
        from devtensor.structured import rules

        value = values.get(arg)
        kind = category.get(arg)
        if cls is not None and kind != SCALAR:
            rules.not_refined(name, arg, value, cls)
        rules.bad_type(name, arg, value, _EXPECTED.get(kind or TENSOR, "a Tensor"))
    new_args = [values[n] for n in positional[: len(args)]]
    new_kwargs = {k: values[k] for k in kwargs}
    return fn(*new_args, **new_kwargs)


def _one_cpu_operand(
    op: StructuredOp, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], index: int, arg: str
) -> list[Any] | None:
    """The common case of :func:`coerce_call`, in fewer steps: ``args[index]`` (the tensor operand ``arg``) a NumPy
    scalar of a supported dtype or a NumPy array, every other argument a tensor, a Python number or None, and the
    call's first tensor (if any) on the CPU. Returns the positional arguments with that one converted as
    :func:`tensor_operand` converts it (the same values), or None for anything else (the general path decides)."""
    value = args[index]
    kind = type(value)
    if kind is not np.ndarray and not _SUPPORTED_SCALAR_TYPES.get(kind, False):
        if kind in _SUPPORTED_SCALAR_TYPES or not isinstance(value, NUMPY_SCALARS):
            return None
        try:
            to_dtype(value.dtype)
        except (TypeError, ValueError):
            _SUPPORTED_SCALAR_TYPES[kind] = False
            return None
        _SUPPORTED_SCALAR_TYPES[kind] = True
    tensors: list[Tensor] = []
    for i, other in enumerate(args):
        if isinstance(other, Tensor):
            tensors.append(other)
        elif i != index and other is not None and type(other) not in SCALAR_TYPES:
            return None
    for other in kwargs.values():
        if isinstance(other, Tensor):
            tensors.append(other)
        elif other is not None and type(other) not in SCALAR_TYPES:
            return None
    cpu, backend = _cpu()
    if tensors and tensors[0]._device is not cpu:
        return None  # (another device: a scalar is copied there, an array refused, by the general path)
    new_args = list(args)
    if kind is np.ndarray:
        new_args[index] = tensor_operand(_front_name(op, fn), arg, value, cpu, tensors)
    else:
        # (backend.wrap inline: a fresh 0-d array is its own storage root, and devtensor owns it)
        data = np.array(value)
        t = new_args[index] = _new(backend.tensor_class)
        t._array, t._device, t._storage, t._shape, t._dtype = data, cpu, Storage(data), data.shape, data.dtype
        t._write_checked = False
    return new_args


#: NumPy scalar types seen by :func:`_one_cpu_operand`: whether devtensor supports their dtype.
_SUPPORTED_SCALAR_TYPES: dict[type, bool] = {}
_new = object.__new__


def _front_name(op: StructuredOp, fn: Callable[..., Any]) -> str:
    """The op name errors give for the front ``fn``: ``add`` or ``add_`` (inplace)."""
    return op.name + "_" if getattr(fn, "__name__", "").endswith(op.name + "_") else op.name


# PyTorch's schemas take no Python number as either operand of these ops, and none as ``self`` of the comparisons,
# ``fmod`` and ``copysign`` (devtensor.meta.binary_ufunc_meta's ``numbers``); NumPy and the Array API take one.
_TENSORS_ONLY: typing.Final = frozenset(
    ("maximum", "minimum", "atan2", "hypot", "nextafter", "logaddexp", "logical_and", "logical_or", "logical_xor")
)
_SELF_TENSOR: typing.Final = frozenset(("fmod", "copysign"))
_INT64: typing.Final = to_dtype("int64")
_BOOL: typing.Final = to_dtype("bool")
_MIRRORED: typing.Final = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def refused_number(op: str, x1: Any, x2: Any) -> str | None:
    """The argument (``"self"`` or ``"other"``) of the binary op ``op`` that is a Python number where PyTorch's
    schema takes a tensor only (``maximum(t, 0)``, ``gt(0, t)``), or None."""
    if type(x1) in SCALAR_TYPES and (op in _TENSORS_ONLY or op in _SELF_TENSOR or op in _MIRRORED):
        return "self"
    if type(x2) in SCALAR_TYPES and op in _TENSORS_ONLY:
        return "other"
    return None


def binary_call(op: str, x1: Any, x2: Any, **kwargs: Any) -> Tensor:
    """The op ``op`` of devtensor's namespace on ``(x1, x2)`` with NumPy's and the Array API's freedom of a Python
    number on either side, for the entries of those (NEP 13 ufuncs, ``devtensor.array_api``): a comparison whose
    first operand is the number runs mirrored (``2 < t`` as ``gt(t, 2)``: exact, NumPy 2 compares an
    out-of-range int exactly too); for an op whose schema refuses the number there (:func:`refused_number`), the
    number becomes a 0-d tensor of the promoted dtype (NEP 50, the number weak) on the tensor's device, so the
    result dtype is the one a weak number gives (for the logical ops, its truth as a bool). Other calls go to the
    op as they are.

    Raises:
        Any error of the op; ScalarOverflowError naming the op: an int that does not fit the promoted dtype (as
            NumPy 2; int64 for the logical ops).
    """
    import devtensor

    refused = refused_number(op, x1, x2)
    tensor = x2 if refused == "self" else x1
    if refused is None or not isinstance(tensor, Tensor):
        return typing.cast(Tensor, getattr(devtensor, op)(x1, x2, **kwargs))
    if refused == "self" and op in _MIRRORED:
        mirrored = _MIRRORED[op]
        try:
            return typing.cast(Tensor, getattr(devtensor, mirrored)(x2, x1, **kwargs))
        except ScalarOverflowError as error:  # (named as the caller wrote the call)
            text = str(error).replace(f"{mirrored}: ", f"{op}: ", 1).replace("argument 'other'", "argument 'self'")
            raise ScalarOverflowError(text) from None
    number = x1 if refused == "self" else x2
    # (only the truth counts for the logical ops; NumPy takes an int there that fits its default integer)
    dtype = _BOOL if op.startswith("logical_") else result_type(tensor.dtype, type(number))
    if type(number) is int:
        check_int_scalar(op, refused, number, _INT64 if dtype is _BOOL else dtype)
    if dtype is _BOOL:
        number = bool(number)
    zero_d = devtensor.full((), number, dtype=dtype, device=tensor.device)
    return typing.cast(Tensor, getattr(devtensor, op)(*((zero_d, x2) if refused == "self" else (x1, zero_d)), **kwargs))
