"""Dask arrays whose chunks are devtensor tensors (needs the ``dask`` extra: ``pip install "devtensor[dask]"``).

Dask's arrays are grids of chunks of any type that speaks NumPy's protocols; devtensor tensors are such a type
(NEP 13 and NEP 18, :mod:`devtensor.numpy_protocols`), so Dask runs devtensor's ops chunk by chunk, on the CPU or
on CUDA, on any Dask scheduler (threads, or the worker processes of ``distributed``: tensors pickle by value).
This module makes and ends such arrays and runs devtensor ops (built-in or custom) on their blocks:

* :func:`to_dask` -- a Dask array over a tensor, its chunks views of the tensor, its ``_meta`` a 0-size tensor
  on the tensor's device;
* :func:`from_dask` -- compute a Dask array of devtensor chunks into one tensor;
* :func:`map_blocks` -- run a devtensor op on each block, with the result's chunks, dtype and ``meta`` found by
  the op's meta function on meta tensors (no kernel runs until Dask computes);
* :func:`meta_of` -- the 0-size tensor Dask keeps as an array's ``_meta``;
* :func:`mean`, :func:`var`, :func:`std`, :func:`argmax`, :func:`argmin` -- Dask's own ``Array`` methods with
  the axis checked by devtensor's errors (Dask's methods work on devtensor chunks themselves: Tensor methods
  take NumPy's keyword names, ``chunk.sum(axis=..., keepdims=..., dtype=...)``, and ``Tensor.size`` is an int).

docs/design.md lists what Dask asks of a chunk type and how devtensor answers each.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import dask.array as da
import numpy as np
from dask.array.dispatch import numel_lookup

from devtensor.creation import asarray, empty, full
from devtensor.errors import ArgumentTypeError, ArgumentValueError, DeviceMismatchError, ShapeError
from devtensor.tensor import Tensor

__all__ = ["argmax", "argmin", "from_dask", "map_blocks", "mean", "meta_of", "std", "to_dask", "var"]


def meta_of(t: Tensor) -> Tensor:
    """The 0-size tensor that stands for ``t``'s chunk type in Dask (an array's ``_meta``): shape ``(0,) * t.ndim``,
    ``t``'s dtype and device.

    Raises:
        ArgumentTypeError (TypeError): ``t`` is not a Tensor.
    """
    if not isinstance(t, Tensor):
        raise ArgumentTypeError(f"meta_of: argument 't' must be a Tensor, got {type(t).__name__}")
    return empty((0,) * t.ndim, dtype=t.dtype, device=t.device)


def to_dask(t: Tensor, chunks: Any = "auto", *, name: str | bool = False) -> da.Array:
    """A Dask array over ``t`` whose chunks are devtensor tensors on ``t``'s device (Dask's ``from_array`` with
    ``asarray=False`` and ``meta_of(t)`` as ``meta``).

    Args:
        t: the tensor (any shape, dtype and device with data: cpu, cuda).
        chunks: Dask's chunk specification (``"auto"``, an int, a tuple of ints or of tuples of ints, a dict).
        name: the array's key in Dask's graph; ``False`` (the default) makes a fresh random one, so a large
            tensor is not hashed (Dask would otherwise pickle it to make a deterministic name).

    Returns:
        A ``dask.array.Array`` of ``t``'s shape and dtype. Each chunk is a view of ``t`` (a slice): on the
        threaded scheduler an inplace op on a chunk writes ``t``; sent to a worker process, a chunk is a copy.

    Raises:
        ArgumentTypeError (TypeError): ``t`` is not a Tensor.
        ArgumentValueError (ValueError): ``t`` is a meta tensor (no data to chunk), or Dask refuses ``chunks``.
    """
    if not isinstance(t, Tensor):
        raise ArgumentTypeError(f"to_dask: argument 't' must be a Tensor, got {type(t).__name__}")
    if t.device.type == "meta":
        raise ArgumentValueError("to_dask: argument 't' is a meta tensor, which has no data to chunk")
    try:
        return da.from_array(t, chunks=chunks, asarray=False, meta=meta_of(t), name=name)
    except ValueError as error:
        raise ArgumentValueError(f"to_dask: Dask refused chunks={chunks!r}: {error}") from error


def from_dask(x: da.Array, **compute_kwargs: Any) -> Tensor:
    """Compute the Dask array ``x`` (``x.compute(**compute_kwargs)``: ``scheduler=``, …) and return the result
    as one devtensor tensor.

    Chunks that are devtensor tensors give a tensor on their device. A result Dask returns as a NumPy array
    (chunks that were NumPy arrays, or a 0-d result of a NumPy scalar) is wrapped on the CPU without a copy.

    Raises:
        ArgumentTypeError (TypeError): ``x`` is not a Dask array, or its result is neither a tensor nor
            convertible to one (``devtensor.asarray``'s rules).
        Whatever the computation raises (devtensor's errors, unchanged).
    """
    if not isinstance(x, da.Array):
        raise ArgumentTypeError(f"from_dask: argument 'x' must be a dask.array.Array, got {type(x).__name__}")
    result = x.compute(**compute_kwargs)
    if isinstance(result, Tensor):
        return result
    try:
        return asarray(result)
    except (TypeError, ValueError) as error:
        raise ArgumentTypeError(
            f"from_dask: the computed result is a {type(result).__name__}, not convertible to a Tensor: {error}"
        ) from error


def map_blocks(op: Callable[..., Any], *args: Any, **kwargs: Any) -> da.Array:
    """Run the devtensor op ``op`` (a built-in op such as ``devtensor.exp`` or a custom op; any function of
    tensors that accepts meta tensors) on each block of the Dask arrays among ``args``.

    Before anything runs, ``op`` is called once per distinct set of block shapes on meta tensors (devtensor's
    ``meta`` device: the op's meta function alone, no kernel), which gives each result block's shape and the
    dtype; the result's chunks come from those shapes and its ``meta`` is a 0-size tensor of that dtype on the
    blocks' device. So a shape or dtype error of the op surfaces here, once, rather than inside a worker.

    Args:
        op: the op; it is called as ``op(*blocks_and_args, **kwargs)`` with each Dask array replaced by its
            block, and must return one Tensor of the blocks' ndim.
        args: Dask arrays of devtensor chunks (:func:`to_dask`), all with the same chunks, and any other
            arguments (tensors, numbers), passed to every block as they are.
        kwargs: keyword arguments of ``op`` (``dim=``, ``dtype=``, …), passed to every block; none is Dask's.

    Returns:
        A Dask array whose chunks are ``op``'s results.

    Raises:
        ArgumentTypeError (TypeError): no argument is a Dask array, a Dask array's chunks are not devtensor
            tensors, or ``op`` does not return a Tensor.
        ShapeError (ValueError): the Dask arrays' chunks differ, the result's ndim differs from the blocks', or
            the result's block shapes do not form a grid.
        DeviceMismatchError (ValueError): the Dask arrays' chunks are on different devices.
        Any error of ``op``'s meta function for some block (the op's own message).
    """
    name = getattr(op, "__name__", repr(op))
    arrays = [a for a in args if isinstance(a, da.Array)]
    if not arrays:
        raise ArgumentTypeError(f"map_blocks({name}): no argument is a dask.array.Array")
    metas = [a._meta for a in arrays]
    for m in metas:
        if not isinstance(m, Tensor):
            raise ArgumentTypeError(
                f"map_blocks({name}): a Dask array's chunks are {type(m).__name__}, not devtensor tensors "
                "(make it with devtensor.dask.to_dask)"
            )
    device = metas[0].device
    for m in metas[1:]:
        if m.device != device:
            raise DeviceMismatchError(
                f"map_blocks({name}): the Dask arrays' chunks are on {device} and {m.device}; move them to one device"
            )
    chunks = arrays[0].chunks
    for a in arrays[1:]:
        if a.chunks != chunks:
            raise ShapeError(
                f"map_blocks({name}): the Dask arrays' chunks differ ({chunks} and {a.chunks}); rechunk them alike"
            )
    ndim = len(chunks)
    on_meta = [_on_meta(a) for a in args]
    kw_meta = {k: _on_meta(v) for k, v in kwargs.items()}
    seen: dict[tuple[int, ...], tuple[int, ...]] = {}
    out_chunks: list[dict[int, int]] = [{} for _ in range(ndim)]
    dtype: Any = None
    for index in itertools.product(*(range(len(c)) for c in chunks)):
        shape = tuple(chunks[d][i] for d, i in enumerate(index))
        out_shape = seen.get(shape)
        if out_shape is None:
            result = op(*_blocks(on_meta, shape, args), **kw_meta)
            if not isinstance(result, Tensor):
                raise ArgumentTypeError(
                    f"map_blocks({name}): the op must return one Tensor, got {type(result).__name__}"
                )
            if result.ndim != ndim:
                raise ShapeError(
                    f"map_blocks({name}): the op turns blocks of {ndim} dims into {result.ndim} dims; "
                    "map_blocks keeps the number of dims (use keepdim=True for a reduction)"
                )
            out_shape = seen[shape] = result.shape
            dtype = result.dtype
        for d, i in enumerate(index):
            if out_chunks[d].setdefault(i, out_shape[d]) != out_shape[d]:
                raise ShapeError(
                    f"map_blocks({name}): the result's blocks along dim {d} at block {i} have sizes "
                    f"{out_chunks[d][i]} and {out_shape[d]}: they do not form a grid"
                )
    result_chunks = tuple(tuple(c[i] for i in range(len(c))) for c in out_chunks)
    meta = empty((0,) * ndim, dtype=dtype, device=device)
    fn = partial(op, **kwargs) if kwargs else op  # (so no keyword of op is taken for one of Dask's)
    return da.map_blocks(fn, *args, chunks=result_chunks, dtype=dtype, meta=meta)


def _on_meta(value: Any) -> Any:
    """``value`` as the meta run of :func:`map_blocks` takes it: None marks a Dask array (its block comes per
    block), a tensor becomes a meta tensor of its shape and dtype, anything else stays."""
    if isinstance(value, da.Array):
        return None
    if isinstance(value, Tensor):
        return empty(value.shape, dtype=value.dtype, device="meta")
    return value


def _blocks(on_meta: list[Any], shape: tuple[int, ...], args: tuple[Any, ...]) -> list[Any]:
    """The meta run's positional arguments for a block of ``shape``: meta blocks in the Dask arrays' places."""
    return [empty(shape, dtype=a.dtype, device="meta") if m is None else m for m, a in zip(on_meta, args, strict=True)]


# --- NumPy's mean, var, std, argmax and argmin over Dask arrays of devtensor chunks -----------------------------
# Dask's own Array methods work on devtensor chunks (Tensor methods take NumPy's keyword names, ``Tensor.size`` is
# an int): these functions check their arguments with devtensor's errors, then call them.


def _count(name: str, x: da.Array, axis: Any) -> Any:
    """``axis`` normalized: None, or a tuple of distinct dims in range."""
    if not isinstance(x, da.Array):
        raise ArgumentTypeError(f"{name}: argument 'x' must be a dask.array.Array, got {type(x).__name__}")
    if axis is None:
        return None
    dims = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    from devtensor.meta import normalize_dim

    norm = tuple(normalize_dim(name, d, x.ndim) for d in dims)
    if len(set(norm)) != len(norm):
        raise ArgumentValueError(f"{name}: argument 'axis' repeats a dimension: {axis!r}")
    return norm


def mean(x: da.Array, axis: Any = None, *, keepdims: bool = False, dtype: Any = None) -> da.Array:
    """NumPy's ``mean`` of a Dask array of devtensor chunks: Dask's ``x.mean(axis, dtype, keepdims)`` (an int, a
    tuple of ints or None (all) for ``axis``; integer and bool input computes in float64, as NumPy).

    Raises:
        ArgumentTypeError (TypeError): ``x`` is not a Dask array.
        IndexOutOfRangeError (IndexError) / ArgumentValueError (ValueError): an axis out of range or repeated.
    """
    return x.mean(axis=_count("mean", x, axis), dtype=dtype, keepdims=keepdims)


def var(x: da.Array, axis: Any = None, *, ddof: int | float = 0, keepdims: bool = False) -> da.Array:
    """NumPy's ``var`` of a Dask array of devtensor chunks: Dask's ``x.var(axis, ddof=ddof, keepdims)`` (float
    input keeps its dtype, integer and bool input computes in float64). Raises as :func:`mean`."""
    return x.var(axis=_count("var", x, axis), ddof=ddof, keepdims=keepdims)


def std(x: da.Array, axis: Any = None, *, ddof: int | float = 0, keepdims: bool = False) -> da.Array:
    """NumPy's ``std`` of a Dask array of devtensor chunks: Dask's ``x.std(axis, ddof=ddof, keepdims)``. Raises as
    :func:`mean`."""
    return x.std(axis=_count("std", x, axis), ddof=ddof, keepdims=keepdims)


def _arg(name: str, x: da.Array, axis: int | None, keepdims: bool) -> da.Array:
    if not isinstance(x, da.Array):
        raise ArgumentTypeError(f"{name}: argument 'x' must be a dask.array.Array, got {type(x).__name__}")
    if axis is not None:
        from devtensor.meta import normalize_dim

        axis = normalize_dim(name, axis, x.ndim)
    result: da.Array = getattr(x, name)(axis=axis, keepdims=keepdims)
    return result


def argmax(x: da.Array, axis: int | None = None, *, keepdims: bool = False) -> da.Array:
    """NumPy's ``argmax`` of a Dask array of devtensor chunks (int64 indices, first of ties): Dask's
    ``x.argmax(axis, keepdims=keepdims)``, a tree reduction of per-chunk (value, index) pairs; ``axis=None``
    gives the flat index.

    Raises:
        ArgumentTypeError (TypeError): ``x`` is not a Dask array.
        IndexOutOfRangeError (IndexError): ``axis`` is out of range.
    """
    return _arg("argmax", x, axis, keepdims)


def argmin(x: da.Array, axis: int | None = None, *, keepdims: bool = False) -> da.Array:
    """NumPy's ``argmin`` of a Dask array of devtensor chunks; as :func:`argmax`."""
    return _arg("argmin", x, axis, keepdims)


# --- Dask's dispatch tables ------------------------------------------------------------------------------------


def _numel(x: Tensor, **kwargs: Any) -> Any:
    """Dask's ``numel`` for a devtensor chunk (``mean``/``var``/``std`` count the elements each result element
    reduces): with ``keepdims`` or an ``axis``, a tensor of the counts on ``x``'s device, as Dask's for CuPy
    chunks (Dask's default builds a NumPy array, which a CUDA chunk is not combined with); over all elements
    without ``keepdims``, a NumPy scalar, as Dask's own."""
    shape = x.shape
    dtype = kwargs.get("dtype") or np.float64
    axis = kwargs.get("axis")
    keepdims = bool(kwargs.get("keepdims", False))
    if axis is None:
        count = math.prod(shape)
        if not keepdims:
            return np.asarray(count, dtype=dtype)[()]
        return full((1,) * len(shape), count, dtype=dtype, device=x.device)
    axes = {d % len(shape) for d in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    count = math.prod(shape[d] for d in axes)
    kept = tuple(1 if d in axes else n for d, n in enumerate(shape) if keepdims or d not in axes)
    return full(kept, count, dtype=dtype, device=x.device)


# Registered when this module is imported (Dask looks the chunk's type up by its MRO: every tensor class).
numel_lookup.register(Tensor, _numel)
