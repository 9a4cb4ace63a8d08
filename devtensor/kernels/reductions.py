"""The reductions: sum, prod, amax, amin, argmax, argmin, all and any (the statistics, mean, var, std and
logsumexp, are in :mod:`devtensor.kernels.statistics`, re-exported here).

Each op is one entry of the reduction family (:mod:`devtensor.kernels.reduction_family`), which shares the
``dim``/``keepdim``/``dtype`` rules and generates the meta function, the kernel (NumPy's or CuPy's function of
the op's name) and the docstring. Values and result dtypes follow NumPy 2 (``np.sum``, ...); argument names and
the out rules follow PyTorch. Functional and out variants are generated (``sum(t, 1)``, ``sum(t, 1, out=o)``,
``t.sum(1)``); reductions have no inplace variant, and an out may not alias the input.
"""

from __future__ import annotations

import numpy as np

from devtensor import dtypes
from devtensor.kernels.reduction_family import fixed, like_numpy, reduced_shape, reduction, reduction_dims, same_dtype

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "logsumexp",
    "logsumexp_body",
    "mean",
    "prod",
    "reduced_shape",
    "reduction_dims",
    "std",
    "sum",
    "var",
]

_SUM_DOC = """Sum of the elements over ``dim`` (``torch.sum``; values and dtypes as ``np.sum``).

    Result dtype: NumPy 2's for ``np.sum``: bool and signed integers give int64, unsigned integers uint64,
    floats and complex keep theirs; with ``dtype=`` that dtype. The sum over an empty dimension is 0.
    """

_PROD_DOC = """Product of the elements over ``dim`` (``torch.prod``; values and dtypes as ``np.prod``).

    Result dtype: NumPy 2's for ``np.prod`` (bool and signed integers give int64, unsigned integers uint64,
    floats and complex keep theirs; integers wrap around on overflow as NumPy's); with ``dtype=`` that dtype.
    The product over an empty dimension is 1.
    """

_EXTREMUM_DOC = """{Which} of the elements over ``dim`` (``torch.a{op}``; values as ``np.a{op}``: NaN propagates).

    Result dtype: the input's. Reducing over a dimension of size 0 (or, with ``dim=None``, an empty tensor)
    is a ShapeError (a ValueError, as NumPy raises) naming the dim. Complex inputs are refused (as PyTorch).
    """

_ARG_DOC = """Index of the {which} along ``dim`` (``torch.arg{op}``; values as ``np.arg{op}``: the first {adj}
    element wins, and the first NaN counts as the {which}).

    ``dim=None`` gives the index into the flattened tensor (0-d result; with ``keepdim`` every dimension of
    size 1, as NumPy's ``keepdims``). Result dtype: int64. Reducing over a dimension of size 0 (or an empty
    tensor with ``dim=None``) is a ShapeError (a ValueError, as NumPy raises) naming the dim. Complex inputs
    are refused (as PyTorch).
    """
_AMAX_DOC = _EXTREMUM_DOC.format(Which="Maximum", op="max")
_AMIN_DOC = _EXTREMUM_DOC.format(Which="Minimum", op="min")
_ARGMAX_DOC = _ARG_DOC.format(which="maximum", op="max", adj="maximal")
_ARGMIN_DOC = _ARG_DOC.format(which="minimum", op="min", adj="minimal")

_ALL_DOC = """Whether every element over ``dim`` is true (non-zero) (``torch.all``; values as ``np.all``).

    Result dtype: bool, for every input dtype (NaN counts as true). Over an empty dimension the result is True.
    """

_ANY_DOC = """Whether any element over ``dim`` is true (non-zero) (``torch.any``; values as ``np.any``).

    Result dtype: bool, for every input dtype (NaN counts as true). Over an empty dimension the result is False.
    """

sum = reduction("sum", like_numpy(np.sum), dtype_arg=True, doc=_SUM_DOC)
prod = reduction("prod", like_numpy(np.prod), dtype_arg=True, doc=_PROD_DOC)
amax = reduction("amax", same_dtype, ordered=True, nonempty=True, doc=_AMAX_DOC)
amin = reduction("amin", same_dtype, ordered=True, nonempty=True, doc=_AMIN_DOC)
argmax = reduction("argmax", fixed(dtypes.int64), single_dim=True, ordered=True, nonempty=True, doc=_ARGMAX_DOC)
argmin = reduction("argmin", fixed(dtypes.int64), single_dim=True, ordered=True, nonempty=True, doc=_ARGMIN_DOC)
all = reduction("all", fixed(dtypes.bool_), doc=_ALL_DOC)
any = reduction("any", fixed(dtypes.bool_), doc=_ANY_DOC)

# The statistics, after the reductions (definition order is the registry's and the generated files').
from devtensor.kernels.statistics import logsumexp, logsumexp_body, mean, std, var  # noqa: E402
