"""``devtensor.save`` / ``devtensor.load``: round trips, devices, refused objects, and files that are not archives.

The reference for values is the saved tensor itself: a loaded tensor must have the same dtype, shape and bytes
(NaN payloads and signed zeros included). CUDA round trips run through the NumPy-backed CuPy stand-in
(``fake_cupy`` fixture); "no GPU" is a stand-in with no devices, or no ``cupy`` importable at all.
"""

from __future__ import annotations

import io
import json
import math
import pathlib
import pickle
import sys
from collections import OrderedDict, namedtuple
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from helpers import SUPPORTED_DTYPES
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.errors import ArgumentTypeError, ArgumentValueError, DevtensorError, NoDataError
from devtensor.serialization import FORMAT_VERSION, MANIFEST_NAME, DeviceUnavailableError
from devtensor.tensor import Tensor

SUPPORTED = SUPPORTED_DTYPES


def round_trip(obj: object, device: Any = None) -> Any:
    buf = io.BytesIO()
    dt.save(obj, buf)
    buf.seek(0)
    return dt.load(buf, device=device)


def archive_bytes(obj: object) -> bytes:
    buf = io.BytesIO()
    dt.save(obj, buf)
    return buf.getvalue()


def host(t: Tensor) -> np.ndarray[Any, Any]:
    return t.cpu().numpy()


def assert_same_tensor(got: object, want: Tensor, device_type: str | None = None) -> None:
    """Same dtype, shape and bytes; on ``device_type`` (default: ``want``'s)."""
    assert isinstance(got, Tensor)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.device.type == (device_type or want.device.type)
    assert host(got).tobytes() == np.ascontiguousarray(host(want)).tobytes()


def assert_same(got: object, want: object) -> None:
    """Structural equality: same container types and keys in order, tensors byte-identical, plain values equal in
    type and value (NaN equal to NaN, ``-0.0`` distinct from ``0.0``)."""
    if isinstance(want, Tensor):
        assert_same_tensor(got, want)
    elif isinstance(want, dict):
        assert type(got) is dict
        assert list(got) == list(want)
        for key in want:
            assert_same(got[key], want[key])
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
    else:
        assert type(got) is type(want)
        if isinstance(want, float):
            assert isinstance(got, float)
            assert got.hex() == want.hex() or (math.isnan(got) and math.isnan(want))
        elif isinstance(want, complex):
            assert isinstance(got, complex)
            assert_same(got.real, want.real)
            assert_same(got.imag, want.imag)
        else:
            assert got == want


def npz_bytes(**members: Any) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **members)
    return buf.getvalue()


def manifest_array(manifest: object) -> np.ndarray[Any, Any]:
    return np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8)


def tensor_node(array: str = "tensor0", dtype: str = "float32", shape: list[int] | None = None) -> dict[str, Any]:
    return {"kind": "tensor", "array": array, "dtype": dtype, "shape": [2] if shape is None else shape, "device": "cpu"}


def with_manifest(root: object, version: object = FORMAT_VERSION, **arrays: Any) -> bytes:
    manifest = {"format": "devtensor", "version": version, "root": root}
    return npz_bytes(**{MANIFEST_NAME: manifest_array(manifest)}, **arrays)


def refused_archive(data: bytes, tmp_path: pathlib.Path, needle: str = "") -> ArgumentValueError:
    """Loading ``data`` from a file raises an ArgumentValueError naming the file (and ``needle``)."""
    path = tmp_path / "weights.bin"
    path.write_bytes(data)
    with pytest.raises(ArgumentValueError) as info:
        dt.load(path)
    message = str(info.value)
    assert message.startswith("load: ")
    assert str(path) in message
    assert needle in message
    return info.value


# --- round trips -----------------------------------------------------------------------------------------------


def extreme_values(dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The edge values of ``dtype``: limits, zeros of both signs, NaN, infinities, subnormals."""
    if dtype.kind == "b":
        return np.array([True, False, True], dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.max, 0, 1, info.max - 1], dtype)
    real = np.finfo(dtype)
    values = [real.min, real.max, real.tiny, real.smallest_subnormal, 0.0, -0.0, np.inf, -np.inf, np.nan, 1 / 3]
    if dtype.kind == "f":
        return np.array(values, dtype)
    return np.array([complex(a, b) for a, b in zip(values, reversed(values), strict=True)], dtype)


@pytest.mark.parametrize("dtype", SUPPORTED, ids=str)
def test_every_dtype_round_trips_exactly(dtype: np.dtype[Any]) -> None:
    t = dt.from_numpy(extreme_values(dtype))
    got = round_trip(t)
    assert_same_tensor(got, t)
    assert got.dtype is t.dtype  # the canonical dtype object, as every devtensor tensor has


@given(data=st.data(), dtype=st.sampled_from(SUPPORTED))
def test_arrays_of_any_shape_round_trip(data: st.DataObject, dtype: np.dtype[Any]) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    array = data.draw(hnp.arrays(dtype, shape))
    t = dt.from_numpy(array)
    assert_same_tensor(round_trip(t), t)


def test_zero_dim_and_empty_tensors() -> None:
    for t in (dt.tensor(3.5), dt.zeros(0), dt.zeros(2, 0, 3, dtype=dt.int16), dt.tensor(True)):
        got = round_trip(t)
        assert_same_tensor(got, t)


def test_views_save_their_values_not_their_base() -> None:
    base = dt.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6))
    views = {
        "transposed": base.transpose(0, 1),
        "strided": base[1:, ::2],
        "reversed": dt.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6)[::-1, ::-2]),
        "broadcast": base[0].expand((3, 6)),
        "element": base[2, 3],
    }
    got = round_trip(views)
    assert_same(got, views)
    with np.load(io.BytesIO(archive_bytes(views))) as archive:
        stored = [archive[name] for name in archive.files if name != MANIFEST_NAME]
    assert [a.shape for a in stored] == [v.shape for v in views.values()]  # the views' own elements only
    assert all(a.flags.c_contiguous for a in stored)
    for t in got.values():
        assert t.is_contiguous()


def test_loaded_tensors_own_fresh_writable_storage() -> None:
    array = np.arange(4.0)
    array.flags.writeable = False
    t = dt.from_numpy(array)
    assert t.is_readonly
    before = snapshot(t)
    got = round_trip(t)
    assert_unchanged(before)  # saving reads only
    assert not got.is_readonly
    assert got.version == 0
    got[0] = 9.0
    assert host(t)[0] == 0.0


plain_values = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.complex_numbers(allow_nan=True, allow_infinity=True)
    | st.text(max_size=5)
)
small_tensors = st.builds(
    dt.from_numpy,
    st.sampled_from(SUPPORTED).flatmap(lambda d: hnp.arrays(d, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))),
)
nested = st.recursive(
    small_tensors | plain_values,
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)


@given(obj=nested)
def test_nested_containers_round_trip(obj: object) -> None:
    assert_same(round_trip(obj), obj)


def test_plain_values_keep_type_and_exact_value() -> None:
    obj = [
        True,
        1,
        2**100,
        -(2**70),
        -0.0,
        float("nan"),
        float("inf"),
        5e-324,
        1 / 3,
        complex(-0.0, float("-inf")),
        "naïve ☃",
        "\ud800",  # a lone surrogate
        None,
        "",
        2**64,
        -(2**63),
        10**5000,  # beyond the decimal conversion limit of ints
    ]
    assert_same(round_trip(obj), obj)


def test_too_deep_nesting_is_refused() -> None:
    deep: list[object] = []
    for _ in range(sys.getrecursionlimit() + 10):
        deep = [deep]
    with pytest.raises(ArgumentValueError, match="save: argument 'obj' is nested too deeply"):
        dt.save(deep, io.BytesIO())


def test_dict_subclasses_load_as_dicts_in_order() -> None:
    state = OrderedDict([("z", dt.ones(2)), ("a", dt.zeros(1))])
    got = round_trip(state)
    assert type(got) is dict
    assert list(got) == ["z", "a"]


def test_one_tensor_saved_twice_is_stored_once_and_loads_once() -> None:
    t = dt.arange(5)
    obj = {"a": t, "b": [t, t.clone()]}
    data = archive_bytes(obj)
    with np.load(io.BytesIO(data)) as archive:
        assert len(archive.files) == 3  # the manifest and two arrays
    got = dt.load(io.BytesIO(data))
    assert got["a"] is got["b"][0]
    assert got["a"] is not got["b"][1]


def test_paths_and_file_objects(tmp_path: pathlib.Path) -> None:
    t = dt.tensor([[1, 2], [3, 4]], dtype=dt.uint16)
    for path in (str(tmp_path / "a.dt"), tmp_path / "b", bytes(tmp_path / "c.npz")):
        dt.save(t, path)
        assert pathlib.Path(path.decode() if isinstance(path, bytes) else path).exists()  # no suffix added
        assert_same_tensor(dt.load(path), t)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.dt", "b", "c.npz"]
    with open(tmp_path / "d", "wb") as fh:
        fh.write(b"prefix")
        dt.save({"t": t}, fh)
    with open(tmp_path / "d", "rb") as fh:
        assert fh.read(6) == b"prefix"
        assert_same(dt.load(fh), {"t": t})
        assert not fh.closed  # the caller's file stays open
    # The arrays are ordinary .npz members: NumPy reads them as well.
    with np.load(tmp_path / "b") as archive:
        assert (archive["tensor0"] == np.array([[1, 2], [3, 4]], np.uint16)).all()


def test_top_level_plain_values_and_empty_containers() -> None:
    objs: tuple[object, ...] = (None, 3, "x", [], {}, (), [[], {"a": ()}])
    for obj in objs:
        assert_same(round_trip(obj), obj)


# --- devices ---------------------------------------------------------------------------------------------------


def test_cuda_tensors_go_back_to_cuda(fake_cupy: ModuleType) -> None:
    a = dt.tensor(np.arange(6.0).reshape(2, 3), device="cuda:1")
    obj = {"a": a, "view": a[:, ::2], "cpu": dt.tensor([1, 2], dtype=dt.int8)}
    data = archive_bytes(obj)
    with np.load(io.BytesIO(data)) as archive:
        manifest = json.loads(archive[MANIFEST_NAME].tobytes())
    assert [node["device"] for _, node in manifest["root"]["items"]] == ["cuda", "cuda", "cpu"]
    got = dt.load(io.BytesIO(data))
    assert_same(got, obj)
    assert got["a"].device == dt.Device("cuda:0")  # the device type is kept: the current CUDA device
    assert got["cpu"].device == dt.Device("cpu")
    fake_cupy.cuda.runtime.setDevice(1)
    assert dt.load(io.BytesIO(data))["a"].device == dt.Device("cuda:1")


def test_device_argument_moves_every_tensor(fake_cupy: ModuleType) -> None:
    obj = [dt.tensor([1.5, 2.5], device="cuda:0"), dt.tensor([[True]])]
    data = archive_bytes(obj)
    on_cpu = dt.load(io.BytesIO(data), device="cpu")
    assert [t.device.type for t in on_cpu] == ["cpu", "cpu"]
    assert_same_tensor(on_cpu[0], obj[0], "cpu")
    on_cuda = dt.load(io.BytesIO(data), device="cuda:1")
    assert [t.device for t in on_cuda] == [dt.Device("cuda:1")] * 2
    assert_same_tensor(on_cuda[1], obj[1], "cuda")
    meta = dt.load(io.BytesIO(data), device="meta")
    assert [(t.device.type, t.shape, t.dtype) for t in meta] == [("meta", (2,), dt.float64), ("meta", (1, 1), dt.bool)]


def _cuda_archive(fake_cupy: ModuleType) -> bytes:
    return archive_bytes({"w": dt.tensor([1.0, 2.0], device="cuda")})


@pytest.mark.parametrize("absence", ["no cupy", "no device"])
def test_cuda_archive_without_a_gpu_suggests_cpu(
    fake_cupy: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, absence: str
) -> None:
    path = tmp_path / "cuda.dt"
    path.write_bytes(_cuda_archive(fake_cupy))
    if absence == "no cupy":
        monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    else:
        fake_cupy.reset(device_count=0)
    for device in (None, "cuda"):
        with pytest.raises(DeviceUnavailableError) as info:
            dt.load(path, device=device)
        assert isinstance(info.value, RuntimeError)
        assert isinstance(info.value, DevtensorError)
        message = str(info.value)
        assert message.startswith("load: ")
        assert str(path) in message
        assert 'device="cpu"' in message
    got = dt.load(path, device="cpu")
    assert got["w"].device.type == "cpu"
    assert host(got["w"]).tolist() == [1.0, 2.0]


def test_unregistered_device_type_suggests_cpu(tmp_path: pathlib.Path) -> None:
    node = tensor_node() | {"device": "xpu"}
    data = with_manifest(node, tensor0=np.array([1.0, 2.0], np.float32))
    path = tmp_path / "xpu.dt"
    path.write_bytes(data)
    with pytest.raises(DeviceUnavailableError, match=r"'xpu'.*device=\"cpu\""):
        dt.load(path)
    assert host(dt.load(path, device="cpu")).tolist() == [1.0, 2.0]


def test_a_bad_device_argument_fails_before_reading(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match=r"load: argument .device.: unknown device type .gpu."):
        dt.load(tmp_path / "missing", device="gpu")
    with pytest.raises(FileNotFoundError):
        dt.load(tmp_path / "missing")


# --- refused objects -------------------------------------------------------------------------------------------

Point = namedtuple("Point", "x y")


@pytest.mark.parametrize(
    ("obj", "where"),
    [
        (np.zeros(2), "obj"),
        ({"a": [1, np.float32(1.0)]}, "obj['a'][1]"),
        ({"a": {1, 2}}, "obj['a']"),
        ([object()], "obj[0]"),
        (Point(1, 2), "obj"),
        ({1: dt.ones(1)}, "obj"),
        (b"bytes", "obj"),
    ],
    ids=["ndarray", "numpy scalar", "set", "object", "namedtuple", "int key", "bytes"],
)
def test_unsupported_values_are_refused_naming_where(obj: object, where: str, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "out.dt"
    with pytest.raises(ArgumentTypeError) as info:
        dt.save(obj, path)
    assert str(info.value).startswith("save: ")
    assert f"at {where}" in str(info.value)
    assert not path.exists()  # nothing written


def test_cycles_are_refused(tmp_path: pathlib.Path) -> None:
    loop: list[object] = [dt.ones(1)]
    loop.append({"again": loop})
    with pytest.raises(ArgumentValueError, match=r"save: .*itself at obj\[1\]\['again'\]"):
        dt.save(loop, tmp_path / "x")
    shared = [1]
    assert_same(round_trip([shared, shared]), [[1], [1]])  # repeated, not cyclic: fine


def test_meta_tensors_are_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "meta.dt"
    with pytest.raises(NoDataError, match=r"save: .*obj\['w'\].*meta"):
        dt.save({"b": dt.ones(2), "w": dt.empty(2, 3, device="meta")}, path)
    assert not path.exists()


def test_bad_file_arguments() -> None:
    with pytest.raises(ArgumentTypeError, match="save: argument 'f'"):
        dt.save(dt.ones(1), 3)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="save: argument 'f'"):
        dt.save(dt.ones(1), io.StringIO())  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="load: argument 'f'"):
        dt.load(object())  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="load: argument 'f'"):
        dt.load(io.StringIO("text"))  # type: ignore[arg-type]


# --- files that are not archives -------------------------------------------------------------------------------


def test_foreign_files_are_refused(tmp_path: pathlib.Path) -> None:
    refused_archive(npz_bytes(weights=np.ones(3)), tmp_path, "without the '__devtensor__' manifest")
    refused_archive(b"hello, world\n" * 10, tmp_path, "not a devtensor archive")
    refused_archive(b"", tmp_path, "not a devtensor archive")
    npy = io.BytesIO()
    np.save(npy, np.ones(3))
    refused_archive(npy.getvalue(), tmp_path, "single NumPy .npy array")
    refused_archive(pickle.dumps(dt.ones(3)), tmp_path, "not a devtensor archive")


_unpickled: list[str] = []


def _record_unpickling() -> str:
    _unpickled.append("called")
    return "unpickled"


class _SideEffect:
    """Unpickling it calls :func:`_record_unpickling`: proof that a loader executed code from a file."""

    def __reduce__(self) -> tuple[Callable[[], str], tuple[()]]:
        return (_record_unpickling, ())


def test_object_arrays_are_never_unpickled(tmp_path: pathlib.Path) -> None:
    evil = np.array([_SideEffect()], dtype=object)
    pickle.loads(pickle.dumps(evil))
    assert _unpickled == ["called"]  # the payload works when unpickled
    _unpickled.clear()
    data = with_manifest(tensor_node(dtype="float32", shape=[1]), tensor0=evil)
    refused_archive(data, tmp_path, "allow_pickle")
    manifest_as_object = npz_bytes(**{MANIFEST_NAME: evil})
    refused_archive(manifest_as_object, tmp_path)
    refused_archive(pickle.dumps(evil), tmp_path)
    assert _unpickled == []


def test_truncated_archives_are_refused(tmp_path: pathlib.Path) -> None:
    data = archive_bytes({"a": dt.arange(10), "b": [dt.ones(2, 2, dtype=dt.complex64)]})
    for size in range(len(data)):
        refused_archive(data[:size], tmp_path)


def test_corrupted_bytes_are_refused_or_harmless(tmp_path: pathlib.Path) -> None:
    """Flipping any byte gives a devtensor error or (a byte the zip format does not check, like a timestamp) the
    saved values: never another exception, never wrong data."""
    obj = {"a": dt.arange(3, dtype=dt.int16), "b": [2.5, dt.tensor([True])]}
    data = archive_bytes(obj)
    harmless = 0
    for i in range(len(data)):
        corrupted = data[:i] + bytes([data[i] ^ 0xA5]) + data[i + 1 :]
        try:
            got = dt.load(io.BytesIO(corrupted))
        except ArgumentValueError as e:
            assert "the BytesIO file object" in str(e)
        else:
            assert_same(got, obj)
            harmless += 1
    assert harmless < len(data) // 4


@pytest.mark.parametrize(
    ("members", "needle"),
    [
        ({"root": tensor_node()}, "refers to the array 'tensor0'"),
        ({"root": tensor_node(), "tensor0": np.ones(2, np.float64)}, "manifest says float32"),
        ({"root": tensor_node(), "tensor0": np.ones(3, np.float32)}, "of shape (2,)"),
        ({"root": tensor_node(), "tensor0": np.ones(2, ">f4")}, "manifest says float32"),
        ({"root": tensor_node(dtype="f4"), "tensor0": np.ones(2, np.float32)}, "non-canonical"),
        ({"root": tensor_node(dtype="str")}, "unsupported dtype"),
        ({"root": tensor_node(shape=[-1])}, "malformed shape"),
        ({"root": tensor_node() | {"device": "cuda:0"}}, "malformed device"),
        ({"root": {"kind": "set", "items": []}}, "unknown kind 'set'"),
        ({"root": {"kind": "dict", "items": [[1, {"kind": "none"}]]}}, "malformed dict item"),
        ({"root": {"kind": "int", "value": True}}, "malformed 'value'"),
        ({"root": {"kind": "float", "value": "1.5x"}}, "malformed float"),
        ({"root": {"kind": "int", "value": "0xg"}}, "malformed int"),
        ({"root": {"kind": "complex", "value": ["0x1p0"]}}, "malformed complex"),
        ({"root": {"kind": "none"}, "version": FORMAT_VERSION + 1}, "newer devtensor"),
        ({"root": {"kind": "none"}, "version": "1"}, "format version"),
        ({"root": [1]}, "not an object"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_malformed_manifests_are_refused(members: dict[str, Any], needle: str, tmp_path: pathlib.Path) -> None:
    root = members.pop("root")
    version = members.pop("version", FORMAT_VERSION)
    refused_archive(with_manifest(root, version, **members), tmp_path, needle)


def test_manifests_that_are_not_devtensor_json(tmp_path: pathlib.Path) -> None:
    refused_archive(npz_bytes(**{MANIFEST_NAME: np.frombuffer(b"{not json", np.uint8)}), tmp_path)
    refused_archive(npz_bytes(**{MANIFEST_NAME: np.frombuffer(b"\xff\xfe", np.uint8)}), tmp_path)
    refused_archive(npz_bytes(**{MANIFEST_NAME: np.array(["{}"])}), tmp_path, "not UTF-8 bytes")
    refused_archive(npz_bytes(**{MANIFEST_NAME: manifest_array({"format": "other"})}), tmp_path, "does not describe")
    deep = "[" * 100_000 + "]" * 100_000
    refused_archive(npz_bytes(**{MANIFEST_NAME: np.frombuffer(deep.encode(), np.uint8)}), tmp_path)


# --- crafted members: headers checked before any data is read -------------------------------------------------


def crafted(manifest_root: object, members: dict[str, bytes], deflate: bool = False) -> bytes:
    """A zip holding the manifest for ``manifest_root`` and ``members`` (name -> raw member bytes, written as
    given: a header may lie about the data after it)."""
    import zipfile

    manifest = manifest_array({"format": "devtensor", "version": FORMAT_VERSION, "root": manifest_root})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as z:
        z.writestr(MANIFEST_NAME + ".npy", npy_bytes(manifest))
        for name, raw in members.items():
            z.writestr(name + ".npy", raw)
    return buf.getvalue()


def npy_bytes(array: np.ndarray[Any, Any]) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npy_header(dtype: str, shape: tuple[int, ...]) -> bytes:
    """A ``.npy`` header (version 1.0) claiming ``dtype`` and ``shape``, with no data after it."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue()


@pytest.mark.parametrize("deflate", [False, True])
def test_a_header_disagreeing_with_the_manifest_is_refused_before_its_data(
    deflate: bool, tmp_path: pathlib.Path
) -> None:
    # The member's header says 1.5e9 uint8 (a few KB of deflated zeros follow); the manifest says float64 [2].
    lying = npy_header("|u1", (1_572_864_000,)) + bytes(4096)
    data = crafted(tensor_node(dtype="float64", shape=[2]), {"tensor0": lying}, deflate)
    assert len(data) < 10_000
    refused_archive(data, tmp_path, "'tensor0' is uint8 of shape (1572864000,), but the manifest says float64")


@pytest.mark.parametrize("deflate", [False, True])
@pytest.mark.parametrize("count", [1_572_864_000, 2**40])  # (2**40 float64: 8 TiB)
def test_a_header_claiming_more_data_than_the_member_holds_is_refused(
    count: int, deflate: bool, tmp_path: pathlib.Path
) -> None:
    # The manifest agrees with the lying header: the sizes the zip directory declares refuse it, nothing allocated.
    data = crafted(
        tensor_node(dtype="float64", shape=[count]), {"tensor0": npy_header("<f8", (count,)) + bytes(64)}, deflate
    )
    refused_archive(data, tmp_path, "more than the member holds")
    refused_archive(data, tmp_path, "'tensor0'")


def test_members_that_are_not_npy_arrays_are_refused(tmp_path: pathlib.Path) -> None:
    for raw in (b"hello, world", b"", b"\x93NUMPY", npy_header("<f4", (2,)) + b"\x00" * 3):
        refused_archive(crafted(tensor_node(), {"tensor0": raw}), tmp_path, "'tensor0'")
    refused_archive(crafted(tensor_node(), {"tensor0": b"PK not npy"}), tmp_path, "no .npy magic")
    long = npy_bytes(np.ones(2, np.float32)) + b"extra"
    refused_archive(crafted(tensor_node(), {"tensor0": long}), tmp_path, "beyond")
    # A meta load reads no data but still checks every header against the manifest.
    path = tmp_path / "meta.bin"
    path.write_bytes(crafted(tensor_node(), {"tensor0": b"hello, world"}))
    with pytest.raises(ArgumentValueError, match=r"no \.npy magic"):
        dt.load(path, device="meta")


def test_the_manifest_has_a_size_cap(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import zipfile

    from devtensor import serialization

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # a header claiming a 1 TiB manifest, a few bytes following
        z.writestr(MANIFEST_NAME + ".npy", npy_header("|u1", (2**40,)) + b"{}")
    refused_archive(buf.getvalue(), tmp_path, "more than the")
    monkeypatch.setattr(serialization, "MAX_MANIFEST_BYTES", 200)
    many = {f"k{i}": i for i in range(50)}
    with pytest.raises(ArgumentValueError, match=r"save: .*manifest of \d+ bytes, more than the 200"):
        dt.save(many, tmp_path / "many.bin")
    assert not (tmp_path / "many.bin").exists()
    monkeypatch.setattr(serialization, "MAX_MANIFEST_BYTES", 10**6)
    dt.save(many, tmp_path / "many.bin")
    monkeypatch.setattr(serialization, "MAX_MANIFEST_BYTES", 200)
    refused_archive((tmp_path / "many.bin").read_bytes(), tmp_path, "allowed")


def test_deflated_archives_load(tmp_path: pathlib.Path) -> None:
    # Well-formed members compressed as NumPy's savez_compressed does (zeros compress about 1000 to 1).
    zeros = np.zeros(3_000_000, np.uint8)
    data = crafted(tensor_node(dtype="uint8", shape=[zeros.size]), {"tensor0": npy_bytes(zeros)}, deflate=True)
    assert len(data) < 10_000
    path = tmp_path / "zeros.bin"
    path.write_bytes(data)
    np.testing.assert_array_equal(dt.load(path).numpy(), zeros)
    fortran = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    data = crafted(tensor_node(dtype="float64", shape=[2, 3]), {"tensor0": npy_bytes(fortran)}, deflate=True)
    path.write_bytes(data)
    np.testing.assert_array_equal(dt.load(path).numpy(), fortran)


def test_exported_at_top_level() -> None:
    assert dt.save is dt.serialization.save
    assert dt.load is dt.serialization.load
    assert {"save", "load"} <= set(dt.__all__)


@pytest.mark.cuda
def test_round_trip_on_a_real_gpu(tmp_path: pathlib.Path) -> None:
    """The same round trips with real CuPy (skipped without a GPU)."""
    obj = {"w": dt.tensor(np.arange(6.0).reshape(2, 3), device="cuda"), "h": dt.tensor([1, 2], dtype=dt.float16)}
    obj["view"] = obj["w"][:, ::2]
    dt.save(obj, tmp_path / "gpu.dt")
    got = dt.load(tmp_path / "gpu.dt")
    assert_same(got, obj)
    assert got["w"].device.type == "cuda"
    assert dt.load(tmp_path / "gpu.dt", device="cpu")["view"].device.type == "cpu"
