"""Op definitions: meta functions plus per-device impls, one module per op family.

Importing this package defines every built-in op (and attaches the Tensor methods and operators).
"""

from devtensor.kernels import elementwise, linalg, nn, reductions, shape

__all__ = ["elementwise", "linalg", "nn", "reductions", "shape"]
