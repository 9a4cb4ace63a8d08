"""Op sample registry entries for the ordering ops with several outputs (``sort``, ``topk``, ``aminmax``): see
``tests/op_samples.py``. References are NumPy's (a stable argsort, ``np.min``/``np.max``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_samples import NO_INPLACE, A, OpSamples, S, Sample

__all__ = ["ordering_entries"]

_SKIP = {"inplace": NO_INPLACE}
_NO_COMPLEX = {"complex": "no order on complex numbers (refused, as PyTorch)"}


def _order(a: Any, dim: int, descending: bool) -> Any:
    """Stable sort order, NaN largest (the samples' descending cases are finite or NaN: negation reverses)."""
    if descending:
        key = -a.astype(np.float64)
        return np.argsort(np.where(np.isnan(key), -np.inf, key), axis=dim, kind="stable")
    return np.argsort(a, axis=dim, kind="stable")


def _sort_ref(a: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    if np.ndim(a) == 0:
        return a.copy(), np.zeros((), np.int64)
    i = _order(a, dim, descending)
    return np.take_along_axis(a, i, axis=dim), i


def _topk_ref(a: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    if np.ndim(a) == 0:
        return a.copy(), np.zeros((), np.int64)
    i = np.take(_order(a, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(a, i, axis=dim), i


def _aminmax_ref(a: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    return np.asarray(np.min(a, axis=dim, keepdims=keepdim)), np.asarray(np.max(a, axis=dim, keepdims=keepdim))


def _extreme_ref(largest: bool) -> Any:
    def ref(a: Any, dim: int, keepdim: bool = False) -> Any:
        if np.ndim(a) == 0:
            return a.copy(), np.zeros((), np.int64)
        i = (np.argmax if largest else np.argmin)(a, axis=dim, keepdims=True)
        v = np.take_along_axis(a, i, axis=dim)
        if not keepdim:
            v, i = v.squeeze(dim), i.squeeze(dim)
        return v, i.astype(np.int64)

    return ref


def _extreme_entry(name: str) -> OpSamples:
    return OpSamples(
        name,
        (
            *(Sample((A((2, 3), k, signed=True), 1)) for k in "bif"),
            Sample((A((2, 3, 4), signed=True), 1, True)),
            Sample((A((2, 3), signed=True), -2), {"keepdim": True}),
            Sample((np.array([[1.0, np.nan, -1.0], [2.0, 0.5, 2.0]]), 1)),
            Sample((np.array([[1, 3, 3], [2, 2, 1]]), 1)),
            Sample((A(()), 0)),
            Sample((A((0, 3)), 1)),
            Sample((S((2, 3), signed=True), 0)),
        ),
        "bif",
        reference=_extreme_ref(name == "max"),
        lacks=_NO_COMPLEX,
        skip=_SKIP,
    )


def ordering_entries() -> list[OpSamples]:
    """The entries of sort, topk, aminmax, max and min."""
    return [
        _extreme_entry("max"),
        _extreme_entry("min"),
        OpSamples(
            "sort",
            (
                *(Sample((A((2, 3), k, signed=True),)) for k in "bif"),
                Sample((A((2, 5), signed=True), 0, True)),
                Sample((A((3, 5), signed=True), -1, True), {"stable": True}),
                Sample((np.array([1.0, np.nan, -1.0, 1.0]), 0, True), {"stable": True}),
                Sample((np.array([1.0, np.nan, -1.0]),)),
                Sample((A(()),)),
                Sample((A((0, 3)), 0)),
                Sample((S((2, 3), signed=True), -1)),
            ),
            "bif",
            reference=_sort_ref,
            lacks=_NO_COMPLEX,
            skip=_SKIP,
        ),
        OpSamples(
            "topk",
            (
                *(Sample((A((2, 4), k, signed=True), 2)) for k in "if"),
                Sample((np.array([[True, False, True]]), 1)),
                Sample((A((3, 4), signed=True), 2, 0, False)),
                Sample((np.array([1.0, np.nan, -1.0, 3.0]), 2)),
                Sample((A(()), 1)),
                Sample((A((0, 3)), 0, 0)),
                Sample((A((2, 3)), 0)),
                Sample((S((2, 3), signed=True), 3, -1, True, False)),
            ),
            "bif",
            reference=_topk_ref,
            lacks=_NO_COMPLEX,
            skip=_SKIP,
        ),
        OpSamples(
            "aminmax",
            (
                *(Sample((A((2, 3), k, signed=True),)) for k in "bif"),
                Sample((A((2, 3, 4), signed=True),), {"dim": 1}),
                Sample((A((2, 3), signed=True),), {"dim": -1, "keepdim": True}),
                Sample((A((2, 3), signed=True),), {"keepdim": True}),
                Sample((np.array([1.0, np.nan, -1.0]),)),
                Sample((A(()),)),
                Sample((A((0, 3)),), {"dim": 1}),
                Sample((S((2, 3), signed=True),), {"dim": 0}),
            ),
            "bif",
            reference=_aminmax_ref,
            lacks=_NO_COMPLEX,
            skip=_SKIP,
        ),
    ]
