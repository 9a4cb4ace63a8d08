"""Adversarial reproductions: each test asserts the behaviour README.md / DESIGN.md promise, on inputs that
currently break it. Ranked by severity (most severe first).

Promises exercised: refined tensors are backed by a real array (``CPUTensor.array`` is a ``numpy.ndarray``);
tensors only ever carry supported dtypes; a call that raises changes nothing (data, shape, dtype, version
counter), and every mutation bumps the version counter; no stale handler after a registration or an undo;
values follow NumPy 2 (NEP 50 weak Python scalars); errors are devtensor errors of the standard type that
name the op.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import library
from devtensor import modes as modes_mod
from devtensor.structured import all_ops
from devtensor.tensor import Tensor, TensorSpec
from devtensor.typed import ConstOut, CPUTensor, as_cpu

_counter = itertools.count()


def unique(prefix: str) -> str:
    """An op name no other test uses."""
    return f"{prefix}_adv{next(_counter)}"


@pytest.fixture(autouse=True)
def _remove_new_ops() -> Iterator[None]:
    """Ops a test defines are removed afterwards; any dispatch-mode state a test corrupts is reset."""
    before = {op.name for op in all_ops()}
    yield
    for op in all_ops():
        if op.name not in before:
            library.remove_op(op)
    modes_mod._stack().clear()
    modes_mod.ACTIVE[0] = 0


def _identity_meta(self: Tensor) -> TensorSpec:
    return self.shape, self.dtype


def _define_fill_op(name: str, value: float, *, replace: bool = False) -> Any:
    """A custom elementwise op whose CPU impl fills its output with ``value``."""
    op = library.custom_op(name, replace=replace, elementwise=True)(_identity_meta)

    @op.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = value

    return op


# --- 1. indexing with a 0-d integer tensor yields a tensor backed by a NumPy scalar ----------------------------


def test_zero_d_integer_tensor_index_gives_an_ndarray_backed_writable_tensor() -> None:
    b = dt.arange(3.0)
    c = b[dt.tensor(1)]  # NumPy's a[np.array(1)] is a numpy.float64 scalar, which devtensor wraps as is
    assert c.shape == ()
    assert isinstance(as_cpu(c).array, np.ndarray)  # the refinement's promise: CPUTensor.array is an ndarray
    assert isinstance(c.numpy(), np.ndarray)
    assert not c.is_readonly  # a fresh tensor (a copy, as any tensor index gives) is writable
    c.add_(1)
    assert c.item() == 2.0
    assert dt.from_dlpack(c).item() == 2.0  # currently AttributeError from inside Tensor.__dlpack_device__


# --- 2. full() with a Python int beyond uint64 makes an object-dtype tensor ------------------------------------


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1])
def test_full_with_an_int_no_supported_dtype_holds_is_refused(value: int) -> None:
    # dt.tensor(value) refuses the same int; full() returns tensor([...], dtype=object)
    with pytest.raises((OverflowError, TypeError), match="full"):
        dt.full((2,), value)


# --- 3. a rejected call that still wrote its out ----------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_var_with_a_huge_int_correction_does_not_write_out_before_raising() -> None:
    x = dt.tensor([1.0, 2.0, 4.0])
    o = dt.zeros(())
    try:
        dt.var(x, correction=10**30, out=o)
    except (ValueError, OverflowError, TypeError) as e:
        # currently: NumPy's bare "Python int too large to convert to C long", after np.var wrote the sum of
        # squared deviations into out
        assert "var" in str(e)
        assert o.item() == 0.0
        assert o.version == 0
    else:
        # or accept it as a float correction of that size is accepted (the result is inf)
        assert o.item() == dt.var(x, correction=1e30).item()


# --- 4. a replaced / removed custom op keeps running through devtensor.cpu.<name> ------------------------------


def test_device_binding_is_not_stale_after_replace_and_remove() -> None:
    name = unique("stale")
    x = dt.zeros(2)
    try:
        _define_fill_op(name, 1.0)
        assert getattr(dt.cpu, name)(x).tolist() == [1.0, 1.0]
        _define_fill_op(name, 2.0, replace=True)
        assert getattr(dt.cpu, name)(x).tolist() == [2.0, 2.0]  # currently [1.0, 1.0]: the old op runs
        library.remove_op(name)
        with pytest.raises(AttributeError):
            getattr(dt.cpu, name)  # remove_op promises to drop the op's cached device bindings
    finally:
        vars(dt.cpu).pop(name, None)
        vars(dt.cpu).pop(name + "_", None)


# --- 5. data written by a call that raised, with the version counter not bumped ---------------------------------


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
    # currently the data is overwritten (inf/nan) while the version stays 0: version checks miss the write
    assert np.array_equal(a.numpy(), before, equal_nan=True) or a.version == 1


# --- 6. the internal ndarray is handed out: its metadata can be changed behind the tensor's back ---------------


@pytest.mark.parametrize("export", [lambda t: t.numpy(), np.asarray], ids=["numpy()", "np.asarray"])
def test_exported_array_cannot_desynchronise_the_tensor(export: Callable[[Tensor], Any]) -> None:
    x = dt.ones(2, 2)
    exported = export(x)
    assert isinstance(exported, np.ndarray)
    exported.shape = (4,)  # legal on any ndarray; must only change the exported view
    assert x.numpy().shape == x.shape == (2, 2)
    assert (x + 1).tolist() == [[2.0, 2.0], [2.0, 2.0]]  # currently ValueError: shapes (4,) and (2, 2)

    y = dt.ones(2)
    export(y).dtype = np.int64
    assert y.tolist() == [1.0, 1.0]  # currently [4607182418800017408, ...]


# --- 7. np.matrix accepted by from_numpy keeps matrix semantics inside a tensor ---------------------------------


def test_from_numpy_of_a_matrix_has_ndarray_semantics_or_is_refused() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    try:
        t = dt.from_numpy(m)
    except TypeError:
        return  # refusing the subclass is fine too
    assert t[0].shape == (2,)  # currently (1, 2): a matrix row stays 2-d
    assert dt.sum(t, 0).tolist() == [4.0, 6.0]  # currently TypeError from numpy: matrix.sum() and keepdims


# --- 8. comparisons with out-of-range Python ints raise where NumPy 2 answers ----------------------------------


@pytest.mark.parametrize(
    "dtype, op, value",
    [
        (dt.uint8, "eq", -1),
        (dt.uint8, "lt", 300),
        (dt.int8, "gt", -1000),
        (dt.int64, "ne", 2**70),
        (dt.uint64, "le", -2),
    ],
    ids=["uint8==-1", "uint8<300", "int8>-1000", "int64!=2**70", "uint64<=-2"],
)
def test_comparison_with_out_of_range_python_int_follows_numpy(dtype: Any, op: str, value: int) -> None:
    data = np.array([1, 2], dtype=dtype)
    ufunc = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater}[op]
    expected = ufunc(data, value)  # NumPy 2: a correct bool array, no OverflowError
    result = getattr(dt, op)(dt.from_numpy(data), value)  # currently ScalarOverflowError
    assert result.dtype == dt.bool
    assert result.tolist() == expected.tolist()


# --- 9. kernel handles removed out of order resurrect a removed kernel ------------------------------------------


def test_kernel_handles_removed_out_of_order_restore_the_original_kernel() -> None:
    op = _define_fill_op(unique("handles"), 1.0)

    def fill11(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = 11

    def fill22(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = 22

    h1 = library.register_kernel(op, "cpu", fill11)
    h2 = library.register_kernel(op, "cpu", fill22)
    h1.remove()
    h2.remove()
    assert op.functional(dt.zeros(1)).tolist() == [1.0]  # currently [11.0]: h1's kernel is back


# --- 10. t == numpy_scalar silently returns False --------------------------------------------------------------


@pytest.mark.parametrize("scalar", [np.float64(1.0), np.int64(1), np.float32(1.0)])
def test_eq_with_a_numpy_scalar_is_elementwise_or_an_error(scalar: Any) -> None:
    t = dt.tensor([1.0, 2.0])  # `t < scalar` raises ArgumentTypeError; `t == scalar` must not be silently False
    try:
        result: Any = t == scalar
    except TypeError:
        return
    # currently == falls back to identity and returns the Python bool False
    assert isinstance(result, Tensor)
    assert result.tolist() == [True, False]


# --- 11. a mode exited inside another mode's __dispatch__ comes back; the mode count goes negative -------------


def test_mode_exited_during_another_modes_dispatch_stays_exited() -> None:
    outer = library.CountingMode()

    class ExitOuter(library.DispatchMode):
        def __dispatch__(
            self,
            op: Any,
            variant: str,
            func: Callable[..., Any],
            args: tuple[Any, ...],
            kwargs: dict[str, Any],
        ) -> Any:
            with contextlib.suppress(RuntimeError):  # refusing the exit is acceptable too
                outer.__exit__(None, None, None)
            return func(*args, **kwargs)

    a = dt.ones(2)
    outer.__enter__()
    inner = ExitOuter()
    inner.__enter__()
    _ = a + 1
    inner.__exit__(None, None, None)
    for mode in reversed(modes_mod.active_modes()):  # leave whatever is still active, innermost first
        mode.__exit__(None, None, None)
    assert modes_mod.active_modes() == ()
    assert modes_mod.ACTIVE[0] == 0  # currently -1: `outer` was restored to the stack after its exit
    with library.LoggingMode(sink=lambda text: None) as log:
        _ = a + 1
    assert log.names == ["add"]  # currently []: modes stop seeing calls


# --- 12. cat/stack of an empty list: the documented ValueError -------------------------------------------------


@pytest.mark.parametrize("fn", [dt.cat, dt.stack], ids=["cat", "stack"])
def test_cat_and_stack_of_an_empty_list_raise_the_documented_value_error(fn: Callable[..., Tensor]) -> None:
    # docstrings: "ValueError: an empty list"; currently ArgumentTypeError "got only Python numbers"
    with pytest.raises(ValueError, match="empty"):
        fn([])


# --- 13. errors that do not name the op ---------------------------------------------------------------------


def _setitem_uint8(value: float) -> None:
    t = dt.tensor([1, 2], dtype=dt.uint8)
    t[0] = value


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: dt.ones(2) + 10**400, "add"),
        (lambda: dt.maximum(dt.ones(2), 10**400), "maximum"),
        (lambda: _setitem_uint8(300.0), "__setitem__"),
        (lambda: dt.full((2,), 300.0, dtype=dt.uint8), "full"),
        (lambda: dt.arange(3.0)[::0], "__getitem__"),
    ],
    ids=["add-huge-int", "maximum-huge-int", "setitem-300.0-uint8", "full-300.0-uint8", "getitem-step-0"],
)
def test_errors_name_the_op(call: Callable[[], object], op: str) -> None:
    # currently NumPy's bare messages ("int too large to convert to float", "slice step cannot be zero", …)
    with pytest.raises((OverflowError, ValueError, TypeError)) as info:
        call()
    assert op in str(info.value)


# --- 14. errors outside the one hierarchy ------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: dt.sum(dt.ones(2, 2), (0, -2)),
        lambda: dt.flip(dt.ones(2, 2), (0, 0)),
        lambda: dt.ones(4).chunk(0),
        lambda: dt.ones(4).split([-1, 5]),
        lambda: dt.clamp(dt.ones(2)),
        lambda: dt.div(dt.ones(2), 2, rounding_mode="round"),
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


# --- 15. dispatch modes do not see view ops ------------------------------------------------------------------


def test_dispatch_modes_see_view_op_calls() -> None:
    # README: "dispatch modes (DispatchMode, CountingMode, LoggingMode) see every op call"
    t = dt.ones(2, 3)
    with library.CountingMode() as mode:
        t.reshape(6)
        dt.transpose(t, 0, 1)
    assert mode.counts["reshape"] == 1  # currently 0: view ops bypass the modes
    assert mode.counts["transpose"] == 1
