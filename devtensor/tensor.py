"""The generic user-facing :class:`Tensor` and the storage record its views share.

Every tensor object is, at run time, an instance of a device-refined subclass (``CPUTensor``, ``CUDATensor``,
``MetaTensor`` in :mod:`devtensor.typed`), chosen once when it is constructed. Code typed against ``Tensor``
sees the generic interface; a refinement (``as_cpu``, ``is_cpu``) proves the subclass and exposes the typed
backing array. No operation on a Tensor changes its device in place (``to``/``cpu``/``cuda`` return new
tensors), so a refined tensor seen as a ``Tensor`` keeps its invariant and upcasting is free.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from operator import attrgetter
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    NamedTuple,
    Protocol,
    Self,
    TypeAlias,
    TypeVar,
    overload,
    runtime_checkable,
)

import numpy as np

from devtensor import modes as _modes
from devtensor._generated_methods import TensorOpMethods
from devtensor.device import Device, DeviceLike, as_device
from devtensor.dtypes import DType, DTypeSpelling, Scalar, as_bool, to_dtype
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DLPackExportError,
    IndexOutOfRangeError,
    MemoryOverlapError,
    NoDataError,
    PlanError,
    ShapeError,
)
from devtensor.indexing import convert_index, set_items
from devtensor.storage import Storage
from devtensor.tensor_methods_multi import TensorMultiMethods
from devtensor.tensor_protocols import SizeInt, TensorProtocols, no_data

if TYPE_CHECKING:
    from devtensor.backends import Backend
    from devtensor.typed.refined import CPUTensor, CUDATensor, MetaTensor

__all__ = [
    "PlannedSpec",
    "Tensor",
    "TensorMeta",
    "TensorMetaOrScalar",
    "TensorOrScalar",
    "Storage",
    "TensorSpec",
]

_ndarray = np.ndarray


class Tensor(TensorProtocols, TensorOpMethods, TensorMultiMethods):
    """An n-dimensional array on a device, with a version counter shared by its views.

    Attributes (read-only): ``shape`` (tuple of ints), ``dtype`` (a NumPy dtype), ``device``
    (:class:`~devtensor.device.Device`), ``ndim``, ``strides`` (in elements, as PyTorch's ``stride()``),
    ``version`` (the shared version counter). Create tensors with :func:`devtensor.tensor`,
    :func:`devtensor.asarray`, :func:`devtensor.from_numpy`, :func:`devtensor.empty` and friends; ops are
    functions in :mod:`devtensor` and methods here.

    The generic Tensor does not expose its backing array; refine it first (``devtensor.typed.as_cpu``).
    """

    __slots__ = ("__weakref__", "_array", "_device", "_dtype", "_shape", "_storage", "_write_checked")
    _backend: ClassVar[Backend]
    _array: Any
    _device: Device
    _storage: Storage
    _shape: tuple[int, ...]
    _dtype: DType
    # True once checked writable with no internal overlap (or made so: fresh outputs); False means unknown.
    _write_checked: bool

    # (``__array_ufunc__`` and ``__array_function__``, NumPy's NEP 13/18 protocols: devtensor.numpy_protocols)

    def __init__(self) -> None:
        raise TypeError(
            "Tensor cannot be constructed directly; use devtensor.tensor, asarray, from_numpy, empty, zeros, …"
        )

    # --- metadata -------------------------------------------------------------------------------------

    if TYPE_CHECKING:

        @property
        def shape(self) -> tuple[int, ...]:
            """The shape, a tuple of non-negative ints."""
            return self._shape

        @property
        def dtype(self) -> DType:
            """The element dtype (a NumPy dtype)."""
            return self._dtype

        @property
        def device(self) -> Device:
            """The device the data lives on; fixed for the tensor's lifetime."""
            return self._device

        @property
        def ndim(self) -> int:
            """The number of dimensions."""
            return self._array.ndim  # type: ignore[no-any-return]

        @property
        def version(self) -> int:
            """The version counter, shared by every view of the same storage; each mutation bumps it by one."""
            return self._storage.version

    else:
        # C-level getters (no Python frame per read): meta functions and kernels read these on every call.
        shape = property(attrgetter("_shape"), doc="The shape, a tuple of non-negative ints.")
        dtype = property(attrgetter("_dtype"), doc="The element dtype (a NumPy dtype).")
        device = property(attrgetter("_device"), doc="The device the data lives on; fixed for the tensor's lifetime.")
        ndim = property(attrgetter("_array.ndim"), doc="The number of dimensions.")
        version = property(
            attrgetter("_storage.version"),
            doc="The version counter, shared by every view of the same storage; each mutation bumps it by one.",
        )

    @property
    def is_readonly(self) -> bool:
        """Whether writes through the tensor are refused: it wraps a read-only NumPy array, or its
        ``flags.writeable`` was set False."""
        return not self._backend.writeable(self._array)

    def numel(self) -> int:
        """The number of elements."""
        return self._array.size  # type: ignore[no-any-return]

    def dim(self) -> int:
        """The number of dimensions (same as ``ndim``)."""
        return self._array.ndim  # type: ignore[no-any-return]

    def element_size(self) -> int:
        """Bytes per element."""
        return self._array.dtype.itemsize  # type: ignore[no-any-return]

    def is_contiguous(self) -> bool:
        """Whether the elements are laid out C-contiguously (meta tensors: always)."""
        return self._backend.is_contiguous(self._array)

    # --- conversion -----------------------------------------------------------------------------------

    def numpy(self) -> np.ndarray[Any, Any]:
        """The data as a NumPy array sharing memory (CPU only, as PyTorch's ``Tensor.numpy``).

        Writes through the returned array bypass the version counter.

        Raises:
            TypeError: the tensor is on a CUDA device (call ``.cpu()`` first).
            NoDataError: the tensor is a meta tensor.
        """
        try:
            return self._backend.to_numpy_shared(self._array, self._device)
        except NoDataError as error:
            raise no_data("numpy()", error) from None

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        """NumPy's array protocol: CPU tensors convert (sharing memory unless ``copy`` or ``dtype`` asks);
        CUDA tensors raise a TypeError that says to call ``.cpu()`` first, as CuPy does; meta raise NoDataError."""
        try:
            arr = self._backend.to_numpy_shared(self._array, self._device)
        except NoDataError as error:
            raise no_data("__array__ (numpy.asarray)", error) from None
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ArgumentValueError("Tensor.__array__: a dtype change needs a copy, but copy=False was given")
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        return arr

    # Typed by overloads: a dtype alone (or no device) keeps the device and so the refined class (Self); the
    # device names "cpu", "cuda" and "meta" give that device's refined class; any other device a Tensor.
    @overload
    def to(
        self, device: Literal["cpu"], dtype: Any = None, non_blocking: bool = False, copy: bool = False
    ) -> CPUTensor: ...
    @overload
    def to(
        self, device: Literal["cuda"], dtype: Any = None, non_blocking: bool = False, copy: bool = False
    ) -> CUDATensor: ...
    @overload
    def to(
        self, device: Literal["meta"], dtype: Any = None, non_blocking: bool = False, copy: bool = False
    ) -> MetaTensor: ...
    @overload
    def to(self, dtype: DTypeSpelling, /, non_blocking: bool = False, copy: bool = False) -> Self: ...
    @overload
    def to(self, other: Tensor, /, non_blocking: bool = False, copy: bool = False) -> Tensor: ...
    @overload
    def to(self, device: None = None, dtype: Any = None, non_blocking: bool = False, copy: bool = False) -> Self: ...
    @overload
    def to(
        self,
        device: DeviceLike | DTypeSpelling | None = None,
        dtype: Any = None,
        non_blocking: bool = False,
        copy: bool = False,
    ) -> Tensor: ...
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """This tensor on ``device`` with ``dtype``; ``self`` when both match already and ``copy`` is False.

        PyTorch's three forms: ``to(device=None, dtype=None, non_blocking=False, copy=False)``, ``to(dtype,
        non_blocking=False, copy=False)`` and ``to(other, non_blocking=False, copy=False)`` (``other``'s device
        and dtype); each argument positional or by keyword. ``non_blocking`` is checked and has no effect (every
        copy completes before ``to`` returns). Moving never changes ``self``: the result is a new tensor with
        its own storage (version 0).

        Raises:
            ValueError / TypeError: an invalid device or dtype (as :class:`Device` and ``to_dtype``).
            ArgumentTypeError (TypeError): ``copy`` or ``non_blocking`` not a bool (a NumPy bool is taken as one);
                too many arguments, an unknown keyword, or one given twice.
            NoDataError: moving a meta tensor to a device with data.
        """
        from devtensor.backends import backend_for

        first = args[0] if args else kwargs.get("device")
        names: tuple[str, ...] = ("device", "dtype", "non_blocking", "copy")
        if args and (isinstance(first, Tensor) or _is_dtype_arg(first)):
            names = ("other" if isinstance(first, Tensor) else "dtype", "non_blocking", "copy")
        if len(args) > len(names):
            raise ArgumentTypeError(f"to: takes at most {len(names)} positional arguments, got {len(args)}")
        given = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in ("device", "dtype", "non_blocking", "copy"):
                raise ArgumentTypeError(f"to: got an unexpected keyword argument '{key}'")
            if key in given:
                raise ArgumentTypeError(f"to: got multiple values for argument '{key}'")
            given[key] = value
        other = given.get("other")
        device: Any = other._device if isinstance(other, Tensor) else given.get("device")
        dtype: Any = other.dtype if isinstance(other, Tensor) else given.get("dtype")
        if device is not None and _is_dtype_arg(device):
            if dtype is not None:
                raise ArgumentTypeError(f"to: argument 'device' must be a device, got {device!r}")
            device, dtype = None, device
        blocking: object = given.get("non_blocking", False)
        if blocking is not False and blocking is not True:
            as_bool("to", "non_blocking", blocking)
        copy: object = given.get("copy", False)
        if copy is not False and copy is not True:
            copy = as_bool("to", "copy", copy)
        target = self._device if device is None else as_device(device, op="to")
        target_dtype = self.dtype if dtype is None else to_dtype(dtype, op="to")
        if _modes.ACTIVE[0]:  # a static plan's tracer records conversions (devtensor.plan)
            made = _modes.run_indexing("convert", self, (None if device is None else target, target_dtype, copy))
            if made is not _modes.NOT_HANDLED:
                return made  # type: ignore[no-any-return]
        if target is self._device and target_dtype == self.dtype and not copy:
            return self
        dst = backend_for(target)
        array = dst.from_other(self._backend, self._array, target, target_dtype)
        return dst.wrap(array, target)

    # --- inplace view ops: PyTorch's squeeze_, unsqueeze_, transpose_, t_, swapdims_, swapaxes_ ------------

    def squeeze_(self, dim: int | Sequence[int] | None = None) -> Self:
        """Make ``self`` its own ``squeeze(dim)`` in place (PyTorch's ``Tensor.squeeze_``): ``self`` takes the
        view's shape and strides over the same memory; returns ``self``. Errors as :func:`devtensor.squeeze`."""
        return self._become(self.squeeze() if dim is None else self.squeeze(dim), "squeeze_")

    def unsqueeze_(self, dim: int) -> Self:
        """Make ``self`` its own ``unsqueeze(dim)`` in place (PyTorch's ``Tensor.unsqueeze_``); returns ``self``."""
        return self._become(self.unsqueeze(dim), "unsqueeze_")

    def transpose_(self, dim0: int, dim1: int) -> Self:
        """Swap dims ``dim0`` and ``dim1`` of ``self`` in place (PyTorch's ``Tensor.transpose_``); returns
        ``self``."""
        return self._become(self.transpose(dim0, dim1), "transpose_")

    def swapdims_(self, dim0: int, dim1: int) -> Self:
        """:meth:`transpose_` under PyTorch's other name."""
        return self._become(self.transpose(dim0, dim1), "swapdims_")

    def swapaxes_(self, axis0: int, axis1: int) -> Self:
        """:meth:`transpose_` under PyTorch's other name."""
        return self._become(self.transpose(axis0, axis1), "swapaxes_")

    def t_(self) -> Self:
        """Transpose a tensor of at most 2 dims in place (PyTorch's ``Tensor.t_``); returns ``self``.

        Raises:
            ShapeError: more than 2 dims.
        """
        if self.ndim > 2:
            raise ShapeError(f"t_: expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self._become(self.transpose(0, 1) if self.ndim == 2 else self, "t_")

    def _become(self, view: Tensor, op: str) -> Self:
        """Give ``self`` the shape and strides of ``view`` (a view of ``self``'s memory) and bump the version
        counter, as PyTorch's inplace view ops do (only the metadata changes; other views of the memory keep
        theirs). A static plan does not record metadata changes: there such a call raises PlanError."""
        if _modes.ACTIVE[0] and _modes.recording():
            raise PlanError(
                f"{op}: inplace view ops are not recorded by a static plan; use the functional {op[:-1]} instead"
            )
        self._array = view._array
        self._shape = view._shape
        self._storage.version += 1
        return self

    def cpu(self) -> CPUTensor:
        """This tensor on the CPU (``self`` if already there)."""
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> CUDATensor:
        """This tensor on ``cuda:device`` (the current CUDA device when None)."""
        return self.to(Device("cuda", device))  # type: ignore[return-value]  # (to() types a Device target as Tensor)

    def item(self) -> bool | int | float:
        """The single element as a Python number: a ``bool``, ``int``, ``float`` or ``complex`` by the dtype's kind.

        Typed ``bool | int | float``, as PyTorch types ``Tensor.item``: the static type cannot know the dtype, and
        including ``complex`` would reject correct real-valued code (``math.sqrt(t.item())``). A complex tensor's
        item is a ``complex`` at run time; code that handles complex tensors converts with ``complex(t.item())``.

        Raises:
            ValueError: the tensor does not have exactly one element.
            NoDataError: meta tensor.
        """
        array = self._array
        if array.size != 1:
            raise ArgumentValueError(
                f"item: a Tensor with {array.size} elements cannot be converted to a Python scalar"
            )
        if type(array) is _ndarray and self._backend.has_data:
            return array.item()  # type: ignore[no-any-return]  # (host memory: no conversion to make)
        try:
            return self._backend.to_numpy(array).item()  # type: ignore[no-any-return]
        except NoDataError as error:
            raise no_data("item()", error) from None

    def tolist(self) -> Any:
        """The data as (nested) Python lists of Python numbers; a 0-d tensor gives a number. Raises NoDataError
        for a meta tensor."""
        try:
            return self._backend.to_numpy(self._array).tolist()
        except NoDataError as error:
            raise no_data("tolist()", error) from None

    def __dlpack__(
        self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: bool | None = None
    ) -> Any:
        """The DLPack capsule of the data (zero-copy unless ``copy``), as the backing NumPy/CuPy array exports it;
        the keywords are the Array API standard's and are passed on when given.

        Raises:
            BufferError: meta tensors have no data to export; the exporter's own errors.
        """
        if self._device.key.name == "Meta":
            raise DLPackExportError("__dlpack__: a meta tensor has no data to export")
        given = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
        return self._array.__dlpack__(**{k: v for k, v in given.items() if v is not None})

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack device tuple ``(device_type, device_id)`` (1 = CPU, 2 = CUDA)."""
        if self._device.key.name == "Meta":
            raise DLPackExportError("__dlpack_device__: a meta tensor has no data to export")
        return tuple(self._array.__dlpack_device__())

    # --- indexing --------------------------------------------------------------------------------------

    def __getitem__(self, index: Any) -> Self:
        """Indexing as NumPy: ints, slices, ``None`` and ``...`` give a view sharing storage and version
        counter (0-d for a full integer index); an integer or bool Tensor (same device), NumPy array or list of
        ints or bools (as NumPy and PyTorch take them) gives a copy.

        Raises:
            IndexError: an index out of range or too many indices.
            ArgumentTypeError: an index of an unsupported type (floats, float arrays or lists…).
            DeviceMismatchError: a tensor index on another device.
            NoDataError: a bool tensor index on a meta tensor (the result shape depends on data).
        """
        if _modes.ACTIVE[0] and (hooked := _modes.run_indexing("getitem", self, (index,))) is not _modes.NOT_HANDLED:
            return hooked  # type: ignore[no-any-return]  # (a static plan's tracer records it)
        # The commonest indexes inline, t[i] and t[i, j] (a view; the trailing ... keeps a 0-d result an array).
        if type(index) is int:
            key: Any = (index, Ellipsis)
            is_view = True
        elif type(index) is tuple and len(index) == 2 and type(index[0]) is int and type(index[1]) is int:
            key = (*index, Ellipsis)
            is_view = True
        else:
            key, is_view = convert_index("__getitem__", index, self._device)
        device = self._device
        try:
            if device._guard is None:
                result = self._array[key]
            else:
                with device._guard():  # a tensor index gathers: a kernel on the tensor's device
                    result = self._array[key]
        except (IndexError, OverflowError) as e:  # (OverflowError: NumPy's for an int in [2**63, 2**64))
            why = e if isinstance(e, IndexError) else "index out of bounds"
            raise IndexOutOfRangeError(f"__getitem__: {why} (tensor of shape {self.shape}, index {index!r})") from None
        except ValueError as e:  # e.g. a zero slice step
            raise ArgumentValueError(f"__getitem__: {e} (index {index!r})") from None
        except TypeError as e:  # a slice bound that is no int (t[1.5:]): NumPy's message names no op
            raise ArgumentTypeError(f"__getitem__: {e} (index {index!r})") from None
        # (ignore: the backend wraps an array of this tensor's device in this tensor's refined class, i.e. Self; no
        # cast() call on this path)
        if is_view:
            return self._backend.wrap_view(result, self)  # type: ignore[return-value]
        if isinstance(result, np.generic):
            # NumPy gives a scalar for a 0-d integer array index; a tensor holds an array.
            result = np.array(result)
        return self._backend.wrap(result, device)  # type: ignore[return-value]

    def __setitem__(self, index: Any, value: Tensor | Scalar | np.ndarray[Any, Any] | np.generic) -> None:
        """Write ``value`` into the indexed elements (NumPy's and PyTorch's indexing; bumps the version once). See
        :func:`devtensor.indexing.set_items` for the casting rules and the errors."""
        set_items(self, index, value)

    # --- Python protocol --------------------------------------------------------------------------------

    # Tensors compare elementwise (``==`` is the ``eq`` op), so hashing is by identity, as in PyTorch.
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return self._backend.repr(self)

    def __reduce__(self) -> tuple[Any, ...]:
        from devtensor.creation import _rebuild, _rebuild_without_data

        if not self._backend.has_data:
            return (_rebuild_without_data, (self._shape, self._dtype.str, str(self._device)))
        return (_rebuild, (self._backend.to_numpy(self._array), str(self._device)))


@runtime_checkable
class TensorMeta(Protocol):
    """What a meta function may read of a tensor argument: its metadata, never its data.

    Annotate a meta function's tensor parameters with ``TensorMeta`` (or ``TensorMetaOrScalar``,
    ``Sequence[TensorMeta]``) instead of ``Tensor``: the op's schema is the same (its variants take Tensors), and
    mypy then rejects a meta function that reads data (``.numpy()``, ``.item()``, indexing, ``.array``…). Every
    Tensor satisfies it.
    """

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> DType: ...
    @property
    def ndim(self) -> int: ...
    @property
    def device(self) -> Device: ...
    @property
    def strides(self) -> tuple[int, ...]: ...
    @overload
    def stride(self) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...
    def numel(self) -> int: ...
    def dim(self) -> int: ...
    @property
    def size(self) -> SizeInt: ...


#: A tensor argument of a meta function that may also be a Python number.
TensorMetaOrScalar: TypeAlias = TensorMeta | bool | int | float | complex
#: A tensor argument that may also be a Python number (NumPy-style: ``add(2, t)`` works).
TensorOrScalar: TypeAlias = Tensor | bool | int | float | complex
#: What a meta function returns: the result's shape and dtype.
TensorSpec: TypeAlias = tuple[tuple[int, ...], DType]

_P = TypeVar("_P")


class PlannedSpec(NamedTuple, Generic[_P]):
    """What a meta function annotated ``-> PlannedSpec[P]`` returns: the result's shape and dtype, as a
    :data:`TensorSpec`, plus a *plan* of type ``P`` that the kernel receives as its keyword-only ``plan``
    argument (torchgen's ``precomputed``: normalised dims, the result dtype, a scale…), so the kernel does not
    recompute what the meta function knows. Meta tensors run the meta function only; their plan is dropped.

    Attributes:
        shape: the result's shape (a tuple of non-negative ints).
        dtype: the result's dtype.
        plan: anything the kernel needs; its type is the ``P`` of the annotation (codegen types the kernel's
            ``plan`` parameter with it).
    """

    shape: tuple[int, ...]
    dtype: DType
    plan: _P


def _device_guard(device: Device) -> AbstractContextManager[Any]:
    """The device guard of ``device`` (CUDA: make it current), or a no-op context for devices without one."""
    guard = device._guard
    return guard() if guard is not None else nullcontext()


def _is_dtype_arg(value: object) -> bool:
    """Whether ``Tensor.to``'s first argument stands for a dtype rather than a device: anything but a Device, an
    int ordinal or a device string (a bool is no ordinal), or a string naming a dtype."""
    if isinstance(value, str):
        return _names_dtype(value)
    return value is not None and (not isinstance(value, (Device, int)) or isinstance(value, bool))


def _names_dtype(spec: str) -> bool:
    try:
        np.dtype(spec)
    except TypeError:
        return False
    return True


class _Target:
    """Adapts a bare array to the ``_array`` attribute :func:`check_no_internal_overlap` reads."""

    __slots__ = ("_array",)

    def __init__(self, array: Any) -> None:
        self._array = array


# Re-exported for the front; defined here to keep the check beside the Tensor it is about.
def check_no_internal_overlap(op: str, arg: str, tensor: Tensor | _Target) -> None:
    """Raise :class:`MemoryOverlapError` when more than one element of ``tensor`` shares memory (a stride-0
    dimension of length > 1, as from ``expand``): such a tensor cannot be written to elementwise.

    A tensor with no elements has nothing to overlap (NumPy gives fresh zero-size arrays all-zero strides).
    """
    shape: tuple[int, ...] = tensor._array.shape
    if 0 in shape:
        return
    for n, s in zip(shape, tensor._array.strides, strict=False):
        if s == 0 and n > 1:
            raise MemoryOverlapError(
                f"{op}: unsupported operation: more than one element of argument '{arg}' refers to a single "
                "memory location (a broadcast or expanded tensor); call .clone() before writing to it"
            )
