"""The out and inplace rules (README.md, "Semantics") and the promises around them, one allowed and one
rejected case each.

* functional: the output is allocated from the meta result on the inputs' device;
* inplace: the result shape must equal ``self.shape`` (self never broadcasts) and the result dtype must cast to
  ``self.dtype`` under NumPy's same_kind rule;
* out: same device; same_kind castability; a shape mismatch resizes (silently for an out without elements,
  with a UserWarning otherwise); an out that is also an input is never resized;
* mixed-device calls and missing kernels raise errors that name the op, the key and the devices;
* every rejected call leaves every tensor's data, shape, dtype, strides and version counter as they were;
* every mutation bumps the shared version counter by exactly one;
* partial overlap and internal overlap of an output are errors; exact aliasing is fine for elementwise ops;
  read-only outputs are rejected; a failing impl leaves a to-be-resized out unresized.
"""

from __future__ import annotations

import contextlib
import math
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from helpers import raises_devtensor_error_naming
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor import library
from devtensor.backends import Backend, register_backend
from devtensor.device import register_device_type
from devtensor.dispatcher import META_ONLY, DispatchKey, KernelTable, register_fallback, unregister_fallback
from devtensor.errors import ArgumentTypeError, ArgumentValueError, NoDataError, ScalarOverflowError, ShapeError
from devtensor.numpy_values import binary_call
from devtensor.structured import StructuredOp, structured_op
from devtensor.tensor import Tensor, TensorSpec
from devtensor.typed import ConstOut, CPUTensor

DTYPES = sorted(
    (np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)),
    key=str,
) + [np.dtype(t) for t in (np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)]
dtypes = st.sampled_from(DTYPES)
DEVICES = ["cpu", "meta"]


def make(shape: tuple[int, ...], dtype: Any = np.float64, device: str = "cpu") -> Tensor:
    """A tensor of small, exactly representable values (0, 1, 2, 0, …; bool alternates)."""
    n = math.prod(shape)
    values = np.arange(n) % (2 if np.dtype(dtype) == np.bool_ else 3)
    return dt.tensor(values.astype(dtype).reshape(shape), device=device)


class Silent:
    """Context manager: fail on any warning raised inside."""

    def __enter__(self) -> None:
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(None, None, None)


def words(*keys: str) -> str:
    """A regex matching a message that contains every key word, in any order."""
    return "".join(f"(?=.*{re.escape(k)})" for k in keys)


# --- the error hierarchy --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "base"),
    [
        (dt.DeviceMismatchError, ValueError),
        (dt.CastingError, TypeError),
        (dt.ShapeError, ValueError),
        (dt.MemoryOverlapError, ValueError),
        (dt.ReadOnlyError, ValueError),
        (dt.NoKernelError, NotImplementedError),
        (ArgumentTypeError, TypeError),
        (ScalarOverflowError, OverflowError),
        (NoDataError, RuntimeError),
    ],
)
def test_errors_subclass_the_standard_exception_and_devtensor_error(error: type[Exception], base: type) -> None:
    assert issubclass(error, base)
    assert issubclass(error, dt.DevtensorError)


# --- functional: allocate on the inputs' device ---------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_functional_allocates_a_new_output_on_the_inputs_device(device: str) -> None:
    a = make((2, 3), np.float32, device)
    b = make((3,), np.int16, device)
    snap = snapshot(a, b)
    c = dt.add(a, b)
    assert c.device == dt.Device(device)
    assert c.shape == (2, 3)
    assert c.dtype == np.result_type(np.float32, np.int16)
    assert c.version == 0
    assert_unchanged(snap)
    s = dt.mul(2.5, a[0])  # a Python number first: the device is the tensor's; it stays weak
    assert s.device == dt.Device(device) and s.dtype == np.float32 and s.shape == (3,)
    if device == "cpu":
        np.testing.assert_array_equal(c.numpy(), a.numpy() + b.numpy())
        assert not np.shares_memory(c.numpy(), a.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_functional_rejects_shapes_that_do_not_broadcast(device: str) -> None:
    a, b = make((2, 3), device=device), make((4,), device=device)
    snap = snapshot(a, b)
    with pytest.raises(dt.ShapeError, match=words("add", "[2, 3]", "[4]", "broadcast")):
        dt.add(a, b)
    assert_unchanged(snap)


# --- inplace: self never broadcasts, same_kind cast to self.dtype ------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_accepts_other_broadcasting_to_self(device: str) -> None:
    a, b = make((2, 3), device=device), make((3,), device=device)
    expected = a.numpy() + b.numpy() if device == "cpu" else None
    assert a.add_(b) is a
    assert a.shape == (2, 3) and a.version == 1 and b.version == 0
    if expected is not None:
        np.testing.assert_array_equal(a.numpy(), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_rejects_a_result_that_would_broadcast_self(device: str) -> None:
    a, b = make((3,), device=device), make((2, 3), device=device)
    snap = snapshot(a, b)
    with pytest.raises(dt.ShapeError, match=words("add_", "[3]", "[2, 3]", "broadcast")):
        a.add_(b)
    with pytest.raises(dt.ShapeError):
        a += b
    assert_unchanged(snap)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_accepts_a_same_kind_cast_and_rejects_float_into_int(device: str) -> None:
    f = make((3,), np.float32, device)
    f.add_(make((3,), np.int64, device))  # int64 + float32 -> float64, which casts to float32 (same_kind)
    assert f.dtype == np.float32 and f.version == 1
    i = make((3,), np.int64, device)
    x = make((3,), np.float32, device)
    snap = snapshot(i, x)
    with pytest.raises(dt.CastingError, match=words("add_", "float64", "int64", "can't be cast")):
        i.add_(x)
    with pytest.raises(dt.CastingError, match=words("div_", "float64", "int64", "self")):
        i.div_(2)  # true division of ints gives float64
    with pytest.raises(dt.CastingError):
        i += 0.5
    assert_unchanged(snap)


@given(a=dtypes, b=dtypes)
def test_inplace_dtype_rule_is_numpys_same_kind(a: np.dtype[Any], b: np.dtype[Any]) -> None:
    x, y = make((3,), a), make((3,), b)
    result = np.add(x.numpy(), y.numpy()).dtype
    snap = snapshot(x, y)
    if np.can_cast(result, a, casting="same_kind"):
        expected = np.add(x.numpy(), y.numpy()).astype(a)
        x.add_(y)
        assert x.dtype == a and x.version == 1
        np.testing.assert_array_equal(x.numpy(), expected)
        assert y.version == 0
    else:
        with pytest.raises(dt.CastingError, match=words("add_", result.name, a.name)):
            x.add_(y)
        assert_unchanged(snap)


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3))
def test_inplace_shape_rule_over_broadcastable_shapes(shapes: hnp.BroadcastableShapes) -> None:
    sa, sb = shapes.input_shapes
    x, y = make(sa), make(sb)
    snap = snapshot(x, y)
    if shapes.result_shape == sa:
        expected = x.numpy() + y.numpy()
        x.add_(y)
        np.testing.assert_array_equal(x.numpy(), expected)
        assert x.version == 1
    else:
        with pytest.raises(dt.ShapeError, match=words("add_", "broadcast")):
            x.add_(y)
        assert_unchanged(snap)


# --- out: device, castability, resize ------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_out_of_the_right_shape_and_dtype_is_written_in_place(device: str) -> None:
    a, b = make((2, 3), device=device), make((3,), device=device)
    out = dt.empty(2, 3, device=device)
    with Silent():
        assert dt.add(a, b, out=out) is out
    assert out.shape == (2, 3) and out.version == 1
    if device == "cpu":
        np.testing.assert_array_equal(out.numpy(), a.numpy() + b.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_out_accepts_same_kind_casts_and_rejects_others(device: str) -> None:
    a = make((3,), np.int64, device)
    out16 = dt.empty(3, dtype=dt.int16, device=device)
    dt.add(a, a, out=out16)  # int64 -> int16: narrowing within a kind is same_kind
    outf = dt.empty(3, dtype=dt.float16, device=device)
    dt.eq(a, a, out=outf)  # bool -> anything
    assert out16.version == 1 and outf.version == 1
    out_int = dt.zeros(3, dtype=dt.int64, device=device)
    snap = snapshot(a, out_int)
    with pytest.raises(dt.CastingError, match=words("div", "float64", "int64", "out", "can't be cast")):
        dt.div(a, a, out=out_int)
    with pytest.raises(dt.CastingError, match=words("add", "float64", "int64", "out")):
        dt.add(a, 1.5, out=out_int)  # a weak Python float still makes the result floating
    out_real = dt.zeros(3, device=device)
    snap2 = snapshot(out_real)
    with pytest.raises(dt.CastingError, match=words("mul", "complex128", "float64")):
        dt.mul(a, 1j, out=out_real)
    assert_unchanged(snap)
    assert_unchanged(snap2)


@given(a=dtypes, b=dtypes, o=dtypes)
def test_out_dtype_rule_is_numpys_same_kind(a: np.dtype[Any], b: np.dtype[Any], o: np.dtype[Any]) -> None:
    x, y, out = make((3,), a), make((3,), b), dt.zeros(3, dtype=o)
    result = np.add(x.numpy(), y.numpy()).dtype
    snap = snapshot(x, y, out)
    if np.can_cast(result, o, casting="same_kind"):
        dt.add(x, y, out=out)
        assert out.dtype == o and out.shape == (3,) and out.version == 1
        np.testing.assert_array_equal(out.numpy(), np.add(x.numpy(), y.numpy()).astype(o))
        assert x.version == 0 and y.version == 0
    else:
        with pytest.raises(dt.CastingError, match=words("add", "out", result.name, o.name)):
            dt.add(x, y, out=out)
        assert_unchanged(snap)


@pytest.mark.parametrize("device", DEVICES)
def test_out_without_elements_is_resized_silently(device: str) -> None:
    a = make((2, 3), device=device)
    out = dt.empty(0, device=device)
    with Silent():
        dt.add(a, 1, out=out)
    assert out.shape == (2, 3) and out.dtype == np.float64 and out.version == 1
    if device == "cpu":
        np.testing.assert_array_equal(out.numpy(), a.numpy() + 1)


@pytest.mark.parametrize("device", DEVICES)
def test_out_with_elements_is_resized_with_a_user_warning(device: str) -> None:
    a = make((2, 3), device=device)
    out = dt.zeros(4, device=device)
    with pytest.warns(UserWarning, match=words("add", "resized", "[4]", "[2, 3]")):
        dt.add(a, 1, out=out)
    assert out.shape == (2, 3) and out.version == 1
    if device == "cpu":
        np.testing.assert_array_equal(out.numpy(), a.numpy() + 1)


@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3),
    out_shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
)
def test_out_resize_rule_over_shapes(shapes: hnp.BroadcastableShapes, out_shape: tuple[int, ...]) -> None:
    x, y = make(shapes.input_shapes[0]), make(shapes.input_shapes[1])
    out = dt.full(out_shape, 7.0)
    expected = x.numpy() + y.numpy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dt.add(x, y, out=out)
    resized_with_elements = out_shape != shapes.result_shape and math.prod(out_shape) > 0
    user_warnings = [w for w in caught if issubclass(w.category, UserWarning)]
    assert len(user_warnings) == (1 if resized_with_elements else 0)
    if user_warnings:
        assert "resized" in str(user_warnings[0].message)
    assert out.shape == shapes.result_shape and out.dtype == np.float64 and out.version == 1
    np.testing.assert_array_equal(out.numpy(), expected)
    assert x.version == 0 and y.version == 0


@pytest.mark.parametrize("device", DEVICES)
def test_out_that_is_also_an_input_is_never_resized(device: str) -> None:
    a, b = make((3,), device=device), make((2, 3), device=device)
    snap = snapshot(a, b)
    with Silent(), pytest.raises(dt.ShapeError, match=words("add", "out", "also an input", "never resized")):
        dt.add(a, b, out=a)
    with Silent(), pytest.raises(dt.ShapeError, match="never resized"):
        dt.add(b, a, out=a)
    assert_unchanged(snap)


def test_out_that_is_a_view_of_an_input_is_never_resized() -> None:
    base = make((4,))
    out = base[0:2]
    snap = snapshot(base, out)
    with Silent(), pytest.raises(dt.ShapeError, match=words("add", "also an input", "never resized")):
        dt.add(base, 1, out=out)
    assert_unchanged(snap)


def test_an_out_that_shares_its_memory_with_views_is_never_resized() -> None:
    base = make((5,))
    out, x = base[0:2], base[2:5]  # same storage, disjoint memory
    snap = snapshot(base, out, x)
    with pytest.raises(ShapeError, match=words("add", "out", "views", "resized")):
        dt.add(x, 1, out=out)
    assert_unchanged(snap)
    other = make((5,))
    view = other[1:]
    snap = snapshot(other, view, x)
    with pytest.raises(ShapeError, match="views"):
        dt.add(x, 1, out=other)  # the base of views too: they would stop seeing its memory
    assert_unchanged(snap)


# --- mixed devices ---------------------------------------------------------------------------------------


def test_mixed_device_inputs_raise_naming_the_op_and_both_devices() -> None:
    c, m = make((3,)), make((3,), device="meta")
    snap = snapshot(c, m)
    with pytest.raises(dt.DeviceMismatchError, match=words("add", "cpu", "meta", "same device")):
        dt.add(c, m)
    with pytest.raises(dt.DeviceMismatchError, match=words("mul", "cpu", "meta")):
        dt.mul(m, c)
    with pytest.raises(dt.DeviceMismatchError, match=words("add", "cpu", "meta")):
        c + m
    with pytest.raises(dt.DeviceMismatchError, match=words("add", "cpu", "meta")):
        c.add_(m)
    with pytest.raises(dt.DeviceMismatchError, match=words("add", "cpu", "meta")):
        m.add_(c)
    with pytest.raises(dt.DeviceMismatchError, match=words("where", "cpu", "meta")):
        dt.where(dt.ones(3, dtype=dt.bool), c, m)
    with pytest.raises(dt.DeviceMismatchError, match=words("clamp", "cpu", "meta")):
        dt.clamp(c, min=m)
    assert_unchanged(snap)


def test_out_on_another_device_raises_naming_out() -> None:
    c, m = make((3,)), make((3,), device="meta")
    cpu_out, meta_out = dt.zeros(3), dt.zeros(3, device="meta")
    snap = snapshot(c, m, cpu_out, meta_out)
    with pytest.raises(dt.DeviceMismatchError, match=words("add", "cpu", "meta", "out")):
        dt.add(c, c, out=meta_out)
    with pytest.raises(dt.DeviceMismatchError, match=words("neg", "cpu", "meta", "out")):
        dt.neg(m, out=cpu_out)
    with pytest.raises(dt.DeviceMismatchError, match=words("add", "out")):
        dt.add(1, m, out=cpu_out)
    assert_unchanged(snap)


def test_python_numbers_have_no_device() -> None:
    m = make((3,), device="meta")
    assert dt.add(m, 1.5).device == dt.Device("meta")
    assert dt.add(2, m).device == dt.Device("meta")


# --- argument types ---------------------------------------------------------------------------------------


def test_non_tensor_non_number_arguments_raise_a_type_error_naming_op_and_argument() -> None:
    a = make((3,))
    out = dt.zeros(3)
    snap = snapshot(a, out)
    bad: Any = [1.0, 2.0, 3.0]
    with pytest.raises(ArgumentTypeError, match=words("add", "'other'", "list")):
        dt.add(a, bad)
    with pytest.raises(TypeError, match=words("add", "'other'", "str_")):
        dt.add(a, np.str_("x"), out=out)  # type: ignore[arg-type]  # a NumPy value that is no number
    with pytest.raises(TypeError, match=words("add", "'self'", "Tensor", "list")):
        dt.add_(bad, a)
    with pytest.raises(TypeError, match=words("add", "'alpha'")):
        dt.add(a, a, alpha="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=words("add", "Tensor")):
        dt.add(1, 2, out=out)
    assert_unchanged(snap)


def test_rejected_scalar_arguments_change_nothing() -> None:
    a = make((3,), np.int8)
    out = dt.zeros(3, dtype=dt.int8)
    snap = snapshot(a, out)
    with pytest.raises(ScalarOverflowError, match=words("add", "1000", "int8")):
        dt.add(a, 1000, out=out)
    with pytest.raises(ScalarOverflowError):
        a.add_(1000)
    with pytest.raises(ValueError, match=words("div", "rounding_mode")):
        dt.div(a, 2, rounding_mode="round", out=out)  # type: ignore[arg-type]
    assert_unchanged(snap)


# --- missing kernels ---------------------------------------------------------------------------------------

STUB_TYPE = "dtrulesstub"
STUB_KEY = DispatchKey("DtRulesStub")


class StubTensor(Tensor):
    """The tensor class of a NumPy-backed device type with its own dispatch key and no kernels."""

    __slots__ = ()


class StubBackend(Backend):
    device_type = STUB_TYPE
    tensor_class = StubTensor


@pytest.fixture(scope="module")
def stub_device() -> dt.Device:
    """A device type registered out of tree (once per process), dispatching to STUB_KEY."""
    try:
        dt.Device(STUB_TYPE)
    except ValueError:
        register_device_type(STUB_TYPE, STUB_KEY)
        register_backend(StubBackend())
    return dt.Device(STUB_TYPE)


def test_a_device_without_kernels_raises_no_kernel_error(stub_device: dt.Device) -> None:
    x = dt.ones(3, device=stub_device)
    out = dt.zeros(3, device=stub_device)
    assert x.device is stub_device
    snap = snapshot(x, out)
    pattern = words("add", "DtRulesStub", STUB_TYPE, "CPU", "CUDA", "no kernel")
    with pytest.raises(dt.NoKernelError, match=pattern):
        dt.add(x, x)
    with pytest.raises(NotImplementedError, match=pattern):
        dt.add(x, 1, out=out)
    with pytest.raises(dt.NoKernelError, match=pattern):
        x.add_(1)
    assert_unchanged(snap)


def test_a_backend_fallback_serves_the_key_until_unregistered(stub_device: dt.Device) -> None:
    x = dt.ones(3, device=stub_device)
    calls: list[str] = []

    def fallback(op: StructuredOp, *args: Any, out: ConstOut[Any], **kwargs: Any) -> None:
        calls.append(op.name)
        out.array[...] = np.add(*(np.asarray(a) for a in args))

    register_fallback(STUB_KEY, fallback)
    try:
        y = dt.add(x, x)
        assert calls == ["add"] and y.device is stub_device
        np.testing.assert_array_equal(np.asarray(y), [2.0, 2.0, 2.0])
    finally:
        unregister_fallback(STUB_KEY)
    with pytest.raises(dt.NoKernelError, match="DtRulesStub"):  # no stale cached handler
        dt.add(x, x)


@pytest.fixture
def cpu_only_op() -> Iterator[StructuredOp]:
    """A throwaway structured op with a CPU impl only, removed from the op registry afterwards (so the
    generated-code freshness check never sees it)."""

    def dtrules_twice(self: Tensor) -> TensorSpec:
        return (self.shape, self.dtype)

    op = structured_op(method=False)(dtrules_twice)

    @op.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 2, out=out.array)

    try:
        yield op
    finally:
        library.remove_op(op)


def test_an_op_with_only_a_cpu_impl(cpu_only_op: StructuredOp, stub_device: dt.Device) -> None:
    twice = cpu_only_op.functional
    np.testing.assert_array_equal(twice(make((3,))).numpy(), [0.0, 2.0, 4.0])
    m = twice(make((2, 2), np.int8, "meta"))  # the Meta key needs no kernel: meta function only
    assert m.device == dt.Device("meta") and m.shape == (2, 2) and m.dtype == np.int8
    x = dt.ones(2, device=stub_device)
    snap = snapshot(x)
    with pytest.raises(dt.NoKernelError, match=words("dtrules_twice", "DtRulesStub", STUB_TYPE, "CPU")) as info:
        twice(x)
    assert "CUDA" not in str(info.value)  # the keys listed are the ones that have kernels
    assert_unchanged(snap)


def test_kernel_table_resolve_names_op_key_devices_and_kernel_keys() -> None:
    table = KernelTable("dtrules_table")
    with pytest.raises(dt.NoKernelError, match=words("dtrules_table", "CUDA", "cuda:1", "none")):
        table.resolve(DispatchKey.CUDA, "cuda:1")

    def kernel(*args: Any, **kwargs: Any) -> None:
        pass

    table.register(DispatchKey.CPU, kernel)
    assert table.resolve(DispatchKey.CPU, "cpu") is kernel
    with pytest.raises(dt.NoKernelError, match=words("keys with kernels: CPU")):
        table.resolve(DispatchKey.CUDA, "cuda:0")
    assert table.resolve(DispatchKey.Meta, "meta") is META_ONLY
    table.unregister(DispatchKey.CPU)
    with pytest.raises(dt.NoKernelError):
        table.resolve(DispatchKey.CPU, "cpu")


# --- version counters ----------------------------------------------------------------------------------------


def test_each_mutation_bumps_the_version_by_exactly_one() -> None:
    a, b = make((3,)), make((3,))
    out = dt.zeros(3)
    dt.add(a, b, out=out)
    dt.mul(a, b, out=out)
    assert out.version == 2 and a.version == 0 and b.version == 0
    a.add_(b)
    assert a.version == 1 and b.version == 0
    a += 1
    a *= b
    assert a.version == 3
    a[0] = 5.0
    a[dt.tensor([True, False, True])] = 1.0
    a[dt.tensor([1])] = b[0:1]
    assert a.version == 6 and b.version == 0
    dt.add(a, a, out=a)  # the out is also an input: one mutation, one bump
    assert a.version == 7
    c = dt.add(a, b)
    assert c.version == 0 and a.version == 7


def test_views_share_the_version_counter() -> None:
    base = make((4, 3))
    row, col, elem = base[1], base[:, 2], base[2, 2]
    views = (base, row, col, elem)
    row.add_(1)
    assert [v.version for v in views] == [1, 1, 1, 1]
    dt.neg(col, out=col)
    assert [v.version for v in views] == [2, 2, 2, 2]
    elem[...] = 9.0
    assert [v.version for v in views] == [3, 3, 3, 3]
    assert base.numpy()[2, 2] == 9.0
    copy = base[dt.tensor([0, 1])]  # advanced indexing copies: its own counter
    copy.add_(1)
    assert copy.version == 1 and base.version == 3


def test_a_resized_out_keeps_counting() -> None:
    out = dt.zeros(0)
    dt.add(make((2,)), 1, out=out)
    assert out.version == 1
    with pytest.warns(UserWarning, match="resized"):
        dt.add(make((3,)), 1, out=out)
    assert out.version == 2 and out.shape == (3,)
    out.add_(1)
    dt.add(out, 1, out=out)
    assert out.version == 4


MUTATIONS = ("add_", "out", "setitem", "iadd", "neg_out")


@given(
    ops=st.lists(
        st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 3), st.integers(1, 4)),
        min_size=1,
        max_size=8,
    )
)
def test_version_counts_mutations_through_any_view(ops: list[tuple[str, int, int]]) -> None:
    base = make((8,))
    expected = base.numpy().copy()
    all_views: list[Tensor] = [base]
    for count, (kind, start, length) in enumerate(ops, start=1):
        sl = slice(start, start + length)
        v = base[sl]
        all_views.append(v)
        if kind == "add_":
            v.add_(1)
            expected[sl] += 1
        elif kind == "out":
            dt.mul(v, 2, out=v)
            expected[sl] *= 2
        elif kind == "setitem":
            v[...] = 3.0
            expected[sl] = 3.0
        elif kind == "iadd":
            v += 1
            expected[sl] += 1
        else:
            dt.neg(v, out=v)
            expected[sl] *= -1
        assert {w.version for w in all_views} == {count}
    np.testing.assert_array_equal(base.numpy(), expected)


# --- overlap -----------------------------------------------------------------------------------------------


def test_partial_overlap_between_out_and_an_input_raises() -> None:
    a = make((6,))
    snap = snapshot(a)
    with pytest.raises(dt.MemoryOverlapError, match=words("add", "out", "partial overlap")):
        dt.add(a[:-1], 1, out=a[1:])
    with pytest.raises(dt.MemoryOverlapError, match=words("add_", "self", "partial overlap")):
        a[1:].add_(a[:-1])
    with pytest.raises(dt.MemoryOverlapError, match=words("mul", "out")):
        dt.mul(2, a[::2], out=a[:3])
    m = make((3, 3))
    snap_m = snapshot(m)
    with pytest.raises(dt.MemoryOverlapError, match="partial overlap"):
        dt.add(dt.from_numpy(m.numpy().T), 1, out=m)  # same memory, another layout
    assert_unchanged(snap)
    assert_unchanged(snap_m)


def test_overlap_is_found_across_wrappers_of_the_same_memory() -> None:
    arr = np.arange(6.0)
    a, b = dt.from_numpy(arr), dt.from_numpy(arr)
    c, d = dt.from_dlpack(arr), dt.from_numpy(np.asarray(memoryview(arr.data)))
    snap = snapshot(a, b, c, d)
    for x, y in ((a, b), (a, c), (c, a), (d, a)):
        with pytest.raises(dt.MemoryOverlapError):
            dt.add(x[:-1], 1, out=y[1:])
    assert_unchanged(snap)


AliasCase = tuple[Callable[[Tensor], Tensor], Callable[[Tensor], Tensor]]
ALIAS_CASES: dict[str, AliasCase] = {
    # name: (the call writing into an input, the same expression through the functional variant)
    "add": (lambda a: dt.add(a, a, out=a), lambda p: dt.add(p, p)),
    "add alpha": (lambda a: dt.add(a, a, alpha=2, out=a), lambda p: dt.add(p, p, alpha=2)),
    "mul": (lambda a: dt.mul(a, 3, out=a), lambda p: dt.mul(p, 3)),
    "neg": (lambda a: dt.neg(a, out=a), lambda p: dt.neg(p)),
    "exp": (lambda a: dt.exp(a, out=a), lambda p: dt.exp(p)),
    "maximum": (lambda a: dt.maximum(a, a.flip(0), out=a), lambda p: dt.maximum(p, p.flip(0))),
    "clamp": (lambda a: dt.clamp(a, min=a, max=1.5, out=a), lambda p: dt.clamp(p, min=p, max=1.5)),
    "where": (lambda a: dt.where(dt.gt(a, 0.5), a, -a, out=a), lambda p: dt.where(dt.gt(p, 0.5), p, -p)),
    "inplace": (lambda a: a.sub_(a, alpha=0.5), lambda p: dt.sub(p, p, alpha=0.5)),
    "inplace other": (lambda a: a.mul_(a), lambda p: dt.mul(p, p)),
}


@pytest.mark.parametrize("name", sorted(ALIAS_CASES))
def test_exact_aliasing_of_out_and_input_is_allowed_for_elementwise_ops(name: str) -> None:
    aliased, functional = ALIAS_CASES[name]
    a = make((4,))
    expected = functional(dt.from_numpy(a.numpy().copy())).numpy()
    assert aliased(a) is a
    assert a.version == 1
    np.testing.assert_allclose(a.numpy(), expected)


def test_exact_aliasing_through_distinct_view_objects_is_allowed() -> None:
    a = make((5,))
    before = a.numpy().copy()
    out = dt.add(a[1:4], a[1:4], out=a[1:4])  # three tensor objects, one layout
    np.testing.assert_array_equal(out.numpy(), 2 * before[1:4])
    np.testing.assert_array_equal(a.numpy()[[0, 4]], before[[0, 4]])
    assert a.version == 1


VIEWS = st.sampled_from(["same", "numpy", "dlpack"])


@given(
    out_slice=st.slices(12),
    step=st.sampled_from([-3, -2, -1, 1, 2, 3]),
    data=st.data(),
    wrapper=VIEWS,
    inplace=st.booleans(),
)
def test_overlap_rule_over_aliasing_patterns(
    out_slice: slice, step: int, data: st.DataObject, wrapper: str, inplace: bool
) -> None:
    memory = np.arange(12.0)
    t = dt.from_numpy(memory)
    other = {"same": t, "numpy": dt.from_numpy(memory), "dlpack": dt.from_dlpack(memory)}[wrapper]
    out = t[out_slice]
    n = out.shape[0]
    assume(n > 0)
    if (n - 1) * abs(step) > 11:
        step = 1
    lo, hi = (0, 11 - (n - 1) * step) if step > 0 else ((n - 1) * -step, 11)
    x = other[data.draw(st.integers(lo, hi), label="start") :: step][0:n]
    assert x.shape == (n,)
    o_arr, x_arr = out.numpy(), x.numpy()
    same_layout = (
        o_arr.__array_interface__["data"][0] == x_arr.__array_interface__["data"][0] and o_arr.strides == x_arr.strides
    )
    partial = np.shares_memory(o_arr, x_arr) and not same_layout
    expected = memory.copy()
    expected[out_slice] = x_arr + 1 if not inplace else o_arr + x_arr
    snap = snapshot(t, other, out, x)
    if partial:
        with pytest.raises(dt.MemoryOverlapError, match="overlap"):
            if inplace:
                out.add_(x)
            else:
                dt.add(x, 1, out=out)
        assert_unchanged(snap)
    else:
        if inplace:
            out.add_(x)
        else:
            dt.add(x, 1, out=out)
        np.testing.assert_array_equal(memory, expected)
        assert out.version == 1


def stride0(base: np.ndarray[Any, Any], shape: tuple[int, ...], strides: tuple[int, ...]) -> Tensor:
    return dt.from_numpy(np.lib.stride_tricks.as_strided(base, shape=shape, strides=strides))


def test_an_output_with_internal_overlap_raises() -> None:
    base = np.zeros(4)
    t = stride0(base, (3,), (0,))  # three elements, one memory location
    ok = make((3,))
    snap = snapshot(t, ok)
    with pytest.raises(dt.MemoryOverlapError, match=words("add", "out", "single memory location")):
        dt.add(ok, 1, out=t)
    with pytest.raises(dt.MemoryOverlapError, match=words("add_", "self", "single memory location")):
        t.add_(1)
    with pytest.raises(dt.MemoryOverlapError, match=words("__setitem__", "single memory location")):
        t[...] = 1.0
    with pytest.raises(dt.MemoryOverlapError):
        t[0:2] = ok[0:2]
    assert_unchanged(snap)
    np.testing.assert_array_equal(base, 0)


def test_stride_zero_is_fine_where_no_two_elements_meet() -> None:
    base = np.zeros(4)
    row = stride0(base, (1, 4), (0, 8))  # a length-1 dimension with stride 0
    dt.add(make((1, 4)), 1, out=row)
    np.testing.assert_array_equal(base, [1, 2, 3, 1])
    t = stride0(base, (3,), (0,))
    np.testing.assert_array_equal(dt.add(t, 1).numpy(), [2, 2, 2])  # as an input it is fine
    t[1] = 5.0  # one element (a 0-d view) is one location
    assert base[0] == 5.0 and t.version == 1
    empty = dt.empty(2, 0, 3)  # no elements: nothing overlaps, whatever the strides
    dt.add(dt.empty(2, 0, 3), 1.0, out=empty)
    empty.add_(1.0)
    assert empty.version == 2


# --- read-only outputs ---------------------------------------------------------------------------------------


def readonly(values: list[float]) -> tuple[np.ndarray[Any, Any], Tensor]:
    arr = np.array(values)
    arr.flags.writeable = False
    return arr, dt.from_numpy(arr)


def test_read_only_outputs_raise_and_stay_unchanged() -> None:
    arr, r = readonly([1.0, 2.0, 3.0])
    x = make((3,))
    assert r.is_readonly and not x.is_readonly
    snap = snapshot(r, x)
    with pytest.raises(dt.ReadOnlyError, match=words("add", "out", "read-only")):
        dt.add(x, 1, out=r)
    with pytest.raises(dt.ReadOnlyError, match=words("mul_", "self", "read-only")):
        r.mul_(2)
    with pytest.raises(dt.ReadOnlyError):
        r += 1
    with pytest.raises(dt.ReadOnlyError, match=words("__setitem__", "read-only")):
        r[0] = 5.0
    with pytest.raises(dt.ReadOnlyError, match="read-only"):
        r[1:] = x[1:]
    with pytest.raises(dt.ReadOnlyError, match=words("add", "out")):
        dt.add(make((2, 3)), 1, out=r)  # a resize is a write too
    assert_unchanged(snap)
    np.testing.assert_array_equal(arr, [1.0, 2.0, 3.0])


def test_read_only_inputs_are_fine() -> None:
    _, r = readonly([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(dt.add(r, 1).numpy(), [2.0, 3.0, 4.0])
    out = dt.zeros(3)
    dt.mul(r, r, out=out)
    np.testing.assert_array_equal(out.numpy(), [1.0, 4.0, 9.0])
    assert r.version == 0


# --- a failing impl ---------------------------------------------------------------------------------------------


def test_a_failing_impl_leaves_a_to_be_resized_out_unresized() -> None:
    x = dt.tensor([1, 2, 3])
    empty_out = dt.zeros(0, dtype=dt.int64)
    full_out = dt.tensor([7, 7], dtype=dt.int64)
    snap = snapshot(x, empty_out, full_out)
    with pytest.raises(ValueError, match=words("pow", "negative")):
        dt.pow(x, -1, out=empty_out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match="negative"):
            dt.pow(x, dt.tensor([1, -1, 2]), out=full_out)
    assert_unchanged(snap)


def test_a_failing_impl_leaves_out_and_self_unchanged() -> None:
    x = dt.tensor([1, 2, 3])
    out = dt.zeros(3, dtype=dt.int64)
    snap = snapshot(x, out)
    with pytest.raises(ValueError, match="negative"):
        dt.pow(x, -2, out=out)
    with pytest.raises(ValueError, match="negative"):
        x.pow_(dt.tensor([0, 1, -1]))
    with pytest.raises(ValueError, match="negative"):
        x **= -1
    assert_unchanged(snap)
    assert dt.pow(x, 2, out=out) is out and out.tolist() == [1, 4, 9] and out.version == 1


# --- meta tensors follow the same rules without data ----------------------------------------------------------


def test_meta_calls_check_the_rules_and_count_versions() -> None:
    a = make((2, 3), np.int32, "meta")
    assert a.add_(1).version == 1
    assert dt.add(a, 2, out=a).version == 2
    r = dt.div(a, a)
    assert r.device == dt.Device("meta") and r.dtype == np.float64 and r.shape == (2, 3)
    snap = snapshot(a)
    with pytest.raises(dt.CastingError):
        a.div_(2)
    with pytest.raises(dt.ShapeError):
        a.add_(make((4, 2, 3), np.int32, "meta"))
    assert_unchanged(snap)
    with pytest.raises(NoDataError):
        a.numpy()


# --- once-reported bugs in the common code (devtensor/structured.py), fixed: regression tests -------------------


def test_the_callers_array_made_read_only_after_a_write_leaves_the_tensor_writable() -> None:
    # The tensor holds its own view of the caller's memory (issue 9, item 2): the writeable flag of the caller's
    # array object does not reach it, as for any NumPy view made before the flag changed (and PyTorch's
    # from_numpy). The writes go through, and the caller's array sees them.
    arr = np.zeros(3)
    out_arr = np.zeros(3)
    t = dt.from_numpy(arr)
    out = dt.from_numpy(out_arr)
    t.add_(1)
    dt.add(t, 1, out=out)
    arr.flags.writeable = False
    out_arr.flags.writeable = False
    t.add_(1)
    dt.add(t, 1, out=out)
    assert arr.tolist() == [2.0, 2.0, 2.0] and out_arr.tolist() == [3.0, 3.0, 3.0]
    assert t.version == 2 and out.version == 2


# --- data written by a call that raised, with the version counter not bumped ---------------------------------


def _div_by_zero_under_warnings_as_errors(a: Tensor) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as `pytest -W error` or filterwarnings=error configure it
        a.div_(0.0)


def _overflow_under_errstate_raise(a: Tensor) -> None:
    with np.errstate(over="raise"):
        a.mul_(1e300)


def _setitem_overflow_under_warnings_as_errors(a: Tensor) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a[0:2] = dt.tensor([5.0, 1e300])


@pytest.mark.parametrize(
    "make, call",
    [
        (lambda: dt.tensor([1.0, 0.0]), _div_by_zero_under_warnings_as_errors),
        (lambda: dt.tensor([1e300, 1.0]), _overflow_under_errstate_raise),
        (lambda: dt.tensor([1.0, 2.0], dtype=dt.float16), _setitem_overflow_under_warnings_as_errors),
    ],
    ids=["div_-warnings-error", "mul_-errstate-raise", "setitem-float16-warnings-error"],
)
def test_a_mutation_that_raises_leaves_data_unchanged_or_bumps_the_version(
    make: Callable[[], Tensor], call: Callable[[Tensor], None]
) -> None:
    a = make()
    before = a.numpy().copy()
    with contextlib.suppress(RuntimeWarning, FloatingPointError):
        call(a)
    # once the data is overwritten (inf/nan) while the version stays 0: version checks miss the write
    assert np.array_equal(a.numpy(), before, equal_nan=True) or a.version == 1


# --- errors that do not name the op ---------------------------------------------------------------------


def _setitem_uint8(value: float) -> None:
    t = dt.tensor([1, 2], dtype=dt.uint8)
    t[0] = value


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: dt.ones(2) + 10**400, "add"),
        (lambda: binary_call("maximum", dt.ones(2), 10**400), "maximum"),  # (NumPy's form: a number)
        (lambda: _setitem_uint8(300.0), "__setitem__"),
        (lambda: dt.full((2,), 300.0, dtype=dt.uint8), "full"),
        (lambda: dt.arange(3.0)[::0], "__getitem__"),
    ],
    ids=["add-huge-int", "maximum-huge-int", "setitem-300.0-uint8", "full-300.0-uint8", "getitem-step-0"],
)
def test_errors_name_the_op(call: Callable[[], object], op: str) -> None:
    # once NumPy's bare messages ("int too large to convert to float", "slice step cannot be zero", …)
    with pytest.raises((OverflowError, ValueError, TypeError)) as info:
        call()
    assert op in str(info.value)


# --- errors outside the one hierarchy ------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: dt.sum(dt.ones(2, 2), (0, -2)),
        lambda: dt.flip(dt.ones(2, 2), (0, 0)),
        lambda: dt.ones(4).chunk(0),
        lambda: dt.ones(4).split([-1, 5]),
        lambda: dt.clamp(dt.ones(2)),
        lambda: dt.div(dt.ones(2), 2, rounding_mode="round"),  # type: ignore[arg-type]
        lambda: dt.tensor([2]) ** -1,
        lambda: dt.var(dt.ones(2), correction=math.nan),
    ],
    ids=[
        "sum-dup-dims",
        "flip-dup-dims",
        "chunk-0",
        "split-negative",
        "clamp-no-bounds",
        "div-bad-mode",
        "pow-int-negative",
        "var-nan-correction",
    ],
)
def test_bad_arguments_raise_devtensor_errors(call: Callable[[], object]) -> None:
    # errors.py: "Every error devtensor raises on bad input is an instance of DevtensorError and of the standard
    # exception"; these raise a plain ValueError
    with pytest.raises(ValueError) as info:
        call()
    assert isinstance(info.value, dt.DevtensorError)


# --- an out view that gets resized silently stops being a view of its base ------------------------------------


def test_resized_out_view_keeps_sharing_storage_and_version_with_its_base() -> None:
    base = dt.zeros(2, 3)
    out = base[0]  # a view: shares storage and version counter with base
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the documented deprecation warning of a resize
            dt.sum(dt.ones(2, 4), 1, out=out)
    except (ValueError, RuntimeError):
        # refusing to resize a view is acceptable; then nothing changed
        assert base.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
        assert base.version == out.version == 0
        return
    assert out.tolist() == [4.0, 4.0]
    # PyTorch writes the resized view into the base's storage (torch gives base [[4, 4, 0], [0, 0, 0]] and
    # version 1 for both); once out got a new storage: base unchanged at version 0 while out is at 1
    assert base.version == out.version
    assert base.tolist() == [[4.0, 4.0, 0.0], [0.0, 0.0, 0.0]]


# --- errors outside the DevtensorError hierarchy: IndexError for dims and class indices ------------------------


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: dt.sum(dt.ones(2, 2), 2), "sum"),
        (lambda: dt.ones(2, 2).transpose(0, 2), "transpose"),
        (lambda: dt.stack([dt.ones(2), dt.ones(2)], 2), "stack"),
        (lambda: dt.one_hot(dt.tensor([0, 3]), 3), "one_hot"),
        (lambda: dt.ones(3)[5], "__getitem__"),
    ],
    ids=[
        "sum-dim",
        "transpose-dim",
        "stack-dim",
        "one_hot-class",
        "getitem",
    ],
)
def test_index_errors_are_in_the_devtensor_hierarchy(call: Callable[[], object], op: str) -> None:
    # errors.py: "Every error devtensor raises on bad input is an instance of DevtensorError and of the standard
    # exception"; these raise a plain IndexError (which names the op, but `except DevtensorError` misses it)
    error = raises_devtensor_error_naming(call, op)
    assert isinstance(error, IndexError)


# --- sizes NumPy cannot represent: bare NumPy errors that do not name the op -----------------------------------


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: dt.ones(1).expand(10**20), "expand"),
        (lambda: dt.empty(10**20), "empty"),
        (lambda: dt.one_hot(dt.empty(1, dtype=dt.int64, device="meta"), 10**20), "one_hot"),
        (lambda: dt.upsample_nearest1d(dt.empty(1, 1, 4, device="meta"), scale_factor=1e30), "upsample_nearest1d"),
        (lambda: dt.ones(0).reshape(10**10, 10**10, 0), "reshape"),
    ],
    ids=["expand", "empty", "one_hot-meta", "upsample-meta", "reshape-empty"],
)
def test_unrepresentable_sizes_give_a_devtensor_error_naming_the_op(call: Callable[[], Tensor], op: str) -> None:
    # once "Python int too large to convert to C long", "Maximum allowed dimension exceeded", "array is too
    # big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size" (on meta tensors, which hold
    # no data), "cannot reshape array of size 0 into shape ...": plain ValueError/OverflowError
    try:
        call()
    except Exception as error:
        assert isinstance(error, dt.DevtensorError), f"{type(error).__name__}: {error}"
        assert op in str(error)
        assert isinstance(error, (ValueError, OverflowError, RuntimeError))


@pytest.mark.parametrize("device", ["cpu", "meta", "stand-in"])
def test_setitem_with_a_zero_slice_step_is_a_devtensor_error(device: str, request: pytest.FixtureRequest) -> None:
    if device == "stand-in":
        request.getfixturevalue("fake_cupy")  # the CUDA stand-in
        device = "cuda"
    t = dt.zeros(4, device=device)
    for index in (slice(None, None, 0), (slice(0, 4, 0),)):
        with pytest.raises(ArgumentValueError, match=words("__setitem__", "step")):
            t[index] = 1
        with pytest.raises(ArgumentValueError, match=words("__getitem__", "step")):
            t[index]
    assert t.version == 0


# --- variants that write only their result dtype (PyTorch's refusals, rules.EXACT_DTYPE) ------------------


@pytest.mark.parametrize(
    ("call", "target", "op"),
    [
        (lambda t: t.float_power_(2), dt.ones(3, dtype=dt.float32), "float_power_"),
        (lambda t: t.float_power_(2), dt.ones(3, dtype=dt.complex64), "float_power_"),
        (lambda t: dt.float_power(dt.ones(3), 2, out=t), dt.ones(3, dtype=dt.float32), "float_power"),
        (lambda t: t.abs_(), dt.tensor([3 + 4j, -1j], dtype=dt.complex64), "abs_"),
        (lambda t: dt.gather(dt.ones(2, dtype=dt.float32), 0, dt.tensor([0, 1]), out=t), dt.ones(2), "gather"),
        (lambda t: dt.multinomial(dt.ones(1, 2), 2, out=t), dt.zeros(1, 2, dtype=dt.int32), "multinomial"),
        (lambda t: dt.multinomial(dt.ones(1, 2), 2, out=t), dt.zeros(1, 2, dtype=dt.float64), "multinomial"),
    ],
    ids=["float_power_-f32", "float_power_-c64", "float_power-out", "abs_-complex", "gather-out", "multinomial-i32",
         "multinomial-f64"],
)  # fmt: skip
def test_variants_that_write_only_their_result_dtype_refuse_others(call: Any, target: Tensor, op: str) -> None:
    before, version = target.numpy().copy(), target.version
    with pytest.raises(dt.CastingError, match=rf"^{op}: argument '(self|out)' has dtype {target.dtype.name}, but"):
        call(target)
    np.testing.assert_array_equal(target.numpy(), before)  # (a failing call changes nothing)
    assert target.version == version


def test_variants_that_write_only_their_result_dtype_write_that_dtype() -> None:
    a = dt.tensor([2.0, 3.0])
    assert a.float_power_(2).tolist() == [4.0, 9.0] and a.version == 1
    assert dt.abs_(dt.tensor([-1.5, 2.0], dtype=dt.float32)).tolist() == [1.5, 2.0]
    out = dt.empty(2, dtype=dt.float32)
    src = dt.tensor([5.0, 6.0], dtype=dt.float32)
    assert dt.gather(src, 0, dt.tensor([1, 0]), out=out).tolist() == [6.0, 5.0]
    assert dt.multinomial(dt.tensor([[0.0, 1.0]]), 1, out=dt.empty(1, 1, dtype=dt.int64)).tolist() == [[1]]
    # other ops keep the same_kind rule
    assert dt.add(dt.ones(2, dtype=dt.float64), 1, out=dt.empty(2, dtype=dt.float32)).dtype == dt.float32
