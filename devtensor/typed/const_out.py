"""The const-out type handed to impls: data may be written, metadata may not change.

An impl receives its output as ``ConstOut[CPUTensor]`` (or ``ConstOut[CUDATensor]``). Through it the impl reads
``shape``, ``dtype``, ``strides`` and ``device`` and writes the data through ``array``; it cannot resize,
restride, re-dtype or swap the storage of the real output. This holds at run time too: ``array`` is a fresh
view of the output's memory (reshaping or re-dtyping that view changes only the view, and a view cannot be
resized in place), and the ConstOut object rejects every attribute assignment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar, final, overload

import numpy as np

from devtensor.device import Device
from devtensor.dtypes import DType
from devtensor.tensor import Tensor

if TYPE_CHECKING:
    import cupy

    from devtensor.typed.refined import CPUTensor, CUDATensor

__all__ = ["ConstOut", "InplaceOut"]

# (no bound: the kernel Protocols' TypeVars are bounded by unions that are no Tensor, see devtensor.codegen.kernels)
T_co = TypeVar("T_co", covariant=True)


class _ArrayOf:
    """Types ``ConstOut[T].array`` as the backing array type of ``T`` (NumPy for CPU, CuPy for CUDA)."""

    @overload
    def __get__(self, obj: ConstOut[CPUTensor], owner: Any) -> np.ndarray[Any, np.dtype[Any]]: ...
    @overload
    def __get__(self, obj: ConstOut[CUDATensor], owner: Any) -> cupy.ndarray: ...
    @overload
    def __get__(self, obj: ConstOut[Tensor], owner: Any) -> Any: ...  # out-of-tree backends: their own arrays
    def __get__(self, obj: ConstOut[Any], owner: Any) -> Any:
        return obj._a

    def __set__(self, obj: OutArrayIsReadOnly, value: object) -> None:
        """For type checkers, no ConstOut is an ``obj`` here: ``out.array = a`` and ``out.array += a`` are errors
        (an impl writes into ``out.array[...]``; it cannot swap the output's storage for another array), whatever
        ``a``'s type, ``Any`` included (a ``value: Never`` would accept ``Any``)."""
        raise AttributeError("ConstOut: cannot assign 'array'")


@final
class OutArrayIsReadOnly:
    """Never instantiated: what ``ConstOut.array``'s setter takes, so that type checkers reject assigning
    ``out.array`` (write into it instead: ``out.array[...] = values``)."""


class ConstOut(Generic[T_co]):
    """The output of an impl, const in its metadata (PyTorch's ``const Tensor& out`` of structured kernels).

    Attributes: ``array`` (a view of the output's memory: write results into it, e.g. ``out=out.array``),
    ``shape``, ``dtype``, ``strides`` (elements), ``ndim``, ``device``. Assigning any attribute raises
    AttributeError. Built by the structured front only.
    """

    __slots__ = ("_a",)
    _a: Any

    if TYPE_CHECKING:
        array = _ArrayOf()
    else:
        array = property(lambda self: self._a)  # replaced below by the slot's own descriptor

    def __init__(self) -> None:
        raise TypeError("ConstOut is created by the structured front for an impl; it cannot be constructed")

    @property
    def shape(self) -> tuple[int, ...]:
        """The output's shape."""
        return self._a.shape  # type: ignore[no-any-return]

    @property
    def dtype(self) -> DType:
        """The output's dtype."""
        return self._a.dtype  # type: ignore[no-any-return]

    @property
    def ndim(self) -> int:
        """The output's number of dimensions."""
        return self._a.ndim  # type: ignore[no-any-return]

    @property
    def strides(self) -> tuple[int, ...]:
        """The output's strides in bytes, as NumPy's (and as ``Tensor.strides``)."""
        return tuple(self._a.strides)

    def stride(self) -> tuple[int, ...]:
        """The output's strides in elements, as PyTorch's ``stride()`` (and ``Tensor.stride()``)."""
        item = self._a.dtype.itemsize
        return tuple(s // item for s in self._a.strides)

    @property
    def device(self) -> Device:
        """The output's device (derived from the array: one slot less to fill per call)."""
        device = getattr(self._a, "device", None)
        if device is None or isinstance(device, str):
            return Device("cpu")
        return Device("cuda", int(device.id))

    def numel(self) -> int:
        """The output's number of elements."""
        return self._a.size  # type: ignore[no-any-return]

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"ConstOut: cannot assign '{name}': an impl may write the output's data, not its metadata")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"ConstOut: cannot delete '{name}'")

    def __repr__(self) -> str:
        return f"ConstOut(shape={self.shape}, dtype={self.dtype}, device='{self.device}')"


class _Built(ConstOut[Any]):
    """The run-time class of the ConstOuts the structured front builds (named ``ConstOut`` too).

    Only construction differs: ``_Built()`` runs C code alone (object's own ``__init__``), where the public
    class's raising ``__init__`` would make the front go through ``object.__new__(ConstOut)``, a slower call.
    The front builds one per op call.
    """

    __slots__ = ()
    __init__ = object.__init__


class InplaceOut(_Built):
    """The run-time class of the ConstOut of an inplace call (``self.add_(other)``): its array is a fresh view of
    ``self``'s memory, element for element, so a kernel may read ``self`` through it (``type(out) is
    InplaceOut``). That is worth it with NumPy: a ufunc takes its in-place fast path only when an input is the
    very array object it writes; given ``self``'s own array, another object over the same memory, it first
    analyses the overlap and takes its general path (about 0.2 us more per call, half the cost of the whole
    ufunc call at 100 elements)."""

    __slots__ = ()


_Built.__name__ = _Built.__qualname__ = InplaceOut.__name__ = InplaceOut.__qualname__ = "ConstOut"
#: ``new_const_out()``: an empty ConstOut for the front to fill with :data:`set_array`.
new_const_out: Callable[[], ConstOut[Any]] = _Built
# The slot descriptors write past ConstOut.__setattr__; only the structured front uses them.
set_array = ConstOut.__dict__["_a"].__set__
if not TYPE_CHECKING:
    # ``out.array`` reads the slot through its own (C-level) descriptor: impls read it on the hot path.
    # Assignment still goes through ConstOut.__setattr__, which rejects it.
    ConstOut.array = ConstOut.__dict__["_a"]


def make_const_out(array: Any) -> ConstOut[Any]:
    """The ConstOut over ``array``'s memory (a fresh view of it). The fronts inline this; it is
    here for fallbacks and tests."""
    c = new_const_out()
    set_array(c, array.view())
    return c
