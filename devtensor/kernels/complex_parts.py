"""The parts of complex numbers: ``conj``, ``real``, ``imag`` (PyTorch's names, the Array API standard's meaning).

Unlike PyTorch's ``real``/``imag`` (views into a complex tensor) these are structured ops that write new memory,
with functional and out variants (as NumPy's ``np.real``/``np.imag`` copied): devtensor's views share dtype and
element size with their base, which a float view of complex memory would not. They are functions only: the
Tensor attributes ``t.real``/``t.imag`` (properties, as PyTorch's and NumPy's) are in
:mod:`devtensor.tensor_protocols`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.kernels.ufunc_family import D, unary_ufunc
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import Tensor, TensorMeta
from devtensor.typed import ConstOut
from devtensor.typed.const_out import InplaceOut

__all__ = ["conj", "imag", "real"]


def _conj_kernel(xp: Any, self: Tensor, *, out: Any) -> None:
    o = out.array
    a = o if type(out) is InplaceOut else self._array
    if a.dtype.kind == "b":  # (NumPy's conjugate of bool is int8; PyTorch's, the Array API's: bool)
        if a is not o:
            xp.copyto(o, a)
        return
    xp.conjugate(a, out=o)


conj = unary_ufunc(
    "conj",
    np.conjugate,
    kernel=_conj_kernel,
    dtypes={np.dtype(np.bool_): np.dtype(np.bool_)},
    doc="""The complex conjugate of each element (``torch.conj``, ``np.conjugate``, the Array API's ``conj``); real,
    integer and bool inputs are returned unchanged in value and dtype (bool stays bool, as PyTorch; NumPy gives
    int8). (PyTorch's lazy conjugate bit is not modelled: the result is new memory.)""",
)


def _component(dtype: np.dtype[np.generic]) -> np.dtype[np.generic]:
    return np.empty(0, dtype).real.dtype


@structured_op("real", inplace=False, method=False)
def real(self: TensorMeta) -> TensorSpec:
    """The real part of each element (``torch.real``, ``np.real``): ``self``'s shape; float32 for complex64,
    float64 for complex128, ``self``'s dtype for real and integer inputs (a copy). New memory (not a view, unlike
    PyTorch). Functional and out variants; devices cpu (NumPy) and cuda (CuPy).
    """
    return self.shape, _component(self.dtype)


@_ks.real.xp
def _real(xp: ModuleType, self: D, *, out: ConstOut[D]) -> None:
    xp.copyto(out.array, xp.real(self._array), casting="same_kind")


@structured_op("imag", inplace=False, method=False)
def imag(self: TensorMeta) -> TensorSpec:
    """The imaginary part of each element (``torch.imag``, ``np.imag``): ``self``'s shape; float32 for
    complex64, float64 for complex128; zeros of ``self``'s dtype for real and integer inputs (the Array API
    standard's rule; PyTorch raises there). New memory. Functional and out variants; devices cpu and cuda.
    """
    return self.shape, _component(self.dtype)


@_ks.imag.xp
def _imag(xp: ModuleType, self: D, *, out: ConstOut[D]) -> None:
    xp.copyto(out.array, xp.imag(self._array), casting="same_kind")
