"""``devtensor.linalg``: linear algebra under PyTorch's ``torch.linalg`` names and signatures.

Every function is a structured op (registered as ``linalg_<name>``: ``devtensor.structured.get_op("linalg_det")``
for its kernels and overrides), so it dispatches on the tensors' device (NumPy's ``numpy.linalg`` on CPU,
``cupy.linalg`` on CUDA), runs meta tensors through the meta function alone, is seen by dispatch modes and takes
``out=``. Values follow ``numpy.linalg``; the dtype rules, errors (:class:`~devtensor.errors.LinAlgError` for a
singular or non-positive-definite matrix) and the sign and ordering conventions of the decompositions are in
:mod:`devtensor.kernels.linalg_solvers`.

Single output: det, inv, pinv, solve, cholesky, matrix_power, matrix_rank, svdvals, eigvalsh, vector_norm,
matrix_norm, norm, trace, diagonal (a copy), cross, vecdot; ``matrix_transpose`` is a view (of
:func:`devtensor.transpose`); ``outer``, ``tensordot`` and ``matmul`` are the main namespace's ops.

Several outputs, as named tuples (``torch.return_types``' fields), ``out=`` a tuple of tensors: qr (Q, R),
svd (U, S, Vh), eigh (eigenvalues, eigenvectors), slogdet (sign, logabsdet).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from devtensor._generated_ops import matmul, outer, tensordot, transpose
from devtensor.dtypes import DTypeLike
from devtensor.errors import LinAlgError, ShapeError
from devtensor.kernels.linalg_solvers import EighResult, QRResult, SlogdetResult, SVDResult
from devtensor.structured import get_op as _get_op
from devtensor.tensor import Tensor

__all__ = [
    "EighResult",
    "LinAlgError",
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
    "norm",
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


def matrix_transpose(A: Tensor) -> Tensor:
    """``A`` with its last two dimensions swapped, a view (``A.mT``; the Array API's ``matrix_transpose``).

    Raises:
        ShapeError: ``A`` has fewer than 2 dimensions.
    """
    if A.ndim < 2:
        raise ShapeError(f"matrix_transpose: argument 'A' must have at least 2 dimensions, got shape {list(A.shape)}")
    return transpose(A, -2, -1)


if TYPE_CHECKING:

    def det(A: Tensor, *, out: Tensor | None = None) -> Tensor: ...
    def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor: ...
    def pinv(
        A: Tensor,
        *,
        atol: Tensor | float | None = None,
        rtol: Tensor | float | None = None,
        hermitian: bool = False,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor: ...
    def cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor: ...
    def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor: ...
    def matrix_rank(
        A: Tensor,
        *,
        atol: Tensor | float | None = None,
        rtol: Tensor | float | None = None,
        hermitian: bool = False,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def svdvals(A: Tensor, *, out: Tensor | None = None) -> Tensor: ...
    def eigvalsh(A: Tensor, UPLO: Literal["L", "U"] = "L", *, out: Tensor | None = None) -> Tensor: ...
    def vector_norm(
        x: Tensor,
        ord: float = 2,
        dim: int | Sequence[int] | None = None,
        keepdim: bool = False,
        *,
        dtype: DTypeLike | None = None,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def matrix_norm(
        A: Tensor,
        ord: float | str = "fro",
        dim: Sequence[int] = (-2, -1),
        keepdim: bool = False,
        *,
        dtype: DTypeLike | None = None,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def norm(
        A: Tensor,
        ord: float | str | None = None,
        dim: int | Sequence[int] | None = None,
        keepdim: bool = False,
        *,
        dtype: DTypeLike | None = None,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def trace(A: Tensor, offset: int = 0, *, dtype: DTypeLike | None = None, out: Tensor | None = None) -> Tensor: ...
    def diagonal(
        A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1, out: Tensor | None = None
    ) -> Tensor: ...
    def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor: ...
    def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor: ...
    def qr(
        A: Tensor, mode: Literal["reduced", "complete", "r"] = "reduced", *, out: tuple[Tensor, Tensor] | None = None
    ) -> QRResult: ...
    def svd(
        A: Tensor, full_matrices: bool = True, *, out: tuple[Tensor, Tensor, Tensor] | None = None
    ) -> SVDResult: ...
    def eigh(A: Tensor, UPLO: Literal["L", "U"] = "L", *, out: tuple[Tensor, Tensor] | None = None) -> EighResult: ...
    def slogdet(A: Tensor, *, out: tuple[Tensor, Tensor] | None = None) -> SlogdetResult: ...

else:
    det = _get_op("linalg_det").functional
    inv = _get_op("linalg_inv").functional
    pinv = _get_op("linalg_pinv").functional
    solve = _get_op("linalg_solve").functional
    cholesky = _get_op("linalg_cholesky").functional
    matrix_power = _get_op("linalg_matrix_power").functional
    matrix_rank = _get_op("linalg_matrix_rank").functional
    svdvals = _get_op("linalg_svdvals").functional
    eigvalsh = _get_op("linalg_eigvalsh").functional
    vector_norm = _get_op("linalg_vector_norm").functional
    matrix_norm = _get_op("linalg_matrix_norm").functional
    norm = _get_op("linalg_norm").functional
    trace = _get_op("linalg_trace").functional
    diagonal = _get_op("linalg_diagonal").functional
    cross = _get_op("linalg_cross").functional
    vecdot = _get_op("linalg_vecdot").functional
    qr = _get_op("linalg_qr").functional
    svd = _get_op("linalg_svd").functional
    eigh = _get_op("linalg_eigh").functional
    slogdet = _get_op("linalg_slogdet").functional
