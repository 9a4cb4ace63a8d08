"""The shape and view family against NumPy: reshape, view, flatten, transpose, permute, squeeze, unsqueeze,
expand, broadcast_to, contiguous, split, chunk (view ops), clone, flip, cat, stack (structured ops with out).

Values and shapes over hypothesis-drawn shapes (0-d and empty included), layouts (contiguous, transposed,
strided, reversed), dims (negative too) and dtypes; views share memory and the version counter with their base in
both directions; ``reshape``/``view`` are views exactly when NumPy can reshape without a copy; errors name the op,
the argument and the value; meta tensors give the shapes; the view-op mechanism (definition checks, the kernel
table, no kernel); the CUDA paths through the NumPy-backed CuPy stand-in."""

from __future__ import annotations

import inspect
import itertools
import math
import re
import warnings
from collections.abc import Callable, Iterator
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from helpers import remove_view_op
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError, CastingError, MemoryOverlapError, ShapeError, ViewError
from devtensor.tensor import Tensor
from devtensor.views import ViewOp, ViewSpec, all_view_ops, view_op

Array = npt.NDArray[Any]

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int64, np.uint16, np.float16, np.float32, np.complex128)]
dtypes = st.sampled_from(DTYPES)
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
LAYOUTS = ["contiguous", "transposed", "strided", "reversed"]


def words(*parts: str) -> str:
    """A regex matching a message that contains every part, in order."""
    return ".*".join(re.escape(p) for p in parts)


def values(seed: int, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


def laid_out(seed: int, shape: tuple[int, ...], dtype: np.dtype[Any], layout: str) -> Array:
    """An array of ``shape`` with the given memory layout (a view into a larger or permuted array)."""
    if layout == "transposed" and len(shape) >= 2:
        return values(seed, shape[::-1], dtype).transpose()
    if layout == "strided" and shape:
        big = values(seed, (*shape[:-1], 2 * shape[-1]), dtype)
        return big[..., ::2]
    if layout == "reversed" and shape:
        return values(seed, shape, dtype)[::-1]
    return values(seed, shape, dtype)


@st.composite
def tensors(draw: st.DrawFn, shape_strategy: st.SearchStrategy[tuple[int, ...]] = shapes) -> tuple[dt.Tensor, Array]:
    """(a CPU tensor over a possibly non-contiguous array, a contiguous copy of its values)."""
    shape = draw(shape_strategy)
    arr = laid_out(draw(st.integers(0, 2**32 - 1)), shape, draw(dtypes), draw(st.sampled_from(LAYOUTS)))
    return dt.from_numpy(arr), arr.copy()


def assert_matches(result: dt.Tensor, expected: Any) -> None:
    expected = np.asarray(expected)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    np.testing.assert_array_equal(result.numpy(), expected)


def assert_view_of(view: dt.Tensor, base: dt.Tensor, *, write_through_view: bool = True) -> None:
    """``view`` shares memory and the version counter with ``base``: writes through either bump both. The base's
    data is restored afterwards."""
    if view.numel():
        assert np.shares_memory(view.numpy(), base.numpy())
    saved = base.numpy().copy()
    before = base.version
    assert view.version == before
    base[...] = 0
    assert view.version == base.version == before + 1
    if write_through_view:
        view[...] = 1
        assert base.version == view.version == before + 2
        if view.numel():
            assert bool(np.all(view.numpy() == 1))
    base[...] = dt.from_numpy(saved)


def assert_copy_of(result: dt.Tensor, base: dt.Tensor) -> None:
    """``result`` has its own storage: no shared memory, an independent version counter."""
    if result.numel():
        assert not np.shares_memory(result.numpy(), base.numpy())
    assert result.version == 0
    v = base.version
    saved = base.numpy().copy()
    result[...] = 0
    assert base.version == v and result.version == 1
    np.testing.assert_array_equal(base.numpy(), saved)


def meta_like(t: dt.Tensor) -> dt.Tensor:
    return dt.empty(*t.shape, dtype=t.dtype, device="meta")


def same_numel_shapes(numel: int) -> list[tuple[int, ...]]:
    sizes = [0, 1, 2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 27, 32, 36, 48, 64]
    return [s for k in range(0, 4) for s in itertools.product(sizes, repeat=k) if math.prod(s) == numel]


def numpy_can_view(arr: Array, shape: tuple[int, ...]) -> bool:
    try:
        arr.reshape(shape, copy=False)
    except ValueError:
        return False
    return True


# --- reshape, view, flatten -----------------------------------------------------------------------------------


@given(tensors(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)), st.data())
def test_reshape_and_view_match_numpy(pair: tuple[dt.Tensor, Array], data: st.DataObject) -> None:
    t, arr = pair
    candidates = same_numel_shapes(arr.size) or [arr.shape]
    shape = data.draw(st.sampled_from(candidates))
    arg = list(shape)
    if shape and 0 not in shape and data.draw(st.booleans()):
        arg[data.draw(st.integers(0, len(shape) - 1))] = -1  # one inferred size
    expected = arr.reshape(shape)
    viewable = arr.size == 0 or numpy_can_view(t.numpy(), shape)
    result = t.reshape(arg)
    assert_matches(result, expected)
    assert_matches(dt.reshape(t, tuple(arg)), expected)
    assert meta_like(t).reshape(arg).shape == shape
    if viewable:
        assert_matches(t.view(*arg), expected)
        assert_view_of(result, t)
    else:
        with pytest.raises(ViewError, match=words("view", "not compatible", "reshape")):
            t.view(arg)
        assert_copy_of(result, t)


def test_view_errors_are_runtime_errors_and_change_nothing() -> None:
    t = dt.from_numpy(np.arange(6.0).reshape(2, 3)).transpose(0, 1)
    snap = snapshot(t)
    with pytest.raises(RuntimeError, match=words("view", "[3, 2]", "[1, 3]", "[6]", "reshape")):
        t.view(6)
    assert_unchanged(snap)
    assert isinstance(ViewError("x"), ShapeError)
    assert t.view(3, 2).shape == (3, 2)


@pytest.mark.parametrize(
    ("shape", "error", "parts"),
    [
        ((4, 2), ShapeError, ["reshape", "[4, 2]", "6 elements"]),
        ((-1, -1), ShapeError, ["reshape", "only one dimension can be inferred"]),
        ((-1, 4), ShapeError, ["reshape", "[-1, 4]", "6 elements"]),
        ((2, -3), ShapeError, ["reshape", "-3"]),
        ((2, 3.0), ArgumentTypeError, ["reshape", "'shape'", "ints"]),
        ((True, 6), ArgumentTypeError, ["reshape", "'shape'", "ints"]),
    ],
)
def test_reshape_errors(shape: tuple[Any, ...], error: type[Exception], parts: list[str]) -> None:
    with pytest.raises(error, match=words(*parts)):
        dt.zeros(2, 3).reshape(shape)


def test_reshape_of_empty_tensors() -> None:
    t = dt.zeros(0, 3)
    assert t.reshape(3, 0, 5).shape == (3, 0, 5)
    with pytest.raises(ShapeError, match=words("reshape", "ambiguous")):
        t.reshape(0, -1)
    assert dt.zeros(2, 0).transpose(0, 1).view(0).shape == (0,)


@given(tensors(), st.data())
def test_flatten_matches_numpy(pair: tuple[dt.Tensor, Array], data: st.DataObject) -> None:
    t, arr = pair
    n = max(arr.ndim, 1)
    start = data.draw(st.integers(-n, n - 1))
    end = data.draw(st.integers(-n, n - 1))
    s, e = start % n, end % n
    if s > e:
        with pytest.raises(ValueError, match=words("flatten", "start_dim", "end_dim")):
            t.flatten(start, end)
        return
    shape = (1,) if arr.ndim == 0 else (*arr.shape[:s], math.prod(arr.shape[s : e + 1]), *arr.shape[e + 1 :])
    result = dt.flatten(t, start, end)
    assert_matches(result, arr.reshape(shape))
    assert meta_like(t).flatten(start, end).shape == shape
    if arr.size == 0 or numpy_can_view(t.numpy(), shape):
        assert_view_of(result, t)
    else:
        assert_copy_of(result, t)


# --- transpose, permute ---------------------------------------------------------------------------------------


@given(tensors(), st.data())
def test_transpose_and_permute_match_numpy(pair: tuple[dt.Tensor, Array], data: st.DataObject) -> None:
    t, arr = pair
    n = max(arr.ndim, 1)
    d0, d1 = data.draw(st.integers(-n, n - 1)), data.draw(st.integers(-n, n - 1))
    expected = np.swapaxes(arr, d0, d1) if arr.ndim else arr
    result = t.transpose(d0, d1)
    assert_matches(result, expected)
    assert meta_like(t).transpose(d0, d1).shape == expected.shape
    assert_view_of(result, t)
    order = data.draw(st.permutations(range(arr.ndim)))
    dims = [d - arr.ndim if data.draw(st.booleans()) else d for d in order]
    assert_matches(t.permute(*dims), np.transpose(arr, order))
    assert_matches(dt.permute(t, dims), np.transpose(arr, order))
    assert_view_of(t.permute(dims), t)


def test_transpose_permute_errors() -> None:
    t = dt.zeros(2, 3)
    with pytest.raises(IndexError, match=words("transpose", "'dim1'", "2", "[-2, 1]")):
        t.transpose(0, 2)
    with pytest.raises(ArgumentTypeError, match=words("transpose", "'dim0'", "float")):
        t.transpose(0.0, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=words("permute", "dim 0", "multiple times")):
        t.permute(0, -2)
    with pytest.raises(ShapeError, match=words("permute", "3", "[0, 1, 2]", "2", "[2, 3]")):
        t.permute(0, 1, 2)
    with pytest.raises(IndexError, match=words("permute", "'dims'", "5")):
        t.permute(0, 5)


# --- squeeze, unsqueeze ---------------------------------------------------------------------------------------


@given(tensors(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=2)), st.data())
def test_squeeze_and_unsqueeze_match_numpy(pair: tuple[dt.Tensor, Array], data: st.DataObject) -> None:
    t, arr = pair
    assert_matches(t.squeeze(), np.squeeze(arr))
    assert_view_of(t.squeeze(), t)
    n = max(arr.ndim, 1)
    dims = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    signed = [d - n if data.draw(st.booleans()) else d for d in dims]
    # PyTorch's squeeze leaves named dims whose size is not 1 alone (NumPy raises).
    axis = tuple(d for d in dims if arr.ndim and arr.shape[d] == 1)
    assert_matches(t.squeeze(signed), np.squeeze(arr, axis=axis))
    if signed:
        assert_matches(dt.squeeze(t, signed[0]), np.squeeze(arr, axis=axis[:1] if dims[0] in axis else ()))
    assert meta_like(t).squeeze(signed).shape == np.squeeze(arr, axis=axis).shape
    d = data.draw(st.integers(-arr.ndim - 1, arr.ndim))
    expected = np.expand_dims(arr, d)
    result = t.unsqueeze(d)
    assert_matches(result, expected)
    assert meta_like(t).unsqueeze(d).shape == expected.shape
    assert_view_of(result, t)


def test_squeeze_unsqueeze_errors() -> None:
    t = dt.zeros(1, 3)
    with pytest.raises(IndexError, match=words("unsqueeze", "'dim'", "3", "[-3, 2]")):
        t.unsqueeze(3)
    with pytest.raises(ValueError, match=words("squeeze", "dim 0", "multiple times")):
        t.squeeze((0, -2))
    with pytest.raises(IndexError, match=words("squeeze", "'dim'", "2")):
        t.squeeze(2)
    assert dt.zeros(()).squeeze(0).shape == () and dt.zeros(()).unsqueeze(-1).shape == (1,)


# --- expand, broadcast_to -------------------------------------------------------------------------------------


@st.composite
def expand_targets(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[list[int], tuple[int, ...]]:
    """(sizes as given to expand, with -1 here and there; the resolved target shape)."""
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    sizes: list[int] = list(lead)
    resolved: list[int] = list(lead)
    for n in shape:
        choice = draw(st.integers(0, 3)) if n == 1 else n
        keep = choice == n and draw(st.booleans())
        sizes.append(-1 if keep else choice)
        resolved.append(choice)
    return sizes, tuple(resolved)


@given(tensors(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)), st.data())
def test_expand_and_broadcast_to_match_numpy(pair: tuple[dt.Tensor, Array], data: st.DataObject) -> None:
    t, arr = pair
    sizes, target = data.draw(expand_targets(arr.shape))
    expected = np.broadcast_to(arr, target)
    for result in (t.expand(*sizes), t.expand(sizes), dt.expand(t, sizes), t.broadcast_to(sizes)):
        assert_matches(result, expected)
        assert_view_of(result, t, write_through_view=result.shape == t.shape)
    assert meta_like(t).expand(sizes).shape == target


def test_expanded_views_refuse_writes() -> None:
    base = dt.tensor([1.0, 2.0, 3.0])
    e = base.expand(2, 3)
    assert e.stride() == (0, 1) and e.strides == (0, 8)
    snap = snapshot(base)
    with pytest.raises(MemoryOverlapError, match=words("add_", "self")):
        e.add_(1)
    with pytest.raises(MemoryOverlapError):
        dt.add(dt.zeros(2, 3), 1, out=e)
    assert_unchanged(snap)
    c = e.contiguous()
    assert c.is_contiguous() and c.version == 0
    assert_matches(c, np.broadcast_to(base.numpy(), (2, 3)))


@pytest.mark.parametrize(
    ("op", "sizes", "parts"),
    [
        ("expand", (3,), ["expand", "number of sizes", "1", "2", "[2, 1]"]),
        ("expand", (3, 4), ["expand", "expanded size", "(3)", "existing size (2)", "dimension 0", "[3, 4]", "[2, 1]"]),
        ("expand", (-1, 2, 4), ["expand", "(-1)", "leading, non-existing dimension 0"]),
        ("expand", (2, -2), ["expand", "(-2)", "dimension 1"]),
        ("broadcast_to", (4, 1), ["broadcast_to", "(4)", "existing size (2)", "[4, 1]", "[2, 1]"]),
    ],
)
def test_expand_errors(op: str, sizes: tuple[int, ...], parts: list[str]) -> None:
    with pytest.raises(ShapeError, match=words(*parts)):
        getattr(dt, op)(dt.zeros(2, 1), sizes)


# --- contiguous -----------------------------------------------------------------------------------------------


@given(tensors())
def test_contiguous_is_a_view_exactly_when_contiguous(pair: tuple[dt.Tensor, Array]) -> None:
    t, arr = pair
    result = t.contiguous()
    assert_matches(result, arr)
    assert result.is_contiguous()
    if t.is_contiguous():
        assert_view_of(result, t)
    else:
        assert_copy_of(result, t)


# --- split, chunk ---------------------------------------------------------------------------------------------


def pieces(arr: Array, dim: int, bounds: list[tuple[int, int]]) -> list[Array]:
    return [np.take(arr, np.arange(a, b), axis=dim) for a, b in bounds]


@given(tensors(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=7)), st.data())
def test_split_and_chunk_match_reference(pair: tuple[dt.Tensor, Array], data: st.DataObject) -> None:
    t, arr = pair
    dim = data.draw(st.integers(-arr.ndim, arr.ndim - 1))
    n = arr.shape[dim]
    size = data.draw(st.integers(1, 4))
    bounds = [(i, min(i + size, n)) for i in range(0, n, size)] or [(0, 0)]
    result = t.split(size, dim)
    assert isinstance(result, tuple) and len(result) == len(bounds)
    for r, e in zip(result, pieces(arr, dim, bounds), strict=True):
        assert_matches(r, e)
        assert_view_of(r, t)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    sections = [b - a for a, b in itertools.pairwise([0, *cuts, n])]
    result = dt.split(t, sections, dim=dim)
    starts = list(itertools.accumulate([0, *sections]))
    for r, e in zip(result, pieces(arr, dim, list(itertools.pairwise(starts))), strict=True):
        assert_matches(r, e)
    chunks = data.draw(st.integers(1, 5))
    csize = -(-n // chunks)
    cbounds = [(0, 0)] * chunks if n == 0 else [(i, min(i + csize, n)) for i in range(0, n, csize)]
    result = t.chunk(chunks, dim)
    assert len(result) == len(cbounds) <= chunks
    for r, e in zip(result, pieces(arr, dim, cbounds), strict=True):
        assert_matches(r, e)
    assert [m.shape for m in meta_like(t).chunk(chunks, dim)] == [r.shape for r in result]


def test_split_chunk_errors() -> None:
    t = dt.zeros(5, 2)
    with pytest.raises(ShapeError, match=words("split", "sum exactly to 5", "[2, 2]")):
        t.split([2, 2])
    with pytest.raises(ValueError, match=words("split", "positive", "0")):
        t.split(0)
    with pytest.raises(ValueError, match=words("chunk", "'chunks'", "greater than 0", "0")):
        t.chunk(0)
    with pytest.raises(ShapeError, match=words("chunk", "1-dimensional", "0-d")):
        dt.zeros(()).chunk(2)
    with pytest.raises(IndexError, match=words("split", "'dim'", "2")):
        t.split(1, 2)
    assert [p.shape for p in dt.zeros(0).split(0)] == [(0,)]


# --- clone, flip ----------------------------------------------------------------------------------------------


@given(tensors(), st.data())
def test_clone_and_flip_match_numpy(pair: tuple[dt.Tensor, Array], data: st.DataObject) -> None:
    t, arr = pair
    c = t.clone()
    assert_matches(c, arr)
    assert c.is_contiguous()
    assert_copy_of(c, t)
    n = max(arr.ndim, 1)
    dims = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    signed = [d - n if data.draw(st.booleans()) else d for d in dims]
    expected = np.flip(arr, axis=tuple(dims)) if arr.ndim else arr
    assert_matches(t.flip(signed), expected)
    out = dt.empty(*arr.shape, dtype=arr.dtype)
    assert dt.flip(t, signed, out=out) is out and out.version == 1
    assert_matches(out, expected)
    assert meta_like(t).flip(signed).shape == arr.shape


def test_flip_and_clone_errors_and_out_rules() -> None:
    t = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match=words("flip", "dim 1", "multiple times")):
        t.flip((1, -1))
    with pytest.raises(IndexError, match=words("flip", "'dims'", "2")):
        t.flip(2)
    snap = snapshot(t)
    with pytest.raises(MemoryOverlapError, match=words("flip", "'out'", "partial overlap")):
        dt.flip(t[0], 0, out=t.view(-1)[1:3])  # (out exactly t goes through a temporary: test_out_is_input.py)
    with pytest.raises(CastingError, match=words("clone", "float64", "int64")):
        dt.clone(t, out=dt.zeros(2, 2, dtype=dt.int64))
    assert_unchanged(snap)
    assert dt.clone(t, out=t) is t and t.version == 1  # an elementwise copy may write into its input


# --- cat, stack -----------------------------------------------------------------------------------------------


@st.composite
def cat_inputs(draw: st.DrawFn) -> tuple[list[Array], int]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    count = draw(st.integers(1, 3))
    arrays = []
    for _ in range(count):
        s = list(shape)
        s[dim] = draw(st.integers(0, 3))
        arrays.append(laid_out(draw(st.integers(0, 2**32 - 1)), tuple(s), draw(dtypes), draw(st.sampled_from(LAYOUTS))))
    return arrays, dim


@given(cat_inputs())
def test_cat_matches_numpy(inputs: tuple[list[Array], int]) -> None:
    arrays, dim = inputs
    expected = np.concatenate(arrays, axis=dim)
    ts = [dt.from_numpy(a) for a in arrays]
    result = dt.cat(ts, dim)
    assert_matches(result, expected)
    out = dt.empty(0, dtype=expected.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dt.cat(ts, dim=dim, out=out) is out
    assert_matches(out, expected)
    assert dt.cat([meta_like(t) for t in ts], dim).shape == expected.shape


@given(st.lists(st.sampled_from(DTYPES), min_size=1, max_size=3), shapes, st.data())
def test_stack_matches_numpy(dts: list[np.dtype[Any]], shape: tuple[int, ...], data: st.DataObject) -> None:
    arrays = [laid_out(i, shape, d, data.draw(st.sampled_from(LAYOUTS))) for i, d in enumerate(dts)]
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    expected = np.stack(arrays, axis=dim)
    ts = [dt.from_numpy(a) for a in arrays]
    assert_matches(dt.stack(ts, dim), expected)
    out = dt.empty(*expected.shape, dtype=np.complex128)
    assert dt.stack(tuple(ts), dim=dim, out=out) is out
    assert_matches(out, expected.astype(np.complex128))


def test_cat_stack_errors_and_atomicity() -> None:
    a, b = dt.zeros(2, 3), dt.zeros(2, 4)
    with pytest.raises(ShapeError, match=words("cat", "dimension 0", "[2, 3]", "tensors[1]", "[2, 4]")):
        dt.cat([a, b])
    with pytest.raises(ShapeError, match=words("cat", "same number of dimensions", "[2, 3]", "[3]")):
        dt.cat([a, dt.zeros(3)])
    with pytest.raises(ShapeError, match=words("cat", "zero-dimensional", "position 1")):
        dt.cat([dt.zeros(1), dt.zeros(())])
    with pytest.raises(ShapeError, match=words("stack", "equal size", "[2, 3]", "entry 0", "[2, 4]", "entry 1")):
        dt.stack([a, b])
    with pytest.raises(IndexError, match=words("stack", "'dim'", "3")):
        dt.stack([a, a], 3)
    with pytest.raises(ArgumentTypeError, match=words("cat", "tensors[1]", "a Tensor")):
        dt.cat([a, 1.0])  # type: ignore[list-item]
    with pytest.raises(dt.DeviceMismatchError, match=words("cat", "cpu", "meta")):
        dt.cat([a, dt.empty(2, 3, device="meta")])
    big = dt.zeros(5, 3)
    snap = snapshot(a, b, big)
    with pytest.raises(MemoryOverlapError, match=words("cat", "'out'", "partial overlap")):
        dt.cat([big[:2], a], out=big[1:5])
    with pytest.raises(CastingError, match=words("cat", "float64", "int64")):
        dt.cat([a, a], out=dt.zeros(4, 3, dtype=dt.int64))
    assert_unchanged(snap)
    assert dt.cat([dt.zeros(1, dtype=dt.int8), dt.ones(1, dtype=dt.float32)]).dtype == np.float32
    with pytest.raises((TypeError, ValueError), match="cat"):
        dt.cat([])


# --- views: shared state, meta, read-only ---------------------------------------------------------------------


def test_views_of_views_share_one_version_counter() -> None:
    base = dt.from_numpy(np.arange(24.0))
    v = base.view(2, 3, 4).transpose(0, 2).unsqueeze(0).squeeze(0).permute(2, 1, 0).flatten()
    parts = v.chunk(3)
    parts[1].add_(1)
    assert base.version == v.version == parts[0].version == 1
    assert_matches(base, np.arange(24.0) + (np.arange(24) // 8 == 1))
    base.mul_(2)
    assert parts[2].version == 2


def test_meta_views_share_the_version_counter() -> None:
    m = dt.empty(2, 3, device="meta")
    v = m.transpose(0, 1)
    assert v.device.type == "meta" and v.shape == (3, 2)
    v.add_(1)
    assert m.version == 1
    copy = m.reshape(6)  # meta tensors count as contiguous: a view
    assert copy.version == 1


def test_views_of_read_only_memory_stay_read_only() -> None:
    arr = np.arange(6.0)
    arr.flags.writeable = False
    v = dt.from_numpy(arr).view(2, 3)
    assert v.is_readonly
    with pytest.raises(dt.ReadOnlyError):
        v.add_(1)


# --- the view-op mechanism ------------------------------------------------------------------------------------


@pytest.fixture
def diagonal_op() -> Iterator[ViewOp]:
    """A throwaway view op (the main diagonal of a square matrix, a strided view) with a CPU kernel only,
    removed from the view-op registry afterwards (so the generated-code freshness check never sees it)."""

    def dtshape_diagonal(self: dt.Tensor, offset: int = 0) -> ViewSpec:
        """The main diagonal (shifted right by ``offset``) of a square matrix."""
        if len(self.shape) != 2 or self.shape[0] != self.shape[1]:
            raise ShapeError(f"dtshape_diagonal: expected a square matrix, got shape {list(self.shape)}")
        return ViewSpec((self.shape[0] - offset,), offset)

    op = view_op(method=False)(dtshape_diagonal)

    @op.impl("cpu")
    def _(xp: ModuleType, array: Any, plan: int) -> Any:
        return xp.diagonal(array, plan)

    try:
        yield op
    finally:
        remove_view_op(op.name)


def test_a_custom_view_op(diagonal_op: ViewOp) -> None:
    diagonal = diagonal_op.functional
    t = dt.from_numpy(np.arange(9.0).reshape(3, 3))
    d = diagonal(t, 1)
    assert_matches(d, [1.0, 5.0])
    assert_view_of(d, t, write_through_view=False)  # NumPy's diagonal views are read-only
    assert d.is_readonly and not t.is_readonly
    assert diagonal(dt.empty(4, 4, device="meta")).shape == (4,)
    assert "dtshape_diagonal" in [op.name for op in all_view_ops()]
    with pytest.raises(ShapeError, match=words("dtshape_diagonal", "square", "[3]")):
        diagonal(dt.zeros(3))
    with pytest.raises(ArgumentTypeError, match=words("dtshape_diagonal", "'self'", "a Tensor", "list")):
        diagonal([[1.0]])
    kernel = diagonal_op.kernels[DispatchKey.CPU]
    diagonal_op.unregister_kernel("cpu")
    with pytest.raises(dt.NoKernelError, match=words("dtshape_diagonal", "CPU", "cpu", "none")):
        diagonal(t)
    diagonal_op.register_kernel(DispatchKey.CPU, kernel)
    assert diagonal(t).shape == (3,)


def test_view_op_definition_errors() -> None:
    def two_tensors(self: dt.Tensor, other: dt.Tensor) -> ViewSpec:
        return ViewSpec(self.shape)

    def bad_return(self: dt.Tensor) -> int:
        return 0

    def no_seq(self: dt.Tensor, n: int) -> ViewSpec:
        return ViewSpec(self.shape)

    with pytest.raises(TypeError, match=words("two_tensors", "exactly one tensor", "'other'")):
        view_op()(two_tensors)
    with pytest.raises(TypeError, match=words("bad_return", "ViewSpec")):
        view_op()(bad_return)
    with pytest.raises(TypeError, match=words("no_seq", "varargs", "'n'", "Sequence")):
        view_op(varargs="n", method=False)(no_seq)
    with pytest.raises(ValueError, match=words("'reshape'", "defined already")):
        view_op(name="reshape")(no_seq)
    with pytest.raises(ValueError, match=words("'numpy'", "shadow")):
        view_op(name="numpy")(no_seq)


def test_varargs_method_forms_and_signatures() -> None:
    t = dt.zeros(2, 3)
    assert t.reshape(3, 2).shape == t.reshape((3, 2)).shape == t.reshape([3, 2]).shape == (3, 2)
    assert t.reshape(6).shape == (6,)
    assert t.permute(1, 0).shape == t.permute([1, 0]).shape == (3, 2)
    assert t.expand(4, 2, 3).shape == t.expand((4, -1, -1)).shape == (4, 2, 3)
    assert str(inspect.signature(dt.reshape)) == "(self, shape)"
    assert str(inspect.signature(dt.Tensor.reshape)) == "(self, *shape)"
    assert str(inspect.signature(dt.unsqueeze)) == "(self, dim, *, axis=NO_ALIAS)"
    assert dt.reshape.__doc__ and "view" in dt.reshape.__doc__


# --- CUDA paths, through the NumPy-backed CuPy stand-in -------------------------------------------------------


@pytest.fixture
def stand_in(fake_cupy: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The stand-in, plus ``cupy.lib.stride_tricks.as_strided`` (a view, on its array's device), which the
    stand-in does not model yet; the front's out checks read NumPy's writeable flag, so that is on too."""

    def as_strided(x: Any, shape: Any = None, strides: Any = None) -> Any:
        result = np.lib.stride_tricks.as_strided(x, shape=shape, strides=strides, subok=True)
        result._device_id = x._device_id  # type: ignore[attr-defined]
        return result

    lib = SimpleNamespace(stride_tricks=SimpleNamespace(as_strided=as_strided))
    monkeypatch.setattr(fake_cupy, "lib", lib, raising=False)
    fake_cupy.state.writeable_flag = True
    yield fake_cupy


def test_cuda_views_and_copies_on_the_stand_in(stand_in: ModuleType) -> None:
    arr = np.arange(24.0).reshape(2, 3, 4)
    g = dt.from_numpy(arr).to("cuda:1")
    for result, expected in [
        (g.reshape(6, 4), arr.reshape(6, 4)),
        (g.transpose(0, 2).reshape(-1), arr.transpose(2, 1, 0).reshape(-1)),
        (g.view(4, 6), arr.reshape(4, 6)),
        (g[:, :, ::2].reshape(2, 6), arr[:, :, ::2].reshape(2, 6)),
        (g.permute(2, 0, 1), arr.transpose(2, 0, 1)),
        (g[0:1].squeeze(0), arr[0]),
        (g.unsqueeze(1), arr[:, None]),
        (g[:, :1].expand(2, 5, 4), np.broadcast_to(arr[:, :1], (2, 5, 4))),
        (g.transpose(0, 1).contiguous(), arr.transpose(1, 0, 2)),
        (g.flip((0, -1)), arr[::-1, :, ::-1]),
        (g.clone(), arr),
        (dt.cat([g, g], 2), np.concatenate([arr, arr], 2)),
        (dt.stack([g, g], 1), np.stack([arr, arr], 1)),
    ]:
        assert result.device == dt.Device("cuda:1")
        assert_matches(result.cpu(), expected)
    pieces = g.split([1, 3], dim=2)
    assert [p.shape for p in pieces] == [(2, 3, 1), (2, 3, 3)]
    out = dt.empty(4, 3, 4, device="cuda:1", dtype=dt.float32)
    assert dt.cat([g, g], out=out) is out
    assert_matches(out.cpu(), np.concatenate([arr, arr]).astype(np.float32))
    pieces[1].add_(1)
    assert g.version == 1 and pieces[0].version == 1
    assert_matches(g.cpu(), arr + (np.arange(4) >= 1))


@pytest.mark.cuda
def test_on_a_real_gpu() -> None:
    """The CUDA view kernels and copy impls against the CPU ones, on a real GPU with CuPy."""
    arr = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    c, g = dt.from_numpy(arr), dt.from_numpy(arr).to("cuda")
    cases: list[Callable[[dt.Tensor], dt.Tensor]] = [
        lambda t: t.reshape(6, 4),
        lambda t: t.transpose(0, 2).reshape(-1),
        lambda t: t[:, :, ::2].reshape(2, 6),
        lambda t: t.view(4, 6),
        lambda t: t.view(dt.int32),
        lambda t: t[:, :, :2].view(dt.float64),
        lambda t: t.permute(2, 0, 1),
        lambda t: t.flatten(1),
        lambda t: t[0:1].squeeze(0),
        lambda t: t.unsqueeze(-1),
        lambda t: t[:, :1].expand(2, 5, 4),
        lambda t: t.broadcast_to((3, 2, 3, 4)),
        lambda t: t.transpose(0, 1).contiguous(),
        lambda t: t.split([1, 3], 2)[1],
        lambda t: t.chunk(2, 1)[1],
        lambda t: t.flip((0, -1)),
        lambda t: t.clone(),
        lambda t: dt.cat([t, t], 2),
        lambda t: dt.stack([t, t], 1),
    ]
    for fn in cases:
        expected, result = fn(c), fn(g)
        assert result.device.type == "cuda"
        assert_matches(result.cpu(), expected.numpy())
    v = g.view(6, 4)
    v.add_(1)
    assert g.version == 1
    assert_matches(g.cpu(), arr + 1)


# --- cat/stack of an empty list: the documented ValueError -------------------------------------------------


@pytest.mark.parametrize("fn", [dt.cat, dt.stack], ids=["cat", "stack"])
def test_cat_and_stack_of_an_empty_list_raise_the_documented_value_error(fn: Callable[..., Tensor]) -> None:
    # docstrings: "ValueError: an empty list"; once ArgumentTypeError "got only Python numbers"
    with pytest.raises(ValueError, match="empty"):
        fn([])


# --- inplace view ops: squeeze_, unsqueeze_, transpose_, t_, swapdims_, swapaxes_ --------------------------------

INPLACE_VIEWS: dict[str, tuple[Callable[[Tensor], Tensor], Callable[[Any], Any]]] = {
    "squeeze_": (lambda t: t.squeeze_(), lambda a: np.squeeze(a)),
    "squeeze_(1)": (lambda t: t.squeeze_(1), lambda a: np.squeeze(a, 1)),
    "squeeze_((1, 3))": (lambda t: t.squeeze_((1, 3)), lambda a: np.squeeze(a, (1, 3))),
    "unsqueeze_(-1)": (lambda t: t.unsqueeze_(-1), lambda a: np.expand_dims(a, -1)),
    "transpose_(0, 2)": (lambda t: t.transpose_(0, 2), lambda a: np.swapaxes(a, 0, 2)),
    "swapdims_(0, -1)": (lambda t: t.swapdims_(0, -1), lambda a: np.swapaxes(a, 0, -1)),
    "swapaxes_(1, 2)": (lambda t: t.swapaxes_(1, 2), lambda a: np.swapaxes(a, 1, 2)),
}


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("device", ["cpu", "cuda:0", "meta"])
@pytest.mark.parametrize("name", sorted(INPLACE_VIEWS))
def test_inplace_view_ops(name: str, device: str) -> None:
    # PyTorch's inplace view ops change self's shape and strides over the same memory, return self and bump the
    # version counter once; other views of the memory keep their own shape.
    call, reference = INPLACE_VIEWS[name]
    a = np.arange(6.0).reshape(2, 1, 3, 1)
    t = dt.tensor(a, device=device)
    other = t[0]
    version = t.version
    assert call(t) is t
    expected = reference(a)
    assert t.shape == expected.shape and t.version == version + 1 and other.version == version + 1
    assert other.shape == (1, 3, 1)
    if device != "meta":
        np.testing.assert_array_equal(t.cpu().numpy(), expected)
        t.add_(1)  # writes through the new strides into the same memory
        np.testing.assert_array_equal(other.cpu().numpy(), a[0] + 1)


def test_inplace_view_ops_refused_change_nothing_and_t_() -> None:
    t = dt.tensor(np.arange(6.0).reshape(2, 3))
    snap = snapshot(t)
    with pytest.raises(IndexError, match="transpose"):
        t.transpose_(0, 2)
    with pytest.raises(IndexError, match="unsqueeze"):
        t.unsqueeze_(3)
    with pytest.raises(ShapeError, match="t_"):
        dt.zeros(1, 1, 1).t_()
    assert_unchanged(snap)
    assert t.t_() is t and t.shape == (3, 2) and t.version == 1
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3).T)
    v = dt.tensor([1.0, 2.0])
    assert v.t_().shape == (2,) and v.version == 1  # at most 1-d: unchanged but for the version (PyTorch)


def test_inplace_view_ops_are_refused_by_a_static_plan() -> None:
    def step(x: Tensor) -> Tensor:
        return x.unsqueeze_(0)

    with pytest.raises(dt.PlanError, match="unsqueeze_"):
        dt.plan(step, dt.tensor([1.0, 2.0]))
