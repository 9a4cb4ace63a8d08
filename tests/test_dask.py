"""Dask arrays of devtensor chunks: the NumPy functions Dask calls on a chunk type (NEP 13/18/35), Dask's array
operations on the threaded scheduler (CPU chunks, and CUDA chunks through the CuPy stand-in), ``devtensor.dask``
(to_dask, from_dask, map_blocks), pickling, and one ``distributed.LocalCluster`` of two worker processes (the
example's, started once) running chunked ops and stopping cleanly; the least-squares example, reduced."""

from __future__ import annotations

import logging
import pickle
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import numpy as np
import pytest

pytest.importorskip("dask.array")
pytest.importorskip("distributed")

import dask
import dask.array as da
from helpers import loaded_example

import devtensor as dt
import devtensor.dask as dd
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DeviceMismatchError,
    DeviceUnavailableError,
    ShapeError,
)
from devtensor.tensor import Tensor

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dask_least_squares.py"

A = np.arange(48, dtype=np.float32).reshape(12, 4) / 7.0 - 3.0


def host(value: Any) -> np.ndarray[Any, Any]:
    assert isinstance(value, Tensor), f"expected a devtensor tensor, got {type(value).__name__}"
    return np.array(value.cpu().numpy(), copy=True)


@pytest.fixture
def threads() -> Iterator[None]:
    with dask.config.set(scheduler="threads"):
        yield


def chunked(device: str = "cpu", chunks: Any = (4, 2)) -> da.Array:
    return dd.to_dask(dt.tensor(A, device=device), chunks)


# --- NumPy functions Dask calls on chunks -----------------------------------------------------------------


def test_ufunc_with_dtype_computes_in_that_dtype() -> None:
    t = dt.tensor([1.5, 2.5], dtype=dt.float32)
    r = np.add(t, t, dtype=np.float64)
    assert isinstance(r, Tensor) and r.dtype == np.float64
    np.testing.assert_array_equal(host(r), [3.0, 5.0])
    # A result devtensor would give in another dtype (a float scalar promotes ints) runs NumPy's own, which refuses.
    with pytest.raises(TypeError, match="Cannot cast"):
        np.add(dt.tensor([1, 2], dtype=dt.int32), 1.5, dtype=np.int64)


def test_tensordot_vstack_hstack_map_onto_devtensor_ops() -> None:
    t = dt.tensor(A)
    cases: list[tuple[Any, Tensor, Any]] = [(1, t.T, A.T), (((0,), (0,)), t, A), ((0, 0), t, A)]
    cases.append((([1, 0], [1, 0]), t, A))
    for axes, b, b_host in cases:
        r: Any = np.tensordot(t, b, axes=axes)
        assert isinstance(r, Tensor)
        np.testing.assert_allclose(host(r), np.tensordot(A, b_host, axes=axes), rtol=1e-6)
    v = dt.tensor([1.0, 2.0])
    np.testing.assert_array_equal(host(np.vstack([v, v])), [[1, 2], [1, 2]])
    np.testing.assert_array_equal(host(np.hstack([v, v])), [1, 2, 1, 2])
    np.testing.assert_array_equal(host(np.vstack([t, t])), np.vstack([A, A]))
    np.testing.assert_array_equal(host(np.hstack([t, t])), np.hstack([A, A]))


def test_qr_and_svd_give_tensors_on_the_device() -> None:
    t = dt.tensor(A)
    q, r = cast(Any, np.linalg.qr(t))  # (typed as NumPy's: the NEP 18 adapter returns tensors)
    assert isinstance(q, Tensor) and isinstance(r, Tensor)
    np.testing.assert_allclose(host(q) @ host(r), A, atol=1e-5)
    u, s, vh = cast(Any, np.linalg.svd(t, full_matrices=False))
    np.testing.assert_allclose(host(s), np.linalg.svd(A, compute_uv=False), rtol=1e-5)
    assert isinstance(u, Tensor) and isinstance(vh, Tensor)
    q_meta = cast(Any, np.linalg.qr(dt.empty(3, 2, device="meta")))  # (devtensor.linalg.qr: meta in, meta out)
    assert q_meta.Q.device == dt.Device("meta") and q_meta.Q.shape == (3, 2)


@pytest.mark.parametrize("device", ["cpu", "cuda"], ids=["cpu", "cupy-stand-in"])
def test_unravel_and_ravel_multi_index_of_tensors_stay_on_the_device(
    device: str, request: pytest.FixtureRequest
) -> None:
    if device == "cuda":
        request.getfixturevalue("fake_cupy")
    flat = dt.tensor([0, 5, 7], device=device)
    parts = cast(Any, np.unravel_index(flat, (2, 4)))
    assert all(isinstance(p, Tensor) and p.device.type == device for p in parts)
    np.testing.assert_array_equal([host(p) for p in parts], np.unravel_index([0, 5, 7], (2, 4)))
    back = cast(Any, np.ravel_multi_index((parts[0], parts[1]), (2, 4)))
    assert isinstance(back, Tensor) and back.device.type == device
    np.testing.assert_array_equal(host(back), [0, 5, 7])
    mixed = cast(Any, np.ravel_multi_index((dt.tensor(1, device=device), 2), (2, 4)))
    assert host(mixed) == 6
    with pytest.raises(ValueError, match=r"unravel_index: an index is out of bounds"):
        np.unravel_index(dt.tensor(8, device=device), (2, 4))
    with pytest.raises(ValueError, match=r"ravel_multi_index: invalid entry"):
        np.ravel_multi_index((dt.tensor([0, 2], device=device), dt.tensor([0, 0], device=device)), (2, 4))


@pytest.mark.parametrize(
    ("make", "shape", "dtype"),
    [
        (lambda like: np.empty((2, 3), like=like), (2, 3), np.float64),
        (lambda like: np.zeros(4, dtype=np.int32, like=like), (4,), np.int32),
        (lambda like: np.ones((1, 2), dtype=np.float32, like=like), (1, 2), np.float32),
        (lambda like: np.full((2,), 7, like=like), (2,), np.asarray(7).dtype),
        (lambda like: np.asarray([1.0, 2.0], like=like), (2,), np.float64),
        (lambda like: np.asanyarray([1, 2], dtype=np.float32, like=like), (2,), np.float32),
        (lambda like: np.array([], dtype=np.float32, ndmin=2, like=like), (1, 0), np.float32),
    ],
    ids=["empty", "zeros", "ones", "full", "asarray", "asanyarray", "array-ndmin"],
)
def test_creation_like_a_tensor_gives_a_tensor_on_its_device(
    make: Callable[[Tensor], Any], shape: tuple[int, ...], dtype: Any
) -> None:
    for device in ("cpu", "meta"):
        r = make(dt.empty(0, device=device))
        assert isinstance(r, Tensor) and r.device.type == device
        assert r.shape == shape and r.dtype == dtype


def test_array_priority_is_between_numpy_and_cupy() -> None:
    assert 0.0 < dt.ones(1).__array_priority__ < 100.0  # type: ignore[attr-defined]


# --- Dask's operations on devtensor chunks (threaded scheduler) -----------------------------------------------


CASES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    # name: (on a Dask array, on the NumPy array)
    "exp": (da.exp, np.exp),
    "arith": (lambda x: (x * 2 - 1) / 3 + x**2, lambda a: (a * 2 - 1) / 3 + a**2),
    "where": (lambda x: da.where(x > 0, x, 0), lambda a: np.where(a > 0, a, 0)),
    "sum": (lambda x: x.sum(), lambda a: a.sum()),
    "sum-axis0": (lambda x: x.sum(axis=0), lambda a: a.sum(axis=0)),
    "prod-axis1": (lambda x: x.prod(axis=1), lambda a: a.prod(axis=1)),
    "max-axis0": (lambda x: x.max(axis=0), lambda a: a.max(axis=0)),
    "min": (lambda x: x.min(), lambda a: a.min()),
    # Dask's own reductions (they call NumPy's method spelling on chunks: chunk.sum(axis=, keepdims=, dtype=),
    # read chunk.size as an int, index chunks with NumPy arrays).
    "own-mean-axis0": (lambda x: x.mean(axis=0), lambda a: a.mean(axis=0)),
    "own-var": (lambda x: x.var(), lambda a: a.var()),
    "own-std-axis1-ddof1": (lambda x: x.std(axis=1, ddof=1), lambda a: a.std(axis=1, ddof=1)),
    "own-argmax-axis0": (lambda x: x.argmax(axis=0), lambda a: a.argmax(axis=0)),
    "own-argmin": (lambda x: x.argmin(), lambda a: a.argmin()),
    "own-argmax-axis1-keepdims": (lambda x: x.argmax(axis=1, keepdims=True), lambda a: a.argmax(axis=1, keepdims=True)),
    "own-max": (lambda x: x.max(), lambda a: a.max()),
    "own-min-axis1": (lambda x: x.min(axis=1), lambda a: a.min(axis=1)),
    "own-mean-int": (lambda x: (x * 7).astype(np.int32).mean(axis=1), lambda a: (a * 7).astype(np.int32).mean(axis=1)),
    "mean": (lambda x: dd.mean(x, axis=0), lambda a: a.mean(axis=0)),
    "var": (lambda x: dd.var(x, axis=1, ddof=1), lambda a: a.var(axis=1, ddof=1)),
    "std": (lambda x: dd.std(x), lambda a: a.std()),
    "argmax-axis0": (lambda x: dd.argmax(x, axis=0), lambda a: a.argmax(axis=0)),
    "argmin": (lambda x: dd.argmin(x), lambda a: a.argmin()),
    "argmax-keepdims": (lambda x: dd.argmax(x, axis=-1, keepdims=True), lambda a: a.argmax(axis=-1, keepdims=True)),
    "matmul": (lambda x: x.T @ x, lambda a: a.T @ a),
    "tensordot": (lambda x: da.tensordot(x, x, axes=((0,), (0,))), lambda a: np.tensordot(a, a, axes=((0,), (0,)))),
    "dot": (lambda x: da.dot(x, x.T), lambda a: a @ a.T),
    "transpose": (lambda x: x.T, lambda a: a.T),
    "reshape": (lambda x: x.reshape(6, 2, 4), lambda a: a.reshape(6, 2, 4)),
    "concatenate": (lambda x: da.concatenate([x, x], axis=1), lambda a: np.concatenate([a, a], axis=1)),
    "stack": (lambda x: da.stack([x, x]), lambda a: np.stack([a, a])),
    "slice": (lambda x: x[1:9:2, ::-1], lambda a: a[1:9:2, ::-1]),
    "map_blocks": (lambda x: x.map_blocks(lambda b: b * 2), lambda a: a * 2),
    "blockwise": (
        lambda x: da.blockwise(np.add, "ij", x, "ij", x, "ij", dtype=np.float32),
        lambda a: a + a,
    ),
}


@pytest.mark.usefixtures("threads")
@pytest.mark.parametrize("name", list(CASES))
def test_dask_op_on_cpu_chunks_matches_numpy_chunks(name: str) -> None:
    on_dask, on_numpy = CASES[name]
    r = on_dask(chunked())
    out = r.compute()
    assert isinstance(out, Tensor) and out.device.type == "cpu"
    expected = on_numpy(da.from_array(A, chunks=(4, 2))).compute()
    np.testing.assert_allclose(host(out), expected, rtol=2e-6, atol=1e-5)
    assert out.dtype == expected.dtype


@pytest.mark.usefixtures("threads")
def test_chunks_and_meta_stay_devtensor_tensors() -> None:
    x = chunked()
    assert isinstance(x._meta, Tensor) and x._meta.shape == (0, 0)
    reductions = (x.mean(axis=0), x.var(), x.std(axis=1, ddof=1), x.argmax(axis=0), x.argmin(), x.max(), x.min(axis=1))
    for r in (da.exp(x), x.T @ x, x.sum(axis=0), da.concatenate([x, x]), *reductions):
        assert isinstance(r._meta, Tensor), type(r._meta)
        blocks = dask.compute(*r.to_delayed().ravel())
        assert all(isinstance(b, Tensor) for b in blocks)


@pytest.mark.usefixtures("threads")
def test_tall_skinny_qr_and_svd() -> None:
    x = dd.to_dask(dt.tensor(np.random.default_rng(0).standard_normal((40, 3))), (10, 3))
    q, r = da.linalg.qr(x)
    qv, rv = dask.compute(q, r)
    np.testing.assert_allclose(host(qv) @ host(rv), host(dd.from_dask(x)), atol=1e-10)
    _, s, _ = da.linalg.svd(x)
    sv = s.compute()
    assert isinstance(sv, Tensor)
    np.testing.assert_allclose(host(sv), np.linalg.svd(host(dd.from_dask(x)), compute_uv=False), rtol=1e-10)


@pytest.mark.usefixtures("threads", "fake_cupy")
@pytest.mark.parametrize(
    "name",
    [
        "exp",
        "arith",
        "sum-axis0",
        "max-axis0",
        "mean",
        "argmax-axis0",
        "matmul",
        "tensordot",
        "concatenate",
        "own-mean-axis0",
        "own-var",
        "own-std-axis1-ddof1",
        "own-argmax-axis0",
        "own-argmin",
        "own-argmax-axis1-keepdims",
        "own-max",
        "own-min-axis1",
    ],
)
def test_dask_op_on_cuda_chunks_stays_on_cuda(name: str) -> None:
    on_dask, on_numpy = CASES[name]
    x = chunked("cuda")
    assert x._meta.device.type == "cuda"
    r = on_dask(x)
    assert isinstance(r._meta, Tensor) and r._meta.device.type == "cuda"
    out = r.compute()
    assert isinstance(out, Tensor) and out.device.type == "cuda"
    np.testing.assert_allclose(host(out), on_numpy(A), rtol=2e-6, atol=1e-5)


@pytest.mark.usefixtures("threads", "fake_cupy")
def test_qr_on_cuda_chunks_stays_on_cuda() -> None:
    q, r = dask.compute(*da.linalg.qr(chunked("cuda", (4, 4))))
    assert q.device.type == "cuda" and r.device.type == "cuda"
    np.testing.assert_allclose(host(q) @ host(r), A, atol=1e-5)


@pytest.mark.usefixtures("threads", "fake_cupy")
def test_numpy_fallback_on_cuda_chunks_refuses_clearly() -> None:
    with pytest.raises(TypeError, match=r"numpy\.nancumsum.*no implicit transfer"):
        da.nancumsum(chunked("cuda"), axis=0).compute()


# --- devtensor.dask --------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("threads")
def test_to_dask_and_from_dask_round_trip() -> None:
    t = dt.tensor(A)
    x = dd.to_dask(t, 5)
    assert x.chunks == ((5, 5, 2), (4,)) and x.dtype == np.float32
    back = dd.from_dask(x)
    np.testing.assert_array_equal(host(back), A)
    assert isinstance(dd.from_dask(da.from_array(A, chunks=4)), Tensor)  # NumPy chunks: wrapped on the CPU


def test_to_dask_and_from_dask_refuse_bad_input() -> None:
    with pytest.raises(ArgumentTypeError, match=r"to_dask: argument 't' must be a Tensor, got ndarray"):
        dd.to_dask(A, 2)  # type: ignore[arg-type]
    with pytest.raises(ArgumentValueError, match=r"to_dask: .*meta tensor"):
        dd.to_dask(dt.empty(3, device="meta"), 2)
    with pytest.raises(ArgumentValueError, match=r"to_dask: Dask refused chunks"):
        dd.to_dask(dt.ones(4), (3, 3))
    with pytest.raises(ArgumentTypeError, match=r"from_dask: argument 'x' must be a dask.array.Array"):
        dd.from_dask(dt.ones(2))


@pytest.mark.usefixtures("threads")
def test_map_blocks_takes_chunks_and_meta_from_the_meta_function(monkeypatch: pytest.MonkeyPatch) -> None:
    x = chunked()
    calls: list[str] = []
    real_softmax = dt.softmax

    def counted(t: Tensor, dim: int) -> Tensor:
        calls.append(t.device.type)
        return real_softmax(t, dim)

    counted.__name__ = "softmax"
    r = dd.map_blocks(counted, x, dim=1)
    # One meta run per distinct block shape, and no kernel before compute.
    assert calls == ["meta"] and isinstance(r._meta, Tensor) and r.chunks == x.chunks
    out = dd.from_dask(r)
    assert set(calls) == {"meta", "cpu"}
    e = np.exp(A.reshape(12, 2, 2) - A.reshape(12, 2, 2).max(axis=2, keepdims=True))
    np.testing.assert_allclose(host(out), (e / e.sum(axis=2, keepdims=True)).reshape(12, 4), rtol=1e-6)


@pytest.mark.usefixtures("threads")
def test_map_blocks_new_block_shapes_and_dtype() -> None:
    x = dd.to_dask(dt.tensor(A), (5, 4))
    r = dd.map_blocks(dt.sum, x, dim=1, keepdim=True, dtype=dt.float64)
    assert r.chunks == ((5, 5, 2), (1,)) and r.dtype == np.float64 and r._meta.dtype == np.float64
    np.testing.assert_allclose(host(dd.from_dask(r)), A.sum(axis=1, keepdims=True, dtype=np.float64), rtol=1e-6)
    y = dd.map_blocks(dt.add, x, dd.to_dask(dt.ones(12, 4, dtype=dt.float32), (5, 4)), alpha=2)
    np.testing.assert_allclose(host(dd.from_dask(y)), A + 2, rtol=1e-6)
    # A tensor argument goes to every block as it is.
    z = dd.map_blocks(dt.mul, x, dt.tensor([1.0, 0.0, 2.0, 3.0], dtype=dt.float32))
    np.testing.assert_allclose(host(dd.from_dask(z)), A * [1.0, 0.0, 2.0, 3.0], rtol=1e-6)


def test_planned_body_in_map_blocks_on_the_threaded_scheduler_equals_eager() -> None:
    """The README's use: a ``dt.planned`` function as the block function on Dask's threaded scheduler; each worker
    thread replays into its own buffers, and ``copy_outputs=True`` keeps each block's result."""
    import functools

    def body(b: Tensor) -> Tensor:
        h = dt.tanh(b * 0.5 + 1.0)
        return h * h - b

    rng = np.random.default_rng(3)
    data = dt.tensor(rng.standard_normal((24_000, 16)).astype(np.float32))
    x = dd.to_dask(data, (1_000, 16))
    fast = dt.planned(body)
    r = dd.map_blocks(functools.partial(fast, copy_outputs=True), x)
    want = np.concatenate([body(data[i : i + 1_000]).numpy() for i in range(0, 24_000, 1_000)])
    for _ in range(3):
        with dask.config.set(scheduler="threads", num_workers=6):
            got = host(dd.from_dask(r))
        assert got.tobytes() == want.tobytes()
    assert len(fast.plans) == 2  # the meta run's block signature and the CPU blocks'


def test_map_blocks_errors_surface_before_compute() -> None:
    x = chunked()
    with pytest.raises(ArgumentTypeError, match=r"map_blocks\(exp\): no argument is a dask.array.Array"):
        dd.map_blocks(dt.exp, dt.ones(2))
    with pytest.raises(ArgumentTypeError, match=r"chunks are ndarray, not devtensor tensors"):
        dd.map_blocks(dt.exp, da.from_array(A, chunks=4))
    with pytest.raises(ShapeError, match=r"map_blocks\(sum\): the op turns blocks of 2 dims into 1"):
        dd.map_blocks(dt.sum, x, dim=1)
    with pytest.raises(ShapeError, match=r"chunks differ"):
        dd.map_blocks(dt.add, x, chunked(chunks=(6, 2)))
    with pytest.raises(ShapeError, match=r"do not form a grid"):
        dd.map_blocks(lambda b: b[: b.shape[0] // 2 + b.shape[1] % 3], dd.to_dask(dt.tensor(A), (4, 3)))
    with pytest.raises(ShapeError, match=r"matmul"):  # the op's own meta error, named by the op
        dd.map_blocks(dt.matmul, x, dt.ones(3, 3))


def test_map_blocks_refuses_chunks_on_two_devices(fake_cupy: ModuleType) -> None:
    with pytest.raises(DeviceMismatchError, match=r"on cpu and cuda"):
        dd.map_blocks(dt.add, chunked(), chunked("cuda"))


# --- pickling (what a process-based scheduler sends) -------------------------------------------------------


def test_views_pickle_as_their_own_values() -> None:
    base = dt.tensor(A)
    view = base[1:7:2, ::-1]
    back = pickle.loads(pickle.dumps(view))
    np.testing.assert_array_equal(host(back), A[1:7:2, ::-1])
    assert back.version == 0 and back.is_contiguous()
    dt.add(back, 1.0, out=back)  # its own memory now, not the base's
    np.testing.assert_array_equal(host(base), A)
    meta = pickle.loads(pickle.dumps(dt.empty(2, 3, device="meta")))
    assert meta.device.type == "meta" and meta.shape == (2, 3)


def test_cuda_tensor_unpickled_without_cuda_refuses_clearly(fake_cupy: ModuleType) -> None:
    data = pickle.dumps(dt.tensor([1.0, 2.0], device="cuda:1"))
    sys.modules["cupy"] = None  # type: ignore[assignment]  # (``import cupy`` fails: a process without CuPy)
    with pytest.raises(DeviceUnavailableError, match=r"unpickling a tensor of shape \[2\].*cuda:1.*CuPy"):
        pickle.loads(data)


# --- a LocalCluster of worker processes ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    yield from loaded_example(EXAMPLE, "dask_least_squares")


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_cluster_runs_chunked_ops_on_worker_processes_and_stops_them_cleanly(example: ModuleType) -> None:
    """Chunked ops run on two worker processes; the example's cluster then stops them without killing: each
    worker here is made to take 5 s to exit (a thread it waits for), past the 4 s after which distributed's own
    close kills it with "Worker process still alive after 4.0 seconds, killing", as a loaded machine made it."""
    records = _Records()
    nanny_log = logging.getLogger("distributed.nanny")
    nanny_log.addHandler(records)
    try:
        with example.local_cluster(2) as client:
            x = chunked()
            xtx, total, soft = dask.compute(x.T @ x, da.exp(x).sum(axis=0), dd.map_blocks(dt.softmax, x, dim=1))
            for value in (xtx, total, soft):
                assert isinstance(value, Tensor) and value.device.type == "cpu"
            np.testing.assert_allclose(host(xtx), A.T @ A, rtol=1e-5)
            np.testing.assert_allclose(host(total), np.exp(A).sum(axis=0), rtol=1e-5)
            pids = client.run(lambda: __import__("os").getpid())
            assert len(set(pids.values())) == 2
            client.run(lambda: __import__("threading").Thread(target=__import__("time").sleep, args=(5,)).start())
    finally:
        nanny_log.removeHandler(records)
    assert not [m for m in records.messages if "still alive" in m or "kill" in m.lower()], records.messages


@pytest.mark.usefixtures("threads")
def test_least_squares_example_reduced_matches_numpy_chunks(example: ModuleType) -> None:
    # (threads: the example's functions, loaded from a file, are not importable in worker processes by name)
    result = example.compare(rows=30_000, chunk_rows=5_000, features=8, repeat=1)
    assert result.max_difference < 1e-4
    np.testing.assert_allclose(result.devtensor_coef, result.true_coef, atol=5e-3)


@pytest.mark.usefixtures("threads", "fake_cupy")
def test_least_squares_example_on_cuda_chunks(example: ModuleType) -> None:
    result = example.compare(rows=20_000, chunk_rows=5_000, features=6, device="cuda", repeat=1)
    assert result.max_difference < 1e-4
