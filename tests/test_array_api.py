"""devtensor.array_api: the namespace a tensor hands out, the standard's names, signatures and defaults mapped onto
devtensor's ops (values against NumPy), data type and inspection functions, and CUDA tensors through the stand-in.
The standard's own conformance suite runs through ``../shared/run-array-api-tests`` (see README)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import devtensor as dt
from devtensor import array_api as xp
from devtensor import library
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError


def _same(result: Any, expected: Any) -> None:
    assert isinstance(result, dt.Tensor), type(result)
    expected = np.asarray(expected)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


def test_tensors_hand_out_the_namespace() -> None:
    t = dt.tensor([1.0])
    assert t.__array_namespace__() is xp
    assert t.__array_namespace__(api_version="2023.12").__array_api_version__ == "2023.12"
    with pytest.raises(ArgumentValueError, match=r"2021\.12"):
        t.__array_namespace__(api_version="2021.12")
    assert xp.__array_api_version__ == "2024.12"


def test_constants_and_dtypes() -> None:
    assert xp.float32 == np.dtype("float32") and xp.bool == np.dtype(bool)
    assert xp.e == np.e and xp.pi == np.pi and np.isinf(xp.inf) and np.isnan(xp.nan) and xp.newaxis is None


def test_data_type_functions() -> None:
    assert xp.isdtype(xp.int8, "signed integer") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.float64, ("integral", "real floating"))
    assert xp.isdtype(xp.complex64, xp.complex64)
    with pytest.raises(ArgumentValueError, match="kind"):
        xp.isdtype(xp.int8, "integer")
    with pytest.raises(ArgumentTypeError):
        xp.isdtype("int8", "integral")
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps
    assert xp.finfo(dt.tensor([1.0], dtype="float32")).bits == 32
    assert xp.iinfo(xp.int16).max == 32767
    with pytest.raises(ArgumentValueError):
        xp.iinfo(xp.float32)
    assert xp.can_cast(xp.int8, xp.int16) and not xp.can_cast(xp.int16, xp.int8)
    assert xp.result_type(xp.int8, xp.uint8) == np.int16
    assert xp.result_type(dt.tensor([1], dtype="int8"), 1) == np.int8
    # Python scalars alone have no result type in the standard: a ValueError, as array-api-strict's
    with pytest.raises(ArgumentValueError, match=r"result_type.*array or dtype"):
        xp.result_type(-2, 1, 10.0)
    with pytest.raises(ArgumentValueError, match="result_type"):
        xp.result_type()
    assert xp.result_type(xp.float16, 1.0) == np.float16 and xp.float16 == np.dtype("float16")
    assert "float16" not in xp.__array_namespace_info__().dtypes()  # (not a standard dtype, as NumPy's)
    np.testing.assert_array_equal(xp.full((2,), np.asarray(1.5, np.float16)).numpy(), np.full(2, 1.5, np.float16))
    assert xp.full_like(xp.zeros(2), dt.tensor(3)).tolist() == [3.0, 3.0]
    t = dt.tensor([1.5, 2.5])
    assert xp.astype(t, xp.int32).tolist() == [1, 2]
    assert xp.astype(t, xp.float64, copy=False) is t


def test_inspection() -> None:
    info = xp.__array_namespace_info__()
    assert info.default_device() == dt.Device("cpu")
    assert dt.Device("cpu") in info.devices()
    assert info.default_dtypes()["real floating"] == xp.float64
    assert set(info.dtypes(kind="integral")) == {
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
    }
    assert info.capabilities()["boolean indexing"] is True


def test_creation_functions() -> None:
    _same(xp.arange(5), np.arange(5))
    _same(xp.arange(1, 2, 0.25), np.arange(1, 2, 0.25))
    _same(xp.linspace(0, 1, 5, endpoint=False), np.linspace(0, 1, 5, endpoint=False))
    _same(xp.linspace(0, 1, num=3), np.linspace(0, 1, 3))
    _same(xp.eye(3, 4, k=1), np.eye(3, 4, k=1))
    _same(xp.eye(3, k=-2, dtype=xp.int8), np.eye(3, k=-2, dtype=np.int8))
    _same(xp.full(3, 2.5), np.full(3, 2.5))
    _same(xp.zeros((2, 0)), np.zeros((2, 0)))
    a = np.arange(12.0).reshape(3, 4)
    _same(xp.tril(dt.tensor(a), k=1), np.tril(a, 1))
    _same(xp.triu(dt.tensor(a)), np.triu(a))
    gx, gy = xp.meshgrid(xp.arange(3), xp.arange(2))
    nx, ny = np.meshgrid(np.arange(3), np.arange(2))
    _same(gx, nx)
    _same(gy, ny)
    gi = xp.meshgrid(xp.arange(3), xp.arange(2), indexing="ij")
    for g, n in zip(gi, np.meshgrid(np.arange(3), np.arange(2), indexing="ij"), strict=True):
        _same(g, n)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=st.floats(-10, 10)))
def test_statistics_with_the_standards_defaults(a: np.ndarray[Any, Any]) -> None:
    t = dt.tensor(a)
    _same(xp.sum(t, axis=0), np.sum(a, axis=0))
    _same(xp.mean(t, axis=-1, keepdims=True), np.mean(a, axis=-1, keepdims=True))
    _same(xp.max(t), np.max(a))
    _same(xp.std(t), np.std(a))  # correction 0, the standard's default (PyTorch's is 1)
    _same(xp.var(t, axis=0), np.var(a, axis=0))
    _same(xp.prod(t, axis=(0,)), np.prod(a, axis=0))
    _same(xp.diff(t, axis=-1), np.diff(a, axis=-1))
    _same(xp.count_nonzero(t), np.count_nonzero(a))
    _same(xp.argmax(t, axis=0), np.argmax(a, axis=0))
    _same(xp.argmin(t, keepdims=True), np.argmin(a, keepdims=True))


@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=st.integers(-5, 5)))
def test_manipulation_against_numpy(a: np.ndarray[Any, Any]) -> None:
    t = dt.tensor(a)
    _same(xp.flip(t), np.flip(a))
    _same(xp.flip(t, axis=0), np.flip(a, axis=0))
    _same(xp.roll(t, 2), np.roll(a, 2))
    _same(xp.roll(t, -1, axis=0), np.roll(a, -1, axis=0))
    _same(xp.tile(t, (2, 1)), np.tile(a, (2, 1)))
    _same(xp.repeat(t, 2, axis=0), np.repeat(a, 2, axis=0))
    _same(xp.repeat(t, 2), np.repeat(a, 2))
    _same(xp.moveaxis(t, 0, -1), np.moveaxis(a, 0, -1))
    _same(xp.permute_dims(t, tuple(reversed(range(a.ndim)))), np.transpose(a))
    _same(xp.expand_dims(t, axis=-1), np.expand_dims(a, -1))
    _same(xp.concat([t, t], axis=None), np.concatenate([a, a], axis=None))
    _same(xp.stack([t, t], axis=-1), np.stack([a, a], axis=-1))
    for u, n in zip(xp.unstack(t, axis=0), list(a), strict=True):
        _same(u, n)
    _same(xp.reshape(t, (-1,)), a.reshape(-1))
    nz = xp.nonzero(t)
    for got, want in zip(nz, np.nonzero(a), strict=True):
        _same(got, want)
    flat = a.reshape(-1)
    values, counts = xp.unique_counts(dt.tensor(flat))
    nv, nc = np.unique(flat, return_counts=True)
    _same(values, nv)
    _same(counts, nc)


def test_errors_the_standard_requires() -> None:
    t = dt.tensor([[1.0, 2.0]])
    with pytest.raises(ShapeError, match="length 2"):
        xp.squeeze(t, axis=1)
    _same(xp.squeeze(t, axis=0), [1.0, 2.0])
    with pytest.raises(ShapeError, match="0-d"):
        xp.nonzero(dt.tensor(1.0))
    with pytest.raises(ArgumentValueError, match="axis"):
        xp.take(t, dt.tensor([0]))
    with pytest.raises(ShapeError, match="at least 2"):
        xp.matrix_transpose(dt.tensor([1.0]))


def test_indexing_searching_and_linear_algebra() -> None:
    a = np.arange(12.0).reshape(3, 4)
    t = dt.tensor(a)
    _same(xp.take(t, dt.tensor([2, 0]), axis=1), np.take(a, [2, 0], axis=1))
    _same(xp.where(t > 5, t, 0.0), np.where(a > 5, a, 0.0))
    _same(xp.searchsorted(dt.tensor([1.0, 3.0, 5.0]), dt.tensor([0.0, 3.0, 6.0]), side="right"),
          np.searchsorted([1.0, 3.0, 5.0], [0.0, 3.0, 6.0], side="right"))  # fmt: skip
    _same(xp.matmul(t, xp.matrix_transpose(t)), a @ a.T)
    _same(xp.vecdot(t, t), np.sum(a * a, axis=-1))
    _same(xp.clip(t, 2, 5), np.clip(a, 2, 5))
    _same(xp.floor_divide(t, 5.0), np.floor_divide(a, 5.0))
    _same(xp.broadcast_arrays(t, dt.tensor([1.0, 2.0, 3.0, 4.0]))[1], np.broadcast_to([1.0, 2.0, 3.0, 4.0], (3, 4)))
    with pytest.raises(ShapeError, match=r"broadcast_arrays.*\[2\].*\[3\].*cannot be broadcast to a single shape"):
        xp.broadcast_arrays(xp.ones(2), xp.ones(3))  # (NumPy's and PyTorch's words, which SciPy's checks match)


def test_computing_functions_run_through_dispatch() -> None:
    t = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    with library.CountingMode() as m:
        xp.sum(t, axis=0)
        xp.multiply(t, 2)
        xp.concat([t, t])
    assert m.counts["sum"] == 1 and m.counts["mul"] == 1 and m.counts["cat"] == 1


@pytest.mark.usefixtures("fake_cupy")
def test_cuda_tensors_stay_on_their_device() -> None:
    t = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device=dt.Device("cuda", 1))
    for r in (xp.sum(t, axis=0), xp.multiply(t, 2), xp.concat([t, t]), xp.roll(t, 1), xp.matrix_transpose(t)):
        assert r.device == dt.Device("cuda", 1)
    assert xp.std(t).cpu().item() == pytest.approx(np.std([1.0, 2.0, 3.0, 4.0]))
    assert xp.ones(2, device=t.device).device == t.device


def test_the_standards_special_cases_are_the_ops_own() -> None:
    """Where the standard's special cases differ from NumPy's, the ops (main namespace too) give the standard's."""
    inf = float("inf")
    a = dt.tensor([inf, -inf, 1.0, -1.0, 7.0])
    b = dt.tensor([2.0, 2.0, -inf, inf, 2.0])
    for r in (xp.floor_divide(a, b), a // b, dt.div(a, b, rounding_mode="floor")):
        got = r.numpy()
        np.testing.assert_array_equal(got, [inf, -inf, -0.0, -0.0, 3.0])
        assert np.signbit(got[2]) and np.signbit(got[3])
    z = dt.tensor([complex(inf, 0.0), complex(-inf, inf), complex(-0.0, 0.0)])
    e = xp.expm1(z).numpy()
    assert e[0] == complex(inf, 0.0) and e[1] == complex(-1.0, 0.0)
    assert e[2] == 0 and not np.signbit(e[2].real)
    th = dt.tanh(dt.tensor([complex(inf, 1e7), complex(-inf, -2.0)])).numpy()
    assert th[0] == 1 and not np.signbit(th[0].imag)
    assert th[1] == -1 and np.signbit(th[1].imag)
    _same(xp.take_along_axis(dt.tensor([1, 2, 3]), dt.tensor([-1, 0])), [3, 1])


@pytest.mark.parametrize("device", ["cpu", "cuda:1"])
def test_sets_repeat_and_eye_run_through_ops(device: str, fake_cupy: object) -> None:
    a = np.array([[3.0, 1.0], [np.nan, 3.0], [np.nan, 1.0]])
    t = xp.asarray(a, device=dt.Device(device))
    with library.CountingMode() as m:
        values, indices, inverse, counts = xp.unique_all(t)
        xp.unique_counts(t)
        xp.unique_inverse(t)
        xp.unique_values(t)
    assert m.counts["unique_all"] == 4
    want = np.unique(a.reshape(-1), return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    for got, w in zip((values, indices, inverse, counts), want, strict=True):
        assert got.device == t.device
        np.testing.assert_array_equal(got.cpu().numpy(), w.reshape(got.shape))
    assert inverse.shape == (3, 2)
    counts_t = xp.asarray([1, 0, 2], device=t.device)
    with library.CountingMode() as m:
        r = xp.repeat(t, counts_t, axis=0)
    assert m.counts["index_select"] == 1 and m.counts["searchsorted"] == 1
    np.testing.assert_array_equal(r.cpu().numpy(), np.repeat(a, [1, 0, 2], axis=0))
    np.testing.assert_array_equal(xp.repeat(t, 2).cpu().numpy(), np.repeat(a, 2))
    np.testing.assert_array_equal(xp.repeat(t, xp.asarray([2], device=t.device), axis=1).cpu().numpy(),
                                  np.repeat(a, 2, axis=1))  # fmt: skip
    with pytest.raises(ArgumentValueError, match="repeat"):
        xp.repeat(t, xp.asarray([1, -1, 0], device=t.device), axis=0)
    with pytest.raises(ArgumentValueError, match="repeat"):
        xp.repeat(t, xp.asarray([1, 1], device=t.device), axis=0)
    for rows, cols, k in ((3, 3, 1), (2, 5, -1), (4, 2, 3), (3, 4, -7), (0, 2, 1), (3, 3, 9)):
        e = xp.eye(rows, cols, k=k, dtype=xp.float32, device=t.device)
        assert e.device == t.device and e.dtype == dt.float32
        np.testing.assert_array_equal(e.cpu().numpy(), np.eye(rows, cols, k=k, dtype=np.float32))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x: xp.sort(x, stable=1), ArgumentTypeError, r"^sort: argument 'stable' must be a bool"),  # type: ignore[arg-type]
        (lambda x: xp.count_nonzero(x, keepdims=1), ArgumentTypeError, r"^count_nonzero: argument 'keepdims'"),  # type: ignore[arg-type]
        (lambda x: xp.max(xp.asarray([1j])), ArgumentTypeError, r"^max: not supported for complex"),
        (lambda x: xp.sum(x, axis=5), IndexError, r"^sum: dimension out of range: argument 'axis' is 5"),
        (lambda x: xp.concat([x, x], axis=5), IndexError, r"^concat: .*argument 'axis' is 5"),
        (lambda x: xp.expand_dims(x, axis=9), IndexError, r"^expand_dims: .*argument 'axis' is 9"),
        (lambda x: xp.roll(x, 1, axis=7), IndexError, r"^roll: .*argument 'axis' is 7"),
        (lambda x: xp.linalg.vector_norm(x, axis=5), IndexError, r"^linalg.vector_norm: .*argument 'axis' is 5"),
        (lambda x: xp.fft.fft(x, axis=5), IndexError, r"^fft.fft: .*argument 'axis' is 5"),
        # built-in errors of the functions' own argument handling, and ops of other names
        (lambda x: xp.reshape(x, None), TypeError, r"^reshape: argument 'shape' of type NoneType"),  # type: ignore[arg-type]
        (lambda x: xp.permute_dims(x, axes=5), TypeError, r"^permute_dims: argument 'axes' of type int \(5\)"),  # type: ignore[arg-type]
        (lambda x: xp.take(None, xp.asarray([0])), TypeError, r"^take: argument 'x' must be an array"),  # type: ignore[arg-type]
        (lambda x: xp.cumulative_sum(None), TypeError, r"^cumulative_sum: argument 'x' must be an array"),  # type: ignore[arg-type]
        (lambda x: xp.cumulative_prod("a"), TypeError, r"^cumulative_prod: argument 'x' must be an array"),  # type: ignore[arg-type]
        (
            lambda x: xp.cumulative_sum(xp.asarray(1.0), axis=-1, include_initial=True),
            ValueError,
            r"^cumulative_sum: a 0-d tensor has no axis",
        ),
        (lambda x: xp.clip(None), TypeError, r"^clip: argument 'x' must be a Tensor, got NoneType"),  # type: ignore[arg-type]
        (lambda x: xp.floor_divide(x, xp.ones(4)), ValueError, r"^floor_divide: shapes \[2, 3\] and \[4\]"),
        (lambda x: xp.multiply(x, "a"), TypeError, r"^multiply: argument 'x2' must be a Tensor or a Python number"),  # type: ignore[arg-type]
        (lambda x: xp.eye(x), TypeError, r"^eye: "),
        (lambda x: xp.tile(x, 2), TypeError, r"^tile: argument 'repetitions' of type int"),  # type: ignore[arg-type]
    ],
)
def test_errors_name_the_standards_function_and_arguments(call: Any, error: type, message: str) -> None:
    """The namespace runs devtensor's ops under PyTorch's names (max runs amax with 'dim'); its errors name the
    function and the arguments the caller wrote."""
    with pytest.raises(error, match=message) as info:
        call(xp.ones((2, 3)))
    assert isinstance(info.value, dt.DevtensorError)
    assert xp.sum.__name__ == "sum" and "axis" in (xp.sum.__doc__ or "")  # (the wrapper keeps name and docstring)


# --- names SciPy's array-API code calls beyond the standard (issue 28) ----------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((-3, 0, 10), {}), ((0, 3, 4), {"base": 2}), ((0, 2, 3), {"endpoint": False}), ((1, 1, 0), {}), ((0, 2), {})],
)
def test_logspace_is_numpys(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    got = xp.logspace(*args, **kwargs)
    np.testing.assert_allclose(got.numpy(), np.logspace(*args, **kwargs), rtol=1e-15)
    assert got.dtype == dt.float64
    assert xp.logspace(xp.asarray(0.0), 3, 4, base=2, dtype=xp.int64).tolist() == [1, 2, 4, 8]
    with pytest.raises(ArgumentTypeError, match="logspace: argument 'base'"):
        xp.logspace(0, 1, 2, base="2")  # type: ignore[arg-type]


def test_real_imag_conj_of_a_python_number_are_0d_arrays() -> None:
    assert xp.real(0).dtype == dt.int64 and xp.real(0).shape == ()
    assert xp.imag(1.5).item() == 0.0 and xp.conj(2 + 1j).item() == 2 - 1j
    assert xp.real(xp.asarray([1 + 2j])).tolist() == [1.0]
