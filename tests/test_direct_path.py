"""The functional fronts' direct path (devtensor.meta.DIRECT): the front calls the ufunc itself while the op's
built-in CPU kernel is the handler; overrides, other kernels and modes still take the handler path, and the
results are those of the kernel."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import devtensor as dt
from devtensor import DispatchKey, library
from devtensor.dtypes import DType, Scalar, result_type
from devtensor.meta import DIRECT
from devtensor.modes import DispatchMode
from devtensor.numpy_values import binary_call
from devtensor.typed import ConstOut, CPUTensor


def test_ufunc_ops_and_comparisons_offer_it() -> None:
    for name in ("add", "sub", "mul", "exp", "neg", "maximum", "lt", "gt", "eq", "ne", "le", "ge"):
        op = library.get_op(name)
        offer = getattr(op.meta, DIRECT, None)
        assert offer is not None and offer[0] is op.table.kernels[DispatchKey.CPU], name


_COMPARED: list[tuple[str, Callable[[int, int], bool]]] = [
    ("gt", lambda x, y: x > y),
    ("lt", lambda x, y: x < y),
    ("ge", lambda x, y: x >= y),
    ("le", lambda x, y: x <= y),
    ("eq", lambda x, y: x == y),
    ("ne", lambda x, y: x != y),
]


@pytest.mark.parametrize("dtype", [dt.int8, dt.uint8, dt.int32, dt.uint32, dt.int64, dt.uint64])
def test_comparisons_with_out_of_range_python_ints_are_exact_on_the_direct_path(dtype: DType) -> None:
    # NumPy 2 (the least NumPy supported) compares a Python int its dtype cannot hold exactly: the fronts call the
    # ufunc with it, functional, out= and inplace alike, with the values of exact integer comparisons.
    info = np.iinfo(dtype)
    a = np.array([info.min, 0, 1, info.max], dtype)
    for value in (1000, -1, -1000, 2**64, 2**70, -(2**70), 255, 256):
        for name, compare in _COMPARED:
            fn = getattr(dt, name)
            want = [compare(int(x), value) for x in a]
            mirrored = [compare(value, int(x)) for x in a]
            assert fn(dt.from_numpy(a), value).tolist() == want, (name, value)
            assert fn(dt.from_numpy(a), value).tolist() == want, (name, value)
            with pytest.raises(TypeError, match=name):  # (the number first: not PyTorch's schema; binary_call's)
                fn(value, dt.from_numpy(a))
            assert binary_call(name, value, dt.from_numpy(a)).tolist() == mirrored, (name, value)
            out = dt.empty(4, dtype=dt.bool)
            assert fn(dt.from_numpy(a), value, out=out) is out and out.tolist() == want and out.version == 1
            self = dt.from_numpy(a.copy())
            assert getattr(self, name + "_")(value) is self and self.tolist() == [int(w) for w in want]
    t8 = dt.from_numpy(np.array([-128, 0, 127], np.int8))
    assert (t8 > 1000).tolist() == [False] * 3 and (t8 < 1000).tolist() == [True] * 3
    assert (dt.from_numpy(np.array([0, 255], np.uint8)) == -1).tolist() == [False, False]
    assert (dt.from_numpy(np.array([0, 255], np.uint8)) != -1).tolist() == [True, True]
    with pytest.raises(OverflowError):  # (a bool tensor compares in int64, where the int must fit: the meta's)
        dt.gt(dt.tensor([True]), 2**70)
    calls: list[str] = []

    def gt_logged(self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, out: ConstOut[CPUTensor]) -> None:
        calls.append("gt")
        assert isinstance(self, CPUTensor)
        np.greater(self.array, other, out=out.array)

    with library.override("gt", "cpu", gt_logged):
        assert (t8 > 0).tolist() == [False, False, True]
    assert calls == ["gt"]


@pytest.mark.parametrize("dtype", [dt.float32, dt.int64, dt.bool])
def test_same_values_dtypes_and_layouts_as_numpy(dtype: DType) -> None:
    a = np.arange(12).reshape(3, 4).astype(dtype)
    b = np.arange(4).astype(dtype)
    ta, tb = dt.from_numpy(a), dt.from_numpy(b)
    for got, expected in [
        (dt.add(ta, tb), np.add(a, b)),
        (dt.add(ta, 3), np.add(a, 3)),
        (dt.maximum(dt.tensor(2, dtype=tb.dtype), tb), np.maximum(np.array(2, b.dtype), b)),
        (dt.mul(ta.transpose(0, 1), ta.transpose(0, 1)), np.multiply(a.T, a.T)),
        (
            dt.add(dt.from_numpy(np.array(2, dtype)), dt.from_numpy(np.array(3, dtype))),
            np.add(np.array(2, dtype), np.array(3, dtype)),
        ),
    ]:
        arr = got.numpy()
        assert arr.dtype == expected.dtype and arr.shape == expected.shape
        assert arr.tolist() == expected.tolist()
        assert arr.flags.c_contiguous  # (a fresh result is C-contiguous, as before)
    if dtype != dt.bool:  # (bool results take a bool alpha)
        assert dt.add(ta, tb, alpha=2).tolist() == np.add(a, 2 * b).tolist()


def test_an_override_still_wins() -> None:
    calls: list[str] = []

    def exp_logged(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        calls.append("exp")
        np.exp(self.array, out=out.array)

    x = dt.tensor([0.0, 1.0])
    with library.override("exp", "cpu", exp_logged):
        assert dt.exp(x).tolist() == np.exp([0.0, 1.0]).tolist()
    assert calls == ["exp"]
    dt.exp(x)
    assert calls == ["exp"]


def test_a_floating_point_condition_is_reported_as_before() -> None:
    x = dt.tensor([1.0, 0.0])
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        result = dt.log(x)
    assert result.tolist()[1] == -np.inf
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        dt.log(x)


def test_out_and_inplace_take_it_with_the_same_results() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(3, dtype=np.float32)
    ta, tb = dt.from_numpy(a.copy()), dt.from_numpy(b)
    out = dt.empty((2, 3), dtype=dt.float32)
    assert dt.add(ta, tb, out=out) is out and out.tolist() == np.add(a, b).tolist() and out.version == 1
    assert dt.exp(tb, out=out[0]).tolist() == np.exp(b).tolist() and out.version == 2
    assert dt.mul(2, tb, out=out[1]).tolist() == np.multiply(2, b).tolist()
    assert ta.add_(tb) is ta and ta.tolist() == np.add(a, b).tolist() and ta.version == 1
    assert ta.neg_().tolist() == np.negative(np.add(a, b)).tolist() and ta.version == 2
    assert ta.sub_(tb, alpha=2).tolist() == (np.negative(np.add(a, b)) - 2 * b).tolist()
    same = dt.from_numpy(b.copy())
    assert same.mul_(same).tolist() == (b * b).tolist()  # (self passed again)


def test_out_and_inplace_overrides_still_win() -> None:
    calls: list[str] = []

    def exp_logged(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        calls.append("exp")
        np.exp(self.array, out=out.array)

    x = dt.tensor([0.0, 1.0])
    out = dt.empty(2)
    with library.override("exp", "cpu", exp_logged):
        dt.exp(x, out=out)
        x.exp_()
    assert calls == ["exp", "exp"]
    assert x.tolist() == np.exp([0.0, 1.0]).tolist() and x.version == 1 and out.version == 1


def test_memory_made_read_only_later_is_read_only_error() -> None:
    a = np.zeros(3, np.float32)
    t = dt.from_numpy(a)
    t.add_(1.0)  # (writability checked and cached)
    out = dt.from_numpy(np.zeros(3, np.float32))
    dt.add(t, t, out=out)
    # (behind devtensor's back: the tensors' own array objects; the caller's do not reach them)
    t._array.flags.writeable = False
    out._array.flags.writeable = False
    with pytest.raises(dt.errors.ReadOnlyError):
        t.add_(1.0)
    with pytest.raises(dt.errors.ReadOnlyError):
        dt.add(out, 1.0, out=out)
    assert t.version == 1 and out.version == 1 and a.tolist() == [1.0, 1.0, 1.0]


def test_out_and_inplace_conditions_leave_the_result_written() -> None:
    x = dt.tensor([1.0, 0.0])
    out = dt.empty(2)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        dt.log(x, out=out)
    assert out.tolist()[1] == -np.inf and out.version == 1
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        dt.div(x, 0.0, out=out)
    assert out.tolist()[0] == np.inf and out.version == 2
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        x.log_()
    assert x.tolist()[1] == -np.inf and x.version == 1


def test_results_the_ufunc_allocates_are_fresh_c_contiguous_arrays() -> None:
    # The functional direct path lets the ufunc allocate, asked for C order where the result has 2 or more dims
    # (whatever the operands' layouts); alpha != 1 allocates so only for C-contiguous operands: either way a
    # fresh, writable, C-contiguous result.
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    tm = dt.from_numpy(m)
    fm = dt.from_numpy(np.asfortranarray(m))
    strided = dt.from_numpy(np.arange(10, dtype=np.float32))[::2]
    for got, expected in [
        (dt.exp(tm), np.exp(m)),
        (dt.exp(tm.transpose(0, 1)), np.exp(m.T)),
        (dt.neg(strided), -np.arange(0, 10, 2, dtype=np.float32)),
        (dt.mul(tm.transpose(0, 1), 2.5), m.T * np.float32(2.5)),
        (dt.add(strided, strided), np.arange(0, 10, 2, dtype=np.float32) * 2),
        (dt.add(fm, fm), m + m),
        (dt.add(fm, tm, alpha=2.0), m + 2 * m),
        (dt.sub(tm.transpose(0, 1), fm.transpose(0, 1)), m.T - m.T),
        (dt.gt(fm, 5.0), m > 5),
        (fm.transpose(0, 1) * fm.transpose(0, 1)[0], m.T * m.T[0]),
    ]:
        arr = got.numpy()
        assert arr.dtype == expected.dtype and arr.tolist() == expected.tolist()
        assert arr.flags.c_contiguous and arr.flags.writeable and got._array.flags.owndata
        assert got.dtype == arr.dtype and got.shape == arr.shape
        version = got._storage.version
        got.add_(True if got.dtype == dt.bool else 1)  # (its own storage: the inputs are untouched)
        assert got._storage.version == version + 1
    assert tm.numpy().tolist() == np.arange(12, dtype=np.float32).reshape(3, 4).tolist()


def test_matmul_and_mm_offer_it_with_numpys_values_and_layouts() -> None:
    # Their CPU kernels are one np.matmul call over the arrays with out=: the front makes it (no ufunc meta).
    for name in ("matmul", "mm"):
        op = library.get_op(name)
        offer = getattr(op.meta, DIRECT, None)
        assert offer is not None and offer[0] is op.table.kernels[DispatchKey.CPU] and offer[1] is np.matmul
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    ta, tb = dt.from_numpy(a), dt.from_numpy(b)
    v = rng.standard_normal(4)
    a3 = rng.standard_normal((5, 3, 2))
    for got, expected in [
        (dt.matmul(ta, tb), a @ b),
        (dt.mm(ta, tb), a @ b),
        (dt.matmul(ta, dt.from_numpy(v)), a @ v),
        (dt.matmul(dt.from_numpy(v), dt.from_numpy(v)), np.matmul(v, v)),  # (0-d: the allocating path)
        (dt.matmul(tb.transpose(0, 1), ta.transpose(0, 1)), b.T @ a.T),
        (dt.matmul(dt.ones(2, 1, 3, 4), dt.ones(5, 4, 2)), np.ones((2, 1, 3, 4)) @ np.ones((5, 4, 2))),
        (dt.matmul(dt.ones(2, 3, dtype=dt.int32), dt.ones(3, 2, dtype=dt.int64)), np.full((2, 2), 3)),
        # Transposed and strided operands: np.matmul allocates a C-contiguous result of up to 2 dims itself;
        # with batch dims (which follow the operands' layout in NumPy) the front allocates, as before.
        (dt.mm(ta.transpose(0, 1), dt.from_numpy(a)), a.T @ a),
        (dt.mm(dt.from_numpy(a[::2]), tb), a[::2] @ b),
        (dt.matmul(dt.from_numpy(v[::2]), dt.from_numpy(b[::2])), v[::2] @ b[::2]),
        (dt.matmul(dt.from_numpy(a3).permute(2, 1, 0), tb.transpose(0, 1)), a3.transpose(2, 1, 0) @ b.T),
    ]:
        arr = got.numpy()
        assert arr.dtype == expected.dtype and arr.shape == expected.shape
        assert arr.tobytes() == np.ascontiguousarray(expected).tobytes()
        assert isinstance(got._array, np.ndarray) and got._array.flags.owndata
        assert arr.ndim == 0 or arr.flags.c_contiguous
    out = dt.empty(3, 5, dtype=dt.float64)
    assert dt.matmul(ta, tb, out=out) is out and out.version == 1 and out.numpy().tobytes() == (a @ b).tobytes()
    square = dt.ones(3, 3)  # (an out that is an input: computed into a temporary, copied in)
    assert dt.mm(square, square, out=square).tolist() == [[3.0] * 3] * 3 and square.version == 1
    with pytest.raises(dt.errors.ShapeError):  # (bad input changes nothing)
        dt.mm(ta, ta, out=out)
    assert out.version == 1 and out.numpy().tobytes() == (a @ b).tobytes()


def test_matmul_overrides_modes_and_read_only_memory_still_see_the_call() -> None:
    calls: list[str] = []

    def mm_logged(self: CPUTensor, mat2: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        calls.append("mm")
        np.matmul(self.array, mat2.array, out=out.array)

    x = dt.ones(2, 2)
    out = dt.empty(2, 2)
    with library.override("mm", "cpu", mm_logged):
        assert dt.mm(x, x).tolist() == [[2.0, 2.0], [2.0, 2.0]]
        dt.mm(x, x, out=out)
    assert calls == ["mm", "mm"] and out.version == 1
    dt.mm(x, x)
    assert calls == ["mm", "mm"]
    out._array.flags.writeable = False  # (behind devtensor's back, after its writability was cached)
    with pytest.raises(dt.errors.ReadOnlyError):
        dt.matmul(x, x, out=out)
    assert out.version == 1


def test_cat_offers_it_and_keeps_its_rules() -> None:
    op = library.get_op("cat")
    offer = getattr(op.meta, DIRECT, None)
    assert offer is not None and offer[0] is op.table.kernels[DispatchKey.CPU]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(3, dtype=np.int64).reshape(1, 3)
    ta, tb = dt.from_numpy(a), dt.from_numpy(b)
    for got, expected in [
        (dt.cat([ta, tb]), np.concatenate([a, b])),
        (dt.cat((ta, ta), 1), np.concatenate([a, a], 1)),
        (dt.cat([ta, ta], dim=-1), np.concatenate([a, a], -1)),
        (dt.cat([ta, ta], cast(int, np.int64(1))), np.concatenate([a, a], 1)),  # (another index type: the kernel)
        (dt.cat([ta.transpose(0, 1), ta.transpose(0, 1)]), np.concatenate([a.T, a.T])),
    ]:
        arr = got.numpy()
        assert arr.dtype == expected.dtype and arr.tobytes() == expected.tobytes() and arr.flags.c_contiguous
    out = dt.empty(3, 3, dtype=dt.float64)
    assert dt.cat([ta, tb], out=out) is out and out.version == 1
    assert out.numpy().tobytes() == np.concatenate([a, b]).astype(np.float64).tobytes()
    with pytest.raises(dt.errors.ShapeError):  # (bad input changes nothing)
        dt.cat([ta, dt.ones(2)], out=out)
    assert out.version == 1
    # The list checks: the inline common case and the full check give the same errors.
    with pytest.raises(TypeError, match=r"tensors\[1\]"):
        dt.cat([ta, cast(dt.Tensor, "x")])
    with pytest.raises(TypeError):
        dt.cat([cast(dt.Tensor, "x"), ta])
    with pytest.raises(ValueError, match="non-empty"):
        dt.cat([])
    assert dt.cat([ta, cast(dt.Tensor, b)]).tolist() == np.concatenate([a, b]).tolist()  # (a NumPy item: converted)
    calls: list[str] = []

    def cat_logged(tensors: Sequence[CPUTensor], dim: int, *, out: ConstOut[CPUTensor]) -> None:
        calls.append("cat")
        np.concatenate([t.array for t in tensors], dim, out=out.array)

    with library.override("cat", "cpu", cat_logged):
        assert dt.cat([ta, ta]).tolist() == np.concatenate([a, a]).tolist()
    assert calls == ["cat"]


def test_alpha_takes_it_with_the_kernels_values_and_rules() -> None:
    # add/sub with alpha != 1: the fronts call the two NumPy steps themselves (meta.DIRECT's third item); values,
    # dtypes, versions and the floating-point rule are the kernel's (an override sees the call).
    a = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(1, 3, 12, dtype=np.float32).reshape(3, 4)
    want = np.subtract(a, np.multiply(b, 0.1, dtype=np.float32))
    ta, tb = dt.from_numpy(a.copy()), dt.from_numpy(b)
    assert dt.sub(ta, tb, alpha=0.1).numpy().tobytes() == want.tobytes()
    out = dt.empty((3, 4), dtype=dt.float32)
    assert dt.sub(ta, tb, alpha=0.1, out=out) is out and out.numpy().tobytes() == want.tobytes() and out.version == 1
    assert ta.sub_(tb, alpha=0.1) is ta and ta.numpy().tobytes() == want.tobytes() and ta.version == 1
    ints = dt.from_numpy(np.arange(4, dtype=np.int8))
    assert ints.add_(ints, alpha=3).tolist() == [0, 4, 8, 12] and ints.dtype == dt.int8
    assert dt.add(ints, 1.5, alpha=2).tolist() == [3.0, 7.0, 11.0, 15.0]  # (a Python product: weak)
    with pytest.raises(dt.errors.ArgumentTypeError, match="alpha"):  # (bad input changes nothing)
        ints.add_(ints, alpha=0.5)
    assert ints.tolist() == [0, 4, 8, 12] and ints.version == 1
    calls: list[str] = []

    def sub_logged(
        self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, alpha: Scalar, out: ConstOut[CPUTensor]
    ) -> None:
        calls.append("sub")
        assert isinstance(self, CPUTensor) and isinstance(other, CPUTensor)
        np.subtract(self.array, np.multiply(other.array, alpha), out=out.array)

    with library.override("sub", "cpu", sub_logged):
        ta.sub_(tb, alpha=0.5)
        dt.sub(ta, tb, alpha=0.5)
    assert calls == ["sub", "sub"]


def test_alpha_conditions_come_after_the_write_at_the_callers_line() -> None:
    big = np.array([3e38, 1.0], np.float32)
    t = dt.from_numpy(big.copy())
    with pytest.warns(RuntimeWarning, match="overflow encountered") as seen:
        t.sub_(dt.from_numpy(big), alpha=-2.0)
    assert [w.filename for w in seen] == [__file__] and t.tolist()[0] == np.inf and t.version == 1
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        t.sub_(dt.from_numpy(big), alpha=-2.0)
    assert t.tolist()[1] == 5.0 and t.version == 2  # (written, then raised)
    out = dt.empty(2, dtype=dt.float32)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        dt.add(dt.from_numpy(big), dt.from_numpy(big), alpha=2.0, out=out)
    assert out.tolist() == [np.inf, 3.0] and out.version == 1


def test_cat_lets_numpy_allocate_1d_results_of_the_metas_dtype() -> None:
    kinds = [dt.bool, dt.int8, dt.uint8, dt.int64, dt.uint64, dt.float16, dt.float32, dt.complex64]
    for x in kinds:
        for y in kinds:
            got = dt.cat([dt.ones(2, dtype=x), dt.zeros(3, dtype=y)])
            assert got.dtype is result_type(x, y) and got.numpy().dtype == got.dtype, (x, y)
            assert got._array.flags.c_contiguous and got._array.flags.owndata
    three = [dt.arange(2.0), dt.arange(3.0), dt.arange(1.0)]
    assert dt.cat(three).tolist() == [0.0, 1.0, 0.0, 1.0, 2.0, 0.0]


def _softmax_steps(x: Any, axis: int, log: bool) -> Any:
    """softmax's (log_softmax's) NumPy steps, as the kernel makes them (np.max and np.sum are the reduces)."""
    with np.errstate(all="ignore"):
        o = x - np.max(x, axis, keepdims=True)
        if log:
            return o - np.log(np.sum(np.exp(o), axis, keepdims=True))
        np.exp(o, out=o)
        return o / np.sum(o, axis, keepdims=True)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_and_log_softmax_offer_it_with_the_kernels_bytes_layouts_and_rules(log: bool) -> None:
    name = "log_softmax" if log else "softmax"
    op = library.get_op(name)
    offer = getattr(op.meta, DIRECT, None)
    assert offer is not None and offer[0] is op.table.kernels[DispatchKey.CPU]
    fn = dt.log_softmax if log else dt.softmax
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    x[1, 2] = np.inf  # (a slice with +inf: nan, quietly)
    tx = dt.from_numpy(x)
    for got, expected in [
        (fn(tx, 1), _softmax_steps(x, 1, log)),
        (fn(tx, 0), _softmax_steps(x, 0, log)),
        (fn(tx.transpose(0, 1), 1), _softmax_steps(x.T, 1, log)),  # (a transposed self: allocated C-contiguous)
        (fn(dt.from_numpy(x[:, ::2]), -1), _softmax_steps(x[:, ::2], 1, log)),
        (fn(dt.from_numpy(x.astype(np.float64)), 1), _softmax_steps(x.astype(np.float64), 1, log)),
    ]:
        arr = got.numpy()
        assert arr.dtype == expected.dtype and arr.flags.c_contiguous and got._array.flags.owndata
        assert arr.tobytes() == np.ascontiguousarray(expected).tobytes()
    half = fn(dt.from_numpy(x.astype(np.float16)), 1)  # (computed in float32, rounded)
    assert half.dtype == dt.float16
    assert (
        half.numpy().tobytes()
        == _softmax_steps(x.astype(np.float16).astype(np.float32), 1, log).astype(np.float16).tobytes()
    )
    ints = fn(dt.arange(6).reshape(2, 3), 1)
    assert (
        ints.dtype == dt.float64
        and ints.numpy().tobytes() == _softmax_steps(np.arange(6.0).reshape(2, 3), 1, log).tobytes()
    )
    assert fn(dt.tensor(2.0), 0).numpy().shape == () and fn(dt.empty(0, 3), 1).shape == (0, 3)
    # out: its own dtype (a cast), a wrong shape (resized), bad input (nothing changes), read-only memory.
    out = dt.empty(4, 5, dtype=dt.float64)
    assert fn(tx, 1, out=out) is out and out.version == 1
    assert out.numpy().tobytes() == _softmax_steps(x, 1, log).astype(np.float64).tobytes()
    with pytest.raises(IndexError):
        fn(tx, 2, out=out)
    with pytest.raises(dt.errors.CastingError):
        fn(tx, 1, out=dt.empty(4, 5, dtype=dt.int32))
    assert out.version == 1
    out._array.flags.writeable = False  # (behind devtensor's back, after its writability was cached)
    with pytest.raises(dt.errors.ReadOnlyError):
        fn(tx, 1, out=out)
    assert out.version == 1
    # A condition made an error: the result is written (out's version moves), then the error propagates.
    tiny = dt.from_numpy(np.array([[0.0, -200.0]], np.float32))
    target = dt.empty(1, 2, dtype=dt.float32)
    with np.errstate(under="raise"), pytest.raises(FloatingPointError):
        fn(tiny, 1, out=target)
    assert target.version == 1 and target.numpy().tobytes() == _softmax_steps(tiny.numpy(), 1, log).tobytes()
    with np.errstate(under="raise"), pytest.raises(FloatingPointError):
        fn(tiny, 1)
    # Overrides and modes still see the call.
    calls: list[str] = []

    def logged(self: CPUTensor, dim: int, dtype: object, *, plan: object, out: ConstOut[CPUTensor]) -> None:
        calls.append(name)
        out.array[...] = _softmax_steps(self.array, dim, log)

    with library.override(name, "cpu", logged):
        assert fn(tx, 1).numpy().tobytes() == _softmax_steps(x, 1, log).tobytes()
        fn(tx, 1, out=dt.empty(4, 5, dtype=dt.float32))
    assert calls == [name, name]
    seen: list[str] = []

    class Log(DispatchMode):
        def __dispatch__(
            self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            seen.append(op.name)
            return func(*args, **kwargs)

    with Log():
        assert fn(tx, 1).numpy().tobytes() == _softmax_steps(x, 1, log).tobytes()
    assert seen == [name]


def test_addmm_offers_it_with_the_kernels_bytes_layouts_and_rules() -> None:
    op = library.get_op("addmm")
    offer = getattr(op.meta, DIRECT, None)
    assert offer is not None and offer[0] is op.table.kernels[DispatchKey.CPU]
    rng = np.random.default_rng(2)
    s = rng.standard_normal(5).astype(np.float32)
    m1, m2 = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    ts, t1, t2 = dt.from_numpy(s), dt.from_numpy(m1), dt.from_numpy(m2)
    m1t, m2t = np.ascontiguousarray(m1.T), np.ascontiguousarray(m2.T)  # (transposed operands: their views)
    for got, expected in [
        (dt.addmm(ts, t1, t2), np.add(np.matmul(m1, m2), s)),
        (dt.addmm(ts, dt.from_numpy(m1t).T, dt.from_numpy(m2t).T), np.add(np.matmul(m1t.T, m2t.T), s)),
        (dt.addmm(ts, t1, t2, beta=2, alpha=0.5), np.add(np.multiply(np.matmul(m1, m2), 0.5), np.multiply(s, 2))),
        (
            dt.addmm(dt.from_numpy(s.astype(np.float64)), t1, t2),
            np.add(np.matmul(m1.astype(np.float64), m2.astype(np.float64)), s.astype(np.float64)),
        ),
        (dt.addmm(dt.from_numpy(np.arange(5)), dt.ones(3, 4, dtype=dt.int64), dt.ones(4, 5, dtype=dt.int64)), None),
    ]:
        arr = got.numpy()
        assert arr.flags.c_contiguous and got._array.flags.owndata and got.shape == (3, 5)
        if expected is not None:
            assert arr.dtype == expected.dtype and arr.tobytes() == expected.tobytes()
        else:
            assert arr.tolist() == [[4, 5, 6, 7, 8]] * 3
    out = dt.empty(3, 5, dtype=dt.float32)
    assert dt.addmm(ts, t1, t2, out=out) is out and out.version == 1
    assert out.numpy().tobytes() == np.add(np.matmul(m1, m2), s).tobytes()
    square = dt.from_numpy(np.ones((3, 3), np.float32))  # (out is self, and addmm_: computed before the write)
    assert dt.addmm(square, square, square, out=square) is square and square.tolist() == [[4.0] * 3] * 3
    assert square.addmm_(square, square) is square and square.tolist() == [[52.0] * 3] * 3 and square.version == 2
    with pytest.raises(dt.errors.ShapeError):  # (bad input changes nothing)
        dt.addmm(ts, t1, t1, out=out)
    assert out.version == 1
    # A condition made an error: reported after the write (out's version moves), then it propagates.
    big = dt.from_numpy(np.full((1, 1), 3e38, np.float32))
    target = dt.empty(1, 1, dtype=dt.float32)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        dt.addmm(big, big, dt.from_numpy(np.full((1, 1), 2.0, np.float32)), out=target)
    assert target.version == 1 and target.tolist() == [[np.inf]]
    calls: list[str] = []

    def addmm_logged(
        self: CPUTensor, mat1: CPUTensor, mat2: CPUTensor, *, beta: Scalar, alpha: Scalar, out: ConstOut[CPUTensor]
    ) -> None:
        calls.append("addmm")
        np.add(np.matmul(mat1.array, mat2.array), self.array, out=out.array)

    with library.override("addmm", "cpu", addmm_logged):
        assert dt.addmm(ts, t1, t2).numpy().tobytes() == np.add(np.matmul(m1, m2), s).tobytes()
        dt.addmm(ts, t1, t2, out=out)
    assert calls == ["addmm", "addmm"]


@pytest.mark.parametrize("dtype", [dt.int8, dt.uint8, dt.int64, dt.float32, dt.float64])
def test_a_python_int_is_range_checked_after_an_in_range_call_of_the_same_types(dtype: DType) -> None:
    # The fronts reuse the meta's entry for (dtype, int) inline when the int is within the dtype's window:
    # a later int outside it still gets the meta's ScalarOverflowError, whichever operand it is.
    t = dt.from_numpy(np.array([1, 2], dtype))
    big = 300 if dtype.kind in "iu" and dtype.itemsize == 1 else 10**400
    assert dt.add(t, 3).tolist() == dt.add(3, t).tolist() == np.add(np.array([1, 2], dtype), 3).tolist()
    with pytest.raises(dt.errors.ScalarOverflowError, match="other"):
        dt.add(t, big)
    with pytest.raises(dt.errors.ScalarOverflowError, match="self"):
        dt.add(big, t)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        for value in (int(info.min), int(info.max)):  # (the window's edges pass)
            assert (t * value).dtype == dtype and (value * t).dtype == dtype
        with pytest.raises(dt.errors.ScalarOverflowError):
            t * (int(info.max) + 1)


def test_a_python_number_first_takes_the_inline_entry_with_the_metas_values() -> None:
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = dt.from_numpy(m)
    for _ in range(2):  # (the second call hits the entry the first made)
        for got, expected in [(0.5 * t, 0.5 * m), (2 - t, 2 - m), (3 + t, 3 + m), (True * t, True * m)]:
            assert got.dtype == expected.dtype and got.numpy().tolist() == expected.tolist()
            assert got._array.flags.c_contiguous
    assert (2.0**0.5 / t[1]).tolist() == (np.float32(2.0**0.5) / m[1]).tolist()
    i8 = dt.from_numpy(np.array([1, 2], np.int8))
    assert (2 * i8).dtype == dt.int8 and (2.5 * i8).dtype == dt.float64


def test_zero_d_results_are_zero_d_tensors_over_fresh_arrays() -> None:
    # The direct path asks NumPy for an array (out=...) where a 0-d ufunc result would be a NumPy scalar.
    s = dt.from_numpy(np.array(3.0, np.float32))
    for got, expected in [
        (s * -0.5, np.float32(-1.5)),
        (-s, np.float32(-3.0)),
        (s > 2, np.True_),
        (2.0 - s, np.float32(-1.0)),
    ]:
        assert isinstance(got._array, np.ndarray) and got.shape == () and got.dtype == np.asarray(expected).dtype
        assert got.item() == expected and got._array.flags.writeable and got._array.flags.owndata
        got.add_(True if got.dtype == dt.bool else 1)
    assert s.item() == 3.0 and s.version == 0


def test_the_common_case_lane_keeps_promotion_overrides_and_modes() -> None:
    # A functional ufunc call of a tensor and a tensor of its shape, or a Python float or int, takes one pass
    # (fronts' lane); NumPy scalars, broadcasting, out=, overrides and modes still take the general path.
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = dt.from_numpy(m)
    assert (t * 2.0).dtype == dt.float32  # (primes the entry for float32 and a Python float)
    for other in (np.float64(2.0), np.float32(2.0)):
        got, expected = dt.mul(t, cast(Any, other)), np.multiply(m, other)
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
    assert dt.mul(t, t[0]).tolist() == (m * m[0]).tolist()
    calls: list[str] = []

    def mul_logged(self: CPUTensor | Scalar, other: CPUTensor | Scalar, *, out: ConstOut[CPUTensor]) -> None:
        calls.append("mul")
        assert isinstance(self, CPUTensor)
        np.multiply(self.array, other.array if isinstance(other, CPUTensor) else other, out=out.array)

    with library.override("mul", "cpu", mul_logged):
        assert (t * t).tolist() == (m * m).tolist() and (t * 3).tolist() == (m * 3).tolist()
    assert calls == ["mul", "mul"]

    class Seen(DispatchMode):
        def __dispatch__(
            self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            calls.append(op.name)
            return func(*args, **kwargs)

    with Seen():
        t * t
        dt.exp(t)
    assert calls[-2:] == ["mul", "exp"]


def test_alternating_dtype_pairs_keep_their_own_results() -> None:
    # The lane tries the meta's last two entries for two tensors (x * y beside x * mask): each call still gets
    # its own pair's result dtype and values.
    m = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    x, mask = dt.from_numpy(m), dt.from_numpy(m > 0)
    n = np.arange(6, dtype=np.int16).reshape(2, 3)
    i = dt.from_numpy(n)
    for _ in range(3):
        for got, expected in [(x * x, m * m), (x * mask, m * (m > 0)), (i * x, n * m)]:
            assert got.dtype == expected.dtype and got.numpy().tolist() == expected.tolist()


def test_the_out_lane_writes_outs_array_and_keeps_the_out_rules() -> None:
    # An out of the result's shape and dtype, checked writable before and sharing no memory with the operands,
    # takes the lane (one ufunc call into out's array); every other out takes the general path's rules.
    m = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    x, y = dt.from_numpy(m.copy()), dt.from_numpy(m[::-1].copy())
    out = dt.empty((2, 3), dtype=dt.float32)
    for k in range(1, 3):
        assert dt.add(x, y, out=out) is out and out.numpy().tolist() == (m + m[::-1]).tolist()
        assert dt.mul(x, 2.0, out=out).numpy().tolist() == (m * 2.0).tolist()
        assert dt.exp(x, out=out).numpy().tolist() == np.exp(m).tolist() and out.version == 3 * k
    wide = dt.empty((2, 3), dtype=dt.float64)  # (another dtype: the general path casts into it)
    assert dt.add(x, y, out=wide).numpy().tolist() == (m + m[::-1]).astype(np.float64).tolist()
    assert dt.add(x, y, out=x) is x and x.numpy().tolist() == (m + m[::-1]).tolist()  # (out is self)
    for pair in ((x[0], y[0]), (y[0], x[0])):  # (out partly over self, then over other: PyTorch's overlap rule)
        with pytest.raises(ValueError, match="overlap"):
            dt.add(*pair, out=x.view(6)[1:4])
    assert x.numpy().tolist() == (m + m[::-1]).tolist() and x.version == 1
    out._array.flags.writeable = False  # (behind devtensor's back, after its writability check)
    calls: list[Callable[[], object]] = [
        lambda: dt.add(y, y, out=out),
        lambda: dt.mul(y, 3.0, out=out),
        lambda: dt.exp(y, out=out),
    ]
    for call in calls:
        with pytest.raises(dt.errors.ReadOnlyError, match="out"):
            call()
    assert out.version == 6 and out.numpy().tolist() == np.exp(m).tolist()


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_and_minimum_with_out_raise_no_numpy_deprecation(name: str) -> None:
    """NumPy 2.4 deprecates a positional output for np.maximum and np.minimum: the lanes that pass a ufunc's out
    positionally (faster) pass theirs as a keyword, so out= and inplace calls warn of nothing, on every call (the
    compiled lanes take the second call on), and write NumPy's values."""
    a = dt.tensor(np.array([1.0, -2.0, np.nan, 4.0]))
    b = dt.tensor(np.array([0.5, 3.0, 1.0, np.nan]))
    ref = getattr(np, name)(a.numpy(), b.numpy())
    fn = getattr(dt, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(4):
            out = dt.empty(4, dtype=dt.float64)
            fn(a, b, out=out)
            assert np.array_equal(out.numpy(), ref, equal_nan=True)
            assert np.array_equal(fn(a, b).numpy(), ref, equal_nan=True)
            c = a.clone()
            inplace = getattr(c, f"{name}_", None)
            if inplace is not None:
                inplace(b)
                assert np.array_equal(c.numpy(), ref, equal_nan=True)


@given(
    shape=st.lists(st.sampled_from([1, 1, 2, 3]), min_size=0, max_size=4).map(tuple),
    dtype=st.sampled_from([np.complex128, np.complex64, np.float64, np.float32]),
    name=st.sampled_from(["mul", "add", "sub", "div"]),
    same=st.booleans(),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=150, deadline=None)
@example(shape=(1, 1), dtype=np.complex128, name="mul", same=False, seed=0)
@example(shape=(1, 1, 1), dtype=np.complex128, name="mul", same=True, seed=1)
@example(shape=(1, 1), dtype=np.complex64, name="mul", same=False, seed=2)
def test_functional_out_and_inplace_give_numpys_bits_for_any_shape(
    shape: tuple[int, ...], dtype: Any, name: str, same: bool, seed: int
) -> None:
    """The functional and out= results equal NumPy's own ``a * b`` bit for bit, the inplace one NumPy's ``a *= b``,
    for shapes of size-1 dims too: NumPy's ``order="C"`` takes another loop for all-size-1 shapes (a (1, 1)
    complex product rounded otherwise), so the lanes ask for C order only where a result could be laid out
    otherwise (two or more dims over 1)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype)
    b = a if same else rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape).astype(dtype)
        b = a if same else b + 1j * rng.standard_normal(shape).astype(dtype)
    a, b = np.array(a, dtype=dtype), np.array(b, dtype=dtype)  # (0-d: arrays, not NumPy scalars)
    b = a if same else b
    ufunc = {"mul": np.multiply, "add": np.add, "sub": np.subtract, "div": np.true_divide}[name]
    want = ufunc(a, b)
    want_inplace = a.copy()  # (NumPy's in-place loop rounds a one-element complex product otherwise than a * b)
    ufunc(want_inplace, want_inplace if same else b, out=want_inplace)
    x, y = dt.tensor(a), dt.tensor(b)
    for _ in range(2):  # (the compiled lanes take the second call on)
        got = getattr(dt, name)(x, y)
        out = dt.empty(shape, dtype=got.dtype)
        getattr(dt, name)(x, y, out=out)
        inplace = x.clone()
        getattr(inplace, f"{name}_")(inplace if same else y)
        for t, ref in ((got, want), (out, want), (inplace, want_inplace)):
            assert np.asarray(t.numpy()).tobytes() == np.asarray(ref).tobytes()
        assert got._array.flags.c_contiguous
