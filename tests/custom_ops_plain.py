"""Meta functions with every supported (and some unsupported) annotation, annotations evaluated at definition.

``tests/custom_ops_future.py`` has the same functions under ``from __future__ import annotations`` (postponed
annotations, resolved by ``typing.get_type_hints``); ``tests/test_library.py`` defines ops from both modules and
checks they get the same schemas. Keep the two bodies identical (a test compares them).
"""

# --- body shared with custom_ops_future.py (keep identical) ---
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal, Optional, Union

import numpy as np

from devtensor import Tensor
from devtensor.dtypes import DTypeLike, Scalar
from devtensor.structured import TensorSpec
from devtensor.tensor import TensorOrScalar
from devtensor.typed import CPUTensor


def m_tensor(self: Tensor) -> TensorSpec:
    return self.shape, self.dtype


def m_optional_tensor(self: Tensor, other: Tensor | None = None, weight: Optional[Tensor] = None) -> TensorSpec:  # noqa: UP045
    return self.shape, self.dtype


def m_list(tensors: list[Tensor]) -> TensorSpec:
    return tensors[0].shape, tensors[0].dtype


def m_sequence(tensors: Sequence[Tensor], extra: Sequence[Tensor] | None = None) -> TensorSpec:
    return tensors[0].shape, tensors[0].dtype


def m_typing_sequence(tensors: typing.Sequence[Tensor]) -> TensorSpec:
    return tensors[0].shape, tensors[0].dtype


def m_tuple(tensors: tuple[Tensor, ...]) -> TensorSpec:
    return tensors[0].shape, tensors[0].dtype


def m_tensor_or_scalar(self: TensorOrScalar, other: TensorOrScalar, bias: TensorOrScalar | None = None) -> TensorSpec:
    shape = self.shape if isinstance(self, Tensor) else other.shape if isinstance(other, Tensor) else ()
    return shape, np.dtype(np.float64)


def m_scalar(self: Tensor, alpha: Scalar = 1, beta: Scalar | None = None) -> TensorSpec:
    return self.shape, self.dtype


def m_values(self: Tensor, n: int, x: float, flag: bool, name: str, z: complex = 1j) -> TensorSpec:
    return self.shape, self.dtype


def m_optional_values(
    self: Tensor,
    n: int | None = None,
    x: float | None = None,
    flag: bool | None = None,
    name: str | None = None,
    m: Union[int, None] = None,  # noqa: UP007
) -> TensorSpec:
    return self.shape, self.dtype


def m_sequences(
    self: Tensor,
    dims: Sequence[int] = (0,),
    sizes: list[int] | None = None,
    pads: tuple[int, ...] = (),
    pair: tuple[int, int] = (1, 2),
    scales: Sequence[float] = (1.0,),
    dim: int | Sequence[int] | None = None,
) -> TensorSpec:
    return self.shape, self.dtype


def m_literal(self: Tensor, mode: Literal["a", "b"] = "a", order: Literal[1, 2] | None = None) -> TensorSpec:
    return self.shape, self.dtype


def m_dtype(self: Tensor, dtype: DTypeLike | None = None) -> TensorSpec:
    return self.shape, self.dtype if dtype is None else np.dtype(dtype)


def m_kw_only(self: Tensor, other: Tensor, *, alpha: float = 1.0, out_dtype: str | None = None) -> TensorSpec:
    return self.shape, self.dtype


# Unsupported annotations, one per function: (function, the nearest supported type the error must name).


def u_dict(self: Tensor, options: dict[str, int]) -> TensorSpec:
    return self.shape, self.dtype


def u_ndarray(self: Tensor, weights: np.ndarray) -> TensorSpec:
    return self.shape, self.dtype


def u_set(self: Tensor, dims: set[int]) -> TensorSpec:
    return self.shape, self.dtype


def u_callable(self: Tensor, fn: Callable[[float], float]) -> TensorSpec:
    return self.shape, self.dtype


def u_any(self: Tensor, value: Any) -> TensorSpec:
    return self.shape, self.dtype


def u_tensor_or_str(self: Tensor, other: Tensor | str) -> TensorSpec:
    return self.shape, self.dtype


def u_nested(self: Tensor, dims: list[list[int]]) -> TensorSpec:
    return self.shape, self.dtype


def u_optional_items(tensors: Sequence[Tensor | None]) -> TensorSpec:
    return (), np.dtype(np.float64)


def u_refined(self: CPUTensor) -> TensorSpec:
    return self.shape, self.dtype


def u_bytes(self: Tensor, data: bytes) -> TensorSpec:
    return self.shape, self.dtype


def u_numpy_scalar(self: Tensor, eps: np.float32) -> TensorSpec:
    return self.shape, self.dtype


def u_frozenset(self: Tensor, dims: frozenset[int]) -> TensorSpec:
    return self.shape, self.dtype


UNSUPPORTED: list[tuple[Callable[..., TensorSpec], str, str]] = [
    (u_dict, "options", "Sequence[int]"),
    (u_ndarray, "weights", "Tensor"),
    (u_set, "dims", "Sequence[int]"),
    (u_callable, "fn", "Literal["),
    (u_any, "value", "Tensor"),
    (u_tensor_or_str, "other", "TensorOrScalar"),
    (u_nested, "dims", "Sequence[int]"),
    (u_optional_items, "tensors", "Sequence[Tensor]"),
    (u_refined, "self", "Tensor"),
    (u_bytes, "data", "str"),
    (u_numpy_scalar, "eps", "float"),
    (u_frozenset, "dims", "Sequence[int]"),
]
