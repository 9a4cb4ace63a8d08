"""The statistics reductions: mean, var, std and logsumexp (entries of the reduction family, see
:mod:`devtensor.kernels.reduction_family`). Values and result dtypes follow NumPy 2 (``np.mean``, ``np.var``,
``np.std``; ``scipy.special.logsumexp``); argument names and the out rules follow PyTorch.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from devtensor.dtypes import DType
from devtensor.kernels.reduction_family import (
    ReductionPlan,
    compute_dtype,
    float_result,
    floating,
    like_numpy,
    reduction,
)
from devtensor.kernels.ufunc_family import D, quiet
from devtensor.typed import ConstOut

__all__ = ["logsumexp", "logsumexp_body", "mean", "std", "var"]

_MEAN_DOC = """Arithmetic mean of the elements over ``dim`` (``torch.mean``; values and dtypes as ``np.mean``).

    Result dtype: NumPy's for ``np.mean``: bool and integers give float64, floats and complex keep theirs
    (float16 is accumulated in float32, as NumPy does); with ``dtype=`` that dtype (an integer ``dtype``
    gives NumPy's truncated integer mean). The mean over an empty dimension is nan, with NumPy's
    RuntimeWarning ("Mean of empty slice") on the CPU.
    """

_VAR_DOC = """Variance over ``dim``: ``sum(|x - mean|**2) / (N - correction)`` (``torch.var``; values as
    ``np.var`` with ``ddof=correction``).

    ``correction`` (default 1, Bessel's correction, as PyTorch, also for None; 0 gives the population
    variance) is a finite int or float, negative too (as NumPy's ``ddof``). Result dtype: NumPy's for
    ``np.var``: bool and integers give float64, floats keep theirs, complex gives the matching real dtype. When
    ``N - correction <= 0`` the result is inf or nan, with NumPy's RuntimeWarning on the CPU.
    """

_STD_DOC = """Standard deviation over ``dim``: the square root of :func:`var` (``torch.std``; values as ``np.std``
    with ``ddof=correction``).

    ``correction`` (default 1, as PyTorch, also for None) is a finite int or float, negative too (as NumPy's
    ``ddof``).
    Result dtype: NumPy's for ``np.std``: bool and integers give float64, floats keep theirs, complex gives
    the matching real dtype. When ``N - correction <= 0`` the result is inf or nan, with NumPy's
    RuntimeWarning on the CPU.
    """

_LOGSUMEXP_DOC = """``log(sum(exp(self)))`` over ``dim``, computed stably (``torch.logsumexp``; values as
    ``scipy.special.logsumexp``): the maximum ``m`` of each reduced slice is subtracted before ``exp`` and
    added back after ``log``, so huge logits do not overflow.

    Result dtype: floats keep theirs (float16 is computed in float32); bool and integers give float64
    (NumPy's ``mean`` rule); complex keeps its dtype (PyTorch's: shifted by the largest real part, the principal
    branch of the log). A slice of only ``-inf`` gives ``-inf``;
    any ``+inf`` gives ``+inf``; NaN propagates. The logsumexp over an empty dimension is ``-inf`` (the log of
    an empty sum).
    """

mean = reduction("mean", like_numpy(np.mean), dtype_arg=True, float16_in_float32=True, doc=_MEAN_DOC)
var = reduction("var", like_numpy(np.var), correction=True, doc=_VAR_DOC)
std = reduction("std", like_numpy(np.std), correction=True, doc=_STD_DOC)


def logsumexp_body(xp: Any, a: Any, axis: Any, out: Any) -> None:
    """Write the stable logsumexp of ``a`` over ``axis`` (NumPy-style: int, tuple or None) into ``out``.
    Shared with the nn ops; ``xp`` is NumPy or CuPy. Complex ``a`` (PyTorch's): shifted by the largest real
    part, the principal branch of the complex log."""
    compute = a.dtype if a.dtype.kind == "c" else compute_dtype(float_result("logsumexp", a.dtype))
    x = a.astype(compute, copy=False)
    if x.size == 0:
        # Either the result is empty too, or a reduced dim is empty: the log of an empty sum.
        out.fill(-math.inf)
        return
    if x.ndim == 0:
        x = x.reshape(1)  # arithmetic on 0-d arrays gives scalars, which cannot be written in place
    m = xp.amax(x.real if x.dtype.kind == "c" else x, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    e = x - m
    xp.exp(e, out=e)
    s = xp.sum(e, axis=axis, keepdims=True)
    xp.log(s, out=s)
    xp.add(s, m, out=s)
    xp.copyto(out, s.reshape(out.shape), casting="same_kind")


def _logsumexp(xp: ModuleType, self: D, dim: Any, keepdim: bool, *, plan: ReductionPlan, out: ConstOut[D]) -> None:
    with quiet(xp):
        logsumexp_body(xp, self._array, plan.axis, out.array)


def _floating_or_complex(op: str, dtype: DType, arg: DType | None) -> DType:
    """logsumexp's result dtype: complex keeps its dtype (PyTorch's), else :func:`floating`'s rule."""
    return dtype if dtype.kind == "c" else floating(op, dtype, arg)


logsumexp = reduction("logsumexp", _floating_or_complex, kernel=_logsumexp, doc=_LOGSUMEXP_DOC)
