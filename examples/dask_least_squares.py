"""Least squares on Dask with devtensor chunks, beside the same with NumPy chunks.

A synthetic float32 problem ``y = X @ beta + noise`` (``X`` of 2,000,000 x 50 by default) is made chunk by chunk
on the workers (chunks of 100,000 rows; each chunk from its own seeded NumPy generator, so both runs see the same
numbers), and fitted by the normal equations: Dask computes ``X.T @ X`` and ``X.T @ y`` chunk by chunk (each chunk's
50 x 50 product, then a tree of sums), and the client solves the 50 x 50 system. The devtensor run keeps every
chunk a devtensor tensor (on the CPU or, with ``--device cuda``, on the GPU: the chunk is moved there when made);
the NumPy run is plain Dask. Both run on a ``distributed.LocalCluster`` of worker processes (2 by default).

Prints each run's best wall time over ``--repeat`` runs (making the data included: it is part of the job), their
ratio, and the largest difference between the two runs' coefficients (and from the true ones).

    python examples/dask_least_squares.py                      # 2,000,000 x 50, 2 worker processes
    python examples/dask_least_squares.py --device cuda        # chunks on the GPU
    python examples/dask_least_squares.py --rows 200000 --chunk-rows 20000
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import devtensor as dt
import devtensor.dask as dd

NOISE = 0.1

#: Seconds each worker process is given to stop when the cluster closes. distributed's own close gives it 4 s,
#: then kills it with the warning "Worker process still alive after 4.0 seconds, killing": on a loaded machine a
#: worker's orderly exit (closing its comms, then interpreter shutdown with Dask, distributed and devtensor
#: imported) can take longer than that.
WORKER_STOP_SECONDS = 60.0


@dataclass(frozen=True)
class Result:
    """One comparison: best wall times (seconds), the coefficients of both runs, and the true ones."""

    devtensor_seconds: float
    numpy_seconds: float
    devtensor_coef: np.ndarray[Any, np.dtype[np.float64]]
    numpy_coef: np.ndarray[Any, np.dtype[np.float64]]
    true_coef: np.ndarray[Any, np.dtype[np.float32]]

    @property
    def ratio(self) -> float:
        """devtensor's time over NumPy's."""
        return self.devtensor_seconds / self.numpy_seconds

    @property
    def max_difference(self) -> float:
        """The largest absolute difference between the two runs' coefficients."""
        return float(np.max(np.abs(self.devtensor_coef - self.numpy_coef)))


def true_coefficients(features: int, seed: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The coefficients the data is made from: ``features`` float32 values in [-2, 2]."""
    return np.random.default_rng(seed).uniform(-2.0, 2.0, features).astype(np.float32)


def _block(
    *, beta: np.ndarray[Any, Any], seed: int, device: str | None, block_info: dict[Any, Any] | None = None
) -> Any:
    """The block ``[X | y]`` (rows x features + 1, float32) at Dask's block index: NumPy's array when ``device``
    is None, else a devtensor tensor on ``device``."""
    assert block_info is not None
    rows = block_info[None]["chunk-shape"][0]
    index = block_info[None]["chunk-location"][0]
    rng = np.random.default_rng([seed, index])
    z = np.empty((rows, beta.size + 1), np.float32)
    z[:, :-1] = rng.standard_normal((rows, beta.size), dtype=np.float32)
    z[:, -1] = z[:, :-1] @ beta + NOISE * rng.standard_normal(rows, dtype=np.float32)
    if device is None:
        return z
    return dt.from_numpy(z) if device == "cpu" else dt.tensor(z, device=device)


def design(rows: int, chunk_rows: int, beta: np.ndarray[Any, Any], seed: int, device: str | None) -> da.Array:
    """The lazy ``[X | y]`` of ``rows`` rows in chunks of ``chunk_rows``: NumPy chunks (``device=None``) or
    devtensor chunks on ``device``."""
    n_full, rest = divmod(rows, chunk_rows)
    chunks = ((chunk_rows,) * n_full + ((rest,) if rest else ()), (beta.size + 1,))
    meta = (
        np.empty((0, 0), np.float32) if device is None else dd.meta_of(dt.empty(0, 0, dtype=dt.float32, device=device))
    )
    return da.map_blocks(_block, chunks=chunks, dtype=np.float32, meta=meta, beta=beta, seed=seed, device=device)


def _host(value: Any) -> np.ndarray[Any, Any]:
    """A result of either run as a float64 NumPy array (a devtensor tensor is copied from its device)."""
    if isinstance(value, dt.Tensor):
        value = value.cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def fit(rows: int, chunk_rows: int, beta: np.ndarray[Any, Any], seed: int, device: str | None) -> np.ndarray[Any, Any]:
    """Least squares by the normal equations: Dask computes ``X.T @ X`` and ``X.T @ y`` on the current scheduler
    (a distributed Client when one is active); the 50 x 50 system is solved on the client in float64."""
    z = design(rows, chunk_rows, beta, seed, device)
    x, y = z[:, :-1], z[:, -1]
    xtx, xty = dask.compute(x.T @ x, x.T @ y)
    if device is not None:
        assert isinstance(xtx, dt.Tensor) and xtx.device.type == dt.Device(device).type, "chunks left devtensor"
    result: np.ndarray[Any, Any] = np.linalg.solve(_host(xtx), _host(xty))
    return result


def compare(
    rows: int = 2_000_000,
    chunk_rows: int = 100_000,
    features: int = 50,
    device: str = "cpu",
    repeat: int = 3,
    seed: int = 0,
) -> Result:
    """Fit with devtensor chunks on ``device`` and with NumPy chunks, alternately, ``repeat`` times each, on the
    current Dask scheduler; the best time of each."""
    beta = true_coefficients(features, seed)
    times: dict[str | None, float] = {device: float("inf"), None: float("inf")}
    coef: dict[str | None, np.ndarray[Any, Any]] = {}
    for _ in range(repeat):
        for which in (device, None):
            start = time.perf_counter()
            coef[which] = fit(rows, chunk_rows, beta, seed, which)
            times[which] = min(times[which], time.perf_counter() - start)
    return Result(times[device], times[None], coef[device], coef[None], beta)


async def _stop_workers(cluster: LocalCluster, timeout: float) -> None:
    await asyncio.gather(*(worker.close(timeout=timeout) for worker in list(cluster.workers.values())))


@contextmanager
def local_cluster(workers: int, worker_stop_seconds: float = WORKER_STOP_SECONDS) -> Iterator[Client]:
    """A ``distributed.LocalCluster`` of ``workers`` worker processes (one thread each, no dashboard) and a Client
    on it, the current Dask scheduler inside the ``with`` block. On exit, also after an error: the client closes,
    then the worker processes are asked to stop and each is given ``worker_stop_seconds`` to exit by itself, then
    the cluster (its scheduler) closes. Nothing is killed unless a worker outlives that time."""
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        with Client(cluster) as client:
            yield client
        cluster.sync(_stop_workers, cluster, worker_stop_seconds)
    finally:
        cluster.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows of X (default 2,000,000)")
    parser.add_argument("--chunk-rows", type=int, default=100_000, help="rows per chunk (default 100,000)")
    parser.add_argument("--features", type=int, default=50, help="columns of X (default 50)")
    parser.add_argument("--device", default="cpu", help="device of the devtensor chunks: cpu or cuda")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the LocalCluster (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best time counts (default 3)")
    args = parser.parse_args()
    with local_cluster(args.workers):
        result = compare(args.rows, args.chunk_rows, args.features, args.device, args.repeat)
    print(f"X: {args.rows} x {args.features} float32 in chunks of {args.chunk_rows} rows, {args.workers} workers")
    print(f"devtensor chunks ({args.device}): {result.devtensor_seconds:.3f} s")
    print(f"NumPy chunks:          {result.numpy_seconds:.3f} s")
    print(f"time ratio devtensor / NumPy: {result.ratio:.3f}")
    print(f"largest coefficient difference (devtensor vs NumPy): {result.max_difference:.3g}")
    print(f"largest error vs the true coefficients: {np.max(np.abs(result.devtensor_coef - result.true_coef)):.3g}")


if __name__ == "__main__":
    main()
