"""``Tensor.view(dtype)`` (PyTorch's dtype overload of ``view``; NumPy's ``ndarray.view(dtype)``): the same memory
read as another dtype, against NumPy's ``.view`` over hypothesis-drawn dtypes, shapes and layouts; a view sharing
memory and the version counter with its base; every accepted dtype spelling; PyTorch's layout rule for a different
itemsize as ViewError naming the op, the argument and the value; CPU, CUDA (the NumPy-backed CuPy stand-in) and
meta; the compiled lane and the Python front agree; ``view(shape)`` unchanged."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from helpers import SUPPORTED_DTYPES
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.errors import ArgumentTypeError, ViewError

Array = npt.NDArray[Any]

DTYPES = SUPPORTED_DTYPES


def raw(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int) -> Array:
    """Random bytes read as ``dtype`` (bools kept to 0/1, as a bool tensor holds)."""
    size = int(np.prod(shape)) * dtype.itemsize
    data = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    if dtype.kind == "b":
        data &= 1
    return data.view(dtype).reshape(shape)


def same_bits(result: dt.Tensor, expected: Array) -> None:
    got = result.cpu().numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    flat = [np.ascontiguousarray(x).reshape(-1).view(np.uint8) for x in (got, expected)]
    np.testing.assert_array_equal(flat[0], flat[1])


@given(
    source=st.sampled_from(DTYPES),
    target=st.sampled_from(DTYPES),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    seed=st.integers(0, 2**16),
    layout=st.sampled_from(["contiguous", "sliced rows", "offset"]),
)
def test_view_dtype_matches_numpy(
    source: np.dtype[Any], target: np.dtype[Any], shape: tuple[int, ...], seed: int, layout: str
) -> None:
    base = raw((*shape[:-1], shape[-1] * 4) if shape else shape, source, seed) if layout != "contiguous" else None
    if base is None or not shape:
        a = raw(shape, source, seed)
    elif layout == "sliced rows":
        a = base[..., : shape[-1]]  # rows of a wider array: last stride 1, the others wider
    else:
        a = base[..., 1 : shape[-1] + 1]  # one element in: the first element's address moves
    t = dt.from_numpy(a)
    try:
        expected = a.view(target)
    except ValueError:
        expected = None
    ok = _pytorch_rule(a, target)
    if not ok:
        with pytest.raises(ViewError, match="view: argument 'dtype'"):
            t.view(target)
        return
    assert expected is not None  # PyTorch's rule is stricter than NumPy's
    v = t.view(target)
    assert v.dtype == target and v.shape == expected.shape
    assert v.stride() == tuple(s // target.itemsize for s in expected.strides)
    same_bits(v, expected)
    assert v.numel() == 0 or np.shares_memory(v.numpy(), a)


def _pytorch_rule(a: Array, target: np.dtype[Any]) -> bool:
    """Whether PyTorch's view(dtype) takes ``a`` (the first element's address standing for the storage offset)."""
    old, new = a.dtype.itemsize, target.itemsize
    if old == new:
        return True
    if a.ndim == 0 or (a.strides[-1] != old and a.shape[-1] != 1) or (a.shape[-1] == 1 and a.strides[-1] != old):
        return False
    if new < old:
        return True
    ratio = new // old
    if a.shape[-1] % ratio:
        return False
    if any(s % new and n != 1 for s, n in zip(a.strides[:-1], a.shape[:-1], strict=True)):
        return False
    return int(a.__array_interface__["data"][0]) % new == 0


def test_view_dtype_spellings_and_forms() -> None:
    a = np.arange(6.0)
    t = dt.from_numpy(a)
    for spelling in (np.int64, np.dtype(np.int64), dt.int64, "int64", "i8", int):
        v = t.view(spelling)
        assert v.dtype == dt.int64
        np.testing.assert_array_equal(v.numpy(), a.view(np.int64))
    np.testing.assert_array_equal(t.view(np.int64).view(float).numpy(), a)  # float: NumPy's float64
    assert t.view(bool).shape == (48,) and t.view(complex).shape == (3,)
    np.testing.assert_array_equal(dt.view(t, dt.float32).numpy(), a.view(np.float32))  # the functional
    # view(shape) is unchanged, spread out or as one sequence
    assert t.view(2, 3).shape == (2, 3) and t.view((3, 2)).shape == (3, 2) and dt.view(t, [6]).shape == (6,)


def test_view_dtype_is_a_view() -> None:
    a = np.arange(4, dtype=np.float32)
    t = dt.from_numpy(a.copy())
    v = t.view(dt.int32)
    assert v.version == t.version == 0
    v[0] = np.float32(2.5).view(np.int32)
    assert t[0].item() == 2.5 and t.version == 1 and v.version == 1
    t.add_(1)
    assert v.version == 2
    np.testing.assert_array_equal(v.numpy(), (np.array([2.5, 1, 2, 3], np.float32) + 1).view(np.int32))
    bytes_ = t.view(dt.uint8)
    assert bytes_.shape == (16,) and bytes_.version == 2


def test_view_dtype_errors_name_the_op_argument_and_value() -> None:
    t = dt.from_numpy(np.arange(12.0).reshape(3, 4))
    snap = snapshot(t)
    cases: list[tuple[Any, type[Exception], str]] = [
        (lambda: dt.tensor(1.0).view(dt.float32), ViewError, "0-d"),
        (lambda: t.transpose(0, 1).view(dt.float32), ViewError, "last dimension's stride must be 1"),
        (lambda: t[:, :3].view(dt.complex128), ViewError, "last dimension's size (3) must be a multiple of 2"),
        (lambda: t[:, 1:3].view(dt.complex128), ViewError, "offset"),
        (lambda: t.view("float128"), ArgumentTypeError, "view: argument 'dtype'"),
        (lambda: t.view("not a dtype"), ArgumentTypeError, "'not a dtype'"),
        (lambda: t.view(str), ArgumentTypeError, "view: argument 'dtype'"),  # type: ignore[arg-type]
        (lambda: t.view(np.dtype(">f8")), ArgumentTypeError, "byte order"),
    ]
    for call, error, part in cases:
        with pytest.raises(error, match="view") as info:
            call()
        assert part in str(info.value)
        assert isinstance(info.value, error)
    with pytest.raises(RuntimeError, match=r"argument 'dtype' = float32"):  # ViewError is PyTorch's RuntimeError
        t.transpose(0, 1).view(np.float32)
    # strides of other dims not multiples of the ratio: a row stride of 3 float32s cannot be read as float64s
    with pytest.raises(ViewError, match=r"stride of dimension 0 \(3\) must be a multiple of 2"):
        dt.from_numpy(np.zeros((2, 3), np.float32))[:, :2].view(dt.float64)
    assert_unchanged(snap)


def test_view_dtype_on_meta() -> None:
    m = dt.empty(2, 6, device="meta", dtype=dt.float32)
    assert m.view(dt.float64).shape == (2, 3) and m.view(dt.float64).dtype == dt.float64
    assert m.view(dt.int8).shape == (2, 24) and m.view(dt.int32).shape == (2, 6)
    v = m.view(dt.complex64)
    assert v.device == dt.Device("meta") and v.dtype == dt.complex64
    with pytest.raises(ViewError, match="multiple of 4"):
        m.view(dt.complex128)
    with pytest.raises(ViewError, match="0-d"):
        dt.empty((), device="meta").view(dt.int8)


@pytest.mark.usefixtures("fake_cupy")
def test_view_dtype_on_cuda_stand_in() -> None:
    a = np.arange(8.0).reshape(2, 4)
    g = dt.from_numpy(a).to("cuda:1")
    for target in (np.int64, np.float32, np.complex128, np.uint8):
        v = g.view(target)
        assert v.device == dt.Device("cuda:1") and v.dtype == np.dtype(target)
        same_bits(v, a.view(target))
    v = g.view(dt.int64)
    v.add_(0)
    assert g.version == 1
    with pytest.raises(ViewError, match="stride must be 1"):
        g.transpose(0, 1).view(dt.float32)


def test_view_dtype_python_front_matches_compiled_lane() -> None:
    from devtensor import views

    op = views.all_view_ops()[[o.name for o in views.all_view_ops()].index("view")]
    python_front = views._front(op, False)
    python_method = views._front(op, True)
    a = np.arange(6.0).reshape(2, 3)
    t = dt.from_numpy(a)
    for spelling in (float, np.int64, "float32", dt.int16):
        for result in (python_front(t, spelling), python_method(t, spelling), t.view(spelling)):
            same_bits(result, a.view(np.dtype(spelling)))
    with pytest.raises(ViewError, match="stride must be 1"):
        python_method(t.transpose(0, 1), np.float32)


def test_view_dtype_in_a_static_plan() -> None:
    def step(x: dt.Tensor, y: dt.Tensor) -> tuple[dt.Tensor, dt.Tensor]:
        x.view(dt.int64).add_(1)  # a write through the reinterpreting view reaches x
        return x.view(dt.float32) * 2, y[1:].view(dt.int32)

    plan = dt.plan(step, dt.arange(4.0), dt.arange(6.0))
    for shift in range(3):
        xs, ys = np.arange(4.0) + shift, np.arange(6.0) + shift
        a, b = plan(dt.from_numpy(xs.copy()), dt.from_numpy(ys.copy()))
        np.testing.assert_array_equal(a.numpy(), (xs.view(np.int64) + 1).view(np.float32) * 2)
        np.testing.assert_array_equal(b.numpy(), ys[1:].view(np.int32))
