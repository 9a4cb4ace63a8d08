"""Floating-point conditions (divide by zero, invalid, overflow) are properties of the values, not bad input: an
op writes its whole result and bumps the version, then NumPy's warning is emitted; when a warnings filter or
``np.errstate(...='raise')`` makes it an error, the write has happened (as in NumPy) and the version moved
exactly when the data did. The one exception to "a call that raises changes nothing". Driven by the op sample
registry with operands holding zeros, infinities, NaNs and huge values, on the CPU and the CUDA stand-in."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pytest
from helpers import unique
from op_samples import OPS, Sample, Strided
from test_op_generic import BUILTIN, host, inplace, inplace_legal
from test_out_is_input import out_positions

import devtensor as dt
from devtensor import library
from devtensor.structured import StructuredOp
from devtensor.tensor import Tensor, TensorSpec
from devtensor.typed import ConstOut, CPUTensor

# Under np.errstate(all="raise") NumPy's Python-level warnings (empty slices) stay warnings: expected, not shown.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning"),
]

_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -7.0, 3.0, 1e-308]


def _poison(a: Any) -> Any:
    """``a`` with special values: floats cycle through zeros, infinities, NaN and extremes; ints get zeros at
    every other element (divisors); bools stay (they cannot overflow)."""
    if isinstance(a, Strided):
        return Strided(_poison(a.array))
    if isinstance(a, list):
        return [_poison(x) for x in a]
    if not isinstance(a, np.ndarray) or a.size == 0:
        return a
    flat = a.copy().reshape(-1)
    if a.dtype.kind in "fc":
        with np.errstate(all="ignore"):
            flat[...] = np.resize(np.array(_SPECIAL, dtype=a.dtype), flat.shape)
    elif a.dtype.kind in "iu":
        flat[::2] = 0
    return flat.reshape(a.shape)


def _cases() -> Iterator[Any]:
    for name, entry in OPS.items():
        if not isinstance(BUILTIN[name], StructuredOp):
            continue
        for sample in entry.samples:
            poisoned = Sample(tuple(_poison(a) for a in sample.args), sample.kwargs, sample.broadcast)
            yield pytest.param(name, poisoned, id=f"{name}{sample.id}")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _filter_error() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@contextlib.contextmanager
def _errstate_raise() -> Iterator[None]:
    with np.errstate(all="raise"):
        yield


_MODES = {"warnings-as-errors": _filter_error, "errstate-raise": _errstate_raise}


def _same(got: Any, want: Any, context: str) -> None:
    np.testing.assert_array_equal(got, want, err_msg=context, strict=True)


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize("device", ["cpu", "stand-in"])
@pytest.mark.parametrize(("name", "sample"), list(_cases()))
def test_the_result_is_written_before_the_condition_raises(
    name: str, sample: Sample, device: str, mode: str, request: pytest.FixtureRequest
) -> None:
    if device == "stand-in":
        request.getfixturevalue("fake_cupy")  # the CUDA stand-in
        device = "cuda"
    fn = BUILTIN[name].functional
    expected = _expected_or_skip(fn, sample, device)
    want = host(expected)
    # out=
    args, kwargs = sample.make(device)
    out = dt.zeros(expected.shape, dtype=expected.dtype, device=device)
    _check_out_written(mode, fn, args, kwargs, out, want, f"{name}{sample.id} out= under {mode}")
    # inplace
    if inplace_legal(name, sample, expected):
        args, kwargs = sample.make(device)
        self = args[0]
        before = host(self)
        context = f"{name}{sample.id} inplace under {mode}"
        try:
            with _MODES[mode]():
                inplace(name)(*args, **kwargs)  # type: ignore[misc]
        except (Warning, FloatingPointError):
            pass
        _same(host(self), want.astype(before.dtype), context)
        moved = not np.array_equal(before, host(self), equal_nan=True)
        assert self.version == 1 or (self.version == 0 and not moved), context


@pytest.mark.parametrize("rounding_mode", ["floor", "trunc", None])
def test_div_by_zero_from_the_issue(rounding_mode: Literal["floor", "trunc"] | None) -> None:
    for divisor in (0, dt.zeros(2)):
        x = dt.tensor([-7.0, 7.0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeWarning, match="divide by zero"):
                x.div_(divisor, rounding_mode=rounding_mode)
        np.testing.assert_array_equal(x.numpy(), [-np.inf, np.inf])
        assert x.version == 1


@pytest.mark.parametrize("op", ["var", "mean", "std"])
def test_reductions_with_out_write_before_they_warn(op: str) -> None:
    x = dt.tensor([1.0]) if op != "mean" else dt.zeros(0)
    out = dt.zeros(())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            getattr(dt, op)(x, out=out)
    assert np.isnan(out.numpy()) and out.version == 1


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize(("name", "sample"), list(_cases()))
def test_out_an_input_is_written_before_the_condition_raises(name: str, sample: Sample, mode: str) -> None:
    fn = BUILTIN[name].functional
    expected = _expected_or_skip(fn, sample, "cpu")
    want = host(expected)
    args, _ = sample.make("cpu")
    for i, j in out_positions(args, expected):
        args, kwargs = sample.make("cpu")
        out = args[i] if j is None else args[i][j]
        _check_out_written(mode, fn, args, kwargs, out, want, f"{name}{sample.id} out=argument {i} under {mode}")


def _expected_or_skip(fn: Callable[..., Any], sample: Sample, device: str) -> dt.Tensor:
    """The functional result for ``sample`` on ``device`` (conditions silenced); skips samples whose special
    values are bad input for the op, and ops with several results."""
    with _quiet():
        args, kwargs = sample.make(device)
        try:
            expected = fn(*args, **kwargs)
        except dt.DevtensorError:
            pytest.skip("the special values are bad input for this op")
    if not isinstance(expected, dt.Tensor):
        pytest.skip("several results")
    return expected


def _check_out_written(
    mode: str,
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    out: dt.Tensor,
    want: np.ndarray[Any, Any],
    context: str,
) -> None:
    """``fn(*args, **kwargs, out=out)`` under ``mode``: whether or not a floating-point condition is raised, out
    holds the result and its version moved once."""
    try:
        with _MODES[mode]():
            fn(*args, **kwargs, out=out)
    except (Warning, FloatingPointError):
        pass
    _same(host(out), want, context)
    assert out.version == 1, context


def _reciprocal_then_double_meta(self: Tensor) -> TensorSpec:
    return self.shape, self.dtype


@pytest.mark.usefixtures("remove_new_ops")
@pytest.mark.parametrize("mode", list(_MODES))
def test_a_custom_kernel_stopped_between_steps_is_run_to_the_end(mode: str) -> None:
    op = library.custom_op(unique("recip2"), inplace=False)(_reciprocal_then_double_meta)

    @op.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        r = np.divide(1.0, self.array)  # a temporary: divide by zero here stops the kernel before its write
        np.multiply(r, 2.0, out=out.array)

    x = dt.tensor([0.0, 2.0])
    out = dt.zeros(2)
    with pytest.raises((RuntimeWarning, FloatingPointError), match="divide by zero"), _MODES[mode]():
        op.functional(x, out=out)
    np.testing.assert_array_equal(out.numpy(), [np.inf, 1.0])
    assert out.version == 1 and x.version == 0
    # out an input (not flagged): a temporary, run to the end and copied in
    with pytest.raises((RuntimeWarning, FloatingPointError)), _MODES[mode]():
        op.functional(x, out=x)
    np.testing.assert_array_equal(x.numpy(), [np.inf, 1.0])
    assert x.version == 1


def test_a_deferred_condition_is_still_reported_once_as_numpy_does() -> None:
    x = dt.tensor([-7.0, 7.0, 0.0])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        x.div_(0, rounding_mode="trunc")
    kinds = sorted(str(w.message).split(" encountered")[0] for w in seen)
    assert kinds == ["divide by zero", "invalid value"], kinds
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        dt.sigmoid(dt.tensor([-1e308, 1e308]), out=dt.zeros(2))  # ignored: nothing reported


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dt.cumsum(dt.tensor([1e308, 1e308]), 0), "overflow encountered in cumsum"),
        (lambda: dt.cumprod(dt.tensor([1e200, 1e200]), 0), "overflow encountered in cumprod"),
        (lambda: dt.round(dt.tensor([1e308]), decimals=5), "overflow encountered in round"),
        (
            lambda: dt.div(dt.tensor([1.0]), dt.tensor([0.0]), rounding_mode="trunc"),
            "divide by zero encountered in div",
        ),
        (
            lambda: dt.addmm(dt.tensor([[1e308]]), dt.tensor([[1e308]]), dt.tensor([[1e308]])),
            "overflow encountered in addmm",
        ),
        (lambda: dt.add(dt.tensor([1e308]), dt.tensor([1e308]), alpha=2), "overflow encountered in add"),
    ],
)
def test_a_deferred_condition_raised_names_the_op(call: Callable[[], object], message: str) -> None:
    # Under np.errstate(all="raise") the error names the op, not the NumPy call that replays the condition.
    with np.errstate(all="raise"), pytest.raises(FloatingPointError, match=f"^{message}$"):
        call()


def test_a_deferred_condition_warns_at_the_callers_line() -> None:
    """devtensor reports a multi-step kernel's conditions itself (deferred_conditions): the RuntimeWarning is
    attributed to the caller's line, not to a line inside devtensor (README, "floating-point conditions")."""
    t = dt.tensor([3.0, 1.0, 2.0])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        dt.round(t, decimals=400)
        line = sys._getframe().f_lineno - 1
        t.div(0, rounding_mode="trunc")
    assert [str(w.message) for w in seen] == [
        "invalid value encountered",
        "divide by zero encountered",
        "invalid value encountered",
    ]
    assert {w.filename for w in seen} == {__file__}
    assert [w.lineno for w in seen] == [line, line + 2, line + 2]
    # Other np.errstate modes still go through NumPy (raise here), after the write.
    out = dt.zeros(3)
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        dt.round(t, decimals=400, out=out)
    assert out.version == 1
