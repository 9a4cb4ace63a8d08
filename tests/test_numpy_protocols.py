"""NumPy's NEP 13 (``__array_ufunc__``) and NEP 18 (``__array_function__``) on devtensor tensors: NumPy ufuncs and
functions run devtensor's ops (result type, device, version bumps, out=), values against NumPy, the reflected
operator paths, NumPy's own implementation for what devtensor lacks (CPU), TypeError on CUDA (stand-in)."""

# NumPy's stubs type its ufuncs and functions as returning NumPy values; through NEP 13/18 they return tensors.
# mypy: disable-error-code="operator,call-overload,arg-type,comparison-overlap,unreachable"
# mypy: disable-error-code="attr-defined,union-attr,type-var"

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import library
from devtensor.errors import ArgumentTypeError, DeviceMismatchError, MemoryOverlapError
from devtensor.numpy_protocols import REDUCE, UFUNCS


def _m() -> tuple[np.ndarray[Any, Any], dt.Tensor]:
    a = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)
    return a, dt.tensor(a)


def _same(result: Any, expected: Any) -> None:
    assert isinstance(result, dt.Tensor), type(result)
    assert result.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


def test_every_table_entry_names_a_devtensor_op() -> None:
    for ufunc, (name, _) in UFUNCS.items():
        assert callable(getattr(dt, name, None)), (ufunc, name)
    for name in REDUCE.values():
        assert callable(getattr(dt, name))


UNARY = [u for u, (n, _) in UFUNCS.items() if u.nin == 1 and n not in ("bitwise_not",)]


@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_unary_ufuncs_run_devtensor_ops(ufunc: np.ufunc) -> None:
    a, t = _m()
    if ufunc is np.logical_not:
        a, t = a > 0, t > 0
    with np.errstate(all="ignore"):
        expected = ufunc(a)
        _same(ufunc(t), expected)


BINARY = [u for u, (n, _) in UFUNCS.items() if u.nin == 2 and not n.startswith("bitwise") and u is not np.matmul]


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_binary_ufuncs_with_tensors_arrays_and_scalars(ufunc: np.ufunc) -> None:
    a, t = _m()
    b = np.array([1.5, 2.0, -1.0], dtype=np.float64)
    if ufunc in (np.logical_and, np.logical_or, np.logical_xor):
        a, t = a > 0, t > 0
    with np.errstate(all="ignore"):
        for args, np_args in (
            ((t, t), (a, a)),
            ((t, b), (a, b)),
            ((b, t), (b, a)),
            ((np.float32(2), t), (np.float32(2), a)),
            ((t, 2), (a, 2)),
        ):
            _same(ufunc(*args), ufunc(*np_args))


def test_operators_between_ndarrays_and_tensors_take_the_same_op_and_dtype() -> None:
    a, t = _m()
    b = np.ones(3, np.float64)
    for fwd, rev in ((t + b, b + t), (t * np.float32(2), np.float32(2) * t), (t - b, -(b - t))):
        assert isinstance(fwd, dt.Tensor) and isinstance(rev, dt.Tensor)
        assert fwd.dtype == rev.dtype
        np.testing.assert_array_equal(fwd.numpy(), rev.numpy())
    assert (b + t).dtype == np.float64
    assert (np.float64(2) * t).dtype == np.float64
    _same(b < t, b < a)
    _same(a @ t.T if hasattr(t, "T") else np.matmul(a, dt.permute(t, (1, 0))), a @ a.T)


def test_ufunc_out_writes_the_tensor_and_bumps_its_version_once() -> None:
    a, t = _m()
    v = t.version
    r = np.add(t, 1, out=t)
    assert r is t and t.version == v + 1
    np.testing.assert_array_equal(t.numpy(), a + 1)
    r2 = np.multiply(t, 2, out=(t,))
    assert r2 is t and t.version == v + 2
    with pytest.raises(MemoryOverlapError):
        np.add(t, t.numpy()[:, ::-1], out=t)
    assert t.version == v + 2


def test_inplace_operator_on_an_ndarray_writes_the_ndarray() -> None:
    a, t = _m()
    arr = np.zeros((2, 3), np.float64)
    before = arr
    arr += t
    assert arr is before and isinstance(arr, np.ndarray)
    np.testing.assert_array_equal(arr, a.astype(np.float64))
    out = np.empty((2, 3), np.float32)
    assert np.exp(t, out=out) is out
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-6)


def test_reduce_method_maps_to_the_reduction() -> None:
    a, t = _m()
    _same(np.add.reduce(t), np.add.reduce(a))
    _same(np.maximum.reduce(t, axis=1), np.maximum.reduce(a, axis=1))
    _same(np.multiply.reduce(t, axis=None, keepdims=True), np.multiply.reduce(a, axis=None, keepdims=True))
    _same(np.logical_or.reduce(t > 0, axis=0), np.logical_or.reduce(a > 0, axis=0))


def test_ufunc_features_devtensor_lacks_run_numpys_own_on_cpu() -> None:
    a, t = _m()
    acc = np.add.accumulate(t, axis=1)
    assert isinstance(acc, np.ndarray)
    np.testing.assert_array_equal(acc, np.add.accumulate(a, axis=1))
    assert isinstance(np.heaviside(t, 0.5), np.ndarray)  # (a ufunc devtensor lacks)
    out = dt.zeros(2, 3, dtype="float32")
    v = out.version
    r = np.add(t, 1, out=out, where=np.array([True, False, True]))
    assert r is out and out.version == v + 1
    np.testing.assert_array_equal(out.numpy(), np.where([True, False, True], a + 1, 0))


REDUCTIONS = [
    (np.sum, {}),
    (np.sum, {"axis": 0}),
    (np.sum, {"axis": (0, 1), "keepdims": True}),
    (np.prod, {"axis": 1}),
    (np.mean, {"axis": 1}),
    (np.std, {}),
    (np.std, {"axis": 0, "ddof": 1}),
    (np.var, {"axis": 1}),
    (np.max, {"axis": 0}),
    (np.amin, {}),
    (np.argmax, {"axis": 1}),
    (np.argmin, {}),
]


@pytest.mark.parametrize(("func", "kwargs"), REDUCTIONS, ids=lambda x: getattr(x, "__name__", str(x)))
def test_reduction_functions(func: Any, kwargs: dict[str, Any]) -> None:
    a, t = _m()
    _same(func(t, **kwargs), func(a, **kwargs))


def test_functions_of_the_table_against_numpy() -> None:
    a, t = _m()
    _same(np.concatenate([t, t]), np.concatenate([a, a]))
    _same(np.concatenate([t, a], axis=1), np.concatenate([a, a], axis=1))
    _same(np.concatenate([t, t], axis=None), np.concatenate([a, a], axis=None))
    _same(np.stack([t, t], axis=1), np.stack([a, a], axis=1))
    _same(np.where(t > 0, t, 0), np.where(a > 0, a, 0))
    # NumPy's where takes the condition's truth (nonzero; NaN is true), of any dtype, tensor or not
    c = np.array([[0.0, 1.0, np.nan], [-2.0, 0.0, 3.0]])
    _same(np.where(dt.tensor(c), 1, 0), np.where(c, 1, 0))
    _same(np.where(dt.tensor(c.astype(np.complex64)), t, 0), np.where(c.astype(np.complex64), a, 0))
    i8 = np.nan_to_num(c).astype(np.int8)
    _same(np.where(i8, t, -1), np.where(i8, a, -1))
    _same(np.where([[1, 0, 2], [0, 0, 1]], t, 0), np.where([[1, 0, 2], [0, 0, 1]], a, 0))
    _same(np.clip(t, -1, 2), np.clip(a, -1, 2))
    _same(np.clip(t, None, 2), np.clip(a, None, 2))
    _same(np.reshape(t, (3, 2)), np.reshape(a, (3, 2)))
    _same(np.transpose(t), np.transpose(a))
    _same(np.swapaxes(t, 0, 1), np.swapaxes(a, 0, 1))
    _same(np.expand_dims(t, (0, 3)), np.expand_dims(a, (0, 3)))
    _same(np.squeeze(np.expand_dims(t, 0)), a)
    _same(np.flip(t), np.flip(a))
    _same(np.flip(t, 1), np.flip(a, 1))
    _same(np.copy(t), a)
    _same(np.ravel(t), np.ravel(a))
    _same(np.dot(t, np.transpose(t)), np.dot(a, a.T))
    _same(np.outer(t[0], t[1]), np.outer(a[0], a[1]))
    _same(np.zeros_like(t), np.zeros_like(a))
    _same(np.ones_like(t, shape=(4,)), np.ones_like(a, shape=(4,)))
    _same(np.full_like(t, 7), np.full_like(a, 7))
    _same(np.broadcast_to(t[0], (2, 3)), np.broadcast_to(a[0], (2, 3)))
    assert np.empty_like(t).shape == (2, 3)
    assert np.result_type(t, 1.0) == np.float32
    assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6 and np.size(t, 1) == 3
    assert np.all(t > -10).item() is True and np.any(t > 5).item() is False


def test_mean_and_std_of_integers_compute_in_float64_as_numpy() -> None:
    t = dt.tensor([1, 2, 4])
    _same(np.mean(t), np.mean(np.array([1, 2, 4])))
    _same(np.std(t), np.std(np.array([1, 2, 4])))


def test_function_out_arguments() -> None:
    a, t = _m()
    out = dt.empty(3, dtype="float32")
    v = out.version
    assert np.sum(t, axis=0, out=out) is out and out.version == v + 1
    arr = np.empty(3, np.float32)
    assert np.sum(t, axis=0, out=arr) is arr
    np.testing.assert_array_equal(arr, a.sum(axis=0))


def test_functions_devtensor_lacks_run_numpy_on_cpu_and_return_numpys_result() -> None:
    a, t = _m()
    counts, edges = np.histogram(t, bins=3)
    assert isinstance(counts, np.ndarray) and isinstance(edges, np.ndarray)
    np.testing.assert_array_equal(counts, np.histogram(a, bins=3)[0])
    assert isinstance(np.median(t), np.floating)
    assert np.allclose(t, a)
    assert isinstance(np.sum(t, where=np.array([True, False, True])), np.floating)


def test_dispatch_modes_see_numpy_calls_as_devtensor_ops() -> None:
    _, t = _m()
    with library.CountingMode() as m:
        np.exp(t)
        np.sum(t, axis=0)
        np.add(t, 1, out=t)
    assert m.counts == {"exp": 1, "sum": 1, "add.out": 1}


@pytest.mark.usefixtures("fake_cupy")
def test_cuda_tensors_through_numpy_give_cuda_tensors_or_a_type_error() -> None:
    a, _ = _m()
    t = dt.tensor(a, device="cuda:1")
    r = np.exp(t)
    assert r.device == dt.Device("cuda", 1)
    np.testing.assert_allclose(r.cpu().numpy(), np.exp(a), rtol=1e-6)
    s = np.sum(t, axis=0)
    assert s.device == dt.Device("cuda", 1)
    np.testing.assert_allclose(s.cpu().numpy(), a.sum(axis=0), rtol=1e-6)
    assert np.concatenate([t, t]).device == dt.Device("cuda", 1)
    with pytest.raises(TypeError, match=r"numpy\.histogram.*cuda:1"):
        np.histogram(t)
    with pytest.raises(ArgumentTypeError, match=r"numpy\.heaviside.*cuda:1"):
        np.heaviside(t, 0.5)
    with pytest.raises(DeviceMismatchError, match="NumPy array"):
        np.add(t, a)
    with pytest.raises(DeviceMismatchError):
        a + t


LATER_UFUNCS = [np.floor, np.square, np.log1p, np.arctan, np.isnan, np.signbit, np.conjugate]


@pytest.mark.parametrize("ufunc", LATER_UFUNCS, ids=lambda u: u.__name__)
def test_later_ops_are_in_the_ufunc_table(ufunc: np.ufunc) -> None:
    a, t = _m()
    with np.errstate(all="ignore"):
        _same(ufunc(t), ufunc(a))
    _same(np.arctan2(t, t), np.arctan2(a, a))
    _same(np.hypot(t, 2.0), np.hypot(a, 2.0))


def test_later_functions_are_in_the_function_table() -> None:
    a, t = _m()
    _same(np.cumsum(t, axis=1), np.cumsum(a, axis=1))
    _same(np.cumsum(t), np.cumsum(a))
    _same(np.diff(t), np.diff(a))
    _same(np.tril(t), np.tril(a))
    _same(np.roll(t, 1), np.roll(a, 1))
    _same(np.sort(t, axis=1), np.sort(a, axis=1))
    _same(np.argsort(t, axis=0, kind="stable"), np.argsort(a, axis=0, kind="stable"))
    _same(np.tile(t, 2), np.tile(a, 2))
    _same(np.moveaxis(t, 0, 1), np.moveaxis(a, 0, 1))
    for got, want in zip(np.nonzero(t > 2), np.nonzero(a > 2), strict=True):
        _same(got, want)
    sq = dt.tensor([[2.0, 1.0], [1.0, 3.0]])
    sqa = sq.numpy()
    _same(np.linalg.inv(sq), np.linalg.inv(sqa))
    _same(np.linalg.det(sq), np.linalg.det(sqa))
    _same(np.linalg.eigh(sq)[0], np.linalg.eigh(sqa)[0])
    _same(np.linalg.svd(sq, compute_uv=False), np.linalg.svd(sqa, compute_uv=False))
    _same(np.fft.fft(t), np.fft.fft(a))
    _same(np.fft.rfftn(t), np.fft.rfftn(a))


def test_numpy_functions_that_write_their_first_argument_bump_its_version() -> None:
    t = dt.tensor([1.0, 2.0, 3.0])
    np.add.at(t, [0, 0], 1)
    assert t.tolist() == [3.0, 2.0, 3.0] and t.version == 1
    np.copyto(t, np.zeros(3))
    assert t.tolist() == [0.0, 0.0, 0.0] and t.version == 2
    expanded = dt.zeros(1, 3).expand(2, 3)
    with pytest.raises(MemoryOverlapError):
        np.copyto(expanded, np.ones((2, 3)))
    with pytest.raises(MemoryOverlapError):
        np.add.accumulate(t, out=expanded[0:1, :].expand(2, 3)[0:1, :].expand(2, 3))
    assert expanded.version == 0


def test_ufuncs_take_a_python_number_where_pytorchs_op_does_not() -> None:
    # (NumPy's form: the number weak, NEP 50, though devtensor.maximum(t, 0) is refused as in PyTorch)
    a = np.array([-1.5, 0.5, 2.0], dtype=np.float32)
    t = dt.from_numpy(a.copy())
    for got, want in [
        (np.maximum(t, 0), np.maximum(a, 0)),
        (np.minimum(1, t), np.minimum(1, a)),
        (np.greater(0, t), np.greater(0, a)),
        (np.arctan2(t, 2), np.arctan2(a, 2)),
        (np.logical_and(t, 2), np.logical_and(a, 2)),
        (np.maximum(t, 2, dtype=np.float64), np.maximum(a, 2, dtype=np.float64)),
    ]:
        assert isinstance(got, dt.Tensor)
        np.testing.assert_array_equal(got.numpy(), want, strict=True)
    assert np.maximum(t, 0, out=t) is t and t.tolist() == [0.0, 0.5, 2.0] and t.version == 1
