"""The op sample registry: sample calls for every built-in op, driving the generic checks of
``tests/test_op_generic.py``.

Every op devtensor defines (each op in ``devtensor.structured.all_ops()`` whose ``module`` starts with
``"devtensor"``, and each view op in ``devtensor.views.all_view_ops()``) has an ``OpSamples`` entry in ``OPS``.
A new op adds one entry here (``test_every_builtin_op_has_samples`` fails until it does) and so gets every generic
check: functional vs out vs inplace, the out rules, atomicity of a refused call, meta vs CPU, the CUDA stand-in
vs CPU, and the version counters.

A sample's arguments are NumPy arrays (each becomes a fresh tensor on the device under test), ``Strided``
arrays (a non-contiguous tensor: every other element of a tensor twice as long in its last dim), lists of
those (tensor-list parameters) and plain Python values (passed as they are). Tags are derived from the arrays
(``0-d``, ``empty``, ``non-contiguous``, and the dtype classes ``bool``/``int``/``float``/``complex``), except
``broadcast``, which a sample sets when its tensor operands have shapes that broadcast against each other.

An entry declares the dtype classes the op accepts (``kinds``: a string of ``b``, ``i``, ``f``, ``c``; its
samples must cover each), whether it broadcasts, the coverage tags it genuinely cannot have (``lacks``: tag →
reason) and the generic checks it genuinely cannot take part in (``skip``: check → reason). Nothing is skipped
silently: ``tests/test_op_generic.py`` fails when a check applies to no sample of an op that does not skip it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

import devtensor as dt
from devtensor.numpy_values import refused_number
from devtensor.structured import all_data_dependent_ops, all_multi_ops, all_ops
from devtensor.views import all_view_ops

__all__ = [
    "CHECKS",
    "DTYPES",
    "OPS",
    "TAGS",
    "OpSamples",
    "Sample",
    "Strided",
    "builtin_ops",
    "required_tags",
]

Array = npt.NDArray[Any]

#: The generic checks of tests/test_op_generic.py, by the names ``OpSamples.skip`` uses.
CHECKS = ("reference", "out", "inplace", "out_dtype", "out_resize", "meta", "cuda", "versions")
#: The coverage tags a sample can carry.
TAGS = ("0-d", "empty", "broadcast", "non-contiguous", "bool", "int", "float", "complex")
_KIND_TAG = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}


@dataclass(frozen=True)
class Strided:
    """An operand made as a non-contiguous tensor holding ``array``'s values (every other element along the
    last dim of a tensor twice as long), on whatever device the check uses."""

    array: Array


@dataclass(frozen=True)
class Sample:
    """One call: ``op(*args, **kwargs)``; see the module docstring for what ``args`` may hold."""

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    broadcast: bool = False

    def arrays(self) -> list[Array]:
        """The values of every tensor operand, in order (tensor lists flattened)."""
        found: list[Array] = []

        def walk(a: Any) -> None:
            if isinstance(a, np.ndarray):
                found.append(a)
            elif isinstance(a, Strided):
                found.append(a.array)
            elif isinstance(a, list):
                for item in a:
                    walk(item)

        for a in (*self.args, *self.kwargs.values()):
            walk(a)
        return found

    @property
    def tags(self) -> frozenset[str]:
        """The coverage tags of this sample."""
        tags = {_KIND_TAG[a.dtype.kind] for a in self.arrays()}
        if any(a.ndim == 0 for a in self.arrays()):
            tags.add("0-d")
        if any(a.size == 0 for a in self.arrays()):
            tags.add("empty")
        if self.broadcast:
            tags.add("broadcast")

        def strided(a: Any) -> bool:
            return isinstance(a, Strided) or (isinstance(a, list) and any(strided(x) for x in a))

        if any(strided(a) for a in self.args):
            tags.add("non-contiguous")
        return frozenset(tags)

    @property
    def id(self) -> str:
        """A readable description: dtype and shape of each operand, the other arguments by value."""

        def show(a: Any) -> str:
            if isinstance(a, np.ndarray):
                return f"{a.dtype}{list(a.shape)}"
            if isinstance(a, Strided):
                return f"strided:{a.array.dtype}{list(a.array.shape)}"
            if isinstance(a, list):
                return "[" + ",".join(show(x) for x in a) + "]"
            return repr(a)

        text = ",".join(show(a) for a in self.args)
        text += "".join(f",{k}={show(v)}" for k, v in self.kwargs.items())
        return f"({text})"

    def make(self, device: str) -> tuple[list[Any], dict[str, Any]]:
        """Fresh arguments on ``device`` (``"cpu"``, ``"cuda"`` or ``"meta"``; meta tensors hold no data)."""

        def build(a: Any) -> Any:
            if isinstance(a, np.ndarray):
                if device == "meta":
                    return dt.empty(a.shape, dtype=a.dtype, device="meta")
                return dt.tensor(a, device=device)
            if isinstance(a, Strided):
                if device == "meta":
                    return dt.empty(a.array.shape, dtype=a.array.dtype, device="meta")
                doubled = dt.tensor(np.repeat(a.array, 2, axis=-1), device=device)
                view = doubled[..., ::2]
                assert not view.is_contiguous()
                return view
            if isinstance(a, list):
                return [build(x) for x in a]
            return a

        return [build(a) for a in self.args], {k: build(v) for k, v in self.kwargs.items()}


@dataclass(frozen=True)
class OpSamples:
    """The registry entry of one op: its samples and what the generic checks need to know about it.

    ``reference``: an optional NumPy function computing the expected values from the sample's arrays (with the
    same arguments and keyword arguments); ``kinds``: the dtype classes the op accepts; ``broadcasts``: whether
    its tensor operands broadcast; ``lacks``: coverage tags it cannot have, with the reason; ``skip``: generic
    checks it cannot take part in, with the reason.
    """

    name: str
    samples: tuple[Sample, ...]
    kinds: str
    broadcasts: bool = False
    reference: Callable[..., Any] | None = None
    lacks: Mapping[str, str] = field(default_factory=dict)
    skip: Mapping[str, str] = field(default_factory=dict)


def builtin_ops() -> dict[str, Any]:
    """Every op devtensor itself defines, by name: structured ops, multi-output ops, data-dependent ops (custom ops
    defined elsewhere excluded) and view ops."""
    ops: dict[str, Any] = {op.name: op for op in all_ops() if op.module.startswith("devtensor")}
    ops.update((op.name, op) for op in all_multi_ops() if op.module.startswith("devtensor"))
    ops.update((op.name, op) for op in all_data_dependent_ops() if op.module.startswith("devtensor"))
    ops.update((op.name, op) for op in all_view_ops())
    return ops


def required_tags(entry: OpSamples) -> set[str]:
    """The tags ``entry``'s samples must cover: 0-d, empty, non-contiguous, broadcast (where the op broadcasts)
    and each dtype class the op accepts, less those it declares it lacks."""
    tags = {"0-d", "empty", "non-contiguous", *(_KIND_TAG[k] for k in entry.kinds)}
    if entry.broadcasts:
        tags.add("broadcast")
    return tags - set(entry.lacks)


# --- operands ---------------------------------------------------------------------------------------------------

#: The dtype samples use for each dtype class code (b, i, f, c).
DTYPES = {"b": np.dtype(np.bool_), "i": np.dtype(np.int64), "f": np.dtype(np.float64), "c": np.dtype(np.complex128)}


def A(shape: tuple[int, ...], kind: str = "f", *, shift: int = 0, signed: bool = False) -> Array:
    """Deterministic values of ``shape`` and dtype class ``kind``: small integers 1..5 (``signed``: -2..2), as
    floats multiples of 0.375 (exact in binary), complex with an imaginary part; ``shift`` varies the pattern."""
    size = int(np.prod(shape))
    base = (np.arange(size) + shift) % 5 + 1
    if signed:
        base = base - 3
    if kind == "b":
        values: Array = base % 2 == 1
    elif kind == "i":
        values = base.astype(np.int64)
    elif kind == "f":
        values = base * 0.375
    else:
        values = base * 0.375 + 0.25j * (base % 3)
    return np.asarray(values, dtype=DTYPES[kind]).reshape(shape)


def S(shape: tuple[int, ...], kind: str = "f", *, shift: int = 0, signed: bool = False) -> Strided:
    """``A(...)`` as a non-contiguous operand."""
    return Strided(A(shape, kind, shift=shift, signed=signed))


def _main_kind(kinds: str) -> str:
    return "f" if "f" in kinds else kinds[0]


# --- families -----------------------------------------------------------------------------------------------------

NO_INPLACE = "the op has no inplace variant"
VIEW_SKIPS = {
    "out": "view op: returns a view of its input; it has no out= variant",
    "out_dtype": "view op: no out= variant",
    "out_resize": "view op: no out= variant",
    "inplace": "view op: no inplace variant",
}
REDUCTION_SKIPS = {"inplace": "reduction: no inplace variant (the result has fewer dims than self)"}
BOOL_RESULT = "the result is bool, which casts (same_kind) to every dtype: no out dtype can be refused"


def unary(
    name: str,
    kinds: str = "bifc",
    *,
    signed: bool = False,
    reference: Callable[..., Any] | None = None,
    skip: Mapping[str, str] | None = None,
) -> OpSamples:
    """An op of one tensor: each dtype class, 0-d, empty, non-contiguous."""
    k = _main_kind(kinds)
    samples = [Sample((A((2, 3), kind, signed=signed),)) for kind in kinds]
    samples += [
        Sample((A((), k, signed=signed),)),
        Sample((A((0, 3), k),)),
        Sample((S((2, 3), k, signed=signed),)),
    ]
    return OpSamples(name, tuple(samples), kinds, reference=reference, skip=skip or {})


def binary(
    name: str,
    kinds: str = "bifc",
    *,
    reference: Callable[..., Any] | None = None,
    kwargs: Sequence[Mapping[str, Any]] = (),
    skip: Mapping[str, str] | None = None,
) -> OpSamples:
    """A broadcasting op of two tensors or numbers: each dtype class, mixed classes, broadcasting either way,
    Python numbers on either side (where the op takes them), 0-d, empty, non-contiguous, and each of ``kwargs``."""
    k = _main_kind(kinds)
    x, y = A((2, 3), k), A((2, 3), k, shift=2)
    samples = [Sample((A((2, 3), kind), A((2, 3), kind, shift=2))) for kind in kinds]
    if "i" in kinds and "f" in kinds:
        samples.append(Sample((A((2, 3), "i"), A((2, 3), "f", shift=2))))
        samples.append(Sample((A((2, 3), "f"), A((2, 3), "i", shift=2))))
    samples += [
        Sample((x, A((3,), k, shift=1)), broadcast=True),
        Sample((A((2, 1), k), A((1, 3), k, shift=1)), broadcast=True),
        # (a Python number only where PyTorch's schema takes one: not maximum(x, 2), gt(3, y))
        *[Sample(pair) for pair in ((x, 2), (3, y)) if refused_number(name, *pair) is None],
        Sample((A((), k), A((), k, shift=1))),
        Sample((x, A((), k, shift=1)), broadcast=True),
        Sample((A((0, 3), k), A((3,), k, shift=1)), broadcast=True),
        Sample((S((2, 3), k), S((2, 3), k, shift=2))),
        Sample((S((2, 3), k), A((3,), k, shift=1)), broadcast=True),
    ]
    samples += [Sample((x, y), kw) for kw in kwargs]
    return OpSamples(name, tuple(samples), kinds, broadcasts=True, reference=reference, skip=skip or {})


def reduction(
    name: str,
    kinds: str = "bifc",
    *,
    int_dim_only: bool = False,
    kwargs: Sequence[Mapping[str, Any]] = (),
    reference: Callable[..., Any] | None = None,
    skip: Mapping[str, str] | None = None,
) -> OpSamples:
    """A reduction ``op(self, dim, keepdim, ...)``: all dims, one dim, several dims, keepdim, 0-d, empty (over a
    non-empty dim), non-contiguous, each dtype class and each of ``kwargs``."""
    k = _main_kind(kinds)
    x = A((2, 3), k)
    samples = [Sample((A((2, 3), kind),)) for kind in kinds]
    samples += [
        Sample((x, 1)),
        Sample((x, 0, True)),
        Sample((A((), k),)),
        Sample((A((), k), 0)),
        Sample((A((0, 3), k), 1)),
        Sample((S((2, 3), k), 0)),
        Sample((S((2, 3), k),)),
    ]
    if not int_dim_only:
        samples += [Sample((x, (0, 1))), Sample((A((2, 3, 2), k), (0, -1), True))]
    samples += [Sample((x, 1), kw) for kw in kwargs]
    return OpSamples(name, tuple(samples), kinds, reference=reference, skip={**REDUCTION_SKIPS, **(skip or {})})


def _add_ref(a: Any, b: Any, alpha: Any = None) -> Any:
    return np.add(a, b if alpha is None else np.multiply(alpha, b))


def _sub_ref(a: Any, b: Any, alpha: Any = None) -> Any:
    return np.subtract(a, b if alpha is None else np.multiply(alpha, b))


def _axis(a: Any, dim: Any) -> Any:
    """NumPy's axis for a PyTorch dim: a 0-d tensor takes dim 0 or -1 (PyTorch), which NumPy refuses."""
    return None if np.ndim(a) == 0 else dim


def _swapaxes_ref(a: Any, dim0: int, dim1: int) -> Any:
    return a if np.ndim(a) == 0 else np.swapaxes(a, dim0, dim1)


def _axis_ref(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A reference for ``op(self, dim=None, keepdim=False)`` from NumPy's ``fn(a, axis, keepdims=...)``."""

    def ref(a: Any, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        return fn(a, axis=_axis(a, dim), keepdims=keepdim, **kwargs)

    return ref


def _ddof_ref(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A reference for ``op(self, dim=None, keepdim=False, correction=1)`` from NumPy's ``fn(a, axis, ddof=...)``."""

    def ref(a: Any, dim: Any = None, keepdim: bool = False, correction: int | None = 1) -> Any:
        return fn(a, axis=_axis(a, dim), keepdims=keepdim, ddof=1 if correction is None else correction)

    return ref


#: The comparison and binary logical ops with the NumPy ufunc each follows.
COMPARISONS: list[tuple[str, np.ufunc]] = [
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
]
LOGICAL: list[tuple[str, np.ufunc]] = [
    ("logical_and", np.logical_and),
    ("logical_or", np.logical_or),
    ("logical_xor", np.logical_xor),
]

#: The bitwise ops with the NumPy ufunc each follows.
BITWISE: list[tuple[str, np.ufunc]] = [
    ("bitwise_and", np.bitwise_and),
    ("bitwise_or", np.bitwise_or),
    ("bitwise_xor", np.bitwise_xor),
    ("bitwise_left_shift", np.left_shift),
    ("bitwise_right_shift", np.right_shift),
]


def _elementwise() -> list[OpSamples]:
    cmp_skip = {"out_dtype": BOOL_RESULT}
    entries = [
        binary("add", reference=_add_ref, kwargs=[{"alpha": 2}]),
        binary("sub", "ifc", reference=_sub_ref, kwargs=[{"alpha": 2}]),
        binary("mul", reference=np.multiply),
        binary("div", kwargs=[{"rounding_mode": "trunc"}, {"rounding_mode": "floor"}]),
        binary("remainder", "bif", reference=np.remainder),
        binary("pow", "bifc", reference=np.power),
        binary("maximum", reference=np.maximum),
        binary("minimum", reference=np.minimum),
    ]
    for name, ufunc in (*COMPARISONS, *LOGICAL):
        entries.append(binary(name, reference=ufunc, skip=cmp_skip))
    entries += [
        unary("neg", "ifc", signed=True, reference=np.negative),
        unary("abs", signed=True, reference=np.abs),
        unary("exp", reference=np.exp),
        unary("log", reference=np.log),
        unary("sqrt", reference=np.sqrt),
        unary("sin", reference=np.sin),
        unary("cos", reference=np.cos),
        unary("tanh", reference=np.tanh),
        unary("sigmoid"),
        unary("logical_not", reference=np.logical_not, skip=cmp_skip),
        unary("relu", "if", signed=True, reference=lambda a: np.maximum(a, 0)),
        unary("clone", reference=np.copy, skip={"inplace": NO_INPLACE}),
        unary("conj", reference=_keep_bool(np.conjugate)),
        unary("real", reference=np.real, skip={"inplace": NO_INPLACE}),
        unary("imag", reference=np.imag, skip={"inplace": NO_INPLACE}),
        unary("bitwise_not", "bi", signed=True, reference=np.invert),
        unary("positive", "ifc", signed=True, reference=np.positive),
    ]
    for name, ufunc in BITWISE:
        entries.append(binary(name, "bi", reference=ufunc))
    rounding = unary("round", "ifc", signed=True, reference=np.round)
    more = [Sample((A((2, 3), kind, signed=True),), {"decimals": d}) for kind in "ifc" for d in (1, -1)]
    entries.append(replace(rounding, samples=(*rounding.samples, *more)))
    x = A((2, 3))
    entries.append(
        OpSamples(
            "clamp",
            (
                *(Sample((A((2, 3), kind), 1, 3)) for kind in "bifc"),
                Sample((x, A((3,), shift=1), None), broadcast=True),
                Sample((x, None, A((2, 1), shift=3)), broadcast=True),
                Sample((x, A((), shift=1), A((2, 3), shift=3)), broadcast=True),
                Sample((A(()), 0.5, 1.0)),
                Sample((A((0, 3)), A((3,)), 1.5), broadcast=True),
                Sample((S((2, 3)), S((2, 3), shift=1), 1.5)),
            ),
            "bifc",
            broadcasts=True,
            reference=np.clip,
        )
    )
    cond = A((2, 3), "b")
    entries.append(
        OpSamples(
            "where",
            (
                *(Sample((cond, A((2, 3), kind), A((2, 3), kind, shift=2))) for kind in "bifc"),
                Sample((cond, A((3,)), 0.5), broadcast=True),
                Sample((A((2, 1), "b"), 1, A((1, 3))), broadcast=True),
                Sample((A((), "b"), A(()), A((), shift=1))),
                Sample((A((0, 3), "b"), A((3,)), A((0, 1))), broadcast=True),
                Sample((S((2, 3), "b"), S((2, 3)), A((2, 3), shift=1))),
            ),
            "bifc",
            broadcasts=True,
            reference=np.where,
            skip={"inplace": NO_INPLACE},
        )
    )
    return entries


#: The ops of devtensor.kernels.math_ufuncs: (name, NumPy ufunc, dtype classes NumPy has loops for, PyTorch has
#: an inplace variant, the result is bool).
def _tensordot_ref(a: Any, b: Any, dims: Any = 2) -> Any:
    """np.tensordot, with a contracted dim of size 1 repeated to its partner's size first (PyTorch's rule)."""
    if not isinstance(dims, int):
        for i, j in zip(*dims, strict=True):
            n = max(a.shape[i], b.shape[j])
            a, b = np.repeat(a, n // a.shape[i], axis=i), np.repeat(b, n // b.shape[j], axis=j)
    return np.tensordot(a, b, axes=dims)


def _keep_bool(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, except that a bool array is returned as it is (PyTorch's sign and conj of bool)."""
    return lambda a: a.copy() if a.dtype.kind == "b" else fn(a)


def _reciprocal_ref(a: Any) -> Any:
    """reciprocal's values: PyTorch's kind, true division (bool and integers give floats), not np.reciprocal's."""
    return np.true_divide(1, a)


MATH_UNARY: list[tuple[str, Callable[..., Any], str, bool, bool]] = [
    ("floor", np.floor, "bif", True, False),
    ("ceil", np.ceil, "bif", True, False),
    ("trunc", np.trunc, "bif", True, False),
    ("sign", _keep_bool(np.sign), "bifc", True, False),
    ("square", np.square, "bifc", True, False),
    ("reciprocal", _reciprocal_ref, "bifc", True, False),
    ("log1p", np.log1p, "bifc", True, False),
    ("expm1", np.expm1, "bifc", True, False),
    ("log2", np.log2, "bifc", True, False),
    ("log10", np.log10, "bifc", True, False),
    ("isnan", np.isnan, "bifc", False, True),
    ("isinf", np.isinf, "bifc", False, True),
    ("isfinite", np.isfinite, "bifc", False, True),
    ("signbit", np.signbit, "bif", False, True),
    ("tan", np.tan, "bifc", True, False),
    ("asin", np.arcsin, "bifc", True, False),
    ("acos", np.arccos, "bifc", True, False),
    ("atan", np.arctan, "bifc", True, False),
    ("sinh", np.sinh, "bifc", True, False),
    ("cosh", np.cosh, "bifc", True, False),
    ("asinh", np.arcsinh, "bifc", True, False),
    ("acosh", np.arccosh, "bifc", True, False),
    ("atanh", np.arctanh, "bifc", True, False),
]
#: (name, NumPy ufunc, dtype classes, PyTorch has an inplace variant).
MATH_BINARY: list[tuple[str, np.ufunc, str, bool]] = [
    ("atan2", np.arctan2, "bif", True),
    ("hypot", np.hypot, "bif", True),
    ("copysign", np.copysign, "bif", True),
    ("logaddexp", np.logaddexp, "bif", False),
    ("float_power", np.float_power, "bifc", True),
    ("fmod", np.fmod, "bif", True),
    ("nextafter", np.nextafter, "bif", True),
]


def _math() -> list[OpSamples]:
    entries = []
    for name, ufunc, kinds, has_inplace, bool_result in MATH_UNARY:
        skip = {"inplace": NO_INPLACE} if not has_inplace else {}
        if bool_result:
            skip["out_dtype"] = BOOL_RESULT
        entries.append(unary(name, kinds, signed=name in ("sign", "signbit"), reference=ufunc, skip=skip))
    for name, ufunc, kinds, has_inplace in MATH_BINARY:
        entries.append(binary(name, kinds, reference=ufunc, skip={} if has_inplace else {"inplace": NO_INPLACE}))
    return entries


def _scan_ref(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A reference for ``cumsum``/``cumprod(self, dim, dtype=None)`` from NumPy's ``fn`` (a 0-d tensor scans
    to itself, where NumPy's flattening makes it 1-d)."""

    def ref(a: Any, dim: int, dtype: Any = None) -> Any:
        result = fn(a, axis=dim if np.ndim(a) else None, dtype=dtype)
        return result.reshape(np.shape(a))

    return ref


def _argsort_ref(a: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    if np.ndim(a) == 0:
        return np.zeros((), np.int64)
    if descending:  # (the samples' descending cases are finite or NaN: negation reverses the order, NaN first)
        key = -a.astype(np.float64)
        return np.argsort(np.where(np.isnan(key), -np.inf, key), axis=dim, kind="stable")
    return np.argsort(a, axis=dim, kind="stable" if stable else None)


def _gather_ref(a: Any, dim: int, index: Any) -> Any:
    if np.ndim(a) == 0 or np.ndim(index) == 0:
        return np.reshape(a, -1)[index]
    part = a[tuple(slice(None) if i == dim % a.ndim else slice(0, n) for i, n in enumerate(index.shape))]
    return np.take_along_axis(part, index, axis=dim)


def _take_along_dim_ref(a: Any, indices: Any, dim: int | None = None) -> Any:
    if dim is None:
        return np.reshape(a, -1)[np.reshape(indices, -1)]
    if np.ndim(a) == 0:
        return a.copy()
    shape = list(
        np.broadcast_shapes(
            *(tuple(1 if i == dim % a.ndim else n for i, n in enumerate(x.shape)) for x in (a, indices))
        )
    )
    d = dim % a.ndim
    a_to = (*shape[:d], a.shape[d], *shape[d + 1 :])
    i_to = (*shape[:d], indices.shape[d], *shape[d + 1 :])
    return np.take_along_axis(np.broadcast_to(a, a_to), np.broadcast_to(indices, i_to), axis=d)


def _index_select_ref(a: Any, dim: int, index: Any) -> Any:
    return a.copy() if np.ndim(a) == 0 else np.take(a, np.reshape(index, -1), axis=dim)


def _scans_and_indexing() -> list[OpSamples]:
    no_inplace = {"inplace": NO_INPLACE}
    x = A((2, 3))
    i64 = np.int64
    entries = [
        OpSamples(
            name,
            (
                *(Sample((A((2, 3), k), 1)) for k in "bifc"),
                Sample((x, 0), {"dtype": dt.float32}),
                Sample((A((2, 3), "i"), -1), {"dtype": dt.int16}),
                Sample((A(()), 0)),
                Sample((A((0, 3)), 1)),
                Sample((S((2, 3)), -1)),
            ),
            "bifc",
            reference=_scan_ref(fn),
        )
        for name, fn in (("cumsum", np.cumsum), ("cumprod", np.cumprod))
    ]
    entries.append(
        OpSamples(
            "diff",
            (
                *(Sample((A((2, 3), k),)) for k in "bifc"),
                Sample((x, 2, 1)),
                Sample((x, 1, 0)),
                Sample((x, 0)),
                Sample((x, 5)),
                Sample((A((0, 3)), 1, 0)),
                Sample((S((2, 3), signed=True), 1, -1)),
                # PyTorch's prepend/append: joined along dim first, dtypes promoted.
                Sample((x, 1, 1, A((2, 1), shift=1), A((2, 2), shift=2))),
                Sample((A((3, 2), "i"), 2, 0), {"append": A((1, 2), "f")}),
                Sample((A((4,), "b"), 1, -1), {"prepend": A((2,), "b", shift=1)}),
                Sample((x, 0, 1), {"prepend": A((2, 1))}),
            ),
            "bifc",
            reference=lambda a, n=1, dim=-1, prepend=None, append=None: np.diff(
                a, n=n, axis=dim, **{k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
            ),
            lacks={"0-d": "diff refuses 0-d tensors (as torch.diff)"},
            skip=no_inplace,
        )
    )
    entries.append(
        OpSamples(
            "diag",
            (
                *(Sample((A((3,), k),)) for k in "bifc"),
                Sample((A((3, 4)), 1)),
                Sample((A((4, 3)), -2)),
                Sample((A((3, 4)), 5)),
                Sample((A((2,)), -3)),
                Sample((A((0,)),)),
                Sample((A((0, 3)), 0)),
                Sample((S((2, 3)), 1)),
            ),
            "bifc",
            reference=lambda a, diagonal=0: np.diag(a, k=diagonal).copy(),
            lacks={"0-d": "diag takes vectors and matrices (as torch.diag)"},
            skip=no_inplace,
        )
    )
    for name, fn in (("tril", np.tril), ("triu", np.triu)):
        entries.append(
            OpSamples(
                name,
                (
                    *(Sample((A((3, 3), k),)) for k in "bifc"),
                    Sample((x, 1)),
                    Sample((x, -1)),
                    Sample((A((2, 2, 3)), 0)),
                    Sample((A((0, 3)),)),
                    Sample((S((2, 3)), 1)),
                ),
                "bifc",
                reference=lambda a, diagonal=0, fn=fn: fn(a, k=diagonal),
                lacks={"0-d": f"{name} takes matrices (at least 2 dims, as torch.{name})"},
            )
        )
    entries += [
        OpSamples(
            "roll",
            (
                *(Sample((A((2, 3), k), 1)) for k in "bifc"),
                Sample((x, (1, -1), (0, 1))),
                Sample((x, 2, 1)),
                Sample((x, -4, -1)),
                Sample((A(()), 1)),
                Sample((A((0, 3)), 1, 1)),
                Sample((S((2, 3)), 1, 0)),
            ),
            "bifc",
            reference=lambda a, shifts, dims=None: np.roll(a, shifts, axis=dims) if np.ndim(a) else a.copy(),
            skip=no_inplace,
        ),
        OpSamples(
            "count_nonzero",
            (
                *(Sample((A((2, 3), k, signed=True),)) for k in "bifc"),
                Sample((A((2, 3), signed=True), 1)),
                Sample((A((2, 3, 2), signed=True), (0, -1))),
                Sample((A((), signed=True),)),
                Sample((A((), signed=True), 0)),
                Sample((A((0, 3)), 0)),
                Sample((S((2, 3), signed=True), 0)),
            ),
            "bifc",
            reference=lambda a, dim=None: np.asarray(
                np.count_nonzero(a, axis=dim if np.ndim(a) and dim is not None else None)
            ).astype(i64),
            skip=no_inplace,
        ),
        OpSamples(
            "argsort",
            (
                *(Sample((A((2, 3), k, signed=True),)) for k in "bif"),
                Sample((A((2, 5), signed=True), 1), {"stable": True}),
                Sample((A((2, 5), signed=True), 0, True)),
                Sample((A((3, 5), signed=True), -1, True), {"stable": True}),
                Sample((np.array([1.0, np.nan, -1.0, 1.0]), 0, True), {"stable": True}),
                Sample((A(()),)),
                Sample((A((0, 3)), 0)),
                Sample((S((2, 3), signed=True), -1)),
            ),
            "bif",
            reference=_argsort_ref,
            skip=no_inplace,
        ),
        OpSamples(
            "gather",
            (
                *(Sample((A((2, 3), k), 1, np.array([[0, 2], [1, 1]]))) for k in "bifc"),
                Sample((A((3, 3)), 0, np.array([[2, 0, 1]]))),
                Sample((A(()), 0, np.zeros((), i64))),
                Sample((A((3,)), 0, np.array(2))),
                Sample((x, 1, np.zeros((2, 0), i64))),
                Sample((S((2, 3)), -1, np.array([[2], [0]]))),
                Sample((x, 1, np.array([[2, 0], [1, 1]], np.int32))),  # (PyTorch's gather takes int32 too)
            ),
            "bifc",
            reference=_gather_ref,
            skip=no_inplace,
        ),
        OpSamples(
            "take_along_dim",
            (
                *(Sample((A((2, 3), k), np.array([[0, 2], [1, 1]]), 1)) for k in "bifc"),
                Sample((x, np.array([[2, 0]]), 1), broadcast=True),
                Sample((A((2, 1)), np.array([[0, 0, 0]]), 0), broadcast=True),
                Sample((x, np.array([5, 0, -0]))),
                Sample((A(()), np.zeros((), i64), 0)),
                Sample((x, np.zeros((2, 0), i64), 1)),
                Sample((S((2, 3)), np.array([[2], [0]]), -1)),
                # Negative indices count from the end (PyTorch's and NumPy's).
                Sample((x, np.array([[-1, 0], [-3, 2]]), 1)),
                Sample((x, np.array([-6, -1]))),
            ),
            "bifc",
            broadcasts=True,
            reference=_take_along_dim_ref,
            skip=no_inplace,
        ),
        OpSamples(
            "index_select",
            (
                *(Sample((A((2, 3), k), 1, np.array([2, 0]))) for k in "bifc"),
                Sample((x, 0, np.array([1, 1, 0], np.int32))),
                Sample((x, 1, np.array(1))),
                Sample((A(()), 0, np.array([0]))),
                Sample((A((0, 3)), 1, np.array([1, 1]))),
                Sample((S((2, 3)), -1, np.array([2]))),
            ),
            "bifc",
            reference=_index_select_ref,
            skip=no_inplace,
        ),
        OpSamples(
            "take",
            (
                *(Sample((A((2, 3), k), np.array([[0, -1], [5, 2]]))) for k in "bifc"),
                Sample((A(()), np.array(0))),
                Sample((x, np.zeros(0, i64))),
                Sample((S((2, 3)), np.array([4, -6]))),
            ),
            "bifc",
            reference=lambda a, index: np.take(np.reshape(a, -1), index),
            skip=no_inplace,
        ),
        OpSamples(
            "tensordot",
            (
                *(Sample((A((2, 3), k), A((3, 4), k, shift=1), 1)) for k in "bifc"),
                Sample((A((2, 3)), A((2, 3), "i", shift=1))),
                Sample((A((2, 3, 4)), A((4, 3)), ([1, 2], [1, 0]))),
                Sample((A(()), A((), shift=1), 0)),
                Sample((A((0, 3)), A((3, 2)), 1)),
                Sample((S((2, 3)), S((3, 2)), 1)),
                Sample((A((2, 1)), A((3, 2), shift=1), ([1], [0]))),  # (a size-1 contracted dim broadcasts)
            ),
            "bifc",
            reference=_tensordot_ref,
            skip=no_inplace,
        ),
    ]
    return entries


def _linalg() -> list[OpSamples]:
    entries = [
        OpSamples(
            "matmul",
            (
                *(Sample((A((2, 3), k), A((3, 4), k, shift=1))) for k in "bifc"),
                Sample((A((3,)), A((3,), shift=1))),
                Sample((A((3,)), A((3, 2)))),
                Sample((A((2, 2, 3)), A((3, 4))), broadcast=True),
                Sample((A((1, 2, 3)), A((4, 3, 2))), broadcast=True),
                Sample((A((0, 3)), A((3, 4)))),
                Sample((A((2, 0)), A((0, 4)))),
                Sample((S((2, 3)), S((3, 4)))),
            ),
            "bifc",
            broadcasts=True,
            reference=np.matmul,
            lacks={"0-d": "matmul refuses 0-d operands (as torch.matmul); its 1-d·1-d result is 0-d"},
            skip={"inplace": NO_INPLACE},
        ),
        OpSamples(
            "mm",
            (
                *(Sample((A((2, 3), k), A((3, 4), k, shift=1))) for k in "bifc"),
                Sample((A((0, 3)), A((3, 4)))),
                Sample((A((2, 0)), A((0, 4)))),
                Sample((S((2, 3)), S((3, 4)))),
            ),
            "bifc",
            reference=np.matmul,
            lacks={"0-d": "mm takes 2-d matrices only"},
            skip={"inplace": NO_INPLACE},
        ),
        OpSamples(
            "bmm",
            (
                *(Sample((A((2, 2, 3), k), A((2, 3, 4), k, shift=1))) for k in "bifc"),
                Sample((A((0, 2, 3)), A((0, 3, 4)))),
                Sample((A((2, 2, 0)), A((2, 0, 4)))),
                Sample((S((2, 2, 3)), S((2, 3, 4)))),
            ),
            "bifc",
            reference=np.matmul,
            lacks={"0-d": "bmm takes 3-d batches only"},
            skip={"inplace": NO_INPLACE},
        ),
        OpSamples(
            "dot",
            (
                *(Sample((A((3,), k), A((3,), k, shift=1))) for k in "bifc"),
                Sample((A((0,)), A((0,)))),
                Sample((S((3,)), S((3,), shift=1))),
            ),
            "bifc",
            reference=np.dot,
            lacks={"0-d": "dot takes 1-d vectors only (its result is 0-d)"},
            skip={"inplace": NO_INPLACE},
        ),
        OpSamples(
            "outer",
            (
                *(Sample((A((3,), k), A((4,), k, shift=1))) for k in "bifc"),
                Sample((A((0,)), A((4,)))),
                Sample((S((3,)), S((2,), shift=1))),
            ),
            "bifc",
            reference=np.outer,
            lacks={"0-d": "outer takes 1-d vectors only"},
            skip={"inplace": NO_INPLACE},
        ),
        OpSamples(
            "addmm",
            (
                *(Sample((A((2, 4), k), A((2, 3), k, shift=1), A((3, 4), k, shift=2))) for k in "bifc"),
                Sample((A((2, 4)), A((2, 3)), A((3, 4))), {"beta": 0.5, "alpha": 2}),
                Sample((A((4,)), A((2, 3)), A((3, 4))), broadcast=True),
                Sample((A(()), A((2, 3)), A((3, 4))), broadcast=True),
                Sample((A((0, 4)), A((0, 3)), A((3, 4)))),
                Sample((S((2, 4)), S((2, 3)), S((3, 4)))),
            ),
            "bifc",
            broadcasts=True,
        ),
    ]
    return entries


def _reductions() -> list[OpSamples]:
    real = "bif"
    bool_result = {"out_dtype": BOOL_RESULT}
    return [
        reduction("sum", reference=_axis_ref(np.sum), kwargs=[{"dtype": dt.float32}]),
        reduction("prod", reference=_axis_ref(np.prod), kwargs=[{"dtype": dt.float32}]),
        reduction("mean", reference=_axis_ref(np.mean), kwargs=[{"dtype": dt.float32}]),
        reduction("amax", real, reference=_axis_ref(np.amax)),
        reduction("amin", real, reference=_axis_ref(np.amin)),
        reduction("argmax", real, int_dim_only=True, reference=_axis_ref(np.argmax)),
        reduction("argmin", real, int_dim_only=True, reference=_axis_ref(np.argmin)),
        reduction("var", reference=_ddof_ref(np.var), kwargs=[{"correction": 0}, {"correction": 2}]),
        reduction("std", reference=_ddof_ref(np.std), kwargs=[{"correction": 0}, {"correction": None}]),
        reduction("logsumexp"),
        reduction("all", reference=_axis_ref(np.all), skip=bool_result),
        reduction("any", reference=_axis_ref(np.any), skip=bool_result),
    ]


def _nn() -> list[OpSamples]:
    entries = []
    for name in ("softmax", "log_softmax"):
        entries.append(
            OpSamples(
                name,
                (
                    *(Sample((A((2, 3), k), 1)) for k in "bif"),
                    Sample((A((2, 3)), 0)),
                    Sample((A(()), 0)),
                    Sample((A((0, 3)), 1)),
                    Sample((S((2, 3)), -1)),
                    # PyTorch's dtype=: self cast to it first.
                    Sample((A((2, 3)), 1), {"dtype": np.float32}),
                    Sample((A((2, 3), "i"), 0, "float32")),
                ),
                "bif",
                skip={"inplace": NO_INPLACE},
            )
        )
    classes = A((2, 3), "i") - 1  # 0..4
    entries += [
        OpSamples(
            "one_hot",
            (
                Sample((classes, 5)),
                Sample((A((), "i"), 6)),
                Sample((A((0,), "i"), 6)),
                Sample((S((2, 3), "i"), 6)),
            ),
            "i",
            skip={"inplace": NO_INPLACE},
        ),
        OpSamples(
            "cross_entropy",
            (
                *(Sample((A((2, 3), k), np.array([0, 2]))) for k in "bif"),
                Sample((A((0, 3)), np.zeros(0, np.int64))),
                Sample((S((2, 3)), np.array([2, 1]))),
            ),
            "bif",
            lacks={"0-d": "cross_entropy takes [N, C] logits and [N] class indices only"},
            skip={"inplace": NO_INPLACE},
        ),
        OpSamples(
            "cross_entropy_full",
            (
                *(Sample((A((2, 3), k), np.array([0, 2]))) for k in "bif"),
                Sample((A((2, 4, 3)), np.array([[0, 3, -100], [1, 1, 2]]), A((4,), shift=1), -100, "none")),
                Sample((A((2, 4, 3)), np.array([[0, 3, 1], [1, 1, 2]]), None, 1, "sum", 0.25)),
                Sample((A((2, 4)), np.array([3, 0]), A((4,), shift=1), -100, "mean", 0.1)),
                Sample((A((4,)), np.array(2))),  # (one sample: 1-d logits, a 0-d class index)
                Sample((A((2, 4, 3)), A((2, 4, 3), shift=2)), {"label_smoothing": 0.2}),  # (class probabilities)
                Sample((A((3, 4)), A((3, 4), shift=1), A((4,)), -100, "none")),
                Sample((A((0, 3)), np.zeros(0, np.int64)), {"reduction": "sum"}),
                Sample((S((2, 3)), np.array([2, 1]))),
            ),
            "bif",
            skip={"inplace": NO_INPLACE},  # (values: tests/test_nn.py, within tolerances)
        ),
        OpSamples(
            "upsample_nearest1d",
            (
                *(Sample((A((1, 2, 3), k), 6)) for k in "bifc"),
                Sample((A((1, 2, 3)),), {"scale_factor": 2.0}),
                Sample((A((2, 1, 4)), 3)),
                Sample((A((0, 2, 3)), 5)),
                Sample((S((1, 2, 3)), 4)),
            ),
            "bifc",
            lacks={"0-d": "upsample_nearest1d takes a 3-d (N, C, L) input"},
            skip={"inplace": NO_INPLACE},
        ),
    ]
    return entries


def _shape() -> list[OpSamples]:
    no_inplace = {"inplace": NO_INPLACE}
    x = A((2, 3))
    return [
        OpSamples(
            "flip",
            (
                *(Sample((A((2, 3), k), 0)) for k in "bifc"),
                Sample((x, (0, 1))),
                Sample((A(()), ())),
                Sample((A((0, 3)), 1)),
                Sample((S((2, 3)), -1)),
            ),
            "bifc",
            reference=np.flip,
            skip=no_inplace,
        ),
        OpSamples(
            "cat",
            (
                *(Sample(([A((2, 3), k), A((1, 3), k, shift=1)], 0)) for k in "bifc"),
                Sample(([x, A((2, 1)), A((2, 2), shift=1)], 1)),
                Sample(([A((2, 3), "i"), x], 0)),
                Sample(([A((0, 3)), x], 0)),
                Sample(([S((2, 3)), S((2, 2))], -1)),
            ),
            "bifc",
            reference=lambda tensors, dim: np.concatenate(tensors, axis=dim),
            lacks={"0-d": "cat refuses 0-d tensors (as torch.cat)"},
            skip=no_inplace,
        ),
        OpSamples(
            "stack",
            (
                *(Sample(([A((2, 3), k), A((2, 3), k, shift=1)], 0)) for k in "bifc"),
                Sample(([x, x, A((2, 3), shift=1)], 2)),
                Sample(([A(()), A((), shift=1)], 0)),
                Sample(([A((0, 3)), A((0, 3))], 1)),
                Sample(([S((2, 3)), S((2, 3), shift=1)], -1)),
            ),
            "bifc",
            reference=np.stack,
            skip=no_inplace,
        ),
    ]


def _views() -> list[OpSamples]:
    x = A((2, 3))

    def view(
        name: str,
        *samples: Sample,
        lacks: Mapping[str, str] | None = None,
        broadcasts: bool = False,
        reference: Callable[..., Any] | None = None,
    ) -> OpSamples:
        return OpSamples(
            name, tuple(samples), "bifc", broadcasts, reference=reference, lacks=lacks or {}, skip=VIEW_SKIPS
        )

    def kinds(*rest: Any) -> list[Sample]:
        return [Sample((A((2, 3), k), *rest)) for k in "bifc"]

    return [
        view(
            "reshape",
            *kinds((3, 2)),
            Sample((x, (-1,))),
            Sample((A(()), (1, 1))),
            Sample((A((0, 3)), (3, 0))),
            Sample((S((2, 3)), (6,))),
            reference=np.reshape,
        ),
        view(
            "view",
            *kinds((3, 2)),
            Sample((A(()), (1,))),
            Sample((A((0, 3)), (3, -1))),
            Sample((S((2, 3)), (2, 3, 1))),
            reference=np.reshape,
        ),
        view("flatten", *kinds(), Sample((x, 0, 1)), Sample((A(()),)), Sample((A((0, 3)),)), Sample((S((2, 3)),))),
        view(
            "transpose",
            *kinds(0, 1),
            Sample((A(()), 0, -1)),
            Sample((A((0, 3)), 0, 1)),
            Sample((S((2, 3)), 1, 0)),
            reference=_swapaxes_ref,
        ),
        view(
            "permute",
            *kinds((1, 0)),
            Sample((A((2, 3, 2)), (2, 0, 1))),
            Sample((A(()), ())),
            Sample((A((0, 3)), (1, 0))),
            Sample((S((2, 3)), (1, 0))),
            reference=np.transpose,
        ),
        view(
            "squeeze",
            *kinds(),
            Sample((A((2, 1, 3)),)),
            Sample((A((2, 1, 3)), 1)),
            Sample((A(()),)),
            Sample((A((0, 1)), 1)),
            Sample((S((1, 3)), 0)),
            reference=lambda a, dim=None: np.squeeze(a, axis=dim),
        ),
        view(
            "unsqueeze",
            *kinds(0),
            Sample((x, -1)),
            Sample((A(()), 0)),
            Sample((A((0, 3)), 1)),
            Sample((S((2, 3)), 1)),
            reference=np.expand_dims,
        ),
        *(
            view(
                name,
                *(Sample((A((1, 3), k), (2, 3)), broadcast=True) for k in "bifc"),
                Sample((A((2, 1)), (2, 2, 4)), broadcast=True),
                Sample((A(()), (2, 3)), broadcast=True),
                Sample((A((0, 3)), (2, 0, 3)), broadcast=True),
                Sample((S((1, 3)), (2, 3)), broadcast=True),
                broadcasts=True,
                reference=np.broadcast_to,
            )
            for name in ("expand", "broadcast_to")
        ),
        view(
            "contiguous",
            *kinds(),
            Sample((A(()),)),
            Sample((A((0, 3)),)),
            Sample((S((2, 3)),)),
            reference=lambda a: np.array(a, order="C"),  # np.ascontiguousarray makes 0-d 1-d
        ),
        view(
            "split",
            *kinds(1, 0),
            Sample((x, [1, 2], 1)),
            Sample((A((2, 0)), 1, 0)),
            Sample((S((2, 3)), 2, 1)),
            lacks={"0-d": "split needs a dim to split (0-d tensors are refused, as torch.split)"},
        ),
        view(
            "chunk",
            *kinds(2, 1),
            Sample((A((2, 0)), 2, 0)),
            Sample((S((2, 3)), 2, 0)),
            lacks={"0-d": "chunk needs a dim to split (0-d tensors are refused, as torch.chunk)"},
        ),
    ]


# --- random ops ---------------------------------------------------------------------------------------------------

#: Random ops draw fresh values on each call, so the generic checks (which compare calls) use degenerate
#: distributions whose every draw is known: an empty range, std 0, p 0 or 1, one non-zero weight, one element.
#: Their distributions are checked in tests/test_random.py.


def _random_ops() -> list[OpSamples]:
    def full_of(value: Any) -> Callable[..., Any]:
        # (a complex self: both parts drawn from the real distribution, as PyTorch's real view)
        return lambda self, *args, **kwargs: np.full_like(self, value * (1 + 1j) if self.dtype.kind == "c" else value)

    def bernoulli_ref(self: Array, p: Any) -> Array:
        return (np.broadcast_to(np.asarray(p), self.shape) >= 0.5).astype(self.dtype)

    def multinomial_ref(w: Array, n: int, replacement: bool = False) -> Array:
        return np.broadcast_to(np.argmax(w, axis=-1)[..., None], (*w.shape[:-1], n)).astype(np.int64)

    one_hot_weights = np.array([[0.0, 0.0, 1.5], [0.0, 0.75, 0.0]])
    return [
        OpSamples(
            "uniform",
            (
                Sample((A((2, 3)), 2.5, 2.5)),
                Sample((A(()), 2.5, 2.5)),
                Sample((A((0, 3)), 0.0, 1.0)),
                Sample((S((2, 3)), 2.5, 2.5)),
                Sample((A((2, 3), "c"), 2.5, 2.5)),
            ),
            "fc",
            reference=full_of(2.5),
        ),
        OpSamples(
            "normal",
            (
                Sample((A((2, 3)), 1.5, 0.0)),
                Sample((A(()), 1.5, 0.0)),
                Sample((A((0, 3)), 0.0, 1.0)),
                Sample((S((2, 3)), 1.5), {"std": 0.0}),
                Sample((A((2, 3), "c"), 1.5, 0.0)),
            ),
            "fc",
            reference=full_of(1.5),
        ),
        OpSamples(
            "random",
            (
                Sample((A((2, 3)), 1, 2)),
                Sample((A((2, 3), "i"), 1, 2)),
                Sample((A((2, 3), "b"), 1, 2)),
                Sample((A((), "i"), 1, 2)),
                Sample((A((0, 3), "i"), 0, 5)),
                Sample((S((2, 3), "i"), 1, 2)),
            ),
            "bif",
            reference=full_of(1),
        ),
        OpSamples(
            "bernoulli",
            (
                Sample((A((2, 3)), 1.0)),
                Sample((A((2, 3), "i"), 0.0)),
                Sample((A((2, 3), "b"), 1.0)),
                Sample((A((2, 3)), np.array([1.0, 0.0, 1.0])), broadcast=True),
                Sample((A(()), 1.0)),
                Sample((A((0, 3)), 0.5)),
                Sample((S((2, 3)), Strided(np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])))),
            ),
            "bif",
            broadcasts=True,
            reference=bernoulli_ref,
        ),
        OpSamples(
            "exponential",
            (
                Sample((A((2, 3)), float("inf"))),
                Sample((A(()), float("inf"))),
                Sample((A((0, 3)), 1.0)),
                Sample((S((2, 3)),), {"lambd": float("inf")}),
            ),
            "f",
            reference=full_of(0.0),
        ),
        OpSamples(
            "geometric",
            (
                Sample((A((2, 3)), 1.0)),
                Sample((A((2, 3), "i"), 1.0)),
                Sample((A((), "i"), 1.0)),
                Sample((A((0, 3)), 0.5)),
                Sample((S((2, 3), "i"), 1.0)),
            ),
            "if",
            reference=full_of(1),
        ),
        OpSamples(
            "log_normal",
            (
                Sample((A((2, 3)), 0.0, 0.0)),
                Sample((A(()), 0.0, 0.0)),
                Sample((A((0, 3)),)),
                Sample((S((2, 3)),), {"mean": 0.0, "std": 0.0}),
            ),
            "f",
            reference=full_of(1.0),
        ),
        OpSamples(
            "cauchy",
            (
                Sample((A((2, 3)), 1.5, 0.0)),
                Sample((A(()), 1.5, 0.0)),
                Sample((A((0, 3)),)),
                Sample((S((2, 3)), 1.5), {"sigma": 0.0}),
            ),
            "f",
            reference=full_of(1.5),
        ),
        OpSamples(
            "multinomial",
            (
                Sample((one_hot_weights, 2, True)),
                Sample((np.array([0.0, 0.0, 2.0]), 3, True)),
                Sample((np.array([0.0, 0.0, 2.0]), 1)),
                Sample((np.zeros((0, 3)), 2, True)),
                Sample((Strided(one_hot_weights), 1)),
            ),
            "f",
            reference=multinomial_ref,
            lacks={"0-d": "multinomial takes 1-d or 2-d weights only (as torch.multinomial)"},
            skip={"inplace": NO_INPLACE},
        ),
        OpSamples(
            "randperm",
            (
                Sample((np.zeros(1, np.int64),)),
                Sample((np.zeros(1),)),
                Sample((np.zeros(0),)),
            ),
            "if",
            reference=lambda self: np.arange(self.shape[0], dtype=self.dtype),
            lacks={
                "0-d": "the permutation is 1-d (devtensor.randperm passes its 1-d output as self)",
                "non-contiguous": "only a permutation of at most one element is known in advance, and a tensor of "
                "one element is contiguous (tests/test_random.py checks strided outputs)",
            },
            skip={"inplace": NO_INPLACE},
        ),
    ]


# --- fft -----------------------------------------------------------------------------------------------------------

_SINGLE = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64))


def _fft_axes(a: Array, s: Any, dim: Any, kind: str) -> tuple[tuple[int, ...], list[int] | None]:
    """torch.fft's defaults for an n-d transform's dims and lengths (-1 keeps a dim's default), for NumPy."""
    ndim = a.ndim
    sizes = None if s is None else ([s] if isinstance(s, int) else list(s))
    if dim is not None:
        axes = tuple(d % ndim for d in ([dim] if isinstance(dim, int) else dim))
    elif sizes is not None:
        axes = tuple(range(ndim - len(sizes), ndim))
    else:
        axes = tuple(range(ndim))
    if sizes is not None:
        for i, a_ in enumerate(axes):
            if sizes[i] == -1:
                sizes[i] = 2 * (a.shape[a_] - 1) if kind == "c2r" and i == len(axes) - 1 else a.shape[a_]
    return axes, sizes


def _fft_ref(name: str, n_dim: bool, kind: str) -> Callable[..., Any]:
    """The NumPy reference of ``devtensor.fft.<name>``: ``numpy.fft.<name>`` in the input's precision."""
    fn = getattr(np.fft, name)

    def ref(a: Array, *args: Any, **kwargs: Any) -> Any:
        single = a.dtype in _SINGLE
        values: list[Any] = [*args, *((None, None, None) if n_dim else (None, -1, None))[len(args) :]]
        if n_dim:
            s, dim, norm = kwargs.get("s", values[0]), kwargs.get("dim", values[1]), kwargs.get("norm", values[2])
            axes, sizes = _fft_axes(a, s, dim, kind)
            if not axes:
                return a.astype(np.complex64 if single else np.complex128)
            result = fn(a, s=sizes, axes=axes, norm=norm)
        else:
            n, dim, norm = kwargs.get("n", values[0]), kwargs.get("dim", values[1]), kwargs.get("norm", values[2])
            result = fn(a, n=n, axis=dim, norm=norm)
        return result

    return ref


def _fft() -> list[OpSamples]:
    no_inplace = {"inplace": NO_INPLACE}
    entries: list[OpSamples] = []
    x = A((2, 4))
    no_scalar = {"0-d": "a 0-d tensor has no dim to transform (torch.fft raises IndexError too)"}
    for name, kinds, kind in (
        ("fft", "bifc", "c2c"),
        ("ifft", "bifc", "c2c"),
        ("rfft", "bif", "r2c"),
        ("ihfft", "bif", "r2c"),
        ("irfft", "bifc", "c2r"),
        ("hfft", "bifc", "c2r"),
    ):
        entries.append(
            OpSamples(
                f"fft_{name}",
                (
                    *(Sample((A((2, 4), k),)) for k in kinds),
                    Sample((A((3, 5), _main_kind(kinds) if kind == "r2c" else "c"), 6)),
                    Sample((x, 3, 0)),
                    Sample((x,), {"n": 5, "dim": -2, "norm": "ortho"}),
                    Sample((x, None, -1, "forward")),
                    Sample((A((2, 4)).astype(np.float32), None, 1, "backward")),
                    Sample((A((0, 4)),)),
                    Sample((S((2, 4)),)),
                ),
                kinds,
                reference=_fft_ref(name, False, kind),
                lacks=no_scalar,
                skip=no_inplace,
            )
        )
    for name, kinds, kind in (
        ("fftn", "bifc", "c2c"),
        ("ifftn", "bifc", "c2c"),
        ("rfftn", "bif", "r2c"),
        ("irfftn", "bifc", "c2r"),
    ):
        samples = [
            *(Sample((A((2, 3, 4), k),)) for k in kinds),
            Sample((x, (3, 5))),
            Sample((x, 6)),
            Sample((A((2, 3, 4)), None, (0, -1))),
            Sample((A((2, 3, 4)), (-1, 4), (2, 0), "ortho")),
            Sample((x,), {"dim": 0, "norm": "forward"}),
            Sample((A((2, 4)).astype(np.float32),)),
            Sample((A((0, 4)), None, 1)),
            Sample((S((2, 4)),)),
        ]
        lacks = {}
        if kind == "c2c":
            samples += [Sample((A(()),)), Sample((A((2, 3)), None, ()))]
        else:
            lacks = {"0-d": f"{name} must transform at least one dim (as torch.fft.{name}); a 0-d tensor has none"}
        entries.append(
            OpSamples(
                f"fft_{name}",
                tuple(samples),
                kinds,
                reference=_fft_ref(name, True, kind),
                lacks=lacks,
                skip=no_inplace,
            )
        )
    for name in ("fftshift", "ifftshift"):
        fn = getattr(np.fft, name)
        entries.append(
            OpSamples(
                f"fft_{name}",
                (
                    *(Sample((A((2, 5), k),)) for k in "bifc"),
                    Sample((A((3, 4, 5)), 1)),
                    Sample((A((3, 4, 5)), (0, -1))),
                    Sample((A(()),)),
                    Sample((A((0, 3)),)),
                    Sample((S((2, 5)), 0)),
                ),
                "bifc",
                reference=lambda a, dim=None, fn=fn: fn(a, axes=dim) if a.ndim else a.copy(),
                skip=no_inplace,
            )
        )
    return entries


# (at the end: that module builds on the helpers above)
from op_samples_data_dependent import data_dependent_entries  # noqa: E402
from op_samples_linalg import linalg_entries  # noqa: E402
from op_samples_ordering import ordering_entries  # noqa: E402
from op_samples_shape_more import shape_more_entries  # noqa: E402
from op_samples_writes import write_entries  # noqa: E402

OPS: dict[str, OpSamples] = {
    entry.name: entry
    for entry in (
        *_elementwise(),
        *_math(),
        *_scans_and_indexing(),
        *_linalg(),
        *linalg_entries(),
        *ordering_entries(),
        *data_dependent_entries(),
        *shape_more_entries(),
        *write_entries(),
        *_reductions(),
        *_nn(),
        *_shape(),
        *_views(),
        *_random_ops(),
        *_fft(),
    )
}
