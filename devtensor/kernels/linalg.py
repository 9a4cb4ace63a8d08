"""The linear-algebra family: matmul, mm, bmm, dot, outer and addmm.

Each op is one structured op (meta function + one kernel for both devices, NumPy or CuPy as ``xp``), defined through
the same public API a user's op would use. Shapes follow NumPy's ``matmul`` (and PyTorch's, which agrees: 1-D
operands are promoted to matrices and the added dimension removed again, batch dimensions broadcast); ``mm``,
``bmm``, ``dot`` and ``outer`` take exactly the ranks PyTorch's do. Result dtypes are NumPy 2's for ``np.matmul``
(``np.multiply`` for ``outer``): mixed dtypes promote. Shape errors are :class:`~devtensor.errors.ShapeError` (a
ValueError) naming the op and both operand shapes.

Out variants follow the out rules of :mod:`devtensor.structured`: an out of another dtype is fine when the result
casts to it (same_kind); an out that is also an input, or partially overlaps one, is a MemoryOverlapError
(``addmm`` excepted: its out may be exactly ``self``, and it has the inplace variant ``addmm_``, since it computes
into a temporary before its one write).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import DType, Scalar, result_type
from devtensor.errors import ArgumentTypeError, ShapeError
from devtensor.kernels.ufunc_family import D, conditions_of
from devtensor.lowering import Lowering, lowers
from devtensor.meta import broadcast_shapes, check_int_scalar, memoized, offers_direct, offers_specs, ufunc_result_dtype
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

__all__ = ["addmm", "bmm", "dot", "matmul", "mm", "outer"]


def _fmt(shape: tuple[int, ...]) -> str:
    return str(list(shape))


def _matmul_dtype(op: str, a: TensorMeta, b: TensorMeta) -> DType:
    return ufunc_result_dtype(op, np.matmul, a.dtype, b.dtype)


def matmul_shape(
    op: str,
    a: tuple[int, ...],
    b: tuple[int, ...],
    names: tuple[str, str] = ("self", "other"),
) -> tuple[int, ...]:
    """The result shape of NumPy's ``matmul`` for operand shapes ``a`` and ``b``.

    A 1-D first operand is promoted to a row ``(1, n)``, a 1-D second operand to a column ``(n, 1)``, and the
    added dimension is removed from the result; the last two dimensions multiply as matrices, the others
    broadcast. ``names`` are the arguments' names, for errors.

    Raises:
        ShapeError: a 0-d operand, contracted dimensions that differ, or batch dimensions that do not
            broadcast; the message names the op and both shapes.
    """
    if not a or not b:
        raise ShapeError(
            f"{op}: both arguments need to be at least 1-D, but '{names[0]}' has shape {_fmt(a)} and "
            f"'{names[1]}' has shape {_fmt(b)}"
        )
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ShapeError(
            f"{op}: shapes {_fmt(a)} ('{names[0]}') and {_fmt(b)} ('{names[1]}') cannot be multiplied: the "
            f"contracted dimensions differ ({a2[-1]} != {b2[-2]})"
        )
    batch_a, batch_b = a2[:-2], b2[:-2]
    if batch_a == batch_b:
        batch = batch_a
    else:
        try:
            batch = broadcast_shapes(op, batch_a, batch_b)
        except ShapeError:
            raise ShapeError(
                f"{op}: shapes {_fmt(a)} ('{names[0]}') and {_fmt(b)} ('{names[1]}') cannot be multiplied: the "
                f"batch dimensions {_fmt(batch_a)} and {_fmt(batch_b)} do not broadcast"
            ) from None
    return batch + a2[-2:-1] * (len(a) > 1) + b2[-1:] * (len(b) > 1)


# --- helpers shared by the impls ---------------------------------------------------------------------------


def _matmul_array(xp: ModuleType, a: Any, b: Any) -> Any:
    """``a @ b`` as a new array; on CUDA bool (which cuBLAS lacks) as "any product is true", through int64."""
    if xp is not np and a.dtype.kind == "b" and b.dtype.kind == "b":
        return xp.matmul(a.astype(np.int64), b.astype(np.int64)) != 0
    return xp.matmul(a, b)


_SHAPES_DOC = """
    Result dtype: NumPy's for ``np.matmul`` of the two dtypes (mixed dtypes promote; bool gives bool). Both
    tensors on one device (DeviceMismatchError otherwise); the result is on it. Variants: functional and out
    (``out=``: same_kind cast to out's dtype, resize by the out rules; an out overlapping an input is a
    MemoryOverlapError). Meta tensors give the result's shape and dtype.

    Raises:
        ShapeError (ValueError): the message names the op and both operand shapes.
        ArgumentTypeError (TypeError): dtypes NumPy's matmul has no loop for.
"""


#: addmm's direct path (see :func:`_addmm_cpu`): [the registered CPU kernel, the array kernel], set below.
_ADDMM_DIRECT: Final[list[Any]] = [None, None]
#: matmul's and mm's direct paths: their CPU kernels are one ``np.matmul(a, b, out=o)`` call.
_MATMUL_DIRECT: Final[list[Any]] = [None, np.matmul]
_MM_DIRECT: Final[list[Any]] = [None, np.matmul]


# --- matmul -------------------------------------------------------------------------------------------------

#: matmul's and mm's successful results by (shape, dtype) of both operands (see :func:`_remember`), which their
#: fronts read inline (meta.SHAPE_MEMO).
_MATMUL_SPECS: Final[dict[tuple[Any, ...], TensorSpec]] = {}
_MM_SPECS: Final[dict[tuple[Any, ...], TensorSpec]] = {}
_MEMO_LIMIT: Final = 1024


@structured_op("matmul", inplace=False)
@offers_direct(_MATMUL_DIRECT, fresh_c=2)  # (np.matmul lays out a result of core dims only in C order)
@offers_specs(_MATMUL_SPECS)
def matmul(self: TensorMeta, other: TensorMeta) -> TensorSpec:
    """Matrix product with NumPy's ``matmul`` semantics (``torch.matmul`` agrees): 2-D @ 2-D is the matrix
    product ``[n, k] @ [k, m] -> [n, m]``; a 1-D first operand is a row vector and a 1-D second one a column
    vector, whose added dimension is removed again (1-D @ 1-D is a 0-d dot product); operands with more
    dimensions are stacks of matrices whose batch dimensions broadcast (``[2, 1, n, k] @ [3, k, m] ->
    [2, 3, n, m]``). 0-d operands are an error. Empty contracted dimensions give zeros.
    """
    a: Any = self
    b: Any = other
    spec = _MATMUL_SPECS.get((a._shape, a._dtype, b._shape, b._dtype))  # (the memo's hit inline)
    return spec if spec is not None else _matmul_spec(self, other)


@memoized
def _matmul_spec(self: TensorMeta, other: TensorMeta) -> TensorSpec:
    spec = matmul_shape("matmul", self.shape, other.shape), _matmul_dtype("matmul", self, other)
    return _remember(_MATMUL_SPECS, self, other, spec)


def _remember(specs: dict[tuple[Any, ...], TensorSpec], a: Any, b: Any, spec: TensorSpec) -> TensorSpec:
    """``spec`` stored in ``specs`` (bounded) under (shape, dtype) of ``a`` and ``b``: the key the meta
    functions of matmul and mm look up before their memoized call (their results depend on nothing else)."""
    if len(specs) >= _MEMO_LIMIT:
        specs.clear()
    specs[(a._shape, a._dtype, b._shape, b._dtype)] = spec
    return spec


def _matmul(xp: ModuleType, self: D, other: D, *, out: ConstOut[D]) -> None:
    # (Also mm's, bmm's and dot's kernel: their rank checks are their meta functions'.)
    a, b = self._array, other._array
    o: Any = out.array
    if xp is np:
        np.matmul(a, b, out=o)
        return
    # cuBLAS writes only C-contiguous matrices of the result dtype; others get the product cast into them.
    dtype = np.result_type(a.dtype, b.dtype)
    if o.dtype == dtype and o.ndim >= 2 and dtype.kind != "b" and o.flags.c_contiguous:
        xp.matmul(a, b, out=o)
    else:
        xp.copyto(o, _matmul_array(xp, a, b), casting="same_kind")


@lowers(_matmul)
def _matmul_lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: None) -> bool:
    """matmul's (and bmm's, dot's) lowering (devtensor.lowering): the CPU kernel's one ``np.matmul`` call."""
    lw.call(np.matmul, *(value for name, value in args.items() if name in ("self", "other", "mat2")), out=out)
    return True


_ks.matmul.xp(_matmul)
_MATMUL_DIRECT[0] = matmul.table.kernels.get(DispatchKey.CPU)


# --- mm, bmm --------------------------------------------------------------------------------------------------


@structured_op("mm", inplace=False)
@offers_direct(_MM_DIRECT, fresh_c=2)
@offers_specs(_MM_SPECS)
def mm(self: TensorMeta, mat2: TensorMeta) -> TensorSpec:
    """Matrix product of two 2-D tensors, ``[n, k] @ [k, m] -> [n, m]`` (``torch.mm``; values as
    ``np.matmul``). No broadcasting: other ranks are an error (use ``matmul``).
    """
    a: Any = self
    b: Any = mat2
    spec = _MM_SPECS.get((a._shape, a._dtype, b._shape, b._dtype))
    return spec if spec is not None else _mm_spec(self, mat2)


@memoized
def _mm_spec(self: TensorMeta, mat2: TensorMeta) -> TensorSpec:
    a, b = self.shape, mat2.shape
    if len(a) != 2 or len(b) != 2:
        raise ShapeError(
            f"mm: both arguments must be 2-D matrices, but 'self' has shape {_fmt(a)} and 'mat2' has shape {_fmt(b)}"
        )
    if a[1] != b[0]:
        raise ShapeError(
            f"mm: shapes {_fmt(a)} ('self') and {_fmt(b)} ('mat2') cannot be multiplied ({a[0]}x{a[1]} and "
            f"{b[0]}x{b[1]}: {a[1]} != {b[0]})"
        )
    return _remember(_MM_SPECS, self, mat2, ((a[0], b[1]), _matmul_dtype("mm", self, mat2)))


@_ks.mm.xp
def _mm(xp: ModuleType, self: D, mat2: D, *, out: ConstOut[D]) -> None:
    if xp is np:  # (matmul's CPU path, without a second frame)
        o: Any = out.array
        np.matmul(self._array, mat2._array, out=o)
        return
    _matmul(xp, self, mat2, out=out)  # (the parameter is named mat2 here, as in PyTorch)


@lowers(_mm)
def _mm_lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: None) -> bool:
    """mm's lowering (devtensor.lowering): the CPU kernel's one ``np.matmul`` call."""
    lw.call(np.matmul, args["self"], args["mat2"], out=out)
    return True


_MM_DIRECT[0] = mm.table.kernels.get(DispatchKey.CPU)


@structured_op("bmm", inplace=False)
def bmm(self: TensorMeta, mat2: TensorMeta) -> TensorSpec:
    """Batched matrix product of two 3-D tensors with equal batch sizes, ``[b, n, k] @ [b, k, m] -> [b, n, m]``
    (``torch.bmm``; values as ``np.matmul``). No broadcasting: other ranks or batch sizes are an error.
    """
    return _bmm_spec(self, mat2)


@memoized
def _bmm_spec(self: TensorMeta, mat2: TensorMeta) -> TensorSpec:
    a, b = self.shape, mat2.shape
    if len(a) != 3 or len(b) != 3:
        raise ShapeError(
            f"bmm: both arguments must be 3-D, but 'self' has shape {_fmt(a)} and 'mat2' has shape {_fmt(b)}"
        )
    if a[0] != b[0]:
        raise ShapeError(
            f"bmm: expected 'self' and 'mat2' to have the same batch size, but got shapes {_fmt(a)} and {_fmt(b)}"
        )
    if a[2] != b[1]:
        raise ShapeError(
            f"bmm: shapes {_fmt(a)} ('self') and {_fmt(b)} ('mat2') cannot be multiplied: the contracted "
            f"dimensions differ ({a[2]} != {b[1]})"
        )
    return (a[0], a[1], b[2]), _matmul_dtype("bmm", self, mat2)


_ks.bmm.xp(_mm)  # the same kernel: mm's rank checks are the meta functions'


# --- dot, outer -----------------------------------------------------------------------------------------------


@structured_op("dot", inplace=False)
def dot(self: TensorMeta, other: TensorMeta) -> TensorSpec:
    """Inner product of two 1-D tensors of equal length, a 0-d tensor (``torch.dot``; values as
    ``np.matmul`` of two vectors; empty vectors give 0). Other ranks or lengths are an error.
    """
    return _dot_spec(self, other)


@memoized
def _dot_spec(self: TensorMeta, other: TensorMeta) -> TensorSpec:
    a, b = self.shape, other.shape
    if len(a) != 1 or len(b) != 1:
        raise ShapeError(f"dot: 1-D tensors expected, but 'self' has shape {_fmt(a)} and 'other' has shape {_fmt(b)}")
    if a != b:
        raise ShapeError(
            f"dot: inconsistent tensor sizes: 'self' of shape {_fmt(a)} and 'other' of shape {_fmt(b)} must have "
            "the same number of elements"
        )
    return (), _matmul_dtype("dot", self, other)


_ks.dot.xp(_matmul)  # the same kernel: dot's rank checks are the meta function's


@structured_op("outer", inplace=False)
def outer(self: TensorMeta, vec2: TensorMeta) -> TensorSpec:
    """Outer product of two 1-D tensors, ``[n] x [m] -> [n, m]`` with ``result[i, j] = self[i] * vec2[j]``
    (``torch.outer``, ``np.outer``). Result dtype: NumPy's for ``np.multiply`` of the two dtypes.
    """
    return _outer_spec(self, vec2)


@memoized
def _outer_spec(self: TensorMeta, vec2: TensorMeta) -> TensorSpec:
    a, b = self.shape, vec2.shape
    if len(a) != 1 or len(b) != 1:
        raise ShapeError(f"outer: 1-D tensors expected, but 'self' has shape {_fmt(a)} and 'vec2' has shape {_fmt(b)}")
    return (a[0], b[0]), ufunc_result_dtype("outer", np.multiply, self.dtype, vec2.dtype)


@_ks.outer.xp
def _outer(xp: ModuleType, self: D, vec2: D, *, out: ConstOut[D]) -> None:
    xp.multiply(self._array[:, None], vec2._array[None, :], out=out.array)


# --- addmm ----------------------------------------------------------------------------------------------------


def _check_coefficient(name: str, value: Scalar, dtype: DType) -> None:
    """PyTorch's rule for ``alpha``/``beta``: bool for bool results, no float for integral ones, no complex for
    real ones; a Python int must fit an integral result dtype (NumPy 2 would raise OverflowError mid-call)."""
    kind = dtype.kind
    if kind == "b" and type(value) is not bool:
        raise ArgumentTypeError(f"addmm: for boolean inputs, argument '{name}' must be a bool, got {value!r}")
    if kind in "iu" and type(value) not in (bool, int):
        raise ArgumentTypeError(
            f"addmm: for integral inputs, argument '{name}' must not be a floating point number, got {value!r}"
        )
    if kind != "c" and type(value) is complex:
        raise ArgumentTypeError(f"addmm: for non-complex inputs, argument '{name}' must not be complex, got {value!r}")
    if type(value) is int and kind in "iufc":
        # The same check the elementwise ops make: fits the integer dtype, or converts to the float one.
        check_int_scalar("addmm", name, value, dtype)


#: addmm's results for beta = alpha = 1 (the int 1: 1.0 and True take the general memo, as memoized keys by
#: type), keyed on (shape, dtype) of self, mat1 and mat2; bounded as memoized's memo is.
_ADDMM_SPECS: Final[dict[tuple[Any, ...], TensorSpec]] = {}
_ONE: Final = 1


@structured_op("addmm", out_may_be_input=True)
@offers_direct(_ADDMM_DIRECT)
@offers_specs(_ADDMM_SPECS)  # (keyed for beta and alpha at their default, 1: the fronts test that)
def addmm(self: TensorMeta, mat1: TensorMeta, mat2: TensorMeta, *, beta: Scalar = 1, alpha: Scalar = 1) -> TensorSpec:
    """``beta * self + alpha * (mat1 @ mat2)`` for 2-D ``mat1 [n, k]`` and ``mat2 [k, m]``, with ``self``
    broadcasting to ``[n, m]`` (``torch.addmm``). With ``beta == 0``, ``self``'s values are ignored: nan and inf
    in it do not propagate (its shape must still broadcast).

    Result dtype: NumPy's promotion of the three dtypes; all operands are converted to it before the product.
    ``alpha`` and ``beta`` follow PyTorch's rule (bool for bool results, no float for integral ones, no complex
    for real ones; ArgumentTypeError otherwise, ScalarOverflowError for a Python int the integral dtype cannot
    hold). Variants: functional, out (``out`` may be exactly ``self``) and inplace ``addmm_`` / ``t.addmm_``
    (``self`` must have the shape ``[n, m]``: an inplace op never broadcasts ``self``).

    Raises:
        ShapeError (ValueError): ``mat1``/``mat2`` not 2-D, contracted dimensions that differ, or a ``self``
            that does not broadcast to ``[n, m]``; the message names the operand shapes.
    """
    if beta is _ONE and alpha is _ONE:
        # The common call (no coefficients) memoized on the operands' shapes and dtypes alone (the result
        # depends on nothing else): one key build and one lookup, without memoized's general key.
        a: Any = self
        b: Any = mat1
        c: Any = mat2
        key = (a._shape, a._dtype, b._shape, b._dtype, c._shape, c._dtype)
        spec = _ADDMM_SPECS.get(key)
        if spec is None:
            spec = _addmm_spec(self, mat1, mat2, beta, alpha)  # (raises for bad input: nothing is stored)
            if len(_ADDMM_SPECS) >= _MEMO_LIMIT:
                _ADDMM_SPECS.clear()
            _ADDMM_SPECS[key] = spec
        return spec
    return _addmm_spec(self, mat1, mat2, beta, alpha)


@memoized
def _addmm_spec(
    self: TensorMeta, mat1: TensorMeta, mat2: TensorMeta, beta: Scalar = 1, alpha: Scalar = 1
) -> TensorSpec:
    a, b, s = mat1.shape, mat2.shape, self.shape
    if len(a) != 2 or len(b) != 2:
        raise ShapeError(
            f"addmm: 'mat1' and 'mat2' must be 2-D matrices, but 'mat1' has shape {_fmt(a)} and 'mat2' has shape "
            f"{_fmt(b)}"
        )
    if a[1] != b[0]:
        raise ShapeError(
            f"addmm: shapes {_fmt(a)} ('mat1') and {_fmt(b)} ('mat2') cannot be multiplied ({a[0]}x{a[1]} and "
            f"{b[0]}x{b[1]}: {a[1]} != {b[0]})"
        )
    shape = (a[0], b[1])
    if s != shape:
        try:
            ok = broadcast_shapes("addmm", s, shape) == shape
        except ShapeError:
            ok = False
        if not ok:
            raise ShapeError(
                f"addmm: argument 'self' of shape {_fmt(s)} cannot be broadcast to the shape {_fmt(shape)} of "
                f"mat1 {_fmt(a)} @ mat2 {_fmt(b)}"
            )
    dtype = result_type(self.dtype, _matmul_dtype("addmm", mat1, mat2))
    if beta != 1 or type(beta) is not int:
        _check_coefficient("beta", beta, dtype)
    if alpha != 1 or type(alpha) is not int:
        _check_coefficient("alpha", alpha, dtype)
    return shape, dtype


@_ks.addmm.xp
def _addmm(xp: ModuleType, self: D, mat1: D, mat2: D, *, beta: Scalar, alpha: Scalar, out: ConstOut[D]) -> None:
    s, m1, m2 = self._array, mat1._array, mat2._array
    o: Any = out.array
    if xp is np:
        _addmm_cpu(s, m1, m2, beta, alpha, o)
        return
    _addmm_general(xp, s, m1, m2, beta, alpha, o)


#: The conditions of addmm's steps, named after it when raised (kernels/ufunc_family.py).
_ADDMM_CONDITIONS: Final = conditions_of("addmm")


@lowers(_addmm)
def _addmm_lowering(lw: Lowering, args: dict[str, Any], out: Any, plan: None) -> bool:
    """addmm's lowering (devtensor.lowering): :func:`_addmm_cpu`'s path without coefficients, decided at plan
    time (one dtype, ``beta = alpha = 1``, a C-contiguous buffer as out not sharing memory with self: an argument
    never shares a buffer's): the product into out, then self added, the conditions reported after the write.
    Other calls replay the kernel."""
    s, m1, m2 = args["self"], args["mat1"], args["mat2"]
    d = out.dtype
    if not (
        type(out) is np.ndarray
        and args["beta"] == 1
        and args["alpha"] == 1
        and s.dtype == d
        and m1.dtype == d
        and m2.dtype == d
        and out.flags.c_contiguous
        and not (type(s) is np.ndarray and _may_share_memory(out, s))
    ):
        return False
    lw.call(np.matmul, m1, m2, out=out)
    lw.call(np.add, out, s, out=out)
    lw.deferred = True
    return True


def _addmm_cpu(s: Any, m1: Any, m2: Any, beta: Scalar, alpha: Scalar, o: Any = None) -> Any:
    """addmm's CPU kernel on arrays: ``beta * s + alpha * (m1 @ m2)`` into ``o``, which it returns; ``o`` None
    (the fronts' allocating path, for beta = alpha = 1 and the three arrays of the result's dtype): a new
    C-contiguous result. Also the op's direct path (meta.DIRECT: the fronts call it with the arrays
    while the built-in CPU kernel is the handler, without a ConstOut); the floating-point conditions of its steps
    are reported after the write (kernels/ufunc_family.py's deferred_conditions), as the fronts' rule wants."""
    if o is None:
        # One dtype, no coefficients: the product allocated by np.matmul (C-contiguous: a result of core dims
        # only), then self added in place; the values of the path below into a C-contiguous out.
        with _ADDMM_CONDITIONS():
            o = np.matmul(m1, m2)
            np.add(o, s, out=o)
        return o
    d = o.dtype
    if (
        alpha == 1
        and beta == 1
        and (s.dtype is d or s.dtype == d)
        and (m1.dtype is d or m1.dtype == d)
        and (m2.dtype is d or m2.dtype == d)
        and o.flags.c_contiguous
        and not _may_share_memory(o, s)
    ):
        # One dtype, no coefficients, out not self: the product goes straight into out (C-contiguous, as the
        # temporary below would be, so NumPy computes it the same way), then self is added in place. The same
        # values as the general path, without its temporary and copy.
        with _ADDMM_CONDITIONS():
            np.matmul(m1, m2, out=o)
            np.add(o, s, out=o)
        return o
    _addmm_general(np, s, m1, m2, beta, alpha, o)
    return o


def _addmm_general(xp: Any, s: Any, m1: Any, m2: Any, beta: Scalar, alpha: Scalar, o: Any) -> None:
    # Everything is computed into ``prod`` before the one write to ``o``, so out may be self (addmm_).
    dtype = np.result_type(s.dtype, m1.dtype, m2.dtype)
    # (floating-point conditions of the steps are reported after the write: kernels/ufunc_family.py)
    with _ADDMM_CONDITIONS():
        prod = _matmul_array(xp, m1.astype(dtype, copy=False), m2.astype(dtype, copy=False))
        if alpha != 1:
            xp.multiply(prod, alpha, out=prod)
        if beta != 0:
            term = s.astype(dtype, copy=False)
            if beta != 1:
                term = xp.multiply(term, beta)
            xp.add(prod, term, out=prod)
        xp.copyto(o, prod, casting="same_kind")


#: np.may_share_memory without its __array_function__ dispatcher (addmm passes it plain arrays only).
_may_share_memory: Final = getattr(np.may_share_memory, "_implementation", np.may_share_memory)
_ADDMM_DIRECT[:] = [addmm.table.kernels.get(DispatchKey.CPU), _addmm_cpu]

for _op in (matmul, mm, bmm, dot, outer):
    _op.functional.__doc__ = (_op.meta.__doc__ or "") + _SHAPES_DOC
