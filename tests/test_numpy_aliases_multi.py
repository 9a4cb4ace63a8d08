"""NumPy's ``axis``/``keepdims`` on the multi-output ops (``max``/``min`` along a dim, ``sort``, ``topk``,
``aminmax``) and the data-dependent ops (``unique``, ``unique_consecutive``): the rule of
devtensor.structured.aliases, as on the single-output fronts; ``max``/``min`` with ``axis=`` give NumPy's result
(the values alone)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import devtensor as dt
from devtensor import Tensor, library
from devtensor.errors import ArgumentTypeError
from devtensor.structured.aliases import NO_ALIAS

A = (np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 1.7) % 5.0 - 2.0


def host(t: Any) -> np.ndarray[Any, Any]:
    assert isinstance(t, Tensor)
    return np.array(t.cpu().numpy(), copy=True)


def same(x: Any, y: Any) -> None:
    """Two results (a tensor or a tuple of tensors) hold the same values."""
    if isinstance(x, Tensor):
        assert isinstance(y, Tensor)
        np.testing.assert_array_equal(host(x), host(y))
        return
    assert type(x) is type(y) and len(x) == len(y)
    for a, b in zip(x, y, strict=True):
        same(a, b)


# name: (the call with NumPy's names, the call with PyTorch's)
CALLS: dict[str, tuple[Callable[[Tensor], Any], Callable[[Tensor], Any]]] = {
    "max-method": (lambda t: t.max(axis=1, keepdims=True), lambda t: t.amax(1, True)),
    "max-function": (lambda t: dt.max(t, axis=-1), lambda t: dt.amax(t, -1)),
    "max-all": (lambda t: t.max(axis=None), lambda t: t.max()),
    "max-axes": (lambda t: t.max(axis=(0, 2)), lambda t: t.amax((0, 2))),
    "max-keepdims-no-dim": (lambda t: t.max(keepdims=True), lambda t: t.amax(None, True)),
    "min-method": (lambda t: t.min(axis=0), lambda t: t.amin(0)),
    "min-keepdims-only": (lambda t: t.min(2, keepdims=True), lambda t: t.min(2, True)),
    "min-dim-keepdims": (lambda t: dt.min(t, dim=1, keepdims=True), lambda t: dt.min(t, 1, True)),
    "sort": (lambda t: dt.sort(t, axis=0), lambda t: dt.sort(t, 0)),
    "sort-method-descending": (lambda t: t.sort(axis=1, descending=True), lambda t: t.sort(1, True)),
    "topk": (lambda t: t.topk(2, axis=1), lambda t: t.topk(2, 1)),
    "aminmax": (lambda t: t.aminmax(axis=2, keepdims=True), lambda t: t.aminmax(dim=2, keepdim=True)),
    "aminmax-function": (lambda t: dt.aminmax(t, axis=0), lambda t: dt.aminmax(t, dim=0)),
    "unique": (lambda t: dt.unique(t.round(), axis=1), lambda t: dt.unique(t.round(), dim=1)),
    "unique-method": (
        lambda t: t.round().unique(return_counts=True, axis=0),
        lambda t: t.round().unique(return_counts=True, dim=0),
    ),
    "unique_consecutive": (
        lambda t: t.round().unique_consecutive(axis=2),
        lambda t: t.round().unique_consecutive(dim=2),
    ),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_numpy_names_call_the_op_under_pytorchs(name: str) -> None:
    numpy_call, torch_call = CALLS[name]
    same(numpy_call(dt.from_numpy(A.copy())), torch_call(dt.from_numpy(A.copy())))


@settings(max_examples=30, deadline=None)
@given(st.integers(-3, 2), st.booleans())
def test_max_and_sort_with_numpy_names_give_numpys_values(axis: int, keepdims: bool) -> None:
    t = dt.from_numpy(A.copy())
    np.testing.assert_array_equal(host(t.max(axis=axis, keepdims=keepdims)), A.max(axis, keepdims=keepdims))
    np.testing.assert_array_equal(host(t.min(axis=axis, keepdims=keepdims)), A.min(axis, keepdims=keepdims))
    np.testing.assert_array_equal(host(t.max(axis=axis) - t.min(axis=axis)), A.max(axis) - A.min(axis))
    np.testing.assert_array_equal(host(t.sort(axis=axis).values), np.sort(A, axis=axis))
    np.testing.assert_array_equal(host(dt.unique(t.round(), axis=axis)), np.unique(A.round(), axis=axis))


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (lambda t: t.max(dim=0, axis=1), ("max", "dim", "axis")),
        (lambda t: dt.min(t, 0, keepdim=True, keepdims=False), ("min", "keepdim", "keepdims")),
        (lambda t: dt.sort(t, 0, axis=1), ("sort", "dim", "axis")),
        (lambda t: t.topk(1, 0, axis=1), ("topk", "dim", "axis")),
        (lambda t: t.aminmax(dim=0, axis=1), ("aminmax", "dim", "axis")),
        (lambda t: dt.unique(t, dim=0, axis=1), ("unique", "dim", "axis")),
        (lambda t: t.unique_consecutive(dim=0, axis=0), ("unique_consecutive", "dim", "axis")),
    ],
    ids=["max", "min", "sort", "topk", "aminmax", "unique", "unique_consecutive"],
)
def test_both_names_is_the_single_output_fronts_type_error(
    call: Callable[[Tensor], Any], names: tuple[str, str, str]
) -> None:
    op, name, alias = names
    with pytest.raises(ArgumentTypeError, match=rf"^{op}: got both '{name}' and '{alias}'"):
        call(dt.from_numpy(A.copy()))


def test_both_names_with_out_changes_nothing() -> None:
    values, indices = dt.zeros(3, 4, dtype=dt.float64), dt.zeros(3, 4, dtype=dt.int64)
    with pytest.raises(TypeError, match="both 'dim' and 'axis'"):
        dt.sort(dt.from_numpy(A[0].copy()), 0, axis=1, out=(values, indices))
    assert values.version == 0 and indices.version == 0 and not host(values).any()


def test_aliases_with_out_fill_the_outs() -> None:
    values, indices = dt.empty(2, 1, 4, dtype=dt.float64), dt.empty(2, 1, 4, dtype=dt.int64)
    dt.max(dt.from_numpy(A.copy()), dim=1, keepdims=True, out=(values, indices))
    np.testing.assert_array_equal(host(values), A.max(1, keepdims=True))
    np.testing.assert_array_equal(host(indices), A.argmax(1)[:, None, :])
    values = dt.empty(2, 4, dtype=dt.float64)
    dt.min(dt.from_numpy(A.copy()), axis=1, out=values)  # NumPy's form: one out, as np.min's
    np.testing.assert_array_equal(host(values), A.min(1))


def test_max_min_numpy_form_errors_name_the_function_and_axis() -> None:
    t = dt.from_numpy(A.copy())
    with pytest.raises(IndexError, match=r"^max: .*'axis' is 3"):
        t.max(axis=3)
    with pytest.raises(ArgumentTypeError, match=r"^min: got 'other' with NumPy's 'axis'"):
        dt.min(t, other=t, axis=0)  # type: ignore[call-overload]


def test_unknown_and_unbindable_arguments_stay_type_errors() -> None:
    t = dt.from_numpy(A.copy())
    with pytest.raises(TypeError, match="sort"):
        dt.sort(t, axis=0, axes=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="topk"):
        t.topk(axis=0)  # type: ignore[call-arg]
    with pytest.raises(IndexError, match="sort"):
        t.sort(axis=5)


def test_signatures_show_the_aliases_and_modes_see_pytorchs_names() -> None:
    assert inspect.signature(dt.sort).parameters["axis"].default is NO_ALIAS
    assert list(inspect.signature(dt.aminmax).parameters)[-2:] == ["axis", "keepdims"]
    assert "axis" in inspect.signature(dt.unique).parameters
    t = dt.from_numpy(A.copy())
    with library.LoggingMode(sink=lambda text: None) as log:
        t.sort(axis=0)
        t.sort(0)
        dt.unique(t, axis=0)
        dt.unique(t, dim=0)
    assert log.names == ["sort", "sort", "unique", "unique"]
    assert log.calls[0].args == log.calls[1].args and log.calls[0].kwargs == log.calls[1].kwargs
    assert log.calls[2].args == log.calls[3].args and log.calls[2].kwargs == log.calls[3].kwargs
