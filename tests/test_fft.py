"""Value tests for ``devtensor.fft`` (and the Array API's ``fft`` extension over it): hypothesis-drawn tensors of
every dtype against ``numpy.fft`` (the same values, the dtype of the input's precision), PyTorch's argument rules
and errors, out= and atomicity, the frequency factories, meta tensors and the CUDA stand-in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import devtensor as dt
import devtensor.array_api.fft as xfft
from devtensor.structured import get_op

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

#: ``devtensor.fft`` untyped, for calls that pass wrong arguments on purpose.
FFT: Any = dt.fft

DTYPES: list[np.dtype[Any]] = [
    np.dtype(t)
    for t in (np.bool_, np.int8, np.int64, np.uint8, np.float16, np.float32, np.float64, np.complex64, np.complex128)
]
REAL = [d for d in DTYPES if d.kind != "c"]
SINGLE = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)}
NORMS = st.sampled_from([None, "backward", "forward", "ortho"])

#: op name -> (kind, accepts complex input): c2c transforms, real-to-complex, complex-to-real.
ONE_DIM = {"fft": "c2c", "ifft": "c2c", "rfft": "r2c", "ihfft": "r2c", "irfft": "c2r", "hfft": "c2r"}
N_DIM = {"fftn": "c2c", "ifftn": "c2c", "rfftn": "r2c", "irfftn": "c2r"}


def arrays(dtypes: list[np.dtype[Any]], min_dims: int = 1) -> st.SearchStrategy[Any]:
    shapes = hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=5)
    finite: dict[str, Any] = {"allow_nan": False, "allow_infinity": False}

    def draw(d: np.dtype[Any]) -> st.SearchStrategy[Any]:
        if d.kind == "f":
            return hnp.arrays(d, shapes, elements={**finite, "min_value": -100, "max_value": 100})
        if d.kind == "c":
            return hnp.arrays(d, shapes, elements={**finite, "max_magnitude": 100})
        return hnp.arrays(d, shapes)

    return st.sampled_from(dtypes).flatmap(draw)


def expected_dtype(kind: str, dtype: np.dtype[Any]) -> np.dtype[Any]:
    single = dtype in SINGLE
    if kind == "c2r":
        return np.dtype(np.float32 if single else np.float64)
    return np.dtype(np.complex64 if single else np.complex128)


def same(got: dt.Tensor, want: Any, dtype: np.dtype[Any]) -> None:
    """``got`` has ``dtype`` and NumPy's values ``want`` (both run pocketfft in the same precision; a tolerance
    scaled to the largest value covers the order of operations)."""
    assert got.dtype == dtype, (got.dtype, dtype)
    want = np.asarray(want)
    tol = 1e-5 if dtype in SINGLE or dtype.itemsize <= 8 else 1e-12
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got.numpy(), want.astype(dtype), rtol=tol, atol=tol * scale)


# --- values against numpy.fft ------------------------------------------------------------------------------------


def _half_as_single(a: Any) -> Any:
    """float16 as float32: devtensor transforms float16 in float32 throughout, where NumPy computes the ``norm``
    factor in float16 (``1/sqrt(2)`` rounded to 11 bits)."""
    return a.astype(np.float32) if a.dtype == np.float16 else a


@pytest.mark.parametrize("name", sorted(ONE_DIM))
@given(data=st.data())
def test_one_dim_transforms_match_numpy(name: str, data: st.DataObject) -> None:
    kind = ONE_DIM[name]
    a = data.draw(arrays(REAL if kind == "r2c" else DTYPES))
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.none() | st.integers(1, 8))
    if n is None and kind == "c2r" and a.shape[dim] < 2:
        n = 2
    norm = data.draw(NORMS)
    got = getattr(dt.fft, name)(dt.tensor(a), n, dim, norm)
    want = getattr(np.fft, name)(_half_as_single(a), n=n, axis=dim, norm=norm)
    same(got, want, expected_dtype(kind, a.dtype))


@pytest.mark.parametrize("name", sorted(N_DIM))
@given(data=st.data())
def test_n_dim_transforms_match_numpy(name: str, data: st.DataObject) -> None:
    kind = N_DIM[name]
    a = data.draw(arrays(REAL if kind == "r2c" else DTYPES))
    axes = data.draw(st.none() | st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True))
    sizes = None
    if data.draw(st.booleans()):
        count = len(axes) if axes is not None else data.draw(st.integers(1, a.ndim))
        sizes = data.draw(st.lists(st.integers(1, 7), min_size=count, max_size=count))
    norm = data.draw(NORMS)
    resolved = axes if axes is not None else list(range(a.ndim - len(sizes), a.ndim) if sizes else range(a.ndim))
    if kind == "c2r" and sizes is None and a.shape[resolved[-1]] < 2:
        return  # the default output length 2 * (size - 1) would be 0: an error (tested below)
    got = getattr(dt.fft, name)(dt.tensor(a), sizes, axes, norm)
    want = getattr(np.fft, name)(_half_as_single(a), s=sizes, axes=resolved, norm=norm)
    same(got, want, expected_dtype(kind, a.dtype))


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@given(a=arrays(DTYPES, min_dims=1), data=st.data())
def test_shifts_match_numpy(name: str, a: Any, data: st.DataObject) -> None:
    dims = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1) | st.lists(st.integers(0, a.ndim - 1), unique=True))
    got = getattr(dt.fft, name)(dt.tensor(a), dims)
    want = getattr(np.fft, name)(a, axes=dims) if dims != [] else a
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got.numpy(), want, strict=True)


def test_round_trips() -> None:
    rng = np.random.default_rng(0)
    x = dt.tensor(rng.standard_normal((4, 6)))
    np.testing.assert_allclose(dt.fft.ifft(dt.fft.fft(x)).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(dt.fft.irfft(dt.fft.rfft(x), 6).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(dt.fft.irfftn(dt.fft.rfftn(x), (4, 6)).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(dt.fft.hfft(dt.fft.ihfft(x), 6).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_array_equal(dt.fft.ifftshift(dt.fft.fftshift(x)).numpy(), x.numpy())


def test_precision_follows_the_input() -> None:
    for dtype, c, r in (
        (dt.float16, dt.complex64, dt.float32),
        (dt.float32, dt.complex64, dt.float32),
        (dt.complex64, dt.complex64, dt.float32),
        (dt.float64, dt.complex128, dt.float64),
        (dt.int32, dt.complex128, dt.float64),
        (dt.bool, dt.complex128, dt.float64),
        (dt.complex128, dt.complex128, dt.float64),
    ):
        x = dt.ones(4, 4, dtype=dtype)
        assert dt.fft.fft(x).dtype == c and dt.fft.fftn(x).dtype == c and dt.fft.ifftn(x).dtype == c
        assert dt.fft.irfft(x).dtype == r and dt.fft.hfft(x).dtype == r and dt.fft.irfftn(x).dtype == r
        if dtype.kind != "c":
            assert dt.fft.rfft(x).dtype == c and dt.fft.ihfft(x).dtype == c and dt.fft.rfftn(x).dtype == c


def test_no_dims_gives_the_input_as_complex() -> None:
    x = dt.tensor(np.arange(6.0).reshape(2, 3))
    for fn in (dt.fft.fftn, dt.fft.ifftn):
        got = fn(x, dim=())
        assert got.dtype == dt.complex128
        np.testing.assert_array_equal(got.numpy(), x.numpy())
        scalar = fn(dt.tensor(2.5, dtype=dt.float32))
        assert scalar.shape == () and scalar.dtype == dt.complex64 and scalar.item() == 2.5


def test_pytorch_defaults_for_s_and_dim() -> None:
    x = dt.ones(2, 3, 4)
    assert dt.fft.fftn(x, s=(5,)).shape == (2, 3, 5)  # s alone: the last len(s) dims
    assert dt.fft.fftn(x, s=5).shape == (2, 3, 5)
    assert dt.fft.fftn(x, s=(-1, 6), dim=(0, 2)).shape == (2, 3, 6)  # -1 keeps the size
    assert dt.fft.rfftn(x).shape == (2, 3, 3)
    assert dt.fft.irfftn(x).shape == (2, 3, 6)
    assert dt.fft.irfftn(x, s=(-1, -1)).shape == (2, 3, 6)
    assert dt.fft.irfft(x, dim=0).shape == (2, 3, 4)
    assert dt.fft.rfft(x, n=7, dim=1).shape == (2, 4, 4)


# --- errors ------------------------------------------------------------------------------------------------------


def test_argument_errors_name_the_argument() -> None:
    x = dt.ones(2, 4)
    cases: list[tuple[Callable[[], Any], type[Exception], str]] = [
        (lambda: FFT.fft(x, n=0), ValueError, "'n'"),
        (lambda: FFT.fft(x, n=-3), ValueError, r"\(-3\)"),
        (lambda: FFT.fft(x, n=True), TypeError, "'n'"),
        (lambda: FFT.fft(x, n=2.0), TypeError, "'n'"),
        (lambda: FFT.fft(x, dim=2), IndexError, "'dim'"),
        (lambda: FFT.fft(x, norm="bad"), ValueError, "'norm'.*'bad'"),
        (lambda: FFT.fft(x, norm=1), TypeError, "'norm'"),
        (lambda: FFT.fft(dt.tensor(1.0)), IndexError, "no dimensions"),
        (lambda: FFT.fft(dt.ones(0)), ValueError, r"\(0\)"),
        (lambda: FFT.irfft(dt.ones(1)), ValueError, r"\(0\)"),
        (lambda: FFT.rfft(dt.ones(4, dtype=dt.complex64)), TypeError, "real input"),
        (lambda: FFT.ihfft(dt.ones(4, dtype=dt.complex128)), TypeError, "real input"),
        (lambda: FFT.rfftn(dt.ones(4, dtype=dt.complex128)), TypeError, "real input"),
        (lambda: FFT.fftn(x, dim=(0, 0)), ValueError, "multiple times"),
        (lambda: FFT.fftn(x, dim=(0, 2)), IndexError, "'dim'"),
        (lambda: FFT.fftn(x, s=(2, 2, 2)), ValueError, "'s'"),
        (lambda: FFT.fftn(x, s=(2,), dim=(0, 1)), ValueError, "same length"),
        (lambda: FFT.fftn(x, s=(0, 2)), ValueError, "'s'"),
        (lambda: FFT.fftn(x, s="ab"), TypeError, "'s'"),
        (lambda: FFT.rfftn(x, dim=()), ValueError, "at least one"),
        (lambda: FFT.irfftn(dt.tensor(1.0)), ValueError, "at least one"),
        (lambda: FFT.fftn(dt.tensor(1.0), dim=0), IndexError, "no dimensions"),
        (lambda: FFT.fftshift(x, dim=3), IndexError, "'dim'"),
        (lambda: FFT.fftshift(x, dim=(1, -1)), ValueError, "multiple times"),
    ]
    for call, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            call()


def test_errors_are_devtensor_errors_of_the_standard_types() -> None:
    x = dt.ones(4)
    with pytest.raises(dt.DevtensorError):
        FFT.fft(x, norm="backwards")
    with pytest.raises(dt.CastingError):
        FFT.fft(x, out=dt.empty(4))  # complex128 does not cast same_kind to float64


def test_a_refused_call_changes_nothing() -> None:
    x = dt.tensor(np.arange(4.0))
    out = dt.zeros(4, dtype=dt.complex128)
    before = out.version
    calls: list[Callable[[], Any]] = [
        lambda: FFT.fft(x, norm="nope", out=out),
        lambda: FFT.fft(x, n=0, out=out),
        lambda: FFT.fft(x, out=dt.empty(4, dtype=dt.float64)),
    ]
    for call in calls:
        with pytest.raises((ValueError, TypeError)):
            call()
    assert out.version == before
    np.testing.assert_array_equal(out.numpy(), np.zeros(4))
    np.testing.assert_array_equal(x.numpy(), np.arange(4.0))


def test_out_writes_and_casts() -> None:
    x = dt.tensor(np.arange(8.0, dtype=np.float32))
    out = dt.empty(8, dtype=dt.complex128)
    assert dt.fft.fft(x, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.fft.fft(np.arange(8.0, dtype=np.float32)), rtol=1e-6)
    real_out = dt.empty(14)
    assert dt.fft.irfft(x, out=real_out) is real_out
    np.testing.assert_allclose(real_out.numpy(), np.fft.irfft(np.arange(8.0)), rtol=1e-5, atol=1e-6)
    with pytest.warns(UserWarning):
        resized = dt.fft.rfft(x, out=dt.empty(2, dtype=dt.complex64))
    assert resized.shape == (5,)


# --- namespace ---------------------------------------------------------------------------------------------------


def test_namespace_is_the_ops_functional_variants() -> None:
    for name in (*ONE_DIM, *N_DIM, "fftshift", "ifftshift"):
        assert getattr(dt.fft, name) is get_op(f"fft_{name}").functional
        assert not hasattr(dt, f"fft_{name}") and not hasattr(dt.Tensor, f"fft_{name}")
    assert sorted(dt.fft.__all__) == sorted([*ONE_DIM, *N_DIM, "fftshift", "ifftshift", "fftfreq", "rfftfreq"])
    assert dt.fft.fft.__doc__ and "numpy.fft.fft" in dt.fft.fft.__doc__


def test_meta_tensors_give_shape_and_dtype() -> None:
    x = dt.empty(3, 8, dtype=dt.float32, device="meta")
    y = dt.fft.rfft(x, n=10)
    assert y.device.type == "meta" and y.shape == (3, 6) and y.dtype == dt.complex64
    assert dt.fft.irfftn(dt.empty(3, 8, device="meta")).shape == (3, 14)
    assert dt.fft.fftfreq(7, device="meta").shape == (7,)


def test_modes_see_the_calls() -> None:
    x = dt.ones(4)
    with dt.library.CountingMode() as counts:
        dt.fft.fft(x)
        dt.fft.fftshift(x)
    assert counts.counts.get("fft_fft") == 1 and counts.counts.get("fft_fftshift") == 1


# --- frequencies -------------------------------------------------------------------------------------------------


@given(n=st.integers(1, 40), d=st.floats(0.01, 100), single=st.booleans())
def test_frequencies_match_numpy(n: int, d: float, single: bool) -> None:
    dtype = dt.float32 if single else None
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(dt.fft, name)(n, d, dtype=dtype)
        want = getattr(np.fft, name)(n, d)
        assert got.dtype == (np.float32 if single else np.float64)
        np.testing.assert_array_equal(got.numpy(), want.astype(got.dtype))


def test_frequency_arguments() -> None:
    assert dt.fft.fftfreq(4, dtype=dt.complex64).dtype == dt.complex64
    assert dt.fft.fftfreq(0).shape == (0,)
    out = dt.empty(5, dtype=dt.float32)
    assert dt.fft.fftfreq(5, 0.5, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.fft.fftfreq(5, 0.5).astype(np.float32))
    cases: list[tuple[Callable[[], Any], type[Exception], str]] = [
        (lambda: dt.fft.fftfreq(-1), ValueError, "'n'"),
        (lambda: FFT.fftfreq(2.5), TypeError, "'n'"),
        (lambda: dt.fft.fftfreq(True), TypeError, "'n'"),
        (lambda: dt.fft.rfftfreq(0), ValueError, "'n'"),
        (lambda: dt.fft.fftfreq(4, 0.0), ValueError, "'d'"),
        (lambda: FFT.fftfreq(4, "1"), TypeError, "'d'"),
        (lambda: dt.fft.rfftfreq(4, dtype=dt.int64), TypeError, "floating point"),
        (lambda: FFT.fftfreq(4, out=np.zeros(4)), TypeError, "'out'"),
    ]
    for call, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            call()


# --- empty inputs ------------------------------------------------------------------------------------------------


def empty_input_cases(device: str) -> list[tuple[Callable[..., dt.Tensor], tuple[Any, ...], dict[str, Any]]]:
    """Transforms of inputs empty along a transformed dim, zero-padded to a non-empty result: all zeros."""
    z = dt.tensor(np.zeros(0, np.complex128), device=device)
    z2 = dt.tensor(np.zeros((3, 0), np.complex64), device=device)
    return [
        (dt.fft.irfft, (z,), {"n": 1}),
        (dt.fft.irfft, (z2,), {"n": 4}),
        (dt.fft.hfft, (z,), {"n": 3}),
        (dt.fft.fft, (z,), {"n": 3}),
        (dt.fft.rfft, (z2.real,), {"n": 5}),
        (dt.fft.ihfft, (z2.real,), {"n": 2}),
        (dt.fft.irfftn, (z2,), {"s": (3, 4)}),
        (dt.fft.irfftn, (z2,), {"s": (2, 5), "dim": (0, 1)}),
        (dt.fft.fftn, (z2,), {"s": (3, 2)}),
        (dt.fft.rfftn, (z2.real,), {"s": (2, 3)}),
    ]


@pytest.mark.parametrize("case", range(10))
def test_inputs_empty_along_a_transformed_dim_give_zeros(case: int) -> None:
    # NumPy's c2r transforms return memory nobody wrote for these: every element must be written (zeros).
    fn, args, kwargs = empty_input_cases("cpu")[case]
    for _ in range(2):
        got = fn(*args, **kwargs)
        assert got.numel() > 0
        np.testing.assert_array_equal(got.numpy(), np.zeros(got.shape, got.dtype), strict=True)
        out = dt.full(got.shape, 7, dtype=got.dtype)
        fn(*args, **kwargs, out=out)
        np.testing.assert_array_equal(out.numpy(), got.numpy(), strict=True)


# --- CUDA (the stand-in) -----------------------------------------------------------------------------------------


def test_transforms_on_the_cuda_stand_in(fake_cupy: Any) -> None:
    a = np.arange(12.0).reshape(3, 4)
    x = dt.tensor(a, device="cuda:1")
    for got, want in (
        (dt.fft.fft(x, n=6), np.fft.fft(a, n=6)),
        (dt.fft.rfftn(x, norm="ortho"), np.fft.rfftn(a, norm="ortho")),
        (dt.fft.irfft(dt.fft.rfft(x)), np.fft.irfft(np.fft.rfft(a))),
        (dt.fft.fftshift(x, dim=1), np.fft.fftshift(a, axes=1)),
        (dt.fft.fftfreq(5, device="cuda:1"), np.fft.fftfreq(5)),
    ):
        assert got.device == x.device
        np.testing.assert_allclose(got.cpu().numpy(), want)
    for fn, args, kwargs in empty_input_cases("cuda:1"):
        got = fn(*args, **kwargs)
        assert got.device == x.device
        np.testing.assert_array_equal(got.cpu().numpy(), np.zeros(got.shape, got.dtype), strict=True)


# --- the Array API extension -------------------------------------------------------------------------------------


def test_array_api_fft_maps_onto_devtensor_fft() -> None:
    a = np.arange(24.0).reshape(2, 3, 4) + 1j
    x = dt.tensor(a)
    np.testing.assert_allclose(xfft.fft(x, n=5, axis=1, norm="ortho").numpy(), np.fft.fft(a, 5, 1, "ortho"))
    np.testing.assert_allclose(xfft.ifftn(x, s=[3, 2], axes=[0, 2]).numpy(), np.fft.ifftn(a, [3, 2], [0, 2]))
    np.testing.assert_allclose(xfft.irfftn(x, axes=(1, 2)).numpy(), np.fft.irfftn(a, axes=(1, 2)))
    np.testing.assert_allclose(xfft.hfft(x).numpy(), np.fft.hfft(a))
    r = dt.tensor(a.real.astype(np.float32))
    assert xfft.rfft(r).dtype == dt.complex64 and xfft.ihfft(r).dtype == dt.complex64
    np.testing.assert_allclose(xfft.rfftn(r, axes=[0]).numpy(), np.fft.rfftn(a.real, axes=[0]), rtol=1e-6)
    np.testing.assert_array_equal(xfft.fftshift(r, axes=[0, 1]).numpy(), np.fft.fftshift(a.real, axes=[0, 1]))
    np.testing.assert_array_equal(xfft.ifftshift(r).numpy(), np.fft.ifftshift(a.real))
    assert xfft.fftfreq(4, d=2.0, dtype=dt.float32).dtype == dt.float32
    np.testing.assert_array_equal(xfft.rfftfreq(9, d=0.5).numpy(), np.fft.rfftfreq(9, 0.5))
    with pytest.raises(TypeError):
        xfft.fft(x, 4)  # type: ignore[call-arg]  # n is keyword-only
