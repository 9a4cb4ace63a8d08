"""``devtensor.linalg`` against ``numpy.linalg`` (values within float tolerance, dtypes exactly), the
decompositions' defining identities, their conventions, errors, and the multi-output machinery
(``devtensor.structured.multi``): named-tuple results, ``out=`` tuples with the out rules applied to each,
atomicity, meta tensors and the CUDA stand-in."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    CastingError,
    LinAlgError,
    MemoryOverlapError,
    ShapeError,
)
from devtensor.structured import MultiOutputOp, get_op, multi_output_op
from devtensor.tensor import TensorMeta, TensorSpec

LA = dt.linalg
RNG = np.random.default_rng(7)


def rand(*shape: int, dtype: Any = np.float64) -> np.ndarray[Any, Any]:
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def spd(*shape: int, dtype: Any = np.float64) -> np.ndarray[Any, Any]:
    m = rand(*shape, dtype=dtype)
    return (m @ np.swapaxes(m, -1, -2).conj() + shape[-1] * np.eye(shape[-1])).astype(dtype)


def close(got: dt.Tensor, want: Any, dtype: Any = None) -> None:
    want = np.asarray(want)
    assert got.dtype == (want.dtype if dtype is None else np.dtype(dtype)), (got.dtype, want.dtype)
    tol = 1e-4 if got.dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


FLOATS = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", FLOATS)
def test_single_output_ops_match_numpy(dtype: Any) -> None:
    a = rand(2, 4, 4, dtype=dtype)
    t = dt.tensor(a)
    close(LA.det(t), np.linalg.det(a))
    close(LA.inv(t), np.linalg.inv(a))
    close(LA.pinv(t), np.linalg.pinv(a))
    close(LA.pinv(dt.tensor(a[..., :3])), np.linalg.pinv(a[..., :3]))
    close(LA.matrix_rank(t), np.linalg.matrix_rank(a))
    close(LA.svdvals(t), np.linalg.svd(a, compute_uv=False))
    close(LA.eigvalsh(t), np.linalg.eigvalsh(a))
    close(LA.eigvalsh(t, "U"), np.linalg.eigvalsh(a, "U"))
    close(LA.matrix_power(t, 3), np.linalg.matrix_power(a, 3))
    close(LA.matrix_power(t, -2), np.linalg.matrix_power(a, -2))
    close(LA.matrix_power(t, 0), np.linalg.matrix_power(a, 0))
    s = spd(2, 3, 3, dtype=dtype)
    close(LA.cholesky(dt.tensor(s)), np.linalg.cholesky(s))
    close(LA.cholesky(dt.tensor(s), upper=True), np.linalg.cholesky(s, upper=True))
    b = rand(4, 2, dtype=dtype)
    close(LA.solve(t, dt.tensor(b)), np.linalg.solve(a, b))
    close(LA.solve(t, dt.tensor(b[:, 0])), np.linalg.solve(a, b[:, 0]))
    x = LA.solve(t, dt.tensor(b.T[None]), left=False)
    close(x @ t, np.broadcast_to(b.T, (2, 2, 4)))
    # PyTorch's batch of vectors: B of shape A.shape[:-1] holds one vector per matrix.
    v = LA.solve(t, dt.tensor(b.T))
    assert v.shape == (2, 4)
    close(v, np.linalg.solve(a, b.T[..., None])[..., 0])
    close(LA.solve(t, dt.tensor(b.T), left=False), np.linalg.solve(np.swapaxes(a, -1, -2), b.T[..., None])[..., 0])


@pytest.mark.parametrize("dtype", FLOATS)
def test_norms_match_numpy(dtype: Any) -> None:
    a = rand(2, 3, 4, dtype=dtype)
    t = dt.tensor(a)
    real = np.abs(a).dtype
    for ord in (2, 1, 0, 3.5, math.inf, -math.inf, -1):
        close(LA.vector_norm(t, ord), np.linalg.vector_norm(a, ord=ord), real)
        close(LA.vector_norm(t, ord, (0, 2), True), np.linalg.vector_norm(a, ord=ord, axis=(0, 2), keepdims=True))
    for mord in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
        close(LA.matrix_norm(t, mord), np.linalg.matrix_norm(a, ord=mord), real)
        close(LA.matrix_norm(t, mord, (0, 2), True), np.linalg.norm(a, ord=mord, axis=(0, 2), keepdims=True))
    close(LA.norm(t), np.linalg.norm(a.reshape(-1)), real)
    close(LA.norm(t, dim=1), np.linalg.norm(a, axis=1))
    close(LA.norm(t, "nuc", (1, 2)), np.linalg.norm(a, "nuc", axis=(1, 2)))
    close(LA.norm(dt.tensor(a[0]), 1), np.linalg.norm(a[0], 1))
    close(LA.norm(dt.tensor(a[0, 0]), math.inf), np.linalg.norm(a[0, 0], math.inf))
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    close(LA.vector_norm(t, dtype=wide), np.linalg.vector_norm(a.astype(wide)))


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("device", ["cpu", "cuda:0", "meta"])
def test_matrix_norms_of_empty_matrices(device: str) -> None:
    # PyTorch's values: a maximum or a sum over nothing is 0; a minimum over nothing raises.
    for shape, fine, refused in (
        ((2, 0, 3), ("fro", "nuc", 2, 1, -1, math.inf), (-2, -math.inf)),
        ((3, 0), ("fro", "nuc", 2, 1, math.inf, -math.inf), (-2, -1)),
    ):
        t = dt.zeros(shape, dtype=dt.float32, device=device)
        for ord in fine:
            r = LA.matrix_norm(t, ord)
            assert r.shape == shape[:-2] and r.dtype == dt.float32
            if device != "meta":
                assert (r.cpu().numpy() == 0).all()
        for ord in refused:
            with pytest.raises(dt.ShapeError, match="is a minimum over the"):
                LA.matrix_norm(t, ord)
    if device != "meta":
        assert LA.norm(dt.zeros((0, 3), device=device), "nuc").item() == 0.0


def test_products_and_diagonals_match_numpy() -> None:
    a, b = rand(2, 4, 3), rand(4, 3)
    ta, tb = dt.tensor(a), dt.tensor(b)
    close(LA.cross(ta, tb[None]), np.cross(a, b))
    with pytest.raises(dt.ShapeError, match="same number of dimensions"):
        LA.cross(ta, tb)  # (PyTorch's rule; the Array API's cross broadcasts these)
    close(LA.cross(dt.tensor(a[0].T), dt.tensor(b.T), dim=0), np.cross(a[0].T, b.T, axis=0))
    close(LA.vecdot(ta, tb), np.vecdot(a, b))
    c = rand(4, 3, dtype=np.complex128)
    close(LA.vecdot(dt.tensor(c), dt.tensor(c)), np.sum(c.conj() * c, axis=-1))
    close(LA.trace(ta), np.trace(a, axis1=-2, axis2=-1))
    close(LA.trace(ta, 1), np.trace(a, 1, axis1=-2, axis2=-1))
    close(LA.trace(dt.tensor(np.arange(9, dtype=np.int8).reshape(3, 3))), np.int64(12))
    close(LA.trace(ta, dtype=dt.float32), np.trace(a, axis1=-2, axis2=-1, dtype=np.float32))
    d = LA.diagonal(ta, offset=-1)
    close(d, np.diagonal(a, -1, -2, -1))
    assert not np.shares_memory(d.numpy(), ta.numpy())
    assert LA.matrix_transpose(ta).shape == (2, 3, 4) and LA.matrix_transpose(ta).is_contiguous() is False
    assert LA.matmul is dt.matmul and LA.outer is dt.outer and LA.tensordot is dt.tensordot


def test_integer_and_bool_inputs_compute_in_float64_as_numpy() -> None:
    a = np.array([[2, 1], [1, 3]], dtype=np.int32)
    close(LA.det(dt.tensor(a)), np.linalg.det(a))
    close(LA.inv(dt.tensor(a)), np.linalg.inv(a))
    close(LA.det(dt.tensor(a.astype(bool))), np.linalg.det(a.astype(bool)))
    close(LA.matrix_power(dt.tensor(a), 2), np.linalg.matrix_power(a, 2))  # integers stay integers


# --- decompositions --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_decompositions_reconstruct_and_match_numpy(dtype: Any, shape: tuple[int, ...]) -> None:
    a = rand(*shape, dtype=dtype)
    t = dt.tensor(a)
    qr = LA.qr(t)
    assert isinstance(qr, LA.QRResult) and qr._fields == ("Q", "R")
    close(qr.Q @ qr.R, a)
    q_np, r_np = np.linalg.qr(a)
    close(qr.Q, q_np)
    close(qr.R, r_np)
    complete = LA.qr(t, "complete")
    assert complete.Q.shape == (*shape[:-2], shape[-2], shape[-2])
    close(complete.Q @ complete.R, a)
    r_only = LA.qr(t, mode="r")
    assert r_only.Q.shape == (0,)
    close(r_only.R, r_np)
    u, s, vh = LA.svd(t)
    assert LA.svd(t)._fields == ("U", "S", "Vh")
    k = min(shape[-2:])
    close(u[..., :k] * s[..., None, :].to(u.dtype) @ vh[..., :k, :], a)
    assert s.dtype == np.abs(a).dtype
    assert np.all(np.diff(s.numpy(), axis=-1) <= 0)  # descending
    reduced = LA.svd(t, full_matrices=False)
    assert reduced.U.shape == (*shape[:-2], shape[-2], k) and reduced.Vh.shape == (*shape[:-2], k, shape[-1])
    close(reduced.S, np.linalg.svd(a, compute_uv=False))


@pytest.mark.parametrize("dtype", FLOATS)
def test_eigh_and_slogdet(dtype: Any) -> None:
    h = spd(2, 4, 4, dtype=dtype)
    res = LA.eigh(dt.tensor(h))
    assert res._fields == ("eigenvalues", "eigenvectors")
    w = np.linalg.eigvalsh(h)
    close(res.eigenvalues, w)
    assert np.all(np.diff(res.eigenvalues.numpy(), axis=-1) >= 0)  # ascending
    vv = res.eigenvectors.numpy()
    np.testing.assert_allclose(h @ vv, vv * w[..., None, :], atol=1e-3)
    a = rand(3, 3, dtype=dtype)
    sign, logabsdet = LA.slogdet(dt.tensor(a))
    s_np, l_np = np.linalg.slogdet(a)
    close(sign, s_np)
    close(logabsdet, l_np)
    assert LA.slogdet(dt.tensor(a))._fields == ("sign", "logabsdet")


def test_singular_matrices() -> None:
    z = dt.zeros((3, 3))
    assert LA.det(z).item() == 0
    sign, logabsdet = LA.slogdet(z)
    assert sign.item() == 0 and logabsdet.item() == -math.inf
    out = dt.zeros((3, 3))
    calls: list[Callable[[], object]] = [lambda: LA.inv(z, out=out), lambda: LA.solve(z, dt.ones((3,)), out=out)]
    for call in calls:
        with pytest.raises(LinAlgError, match="linalg_"):
            call()
        assert out.version == 0  # nothing written
    assert issubclass(LinAlgError, RuntimeError) and dt.LinAlgError is LinAlgError is LA.LinAlgError
    with pytest.raises(LinAlgError, match="linalg_cholesky"):
        LA.cholesky(dt.tensor([[1.0, 2.0], [2.0, 1.0]]))
    close(LA.pinv(z), np.zeros((3, 3)))
    assert LA.matrix_rank(z).item() == 0


def test_bad_input_errors_name_the_op_and_argument() -> None:
    with pytest.raises(ShapeError, match=r"linalg_det.*square"):
        LA.det(dt.zeros((2, 3)))
    with pytest.raises(ShapeError, match=r"linalg_inv.*at least 2"):
        LA.inv(dt.zeros(3))
    with pytest.raises(ArgumentTypeError, match=r"linalg_det.*float16"):
        LA.det(dt.zeros((2, 2), dtype=dt.float16))
    with pytest.raises(ShapeError, match="linalg_solve"):
        LA.solve(dt.zeros((3, 3)), dt.zeros((2,)))
    with pytest.raises(ShapeError, match="linalg_solve"):
        LA.solve(dt.zeros((2, 3, 3)), dt.zeros((4, 3, 1)))  # batch dims do not broadcast
    assert LA.solve(dt.eye(3).expand([2, 3, 3]), dt.ones((4, 1, 3, 1))).shape == (4, 2, 3, 1)
    with pytest.raises(ArgumentValueError, match=r"linalg_qr.*mode"):
        LA.qr(dt.zeros((2, 2)), "full")  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="linalg_matrix_power"):
        LA.matrix_power(dt.ones((2, 2), dtype=dt.int64), -1)
    with pytest.raises(ArgumentValueError, match=r"linalg_matrix_norm.*ord"):
        LA.matrix_norm(dt.zeros((2, 2)), 3)
    with pytest.raises(ShapeError, match="linalg_cross"):
        LA.cross(dt.zeros((2, 2)), dt.zeros((2, 2)))
    with pytest.raises(ArgumentValueError, match=r"linalg_pinv.*rtol"):
        LA.pinv(dt.zeros((2, 2)), rtol=-1.0)
    with pytest.raises(ArgumentTypeError, match=r"linalg_qr.*'A'"):
        LA.qr(np.zeros((2, 2)))  # type: ignore[arg-type]


# --- multi-output out= ---------------------------------------------------------------------------------------


def test_multi_output_out_tuple() -> None:
    a = dt.tensor(rand(4, 3))
    q, r = dt.empty((4, 3)), dt.empty((3, 3))
    got = LA.qr(a, out=(q, r))
    assert isinstance(got, LA.QRResult) and got.Q is q and got.R is r
    assert q.version == 1 and r.version == 1
    close(q @ r, a.numpy())
    # same_kind casts into each out: float64 results into float32 and complex outs
    q32, rc = dt.empty((4, 3), dtype=dt.float32), dt.empty((3, 3), dtype=dt.complex128)
    LA.qr(a, out=[q32, rc])  # type: ignore[arg-type]
    close(q32, np.linalg.qr(a.numpy())[0].astype(np.float32))


def test_multi_output_out_rules_and_atomicity() -> None:
    a = dt.tensor(rand(3, 3, dtype=np.complex128))
    sign, logabs = dt.zeros(()), dt.zeros(())
    before = snapshot(a, sign, logabs)
    with pytest.raises(CastingError, match="linalg_slogdet"):
        LA.slogdet(a, out=(sign, logabs))  # complex sign into a float out
    assert_unchanged(before)
    q, r = dt.zeros(5), dt.zeros(5)
    before = snapshot(q, r)
    with pytest.raises(MemoryOverlapError, match=r"out\[0\].*out\[1\]"):
        LA.qr(a, out=(q, q))
    with pytest.raises(ArgumentTypeError, match=r"linalg_qr.*'out'"):
        LA.qr(a, out=q)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match=r"linalg_qr.*'out'"):
        LA.qr(a, out=(q,))  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match=r"linalg_qr.*'out\[1\]'"):
        LA.qr(a, out=(q, 3))  # type: ignore[arg-type]
    assert_unchanged(before)
    # an out partially overlapping the input
    base = dt.tensor(rand(4, 3))
    with pytest.raises(MemoryOverlapError):
        LA.qr(base[:3], out=(base[1:4], dt.empty((3, 3))))
    # an out that is exactly the input: computed into a temporary, the values are the functional call's
    x = dt.tensor(rand(3, 3))
    want = LA.qr(x)
    LA.qr(x, out=(x, dt.empty((3, 3))))
    close(x, want.Q.numpy())


def test_multi_output_out_resize_with_warning() -> None:
    a = dt.tensor(rand(2, 3, 3))
    w, v = dt.zeros(1), dt.zeros(1)
    with pytest.warns(UserWarning, match="resized"):
        LA.eigh(a, out=(w, v))
    assert w.shape == (2, 3) and v.shape == (2, 3, 3)


#: Each decomposition (LAPACK's SVD, eigh, QR, Cholesky) with the name its LinAlgError gives.
DECOMPOSITIONS: list[tuple[str, Callable[[dt.Tensor], object]]] = [
    ("linalg_svd", lambda m: LA.svd(m)),
    ("linalg_svd", lambda m: LA.svd(m, full_matrices=False)),
    ("linalg_svdvals", lambda m: LA.svdvals(m)),
    ("linalg_pinv", lambda m: LA.pinv(m)),
    ("linalg_matrix_rank", lambda m: LA.matrix_rank(m)),
    ("linalg_matrix_norm", lambda m: LA.matrix_norm(m, 2)),
    ("linalg_matrix_norm", lambda m: LA.matrix_norm(m, -2)),
    ("linalg_matrix_norm", lambda m: LA.matrix_norm(m, "nuc")),
    ("linalg_matrix_norm", lambda m: LA.norm(m, 2, dim=(-2, -1))),
    ("linalg_matrix_norm", lambda m: LA.norm(m, "nuc", dim=(-1, -2))),
    ("linalg_eigh", lambda m: LA.eigh(m)),
    ("linalg_eigh", lambda m: LA.eigh(m, UPLO="U")),
    ("linalg_eigvalsh", lambda m: LA.eigvalsh(m)),
    ("linalg_eigvalsh", lambda m: LA.eigvalsh(m, UPLO="U")),
    ("linalg_qr", lambda m: LA.qr(m)),
    ("linalg_qr", lambda m: LA.qr(m, mode="r")),
    ("linalg_cholesky", lambda m: LA.cholesky(m)),
    ("linalg.svd", lambda m: np.linalg.svd(m)),  # (NumPy's functions on tensors: NEP 18)
    ("linalg.qr", lambda m: np.linalg.qr(m)),
]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("case", range(len(DECOMPOSITIONS)))
def test_non_finite_input_to_a_decomposition_is_a_linalg_error(
    case: int, value: float, device: str, request: pytest.FixtureRequest
) -> None:
    # LAPACK's SVD may never return on an infinity (or gives NaNs silently): PyTorch raises for these inputs.
    if device == "cuda":
        request.getfixturevalue("fake_cupy")
    name, call = DECOMPOSITIONS[case]
    a = spd(4, 4)
    a[1, 0] = a[0, 1] = value  # (in both triangles: eigh and cholesky read one)
    m = dt.tensor(a, device=device)
    before = snapshot(m)
    with pytest.raises(LinAlgError, match=rf"{name}: .*non-finite"):
        call(m)
    assert_unchanged(before)
    batched = dt.tensor(np.stack([spd(3, 3), np.full((3, 3), value)]), device=device)
    with pytest.raises(LinAlgError, match=name):
        call(batched)


def test_non_finite_values_outside_the_triangle_read_are_ignored() -> None:
    a = spd(3, 3)
    a[0, 2] = math.nan  # the upper triangle: eigh, eigvalsh and cholesky read the lower one by default
    w, _ = LA.eigh(dt.tensor(a))
    close(w, np.linalg.eigh(a)[0])
    close(LA.eigvalsh(dt.tensor(a)), np.linalg.eigvalsh(a))
    close(LA.cholesky(dt.tensor(a)), np.linalg.cholesky(a))
    with pytest.raises(LinAlgError, match="linalg_eigvalsh"):
        LA.eigvalsh(dt.tensor(a), UPLO="U")


def test_lu_based_ops_give_nan_for_non_finite_input_as_pytorch() -> None:
    # det, slogdet, inv and solve are direct (no iteration): NaN results, as NumPy and PyTorch give.
    a = np.eye(3)
    a[1, 2] = math.inf
    with np.errstate(invalid="ignore"):
        assert math.isnan(LA.det(dt.tensor(a)).item())
        assert np.isnan(LA.inv(dt.tensor(a)).numpy()).all()


def test_multi_output_meta_and_cuda_stand_in(fake_cupy: ModuleType) -> None:
    m = dt.empty((2, 5, 3), device="meta")
    u, s, vh = LA.svd(m)
    assert (u.shape, s.shape, vh.shape) == ((2, 5, 5), (2, 3), (2, 3, 3))
    assert u.device.type == "meta"
    a = rand(2, 4, 3)
    c = dt.tensor(a, device="cuda")
    q, _ = LA.qr(c)
    assert q.device.type == "cuda"
    close(q.cpu(), np.linalg.qr(a)[0])
    outs = (dt.empty((2, 4, 3), device="cuda"), dt.empty((2, 3, 3), device="cuda"))
    LA.qr(c, out=outs)
    close(outs[1].cpu(), np.linalg.qr(a)[1])


def test_multi_output_ops_in_the_registry() -> None:
    op = get_op("linalg_svd")
    assert isinstance(op, MultiOutputOp) and op.outputs == 3 and op.inplace is None
    assert LA.svd.op is op  # type: ignore[attr-defined]


def test_a_user_multi_output_op() -> None:
    def minmax_meta(self: TensorMeta) -> tuple[TensorSpec, TensorSpec]:
        return (((), self.dtype), ((), self.dtype))

    op = multi_output_op("test_minmax_pair")(minmax_meta)
    try:

        @op.impl("cpu")
        def _(self: Any, *, out: tuple[Any, Any]) -> None:
            out[0].array[...] = self._array.min()
            out[1].array[...] = self._array.max()

        lo, hi = op.functional(dt.tensor([3.0, 1.0, 2.0]))
        assert (lo.item(), hi.item()) == (1.0, 3.0)
        with pytest.raises(TypeError, match="test_minmax_pair"):

            @op.impl("cpu")
            def _bad(self: Any, out: Any) -> None: ...

    finally:
        from devtensor.structured import multi_ops_by_name

        multi_ops_by_name.pop("test_minmax_pair", None)


# --- the Array API extension -------------------------------------------------------------------------------


def test_array_api_linalg_extension() -> None:
    from devtensor.array_api import linalg as xla

    a = rand(2, 4, 3)
    t = dt.tensor(a)
    assert isinstance(xla.qr(t), LA.QRResult) and xla.svd(t, full_matrices=False).U.shape == (2, 4, 3)
    close(xla.matrix_norm(t, keepdims=True, ord="nuc"), np.linalg.matrix_norm(a, ord="nuc", keepdims=True))
    close(xla.vector_norm(t, axis=(1, 2), ord=1), np.linalg.vector_norm(a, axis=(1, 2), ord=1))
    close(xla.trace(t, offset=1), np.trace(a, 1, axis1=-2, axis2=-1))
    close(xla.diagonal(t), np.diagonal(a, 0, -2, -1))
    rtol = dt.tensor([0.1, 0.5])
    close(xla.pinv(t, rtol=rtol), np.linalg.pinv(a, rtol=np.array([0.1, 0.5])))
    close(xla.matrix_rank(t, rtol=rtol), np.linalg.matrix_rank(a, rtol=np.array([0.1, 0.5])))
    close(xla.pinv(t, rtol=0.5), np.linalg.pinv(a, rtol=0.5))
    u8 = dt.tensor(np.full(3, 100, np.uint8))
    assert xla.vecdot(u8, u8).dtype == np.uint8  # the standard's dtype: the operands' promotion
    with pytest.raises(ArgumentValueError, match="qr"):
        xla.qr(t, mode="r")  # type: ignore[arg-type]
    s = spd(3, 3)
    close(xla.cholesky(dt.tensor(s), upper=True), np.linalg.cholesky(s, upper=True))
    close(xla.solve(dt.tensor(s), dt.tensor(a[0, :3])), np.linalg.solve(s, a[0, :3]))
    close(xla.cross(dt.tensor(a[0, :, :3]), dt.tensor(a[1, :, :3]), axis=-1), np.cross(a[0], a[1]))
    close(xla.cross(dt.tensor(a[:, :, :3]), dt.tensor(a[1, 0, :3])), np.cross(a[:, :, :3], a[1, 0, :3]))
    assert xla.matrix_transpose(t).shape == (2, 3, 4)


def test_multi_output_ops_see_modes_and_overrides() -> None:
    from devtensor import library

    a = dt.tensor(rand(3, 3))
    with library.CountingMode() as mode:
        LA.qr(a)
        LA.svd(a, out=(dt.empty((3, 3)), dt.empty(3), dt.empty((3, 3))))
    assert mode.counts == {"linalg_qr": 1, "linalg_svd.out": 1}

    def fake(A: Any, mode: str, *, out: tuple[Any, Any]) -> None:
        out[0].array[...] = 1
        out[1].array[...] = 2

    handle = library.override("linalg_qr", "cpu", fake)
    try:
        assert LA.qr(a).R.numpy().tolist() == [[2.0] * 3] * 3
    finally:
        handle.remove()
    close(LA.qr(a).R, np.linalg.qr(a.numpy())[1])


@pytest.mark.parametrize("batch", [(), (0,), (2,), (0, 1)])
@pytest.mark.parametrize("mn", [(1, 2), (2, 1), (0, 2), (2, 0), (0, 0), (3, 3)])
def test_empty_and_degenerate_shapes_match_numpy(batch: tuple[int, ...], mn: tuple[int, int]) -> None:
    x = np.ones(batch + mn, np.float32)
    t = dt.tensor(x)
    for full in (True, False):
        for got, want in zip(LA.svd(t, full), np.linalg.svd(x, full), strict=True):
            assert got.shape == want.shape and got.dtype == want.dtype
            if x.size == 0:
                np.testing.assert_array_equal(got.numpy(), want)
    for mode in ("reduced", "complete"):
        for got, want in zip(LA.qr(t, mode), np.linalg.qr(x, mode), strict=True):
            assert got.shape == want.shape
            if x.size == 0:
                np.testing.assert_array_equal(got.numpy(), want)
    from devtensor.array_api import linalg as xla

    for rtol in (dt.zeros(()), dt.zeros((1,)), None):
        shape = np.broadcast_shapes(batch, () if rtol is None else rtol.shape)
        assert xla.pinv(t, rtol=rtol).shape == (*shape, mn[1], mn[0])
        assert xla.matrix_rank(t, rtol=rtol).shape == shape


def test_bad_uplo_and_full_matrices_name_the_argument() -> None:
    a = dt.tensor([[2.0, 1.0], [1.0, 3.0]])
    with pytest.raises(ArgumentValueError, match=r"linalg_eigh.*'UPLO'.*'X'"):
        dt.linalg.eigh(a, UPLO="X")  # type: ignore[arg-type]
    with pytest.raises(ArgumentValueError, match=r"linalg_eigvalsh.*'UPLO'"):
        dt.linalg.eigvalsh(a, "q")  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match=r"linalg_svd.*'full_matrices'.*str"):
        dt.linalg.svd(a, full_matrices="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, math.inf])
def test_cdist_is_the_p_norm_of_the_row_differences(p: float) -> None:
    rng = np.random.default_rng(1)
    x1 = rng.standard_normal((2, 30, 5))  # more than 25 rows: PyTorch would use a matrix product here
    x2 = rng.standard_normal((1, 27, 5))
    x1[0, 0, :2] = x2[0, 0, :2]  # some equal coordinates (p=0 counts the differing ones)
    got = dt.cdist(dt.tensor(x1), dt.tensor(x2), p)
    expected = np.linalg.norm(x1[..., :, None, :] - x2[..., None, :, :], ord=p, axis=-1)
    assert got.shape == (2, 30, 27)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=0)
    f32 = dt.cdist(dt.tensor(x1, dtype=dt.float32), dt.tensor(x2, dtype=dt.float32), p)
    assert f32.dtype == np.float32


def test_cdist_errors() -> None:
    a = dt.ones(3, 4)
    with pytest.raises(ValueError, match=r"cdist.*columns"):
        dt.cdist(a, dt.ones(2, 5))
    with pytest.raises(ValueError, match=r"cdist.*non-negative"):
        dt.cdist(a, a, -1.0)
    with pytest.raises(TypeError, match=r"cdist.*int64"):
        dt.cdist(dt.ones(3, 4, dtype=dt.int64), a)
    with pytest.raises(ValueError, match=r"cdist.*at least 2"):
        dt.cdist(dt.ones(4), a)
    with pytest.raises(ValueError, match="compute_mode"):
        dt.cdist(a, a, compute_mode="fast")  # type: ignore[arg-type]


# --- float16 norms: computed in float32, given as float16 (PyTorch's half norms) ------------------------------


@pytest.mark.parametrize(
    ("call", "reference"),
    [
        (lambda t: dt.linalg.vector_norm(t), lambda a: np.linalg.vector_norm(a)),
        (lambda t: dt.linalg.vector_norm(t, ord=3.5, dim=0), lambda a: np.linalg.vector_norm(a, ord=3.5, axis=0)),
        (lambda t: dt.linalg.vector_norm(t, ord=0), lambda a: np.linalg.vector_norm(a, ord=0)),
        (lambda t: dt.linalg.matrix_norm(t), lambda a: np.linalg.matrix_norm(a)),
        (lambda t: dt.linalg.matrix_norm(t, "nuc"), lambda a: np.linalg.matrix_norm(a, ord="nuc")),
        (lambda t: dt.linalg.matrix_norm(t, -math.inf), lambda a: np.linalg.matrix_norm(a, ord=-math.inf)),
        (lambda t: dt.linalg.norm(t, 2), lambda a: np.linalg.norm(a, 2)),
        (lambda t: dt.linalg.norm(t, dim=1, keepdim=True), lambda a: np.linalg.norm(a, axis=1, keepdims=True)),
    ],
)
def test_float16_norms_compute_in_float32_and_give_float16(call: Any, reference: Any) -> None:
    a = np.array([[-8.4765625, -1.765625, 0.0], [-4.32421875, 2.400390625, 7.0]], dtype=np.float16)
    got = call(dt.tensor(a))
    assert got.dtype == dt.float16
    np.testing.assert_array_equal(got.numpy(), np.asarray(reference(a.astype(np.float32))).astype(np.float16))
    half = dt.linalg.vector_norm(dt.tensor(a, dtype=dt.float32), dtype=dt.float16)
    assert half.dtype == dt.float16
