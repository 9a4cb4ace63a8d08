"""Main-namespace functions that are not one op's generated front: ``sort``, ``topk``, ``aminmax`` (typed
multi-output ops), ``einsum`` (PyTorch's argument order over the ``einsum`` op) and ``meshgrid`` (views).

``sort``, ``topk`` and ``aminmax`` are the functional fronts of multi-output structured ops
(:mod:`devtensor.kernels.ordering`; their docstrings give the semantics, errors and devices), returning
PyTorch's named tuples and taking ``out=`` as a tuple of tensors. ``devtensor.sort`` and the others are these
functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from devtensor.errors import ArgumentTypeError, ArgumentValueError, DeviceMismatchError, ShapeError
from devtensor.kernels.ordering import AminmaxResult, SortResult, TopkResult
from devtensor.structured import get_op as _get_op
from devtensor.tensor import Tensor

__all__ = ["AminmaxResult", "SortResult", "TopkResult", "aminmax", "einsum", "meshgrid", "sort", "topk"]

if TYPE_CHECKING:

    def sort(
        self: Tensor,
        dim: int = -1,
        descending: bool = False,
        *,
        stable: bool = False,
        out: tuple[Tensor, Tensor] | None = None,
    ) -> SortResult: ...
    def topk(
        self: Tensor,
        k: int,
        dim: int = -1,
        largest: bool = True,
        sorted: bool = True,
        *,
        out: tuple[Tensor, Tensor] | None = None,
    ) -> TopkResult: ...
    def aminmax(
        self: Tensor, *, dim: int | None = None, keepdim: bool = False, out: tuple[Tensor, Tensor] | None = None
    ) -> AminmaxResult: ...

else:
    sort = _get_op("sort").functional
    topk = _get_op("topk").functional
    aminmax = _get_op("aminmax").functional


_einsum = _get_op("einsum").functional


def einsum(equation: str, *operands: Tensor | Sequence[Tensor], out: Tensor | None = None) -> Tensor:
    """The Einstein summation ``equation`` over the operands (``torch.einsum``: ``einsum("ij,jk->ik", a, b)``
    or ``einsum("ij,jk->ik", [a, b])``); values and result dtype as ``np.einsum``. The op is ``einsum``
    (:mod:`devtensor.kernels.shape_more`, whose docstring gives the equation's rules and the errors); ``out=``
    takes its result with the out rules.

    Raises:
        ArgumentTypeError (TypeError): an operand that is not a Tensor.  ArgumentValueError, ShapeError: as the op.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        tensors: Sequence[Any] = operands[0]
    else:
        tensors = operands
    return _einsum(list(tensors), equation, out=out)


def meshgrid(*tensors: Tensor | Sequence[Tensor], indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D (or 0-d, taken as 1 element) tensors (``torch.meshgrid``, ``np.meshgrid``):
    for ``n`` tensors of sizes ``s1 … sn``, ``n`` tensors of shape ``(s1, …, sn)`` (``indexing="ij"``) or with
    the first two sizes swapped (``indexing="xy"``, Cartesian), the ``i``-th holding tensor ``i``'s values along
    its dim. Each result is a view of its input (``reshape`` then ``expand``: sharing its storage, not writable
    element by element as a fresh tensor would be: an expanded view). Also takes the tensors as one list.

    Raises:
        ArgumentTypeError (TypeError): an argument that is not a Tensor.  ArgumentValueError (ValueError): no
            tensors, or ``indexing`` not "ij"/"xy".  ShapeError (ValueError): a tensor with more than one dim.
        DeviceMismatchError: tensors on different devices (as the view ops see them: each is its own view).
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        items: Sequence[Any] = tensors[0]
    else:
        items = tensors
    if indexing not in ("ij", "xy"):
        raise ArgumentValueError(f"meshgrid: argument 'indexing' must be 'ij' or 'xy', got {indexing!r}")
    if not items:
        raise ArgumentValueError("meshgrid: expected at least one tensor")
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"meshgrid: argument 'tensors[{i}]' must be a Tensor, got {type(t).__name__}")
        if t.ndim > 1:
            raise ShapeError(f"meshgrid: expects 0-d or 1-d tensors, got tensors[{i}] of shape {list(t.shape)}")
    device = items[0].device
    for i, t in enumerate(items):
        if t.device != device:
            raise DeviceMismatchError(
                f"meshgrid: expects all tensors on one device, got {device} (tensors[0]) and {t.device} (tensors[{i}])"
            )
    sizes = [t.numel() for t in items]
    swap = indexing == "xy" and len(items) > 1
    # Cartesian indexing swaps the first two output dims.
    order = list(range(len(items)))
    if swap:
        order[0], order[1] = 1, 0
    shape = [sizes[d] for d in order]
    grids = []
    for i, t in enumerate(items):
        pos = order.index(i)
        view_shape = [1] * len(items)
        view_shape[pos] = sizes[i]
        grids.append(t.reshape(view_shape).expand(shape))
    return tuple(grids)
