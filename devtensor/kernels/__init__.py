"""Op definitions: meta functions plus kernels, one module per op family or concern.

Importing this package defines every built-in op (and attaches the Tensor methods and operators).
"""

from devtensor.kernels import elementwise, linalg, nn, operators, reductions, shape

__all__ = ["elementwise", "linalg", "nn", "operators", "reductions", "shape"]
