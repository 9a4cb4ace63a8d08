"""The linear-algebra family against NumPy: matmul (1-D / 2-D / batched broadcasting), mm, bmm, dot, outer and
addmm over hypothesis-drawn shapes (empty included) and dtype pairs; shape errors naming both operand shapes;
out variants (values, version bump, same_kind casts, resize, overlap, atomicity); meta tensors; the CUDA
impls through the NumPy-backed CuPy stand-in."""

from __future__ import annotations

import re
import warnings
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from helpers import raises_devtensor_error_naming
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.errors import ArgumentTypeError, CastingError, MemoryOverlapError, ScalarOverflowError, ShapeError

Array = npt.NDArray[Any]

DTYPES = [
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int32,
        np.int64,
        np.uint8,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
]
NUMERIC = [d for d in DTYPES if d.kind != "b"]

dtypes = st.sampled_from(DTYPES)
seeds = st.integers(0, 2**32 - 1)


def values(seed: int, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    """Small integers (exact in every dtype, and in sums of a few products) of ``dtype``."""
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    low = 0 if dtype.kind == "u" else -3
    return rng.integers(low, 4, shape).astype(dtype)


def words(*parts: str) -> str:
    """A regex matching a message that contains every part, in order."""
    return ".*".join(re.escape(p) for p in parts)


def assert_matches(result: dt.Tensor, expected: Any) -> None:
    expected = np.asarray(expected)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    np.testing.assert_array_equal(result.numpy(), expected)


@st.composite
def matmul_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Operand shapes NumPy's matmul accepts: vector/matrix/batched stacks, broadcastable batches, empty sides."""
    n, k, m = draw(st.integers(0, 3)), draw(st.integers(0, 3)), draw(st.integers(0, 3))
    batches = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=3))
    batch_a, batch_b = batches.input_shapes
    a = (k,) if draw(st.booleans()) else (*batch_a, n, k)
    b = (k,) if draw(st.booleans()) else (*batch_b, k, m)
    return a, b


# --- matmul ---------------------------------------------------------------------------------------------------


@given(matmul_shapes(), dtypes, dtypes, seeds)
def test_matmul_matches_numpy(shapes: tuple[tuple[int, ...], tuple[int, ...]], da: Any, db: Any, seed: int) -> None:
    a, b = values(seed, shapes[0], da), values(seed + 1, shapes[1], db)
    expected = np.matmul(a, b)
    result = dt.matmul(dt.from_numpy(a), dt.from_numpy(b))
    assert_matches(result, expected)
    assert_matches(dt.from_numpy(a).matmul(dt.from_numpy(b)), expected)
    meta = dt.matmul(dt.empty(*a.shape, dtype=da, device="meta"), dt.empty(*b.shape, dtype=db, device="meta"))
    assert meta.shape == expected.shape and meta.dtype == expected.dtype and meta.device.type == "meta"


@given(matmul_shapes(), st.sampled_from(NUMERIC), seeds)
def test_matmul_out_equals_functional(shapes: tuple[tuple[int, ...], tuple[int, ...]], dtype: Any, seed: int) -> None:
    a, b = dt.from_numpy(values(seed, shapes[0], dtype)), dt.from_numpy(values(seed + 1, shapes[1], dtype))
    expected = dt.matmul(a, b).numpy()
    out = dt.empty(*expected.shape, dtype=np.complex128)  # a wider dtype of the same or a higher kind
    assert dt.matmul(a, b, out=out) is out
    assert out.version == 1 and out.dtype == np.complex128
    np.testing.assert_array_equal(out.numpy(), expected.astype(np.complex128))
    empty = dt.empty(0, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dt.matmul(a, b, out=empty)  # an out without elements is resized silently
    assert_matches(empty, expected)


@pytest.mark.parametrize(
    ("a", "b", "parts"),
    [
        ((), (3,), ["matmul", "at least 1-D", "[]", "[3]"]),
        ((2, 3), (), ["matmul", "[2, 3]", "[]"]),
        ((2, 3), (4, 5), ["matmul", "[2, 3]", "[4, 5]", "3 != 4"]),
        ((3,), (4,), ["matmul", "[3]", "[4]", "3 != 4"]),
        ((2,), (3, 4), ["matmul", "[2]", "[3, 4]"]),
        ((2, 2, 3), (3, 3, 4), ["matmul", "[2, 2, 3]", "[3, 3, 4]", "batch", "[2]", "[3]"]),
    ],
)
def test_matmul_shape_errors_name_both_shapes(a: tuple[int, ...], b: tuple[int, ...], parts: list[str]) -> None:
    ta, tb = dt.zeros(*a), dt.zeros(*b)
    with pytest.raises(ShapeError, match=words(*parts)):
        dt.matmul(ta, tb)
    with pytest.raises(ShapeError, match=words(*parts)):  # meta tensors run the same checks
        dt.matmul(dt.empty(*a, device="meta"), dt.empty(*b, device="meta"))


# --- mm, bmm, dot, outer --------------------------------------------------------------------------------------


@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), dtypes, dtypes, seeds)
def test_mm_matches_numpy(n: int, k: int, m: int, da: Any, db: Any, seed: int) -> None:
    a, b = values(seed, (n, k), da), values(seed + 1, (k, m), db)
    assert_matches(dt.mm(dt.from_numpy(a), dt.from_numpy(b)), np.matmul(a, b))


@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), dtypes, dtypes, seeds)
def test_bmm_matches_numpy(bs: int, n: int, k: int, m: int, da: Any, db: Any, seed: int) -> None:
    a, b = values(seed, (bs, n, k), da), values(seed + 1, (bs, k, m), db)
    assert_matches(dt.bmm(dt.from_numpy(a), dt.from_numpy(b)), np.matmul(a, b))


@given(st.integers(0, 5), dtypes, dtypes, seeds)
def test_dot_matches_numpy(n: int, da: Any, db: Any, seed: int) -> None:
    a, b = values(seed, (n,), da), values(seed + 1, (n,), db)
    result = dt.dot(dt.from_numpy(a), dt.from_numpy(b))
    assert result.shape == ()
    assert_matches(result, np.matmul(a, b))


@given(st.integers(0, 4), st.integers(0, 4), dtypes, dtypes, seeds)
def test_outer_matches_numpy(n: int, m: int, da: Any, db: Any, seed: int) -> None:
    a, b = values(seed, (n,), da), values(seed + 1, (m,), db)
    expected = np.multiply.outer(a, b)
    assert_matches(dt.outer(dt.from_numpy(a), dt.from_numpy(b)), expected)
    out = dt.empty(n, m, dtype=expected.dtype)
    assert dt.outer(dt.from_numpy(a), dt.from_numpy(b), out=out) is out
    assert_matches(out, expected)


@pytest.mark.parametrize(
    ("op", "a", "b", "parts"),
    [
        ("mm", (2, 3, 4), (4, 5), ["mm", "2-D", "[2, 3, 4]", "[4, 5]"]),
        ("mm", (3,), (3, 2), ["mm", "'self'", "[3]", "'mat2'", "[3, 2]"]),
        ("mm", (2, 3), (4, 5), ["mm", "[2, 3]", "[4, 5]", "cannot be multiplied"]),
        ("bmm", (2, 3), (2, 3), ["bmm", "3-D", "[2, 3]", "[2, 3]"]),
        ("bmm", (2, 3, 4), (3, 4, 5), ["bmm", "batch size", "[2, 3, 4]", "[3, 4, 5]"]),
        ("bmm", (2, 3, 4), (2, 5, 6), ["bmm", "[2, 3, 4]", "[2, 5, 6]", "4 != 5"]),
        ("dot", (2, 2), (2,), ["dot", "1-D", "[2, 2]", "[2]"]),
        ("dot", (3,), (4,), ["dot", "[3]", "[4]"]),
        ("outer", (3,), (), ["outer", "1-D", "[3]", "[]"]),
    ],
)
def test_fixed_rank_errors_name_both_shapes(op: str, a: tuple[int, ...], b: tuple[int, ...], parts: list[str]) -> None:
    ta, tb = dt.zeros(*a), dt.zeros(*b)
    with pytest.raises(ShapeError, match=words(*parts)):
        getattr(dt, op)(ta, tb)


# --- addmm ----------------------------------------------------------------------------------------------------

FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]


@given(
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(0, 3),
    st.sampled_from(["full", "row", "col", "scalar", "vector"]),
    st.sampled_from(FLOATS),
    st.sampled_from([0, 1, 2, -0.5]),
    st.sampled_from([0, 1, 3, 0.25]),
    seeds,
)
def test_addmm_matches_reference(
    n: int, k: int, m: int, self_kind: str, dtype: Any, beta: float, alpha: float, seed: int
) -> None:
    self_shape = {"full": (n, m), "row": (1, m), "col": (n, 1), "scalar": (), "vector": (m,)}[self_kind]
    s, a, b = values(seed, self_shape, dtype), values(seed + 1, (n, k), dtype), values(seed + 2, (k, m), dtype)
    expected = (beta * s.astype(np.float64) + alpha * (a.astype(np.float64) @ b.astype(np.float64))).astype(dtype)
    expected = np.broadcast_to(expected, (n, m))
    ts, ta, tb = dt.from_numpy(s), dt.from_numpy(a), dt.from_numpy(b)
    result = dt.addmm(ts, ta, tb, beta=beta, alpha=alpha)
    assert_matches(result, expected)
    out = dt.empty(n, m, dtype=dtype)
    assert dt.addmm(ts, ta, tb, beta=beta, alpha=alpha, out=out) is out
    assert_matches(out, expected)
    if self_kind == "full":
        assert ts.addmm_(ta, tb, beta=beta, alpha=alpha) is ts
        assert ts.version == 1
        assert_matches(ts, expected)


def test_addmm_beta_zero_ignores_nan_in_self() -> None:
    s = dt.tensor([[np.nan, np.inf], [1.0, -np.inf]])
    a = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    eye = dt.tensor([[1.0, 0.0], [0.0, 1.0]])
    assert_matches(dt.addmm(s, a, eye, beta=0), a.numpy())
    assert_matches(dt.addmm(s, a, eye, beta=0, alpha=2), 2 * a.numpy())
    assert np.isnan(dt.addmm(s, a, eye).numpy()[0, 0])  # beta=1 propagates


def test_addmm_out_may_be_self_and_dtypes_promote() -> None:
    s = dt.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=dt.float32)
    a = dt.tensor([[1, 2], [3, 4]], dtype=dt.int64)
    assert dt.addmm(s, a, a).dtype == np.float64  # float32 with int64 promotes to float64 in NumPy
    s64 = dt.tensor([[1.0, 1.0], [1.0, 1.0]])
    assert dt.addmm(s64, a, a, out=s64) is s64
    assert_matches(s64, np.array([[8.0, 11.0], [16.0, 23.0]]))
    i = dt.tensor([[1, 1], [1, 1]])
    assert_matches(dt.addmm(i, a, a, beta=2, alpha=3), 2 + 3 * (a.numpy() @ a.numpy()))


@pytest.mark.parametrize(
    ("kwargs", "error", "parts"),
    [
        ({"alpha": 0.5}, ArgumentTypeError, ["addmm", "'alpha'", "0.5"]),
        ({"beta": 1j}, ArgumentTypeError, ["addmm", "'beta'", "1j"]),
        ({"alpha": 2**70}, ScalarOverflowError, ["addmm", "'alpha'", "int64"]),
    ],
)
def test_addmm_coefficient_errors(kwargs: dict[str, Any], error: type[Exception], parts: list[str]) -> None:
    s, a = dt.tensor([[1, 2], [3, 4]]), dt.tensor([[1, 0], [0, 1]])
    snap = snapshot(s, a)
    with pytest.raises(error, match=words(*parts)):
        dt.addmm(s, a, a, out=s, **kwargs)
    assert_unchanged(snap)


def test_addmm_coefficients_after_a_cached_default_call_are_checked_and_applied() -> None:
    # The fronts read the meta's result for beta = alpha = 1 inline (by the three shapes and dtypes); any other
    # coefficient, of any type, still reaches the meta function's checks and the kernel.
    s, a = dt.tensor([[1, 2], [3, 4]]), dt.tensor([[1, 0], [0, 1]])
    assert dt.addmm(s, a, a).tolist() == [[2, 2], [3, 5]]
    assert dt.addmm(s, a, a, beta=2, alpha=3).tolist() == [[5, 4], [6, 11]]
    with pytest.raises(ArgumentTypeError, match=words("addmm", "'alpha'", "1.0")):
        dt.addmm(s, a, a, alpha=1.0)
    with pytest.raises(ArgumentTypeError, match=words("addmm", "'beta'", "1.0")):
        dt.addmm(s, a, a, beta=1.0)
    f = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert dt.addmm(f, f, f).tolist() == (f.numpy() + f.numpy() @ f.numpy()).tolist()
    assert dt.addmm(f, f, f, beta=0.5, alpha=True).tolist() == (0.5 * f.numpy() + f.numpy() @ f.numpy()).tolist()


@pytest.mark.parametrize(
    ("s", "a", "b", "parts"),
    [
        ((3,), (2, 4), (4, 2), ["addmm", "'self'", "[3]", "[2, 2]", "[2, 4]", "[4, 2]"]),
        ((2, 2), (2, 3), (4, 2), ["addmm", "[2, 3]", "[4, 2]", "cannot be multiplied"]),
        ((2, 2), (2,), (2, 2), ["addmm", "2-D", "[2]", "[2, 2]"]),
    ],
)
def test_addmm_shape_errors(s: tuple[int, ...], a: tuple[int, ...], b: tuple[int, ...], parts: list[str]) -> None:
    with pytest.raises(ShapeError, match=words(*parts)):
        dt.addmm(dt.zeros(*s), dt.zeros(*a), dt.zeros(*b))


def test_addmm_inplace_never_broadcasts_self() -> None:
    s = dt.zeros(1, 2)
    with pytest.raises(ShapeError, match=words("addmm_", "[1, 2]", "[2, 2]")):
        s.addmm_(dt.zeros(2, 3), dt.zeros(3, 2))
    assert s.version == 0


# --- out rules ------------------------------------------------------------------------------------------------


def test_out_rules_and_atomicity() -> None:
    a = dt.tensor([[1.5, 2.0], [3.0, 4.0]])
    b = dt.tensor([[1.0, 0.0], [0.0, 1.0]])
    bad = dt.zeros(2, 2, dtype=dt.int64)
    snap = snapshot(a, b, bad)
    with pytest.raises(CastingError, match=words("matmul", "float64", "int64", "'out'")):
        dt.matmul(a, b, out=bad)
    big = dt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    snap_big = snapshot(big)
    with pytest.raises(MemoryOverlapError, match=words("matmul", "partial overlap")):
        dt.matmul(big[0:2], b, out=big[1:3])
    assert_unchanged(snap)
    assert_unchanged(snap_big)
    wrong = dt.zeros(3, 3)
    with pytest.warns(UserWarning, match=words("matmul", "resized", "[3, 3]", "[2, 2]")):
        dt.matmul(a, b, out=wrong)
    assert wrong.shape == (2, 2)
    assert_matches(wrong, a.numpy())


def test_device_mismatch_and_bad_types() -> None:
    with pytest.raises(dt.DeviceMismatchError, match=words("matmul", "cpu", "meta")):
        dt.matmul(dt.zeros(2, 2), dt.empty(2, 2, device="meta"))
    with pytest.raises(ArgumentTypeError, match=words("mm", "'mat2'", "a Tensor", "list")):
        dt.mm(dt.zeros(2, 2), [[1.0]])  # type: ignore[arg-type]


def test_meta_tensors_give_shapes_for_every_op() -> None:
    def m(*shape: int) -> dt.Tensor:
        return dt.empty(*shape, dtype=dt.float32, device="meta")

    assert dt.mm(m(2, 3), m(3, 4)).shape == (2, 4)
    assert dt.bmm(m(5, 2, 3), m(5, 3, 4)).shape == (5, 2, 4)
    assert dt.dot(m(3), m(3)).shape == ()
    assert dt.outer(m(3), m(4)).shape == (3, 4)
    r = dt.addmm(m(4), m(2, 3), m(3, 4), beta=0.5)
    assert r.shape == (2, 4) and r.dtype == np.float32 and r.device.type == "meta"
    assert dt.matmul(m(7, 1, 2, 3), m(5, 3, 4)).shape == (7, 5, 2, 4)


# --- CUDA impls, through the NumPy-backed CuPy stand-in --------------------------------------------------------


def test_cuda_impls_on_the_stand_in(fake_cupy: ModuleType) -> None:
    fake_cupy.state.writeable_flag = True  # the out checks of the front read NumPy's writeable flag
    rng = np.random.default_rng(0)
    a, b = rng.integers(-3, 4, (2, 3, 4)).astype(np.float32), rng.integers(-3, 4, (4, 5)).astype(np.float32)
    ga, gb = dt.from_numpy(a).to("cuda:1"), dt.from_numpy(b).to("cuda:1")
    fake_cupy.state.clear_log()
    assert_matches(dt.matmul(ga, gb).cpu(), np.matmul(a, b))
    assert set(fake_cupy.state.devices_of("matmul")) == {1}  # ran under the device guard of cuda:1
    assert_matches(dt.mm(ga[0], gb).cpu(), a[0] @ b)
    assert_matches(dt.bmm(ga, dt.from_numpy(np.stack([b, b])).to("cuda:1")).cpu(), np.matmul(a, np.stack([b, b])))
    assert_matches(dt.dot(gb[:, 0], gb[:, 1]).cpu(), b[:, 0] @ b[:, 1])
    assert_matches(dt.outer(gb[0], gb[1]).cpu(), np.multiply.outer(b[0], b[1]))
    s = dt.from_numpy(b[0].copy()).to("cuda:1")
    assert_matches(dt.addmm(s, ga[0], gb, beta=2, alpha=0.5).cpu(), 2 * b[0] + 0.5 * (a[0] @ b))
    out = dt.empty(3, 5, dtype=dt.float64, device="cuda:1")
    assert dt.matmul(ga[0], gb, out=out) is out
    assert_matches(out.cpu(), (a[0] @ b).astype(np.float64))
    bools = dt.from_numpy(a[0] > 0).to("cuda:1")
    assert_matches(dt.matmul(bools, dt.from_numpy(b > 0).to("cuda:1")).cpu(), np.matmul(a[0] > 0, b > 0))


@pytest.mark.cuda
def test_on_a_real_gpu() -> None:
    """The CUDA impls against the CPU ones, on a real GPU with CuPy (bool through the int64 workaround)."""
    rng = np.random.default_rng(1)
    for dtype in (np.float16, np.float32, np.float64, np.complex64, np.int32, np.int64, np.bool_):
        a = values(1, (2, 3, 4), np.dtype(dtype))
        b = values(2, (4, 5), np.dtype(dtype))
        v = values(3, (4,), np.dtype(dtype))
        ga, gb, gv = (dt.from_numpy(x).to("cuda") for x in (a, b, v))
        assert_matches(dt.matmul(ga, gb).cpu(), np.matmul(a, b))
        assert_matches(dt.matmul(gv, gb).cpu(), np.matmul(v, b))
        assert_matches(dt.mm(ga[0], gb).cpu(), np.matmul(a[0], b))
        assert_matches(dt.dot(gv, gv).cpu(), np.matmul(v, v))
        assert_matches(dt.outer(gv, gv).cpu(), np.multiply.outer(v, v))
    a64 = rng.standard_normal((3, 4))
    b64 = rng.standard_normal((4, 2))
    s64 = rng.standard_normal(2)
    ga, gb, gs = (dt.from_numpy(x).to("cuda") for x in (a64, b64, s64))
    out = dt.empty(3, 2, dtype=dt.float32, device="cuda")
    dt.addmm(gs, ga, gb, beta=0.5, alpha=2.0, out=out)
    np.testing.assert_allclose(out.cpu().numpy(), 0.5 * s64 + 2.0 * (a64 @ b64), rtol=1e-5)


# --- addmm with a Python int alpha/beta too large for a float result: NumPy's bare OverflowError --------------


@pytest.mark.parametrize("coefficient", ["alpha", "beta"])
def test_addmm_with_a_huge_int_coefficient_raises_a_devtensor_error_and_writes_nothing(coefficient: str) -> None:
    out = dt.zeros(1, 1)
    kwargs: dict[str, Any] = {coefficient: 10**400}
    # add/mul give ScalarOverflowError "add: Python integer ... is too large to convert to float64"; addmm raises
    # NumPy's bare "int too large to convert to float" from inside the kernel
    error = raises_devtensor_error_naming(
        lambda: dt.addmm(dt.ones(1), dt.ones(1, 1), dt.ones(1, 1), out=out, **kwargs), "addmm"
    )
    assert isinstance(error, OverflowError)
    assert out.tolist() == [[0.0]]
    assert out.version == 0
