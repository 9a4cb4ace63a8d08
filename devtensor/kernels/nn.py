"""NN-style ops: softmax, log_softmax, cross_entropy and upsample_nearest1d (relu: :mod:`devtensor.kernels.activations`;
one_hot: :mod:`devtensor.kernels.encoding`).

Each op is one structured op (meta function + CPU impl in NumPy + CUDA impl in CuPy). Semantics follow PyTorch
(``torch.nn.functional``); values are checked against NumPy references. ``upsample_nearest1d``, the RFC's own
example of a structured kernel, is defined in :mod:`devtensor.kernels.upsample` and re-exported here.

Ops that need floating-point arithmetic (softmax, log_softmax, cross_entropy) keep a floating input's dtype
(float16 is computed in float32, then rounded), and compute bool and integer inputs in float64 (NumPy's
``mean`` rule); complex inputs are refused.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final, TypeVar

import numpy as np

from devtensor import dtypes
from devtensor import kernel_signatures as _ks
from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import DType, DTypeLike, to_dtype
from devtensor.errors import ArgumentTypeError, ShapeError
from devtensor.kernels.class_indices import _UNSIGNED, check_classes
from devtensor.kernels.cross_entropy_arrays import (
    _CE_COMPUTE,
    _classes_below,
    _cross_entropy_cpu,
    _finite_total,
    _ravel_multi_index,
    _rows,
)
from devtensor.kernels.reduction_family import compute_dtype, float_result
from devtensor.kernels.reductions import logsumexp_body
from devtensor.kernels.ufunc_family import EXTOBJ, QUIET, D, deferred_conditions, quiet, quiet_extobj
from devtensor.lowering import Local, Lowering, lowers
from devtensor.meta import memoized, normalize_dim, offers_direct, offers_specs
from devtensor.structured import PlannedSpec, TensorSpec, structured_op
from devtensor.structured.core import CORE
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = [
    "cross_entropy",
    "log_softmax",
    "softmax",
    "upsample_nearest1d",
]

_M = TypeVar("_M", bound=Callable[..., Any])
_INT64: Final = dtypes.int64


# --- softmax, log_softmax --------------------------------------------------------------------------------

_SOFTMAX_COMMON = """
    Shapes: the result has ``self``'s shape; ``dim`` (an int, negative counts from the end; 0 or -1 for a 0-d
    tensor) is the dimension whose slices are normalized.
    Dtypes: floats keep theirs (float16 is computed in float32); bool and integers give float64; ``dtype=`` (a
        float dtype; PyTorch's) casts ``self`` first (a complex one too, its imaginary part discarded with
        NumPy's ComplexWarning) and is the result's.
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


#: softmax's and log_softmax's direct paths (see :func:`_softmax_cpu`): [the registered CPU kernel, the array
#: kernel], both set below.
_SOFTMAX_DIRECT: Final[list[Any]] = [None, None]
_LOG_SOFTMAX_DIRECT: Final[list[Any]] = [None, None]


#: softmax's and log_softmax's results for an int dim by (shape, dtype, dim) of ``self``, read by the meta
#: functions before their memoized call (one frame less; the plan only reads the shape and dtype): filled with
#: successful results only, bounded as memoized's memo is.
_SOFTMAX_SPECS: Final[dict[tuple[Any, ...], PlannedSpec[SoftmaxPlan]]] = {}
_LOG_SOFTMAX_SPECS: Final[dict[tuple[Any, ...], PlannedSpec[SoftmaxPlan]]] = {}


def _softmax_meta(op: str, self: TensorMeta, dim: object, dtype_arg: object = None) -> PlannedSpec[SoftmaxPlan]:
    d = normalize_dim(op, dim, self.ndim)
    if dtype_arg is None:
        dtype = float_result(op, self.dtype, "self")
    else:
        # PyTorch's dtype=: the input is cast to it first, so it is the result's dtype (a float dtype); a complex
        # input is cast too (its imaginary part discarded, with NumPy's ComplexWarning; PyTorch warns as well).
        dtype = to_dtype(dtype_arg, op=op)
        if dtype.kind != "f":
            raise ArgumentTypeError(f"{op}: argument 'dtype' must be a floating dtype, got {dtype.name}")
    return PlannedSpec(
        self.shape, dtype, SoftmaxPlan(d if self.ndim else None, op == "log_softmax", compute_dtype(dtype))
    )


@structured_op("softmax", inplace=False)
@offers_direct(_SOFTMAX_DIRECT)
@offers_specs(_SOFTMAX_SPECS)
def softmax(self: TensorMeta, dim: int, dtype: DTypeLike | None = None) -> PlannedSpec[SoftmaxPlan]:
    """``exp(self) / sum(exp(self))`` along ``dim`` (``torch.softmax`` / ``torch.nn.functional.softmax``),
    computed stably: each slice's maximum is subtracted first, so huge logits (1e30) give exact results
    instead of inf/inf. A slice of only ``-inf`` gives nan, as PyTorch. ``dtype``: PyTorch's, a float dtype
    ``self`` is cast to before the op (the result's dtype).
    """
    if type(dim) is int and dtype is None:  # (the memo's hit inline: see _SOFTMAX_SPECS)
        a: Any = self
        spec = _SOFTMAX_SPECS.get((a._shape, a._dtype, dim))
        if spec is not None:
            return spec
    return _softmax_spec(self, dim, dtype)


@memoized
def _softmax_spec(self: TensorMeta, dim: int, dtype: DTypeLike | None) -> PlannedSpec[SoftmaxPlan]:
    if dtype is not None:
        return _softmax_meta("softmax", self, dim, dtype)
    return _remember(_SOFTMAX_SPECS, self, dim, _softmax_meta("softmax", self, dim))


def _remember(
    specs: dict[tuple[Any, ...], PlannedSpec[SoftmaxPlan]], self: TensorMeta, dim: int, spec: PlannedSpec[SoftmaxPlan]
) -> PlannedSpec[SoftmaxPlan]:
    if type(dim) is int:
        a: Any = self
        if len(specs) >= 1024:
            specs.clear()
        specs[(a._shape, a._dtype, dim)] = spec
    return spec


@structured_op("log_softmax", inplace=False)
@offers_direct(_LOG_SOFTMAX_DIRECT)
@offers_specs(_LOG_SOFTMAX_SPECS)
def log_softmax(self: TensorMeta, dim: int, dtype: DTypeLike | None = None) -> PlannedSpec[SoftmaxPlan]:
    """``self - logsumexp(self)`` along ``dim`` (``torch.log_softmax`` / ``torch.nn.functional.log_softmax``),
    computed stably: ``(x - m) - log(sum(exp(x - m)))`` with ``m`` each slice's maximum, so huge logits stay
    finite and very negative log-probabilities do not underflow to ``-inf`` as ``log(softmax(x))`` would.
    A slice of only ``-inf`` gives nan, as PyTorch. ``dtype``: as :func:`softmax`'s.
    """
    if type(dim) is int and dtype is None:
        a: Any = self
        spec = _LOG_SOFTMAX_SPECS.get((a._shape, a._dtype, dim))
        if spec is not None:
            return spec
    return _log_softmax_spec(self, dim, dtype)


@memoized
def _log_softmax_spec(self: TensorMeta, dim: int, dtype: DTypeLike | None) -> PlannedSpec[SoftmaxPlan]:
    if dtype is not None:
        return _softmax_meta("log_softmax", self, dim, dtype)
    return _remember(_LOG_SOFTMAX_SPECS, self, dim, _softmax_meta("log_softmax", self, dim))


@_ks.log_softmax.xp
@_ks.softmax.xp
def _softmax(
    xp: ModuleType, self: D, dim: int, dtype: DTypeLike | None, *, plan: SoftmaxPlan, out: ConstOut[D]
) -> None:
    o: Any = out.array
    if xp is np:
        _softmax_cpu(self._array, plan, o)
        return
    x: Any = self._array
    with deferred_conditions():  # (a cast for dtype= and the narrowing into out: reported after the write)
        if x.dtype != plan.compute:
            x = x.astype(plan.compute)
        with quiet(xp):
            work = _softmax_steps(xp, x, plan, o)
        if work is not o:
            xp.copyto(o, work, casting="same_kind")


def _softmax_cpu(x: Any, plan: SoftmaxPlan, o: Any = None) -> Any:
    """softmax's and log_softmax's CPU kernel on arrays: ``x`` the input, ``o`` the result (the meta's shape,
    any dtype ``plan.compute`` casts to same_kind), ``plan`` the meta's :class:`SoftmaxPlan`; returns ``o``.
    ``o`` None: a new C-contiguous result of ``x``'s dtype, for an ``x`` C-contiguous and of the result's
    dtype (the fronts' allocating path).

    Also the ops' direct path (meta.DIRECT: the fronts call it with the arrays and the plan while the
    built-in CPU kernel is the handler, without a ConstOut), so it keeps the floating-point rule itself: every
    step runs quiet (divide, invalid and over ignored, under as the caller has it), and should a condition still
    surface as an error (an underflow the caller made one), the result is computed again silenced and written
    before the error propagates. The cast into an ``o`` of another dtype runs in the caller's state, as every
    op's narrowing write (an overflow into float16 is reported after the write)."""
    compute, axis = plan.compute, plan.axis
    if x.dtype is not compute:
        if o is None:
            o = np.empty(x.shape, x.dtype)
        with deferred_conditions():  # (dtype=: the cast's overflow is reported after the write, as every step's)
            return _softmax_cpu(x.astype(compute), plan, o)
    try:
        if axis is not None and x.size and QUIET is not None and (o is None or o.dtype is compute):
            # The common case, _softmax_steps without its dispatch (the floating-point state set inline):
            # the same NumPy calls on the same arrays, so the same values. A new result is the first step's
            # (C-contiguous, as x is).
            caller = EXTOBJ.get()
            token = EXTOBJ.set(QUIET.get(caller) or quiet_extobj())
            try:
                m = _reduce_max(x, axis, None, None, True)  # (keepdims positionally: no keyword parsing)
                if o is None:
                    o = np.subtract(x, m)
                else:
                    np.subtract(x, m, o)
                work = o
                if plan.log:
                    s = _reduce_sum(np.exp(o), axis, None, None, True)
                    np.log(s, s)
                    np.subtract(o, s, o)
                else:
                    np.exp(o, o)
                    s = _reduce_sum(o, axis, None, None, True)
                    np.divide(o, s, o)
            finally:
                EXTOBJ.reset(token)
        else:
            if o is None:
                o = np.empty(x.shape, compute)
            with quiet():
                work = _softmax_steps(np, x, plan, o)
    except (Warning, FloatingPointError):
        _softmax_recover(x, plan, o)
        raise
    if work is not o:
        np.copyto(o, work, casting="same_kind")
    return o


def _softmax_recover(x: Any, plan: SoftmaxPlan, o: Any) -> None:
    """:func:`_softmax_cpu`'s recovery when a step raised a floating-point condition the caller made an error: the
    steps again, silenced (no callback, no warning), into ``o`` (a new array when None), before the error
    propagates. The C path (devtensor/_core_softmax.h) calls it as the body does, once, then raises the first error."""
    if o is None:
        o = np.empty(x.shape, plan.compute)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        work = _softmax_steps(np, x, plan, o)
        if work is not o:
            np.copyto(o, work, casting="same_kind")


@lowers(_softmax)
def _softmax_lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: SoftmaxPlan) -> bool:
    """softmax's and log_softmax's lowering (devtensor.lowering): :func:`_softmax_cpu`'s common case (input and
    out of the compute dtype, at least one element, a dim) as its NumPy calls, the row maxima and sums (and
    log_softmax's exponentials) in temporaries, in the quiet state. Other calls replay the kernel."""
    x, compute, axis = args["self"], plan.compute, plan.axis
    if axis is None or QUIET is None or x.dtype != compute or out.dtype != compute or 0 in x.shape:
        return False
    kept = tuple(1 if d == axis else size for d, size in enumerate(x.shape))
    m = lw.temp(kept, compute)
    s = lw.temp(kept, compute)
    lw.quiet = True
    lw.call(_reduce_max, x, axis, None, m, True)
    lw.call(np.subtract, x, m, out)
    if plan.log:
        e = lw.temp(x.shape, compute)
        lw.call(np.exp, out, out=e)
        lw.call(_reduce_sum, e, axis, None, s, True)
        lw.call(np.log, s, s)
        lw.call(np.subtract, out, s, out)
    else:
        lw.call(np.exp, out, out)
        lw.call(_reduce_sum, out, axis, None, s, True)
        lw.call(np.divide, out, s, out)
    return True


def _softmax_steps(xp: Any, x: Any, plan: SoftmaxPlan, o: Any) -> Any:
    """The steps of softmax (log_softmax for ``plan.log``) of ``x`` (of ``plan.compute``) into ``o``, in the
    caller's floating-point state; returns the array holding the result: ``o``, or for an ``o`` of another dtype
    a new array of ``plan.compute`` that the caller casts into ``o``."""
    compute, axis = plan.compute, plan.axis
    if x.size == 0:
        return o
    work = o if o.dtype == compute else xp.empty(o.shape, compute)
    if axis is None:  # A 0-d tensor is one slice of one element; 0-d arithmetic gives scalars: work in 1-d.
        x, work = x.reshape(1), work.reshape(1)
    # Shift by the slice's maximum, whatever it is: a slice holding +inf (or only -inf) then comes out all nan,
    # as in PyTorch. (NumPy: the ufuncs' reduce methods, which np.amax and np.sum call, without their wrappers.)
    amax: Any = _np_max if xp is np else xp.amax
    total: Any = _np_sum if xp is np else xp.sum
    m = amax(x, axis=axis, keepdims=True)
    xp.subtract(x, m, out=work)
    if plan.log:
        s = total(xp.exp(work), axis=axis, keepdims=True)
        xp.log(s, out=s)
        xp.subtract(work, s, out=work)
    else:
        xp.exp(work, out=work)
        s = total(work, axis=axis, keepdims=True)
        xp.divide(work, s, out=work)
    return o if o.dtype == compute else work.reshape(o.shape)


_np_max: Final = np.maximum.reduce
_np_sum: Final = np.add.reduce
#: The same reduces, typed Any: NumPy's stubs do not spell a positional keepdims, which the ufunc accepts.
_reduce_max: Final[Any] = np.maximum.reduce
_reduce_sum: Final[Any] = np.add.reduce
if CORE is not None and QUIET is not None:
    # The direct path's common case in C (devtensor/_core_softmax.h): the same NumPy calls in the same state, without
    # this body's frame; every other call it passes to _softmax_cpu.
    _softmax_direct: Any = CORE.softmax_direct(
        EXTOBJ,
        QUIET,
        quiet_extobj,
        _reduce_max,
        _reduce_sum,
        np.subtract,
        np.exp,
        np.log,
        np.divide,
        _softmax_recover,
        _softmax_cpu,
    )
else:
    _softmax_direct = _softmax_cpu
_SOFTMAX_DIRECT[:] = [softmax.table.kernels.get(DispatchKey.CPU), _softmax_direct]
_LOG_SOFTMAX_DIRECT[:] = [log_softmax.table.kernels.get(DispatchKey.CPU), _softmax_direct]


# --- cross_entropy ---------------------------------------------------------------------------------------


#: cross_entropy's direct path (see :func:`_cross_entropy_cpu`): [the registered CPU kernel, the array kernel],
#: both set below.
_CE_DIRECT: Final[list[Any]] = [None, None]


@structured_op("cross_entropy", inplace=False, method=False, public_functional=False)  # (public: devtensor.multi_ops)
@offers_direct(_CE_DIRECT)
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
    if xp is np:
        _cross_entropy_cpu(input._array, target._array, out=out.array)
        return
    x, t = input._array, target._array
    o: Any = out.array
    n, c = x.shape
    check_classes(xp, "cross_entropy", "target", t, c)
    compute = compute_dtype(float_result("cross_entropy", x.dtype, "input"))
    if x.dtype != compute:
        x = x.astype(compute)
    with quiet(xp):
        if n == 0:
            xp.copyto(o, xp.mean(xp.empty((0,), compute)), casting="same_kind")
            return
        lse = xp.empty((n,), compute)
        logsumexp_body(xp, x, 1, lse)
        picked = xp.take_along_axis(x, t.astype(_INT64, copy=False)[:, None], axis=1)[:, 0]
        xp.subtract(lse, picked, out=lse)
        loss = xp.mean(lse)
    xp.copyto(o, loss, casting="same_kind")  # (a narrowing write in the caller's state, as _cross_entropy_cpu's)


@lowers(_cross_entropy)
def _cross_entropy_lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: None) -> bool:
    """cross_entropy's lowering (devtensor.lowering): :func:`_cross_entropy_cpu`'s path for logits of the compute
    dtype, at least one sample and an out of that dtype, decided at plan time: the loss's steps in the quiet
    state into temporaries (the row maxima, the exponentials, the row sums), the class check with the gather of
    the target logits (targets castable to intp; else by one reduce first), both before any write but the
    temporaries', then the total, its data-dependent step (a non-finite total computed again with finite maxima,
    :func:`_finite_total`) and the mean, all written into the replay (no helper frame). Other calls replay the
    kernel."""
    x, t = args["input"], args["target"]
    n, c = x.shape
    compute = _CE_COMPUTE.get(x.dtype) or compute_dtype(float_result("cross_entropy", x.dtype, "input"))
    if QUIET is None or n == 0 or x.dtype != compute or out.dtype != compute:
        return False
    gather = np.can_cast(t.dtype, np.intp)
    if not gather:
        twin = _UNSIGNED.get(t.dtype)
        if twin is not None and c <= twin[1]:  # (check_classes's one reduce, its decisions taken now)
            lw.call(_classes_below, twin[0], c, t)
        else:
            lw.call(check_classes, np, "cross_entropy", "target", t, c)
    m = lw.temp((n, 1), compute)
    e = lw.temp((n, c), compute)
    sums = lw.temp((n, 1), compute)
    lw.quiet = lw.deferred = True
    # (_cross_entropy_mean's steps, the temporaries as out, each row's maximum and sum used in place)
    lw.call(_np_max, x, 1, None, m, True)
    lw.call(np.subtract, x, m, e)
    lw.call(np.exp, e, e)
    lw.call(_np_sum, e, 1, None, sums, True)
    lw.call(np.log, sums, sums)
    lw.call(np.add, sums, m, sums)
    lse, picked, total = sums.reshape(n), Local(), Local()
    if gather:
        # The class check folded into the target logits' gather: their flat indices by ravel_multi_index, which
        # raises for an index outside [0, C) (a negative one too) before any write but the temporaries'
        # (check_classes then raises eager's error); by x's flat view, taken now, when x is a buffer of the plan.
        index = Local()
        lw.line("try: {} = {}(({}, {}), {})", index, _ravel_multi_index, _rows(n), t, (n, c))
        lw.line("except ValueError: {}({}, {}, {}, {}, {}); raise", check_classes, np, "cross_entropy", "target", t, c)
        if isinstance(x, np.ndarray) and x.flags.c_contiguous:
            lw.line("{} = {}[{}]", picked, x.reshape(-1), index)
        else:
            lw.line("{} = {}({}, {})", picked, np.ndarray.take, x, index)
    else:
        lw.line("{} = {}[{}, {}]", picked, x, _rows(n), t)
    lw.call(np.subtract, lse, picked, lse)
    lw.line("{} = {}({})", total, _np_sum, lse)
    lw.line("if not {}({}): {} = {}({}, {}, {}, {})", math.isfinite, total, total, _finite_total, x, t, n, m)
    lw.line("{}[()] = {}({}) / {}", out, float, total, n)  # (np.mean's last step, as _cross_entropy_mean's)
    return True


_CE_DIRECT[1] = _cross_entropy_cpu
_CE_DIRECT[0] = cross_entropy.table.kernels.get(DispatchKey.CPU)
# upsample_nearest1d, the RFC's example op, is defined in devtensor.kernels.upsample (imported at the end).

for _op in (softmax, log_softmax):
    _text = (_op.meta.__doc__ or "").rstrip() + "\n" + _SOFTMAX_COMMON.format(name=_op.name)
    _op.meta.__doc__ = _op.doc = _op.functional.__doc__ = _text

from devtensor.kernels.upsample import upsample_nearest1d  # noqa: E402  (defined after the ops above, as before)
