"""NumPy's keyword names on the fronts (``axis`` for ``dim``, ``keepdims`` for ``keepdim``, ``ddof`` for
``correction``: devtensor.structured.aliases), ``Tensor.size`` as an int that is also PyTorch's ``size()``,
``Tensor.ravel`` and NumPy index arrays: what NumPy code and Dask call on a tensor."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import Tensor, library
from devtensor.errors import ArgumentTypeError, IndexOutOfRangeError
from devtensor.structured import TensorSpec
from devtensor.tensor_protocols import SizeInt
from devtensor.typed import as_cpu

A = (np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 1.7) % 5.0 - 2.0


def host(t: Any) -> np.ndarray[Any, Any]:
    assert isinstance(t, Tensor)
    return np.array(t.cpu().numpy(), copy=True)


# --- keyword aliases ----------------------------------------------------------------------------------------

# name: (devtensor call with NumPy's keywords, the NumPy call)
METHODS: dict[str, tuple[Callable[[Tensor], Any], Callable[[np.ndarray[Any, Any]], Any]]] = {
    "sum-axis": (lambda t: t.sum(axis=1), lambda a: a.sum(axis=1)),
    "sum-axes-keepdims-dtype": (
        lambda t: t.sum(axis=(0, 2), keepdims=True, dtype=dt.float32),
        lambda a: a.sum(axis=(0, 2), keepdims=True, dtype=np.float32),
    ),
    "prod-keepdims": (lambda t: t.prod(keepdims=True), lambda a: a.prod(keepdims=True)),
    "mean-axis-neg": (lambda t: t.mean(axis=-1), lambda a: a.mean(axis=-1)),
    "amax-axis-keepdims": (lambda t: t.amax(axis=0, keepdims=True), lambda a: a.max(axis=0, keepdims=True)),
    "amin-axis": (lambda t: t.amin(axis=(1, 2)), lambda a: a.min(axis=(1, 2))),
    "argmax-axis": (lambda t: t.argmax(axis=2), lambda a: a.argmax(axis=2)),
    "argmin-axis-keepdims": (lambda t: t.argmin(axis=1, keepdims=True), lambda a: a.argmin(axis=1, keepdims=True)),
    "all-axis": (lambda t: (t > -1.5).all(axis=0), lambda a: (a > -1.5).all(axis=0)),
    "any-keepdims": (lambda t: (t > 2.5).any(axis=1, keepdims=True), lambda a: (a > 2.5).any(axis=1, keepdims=True)),
    "var-ddof0": (lambda t: t.var(axis=1, ddof=0), lambda a: a.var(axis=1)),
    "std-ddof1-keepdims": (
        lambda t: t.std(axis=(0, 1), ddof=1, keepdims=True),
        lambda a: a.std(axis=(0, 1), ddof=1, keepdims=True),
    ),
    "function-sum": (lambda t: dt.sum(t, axis=0, keepdims=True), lambda a: np.sum(a, axis=0, keepdims=True)),
    "function-var": (lambda t: dt.var(t, axis=2, ddof=0), lambda a: np.var(a, axis=2)),
    "binding-mean": (lambda t: dt.cpu.mean(as_cpu(t), axis=1), lambda a: np.mean(a, axis=1)),
    "cat-axis": (lambda t: dt.cat([t, t], axis=2), lambda a: np.concatenate([a, a], axis=2)),
    "stack-axis": (lambda t: dt.stack([t, t], axis=1), lambda a: np.stack([a, a], axis=1)),
    "diff-axis": (lambda t: dt.diff(t, axis=0), lambda a: np.diff(a, axis=0)),
}


@pytest.mark.parametrize("name", list(METHODS))
def test_numpy_keyword_names_give_numpy_values(name: str) -> None:
    on_tensor, on_numpy = METHODS[name]
    result = on_tensor(dt.from_numpy(A.copy()))
    expected = on_numpy(A)
    np.testing.assert_allclose(host(result), expected, rtol=1e-6)
    assert host(result).shape == np.shape(expected)


def test_aliases_only_rename_pytorch_defaults_stay() -> None:
    t = dt.from_numpy(A.copy())
    # var keeps PyTorch's correction=1 unless ddof (or correction) says otherwise: the alias is a name only.
    np.testing.assert_allclose(host(t.var(axis=0)), A.var(axis=0, ddof=1))
    np.testing.assert_allclose(host(t.var(axis=0, correction=0)), A.var(axis=0))


def test_aliases_with_out_and_positional_arguments() -> None:
    t = dt.from_numpy(A.copy())
    out = dt.empty(2, 4)
    assert dt.sum(t, axis=1, out=out) is out and out.version == 1
    np.testing.assert_allclose(host(out), A.sum(axis=1))
    np.testing.assert_allclose(host(t.sum(1, keepdims=True)), A.sum(axis=1, keepdims=True))  # dim positional
    np.testing.assert_allclose(host(t.sum(axis=2, dtype=None)), A.sum(axis=2))


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (lambda t: t.sum(0, axis=1), ("sum", "dim", "axis")),
        (lambda t: dt.sum(t, dim=0, axis=0), ("sum", "dim", "axis")),
        (lambda t: t.mean(keepdim=True, keepdims=True), ("mean", "keepdim", "keepdims")),
        (lambda t: t.var(correction=0, ddof=0), ("var", "correction", "ddof")),
        (lambda t: dt.cpu.argmax(as_cpu(t), 1, axis=1), ("argmax", "dim", "axis")),
        (lambda t: dt.cat([t], 1, axis=1), ("cat", "dim", "axis")),
        # the PyTorch name passed at its default is passed all the same (PyTorch's "got multiple values")
        (lambda t: t.sum(None, axis=2), ("sum", "dim", "axis")),
        (lambda t: t.var(ddof=0, correction=1), ("var", "correction", "ddof")),
        (lambda t: t.mean(keepdim=False, keepdims=True), ("mean", "keepdim", "keepdims")),
        (lambda t: dt.cat([t, t], axis=1, dim=0), ("cat", "dim", "axis")),
        (lambda t: dt.stack([t, t], axis=1, dim=0), ("stack", "dim", "axis")),
        (lambda t: dt.cpu.sum(as_cpu(t), None, axis=0), ("sum", "dim", "axis")),
        (lambda t: t.max(None, axis=0), ("max", "dim", "axis")),
        (lambda t: dt.min(t, 0, keepdim=False, keepdims=True), ("min", "keepdim", "keepdims")),
        (lambda t: t.sort(-1, axis=0), ("sort", "dim", "axis")),
        (lambda t: dt.unique(t, dim=None, axis=0), ("unique", "dim", "axis")),
        (lambda t: t.squeeze(None, axis=0), ("squeeze", "dim", "axis")),
    ],
    ids=[
        "sum",
        "sum-keywords",
        "mean-keepdims",
        "var-ddof",
        "binding-argmax",
        "cat",
        "sum-default",
        "var-default",
        "mean-default",
        "cat-default",
        "stack-default",
        "binding-default",
        "max-default",
        "min-default",
        "sort-default",
        "unique-default",
        "squeeze-default",
    ],
)
def test_both_names_is_a_type_error_naming_the_op_and_both(
    call: Callable[[Tensor], Any], names: tuple[str, str, str]
) -> None:
    t = dt.from_numpy(A.copy())
    op, name, alias = names
    with pytest.raises(ArgumentTypeError, match=rf"^{op}: got both '{name}' and '{alias}'"):
        call(t)


def test_modes_see_the_call_under_pytorchs_names() -> None:
    t = dt.from_numpy(A.copy())
    with library.LoggingMode(sink=lambda text: None) as log:
        t.sum(axis=1, keepdims=True)
        t.sum(1, True)
    assert log.names == ["sum", "sum"]
    assert log.calls[0].args == log.calls[1].args and log.calls[0].kwargs == log.calls[1].kwargs


def test_both_names_with_out_changes_nothing() -> None:
    out = dt.zeros(2, 4)
    with pytest.raises(TypeError, match="both 'dim' and 'axis'"):
        dt.sum(dt.from_numpy(A.copy()), 1, axis=1, out=out)
    assert out.version == 0 and not host(out).any()


def test_bad_alias_values_get_the_ops_own_errors() -> None:
    t = dt.from_numpy(A.copy())
    with pytest.raises(IndexError, match="sum"):
        t.sum(axis=3)
    with pytest.raises(TypeError, match="sum"):
        t.sum(axis="0")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        t.sum(axes=0)  # type: ignore[call-overload]


def test_required_dims_and_ops_without_dim_get_no_alias() -> None:
    t = dt.from_numpy(A.copy())
    # (cumsum's dim has no default: an alias cannot stand in for it without a sentinel default on the hot path)
    with pytest.raises(TypeError, match="axis"):
        t.cumsum(axis=0)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="axis"):
        dt.add(t, t, axis=0)  # type: ignore[call-arg]


def test_custom_op_with_dim_gets_the_aliases_too() -> None:
    name = f"test_aliases_sum_{next(_COUNTER)}"

    def meta(self: Tensor, dim: int = 0, keepdim: bool = False) -> TensorSpec:
        shape = list(self.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return tuple(shape), self.dtype

    op = library.custom_op(name)(meta)

    @op.impl("cpu")
    def _(self: Any, dim: int = 0, keepdim: bool = False, *, out: Any) -> None:
        np.sum(self.array, axis=dim, keepdims=keepdim, out=out.array)

    t = dt.from_numpy(A.copy())
    np.testing.assert_allclose(host(op.functional(t, axis=2, keepdims=True)), A.sum(axis=2, keepdims=True))
    with pytest.raises(ArgumentTypeError, match=rf"{name}: got both 'dim' and 'axis'"):
        op.functional(t, 1, axis=2)
    with pytest.raises(ArgumentTypeError, match=rf"{name}: got both 'dim' and 'axis'"):
        op.functional(t, 0, axis=1)  # dim at its default: passed all the same


def test_fronts_show_the_real_defaults() -> None:
    # (a parameter with an alias defaults to NO_ALIAS inside the front; its shown signature has the real one)
    for fn, name, default in ((dt.sum, "dim", None), (dt.var, "correction", 1), (dt.cat, "dim", 0)):
        assert inspect.signature(fn).parameters[name].default == default
    assert inspect.signature(dt.Tensor.squeeze).parameters["dim"].default is None
    assert inspect.signature(dt.cpu.sum).parameters["keepdim"].default is False
    for extreme in (dt.max, dt.min, dt.Tensor.max):
        parameters = inspect.signature(extreme).parameters
        assert parameters["dim"].default is None and parameters["keepdim"].default is False


def test_view_ops_with_an_optional_dim_take_axis() -> None:
    # (PyTorch's parser takes axis for dim in view ops too: squeeze, split, chunk)
    z = dt.zeros(1, 2, 1)
    assert z.squeeze(axis=0).shape == (2, 1) and dt.squeeze(z, axis=(0, 2)).shape == (2,)
    assert z.squeeze().shape == (2,) and z.squeeze(0).shape == (2, 1)
    assert [p.shape for p in dt.split(dt.zeros(4, 2), 2, axis=0)] == [(2, 2), (2, 2)]
    assert [p.shape for p in dt.zeros(4, 6).chunk(3, axis=1)] == [(4, 2)] * 3
    v = z.squeeze(axis=0)
    v[0, 0] = 1.0
    assert z[0, 0, 0].item() == 1.0  # still a view


def test_unsqueeze_takes_axis_for_its_required_dim() -> None:
    # (a view op's required dim, the last positional parameter, takes axis too: as PyTorch's unsqueeze(axis=0))
    z = dt.zeros(2)
    assert z.unsqueeze(axis=0).shape == (1, 2) and dt.unsqueeze(z, axis=1).shape == (2, 1)
    assert z.unsqueeze(0).shape == (1, 2) and z.unsqueeze(dim=-1).shape == (2, 1)
    with pytest.raises(TypeError, match=r"unsqueeze\(\) missing 1 required argument: 'dim'"):
        z.unsqueeze()  # type: ignore[call-overload]
    with pytest.raises(ArgumentTypeError, match="unsqueeze: got both 'dim' and 'axis'"):
        z.unsqueeze(0, axis=0)  # type: ignore[call-overload]
    assert inspect.signature(dt.unsqueeze).parameters["dim"].default is inspect.Parameter.empty


_COUNTER = itertools.count()


# --- size, ravel, NumPy index arrays ------------------------------------------------------------------------


def test_size_is_the_element_count_and_pytorchs_size() -> None:
    t = dt.zeros(2, 3)
    assert isinstance(t.size, int) and isinstance(t.size, SizeInt)
    assert t.size == 6 == t.numel() and t.size * 2 == 12 and type(t.size + 1) is int
    assert t.size() == (2, 3) and t.size(0) == 2 and t.size(-1) == 3 and t.size(dim=1) == 3
    assert dt.tensor(1.5).size == 1 and dt.tensor(1.5).size() == ()
    assert dt.empty(4, 0, device="meta").size == 0 and np.size(dt.zeros(5)) == 5
    with pytest.raises(IndexOutOfRangeError, match="size"):
        t.size(2)


def test_ravel_is_a_view_when_it_can_be() -> None:
    t = dt.from_numpy(A.copy())
    flat = t.ravel()
    assert flat.shape == (24,) and flat._storage.root is t._storage.root
    np.testing.assert_array_equal(host(t.permute(2, 0, 1).ravel()), A.transpose(2, 0, 1).ravel())


def test_numpy_index_arrays_index_as_tensors() -> None:
    t = dt.from_numpy(A.copy())
    rows = np.array([1, 0, 1])
    np.testing.assert_array_equal(host(t[rows]), A[rows])
    np.testing.assert_array_equal(host(t[:, np.array([2, 0])]), A[:, [2, 0]])
    mask = A[0] > 0
    np.testing.assert_array_equal(host(t[0][mask]), A[0][mask])
    cols = np.ogrid[0:2, 0:3]
    index = (cols[0], cols[1], dt.tensor(A.argmax(axis=2)))
    np.testing.assert_array_equal(host(t[index]), A.max(axis=2))
    t[np.array([0])] = 0.0
    assert not host(t)[0].any()
    with pytest.raises(ArgumentTypeError, match="valid indices"):
        t[np.array([0.5])]
    m = dt.empty(2, 3, 4, device="meta")
    assert m[np.array([1, 1, 0])].shape == (3, 3, 4)


@pytest.mark.usefixtures("fake_cupy")
def test_numpy_index_arrays_on_cuda_tensors_are_copied_to_the_device() -> None:
    t = dt.tensor(A, device="cuda")
    r = t[np.array([1, 0]), :, np.array([3, 2])]
    assert r.device.type == "cuda"
    np.testing.assert_array_equal(host(r), A[[1, 0], :, [3, 2]])


def test_errors_name_the_alias_passed() -> None:
    t = dt.ones(2, 3)
    with pytest.raises(IndexOutOfRangeError, match=r"^sum: .*argument 'axis' is 5"):
        t.sum(axis=5)
    with pytest.raises(ArgumentTypeError, match=r"^std: argument 'ddof' must be an int or a float, got bool"):
        t.std(ddof=True)
    with pytest.raises(ArgumentTypeError, match=r"^sum: argument 'keepdims' must be a bool"):
        t.sum(axis=0, keepdims=1)  # type: ignore[call-overload]
    with pytest.raises(IndexOutOfRangeError, match=r"^sort: .*argument 'axis' is 4"):
        dt.sort(t, axis=4)
    with pytest.raises(IndexOutOfRangeError, match=r"^max: .*argument 'axis' is 7"):
        t.max(axis=7)
    with pytest.raises(IndexOutOfRangeError, match=r"^sum: .*argument 'dim' is 5"):
        t.sum(5)  # the PyTorch name keeps its name
