"""The ``devtensor.linalg`` solvers and decompositions: det, slogdet, inv, pinv, solve, cholesky, matrix_power,
matrix_rank, svdvals, eigvalsh (single output) and qr, svd, eigh, slogdet (several outputs).

Each is one op (meta function + one kernel for both devices over ``xp.linalg``: ``numpy.linalg`` or
``cupy.linalg``), named ``linalg_<name>`` in the registry (PyTorch's ATen names) with no top-level function or
Tensor method: :mod:`devtensor.linalg` exposes them under PyTorch's ``torch.linalg`` names and signatures.

Common rules (values follow ``numpy.linalg``):

* Matrices are the last two dimensions; leading dimensions are a batch (broadcast between two operands as
  NumPy's ``solve`` does). A square-matrix op given a non-square or a 1-D input raises ShapeError.
* Dtypes: float32, float64, complex64 and complex128 keep theirs; bool and integers compute in float64 (as
  ``numpy.linalg``); float16 is refused (ArgumentTypeError: LAPACK has no half precision; the norms compute it
  in float32 and give float16, :mod:`devtensor.kernels.linalg_norms`). Real-valued results
  (singular values, eigenvalues of Hermitian matrices, ``logabsdet``) are the real dtype of that precision.
* Errors: a singular matrix (inv, solve), a matrix that is not positive-definite (cholesky), no convergence
  (svd, eigh) raise :class:`~devtensor.errors.LinAlgError` (a RuntimeError, as PyTorch's) naming the op;
  nothing is written then. Non-finite input (inf, nan) to a decomposition (svd, svdvals, pinv, matrix_rank,
  matrix norms of order 2, -2 and 'nuc', eigh, eigvalsh, qr, cholesky; of the triangle read where one is) is
  LinAlgError too, on every device, as PyTorch raises (LAPACK's SVD may never return on an infinity); the
  direct LU-based ops (det, slogdet, inv, solve, matrix_power) give NaN there, as NumPy and PyTorch do.
  CuPy's solvers do not check by default: on CUDA singular or indefinite inputs give inf or nan values
  instead (as ``cupy.linalg`` does outside ``cupyx.errstate(linalg="raise")``).

Decomposition conventions (NumPy's LAPACK routines; PyTorch's agree up to the same freedoms): ``qr`` is
Householder QR with no sign normalisation (R's diagonal may be negative); ``svd`` gives singular values in
descending order, with each pair of singular vectors unique only up to a common sign (a unit phase for complex
input); ``eigh`` gives eigenvalues in ascending order, each eigenvector unique only up to sign (phase), reading
only the ``UPLO`` triangle; ``slogdet`` gives ``det = sign * exp(logabsdet)`` with ``sign`` 0 and
``logabsdet`` -inf for a singular matrix.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Literal, NamedTuple

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dtypes import DType, check_choice, to_dtype
from devtensor.errors import ArgumentTypeError, ArgumentValueError, LinAlgError, ShapeError
from devtensor.kernels.ufunc_family import D
from devtensor.meta import broadcast_shapes
from devtensor.structured import TensorSpec, multi_output_op, structured_op
from devtensor.tensor import Tensor, TensorMeta
from devtensor.typed import ConstOut

__all__ = [
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "decomposition_call",
    "linalg_call",
    "linalg_dtype",
    "real_dtype",
]

_F64 = to_dtype("float64")
_REAL = {to_dtype("complex64"): to_dtype("float32"), to_dtype("complex128"): _F64}


def _fmt(shape: tuple[int, ...]) -> str:
    return str(list(shape))


def linalg_dtype(op: str, dtype: DType, arg: str = "A") -> DType:
    """The dtype ``op`` computes in for an input of ``dtype`` (see the module docstring).

    Raises:
        ArgumentTypeError: float16 (no LAPACK routine), naming the op and the argument.
    """
    if dtype.kind in "fc":
        if dtype.itemsize == 2:
            raise ArgumentTypeError(
                f"{op}: argument '{arg}' of dtype float16 is not supported (linear algebra computes in float32, "
                "float64, complex64 or complex128); convert it first"
            )
        return dtype
    return _F64


def real_dtype(dtype: DType) -> DType:
    """The real dtype of ``dtype``'s precision (complex64 -> float32); real dtypes as they are."""
    return _REAL.get(dtype, dtype)


def _matrices(op: str, A: TensorMeta, arg: str = "A", *, square: bool = False) -> tuple[int, ...]:
    """``A``'s shape, checked to be a (batch of) matrices, square ones with ``square``."""
    s = A.shape
    if len(s) < 2:
        raise ShapeError(f"{op}: argument '{arg}' must have at least 2 dimensions, got shape {_fmt(s)}")
    if square and s[-1] != s[-2]:
        raise ShapeError(f"{op}: argument '{arg}' must be a batch of square matrices, got shape {_fmt(s)}")
    return s


def _array(t: D, dtype: Any) -> Any:
    return t._array.astype(dtype, copy=False)


def _compute(t: D) -> Any:
    """``t``'s array in the dtype the op computes in (the meta function's, whatever the out's dtype)."""
    return t._array.astype(linalg_dtype("linalg", t._array.dtype), copy=False)


def linalg_call(op: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args)``, with ``numpy.linalg.LinAlgError`` (which CuPy raises too) as devtensor's LinAlgError."""
    try:
        return fn(*args, **kwargs)
    except np.linalg.LinAlgError as error:
        raise LinAlgError(f"{op}: {error}") from None


def decomposition_call(op: str, xp: ModuleType, fn: Any, a: Any, *, triangle: str | None = None, **kwargs: Any) -> Any:
    """``fn(a, **kwargs)`` (``a`` an array of ``xp``) for a decomposition (SVD, eigh, QR, Cholesky) after
    checking that ``a`` (only its ``triangle``, ``"L"`` or ``"U"``, for ops that read one) is finite:
    LinAlgError naming ``op`` otherwise, as PyTorch raises for them (LAPACK's iterative SVD may never return on
    an infinity, or gives NaNs silently). Errors of ``fn`` as :func:`linalg_call`."""
    read = a if triangle is None else xp.tril(a) if triangle == "L" else xp.triu(a)
    if not bool(xp.isfinite(read).all()):
        raise LinAlgError(
            f"{op}: the input holds non-finite values (inf or nan); the decomposition is not defined for them"
        )
    return linalg_call(op, fn, a, **kwargs)


def _identity(a: Any) -> None:
    """Fill the stack of matrices ``a`` with identities (ones on the main diagonal; a list index: CuPy and NumPy
    alike)."""
    a[...] = 0
    index = list(range(min(a.shape[-2:])))
    a[..., index, index] = 1


def _mT(a: Any) -> Any:
    return a.swapaxes(-1, -2)


# --- det, inv -----------------------------------------------------------------------------------------------


@structured_op("linalg_det", inplace=False, method=False, public_functional=False)
def linalg_det(A: TensorMeta) -> TensorSpec:
    """The determinant of each square matrix of ``A [..., n, n]``, shape ``[...]`` (``torch.linalg.det``;
    values as ``numpy.linalg.det``: an LU factorisation; a singular matrix gives 0). ``n == 0`` gives 1."""
    s = _matrices("linalg_det", A, square=True)
    return s[:-2], linalg_dtype("linalg_det", A.dtype)


@_ks.linalg_det.xp
def _det(xp: ModuleType, A: D, *, out: ConstOut[D]) -> None:
    a = _compute(A)
    if a.shape[-1] == 0:
        out.array[...] = 1
        return
    out.array[...] = linalg_call("linalg_det", xp.linalg.det, a)


@structured_op("linalg_inv", inplace=False, method=False, public_functional=False)
def linalg_inv(A: TensorMeta) -> TensorSpec:
    """The inverse of each square matrix of ``A [..., n, n]``, same shape (``torch.linalg.inv``; values as
    ``numpy.linalg.inv``). Raises LinAlgError for a singular matrix (on CPU; CUDA gives inf/nan)."""
    s = _matrices("linalg_inv", A, square=True)
    return s, linalg_dtype("linalg_inv", A.dtype)


@_ks.linalg_inv.xp
def _inv(xp: ModuleType, A: D, *, out: ConstOut[D]) -> None:
    a = _compute(A)
    if a.size:
        out.array[...] = linalg_call("linalg_inv", xp.linalg.inv, a)


# --- pinv, matrix_rank, svdvals ------------------------------------------------------------------------------


def _tolerances(op: str, A: TensorMeta, atol: Tensor | float | None, rtol: Tensor | float | None) -> tuple[int, ...]:
    """Check ``atol``/``rtol`` (non-negative numbers, or real tensors that broadcast with ``A``'s batch dims, as
    PyTorch takes them); returns the batch shape of the result (``A``'s, broadcast with the tensors')."""
    batch = A.shape[:-2]
    for name, value in (("atol", atol), ("rtol", rtol)):
        if isinstance(value, Tensor):
            if value.dtype.kind not in "biuf":
                raise ArgumentTypeError(f"{op}: a tensor '{name}' must be real, got dtype {value.dtype.name}")
            batch = broadcast_shapes(op, batch, value.shape)
        elif value is not None and (isinstance(value, (bool, complex)) or not value >= 0):
            raise ArgumentValueError(f"{op}: argument '{name}' must be a non-negative number, got {value!r}")
    return batch


def _tolerance(value: Any) -> Any:
    """A tolerance for :func:`_cutoff`: a number as it is, a tensor's array with a trailing dim of 1 (it
    broadcasts against the singular values ``[..., k]``)."""
    return value._array[..., None] if isinstance(value, Tensor) else value


def _cutoff(xp: ModuleType, s: Any, shape: tuple[int, ...], atol: Any, rtol: Any) -> Any:
    """PyTorch's threshold for singular values ``s [..., k]`` of ``[..., m, n]`` matrices: ``max(atol, rtol *
    s_max)``, with ``rtol = eps * max(m, n)`` when neither is given and 0 when only ``atol`` is (tensors of
    tolerances broadcast with the batch dims)."""
    if rtol is None:
        rtol = np.finfo(s.dtype).eps * max(shape[-2:]) if atol is None else 0.0
    smax = s.max(axis=-1, keepdims=True)
    return xp.maximum(smax * _tolerance(rtol), 0.0 if atol is None else _tolerance(atol))


def _magnitudes(op: str, xp: ModuleType, a: Any, hermitian: bool) -> Any:
    """The singular values of the matrices ``a``: with ``hermitian``, the absolute eigenvalues of the
    Hermitian matrices whose lower triangle ``a`` holds (PyTorch's ``hermitian=True`` reads only that)."""
    if hermitian:
        return xp.abs(decomposition_call(op, xp, xp.linalg.eigvalsh, a, triangle="L"))
    return decomposition_call(op, xp, xp.linalg.svd, a, compute_uv=False)


@structured_op("linalg_pinv", inplace=False, method=False, public_functional=False)
def linalg_pinv(
    A: TensorMeta,
    *,
    atol: Tensor | float | None = None,
    rtol: Tensor | float | None = None,
    hermitian: bool = False,
) -> TensorSpec:
    """The Moore-Penrose pseudo-inverse of each matrix of ``A [..., m, n]``, shape ``[..., n, m]``
    (``torch.linalg.pinv``), through the SVD: singular values at most ``max(atol, rtol * s_max)`` count as 0
    (``rtol`` defaults to ``eps * max(m, n)`` when neither is given, to 0 when only ``atol`` is). ``atol`` and
    ``rtol`` may be real tensors broadcasting with the batch dims (the result's batch dims are the broadcast).
    ``hermitian=True`` (PyTorch's): ``A`` is Hermitian and only its lower triangle is read (through its
    eigendecomposition). Values as ``numpy.linalg.pinv``.

    Raises:
        ShapeError: ``A`` not a batch of matrices (or of square ones with ``hermitian``); tolerance tensors that do
            not broadcast with the batch dims.
        ArgumentValueError: a negative number tolerance.  ArgumentTypeError: a complex tolerance tensor.
    """
    s = _matrices("linalg_pinv", A, square=hermitian)
    batch = _tolerances("linalg_pinv", A, atol, rtol)
    return (*batch, s[-1], s[-2]), linalg_dtype("linalg_pinv", A.dtype)


@_ks.linalg_pinv.xp
def _pinv(xp: ModuleType, A: D, *, atol: Any, rtol: Any, hermitian: bool, out: ConstOut[D]) -> None:
    a: Any = _compute(A)
    o: Any = out.array
    if o.size == 0 or a.size == 0:
        o[...] = 0
        return
    a = xp.broadcast_to(a, (*o.shape[:-2], *a.shape[-2:]))
    if hermitian:
        w, v = decomposition_call("linalg_pinv", xp, xp.linalg.eigh, a, triangle="L")
        keep = xp.abs(w) > _cutoff(xp, xp.abs(w), a.shape, atol, rtol)
        inverse = xp.where(keep, 1 / xp.where(keep, w, 1), 0).astype(w.dtype)
        o[...] = xp.matmul(v * inverse[..., None, :], _mT(v).conj())
        return
    u, s, vh = decomposition_call("linalg_pinv", xp, xp.linalg.svd, a, full_matrices=False)
    keep = s > _cutoff(xp, s, a.shape, atol, rtol)
    inverse = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(s.dtype)
    o[...] = xp.matmul(_mT(vh).conj() * inverse[..., None, :], _mT(u).conj())


@structured_op("linalg_matrix_rank", inplace=False, method=False, public_functional=False)
def linalg_matrix_rank(
    A: TensorMeta,
    *,
    atol: Tensor | float | None = None,
    rtol: Tensor | float | None = None,
    hermitian: bool = False,
) -> TensorSpec:
    """The rank of each matrix of ``A [..., m, n]``, int64 of shape ``[...]``: the number of singular values
    above ``max(atol, rtol * s_max)`` (defaults, tolerance tensors and ``hermitian`` as :func:`linalg_pinv`;
    ``torch.linalg.matrix_rank``, values as ``numpy.linalg.matrix_rank``)."""
    _matrices("linalg_matrix_rank", A, square=hermitian)
    batch = _tolerances("linalg_matrix_rank", A, atol, rtol)
    linalg_dtype("linalg_matrix_rank", A.dtype)
    return batch, to_dtype("int64")


@_ks.linalg_matrix_rank.xp
def _matrix_rank(xp: ModuleType, A: D, *, atol: Any, rtol: Any, hermitian: bool, out: ConstOut[D]) -> None:
    a = _array(A, linalg_dtype("linalg_matrix_rank", A._array.dtype))
    if a.size == 0 or out.array.size == 0:
        out.array[...] = 0
        return
    s = _magnitudes("linalg_matrix_rank", xp, a, hermitian)
    out.array[...] = (s > _cutoff(xp, s, a.shape, atol, rtol)).sum(axis=-1)


@structured_op("linalg_svdvals", inplace=False, method=False, public_functional=False)
def linalg_svdvals(A: TensorMeta) -> TensorSpec:
    """The singular values of each matrix of ``A [..., m, n]``, descending, shape ``[..., min(m, n)]``, of the
    real dtype (``torch.linalg.svdvals``; values as ``numpy.linalg.svd(A, compute_uv=False)``)."""
    s = _matrices("linalg_svdvals", A)
    return (*s[:-2], min(s[-2:])), real_dtype(linalg_dtype("linalg_svdvals", A.dtype))


@_ks.linalg_svdvals.xp
def _svdvals(xp: ModuleType, A: D, *, out: ConstOut[D]) -> None:
    a = _array(A, linalg_dtype("linalg_svdvals", A._array.dtype))
    if out.array.size:
        out.array[...] = decomposition_call("linalg_svdvals", xp, xp.linalg.svd, a, compute_uv=False)


# --- solve, cholesky, matrix_power, eigvalsh ---------------------------------------------------------------


@structured_op("linalg_solve", inplace=False, method=False, public_functional=False)
def linalg_solve(A: TensorMeta, B: TensorMeta, *, left: bool = True) -> TensorSpec:
    """The solution ``X`` of ``A @ X = B`` (``left=False``: ``X @ A = B``) for square ``A [..., n, n]``
    (``torch.linalg.solve``; values as ``numpy.linalg.solve``). As PyTorch: a 1-D ``B [n]``, or a ``B`` of shape
    ``A.shape[:-1]`` (a batch of vectors), is a vector per matrix (result ``[..., n]``); any other ``B [..., n,
    k]`` a batch of matrices (``[..., k, n]`` with ``left=False``); the batch dimensions broadcast. (NumPy 2 and
    the Array API read only a 1-D ``B`` as a vector: ``devtensor.array_api.linalg.solve`` does.) Result dtype:
    the promotion of both (bool and integers as float64). Raises ShapeError for mismatched sizes, LinAlgError
    for a singular ``A`` (on CPU)."""
    s = _matrices("linalg_solve", A, square=True)
    b = B.shape
    dtype = linalg_dtype(
        "linalg_solve",
        np.result_type(linalg_dtype("linalg_solve", A.dtype), linalg_dtype("linalg_solve", B.dtype, "B")),
    )
    n = s[-1]
    if len(b) == 1:
        if b[0] != n:
            raise ShapeError(f"linalg_solve: 'A' of shape {_fmt(s)} and vector 'B' of shape {_fmt(b)} do not match")
        return s[:-1], to_dtype(dtype)
    if b == s[:-1]:  # PyTorch's batch of vectors
        return b, to_dtype(dtype)
    if len(b) == 0 or b[-2 if left else -1] != n:
        raise ShapeError(
            f"linalg_solve: 'A' of shape {_fmt(s)} and 'B' of shape {_fmt(b)} do not match (B must be [n] or "
            f"[..., n, k] with left=True, [..., k, n] with left=False)"
        )
    batch = broadcast_shapes("linalg_solve", s[:-2], b[:-2])
    return (*batch, *b[-2:]), to_dtype(dtype)


@_ks.linalg_solve.xp
def _solve(xp: ModuleType, A: D, B: D, *, left: bool, out: ConstOut[D]) -> None:
    dtype = np.result_type(_compute(A).dtype, _compute(B).dtype)
    a: Any = _array(A, dtype)
    b: Any = _array(B, dtype)
    # A vector per matrix: a 1-D b, or PyTorch's batch of vectors (b of shape a.shape[:-1]).
    vector = b.ndim == 1 or b.shape == a.shape[:-1]
    if not left:
        a = _mT(a)
        b = b if vector else _mT(b)
    if out.array.size == 0:
        return
    if a.shape[-1] == 0:
        out.array[...] = 0
        return
    # The reading made explicit (vectors as one-column matrices; batch dimensions broadcast), so that a CuPy
    # solve with NumPy 1's vector rule or without batch broadcasting computes the same.
    if vector:
        b = b[..., None]
    batch: tuple[int, ...] = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, (*batch, *a.shape[-2:]))
    b = xp.broadcast_to(b, (*batch, *b.shape[-2:]))
    x = linalg_call("linalg_solve", xp.linalg.solve, a, b)
    if vector:
        x = x[..., 0]
    out.array[...] = x if left or vector else _mT(x)


@structured_op("linalg_cholesky", inplace=False, method=False, public_functional=False)
def linalg_cholesky(A: TensorMeta, *, upper: bool = False) -> TensorSpec:
    """The Cholesky factor of each Hermitian positive-definite matrix of ``A [..., n, n]``: lower-triangular
    ``L`` with ``A = L @ L^H``, or with ``upper`` ``U = L^H`` (``torch.linalg.cholesky``; values as
    ``numpy.linalg.cholesky``, which reads the lower triangle). Raises LinAlgError when a matrix is not
    positive-definite (on CPU)."""
    s = _matrices("linalg_cholesky", A, square=True)
    return s, linalg_dtype("linalg_cholesky", A.dtype)


@_ks.linalg_cholesky.xp
def _cholesky(xp: ModuleType, A: D, *, upper: bool, out: ConstOut[D]) -> None:
    a = _compute(A)
    if a.size:
        lower = decomposition_call("linalg_cholesky", xp, xp.linalg.cholesky, a, triangle="L")
        out.array[...] = _mT(lower).conj() if upper else lower


@structured_op("linalg_matrix_power", inplace=False, method=False, public_functional=False)
def linalg_matrix_power(A: TensorMeta, n: int) -> TensorSpec:
    """``A`` (square matrices ``[..., m, m]``) to the integer power ``n`` by repeated squaring
    (``torch.linalg.matrix_power``, ``numpy.linalg.matrix_power``): ``n == 0`` gives identities, a negative
    ``n`` the power of the inverse (floating-point and complex dtypes only). The dtype is ``A``'s (integers
    stay integers, as NumPy's); bool is refused.

    Raises:
        ArgumentTypeError: ``n`` not an int; a bool ``A``; a negative ``n`` for an integer ``A``.
        LinAlgError: a negative ``n`` and a singular matrix (on CPU).
    """
    s = _matrices("linalg_matrix_power", A, square=True)
    if type(n) is not int:
        raise ArgumentTypeError(f"linalg_matrix_power: argument 'n' must be an int, got {type(n).__name__} {n!r}")
    if A.dtype.kind == "b" or (n < 0 and A.dtype.kind in "iu"):
        raise ArgumentTypeError(
            f"linalg_matrix_power: not supported for dtype {A.dtype.name}"
            + (f" with a negative power {n}" if A.dtype.kind != "b" else "")
        )
    if n < 0:
        linalg_dtype("linalg_matrix_power", A.dtype)
    return s, A.dtype


@_ks.linalg_matrix_power.xp
def _matrix_power(xp: ModuleType, A: D, n: int, *, out: ConstOut[D]) -> None:
    a = A._array
    if n < 0:
        a = linalg_call("linalg_matrix_power", xp.linalg.inv, a) if a.size else a
        n = -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else xp.matmul(result, a)
        n >>= 1
        if n:
            a = xp.matmul(a, a)
    if result is None:
        _identity(out.array)
    else:
        out.array[...] = result


@structured_op("linalg_eigvalsh", inplace=False, method=False, public_functional=False)
def linalg_eigvalsh(A: TensorMeta, UPLO: Literal["L", "U"] = "L") -> TensorSpec:
    """The eigenvalues of each Hermitian (real symmetric) matrix of ``A [..., n, n]``, ascending, shape
    ``[..., n]``, of the real dtype (``torch.linalg.eigvalsh``; values as ``numpy.linalg.eigvalsh``). Only the
    ``UPLO`` triangle (``"L"`` lower, ``"U"`` upper) is read."""
    _check_uplo("linalg_eigvalsh", UPLO)
    s = _matrices("linalg_eigvalsh", A, square=True)
    return s[:-1], real_dtype(linalg_dtype("linalg_eigvalsh", A.dtype))


def _check_uplo(op: str, uplo: object) -> None:
    check_choice(op, "UPLO", uplo, ("L", "U"))


@_ks.linalg_eigvalsh.xp
def _eigvalsh(xp: ModuleType, A: D, UPLO: Literal["L", "U"], *, out: ConstOut[D]) -> None:
    a = _array(A, linalg_dtype("linalg_eigvalsh", A._array.dtype))
    if a.size:
        out.array[...] = decomposition_call("linalg_eigvalsh", xp, xp.linalg.eigvalsh, a, triangle=UPLO, UPLO=UPLO)


# --- multi-output: qr, svd, eigh, slogdet ------------------------------------------------------------------


class QRResult(NamedTuple):
    """``linalg.qr``'s result: ``Q`` (orthonormal columns) and ``R`` (upper-triangular)."""

    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    """``linalg.svd``'s result: ``U``, ``S`` (descending singular values) and ``Vh`` with ``A = U diag(S) Vh``."""

    U: Tensor
    S: Tensor
    Vh: Tensor


class EighResult(NamedTuple):
    """``linalg.eigh``'s result: ``eigenvalues`` (ascending) and ``eigenvectors`` (columns)."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class SlogdetResult(NamedTuple):
    """``linalg.slogdet``'s result: ``sign`` and ``logabsdet`` with ``det = sign * exp(logabsdet)``."""

    sign: Tensor
    logabsdet: Tensor


@multi_output_op(result=QRResult)
def linalg_qr(A: TensorMeta, mode: Literal["reduced", "complete", "r"] = "reduced") -> tuple[TensorSpec, TensorSpec]:
    """The QR decomposition ``A = Q @ R`` of each matrix of ``A [..., m, n]`` (``torch.linalg.qr``; values as
    ``numpy.linalg.qr``), ``k = min(m, n)``: ``mode="reduced"`` gives ``Q [..., m, k]``, ``R [..., k, n]``;
    ``"complete"`` ``Q [..., m, m]``, ``R [..., m, n]``; ``"r"`` ``R [..., k, n]`` and an empty ``Q`` of shape
    ``[0]`` (as PyTorch). Householder QR, no sign normalisation: R's diagonal may be negative."""
    s = _matrices("linalg_qr", A)
    check_choice("linalg_qr", "mode", mode, ("reduced", "complete", "r"))
    dtype = linalg_dtype("linalg_qr", A.dtype)
    m, n = s[-2:]
    k = min(m, n)
    batch = s[:-2]
    if mode == "complete":
        return ((*batch, m, m), dtype), ((*batch, m, n), dtype)
    r = ((*batch, k, n), dtype)
    return (((0,), dtype) if mode == "r" else ((*batch, m, k), dtype)), r


@linalg_qr.impl("cpu", "cuda")
def _qr(xp: ModuleType, A: D, mode: str, *, out: tuple[ConstOut[D], ConstOut[D]]) -> None:
    a = _compute(A)
    q_out, r_out = out
    if a.size == 0:
        q_out.array[...] = 0
        r_out.array[...] = 0
        if mode == "complete":
            _identity(q_out.array)
        return
    if mode == "r":
        r_out.array[...] = decomposition_call("linalg_qr", xp, xp.linalg.qr, a, mode="r")
        return
    q, r = decomposition_call("linalg_qr", xp, xp.linalg.qr, a, mode=mode)
    q_out.array[...] = q
    r_out.array[...] = r


@multi_output_op(result=SVDResult)
def linalg_svd(A: TensorMeta, full_matrices: bool = True) -> tuple[TensorSpec, TensorSpec, TensorSpec]:
    """The singular value decomposition ``A = U @ diag(S) @ Vh`` of each matrix of ``A [..., m, n]``
    (``torch.linalg.svd``; values as ``numpy.linalg.svd``), ``k = min(m, n)``: ``U [..., m, m]``, ``S [..., k]``
    (descending, real dtype), ``Vh [..., n, n]``; with ``full_matrices=False`` ``U [..., m, k]`` and ``Vh [...,
    k, n]``. Each pair of singular vectors is unique only up to a common sign (unit phase)."""
    if type(full_matrices) is not bool:
        raise ArgumentTypeError(
            f"linalg_svd: argument 'full_matrices' must be a bool, got {type(full_matrices).__name__} {full_matrices!r}"
        )
    s = _matrices("linalg_svd", A)
    dtype = linalg_dtype("linalg_svd", A.dtype)
    m, n = s[-2:]
    k = min(m, n)
    batch = s[:-2]
    u, v = (m, n) if full_matrices else (k, k)
    return ((*batch, m, u), dtype), ((*batch, k), real_dtype(dtype)), ((*batch, v, n), dtype)


@linalg_svd.impl("cpu", "cuda")
def _svd(xp: ModuleType, A: D, full_matrices: bool, *, out: tuple[ConstOut[D], ConstOut[D], ConstOut[D]]) -> None:
    a = _compute(A)
    if a.size == 0:
        out[1].array[...] = 0
        _identity(out[0].array)
        _identity(out[2].array)
        return
    u, s, vh = decomposition_call("linalg_svd", xp, xp.linalg.svd, a, full_matrices=full_matrices)
    out[0].array[...] = u
    out[1].array[...] = s
    out[2].array[...] = vh


@multi_output_op(result=EighResult)
def linalg_eigh(A: TensorMeta, UPLO: Literal["L", "U"] = "L") -> tuple[TensorSpec, TensorSpec]:
    """The eigendecomposition of each Hermitian (real symmetric) matrix of ``A [..., n, n]``
    (``torch.linalg.eigh``; values as ``numpy.linalg.eigh``): ``eigenvalues [..., n]`` (ascending, real dtype)
    and ``eigenvectors [..., n, n]`` (column ``i`` for eigenvalue ``i``, unique only up to sign or phase). Only
    the ``UPLO`` triangle is read."""
    _check_uplo("linalg_eigh", UPLO)
    s = _matrices("linalg_eigh", A, square=True)
    dtype = linalg_dtype("linalg_eigh", A.dtype)
    return (s[:-1], real_dtype(dtype)), (s, dtype)


@linalg_eigh.impl("cpu", "cuda")
def _eigh(xp: ModuleType, A: D, UPLO: str, *, out: tuple[ConstOut[D], ConstOut[D]]) -> None:
    a = _compute(A)
    if a.size == 0:
        return
    w, v = decomposition_call("linalg_eigh", xp, xp.linalg.eigh, a, triangle=UPLO, UPLO=UPLO)
    out[0].array[...] = w
    out[1].array[...] = v


@multi_output_op(result=SlogdetResult)
def linalg_slogdet(A: TensorMeta) -> tuple[TensorSpec, TensorSpec]:
    """The sign and the log of the absolute value of the determinant of each square matrix of ``A [..., n,
    n]`` (``torch.linalg.slogdet``; values as ``numpy.linalg.slogdet``): ``sign [...]`` (``A``'s dtype: ±1, a unit
    complex number, or 0 for a singular matrix) and ``logabsdet [...]`` (real dtype; -inf when singular)."""
    s = _matrices("linalg_slogdet", A, square=True)
    dtype = linalg_dtype("linalg_slogdet", A.dtype)
    return (s[:-2], dtype), (s[:-2], real_dtype(dtype))


@linalg_slogdet.impl("cpu", "cuda")
def _slogdet(xp: ModuleType, A: D, *, out: tuple[ConstOut[D], ConstOut[D]]) -> None:
    a = _compute(A)
    if a.shape[-1] == 0:
        out[0].array[...] = 1
        out[1].array[...] = 0
        return
    sign, logabsdet = linalg_call("linalg_slogdet", xp.linalg.slogdet, a)
    out[0].array[...] = sign
    out[1].array[...] = logabsdet
