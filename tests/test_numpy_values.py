"""NumPy scalars and arrays as op arguments (devtensor.numpy_values): NEP 50 dtypes generated from NumPy itself,
values against NumPy, zero-copy wrapping and its overlap checks, Python values where a value takes no part in
promotion, the CUDA device rule through the CuPy stand-in."""

# The static signatures name tensors and Python numbers; NumPy values are accepted at run time (this file).
# mypy: disable-error-code="arg-type,operator,list-item,type-var"

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from helpers import SUPPORTED_DTYPES

import devtensor as dt
from devtensor.errors import (
    ArgumentTypeError,
    DeviceMismatchError,
    MemoryOverlapError,
    ScalarOverflowError,
    ShapeError,
)

NUMPY_SCALAR_TYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
NUMPY_SCALAR_TYPES += [np.float16, np.float32, np.float64, np.complex64, np.complex128]
OPS = [("add", np.add), ("mul", np.multiply), ("maximum", np.maximum), ("lt", np.less), ("div", np.true_divide)]


def _array(dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    return np.array([1, 0, 1], dtype=dtype)


def _numpy_or_error(fn: Any, *args: Any) -> Any:
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    except TypeError:
        return TypeError


def _same(result: Any, expected: Any) -> None:
    assert isinstance(result, dt.Tensor)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result.numpy(), expected)


@pytest.mark.parametrize(("name", "ufunc"), OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_numpy_scalars_are_strongly_typed_as_numpy_types_them(name: str, ufunc: np.ufunc, dtype: Any) -> None:
    """NEP 50: the result dtype of tensor op NumPy scalar (either side) is NumPy's for its array and that scalar."""
    fn = getattr(dt, name)
    a = _array(dtype)
    t = dt.tensor(a)
    for stype in NUMPY_SCALAR_TYPES:
        s = stype(1)
        for args, np_args in (((t, s), (a, s)), ((s, t), (s, a))):
            expected = _numpy_or_error(ufunc, *np_args)
            if expected is TypeError:
                with pytest.raises(TypeError), np.errstate(all="ignore"):
                    fn(*args)
                continue
            with np.errstate(all="ignore"):
                _same(fn(*args), expected)


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_numpy_arrays_are_operands_with_numpys_dtype(dtype: Any) -> None:
    a = _array(dtype)
    t = dt.tensor(a)
    for other in SUPPORTED_DTYPES:
        b = _array(other)
        expected = _numpy_or_error(np.add, a, b)
        if expected is TypeError:
            with pytest.raises(TypeError):
                dt.add(t, b)
            continue
        _same(dt.add(t, b), expected)
        _same(dt.add(b, t), _numpy_or_error(np.add, b, a))


def test_the_examples_of_the_issue() -> None:
    t = dt.tensor([1.0, 2.0], dtype="float32")
    assert (t * np.float32(2)).dtype == np.float32
    assert (t * np.float64(2)).dtype == np.float64  # np.float64 is a float, but not a weak Python number
    assert (dt.tensor([1, 2], dtype="int8") + np.int64(1)).dtype == np.int64
    assert (dt.tensor([1, 2], dtype="int8") + 1).dtype == np.int8  # a Python int stays weak
    assert dt.full((2,), np.float32(1)).dtype == np.float32  # as np.full infers it
    t[0] = np.float32(7)
    assert t.tolist() == [7.0, 2.0]
    mean = np.array([1.0, 3.0]).mean()
    assert (t * mean).tolist() == [14.0, 4.0]


def test_values_taking_no_part_in_promotion_become_python_values_that_must_fit() -> None:
    t = dt.tensor([1, 2], dtype="int8")
    assert dt.add(t, t, alpha=np.int64(2)).dtype == np.int8
    assert dt.add(t, t, alpha=np.int64(2)).tolist() == [3, 6]
    assert dt.full((2,), np.int64(3), dtype="int8").tolist() == [3, 3]
    assert dt.full_like(t, np.float64(2.5), dtype="float32").tolist() == [2.5, 2.5]
    v = t.version
    t[1] = np.int32(5)
    assert t.tolist() == [1, 5] and t.version == v + 1
    with pytest.raises(ScalarOverflowError, match="300"):
        t[0] = np.int64(300)
    with pytest.raises(ScalarOverflowError):
        dt.full((2,), np.int64(300), dtype="int8")
    with pytest.raises(ArgumentTypeError, match="fill_value"):
        dt.full((2,), np.str_("a"))
    assert t.tolist() == [1, 5] and t.version == v + 1


def test_numpy_numbers_for_int_and_float_arguments() -> None:
    m = dt.tensor([[1.0, 2.0], [3.0, 5.0]])
    assert dt.std(m, correction=np.int64(0)).item() == pytest.approx(np.std(m.numpy()))
    assert dt.sum(m, dim=np.int64(1)).tolist() == [3.0, 8.0]
    assert dt.arange(np.int64(3)).dtype == np.int64


def test_array_operands_are_zero_copy_views_and_overlap_is_checked() -> None:
    t = dt.tensor([1.0, 2.0, 3.0])
    with pytest.raises(MemoryOverlapError, match="partial overlap"):
        dt.add(t, t.numpy()[::-1], out=t)
    assert t.tolist() == [1.0, 2.0, 3.0] and t.version == 0
    # exactly the same elements: an elementwise op writes over its input
    dt.add(t, t.numpy(), out=t)
    assert t.tolist() == [2.0, 4.0, 6.0] and t.version == 1
    # out a NumPy array: written in place (the caller's memory), never resized
    arr = np.zeros(3)
    r = dt.add(t, 1, out=arr)
    assert arr.tolist() == [3.0, 5.0, 7.0] and r.numpy().base is not None
    with pytest.raises(ShapeError, match="does not own"):
        dt.add(t, 1, out=np.zeros(2))


def test_arrays_in_tensor_lists_and_inplace_self() -> None:
    t = dt.tensor([1.0, 2.0])
    assert dt.cat([t, np.array([3.0])]).tolist() == [1.0, 2.0, 3.0]
    arr = np.array([1.0, 2.0])
    dt.add_(arr, t)
    assert arr.tolist() == [2.0, 4.0]
    with pytest.raises(ArgumentTypeError, match=r"'tensors\[1\]'"):
        dt.cat([t, "x"])
    with pytest.raises(ArgumentTypeError, match="dtype"):
        dt.add(t, np.array(["a", "b"]))


def test_unsupported_numpy_scalars_name_op_and_argument() -> None:
    t = dt.tensor([1.0])
    with pytest.raises(ArgumentTypeError, match=r"add.*'other'.*str_"):
        dt.add(t, np.str_("x"))
    with pytest.raises(ArgumentTypeError, match=r"add.*'alpha'"):
        dt.add(t, t, alpha=np.str_("x"))


@pytest.mark.parametrize(("a", "b"), list(itertools.product([np.float32(2), np.int16(3), np.bool_(True)], repeat=2)))
def test_numpy_scalars_alone_give_a_cpu_tensor(a: Any, b: Any) -> None:
    expected = np.add(a, b)
    result = dt.add(a, b)
    assert result.device == dt.Device("cpu") and result.dtype == expected.dtype and result.item() == expected


@pytest.mark.usefixtures("fake_cupy")
def test_cuda_numpy_scalars_are_0d_device_tensors_and_arrays_are_refused() -> None:
    t = dt.tensor([1.0, 2.0], dtype="float32", device="cuda:1")
    r = t * np.float64(2)
    assert r.device == dt.Device("cuda", 1) and r.dtype == np.float64 and r.cpu().tolist() == [2.0, 4.0]
    assert (np.float32(3) - t).cpu().tolist() == [2.0, 1.0]
    with pytest.raises(DeviceMismatchError, match=r"add.*'other'.*NumPy array.*cpu.*cuda:1"):
        dt.add(t, np.array([1.0, 2.0]))
    with pytest.raises(DeviceMismatchError, match="cuda:1"):
        t[0] = np.array(1.0)
    t[0] = np.float32(5)
    assert t.cpu().tolist() == [5.0, 2.0]
    assert dt.cuda.add(t, np.float32(1)).cpu().tolist() == [6.0, 3.0]


def test_view_ops_of_a_numpy_array_view_its_memory() -> None:
    a = np.arange(6.0)
    r = dt.reshape(a, (2, 3))
    assert r.shape == (2, 3) and r.dtype == np.float64
    r[0, 0] = 9.0
    assert a[0] == 9.0  # zero-copy: the view views the caller's array
    assert dt.transpose(np.ones((2, 3)), 0, 1).shape == (3, 2)
    with pytest.raises(ArgumentTypeError, match=r"reshape.*'self'.*str"):
        dt.reshape("x", (1,))


def test_masked_arrays_and_matrices_are_refused_not_silently_dropped() -> None:
    t = dt.ones(2)
    with pytest.raises(ArgumentTypeError, match=r"add.*'other'.*MaskedArray.*mask"):
        t + np.ma.masked_array([1.0, 2.0], mask=[0, 1])
    with pytest.raises(ArgumentTypeError, match="matrix"):
        dt.add(t, np.matrix([[1.0, 2.0]]))


def test_non_native_byte_order_names_the_conversion() -> None:
    with pytest.raises(ArgumentTypeError, match=r"byte order.*astype\('float64'\)"):
        dt.tensor(np.ones(2, ">f8"))


def test_subclasses_of_python_numbers_are_the_number_they_are() -> None:
    # A tensor's size is an int (a SizeInt); as PyTorch and NumPy take int subclasses, every op taking a number
    # takes it: operands, fill values, alpha, written values.
    t = dt.arange(4.0)
    n = t.size
    assert type(n) is not int and isinstance(n, int)
    assert (t * n).tolist() == [0.0, 4.0, 8.0, 12.0] and (t * n).dtype == np.float64
    assert (n * t).tolist() == [0.0, 4.0, 8.0, 12.0]
    assert (t.sum() / n).item() == 1.5
    assert (dt.arange(4) + n).dtype == np.int64  # weak, as the int it is
    full = dt.full((2,), n)
    assert full.dtype == np.int64 and full.tolist() == [4, 4]
    assert dt.full_like(t, n).tolist() == [4.0] * 4
    assert dt.add(t, t, alpha=n).tolist() == [0.0, 5.0, 10.0, 15.0]
    assert dt.where(t > 1, t, n).tolist() == [4.0, 4.0, 2.0, 3.0]
    u = dt.zeros(2)
    u[0] = n
    assert u.tolist() == [4.0, 0.0]
    with pytest.raises(ArgumentTypeError, match=r"sum.*'self'.*SizeInt"):
        dt.sum(n)  # a number is not a tensor where an op takes only tensors
