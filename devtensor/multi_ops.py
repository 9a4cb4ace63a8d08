"""Main-namespace functions that are not one op's front: ``sort``, ``topk``, ``aminmax`` (typed
multi-output ops), ``max``/``min`` (PyTorch's three forms), ``einsum`` (PyTorch's argument order over the
``einsum`` op) and ``meshgrid`` (views); and the Tensor methods over the multi-output ops and ``repeat``.

``sort``, ``topk`` and ``aminmax`` are the functional fronts of multi-output structured ops
(:mod:`devtensor.kernels.ordering`; their docstrings give the semantics, errors and devices), returning
PyTorch's named tuples and taking ``out=`` as a tuple of tensors. ``devtensor.sort`` and the others are these
functions, and ``Tensor.sort``, ``Tensor.topk``, ``Tensor.aminmax``, ``Tensor.max``, ``Tensor.min`` and
``Tensor.repeat`` are attached here (typed in :mod:`devtensor.tensor_methods_multi`).
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from devtensor.dtypes import check_choice
from devtensor.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DeviceMismatchError,
    DevtensorError,
    IndexOutOfRangeError,
    NoDataError,
    ShapeError,
    as_called,
    short_repr,
)
from devtensor.kernels.ordering import AminmaxResult, MaxResult, MinResult, SortResult, TopkResult
from devtensor.structured import get_op as _get_op
from devtensor.structured.aliases import NO_ALIAS, aliased
from devtensor.tensor import Tensor

__all__ = [
    "AminmaxResult",
    "MaxResult",
    "MinResult",
    "SortResult",
    "TopkResult",
    "aminmax",
    "cross_entropy",
    "einsum",
    "max",
    "meshgrid",
    "min",
    "repeat_interleave",
    "sort",
    "topk",
]

if TYPE_CHECKING:

    def sort(
        self: Tensor,
        dim: int = -1,
        descending: bool = False,
        *,
        stable: bool = False,
        out: tuple[Tensor, Tensor] | None = None,
        axis: int = ...,
    ) -> SortResult: ...
    def topk(
        self: Tensor,
        k: int,
        dim: int = -1,
        largest: bool = True,
        sorted: bool = True,
        *,
        out: tuple[Tensor, Tensor] | None = None,
        axis: int = ...,
    ) -> TopkResult: ...
    def aminmax(
        self: Tensor,
        *,
        dim: int | None = None,
        keepdim: bool = False,
        out: tuple[Tensor, Tensor] | None = None,
        axis: int | None = ...,
        keepdims: bool = ...,
    ) -> AminmaxResult: ...

else:
    sort = _get_op("sort").functional
    topk = _get_op("topk").functional
    aminmax = _get_op("aminmax").functional


_einsum = _get_op("einsum").functional
_cross_entropy = _get_op("cross_entropy").functional
_repeat_interleave = _get_op("repeat_interleave").functional
_cross_entropy_full = _get_op("cross_entropy_full").functional
_max_dim = _get_op("max").functional
_min_dim = _get_op("min").functional
_repeat = _get_op("repeat").functional


def _extreme(
    name: str,
    front: Any,
    dim_op: Any,
    reduce: str,
    pair: str,
    arguments: dict[str, Any],
    axis: Any,
    keepdims: Any,
) -> Any:
    """``max``/``min`` (``front``, called again with NumPy's names put under PyTorch's): PyTorch's three forms by
    the second argument (none, an int dim, a tensor or array, or ``other=``); an error of the op behind a form
    names ``name``, the function the user called. ``arguments``: self, dim, keepdim, other, out as passed.

    NumPy's keyword ``axis`` (or ``keepdims`` without a dim) means NumPy's function: ``np.max``'s values alone
    (the ``reduce`` op, ``amax``/``amin``: ``axis`` an int, a tuple or None, ``out=`` one tensor), so that
    ``X.max(axis=0) - X.min(axis=0)`` works as in NumPy; a ``dim`` (positional or keyword) keeps PyTorch's
    ``(values, indices)``, with ``keepdims`` as the alias of ``keepdim``."""
    numpy_form = axis is not NO_ALIAS or (keepdims is not NO_ALIAS and arguments["dim"] is NO_ALIAS)
    if numpy_form:
        given = (("dim", "axis", axis, None), ("keepdim", "keepdims", keepdims, False))

        def values_only(self: Any, dim: Any, keepdim: Any, other: Any, out: Any) -> Any:
            if other is not None:
                raise ArgumentTypeError(f"{name}: got 'other' with NumPy's 'axis'/'keepdims'; pass one form")
            dim = None if dim is NO_ALIAS else dim
            keepdim = False if keepdim is NO_ALIAS else keepdim
            fn = _get_op(reduce).functional
            try:
                return fn(self, dim, keepdim) if out is None else fn(self, dim, keepdim, out=out)
            except DevtensorError as error:
                raise as_called(error, (reduce,), name) from None

        return aliased(name, values_only, arguments, given)
    if keepdims is not NO_ALIAS:
        return aliased(name, front, arguments, (("keepdim", "keepdims", keepdims, False),))
    self, dim, keepdim = arguments["self"], arguments["dim"], arguments["keepdim"]
    other, out = arguments["other"], arguments["out"]
    # (NO_ALIAS defaults: so that an alias with its PyTorch name at the default is seen as both passed)
    if dim is NO_ALIAS:
        dim = None
    if keepdim is NO_ALIAS:
        keepdim = False
    if other is not None:
        if dim is not None or keepdim is not False:
            raise ArgumentTypeError(f"{name}: got 'other' with 'dim'/'keepdim'; {name}(input, other) takes neither")
        if not isinstance(other, (Tensor, np.ndarray)):  # (other= is the elementwise form only: never a dim)
            raise ArgumentTypeError(
                f"{name}: argument 'other' must be a Tensor (or a NumPy array), got {type(other).__name__} "
                f"{short_repr(other)}; {name}(input, other) is elementwise between tensors (a dim is positional or "
                "dim=)"
            )
        dim = other
    try:
        if dim is None:
            if keepdim is not False:
                raise ArgumentTypeError(f"{name}: argument 'keepdim' needs a dim (max/min of all elements keep none)")
            fn = _get_op(reduce).functional
            return fn(self) if out is None else fn(self, out=out)
        # A NumPy array is an 'other' as a tensor is (as dt.max(array, t) is elementwise), never a dim.
        if isinstance(dim, (Tensor, np.ndarray)):
            if keepdim is not False:
                raise ArgumentTypeError(f"{name}: argument 'keepdim' does not apply to {name}(input, other)")
            return _get_op(pair).functional(self, dim, out=out)
    except DevtensorError as error:
        raise as_called(error, (reduce, pair), name) from None
    return dim_op(self, dim, keepdim, out=out)


@overload
def max(self: Tensor) -> Tensor: ...
@overload
def max(
    self: Tensor, dim: int, keepdim: bool = False, *, out: tuple[Tensor, Tensor] | None = None, keepdims: bool = ...
) -> MaxResult: ...
@overload
def max(
    self: Tensor, *, axis: int | Sequence[int] | None, keepdims: bool = ..., out: Tensor | None = None
) -> Tensor: ...
@overload
def max(self: Tensor, *, keepdims: bool, out: Tensor | None = None) -> Tensor: ...
@overload
def max(self: Tensor, other: Tensor, /, *, out: Tensor | None = None) -> Tensor: ...
@overload
def max(self: Tensor, *, other: Tensor, out: Tensor | None = None) -> Tensor: ...
def max(
    self: Tensor,
    dim: Any = NO_ALIAS,
    keepdim: Any = NO_ALIAS,
    *,
    other: Any = None,
    out: Any = None,
    axis: Any = NO_ALIAS,
    keepdims: Any = NO_ALIAS,
) -> Any:
    """PyTorch's ``torch.max``: ``max(t)`` the largest element (a 0-d tensor: :func:`devtensor.amax` over every
    dim); ``max(t, dim, keepdim=False, *, out=None)`` the largest elements along ``dim`` and their int64 indices,
    a named tuple ``(values, indices)`` (the multi-output op ``max``, :mod:`devtensor.kernels.ordering`; NaN
    propagates; ``out=`` a tuple); ``max(t, other)`` or ``max(t, other=other)`` the elementwise
    :func:`devtensor.maximum` (``other`` a tensor or a NumPy array, broadcast; errors name ``max``). Also
    ``Tensor.max``. NumPy's ``axis=`` gives NumPy's result, the values alone (``np.max``: :func:`devtensor.amax`
    with ``axis`` an int, a tuple or None; ``out=`` one tensor), as does ``keepdims=`` without a dim; with a
    ``dim``, ``keepdims`` is the alias of ``keepdim`` (:mod:`devtensor.structured.aliases`). Devices: those of
    the ops.

    Raises:
        ArgumentTypeError (TypeError): ``keepdim`` without an int dim; ``other=`` with ``dim`` or ``keepdim``; as
            the ops (complex input, ``dim`` not an int); an alias and its PyTorch name both passed.
        IndexOutOfRangeError, ShapeError: as the ``max`` op.
    """
    arguments = {"self": self, "dim": dim, "keepdim": keepdim, "other": other, "out": out}
    return _extreme("max", max, _max_dim, "amax", "maximum", arguments, axis, keepdims)


@overload
def min(self: Tensor) -> Tensor: ...
@overload
def min(
    self: Tensor, dim: int, keepdim: bool = False, *, out: tuple[Tensor, Tensor] | None = None, keepdims: bool = ...
) -> MinResult: ...
@overload
def min(
    self: Tensor, *, axis: int | Sequence[int] | None, keepdims: bool = ..., out: Tensor | None = None
) -> Tensor: ...
@overload
def min(self: Tensor, *, keepdims: bool, out: Tensor | None = None) -> Tensor: ...
@overload
def min(self: Tensor, other: Tensor, /, *, out: Tensor | None = None) -> Tensor: ...
@overload
def min(self: Tensor, *, other: Tensor, out: Tensor | None = None) -> Tensor: ...
def min(
    self: Tensor,
    dim: Any = NO_ALIAS,
    keepdim: Any = NO_ALIAS,
    *,
    other: Any = None,
    out: Any = None,
    axis: Any = NO_ALIAS,
    keepdims: Any = NO_ALIAS,
) -> Any:
    """PyTorch's ``torch.min``: ``min(t)`` the smallest element (:func:`devtensor.amin`); ``min(t, dim,
    keepdim=False, *, out=None)`` a named tuple ``(values, indices)`` (the multi-output op ``min``);
    ``min(t, other)`` or ``min(t, other=other)`` the elementwise :func:`devtensor.minimum`. Also ``Tensor.min``.
    As :func:`max` (NumPy's ``axis=`` gives ``np.min``'s values, :func:`devtensor.amin`).

    Raises:
        ArgumentTypeError (TypeError): ``keepdim`` without an int dim; as the ops.  IndexOutOfRangeError,
            ShapeError: as the ``min`` op.
    """
    arguments = {"self": self, "dim": dim, "keepdim": keepdim, "other": other, "out": out}
    return _extreme("min", min, _min_dim, "amin", "minimum", arguments, axis, keepdims)


def _repeat_method(self: Tensor, *sizes: Any, out: Tensor | None = None) -> Tensor:
    """``Tensor.repeat(*sizes)`` (PyTorch's: ``t.repeat(2, 3)`` or ``t.repeat((2, 3))``): ``self`` tiled, the op
    ``repeat`` (:mod:`devtensor.kernels.shape_more`, whose docstring gives the rules and errors)."""
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        return _repeat(self, sizes[0], out=out)
    return _repeat(self, sizes, out=out)


def _show_defaults(fn: Any) -> None:
    """Show ``dim=None, keepdim=False`` in ``fn``'s signature (``help``), not the NO_ALIAS defaults that tell
    it an alias came with its PyTorch name."""
    signature = inspect.signature(fn)
    shown = {"dim": None, "keepdim": False}
    fn.__signature__ = signature.replace(
        parameters=[p.replace(default=shown.get(p.name, p.default)) for p in signature.parameters.values()]
    )


_show_defaults(max)
_show_defaults(min)

# The Tensor methods (declared in devtensor.tensor_methods_multi): the fronts take self first.
for _name, _fn in (
    ("sort", sort),
    ("topk", topk),
    ("aminmax", aminmax),
    ("max", max),
    ("min", min),
    ("repeat", _repeat_method),
):
    builtins.setattr(Tensor, _name, _fn)


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


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: None = None,
    ignore_index: int = -100,
    reduce: None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """Cross-entropy loss of logits and class indices or class probabilities, with PyTorch's signature
    (``torch.nn.functional.cross_entropy``). The common call (2-d logits, class indices, no other argument) is
    the ``cross_entropy`` op (:mod:`devtensor.kernels.nn`: its direct path); any other is the
    ``cross_entropy_full`` op, whose docstring gives the shapes, values, dtypes and errors. ``size_average`` and
    ``reduce`` (PyTorch's deprecated forms of ``reduction``) must be None.

    Raises:
        ArgumentValueError (ValueError): ``size_average`` or ``reduce`` given; the ops' errors.
    """
    if size_average is not None or reduce is not None:
        raise ArgumentValueError(
            "cross_entropy: 'size_average' and 'reduce' (deprecated in PyTorch) are not supported; use 'reduction'"
        )
    if (
        weight is None
        and reduction == "mean"
        and not label_smoothing
        and ignore_index == -100
        and isinstance(input, Tensor)
        and isinstance(target, Tensor)
        and input.ndim == 2
        and target.dtype.kind in "iu"
    ):
        try:
            return _cross_entropy(input, target, out=out)
        except IndexOutOfRangeError as error:
            # A target of -100 (PyTorch's ignored class) or a bad one: the full op tells them apart (nothing was
            # written); a bad class is reported as the common call found it.
            try:
                return _cross_entropy_full(input, target, weight, ignore_index, reduction, label_smoothing, out=out)
            except IndexOutOfRangeError:
                raise error from None
    return _cross_entropy_full(input, target, weight, ignore_index, reduction, label_smoothing, out=out)


def repeat_interleave(
    self: Tensor,
    repeats: Tensor | bool | int | float | complex,
    dim: int | None = None,
    *,
    output_size: int | None = None,
    out: Tensor | None = None,
    axis: int | None = NO_ALIAS,  # type: ignore[assignment]  # (the alias's marker)
) -> Tensor:
    """Each element of ``self`` repeated ``repeats`` times along ``dim`` (``torch.repeat_interleave``; NumPy's
    ``axis`` names ``dim`` too): the ``repeat_interleave`` op (:mod:`devtensor.kernels.shape_more`, whose docstring
    gives the rules and errors), with a tensor of counts given without ``output_size`` read here for the result's
    size (one device sync; PyTorch's call form). Also the Tensor method.

    Raises:
        NoDataError: a tensor of counts without ``output_size`` on a device without data (meta), or while a
            static plan traces (a size read from values cannot be replayed); the op's errors.
    """
    given: object = axis
    if given is not NO_ALIAS:
        if dim is not None:
            raise ArgumentTypeError("repeat_interleave: got both 'dim' and its NumPy name 'axis'")
        dim = axis
    if output_size is None and isinstance(repeats, Tensor) and repeats.dtype.kind in "iu" and repeats.ndim <= 1:
        from devtensor import modes

        if not repeats._backend.has_data or (modes.ACTIVE[0] and modes.recording()):
            raise NoDataError(
                "repeat_interleave: a tensor 'repeats' without 'output_size' needs its values; pass output_size"
            )
        counts = repeats._backend.to_numpy(repeats._array).reshape(-1).astype(np.int64)
        if counts.size and int(counts.min()) < 0:
            raise ArgumentValueError(f"repeat_interleave: repeats can not be negative, got {int(counts.min())}")
        if isinstance(self, Tensor) and (dim is None or isinstance(dim, int)):
            along = self.numel() if dim is None or self.ndim == 0 else self.shape[dim % self.ndim]
            output_size = int(counts.sum()) * (along if counts.size == 1 else 1)
    return _repeat_interleave(self, repeats, dim, output_size=output_size, out=out)


if not TYPE_CHECKING:
    _name = "repeat_interleave"  # (the Tensor method: this function, self first)
    builtins.setattr(Tensor, _name, repeat_interleave)


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
    check_choice("meshgrid", "indexing", indexing, ("ij", "xy"))
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
