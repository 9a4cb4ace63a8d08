"""library.check on view ops: meta shapes against the views, storage and version sharing, no write to the base,
the same values on every device; and the bad view kernels it catches (through library.override)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import library
from devtensor.dispatcher import DispatchKey

X = dt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, np.nan]])

SAMPLES: list[tuple[str, tuple[Any, ...]]] = [
    ("transpose", (X, 0, 1)),
    ("permute", (X, (1, 0))),
    ("reshape", (X, (3, 2))),
    ("reshape", (X.transpose(0, 1), (6,))),  # not viewable: a copy
    ("view", (X, (6,))),
    ("flatten", (X,)),
    ("squeeze", (dt.ones((1, 3)),)),
    ("unsqueeze", (X, 0)),
    ("expand", (dt.ones((1, 3)), (2, 3))),
    ("broadcast_to", (dt.ones(3), (2, 3))),
    ("contiguous", (X.transpose(0, 1),)),
    ("split", (X, 1, 1)),
    ("chunk", (X, 2)),
]


@pytest.mark.parametrize(("name", "args"), SAMPLES, ids=[f"{name}{i}" for i, (name, _) in enumerate(SAMPLES)])
def test_builtin_view_ops_pass_the_checker(name: str, args: tuple[Any, ...]) -> None:
    before = [np.array(a.numpy(), copy=True) for a in args if isinstance(a, dt.Tensor)]
    report = library.check(name, [(args, {})])
    assert report.ok, str(report)
    assert {key for _, key, _ in report.runs} >= {"cpu", "meta"}  # and any out-of-tree backend registered
    after = [a.numpy() for a in args if isinstance(a, dt.Tensor)]
    for old, new in zip(before, after, strict=True):  # the sample itself is never touched
        np.testing.assert_array_equal(old, new)


def test_expanded_views_are_noted_as_not_written() -> None:
    report = library.check("expand", [((dt.ones((1, 3)), (2, 3)), {})], keys=["cpu"])
    assert report.ok and any("not checked by a write" in line for line in report.skipped)


def _with_kernel(make: Callable[[Any], Callable[..., Any]]) -> library.CheckReport:
    kernel = library.get_op("transpose").table.kernels[DispatchKey.CPU]
    with library.override("transpose", "cpu", make(kernel)):
        return library.check("transpose", [((X, 0, 1), {})], keys=["cpu"])


def test_check_catches_a_view_kernel_returning_a_copy() -> None:
    def copying(kernel: Any) -> Callable[..., Any]:
        def fn(xp: ModuleType, array: Any, plan: Any) -> Any:
            return kernel(xp, array, plan).copy()

        return fn

    report = _with_kernel(copying)
    assert report.kinds() == {"result"} and "memory" in str(report)


def test_check_catches_a_view_kernel_writing_its_base() -> None:
    def writing(kernel: Any) -> Callable[..., Any]:
        def fn(xp: ModuleType, array: Any, plan: Any) -> Any:
            array[0, 0] = 100.0
            return kernel(xp, array, plan)

        return fn

    report = _with_kernel(writing)
    assert "mutation" in report.kinds(), str(report)


def test_check_catches_a_view_kernel_disagreeing_with_the_meta_shape() -> None:
    def flat(kernel: Any) -> Callable[..., Any]:
        def fn(xp: ModuleType, array: Any, plan: Any) -> Any:
            return array.reshape(-1)

        return fn

    report = _with_kernel(flat)
    assert "meta" in report.kinds() or "exception" in report.kinds(), str(report)
    with pytest.raises(AssertionError):
        report.raise_if_failed()


def test_check_of_a_view_op_compares_devices(fake_cupy: ModuleType) -> None:
    report = library.check("transpose", [((X, 0, 1), {})], keys=["cpu", "cuda", "meta"])
    assert report.ok, str(report)
    assert {key for _, key, _ in report.runs} == {"cpu", "cuda:0", "meta"}
