"""The Tensor API: attributes, NumPy and DLPack interchange, device moves, indexing views, ``__setitem__`` and
the Python protocols. NumPy is the reference for values and for basic-indexing semantics."""

from __future__ import annotations

import copy
import operator
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.errors import ArgumentTypeError, CastingError, NoDataError, ScalarOverflowError
from devtensor.tensor import Tensor
from devtensor.typed import as_cpu


def words(*keys: str) -> str:
    """A regex matching a message that contains every key word, in any order."""
    import re

    return "".join(f"(?=.*{re.escape(k)})" for k in keys)


def grid(rows: int = 3, cols: int = 4, dtype: Any = np.float64) -> tuple[np.ndarray[Any, Any], Tensor]:
    arr = np.arange(rows * cols, dtype=dtype).reshape(rows, cols)
    return arr, dt.from_numpy(arr)


# --- attributes ---------------------------------------------------------------------------------------------


def test_attributes_of_a_contiguous_tensor() -> None:
    _, t = grid(3, 4, np.float32)
    assert t.shape == (3, 4) and t.size() == (3, 4) and t.size(0) == 3 and t.size(-1) == 4
    assert t.dtype == np.float32 and t.dtype is dt.float32
    assert t.device == dt.Device("cpu") and t.device is dt.Device("cpu")
    assert t.ndim == 2 and t.dim() == 2
    assert t.numel() == 12 and t.element_size() == 4
    assert t.stride() == (4, 1) and t.strides == (16, 4)  # stride() in elements (PyTorch), strides in bytes (NumPy)
    assert t.version == 0
    assert t.is_contiguous()
    assert not t.is_readonly


def test_strides_and_contiguity_of_views() -> None:
    arr, t = grid(3, 4)
    assert t[:, ::2].stride() == (4, 2) and not t[:, ::2].is_contiguous()
    assert dt.from_numpy(arr.T).stride() == (1, 4) and not dt.from_numpy(arr.T).is_contiguous()
    assert t[1].stride() == (1,) and t[1].is_contiguous()
    assert t[None].shape == (1, 3, 4)
    assert t[..., 0].shape == (3,) and t[..., 0].stride() == (4,) and t[..., 0].stride(0) == 4
    for view, reference in ((t[:, ::2], arr[:, ::2]), (t.T, arr.T), (t[..., 0], arr[..., 0])):
        assert view.strides == reference.strides  # bytes, NumPy's meaning under NumPy's name
    assert t.stride(-2) == 4 and t.stride(1) == 1
    with pytest.raises(IndexError, match=words("stride", "out of range")):
        t.stride(2)
    with pytest.raises(IndexError, match=words("stride", "no dimensions")):
        dt.tensor(1.0).stride(0)
    bad_dim: Any = "0"
    with pytest.raises(TypeError, match=words("stride", "dim", "int")):
        t.stride(bad_dim)


def test_zero_d_and_zero_size_tensors() -> None:
    s = dt.tensor(2.5)
    assert s.shape == () and s.ndim == 0 and s.numel() == 1 and s.strides == () and s.stride() == ()
    with pytest.raises(IndexError, match=words("size", "no dimensions")):
        s.size(0)
    with pytest.raises(IndexError, match=words("size", "out of range")):
        dt.zeros(2, 3).size(2)
    bad_dim: Any = "0"
    with pytest.raises(TypeError, match=words("size", "dim", "int")):
        dt.zeros(2, 3).size(bad_dim)
    e = dt.empty(2, 0, 3)
    assert e.shape == (2, 0, 3) and e.numel() == 0 and len(e) == 2


def test_meta_tensor_attributes() -> None:
    m = dt.empty(2, 3, 4, dtype=dt.int16, device="meta")
    assert m.shape == (2, 3, 4) and m.dtype == np.int16 and m.device == dt.Device("meta")
    assert m.ndim == 3 and m.numel() == 24 and m.stride() == (12, 4, 1) and m.is_contiguous()
    assert m.strides == (24, 8, 2)  # bytes
    assert m.version == 0 and len(m) == 2
    assert dt.empty(2, 0, 3, device="meta").stride() == (3, 3, 1)  # as PyTorch's contiguous strides
    assert m[0].shape == (3, 4) and m[:, 1:].shape == (2, 2, 4)


def test_a_tensor_cannot_be_constructed_directly() -> None:
    with pytest.raises(TypeError, match="cannot be constructed directly"):
        Tensor()


# --- NumPy interchange ----------------------------------------------------------------------------------------


def test_numpy_and_array_protocol_share_memory_on_cpu() -> None:
    arr, t = grid()
    assert np.shares_memory(t.numpy(), arr)
    assert np.shares_memory(np.asarray(t), arr)
    t.numpy()[0, 0] = 42.0  # writes through numpy() bypass the version counter
    assert arr[0, 0] == 42.0 and t.version == 0
    copied = np.array(t)
    assert not np.shares_memory(copied, arr)
    np.testing.assert_array_equal(copied, arr)
    as_f32 = np.asarray(t, dtype=np.float32)
    assert as_f32.dtype == np.float32 and not np.shares_memory(as_f32, arr)
    with pytest.raises(ValueError, match="copy"):
        t.__array__(np.float32, copy=False)


def test_meta_tensors_have_no_data() -> None:
    m = dt.zeros(3, device="meta")
    with pytest.raises(NoDataError):
        np.asarray(m)
    with pytest.raises(NoDataError, match="no data"):
        m.numpy()
    with pytest.raises(NoDataError):
        m.tolist()
    with pytest.raises(NoDataError):
        m[0].item()
    with pytest.raises(BufferError, match="meta"):
        m.__dlpack__()
    with pytest.raises(BufferError, match="meta"):
        m.__dlpack_device__()
    with pytest.raises(NoDataError):
        m.to("cpu")


def test_dlpack_round_trip_with_numpy_is_zero_copy() -> None:
    arr, t = grid()
    assert t.__dlpack_device__() == (1, 0)
    back = np.from_dlpack(t)
    assert np.shares_memory(back, arr)
    np.testing.assert_array_equal(back, arr)
    src = np.linspace(0.0, 1.0, 5, dtype=np.float32)
    u = dt.from_dlpack(src)
    assert u.device == dt.Device("cpu") and u.dtype == np.float32 and u.shape == (5,)
    assert np.shares_memory(u.numpy(), src)
    w = dt.from_dlpack(t)
    assert np.shares_memory(w.numpy(), arr) and w.version == 0
    strided = dt.from_dlpack(arr[:, ::2])
    np.testing.assert_array_equal(strided.numpy(), arr[:, ::2])
    assert strided.stride() == (4, 2)
    not_dlpack: Any = [1, 2]
    with pytest.raises(ArgumentTypeError, match=words("from_dlpack", "DLPack")):
        dt.from_dlpack(not_dlpack)


# --- device and dtype moves --------------------------------------------------------------------------------------


def test_to_returns_self_when_nothing_changes() -> None:
    _, t = grid()
    assert t.to("cpu") is t and t.cpu() is t and t.to(dt.float64) is t and t.to() is t
    assert t.to(dt.Device("cpu"), "float64") is t


def test_to_a_dtype_makes_a_new_tensor_and_leaves_self_alone() -> None:
    arr, t = grid()
    t.add_(1)
    f = t.to(dt.float32)
    assert f is not t and f.dtype == np.float32 and f.version == 0 and f.device == t.device
    assert t.dtype == np.float64 and t.version == 1
    assert not np.shares_memory(f.numpy(), arr)
    np.testing.assert_array_equal(f.numpy(), arr.astype(np.float32))
    assert t.to("int32").dtype == np.int32
    assert t.to(dtype=np.int8).dtype == np.int8
    assert t.to("cpu", dt.complex64).dtype == np.complex64
    c = t.to("cpu", copy=True)
    assert c is not t and c.version == 0 and not np.shares_memory(c.numpy(), arr)
    c.add_(1)
    assert t.version == 1


def test_to_meta_keeps_shape_and_dtype_and_never_moves_self() -> None:
    _, t = grid(2, 3, np.int16)
    m = t.to("meta")
    assert m.device == dt.Device("meta") and m.shape == (2, 3) and m.dtype == np.int16 and m.version == 0
    assert t.device == dt.Device("cpu")
    assert isinstance(m, dt.MetaTensor) and isinstance(t, dt.CPUTensor)
    assert t.to("meta", dt.float32).dtype == np.float32


def test_to_rejects_bad_devices_and_dtypes() -> None:
    _, t = grid()
    snap = snapshot(t)
    with pytest.raises(ValueError, match=words("unknown device type", "tpu")):
        t.to("tpu")
    with pytest.raises(TypeError, match=words("to", "dtype")):
        t.to(dtype="float128")
    # After a dtype, the next positional argument is PyTorch's non_blocking.
    with pytest.raises(TypeError, match=words("to", "non_blocking", "float64")):
        t.to(dt.float32, dt.float64)
    with pytest.raises(TypeError, match=words("to", "non_blocking", "float64")):
        t.to("float32", "float64")
    with pytest.raises(TypeError, match=words("to", "device", "float32")):
        t.to(device="float32", dtype="float64")
    with pytest.raises(TypeError, match=words("to", "at most 3 positional")):
        t.to(dt.float32, False, False, False)
    with pytest.raises(TypeError, match=words("to", "multiple values", "dtype")):
        t.to(dt.float32, dtype=dt.float32)
    with pytest.raises(TypeError, match=words("to", "unexpected keyword", "memory")):
        t.to(memory="x")  # type: ignore[call-overload]
    assert_unchanged(snap)


def test_to_takes_pytorchs_positional_forms() -> None:
    _, t = grid()
    # to(dtype, non_blocking, copy), to(device, dtype, non_blocking, copy), to(other, non_blocking, copy)
    assert t.to(t.dtype, False, False) is t
    copied = t.to(t.dtype, True, True)
    assert copied is not t and copied.dtype == t.dtype and np.array_equal(copied.numpy(), t.numpy())
    assert t.to("cpu", dt.float32, False, True).dtype == dt.float32
    other = dt.zeros(1, dtype=dt.int16)
    assert t.to(other).dtype == dt.int16 and t.to(other, False, False).device == other.device
    assert t.to(device="cpu", dtype=dt.int8, non_blocking=True).dtype == dt.int8
    assert t.to("cpu", non_blocking=np.bool_(True)) is t  # type: ignore[call-overload]  # (a NumPy bool)


# --- __getitem__ ----------------------------------------------------------------------------------------------


def test_basic_indexing_gives_views_sharing_data_and_version() -> None:
    arr, t = grid()
    row = t[1]
    assert row.shape == (4,) and np.shares_memory(row.numpy(), arr)
    elem = t[2, 3]
    assert elem.shape == () and elem.item() == 11.0 and np.shares_memory(elem.numpy(), arr)
    sub = t[::2, 1:3]
    sub[...] = -1.0
    assert t.version == 1 and row.version == 1 and sub.version == 1
    np.testing.assert_array_equal(arr[::2, 1:3], -1.0)
    assert t[-1, -1].item() == 11.0


@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
    data=st.data(),
)
def test_basic_indices_match_numpy_and_are_views(shape: tuple[int, ...], data: st.DataObject) -> None:
    arr = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    index = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    t = dt.from_numpy(arr)
    view = t[index]
    expected = arr[index]
    assert view.shape == np.shape(expected)
    np.testing.assert_array_equal(view.numpy(), expected)
    if view.numel() > 0:
        assert np.shares_memory(view.numpy(), arr)
    view[...] = 7
    assert t.version == 1 == view.version
    reference = np.arange(arr.size, dtype=np.int32).reshape(shape)
    reference[index] = 7
    np.testing.assert_array_equal(arr, reference)


def test_tensor_indexing_copies() -> None:
    arr, t = grid()
    picked = t[dt.tensor([2, 0])]
    np.testing.assert_array_equal(picked.numpy(), arr[[2, 0]])
    assert not np.shares_memory(picked.numpy(), arr) and picked.version == 0
    picked.add_(100)
    np.testing.assert_array_equal(t.numpy(), np.arange(12.0).reshape(3, 4))
    assert t.version == 0
    mask = dt.tensor([True, False, True])
    np.testing.assert_array_equal(t[mask].numpy(), arr[[0, 2]])
    np.testing.assert_array_equal(t[1, dt.tensor([3, 1])].numpy(), [7.0, 5.0])
    flagged = t[True]  # a bool scalar index adds a dimension, as NumPy's, and copies
    assert flagged.shape == (1, 3, 4) and not np.shares_memory(flagged.numpy(), arr)


def test_list_indices_are_advanced_indices_as_numpy() -> None:
    arr, t = grid()
    for index in ([0, 1], (slice(None), [0, 1, 1]), [[0], [2]], [True, False, True], (1, [3, -1]), []):
        picked = t[index]
        np.testing.assert_array_equal(picked.numpy(), arr[index])
        assert picked.shape == arr[index].shape and not np.shares_memory(picked.numpy(), arr)
    reference = arr.copy()
    t[[0, 2]] = 5.0
    t[:, [1]] = dt.tensor([[9.0], [8.0], [7.0]])
    reference[[0, 2]] = 5.0
    reference[:, [1]] = [[9.0], [8.0], [7.0]]
    np.testing.assert_array_equal(t.numpy(), reference)
    assert t.version == 2
    m = dt.empty(3, 4, device="meta")
    assert m[[0, 1]].shape == (2, 4) and m[:, [0, 1, 1]].shape == (3, 3)


def test_bad_indices_raise() -> None:
    _, t = grid()
    with pytest.raises(IndexError, match=words("__getitem__", "out of bounds")):
        t[3]
    with pytest.raises(IndexError, match="__getitem__"):
        t[0, 0, 0]
    bad: Any = [0.5, 1]
    with pytest.raises(ArgumentTypeError, match=words("__getitem__", "list", "ints or bools")):
        t[bad]
    with pytest.raises(ArgumentTypeError, match=words("__setitem__", "list")):
        t[[slice(None), 0]] = 1.0
    with pytest.raises(TypeError, match=words("__getitem__", "float")):
        t[1.5]
    with pytest.raises(ArgumentTypeError, match=words("__getitem__", "integer or bool")):
        t[dt.tensor([0.0])]
    with pytest.raises(dt.DeviceMismatchError, match=words("__getitem__", "meta", "cpu")):
        t[dt.tensor([0], device="meta")]


def test_meta_tensor_indices() -> None:
    m = dt.empty(5, 3, device="meta")
    assert m[dt.tensor([0, 2, 4, 4], device="meta")].shape == (4, 3)
    assert m[:, dt.empty(2, 2, dtype=dt.int64, device="meta")].shape == (5, 2, 2)
    with pytest.raises(NoDataError, match=words("__getitem__", "meta", "data-dependent")):
        m[dt.empty(5, dtype=dt.bool, device="meta")]


# --- __setitem__ ----------------------------------------------------------------------------------------------


def test_setitem_scalar_tensor_and_broadcasting() -> None:
    arr, t = grid()
    t[0] = 5.0
    t[1, 1:3] = dt.tensor([8.0, 9.0])
    t[2] = dt.tensor([[1.0, 2.0, 3.0, 4.0]])  # leading length-1 dimensions are dropped, as NumPy does
    t[:, 3] = dt.tensor(-1.0)
    expected = np.arange(12.0).reshape(3, 4)
    expected[0] = 5.0
    expected[1, 1:3] = [8.0, 9.0]
    expected[2] = [1.0, 2.0, 3.0, 4.0]
    expected[:, 3] = -1.0
    np.testing.assert_array_equal(arr, expected)
    assert t.version == 4
    t[dt.tensor([True, False, True])] = 0.0
    t[dt.tensor([1]), 0] = 7.0
    assert arr[0].sum() == 0.0 and arr[1, 0] == 7.0 and t.version == 6


def test_setitem_casts_as_numpy_assignment() -> None:
    i = dt.zeros(3, dtype=dt.int32)
    i[0] = 2.9
    i[1:] = dt.tensor([1.5, -1.5])
    assert i.tolist() == [2, 1, -1] and i.version == 2
    b = dt.zeros(2, dtype=dt.bool)
    b[0] = 3
    assert b.tolist() == [True, False]


def test_rejected_setitem_changes_nothing() -> None:
    _, t = grid()
    i8 = dt.zeros(3, dtype=dt.int8)
    snap = snapshot(t, i8)
    with pytest.raises(dt.ShapeError, match=words("__setitem__", "(3,)", "(4,)", "broadcast")):
        t[0] = dt.tensor([1.0, 2.0, 3.0])
    with pytest.raises(dt.ShapeError):
        t[:, 0] = dt.ones(2, 3)
    with pytest.raises(ScalarOverflowError, match=words("__setitem__", "1000", "int8")):
        i8[0] = 1000
    with pytest.raises(OverflowError):
        i8[...] = -129
    with pytest.raises(CastingError, match=words("__setitem__", "complex", "float64")):
        t[0, 0] = 1j
    with pytest.raises(ValueError, match=words("__setitem__", "NaN")):
        i8[1] = float("nan")
    with pytest.raises(OverflowError, match="__setitem__"):
        i8[1] = float("inf")
    with pytest.raises(dt.DeviceMismatchError, match=words("__setitem__", "meta", "cpu")):
        t[0] = dt.zeros(4, device="meta")
    bad: Any = [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ArgumentTypeError, match=words("__setitem__", "value", "list")):
        t[0] = bad
    with pytest.raises(IndexError, match="__setitem__"):
        t[5] = 1.0
    assert_unchanged(snap)


def test_setitem_on_meta_checks_and_counts_without_data() -> None:
    m = dt.zeros(3, 4, dtype=dt.int8, device="meta")
    m[0] = 1
    m[1:] = dt.ones(4, dtype=dt.int8, device="meta")
    assert m.version == 2
    snap = snapshot(m)
    with pytest.raises(dt.ShapeError):
        m[0] = dt.ones(3, device="meta")
    with pytest.raises(ScalarOverflowError):
        m[0] = 300
    assert_unchanged(snap)


def test_setitem_from_an_overlapping_view_reads_before_writing() -> None:
    arr = np.arange(6.0)
    t = dt.from_numpy(arr)
    t[1:] = t[:-1]
    np.testing.assert_array_equal(arr, [0, 0, 1, 2, 3, 4])


# --- Python protocols -------------------------------------------------------------------------------------------


def test_bool_item_tolist_len_and_iteration() -> None:
    assert bool(dt.tensor([1])) is True and bool(dt.tensor(0.0)) is False
    with pytest.raises(ValueError, match="ambiguous"):
        bool(dt.tensor([1, 2]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(dt.empty(0))
    one = dt.tensor([[3]], dtype=dt.int16)
    assert one.item() == 3 and type(one.item()) is int
    assert type(dt.tensor(1.5, dtype=dt.float32).item()) is float
    with pytest.raises(ValueError, match=words("item", "2 elements")):
        dt.tensor([1, 2]).item()
    assert dt.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert dt.tensor(2.0).tolist() == 2.0
    t = dt.tensor([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    with pytest.raises(TypeError, match="0-d"):
        len(dt.tensor(1))
    rows = list(t)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    rows[1][0] = 30
    assert t.tolist()[1][0] == 30 and t.version == 1
    with pytest.raises(TypeError, match="0-d"):
        iter(dt.tensor(1))


def test_number_conversions() -> None:
    assert float(dt.tensor([2.5])) == 2.5 and int(dt.tensor(7)) == 7 and complex(dt.tensor(1j)) == 1j
    assert operator.index(dt.tensor(3)) == 3
    assert [10, 20, 30][dt.tensor(1)] == 20
    with pytest.raises(TypeError, match="index"):
        operator.index(dt.tensor(1.0))
    # float() reads a CPU tensor's element inline; other cases keep item()'s errors.
    assert float(dt.tensor(1.5, dtype=dt.float32)) == 1.5 and type(float(dt.tensor(True))) is float
    with pytest.raises(ValueError, match="2 elements"):
        float(dt.tensor([1.0, 2.0]))
    with pytest.raises(dt.errors.NoDataError):
        float(dt.empty(1, device="meta"))
    with pytest.raises(TypeError):
        float(dt.tensor(1j))


def test_repr() -> None:
    text = repr(dt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dt.float32))
    assert text.startswith("tensor([[1., 2.],") and "dtype=float32" in text and "device" not in text
    assert repr(dt.tensor([1, 2])) == "tensor([1, 2], dtype=int64)"
    meta = repr(dt.empty(2, 3, dtype=dt.uint8, device="meta"))
    assert "meta" in meta and "(2, 3)" in meta and "uint8" in meta


def test_hash_is_identity_and_eq_is_elementwise() -> None:
    a, b = dt.tensor([1, 2]), dt.tensor([1, 2])
    assert hash(a) == object.__hash__(a)
    assert len({a, b}) == 2
    eq = a == b
    assert isinstance(eq, Tensor) and eq.tolist() == [True, True]
    none: Any = None
    assert (a == none) is False


def test_pickle_and_copy() -> None:
    arr, t = grid(2, 2, np.int16)
    back = pickle.loads(pickle.dumps(t[:, 1]))
    assert back.tolist() == [1, 3] and back.dtype == np.int16 and back.version == 0
    assert not np.shares_memory(back.numpy(), arr)
    meta = pickle.loads(pickle.dumps(dt.empty(2, 5, dtype=dt.float16, device="meta")))
    assert meta.device == dt.Device("meta") and meta.shape == (2, 5) and meta.dtype == np.float16
    dup = copy.deepcopy(t)
    assert dup.tolist() == t.tolist() and not np.shares_memory(dup.numpy(), arr)


# --- indexing with a 0-d integer tensor yields a tensor backed by a NumPy scalar ----------------------------


def test_zero_d_integer_tensor_index_gives_an_ndarray_backed_writable_tensor() -> None:
    b = dt.arange(3.0)
    c = b[dt.tensor(1)]  # NumPy's a[np.array(1)] is a numpy.float64 scalar, which devtensor wraps as is
    assert c.shape == ()
    assert isinstance(as_cpu(c).array, np.ndarray)  # the refinement's promise: CPUTensor.array is an ndarray
    assert isinstance(c.numpy(), np.ndarray)
    assert not c.is_readonly  # a fresh tensor (a copy, as any tensor index gives) is writable
    c.add_(1)
    assert c.item() == 2.0
    assert dt.from_dlpack(c).item() == 2.0  # once AttributeError from inside Tensor.__dlpack_device__


# --- the internal ndarray is handed out: its metadata can be changed behind the tensor's back ---------------


@pytest.mark.parametrize("export", [lambda t: t.numpy(), np.asarray], ids=["numpy()", "np.asarray"])
def test_exported_array_cannot_desynchronise_the_tensor(export: Callable[[Tensor], Any]) -> None:
    x = dt.ones(2, 2)
    exported = export(x)
    assert isinstance(exported, np.ndarray)
    exported.shape = (4,)  # legal on any ndarray; must only change the exported view
    assert x.numpy().shape == x.shape == (2, 2)
    assert (x + 1).tolist() == [[2.0, 2.0], [2.0, 2.0]]  # once ValueError: shapes (4,) and (2, 2)

    y = dt.ones(2)
    export(y).dtype = np.int64
    assert y.tolist() == [1.0, 1.0]  # once [4607182418800017408, ...]


@pytest.mark.parametrize("index", [2**63, (0, 2**63), (np.uint64(2**63), 0), 2**64 - 1, -(2**63) - 1, 2**70])
def test_integer_indexes_beyond_int64_are_index_errors_naming_the_index(index: Any) -> None:
    m = dt.zeros(3, 4)
    with pytest.raises(IndexError, match=r"__getitem__.*index"):
        m[index]
    with pytest.raises(IndexError, match=r"__setitem__.*index"):
        m[index] = 1.0
    assert m.version == 0 and not m.numpy().any()


@pytest.mark.parametrize(
    "index", [slice(1.5, None), slice(None, 2.0), slice(None, None, 0.5), (0, slice(np.float64(1.0), None))]
)
def test_a_float_slice_bound_is_a_devtensor_type_error(index: Any) -> None:
    for t in (dt.ones(4, 4), dt.empty((4, 4), device="meta")):
        before = snapshot(t)
        with pytest.raises(ArgumentTypeError, match=r"^__getitem__: slice indices must be integers"):
            t[index]
        with pytest.raises(ArgumentTypeError, match=r"^__setitem__: slice indices must be integers"):
            t[index] = 0.0
        assert_unchanged(before)


def test_type_converts_as_to_and_names_the_type_without_a_dtype() -> None:
    t = dt.tensor([1.5, -2.5])
    assert t.type() == "devtensor.float64" and dt.tensor([1], dtype=dt.int8).type() == "devtensor.int8"
    assert t.type("float64") is t  # (as Tensor.to: the tensor itself when it has the dtype)
    converted = t.type(dt.int32)
    assert converted.dtype == np.int32 and converted.tolist() == np.array([1.5, -2.5]).astype(np.int32).tolist()
    assert t.type(np.float32, non_blocking=True).dtype == np.float32
    with pytest.raises(TypeError, match=words("type", "dtype", "torch.FloatTensor")):
        t.type("torch.FloatTensor")
    with pytest.raises(TypeError, match=words("type", "non_blocking")):
        t.type(dt.float32, non_blocking=1)  # type: ignore[call-overload]
