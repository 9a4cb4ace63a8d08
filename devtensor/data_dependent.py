"""Data-dependent ops: ``nonzero`` and ``unique``, whose result shapes depend on the input's values.

Such an op cannot be planned from shapes and dtypes alone: its meta function would not know the result's size.
Each is a :class:`DataDependentOp` with ``data_dependent = True`` (structured and view ops have no such
attribute; ``getattr(op, "data_dependent", False)`` tells them apart), so a static plan (a graph capture, an
ahead-of-time shape pass) can refuse it by that attribute. They run one kernel for both devices (NumPy or CuPy
as ``xp``), have no ``out=`` and no inplace variant (PyTorch's ``nonzero`` takes ``out=``; a data-dependent
result cannot be checked against an out's shape before computing, so devtensor leaves it out), are seen by
dispatch modes (variant ``"functional"``), and refuse meta tensors (NoDataError: there are no values to size
the result by). Values are NumPy's (``np.nonzero``, ``np.unique``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from devtensor import modes
from devtensor.errors import ArgumentTypeError, NoDataError, NoKernelError
from devtensor.tensor import Tensor

__all__ = ["DataDependentOp", "data_dependent_ops", "nonzero", "unique"]


class DataDependentOp:
    """An op whose result shape depends on its input's values (see the module docstring).

    Attributes: ``name``, ``data_dependent`` (always True), ``functional`` (the front), ``kernel`` (called as
    ``kernel(xp, array, **arguments)``, returning the result arrays), ``doc``. ``inplace`` is None and there is
    no out variant.
    """

    data_dependent: Final = True
    inplace: Final = None
    nondeterministic: Final = False

    def __init__(self, name: str, kernel: Callable[..., tuple[Any, ...]], doc: str) -> None:
        self.name = name
        self.kernel = kernel
        self.doc = doc
        self.module = "devtensor"
        self.functional: Callable[..., Any] = lambda *a, **k: None

    def run(self, self_tensor: object, **arguments: Any) -> tuple[Tensor, ...]:
        """Run the kernel on ``self_tensor``'s device; the result arrays as new tensors on that device."""
        name = self.name
        if not isinstance(self_tensor, Tensor):
            raise ArgumentTypeError(
                f"{name}: argument 'self' must be a Tensor, got {type(self_tensor).__name__} {self_tensor!r}"
            )
        backend = self_tensor._backend
        device = self_tensor._device
        if not backend.has_data:
            raise NoDataError(
                f"{name}: the result's shape depends on the values of the input, and a tensor on {device} has none"
            )
        guard = device._guard
        if guard is None:
            arrays = self.kernel(backend.xp, self_tensor._array, **arguments)
        else:
            with guard():
                arrays = self.kernel(backend.xp, self_tensor._array, **arguments)
        return tuple(backend.wrap(a, device) for a in arrays)

    def __repr__(self) -> str:
        return f"<data-dependent op {self.name}>"


def _nonzero_kernel(xp: Any, a: Any, *, as_tuple: bool) -> tuple[Any, ...]:
    if a.ndim == 0:
        # As PyTorch: a 0-d input is a 1-element 1-d one for as_tuple, and has 0 index columns otherwise.
        n = int(bool(a))
        return (xp.zeros((n,), dtype=np.int64),) if as_tuple else (xp.zeros((n, 0), dtype=np.int64),)
    found = [i.astype(np.int64) for i in xp.nonzero(a)]
    if as_tuple:
        return tuple(found)
    return (xp.stack(found, axis=1),)


_nonzero_op = DataDependentOp(
    "nonzero",
    _nonzero_kernel,
    """The indices of the nonzero (true) elements of ``self`` (``torch.nonzero``; values as ``np.nonzero``), in
    row-major order: an int64 tensor of shape ``(n, self.ndim)`` (one row per element), or, with
    ``as_tuple=True``, a tuple of ``self.ndim`` 1-D int64 tensors (one per dim; a 0-d ``self`` gives one). On
    ``self``'s device; no out= (data-dependent: see :mod:`devtensor.data_dependent`).

    Raises:
        ArgumentTypeError (TypeError): ``self`` not a Tensor, ``as_tuple`` not a bool.
        NoDataError (RuntimeError): a meta tensor (no values to size the result by).
    """,
)


def nonzero(self: Tensor, *, as_tuple: bool = False) -> Any:
    if modes.ACTIVE[0]:
        return modes.run_modes(_nonzero_op, "functional", nonzero, _nonzero_raw, (self,), {"as_tuple": as_tuple})
    return _nonzero_raw(self, as_tuple=as_tuple)


def _nonzero_raw(self: Tensor, *, as_tuple: bool = False) -> Any:
    if type(as_tuple) is not bool:
        raise ArgumentTypeError(f"nonzero: argument 'as_tuple' must be a bool, got {as_tuple!r}")
    result = _nonzero_op.run(self, as_tuple=as_tuple)
    return result if as_tuple else result[0]


def _unique_kernel(xp: Any, a: Any, *, return_inverse: bool, return_counts: bool) -> tuple[Any, ...]:
    flat = a.reshape(-1)
    found = xp.unique(flat, return_inverse=return_inverse, return_counts=return_counts)
    if not (return_inverse or return_counts):
        return (found,)
    values, *rest = found
    result = [values]
    if return_inverse:
        result.append(rest.pop(0).astype(np.int64).reshape(a.shape))
    if return_counts:
        result.append(rest.pop(0).astype(np.int64))
    return tuple(result)


_unique_op = DataDependentOp(
    "unique",
    _unique_kernel,
    """The distinct elements of ``self`` (``torch.unique``; values as ``np.unique``), as a sorted 1-D tensor of
    ``self``'s dtype; with ``return_inverse`` also the int64 indices (``self``'s shape) of each element in that
    tensor, with ``return_counts`` also the int64 count of each distinct element; the result is then a tuple
    ``(output, inverse?, counts?)`` as PyTorch's. ``sorted=False`` gives the same sorted order (PyTorch leaves it
    unspecified). NaN elements are one distinct value (NumPy 2's ``equal_nan``; PyTorch keeps each NaN). Only
    ``dim=None`` (the flattened tensor). No out= (data-dependent: see :mod:`devtensor.data_dependent`).

    Raises:
        ArgumentTypeError (TypeError): ``self`` not a Tensor; a flag not a bool.
        NoKernelError (NotImplementedError): ``dim`` given (unique slices are not implemented).
        NoDataError (RuntimeError): a meta tensor.
    """,
)


def unique(
    self: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    if modes.ACTIVE[0]:
        kwargs = {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts, "dim": dim}
        return modes.run_modes(_unique_op, "functional", unique, _unique_raw, (self,), kwargs)
    return _unique_raw(self, sorted, return_inverse, return_counts, dim)


def _unique_raw(
    self: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    for arg, value in (("sorted", sorted), ("return_inverse", return_inverse), ("return_counts", return_counts)):
        if type(value) is not bool:
            raise ArgumentTypeError(f"unique: argument '{arg}' must be a bool, got {value!r}")
    if dim is not None:
        raise NoKernelError(f"unique: argument 'dim' ({dim!r}) is not supported; only dim=None (flattened)")
    result = _unique_op.run(self, return_inverse=return_inverse, return_counts=return_counts)
    return result if len(result) > 1 else result[0]


_nonzero_op.functional = nonzero
_unique_op.functional = unique
for _op in (_nonzero_op, _unique_op):
    _op.functional.__doc__ = _op.doc
    setattr(_op.functional, "op", _op)  # noqa: B010 (the fronts' op, as the generated fronts carry it)

#: The data-dependent ops by name.
data_dependent_ops: Final[dict[str, DataDependentOp]] = {"nonzero": _nonzero_op, "unique": _unique_op}
