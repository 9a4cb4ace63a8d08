"""Scans along one dim: ``cumsum``, ``cumprod`` (with inplace variants) and ``diff``.

Structured ops (meta function + one kernel for both devices, NumPy or CuPy as ``xp``) with PyTorch's names,
signatures and out/inplace rules (see :mod:`devtensor.structured`); values and result dtypes are NumPy 2's
(``np.cumsum``, ``np.cumprod``, ``np.diff``). Dims may be negative; a 0-d tensor takes the dims 0 and -1, as
PyTorch's.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dtypes import DType, result_type, to_dtype
from devtensor.errors import ArgumentValueError, ShapeError
from devtensor.kernels.ufunc_family import D, conditions_of
from devtensor.meta import int_arg, normalize_dim
from devtensor.structured import PlannedSpec, structured_op
from devtensor.tensor import Tensor, TensorMeta
from devtensor.typed import ConstOut

if TYPE_CHECKING:
    from devtensor.dtypes import DTypeLike
else:
    # (a string alias at run time, which the schema builder cannot combine with ``| None``: see reduction_family)
    DTypeLike = np.dtype | type | str

__all__ = ["ScanPlan", "cumprod", "cumsum", "diff"]


def _scan_dtype(op: str, ufunc: Any, self: TensorMeta, dtype: object) -> DType:
    """``dtype=`` when given, else what NumPy's ``np.cum*`` gives for ``self``'s dtype (bool and signed
    integers accumulate in int64, unsigned ones in uint64, floats and complex in their own dtype)."""
    if dtype is not None:
        return to_dtype(dtype, op=op)
    return ufunc(np.zeros(1, self.dtype)).dtype  # type: ignore[no-any-return]


#: A scan's plan: the axis to scan (None for a 0-d tensor, whose dims 0 and -1 name no axis of its array) and
#: the dtype to compute in.
ScanPlan = tuple[int | None, DType]


def _scan_meta(op: str, ufunc: Any, self: TensorMeta, dim: int, dtype: object) -> PlannedSpec[ScanPlan]:
    d = normalize_dim(op, dim, len(self.shape))
    result = _scan_dtype(op, ufunc, self, dtype)
    return PlannedSpec(self.shape, result, (d if self.shape else None, result))


_SCAN_DOC = """

    Args:
        dim: the dim to scan along (negative counts from the end; 0 and -1 for a 0-d tensor).
        dtype: the dtype to compute and return in (NumPy's ``dtype=``); by default NumPy 2's for ``np.{np}``:
            bool and signed integers give int64, unsigned integers uint64, floats and complex their own.
    Result: ``self``'s shape, on ``self``'s device. Devices: cpu (NumPy), cuda (CuPy); meta tensors give the
    result's shape and dtype only. Variants: functional ``{name}(t, dim)`` / ``t.{name}(dim)``, out
    ``{name}(t, dim, out=o)`` and inplace ``t.{name}_(dim)`` (PyTorch's out and inplace rules: the result casts
    same_kind to ``out``/``self``).

    Raises:
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
        ArgumentTypeError (TypeError): ``dim`` not an int; ``dtype`` not a dtype; the result dtype does not cast
            to ``out``/``self``'s.
    """


@structured_op("cumsum", out_may_be_input=True)
def cumsum(self: TensorMeta, dim: int, *, dtype: DTypeLike | None = None) -> PlannedSpec[ScanPlan]:
    """Cumulative sum of ``self`` along ``dim`` (``torch.cumsum``; values and dtypes as ``np.cumsum``): element
    ``i`` of the result is the sum of elements ``0..i`` along the dim. Integers wrap around on overflow."""
    return _scan_meta("cumsum", np.cumsum, self, dim, dtype)


@structured_op("cumprod", out_may_be_input=True)
def cumprod(self: TensorMeta, dim: int, *, dtype: DTypeLike | None = None) -> PlannedSpec[ScanPlan]:
    """Cumulative product of ``self`` along ``dim`` (``torch.cumprod``; values and dtypes as ``np.cumprod``):
    element ``i`` of the result is the product of elements ``0..i`` along the dim. Integers wrap around on
    overflow."""
    return _scan_meta("cumprod", np.cumprod, self, dim, dtype)


@_ks.cumsum.xp
def _cumsum(xp: ModuleType, self: D, dim: int, *, dtype: DTypeLike | None, plan: ScanPlan, out: ConstOut[D]) -> None:
    _scan_accumulate(xp, "cumsum", self._array, plan, out.array)


@_ks.cumprod.xp
def _cumprod(xp: ModuleType, self: D, dim: int, *, dtype: DTypeLike | None, plan: ScanPlan, out: ConstOut[D]) -> None:
    _scan_accumulate(xp, "cumprod", self._array, plan, out.array)


def _scan_accumulate(xp: ModuleType, name: str, a: Any, plan: ScanPlan, o: Any) -> None:
    """``np.cumsum``/``np.cumprod`` of ``a`` along the plan's axis in the plan's dtype, written into ``o`` once
    (cast same_kind when ``o`` has another dtype: the front checked it)."""
    axis, result_dtype = plan
    # Conditions (overflow, invalid) reported once the whole result is written (see deferred_conditions).
    with conditions_of(name)():
        if axis is None:  # 0-d: the scan of one element is that element, in the result dtype
            xp.copyto(o, a.astype(result_dtype), casting="same_kind")
        elif xp is np and o.dtype == result_dtype and a.dtype == result_dtype:
            getattr(xp, name)(a, axis=axis, dtype=result_dtype, out=o)  # (NumPy buffers an overlapping out)
        else:
            # A temporary, then one write: an out of another dtype, or an out that is self, which CuPy's
            # scans do not promise to handle.
            xp.copyto(o, getattr(xp, name)(a, axis=axis, dtype=result_dtype), casting="same_kind")


for _op in (cumsum, cumprod):
    _op.meta.__doc__ = _op.doc = _op.functional.__doc__ = (_op.meta.__doc__ or "") + _SCAN_DOC.format(
        name=_op.name, np=_op.name
    )
    if _op.inplace is not None:
        _op.inplace.__doc__ = _op.doc


# --- diff -------------------------------------------------------------------------------------------------------


@structured_op("diff", inplace=False)
def diff(
    self: TensorMeta, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None
) -> PlannedSpec[int]:
    """The ``n``-th forward difference of ``self`` along ``dim`` (``torch.diff``; values and dtypes as
    ``np.diff``): ``diff(t)[..., i] = t[..., i + 1] - t[..., i]``, applied ``n`` times. Bool tensors give bool
    (``!=`` of neighbours, as NumPy and PyTorch); other dtypes keep theirs.

    Args:
        n: the number of times to difference, ``>= 0`` (0 gives a copy of ``self``, ignoring ``prepend`` and
            ``append`` as PyTorch and NumPy do).
        dim: the dim (negative counts from the end).
        prepend, append: tensors joined to ``self`` along ``dim`` before differencing (PyTorch's): of ``self``'s
            number of dims and its shape except along ``dim``; the result dtype is then the promoted dtype of all
            of them (NumPy's promotion, as PyTorch's ``cat``).
    Result: ``self``'s shape with ``dim`` of size ``max(0, size + prepended + appended - n)``, on ``self``'s
    device. Devices: cpu (NumPy), cuda (CuPy); meta tensors give shape and dtype only. Variants: functional
    ``diff(t, n, dim)`` / ``t.diff(...)`` and out ``diff(t, ..., out=o)``; no inplace (PyTorch has none).

    Raises:
        ShapeError (ValueError): a 0-d ``self``; a ``prepend``/``append`` of another number of dims, or of another
            size along a dim other than ``dim`` (PyTorch's rules).
        ArgumentValueError (ValueError): ``n < 0``.
        ArgumentTypeError (TypeError): ``n`` or ``dim`` not an int.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
    """
    order = int_arg("diff", "n", n)
    if order < 0:
        raise ArgumentValueError(f"diff: argument 'n' (the order) must be non-negative, got {order}")
    if not self.shape:
        raise ShapeError("diff: expects input to be at least one-dimensional (got a 0-d tensor)")
    d = normalize_dim("diff", dim, len(self.shape))
    shape = list(self.shape)
    dtype = self.dtype
    if order:
        for name, extra in (("prepend", prepend), ("append", append)):
            if extra is None:
                continue
            if len(extra.shape) != len(self.shape):
                raise ShapeError(
                    f"diff: argument '{name}' must have the number of dims of 'input' ({len(self.shape)}), got "
                    f"shape {list(extra.shape)}"
                )
            if any(a != b for i, (a, b) in enumerate(zip(extra.shape, self.shape, strict=True)) if i != d):
                raise ShapeError(
                    f"diff: argument '{name}' of shape {list(extra.shape)} must match 'input' {list(self.shape)} "
                    f"except along dim {d}"
                )
            shape[d] += extra.shape[d]
            dtype = result_type(dtype, extra.dtype)
    shape[d] = max(0, shape[d] - order)
    return PlannedSpec(tuple(shape), dtype, d)


@_ks.diff.xp
def _diff(
    xp: ModuleType,
    self: D,
    n: int,
    dim: int,
    prepend: Any,  # (D | None: mypy cannot infer the kernel's TypeVar through optional tensors)
    append: Any,
    *,
    plan: int,
    out: ConstOut[D],
) -> None:
    a = self._array
    if n and (prepend is not None or append is not None):
        parts = [x._array for x in (prepend, self, append) if x is not None]
        a = xp.concatenate(parts, axis=plan, dtype=out.array.dtype)
    if n >= a.shape[plan]:  # (the result is empty along dim; NumPy's diff would loop n times regardless)
        return
    xp.copyto(out.array, xp.diff(a, n=int(n), axis=plan) if n else a, casting="same_kind")
