"""Op sample registry entries for the data-dependent ops (``nonzero``, ``unique``, ``unique_consecutive``,
``unique_all``): see ``tests/op_samples.py``. They have no out= and no inplace variant, and a meta tensor has no
values to size their results by (the generic meta check expects NoDataError). References are NumPy's."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_samples import A, OpSamples, S, Sample

__all__ = ["DATA_DEPENDENT_SKIPS", "data_dependent_entries"]

#: The generic checks a data-dependent op cannot take part in.
DATA_DEPENDENT_SKIPS = {
    "out": "data-dependent op: no out= (the result's shape is not known before computing)",
    "out_dtype": "data-dependent op: no out=",
    "out_resize": "data-dependent op: no out=",
    "inplace": "data-dependent op: no inplace variant",
}


def _nonzero_ref(a: Any, as_tuple: bool = False) -> Any:
    if a.ndim == 0:
        n = int(bool(a))
        return (np.zeros(n, np.int64),) if as_tuple else np.zeros((n, 0), np.int64)
    found = tuple(i.astype(np.int64) for i in np.nonzero(a))
    return found if as_tuple else np.argwhere(a).astype(np.int64)


def _unique_ref(
    a: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    if dim is None or a.ndim == 0:
        found = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inverse_shape: tuple[int, ...] = a.shape
    else:
        found = np.unique(a, axis=dim, return_inverse=True, return_counts=True)
        inverse_shape = (a.shape[dim],)
    values, inverse, counts = found
    result = [values]
    if return_inverse:
        result.append(inverse.astype(np.int64).reshape(inverse_shape))
    if return_counts:
        result.append(counts.astype(np.int64))
    return tuple(result) if len(result) > 1 else values


def _unique_consecutive_ref(
    a: Any, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    """A plain loop over the slices (independent of the kernel's vectorised form)."""
    x, axis = (a.reshape(-1), 0) if dim is None or a.ndim == 0 else (a, dim)
    slices = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
    keep: list[int] = []
    inverse: list[int] = []
    counts: list[int] = []
    for i, s in enumerate(slices):
        if i == 0 or not np.array_equal(s, slices[i - 1]):
            keep.append(i)
            counts.append(0)
        inverse.append(len(keep) - 1)
        counts[-1] += 1
    values = np.take(x, np.array(keep, dtype=np.int64), axis=axis)
    result = [values]
    if return_inverse:
        shape = a.shape if dim is None or a.ndim == 0 else (a.shape[dim],)
        result.append(np.array(inverse, dtype=np.int64).reshape(shape))
    if return_counts:
        result.append(np.array(counts, dtype=np.int64))
    return tuple(result) if len(result) > 1 else values


def _unique_all_ref(a: Any) -> Any:
    values, index, inverse, counts = np.unique(
        a.reshape(-1), return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    return values, index.astype(np.int64), inverse.astype(np.int64).reshape(a.shape), counts.astype(np.int64)


def data_dependent_entries() -> list[OpSamples]:
    """The entries of the data-dependent ops."""
    repeated = np.array([[3, 1, 3], [2, 1, 1]])
    runs = np.array([1, 1, 2, 2, 2, 1, 3, 3])
    nan = np.array([1.0, np.nan, np.nan, 1.0, 0.5])
    return [
        OpSamples(
            "nonzero",
            (
                *(Sample((A((2, 3), k, signed=True),)) for k in "bifc"),
                Sample((A((2, 3), signed=True),), {"as_tuple": True}),
                Sample((A((2, 2, 3), signed=True),)),
                Sample((A(()),)),
                Sample((np.array(0.0),), {"as_tuple": True}),
                Sample((A((0, 3)),)),
                Sample((S((2, 3), signed=True),), {"as_tuple": True}),
            ),
            "bifc",
            reference=_nonzero_ref,
            skip=DATA_DEPENDENT_SKIPS,
        ),
        OpSamples(
            "unique",
            (
                *(Sample((A((2, 3), k, signed=True),)) for k in "bifc"),
                Sample((repeated,), {"return_inverse": True, "return_counts": True}),
                Sample((repeated, False, True)),
                Sample((repeated,), {"return_counts": True, "dim": 1}),
                Sample((np.array([[1, 2], [1, 2], [0, 5]]),), {"return_inverse": True, "dim": 0}),
                Sample((nan,), {"return_counts": True}),
                Sample((A(()),), {"return_inverse": True}),
                Sample((A((0, 3)),), {"return_inverse": True, "return_counts": True}),
                Sample((S((2, 3), signed=True),), {"return_inverse": True}),
            ),
            "bifc",
            reference=_unique_ref,
            skip=DATA_DEPENDENT_SKIPS,
        ),
        OpSamples(
            "unique_consecutive",
            (
                *(Sample((A((2, 3), k, signed=True),)) for k in "bifc"),
                Sample((runs,), {"return_inverse": True, "return_counts": True}),
                Sample((np.array([[1, 1, 2], [1, 1, 2], [0, 1, 2]]),), {"return_inverse": True, "dim": 0}),
                Sample((np.array([[1, 1, 2], [1, 1, 2]]),), {"return_counts": True, "dim": 1}),
                Sample((nan,), {"return_counts": True}),
                Sample((A(()),), {"return_inverse": True}),
                Sample((A((0, 3)),), {"return_inverse": True, "return_counts": True}),
                Sample((A((2, 0)),), {"return_counts": True, "dim": 0}),
                Sample((S((2, 3), signed=True),), {"return_inverse": True}),
            ),
            "bifc",
            reference=_unique_consecutive_ref,
            skip=DATA_DEPENDENT_SKIPS,
        ),
        OpSamples(
            "unique_all",
            (
                *(Sample((A((2, 3), k, signed=True),)) for k in "bifc"),
                Sample((repeated,)),
                Sample((nan,)),
                Sample((A(()),)),
                Sample((A((0, 3)),)),
                Sample((S((2, 3), signed=True),)),
            ),
            "bifc",
            reference=_unique_all_ref,
            skip=DATA_DEPENDENT_SKIPS,
        ),
    ]
