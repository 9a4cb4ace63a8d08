"""Snapshots of tensor state for atomicity checks: a call that raises must leave every tensor as it was.

``snapshot(*tensors)`` records, through the public API only, each tensor's shape, dtype, device, strides,
version counter and (for tensors with data) a copy of its data and the address of its first element;
``assert_unchanged(snap)`` compares the tensors against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from devtensor import Tensor


@dataclass(frozen=True)
class TensorState:
    """What must survive a rejected call unchanged."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    device: str
    strides: tuple[int, ...]
    version: int
    data: np.ndarray[Any, Any] | None
    address: int | None


def state_of(t: Tensor) -> TensorState:
    """The current state of ``t`` (data copied, so later writes do not change the snapshot)."""
    data: np.ndarray[Any, Any] | None = None
    address: int | None = None
    if t.device.type == "cpu":
        view = t.numpy()
        data = view.copy()
        address = int(view.__array_interface__["data"][0])
    return TensorState(t.shape, t.dtype, str(t.device), t.stride(), t.version, data, address)


@dataclass(frozen=True)
class Snapshot:
    """States of several tensors, in order."""

    tensors: tuple[Tensor, ...]
    states: tuple[TensorState, ...]


def snapshot(*tensors: Tensor) -> Snapshot:
    """Record the state of every tensor in ``tensors``."""
    return Snapshot(tensors, tuple(state_of(t) for t in tensors))


def assert_unchanged(snap: Snapshot) -> None:
    """Fail, naming the tensor and the attribute, when any snapshotted tensor changed."""
    for i, (t, before) in enumerate(zip(snap.tensors, snap.states, strict=True)):
        after = state_of(t)
        for field in ("shape", "dtype", "device", "strides", "version", "address"):
            assert getattr(after, field) == getattr(before, field), (
                f"tensor #{i}: {field} changed from {getattr(before, field)!r} to {getattr(after, field)!r}"
            )
        if before.data is not None:
            assert after.data is not None
            np.testing.assert_array_equal(after.data, before.data, err_msg=f"tensor #{i}: data changed")
