"""Dask's array functions on Dask arrays of devtensor chunks (CPU, and CUDA through the CuPy stand-in) on the
threaded scheduler: the functions whose chunk work devtensor.numpy_extra and devtensor.numpy_more map onto
devtensor ops (``da.nansum``, ``da.einsum``, ``da.isclose``, ``da.take``, …) equal the results with NumPy chunks,
and chunks stay devtensor tensors on their device."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.array")

import dask
import dask.array as da

import devtensor as dt
import devtensor.dask as dd
from devtensor.errors import DeviceMismatchError
from devtensor.tensor import Tensor

A = np.arange(48, dtype=np.float32).reshape(12, 4) / 7.0 - 3.0
A[[1, 5, 10], [0, 3, 1]] = np.nan
S = np.arange(16, dtype=np.float32).reshape(4, 4) - 5.0


def host(value: Any) -> np.ndarray[Any, Any]:
    assert isinstance(value, Tensor), f"expected a devtensor tensor, got {type(value).__name__}"
    return np.array(value.cpu().numpy(), copy=True)


@pytest.fixture(autouse=True)
def threads() -> Iterator[None]:
    with dask.config.set(scheduler="threads"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's and Dask's all-NaN and 0/0 warnings)
        yield


# name: (the data, its chunks, the Dask call; the same call on a Dask array of NumPy chunks gives the expected)
CASES: dict[str, tuple[np.ndarray[Any, Any], Any, Callable[[Any], Any]]] = {
    "nansum": (A, (4, 2), lambda x: da.nansum(x)),
    "nansum-axis0": (A, (4, 2), lambda x: da.nansum(x, axis=0)),
    "nanprod-axis1": (A, (4, 2), lambda x: da.nanprod(x, axis=1)),
    "nanmean-axis0": (A, (4, 2), lambda x: da.nanmean(x, axis=0)),
    "nanmax-axis1": (A, (4, 2), lambda x: da.nanmax(x, axis=1)),
    "nanmin": (A, (4, 2), lambda x: da.nanmin(x)),
    "nanargmax-axis0": (A, (4, 2), lambda x: da.nanargmax(x, axis=0)),
    "nanargmin-axis1": (A, (4, 2), lambda x: da.nanargmin(x, axis=1)),
    "einsum": (S, (2, 2), lambda x: da.einsum("ij,kj->ik", x, x)),
    "einsum-reduce": (S, (2, 2), lambda x: da.einsum("ij->j", x)),
    "repeat": (S, (2, 2), lambda x: da.repeat(x, 3, axis=1)),
    "fabs": (S, (2, 2), lambda x: da.fabs(x)),
    "isclose": (A, (4, 2), lambda x: da.isclose(x, x * (1 + 1e-7), equal_nan=True)),
    "diag": (S, (2, 2), lambda x: da.diag(x)),
    "diag-1d": (S[0], (2,), lambda x: da.diag(x)),
    "take": (S, (2, 2), lambda x: da.take(x, np.array([3, 0, 2]), axis=1)),
    "unique": (S.round() % 3, (2, 2), lambda x: da.unique(x)),
    "cumsum": (S, (2, 2), lambda x: da.cumsum(x, axis=0)),
    "cumprod": (S / 8, (2, 2), lambda x: da.cumprod(x, axis=1)),
    "diff": (S, (2, 2), lambda x: da.diff(x, axis=1)),
    "round": (S / 3, (2, 2), lambda x: da.round(x, 1)),
    "clip": (S, (2, 2), lambda x: da.clip(x, -2, 3)),
    "where": (S, (2, 2), lambda x: da.where(x > 0, x, -x)),
    "count_nonzero": (S, (2, 2), lambda x: da.count_nonzero(x, axis=0)),
    "tril": (S, (2, 2), lambda x: da.tril(x, -1)),
    "triu": (S, (2, 2), lambda x: da.triu(x, 1)),
    "roll": (S, (2, 2), lambda x: da.roll(x, 1, axis=0)),
    "sort-topk": (S, (2, 2), lambda x: da.topk(x, 2, axis=1)),
    "argtopk": (S, (2, 2), lambda x: da.argtopk(x, -2, axis=0)),
    "diagonal": (S, (2, 2), lambda x: da.diagonal(x, 1)),
    "trace": (S, (2, 2), lambda x: da.trace(x)),
    "allclose": (S, (2, 2), lambda x: da.allclose(x, x + 1e-9)),
    "outer": (S[0], (2,), lambda x: da.outer(x, x + 1)),
    "nanvar": (A, (4, 2), lambda x: da.nanvar(x, axis=0)),
    "isin": (S, (2, 2), lambda x: da.isin(x, np.array([1.0, 4.0, -5.0]))),
    "searchsorted": (
        np.sort(S.reshape(-1)),
        (4,),
        lambda x: da.searchsorted(x, da.from_array(np.array([-3.0, 2.5]), chunks=2)),
    ),
}


def run(device: str, name: str) -> tuple[Any, np.ndarray[Any, Any]]:
    data, chunks, call = CASES[name]
    x = dd.to_dask(dt.tensor(data, device=device), chunks)
    r = call(x)
    assert isinstance(r._meta, Tensor), type(r._meta)
    blocks = dask.compute(*r.to_delayed().ravel())
    assert all(isinstance(b, Tensor) and b.device.type == device for b in blocks)
    expected = call(da.from_array(data, chunks=chunks)).compute()
    return r.compute(), expected


@pytest.mark.parametrize("name", list(CASES))
def test_dask_function_on_cpu_chunks_matches_numpy_chunks(name: str) -> None:
    out, expected = run("cpu", name)
    assert isinstance(out, Tensor) and out.device.type == "cpu"
    np.testing.assert_allclose(host(out), expected, rtol=2e-6, atol=1e-5)
    assert host(out).dtype == expected.dtype


@pytest.mark.usefixtures("fake_cupy")
# (argtopk: Dask builds its index chunks with NumPy, which CUDA chunks are not combined with; below)
@pytest.mark.parametrize("name", [n for n in CASES if n != "argtopk"])
def test_dask_function_on_cuda_chunks_stays_on_cuda(name: str) -> None:
    out, expected = run("cuda", name)
    assert isinstance(out, Tensor) and out.device.type == "cuda"
    np.testing.assert_allclose(host(out), expected, rtol=2e-6, atol=1e-5)


@pytest.mark.usefixtures("fake_cupy")
def test_argtopk_on_cuda_chunks_refuses_dasks_numpy_index_chunks() -> None:
    # Dask's argtopk builds its index chunks with NumPy (no like=): NumPy values meet CUDA tensors, and there is
    # no implicit transfer.
    x = dd.to_dask(dt.tensor(S, device="cuda"), (2, 2))
    with pytest.raises(DeviceMismatchError, match="NumPy array"):
        da.argtopk(x, 2, axis=0).compute()
