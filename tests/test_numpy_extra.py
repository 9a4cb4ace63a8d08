"""NumPy functions composed from devtensor ops (devtensor.numpy_extra): the NaN reductions, einsum, repeat, fabs,
isclose/allclose, diag, take, unique, searchsorted and isin give NumPy's values as tensors on the tensor's device
(CPU, and CUDA through the CuPy stand-in); arguments devtensor has no equivalent for fall back."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import devtensor as dt
from devtensor.tensor import Tensor

F = np.array([[1.5, np.nan, -3.0, 0.25], [np.nan, np.nan, np.nan, np.nan], [2.0, -1.0, np.nan, 4.0]])
N = np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], dtype=np.int32)
V = np.array([0.5, -2.0, 3.0])


def host(value: Any) -> np.ndarray[Any, Any]:
    assert isinstance(value, Tensor), f"expected a devtensor tensor, got {type(value).__name__}"
    return np.array(value.cpu().numpy(), copy=True)


def same(got: Any, expected: Any) -> None:
    """``got`` (tensors, from devtensor's entry, not NumPy's fallback) holds NumPy's values and dtypes."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            same(g, e)
        return
    if isinstance(expected, bool | np.bool_):
        assert got is bool(expected)
        return
    e = np.asarray(expected)
    np.testing.assert_array_equal(host(got), e)
    assert host(got).dtype == e.dtype


# name: (the array, the NumPy call; the same call runs on the tensor through NEP 13/18)
CASES: dict[str, tuple[np.ndarray[Any, Any], Callable[[Any], Any]]] = {
    "nansum": (F, lambda a: np.nansum(a)),
    "nansum-axis-keepdims": (F, lambda a: np.nansum(a, axis=1, keepdims=True)),
    "nansum-int-dtype": (N, lambda a: np.nansum(a, axis=0, dtype=np.int64)),
    "nanprod-axis0": (F, lambda a: np.nanprod(a, axis=0)),
    "nanmean-axis1": (F, lambda a: np.nanmean(a, axis=1)),
    "nanmean-int": (N, lambda a: np.nanmean(a, axis=0)),
    "nanmax-axis1": (F, lambda a: np.nanmax(a, axis=1)),
    "nanmin-axes": (F, lambda a: np.nanmin(a, axis=(0, 1), keepdims=True)),
    "nanmax-int": (N, lambda a: np.nanmax(a, axis=0)),
    "nanargmax": (F[[0, 2]], lambda a: np.nanargmax(a, axis=1)),
    "nanargmin-all": (F, lambda a: np.nanargmin(a)),
    "nanargmin-int-keepdims": (N, lambda a: np.nanargmin(a, axis=0, keepdims=True)),
    "einsum": (N, lambda a: np.einsum("ij,kj->ik", a, a)),
    "einsum-trace-optimize": (N[:, :3], lambda a: np.einsum("ii", a, optimize=True)),
    "repeat": (N, lambda a: np.repeat(a, 2)),
    "repeat-axis": (F, lambda a: np.repeat(a, 3, axis=-1)),
    "fabs": (F, np.fabs),
    "isclose": (F, lambda a: np.isclose(a, a * (1 + 1e-7))),
    "isclose-nan-int": (N, lambda a: np.isclose(a, a + 1, atol=1.0, equal_nan=True)),
    "isclose-scalar": (F, lambda a: np.isclose(a, 2.0, rtol=0.0, atol=0.5)),
    "allclose": (F, lambda a: np.allclose(a, a)),
    "allclose-nan": (F, lambda a: np.allclose(a, a, equal_nan=True)),
    "diag-of-2d": (N, lambda a: np.diag(a, 1)),
    "diag-of-2d-below": (N, lambda a: np.diag(a, -2)),
    "diag-of-1d": (V, lambda a: np.diag(a)),
    "diag-of-1d-k": (V, lambda a: np.diag(a, -1)),
    "diagonal": (N, lambda a: np.diagonal(a, -1)),
    "diagonal-axes-swapped": (N, lambda a: np.diagonal(a, 2, axis1=1, axis2=0)),
    "argwhere": (F, lambda a: np.argwhere(a > 0)),
    "flatnonzero": (N, lambda a: np.flatnonzero(a - 5)),
    "take-flat": (N, lambda a: np.take(a, [0, 5, -1])),
    "take-axis": (F, lambda a: np.take(a, [[2, 0], [-1, 1]], axis=1)),
    "take-scalar": (N, lambda a: np.take(a, 1, axis=0)),
    "unique": (N, lambda a: np.unique(a)),
    "unique-inverse-counts": (N, lambda a: np.unique(a, return_inverse=True, return_counts=True)),
    "unique-axis": (N[[0, 1, 0]], lambda a: np.unique(a, axis=0, return_counts=True)),
    "searchsorted": (V[[1, 0, 2]], lambda a: np.searchsorted(a, [-3.0, 0.5, 9.0], side="right")),
    "searchsorted-int-by-floats": (np.array([1, 3, 5]), lambda a: np.searchsorted(a, [2.5, 3.5, 3.0])),
    "isin": (N, lambda a: np.isin(a, [1, 5, 7])),
    "partition": (F, lambda a: np.sort(np.partition(a, 2, axis=1), axis=1)),
    "argpartition-kth": (
        N,
        lambda a: np.sort(np.take_along_axis(a, np.argpartition(a, [0, 1], axis=0), axis=0), axis=0),
    ),
    "take_along_axis": (F, lambda a: np.take_along_axis(a, np.argsort(a, axis=0), axis=0)),
    "arange-like": (F, lambda a: np.arange(1, 7, 2, like=a)),
    "isin-invert": (F, lambda a: np.isin(a, [np.nan, 2.0, -1.0], invert=True)),
    "bincount": (np.array([0, 3, 3, 1]), lambda a: np.bincount(a)),
    "bincount-weights-minlength": (np.array([0, 3, 3, 1]), lambda a: np.bincount(a, a * 0.5, minlength=6)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_entry_on_cpu_tensors_gives_numpys_values_as_tensors(name: str) -> None:
    array, call = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's all-NaN-slice warnings)
        expected = call(array.copy())
        got = call(dt.tensor(array))
    same(got, expected)


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("name", list(CASES))
def test_entry_on_cuda_tensors_stays_on_the_device(name: str) -> None:
    array, call = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = call(array.copy())
        got = call(dt.tensor(array, device="cuda:1"))
    for g in got if isinstance(got, tuple) else (got,):
        assert isinstance(g, bool) or g.device == dt.Device("cuda", 1)
    same(got, expected)


def test_all_nan_slices_as_numpy() -> None:
    t = dt.tensor(F)
    with pytest.raises(ValueError, match=r"nanargmax: All-NaN slice"):
        np.nanargmax(t, axis=1)
    with pytest.raises(ValueError, match=r"nanargmin: All-NaN slice"):
        np.nanargmin(dt.tensor(np.full(3, np.nan)))
    assert np.isnan(host(np.nanmax(t, axis=1))[1])


FALLBACKS: dict[str, Callable[[Any], Any]] = {
    "nansum-where": lambda a: np.nansum(a, where=np.ones(a.shape, bool)),
    "nanmax-initial": lambda a: np.nanmax(a, initial=-5.0),
    "repeat-per-element": lambda a: np.repeat(a, [1, 2, 0], axis=0),
    "take-clip": lambda a: np.take(a, [0, 99], mode="clip"),
    "unique-index": lambda a: np.unique(a, return_index=True),
    "searchsorted-sorter": lambda a: np.searchsorted(a[0], [1.0], sorter=np.arange(4)),
    "einsum-interleaved": lambda a: np.einsum(a, [0, 1], [1]),
    "bincount-list-weights": lambda a: np.bincount(a[0], weights=[0.5] * a.shape[1]),
    "histogram": lambda a: np.histogram(a, bins=3),
}


@pytest.mark.parametrize("name", list(FALLBACKS))
def test_unsupported_arguments_run_numpys_own_on_cpu(name: str) -> None:
    array = np.abs(np.nan_to_num(F)).astype(np.int64) if name.startswith("bincount") else np.nan_to_num(F)
    call = FALLBACKS[name]
    expected = call(array.copy())
    got = call(dt.tensor(array))
    for g, e in zip(
        got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(g), e)


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("name", list(FALLBACKS))
def test_unsupported_arguments_on_cuda_are_a_type_error_naming_the_function(name: str) -> None:
    array = np.abs(np.nan_to_num(F)).astype(np.int64) if name.startswith("bincount") else np.nan_to_num(F)
    function = name.split("-")[0]
    with pytest.raises(TypeError, match=rf"numpy\.{function}.*cuda"):
        FALLBACKS[name](dt.tensor(array, device="cuda"))


finite = st.floats(-100, 100, width=32)
with_nan = st.one_of(finite, st.just(float("nan")))


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=with_nan), st.data())
def test_nan_reductions_match_numpy(a: np.ndarray[Any, Any], data: st.DataObject) -> None:
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    keepdims = data.draw(st.booleans())
    t = dt.tensor(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for f in (np.nansum, np.nanmax, np.nanmin):
            np.testing.assert_allclose(
                host(f(t, axis=axis, keepdims=keepdims)), f(a, axis=axis, keepdims=keepdims), rtol=1e-5, atol=1e-3
            )
        np.testing.assert_allclose(host(np.nanmean(t, axis=axis)), np.nanmean(a, axis=axis), rtol=1e-5, atol=1e-4)


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        np.float64, st.integers(1, 8), elements=st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32))
    ),
    st.floats(0, 1e-3),
    st.floats(0, 1e-3),
    st.booleans(),
)
def test_isclose_matches_numpy(a: np.ndarray[Any, Any], rtol: float, atol: float, equal_nan: bool) -> None:
    b = a[::-1] * (1 + rtol / 2)
    got = np.isclose(dt.tensor(a), dt.tensor(b), rtol, atol, equal_nan)
    np.testing.assert_array_equal(host(got), np.isclose(a, b, rtol, atol, equal_nan))


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=st.integers(-5, 5)),
    st.lists(st.integers(-5, 5), max_size=6),
    st.data(),
)
def test_take_isin_unique_match_numpy(a: np.ndarray[Any, Any], test: list[int], data: st.DataObject) -> None:
    t = dt.tensor(a)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    index = data.draw(st.lists(st.integers(-n, n - 1), max_size=5))
    np.testing.assert_array_equal(host(np.take(t, index, axis=axis)), np.take(a, index, axis=axis))
    np.testing.assert_array_equal(host(np.isin(t, test)), np.isin(a, test))
    np.testing.assert_array_equal(host(np.unique(t)), np.unique(a))
