"""Op sample registry entries for ``devtensor.kernels.shape_more`` (movedim, tile, repeat_interleave, einsum,
searchsorted): see ``tests/op_samples.py``. References are NumPy's functions of the same meaning."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from op_samples import NO_INPLACE, VIEW_SKIPS, A, OpSamples, S, Sample

__all__ = ["shape_more_entries"]

_SKIP = {"inplace": NO_INPLACE}


def _repeat_ref(a: Any, repeats: Any, dim: int | None = None, output_size: int | None = None) -> Any:
    counts = np.reshape(repeats, -1)[0] if np.size(repeats) == 1 else repeats  # (one count for every element)
    return np.repeat(a, counts, axis=None if dim is None or a.ndim == 0 else dim)


def _movedim_ref(a: Any, source: Any, destination: Any) -> Any:
    return a.copy() if a.ndim == 0 else np.moveaxis(a, source, destination)


def _einsum_ref(operands: Any, equation: str) -> Any:
    lhs, arrow, rhs = equation.partition("->")
    if arrow and "..." in lhs and "..." not in rhs:
        # PyTorch sums the '...' dims absent from the output: NumPy's result with them in front, summed.
        kept = np.einsum(f"{lhs}->...{rhs}", *operands)
        return np.asarray(kept.sum(axis=tuple(range(kept.ndim - len(rhs)))))
    return np.asarray(np.einsum(equation, *operands))


def _searchsorted_ref(
    s: Any, x: Any, out_int32: bool = False, right: bool = False, side: Any = None, sorter: Any = None
) -> Any:
    which: Literal["left", "right"] = "right" if right or side == "right" else "left"
    dtype = np.int32 if out_int32 else np.int64
    if s.ndim == 1:
        return np.asarray(np.searchsorted(s, x, side=which, sorter=sorter)).astype(dtype)
    if s.shape[-1] == 0:
        return np.zeros(x.shape, dtype)
    order = np.argsort(s, axis=-1) if sorter is None else sorter  # (np.searchsorted's sorter: one row at a time)
    count = int(np.prod(s.shape[:-1]))
    rows = [
        np.searchsorted(r, v, side=which, sorter=o)
        for r, v, o in zip(
            s.reshape(count, s.shape[-1]), x.reshape(count, -1), order.reshape(count, s.shape[-1]), strict=True
        )
    ]
    return np.array(rows, dtype=dtype).reshape(x.shape)


def shape_more_entries() -> list[OpSamples]:
    """The entries of movedim, tile, repeat_interleave, einsum and searchsorted."""
    sorted_rows = np.sort(A((2, 4), signed=True), axis=-1)
    unsorted_rows = A((2, 4), signed=True, shift=2)
    return [
        OpSamples(
            "movedim",
            (
                *(Sample((A((2, 3, 4), k), 0, -1)) for k in "bifc"),
                Sample((A((2, 3, 4, 5)), (0, 1), (2, 3))),
                Sample((A(()), 0, 0)),
                Sample((A((0, 3)), 1, 0)),
                Sample((S((2, 3)), -1, 0)),
            ),
            "bifc",
            reference=_movedim_ref,
            skip=VIEW_SKIPS,
        ),
        OpSamples(
            "tile",
            (
                *(Sample((A((2, 3), k), (2, 1))) for k in "bifc"),
                Sample((A((2, 3)), (2,))),
                Sample((A((3,)), (2, 1, 2))),
                Sample((A(()), (3,))),
                Sample((A((0, 3)), (2, 2))),
                Sample((S((2, 3)), (1, 3))),
            ),
            "bifc",
            reference=lambda a, dims: np.tile(a, dims),
            skip=_SKIP,
        ),
        OpSamples(
            "repeat",
            (
                *(Sample((A((2, 3), k), (2, 1))) for k in "bifc"),
                Sample((A((3,)), (2, 1, 2))),
                Sample((A(()), (3,))),
                Sample((A(()), ())),
                Sample((A((0, 3)), (2, 2))),
                Sample((A((2, 3)), (0, 2))),
                Sample((S((2, 3)), (1, 3))),
            ),
            "bifc",
            reference=lambda a, repeats: np.tile(a, repeats),
            skip=_SKIP,
        ),
        OpSamples(
            "repeat_interleave",
            (
                *(Sample((A((2, 3), k), 2)) for k in "bifc"),
                Sample((A((2, 3)), 3, 1)),
                Sample((A((2, 3)), 0, -2)),
                Sample((A(()), 2)),
                Sample((A(()), 2, 0)),
                Sample((A((0, 3)), 2, 0)),
                Sample((S((2, 3)), 2, 1)),
                # PyTorch's tensor of counts, with the result's size by output_size (meta tensors need it; the
                # counts read instead: tests/test_shape_more_ops.py).
                Sample((A((2, 3)), np.array([1, 0, 2]), 1), {"output_size": 3}),
                Sample((A((2, 3)), np.array([2, 1]), 0), {"output_size": 3}),
                Sample((A((2, 3)), np.array([3])), {"output_size": 18}),
                Sample((A((2, 3)), np.array(2, np.int32), -1), {"output_size": 6}),
                Sample((A((2, 3)), 2, 0), {"output_size": 4}),
            ),
            "bifc",
            reference=_repeat_ref,
            skip=_SKIP,
        ),
        OpSamples(
            "einsum",
            (
                *(Sample(([A((2, 3), k), A((3, 4), k, shift=1)], "ij,jk->ik")) for k in "bifc"),
                Sample(([A((2, 3)), A((3,), "i")], "ij,j")),
                Sample(([A((3, 3))], "ii")),
                Sample(([A((2, 3, 4)), A((4, 2), shift=1)], "...k,kl->...l")),
                Sample(([A((2, 1, 3)), A((4, 3), shift=1)], "...j,...j->..."), broadcast=True),
                Sample(([A(()), A((3,))], ",i->i")),
                Sample(([A((0, 3)), A((3, 2))], "ij,jk->ik")),
                Sample(([S((2, 3)), S((4, 3))], "ij,kj->ik")),
                Sample(([A((2, 3, 4))], "...ij->ij")),
                Sample(([A((2, 3)), A((3,), shift=1)], "...j,...j->"), broadcast=True),
            ),
            "bifc",
            broadcasts=True,
            reference=_einsum_ref,
            skip=_SKIP,
        ),
        OpSamples(
            "searchsorted",
            (
                Sample((np.array([False, True]), np.array([True, False, True]))),
                Sample((np.array([1, 3, 5, 7]), A((2, 3), "i"))),
                Sample((np.array([-1.0, 0.0, 0.5, 2.0]), A((2, 3), signed=True)), {"right": True}),
                Sample((sorted_rows, A((2, 3), signed=True, shift=1)), {"side": "right"}),
                Sample((sorted_rows, A((2, 5), signed=True)), {"out_int32": True}),
                Sample((np.array([0.0, 1.0]), A(()))),
                Sample((np.array([0.0, 1.0]), A((0, 3)))),
                Sample((np.zeros((2, 0)), A((2, 3)))),  # empty rows: every value at index 0
                Sample((np.array([0.0, 1.0, 2.0]), S((2, 3)))),
                # A Python number (0-d result), an unsorted sequence with its sorter, an empty sequence per row.
                Sample((np.array([1.0, 3.0, 5.0]), 4.0), {"right": True}),
                Sample((np.array([1, 3, 5]), 3)),
                Sample((np.array([5.0, -1.0, 3.0]), A((4,), signed=True)), {"sorter": np.array([1, 2, 0])}),
                Sample((unsorted_rows, A((2, 3), signed=True)), {"sorter": np.argsort(unsorted_rows, axis=-1)}),
                Sample((np.zeros((2, 0)), A((2, 3)))),
            ),
            "bif",
            reference=_searchsorted_ref,
            lacks={"complex": "no order on complex numbers (refused, as PyTorch)"},
            skip=_SKIP,
        ),
    ]
