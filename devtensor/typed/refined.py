"""Device-refined tensor types and the refinement functions that prove residency once.

``CPUTensor``, ``CUDATensor`` and ``MetaTensor`` are the run-time classes of every tensor: a tensor is created
as one of them and never changes class (no operation moves a tensor to another device in place). Refinement
is therefore one class check: ``as_cpu(t)`` returns ``t`` itself, typed ``CPUTensor``, or raises
:class:`~devtensor.errors.DeviceMismatchError` naming the expected and the actual device. ``is_cpu`` and
friends are ``TypeIs`` predicates that narrow in both branches.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from typing_extensions import TypeIs

from devtensor.device import Device, DeviceLike, as_device
from devtensor.errors import ArgumentTypeError, DeviceMismatchError
from devtensor.tensor import Tensor

if TYPE_CHECKING:
    import cupy

__all__ = [
    "CPUTensor",
    "CUDATensor",
    "MetaTensor",
    "as_cpu",
    "as_cuda",
    "as_meta",
    "is_cpu",
    "is_cuda",
    "is_meta",
]


class CPUTensor(Tensor):
    """A tensor proven to live on the CPU: ``array`` is its ``numpy.ndarray`` (shared memory, no copy)."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def array(self) -> np.ndarray[Any, np.dtype[Any]]:
            """The backing NumPy array (writes through it bypass the version counter)."""
            ...

    else:
        # A C-level getter: impls read ``.array`` on the hot path. No setter: the array is never swapped.
        array = property(
            attrgetter("_array"),
            doc="The backing NumPy array (writes bypass the version counter).",
        )

    @classmethod
    def refine(cls, tensor: Tensor) -> CPUTensor:
        """``tensor`` typed as CPUTensor. Raises DeviceMismatchError if it is not on the CPU."""
        return as_cpu(tensor)


class CUDATensor(Tensor):
    """A tensor proven to live on a CUDA device: ``array`` is its ``cupy.ndarray`` on ``device``."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def array(self) -> cupy.ndarray:
            """The backing CuPy array, on ``self.device`` (writes through it bypass the version counter)."""
            ...

    else:
        array = property(attrgetter("_array"), doc="The backing CuPy array, on ``self.device``.")

    @property
    def index(self) -> int:
        """The CUDA device ordinal (the ``N`` of ``cuda:N``)."""
        index = self._device.index
        assert index is not None  # CUDA tensors always live on an indexed device
        return index

    @classmethod
    def refine(cls, tensor: Tensor, device: DeviceLike | None = None) -> CUDATensor:
        """``tensor`` typed as CUDATensor (on ``device`` when given). Raises DeviceMismatchError otherwise."""
        return as_cuda(tensor, device)


class MetaTensor(Tensor):
    """A tensor on the ``meta`` device: shape and dtype, no data. Ops run their meta function only."""

    __slots__ = ()

    @classmethod
    def refine(cls, tensor: Tensor) -> MetaTensor:
        """``tensor`` typed as MetaTensor. Raises DeviceMismatchError if it is not a meta tensor."""
        return as_meta(tensor)


def _mismatch(fn: str, expected: str, tensor: object) -> DeviceMismatchError | ArgumentTypeError:
    if not isinstance(tensor, Tensor):
        return ArgumentTypeError(f"{fn}: expected a Tensor, got {type(tensor).__name__}")
    return DeviceMismatchError(f"{fn}: expected a tensor on {expected}, got one on {tensor.device}")


def as_cpu(tensor: Tensor) -> CPUTensor:
    """Refine ``tensor`` to :class:`CPUTensor` (returns the same object).

    Raises:
        DeviceMismatchError (a ValueError): the tensor is not on the CPU; names expected and actual device.
        ArgumentTypeError (a TypeError): ``tensor`` is not a Tensor.
    """
    if type(tensor) is CPUTensor:
        return tensor
    raise _mismatch("as_cpu", "cpu", tensor)


def as_cuda(tensor: Tensor, device: DeviceLike | None = None) -> CUDATensor:
    """Refine ``tensor`` to :class:`CUDATensor`, on ``device`` (e.g. ``"cuda:1"``) when given.

    Raises:
        DeviceMismatchError: not a CUDA tensor, or on another CUDA device than ``device``.
        ArgumentTypeError: ``tensor`` is not a Tensor.
    """
    if type(tensor) is CUDATensor:
        if device is None:
            return tensor
        want = as_device(device, op="as_cuda")
        if tensor._device is want:
            return tensor
        raise _mismatch("as_cuda", str(want), tensor)
    raise _mismatch("as_cuda", "cuda" if device is None else str(Device(device)), tensor)


def as_meta(tensor: Tensor) -> MetaTensor:
    """Refine ``tensor`` to :class:`MetaTensor`. Raises DeviceMismatchError / ArgumentTypeError otherwise."""
    if type(tensor) is MetaTensor:
        return tensor
    raise _mismatch("as_meta", "meta", tensor)


def is_cpu(tensor: Tensor) -> TypeIs[CPUTensor]:
    """Whether ``tensor`` is on the CPU; narrows it to :class:`CPUTensor` (and away from it in ``else``)."""
    return type(tensor) is CPUTensor


def is_cuda(tensor: Tensor) -> TypeIs[CUDATensor]:
    """Whether ``tensor`` is on a CUDA device; narrows it to :class:`CUDATensor`."""
    return type(tensor) is CUDATensor


def is_meta(tensor: Tensor) -> TypeIs[MetaTensor]:
    """Whether ``tensor`` is a meta tensor; narrows it to :class:`MetaTensor`."""
    return type(tensor) is MetaTensor


# ``Self`` is re-exported for kernel signatures that return their input type.
_ = Self
