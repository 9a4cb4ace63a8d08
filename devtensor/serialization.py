"""Saving and loading tensors: :func:`save` and :func:`load`, PyTorch's ``torch.save``/``torch.load`` over NumPy's
``.npz`` format.

An archive is an ordinary ``.npz`` file (a zip of ``.npy`` arrays, as ``numpy.savez`` writes): one array per
saved tensor (``tensor0``, ``tensor1``, …, C-contiguous) and one array named ``__devtensor__``, the UTF-8 bytes of a
JSON manifest::

    {"format": "devtensor", "version": 1,
     "root": {"kind": "dict", "items": [["w", {"kind": "tensor", "array": "tensor0", "dtype": "float32",
                                                "shape": [2, 3], "device": "cuda"}]]}}

Node kinds: ``tensor`` (array name, dtype name, shape, device type), ``dict`` (str keys, in order), ``list``,
``tuple``, and the plain values ``none``, ``bool``, ``str``, ``int`` (a JSON number, or hexadecimal text beyond 64
bits), ``float`` (``float.hex``: exact, NaN and infinities included) and ``complex`` (two ``float.hex`` strings).
One tensor object saved twice is stored once and loads as one tensor referenced twice.

Loading reads with ``numpy.load(..., allow_pickle=False)`` and parses JSON: it never executes code from the file.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable
from typing import IO, Any, Final, TypeAlias, cast, overload

import numpy as np

from devtensor.backends import backend_for, cupy_module
from devtensor.creation import asarray, empty
from devtensor.device import Device, DeviceLike, as_device
from devtensor.dtypes import DType, to_dtype
from devtensor.errors import ArgumentTypeError, ArgumentValueError, DeviceUnavailableError, NoDataError
from devtensor.storage import ForeignStorage
from devtensor.tensor import Tensor

__all__ = ["FORMAT_VERSION", "MANIFEST_NAME", "DeviceUnavailableError", "FileLike", "load", "save"]

#: The version of the manifest layout :func:`save` writes; :func:`load` reads versions up to this one.
FORMAT_VERSION: Final = 1
#: The name of the manifest array inside the archive.
MANIFEST_NAME: Final = "__devtensor__"
_FORMAT_TAG: Final = "devtensor"

#: Where :func:`save` writes and :func:`load` reads: a path (``str``, ``bytes`` or ``os.PathLike``) or a binary
#: file object (writable for ``save``; readable and seekable for ``load``).
FileLike: TypeAlias = "str | bytes | os.PathLike[str] | os.PathLike[bytes] | IO[bytes]"


# --- save ------------------------------------------------------------------------------------------------------


def save(obj: object, f: FileLike) -> None:
    """Write ``obj`` to ``f`` as a devtensor archive (NumPy's ``.npz`` format plus a JSON manifest).

    ``obj`` is a Tensor, or a dict with ``str`` keys, a list or a tuple, nested to any depth, whose leaves are
    Tensors or plain Python values (``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``). Each tensor is
    stored with its dtype, shape and device type (``cpu``, ``cuda``, …); CUDA tensors are copied to host memory.
    Views and non-contiguous tensors store their own values (C-contiguous), never their base. A tensor object that
    appears more than once is stored once. Dicts come back as ``dict`` (a subclass such as ``OrderedDict`` as a
    plain dict), keys in order.

    Semantics follow PyTorch's ``torch.save``; the container is NumPy's ``numpy.savez`` format (uncompressed), so
    ``numpy.load`` can read the arrays too. Unlike ``numpy.savez``, a path is used as given: no ``.npz`` suffix is
    appended.

    Args:
        obj: what to save (see above).
        f: a path (``str``, ``bytes``, ``os.PathLike``; the file is created or overwritten) or a writable binary
            file object (written from its current position).
    Raises:
        ArgumentTypeError (TypeError): ``obj`` holds an unsupported value (a NumPy array or scalar, a set, a
            namedtuple, an object…) or a dict key that is not a ``str`` (the message names where in ``obj``);
            ``f`` is neither a path nor a writable binary file object (a text-mode file, say).
        ArgumentValueError (ValueError): ``obj`` contains itself (a cycle), or its manifest (the JSON describing
            everything but the tensors' data) would exceed ``MAX_MANIFEST_BYTES`` (16 MiB), which load refuses.
        NoDataError (RuntimeError): ``obj`` holds a meta tensor, which has no data to save.
        OSError: the file cannot be opened or written.
    Nothing is written when ``obj`` is refused: everything is checked (and copied to host memory) before ``f`` is
    opened.
    """
    import json

    writer = _writer(f)
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    try:
        root = _Encoder(arrays).node(obj, "obj", set())
        manifest = {"format": _FORMAT_TAG, "version": FORMAT_VERSION, "root": root}
        # ASCII with escapes: a str holding a lone surrogate still encodes, and loads back the same.
        text = json.dumps(manifest, separators=(",", ":"))
    except RecursionError:
        raise ArgumentValueError("save: argument 'obj' is nested too deeply to save") from None
    encoded = text.encode("utf-8")
    if len(encoded) > MAX_MANIFEST_BYTES:  # (load refuses a larger one: every archive saved loads back)
        raise ArgumentValueError(
            f"save: argument 'obj' needs a manifest of {len(encoded)} bytes, more than the {MAX_MANIFEST_BYTES} "
            "load reads (too many plain values or tensors; store bulk data in tensors)"
        )
    members: dict[str, np.ndarray[Any, Any]] = {MANIFEST_NAME: np.frombuffer(encoded, dtype=np.uint8)}
    members.update(arrays)
    writer(members)


def _writer(f: object) -> Callable[[dict[str, Any]], None]:
    """A function writing the members to ``f``; checks ``f``'s type now, opens a path only when called."""
    if isinstance(f, (str, bytes, os.PathLike)):
        path = f

        def write_path(members: dict[str, Any]) -> None:
            # Opened here rather than passed to numpy.savez, which would append '.npz' to the name.
            with open(path, "wb") as fh:
                np.savez(fh, **members)

        return write_path
    if _is_binary_file(f, "write"):

        def write_file(members: dict[str, Any]) -> None:
            np.savez(f, **members)  # type: ignore[arg-type]  # a file object with write(), as numpy.savez accepts

        return write_file
    raise ArgumentTypeError(
        f"save: argument 'f' must be a path (str, bytes or os.PathLike) or a writable binary file object, "
        f"got {type(f).__name__}"
    )


class _Encoder:
    """Turns a saved object into manifest nodes, collecting host copies of its tensors in ``arrays``."""

    def __init__(self, arrays: dict[str, np.ndarray[Any, Any]]) -> None:
        self.arrays = arrays
        # id(tensor) -> array name; the tensors stay alive in the saved object for the whole call.
        self.names: dict[int, str] = {}

    def node(self, x: object, where: str, open_containers: set[int]) -> dict[str, Any]:
        if isinstance(x, Tensor):
            return self.tensor(x, where)
        kind = type(x)
        if x is None:
            return {"kind": "none"}
        if kind is bool:
            return {"kind": "bool", "value": x}
        # isinstance narrows for the type checker; the exact type test refuses subclasses (numpy.float64, IntEnum…)
        # that would come back as a different type.
        if isinstance(x, int) and kind is int:
            # Beyond 64 bits, hexadecimal text: decimal conversion of huge ints is limited (sys.set_int_max_str_digits).
            return {"kind": "int", "value": x if -(2**63) <= x < 2**64 else hex(x)}
        if isinstance(x, float) and kind is float:
            return {"kind": "float", "value": x.hex()}
        if isinstance(x, complex) and kind is complex:
            return {"kind": "complex", "value": [x.real.hex(), x.imag.hex()]}
        if kind is str:
            return {"kind": "str", "value": x}
        if isinstance(x, dict) or kind is list or kind is tuple:
            if id(x) in open_containers:
                raise ArgumentValueError(f"save: argument 'obj' contains itself at {where} (a cycle)")
            open_containers.add(id(x))
            try:
                if isinstance(x, dict):
                    items: list[list[Any]] = []
                    for key, value in x.items():
                        if type(key) is not str:
                            raise ArgumentTypeError(
                                f"save: dict keys must be str, got the {type(key).__name__} key {key!r} at {where}"
                            )
                        items.append([key, self.node(value, f"{where}[{key!r}]", open_containers)])
                    return {"kind": "dict", "items": items}
                assert isinstance(x, (list, tuple))
                entries = [self.node(v, f"{where}[{i}]", open_containers) for i, v in enumerate(x)]
                return {"kind": kind.__name__, "items": entries}
            finally:
                open_containers.discard(id(x))
        raise ArgumentTypeError(
            f"save: cannot save the {kind.__name__} at {where}: an archive holds Tensors, dicts with str keys, "
            "lists, tuples, None, bool, int, float, complex and str"
        )

    def tensor(self, t: Tensor, where: str) -> dict[str, Any]:
        name = self.names.get(id(t))
        if name is None:
            try:
                host = t.cpu().numpy()  # shares memory for a CPU tensor; a host copy for other devices
            except NoDataError:
                raise NoDataError(
                    f"save: the tensor at {where} is on {t.device}, which has no data to save "
                    f"(shape {t.shape}, dtype {t.dtype})"
                ) from None
            if not host.flags.c_contiguous:
                host = np.array(host, order="C")  # the values of a view, never its base
            name = f"tensor{len(self.arrays)}"
            self.arrays[name] = host
            self.names[id(t)] = name
        return {
            "kind": "tensor",
            "array": name,
            "dtype": t.dtype.name,
            "shape": list(t.shape),
            "device": t.device.type,
        }


# --- load ------------------------------------------------------------------------------------------------------


def load(f: FileLike, device: DeviceLike | None = None) -> Any:
    """Read an archive written by :func:`save`: the saved object, with every tensor's dtype and shape as saved.

    Each tensor goes back to its saved device type (CUDA tensors to the current CUDA device, through CuPy) unless
    ``device`` names where all tensors go (PyTorch's ``map_location``), e.g. ``device="cpu"`` to read a CUDA
    archive on a machine without a GPU, or ``device="meta"`` to get shapes and dtypes without reading data. Dicts,
    lists and tuples come back as ``dict``, ``list`` and ``tuple``; loaded tensors own fresh storage (version 0).

    Loading never executes code from the file: the arrays are read with ``numpy.load(..., allow_pickle=False)``
    and the manifest is JSON. Semantics follow PyTorch's ``torch.load``.

    Args:
        f: a path (``str``, ``bytes``, ``os.PathLike``) or a readable, seekable binary file object.
        device: where to put every tensor (a device, a device string such as ``"cpu"`` or ``"cuda:1"``, or an
            int meaning ``cuda:N``); ``None`` (default) keeps each tensor's saved device type.
    Returns:
        The saved object: a Tensor, or nested dicts/lists/tuples of Tensors and plain Python values.
    Raises:
        ArgumentValueError (ValueError): ``f`` is not a devtensor archive: not a zip (a text file, a ``.npy``
            file, a pickle), a ``.npz`` without a devtensor manifest, a truncated or corrupted file, an object
            (pickled) array, a manifest that is malformed, larger than ``MAX_MANIFEST_BYTES`` (16 MiB), refers
            to a missing array or disagrees with an array's dtype or shape, a member without the ``.npy`` magic
            or whose header claims more data than the member holds, or one written by a newer devtensor. The
            message names the file. Each member's ``.npy`` header is checked against the manifest (and the
            sizes the zip directory declares) before its data is read, so a refused archive costs no more
            memory than its declared sizes.
        DeviceUnavailableError (RuntimeError): the archive holds CUDA tensors (or ``device`` asks for CUDA) and
            CuPy or a GPU is missing, or a saved device type is not registered here; the message suggests
            ``device="cpu"``.
        ArgumentTypeError (TypeError): ``f`` is neither a path nor a binary file object (a text-mode file, say).
        ValueError / TypeError: a malformed ``device`` (as :class:`~devtensor.device.Device`).
        FileNotFoundError, PermissionError (OSError): the path cannot be opened.
    """
    import json

    target = None if device is None else as_device(device, op="load")  # a bad device fails before the file is read
    name = _file_name(f)
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_from(fh, name, target, json.loads)
    if not _is_binary_file(f, "read", "seek"):
        raise ArgumentTypeError(
            f"load: argument 'f' must be a path (str, bytes or os.PathLike) or a readable, seekable binary file "
            f"object, got {type(f).__name__}"
        )
    return _load_from(f, name, target, json.loads)


def _is_binary_file(f: object, *methods: str) -> bool:
    """Whether ``f`` has the file ``methods`` and is not a text-mode file."""
    return all(callable(getattr(f, m, None)) for m in methods) and not isinstance(f, io.TextIOBase)


def _file_name(f: object) -> str:
    """How error messages name the file: its path, or the file object's ``name``, or its type."""
    if isinstance(f, (str, bytes, os.PathLike)):
        return repr(os.fsdecode(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, (str, bytes)) else f"the {type(f).__name__} file object"


class _Corrupt(Exception):
    """Internal: the reason an archive is refused; :func:`_load_from` turns it into an ArgumentValueError."""


# What numpy.load and zipfile raise on a file that is not a readable .npz: ValueError (bad magic, a pickle, an
# object array, a short read, a header or manifest that is not UTF-8), EOFError, zipfile.BadZipFile (bad zip
# structure, CRC mismatch), zlib.error (a broken compressed member), KeyError (a zip directory naming a missing
# member), OSError (a bad seek) and RuntimeError (an 'encrypted' flag; NotImplementedError: a zip version or
# compression method zipfile lacks; RecursionError: a manifest nested too deeply for json).
def _read_errors() -> tuple[type[BaseException], ...]:
    import zipfile
    import zlib

    return (
        ValueError,
        EOFError,
        zipfile.BadZipFile,
        zlib.error,
        KeyError,
        OSError,
        RuntimeError,
        _Corrupt,
    )


def _load_from(fh: Any, name: str, target: Device | None, parse_json: Callable[[str], Any]) -> Any:
    """Load from an open binary file; every failure to read it as an archive becomes one ArgumentValueError."""
    errors = _read_errors()
    try:
        archive = np.load(fh, allow_pickle=False)
    except errors as e:
        raise ArgumentValueError(f"load: {name} is not a devtensor archive ({_why(e)})") from e
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ArgumentValueError(
            f"load: {name} is not a devtensor archive (it is a single NumPy .npy array; read it with numpy.load)"
        )
    with archive:
        try:
            if MANIFEST_NAME not in archive.files:
                raise _Corrupt(
                    f"a NumPy .npz archive without the {MANIFEST_NAME!r} manifest that devtensor.save writes; "
                    "read it with numpy.load"
                )
            specs: dict[str, _TensorSpec] = {}
            root = _checked_node(_manifest(archive, parse_json), specs, "root")
            # Every device is checked before any data is read: a CUDA archive without a GPU fails fast.
            by_type = {s.device_type: _target_device(s.device_type, target, name) for s in specs.values()}
            devices = {key: by_type[spec.device_type] for key, spec in specs.items()}
            arrays = {key: _read_array(archive, key, spec, devices[key]) for key, spec in specs.items()}
        except DeviceUnavailableError:
            raise  # a RuntimeError too, but not the file's fault
        except errors as e:
            raise ArgumentValueError(f"load: {name} is not a valid devtensor archive ({_why(e)})") from e
    # Outside the handler above: an error of the device's backend is not a fault of the file.
    tensors = {key: _to_tensor(arrays[key], specs[key], devices[key]) for key in specs}
    return _build(root, tensors)


def _why(e: BaseException) -> str:
    text = str(e) if not isinstance(e, KeyError) else f"missing zip member {e}"
    return text if isinstance(e, _Corrupt) else f"{type(e).__name__}: {text}"


def _manifest(archive: Any, parse_json: Callable[[str], Any]) -> Any:
    def check(dtype: DType, shape: tuple[int, ...]) -> None:
        if dtype != np.uint8 or len(shape) != 1:
            raise _Corrupt(f"the manifest is a {dtype} array of shape {shape}, not UTF-8 bytes")
        if shape[0] > MAX_MANIFEST_BYTES:
            raise _Corrupt(f"the manifest's header claims {shape[0]} bytes, more than the {MAX_MANIFEST_BYTES} allowed")

    raw = _read_member(archive, MANIFEST_NAME, check)
    manifest = parse_json(raw.tobytes().decode("utf-8"))
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT_TAG:
        raise _Corrupt("the manifest does not describe a devtensor archive")
    version = manifest.get("version")
    if type(version) is not int or version < 1:
        raise _Corrupt(f"the manifest has no valid format version (got {version!r})")
    if version > FORMAT_VERSION:
        raise _Corrupt(
            f"written by a newer devtensor (format version {version}); this one reads versions up to {FORMAT_VERSION}"
        )
    if "root" not in manifest:
        raise _Corrupt("the manifest has no 'root' entry")
    return manifest["root"]


class _TensorSpec:
    """What the manifest says of one stored array."""

    __slots__ = ("device_type", "dtype", "shape")

    def __init__(self, dtype: DType, shape: tuple[int, ...], device_type: str) -> None:
        self.dtype = dtype
        self.shape = shape
        self.device_type = device_type


def _field(node: dict[str, Any], key: str, types: type | tuple[type, ...], where: str) -> Any:
    value = node.get(key)
    if not isinstance(value, types) or isinstance(value, bool) != (types is bool):
        raise _Corrupt(f"manifest node {where} has a malformed {key!r} entry: {value!r}")
    return value


def _checked_node(node: object, specs: dict[str, _TensorSpec], where: str) -> dict[str, Any]:
    """Validate a manifest node (recursively) and record its tensors' specs; returns the node."""
    if not isinstance(node, dict):
        raise _Corrupt(f"manifest node {where} is not an object: {node!r}")
    kind = node.get("kind")
    if kind == "tensor":
        key = _field(node, "array", str, where)
        dtype_name = _field(node, "dtype", str, where)
        try:
            dtype = to_dtype(dtype_name, op="load")
        except ArgumentTypeError:
            raise _Corrupt(f"manifest node {where} names an unsupported dtype {dtype_name!r}") from None
        if dtype.name != dtype_name:
            raise _Corrupt(f"manifest node {where} names the dtype {dtype_name!r} by a non-canonical name")
        dims = _field(node, "shape", list, where)
        if not all(type(n) is int and n >= 0 for n in dims):
            raise _Corrupt(f"manifest node {where} has a malformed shape {dims!r}")
        device_type = _field(node, "device", str, where)
        if not (device_type.isidentifier() and device_type.islower()):
            raise _Corrupt(f"manifest node {where} has a malformed device type {device_type!r}")
        spec = _TensorSpec(dtype, tuple(dims), device_type)
        known = specs.get(key)
        if known is not None and (known.dtype, known.shape, known.device_type) != (
            spec.dtype,
            spec.shape,
            spec.device_type,
        ):
            raise _Corrupt(f"manifest nodes describe the array {key!r} in two different ways")
        specs[key] = spec
    elif kind in ("dict", "list", "tuple"):
        items = _field(node, "items", list, where)
        for i, item in enumerate(items):
            if kind == "dict":
                if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                    raise _Corrupt(f"manifest node {where} has a malformed dict item: {item!r}")
                _checked_node(item[1], specs, f"{where}[{item[0]!r}]")
            else:
                _checked_node(item, specs, f"{where}[{i}]")
    elif kind == "none":
        pass
    elif kind in ("bool", "str"):
        _field(node, "value", bool if kind == "bool" else str, where)
    elif kind == "int":
        value = _field(node, "value", (int, str), where)
        if isinstance(value, str):
            node["value"] = _hex_int(value, where)
    elif kind == "float":
        _hex_float(_field(node, "value", str, where), where)
    elif kind == "complex":
        parts = _field(node, "value", list, where)
        if len(parts) != 2 or not all(isinstance(p, str) for p in parts):
            raise _Corrupt(f"manifest node {where} has a malformed complex value: {parts!r}")
        for p in parts:
            _hex_float(p, where)
    else:
        raise _Corrupt(f"manifest node {where} has an unknown kind {kind!r}")
    return node


def _hex_int(text: str, where: str) -> int:
    try:
        return int(text, 16)
    except ValueError:
        raise _Corrupt(f"manifest node {where} has a malformed int {text!r}") from None


def _hex_float(text: str, where: str) -> float:
    try:
        return float.fromhex(text)
    except (ValueError, OverflowError):
        raise _Corrupt(f"manifest node {where} has a malformed float {text!r}") from None


def _target_device(device_type: str, target: Device | None, name: str) -> Device:
    """Where a tensor saved on ``device_type`` goes; raises DeviceUnavailableError if that cannot be used here."""
    if target is None:
        try:
            dev = Device(device_type)
        except ArgumentValueError:
            raise DeviceUnavailableError(
                f"load: {name} holds tensors saved on device type {device_type!r}, which is not registered here; "
                'pass device="cpu" to load them onto the CPU'
            ) from None
    else:
        dev = target
    if dev.type == "cuda" and not _cuda_usable():
        what = "CUDA tensors" if target is None else 'tensors to load onto device="cuda"'
        raise DeviceUnavailableError(
            f"load: {name} holds {what}, but no CUDA GPU is available (CuPy is missing or finds no device); "
            'pass device="cpu" to load them onto the CPU'
        )
    try:
        backend_for(dev)
    except ArgumentValueError:
        raise DeviceUnavailableError(
            f"load: no backend serves device type {dev.type!r} here, needed for {name}; "
            'pass device="cpu" to load onto the CPU'
        ) from None
    return dev.resolved()


def _cuda_usable() -> bool:
    """Whether CuPy imports and reports at least one device."""
    try:
        return int(cupy_module().cuda.runtime.getDeviceCount()) > 0
    except Exception:  # no CuPy (RuntimeError), no driver (CUDARuntimeError), …: no usable GPU either way
        return False


def _read_array(archive: Any, key: str, spec: _TensorSpec, device: Device) -> np.ndarray[Any, Any] | None:
    """The stored array ``key``, its ``.npy`` header checked against its spec before any data is read; None
    for a device without data (meta): the header is checked, the data not read."""
    if key not in archive.files:
        raise _Corrupt(f"the manifest refers to the array {key!r}, which the archive does not contain")

    def check(dtype: DType, shape: tuple[int, ...]) -> None:
        if dtype != spec.dtype or shape != spec.shape:
            raise _Corrupt(
                f"the array {key!r} is {dtype} of shape {shape}, but the manifest says {spec.dtype} of "
                f"shape {spec.shape}"
            )

    return _read_member(archive, key, check, data=backend_for(device).has_data)


#: The largest manifest :func:`load` reads (and :func:`save` writes), in bytes: the JSON text is parsed whole,
#: so a bound keeps a crafted archive from costing unbounded memory before it is refused.
MAX_MANIFEST_BYTES: Final = 16 * 2**20

# Deflate cannot compress better than about 1032 to 1: a member claiming more uncompressed bytes than that is
# refused before anything is allocated for it (other methods, bzip2 and lzma, are bounded by the sizes the
# zip directory declares, which zipfile enforces).
_DEFLATE_RATIO: Final = 1100


@overload
def _read_member(archive: Any, key: str, check: Callable[[DType, tuple[int, ...]], None]) -> np.ndarray[Any, Any]: ...


@overload
def _read_member(
    archive: Any, key: str, check: Callable[[DType, tuple[int, ...]], None], *, data: bool
) -> np.ndarray[Any, Any] | None: ...


def _read_member(
    archive: Any, key: str, check: Callable[[DType, tuple[int, ...]], None], *, data: bool = True
) -> np.ndarray[Any, Any] | None:
    """The array in the member ``key + ".npy"`` of the NpzFile ``archive``, read as NumPy's ``.npy`` format
    (never unpickled): its magic and header first, ``check(dtype, shape)`` (which raises _Corrupt), the sizes
    the header implies against the sizes the zip directory declares, then (with ``data``) exactly the data's
    bytes into a new writable array; None without ``data``. _Corrupt for a member that is not a ``.npy`` array
    (no magic, an object dtype), claims more bytes than it holds, or is cut short."""
    import zipfile

    from numpy.lib import format as npy

    info = archive.zip.getinfo(f"{key}.npy")
    with archive.zip.open(info) as fh:
        try:
            version = npy.read_magic(fh)
        except ValueError:
            raise _Corrupt(f"the member {key!r} is not a NumPy .npy array (no .npy magic)") from None
        if version == (1, 0):
            shape, fortran, dtype = npy.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = npy.read_array_header_2_0(fh)
        else:  # (3.0: UTF-8 field names of structured dtypes, which no devtensor archive holds)
            raise _Corrupt(
                f"the member {key!r} is a .npy array of format version {version}, which devtensor never writes"
            )
        if dtype.hasobject:
            raise _Corrupt(f"the member {key!r} is an object array, which is never read (allow_pickle=False)")
        check(dtype, shape)
        nbytes = math.prod(shape) * dtype.itemsize
        if info.file_size < fh.tell() + nbytes or (
            info.compress_type == zipfile.ZIP_DEFLATED and nbytes > info.compress_size * _DEFLATE_RATIO + 2**16
        ):
            raise _Corrupt(
                f"the member {key!r}'s header claims {nbytes} bytes of data, more than the member holds "
                f"({info.file_size} bytes, {info.compress_size} stored)"
            )
        if not data:
            return None
        array = np.empty(shape, dtype, order="F" if fortran else "C")
        flat: Any = array.reshape(-1, order="A")  # (its memory, in the header's order: a view)
        view = memoryview(flat).cast("B") if nbytes else memoryview(b"")
        done = 0
        while done < nbytes:
            got = fh.readinto(view[done:])
            if not got:
                raise _Corrupt(f"the member {key!r} is cut short: {done} of its {nbytes} bytes of data")
            done += got
        if fh.read(1):  # (at the member's end: zipfile checks its CRC there)
            raise _Corrupt(f"the member {key!r} holds bytes beyond the {nbytes} bytes of data its header says")
    return array


def _to_tensor(array: np.ndarray[Any, Any] | None, spec: _TensorSpec, device: Device) -> Tensor:
    if array is None:
        return empty(spec.shape, dtype=spec.dtype, device=device)
    result = asarray(array, device=device)  # on the CPU, wraps the freshly read array without a copy
    # That array is no caller's: the tensor owns its memory (an out= resize may reallocate it, as any result's).
    if not result._storage.owned:  # (a ForeignStorage: the record of owned memory has no field to set)
        cast(ForeignStorage, result._storage).owned = True
    return result


def _build(node: dict[str, Any], tensors: dict[str, Tensor]) -> Any:
    """The object a validated manifest node describes."""
    kind = node["kind"]
    if kind == "tensor":
        return tensors[node["array"]]
    if kind == "dict":
        return {key: _build(value, tensors) for key, value in node["items"]}
    if kind == "list":
        return [_build(item, tensors) for item in node["items"]]
    if kind == "tuple":
        return tuple(_build(item, tensors) for item in node["items"])
    if kind == "none":
        return None
    if kind == "float":
        return float.fromhex(node["value"])
    if kind == "complex":
        real, imag = node["value"]
        return complex(float.fromhex(real), float.fromhex(imag))
    return node["value"]  # bool, int, str: checked already
