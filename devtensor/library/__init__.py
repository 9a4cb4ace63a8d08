"""devtensor.library: custom ops, out-of-tree backends, Python overrides, dispatch modes and an op checker.

The public face of the machinery the built-in ops use (:mod:`devtensor.structured`, :mod:`devtensor.dispatcher`,
:mod:`devtensor.modes`), for code outside devtensor. The RFC's promise (RFC-0005, structured kernels): "you define
a meta part and a CPU and a CUDA part, and the framework puts it all together".

Custom ops::

    from devtensor import library
    from devtensor.structured import TensorSpec

    @library.custom_op("mylib::softplus", out_may_be_input=True)
    def softplus(self: TensorMeta, beta: float = 1.0, threshold: float = 20.0) -> TensorSpec:
        return self.shape, self.dtype                  # checks + (shape, dtype) of the result

    @softplus.impl("cpu")
    def _(self: CPUTensor, beta: float, threshold: float, *, out: ConstOut[CPUTensor]) -> None:
        ...                                            # write the result into out.array

    softplus(x, beta=2.0)                              # functional (typed with the meta's parameters)
    devtensor.ops.mylib.softplus(x)                    # the same op, by namespace (torch.ops style)
    softplus.functional(x, out=y)                      # functional, and with out=: the out variant
    softplus.inplace(x)                                # inplace (softplus_): out_may_be_input implies it

The op is a :class:`CustomOp` (an :class:`InplaceCustomOp` where it has an inplace variant), a
:class:`~devtensor.structured.StructuredOp`, exactly like a built-in: same fronts, same
common code (argument checks, dispatch key, meta, out/inplace rules, overlap checks, device guard, version
bumps). ``python -m devtensor.codegen --package mypkg --out mypkg/kernel_signatures.py`` writes typed
registration decorators for a package's ops (see :mod:`devtensor.codegen`).

Out-of-tree backends: :func:`register_backend` adds a device type, its dispatch key, a refined tensor class and
a :class:`~devtensor.backends.Backend`; :func:`register_kernel` / ``op.impl(key)`` give kernels for built-in or
custom ops; :func:`register_fallback` serves every op without one (:func:`cpu_fallback` is a ready one).

Python overrides: :func:`override` puts a Python callable above an op's kernel for one key and returns a handle
that undoes it. :func:`get_op`, :func:`override`, :func:`register_kernel` and :func:`check` take view ops
(``"transpose"``) too; a kernel whose first parameter is ``xp`` receives the key's array module. Dispatch modes
(:class:`DispatchMode`, :class:`CountingMode`, :class:`LoggingMode`) see every op call. :func:`check` runs
samples through every variant and key, as ``torch.library.opcheck``.

Safety: every name that reaches generated source (op names, parameter names) is a validated plain ASCII
identifier (:func:`~devtensor.structured.check_op_name`); schema strings are parsed by a small tokenizer (no
``eval``/``exec``), and defaults reach the fronts as objects, never as text.

Modules, by concern: :mod:`~devtensor.library.custom_ops` (custom_op, get_op, remove_op),
:mod:`~devtensor.library.schema_parser` (parse_schema), :mod:`~devtensor.library.backends` (register_backend,
register_kernel, register_fallback, cpu_fallback), :mod:`~devtensor.library.overrides` (override),
:mod:`~devtensor.library.handles` (RegistrationHandle, the one handle type all three registrations return),
:mod:`~devtensor.library.modes` (CountingMode, LoggingMode) and the checker (:mod:`~devtensor.library.checker`
with :mod:`~devtensor.library.check_report`, :mod:`~devtensor.library.check_runs` and, for view ops,
:mod:`~devtensor.library.check_views`). Import from
``devtensor.library`` itself: the names below are its public API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from devtensor.library.backends import (
    NumpyBackend,
    OutOfTreeBackend,
    cpu_fallback,
    register_backend,
    register_fallback,
    register_kernel,
)
from devtensor.library.check_report import CheckProblem, CheckReport, Sample
from devtensor.library.checker import check
from devtensor.library.custom_ops import CustomOp, InplaceCustomOp, custom_op, get_op, remove_op
from devtensor.library.handles import RegistrationHandle
from devtensor.library.modes import CallRecord, CountingMode, DispatchMode, LoggingMode, active_modes
from devtensor.library.overrides import override
from devtensor.library.schema_parser import parse_schema

if TYPE_CHECKING:
    # pyright reads get_op, override and register_kernel as the generated overloads of devtensor.kernel_signatures
    # (an op named by a Literal, or as get_op typed it, takes its impl type per key); mypy, which takes a name MYPY
    # as always true and so skips this block, keeps the plain ones, which its plugin checks.
    MYPY = False
    if not MYPY:
        from devtensor.kernel_signatures import get_op, override, register_kernel

__all__ = [
    "CallRecord",
    "CheckProblem",
    "CheckReport",
    "CountingMode",
    "CustomOp",
    "DispatchMode",
    "InplaceCustomOp",
    "LoggingMode",
    "NumpyBackend",
    "OutOfTreeBackend",
    "RegistrationHandle",
    "Sample",
    "active_modes",
    "check",
    "cpu_fallback",
    "custom_op",
    "get_op",
    "override",
    "parse_schema",
    "register_backend",
    "register_fallback",
    "register_kernel",
    "remove_op",
]
