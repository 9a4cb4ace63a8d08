"""NN-style ops: softmax, log_softmax, relu, one_hot, cross_entropy and upsample_nearest1d.

Each op is one structured op (meta function + CPU impl in NumPy + CUDA impl in CuPy). Semantics follow PyTorch
(``torch.nn.functional``); values are checked against NumPy references. ``upsample_nearest1d`` is the RFC's own
example of a structured kernel, and shows a meta function that does real work: it validates the arguments and
derives the output length from ``output_size`` or ``scale_factor`` before any data is touched.

Ops that need floating-point arithmetic (softmax, log_softmax, cross_entropy) keep a floating input's dtype
(float16 is computed in float32, then rounded), and compute bool and integer inputs in float64 (NumPy's
``mean`` rule); complex inputs are refused.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor import dtypes
from devtensor import kernel_signatures as _ks
from devtensor.dtypes import DType
from devtensor.errors import ArgumentTypeError, ArgumentValueError, IndexOutOfRangeError, ShapeError
from devtensor.kernels.reduction_family import compute_dtype, float_result
from devtensor.kernels.reductions import logsumexp_body
from devtensor.kernels.ufunc_family import EXTOBJ, QUIET, D, quiet, quiet_extobj
from devtensor.meta import int_arg, memoized, normalize_dim
from devtensor.structured import PlannedSpec, TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = [
    "cross_entropy",
    "log_softmax",
    "one_hot",
    "relu",
    "softmax",
    "upsample_nearest1d",
]

_INT64: Final = dtypes.int64
_FLOAT64: Final = dtypes.float64


# --- softmax, log_softmax --------------------------------------------------------------------------------

_SOFTMAX_COMMON = """
    Shapes: the result has ``self``'s shape; ``dim`` (an int, negative counts from the end; 0 or -1 for a 0-d
    tensor) is the dimension whose slices are normalized.
    Dtypes: floats keep theirs (float16 is computed in float32); bool and integers give float64.
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give the shape and dtype only.
    Variants: functional ``{name}(t, dim)`` / ``t.{name}(dim)`` and out ``{name}(t, dim, out=o)`` (PyTorch's
        out rules); no inplace variant.

    Raises:
        ArgumentTypeError (TypeError): ``dim`` not an int; a complex input.
        IndexError: ``dim`` out of range.
        CastingError (TypeError): the result dtype does not cast (same_kind) to ``out.dtype``.
        DeviceMismatchError, MemoryOverlapError (ValueError): ``out`` on another device or overlapping ``self``.
"""


class SoftmaxPlan:
    """What ``softmax``'s and ``log_softmax``'s meta function computes for the kernel they share.

    Attributes: ``axis`` (the normalised dim; None for a 0-d tensor), ``log`` (log_softmax), ``compute`` (the
    dtype to compute in: the result's, float32 for float16)."""

    __slots__ = ("axis", "compute", "log")  # (not a NamedTuple: see devtensor.kernels.reduction_family)

    def __init__(self, axis: int | None, log: bool, compute: DType) -> None:
        self.axis = axis
        self.log = log
        self.compute = compute


def _softmax_meta(op: str, self: TensorMeta, dim: object) -> PlannedSpec[SoftmaxPlan]:
    d = normalize_dim(op, dim, self.ndim)
    dtype = float_result(op, self.dtype, "self")
    return PlannedSpec(
        self.shape, dtype, SoftmaxPlan(d if self.ndim else None, op == "log_softmax", compute_dtype(dtype))
    )


@structured_op(inplace=False)
def softmax(self: TensorMeta, dim: int) -> PlannedSpec[SoftmaxPlan]:
    """``exp(self) / sum(exp(self))`` along ``dim`` (``torch.softmax`` / ``torch.nn.functional.softmax``),
    computed stably: each slice's maximum is subtracted first, so huge logits (1e30) give exact results
    instead of inf/inf. A slice of only ``-inf`` gives nan, as PyTorch.
    """
    return _softmax_spec(self, dim)


@memoized
def _softmax_spec(self: TensorMeta, dim: int) -> PlannedSpec[SoftmaxPlan]:
    return _softmax_meta("softmax", self, dim)


@structured_op(inplace=False)
def log_softmax(self: TensorMeta, dim: int) -> PlannedSpec[SoftmaxPlan]:
    """``self - logsumexp(self)`` along ``dim`` (``torch.log_softmax`` / ``torch.nn.functional.log_softmax``),
    computed stably: ``(x - m) - log(sum(exp(x - m)))`` with ``m`` each slice's maximum, so huge logits stay
    finite and very negative log-probabilities do not underflow to ``-inf`` as ``log(softmax(x))`` would.
    A slice of only ``-inf`` gives nan, as PyTorch.
    """
    return _log_softmax_spec(self, dim)


@memoized
def _log_softmax_spec(self: TensorMeta, dim: int) -> PlannedSpec[SoftmaxPlan]:
    return _softmax_meta("log_softmax", self, dim)


@_ks.log_softmax.xp
@_ks.softmax.xp
def _softmax(xp: ModuleType, self: D, dim: int, *, plan: SoftmaxPlan, out: ConstOut[D]) -> None:
    compute, axis = plan.compute, plan.axis
    o: Any = out.array
    x: Any = self._array
    if x.dtype is not compute:
        x = x.astype(compute)
    if xp is np and o.dtype is compute and axis is not None and not plan.log and x.size and QUIET is not None:
        # The common case, the steps below without their dispatch (the floating-point state set inline):
        # the same NumPy calls on the same arrays, so the same values.
        token = EXTOBJ.set(QUIET.get(EXTOBJ.get()) or quiet_extobj())
        try:
            np.subtract(x, _np_max(x, axis, None, None, keepdims=True), out=o)
            np.exp(o, out=o)
            np.divide(o, _np_sum(o, axis, None, None, keepdims=True), out=o)
        finally:
            EXTOBJ.reset(token)
        return
    if x.size == 0:
        return
    if axis is None:
        # A 0-d tensor is one slice of one element; arithmetic on 0-d arrays gives scalars, so work in 1-d.
        x, o = x.reshape(1), o.reshape(1)
    # Shift by the slice's maximum, whatever it is: a slice holding +inf (or only -inf) then comes out all nan,
    # as in PyTorch.
    # (NumPy: the ufuncs' reduce methods, which np.amax and np.sum call, without those functions' wrappers.)
    amax: Any = _np_max if xp is np else xp.amax
    total: Any = _np_sum if xp is np else xp.sum
    with quiet(xp):
        m = amax(x, axis=axis, keepdims=True)
        work = o if o.dtype == compute else xp.empty(x.shape, compute)
        xp.subtract(x, m, out=work)
        if plan.log:
            s = total(xp.exp(work), axis=axis, keepdims=True)
            xp.log(s, out=s)
            xp.subtract(work, s, out=work)
        else:
            xp.exp(work, out=work)
            s = total(work, axis=axis, keepdims=True)
            xp.divide(work, s, out=work)
        if work is not o:
            xp.copyto(o, work, casting="same_kind")


_np_max: Final = np.maximum.reduce
_np_min: Final = np.minimum.reduce
_np_sum: Final = np.add.reduce


# --- relu ------------------------------------------------------------------------------------------------


@structured_op(out_may_be_input=True)
def relu(self: TensorMeta) -> TensorSpec:
    """``max(self, 0)``, elementwise (``torch.relu``; values as ``np.maximum(self, 0)``: NaN propagates).

    Shapes: the result has ``self``'s shape. Dtypes: integers and floats keep theirs; bool and complex are
    refused (ArgumentTypeError, as PyTorch). Devices: cpu (NumPy), cuda (CuPy), meta (shape and dtype only).
    Variants: functional ``relu(t)`` / ``t.relu()``, out ``relu(t, out=o)`` (may be ``t`` itself) and inplace
    ``relu_(t)`` / ``t.relu_()``, with PyTorch's out and inplace rules.

    Raises:
        ArgumentTypeError (TypeError): a bool or complex input.
        CastingError (TypeError): the result dtype does not cast (same_kind) to ``out.dtype``.
        DeviceMismatchError, MemoryOverlapError, ReadOnlyError (ValueError): as for every elementwise op.
    """
    if self.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"relu: argument 'self' must be an integer or floating tensor, got {self.dtype.name}")
    return (self.shape, self.dtype)


@_ks.relu.xp
def _relu(xp: ModuleType, self: D, *, out: ConstOut[D]) -> None:
    xp.maximum(self._array, 0, out=out.array)


# --- one_hot ---------------------------------------------------------------------------------------------


@structured_op(inplace=False, method=False)
def one_hot(self: TensorMeta, num_classes: int = -1) -> TensorSpec:
    """One-hot encoding of class indices (``torch.nn.functional.one_hot``): ``result[..., k]`` is 1 where
    ``self[...] == k``, else 0.

    Shapes: ``self`` of any shape ``S`` (an integer tensor of class indices) gives ``[*S, num_classes]``.
    Dtypes: any integer input (not bool); the result is int64, as PyTorch's.
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give the shape and dtype only.
    ``num_classes`` must be given (>= 0). PyTorch's default ``-1`` infers it as ``self.max() + 1``, which
    reads the data; a meta function sees only shapes and dtypes, so here ``-1`` is a ValueError that asks for
    ``num_classes`` (pass ``int(t.amax()) + 1`` to get PyTorch's inference).
    Variants: functional and out (``one_hot(t, n, out=o)``); no inplace variant, no Tensor method (as PyTorch).

    Raises:
        ArgumentTypeError (TypeError): a non-integer ``self``; ``num_classes`` not an int.
        ValueError: ``num_classes`` is -1 (needs the data) or below -1.
        IndexError: an index of ``self`` outside ``[0, num_classes)`` (raised by the impl before any write).
        CastingError (TypeError), DeviceMismatchError, MemoryOverlapError (ValueError): the out rules.
    """
    return _one_hot_spec(self, num_classes)


@memoized
def _one_hot_spec(self: TensorMeta, num_classes: int = -1) -> TensorSpec:
    if self.dtype.kind not in "iu":
        raise ArgumentTypeError(
            f"one_hot: argument 'self' must be an integer tensor of class indices, got dtype {self.dtype.name}"
        )
    n = int_arg("one_hot", "num_classes", num_classes)
    if n == -1:
        raise ArgumentValueError(
            "one_hot: num_classes=-1 (infer it as self.max() + 1, as PyTorch does) needs the tensor's data, which "
            "a meta function cannot read; pass num_classes explicitly, e.g. one_hot(t, int(t.amax()) + 1)"
        )
    if n < 0:
        raise ArgumentValueError(f"one_hot: argument 'num_classes' must be >= 0, got {n}")
    return ((*self.shape, n), _INT64)


def _check_classes(xp: Any, op: str, arg: str, idx: Any, n: int) -> None:
    """IndexError when an element of the integer array ``idx`` is outside ``[0, n)`` (one device sync)."""
    if idx.size == 0:
        return
    if xp is np:
        # One reduce: seen as unsigned, a negative index is at least 2**(bits - 1), above every valid one when
        # n is at most that (the reduce method np.amax calls, without its wrapper); the bad value itself is
        # looked up only for the message.
        twin = _UNSIGNED.get(idx.dtype)
        if twin is None:  # (unsigned)
            if int(_np_max(idx, None)) < n:
                return
        elif n <= twin[1] and int(_np_max(idx.view(twin[0]), None)) < n:
            return
        lo, hi = int(_np_min(idx, None)), int(_np_max(idx, None))
    else:
        lo, hi = int(xp.amin(idx)), int(xp.amax(idx))
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise IndexOutOfRangeError(
            f"{op}: class index {bad} in argument '{arg}' is out of bounds for {n} classes [0, {n})"
        )


#: Each signed integer dtype's unsigned twin (same size) and the least negative value seen through it
#: (2**(bits - 1)), for :func:`_check_classes`'s view.
_UNSIGNED: Final = {np.dtype(f"i{k}"): (np.dtype(f"u{k}"), 1 << (8 * k - 1)) for k in (1, 2, 4, 8)}


@_ks.one_hot.xp
def _one_hot(xp: ModuleType, self: D, num_classes: int, *, out: ConstOut[D]) -> None:
    idx, o = self._array, out.array
    _check_classes(xp, "one_hot", "self", idx, num_classes)
    if o.size == 0:
        return
    # Indices are in [0, n) now, so int64 holds them whatever their dtype (uint64 included).
    xp.equal(idx.astype(_INT64, copy=False)[..., None], xp.arange(num_classes, dtype=_INT64), out=o)


# --- cross_entropy ---------------------------------------------------------------------------------------


@structured_op(inplace=False, method=False)
def cross_entropy(input: TensorMeta, target: TensorMeta) -> TensorSpec:
    """Mean cross-entropy loss of logits and class indices (``torch.nn.functional.cross_entropy`` with
    ``reduction='mean'``, no weights, no ignore_index, no label smoothing):
    ``mean_i(logsumexp(input[i, :]) - input[i, target[i]])``, computed stably (log-softmax with the row maximum
    subtracted, so huge logits do not overflow).

    Shapes: ``input`` ``[N, C]`` (logits: N samples, C classes), ``target`` ``[N]``; the result is 0-d.
    Dtypes: ``input`` floating keeps its dtype (float16 computed in float32); bool/integer logits give float64;
    ``target`` any integer dtype (PyTorch wants int64; any integer is accepted). With N = 0 the loss is nan (the
    mean of nothing, as PyTorch), with NumPy's RuntimeWarning on the CPU.
    Devices: cpu (NumPy), cuda (CuPy), both tensors on one device; meta tensors give shape and dtype only.
    Variants: functional and out (``cross_entropy(x, t, out=o)``, ``o`` 0-d or resized); no inplace variant.

    Raises:
        ShapeError (ValueError): ``input`` not 2-d, or ``target`` not ``[N]``; names both shapes.
        ArgumentTypeError (TypeError): ``target`` not an integer tensor; complex ``input``.
        IndexError: a target class outside ``[0, C)`` (raised by the impl before any write, as PyTorch).
        CastingError (TypeError), DeviceMismatchError, MemoryOverlapError (ValueError): the out rules.
    """
    return _cross_entropy_spec(input, target)


@memoized
def _cross_entropy_spec(input: TensorMeta, target: TensorMeta) -> TensorSpec:
    if input.ndim != 2:
        raise ShapeError(
            f"cross_entropy: argument 'input' must be 2-d logits [N, C], got shape {list(input.shape)} "
            f"(target shape {list(target.shape)})"
        )
    if target.shape != input.shape[:1]:
        raise ShapeError(
            f"cross_entropy: argument 'target' must have shape [N] = {list(input.shape[:1])} for input of shape "
            f"{list(input.shape)}, got {list(target.shape)}"
        )
    if target.dtype.kind not in "iu":
        raise ArgumentTypeError(
            "cross_entropy: argument 'target' must be an integer tensor of class indices, "
            f"got dtype {target.dtype.name}"
        )
    return ((), float_result("cross_entropy", input.dtype, "input"))


@_ks.cross_entropy.xp
def _cross_entropy(xp: ModuleType, input: D, target: D, *, out: ConstOut[D]) -> None:
    x, t = input._array, target._array
    o: Any = out.array
    n, c = x.shape
    _check_classes(xp, "cross_entropy", "target", t, c)
    compute = _CE_COMPUTE.get(x.dtype)
    if compute is None:
        compute = _CE_COMPUTE[x.dtype] = compute_dtype(float_result("cross_entropy", x.dtype, "input"))
    if x.dtype is not compute:
        x = x.astype(compute)
    if xp is not np:
        with quiet(xp):
            if n == 0:
                xp.copyto(o, xp.mean(xp.empty((0,), compute)), casting="same_kind")
                return
            lse = xp.empty((n,), compute)
            logsumexp_body(xp, x, 1, lse)
            picked = xp.take_along_axis(x, t.astype(_INT64, copy=False)[:, None], axis=1)[:, 0]
            xp.subtract(lse, picked, out=lse)
            xp.copyto(o, xp.mean(lse), casting="same_kind")
        return
    if n == 0:
        # The mean over no samples: nan, with NumPy's "Mean of empty slice" warning.
        with quiet():
            np.copyto(o, np.mean(np.empty((0,), compute)), casting="same_kind")
        return
    # logsumexp_body's steps, each row's maximum and sum computed once and used in place; then the target
    # logits by fancy indexing with a cached row index, and the mean as np.mean computes it (the sum divided by
    # the count, as an intp, then cast to the sum's dtype). The values are the general path's, bit for bit:
    # that path replaces a non-finite row maximum by 0 first, and a non-finite maximum always makes the total
    # non-finite (nan), so a finite total needed no replacement and a non-finite one is computed again with it.
    token = EXTOBJ.set(QUIET.get(EXTOBJ.get()) or quiet_extobj()) if QUIET is not None else None  # (quiet())
    try:
        if token is None:  # pragma: no cover (NumPy 2 has the state variable)
            with quiet():
                _cross_entropy_mean(x, t, n, o)
            return
        _cross_entropy_mean(x, t, n, o)
    finally:
        if token is not None:
            EXTOBJ.reset(token)


def _cross_entropy_mean(x: Any, t: Any, n: int, o: Any) -> None:
    m = _np_max(x, 1, None, None, keepdims=True)
    total = _ce_total(x, t, n, m)
    if not math.isfinite(total):
        total = _ce_total(x, t, n, np.where(np.isfinite(m), m, 0))
    _np_copyto(o, total.dtype.type(total / _intp(n)), casting="same_kind")


#: Each input dtype's compute dtype (what float_result and compute_dtype give; both only read the dtype).
_CE_COMPUTE: Final[dict[Any, Any]] = {}
#: np.copyto without its __array_function__ dispatcher (cross_entropy passes it plain arrays only).
_np_copyto: Final = getattr(np.copyto, "_implementation", np.copyto)


def _ce_total(x: Any, t: Any, n: int, m: Any) -> Any:
    """The sum over rows of ``logsumexp(x[i] - m[i]) + m[i] - x[i, t[i]]`` (a NumPy scalar of x's dtype)."""
    e = np.subtract(x, m)
    np.exp(e, out=e)
    s = _np_sum(e, 1, None, None, keepdims=True)
    np.log(s, out=s)
    np.add(s, m, out=s)
    lse = s.reshape(n)
    np.subtract(lse, x[_rows(n), t], out=lse)
    return _np_sum(lse)


_intp: Final = np.intp


@functools.lru_cache(maxsize=64)
def _rows(n: int) -> np.ndarray[Any, np.dtype[np.intp]]:
    """``arange(n)``, read-only and cached: the row index of cross_entropy's target logits."""
    rows = np.arange(n)
    rows.flags.writeable = False
    return rows


# --- upsample_nearest1d ----------------------------------------------------------------------------------


def _upsample_length(length: int, output_size: object, scale_factor: object) -> int:
    """``L_out`` from exactly one of ``output_size`` and ``scale_factor`` (see :func:`upsample_nearest1d`)."""
    op = "upsample_nearest1d"
    if (output_size is None) == (scale_factor is None):
        given = "both" if output_size is not None else "neither"
        raise ArgumentValueError(f"{op}: exactly one of 'output_size' and 'scale_factor' must be given, got {given}")
    if output_size is not None:
        if isinstance(output_size, Sequence) and not isinstance(output_size, (str, bytes)):
            # PyTorch's int[1]: a sequence of exactly one int
            if len(output_size) != 1:
                raise ArgumentValueError(
                    f"{op}: argument 'output_size' must be an int or a sequence of one int (one length for a 1-d "
                    f"signal), got a {type(output_size).__name__} of {len(output_size)} items {output_size!r}"
                )
            item = output_size[0]
            if isinstance(item, bool) or not isinstance(item, int):
                raise ArgumentTypeError(
                    f"{op}: argument 'output_size' must be an int or a sequence of one int, got "
                    f"{type(output_size).__name__} {output_size!r} holding {type(item).__name__} {item!r}"
                )
            output_size = item
        out_len = int_arg(op, "output_size", output_size)
        if out_len <= 0:
            raise ArgumentValueError(f"{op}: argument 'output_size' must be > 0, got {out_len}")
        return out_len
    if isinstance(scale_factor, (np.integer, np.floating)):
        scale_factor = scale_factor.item()  # a NumPy number counts as its Python value
    if isinstance(scale_factor, bool) or not isinstance(scale_factor, (int, float)):
        raise ArgumentTypeError(
            f"{op}: argument 'scale_factor' must be a float, got {type(scale_factor).__name__} {scale_factor!r}"
        )
    if not math.isfinite(scale_factor) or scale_factor <= 0:
        raise ArgumentValueError(f"{op}: argument 'scale_factor' must be finite and > 0, got {scale_factor!r}")
    out_len = math.floor(length * scale_factor)
    if out_len <= 0:
        raise ArgumentValueError(
            f"{op}: scale_factor={scale_factor!r} on an input of length {length} gives an output length of "
            f"floor({length} * {scale_factor!r}) = {out_len}; it must be > 0"
        )
    return out_len


@functools.lru_cache(maxsize=256)
def _nearest_indices(
    length: int, out_len: int, scale_factor: float | None, double: bool
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The source index of every output position (read-only, cached), as PyTorch's CPU nearest kernel computes
    it: in its opmath type, float64 for float64 input (``double``), else float32."""
    dst = np.arange(out_len, dtype=np.int64)
    if scale_factor is None and out_len == length and length <= _EXACT_F32:
        src = dst  # (the general rule gives j: scale 1 and j held exactly in both float types)
    elif scale_factor is None and out_len == 2 * length and out_len <= _EXACT_F32:
        src = dst >> 1  # (likewise: scale 0.5, exact products)
    else:
        # scale = L / L_out (or 1 / scale_factor, computed in float64) in the opmath type; the product j * scale
        # in it too; then floor of that product taken as a float32 (PyTorch calls floorf on it, which rounds a
        # float64 product to float32 first: with L = 26, L_out = 22, j = 11 the float64 product 13.0 gives 13,
        # the float32 one 12.999999 gives 12).
        opmath = np.dtype(np.float64 if double else np.float32)
        if scale_factor is None:
            scale = np.divide(np.asarray(length, opmath), np.asarray(out_len, opmath), dtype=opmath)
        else:
            scale = np.asarray(1.0 / scale_factor, opmath)
        product = np.multiply(dst.astype(opmath), scale, dtype=opmath)
        src = np.minimum(np.floor(product.astype(np.float32)).astype(np.int64), length - 1)
    src.flags.writeable = False
    return src


#: Ints up to 2**24 are exact in float32.
_EXACT_F32: Final = 1 << 24


@structured_op(inplace=False, method=False)
def upsample_nearest1d(
    self: TensorMeta, output_size: int | Sequence[int] | None = None, scale_factor: float | None = None
) -> TensorSpec:
    """Nearest-neighbour upsampling (or downsampling) of the last dimension of a batch of 1-d signals
    (``torch.nn.functional.interpolate(mode='nearest')`` / ``aten::upsample_nearest1d``, PyTorch's legacy
    ``nearest`` rule, not ``nearest-exact``).

    This is the example op of PyTorch's structured-kernels RFC, and its meta function is where the work of
    a structured op lives: it checks every argument and computes the result's shape and dtype from metadata
    alone, so the impls only fill ``out`` and meta tensors get exact shapes with no data.

    Arguments (exactly one of ``output_size`` and ``scale_factor``):
        self: ``[N, C, L]`` (batch, channels, length), any dtype; ``L`` must be > 0. ``N`` or ``C`` may be 0
            (an empty result).
        output_size: the output length ``L_out``: an int > 0, or a sequence of one such int (PyTorch's
            ``int[1]``: ``[6]``, ``(6,)``).
        scale_factor: a positive finite number; ``L_out = floor(L * scale_factor)``, which must be > 0.
    Semantics (for every ``n``, ``c`` and output position ``j`` in ``[0, L_out)``):
        ``result[n, c, j] = self[n, c, src(j)]`` with
        ``src(j) = min(floor(j * (L / L_out)), L - 1)`` when ``output_size`` is given, or
        ``src(j) = min(floor(j * (1 / scale_factor)), L - 1)`` when ``scale_factor`` is given (PyTorch uses the
        scale itself, not ``L / L_out``, when one is given, so e.g. ``L = 3, scale_factor = 1.5`` gives
        ``L_out = 4`` and sources ``[0, 0, 1, 2]``), both evaluated as PyTorch's CPU kernel does, so the
        indices match PyTorch's: the scale and the product ``j * scale`` in the input's opmath type (float64
        for float64 input, float32 for every other dtype, as PyTorch for float32, float16 and uint8), the
        product then rounded to float32 and floored. So ``L = 26, L_out = 22`` gives source 13 at ``j = 11``
        for float64 input and 12 for float32.
    Shapes: ``[N, C, L]`` -> ``[N, C, L_out]``. Dtypes: the input's (values are copied, never computed).
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give the shape and dtype only.
    Variants: functional and out (``upsample_nearest1d(t, 8, out=o)``); no inplace variant (the shape changes).

    Raises:
        ShapeError (ValueError): ``self`` is not 3-d, or ``L`` is 0.
        ValueError: neither or both of ``output_size``/``scale_factor``; ``output_size <= 0``; a
            ``scale_factor`` that is not finite and positive, or gives ``L_out = 0``; an ``output_size``
            sequence of other than one item.
        ArgumentTypeError (TypeError): ``output_size`` not an int (nor a sequence of one int), ``scale_factor``
            not a number.
        CastingError (TypeError), DeviceMismatchError, MemoryOverlapError (ValueError): the out rules.
    """
    return _upsample_nearest1d_spec(self, output_size, scale_factor)


@memoized
def _upsample_nearest1d_spec(
    self: TensorMeta, output_size: int | Sequence[int] | None = None, scale_factor: float | None = None
) -> TensorSpec:
    shape = self.shape
    if len(shape) != 3:
        raise ShapeError(
            f"upsample_nearest1d: argument 'self' must be 3-d [N, C, L] (batch, channels, length), got shape "
            f"{list(shape)}"
        )
    n, c, length = shape
    if length == 0:
        raise ShapeError(
            f"upsample_nearest1d: argument 'self' must have a length L > 0 to sample from, got shape {list(shape)}"
        )
    return ((n, c, _upsample_length(length, output_size, scale_factor)), self.dtype)


@_ks.upsample_nearest1d.xp
def _upsample_nearest1d(
    xp: ModuleType, self: D, output_size: int | Sequence[int] | None, scale_factor: float | None, *, out: ConstOut[D]
) -> None:
    a, o = self._array, out.array
    length = a.shape[2]
    out_len = o.shape[2]
    if o.size == 0:
        return
    src = _nearest_indices(length, out_len, None if output_size is not None else scale_factor, a.dtype == _FLOAT64)
    if xp is not np:
        src = xp.asarray(src)
    if o.dtype == a.dtype:
        xp.take(a, src, axis=2, out=o)
    else:
        xp.copyto(o, xp.take(a, src, axis=2), casting="same_kind")


for _op in (softmax, log_softmax):
    _text = (_op.meta.__doc__ or "").rstrip() + "\n" + _SOFTMAX_COMMON.format(name=_op.name)
    _op.meta.__doc__ = _op.doc = _op.functional.__doc__ = _text
