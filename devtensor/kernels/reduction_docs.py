"""The docstring text the reduction family (:mod:`devtensor.kernels.reduction_family`) appends to each of its
ops' summaries: the shared argument, shape, device, variant and error sections."""

from __future__ import annotations

from typing import Final

__all__ = ["DTYPE_ARG_DOC", "family_doc"]

_COMMON_DOC = """
    Args:
        dim: {dim_doc}
        keepdim: keep each reduced dimension, with size 1.
    Shapes: the input's shape without the reduced dims (with ``keepdim``: those dims of size 1).
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give the result's shape and dtype only.
    Variants: functional ``{name}(t, ...)`` / ``t.{name}(...)`` and out ``{name}(t, ..., out=o)`` (PyTorch's out
        rules: the result dtype must cast to ``out.dtype`` under same_kind; an ``out`` of another shape is
        resized, with a UserWarning when it had elements). No inplace variant.

    Raises:
        ArgumentTypeError (TypeError): a bad type of ``dim``; ``keepdim`` not a bool{extra_type}.
        IndexError: a dim out of range.
        ValueError: a dim given twice (names it){extra_value}.
        CastingError (TypeError): the result dtype does not cast (same_kind) to ``out.dtype``.
        DeviceMismatchError, MemoryOverlapError (ValueError): ``out`` on another device, or overlapping the input.
"""


_DIM_DOC: Final = (
    "the dimension(s) to reduce: an int, a tuple of ints (``()`` reduces none, as NumPy's ``axis=()``),\n"
    "            or None for all; negative dims count from the end. A 0-d tensor accepts ``0`` and ``-1``."
)
_ARG_DIM_DOC: Final = (
    "the dimension to reduce: an int (negative counts from the end; a 0-d tensor accepts ``0`` and\n"
    "            ``-1``), or None for the index into the flattened tensor."
)


def family_doc(name: str, summary: str, extra_type: str = "", extra_value: str = "") -> str:
    """The docstring of the reduction ``name``: its ``summary``, then the family's shared sections (``extra_type``
    and ``extra_value`` add to its TypeErrors and ValueErrors)."""
    dim_doc = _ARG_DIM_DOC if name in ("argmax", "argmin") else _DIM_DOC
    common = _COMMON_DOC.format(name=name, extra_type=extra_type, extra_value=extra_value, dim_doc=dim_doc)
    return summary.strip() + "\n" + common


DTYPE_ARG_DOC: Final = """
    ``dtype``: the dtype to compute and return in (as NumPy's ``dtype=`` argument); a complex input needs a
    complex ``dtype`` (ArgumentTypeError otherwise, as PyTorch: NumPy would silently drop the imaginary part).
"""
