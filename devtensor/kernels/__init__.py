"""Op definitions: meta functions plus kernels, one module per op family or concern.

Importing this package defines every built-in op (and attaches the Tensor methods and operators).
"""

# The backends first: they register the device types ("cuda") the kernels are registered for.
import devtensor.backends  # noqa: F401
from devtensor.kernels import (
    activations,
    bitwise,
    closeness,
    complex_parts,
    distances,
    distributions,
    elementwise,
    encoding,
    fft,
    filling,
    indexing_ops,
    linalg,
    linalg_norms,
    linalg_solvers,
    losses,
    math_ufuncs,
    nn,
    operators,
    ordering,
    random,
    reductions,
    scans,
    scatter,
    shape,
    shape_more,
)

__all__ = [
    "activations",
    "bitwise",
    "closeness",
    "complex_parts",
    "distances",
    "distributions",
    "elementwise",
    "encoding",
    "fft",
    "filling",
    "indexing_ops",
    "linalg",
    "linalg_norms",
    "linalg_solvers",
    "losses",
    "math_ufuncs",
    "nn",
    "operators",
    "ordering",
    "random",
    "reductions",
    "scans",
    "scatter",
    "shape",
    "shape_more",
]
