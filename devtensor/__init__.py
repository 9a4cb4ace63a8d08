"""devtensor: typed tensors over NumPy (CPU) and CuPy (CUDA), with structured kernels.

The public API: :class:`Tensor` and its device-refined types (:mod:`devtensor.typed`), :class:`Device`, the
dtypes, creation functions, and every op in its functional (``add``), inplace (``add_``) and out
(``add(..., out=)``) variants. See README.md for a tour.
"""

from devtensor import cpu, cuda, kernel_signatures, typed  # device bindings, typed kernel registration, types
from devtensor import fft as fft  # discrete Fourier transforms (torch.fft's names)
from devtensor import kernels as _kernels  # defines the built-in ops
from devtensor import library as library  # custom ops, out-of-tree backends, overrides, check
from devtensor import linalg as linalg  # torch.linalg's functions
from devtensor import numpy_chunks as _numpy_chunks  # the NumPy functions Dask asks of a chunk type (NEP 18/35)
from devtensor import numpy_extra as _numpy_extra  # NEP 13/18 compositions: nan* reductions, isclose, take, ...
from devtensor import numpy_more as _numpy_more  # NEP 13/18 entries for the later ops (math, scans, linalg, fft)
from devtensor import numpy_protocols as _numpy_protocols  # NEP 13/18: NumPy ufuncs and functions on tensors
from devtensor import ops as ops  # custom ops by namespace: devtensor.ops.<namespace>.<name>
from devtensor import random as random  # random numbers: generators and sampling
from devtensor._generated_ops import *
from devtensor._generated_ops import __all__ as _ops_all
from devtensor.creation import (
    asarray,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from devtensor.data_dependent import bincount, nonzero, unique, unique_consecutive
from devtensor.device import Device
from devtensor.dispatcher import DispatchKey
from devtensor.dlpack import from_dlpack
from devtensor.dtypes import (
    bool_ as bool,
)
from devtensor.dtypes import (
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from devtensor.errors import (
    CastingError,
    DeviceMismatchError,
    DeviceUnavailableError,
    DevtensorError,
    LinAlgError,
    MemoryOverlapError,
    NoDataError,
    NoKernelError,
    OutOfMemoryError,
    PlanError,
    ReadOnlyError,
    ScalarOverflowError,
    ShapeError,
)
from devtensor.generator import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from devtensor.kernels.closeness import allclose
from devtensor.multi_ops import aminmax, cross_entropy, einsum, max, meshgrid, min, repeat_interleave, sort, topk
from devtensor.plan import Plan, plan, planned
from devtensor.printing import get_printoptions, printoptions, set_printoptions
from devtensor.random import (
    bernoulli,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    uniform,
)
from devtensor.ranges import arange, linspace
from devtensor.serialization import load, save
from devtensor.tensor import Tensor
from devtensor.typed import CPUTensor, CUDATensor, MetaTensor

del _kernels

__version__ = "0.1.0"

__all__ = [
    "CPUTensor",
    "CUDATensor",
    "CastingError",
    "Device",
    "DeviceMismatchError",
    "DeviceUnavailableError",
    "DevtensorError",
    "DispatchKey",
    "Generator",
    "LinAlgError",
    "MemoryOverlapError",
    "MetaTensor",
    "NoDataError",
    "NoKernelError",
    "OutOfMemoryError",
    "Plan",
    "PlanError",
    "ReadOnlyError",
    "ScalarOverflowError",
    "ShapeError",
    "Tensor",
    "allclose",
    "aminmax",
    "arange",
    "asarray",
    "bincount",
    "bool",
    "complex64",
    "complex128",
    "cpu",
    "cross_entropy",
    "cuda",
    "fft",
    "kernel_signatures",
    "empty",
    "empty_like",
    "einsum",
    "eye",
    "repeat_interleave",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "from_numpy",
    "full",
    "full_like",
    "get_printoptions",
    "int8",
    "int16",
    "int32",
    "int64",
    "linalg",
    "linspace",
    "load",
    "max",
    "meshgrid",
    "min",
    "nonzero",
    "ones",
    "ones_like",
    "ops",
    "plan",
    "planned",
    "printoptions",
    "save",
    "set_printoptions",
    "sort",
    "tensor",
    "topk",
    "uint8",
    "unique",
    "unique_consecutive",
    "uint16",
    "uint32",
    "uint64",
    "zeros",
    "zeros_like",
    # random numbers (devtensor.random)
    "bernoulli",
    "default_generator",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "normal",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
    "uniform",
    *_ops_all,
]
