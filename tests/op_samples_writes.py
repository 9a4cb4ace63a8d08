"""Op sample registry entries for the whole-tensor writes (``fill``, ``zero``, ``copy``: inplace only), the index
writes (``index_add``, ``index_copy``, ``scatter``, ``scatter_add``), ``isclose``, ``cdist``, ``softplus`` and
``bincount`` (data-dependent): see ``tests/op_samples.py``. References are NumPy's (``np.add.at``, ``np.isclose``,
``np.linalg.norm``, ``np.bincount``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_samples import BOOL_RESULT, NO_INPLACE, A, OpSamples, S, Sample
from op_samples_data_dependent import DATA_DEPENDENT_SKIPS

__all__ = ["write_entries"]

_I64 = np.int64


def _fill_ref(self: Any, value: Any) -> Any:
    return np.full_like(self, np.asarray(value).astype(self.dtype))


def _copy_ref(self: Any, src: Any, non_blocking: bool = False) -> Any:
    return np.broadcast_to(np.asarray(src).astype(self.dtype), self.shape).copy()


def _index_where(a: Any, dim: int, index: Any) -> Any:
    return (slice(None),) * (dim % a.ndim) + (np.reshape(index, -1),)


def _index_add_ref(a: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
    if a.ndim == 0:
        return (a + alpha * np.reshape(source, ())).astype(a.dtype)
    result = a.copy()
    np.add.at(result, _index_where(a, dim, index), (source * alpha).astype(a.dtype))
    return result


def _index_copy_ref(a: Any, dim: int, index: Any, source: Any) -> Any:
    if a.ndim == 0:
        return np.reshape(source, ()).copy()
    result = a.copy()
    result[_index_where(a, dim, index)] = source
    return result


def _scatter_ref(a: Any, dim: int, index: Any, src: Any, *, reduce: str | None = None) -> Any:
    """A plain loop over ``index``'s elements (independent of the kernel's vectorised form)."""
    result = np.reshape(a, -1).copy() if a.ndim == 0 else a.copy()
    idx = np.reshape(index, -1) if a.ndim == 0 else index
    values = np.reshape(src, -1) if isinstance(src, np.ndarray) and a.ndim == 0 else src
    for position in np.ndindex(*idx.shape):
        target = list(position)
        target[dim % result.ndim] = int(idx[position])
        value = values[position] if isinstance(values, np.ndarray) else values
        if reduce == "add":
            result[tuple(target)] += value
        elif reduce == "multiply":
            result[tuple(target)] *= value
        else:
            result[tuple(target)] = value
    return result.reshape(a.shape)


def _scatter_add_ref(a: Any, dim: int, index: Any, src: Any) -> Any:
    return _scatter_ref(a, dim, index, src, reduce="add")


def _isclose_ref(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    return np.asarray(np.isclose(a, b, rtol, atol, equal_nan))


def _cdist_ref(x1: Any, x2: Any, p: float = 2.0, compute_mode: str = "") -> Any:
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    dtype = np.result_type(x1, x2)
    if diff.shape[-1] == 0:
        return np.zeros(diff.shape[:-1], dtype)
    return np.asarray(np.linalg.norm(diff, ord=p, axis=-1)).astype(dtype)


def _softplus_ref(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    z = x * beta
    return np.where(z > threshold, x, np.log1p(np.exp(z)) / beta).astype(x.dtype)


def _bincount_ref(x: Any, weights: Any = None, minlength: int = 0) -> Any:
    found = np.bincount(x.astype(np.intp), weights, minlength)
    return found.astype(np.int64 if weights is None or x.size == 0 else np.float64)


def write_entries() -> list[OpSamples]:
    """The entries of the ops of this module."""
    no_inplace = {"inplace": NO_INPLACE}
    x = A((5, 3))
    rows = np.array([0, 4, 2, 0])
    scatter_index = np.array([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])
    return [
        OpSamples(
            "fill",
            (
                *(Sample((A((2, 3), k), v)) for k, v in (("b", True), ("i", 7), ("f", 2.5), ("c", 1 - 2j))),
                Sample((A((2, 3)), np.array(1.5))),
                Sample((A(()), -1.0)),
                Sample((A((0, 3)), 3.0)),
                Sample((S((2, 3)), 0.5)),
            ),
            "bifc",
            reference=_fill_ref,
        ),
        OpSamples(
            "zero",
            (
                *(Sample((A((2, 3), k),)) for k in "bifc"),
                Sample((A(()),)),
                Sample((A((0, 3)),)),
                Sample((S((2, 3)),)),
            ),
            "bifc",
            reference=lambda a: np.zeros_like(a),
        ),
        OpSamples(
            "copy",
            (
                *(Sample((A((2, 3), k), A((2, 3), k, shift=2))) for k in "bifc"),
                Sample((A((2, 3)), A((3,), "i")), broadcast=True),
                Sample((A((2, 3), "i"), A((2, 3), "f")), {"non_blocking": True}),
                Sample((A(()), A(()))),
                Sample((A((0, 3)), A((3,)))),
                Sample((S((2, 3)), S((2, 3), shift=1))),
            ),
            "bifc",
            broadcasts=True,
            reference=_copy_ref,
        ),
        OpSamples(
            "index_add",
            (
                *(Sample((A((5, 3), k), 0, rows, A((4, 3), k, shift=1))) for k in "bifc"),
                Sample((x, 1, np.array([2, 2], np.int32), A((5, 2))), {"alpha": 2.5}),
                Sample((A((5, 3), "i"), 0, rows, A((4, 3), "i")), {"alpha": -2}),
                Sample((A(()), 0, np.array([0]), A(()))),
                Sample((x, 0, np.zeros(0, _I64), A((0, 3)))),
                Sample((S((5, 3)), -1, np.array([2, 0]), S((5, 2)))),
            ),
            "bifc",
            reference=_index_add_ref,
        ),
        OpSamples(
            "index_copy",
            (
                *(Sample((A((5, 3), k), 0, np.array([4, 1]), A((2, 3), k, shift=1))) for k in "bifc"),
                Sample((x, 1, np.array([2, 0], np.int32), A((5, 2)))),
                Sample((A(()), 0, np.array(0), A(()))),
                Sample((x, 0, np.zeros(0, _I64), A((0, 3)))),
                Sample((S((5, 3)), -1, np.array([1]), S((5, 1)))),
            ),
            "bifc",
            reference=_index_copy_ref,
        ),
        OpSamples(
            "scatter",
            (
                *(Sample((A((3, 5), k), 0, scatter_index, A((2, 5), k, shift=1))) for k in "bifc"),
                Sample((A((2, 4)), 1, np.array([[2], [3]]), 1.25)),
                Sample((A((3, 5)), 0, scatter_index, A((2, 5))), {"reduce": "add"}),
                Sample((A((3, 5), "i"), 0, scatter_index, A((2, 5), "i")), {"reduce": "multiply"}),
                Sample((A((3, 5)), 1, np.array([[0, 1], [4, 4]]), A((3, 5)))),
                Sample((A(()), 0, np.zeros((), _I64), A(()))),
                Sample((A((3, 5)), 0, np.zeros((0, 5), _I64), A((0, 5)))),
                Sample((S((3, 5)), -1, np.array([[4], [0], [2]]), S((3, 5)))),
            ),
            "bifc",
            reference=_scatter_ref,
        ),
        OpSamples(
            "scatter_add",
            (
                *(Sample((A((3, 5), k), 0, scatter_index, A((2, 5), k, shift=1))) for k in "bifc"),
                Sample((A((3, 5)), 1, np.array([[0, 0, 0], [4, 4, 1]]), A((2, 5)))),
                Sample((A(()), 0, np.zeros((), _I64), A(()))),
                Sample((A((3, 5)), 0, np.zeros((0, 5), _I64), A((0, 5)))),
                Sample((S((3, 5)), -1, np.array([[4], [0], [4]]), S((3, 5)))),
            ),
            "bifc",
            reference=_scatter_add_ref,
        ),
        OpSamples(
            "isclose",
            (
                *(Sample((A((2, 3), k), A((2, 3), k, shift=k != "b"))) for k in "bifc"),
                Sample(
                    (
                        np.array([1.0, np.nan, np.inf, -np.inf, 1e-9]),
                        np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 0.0]),
                    )
                ),
                Sample((np.array([1.0, np.nan]), np.array([1.0 + 1e-3, np.nan])), {"rtol": 1e-2, "equal_nan": True}),
                Sample((A((2, 3)), A((3,))), {"atol": 1.0}, broadcast=True),
                Sample((A(()), A(()))),
                Sample((A((0, 3)), A((0, 3)))),
                Sample((S((2, 3)), A((2, 3), shift=1))),
            ),
            "bifc",
            broadcasts=True,
            reference=_isclose_ref,
            skip={**no_inplace, "out_dtype": BOOL_RESULT},
        ),
        OpSamples(
            "cdist",
            (
                Sample((A((3, 4)), A((2, 4), shift=1))),
                Sample((A((3, 4)), A((2, 4), shift=1), 1.0)),
                Sample((A((3, 4)), A((2, 4), shift=1), 0.0)),
                Sample((A((3, 4)), A((2, 4), shift=1), float("inf"))),
                Sample((A((3, 4)), A((2, 4), shift=1), 3.0, "donot_use_mm_for_euclid_dist")),
                Sample((A((2, 3, 4)), A((1, 5, 4), shift=2)), broadcast=True),
                Sample((A((3, 0)), A((2, 0)))),
                Sample((A((0, 4)), A((2, 4)))),
                Sample((S((3, 4)), S((2, 4), shift=1))),
            ),
            "f",
            broadcasts=True,
            reference=_cdist_ref,
            lacks={"0-d": "cdist takes matrices (at least 2 dims)"},
            skip=no_inplace,
        ),
        OpSamples(
            "softplus",
            (
                Sample((A((2, 3), signed=True),)),
                Sample((A((2, 3)), 2.0, 1.0)),
                Sample((np.array([-30.0, 0.0, 15.0, 30.0]),), {"beta": 0.5}),
                Sample((A(()),)),
                Sample((A((0, 3)),)),
                Sample((S((2, 3), signed=True), 1.5)),
            ),
            "f",
            reference=_softplus_ref,
            skip=no_inplace,
        ),
        OpSamples(
            "bincount",
            (
                Sample((np.array([0, 1, 1, 3, 2, 1, 7]),)),
                Sample((np.array([True, False, True]),)),
                Sample((np.array([0, 1, 1, 3]), A((4,))), {"minlength": 6}),
                Sample((np.array([2, 0]), A((2,), "i"))),
                Sample((np.zeros(0, _I64),), {"minlength": 3}),
                Sample((S((4,), "i"),)),
            ),
            "bi",
            reference=_bincount_ref,
            lacks={"0-d": "bincount takes a 1-d tensor"},
            skip=DATA_DEPENDENT_SKIPS,
        ),
    ]
