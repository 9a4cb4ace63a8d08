"""The Array API standard's ``linalg`` extension (2024.12) over :mod:`devtensor.linalg`.

Names, signatures and defaults are the standard's (``axis``/``keepdims``, ``rtol`` alone for ``pinv`` and
``matrix_rank``, ``upper`` for ``cholesky``, no ``UPLO`` for ``eigh``); each function maps its arguments onto a
devtensor op, so it runs on CPU and CUDA tensors alike and dispatch modes and overrides see it. Values, dtypes
and errors are :mod:`devtensor.linalg`'s (``numpy.linalg``'s values); the decompositions return the standard's
named tuples (``QRResult``, ``SVDResult``, ``EighResult``, ``SlogdetResult``, whose fields are the standard's).
``rtol`` is a Python float or None (an array of per-matrix tolerances is not supported).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

import devtensor as _dt
from devtensor import linalg as _la
from devtensor.array_api._functions import matmul, matrix_transpose, tensordot, vecdot
from devtensor.array_api._naming import name_errors
from devtensor.dtypes import check_choice
from devtensor.linalg import EighResult, QRResult, SlogdetResult, SVDResult
from devtensor.tensor import Tensor

__all__ = [
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]


def cholesky(x: Tensor, /, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of each Hermitian positive-definite matrix of ``x`` (lower; ``upper``: its conjugate
    transpose): :func:`devtensor.linalg.cholesky`."""
    return _la.cholesky(x, upper=upper)


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``axis`` (``x1`` and ``x2`` broadcast, of any numbers of dims: the
    standard's rule, where :func:`devtensor.linalg.cross` wants one number of dims, as PyTorch)."""
    if isinstance(x1, Tensor) and isinstance(x2, Tensor) and x1.ndim != x2.ndim:
        ndim = max(x1.ndim, x2.ndim)
        x1, x2 = (x.reshape((1,) * (ndim - x.ndim) + tuple(x.shape)) for x in (x1, x2))
    return _la.cross(x1, x2, dim=operator.index(axis))


def det(x: Tensor, /) -> Tensor:
    """The determinant of each square matrix of ``x``: :func:`devtensor.linalg.det`."""
    return _la.det(x)


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    """The ``offset`` diagonal of each matrix of ``x`` (last two axes), a new array:
    :func:`devtensor.linalg.diagonal`."""
    return _la.diagonal(x, offset=operator.index(offset))


def eigh(x: Tensor, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each Hermitian matrix of ``x`` (its lower triangle read):
    :func:`devtensor.linalg.eigh`."""
    return _la.eigh(x)


def eigvalsh(x: Tensor, /) -> Tensor:
    """The eigenvalues (ascending) of each Hermitian matrix of ``x``: :func:`devtensor.linalg.eigvalsh`."""
    return _la.eigvalsh(x)


def inv(x: Tensor, /) -> Tensor:
    """The inverse of each square matrix of ``x``: :func:`devtensor.linalg.inv`."""
    return _la.inv(x)


def matrix_norm(x: Tensor, /, *, keepdims: bool = False, ord: float | Literal["fro", "nuc"] | None = "fro") -> Tensor:
    """The matrix norm of each matrix of ``x`` (last two axes; ``ord`` None is "fro"):
    :func:`devtensor.linalg.matrix_norm`."""
    return _la.matrix_norm(x, "fro" if ord is None else ord, (-2, -1), keepdims)


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """Each square matrix of ``x`` to the integer power ``n``: :func:`devtensor.linalg.matrix_power`."""
    return _la.matrix_power(x, operator.index(n))


def matrix_rank(x: Tensor, /, *, rtol: float | Tensor | None = None) -> Tensor:
    """The rank of each matrix of ``x``: singular values above ``rtol * s_max`` (``rtol`` default ``eps *
    max(M, N)``; an array ``rtol`` broadcasts against the batch shape): :func:`devtensor.linalg.matrix_rank`."""
    if isinstance(rtol, Tensor):
        _, keep = _kept_singular_values(x, rtol)
        return _dt.sum(keep, -1, dtype=_dt.int64)
    return _la.matrix_rank(x, rtol=rtol)


def _kept_singular_values(x: Tensor, rtol: Tensor) -> tuple[Tensor, Tensor]:
    """The singular values of ``x`` and whether each is above ``rtol * s_max`` (``rtol`` per matrix)."""
    s = _la.svdvals(x)
    if s.shape[-1] == 0:
        batch = np.broadcast_shapes(tuple(s.shape[:-1]), tuple(rtol.shape))
        return s, _dt.zeros((*batch, 0), dtype=_dt.bool, device=s.device)
    cutoff = _dt.mul(_dt.amax(s, -1, True), _dt.unsqueeze(rtol.astype(s.dtype), -1))
    return s, _dt.gt(s, cutoff)


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The outer product of two 1-D arrays: :func:`devtensor.outer`."""
    return _la.outer(x1, x2)


def pinv(x: Tensor, /, *, rtol: float | Tensor | None = None) -> Tensor:
    """The pseudo-inverse of each matrix of ``x`` (singular values at most ``rtol * s_max`` count as 0, ``rtol``
    default ``eps * max(M, N)``; an array ``rtol`` broadcasts against the batch shape):
    :func:`devtensor.linalg.pinv`."""
    if isinstance(rtol, Tensor):
        if min(x.shape[-2:]) == 0:
            batch = np.broadcast_shapes(tuple(x.shape[:-2]), tuple(rtol.shape))
            return _dt.zeros((*batch, x.shape[-1], x.shape[-2]), dtype=_la.pinv(x).dtype, device=x.device)
        u, s, vh = _la.svd(x, full_matrices=False)
        _, keep = _kept_singular_values(x, rtol)
        inverse = _dt.where(keep, _dt.reciprocal(_dt.where(keep, s, 1.0)), 0.0).astype(u.dtype)
        return _dt.matmul(_dt.mul(_dt.conj(vh.mT), _dt.unsqueeze(inverse, -2)), _dt.conj(u.mT))
    return _la.pinv(x, rtol=rtol)


def qr(x: Tensor, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult:
    """The QR decomposition of each matrix of ``x``: :func:`devtensor.linalg.qr` (``mode`` "reduced" or
    "complete")."""
    check_choice("qr", "mode", mode, ("reduced", "complete"))
    return _la.qr(x, mode)


def slogdet(x: Tensor, /) -> SlogdetResult:
    """Sign and natural log of the absolute determinant of each square matrix of ``x``:
    :func:`devtensor.linalg.slogdet`."""
    return _la.slogdet(x)


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The solution of ``x1 @ X = x2`` (``x2`` 1-D: a vector; else a batch of matrices, batch axes broadcast: the
    standard's rule): :func:`devtensor.linalg.solve`, which reads an ``x2`` of shape ``x1.shape[:-1]`` as a batch of
    vectors (PyTorch's rule); here such an ``x2`` is a matrix, given a leading batch axis of 1 to say so."""
    if isinstance(x1, Tensor) and isinstance(x2, Tensor) and x2.ndim > 1 and tuple(x2.shape) == tuple(x1.shape[:-1]):
        x2 = x2.reshape((1, *x2.shape))
    return _la.solve(x1, x2)


def svd(x: Tensor, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition of each matrix of ``x``: :func:`devtensor.linalg.svd`."""
    return _la.svd(x, full_matrices)


def svdvals(x: Tensor, /) -> Tensor:
    """The singular values (descending) of each matrix of ``x``: :func:`devtensor.linalg.svdvals`."""
    return _la.svdvals(x)


def trace(x: Tensor, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """The sum of the ``offset`` diagonal of each matrix of ``x`` (integers of less than 64 bits widen to
    int64/uint64, as ``sum``): :func:`devtensor.linalg.trace`."""
    return _la.trace(x, operator.index(offset), dtype=dtype)


def vector_norm(
    x: Tensor,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    keepdims: bool = False,
    ord: float = 2,
) -> Tensor:
    """The vector ``ord``-norm over ``axis`` (all axes when None): :func:`devtensor.linalg.vector_norm`."""
    dims: int | Sequence[int] | None = axis
    return _la.vector_norm(x, ord, dims, keepdims)


# Errors name the standard's function and arguments (xp.linalg...., 'axis'), not devtensor's op.
name_errors(globals(), __all__, "linalg.")
