"""nonzero and unique (devtensor.data_dependent): values against NumPy, the data_dependent marker, meta and
CUDA (through the CuPy stand-in), errors."""

from __future__ import annotations

import numpy as np
import pytest

import devtensor as dt
from devtensor.data_dependent import data_dependent_ops
from devtensor.structured import get_op


def test_marked_data_dependent() -> None:
    assert all(op.data_dependent for op in data_dependent_ops.values())
    assert dt.nonzero.op is data_dependent_ops["nonzero"]  # type: ignore[attr-defined]
    assert not getattr(get_op("sort"), "data_dependent", False)


@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_nonzero_values(device: str, fake_cupy: object) -> None:
    x = np.array([[0, 1.5, 0], [2, 0, -1]])
    t = dt.tensor(x, device=device)
    got = dt.nonzero(t)
    assert got.dtype == dt.int64 and str(got.device) == device
    np.testing.assert_array_equal(got.cpu().numpy(), np.argwhere(x))
    for g, w in zip(dt.nonzero(t, as_tuple=True), np.nonzero(x), strict=True):
        np.testing.assert_array_equal(g.cpu().numpy(), w)
    assert dt.nonzero(dt.tensor(0, device=device)).shape == (0, 0)


@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_unique_values(device: str, fake_cupy: object) -> None:
    x = np.array([[3, 1, 3], [2, 1, 1]])
    t = dt.tensor(x, device=device)
    np.testing.assert_array_equal(dt.unique(t).cpu().numpy(), np.unique(x))
    values, inverse, counts = dt.unique(t, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.cpu().numpy(), [1, 2, 3])
    np.testing.assert_array_equal(inverse.cpu().numpy(), [[2, 0, 2], [1, 0, 0]])
    np.testing.assert_array_equal(counts.cpu().numpy(), [3, 1, 2])


def test_errors() -> None:
    with pytest.raises(dt.NoDataError):
        dt.nonzero(dt.empty((2,), device="meta"))
    with pytest.raises(NotImplementedError, match="dim"):
        dt.unique(dt.tensor([1, 2]), dim=0)
    with pytest.raises(TypeError, match="as_tuple"):
        dt.nonzero(dt.tensor([1]), as_tuple=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Tensor"):
        dt.unique([1, 2])  # type: ignore[arg-type]
