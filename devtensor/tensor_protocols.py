"""Tensor attributes and Python protocols that are not ops: ``.T``, ``.mT``, ``.size``, ``.strides`` (bytes, as
NumPy's), ``stride()`` (elements, as PyTorch's), ``.flags`` (NumPy's, live; ``writeable`` settable), ``swapaxes``,
``.real``, ``.imag``, ``bool()``, ``float()``, ``int()``, ``complex()``, ``operator.index()``, ``in``, ``ravel``,
``astype``, ``to_device``,
``format()``, ``round()`` and ``divmod()``.

:class:`TensorProtocols` is a mixin of :class:`devtensor.tensor.Tensor` (kept apart from ``tensor.py`` by concern).
Their semantics follow the Python array API standard (2024.12) where it defines them (``.T``, ``.mT``, ``astype``,
``to_device``), and PyTorch for ``round(t)`` (a tensor, not a number). Weak references (``weakref.ref(t)``) work for
every tensor class through ``Tensor.__weakref__``; ``memoryview(t)`` is refused with Python's TypeError, as the
buffer protocol cannot be implemented in Python on 3.11 (use ``t.numpy()`` or ``np.asarray(t)``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final, Self, cast, overload

import numpy as np

from devtensor import modes
from devtensor.device import DeviceLike, as_device
from devtensor.dtypes import as_bool, to_dtype
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DevtensorError,
    IndexOutOfRangeError,
    NoDataError,
    ShapeError,
    as_called,
    short_repr,
)

if TYPE_CHECKING:
    from devtensor.tensor import Tensor

__all__ = ["SizeInt", "TensorFlags", "TensorProtocols", "no_data"]

_ndarray = np.ndarray


class SizeInt(int):
    """A tensor's ``size``: the number of elements, an ``int`` (NumPy's and the array API standard's ``x.size``,
    which Dask reads of its chunks), that is also callable as PyTorch's ``size()`` (the shape, a tuple of ints)
    and ``size(dim)`` (the length of one dim, negative counting from the end).

    Typed soundly: a subclass of ``int`` (``t.size == 0``, ``t.size * 2``, ``range(t.size)``), with
    ``__call__`` overloads (``size()`` a ``tuple[int, ...]``, ``size(d)`` an ``int``). Arithmetic on it gives
    plain ints.
    """

    _shape: tuple[int, ...]

    @overload
    def __call__(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def __call__(self, dim: int) -> int: ...
    def __call__(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the length of dimension ``dim`` (PyTorch's ``Tensor.size``).

        Raises:
            IndexOutOfRangeError (IndexError): ``dim`` is out of range (a 0-d tensor has no dimension to ask for).
            ArgumentTypeError (TypeError): ``dim`` is not an int.
        """
        shape = self._shape
        if dim is None:
            return shape
        from devtensor.meta import normalize_dim  # (meta imports tensor)

        if not shape:
            normalize_dim("size", dim, 0)  # type errors first, as for any other tensor
            raise IndexOutOfRangeError(f"size: dimension specified as {dim} but the tensor has no dimensions")
        return shape[normalize_dim("size", dim, len(shape))]


#: transpose's handler table and built-in kernel (set by devtensor.kernels.shape): while that kernel is the
#: handler and no dispatch mode is active, ``x.T`` makes the view itself.
TRANSPOSE_2D: list[Any] = [None, None]
_MODES: Final = modes.ACTIVE
_new_object: Final = object.__new__


class TensorFlags:
    """A tensor's ``flags``: NumPy's ``ndarray.flags``, live (each read asks the tensor): ``c_contiguous``
    (``contiguous``, NumPy's alias), ``f_contiguous`` and ``writeable``, also as NumPy's keys (``flags["C"]``,
    ``flags["WRITEABLE"]``...).

    ``writeable`` can be set, as NumPy's: ``t.flags.writeable = False`` makes the tensor read-only (every later
    write through it, an inplace op, an ``out=``, ``t[...] = v``, raises ReadOnlyError; other tensors over the same
    memory keep theirs, and views made from it afterwards are read-only too, as NumPy's views); ``True`` makes it
    writable again where its memory allows it, else ValueError (ArgumentValueError: read-only memory, a broadcast
    view). CUDA tensors are always writable (CuPy arrays have no such flag) and meta tensors have no memory to
    protect: ``False`` on either is ArgumentValueError, ``True`` changes nothing. The other flags are read-only:
    setting one is AttributeError naming it, as NumPy's.
    """

    __slots__ = ("_tensor",)
    _tensor: Tensor

    _KEYS: Final = {
        "C_CONTIGUOUS": "c_contiguous",
        "C": "c_contiguous",
        "CONTIGUOUS": "c_contiguous",
        "F_CONTIGUOUS": "f_contiguous",
        "F": "f_contiguous",
        "FORTRAN": "f_contiguous",
        "WRITEABLE": "writeable",
        "W": "writeable",
    }

    def __init__(self, tensor: Tensor) -> None:
        object.__setattr__(self, "_tensor", tensor)

    def _layout(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        t = self._tensor
        return t._shape, t._backend.element_strides(t._array)

    @property
    def c_contiguous(self) -> bool:
        """Whether the elements are in C order without gaps (dims of size 1 free), as NumPy's flag."""
        shape, strides = self._layout()
        return _dense(shape, strides)

    @property
    def contiguous(self) -> bool:
        """NumPy's alias of ``c_contiguous``."""
        return self.c_contiguous

    @property
    def f_contiguous(self) -> bool:
        """Whether the elements are in Fortran order without gaps, as NumPy's flag."""
        shape, strides = self._layout()
        return _dense(shape[::-1], strides[::-1])

    @property
    def writeable(self) -> bool:
        """Whether writes through the tensor are allowed (always True on CUDA and meta tensors)."""
        return not self._tensor.is_readonly

    @writeable.setter
    def writeable(self, value: bool) -> None:
        t = self._tensor
        flag = as_bool("flags", "writeable", value)
        t._backend.set_writeable(t._array, flag, str(t._device))
        t._write_checked = False  # (the lanes' cached check: the next write checks again)

    def __setattr__(self, name: str, value: object) -> None:
        if name == "writeable":
            object.__setattr__(self, name, value)
            return
        raise AttributeError(
            f"flags: attribute '{name}' cannot be set (of a tensor's flags only 'writeable' can, as NumPy's)"
        )

    def _key(self, key: object) -> str:
        name = self._KEYS.get(key.upper()) if isinstance(key, str) else None
        if name is None:
            raise KeyError(f"flags: unknown flag {short_repr(key)} (known: {', '.join(self._KEYS)})")
        return name

    def __getitem__(self, key: str) -> bool:
        """NumPy's item form: ``flags["C_CONTIGUOUS"]``, ``flags["W"]``, ... (KeyError for another key)."""
        return bool(getattr(self, self._key(key)))

    def __setitem__(self, key: str, value: bool) -> None:
        """``flags["WRITEABLE"] = value`` (``"W"``), as the attribute; KeyError for an unknown key, AttributeError for
        another flag."""
        setattr(self, self._key(key), value)

    def __repr__(self) -> str:
        return "\n".join(
            f"  {key} : {getattr(self, name)}"
            for key, name in (
                ("C_CONTIGUOUS", "c_contiguous"),
                ("F_CONTIGUOUS", "f_contiguous"),
                ("WRITEABLE", "writeable"),
            )
        )


def _dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether elements ``strides`` apart in ``shape`` are in C order without gaps (dims of size 1 are free)."""
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if n != 1 and s != expected:
            return n == 0 or 0 in shape
        expected *= n
    return True


def no_data(call: str, error: NoDataError) -> NoDataError:
    """``error`` (a backend's "no data", or an inner call's) as raised by ``call`` (``"numpy()"``, ``"bool()"``):
    the message names the call the user made."""
    text = str(error)
    for inner in ("item(): ", "numpy(): ", "tolist(): "):
        text = text.removeprefix(inner)
    return NoDataError(f"{call}: {text}")


def _item(t: Tensor, call: str) -> Any:
    """``t.item()`` for the conversion ``call`` (``"bool()"``, ``"float()"``): a meta tensor's NoDataError names
    ``call``."""
    try:
        return t.item()
    except NoDataError as error:
        raise no_data(call, error) from None


class TensorProtocols:
    """The mixin of :class:`~devtensor.tensor.Tensor` with its array API attributes and Python protocols."""

    __slots__ = ()

    @property
    def T(self) -> Tensor:
        """The transpose of a 2-d tensor, a view sharing storage and version counter (``x.T`` of the array API
        standard, which defines it for two dims only).

        Raises:
            ShapeError (ValueError): the tensor is not 2-d (use ``.mT`` or ``permute`` for other ranks).
        """
        t: Tensor = self  # type: ignore[assignment]  # (a Tensor: this is its mixin; no cast() call per use)
        if len(t._shape) != 2:
            raise ShapeError(
                f"T: the tensor must have 2 dims, got {t.ndim} (shape {list(t.shape)}); use .mT or permute"
            )
        handlers, kernel = TRANSPOSE_2D
        if not _MODES[0] and handlers is not None and handlers.get(t._device.key) is kernel:
            # What transpose's front makes while its built-in kernel is the handler (the kernel's view of a 2-d
            # array is array.T), without the front's argument checks and meta lookup; Backend.wrap_view inline.
            view = _new_object(type(t))  # (a tensor's class is its backend's tensor_class)
            view._array = t._array.T
            view._device = t._device
            view._storage = t._storage
            rows, cols = t._shape
            view._shape = (cols, rows)
            view._dtype = t._dtype
            view._write_checked = False
            return view
        return t.transpose(0, 1)

    @property
    def mT(self) -> Tensor:
        """The last two dims swapped, a view sharing storage and version counter (``x.mT`` of the array API
        standard: a stack of matrices, each transposed).

        Raises:
            ShapeError (ValueError): the tensor has fewer than 2 dims.
        """
        t = cast("Tensor", self)
        if t.ndim < 2:
            raise ShapeError(f"mT: the tensor must have at least 2 dims, got {t.ndim} (shape {list(t.shape)})")
        return t.transpose(-2, -1)

    @property
    def size(self) -> SizeInt:
        """The number of elements as an ``int`` that is also PyTorch's ``size()`` method: ``t.size`` is NumPy's
        and the array API's attribute (``t.size == t.numel()``), ``t.size()`` the shape and ``t.size(dim)`` the
        length of one dim (:class:`SizeInt`; docs/design.md says why one name serves both)."""
        t = cast("Tensor", self)
        size = SizeInt(t._array.size)
        size._shape = t._shape
        return size

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in bytes, as NumPy's ``ndarray.strides`` (NumPy's name, NumPy's meaning; PyTorch's
        :meth:`stride` counts elements). Meta tensors report the C-contiguous strides of their shape."""
        t = cast("Tensor", self)
        item = t._dtype.itemsize
        return tuple(s * item for s in t._backend.element_strides(t._array))

    @overload
    def stride(self) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...
    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Strides in elements, PyTorch's ``Tensor.stride()``: all of them as a tuple, or ``stride(dim)`` one
        dim's (negative dims count from the end). Meta tensors report the C-contiguous strides of their shape.

        Raises:
            ArgumentTypeError (TypeError): ``dim`` not an int.
            IndexOutOfRangeError (IndexError): ``dim`` out of range (a 0-d tensor has no dim, as PyTorch's).
        """
        t = cast("Tensor", self)
        strides = t._backend.element_strides(t._array)
        if dim is None:
            return strides
        from devtensor.meta import normalize_dim  # (meta imports tensor)

        if len(strides) == 0:
            normalize_dim("stride", dim, 0)  # (type errors first)
            raise IndexOutOfRangeError(f"stride: a 0-d tensor has no dimensions, got dim {dim}")
        return strides[normalize_dim("stride", dim, len(strides))]

    @property
    def real(self) -> Tensor:
        """The real part (PyTorch's and NumPy's ``t.real`` attribute): ``self`` itself for a real or integer
        tensor (as PyTorch's and NumPy's); for a complex tensor its real part as new memory of the component dtype
        (float32 for complex64, float64 for complex128), the op ``real`` (``dt.real(t)``). Unlike PyTorch's, the
        complex case is not a view (devtensor's views keep their base's dtype), so writes to it do not reach
        ``self``."""
        t = cast("Tensor", self)
        if t.dtype.kind != "c":
            return t
        from devtensor.kernels.complex_parts import real as real_op  # (the kernels import tensor)

        return real_op.functional(t)

    @property
    def imag(self) -> Tensor:
        """The imaginary part of a complex tensor (PyTorch's and NumPy's ``t.imag`` attribute): new memory of the
        component dtype (the op ``imag``, ``dt.imag(t)``; not a view, as for :attr:`real`).

        Raises:
            ArgumentTypeError (TypeError): the tensor is not complex (as PyTorch, which raises for real dtypes;
                ``dt.imag(t)`` gives zeros there, the Array API standard's rule).
        """
        t = cast("Tensor", self)
        if t.dtype.kind != "c":
            raise ArgumentTypeError(
                f"imag: the attribute is defined for complex tensors only, got dtype {t.dtype} (dt.imag(t) gives "
                "zeros for real dtypes)"
            )
        from devtensor.kernels.complex_parts import imag as imag_op

        return imag_op.functional(t)

    def __len__(self) -> int:
        """The length of the first dimension. Raises ArgumentTypeError (a TypeError, as PyTorch's) for a 0-d
        tensor."""
        t: Tensor = self  # type: ignore[assignment]  # (as in __float__: no cast() call)
        shape: tuple[int, ...] = t._array.shape
        if not shape:
            raise ArgumentTypeError("len(): a 0-d tensor has no length (use .item() or .numel())")
        return shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        """Views of ``self[0]``, ``self[1]``, … (sharing the version counter). Raises ArgumentTypeError (a
        TypeError) for a 0-d tensor when ``iter()`` is called, as PyTorch does, not at the first ``next()``."""
        t: Tensor = self  # type: ignore[assignment]
        if not t._array.shape:
            raise ArgumentTypeError("iter(): iteration over a 0-d tensor (use .item())")
        return (t[i] for i in range(t._array.shape[0]))

    def __bool__(self) -> bool:
        """The truth of the single element. Raises ValueError when there is not exactly one element."""
        t = cast("Tensor", self)
        if t.numel() != 1:
            raise ArgumentValueError(
                f"bool(): the truth value of a Tensor with {t.numel()} elements is ambiguous; use .any() or .all()"
            )
        return bool(_item(t, "bool()"))

    def __float__(self) -> float:
        t: Tensor = self  # type: ignore[assignment]  # (as in T)
        array = t._array
        if array.size == 1 and type(array) is _ndarray and t._backend.has_data:
            return float(array.item())  # (item's common case inline: the scalar exit of every training step)
        return float(_item(t, "float()"))

    def __int__(self) -> int:
        return int(_item(cast("Tensor", self), "int()"))

    def __complex__(self) -> complex:
        return complex(_item(cast("Tensor", self), "complex()"))

    def __index__(self) -> int:
        t = cast("Tensor", self)
        if t.numel() != 1 or t.dtype.kind not in "iub":
            raise ArgumentTypeError(
                f"__index__: only integer tensors of a single element can be converted to an index (got a "
                f"{t.dtype} tensor of shape {list(t.shape)})"
            )
        return int(_item(t, "__index__"))

    def __contains__(self, element: object) -> bool:
        """``element in t``: whether any element of ``t`` equals ``element`` (a Python or NumPy number, or a
        tensor broadcast against ``t``), ``(t == element).any()`` as PyTorch's and NumPy's ``__contains__``.

        Raises:
            ArgumentTypeError (TypeError): ``element`` is neither a number nor a tensor (as PyTorch).
            DeviceMismatchError, ShapeError: as ``eq`` for a tensor ``element``.
        """
        from devtensor.tensor import Tensor

        t = cast("Tensor", self)
        if not isinstance(element, (Tensor, int, float, complex, np.number, np.bool_)):
            raise ArgumentTypeError(
                f"__contains__: 'in' takes a tensor or a number, got {type(element).__name__} {short_repr(element)}"
            )
        return bool(t.eq(cast(Any, element)).any())  # (eq takes NumPy numbers too)

    def ravel(self) -> Tensor:
        """The elements as a 1-d tensor in C order: a view when the layout allows one, else a copy (PyTorch's
        and NumPy's ``ravel``, ``reshape(-1)``)."""
        return cast("Tensor", self).reshape(-1)

    def swapaxes(self, axis0: int, axis1: int, /) -> Tensor:
        """Dims ``axis0`` and ``axis1`` swapped, a view (PyTorch's and NumPy's ``swapaxes``: ``transpose(axis0,
        axis1)``, whose errors it raises: IndexOutOfRangeError for a dim out of range, ArgumentTypeError for one
        that is not an int)."""
        return cast("Tensor", self).transpose(axis0, axis1)

    @property
    def flags(self) -> TensorFlags:
        """NumPy's ``ndarray.flags`` (:class:`TensorFlags`), live: the layout and whether the tensor may be
        written; ``t.flags.writeable = False`` makes it read-only, as NumPy's. Meta tensors report C-contiguous."""
        return TensorFlags(cast("Tensor", self))

    def astype(self, dtype: Any, /, *, copy: bool = True) -> Self:
        """This tensor's values as ``dtype`` on the same device (the array API's ``astype``; values cast as
        NumPy's ``astype`` and ``Tensor.to`` cast them, unsafe casting). ``copy=True`` (the default) always
        returns a new tensor; ``copy=False`` returns ``self`` when it has ``dtype`` already.

        Raises:
            ArgumentTypeError (TypeError): ``dtype`` names no supported dtype, or ``copy`` is not a bool.
        """
        t = cast("Tensor", self)
        target = to_dtype(dtype, op="astype")
        copy = as_bool("astype", "copy", copy)
        return cast(Self, t.to(target, copy=copy))

    def to_device(self, device: DeviceLike, /, *, stream: Any = None) -> Tensor:
        """This tensor on ``device`` (the array API's ``to_device``; ``self`` when it is there already, else a
        copy, as ``Tensor.to(device)``). ``stream``: None, or on a CUDA ``device`` a CuPy stream (any context
        manager that makes a stream current, such as ``cupy.cuda.Stream``) that the copy is issued on.

        Raises:
            ArgumentValueError (ValueError): a ``stream`` other than None for a CPU or meta device, which has none.
            ValueError / TypeError: an invalid device (as :class:`~devtensor.device.Device`).
            NoDataError: moving a meta tensor to a device with data.
        """
        t = cast("Tensor", self)
        target = as_device(device, op="to_device")
        if stream is None:
            return t.to(target)
        if target.type != "cuda":
            raise ArgumentValueError(
                f"to_device: argument 'stream' must be None for device '{target}', got {type(stream).__name__}"
            )
        with stream:
            return t.to(target)

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The Array API namespace: :mod:`devtensor.array_api` for ``api_version`` None or "2024.12"; for
        "2023.12" a namespace reporting that version (:func:`devtensor.array_api.namespace_for`).

        Raises:
            ArgumentValueError: another ``api_version`` (the standard's ValueError).
        """
        from devtensor.array_api import namespace_for  # (it imports the ops)

        return namespace_for(api_version)

    def __format__(self, spec: str) -> str:
        """``format(t, spec)`` and f-strings: a 0-d tensor formats its item (``f"{t:.2f}"``); an empty spec
        gives ``str(t)`` for any tensor.

        Raises:
            ArgumentTypeError (TypeError): a non-empty spec for a tensor that is not 0-d (its elements have no
                one format). ArgumentValueError (ValueError): a spec the item's type refuses (``"q"``).
            NoDataError: a non-empty spec for a meta tensor.
        """
        t = cast("Tensor", self)
        if t.ndim == 0:
            if not spec:
                return str(t)
            item = t.item()
            try:
                return format(item, spec)
            except (ValueError, TypeError) as e:  # (Python's message names the item's type, not the tensor)
                kind = ArgumentValueError if isinstance(e, ValueError) else ArgumentTypeError
                raise kind(
                    f"__format__: format string {spec!r} does not apply to a 0-d tensor of dtype {t.dtype} "
                    f"(its item is a {type(item).__name__}: {e})"
                ) from None
        if spec:
            raise ArgumentTypeError(
                f"__format__: unsupported format string {spec!r} for a Tensor of shape {list(t.shape)}: only 0-d "
                "tensors take a format spec (format t.item(), or t.tolist())"
            )
        return str(t)

    def __divmod__(self, other: Any) -> tuple[Tensor, Tensor]:
        """``divmod(t, other)``: ``(t // other, t % other)`` (Python's and ``np.divmod``'s: floor division and
        the remainder with the divisor's sign), two new tensors (the ops ``div(rounding_mode="floor")`` and
        ``remainder``; ``other`` a tensor or a number, broadcast). Raises as those ops, the error naming
        ``divmod``. Where exactly one float operand is infinite the quotient is the Array API standard's
        ``floor(t / other)`` (the ``div`` op's choice): ``divmod(1.0, -inf)`` gives -0.0, not Python's and NumPy's
        -1.0."""
        t = cast("Tensor", self)
        try:
            return t // other, t % other
        except DevtensorError as error:
            raise as_called(error, None, "divmod") from None

    def __rdivmod__(self, other: Any) -> tuple[Tensor, Tensor]:
        """``divmod(number, t)``: ``(number // t, number % t)``, as :meth:`__divmod__`."""
        t = cast("Tensor", self)
        try:
            return other // t, other % t
        except DevtensorError as error:
            raise as_called(error, None, "divmod") from None

    def __round__(self, ndigits: int | None = None) -> Tensor:
        """``round(t)`` and ``round(t, n)``: a new tensor rounded halves to even, of ``t``'s dtype (as
        PyTorch's, not a Python number; the ``round`` op with ``decimals=ndigits or 0``)."""
        from devtensor.kernels.bitwise import round as round_op

        return round_op.functional(self, decimals=0 if ndigits is None else ndigits)

    def allclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        """Whether every element is close to ``other``'s: :func:`devtensor.allclose` (``torch.Tensor.allclose``;
        values as ``np.allclose``), a Python bool."""
        from devtensor.kernels.closeness import allclose

        return allclose(cast("Tensor", self), other, rtol, atol, equal_nan)

    # (last in the class: from here on ``type`` in this class's namespace is the method)
    @overload
    def type(self, dtype: None = None, non_blocking: bool = False) -> str: ...
    @overload
    def type(self, dtype: Any, non_blocking: bool = False) -> Self: ...
    def type(self, dtype: Any = None, non_blocking: bool = False) -> str | Self:
        """PyTorch's ``Tensor.type``: with ``dtype`` (any form ``dtype=`` takes), this tensor's values as that dtype,
        ``self`` when it has it already (``Tensor.to(dtype)``: NumPy's unsafe cast); without, the type's name,
        ``"devtensor.<dtype name>"`` (PyTorch's names its legacy tensor class, such as ``"torch.FloatTensor"``).
        ``non_blocking`` is accepted and has no effect.

        Raises:
            ArgumentTypeError (TypeError): ``dtype`` names no supported dtype (PyTorch's type-name strings, such
                as ``"torch.FloatTensor"``, included); ``non_blocking`` not a bool.
        """
        t = cast("Tensor", self)
        as_bool("type", "non_blocking", non_blocking)
        if dtype is None:
            return f"devtensor.{t.dtype.name}"
        return cast(Self, t.to(to_dtype(dtype, op="type")))
