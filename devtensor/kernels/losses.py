"""Losses with PyTorch's every argument: ``cross_entropy_full`` (the main namespace's ``devtensor.cross_entropy``
calls it for any call but the common one, which is :func:`devtensor.kernels.nn.cross_entropy`'s lean op with its
direct path)."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dtypes import check_choice
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from devtensor.kernels.class_indices import check_classes
from devtensor.kernels.reduction_family import compute_dtype, float_result
from devtensor.kernels.ufunc_family import D, quiet
from devtensor.meta import int_arg
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import Tensor, TensorMeta
from devtensor.typed import ConstOut

__all__ = ["cross_entropy_full"]

_INT64: Final = np.dtype(np.int64)


# --- cross_entropy_full: PyTorch's every argument -------------------------------------------------------------


@structured_op("cross_entropy_full", inplace=False, method=False, public_functional=False)
def cross_entropy_full(
    input: TensorMeta,
    target: TensorMeta,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> TensorSpec:
    """Cross-entropy loss with PyTorch's every argument (``torch.nn.functional.cross_entropy``; the main
    namespace's ``devtensor.cross_entropy`` calls the leaner :func:`cross_entropy` op for the common call and
    this op for any other).

    Shapes: ``input`` logits ``[C]``, ``[N, C]`` or ``[N, C, d1, ...]`` (classes along dim 1, dim 0 for 1-d);
    ``target`` either class indices (an integer tensor of ``input``'s shape without the class dim) or class
    probabilities (a floating tensor of ``input``'s shape). ``weight``: ``[C]``, a weight per class. Result:
    0-d for ``reduction`` "mean" and "sum", the per-sample losses (``input``'s shape without the class dim) for
    "none".
    Values (PyTorch's): with ``p = log_softmax(input)`` along the class dim, class indices give the per-sample
    loss ``-w[t] * p[t]`` (0 where ``t == ignore_index``) and "mean" divides the sum by the sum of ``w[t]`` over
    the samples not ignored (nan when none is left); with ``label_smoothing`` ``e`` the loss is ``(1 - e) *`` that
    ``+ e / C *`` the sum over classes of ``-w[c] * p[c]`` (same reduction). Probabilities give ``-sum_c w[c] *
    q[c] * p[c]`` with ``q = target * (1 - e) + e / C``, and "mean" divides by the number of samples.
    Dtypes: floating ``input`` keeps its dtype (float16 computed in float32); bool/integer logits give float64.
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give shape and dtype only. Variants: functional and out.

    Raises:
        ShapeError (ValueError): a 0-d ``input``; a ``target`` of another shape; a ``weight`` that is not ``[C]``.
        ArgumentTypeError (TypeError): complex tensors; a ``target`` neither integer nor floating; a floating
            ``target`` of another dtype kind than the logits allow.
        ArgumentValueError (ValueError): ``reduction`` not "none"/"mean"/"sum"; ``label_smoothing`` outside
            ``[0, 1]``.
        IndexOutOfRangeError (IndexError): a class index outside ``[0, C)`` that is not ``ignore_index`` (raised
            by the kernel before any write).
    """
    op = "cross_entropy_full"
    check_choice(op, "reduction", reduction, ("none", "mean", "sum"))
    smoothing = float(label_smoothing)
    if not 0.0 <= smoothing <= 1.0:
        raise ArgumentValueError(f"{op}: label_smoothing must be between 0.0 and 1.0, got {label_smoothing!r}")
    int_arg(op, "ignore_index", ignore_index)
    shape = input.shape
    if not shape:
        raise ShapeError(f"{op}: argument 'input' must have at least one dimension (the classes), got 0-d")
    class_dim = 1 if len(shape) > 1 else 0
    classes = shape[class_dim]
    dtype = float_result(op, input.dtype, "input")
    reduced = shape[:class_dim] + shape[class_dim + 1 :]
    if target.dtype.kind in "iu":
        if target.shape != reduced:
            raise ShapeError(
                f"{op}: class indices 'target' must have shape {list(reduced)} for input of shape {list(shape)}, "
                f"got {list(target.shape)}"
            )
    elif target.dtype.kind == "f":
        if target.shape != shape:
            raise ShapeError(
                f"{op}: class probabilities 'target' must have the shape of 'input' {list(shape)}, got "
                f"{list(target.shape)}"
            )
    else:
        raise ArgumentTypeError(
            f"{op}: argument 'target' must hold class indices (integers) or class probabilities (floats), got "
            f"dtype {target.dtype.name}"
        )
    if weight is not None:
        if weight.shape != (classes,):
            raise ShapeError(
                f"{op}: argument 'weight' must have shape [{classes}] (one per class), got {list(weight.shape)}"
            )
        float_result(op, weight.dtype, "weight")
    return (reduced if reduction == "none" else ()), dtype


@_ks.cross_entropy_full.xp
def _cross_entropy_full(
    xp: ModuleType,
    input: D,
    target: D,
    weight: Any,  # (D | None: mypy cannot infer the kernel's TypeVar through optional tensors)
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
    *,
    out: ConstOut[D],
) -> None:
    o: Any = out.array
    compute = compute_dtype(float_result("cross_entropy_full", input._array.dtype, "input"))
    x: Any = input._array
    class_dim = 1 if x.ndim > 1 else 0
    classes = x.shape[class_dim]
    x = xp.moveaxis(x.astype(compute, copy=False), class_dim, -1)  # (..., C)
    w: Any = None if weight is None else weight._array.astype(compute, copy=False)
    t: Any = target._array
    e = float(label_smoothing)
    probabilities = t.dtype.kind == "f"
    valid: Any = None
    if not probabilities:
        valid = t != ignore_index
        chosen = t[valid] if t.ndim else t.reshape(1)[valid.reshape(1)]
        check_classes(xp, "cross_entropy_full", "target", chosen, classes)
    with quiet(xp):
        if x.size:
            m = xp.max(x, axis=-1, keepdims=True)
            logp = x - (xp.log(xp.sum(xp.exp(x - m), axis=-1, keepdims=True)) + m)
        else:
            logp = x
        weighted = logp if w is None else logp * w
        if probabilities:
            q = xp.moveaxis(t.astype(compute, copy=False), class_dim, -1)
            if e:
                q = q * (1.0 - e) + e / classes
            loss = -(weighted * q).sum(axis=-1)
            if reduction == "mean":
                loss = loss.sum() / compute.type(loss.size)
            elif reduction == "sum":
                loss = loss.sum()
        else:
            safe = xp.where(valid, t, 0).astype(_INT64, copy=False)
            picked = xp.take_along_axis(logp, safe[..., None], axis=-1)[..., 0]
            wt = xp.ones(safe.shape, compute) if w is None else w[safe]
            wt = xp.where(valid, wt, 0).astype(compute, copy=False)
            loss = -picked * wt
            smooth = xp.where(valid, -weighted.sum(axis=-1), 0) if e else None
            if reduction == "none":
                if smooth is not None:
                    loss = (1.0 - e) * loss + (e / classes) * smooth
            else:
                total = loss.sum()
                extra = smooth.sum() if smooth is not None else None
                if reduction == "mean":
                    denominator = wt.sum()
                    total = total / denominator
                    extra = None if extra is None else extra / denominator
                loss = total if extra is None else (1.0 - e) * total + (e / classes) * extra
    xp.copyto(o, xp.asarray(loss).reshape(o.shape), casting="same_kind")
