"""Pairwise distances: ``cdist`` (``torch.cdist``'s signature; values as the p-norm of the differences, NumPy's
``np.linalg.norm`` over the last dim, which ``scipy.spatial.distance.cdist`` gives too)."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Literal

from devtensor import kernel_signatures as _ks
from devtensor.dtypes import result_type
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from devtensor.kernels.random import real_arg
from devtensor.kernels.ufunc_family import D, quiet
from devtensor.meta import broadcast_shapes
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = ["cdist"]

_ComputeMode = Literal["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]


@structured_op("cdist", inplace=False, method=False)
def cdist(
    x1: TensorMeta,
    x2: TensorMeta,
    p: float = 2.0,
    compute_mode: _ComputeMode = "use_mm_for_euclid_dist_if_necessary",
) -> TensorSpec:
    """The p-norm distance between each pair of rows of ``x1`` and ``x2`` (``torch.cdist``): ``result[..., i, j]
    = ||x1[..., i, :] - x2[..., j, :]||_p``, for ``p`` in ``[0, inf]`` (0 counts the differing coordinates, inf
    takes the largest difference). ``x1``: ``(B..., P, M)``, ``x2``: ``(B..., R, M)``, batch dims broadcast;
    result ``(B..., P, R)``. Values: the differences' norms computed directly (``np.linalg.norm``), for every
    ``compute_mode`` (PyTorch computes Euclidean distances of more than 25 rows through a matrix product, which
    rounds otherwise; devtensor never does, the mode is accepted and checked).

    Dtypes: floating (float16, float32, float64; promoted as NumPy's); the result's dtype is the promoted one.
    Devices: cpu, cuda; meta gives shape and dtype. Variants: functional and out (no inplace, no method).

    Raises:
        ShapeError (ValueError): an input of fewer than 2 dims; different last dims; batch dims that do not
            broadcast.
        ArgumentTypeError (TypeError): a non-floating (or complex) input; ``p`` not a real number.
        ArgumentValueError (ValueError): ``p`` negative or NaN; an unknown ``compute_mode``.
    """
    for name, t in (("x1", x1), ("x2", x2)):
        if len(t.shape) < 2:
            raise ShapeError(f"cdist: argument '{name}' must have at least 2 dimensions, got shape {list(t.shape)}")
        if t.dtype.kind != "f":
            raise ArgumentTypeError(f"cdist: only supports floating-point dtypes, argument '{name}' is {t.dtype.name}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(
            f"cdist: x1 and x2 must have the same number of columns: x1 {list(x1.shape)}, x2 {list(x2.shape)}"
        )
    power = real_arg("cdist", "p", p)
    if not power >= 0:
        raise ArgumentValueError(f"cdist: only supports non-negative p values, got p={power}")
    batch = broadcast_shapes("cdist", x1.shape[:-2], x2.shape[:-2])
    return (*batch, x1.shape[-2], x2.shape[-2]), result_type(x1.dtype, x2.dtype)


@_ks.cdist.xp
def _cdist(xp: ModuleType, x1: D, x2: D, p: float, compute_mode: _ComputeMode, *, out: ConstOut[D]) -> None:
    dtype = out.dtype
    a = x1._array.astype(dtype, copy=False)
    b = x2._array.astype(dtype, copy=False)
    diff = a[..., :, None, :] - b[..., None, :, :]
    power = float(p)
    with quiet(xp):
        if diff.shape[-1] == 0:
            distances = xp.zeros(diff.shape[:-1], dtype)
        elif power == 0:
            distances = xp.count_nonzero(diff, axis=-1)
        elif math.isinf(power):
            distances = xp.abs(diff).max(axis=-1)
        elif power == 2:
            distances = xp.sqrt((diff * diff).sum(axis=-1))
        elif power == 1:
            distances = xp.abs(diff).sum(axis=-1)
        else:
            distances = (xp.abs(diff) ** power).sum(axis=-1) ** (1 / power)
        xp.copyto(out.array, xp.broadcast_to(distances, out.array.shape), casting="unsafe")
