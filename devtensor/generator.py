"""Random number generators: :class:`Generator` objects and the default generator of each device.

Semantics follow PyTorch's ``torch.Generator`` and ``torch.manual_seed``, the streams their devices' own
libraries: a CPU generator is NumPy's ``numpy.random.Generator`` over ``PCG64``; a CUDA generator is a
``cupy.random.RandomState`` (cuRAND) made on its device. Each is reproducible per seed on its device, but the
CPU and CUDA streams differ: the same seed gives different values on the two devices (as in PyTorch).

The random ops (:mod:`devtensor.kernels.random`) take ``generator=None``, meaning the default generator of the
output's device (:func:`default_generator_for`): one for the CPU (``devtensor.default_generator``) and one per
CUDA device, made on first use. :func:`manual_seed` seeds them all, CUDA devices not used yet included.

Differences from PyTorch, by choice: ``Generator(seed=None, device="cpu")`` takes the seed directly (PyTorch:
``Generator(device)`` then ``manual_seed``); a generator made without a seed, and the default generators before
any :func:`manual_seed`, are seeded from the operating system's entropy as NumPy's are (PyTorch starts from a
fixed seed); ``get_state``/``set_state`` exist for CPU generators only (CuPy's generator exposes no state).

This module imports nothing of the op machinery: the generated op declarations import :class:`Generator`.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Final, SupportsIndex

import numpy as np

from devtensor.device import Device, DeviceLike, as_device, as_index
from devtensor.errors import ArgumentTypeError, ArgumentValueError, NoKernelError

__all__ = [
    "Generator",
    "default_generator",
    "default_generator_for",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]

_SEED_MIN: Final = -(2**63)
_SEED_MAX: Final = 2**64 - 1
#: Length of a CPU generator's state as :meth:`Generator.get_state` returns it: PCG64's 128-bit state and
#: increment, NumPy's buffered-uint32 flag and the buffered value (little-endian).
_STATE_BYTES: Final = 16 + 16 + 1 + 4


def _check_seed(op: str, value: object) -> int:
    """``value`` as a seed in ``[0, 2**64)``: PyTorch's range ``[-2**63, 2**64)``, a negative seed taken modulo
    ``2**64`` as PyTorch does."""
    s = as_index(value)
    if s is None:
        raise ArgumentTypeError(f"{op}: argument 'seed' must be an int, got {type(value).__name__} {value!r}")
    if not _SEED_MIN <= s <= _SEED_MAX:
        raise ArgumentValueError(f"{op}: argument 'seed' must be in [-2**63, 2**64), got {s}")
    return s % 2**64


def _fresh_seed() -> int:
    """A seed from the operating system's entropy (63 bits, so it also fits PyTorch's signed range)."""
    return int.from_bytes(os.urandom(8), "little") >> 1


_made_lock = threading.Lock()


class _CPUStream:
    """NumPy's PCG64 generator; draws NumPy arrays. Made on first use: ``numpy.random`` costs the import of
    devtensor ~15 ms, and its default generator is made at import."""

    __slots__ = ("_rng", "_seed")

    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._rng: np.random.Generator | None = None

    @property
    def rng(self) -> np.random.Generator:
        """The NumPy generator, seeded with the stream's seed."""
        rng = self._rng
        if rng is None:
            with _made_lock:  # (two threads' first draws must share one generator)
                rng = self._rng
                if rng is None:
                    rng = self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return rng

    def random(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """Uniform floats in ``[0, 1)`` of ``dtype`` (float32 or float64)."""
        return self.rng.random(shape, dtype=dtype)

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """Standard normal floats of ``dtype`` (float32 or float64)."""
        return self.rng.standard_normal(shape, dtype=dtype)

    def integers(self, low: int, high: int, shape: tuple[int, ...], dtype: Any) -> Any:
        """Integers uniform in ``[low, high)`` of ``dtype`` (int64 or uint64: the range must fit it)."""
        return self.rng.integers(low, high, shape, dtype=dtype)

    def permutation(self, n: int) -> Any:
        """A random permutation of ``range(n)``, int64."""
        return self.rng.permutation(n).astype(np.int64, copy=False)


class _CUDAStream:
    """CuPy's ``RandomState`` made on one device; draws CuPy arrays on that device (call under its guard)."""

    __slots__ = ("module", "state")

    def __init__(self, seed: int, device: Device) -> None:
        from devtensor.backends import cupy_module

        self.module = cupy_module()
        guard = device._guard
        if guard is None:
            self.state = self.module.random.RandomState(seed)
        else:
            with guard():
                self.state = self.module.random.RandomState(seed)

    def random(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.state.random_sample(size=shape, dtype=dtype)

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.state.standard_normal(size=shape, dtype=dtype)

    def integers(self, low: int, high: int, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.state.randint(low, high, size=shape, dtype=dtype)

    def permutation(self, n: int) -> Any:
        return self.state.permutation(n).astype(np.int64, copy=False)


class Generator:
    """A random number generator for one device (``torch.Generator``).

    ``Generator(seed=None, device="cpu")``: ``seed`` an int in ``[-2**63, 2**64)`` (a negative one is taken
    modulo ``2**64``, as PyTorch does), or None for one from the operating system's entropy; ``device`` a CPU
    or CUDA device (``"cuda"`` means the current CUDA device, fixed at creation). CPU: NumPy's PCG64; CUDA:
    CuPy's ``RandomState`` on that device. The same seed gives the same values on the same device type; CPU
    and CUDA streams differ.

    Pass it as ``generator=`` to the random ops; it must be on the output's device. Generators are
    independent of each other and of the default generators. Thread-safe for CPU generators (NumPy locks its
    generator); a CUDA generator should not be shared between threads.

    Raises:
        ArgumentTypeError (TypeError): ``seed`` not an int (pass the device by keyword: ``device="cuda"``).
        ArgumentValueError (ValueError): ``seed`` out of range; a device type other than cpu and cuda.
        DeviceUnavailableError (RuntimeError): a CUDA generator without CuPy.
    """

    __slots__ = ("_device", "_initial_seed", "_lock", "_stream")

    def __init__(self, seed: SupportsIndex | None = None, device: DeviceLike = "cpu") -> None:
        if isinstance(seed, (str, Device)):
            raise ArgumentTypeError(
                f"Generator: argument 'seed' must be an int or None, got {seed!r}; pass the device by keyword "
                f"(Generator(device={str(seed)!r}))"
            )
        dev = as_device(device, op="Generator")
        if dev.type not in ("cpu", "cuda"):
            raise ArgumentValueError(f"Generator: device must be a cpu or cuda device, got {dev}")
        self._device = dev
        self._lock = threading.Lock()
        self._initial_seed = _fresh_seed() if seed is None else _check_seed("Generator", seed)
        self._stream = self._new_stream(self._initial_seed)

    def _new_stream(self, s: int) -> _CPUStream | _CUDAStream:
        return _CPUStream(s) if self._device.type == "cpu" else _CUDAStream(s, self._device)

    @property
    def stream(self) -> _CPUStream | _CUDAStream:
        """The stream the random kernels draw from (for kernels, not users): ``random(shape, dtype)``,
        ``normal(shape, dtype)``, ``integers(low, high, shape, dtype)``, ``permutation(n)``, each returning an
        array of the generator's device (call under its device guard, as kernels run)."""
        return self._stream

    @property
    def device(self) -> Device:
        """The device this generator draws on."""
        return self._device

    def manual_seed(self, seed: SupportsIndex) -> Generator:
        """Restart the stream from ``seed`` (range as for the constructor); returns this generator.

        Raises:
            ArgumentTypeError (TypeError), ArgumentValueError (ValueError): a bad seed (nothing changes).
        """
        s = _check_seed("Generator.manual_seed", seed)
        stream = self._new_stream(s)
        with self._lock:
            self._stream, self._initial_seed = stream, s
        return self

    def seed(self) -> int:
        """Restart the stream from a seed drawn from the operating system's entropy; returns that seed."""
        s = _fresh_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the stream was last started from (in ``[0, 2**64)``)."""
        return self._initial_seed

    def get_state(self) -> Any:
        """The generator's state as a 1-d uint8 CPU tensor (37 bytes: PCG64's state and increment and NumPy's
        buffered value), for :meth:`set_state`; as ``torch.Generator.get_state`` (whose bytes differ).

        Raises:
            NoKernelError (NotImplementedError): a CUDA generator (CuPy's generator exposes no state).
        """
        from devtensor.creation import from_numpy

        stream = self._cpu_stream("get_state")
        state = stream.rng.bit_generator.state
        raw = (
            int(state["state"]["state"]).to_bytes(16, "little")
            + int(state["state"]["inc"]).to_bytes(16, "little")
            + bytes([int(state["has_uint32"])])
            + int(state["uinteger"]).to_bytes(4, "little")
        )
        return from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state that :meth:`get_state` returned; returns this generator.

        Raises:
            ArgumentTypeError (TypeError): ``new_state`` is not a uint8 CPU tensor.
            ArgumentValueError (ValueError): it is not 37 bytes of a PCG64 state (nothing changes).
            NoKernelError (NotImplementedError): a CUDA generator.
        """
        from devtensor.tensor import Tensor

        stream = self._cpu_stream("set_state")
        if not isinstance(new_state, Tensor) or new_state.device.type != "cpu" or new_state.dtype != np.uint8:
            raise ArgumentTypeError(
                "Generator.set_state: argument 'new_state' must be a uint8 CPU tensor from get_state(), got "
                f"{type(new_state).__name__}"
                + (f" {new_state.dtype} on {new_state.device}" if isinstance(new_state, Tensor) else "")
            )
        raw = bytes(new_state.numpy().reshape(-1).tobytes()) if new_state.ndim == 1 else b""
        inc = int.from_bytes(raw[16:32], "little")
        if len(raw) != _STATE_BYTES or inc % 2 == 0 or raw[32] > 1:
            raise ArgumentValueError(
                f"Generator.set_state: argument 'new_state' is not a CPU generator state from get_state() "
                f"(expected a 1-d tensor of {_STATE_BYTES} bytes, got shape {list(new_state.shape)})"
            )
        state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[:16], "little"), "inc": inc},
            "has_uint32": raw[32],
            "uinteger": int.from_bytes(raw[33:37], "little"),
        }
        with self._lock:
            stream.rng.bit_generator.state = state
        return self

    def _cpu_stream(self, method: str) -> _CPUStream:
        stream = self._stream
        if not isinstance(stream, _CPUStream):
            raise NoKernelError(
                f"Generator.{method}: not available for a {self._device.type} generator (CuPy's generator exposes "
                "no state); use manual_seed to restart a stream"
            )
        return stream

    def __repr__(self) -> str:
        return f"<devtensor.Generator device={self._device} initial_seed={self._initial_seed}>"


# --- the default generators -------------------------------------------------------------------------------

#: The default CPU generator (``torch.default_generator``).
default_generator: Final = Generator()
_defaults_lock = threading.Lock()
#: Default CUDA generators by device, made on first use: (the cupy module they were made with, generator).
_cuda_defaults: dict[Device, tuple[Any, Generator]] = {}
#: The seed of the last :func:`manual_seed` (a CUDA default made later starts from it); None: entropy.
_global_seed: list[int | None] = [None]


def default_generator_for(device: Device) -> Generator:
    """The default generator of ``device`` (an indexed cpu or cuda device): ``default_generator`` for the CPU,
    one per CUDA device (made on first use, from the last :func:`manual_seed`'s seed, or from entropy; a
    :func:`manual_seed` makes a new one, so hold the device rather than the CUDA generator object).

    Raises:
        NoKernelError (NotImplementedError): a device type without generators.
    """
    if device.type == "cpu":
        return default_generator
    if device.type != "cuda":
        raise NoKernelError(f"no default random generator for device type {device.type!r}")
    from devtensor.backends import cupy_module

    module = cupy_module()
    found = _cuda_defaults.get(device)
    # (a test's CuPy stand-in replaced by another module: the generator is remade for the module in use)
    if found is not None and found[0] is module:
        return found[1]
    with _defaults_lock:
        found = _cuda_defaults.get(device)
        if found is None or found[0] is not module:
            found = (module, Generator(_global_seed[0], device=device))
            _cuda_defaults[device] = found
    return found[1]


def manual_seed(seed: SupportsIndex) -> Generator:
    """Seed every default generator (the CPU's and each CUDA device's, also those not made yet) with ``seed``;
    returns ``default_generator`` (``torch.manual_seed``).

    Raises:
        ArgumentTypeError (TypeError): not an int.  ArgumentValueError (ValueError): out of ``[-2**63, 2**64)``.
    """
    s = _check_seed("manual_seed", seed)
    with _defaults_lock:
        _global_seed[0] = s
        default_generator.manual_seed(s)
        # The CUDA defaults are remade from ``s`` on their next use (reseeding them here would need CuPy now, and
        # a device made current): the same values as reseeding them in place.
        _cuda_defaults.clear()
    return default_generator


def seed() -> int:
    """Seed every default generator from the operating system's entropy; returns the seed (``torch.seed``)."""
    s = _fresh_seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The initial seed of the default CPU generator (``torch.initial_seed``)."""
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """The default CPU generator's state (:meth:`Generator.get_state`; ``torch.get_rng_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Restore the default CPU generator's state (:meth:`Generator.set_state`; ``torch.set_rng_state``)."""
    default_generator.set_state(new_state)
