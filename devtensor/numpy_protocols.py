"""NumPy's override protocols on devtensor tensors: NEP 13 (``__array_ufunc__``: ``np.exp(t)``, ``ndarray + t``,
``arr += t``) and NEP 18 (``__array_function__``: ``np.sum(t, axis=0)``, ``np.concatenate([t, t])``).

A NumPy ufunc or function that devtensor implements runs as devtensor's own op (:data:`UFUNCS`, :data:`REDUCE`,
:data:`FUNCTIONS`): the result is a devtensor tensor on the tensors' device, with the op's checks, dispatch
(overrides, modes) and version bumps; NumPy's argument names map onto PyTorch's (``axis`` to ``dim``,
``keepdims`` to ``keepdim``, ``ddof`` to ``correction``). NumPy values among the arguments follow the fronts'
rules (:mod:`devtensor.numpy_values`; a Python number also where PyTorch's op refuses one, ``np.maximum(t, 0)``).
An ``out`` that is a NumPy array is written and returned, as NumPy returns its ``out``.

Anything else (a function or ufunc method devtensor lacks, or an argument it has no equivalent for, such as
``where=`` or ``initial=``) runs NumPy's own implementation on the tensors' arrays when every tensor is on the CPU,
and returns what NumPy returns (NumPy arrays; a tensor passed as ``out`` is written, its version bumped, and
returned); with a tensor on another device (CUDA, meta) it raises a TypeError naming the function, as CuPy does:
there is no implicit transfer. An argument of a foreign type that overrides the protocol itself (a Dask array, …)
makes devtensor return ``NotImplemented``, so that type gets its turn (NEP 13/18's rule).

NEP 35: NumPy's creation functions called with ``like=tensor`` (:data:`LIKE`: ``empty``, ``zeros``, ``ones``,
``full``, ``array``, ``asarray``, ``asanyarray``) make a devtensor tensor on that tensor's device; Dask makes its
metas and small arrays of a chunk type so. ``np.linalg.qr`` and ``np.linalg.svd``, which devtensor has no op for,
run on the tensor's own array module (NumPy or CuPy) and give tensors on its device. ``Tensor.__array_priority__``
(1.0, between NumPy's 0 and CuPy's 100) is what Dask compares to pick the chunk type that combines mixed chunks.
Those entries: :mod:`devtensor.numpy_chunks`; docs/design.md maps everything Dask asks of a chunk type.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Final

import numpy as np

import devtensor
from devtensor.errors import ArgumentTypeError
from devtensor.numpy_values import binary_call
from devtensor.structured import rules
from devtensor.tensor import Tensor, check_no_internal_overlap

__all__ = ["FUNCTIONS", "LIKE", "REDUCE", "UFUNCS", "WRITES_FIRST", "array_function", "array_ufunc"]

_NO: Final = object()  # an argument not given (NumPy's own ``_NoValue`` is private)

#: NumPy ufunc -> (devtensor function name, fixed keyword arguments) for ``ufunc(...)``.
UFUNCS: Final[dict[np.ufunc, tuple[str, dict[str, Any]]]] = {
    np.add: ("add", {}),
    np.subtract: ("sub", {}),
    np.multiply: ("mul", {}),
    np.true_divide: ("div", {}),
    np.floor_divide: ("div", {"rounding_mode": "floor"}),
    np.remainder: ("remainder", {}),
    np.power: ("pow", {}),
    np.negative: ("neg", {}),
    np.positive: ("positive", {}),
    np.absolute: ("abs", {}),
    np.exp: ("exp", {}),
    np.log: ("log", {}),
    np.sqrt: ("sqrt", {}),
    np.sin: ("sin", {}),
    np.cos: ("cos", {}),
    np.tanh: ("tanh", {}),
    np.maximum: ("maximum", {}),
    np.minimum: ("minimum", {}),
    np.equal: ("eq", {}),
    np.not_equal: ("ne", {}),
    np.less: ("lt", {}),
    np.less_equal: ("le", {}),
    np.greater: ("gt", {}),
    np.greater_equal: ("ge", {}),
    np.logical_and: ("logical_and", {}),
    np.logical_or: ("logical_or", {}),
    np.logical_xor: ("logical_xor", {}),
    np.logical_not: ("logical_not", {}),
    np.matmul: ("matmul", {}),
    np.bitwise_and: ("bitwise_and", {}),
    np.bitwise_or: ("bitwise_or", {}),
    np.bitwise_xor: ("bitwise_xor", {}),
    np.invert: ("bitwise_not", {}),
    np.left_shift: ("bitwise_left_shift", {}),
    np.right_shift: ("bitwise_right_shift", {}),
}

#: NumPy ufunc -> devtensor reduction for ``ufunc.reduce(...)``.
REDUCE: Final[dict[np.ufunc, str]] = {
    np.add: "sum",
    np.multiply: "prod",
    np.maximum: "amax",
    np.minimum: "amin",
    np.logical_and: "all",
    np.logical_or: "any",
}

#: NumPy ufunc -> adapter for ``ufunc(*inputs)`` without keywords, where the mapping depends on the operands
#: (``np.fabs``: devtensor.numpy_extra); it raises _Fallback for NumPy's own.
UFUNC_ADAPTERS: Final[dict[np.ufunc, Callable[..., Any]]] = {}


class _Fallback(Exception):
    """An adapter has no devtensor equivalent for this call (an argument devtensor lacks): NumPy's own runs."""


def _foreign(values: Any) -> bool:
    """Whether any of ``values`` (one level of lists and tuples) is of a foreign type overriding NumPy's protocols."""
    for v in values:
        if isinstance(v, (list, tuple)):
            if _foreign(v):
                return True
        elif not isinstance(v, (Tensor, np.ndarray, np.generic, bool, int, float, complex, str, type(None))) and (
            hasattr(type(v), "__array_ufunc__") or hasattr(type(v), "__array_function__")
        ):
            return True
    return False


def _tensors(value: Any) -> list[Tensor]:
    """The tensors in ``value``, looking inside lists, tuples and dicts."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _arrays(value: Any) -> Any:
    """``value`` with every tensor replaced by its NumPy array (shared memory), inside lists, tuples and dicts."""
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, list):
        return [_arrays(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_arrays(v) for v in value)
    if isinstance(value, dict):
        return {k: _arrays(v) for k, v in value.items()}
    return value


#: NumPy functions (and ufunc methods, by name) that write their first argument in place.
WRITES_FIRST: Final = {np.copyto, np.put, np.putmask, np.place, np.fill_diagonal, np.put_along_axis, "at"}


def _numpy_runs(
    name: str, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], writes_first: bool = False
) -> Any:
    """NumPy's own implementation of ``name`` on the CPU tensors' arrays (TypeError for tensors elsewhere); tensors
    passed as ``out`` (and the first argument of a function that writes it, ``writes_first``: ``np.copyto``,
    ``ufunc.at``) are checked writable without internal overlap, written, versions bumped; ``out`` is returned."""
    tensors = _tensors(args) + _tensors(kwargs)
    for t in tensors:
        if t.device.type != "cpu":
            raise ArgumentTypeError(
                f"{name}: devtensor has no implementation of this NumPy function for tensors on {t.device}, and "
                "there is no implicit transfer (as in CuPy); call .cpu() first or use a devtensor op"
            )
    outs = _tensors(kwargs.get("out"))
    written = [*outs, args[0]] if writes_first and args and isinstance(args[0], Tensor) else outs
    for t in written:
        arg = "out" if t in outs else "a"
        rules.check_writable(name, arg, t)
        check_no_internal_overlap(name, arg, t)
    result = call(*_arrays(args), **_arrays(kwargs))
    for t in written:
        t._storage.version += 1
    if outs:
        out = kwargs["out"]
        if isinstance(out, tuple) and len(out) == 1:
            return out[0]
        return out
    return result


def _returned(out: Any, result: Any) -> Any:
    """What NumPy returns for a call with ``out``: the ``out`` NumPy array itself, else devtensor's result."""
    return out if isinstance(out, np.ndarray) else result


def array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """NEP 13: a NumPy ufunc called with a devtensor tensor among its operands or outputs (``np.exp(t)``,
    ``np.add(arr, t, out=arr)``, ``ndarray + t``, ``np.float32(2) * t``, ``arr += t``). ``ufunc(...)`` maps to
    the devtensor op of :data:`UFUNCS` (``np.divmod``, without ``out``: its two, floor division and remainder),
    ``ufunc.reduce(...)`` to the reduction of :data:`REDUCE` (NumPy's default ``axis=0``); both give the result on
    the tensors' device. Anything else: see the module docstring.

    Raises:
        ArgumentTypeError (TypeError): a ufunc devtensor lacks, with a tensor not on the CPU.
        Any error of the devtensor op (DeviceMismatchError for a NumPy array with a CUDA tensor, …).
    """
    out = kwargs.get("out")
    if _foreign(inputs) or _foreign(out or ()):
        return NotImplemented
    name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    try:
        if method == "__call__" and ufunc is np.divmod and not kwargs and len(inputs) == 2:
            # (two outputs: floor division and remainder, each devtensor's op, as Tensor.__divmod__)
            return np.floor_divide(*inputs), np.remainder(*inputs)
        if method == "__call__" and ufunc in UFUNC_ADAPTERS and not kwargs:
            return UFUNC_ADAPTERS[ufunc](*inputs)
        if method == "__call__":
            entry = UFUNCS.get(ufunc)
            fn = getattr(devtensor, entry[0], None) if entry is not None else None
            if fn is None or set(kwargs) - {"out", "dtype"}:
                raise _Fallback
            target = out[0] if out else None
            if out and len(out) != 1:
                raise _Fallback
            dtype = kwargs.get("dtype")
            if dtype is not None:
                return _ufunc_in_dtype(fn, entry[1], inputs, np.dtype(dtype), target)  # type: ignore[index]
            kw = entry[1] if target is None else {"out": target, **entry[1]}  # type: ignore[index]
            result = binary_call(entry[0], *inputs, **kw) if len(inputs) == 2 else fn(*inputs, **kw)  # type: ignore[index]
            return _returned(target, result)
        if method == "reduce" and ufunc in REDUCE and len(inputs) == 1:
            axis = kwargs.pop("axis", 0)
            keepdims = kwargs.pop("keepdims", False)
            dtype = kwargs.pop("dtype", None)
            target = kwargs.pop("out", None)
            if isinstance(target, tuple):
                target = target[0] if len(target) == 1 else _NO
            if kwargs or target is _NO:
                raise _Fallback
            return _reduction(REDUCE[ufunc], inputs[0], axis, keepdims, dtype, target)
        raise _Fallback
    except _Fallback:
        return _numpy_runs(name, getattr(ufunc, method), inputs, kwargs, method in WRITES_FIRST)


def _ufunc_in_dtype(fn: Callable[..., Any], fixed: dict[str, Any], inputs: Any, dtype: Any, out: Any) -> Any:
    """``ufunc(..., dtype=dtype)`` (Dask's chunked ``matmul`` sums its partial products so): NumPy computes in
    ``dtype``; devtensor casts the array operands to it (Python scalars stay weak) and runs the op. A result of
    another dtype (a comparison, a scalar that promotes) or an ``out`` runs NumPy's own."""
    if out is not None:
        raise _Fallback
    cast = [
        x.to(dtype) if isinstance(x, Tensor) else x.astype(dtype) if isinstance(x, np.ndarray) else x for x in inputs
    ]
    result = binary_call(fn.__name__, *cast, **fixed) if len(cast) == 2 else fn(*cast, **fixed)
    if result.dtype != dtype:
        raise _Fallback
    return result


def _reduction(op: str, a: Any, axis: Any, keepdims: Any, dtype: Any, out: Any) -> Any:
    fn = getattr(devtensor, op)
    kw: dict[str, Any] = {}
    if dtype is not None:
        if op not in ("sum", "prod", "mean"):
            raise _Fallback
        kw["dtype"] = dtype
    if out is not None:
        kw["out"] = out
    return _returned(out, fn(a, _dims(axis), bool(keepdims), **kw))


def _dims(axis: Any) -> Any:
    """NumPy's ``axis`` as devtensor's ``dim``: None (all), an int, or a tuple of ints."""
    if axis is None or isinstance(axis, tuple):
        return axis
    return operator.index(axis)


def array_function(self: Tensor, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """NEP 18: a NumPy function called with a devtensor tensor among its arguments (``np.sum(t, axis=0)``,
    ``np.concatenate([t, t])``, ``np.where(c, t, 0)``). A function of :data:`FUNCTIONS` runs as devtensor's op,
    giving a tensor on the tensors' device; anything else: see the module docstring.

    Raises:
        ArgumentTypeError (TypeError): a function devtensor lacks, with a tensor not on the CPU.
        Any error of the devtensor op.
    """
    if any(not issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    adapter = FUNCTIONS.get(func)
    name = f"{getattr(func, '__module__', None) or 'numpy'}.{getattr(func, '__name__', func)}"
    if adapter is None and func in LIKE:  # (these dispatch only on ``like=``, which NumPy takes out of kwargs)
        try:
            return LIKE[func](self, *args, **kwargs)
        except _Fallback:
            pass
    elif adapter is not None:
        try:
            return adapter(*args, **kwargs)
        except _Fallback:
            pass
    return _numpy_runs(name, func, args, kwargs, func in WRITES_FIRST)


# --- NEP 18 adapters: NumPy's signature in, devtensor's op out -----------------------------------------------


def _no(*values: Any) -> None:
    if any(v is not _NO for v in values):
        raise _Fallback


def _summing(op: str) -> Callable[..., Any]:
    def adapter(
        a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False, initial: Any = _NO,
        where: Any = _NO,
    ) -> Any:  # fmt: skip
        _no(initial, where)
        return _reduction(op, a, axis, keepdims, dtype, out)

    return adapter


def _float_dtype(a: Any, dtype: Any) -> Any:
    """NumPy's mean/std/var of integers and bools computes in float64."""
    if dtype is None and isinstance(a, Tensor) and a.dtype.kind in "biu":
        return np.float64
    return dtype


def _mean(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False, *, where: Any = _NO
) -> Any:
    _no(where)
    return _reduction("mean", a, axis, keepdims, _float_dtype(a, dtype), out)


def _spread(op: str) -> Callable[..., Any]:
    def adapter(
        a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: Any = False,
        *, where: Any = _NO, mean: Any = _NO, correction: Any = _NO,
    ) -> Any:  # fmt: skip
        _no(where, mean)
        if isinstance(a, Tensor) and (dtype is not None or a.dtype.kind in "biu"):
            # devtensor's std/var take floating input: computed in the dtype NumPy computes in (float64 for ints)
            a = a.to(dtype if dtype is not None else np.float64)
        kw: dict[str, Any] = {"correction": ddof if correction is _NO else correction}
        if out is not None:
            kw["out"] = out
        return _returned(out, getattr(devtensor, op)(a, _dims(axis), bool(keepdims), **kw))

    return adapter


def _extreme(op: str) -> Callable[..., Any]:
    def adapter(
        a: Any, axis: Any = None, out: Any = None, keepdims: Any = False, initial: Any = _NO, where: Any = _NO
    ) -> Any:
        _no(initial, where)
        return _reduction(op, a, axis, keepdims, None, out)

    return adapter


def _arg(op: str) -> Callable[..., Any]:
    def adapter(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = False) -> Any:
        if axis is not None and not isinstance(axis, int | np.integer):
            raise _Fallback
        return _reduction(op, a, axis, keepdims, None, out)

    return adapter


def _truth(op: str) -> Callable[..., Any]:
    def adapter(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False, *, where: Any = _NO) -> Any:
        _no(where)
        return _reduction(op, a, axis, keepdims, None, out)

    return adapter


def _joined(op: str) -> Callable[..., Any]:
    def adapter(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None, casting: Any = "same_kind") -> Any:
        if dtype is not None or casting != "same_kind":
            raise _Fallback
        items = list(arrays)
        if axis is None:
            if op != "cat":
                raise _Fallback
            items = [devtensor.reshape(devtensor.asarray(x) if not isinstance(x, Tensor) else x, (-1,)) for x in items]
            axis = 0
        fn = getattr(devtensor, op)
        result = fn(items, operator.index(axis)) if out is None else fn(items, operator.index(axis), out=out)
        return _returned(out, result)

    return adapter


def _where(condition: Any, x: Any = _NO, y: Any = _NO) -> Any:
    if x is _NO or y is _NO:
        raise _Fallback  # np.where(condition) is nonzero
    # NumPy takes the condition's truth (nonzero, NaN true); devtensor.where wants bool, as torch.where.
    if isinstance(condition, Tensor) and condition.dtype.kind != "b":
        condition = devtensor.ne(condition, 0)
    elif not isinstance(condition, Tensor) and np.asarray(condition).dtype.kind != "b":
        condition = np.asarray(condition).astype(bool)
    return devtensor.where(condition, x, y)


def _clip(
    a: Any, a_min: Any = _NO, a_max: Any = _NO, out: Any = None, *, min: Any = _NO, max: Any = _NO, **kwargs: Any
) -> Any:
    if kwargs:
        raise _Fallback
    low = a_min if a_min is not _NO else min
    high = a_max if a_max is not _NO else max
    low = None if low is _NO else low
    high = None if high is _NO else high
    result = devtensor.clamp(a, low, high) if out is None else devtensor.clamp(a, low, high, out=out)
    return _returned(out, result)


def _reshape(a: Any, shape: Any = None, order: Any = "C", *, newshape: Any = None, copy: Any = None) -> Any:
    if order != "C":
        raise _Fallback
    target = newshape if shape is None else shape
    if isinstance(target, int | np.integer):
        target = (target,)
    if copy is False:
        return devtensor.view(a, tuple(target))
    result = devtensor.reshape(a, tuple(target))
    return devtensor.clone(result) if copy else result


def _transpose(a: Any, axes: Any = None) -> Any:
    if axes is None:
        axes = tuple(range(a.ndim - 1, -1, -1))
    return devtensor.permute(a, tuple(axes))


def _swapaxes(a: Any, axis1: Any, axis2: Any) -> Any:
    return devtensor.transpose(a, axis1, axis2)


def _squeeze(a: Any, axis: Any = None) -> Any:
    return devtensor.squeeze(a, axis)


def _expand_dims(a: Any, axis: Any) -> Any:
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    ndim = a.ndim + len(axes)
    from devtensor.meta import normalize_dim

    result = a
    for d in sorted(normalize_dim("expand_dims", x, ndim) for x in axes):
        result = devtensor.unsqueeze(result, d)
    return result


def _broadcast_to(array: Any, shape: Any, subok: Any = False) -> Any:
    return devtensor.broadcast_to(
        array, (operator.index(shape),) if isinstance(shape, int | np.integer) else tuple(shape)
    )


def _flip(m: Any, axis: Any = None) -> Any:
    if axis is None:
        axis = tuple(range(m.ndim))
    elif not isinstance(axis, tuple):
        axis = (axis,)
    return devtensor.flip(m, axis)


def _copy(a: Any, order: Any = "K", subok: Any = False) -> Any:
    if not isinstance(a, Tensor):
        raise _Fallback
    return devtensor.clone(a)


def _ravel(a: Any, order: Any = "C") -> Any:
    if order not in ("C", "K") or not isinstance(a, Tensor):
        raise _Fallback
    return devtensor.reshape(a, (-1,))


def _dot(a: Any, b: Any, out: Any = None) -> Any:
    ndims = [x.ndim if isinstance(x, (Tensor, np.ndarray)) else 0 for x in (a, b)]
    if min(ndims) == 0:
        result = devtensor.mul(a, b) if out is None else devtensor.mul(a, b, out=out)
    elif max(ndims) <= 2:
        result = devtensor.matmul(a, b) if out is None else devtensor.matmul(a, b, out=out)
    else:
        raise _Fallback  # N-d dot is a sum over the last axis of a and the second-to-last of b, not matmul
    return _returned(out, result)


def _outer(a: Any, b: Any, out: Any = None) -> Any:
    flat: list[Any] = [devtensor.reshape(x, (-1,)) if isinstance(x, Tensor) else np.ravel(x) for x in (a, b)]
    result = devtensor.outer(*flat) if out is None else devtensor.outer(*flat, out=out)
    return _returned(out, result)


def _like(op: str) -> Callable[..., Any]:
    def adapter(
        prototype: Any, dtype: Any = None, order: Any = "K", subok: Any = True, shape: Any = None, *, device: Any = None
    ) -> Any:
        if not isinstance(prototype, Tensor) or order not in ("K", "C", "A"):
            raise _Fallback
        kw: dict[str, Any] = {"dtype": dtype, "device": device}
        if shape is None:
            return getattr(devtensor, op)(prototype, **kw)
        kw["dtype"] = dtype if dtype is not None else prototype.dtype
        kw["device"] = device if device is not None else prototype.device
        return getattr(devtensor, op.removesuffix("_like"))(shape, **kw)

    return adapter


def _full_like(
    a: Any,
    fill_value: Any,
    dtype: Any = None,
    order: Any = "K",
    subok: Any = True,
    shape: Any = None,
    *,
    device: Any = None,
) -> Any:
    if not isinstance(a, Tensor) or order not in ("K", "C", "A"):
        raise _Fallback
    if shape is None:
        return devtensor.full_like(a, fill_value, dtype=dtype, device=device)
    return devtensor.full(
        shape,
        fill_value,
        dtype=dtype if dtype is not None else a.dtype,
        device=device if device is not None else a.device,
    )


def _round(a: Any, decimals: Any = 0, out: Any = None) -> Any:
    fn = getattr(devtensor, "round", None)
    if fn is None:
        raise _Fallback
    result = fn(a, decimals=decimals) if out is None else fn(a, decimals=decimals, out=out)
    return _returned(out, result)


def _result_type(*arrays_and_dtypes: Any) -> Any:
    return np.result_type(*(x.dtype if isinstance(x, Tensor) else x for x in arrays_and_dtypes))


def _shape(a: Any) -> Any:
    return tuple(a.shape)


def _ndim(a: Any) -> Any:
    return a.ndim


def _size(a: Any, axis: Any = None) -> Any:
    return a.numel() if axis is None else a.shape[axis]


#: NumPy function -> adapter running devtensor's op (NumPy's signature, PyTorch's op).
FUNCTIONS: Final[dict[Any, Callable[..., Any]]] = {
    np.sum: _summing("sum"),
    np.prod: _summing("prod"),
    np.mean: _mean,
    np.std: _spread("std"),
    np.var: _spread("var"),
    np.max: _extreme("amax"),
    np.amax: _extreme("amax"),
    np.min: _extreme("amin"),
    np.amin: _extreme("amin"),
    np.argmax: _arg("argmax"),
    np.argmin: _arg("argmin"),
    np.all: _truth("all"),
    np.any: _truth("any"),
    np.concatenate: _joined("cat"),
    np.stack: _joined("stack"),
    np.where: _where,
    np.clip: _clip,
    np.reshape: _reshape,
    np.transpose: _transpose,
    np.swapaxes: _swapaxes,
    np.squeeze: _squeeze,
    np.expand_dims: _expand_dims,
    np.broadcast_to: _broadcast_to,
    np.flip: _flip,
    np.copy: _copy,
    np.ravel: _ravel,
    np.dot: _dot,
    np.outer: _outer,
    np.empty_like: _like("empty_like"),
    np.zeros_like: _like("zeros_like"),
    np.ones_like: _like("ones_like"),
    np.full_like: _full_like,
    np.round: _round,
    np.around: _round,
    np.result_type: _result_type,
    np.shape: _shape,
    np.ndim: _ndim,
    np.size: _size,
}


#: NumPy creation function -> adapter for ``func(..., like=tensor)`` (NEP 35, which Dask uses to make arrays of
#: its chunk type): the result is a devtensor tensor on the ``like`` tensor's device. Filled, with the entries of
#: :data:`FUNCTIONS` that Dask asks of a chunk type, by :mod:`devtensor.numpy_chunks`.
LIKE: Final[dict[Any, Callable[..., Any]]] = {}


Tensor.__array_ufunc__ = array_ufunc  # type: ignore[attr-defined]
Tensor.__array_function__ = array_function  # type: ignore[attr-defined]
# Dask picks the chunk type whose functions combine mixed chunks by this (CuPy's is 100, NumPy's 0).
Tensor.__array_priority__ = 1.0  # type: ignore[attr-defined]
