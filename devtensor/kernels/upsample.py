"""upsample_nearest1d, the example op of PyTorch's structured-kernels RFC (re-exported by devtensor.kernels.nn).

Its meta function does real work: it validates the arguments and derives the output length from ``output_size``
or ``scale_factor`` before any data is touched. Semantics follow PyTorch's legacy ``nearest`` rule, values
checked against PyTorch's CPU kernel.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor import dtypes
from devtensor import kernel_signatures as _ks
from devtensor.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from devtensor.kernels.ufunc_family import D
from devtensor.meta import int_arg, memoized
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = ["upsample_nearest1d"]

_FLOAT64: Final = dtypes.float64


def _upsample_length(length: int, output_size: object, scale_factor: object) -> int:
    """``L_out`` from exactly one of ``output_size`` and ``scale_factor`` (see :func:`upsample_nearest1d`)."""
    op = "upsample_nearest1d"
    if (output_size is None) == (scale_factor is None):
        given = "both" if output_size is not None else "neither"
        raise ArgumentValueError(f"{op}: exactly one of 'output_size' and 'scale_factor' must be given, got {given}")
    if output_size is not None:
        if isinstance(output_size, Sequence) and not isinstance(output_size, (str, bytes)):
            # PyTorch's int[1]: a sequence of exactly one int
            if len(output_size) != 1:
                raise ArgumentValueError(
                    f"{op}: argument 'output_size' must be an int or a sequence of one int (one length for a 1-d "
                    f"signal), got a {type(output_size).__name__} of {len(output_size)} items {output_size!r}"
                )
            item = output_size[0]
            if isinstance(item, bool) or not isinstance(item, int):
                raise ArgumentTypeError(
                    f"{op}: argument 'output_size' must be an int or a sequence of one int, got "
                    f"{type(output_size).__name__} {output_size!r} holding {type(item).__name__} {item!r}"
                )
            output_size = item
        out_len = int_arg(op, "output_size", output_size)
        if out_len <= 0:
            raise ArgumentValueError(f"{op}: argument 'output_size' must be > 0, got {out_len}")
        return out_len
    if isinstance(scale_factor, (np.integer, np.floating)):
        scale_factor = scale_factor.item()  # a NumPy number counts as its Python value
    if isinstance(scale_factor, bool) or not isinstance(scale_factor, (int, float)):
        raise ArgumentTypeError(
            f"{op}: argument 'scale_factor' must be a float, got {type(scale_factor).__name__} {scale_factor!r}"
        )
    if not math.isfinite(scale_factor) or scale_factor <= 0:
        raise ArgumentValueError(f"{op}: argument 'scale_factor' must be finite and > 0, got {scale_factor!r}")
    out_len = math.floor(length * scale_factor)
    if out_len <= 0:
        raise ArgumentValueError(
            f"{op}: scale_factor={scale_factor!r} on an input of length {length} gives an output length of "
            f"floor({length} * {scale_factor!r}) = {out_len}; it must be > 0"
        )
    return out_len


@functools.lru_cache(maxsize=256)
def _nearest_indices(
    length: int, out_len: int, scale_factor: float | None, double: bool
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The source index of every output position (read-only, cached), as PyTorch's CPU nearest kernel computes
    it: in its opmath type, float64 for float64 input (``double``), else float32."""
    dst = np.arange(out_len, dtype=np.int64)
    if scale_factor is None and out_len == length and length <= _EXACT_F32:
        src = dst  # (the general rule gives j: scale 1 and j held exactly in both float types)
    elif scale_factor is None and out_len == 2 * length and out_len <= _EXACT_F32:
        src = dst >> 1  # (likewise: scale 0.5, exact products)
    else:
        # scale = L / L_out (or 1 / scale_factor, computed in float64) in the opmath type; the product j * scale
        # in it too; then floor of that product taken as a float32 (PyTorch calls floorf on it, which rounds a
        # float64 product to float32 first: with L = 26, L_out = 22, j = 11 the float64 product 13.0 gives 13,
        # the float32 one 12.999999 gives 12).
        opmath = np.dtype(np.float64 if double else np.float32)
        if scale_factor is None:
            scale = np.divide(np.asarray(length, opmath), np.asarray(out_len, opmath), dtype=opmath)
        else:
            scale = np.asarray(1.0 / scale_factor, opmath)
        product = np.multiply(dst.astype(opmath), scale, dtype=opmath)
        src = np.minimum(np.floor(product.astype(np.float32)).astype(np.int64), length - 1)
    src.flags.writeable = False
    return src


#: Ints up to 2**24 are exact in float32.
_EXACT_F32: Final = 1 << 24


@structured_op("upsample_nearest1d", inplace=False, method=False)
def upsample_nearest1d(
    self: TensorMeta, output_size: int | Sequence[int] | None = None, scale_factor: float | None = None
) -> TensorSpec:
    """Nearest-neighbour upsampling (or downsampling) of the last dimension of a batch of 1-d signals
    (``torch.nn.functional.interpolate(mode='nearest')`` / ``aten::upsample_nearest1d``, PyTorch's legacy
    ``nearest`` rule, not ``nearest-exact``).

    This is the example op of PyTorch's structured-kernels RFC, and its meta function is where the work of
    a structured op lives: it checks every argument and computes the result's shape and dtype from metadata
    alone, so the impls only fill ``out`` and meta tensors get exact shapes with no data.

    Arguments (exactly one of ``output_size`` and ``scale_factor``):
        self: ``[N, C, L]`` (batch, channels, length), any dtype; ``L`` must be > 0. ``N`` or ``C`` may be 0
            (an empty result).
        output_size: the output length ``L_out``: an int > 0, or a sequence of one such int (PyTorch's
            ``int[1]``: ``[6]``, ``(6,)``).
        scale_factor: a positive finite number; ``L_out = floor(L * scale_factor)``, which must be > 0.
    Semantics (for every ``n``, ``c`` and output position ``j`` in ``[0, L_out)``):
        ``result[n, c, j] = self[n, c, src(j)]`` with
        ``src(j) = min(floor(j * (L / L_out)), L - 1)`` when ``output_size`` is given, or
        ``src(j) = min(floor(j * (1 / scale_factor)), L - 1)`` when ``scale_factor`` is given (PyTorch uses the
        scale itself, not ``L / L_out``, when one is given, so e.g. ``L = 3, scale_factor = 1.5`` gives
        ``L_out = 4`` and sources ``[0, 0, 1, 2]``), both evaluated as PyTorch's CPU kernel does, so the
        indices match PyTorch's: the scale and the product ``j * scale`` in the input's opmath type (float64
        for float64 input, float32 for every other dtype, as PyTorch for float32, float16 and uint8), the
        product then rounded to float32 and floored. So ``L = 26, L_out = 22`` gives source 13 at ``j = 11``
        for float64 input and 12 for float32.
    Shapes: ``[N, C, L]`` -> ``[N, C, L_out]``. Dtypes: the input's (values are copied, never computed).
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give the shape and dtype only.
    Variants: functional and out (``upsample_nearest1d(t, 8, out=o)``); no inplace variant (the shape changes).

    Raises:
        ShapeError (ValueError): ``self`` is not 3-d, or ``L`` is 0.
        ValueError: neither or both of ``output_size``/``scale_factor``; ``output_size <= 0``; a
            ``scale_factor`` that is not finite and positive, or gives ``L_out = 0``; an ``output_size``
            sequence of other than one item.
        ArgumentTypeError (TypeError): ``output_size`` not an int (nor a sequence of one int), ``scale_factor``
            not a number.
        CastingError (TypeError), DeviceMismatchError, MemoryOverlapError (ValueError): the out rules.
    """
    return _upsample_nearest1d_spec(self, output_size, scale_factor)


@memoized
def _upsample_nearest1d_spec(
    self: TensorMeta, output_size: int | Sequence[int] | None = None, scale_factor: float | None = None
) -> TensorSpec:
    shape = self.shape
    if len(shape) != 3:
        raise ShapeError(
            f"upsample_nearest1d: argument 'self' must be 3-d [N, C, L] (batch, channels, length), got shape "
            f"{list(shape)}"
        )
    n, c, length = shape
    if length == 0:
        raise ShapeError(
            f"upsample_nearest1d: argument 'self' must have a length L > 0 to sample from, got shape {list(shape)}"
        )
    return ((n, c, _upsample_length(length, output_size, scale_factor)), self.dtype)


@_ks.upsample_nearest1d.xp
def _upsample_nearest1d(
    xp: ModuleType, self: D, output_size: int | Sequence[int] | None, scale_factor: float | None, *, out: ConstOut[D]
) -> None:
    a, o = self._array, out.array
    length = a.shape[2]
    out_len = o.shape[2]
    if o.size == 0:
        return
    src = _nearest_indices(length, out_len, None if output_size is not None else scale_factor, a.dtype == _FLOAT64)
    if xp is not np:
        src = xp.asarray(src)
    if o.dtype == a.dtype:
        xp.take(a, src, axis=2, out=o)
    else:
        xp.copyto(o, xp.take(a, src, axis=2), casting="same_kind")
