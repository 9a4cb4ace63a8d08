"""Op sample registry entries for ``devtensor.linalg`` (the ``linalg_*`` ops, single- and multi-output): see
``tests/op_samples.py``. The matrices are chosen invertible (and positive-definite for cholesky), so every
sample is a valid call; references are ``numpy.linalg``'s, where devtensor computes through the same routine
(so values agree exactly); the others are checked against NumPy with a tolerance in ``tests/test_linalg_ops.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_samples import NO_INPLACE, A, Array, OpSamples, S, Sample, Strided

__all__ = ["linalg_entries"]

_NO_0D = {"0-d": "the op takes (batches of) matrices: at least 2 dimensions"}
_SKIP = {"inplace": NO_INPLACE}


def _spd(n: int, kind: str = "f", batch: tuple[int, ...] = ()) -> Any:
    """A (batch of) Hermitian positive-definite ``n x n`` matrices of dtype class ``kind``."""
    m = A((*batch, n, n), "c" if kind == "c" else "f")
    spd = m @ np.swapaxes(m, -1, -2).conj() + n * np.eye(n)
    if kind == "i":
        return np.round(spd).astype(np.int64) + 2 * n * np.eye(n, dtype=np.int64)
    if kind == "b":
        return np.broadcast_to(np.eye(n, dtype=bool), (*batch, n, n)).copy()
    return spd


def _square(op: str, reference: Any = None, *, kinds: str = "bifc", **extra: Any) -> OpSamples:
    """An entry for an op of one square-matrix argument."""
    return OpSamples(
        op,
        (
            *(Sample((A((3, 3), k),)) for k in kinds),
            Sample((A((2, 3, 3), shift=1),)),
            Sample((A((0, 2, 2)),)),
            Sample((A((0, 0)),)),
            Sample((S((3, 3)),)),
        ),
        kinds,
        reference=reference,
        lacks=_NO_0D,
        skip=_SKIP,
        **extra,
    )


def _any_matrix(op: str, reference: Any = None, samples: tuple[Sample, ...] = (), **extra: Any) -> OpSamples:
    """An entry for an op of one (not necessarily square) matrix argument (and ``samples``)."""
    return OpSamples(
        op,
        (
            *(Sample((A((3, 3), k),)) for k in "bifc"),
            Sample((A((2, 3)),)),
            Sample((A((2, 4, 3), shift=1),)),
            Sample((A((0, 3)),)),
            Sample((S((3, 2)),)),
            *samples,
        ),
        "bifc",
        reference=reference,
        lacks=_NO_0D,
        skip=_SKIP,
        **extra,
    )


# PyTorch's tolerance tensors (broadcasting with the batch dims) and hermitian=True (only the lower triangle read).
_TOLERANCE_SAMPLES = (
    Sample((A((2, 3, 4), signed=True),), {"atol": np.array([0.1, 100.0])}),
    Sample((A((2, 3, 4), signed=True),), {"atol": np.array([[0.1], [100.0]]), "rtol": 0.5}),
    Sample((A((3, 3), signed=True),), {"rtol": np.array(0.3)}),
    Sample((A((3, 3), signed=True),), {"hermitian": True}),
    Sample((A((2, 3, 3), "c"),), {"hermitian": True, "atol": 0.5}),
)


def _singular(a: Array, hermitian: bool) -> Array:
    if hermitian:
        return np.abs(np.linalg.eigvalsh(a))  # (NumPy's eigvalsh reads the lower triangle, as PyTorch)
    return np.linalg.svd(a, compute_uv=False)


def _cut(s: Array, shape: tuple[int, ...], atol: Any, rtol: Any) -> Array:
    if rtol is None:
        rtol = np.finfo(s.dtype).eps * max(shape[-2:]) if atol is None else 0.0
    tol = [np.asarray(t)[..., None] for t in (0.0 if atol is None else atol, rtol)]
    return np.asarray(np.maximum(s.max(axis=-1, keepdims=True) * tol[1], tol[0]))


def _batch(a: Array, atol: Any, rtol: Any) -> tuple[int, ...]:
    return np.broadcast_shapes(a.shape[:-2], *(np.shape(t) for t in (atol, rtol) if t is not None))


def _rank_ref(a: Array, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Array:
    batch = _batch(a, atol, rtol)
    if a.size == 0:
        return np.zeros(batch, np.int64)
    a = np.broadcast_to(a.astype(np.result_type(a.dtype, np.float64)), (*batch, *a.shape[-2:]))
    s = _singular(a, hermitian)
    return np.asarray((s > _cut(s, a.shape, atol, rtol)).sum(axis=-1), dtype=np.int64)


def _pinv_ref(a: Array, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Array:
    batch = _batch(a, atol, rtol)
    dtype = np.result_type(a.dtype, np.float64)
    if a.size == 0:
        return np.zeros((*batch, a.shape[-1], a.shape[-2]), dtype)
    a = np.broadcast_to(a.astype(dtype), (*batch, *a.shape[-2:]))
    if hermitian:
        w, v = np.linalg.eigh(a)
        keep = np.abs(w) > _cut(np.abs(w), a.shape, atol, rtol)
        return np.asarray((v * np.where(keep, 1 / np.where(keep, w, 1), 0)[..., None, :]) @ v.conj().swapaxes(-1, -2))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    keep = s > _cut(s, a.shape, atol, rtol)
    inverse = np.where(keep, 1 / np.where(keep, s, 1), 0)
    return np.asarray((vh.conj().swapaxes(-1, -2) * inverse[..., None, :]) @ u.conj().swapaxes(-1, -2))


def _result(fields: Any) -> Any:
    return tuple(np.asarray(f) for f in fields)


def linalg_entries() -> list[OpSamples]:
    """The entries of every ``linalg_*`` op."""
    return [
        _square("linalg_det", np.linalg.det),
        _square("linalg_inv", np.linalg.inv),
        _square("linalg_slogdet", lambda a: _result(np.linalg.slogdet(a))),
        _any_matrix("linalg_pinv", _pinv_ref, samples=_TOLERANCE_SAMPLES),
        _any_matrix("linalg_matrix_rank", _rank_ref, samples=_TOLERANCE_SAMPLES),
        _any_matrix("linalg_svdvals", lambda a: np.linalg.svd(a, compute_uv=False)),
        _any_matrix("linalg_qr", lambda a, mode="reduced": _result(np.linalg.qr(a, mode=mode))),
        _any_matrix("linalg_svd", lambda a, full_matrices=True: _result(np.linalg.svd(a, full_matrices))),
        _square("linalg_eigvalsh", np.linalg.eigvalsh),
        _square("linalg_eigh", lambda a: _result(np.linalg.eigh(a))),
        OpSamples(
            "linalg_cholesky",
            (
                *(Sample((_spd(3, k),)) for k in "bifc"),
                Sample((_spd(2, batch=(2,)),)),
                Sample((A((0, 2, 2)),)),
                Sample((Strided(_spd(3)),)),
            ),
            "bifc",
            reference=np.linalg.cholesky,
            lacks=_NO_0D,
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_solve",
            (
                *(Sample((A((3, 3), k), A((3, 2), k, shift=1))) for k in "bifc"),
                Sample((A((3, 3)), A((3,), shift=1))),
                Sample((A((2, 3, 3), shift=1), A((3, 2))), broadcast=True),
                Sample((A((3, 3)), A((0, 3, 2)))),
                Sample((S((3, 3)), S((3, 2)))),
            ),
            "bifc",
            broadcasts=True,
            reference=np.linalg.solve,
            lacks=_NO_0D,
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_matrix_power",
            (
                *(Sample((A((3, 3), k), 3)) for k in "ifc"),
                Sample((A((2, 3, 3)), 0)),
                Sample((A((2, 2)), -2)),
                Sample((A((0, 2, 2)), 2)),
                Sample((S((3, 3)), 2)),
            ),
            "ifc",
            reference=np.linalg.matrix_power,
            lacks=_NO_0D,
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_vector_norm",
            (
                *(Sample((A((3, 4), k),)) for k in "bifc"),
                Sample((A((3, 4)), 1, -1, True)),
                Sample((A((3, 4)), float("inf"), (0, 1))),
                Sample((A((2, 3, 4)), 3.0, 1)),
                Sample((A(()),)),
                Sample((A((0, 3)),)),
                Sample((S((3, 4)), 0.5)),
            ),
            "bifc",
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_matrix_norm",
            (
                *(Sample((A((3, 4), k),)) for k in "bifc"),
                *(Sample((A((2, 3, 4)), o)) for o in ("nuc", 2, -2, 1, -1, float("inf"), float("-inf"))),
                Sample((A((3, 4, 2)), "fro", (0, 2), True)),
                Sample((A((0, 3)),)),
                # Empty matrices: 0 where the norm is a maximum or a sum over nothing (PyTorch's values).
                *(Sample((A((2, 0, 3)), o)) for o in ("nuc", 2, 1, -1, float("inf"))),
                *(Sample((A((3, 0)), o)) for o in ("nuc", 2, 1, float("inf"), float("-inf"))),
                Sample((S((3, 4)), 1)),
            ),
            "bifc",
            lacks=_NO_0D,
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_norm",
            (
                *(Sample((A((3, 4), k),)) for k in "bifc"),
                Sample((A((3, 4)), 2)),
                Sample((A((4,)), 1)),
                Sample((A((2, 3, 4)), None, 1)),
                Sample((A((2, 3, 4)), "nuc", (1, 2))),
                Sample((A(()),)),
                Sample((A((0, 3)),)),
                Sample((S((3, 4)), float("inf"))),
            ),
            "bifc",
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_trace",
            (
                *(Sample((A((3, 4), k),)) for k in "bifc"),
                Sample((A((2, 3, 3)), 1)),
                Sample((A((3, 3)), -2)),
                Sample((A((0, 3, 3)),)),
                Sample((S((3, 4)),)),
            ),
            "bifc",
            reference=lambda a, offset=0: np.trace(a, offset, axis1=-2, axis2=-1),
            lacks=_NO_0D,
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_diagonal",
            (
                *(Sample((A((3, 4), k),)) for k in "bifc"),
                Sample((A((2, 3, 4)),), {"offset": 1, "dim1": 0, "dim2": 2}),
                Sample((A((3, 3)),), {"offset": -1}),
                Sample((A((0, 3)),)),
                Sample((S((3, 4)),)),
            ),
            "bifc",
            reference=lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(a, offset, dim1, dim2),
            lacks=_NO_0D,
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_cross",
            (
                *(Sample((A((2, 3), k), A((2, 3), k, shift=1))) for k in "ifc"),
                Sample((A((3, 2)), A((3, 1), shift=2)), {"dim": 0}, broadcast=True),
                Sample((A((4, 3)), A((1, 3), shift=1)), broadcast=True),  # (one number of dims: PyTorch's rule)
                Sample((A((0, 3)), A((0, 3)))),
                Sample((S((2, 3)), S((2, 3), shift=1))),
            ),
            "ifc",
            broadcasts=True,
            reference=lambda a, b, dim=-1: np.cross(a, b, axis=dim),
            lacks={"0-d": "cross takes vectors of 3 components"},
            skip=_SKIP,
        ),
        OpSamples(
            "linalg_vecdot",
            (
                *(Sample((A((2, 3), k), A((2, 3), k, shift=1))) for k in "bifc"),
                Sample((A((3, 2)), A((3, 1), shift=2)), {"dim": 0}, broadcast=True),
                Sample((A((4, 3)), A((1, 3), shift=1)), broadcast=True),  # (one number of dims: PyTorch's rule)
                Sample((A((0, 3)), A((0, 3)))),
                Sample((S((2, 3)), S((2, 3), shift=1))),
            ),
            "bifc",
            broadcasts=True,
            lacks={"0-d": "vecdot takes vectors"},
            skip=_SKIP,
        ),
    ]
