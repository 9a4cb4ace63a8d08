"""A NumPy-backed stand-in for the part of CuPy that devtensor uses, so the CUDA paths run without a GPU.

The ``fake_cupy`` fixture (``tests/conftest.py``) installs this module as ``sys.modules['cupy']`` for one test;
``devtensor.backends.cupy_module()`` then returns it, and devtensor's CUDA backend, device guard and CUDA
kernels run unchanged on NumPy memory. ``state`` records what happened, so tests can assert it.

What is modelled, because devtensor's CUDA logic depends on it:

* ``DEVICE_COUNT`` (2) fake devices and a *current device* (``cuda.runtime.getDevice()``), switched by
  ``with cuda.Device(i):`` (which restores the previous one on exit), ``Device.use()`` and
  ``runtime.setDevice``. Entering a device that does not exist raises ``cuda.runtime.CUDARuntimeError``.
* :class:`ndarray`, a ``numpy.ndarray`` subclass that remembers the device it was created on: ``.device``
  (a :class:`Device`), ``.data.ptr`` / ``.data.device_id``, ``.get()``, ``__dlpack_device__() == (2, id)``.
  Views keep their array's device; new arrays are created on the current device.
* Kernel launches check devices as CuPy does on a machine *without* peer access between GPUs: every ufunc,
  reduction, ``where``/``clip``/``copyto``/``shares_memory``, ``fill``, ``astype``, advanced indexing and
  item assignment raise ``ValueError`` when an array lives on another device than the current one. A kernel
  that runs outside its device guard is therefore an error here, not a silent success.
* CuPy refuses NumPy arrays (and lists) where it expects device arrays: ``TypeError: Unsupported type``.
* ``ndarray.flags`` has CuPy's three flags only (``c_contiguous``, ``f_contiguous``, ``owndata``): there is
  no ``writeable`` (set ``state.writeable_flag = True`` to add NumPy's, for tests that must get past code
  which still reads it).
* ``cupy.array`` of an array on another device copies across devices, but (as CuPy) raises
  ``NotImplementedError`` for a non-contiguous source unless an order that forces a contiguous copy is given.
* ``clip`` as CuPy: ``None`` bounds become the dtype's limits for integers and floats only; there is no loop
  for complex numbers.

* Streams and CUDA graphs, as far as stream capture goes: ``cuda.Stream``, ``with stream:``,
  ``stream.begin_capture()`` / ``end_capture()`` (a ``cuda.graph.Graph``), ``graph.launch()``. While a stream
  captures, kernels with an output (``out=``, ``fill``, item assignment, ``copyto``) are recorded as callables,
  not run; ``launch`` runs them in order. A kernel that would allocate (no ``out=``, ``empty``, ``astype``, ...)
  or a host synchronisation (``get``, ``synchronize``) during capture raises ``CUDARuntimeError``, as capture
  refuses them.

Not modelled: memory pools, asynchrony, CuPy's own type promotion (results follow NumPy 2's), and
most of CuPy's API beyond what devtensor's kernels call (extend it here when a kernel needs more).
``state.calls`` logs ``(name, current device)`` for every kernel launch and allocation; ``state.entered``
logs every device made current.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Literal

import numpy as np

__all__ = ["DEVICE_COUNT", "Device", "State", "cuda", "fft", "lib", "linalg", "ndarray", "reset", "state", "ufunc"]

DEVICE_COUNT: Final = 2
_NDArray = np.ndarray[Any, np.dtype[Any]]


# --- state: the current device and the logs -------------------------------------------------------------


@dataclass
class State:
    """What the fake GPU runtime knows; one instance, :data:`state`, reset by :func:`reset`."""

    device_count: int = DEVICE_COUNT
    #: The current device (CuPy's is per thread; tests here are single-threaded).
    current: int = 0
    #: Devices to restore on ``Device.__exit__``.
    stack: list[int] = field(default_factory=list)
    #: Every device made current (``with cuda.Device(i)``, ``Device.use()``, ``runtime.setDevice``), in order.
    entered: list[int] = field(default_factory=list)
    #: ``(name, current device)`` of every kernel launch and allocation, in order.
    calls: list[tuple[str, int]] = field(default_factory=list)
    #: Give ``ndarray.flags`` NumPy's ``writeable`` too (real CuPy has none).
    writeable_flag: bool = False
    #: The kernels recorded by the stream capture under way (None: no capture).
    capture: list[Callable[[], Any]] | None = None

    def clear_log(self) -> None:
        """Forget what was logged so far (devices and flags stay as they are)."""
        self.entered.clear()
        self.calls.clear()

    def devices_of(self, name: str) -> list[int]:
        """The current device at every logged call of ``name`` (e.g. ``"add"``, ``"empty"``)."""
        return [dev for n, dev in self.calls if n == name]


state: Final = State()


def reset(device_count: int = DEVICE_COUNT) -> None:
    """Back to a fresh runtime: ``device_count`` devices, device 0 current, empty logs, CuPy's flags."""
    state.device_count = device_count
    state.current = 0
    state.stack.clear()
    state.clear_log()
    state.writeable_flag = False
    state.capture = None


class CUDARuntimeError(RuntimeError):
    """As ``cupy_backends.cuda.api.runtime.CUDARuntimeError``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _check_ordinal(index: int) -> None:
    if not 0 <= index < state.device_count:
        raise CUDARuntimeError(101, "cudaErrorInvalidDevice: invalid device ordinal")


def _set_current(index: int) -> None:
    _check_ordinal(index)
    state.current = index
    state.entered.append(index)


class Device:
    """``cupy.cuda.Device``: a context manager making device ``id`` current; compares by ``id``."""

    def __init__(self, device: int | Device | None = None) -> None:
        if isinstance(device, Device):
            self.id: int = device.id
        else:
            self.id = state.current if device is None else int(device)

    def __enter__(self) -> Device:
        previous = state.current
        _set_current(self.id)
        state.stack.append(previous)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        state.current = state.stack.pop()

    def use(self) -> None:
        """Make this device current (without restoring the previous one later)."""
        _set_current(self.id)

    def synchronize(self) -> None:
        """Nothing to wait for: NumPy is synchronous (refused during a stream capture)."""
        _no_capture("synchronize")

    @property
    def compute_capability(self) -> str:
        return "90"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("fake-cuda-device", self.id))

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


class _Runtime:
    """``cupy.cuda.runtime``."""

    CUDARuntimeError = CUDARuntimeError

    @staticmethod
    def getDevice() -> int:
        return state.current

    @staticmethod
    def getDeviceCount() -> int:
        return state.device_count

    @staticmethod
    def setDevice(device: int) -> None:
        _set_current(int(device))


class Graph:
    """``cupy.cuda.graph.Graph``: the kernels a stream capture recorded; ``launch`` runs them in order."""

    def __init__(self, kernels: list[Callable[[], Any]]) -> None:
        self._kernels = tuple(kernels)

    def launch(self, stream: Any = None) -> None:
        _launch("graph")
        for kernel in self._kernels:
            kernel()

    def upload(self, stream: Any = None) -> None:
        """Nothing to upload on the fake device."""


class Stream:
    """``cupy.cuda.Stream``: ``with stream:`` makes it current; it captures kernels into a :class:`Graph` between
    ``begin_capture()`` and ``end_capture()``."""

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False) -> None:
        self.null = null
        self._capturing = False

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def use(self) -> Stream:
        return self

    def begin_capture(self, mode: Any = None) -> None:
        if state.capture is not None:
            raise CUDARuntimeError(900, "cudaErrorIllegalState: a stream capture is already under way")
        state.capture = []
        self._capturing = True

    def end_capture(self) -> Graph:
        if not self._capturing or state.capture is None:
            raise CUDARuntimeError(900, "cudaErrorIllegalState: the stream is not capturing")
        kernels, state.capture, self._capturing = state.capture, None, False
        return Graph(kernels)

    def is_capturing(self) -> bool:
        return self._capturing

    def synchronize(self) -> None:
        _no_capture("synchronize")


class _GraphModule:
    """``cupy.cuda.graph``."""

    Graph = Graph


class _Cuda:
    """``cupy.cuda``."""

    Device = Device
    Stream = Stream
    graph: Final = _GraphModule()
    runtime: Final = _Runtime()

    @staticmethod
    def is_available() -> bool:
        return state.device_count > 0


cuda: Final = _Cuda()


def is_available() -> bool:
    """``cupy.is_available()``."""
    return state.device_count > 0


# --- device checks and conversion to plain NumPy ---------------------------------------------------------


def _launch(name: str) -> int:
    """Log a kernel launch (or allocation) on the current device; returns the current device. During a stream
    capture, an allocation raises (a kernel with an output is recorded by its caller: :func:`_captured`)."""
    if state.capture is not None and name in _ALLOCATING:
        raise CUDARuntimeError(900, f"cudaErrorStreamCaptureUnsupported: {name} allocates during stream capture")
    state.calls.append((name, state.current))
    return state.current


#: The launches that allocate device memory (refused during a stream capture).
_ALLOCATING: Final = frozenset({"empty", "zeros", "ones", "full", "ndarray", "array", "astype", "copy", "take"})


def _captured(name: str, run: Callable[[], Any]) -> bool:
    """During a stream capture, record ``run`` (a kernel writing an existing output) and say so; else False."""
    if state.capture is None:
        return False
    state.calls.append((name, state.current))
    state.capture.append(run)
    return True


def _no_capture(name: str) -> None:
    if state.capture is not None:
        raise CUDARuntimeError(900, f"cudaErrorStreamCaptureUnsupported: {name} during stream capture")


def _on_current(name: str, array: ndarray) -> None:
    if array._device_id != state.current:
        raise ValueError(
            f"{name}: the device where the array resides ({array._device_id}) is different from the current "
            f"device ({state.current}). Peer access is unavailable between these devices. (fake cupy: a kernel "
            "ran outside the device guard of its arrays)"
        )


def _plain(name: str, x: Any, *, strict: bool = False) -> Any:
    """A kernel argument as NumPy sees it: device arrays (checked) as plain views, others as they are.

    NumPy arrays are refused, as CuPy does; with ``strict`` (ufunc operands) so are lists and tuples.
    """
    if isinstance(x, ndarray):
        _on_current(name, x)
        return x.view(np.ndarray)
    if isinstance(x, np.ndarray) or (strict and isinstance(x, (list, tuple))):
        raise TypeError(f"Unsupported type {type(x)} (fake cupy: {name} takes cupy arrays and scalars only)")
    return x


def _plain_out(name: str, out: Any) -> _NDArray:
    if not isinstance(out, ndarray):
        raise TypeError(f"{name}: output arguments must be cupy.ndarray, got {type(out)}")
    _on_current(name, out)
    return out.view(np.ndarray)


def _wrap(result: Any) -> Any:
    """A NumPy result as device array(s) on the current device (scalars become 0-d arrays, as in CuPy)."""
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    if isinstance(result, ndarray):
        return result
    return np.asarray(result).view(ndarray)


def _apply(
    name: str, fn: Callable[..., Any], args: Iterable[Any], kwargs: dict[str, Any], *, strict: bool = False
) -> Any:
    """Run the NumPy function ``fn`` as a CuPy kernel: check devices, honour ``out=``, wrap the result."""
    _launch(name)
    plain_args = [_plain(name, a, strict=strict) for a in args]
    out = kwargs.pop("out", None)
    outs: tuple[Any, ...] | None = None
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        kwargs["out"] = tuple(_plain_out(name, o) for o in outs) if isinstance(out, tuple) else _plain_out(name, out)
    for key, value in kwargs.items():
        if key != "out":
            kwargs[key] = _plain(name, value)
    if state.capture is not None:
        if outs is None:
            _no_capture(f"{name} (a result allocated)")
        _captured(name, lambda: fn(*plain_args, **kwargs))
        assert outs is not None
        return outs[0] if len(outs) == 1 else outs
    result = fn(*plain_args, **kwargs)
    if outs is not None:
        return outs[0] if len(outs) == 1 else outs
    return _wrap(result)


# --- the array -----------------------------------------------------------------------------------------


class _MemoryPointer:
    """``cupy.cuda.MemoryPointer``: the address of an array's first element and its device."""

    __slots__ = ("device_id", "ptr")

    def __init__(self, ptr: int, device_id: int) -> None:
        self.ptr = ptr
        self.device_id = device_id

    @property
    def device(self) -> Device:
        return Device(self.device_id)


class _Flags:
    """``cupy.ndarray.flags``: C/F contiguity and ownership, nothing else (no ``writeable``)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, c_contiguous: bool, f_contiguous: bool, owndata: bool) -> None:
        self.c_contiguous = c_contiguous
        self.f_contiguous = f_contiguous
        self.owndata = owndata

    @property
    def fnc(self) -> bool:
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self) -> bool:
        return self.f_contiguous or self.c_contiguous

    def __getitem__(self, name: str) -> bool:
        names = {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous, "OWNDATA": self.owndata}
        if name not in names:
            raise KeyError(f"{name} is not defined for cupy.ndarray.flags")
        return names[name]


def _is_advanced(key: Any) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return builtins.any(isinstance(p, (np.ndarray, list, bool, np.bool_)) for p in parts)


class ndarray(np.ndarray[Any, np.dtype[Any]]):
    """``cupy.ndarray`` on a fake device: NumPy memory plus the index of the device it lives on."""

    _device_id: int

    def __new__(
        cls,
        shape: Any,
        dtype: Any = float,
        memptr: Any = None,
        strides: Any = None,
        order: Literal["C", "F"] = "C",
    ) -> ndarray:
        _launch("ndarray")
        return np.ndarray.__new__(cls, shape, dtype, strides=strides, order=order)

    def __array_finalize__(self, obj: Any, /) -> None:
        # Views (and NumPy-made copies) keep the device of the array they come from; anything else is made
        # on the current device.
        self._device_id = obj._device_id if isinstance(obj, ndarray) else state.current

    # --- CuPy's attributes ---

    @property
    def device(self) -> Device:  # type: ignore[override]
        """The device the array lives on."""
        return Device(self._device_id)

    @property
    def data(self) -> _MemoryPointer:  # type: ignore[override]
        """The memory pointer: ``.ptr`` is the address of the first element."""
        return _MemoryPointer(int(self.__array_interface__["data"][0]), self._device_id)

    @property
    def flags(self) -> Any:
        """CuPy's flags (or NumPy's, when ``state.writeable_flag`` asks for ``writeable``)."""
        np_flags = self.view(np.ndarray).flags
        if state.writeable_flag:
            return np_flags
        return _Flags(bool(np_flags.c_contiguous), bool(np_flags.f_contiguous), bool(np_flags.owndata))

    def get(self, stream: Any = None, order: str = "C", out: Any = None, blocking: bool = True) -> _NDArray:
        """A copy in host memory (works from any current device, as CuPy's; refused during a stream capture)."""
        _no_capture("get (a copy to the host)")
        host = np.array(self.view(np.ndarray), order=order, copy=True)  # type: ignore[call-overload]
        if out is not None:
            np.copyto(out, host)
            return out  # type: ignore[no-any-return]
        return host  # type: ignore[no-any-return]

    def __dlpack_device__(self) -> tuple[int, int]:  # type: ignore[override]
        return (2, self._device_id)

    def __repr__(self) -> str:
        return f"fake_cupy.array({np.array2string(self.view(np.ndarray), separator=', ')}, device={self._device_id})"

    def __str__(self) -> str:
        # Printing copies to the host first (as CuPy's), so it works whatever device is current.
        return str(self.view(np.ndarray))

    # --- everything that launches a kernel checks the current device ---

    def __array_ufunc__(self, ufunc: np.ufunc, method: Any, *inputs: Any, **kwargs: Any) -> Any:
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        return _apply(name, getattr(ufunc, method), inputs, kwargs, strict=True)

    def astype(  # type: ignore[override]
        self, dtype: Any, order: str = "K", casting: Any = None, subok: Any = None, copy: bool = True
    ) -> ndarray:
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        _launch("astype")
        _on_current("astype", self)
        return self.view(np.ndarray).astype(dtype, order=order, copy=True).view(ndarray)  # type: ignore[call-overload,no-any-return]

    def copy(self, order: Literal["K", "A", "C", "F"] = "C") -> ndarray:  # type: ignore[override]
        """A copy on the *current* device (CuPy copies across devices, contiguous sources only)."""
        _launch("copy")
        plain = self.view(np.ndarray)
        contiguous = plain.flags.c_contiguous or plain.flags.f_contiguous
        if self._device_id != state.current and self.size and order == "K" and not contiguous:
            raise NotImplementedError("CuPy cannot copy non-contiguous array between devices.")
        return plain.copy(order=order).view(ndarray)

    def fill(self, value: Any) -> None:
        _on_current("fill", self)
        plain = self.view(np.ndarray)
        if not _captured("fill", lambda: plain.fill(value)):
            _launch("fill")
            plain.fill(value)

    def __getitem__(self, key: Any) -> Any:
        if _is_advanced(key):
            _launch("take")
            _on_current("__getitem__", self)
            parts = key if isinstance(key, tuple) else (key,)
            plain_key = tuple(_plain("__getitem__", p) if isinstance(p, ndarray) else p for p in parts)
            return _wrap(self.view(np.ndarray)[plain_key])
        result = super().__getitem__(key)
        if not isinstance(result, np.ndarray):
            # CuPy returns 0-d views, never scalars.
            parts = key if isinstance(key, tuple) else (key,)
            result = super().__getitem__((*parts, Ellipsis))
        return result

    def __setitem__(self, key: Any, value: Any) -> None:
        _on_current("__setitem__", self)
        parts = key if isinstance(key, tuple) else (key,)
        plain_key = tuple(_plain("__setitem__", p) if isinstance(p, ndarray) else p for p in parts)
        plain_value = _plain("__setitem__", value) if isinstance(value, ndarray) else value
        plain = self.view(np.ndarray)

        def run() -> None:
            plain[plain_key] = plain_value

        if not _captured("__setitem__", run):
            _launch("__setitem__")
            run()


# --- ufuncs ----------------------------------------------------------------------------------------------


class ufunc:
    """A CuPy ufunc: NumPy's, run as a kernel on the current device (``out=``, ``dtype=``, ``casting=``)."""

    def __init__(self, name: str, np_ufunc: np.ufunc) -> None:
        self.__name__ = name
        self.name = name
        self.nin = np_ufunc.nin
        self.nout = np_ufunc.nout
        self.nargs = np_ufunc.nargs
        self._ufunc = np_ufunc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        unknown = set(kwargs) - {"out", "dtype", "casting"}
        if unknown:
            raise TypeError(f"Wrong arguments {unknown}")
        if not self.nin <= len(args) <= self.nargs:
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        if len(args) > self.nin:
            if "out" in kwargs:
                raise ValueError("Cannot specify 'out' as both a positional and keyword argument")
            outs = args[self.nin :]
            kwargs["out"] = outs[0] if len(outs) == 1 else tuple(outs)
            args = args[: self.nin]
        return _apply(self.name, self._ufunc, args, kwargs, strict=True)

    def __repr__(self) -> str:
        return f"<ufunc '{self.name}'>"


add: Final = ufunc("add", np.add)
subtract: Final = ufunc("subtract", np.subtract)
multiply: Final = ufunc("multiply", np.multiply)
divide: Final = ufunc("divide", np.divide)
true_divide: Final = ufunc("true_divide", np.true_divide)
floor_divide: Final = ufunc("floor_divide", np.floor_divide)
remainder: Final = ufunc("remainder", np.remainder)
mod: Final = ufunc("mod", np.mod)
fmod: Final = ufunc("fmod", np.fmod)
divmod: Final = ufunc("divmod", np.divmod)
power: Final = ufunc("power", np.power)
float_power: Final = ufunc("float_power", np.float_power)
negative: Final = ufunc("negative", np.negative)
positive: Final = ufunc("positive", np.positive)
absolute: Final = ufunc("absolute", np.absolute)
abs: Final = ufunc("abs", np.absolute)
fabs: Final = ufunc("fabs", np.fabs)
sign: Final = ufunc("sign", np.sign)
square: Final = ufunc("square", np.square)
reciprocal: Final = ufunc("reciprocal", np.reciprocal)
exp: Final = ufunc("exp", np.exp)
exp2: Final = ufunc("exp2", np.exp2)
expm1: Final = ufunc("expm1", np.expm1)
log: Final = ufunc("log", np.log)
log2: Final = ufunc("log2", np.log2)
log10: Final = ufunc("log10", np.log10)
log1p: Final = ufunc("log1p", np.log1p)
logaddexp: Final = ufunc("logaddexp", np.logaddexp)
sqrt: Final = ufunc("sqrt", np.sqrt)
cbrt: Final = ufunc("cbrt", np.cbrt)
sin: Final = ufunc("sin", np.sin)
cos: Final = ufunc("cos", np.cos)
tan: Final = ufunc("tan", np.tan)
arcsin: Final = ufunc("arcsin", np.arcsin)
arccos: Final = ufunc("arccos", np.arccos)
arctan: Final = ufunc("arctan", np.arctan)
arctan2: Final = ufunc("arctan2", np.arctan2)
sinh: Final = ufunc("sinh", np.sinh)
arcsinh: Final = ufunc("arcsinh", np.arcsinh)
arccosh: Final = ufunc("arccosh", np.arccosh)
arctanh: Final = ufunc("arctanh", np.arctanh)
nextafter: Final = ufunc("nextafter", np.nextafter)
cosh: Final = ufunc("cosh", np.cosh)
tanh: Final = ufunc("tanh", np.tanh)
hypot: Final = ufunc("hypot", np.hypot)
floor: Final = ufunc("floor", np.floor)
ceil: Final = ufunc("ceil", np.ceil)
trunc: Final = ufunc("trunc", np.trunc)
rint: Final = ufunc("rint", np.rint)
maximum: Final = ufunc("maximum", np.maximum)
minimum: Final = ufunc("minimum", np.minimum)
fmax: Final = ufunc("fmax", np.fmax)
fmin: Final = ufunc("fmin", np.fmin)
equal: Final = ufunc("equal", np.equal)
not_equal: Final = ufunc("not_equal", np.not_equal)
less: Final = ufunc("less", np.less)
less_equal: Final = ufunc("less_equal", np.less_equal)
greater: Final = ufunc("greater", np.greater)
greater_equal: Final = ufunc("greater_equal", np.greater_equal)
logical_and: Final = ufunc("logical_and", np.logical_and)
logical_or: Final = ufunc("logical_or", np.logical_or)
logical_xor: Final = ufunc("logical_xor", np.logical_xor)
logical_not: Final = ufunc("logical_not", np.logical_not)
bitwise_and: Final = ufunc("bitwise_and", np.bitwise_and)
bitwise_or: Final = ufunc("bitwise_or", np.bitwise_or)
bitwise_xor: Final = ufunc("bitwise_xor", np.bitwise_xor)
invert: Final = ufunc("invert", np.invert)
left_shift: Final = ufunc("left_shift", np.left_shift)
right_shift: Final = ufunc("right_shift", np.right_shift)
isnan: Final = ufunc("isnan", np.isnan)
isinf: Final = ufunc("isinf", np.isinf)
isfinite: Final = ufunc("isfinite", np.isfinite)
signbit: Final = ufunc("signbit", np.signbit)
copysign: Final = ufunc("copysign", np.copysign)
conjugate: Final = ufunc("conjugate", np.conjugate)
conj: Final = ufunc("conj", np.conjugate)


class RandomState:
    """``cupy.random.RandomState``: a generator whose state lives on the device current at its creation (drawing
    on another device is an error here, as CuPy's state is not available there). Its stream is NumPy's Philox,
    not PCG64, so that the same seed gives other values than devtensor's CPU generator, as real cuRAND does."""

    def __init__(self, seed: int | None = None) -> None:
        _launch("RandomState")
        self._device_id = state.current
        self._rng = np.random.Generator(np.random.Philox(seed))

    def _draw(self, name: str, host: _NDArray) -> ndarray:
        if self._device_id != state.current:
            raise ValueError(
                f"RandomState.{name}: the generator's state is on device {self._device_id}, the current device is "
                f"{state.current} (fake cupy: a draw outside the device guard of its generator)"
            )
        return _allocate(f"random.{name}", host)

    def random_sample(self, size: Any = None, dtype: Any = float) -> ndarray:
        return self._draw("random_sample", self._rng.random(size, dtype=dtype))

    def standard_normal(self, size: Any = None, dtype: Any = float) -> ndarray:
        return self._draw("standard_normal", self._rng.standard_normal(size, dtype=dtype))

    def randint(self, low: int, high: int | None = None, size: Any = None, dtype: Any = int) -> ndarray:
        return self._draw("randint", np.asarray(self._rng.integers(low, high, size, dtype=dtype)))

    def permutation(self, num: int) -> ndarray:
        return self._draw("permutation", self._rng.permutation(num))


class _Random:
    """``cupy.random`` (the part devtensor uses)."""

    RandomState: Final = RandomState


random: Final = _Random()


# --- creation and host transfer ----------------------------------------------------------------------------


def _allocate(name: str, host: _NDArray) -> ndarray:
    _launch(name)
    _check_ordinal(state.current)
    return host.view(ndarray)


def empty(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    return _allocate("empty", np.empty(shape, dtype, order=order))  # type: ignore[call-overload]


def zeros(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    return _allocate("zeros", np.zeros(shape, dtype, order=order))  # type: ignore[call-overload]


def ones(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    return _allocate("ones", np.ones(shape, dtype, order=order))  # type: ignore[call-overload]


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C") -> ndarray:
    return _allocate("full", np.full(shape, fill_value, dtype, order=order))  # type: ignore[call-overload]


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> ndarray:
    host = np.arange(start, step=step, dtype=dtype) if stop is None else np.arange(start, stop, step, dtype=dtype)
    return _allocate("arange", host)


def array(
    obj: Any,
    dtype: Any = None,
    copy: bool | None = True,
    order: str | None = "K",
    subok: bool = False,
    ndmin: int = 0,
    blocking: bool = False,
) -> ndarray:
    """An array on the current device: a device array is copied across devices when needed (contiguous
    sources only with ``order='K'``, as CuPy), or returned as is when ``copy`` is false and nothing changes;
    anything else is copied from host memory."""
    order = order or "K"
    if isinstance(obj, ndarray):
        plain = obj.view(np.ndarray)
        if obj._device_id == state.current:
            result = np.array(plain, dtype=dtype, copy=True if copy else None, order=order, ndmin=ndmin)  # type: ignore[call-overload]
            if result is plain:
                return obj
            _launch("array")
            return result.view(ndarray)  # type: ignore[no-any-return]
        if obj.size and order == "K" and not (plain.flags.c_contiguous or plain.flags.f_contiguous):
            raise NotImplementedError("CuPy cannot copy non-contiguous array between devices.")
        return _allocate("array", np.array(plain, dtype=dtype, copy=True, order=order, ndmin=ndmin))  # type: ignore[call-overload]
    return _allocate("array", np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin))  # type: ignore[call-overload]


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, blocking: bool = False) -> ndarray:
    return array(a, dtype=dtype, copy=False, order=order)


def ascontiguousarray(a: Any, dtype: Any = None) -> ndarray:
    if isinstance(a, ndarray) and a.view(np.ndarray).flags.c_contiguous and (dtype is None or a.dtype == dtype):
        return a
    return array(a, dtype=dtype, copy=True, order="C")


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None, *, blocking: bool = True) -> _NDArray:
    """Host memory: a copy of a device array (from any current device), NumPy's conversion otherwise."""
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out)
    return np.asarray(a, order=order)  # type: ignore[call-overload,no-any-return]


class _HostExporter:
    """Presents a fake device array's memory to ``numpy.from_dlpack`` as the host memory it really is."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __dlpack__(self, **kwargs: Any) -> Any:
        kwargs.pop("dl_device", None)
        return self._obj.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def from_dlpack(x: Any, *, device: Any = None, copy: bool | None = None) -> ndarray:
    """A device array sharing the memory of ``x`` (a producer whose DLPack device is a fake CUDA device)."""
    dev_type, dev_id = x.__dlpack_device__()
    if int(dev_type) not in (2, 13):
        raise RuntimeError(f"fake cupy: from_dlpack takes CUDA data, got DLPack device type {dev_type}")
    _check_ordinal(int(dev_id))
    result = np.from_dlpack(_HostExporter(x)).view(ndarray)
    result._device_id = int(dev_id)
    return result


# --- kernels that are not ufuncs -------------------------------------------------------------------------


def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Exact answer via kernels on the current device (as CuPy's ``max_work=None``)."""
    if a is b and a.size != 0:
        return True
    if max_work == "MAY_SHARE_BOUNDS":
        return bool(np.may_share_memory(a.view(np.ndarray), b.view(np.ndarray)))
    if max_work not in (None, "MAY_SHARE_EXACT"):
        raise NotImplementedError("Not supported for integer `max_work`.")
    _launch("shares_memory")
    return bool(np.shares_memory(_plain("shares_memory", a), _plain("shares_memory", b)))


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    if max_work is not None:
        raise NotImplementedError("Only supported for `max_work` is `None`")
    return bool(np.may_share_memory(a.view(np.ndarray), b.view(np.ndarray)))


def copyto(dst: ndarray, src: Any, casting: str = "same_kind", where: Any = None) -> None:
    """Copy with broadcasting on the current device; same-shape, same-dtype contiguous arrays are copied by
    memcpy from any device (as CuPy)."""
    if not isinstance(dst, ndarray):
        raise TypeError(f"copyto: dst must be a cupy.ndarray, got {type(dst)}")
    if isinstance(src, ndarray):
        if not np.can_cast(src.dtype, dst.dtype, casting):  # type: ignore[arg-type]
            raise TypeError(f"Cannot cast {src.dtype} to {dst.dtype} in {casting} casting mode")
        d, s = dst.view(np.ndarray), src.view(np.ndarray)
        memcpy = (
            where is None
            and d.shape == s.shape
            and d.dtype == s.dtype
            and ((d.flags.c_contiguous and s.flags.c_contiguous) or (d.flags.f_contiguous and s.flags.f_contiguous))
        )
        if memcpy:
            if not _captured("memcpy", lambda: np.copyto(d, s)):
                _launch("memcpy")
                np.copyto(d, s)
            return
    elif isinstance(src, np.ndarray):
        if src.size != 1:
            raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
        src = src.squeeze()[()]
    d = _plain_out("copyto", dst)
    plain_src, plain_where = _plain("copyto", src), True if where is None else _plain("copyto", where)

    def run() -> None:
        np.copyto(d, plain_src, casting=casting, where=plain_where)  # type: ignore[arg-type]

    if not _captured("copyto", run):
        _launch("copyto")
        run()


def real(val: Any) -> Any:
    """The real part (CuPy: a view for complex arrays, the array itself otherwise)."""
    return _apply("real", np.real, (val,), {})


def imag(val: Any) -> Any:
    """The imaginary part (CuPy: a view for complex arrays, zeros otherwise)."""
    return _apply("imag", np.imag, (val,), {})


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        return _apply("nonzero", np.nonzero, (condition,), {})
    if x is None or y is None:
        raise ValueError("Must provide with both x and y or neither")
    return _apply("where", np.where, (condition, x, y), {})


def clip(a: Any, a_min: Any, a_max: Any, out: Any = None) -> Any:
    """``a`` limited to ``[a_min, a_max]`` as CuPy's: a ``None`` bound becomes the dtype's limit for integer
    and floating dtypes (bool and complex keep it, and fail); there is no complex loop."""
    if not isinstance(a, ndarray):
        raise TypeError(f"clip: a must be a cupy.ndarray, got {type(a)}")
    kind = a.dtype.kind
    if a_min is None:
        a_min = a.dtype.type("-inf") if kind == "f" else int(np.iinfo(a.dtype).min) if kind in "iu" else None
    if a_max is None:
        a_max = a.dtype.type("inf") if kind == "f" else int(np.iinfo(a.dtype).max) if kind in "iu" else None
    if a_min is None or a_max is None:
        raise TypeError(f"Unsupported type {type(None)} (fake cupy: clip of {a.dtype} with a None bound)")
    if builtins.any(np.asarray(getattr(v, "dtype", type(v))).dtype.kind == "c" for v in (a, a_min, a_max)):
        raise TypeError("Wrong type of arguments for cupy_clip")
    kwargs: dict[str, Any] = {} if out is None else {"out": out}
    return _apply("clip", np.clip, (a, a_min, a_max), kwargs)


def _kernel(name: str, np_fn: Callable[..., Any]) -> Callable[..., Any]:
    """A CuPy function that launches kernels: array arguments (also in lists) must be on the current device."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return _apply(name, np_fn, args, kwargs)

    call.__name__ = name
    return call


def _lists_ok(name: str, np_fn: Callable[..., Any]) -> Callable[..., Any]:
    """A kernel whose first argument is a sequence of arrays (``concatenate``, ``stack``)."""

    def call(arrays: Any, *args: Any, **kwargs: Any) -> Any:
        _launch(name)
        plain = [_plain(name, a) for a in arrays]
        out = kwargs.pop("out", None)
        if out is not None:
            kwargs["out"] = _plain_out(name, out)
        result = np_fn(plain, *args, **kwargs)
        return out if out is not None else _wrap(result)

    call.__name__ = name
    return call


def _view(name: str, np_fn: Callable[..., Any]) -> Callable[..., Any]:
    """A CuPy function returning a view (no kernel): the result keeps its array's device."""

    def call(a: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(a, ndarray):
            raise TypeError(f"{name}: expected a cupy.ndarray, got {type(a)}")
        result = np_fn(a, *args, **kwargs)
        return result if isinstance(result, ndarray) else _wrap(result)

    call.__name__ = name
    return call


class _StrideTricks:
    """``cupy.lib.stride_tricks``."""

    @staticmethod
    def as_strided(x: Any, shape: Any = None, strides: Any = None) -> ndarray:
        """A view of ``x`` with ``shape`` and ``strides`` (bytes), on ``x``'s device (no kernel)."""
        if not isinstance(x, ndarray):
            raise TypeError(f"as_strided: expected a cupy.ndarray, got {type(x)}")
        plain = np.lib.stride_tricks.as_strided(x.view(np.ndarray), shape=shape, strides=strides)
        view = plain.view(ndarray)
        view._device_id = x._device_id
        return view


class _Lib:
    """``cupy.lib``."""

    stride_tricks: Final = _StrideTricks()


lib: Final = _Lib()


class _FFT:
    """``cupy.fft``: NumPy's ``numpy.fft`` as kernels (arrays on the current device; results there too). CuPy's
    transforms keep single precision as NumPy 2's do."""

    fft: Final = staticmethod(_kernel("fft.fft", np.fft.fft))
    ifft: Final = staticmethod(_kernel("fft.ifft", np.fft.ifft))
    fftn: Final = staticmethod(_kernel("fft.fftn", np.fft.fftn))
    ifftn: Final = staticmethod(_kernel("fft.ifftn", np.fft.ifftn))
    rfft: Final = staticmethod(_kernel("fft.rfft", np.fft.rfft))
    irfft: Final = staticmethod(_kernel("fft.irfft", np.fft.irfft))
    rfftn: Final = staticmethod(_kernel("fft.rfftn", np.fft.rfftn))
    irfftn: Final = staticmethod(_kernel("fft.irfftn", np.fft.irfftn))
    hfft: Final = staticmethod(_kernel("fft.hfft", np.fft.hfft))
    ihfft: Final = staticmethod(_kernel("fft.ihfft", np.fft.ihfft))
    fftshift: Final = staticmethod(_kernel("fft.fftshift", np.fft.fftshift))
    ifftshift: Final = staticmethod(_kernel("fft.ifftshift", np.fft.ifftshift))
    fftfreq: Final = staticmethod(_kernel("fft.fftfreq", np.fft.fftfreq))
    rfftfreq: Final = staticmethod(_kernel("fft.rfftfreq", np.fft.rfftfreq))


fft: Final = _FFT()


class _Linalg:
    """``cupy.linalg`` (the part devtensor uses): ``numpy.linalg``'s routines run as kernels (arrays must be on
    the current device; results are on it). As CuPy, errors of singular input are ``numpy.linalg.LinAlgError``;
    unlike CuPy (which by default returns nan/inf there), the stand-in raises them as NumPy does."""

    det: Final = staticmethod(_kernel("linalg.det", np.linalg.det))
    slogdet: Final = staticmethod(_kernel("linalg.slogdet", np.linalg.slogdet))
    inv: Final = staticmethod(_kernel("linalg.inv", np.linalg.inv))
    solve: Final = staticmethod(_kernel("linalg.solve", np.linalg.solve))
    cholesky: Final = staticmethod(_kernel("linalg.cholesky", np.linalg.cholesky))
    qr: Final = staticmethod(_kernel("linalg.qr", np.linalg.qr))
    svd: Final = staticmethod(_kernel("linalg.svd", np.linalg.svd))
    eigh: Final = staticmethod(_kernel("linalg.eigh", np.linalg.eigh))
    eigvalsh: Final = staticmethod(_kernel("linalg.eigvalsh", np.linalg.eigvalsh))


linalg: Final = _Linalg()

sum: Final = _kernel("sum", np.sum)
prod: Final = _kernel("prod", np.prod)
mean: Final = _kernel("mean", np.mean)
std: Final = _kernel("std", np.std)
var: Final = _kernel("var", np.var)
amax: Final = _kernel("amax", np.amax)
amin: Final = _kernel("amin", np.amin)
max: Final = _kernel("max", np.max)
min: Final = _kernel("min", np.min)
argmax: Final = _kernel("argmax", np.argmax)
argmin: Final = _kernel("argmin", np.argmin)
all: Final = _kernel("all", np.all)
any: Final = _kernel("any", np.any)
count_nonzero: Final = _kernel("count_nonzero", np.count_nonzero)
isclose: Final = _kernel("isclose", np.isclose)
bincount: Final = _kernel("bincount", np.bincount)
cumsum: Final = _kernel("cumsum", np.cumsum)
cumprod: Final = _kernel("cumprod", np.cumprod)
matmul: Final = _kernel("matmul", np.matmul)
dot: Final = _kernel("dot", np.dot)
outer: Final = _kernel("outer", np.outer)
take: Final = _kernel("take", np.take)
take_along_axis: Final = _kernel("take_along_axis", np.take_along_axis)
sort: Final = _kernel("sort", np.sort)
argsort: Final = _kernel("argsort", np.argsort)
searchsorted: Final = _kernel("searchsorted", np.searchsorted)
round: Final = _kernel("round", np.round)
diff: Final = _kernel("diff", np.diff)
tril: Final = _kernel("tril", np.tril)
diag: Final = _kernel("diag", np.diag)
triu: Final = _kernel("triu", np.triu)
roll: Final = _kernel("roll", np.roll)
tensordot: Final = _kernel("tensordot", np.tensordot)
einsum: Final = _kernel("einsum", np.einsum)
tile: Final = _kernel("tile", np.tile)
repeat: Final = _kernel("repeat", np.repeat)
unique: Final = _kernel("unique", np.unique)
nonzero: Final = _kernel("nonzero", np.nonzero)
concatenate: Final = _lists_ok("concatenate", np.concatenate)
stack: Final = _lists_ok("stack", np.stack)
broadcast_to: Final = _view("broadcast_to", lambda a, shape: np.broadcast_to(a, shape, subok=True))
flip: Final = _view("flip", np.flip)
reshape: Final = _view("reshape", np.reshape)
transpose: Final = _view("transpose", np.transpose)
squeeze: Final = _view("squeeze", np.squeeze)
expand_dims: Final = _view("expand_dims", np.expand_dims)
moveaxis: Final = _view("moveaxis", np.moveaxis)
