"""Random numbers (PyTorch's names, re-exported at the top level as PyTorch does: ``devtensor.rand``,
``devtensor.manual_seed``, ``devtensor.Generator``, …).

Generators (:mod:`devtensor.generator`): :class:`Generator` objects (CPU: NumPy's PCG64; CUDA: CuPy's
``RandomState``), the default generators, :func:`manual_seed`, :func:`seed`, :func:`initial_seed`,
:func:`get_rng_state` / :func:`set_rng_state`. Reproducible per seed on each device type; CPU and CUDA streams
differ (the same seed gives other values on CUDA than on the CPU).

Sampling: the factories :func:`rand`, :func:`randn`, :func:`randint`, :func:`uniform`, :func:`normal`,
:func:`randperm` allocate the result and run the random op on it (as PyTorch does: ``rand`` is ``empty`` then
``uniform_``); :func:`bernoulli` and :func:`multinomial` draw from a tensor of probabilities. The ops behind them
are structured ops (:mod:`devtensor.kernels.random`: ``uniform_``, ``normal_``, ``random_``, ``bernoulli_``,
``multinomial``), so dispatch, overrides and modes see them like any other op, and they are marked
``nondeterministic``.

Common arguments: ``generator=`` (None: the default generator of the result's device; else a Generator on that
device), ``dtype=`` (default float64 for floats, NumPy's default, as ``empty``; int64 for ``randint`` and
``randperm``), ``device=`` (default the CPU) and ``out=``. With ``out=``, the result is written into ``out``
(its dtype; a ``dtype=`` or ``device=`` that differs from ``out``'s is an error), resized under the out rules
when it has another shape (a warning when it had elements; refused for memory devtensor does not own).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from devtensor.creation import filled, optional_dtype, size_arg
from devtensor.device import DeviceLike, as_device, as_index
from devtensor.dtypes import to_dtype
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DeviceMismatchError,
    DevtensorError,
    as_called,
)
from devtensor.generator import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from devtensor.meta import int_arg
from devtensor.structured import variant
from devtensor.tensor import Tensor

__all__ = [
    "Generator",
    "bernoulli",
    "default_generator",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "multinomial",
    "normal",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
    "uniform",
]

#: ``multinomial(input, num_samples, replacement=False, *, generator=None, out=None)``: the structured op's
#: functional variant (:func:`devtensor.kernels.random.multinomial`; also ``devtensor.multinomial``).
multinomial = variant("multinomial", "functional")

_FLOAT64 = np.dtype(np.float64)
_INT64 = np.dtype(np.int64)


def _target(
    op: str, shape: tuple[int, ...], dtype: Any, device: DeviceLike | None, out: object, default: np.dtype[Any]
) -> tuple[Tensor, Tensor | None]:
    """(the tensor the random op fills, the ``out`` to write through the out rules or None).

    No ``out``: a new tensor. An ``out`` of ``shape``: ``out`` itself (filled in place). An ``out`` of another
    shape: a new tensor of ``shape`` with out's dtype, whose values the op's functional variant writes into
    ``out`` (which the out rules resize, with their warning and refusals).
    """
    if out is None:
        return filled(op, shape, optional_dtype(op, dtype) or default, as_device(device, op=op), None), None
    if not isinstance(out, Tensor):
        raise ArgumentTypeError(f"{op}: argument 'out' must be a Tensor, got {type(out).__name__}")
    wanted = optional_dtype(op, dtype)
    if wanted is not None and wanted != out.dtype:
        raise ArgumentTypeError(f"{op}: dtype {wanted.name} does not match the dtype of out ({out.dtype.name})")
    if device is not None and as_device(device, op=op).resolved() != out.device:
        raise DeviceMismatchError(f"{op}: device {device} does not match the device of out ({out.device})")
    if out.shape == shape:
        return out, None
    return filled(op, shape, out.dtype, out.device, None), out


def _run(
    caller: str, name: str, target: Tensor, resize: Tensor | None, *args: Any, generator: Generator | None
) -> Tensor:
    """The random op ``name`` on ``target`` in place, or (``resize``) its functional variant into ``resize``; an
    error of the op names ``caller`` (the factory the user called) instead of the op (:func:`_renamed`)."""
    try:
        if resize is None:
            return variant(name, "inplace")(target, *args, generator=generator)
        return variant(name, "functional")(target, *args, generator=generator, out=resize)
    except DevtensorError as error:
        raise _renamed(error, name, caller) from None


def _renamed(error: DevtensorError, name: str, caller: str) -> DevtensorError:
    """``error`` of the op ``name`` (its message starting ``"name_: "`` or ``"name: "``) as raised by the factory
    ``caller``: the same error type, the message naming ``caller`` (and the op behind it, for the record)."""
    text = str(error)
    for prefix in (f"{name}_: ", f"{name}: "):
        if text.startswith(prefix):
            renamed = type(error)(f"{caller}: {text[len(prefix) :]} (from the op {prefix[:-2]})")
            return renamed
    return error


def rand(
    *size: Any,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """Values drawn uniformly from ``[0, 1)`` in a tensor of shape ``size`` (ints, or one sequence of ints)
    (``torch.rand``): ``empty`` then ``uniform_``.

    Dtypes: float16, float32, float64 (default float64, NumPy's default). Devices: cpu (default), cuda, meta.

    Raises:
        ArgumentTypeError (TypeError): a bad size, a non-float dtype, a bad generator or out; a dtype that is not
            out's. ArgumentValueError (ValueError): a negative size.
        DeviceMismatchError (ValueError): a generator or out on another device than ``device``.
    """
    target, resize = _target("rand", size_arg("rand", size), dtype, device, out, _FLOAT64)
    return _run("rand", "uniform", target, resize, 0.0, 1.0, generator=generator)


def randn(
    *size: Any,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """Values drawn from the standard normal distribution in a tensor of shape ``size`` (``torch.randn``):
    ``empty`` then ``normal_``. Arguments, dtypes, devices and errors as :func:`rand`."""
    target, resize = _target("randn", size_arg("randn", size), dtype, device, out, _FLOAT64)
    return _run("randn", "normal", target, resize, 0.0, 1.0, generator=generator)


def uniform(
    from_: float,
    to: float,
    size: Sequence[int],
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """Values drawn uniformly from ``[from_, to)`` in a tensor of shape ``size``: ``empty`` then
    ``uniform_(from_, to)`` (PyTorch has only the inplace ``Tensor.uniform_``; this is its factory, shaped as
    ``torch.normal(mean, std, size)``). Dtypes and devices as :func:`rand`.

    Raises:
        ArgumentValueError (ValueError): ``from_ > to``, a bound not finite; the errors of :func:`rand`.
    """
    target, resize = _target("uniform", size_arg("uniform", (size,)), dtype, device, out, _FLOAT64)
    return _run("uniform", "uniform", target, resize, from_, to, generator=generator)


@overload
def randint(
    low: int,
    high: Sequence[int],
    size: None = None,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor: ...


@overload
def randint(
    low: int,
    high: int,
    size: Sequence[int],
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor: ...


def randint(
    low: int,
    high: int | Sequence[int] | None = None,
    size: Sequence[int] | None = None,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """Integers drawn uniformly from ``[low, high)`` in a tensor of shape ``size`` (``torch.randint``): both
    PyTorch forms, ``randint(high, size)`` (``low`` 0) and ``randint(low, high, size)``; ``empty`` then
    ``random_(low, high)``.

    Dtypes: default int64; any integer, bool or float dtype whose range holds ``[low, high - 1]`` (exactly, for
    floats). Devices as :func:`rand`.

    Raises:
        ArgumentTypeError (TypeError): a missing ``size``; bounds not ints; a complex dtype; the errors of :func:`rand`.
        ArgumentValueError (ValueError): ``low >= high``; a range outside the dtype's.
    """
    if size is None:
        if high is None or as_index(high) is not None:
            raise ArgumentTypeError(
                "randint: missing argument 'size' (randint(high, size) or randint(low, high, size))"
            )
        lo, hi, shape = 0, int_arg("randint", "high", low), high
    elif high is None:
        raise ArgumentTypeError("randint: missing argument 'high' (randint(low, high, size))")
    else:
        lo, hi, shape = int_arg("randint", "low", low), int_arg("randint", "high", high), size
    target, resize = _target("randint", size_arg("randint", (shape,)), dtype, device, out, _INT64)
    if lo >= hi:  # (random_ also checks; named for randint's arguments here)
        raise ArgumentValueError(f"randint: expects low < high, got low={lo} >= high={hi}")
    return _run("randint", "random", target, resize, lo, hi, generator=generator)


def normal(
    mean: Tensor | float,
    std: Tensor | float = 1.0,
    size: Sequence[int] | None = None,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """Values drawn from normal distributions (``torch.normal``), in PyTorch's forms:

    * ``normal(mean, std, size)`` with numbers: a tensor of shape ``size`` (``empty`` then ``normal_``);
      dtypes and devices as :func:`rand`;
    * ``normal(mean, std)`` with ``mean`` or ``std`` (or both) a float tensor: element ``i`` drawn from the
      normal of ``mean[i]`` and ``std[i]`` (broadcast), on the tensors' device, with their float dtype
      (standard normal draws, then ``mul_(std)`` and ``add_(mean)``); no ``size``, ``dtype`` or ``device``.

    Raises:
        ArgumentTypeError (TypeError): no ``size`` with numbers; ``size``, ``dtype`` or ``device`` with a tensor;
            a non-float tensor; the errors of :func:`rand`.
        ArgumentValueError (ValueError): ``std < 0`` (an element of a tensor ``std`` too).
        ShapeError (ValueError): ``mean`` and ``std`` that do not broadcast.
        DeviceMismatchError (ValueError): tensors on different devices.
    """
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise ArgumentTypeError("normal: with numbers for mean and std, pass 'size' (normal(mean, std, size))")
        target, resize = _target("normal", size_arg("normal", (size,)), dtype, device, out, _FLOAT64)
        return _run("normal", "normal", target, resize, mean, std, generator=generator)
    return _normal_tensors(mean, std, size, dtype, device, generator, out)


def _normal_tensors(
    mean: Tensor | float,
    std: Tensor | float,
    size: object,
    dtype: object,
    device: object,
    generator: Generator | None,
    out: Tensor | None,
) -> Tensor:
    from devtensor import _generated_ops as ops
    from devtensor.meta import broadcast_shapes

    op = "normal"
    for name, value in (("size", size), ("dtype", dtype), ("device", device)):
        if value is not None:
            raise ArgumentTypeError(f"{op}: argument '{name}' is not taken when mean or std is a tensor")
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    for name, value in (("mean", mean), ("std", std)):
        if isinstance(value, Tensor):
            if value.dtype.kind != "f":
                raise ArgumentTypeError(f"{op}: a tensor '{name}' must be float, got dtype {value.dtype.name}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ArgumentTypeError(f"{op}: argument '{name}' must be a float tensor or a number")
    if len(tensors) == 2 and tensors[0].device != tensors[1].device:
        raise DeviceMismatchError(
            f"{op}: mean is on {tensors[0].device} but std is on {tensors[1].device}; put them on one device"
        )
    shape = broadcast_shapes(op, *(t.shape for t in tensors))
    result_dtype = np.result_type(*(t.dtype for t in tensors))
    if isinstance(std, Tensor):
        if std.device.type != "meta" and std.numel() and bool(ops.logical_not(ops.ge(std, 0)).any().item()):
            raise ArgumentValueError(f"{op}: expects all elements of std >= 0.0 (got a negative value or NaN)")
    elif not std >= 0:
        raise ArgumentValueError(f"{op}: expects std >= 0.0, got std={std}")
    # Drawn into a new tensor, then copied into out (out rules there): mean or std may be out itself.
    result = filled(op, shape, result_dtype, tensors[0].device, None)
    ops.normal_(result, 0.0, 1.0, generator=generator)
    result.mul_(std).add_(mean)
    if out is None:
        return result
    if isinstance(out, Tensor) and out.device != result.device:
        raise DeviceMismatchError(
            f"{op}: expected out on the device of mean and std ({result.device}), got out on {out.device}"
        )
    try:
        return ops.clone(result, out=out)
    except DevtensorError as error:  # (the out rules of the copy: named as the user's call)
        raise as_called(error, ("clone",), op, (("self", "mean"),)) from None


def _like(op: str, input: object, dtype: Any, device: DeviceLike | None) -> Tensor:
    if not isinstance(input, Tensor):
        raise ArgumentTypeError(f"{op}: argument 'input' must be a Tensor, got {type(input).__name__}")
    return filled(
        op,
        input.shape,
        input.dtype if dtype is None else to_dtype(dtype, op=op),
        input.device if device is None else as_device(device, op=op),
        None,
    )


def rand_like(
    input: Tensor, *, generator: Generator | None = None, dtype: Any = None, device: DeviceLike | None = None
) -> Tensor:
    """:func:`rand` of ``input``'s shape, with its dtype and device unless given (``torch.rand_like``; PyTorch's
    has no ``generator=``, devtensor's does). Raises as :func:`rand` (a non-float dtype is a TypeError)."""
    return _run("rand_like", "uniform", _like("rand_like", input, dtype, device), None, 0.0, 1.0, generator=generator)


def randn_like(
    input: Tensor, *, generator: Generator | None = None, dtype: Any = None, device: DeviceLike | None = None
) -> Tensor:
    """:func:`randn` of ``input``'s shape, with its dtype and device unless given (``torch.randn_like``)."""
    return _run("randn_like", "normal", _like("randn_like", input, dtype, device), None, 0.0, 1.0, generator=generator)


def randint_like(
    input: Tensor,
    low: int,
    high: int | None = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """:func:`randint` of ``input``'s shape, with its dtype and device unless given (``torch.randint_like``):
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``. Raises as :func:`randint`."""
    lo, hi = (
        (0, int_arg("randint_like", "high", low))
        if high is None
        else (
            int_arg("randint_like", "low", low),
            int_arg("randint_like", "high", high),
        )
    )
    if lo >= hi:
        raise ArgumentValueError(f"randint_like: expects low < high, got low={lo} >= high={hi}")
    target = _like("randint_like", input, dtype, device)
    return _run("randint_like", "random", target, None, lo, hi, generator=generator)


def bernoulli(
    input: Tensor, p: Tensor | float | None = None, *, generator: Generator | None = None, out: Tensor | None = None
) -> Tensor:
    """1 with probability ``input[i]`` (or ``p``), else 0, in a tensor of ``input``'s shape, dtype and device
    (``torch.bernoulli``): the functional variant of ``bernoulli_`` with ``p=input`` (or ``p``).

    Dtypes: a float ``input`` of probabilities (any bool, integer or float ``input`` when ``p`` is given; a
    tensor ``p`` float, broadcast to ``input``'s shape). ``out=`` under the out rules.

    Raises:
        ArgumentTypeError (TypeError): a non-float probability tensor; a bad generator.
        ArgumentValueError (ValueError): a probability outside ``[0, 1]`` or NaN (before any write).
        DeviceMismatchError (ValueError): a generator, ``p`` or ``out`` on another device.
    """
    if not isinstance(input, Tensor):
        raise ArgumentTypeError(f"bernoulli: argument 'input' must be a Tensor, got {type(input).__name__}")
    return variant("bernoulli", "functional")(input, input if p is None else p, generator=generator, out=out)


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: Any = None,
    device: DeviceLike | None = None,
) -> Tensor:
    """A random permutation of ``0 .. n - 1`` (``torch.randperm``). Dtypes: default int64; integer or float
    dtypes that hold ``n - 1`` exactly. Devices as :func:`rand`.

    Raises:
        ArgumentTypeError (TypeError): ``n`` not an int; a bool or complex dtype; the errors of :func:`rand`.
        ArgumentValueError (ValueError): ``n < 0``; ``n - 1`` beyond the dtype's exact range.
    """
    count = int_arg("randperm", "n", n)
    if count < 0:
        raise ArgumentValueError(f"randperm: argument 'n' must be non-negative, got {count}")
    target, resize = _target("randperm", (count,), dtype, device, out, _INT64)
    return variant("randperm", "functional")(target, generator=generator, out=target if resize is None else resize)
