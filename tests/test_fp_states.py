"""The cached floating-point states of the kernels (devtensor.kernels.ufunc_family: ``quiet`` and
``deferred_conditions``, set through NumPy's state variable instead of a new ``np.errstate`` per call): they
follow the caller's own settings as they change, nest, and leave the caller's state as it was."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import devtensor as dt
from devtensor.kernels.ufunc_family import deferred_conditions, quiet


def _overflow() -> None:
    np.multiply(np.full((), 1e308), np.full((), 10.0))


def _underflow() -> None:
    np.multiply(np.full((), 1e-308), np.full((), 1e-308))


def test_quiet_ignores_divide_invalid_over_and_keeps_the_callers_under() -> None:
    before = np.geterr()
    with np.errstate(all="raise"):
        with quiet():
            _overflow()  # (ignored)
            np.divide(np.ones(()), np.zeros(()))
            with pytest.raises(FloatingPointError):
                _underflow()  # (the caller's setting, raise)
        with pytest.raises(FloatingPointError):
            _overflow()  # (the caller's state again after the block)
    with np.errstate(under="ignore"), quiet():
        _underflow()  # (the caller's setting changed: a state derived anew)
    assert np.geterr() == before


def test_deferred_blocks_nest_and_report_once_the_outermost_ends() -> None:
    # (an inner block's report happens inside the outer one, which records it in turn: as with np.errstate)
    order: list[str] = []
    with np.errstate(all="call", call=lambda kind, flag: order.append(kind)):
        with deferred_conditions():
            _overflow()
            with deferred_conditions():
                np.divide(np.ones(()), np.zeros(()))
                order.append("inner body done")
            order.append("outer body done")
        _underflow()
    assert order == ["inner body done", "outer body done", "divide by zero", "overflow", "underflow"]


def test_deferred_reports_nothing_when_the_body_raises_and_restores_the_state() -> None:
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(KeyError), deferred_conditions():
            _overflow()
            raise KeyError("body")
    assert np.geterr() == before


def test_threads_record_their_own_conditions() -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(200):
                with np.errstate(over="raise"), pytest.raises(FloatingPointError), deferred_conditions():
                    _overflow()
                with np.errstate(all="raise"), deferred_conditions():
                    np.add(np.ones(()), np.ones(()))  # (no condition: nothing reported)
        except BaseException as e:  # pragma: no cover (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_softmax_and_cross_entropy_keep_the_callers_settings_outside() -> None:
    x = dt.tensor([[1e30, 0.0], [-np.inf, 1.0]], dtype=dt.float32)
    with np.errstate(divide="raise", over="raise", invalid="raise"):  # (the kernels keep the caller's under)
        assert np.isfinite(dt.softmax(x[1:], 1).numpy()).all()
        dt.cross_entropy(x, dt.tensor([0, 1]))
        with pytest.raises(FloatingPointError):
            _overflow()
