"""Operators and Python protocols of Tensor that issue 10 adds: ``@`` in its three forms, ``~`` and unary ``+``, the
array API attributes ``.T``, ``.mT``, ``astype``, ``to_device``, ``format()``, ``round()``, weak references and the
refused ``memoryview``. (The bitwise operators' plain, reflected and inplace forms are property-tested beside the
arithmetic ones in tests/test_variants.py.)"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from tensor_state import assert_unchanged, snapshot

import devtensor as dt

# --- @ ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 2)), ((2, 2, 3), (3, 1))])
def test_matmul_operator_is_matmul(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a = np.arange(np.prod(sa), dtype=np.float64).reshape(sa)
    b = np.arange(np.prod(sb), dtype=np.float32).reshape(sb) - 2
    got = dt.tensor(a) @ dt.tensor(b)
    expected = a @ b
    assert isinstance(got, dt.Tensor)
    np.testing.assert_array_equal(got.numpy(), expected, strict=True)


def test_rmatmul_swaps_the_operands() -> None:
    a, b = dt.tensor([[1.0, 2.0]]), dt.tensor([[3.0], [4.0]])
    assert b.__rmatmul__(a).tolist() == [[11.0]]


def test_matmul_operator_refuses_numbers() -> None:
    a = dt.ones(2, 2)
    with pytest.raises(TypeError):
        a @ 2  # type: ignore[operator]
    with pytest.raises(TypeError):
        2 @ a


def test_imatmul_writes_self_in_place() -> None:
    a = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    keep = a
    view = a[0]
    a @= dt.tensor([[0.0, 1.0], [1.0, 0.0]])
    assert a is keep and a.tolist() == [[2.0, 1.0], [4.0, 3.0]] and a.version == 1
    assert view.tolist() == [2.0, 1.0]
    a @= a  # out is both inputs: computed into a temporary, then copied (NumPy's a @= a)
    assert a.tolist() == [[8.0, 5.0], [20.0, 13.0]]


def test_imatmul_never_resizes_and_changes_nothing() -> None:
    a, b = dt.ones(2, 3), dt.ones(3, 4)
    before = snapshot(a, b)
    with pytest.raises(dt.ShapeError, match="matmul"):
        a @= b
    assert_unchanged(before)
    i = dt.ones(2, 2, dtype=dt.int64)
    before = snapshot(i)
    with pytest.raises(dt.CastingError):
        i @= dt.ones(2, 2)
    assert_unchanged(before)
    # NumPy refuses the same two
    arr = np.ones((2, 3))
    with pytest.raises(ValueError):
        arr @= np.ones((3, 4))


# --- ~ and unary + ----------------------------------------------------------------------------------------------


def test_invert_and_pos_operators() -> None:
    i = np.array([0, 5, -3], np.int16)
    t = dt.tensor(i)
    np.testing.assert_array_equal((~t).numpy(), ~i, strict=True)
    np.testing.assert_array_equal((+t).numpy(), +i, strict=True)
    assert (+t) is not t
    with pytest.raises(TypeError, match="bitwise_not"):
        ~dt.tensor([1.5])


def test_reflected_bitwise_operators_take_python_numbers() -> None:
    t = dt.tensor([1, 2, 4], dtype=dt.uint8)
    assert (6 & t).tolist() == [0, 2, 4] and (6 & t).dtype == dt.uint8
    assert (1 | t).tolist() == [1, 3, 5]
    assert (7 ^ t).tolist() == [6, 5, 3]
    assert (1 << t).tolist() == [2, 4, 16]
    assert (64 >> t).tolist() == [32, 16, 4]
    assert (True & dt.tensor([True, False])).tolist() == [True, False]


def test_inplace_bitwise_operators_keep_identity_and_bump_once() -> None:
    t = dt.tensor([1, 2, 3], dtype=dt.int32)
    keep = t
    t &= 3
    t |= 8
    t ^= 1
    t <<= 2
    t >>= 1
    assert t is keep and t.version == 5 and t.dtype == dt.int32
    expected = np.array([1, 2, 3], np.int32)
    expected &= 3
    expected |= 8
    expected ^= 1
    expected <<= 2
    expected >>= 1
    np.testing.assert_array_equal(t.numpy(), expected, strict=True)
    f = dt.ones(2)
    before = snapshot(f)
    with pytest.raises(TypeError):
        f &= 1
    assert_unchanged(before)


# --- .T and .mT -------------------------------------------------------------------------------------------------


def test_T_of_a_matrix_is_a_view() -> None:
    t = dt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    tt = t.T
    np.testing.assert_array_equal(tt.numpy(), t.numpy().T, strict=True)
    tt[0, 1] = 9.0
    assert t.tolist()[1][0] == 9.0 and t.version == 1


@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4)])
def test_T_of_other_ranks_raises(shape: tuple[int, ...]) -> None:
    with pytest.raises(dt.ShapeError, match="2 dims") as info:
        _ = dt.ones(shape).T
    assert isinstance(info.value, ValueError)


def test_mT_swaps_the_last_two_dims() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(dt.tensor(a).mT.numpy(), np.swapaxes(a, -1, -2), strict=True)
    assert dt.ones(2, 5).mT.shape == (5, 2)
    assert dt.empty(2, 3, 4, device="meta").mT.shape == (2, 4, 3)
    for shape in [(), (3,)]:
        with pytest.raises(dt.ShapeError, match="mT"):
            _ = dt.ones(shape).mT


# --- astype -----------------------------------------------------------------------------------------------------


def test_astype_casts_as_numpy() -> None:
    a = np.array([1.7, -2.5, 300.0])
    t = dt.tensor(a)
    for dtype in ("int16", np.float32, dt.uint8, bool, "complex64"):
        with np.errstate(all="ignore"):
            expected = a.astype(dtype)
        np.testing.assert_array_equal(t.astype(dtype).numpy(), expected, strict=True)


def test_astype_copy() -> None:
    t = dt.tensor([1.0, 2.0])
    c = t.astype(dt.float64)
    assert c is not t and c.tolist() == t.tolist()
    c.add_(1)
    assert t.tolist() == [1.0, 2.0]
    assert t.astype(dt.float64, copy=False) is t
    assert t.astype(dt.float32, copy=False) is not t


def test_astype_refuses_bad_arguments() -> None:
    t = dt.tensor([1.0])
    with pytest.raises(dt.DevtensorError, match="astype") as info:
        t.astype("not a dtype")
    assert isinstance(info.value, TypeError)
    with pytest.raises(TypeError, match="copy"):
        t.astype(dt.float32, copy=1)  # type: ignore[arg-type]


def test_astype_keeps_the_device(fake_cupy: ModuleType) -> None:
    g = dt.tensor([1.5, 2.5], device="cuda:1")
    c = g.astype(dt.int32)
    assert c.device is g.device and c.dtype == dt.int32 and c.cpu().tolist() == [1, 2]
    m = dt.empty(3, device="meta").astype(dt.int8)
    assert m.device.type == "meta" and m.dtype == dt.int8


# --- format and round -------------------------------------------------------------------------------------------


def test_format_of_0d_tensors_formats_the_item() -> None:
    assert format(dt.tensor(1.5), ".2f") == "1.50"
    assert f"{dt.tensor(7):>4d}" == "   7"
    assert f"{dt.tensor(1 + 2j):.1f}" == "1.0+2.0j"
    assert f"{dt.tensor(True)}" == str(dt.tensor(True))


def test_format_of_other_tensors() -> None:
    t = dt.tensor([1.0, 2.0])
    assert format(t) == str(t) == repr(t) and f"{t}" == str(t)
    with pytest.raises(TypeError, match=r"'\.2f'"):
        format(t, ".2f")
    with pytest.raises(dt.NoDataError):
        format(dt.empty((), device="meta"), ".2f")


@pytest.mark.parametrize(("value", "spec"), [(1.5, "q"), (7, ".2s"), (True, "z"), (1 + 2j, "d")])
def test_a_format_spec_the_item_refuses_is_a_devtensor_error(value: Any, spec: str) -> None:
    with pytest.raises(ValueError, match=rf"^__format__: format string '{spec}' does not apply") as info:
        format(dt.tensor(value), spec)
    assert isinstance(info.value, dt.DevtensorError)
    with pytest.raises(TypeError, match=r"^__format__: unsupported format string") as other:
        format(dt.tensor([value]), spec)
    assert isinstance(other.value, dt.DevtensorError)


def test_len_and_iteration_of_a_zero_d_tensor_are_devtensor_type_errors() -> None:
    for t in (dt.tensor(1.0), dt.empty((), device="meta")):
        with pytest.raises(TypeError, match=r"^len\(\): a 0-d tensor") as info:
            len(t)
        assert isinstance(info.value, dt.DevtensorError)
        with pytest.raises(TypeError, match=r"^iter\(\): iteration over a 0-d tensor") as info:
            iter(t)
        assert isinstance(info.value, dt.DevtensorError)
        with pytest.raises(TypeError, match="0-d"):
            list(t)


# --- weak references, memoryview -------------------------------------------------------------------------------


def _all_kinds(fake_cupy: ModuleType) -> list[Any]:
    base = dt.tensor([[1.0, 2.0]])
    return [
        base,
        base[0],
        dt.from_numpy(np.ones(3)),
        dt.empty(2, device="meta"),
        dt.tensor([1.0], device="cuda"),
        dt.tensor([1.0], device="cuda")[0],
    ]


@pytest.mark.usefixtures("young_heap")
def test_weak_references_to_every_tensor_class(fake_cupy: ModuleType) -> None:
    tensors = _all_kinds(fake_cupy)
    refs = [weakref.ref(t) for t in tensors]
    assert all(r() is t for r, t in zip(refs, tensors, strict=True))
    assert {type(t).__name__ for t in tensors} == {"CPUTensor", "MetaTensor", "CUDATensor"}
    cache: weakref.WeakValueDictionary[int, dt.Tensor] = weakref.WeakValueDictionary()
    cache[0] = tensors[0]
    del tensors
    gc.collect()
    assert all(r() is None for r in refs) and len(cache) == 0


def test_memoryview_keeps_a_clear_type_error() -> None:
    with pytest.raises(TypeError, match="bytes-like"):
        memoryview(dt.tensor([1.0]))  # type: ignore[arg-type]


# --- to_device --------------------------------------------------------------------------------------------------


def test_to_device_on_cpu() -> None:
    t = dt.tensor([1.0, 2.0])
    assert t.to_device("cpu") is t and t.to_device(t.device) is t
    m = t.to_device("meta")
    assert m.device.type == "meta" and m.shape == t.shape
    for stream in (0, object()):
        with pytest.raises(dt.DevtensorError, match="stream") as info:
            t.to_device("cpu", stream=stream)
        assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError):
        t.to_device("nowhere")


class _Stream:
    """A stand-in for ``cupy.cuda.Stream``: a context manager that records its use."""

    def __init__(self) -> None:
        self.entered = 0

    def __enter__(self) -> _Stream:
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def test_to_device_between_cpu_and_cuda(fake_cupy: ModuleType) -> None:
    t = dt.tensor([1.0, 2.0])
    g = t.to_device("cuda:1")
    assert g.device == dt.Device("cuda", 1) and g.cpu().tolist() == [1.0, 2.0]
    stream = _Stream()
    g2 = t.to_device("cuda:0", stream=stream)
    assert stream.entered == 1 and g2.device == dt.Device("cuda", 0)
    assert g.to_device("cpu").tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="stream"):
        g.to_device("cpu", stream=stream)


# --- .real / .imag / in -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [dt.complex64, dt.complex128])
def test_real_and_imag_are_attributes_as_in_pytorch(dtype: Any) -> None:
    values = np.array([[1 + 2j, -3.5 - 0.25j]], dtype=dtype)
    t = dt.tensor(values)
    before = snapshot(t)
    np.testing.assert_array_equal((t.real + 1).numpy(), values.real + 1, strict=True)
    np.testing.assert_array_equal(t.imag.numpy(), values.imag, strict=True)
    assert_unchanged(before)
    # The functions stay (the Array API's real/imag, which give zeros for the imaginary part of a real tensor).
    np.testing.assert_array_equal(dt.imag(dt.ones(2)).numpy(), np.zeros(2), strict=True)


@pytest.mark.parametrize("dtype", [dt.float32, dt.int64, dt.bool])
def test_real_of_a_real_tensor_is_itself_and_imag_raises(dtype: Any) -> None:
    t = dt.ones(3, dtype=dtype)
    assert t.real is t
    with pytest.raises(dt.errors.ArgumentTypeError, match=r"imag: .*complex tensors only, got dtype"):
        _ = t.imag


def test_real_and_imag_on_cuda(fake_cupy: ModuleType) -> None:
    t = dt.tensor([1 + 2j, 3 - 4j], device="cuda")
    assert t.real.device.type == "cuda"
    np.testing.assert_array_equal(t.real.cpu().numpy(), np.array([1.0, 3.0]), strict=True)
    np.testing.assert_array_equal(t.imag.cpu().numpy(), np.array([2.0, -4.0]), strict=True)


def test_in_is_any_equal_as_numpy_and_pytorch() -> None:
    t = dt.tensor([[1.0, 2.0], [3.0, np.nan]])
    values = t.numpy()
    for element in (1.0, 3, 5.0, np.float32(2.0), np.nan, True):
        assert (element in t) == (element in values)
    assert dt.tensor(2.0) in t
    assert dt.tensor([9.0, 2.0]) in t  # broadcast against each row, as PyTorch's (t == element).any()
    assert 0 not in dt.empty(0)
    with pytest.raises(dt.errors.ArgumentTypeError, match=r"__contains__: .*got str 'a'"):
        _ = "a" in t


def test_divmod_errors_name_divmod_and_its_infinite_divisor_value() -> None:
    with pytest.raises(OverflowError, match=r"^divmod: Python integer 300 \(argument 'other'\)"):
        divmod(dt.tensor([1], dtype=dt.int8), 300)
    with pytest.raises(OverflowError, match=r"^divmod: "):
        divmod(300, dt.tensor([1], dtype=dt.int8))
    # README: the Array API standard's floor(1 / -inf), -0.0, where Python and NumPy give -1.0.
    q, r = divmod(dt.tensor([1.0]), -np.inf)
    assert q.item() == 0.0 and np.signbit(q.item()) and r.item() == -np.inf


# --- NumPy's .flags and swapaxes (issue 28: SciPy's array-API code reads them) --------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a,
        lambda a: a.T,
        lambda a: a[:, ::2],
        lambda a: a[:, :1],
        lambda a: a.swapaxes(0, 2),
        lambda a: a[:0],
        lambda a: a.reshape(24, 1, 1)[:, 0],
    ],
)
def test_flags_are_numpys(make: Any) -> None:
    array = make(np.arange(24.0).reshape(2, 3, 4))
    flags = dt.from_numpy(array).flags
    assert (flags.c_contiguous, flags.f_contiguous) == (array.flags.c_contiguous, array.flags.f_contiguous)
    assert flags.contiguous == array.flags.contiguous and flags.writeable
    assert flags["C_CONTIGUOUS"] == flags["C"] == array.flags["C_CONTIGUOUS"]
    assert flags["F"] == array.flags["F"] and flags["W"] and flags["writeable"]
    read_only = array.copy()
    read_only.flags.writeable = False
    assert not dt.from_numpy(read_only).flags.writeable
    with pytest.raises(AttributeError, match="flags: attribute 'c_contiguous' cannot be set"):
        flags.c_contiguous = False  # type: ignore[misc]
    with pytest.raises(KeyError, match="flags: unknown flag 'OWNDATA'"):
        flags["OWNDATA"]


# --- t.flags.writeable = False: the tensor read-only, as NumPy's (SciPy's ndimage sets it) ----------------------

WRITES: dict[str, Callable[[dt.Tensor], object]] = {
    "inplace (compiled lane)": lambda t: t.add_(1),
    "inplace unary": lambda t: t.neg_(),
    "out=": lambda t: dt.mul(t, 2, out=t),
    "setitem": lambda t: t.__setitem__(0, 5.0),
    "fill_": lambda t: t.fill_(0),
    "copy_": lambda t: t.copy_(dt.zeros(4)),
    "reduction out=": lambda t: dt.sum(dt.ones(3, 4), 0, out=t),
    "index_add_": lambda t: t.index_add_(0, dt.tensor([0]), dt.ones(1)),
    "operator +=": lambda t: t.__iadd__(1),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_setting_writeable_false_makes_the_tensor_read_only(write: str) -> None:
    array = np.arange(4.0)
    t = dt.from_numpy(array)
    WRITES[write](t)  # (a write first: the lanes cache the tensor as checked writable)
    before = array.copy()
    flags = t.flags
    flags.writeable = False
    assert not flags.writeable and not t.flags.writeable and t.is_readonly  # (live: the same object sees it)
    version = t.version
    with pytest.raises(dt.ReadOnlyError, match="read-only"):
        WRITES[write](t)
    np.testing.assert_array_equal(array, before)
    assert t.version == version
    assert not t[1:].flags.writeable and not t.view(2, 2).flags.writeable  # views made after it: read-only
    assert not np.asarray(t).flags.writeable
    flags.writeable = True  # the memory is writable: allowed again
    WRITES[write](t)
    assert t.flags["W"] and t.version > version


def test_writeable_false_is_per_tensor_and_true_needs_writable_memory() -> None:
    t = dt.arange(6.0)
    earlier = t[2:]  # a view made before: keeps its own flag, as NumPy's
    t.flags["WRITEABLE"] = False
    earlier.add_(1)
    assert t[2].item() == 3.0
    with pytest.raises(dt.ReadOnlyError):
        t.add_(1)
    t.flags.writeable = False  # (again: no change)
    array = np.arange(3.0)
    array.flags.writeable = False
    frozen = dt.from_numpy(array)
    with pytest.raises(ValueError, match="flags: cannot set 'writeable' to True: the tensor's memory is read-only"):
        frozen.flags.writeable = True
    assert frozen.is_readonly
    frozen.flags.writeable = False  # (what it is already)
    with pytest.raises(TypeError, match="flags: argument 'writeable'"):
        t.flags.writeable = "no"  # type: ignore[assignment]
    with pytest.raises(AttributeError, match="'f_contiguous' cannot be set"):
        t.flags["F"] = True


def test_writeable_on_meta_and_cuda_tensors(fake_cupy: Any) -> None:
    for device in ("meta", "cuda:0"):
        t = dt.zeros(3, device=device)
        t.flags.writeable = True  # (what it is)
        with pytest.raises(ValueError, match=f"cannot set 'writeable' to False on a {device.split(':')[0]}"):
            t.flags.writeable = False
        assert t.flags.writeable
        t.add_(1)


def test_swapaxes_is_a_transposed_view() -> None:
    t = dt.arange(24).reshape(2, 3, 4)
    s = t.swapaxes(0, -1)
    np.testing.assert_array_equal(s.numpy(), np.swapaxes(np.arange(24).reshape(2, 3, 4), 0, -1))
    s[0, 0, 0] = 100
    assert t[0, 0, 0].item() == 100  # (a view)
    with pytest.raises(IndexError, match="transpose"):
        t.swapaxes(0, 3)
