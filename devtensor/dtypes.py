"""Dtypes: NumPy's dtype objects, re-exported, and NumPy 2's promotion with weak Python scalars (NEP 50).

The supported dtypes are bool, int8..int64, uint8..uint64, float16, float32, float64, complex64 and complex128.
Every function here answers from a cache: the first call for a combination asks NumPy, later ones are one dict
lookup. Each cache is bounded (:data:`CACHE_LIMIT` entries; beyond it, answers are computed and not kept), and
holds only dtypes, types and strings: never a user's object.
"""

from __future__ import annotations

import contextlib
from typing import Any, Final, TypeAlias

import numpy as np

from devtensor.errors import ArgumentTypeError, ArgumentValueError, CastingError, short_repr

__all__ = [
    "NUMPY_SCALARS",
    "SCALAR_TYPES",
    "DType",
    "DTypeLike",
    "DTypeSpelling",
    "NDArrayLike",
    "NumberLike",
    "Scalar",
    "as_bool",
    "bool_",
    "can_cast",
    "check_choice",
    "plain_number",
    "python_scalar",
    "complex64",
    "complex128",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "result_type",
    "to_dtype",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

DType: TypeAlias = np.dtype[Any]
#: What ``dtype=`` takes in annotations: a dtype, a NumPy scalar type (``np.float32``) or a dtype name
#: (``"float32"``). At run time Python's ``bool``/``int``/``float``/``complex`` are accepted too (see to_dtype).
DTypeLike: TypeAlias = np.dtype[Any] | type[np.generic] | str
#: A Python number: the only scalars ops accept. Python scalars are weak in promotion (NEP 50).
Scalar: TypeAlias = bool | int | float | complex
#: Every spelling of a dtype the ops' front ends accept (typed declarations of the variants, methods and
#: ``Tensor.to``): DTypeLike and Python's ``bool``/``int``/``float``/``complex`` (see to_dtype). Meta functions and
#: kernels keep DTypeLike.
DTypeSpelling: TypeAlias = DTypeLike | type[bool] | type[int] | type[float] | type[complex]
#: The numbers the front ends accept beside tensors: Python numbers and NumPy's number and bool scalars
#: (``np.float32(2)``; a NumPy scalar is strong in promotion, as in NumPy). Not ``np.str_`` and the like.
NumberLike: TypeAlias = Scalar | np.number[Any] | np.bool_
#: NumPy arrays, which the front ends accept wherever they take a tensor (as CPU tensors over the same memory).
NDArrayLike: TypeAlias = np.ndarray[Any, Any]
#: The exact Python scalar types; the front checks ``type(x) in SCALAR_TYPES``.
SCALAR_TYPES: Final = frozenset({bool, int, float, complex})

bool_: Final[DType] = np.dtype(np.bool_)
int8: Final[DType] = np.dtype(np.int8)
int16: Final[DType] = np.dtype(np.int16)
int32: Final[DType] = np.dtype(np.int32)
int64: Final[DType] = np.dtype(np.int64)
uint8: Final[DType] = np.dtype(np.uint8)
uint16: Final[DType] = np.dtype(np.uint16)
uint32: Final[DType] = np.dtype(np.uint32)
uint64: Final[DType] = np.dtype(np.uint64)
float16: Final[DType] = np.dtype(np.float16)
float32: Final[DType] = np.dtype(np.float32)
float64: Final[DType] = np.dtype(np.float64)
complex64: Final[DType] = np.dtype(np.complex64)
complex128: Final[DType] = np.dtype(np.complex128)

SUPPORTED: Final[frozenset[DType]] = frozenset(
    {bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64}
    | {float16, float32, float64, complex64, complex128}
)

#: The most entries each cache of this module keeps.
CACHE_LIMIT: Final = 1024
_to_dtype_cache: dict[object, DType] = {}
_PYTHON_TYPES: Final = frozenset({bool, int, float, complex})
# The canonical object of each supported dtype: an equal dtype (one carrying metadata, say) maps to it.
_CANONICAL: Final[dict[DType, DType]] = {d: d for d in SUPPORTED}


def to_dtype(spec: object, *, op: str = "dtype", arg: str = "dtype") -> DType:
    """The supported dtype named by ``spec``, as the canonical object (``to_dtype("float32") is
    devtensor.float32``). ``spec`` is a devtensor or NumPy dtype object, a NumPy scalar type (``np.float32``),
    Python's ``bool``, ``int``, ``float`` or ``complex`` (NumPy's defaults: bool, int64, float64, complex128, as
    ``numpy.dtype`` says), or a NumPy dtype string (``"float32"``, ``"f4"``, ``"<f4"``). Nothing else: unlike
    ``numpy.dtype``, not an object with a ``.dtype`` attribute (a tensor, an array), whose dtype would be read
    and which a cache would keep alive.

    Raises:
        ArgumentTypeError (a TypeError): ``spec`` is none of the above, names no dtype, or names one devtensor
            does not support (strings, objects, datetimes, non-native byte order); the message names ``op`` and
            ``arg``.
    """
    if isinstance(spec, (np.dtype, str, type)):
        try:
            return _to_dtype_cache[spec]
        except KeyError:
            pass
    return _new_dtype(spec, op, arg)


def _new_dtype(spec: object, op: str, arg: str) -> DType:
    """:func:`to_dtype` for a spec not in the cache: checked, converted, cached while the cache has room."""
    accepted = isinstance(spec, (np.dtype, str)) or (
        isinstance(spec, type) and (spec in _PYTHON_TYPES or issubclass(spec, np.generic))
    )
    dt: DType | None = None
    if accepted:
        try:
            dt = np.dtype(spec)  # type: ignore[call-overload]  # spec is checked right above
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, SyntaxError):
            dt = None
    canonical = _CANONICAL.get(dt) if dt is not None and dt.isnative else None
    if canonical is None:
        names = ", ".join(sorted(d.name for d in SUPPORTED))
        hint = ""
        if not accepted and not isinstance(spec, type) and hasattr(spec, "dtype"):
            hint = f" (to use the dtype of a {type(spec).__name__}, pass its .dtype)"
        elif dt is not None and not dt.isnative and _CANONICAL.get(dt.newbyteorder("=")) is not None:
            hint = (
                f" (a non-native byte order: devtensor holds native-order data; convert the array first with "
                f".astype({dt.newbyteorder('=').name!r}))"
            )
        raise ArgumentTypeError(
            f"{op}: argument '{arg}' must be a supported dtype ({names}): a dtype object, a NumPy scalar type, "
            f"bool/int/float/complex or a dtype name; got {type(spec).__name__} {short_repr(spec, 80)}{hint}"
        )
    if len(_to_dtype_cache) < CACHE_LIMIT:
        _to_dtype_cache[spec] = canonical
    return canonical


# Weak Python scalars take part in promotion as their Python type; NumPy's resolve/result_type needs a value of
# that type, any value.
_WEAK_PROXY: Final[dict[type, object]] = {bool: False, int: 0, float: 0.0, complex: 0j}
_result_cache: dict[tuple[object, ...], DType] = {}


def result_type(*operands: DType | type) -> DType:
    """The promoted dtype of tensor dtypes and weak Python scalar types (``bool``, ``int``, ``float``,
    ``complex``); NumPy scalar types (``numpy.float32``) count as their (strong) dtype.

    Follows NumPy 2's ``result_type`` under NEP 50: ``result_type(float32, float)`` is float32 and
    ``result_type(int8, int)`` is int8; Python scalars alone give NumPy's defaults (``result_type(int)`` is
    int64). Cached per combination.

    Raises:
        ArgumentTypeError (a TypeError): no operands, or an operand that is neither a supported dtype nor a
            Python scalar type.
        TypeError: NumPy finds no common dtype.
    """
    try:
        return _result_cache[operands]
    except (KeyError, TypeError):
        pass
    if not operands:
        raise ArgumentTypeError("result_type: at least one dtype or Python scalar type is needed")
    args: list[Any] = [
        _WEAK_PROXY[o] if type(o) is type and o in _WEAK_PROXY else to_dtype(o, op="result_type", arg="operands")
        for o in operands
    ]
    dt = _CANONICAL[np.result_type(*args)]
    if len(_result_cache) < CACHE_LIMIT:
        with contextlib.suppress(TypeError):
            _result_cache[operands] = dt
    return dt


_cast_cache: dict[tuple[DType, DType], bool] = {}


def can_cast(from_: DType, to: DType) -> bool:
    """Whether ``from_`` casts to ``to`` under NumPy's ``same_kind`` rule, the rule docs/design.md sets for results
    written to ``out`` and inplace ``self``: bool casts to anything; within a kind, and from a lower kind to a
    higher one (bool < unsigned < signed < float < complex), widening and narrowing are fine; no complex -> real,
    no float -> integer, no integer -> bool, and, unlike PyTorch, no signed -> unsigned integer."""
    key = (from_, to)
    try:
        return _cast_cache[key]
    except KeyError:
        ok = bool(np.can_cast(from_, to, casting="same_kind"))
        if len(_cast_cache) < CACHE_LIMIT:
            _cast_cache[key] = ok
        return ok


def check_cast(op: str, arg: str, result: DType, target: DType) -> None:
    """Raise :class:`CastingError` naming ``op`` and ``arg`` when ``result`` cannot be cast to ``target``."""
    if result is not target and not can_cast(result, target):
        raise CastingError(
            f"{op}: result type {result.name} can't be cast to the desired output type {target.name} "
            f"of argument '{arg}' (same_kind casting)"
        )


#: The NumPy scalar types that stand for numbers (bool, integer, floating, complex).
NUMPY_SCALARS: Final = (np.bool_, np.integer, np.floating, np.complexfloating)


def as_bool(op: str, arg: str, value: object, *, optional: bool = False) -> Any:
    """``value`` checked as a bool argument of ``op``: a Python bool as it is, a NumPy bool as the Python bool
    (NumPy and PyTorch accept ``np.True_`` where a bool is expected); None too when ``optional``.

    Raises:
        ArgumentTypeError (TypeError): anything else (ints included, as PyTorch refuses them), naming the op,
            the argument and the value.
    """
    if value is True or value is False or (value is None and optional):
        return value
    if type(value) is np.bool_:
        return bool(value)
    expected = "None or a bool" if optional else "a bool"
    raise ArgumentTypeError(
        f"{op}: argument '{arg}' must be {expected}, got {type(value).__name__} {short_repr(value)}"
    )


def check_choice(op: str, arg: str, value: object, allowed: tuple[Any, ...], *, optional: bool = False) -> None:
    """Check ``value`` as a Literal argument of ``op`` (one of ``allowed``; None too when ``optional``). A value
    of a type none of ``allowed`` has is a wrong type, a TypeError (as the fronts' check of Literal
    annotations); of the right type but not among them, a ValueError.

    Raises:
        ArgumentTypeError (TypeError): ``value`` of a type none of ``allowed`` has (a bool where only ints are
            allowed counts as one), naming the op, the argument and the value.
        ArgumentValueError (ValueError): ``value`` of the right type but not one of ``allowed``.
    """
    if value is None and optional:
        return
    kinds = tuple({type(a) for a in allowed})
    right_type = isinstance(value, kinds) and (type(value) is not bool or bool in kinds)
    if right_type and value in allowed:
        return
    names = [repr(a) for a in allowed] + (["None"] if optional else [])
    expected = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
    if right_type:
        raise ArgumentValueError(f"{op}: argument '{arg}' must be {expected}, got {short_repr(value)}")
    raise ArgumentTypeError(
        f"{op}: argument '{arg}' must be {expected}, got {type(value).__name__} {short_repr(value)}"
    )


def plain_number(value: object) -> int | float | complex | None:
    """The plain Python number of an instance of a subclass of ``int``, ``float`` or ``complex`` that is not a
    NumPy scalar (a tensor's ``size``, an ``IntEnum`` member): ``int(value)``, ``float(value)`` or
    ``complex(value)``, as PyTorch and NumPy take such values for the number they are; None for anything else
    (exact Python numbers included: the fronts take those before asking).
    """
    if isinstance(value, np.generic) or type(value) in SCALAR_TYPES:
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, complex):
        return complex(value)
    return None


def python_scalar(op: str, arg: str, value: object) -> bool | int | float | complex:
    """The Python number a NumPy scalar stands for, where a value takes no part in promotion (``alpha``, a fill
    value, a written value); Python numbers are returned as they are, subclasses of them (a tensor's ``size``)
    as the plain number (:func:`plain_number`).

    Raises:
        ArgumentTypeError: ``value`` is neither a Python number nor a NumPy bool, integer, floating or complex
            scalar.
    """
    if type(value) in SCALAR_TYPES:
        return value  # type: ignore[return-value]
    if isinstance(value, NUMPY_SCALARS):
        return value.item()
    number = plain_number(value)
    if number is not None:
        return number
    raise ArgumentTypeError(
        f"{op}: argument '{arg}' must be a Python number or a NumPy scalar, got {type(value).__name__} "
        f"{short_repr(value)}"
    )
