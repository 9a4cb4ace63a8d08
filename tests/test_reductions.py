"""The reduction family against NumPy: values, result dtypes and shapes over hypothesis-drawn shapes (0-d and
empty included), dims (int, negative, tuple, None), keepdim and dtypes; errors (duplicate and out-of-range
dims, empty reductions without identity); out variants; meta tensors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.errors import ArgumentTypeError, CastingError, MemoryOverlapError, ShapeError

Array = npt.NDArray[Any]
Dim = int | tuple[int, ...] | None
Axis = int | tuple[int, ...] | None

# NumPy warns (RuntimeWarning) for overflow, empty means and degrees of freedom <= 0; devtensor calls NumPy.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BOOL = [np.dtype(np.bool_)]
INTS = [np.dtype(t) for t in (np.int8, np.int32, np.int64, np.uint8, np.uint16, np.uint64)]
FLOATS = [np.dtype(t) for t in (np.float16, np.float32, np.float64)]
COMPLEX = [np.dtype(t) for t in (np.complex64, np.complex128)]
ALL_DTYPES = BOOL + INTS + FLOATS + COMPLEX
REAL_DTYPES = BOOL + INTS + FLOATS

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@st.composite
def dims_for(draw: st.DrawFn, shape: tuple[int, ...], allow_tuple: bool = True) -> tuple[Dim, Axis]:
    """A ``dim`` argument for ``shape`` (None, an int or a tuple; negative or not) and NumPy's ``axis`` for it."""
    ndim = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"] if allow_tuple else ["none", "int"]))
    if kind == "none":
        return None, None
    if ndim == 0:
        d = draw(st.sampled_from([0, -1]))
        return (d if kind == "int" else (d,)), None
    if kind == "int":
        d = draw(st.integers(-ndim, ndim - 1))
        return d, d % ndim
    picks = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    dim = tuple(p - ndim if draw(st.booleans()) else p for p in picks)
    return dim, tuple(picks)


@st.composite
def operands(
    draw: st.DrawFn, dtypes: list[np.dtype[Any]], allow_tuple: bool = True
) -> tuple[dt.Tensor, Array, Dim, Axis]:
    """(tensor, the same values as a NumPy array, dim, NumPy axis). The tensor is sometimes a reversed,
    non-contiguous view."""
    shape = draw(shapes)
    dtype = draw(st.sampled_from(dtypes))
    arr = draw(hnp.arrays(dtype, shape))
    reverse = draw(st.booleans())
    if shape and reverse:
        arr = arr[..., ::-1]
    dim, axis = draw(dims_for(shape, allow_tuple))
    return dt.from_numpy(arr), arr.copy(), dim, axis


def assert_matches(result: dt.Tensor, expected: Any, *, exact: bool = True, rtol: float = 1e-6) -> None:
    expected = np.asarray(expected)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    if exact:
        np.testing.assert_array_equal(result.numpy(), expected)
    else:
        np.testing.assert_allclose(result.numpy(), expected, rtol=rtol, atol=rtol, equal_nan=True)


def reduced_is_empty(shape: tuple[int, ...], axis: Axis) -> bool:
    if not shape:
        return False
    if axis is None:
        return 0 in shape
    axes = (axis,) if isinstance(axis, int) else axis
    return any(shape[a] == 0 for a in axes)


# --- values against NumPy ------------------------------------------------------------------------------------

DTYPE_ARGS = [None, np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex128)]


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(dt.sum, np.sum), (dt.prod, np.prod), (dt.mean, np.mean)],
    ids=["sum", "prod", "mean"],
)
@given(case=operands(ALL_DTYPES), keepdim=st.booleans(), dtype=st.sampled_from(DTYPE_ARGS))
def test_sum_prod_mean_match_numpy(
    fn: Callable[..., dt.Tensor],
    ref: Callable[..., Any],
    case: tuple[dt.Tensor, Array, Dim, Axis],
    keepdim: bool,
    dtype: np.dtype[Any] | None,
) -> None:
    t, arr, dim, axis = case
    if dtype is not None and arr.dtype.kind == "c" and dtype.kind != "c":
        with pytest.raises(ArgumentTypeError, match="dtype"):
            fn(t, dim, keepdim, dtype=dtype)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ref(arr, axis=axis, keepdims=keepdim, dtype=dtype)
    # A complex product that overflows has no one right answer: NumPy's own result (inf or the largest finite
    # value) depends on the memory layout it reduces over.
    assume(not (np.iscomplexobj(expected) and np.isfinite(arr).all() and not np.isfinite(expected).all()))
    assert_matches(fn(t, dim, keepdim, dtype=dtype), expected)
    assert_matches(getattr(t, fn.__name__)(dim, keepdim, dtype=dtype), expected)


def test_default_result_dtypes_follow_numpy_2() -> None:
    i32 = dt.zeros(3, dtype=dt.int32)
    assert dt.sum(i32).dtype == np.sum(np.zeros(3, np.int32)).dtype == np.int64
    assert dt.sum(dt.zeros(3, dtype=dt.uint8)).dtype == np.uint64
    assert dt.sum(dt.zeros(3, dtype=dt.bool)).dtype == np.int64
    assert dt.prod(i32).dtype == np.int64
    assert dt.mean(i32).dtype == np.float64
    assert dt.mean(dt.zeros(3, dtype=dt.float16)).dtype == np.float16
    assert dt.sum(i32, dtype=dt.float32).dtype == np.float32
    assert dt.var(dt.zeros(3, dtype=dt.complex64)).dtype == np.float32


def test_empty_reductions_follow_numpy() -> None:
    e = dt.zeros(2, 0)
    assert dt.sum(e, 1).tolist() == [0.0, 0.0]
    assert dt.prod(e, 1).tolist() == [1.0, 1.0]
    assert dt.sum(e).item() == 0.0
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        m = dt.mean(e, 1)
    assert np.isnan(m.numpy()).all()
    assert dt.all(e, 1).tolist() == [True, True]
    assert dt.any(e, 1).tolist() == [False, False]
    assert dt.logsumexp(e, 1).tolist() == [-np.inf, -np.inf]
    assert dt.amax(e, 0).shape == (0,)  # reducing the non-empty dim of an empty tensor is fine


@pytest.mark.parametrize(("fn", "ref"), [(dt.amax, np.amax), (dt.amin, np.amin)], ids=["amax", "amin"])
@given(case=operands(REAL_DTYPES), keepdim=st.booleans())
def test_amax_amin_match_numpy(
    fn: Callable[..., dt.Tensor],
    ref: Callable[..., Any],
    case: tuple[dt.Tensor, Array, Dim, Axis],
    keepdim: bool,
) -> None:
    t, arr, dim, axis = case
    if reduced_is_empty(arr.shape, axis):
        with pytest.raises(ShapeError, match=rf"{fn.__name__}: cannot reduce over dimension \d+ of size 0"):
            fn(t, dim, keepdim)
        with pytest.raises(ValueError):
            ref(arr, axis=axis, keepdims=keepdim)
        return
    assert_matches(fn(t, dim, keepdim), ref(arr, axis=axis, keepdims=keepdim))


@pytest.mark.parametrize(("fn", "ref"), [(dt.argmax, np.argmax), (dt.argmin, np.argmin)], ids=["argmax", "argmin"])
@given(case=operands(REAL_DTYPES, allow_tuple=False), keepdim=st.booleans())
def test_argmax_argmin_match_numpy(
    fn: Callable[..., dt.Tensor],
    ref: Callable[..., Any],
    case: tuple[dt.Tensor, Array, Dim, Axis],
    keepdim: bool,
) -> None:
    t, arr, dim, axis = case
    if reduced_is_empty(arr.shape, axis):
        with pytest.raises(ShapeError, match=fn.__name__):
            fn(t, dim, keepdim)
        return
    expected = np.asarray(ref(arr, axis=axis, keepdims=keepdim)).astype(np.int64)
    assert_matches(fn(t, dim, keepdim), expected)


@pytest.mark.parametrize(("fn", "ref"), [(dt.var, np.var), (dt.std, np.std)], ids=["var", "std"])
@given(case=operands(ALL_DTYPES), keepdim=st.booleans(), correction=st.sampled_from([0, 1, 2, 0.5, -1, -2.5]))
def test_var_std_match_numpy(
    fn: Callable[..., dt.Tensor],
    ref: Callable[..., Any],
    case: tuple[dt.Tensor, Array, Dim, Axis],
    keepdim: bool,
    correction: float,
) -> None:
    t, arr, dim, axis = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ref(arr, axis=axis, keepdims=keepdim, ddof=correction)
    assert_matches(fn(t, dim, keepdim, correction=correction), expected)


def test_a_negative_correction_divides_by_more_as_numpys_ddof() -> None:
    x = np.arange(4.0)
    t = dt.from_numpy(x)
    assert t.var(ddof=-1).item() == pytest.approx(np.var(x, ddof=-1))
    assert dt.var(t, correction=-1).item() == pytest.approx(1.0)  # 5 / (4 + 1)
    assert dt.std(t, 0, correction=-1.5).item() == pytest.approx(np.std(x, ddof=-1.5))


def test_var_default_correction_is_bessel() -> None:
    x = np.array([1.0, 2.0, 4.0, 7.0])
    assert dt.var(dt.from_numpy(x)).item() == pytest.approx(np.var(x, ddof=1))
    assert dt.std(dt.from_numpy(x), correction=0).item() == pytest.approx(np.std(x))
    # PyTorch's correction=None: the default, 1.
    assert dt.var(dt.from_numpy(x), correction=None).item() == pytest.approx(np.var(x, ddof=1))
    assert dt.std(dt.from_numpy(x), 0, True, correction=None).tolist() == [pytest.approx(np.std(x, ddof=1))]


def _logsumexp_reference(arr: Array, axis: Axis, keepdims: bool) -> Array:
    """Naive log(sum(exp(x))) in extended precision (the values are bounded, so nothing overflows)."""
    x = arr.astype(np.longdouble)
    with np.errstate(divide="ignore"):
        # cast: the overloads of np.sum in newer NumPy stubs reject a union-typed axis.
        return np.asarray(np.log(np.sum(np.exp(x), axis=cast(Any, axis), keepdims=keepdims)))


bounded = st.floats(-300, 300, allow_nan=False, width=32)


@given(
    shape=shapes,
    dtype=st.sampled_from(FLOATS[1:]),
    keepdim=st.booleans(),
    data=st.data(),
)
def test_logsumexp_matches_a_naive_reference(
    shape: tuple[int, ...], dtype: np.dtype[Any], keepdim: bool, data: st.DataObject
) -> None:
    arr = data.draw(hnp.arrays(dtype, shape, elements=bounded))
    dim, axis = data.draw(dims_for(shape))
    result = dt.logsumexp(dt.from_numpy(arr), dim, keepdim)
    expected = _logsumexp_reference(arr, axis, keepdim)
    assert result.dtype == dtype
    assert result.shape == np.shape(expected)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(result.numpy().astype(np.longdouble), expected, rtol=rtol, atol=rtol)


def test_logsumexp_is_stable_and_handles_infinities() -> None:
    x = dt.tensor([[1e30, 1e30], [-1e30, -np.inf], [-np.inf, -np.inf], [np.inf, 1.0]])
    r = dt.logsumexp(x, 1).numpy()
    assert r[0] == pytest.approx(1e30)
    assert r[1] == -1e30
    assert r[2] == -np.inf
    assert r[3] == np.inf
    big = dt.tensor([1000.0, 1000.0], dtype=dt.float32)
    assert dt.logsumexp(big).item() == pytest.approx(1000 + np.log(2))
    assert dt.logsumexp(dt.tensor([1, 2, 3])).dtype == np.float64
    assert dt.logsumexp(dt.tensor([1.0], dtype=dt.float16)).dtype == np.float16
    # Complex (PyTorch's): shifted by the largest real part, the principal branch of the log.
    z = np.array([[1 + 1j, 2 - 1j, 700 + 0.5j], [-3 + 2j, 0.5 - 0.25j, 1j]])
    for dim in (0, 1):
        got = dt.logsumexp(dt.tensor(z), dim)
        assert got.dtype == np.complex128
        big = np.max(z.real, axis=dim, keepdims=True)
        want = np.log(np.exp(z - big).sum(axis=dim)) + big.squeeze(dim)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    assert dt.logsumexp(dt.tensor(z.astype(np.complex64)), 1).dtype == np.complex64


@pytest.mark.parametrize(("fn", "ref"), [(dt.all, np.all), (dt.any, np.any)], ids=["all", "any"])
@given(case=operands(ALL_DTYPES), keepdim=st.booleans())
def test_all_any_match_numpy(
    fn: Callable[..., dt.Tensor],
    ref: Callable[..., Any],
    case: tuple[dt.Tensor, Array, Dim, Axis],
    keepdim: bool,
) -> None:
    t, arr, dim, axis = case
    assert_matches(fn(t, dim, keepdim), ref(arr, axis=axis, keepdims=keepdim))


# --- dims and arguments ----------------------------------------------------------------------------------------

TUPLE_OPS = [dt.sum, dt.prod, dt.mean, dt.amax, dt.amin, dt.var, dt.std, dt.logsumexp, dt.all, dt.any]
ALL_OPS = [*TUPLE_OPS, dt.argmax, dt.argmin]


@pytest.mark.parametrize("fn", TUPLE_OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dim", [(1, 1), (0, -3), (-1, 2, 0)])
def test_duplicate_dims_are_an_error_naming_op_and_dim(fn: Callable[..., dt.Tensor], dim: tuple[int, ...]) -> None:
    t = dt.ones(2, 3, 4)
    with pytest.raises(ValueError, match=rf"{fn.__name__}: dim -?\d appears multiple times"):
        fn(t, dim)
    with pytest.raises(ValueError, match="multiple times"):
        fn(dt.empty(2, 3, 4, device="meta"), dim)


@pytest.mark.parametrize("fn", ALL_OPS, ids=lambda f: f.__name__)
def test_dim_out_of_range_is_an_index_error(fn: Callable[..., dt.Tensor]) -> None:
    t = dt.ones(2, 3)
    for bad in (2, -3):
        with pytest.raises(IndexError, match=rf"{fn.__name__}: dimension out of range"):
            fn(t, bad)
    with pytest.raises(IndexError, match=fn.__name__):
        fn(dt.tensor(1.0), 1)
    with pytest.raises(TypeError, match=rf"{fn.__name__}: argument 'dim'"):
        fn(t, 1.0)
    with pytest.raises(TypeError, match=rf"{fn.__name__}: argument 'dim'"):
        fn(t, True)
    with pytest.raises(TypeError, match=rf"{fn.__name__}: argument 'keepdim'"):
        fn(t, 0, 1)


@pytest.mark.parametrize("fn", ALL_OPS, ids=lambda f: f.__name__)
def test_zero_dim_tensors_reduce_over_dim_0_or_minus_1(fn: Callable[..., dt.Tensor]) -> None:
    t = dt.tensor(3.0)
    for dim in (None, 0, -1):
        for keepdim in (False, True):
            assert fn(t, dim, keepdim).shape == ()


def test_empty_tuple_dim_reduces_nothing_as_numpy() -> None:
    x = np.arange(6.0).reshape(2, 3)
    assert_matches(dt.sum(dt.from_numpy(x), ()), np.sum(x, axis=()))
    assert_matches(dt.amax(dt.from_numpy(x), (), True), np.amax(x, axis=(), keepdims=True))


def test_list_dims_are_accepted_like_tuples() -> None:
    x = np.arange(24).reshape(2, 3, 4)
    assert_matches(dt.sum(dt.from_numpy(x), [0, -1]), np.sum(x, axis=(0, 2)))


def test_argmax_refuses_a_tuple_dim_and_complex() -> None:
    with pytest.raises(TypeError, match="argmax: argument 'dim' must be an int or None"):
        dt.argmax(dt.ones(2, 3), (0, 1))  # type: ignore[arg-type]
    for fn in (dt.amax, dt.amin, dt.argmax, dt.argmin):
        with pytest.raises(TypeError, match="complex"):
            fn(dt.tensor([1j]))


def test_empty_reduction_without_identity_names_op_and_dim() -> None:
    with pytest.raises(
        ShapeError, match=r"amax: cannot reduce over dimension 1 of size 0 \(tensor of shape \[2, 0\]\)"
    ):
        dt.amax(dt.ones(2, 0), -1)
    with pytest.raises(ShapeError, match="argmin: cannot reduce over dimension 0 of size 0"):
        dt.argmin(dt.ones(0, 3))
    with pytest.raises(ShapeError, match="amin"):
        dt.amin(dt.empty(0, 3, device="meta"), 0)


def test_dtype_argument_checks() -> None:
    c = dt.tensor([1 + 2j])
    with pytest.raises(ArgumentTypeError, match="sum: argument 'dtype' must be complex"):
        dt.sum(c, dtype=dt.float64)
    with pytest.raises(TypeError, match="mean: argument 'dtype'"):
        dt.mean(dt.ones(2), dtype="str")
    assert dt.sum(c, dtype=dt.complex64).dtype == np.complex64


def test_correction_checks() -> None:
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match="var: argument 'correction' must be finite"):
            dt.var(dt.ones(3), correction=bad)
    with pytest.raises(TypeError, match="std: argument 'correction'"):
        dt.std(dt.ones(3), correction=True)


# --- out variants ----------------------------------------------------------------------------------------------

OUT_CASES: list[tuple[Callable[..., dt.Tensor], dict[str, Any]]] = [
    (dt.sum, {"dim": 1}),
    (dt.prod, {"dim": (0, 2)}),
    (dt.mean, {"dim": -1, "keepdim": True}),
    (dt.amax, {"dim": 1}),
    (dt.amin, {"dim": None}),
    (dt.argmax, {"dim": 2}),
    (dt.argmin, {"dim": None, "keepdim": True}),
    (dt.var, {"dim": 0}),
    (dt.std, {"dim": (1, 2), "correction": 0}),
    (dt.logsumexp, {"dim": 1}),
    (dt.all, {"dim": 0}),
    (dt.any, {"dim": (0, 1)}),
]


def _input() -> dt.Tensor:
    return dt.from_numpy(np.random.default_rng(0).standard_normal((2, 3, 4)))


@pytest.mark.parametrize(("fn", "kwargs"), OUT_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_out_variant_equals_functional(fn: Callable[..., dt.Tensor], kwargs: dict[str, Any]) -> None:
    x = _input()
    expected = fn(x, **kwargs)
    out = dt.empty(*expected.shape, dtype=expected.dtype)
    assert fn(x, **kwargs, out=out) is out
    assert out.version == 1
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    # An empty out is resized silently; a non-empty one of the wrong shape with a UserWarning.
    empty = dt.empty(0, dtype=expected.dtype)
    fn(x, **kwargs, out=empty)
    assert empty.shape == expected.shape
    np.testing.assert_array_equal(empty.numpy(), expected.numpy())
    wrong = dt.empty(7, 7, dtype=expected.dtype)
    with pytest.warns(UserWarning, match="resized"):
        fn(x, **kwargs, out=wrong)
    np.testing.assert_array_equal(wrong.numpy(), expected.numpy())


@pytest.mark.parametrize(("fn", "kwargs"), OUT_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_meta_tensors_give_the_shape_and_dtype(fn: Callable[..., dt.Tensor], kwargs: dict[str, Any]) -> None:
    expected = fn(_input(), **kwargs)
    m = fn(dt.empty(2, 3, 4, device="meta"), **kwargs)
    assert m.device.type == "meta"
    assert (m.shape, m.dtype) == (expected.shape, expected.dtype)


def test_out_of_a_castable_dtype_receives_the_cast_result() -> None:
    x = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    out32 = dt.empty(3, dtype=dt.float32)
    dt.sum(dt.from_numpy(x), 1, out=out32)
    np.testing.assert_array_equal(out32.numpy(), np.sum(x, axis=1).astype(np.float32))
    out_i32 = dt.empty(3, dtype=dt.int32)
    dt.argmax(dt.from_numpy(x), 1, out=out_i32)
    assert out_i32.tolist() == [3, 3, 3]
    out_f = dt.empty(4)
    dt.any(dt.from_numpy(x), 0, out=out_f)
    assert out_f.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_rejected_out_calls_change_nothing() -> None:
    x = _input()
    out_int = dt.zeros(3, 4, dtype=dt.int64)
    snap = snapshot(x, out_int)
    with pytest.raises(CastingError, match="mean"):
        dt.mean(x, 0, out=out_int)
    with pytest.raises(ValueError, match="multiple times"):
        dt.sum(x, (0, 0), out=out_int)
    assert_unchanged(snap)
    # A reduction writing into its own input goes through a temporary (tests/test_out_is_input.py); a partial
    # overlap stays an error.
    view = x[0]
    with pytest.raises(MemoryOverlapError):
        dt.amax(x, 0, out=view)


def test_reductions_are_tensor_methods() -> None:
    x = _input()
    np.testing.assert_array_equal(x.sum(1).numpy(), dt.sum(x, 1).numpy())
    assert x.argmax().item() == int(np.argmax(x.numpy()))
    assert x.std(correction=0).item() == pytest.approx(float(np.std(x.numpy())))
    assert x.logsumexp(0).shape == (3, 4)
    assert x.all().item() is True


# --- CUDA impls: through the NumPy-backed CuPy stand-in everywhere, and on a real GPU when one is present -------

_F = np.random.default_rng(5).standard_normal((3, 4, 2))
_I = np.random.default_rng(6).integers(-5, 6, (3, 4)).astype(np.int32)
CUDA_CASES: list[tuple[Callable[..., dt.Tensor], Array, dict[str, Any]]] = [
    *[(fn, _F, kwargs) for fn, kwargs in OUT_CASES],
    (dt.sum, _I, {"dim": 0}),
    (dt.prod, _I, {"dim": (0, 1), "keepdim": True}),
    (dt.mean, _I, {"dim": None}),
    (dt.sum, _F, {"dim": 1, "dtype": dt.float32}),
    (dt.amax, _I, {"dim": -1, "keepdim": True}),
    (dt.argmin, _I, {"dim": 0}),
    (dt.var, _I, {"dim": 1, "correction": 2}),
    (dt.logsumexp, _I, {"dim": None}),
    (dt.all, _I, {"dim": 1}),
    (dt.sum, np.zeros((0, 3)), {"dim": 0}),
    (dt.logsumexp, np.zeros((2, 0)), {"dim": 1}),
    (dt.amax, np.array(2.5), {"dim": 0}),
    (dt.logsumexp, np.array(2.5), {}),
]


def _check_on(device: str) -> None:
    for fn, arr, kwargs in CUDA_CASES:
        label = f"{fn.__name__}({arr.dtype}{list(arr.shape)}, {kwargs})"
        want = fn(dt.from_numpy(arr), **kwargs)
        got = fn(dt.tensor(arr, device=device), **kwargs)
        assert str(got.device) == device, label
        assert (got.shape, got.dtype) == (want.shape, want.dtype), label
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, err_msg=label)
        out = dt.empty(*want.shape, dtype=want.dtype, device=device)
        assert fn(dt.tensor(arr, device=device), **kwargs, out=out) is out
        np.testing.assert_allclose(out.cpu().numpy(), want.numpy(), rtol=1e-12, err_msg=label)


def test_cuda_impls_on_the_stand_in(fake_cupy: Any) -> None:
    fake_cupy.state.writeable_flag = True  # structured._check_writable reads NumPy's writeable flag
    _check_on("cuda:1")
    for name in ("sum", "amax", "argmax", "var", "all"):
        assert set(fake_cupy.state.devices_of(name)) == {1}, name  # every kernel ran under cuda:1's guard


@pytest.mark.cuda
def test_cuda_impls_on_a_gpu() -> None:
    _check_on("cuda")


# --- a rejected call that still wrote its out ----------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_var_with_a_huge_int_correction_does_not_write_out_before_raising() -> None:
    x = dt.tensor([1.0, 2.0, 4.0])
    o = dt.zeros(())
    try:
        dt.var(x, correction=10**30, out=o)
    except (ValueError, OverflowError, TypeError) as e:
        # once: NumPy's bare "Python int too large to convert to C long", after np.var wrote the sum of
        # squared deviations into out
        assert "var" in str(e)
        assert o.item() == 0.0
        assert o.version == 0
    else:
        # or accept it as a float correction of that size is accepted (the result is inf)
        assert o.item() == dt.var(x, correction=1e30).item()


# --- mean of float16 overflows where NumPy (and PyTorch) accumulate in float32 -----------------------------


@pytest.mark.parametrize(
    "dim, keepdim",
    [(None, False), (1, True)],
    ids=["all", "dim1-keepdim"],
)
def test_mean_of_float16_accumulates_in_float32(dim: int | tuple[int, ...] | None, keepdim: bool) -> None:
    data = np.full((2, 2), 60000, np.float16)
    expected = np.mean(data, axis=dim, keepdims=keepdim)  # 60000 in float16 (float32 accumulation)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = dt.mean(dt.from_numpy(data), dim, keepdim)  # once inf: np.mean(..., out=<float16>) sums in f16
    assert result.dtype == expected.dtype
    assert result.numpy().tolist() == expected.tolist()


@pytest.mark.parametrize("fn", [dt.sum, dt.prod, dt.mean, dt.amax, dt.argmax, dt.std, dt.var, dt.logsumexp])
def test_a_numpy_integer_dim_is_an_int(fn: Callable[..., dt.Tensor]) -> None:
    x = dt.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(fn(x, np.int64(1)).numpy(), fn(x, 1).numpy())
    with pytest.raises(TypeError, match=f"{fn.__name__}: argument 'dim'"):
        fn(x, True)


@pytest.mark.parametrize("fn", [dt.sum, dt.mean, dt.prod, dt.var, dt.std])
@pytest.mark.parametrize("perm", [(2, 0, 1), (1, 2, 0), (0, 2, 1)])
def test_reductions_of_non_contiguous_inputs_give_numpys_exact_values(
    fn: Callable[..., dt.Tensor], perm: tuple[int, ...]
) -> None:
    # NumPy sums in the order of a fresh result's layout (its input's); a C-ordered out= would change the
    # summation order (a difference of 1 ulp, e.g. np.mean of a transposed (50, 30, 40) float32 array over dim 2).
    base = np.random.default_rng(0).standard_normal((30, 40, 50)).astype(np.float32)
    a = base.transpose(perm)
    reference = getattr(np, fn.__name__)
    kw = {"ddof": 1} if fn in (dt.var, dt.std) else {}
    t = dt.from_numpy(base).permute(*perm)
    for dim in (0, 1, 2):
        expected = reference(a, axis=dim, **kw)
        np.testing.assert_array_equal(fn(t, dim).numpy(), expected)
        out = dt.empty(*expected.shape, dtype=dt.float32)
        fn(t, dim, out=out)
        np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(dt.mean(t[:, ::2], 2).numpy(), np.mean(a[:, ::2], axis=2))
