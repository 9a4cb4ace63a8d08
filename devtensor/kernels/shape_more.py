"""More shape ops: ``movedim`` (a view op), ``tile``, ``repeat_interleave``, ``einsum`` and ``searchsorted``
(structured copy ops with functional and out variants).

PyTorch's names, signatures and errors; values and result dtypes are NumPy's (``np.moveaxis``, ``np.tile``,
``np.repeat``, ``np.einsum``, ``np.searchsorted``), one kernel for both devices (NumPy or CuPy as ``xp``).
``meshgrid`` (views of its inputs) is a plain function in :mod:`devtensor.multi_ops` built on the view ops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from devtensor import dtypes
from devtensor.dtypes import Scalar, check_choice, result_type
from devtensor.errors import ArgumentTypeError, ArgumentValueError, NoDataError, ShapeError
from devtensor.kernels.shape import _transpose_kernel
from devtensor.kernels.ufunc_family import D
from devtensor.meta import int_arg, ints_arg, normalize_dim, normalize_dims
from devtensor.structured import PlannedSpec, TensorSpec, structured_op
from devtensor.tensor import Tensor, TensorMeta, TensorOrScalar
from devtensor.typed import ConstOut
from devtensor.views import ViewSpec, view_op

#: einsum's subscript letters (NumPy's: string.ascii_letters, without importing the string module)
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

__all__ = ["einsum", "movedim", "repeat", "repeat_interleave", "searchsorted", "tile"]


def _fmt(shape: Sequence[int]) -> str:
    return str(list(shape))


# --- movedim (a view) -------------------------------------------------------------------------------------------


@view_op()
def movedim(self: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> ViewSpec:
    """A view of ``self`` with the dims ``source`` moved to the positions ``destination`` (``torch.movedim``,
    ``np.moveaxis``); the other dims keep their relative order. ``source`` and ``destination`` are both ints or
    both sequences of the same length. Shares storage and version counter with ``self``.

    Raises:
        ArgumentTypeError (TypeError): dims that are not ints.  IndexOutOfRangeError (IndexError): a dim out of
        range.  ArgumentValueError (ValueError): a repeated dim, or ``source`` and ``destination`` of different
        lengths.
    """
    ndim = len(self.shape)
    src = normalize_dims("movedim", source, ndim, "source")
    dst = normalize_dims("movedim", destination, ndim, "destination")
    if len(src) != len(dst):
        raise ArgumentValueError(
            f"movedim: Invalid source or destination dims: source ({_fmt(src)} dims) should contain the same "
            f"number of dims as destination ({_fmt(dst)} dims)"
        )
    if not ndim:
        return ViewSpec((), ())
    order = [-1] * ndim
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    for i in range(ndim):
        if order[i] == -1:
            order[i] = next(rest)
    plan = tuple(order)
    return ViewSpec(tuple(self.shape[d] for d in plan), plan)


movedim.impl("cpu", "cuda")(_transpose_kernel)


# --- tile, repeat_interleave ------------------------------------------------------------------------------------


@structured_op("tile", inplace=False)
def tile(self: TensorMeta, dims: Sequence[int]) -> TensorSpec:
    """``self`` repeated ``dims[i]`` times along each dim (``torch.tile``, ``np.tile``): with fewer ``dims``
    than ``self`` has dims, ones are prepended to ``dims``; with more, ``self`` is taken as having leading dims
    of size 1. Same dtype, a new storage. Functional, method and out variants.

    Raises:
        ArgumentTypeError (TypeError): ``dims`` not a sequence of ints.
        ArgumentValueError (ValueError): a negative repetition.
    """
    reps = ints_arg("tile", "dims", dims, allow_int=False)
    if any(r < 0 for r in reps):
        raise ArgumentValueError(f"tile: argument 'dims' must be non-negative, got {_fmt(reps)}")
    n = max(len(reps), len(self.shape))
    reps = (1,) * (n - len(reps)) + reps
    shape = (1,) * (n - len(self.shape)) + self.shape
    return tuple(s * r for s, r in zip(shape, reps, strict=True)), self.dtype


@tile.impl("cpu", "cuda")
def _tile(xp: ModuleType, self: D, dims: Sequence[int], *, out: ConstOut[D]) -> None:
    reps = tuple(int(r) for r in dims)
    xp.copyto(out.array, xp.tile(self._array, reps), casting="same_kind")


@structured_op("repeat", inplace=False, method=False, public_functional=False)
def repeat(self: TensorMeta, repeats: Sequence[int]) -> TensorSpec:
    """``self`` tiled ``repeats[i]`` times along each dim (``torch.Tensor.repeat``, the method
    ``Tensor.repeat(*sizes)``; no function of that name, as in PyTorch): ``repeats`` has at least ``self.ndim``
    entries, and more add leading dims of size 1 to ``self`` (``np.tile`` then; unlike :func:`tile`, fewer are an
    error). Same dtype, a new storage. Functional (``get_op("repeat").functional``) and out variants.

    Raises:
        ArgumentTypeError (TypeError): ``repeats`` not a sequence of ints.
        ArgumentValueError (ValueError): fewer repeats than ``self`` has dims; a negative repeat.
    """
    reps = ints_arg("repeat", "repeats", repeats, allow_int=False)
    if len(reps) < len(self.shape):
        raise ArgumentValueError(
            f"repeat: argument 'repeats' has {len(reps)} entries, fewer than the tensor's {len(self.shape)} dims "
            f"(shape {list(self.shape)})"
        )
    if any(r < 0 for r in reps):
        raise ArgumentValueError(f"repeat: argument 'repeats' must be non-negative, got {_fmt(reps)}")
    shape = (1,) * (len(reps) - len(self.shape)) + self.shape
    return tuple(s * r for s, r in zip(shape, reps, strict=True)), self.dtype


@repeat.impl("cpu", "cuda")
def _repeat(xp: ModuleType, self: D, repeats: Sequence[int], *, out: ConstOut[D]) -> None:
    reps = tuple(int(r) for r in repeats)
    xp.copyto(out.array, xp.tile(self._array, reps), casting="same_kind")


@structured_op("repeat_interleave", inplace=False, public_functional=False)  # (public: devtensor.multi_ops)
def repeat_interleave(
    self: TensorMeta, repeats: TensorOrScalar, dim: int | None = None, *, output_size: int | None = None
) -> TensorSpec:
    """Each element of ``self`` repeated ``repeats`` times along ``dim`` (``torch.repeat_interleave``,
    ``np.repeat``); with ``dim=None`` over the flattened tensor (a 1-D result). ``repeats`` is an int, or an
    integer tensor (PyTorch's): 0-d or of one element (every element repeated that often) or 1-D with one count
    per element along ``dim``. The result's size along ``dim`` is then the sum of the counts, which
    ``output_size`` gives (the op's shape comes from metadata only); ``devtensor.repeat_interleave`` and the
    Tensor method read it from the counts when not given (one device sync; meta tensors and static plans need
    ``output_size``). Same dtype, a new storage. Functional, method and out variants.

    Raises:
        ArgumentTypeError (TypeError): ``repeats`` neither an int nor an integer tensor; ``dim`` not an int.
        ArgumentValueError (ValueError): a negative count; an ``output_size`` that is not the sum of the counts
            (checked by the kernel before any write).
        ShapeError (ValueError): a tensor of counts of more than one dim, or not one per element along ``dim``.
        IndexOutOfRangeError (IndexError): ``dim`` out of range.
        NoDataError: tensor counts without ``output_size`` (the op; the main namespace's function reads them, and
            raises this only on a device without data, meta).
    """
    op = "repeat_interleave"
    size = None if output_size is None else int_arg(op, "output_size", output_size)
    if dim is None:
        along = int(np.prod(self.shape, dtype=np.int64))
    else:
        d = normalize_dim(op, dim, len(self.shape))
        along = self.shape[d] if self.shape else 1
    given: object = repeats
    if isinstance(given, Tensor):
        if given.dtype.kind not in "iu":
            raise ArgumentTypeError(f"{op}: a tensor 'repeats' must hold integers, got dtype {given.dtype.name}")
        count = math.prod(given.shape)
        if len(given.shape) > 1 or (count != 1 and count != along):
            raise ShapeError(
                f"{op}: a tensor 'repeats' must be 0-d, of one element or of {along} elements (one per element "
                f"along the dim), got shape {_fmt(given.shape)}"
            )
        if size is None:
            # (the op's shape comes from metadata only; devtensor.repeat_interleave reads the counts and passes
            # output_size for a call without it)
            raise NoDataError(
                f"{op}: a tensor 'repeats' without 'output_size' gives a shape that depends on its values; pass "
                "output_size (devtensor.repeat_interleave and Tensor.repeat_interleave read it from the values)"
            )
        total = size
    else:
        r = int_arg(op, "repeats", repeats)
        if r < 0:
            raise ArgumentValueError(f"{op}: argument 'repeats' must be non-negative, got {r}")
        total = r * along
        if size is not None and size != total:
            raise ArgumentValueError(f"{op}: output_size={size} is not the result's size {total} along the dim")
    if dim is None:
        return (total,), self.dtype
    if not self.shape:
        return (total,), self.dtype
    return (*self.shape[:d], total, *self.shape[d + 1 :]), self.dtype


@repeat_interleave.impl("cpu", "cuda")
def _repeat_interleave(
    xp: ModuleType, self: D, repeats: Any, dim: int | None, *, output_size: int | None, out: ConstOut[D]
) -> None:
    a = self._array
    if out.array.size == 0:  # (nothing to write: NumPy's repeat refuses repeats beyond a C long even then)
        return
    axis = None if dim is None or a.ndim == 0 else normalize_dim("repeat_interleave", dim, a.ndim)
    if isinstance(repeats, Tensor):
        counts = repeats._array.reshape(-1).astype(np.int64, copy=False)
        if counts.size == 1:
            counts = counts[0]
        if bool(xp.any(counts < 0)):
            raise ArgumentValueError("repeat_interleave: repeats can not be negative")
        length = a.size if axis is None else a.shape[axis]
        total = int(counts.sum()) * (length if counts.ndim == 0 else 1)
        wanted = out.array.size if axis is None else out.array.shape[axis]
        if total != wanted:
            raise ArgumentValueError(f"repeat_interleave: output_size={wanted} is not the sum of the repeats ({total})")
        result = xp.repeat(a, counts, axis=axis)
    else:
        result = xp.repeat(a, int(repeats), axis=axis)
    xp.copyto(out.array, result.reshape(out.array.shape), casting="same_kind")


# --- einsum -----------------------------------------------------------------------------------------------------


def _einsum_terms(equation: str, count: int) -> tuple[list[str], str]:
    """The input terms and the output term of ``equation`` (the implicit output made explicit: the ellipsis,
    then the labels that appear once, in alphabetical order)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != count:
        raise ArgumentValueError(
            f"einsum: the equation {equation!r} names {len(terms)} operands, but {count} were given"
        )
    for term in (*terms, rhs):
        bare = term.replace("...", "")
        if "." in bare or not all(c.isalpha() and c.isascii() for c in bare):
            raise ArgumentValueError(
                f"einsum: invalid equation {equation!r}: a term holds letters and at most one '...', got {term!r}"
            )
    if not arrow:
        labels = "".join(t.replace("...", "") for t in terms)
        rhs = ("..." if any("..." in t for t in terms) else "") + "".join(
            sorted(c for c in set(labels) if labels.count(c) == 1)
        )
    return terms, rhs


@structured_op("einsum", inplace=False, method=False, public_functional=False)
def einsum(operands: Sequence[TensorMeta], equation: str) -> TensorSpec:
    """The Einstein summation ``equation`` over ``operands`` (``torch.einsum``; values and result dtype as
    ``np.einsum``): each operand gets a term of letters (one per dim, ``...`` for broadcast leading dims); the
    labels of the output term (after ``->``, else the labels that appear once, alphabetically) are kept, the
    others summed over (also the ``...`` dims when the output given has no ``...``, as PyTorch). The op's
    parameters come operands first (a structured op's first parameter is a tensor); the main namespace's
    ``devtensor.einsum(equation, *operands, out=None)`` (:mod:`devtensor.multi_ops`) has PyTorch's order and also
    takes the operands as one list. All operands on one device. Functional and out
    variants.

    Raises:
        ArgumentValueError (ValueError): a malformed equation, or a number of terms that differs from the
            number of operands; an output label absent from the inputs or repeated.
        ShapeError (ValueError): a term whose number of labels differs from its operand's dims, or one label
            with different sizes.
    """
    if type(equation) is not str:
        raise ArgumentTypeError(f"einsum: argument 'equation' must be a str, got {type(equation).__name__}")
    if not operands:
        raise ArgumentValueError("einsum: expected at least one operand (argument 'operands')")
    terms, rhs = _einsum_terms(equation, len(operands))
    sizes: dict[str, int] = {}
    ellipsis: list[tuple[int, ...]] = []
    for i, (term, t) in enumerate(zip(terms, operands, strict=True)):
        labels = term.replace("...", "")
        if "..." in term:
            extra = len(t.shape) - len(labels)
            if extra < 0:
                raise ShapeError(f"einsum: operand {i} of shape {_fmt(t.shape)} has fewer dims than term {term!r}")
            head = term.index("...")
            ellipsis.append(t.shape[head : head + extra])
            dims = t.shape[:head] + t.shape[head + extra :]
        else:
            if len(labels) != len(t.shape):
                raise ShapeError(
                    f"einsum: term {term!r} has {len(labels)} labels for operand {i} of shape {_fmt(t.shape)}"
                )
            dims = t.shape
        for c, n in zip(labels, dims, strict=True):
            if sizes.setdefault(c, n) != n:
                raise ShapeError(f"einsum: label {c!r} has size {sizes[c]} and size {n} (operand {i})")
    out_labels = rhs.replace("...", "")
    for c in out_labels:
        if c not in sizes or out_labels.count(c) != 1:
            raise ArgumentValueError(f"einsum: output label {c!r} of {equation!r} is repeated or not an input's")
    try:
        batch = np.broadcast_shapes(*ellipsis) if ellipsis else ()
    except ValueError:
        raise ShapeError(f"einsum: the '...' dims {ellipsis} do not broadcast") from None
    head = rhs.index("...") if "..." in rhs else len(rhs)
    shape = (*(sizes[c] for c in rhs[:head]), *(batch if "..." in rhs else ()))
    shape += tuple(sizes[c] for c in rhs[head:].replace("...", ""))
    dtype = operands[0].dtype
    if any(t.dtype is not dtype for t in operands):
        dtype = result_type(*(t.dtype for t in operands))
    return shape, dtype


def _ellipsis_summed(equation: str, ndims: Sequence[int]) -> str:
    """``equation`` with each ``...`` of its inputs spelled as letters of its own when the given output has no
    ``...``: PyTorch sums those dims over, where NumPy's einsum refuses (operands of ``ndims`` dims each; the
    dims right-aligned, as they broadcast)."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    if not arrow or "..." in rhs or "..." not in lhs:
        return equation
    terms = lhs.split(",")
    extra = [n - len(term.replace("...", "")) for term, n in zip(terms, ndims, strict=True)]
    free = [c for c in _LETTERS if c not in equation][: max(extra)]
    spelled = [
        term.replace("...", "".join(free[len(free) - k :]) if k else "") for term, k in zip(terms, extra, strict=True)
    ]
    return ",".join(spelled) + "->" + rhs


@einsum.impl("cpu", "cuda")
def _einsum(xp: ModuleType, operands: Sequence[D], equation: str, *, out: ConstOut[D]) -> None:
    equation = _ellipsis_summed(equation, [t._array.ndim for t in operands])
    result = xp.einsum(equation, *(t._array for t in operands))
    xp.copyto(out.array, result, casting="same_kind")


# --- searchsorted -----------------------------------------------------------------------------------------------


@structured_op("searchsorted", inplace=False, method=False)
def searchsorted(
    sorted_sequence: TensorMeta,
    input: TensorOrScalar,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> PlannedSpec[bool]:
    """The indices at which to insert ``input``'s elements into ``sorted_sequence`` (sorted ascending along its
    last dim) to keep it sorted (``torch.searchsorted``; values as ``np.searchsorted``): the first such index
    (``side="left"``), or the last (``right=True`` or ``side="right"``). A 1-D ``sorted_sequence`` serves every
    element of ``input``; otherwise its leading dims must equal ``input``'s and each row serves its row. ``input``
    may be a Python number (a 1-D ``sorted_sequence`` only; the result is 0-d). ``sorter`` (int64, the shape of
    ``sorted_sequence``): the indices that sort each row of an unsorted ``sorted_sequence`` (as ``argsort``
    gives), as PyTorch's and NumPy's ``sorter``. An empty last dim of ``sorted_sequence`` gives all zeros.
    Result: ``input``'s shape, int64 (int32 with ``out_int32``). Functional and out variants.

    Raises:
        ArgumentTypeError (TypeError): complex operands (no order); a ``sorter`` not int64.
        ArgumentValueError (ValueError): ``side`` not "left"/"right", or ``side="left"`` with ``right=True``; a
            ``sorter`` value outside ``[0, n)`` along a row of length ``n`` (raised by the kernel before any
            write).
        ShapeError (ValueError): a 0-d ``sorted_sequence``, leading dims that differ, a number ``input`` with a
            ``sorted_sequence`` of more than one dim, a ``sorter`` not of ``sorted_sequence``'s shape.
    """
    op = "searchsorted"
    check_choice(op, "side", side, ("left", "right"), optional=True)
    if side == "left" and right:
        raise ArgumentValueError("searchsorted: side='left' and right=True contradict each other")
    if sorted_sequence.dtype.kind == "c":
        raise ArgumentTypeError(f"{op}: argument 'sorted_sequence' of complex dtype {sorted_sequence.dtype.name}")
    s = sorted_sequence.shape
    if not s:
        raise ShapeError("searchsorted: argument 'sorted_sequence' must have at least one dimension, got 0-d")
    if isinstance(input, Tensor):
        if input.dtype.kind == "c":
            raise ArgumentTypeError(f"{op}: argument 'input' of complex dtype {input.dtype.name} (no order)")
        x = input.shape
        if len(s) > 1 and s[:-1] != x[:-1]:
            raise ShapeError(
                f"searchsorted: the leading dims of 'sorted_sequence' {_fmt(s)} and 'input' {_fmt(x)} must be equal"
            )
    else:
        if isinstance(input, complex) or not isinstance(input, (bool, int, float)):
            raise ArgumentTypeError(f"{op}: argument 'input' must be a real number or a tensor, got {input!r}")
        if len(s) != 1:
            raise ShapeError(
                f"{op}: a number 'input' needs a 1-D 'sorted_sequence', got shape {_fmt(s)} (PyTorch's rule)"
            )
        x = ()
    if sorter is not None:
        if sorter.dtype != dtypes.int64:
            raise ArgumentTypeError(f"{op}: argument 'sorter' must be an int64 tensor, got dtype {sorter.dtype.name}")
        if sorter.shape != s:
            raise ShapeError(
                f"{op}: argument 'sorter' of shape {_fmt(sorter.shape)} must have the shape of 'sorted_sequence' "
                f"{_fmt(s)}"
            )
    return PlannedSpec(x, dtypes.int32 if out_int32 else dtypes.int64, right or side == "right")


@searchsorted.impl("cpu", "cuda")
def _searchsorted(
    xp: ModuleType,
    sorted_sequence: D,
    input: D | Scalar,
    *,
    out_int32: bool,
    right: bool,
    side: str | None,
    sorter: Tensor | None,  # (the generic Tensor: mypy cannot infer the kernel's TypeVar through "D | None")
    plan: bool,
    out: ConstOut[D],
) -> None:
    s = sorted_sequence._array
    x: Any = input._array if isinstance(input, Tensor) else input
    which = "right" if plan else "left"
    n = s.shape[-1]
    if sorter is not None and sorter._array.size:
        order = sorter._array
        if bool(xp.any((order < 0) | (order >= n))):
            raise ArgumentValueError(f"searchsorted: a value of 'sorter' is outside [0, {n}) (the row length)")
        s = xp.take_along_axis(s, order, axis=-1)
    if s.ndim == 1:
        result: Any = xp.searchsorted(s, x, side=which)
    else:
        if x.size == 0:
            return
        if s.shape[-1] == 0:  # empty rows: every value goes at index 0 (reshape(-1, 0) cannot infer the rows)
            out.array[...] = 0
            return
        # One search per row (NumPy's and CuPy's searchsorted take a 1-D sequence).
        count = math.prod(s.shape[:-1])
        if count == 0 or x.size == 0:
            return
        rows = s.reshape(count, n)
        xs = x.reshape(count, -1)
        result = xp.stack([xp.searchsorted(r, v, side=which) for r, v in zip(rows, xs, strict=True)])
        result = result.reshape(x.shape)
    xp.copyto(out.array, result, casting="unsafe")
