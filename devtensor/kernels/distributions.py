"""More of PyTorch's inplace samplers, each a transform of one uniform (or normal) draw per element:
``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``. Structured ops like those of
:mod:`devtensor.kernels.random` (the same generator rules, ``nondeterministic``, functional variants not public).

A scale of 0 is accepted where PyTorch requires it positive (``log_normal_``'s ``std``, ``cauchy_``'s ``sigma``):
the distribution is then the point mass at its location, as ``normal_`` with ``std=0`` already is in PyTorch.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, Final

import numpy as np

from devtensor import kernel_signatures as _ks
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.generator import Generator
from devtensor.kernels.random import check_generator, real_arg, stream_for, unit_draws
from devtensor.kernels.ufunc_family import D
from devtensor.meta import int_bounds
from devtensor.structured import TensorSpec, structured_op
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut

_F32: Final = np.dtype(np.float32)
_F64: Final = np.dtype(np.float64)


def _checked(op: str, self: TensorMeta, kinds: str, generator: object) -> TensorSpec:
    if self.dtype.kind not in kinds:
        wanted = "float" if kinds == "f" else "integer or float"
        raise ArgumentTypeError(f"{op}: argument 'self' must be a {wanted} tensor, got dtype {self.dtype.name}")
    check_generator(op, generator, self.device)
    return self.shape, self.dtype


def _uniform64(xp: ModuleType, generator: Generator | None, self: Any, out: Any) -> Any:
    """Uniform draws in ``[0, 1)`` for ``out`` (float64 for a float64 result, float32 otherwise), as float64."""
    o = out.array
    dtype = o.dtype if o.dtype.kind == "f" else _F64
    return unit_draws(xp, stream_for(generator, self.device), o.shape, dtype).astype(_F64, copy=False)


@structured_op("exponential", out_may_be_input=True, nondeterministic=True, public_functional=False)
def exponential(self: TensorMeta, lambd: float = 1.0, *, generator: Generator | None = None) -> TensorSpec:
    """``self.exponential_(lambd=1.0, *, generator=None)``: fill ``self`` with draws from the exponential
    distribution of rate ``lambd`` (``torch.Tensor.exponential_``): ``-log(1 - u) / lambd``.

    Dtypes: float16, float32, float64. Devices: cpu, cuda (``generator`` on its device); meta tensors check the
    arguments only. Fresh values on each call.

    Raises:
        ArgumentTypeError (TypeError): a non-float ``self``; ``lambd`` not a real number; a bad generator.
        ArgumentValueError (ValueError): ``lambd <= 0`` or NaN.  DeviceMismatchError (ValueError): the generator.
    """
    rate = real_arg("exponential_", "lambd", lambd)
    if not rate > 0.0:
        raise ArgumentValueError(f"exponential_: expects lambd > 0.0, got lambd={rate}")
    return _checked("exponential_", self, "f", generator)


@_ks.exponential.xp
def _exponential(xp: ModuleType, self: D, lambd: float, *, generator: Generator | None, out: ConstOut[D]) -> None:
    if out.array.size:
        out.array[...] = -xp.log1p(-_uniform64(xp, generator, self, out)) / float(lambd)


@structured_op("geometric", out_may_be_input=True, nondeterministic=True, public_functional=False)
def geometric(self: TensorMeta, p: float, *, generator: Generator | None = None) -> TensorSpec:
    """``self.geometric_(p, *, generator=None)``: fill ``self`` with the number of Bernoulli(``p``) trials up to
    the first success, ``1, 2, …`` (``torch.Tensor.geometric_``): ``floor(log(1 - u) / log(1 - p)) + 1``; values
    beyond an integer dtype's range are clipped to its largest value.

    Dtypes: integers (not bool) and floats. Devices: cpu, cuda (``generator`` on its device); meta tensors check
    the arguments only. Fresh values on each call.

    Raises:
        ArgumentTypeError (TypeError): a bool or complex ``self``; ``p`` not a real number; a bad generator.
        ArgumentValueError (ValueError): ``p`` outside ``(0, 1]``.  DeviceMismatchError (ValueError): the generator.
    """
    prob = real_arg("geometric_", "p", p)
    if not 0.0 < prob <= 1.0:
        raise ArgumentValueError(f"geometric_: expects p in (0, 1], got p={prob}")
    return _checked("geometric_", self, "iuf", generator)


@_ks.geometric.xp
def _geometric(xp: ModuleType, self: D, p: float, *, generator: Generator | None, out: ConstOut[D]) -> None:
    o = out.array
    if not o.size:
        return
    if float(p) == 1.0:
        o[...] = 1
        return
    trials = xp.floor(xp.log1p(-_uniform64(xp, generator, self, out)) / math.log1p(-float(p))) + 1.0
    if o.dtype.kind in "iu":
        trials = xp.minimum(trials, float(int_bounds(o.dtype)[1]))
    o[...] = trials


@structured_op("log_normal", out_may_be_input=True, nondeterministic=True, public_functional=False)
def log_normal(
    self: TensorMeta, mean: float = 1.0, std: float = 2.0, *, generator: Generator | None = None
) -> TensorSpec:
    """``self.log_normal_(mean=1.0, std=2.0, *, generator=None)``: fill ``self`` with ``exp(x)``, ``x`` drawn
    from the normal distribution of ``mean`` and ``std`` (``torch.Tensor.log_normal_``; ``std=0`` is accepted).

    Dtypes: float16, float32, float64. Devices: cpu, cuda (``generator`` on its device); meta tensors check the
    arguments only. Fresh values on each call.

    Raises:
        ArgumentTypeError (TypeError): a non-float ``self``; ``mean``/``std`` not real numbers; a bad generator.
        ArgumentValueError (ValueError): ``std < 0`` or NaN.  DeviceMismatchError (ValueError): the generator.
    """
    real_arg("log_normal_", "mean", mean)
    s = real_arg("log_normal_", "std", std)
    if not s >= 0.0:
        raise ArgumentValueError(f"log_normal_: expects std >= 0.0, got std={s}")
    return _checked("log_normal_", self, "f", generator)


@_ks.log_normal.xp
def _log_normal(
    xp: ModuleType, self: D, mean: float, std: float, *, generator: Generator | None, out: ConstOut[D]
) -> None:
    o = out.array
    if o.size:
        z = stream_for(generator, self.device).normal(o.shape, _F64 if o.dtype == _F64 else _F32)
        with np.errstate(over="ignore"):  # (a huge value is inf, as exp's is)
            o[...] = xp.exp(float(mean) + float(std) * z.astype(_F64, copy=False))


@structured_op("cauchy", out_may_be_input=True, nondeterministic=True, public_functional=False)
def cauchy(
    self: TensorMeta, median: float = 0.0, sigma: float = 1.0, *, generator: Generator | None = None
) -> TensorSpec:
    """``self.cauchy_(median=0.0, sigma=1.0, *, generator=None)``: fill ``self`` with draws from the Cauchy
    distribution (``torch.Tensor.cauchy_``): ``median + sigma * tan(pi * (u - 1/2))`` (``sigma=0`` is accepted).

    Dtypes: float16, float32, float64. Devices: cpu, cuda (``generator`` on its device); meta tensors check the
    arguments only. Fresh values on each call.

    Raises:
        ArgumentTypeError (TypeError): a non-float ``self``; arguments not real numbers; a bad generator.
        ArgumentValueError (ValueError): ``sigma < 0`` or NaN.  DeviceMismatchError (ValueError): the generator.
    """
    real_arg("cauchy_", "median", median)
    s = real_arg("cauchy_", "sigma", sigma)
    if not s >= 0.0:
        raise ArgumentValueError(f"cauchy_: expects sigma >= 0.0, got sigma={s}")
    return _checked("cauchy_", self, "f", generator)


@_ks.cauchy.xp
def _cauchy(
    xp: ModuleType, self: D, median: float, sigma: float, *, generator: Generator | None, out: ConstOut[D]
) -> None:
    o = out.array
    if o.size:
        u = _uniform64(xp, generator, self, out)
        with np.errstate(over="ignore"):
            o[...] = float(median) + float(sigma) * xp.tan(math.pi * (u - 0.5))
