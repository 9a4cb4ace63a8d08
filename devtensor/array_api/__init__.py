"""``devtensor.array_api``: the Array API standard's namespace (2024.12) over devtensor's tensors and ops.

``Tensor.__array_namespace__()`` returns this module (``api_version="2023.12"``: a thin module over it reporting
that version), so numeric libraries that
speak the standard (array-api-compat, scikit-learn with ``array_api_dispatch=True``, SciPy) take devtensor tensors.
Names, signatures and defaults are the standard's (``axis``/``keepdims``; ``concat``; ``correction=0`` for
``std``/``var``); the main namespace keeps PyTorch's. Every computing function runs through devtensor's ops
(dispatch, device guard, checks, overrides, modes), so it works on CPU and CUDA tensors alike; creation, data type
and inspection functions are plain functions. The arrays are devtensor tensors; dtypes are NumPy dtype objects
(``float32 == numpy.dtype("float32")``); devices are :class:`~devtensor.device.Device` objects.

Extensions: ``fft`` (over :mod:`devtensor.fft`) and ``linalg`` (over :mod:`devtensor.linalg`). Beyond the standard:
``diag`` (NumPy's name, which SciPy calls on any namespace).
"""

from __future__ import annotations

import math
import types
from typing import Any, Final

import numpy as np

from devtensor import dtypes as _dtypes
from devtensor.array_api import fft, linalg
from devtensor.array_api._creation import (
    arange,
    asarray,
    diag,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from devtensor.array_api._datatypes import astype, can_cast, finfo, iinfo, isdtype, result_type
from devtensor.array_api._elementwise import *  # noqa: F403
from devtensor.array_api._elementwise import __all__ as _elementwise_all
from devtensor.array_api._functions import *  # noqa: F403
from devtensor.array_api._functions import __all__ as _functions_all
from devtensor.array_api._manipulation import *  # noqa: F403
from devtensor.array_api._manipulation import __all__ as _manipulation_all
from devtensor.device import Device, as_device
from devtensor.errors import ArgumentValueError

__array_api_version__: Final = "2024.12"

#: The versions ``Tensor.__array_namespace__(api_version=...)`` accepts (the namespace is the same object).
SUPPORTED_VERSIONS: Final = ("2024.12", "2023.12")

bool = _dtypes.bool_
int8 = _dtypes.int8
int16 = _dtypes.int16
int32 = _dtypes.int32
int64 = _dtypes.int64
uint8 = _dtypes.uint8
uint16 = _dtypes.uint16
uint32 = _dtypes.uint32
uint64 = _dtypes.uint64
#: Not one of the standard's dtypes, but NumPy's and PyTorch's namespaces have it and devtensor supports it
#: (libraries written against the standard test ``xp.float16`` where a backend offers it); it is left out of
#: ``__array_namespace_info__().dtypes()``, which lists the standard's, as NumPy's namespace leaves it out.
float16 = _dtypes.float16
float32 = _dtypes.float32
float64 = _dtypes.float64
complex64 = _dtypes.complex64
complex128 = _dtypes.complex128

e: Final = math.e
inf: Final = math.inf
nan: Final = math.nan
pi: Final = math.pi
newaxis: Final = None

_DTYPES: Final = {
    "bool": bool,
    "int8": int8, "int16": int16, "int32": int32, "int64": int64,
    "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
    "float32": float32, "float64": float64, "complex64": complex64, "complex128": complex128,
}  # fmt: skip


class Info:
    """The standard's inspection object (``__array_namespace_info__()``): devices, default dtypes, dtypes by
    kind, and capabilities."""

    __module__ = "devtensor.array_api"

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes are supported; at most 64 dimensions (NumPy's)."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Device:
        """The CPU."""
        return as_device("cpu")

    def devices(self) -> list[Device]:
        """The CPU and each CUDA device present (none when CuPy or a GPU is missing)."""
        found = [as_device("cpu")]
        try:
            from devtensor.backends import cupy_module

            count = int(cupy_module().cuda.runtime.getDeviceCount())
        except Exception:  # no CuPy, no driver, no GPU: the CPU alone
            count = 0
        found += [Device("cuda", i) for i in range(count)]
        return found

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype[Any]]:
        """float64, complex128, int64 and int64 for indexing, on every device (NumPy's defaults)."""
        return {"real floating": float64, "complex floating": complex128, "integral": int64, "indexing": int64}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, np.dtype[Any]]:
        """The supported dtypes by name (float16 is supported by devtensor but is not a standard dtype), filtered
        by ``kind`` as :func:`isdtype` takes it."""
        if kind is None:
            return dict(_DTYPES)
        return {name: d for name, d in _DTYPES.items() if isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    """The standard's inspection API: an :class:`Info`."""
    return Info()


class _VersionedNamespace(types.ModuleType):
    """A thin module over this one reporting another ``__array_api_version__``: every other attribute is this
    module's (the functions of later versions included: the standard lets a namespace have more)."""

    def __getattr__(self, name: str) -> Any:
        import devtensor.array_api as module

        return getattr(module, name)

    def __dir__(self) -> list[str]:
        import devtensor.array_api as module

        return sorted({*dir(module), "__array_api_version__"})


_versioned: dict[str, types.ModuleType] = {}


def namespace_for(api_version: str | None) -> Any:
    """The namespace for ``api_version`` (``Tensor.__array_namespace__``): this module for None and
    ``__array_api_version__`` ("2024.12"); for another of :data:`SUPPORTED_VERSIONS` ("2023.12") a module object
    whose ``__array_api_version__`` is that version and whose other attributes are this module's (one object per
    version, so ``t.__array_namespace__(api_version=v)`` is the same object each time).

    Raises:
        ArgumentValueError: another version (a string naming no supported version, or not a string).
    """
    import devtensor.array_api as module

    if api_version is None or api_version == __array_api_version__:
        return module
    if not isinstance(api_version, str) or api_version not in SUPPORTED_VERSIONS:
        raise ArgumentValueError(
            f"__array_namespace__: api_version {api_version!r} is not supported; supported: {SUPPORTED_VERSIONS}"
        )
    found = _versioned.get(api_version)
    if found is None:
        found = _VersionedNamespace(f"devtensor.array_api[{api_version}]", module.__doc__)
        found.__array_api_version__ = api_version  # type: ignore[attr-defined]
        found = _versioned.setdefault(api_version, found)
    return found


__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    "fft",
    "linalg",
    "arange",
    "asarray",
    "astype",
    "bool",
    "can_cast",
    "complex64",
    "complex128",
    "e",
    "diag",
    "empty",
    "empty_like",
    "eye",
    "finfo",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "full",
    "full_like",
    "iinfo",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "linspace",
    "logspace",
    "meshgrid",
    "nan",
    "newaxis",
    "ones",
    "ones_like",
    "pi",
    "result_type",
    "tril",
    "triu",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "zeros",
    "zeros_like",
    *_elementwise_all,
    *_functions_all,
    *_manipulation_all,
]
