"""cross_entropy's CPU array kernel (:func:`_cross_entropy_cpu`: the op's direct path and the body of its CPU
kernel) and the array steps its lowering calls (:func:`_finite_total`, :func:`_classes_below`); the op, its
meta function, its xp kernel and its lowering are in :mod:`devtensor.kernels.nn`. Follows PyTorch's
``torch.nn.functional.cross_entropy`` with class indices and mean reduction."""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Final

import numpy as np

from devtensor.kernels.class_indices import check_classes
from devtensor.kernels.reduction_family import compute_dtype, float_result
from devtensor.kernels.ufunc_family import EXTOBJ, QUIET, quiet, quiet_extobj

_np_max: Final = np.maximum.reduce
_np_sum: Final = np.add.reduce


def _cross_entropy_cpu(x: Any, t: Any, out: Any) -> None:
    """cross_entropy's CPU kernel on arrays: logits ``x`` [N, C], class indices ``t`` [N], the 0-d ``out``.

    Also the op's direct path (meta.DIRECT: the fronts call it with the arrays while the built-in CPU
    kernel is the handler, without a ConstOut), so it keeps the floating-point rule itself: every step runs
    quiet (divide, invalid and over ignored, under as the caller has it), and should a condition still surface
    as an error (an underflow the caller made one), the loss is computed again silenced and written before the
    error propagates. The class check comes first, before any write; the cast into an ``out`` narrower than the
    compute dtype runs in the caller's state (an overflow into float16 is reported after the write)."""
    n, c = x.shape
    index = None
    if n and t.dtype in _GATHERS:
        index = _target_index(_rows(n), t, (n, c))  # (the class check with the gather, as the lowering's)
    else:
        check_classes(np, "cross_entropy", "target", t, c)
    compute = _CE_COMPUTE.get(x.dtype)
    if compute is None:
        compute = _CE_COMPUTE[x.dtype] = compute_dtype(float_result("cross_entropy", x.dtype, "input"))
    if x.dtype is not compute:
        x = x.astype(compute)
    narrow = None
    try:
        if n == 0:
            _cross_entropy_empty(compute, out)
            return
        if QUIET is None:  # pragma: no cover (NumPy 2 has the state variable)
            with quiet():
                narrow = _cross_entropy_mean(x, t, n, out, index)
        else:
            caller = EXTOBJ.get()
            token = EXTOBJ.set(QUIET.get(caller) or quiet_extobj())  # (quiet(), inline)
            try:
                narrow = _cross_entropy_mean(x, t, n, out, index)
            finally:
                EXTOBJ.reset(token)
    except (Warning, FloatingPointError):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if n == 0:
                _cross_entropy_empty(compute, out)
            elif (narrow := _cross_entropy_mean(x, t, n, out, index)) is not None:
                _np_copyto(out, narrow, casting="same_kind")
        raise
    if narrow is not None:
        _np_copyto(out, narrow, casting="same_kind")


def _cross_entropy_empty(compute: Any, o: Any) -> None:
    """The loss over no samples: nan (np.mean's, written first), then NumPy's "Mean of empty slice" warning."""
    with quiet(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _np_copyto(o, np.mean(np.empty((0,), compute)), casting="same_kind")
    with quiet():
        np.mean(np.empty((0,), compute))


def _cross_entropy_mean(x: Any, t: Any, n: int, o: Any, index: Any = None) -> Any:
    # logsumexp_body's steps, each row's maximum and sum computed once and used in place; then the target logits
    # by fancy indexing with a cached row index, and the mean as np.mean computes it. The values are the general
    # path's, bit for bit: that path replaces a non-finite row maximum by 0 first, and a non-finite maximum always
    # makes the total non-finite (nan), so a finite total needed no replacement and a non-finite one is computed
    # again with it.
    m = _np_max(x, 1, None, None, keepdims=True)
    total = _ce_total(x, t, n, m, index)
    if not math.isfinite(total):
        total = _ce_total(x, t, n, np.where(np.isfinite(m), m, 0), index)
    # np.mean's last step: the sum (of x's dtype) divided by the count as an intp, which NumPy computes in
    # float64 (float32 / int64 promotes), then converted back to the sum's dtype; here as Python floats, the
    # same float64 division (floats up to float64; n is exact in a float64). Written straight when out has
    # the compute dtype (a float64 stored into it rounds as the conversion does).
    # Returns None when written, or the loss (of x's dtype) that the caller casts into an o of another dtype.
    mean = float(total) / n
    if o.dtype is not total.dtype:
        return total.dtype.type(mean)
    o[()] = mean
    return None


def _classes_below(unsigned: Any, c: int, t: Any) -> None:
    """:func:`check_classes` for a signed integer ``t`` and ``c`` classes, ``unsigned`` its unsigned twin: one
    reduce of ``t`` seen as unsigned (a negative index is then above every valid one); the full check, which
    raises naming the bad index, only when some index is out of range."""
    if _np_max(t.view(unsigned), None) >= c:
        check_classes(np, "cross_entropy", "target", t, c)


def _finite_total(x: Any, t: Any, n: int, m: Any) -> Any:
    """The loss's total (a NumPy scalar of x's dtype) computed again with each non-finite row maximum of ``m``
    replaced by 0, as the general path computes it: the lowered replay's data-dependent step, taken when the total
    it computed is not finite (see :func:`_cross_entropy_mean`)."""
    return _ce_total(x, t, n, np.where(np.isfinite(m), m, 0))


#: Each input dtype's compute dtype (what float_result and compute_dtype give; both only read the dtype).
_CE_COMPUTE: Final[dict[Any, Any]] = {}
#: The target dtypes whose classes are checked by ravel_multi_index (those it casts to intp).
_GATHERS: Final = frozenset(np.dtype(k) for k in np.typecodes["AllInteger"] if np.can_cast(k, np.intp))
#: np.ravel_multi_index without its __array_function__ dispatcher (plain arrays only).
_ravel_multi_index: Final = getattr(np.ravel_multi_index, "_implementation", np.ravel_multi_index)


def _target_index(rows: Any, t: Any, shape: tuple[int, int]) -> Any:
    """The target logits' flat indices in logits of ``shape`` [N, C] (C order), ``rows`` ``arange(N)``: the class
    check folded into the gather, since ravel_multi_index raises for an index outside [0, C), a negative one too;
    check_classes then raises the op's IndexError naming it."""
    try:
        return _ravel_multi_index((rows, t), shape)
    except ValueError:
        check_classes(np, "cross_entropy", "target", t, shape[1])
        raise


#: np.copyto without its __array_function__ dispatcher (cross_entropy passes it plain arrays only).
_np_copyto: Final = getattr(np.copyto, "_implementation", np.copyto)


def _ce_total(x: Any, t: Any, n: int, m: Any, index: Any = None) -> Any:
    """The sum over rows of ``logsumexp(x[i] - m[i]) + m[i] - x[i, t[i]]`` (a NumPy scalar of x's dtype);
    ``index``: the target logits' flat indices in x (C order), when the caller has them."""
    e = np.subtract(x, m)
    np.exp(e, out=e)
    s = _np_sum(e, 1, None, None, keepdims=True)
    np.log(s, out=s)
    np.add(s, m, out=s)
    lse = s.reshape(n)
    np.subtract(lse, x[_rows(n), t] if index is None else x.take(index), out=lse)
    return _np_sum(lse)


@functools.lru_cache(maxsize=64)
def _rows(n: int) -> np.ndarray[Any, np.dtype[np.intp]]:
    """``arange(n)``, read-only and cached: the row index of cross_entropy's target logits."""
    rows = np.arange(n)
    rows.flags.writeable = False
    return rows
