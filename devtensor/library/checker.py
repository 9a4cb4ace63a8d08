"""The op checker: :func:`check` runs samples through every variant of an op on every dispatch key that serves
it and reports what disagrees, as ``torch.library.opcheck`` does for PyTorch ops."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from devtensor.backends import backend_for
from devtensor.device import Device, device_types
from devtensor.dispatcher import DispatchKey, backend_fallback
from devtensor.errors import ArgumentValueError
from devtensor.library.check_report import CheckReport, Sample
from devtensor.library.check_runs import SampleRunner
from devtensor.library.check_views import ViewSampleRunner, same_views
from devtensor.library.custom_ops import OpLike, find_op
from devtensor.library.handles import KeyLike
from devtensor.structured import PlannedSpec, StructuredOp, TensorSpec, flat_tensors
from devtensor.views import ViewOp

__all__ = ["check"]


def _sample_devices(sample: Sample, devices: list[Device], keys: Sequence[KeyLike] | None) -> list[Device]:
    """The devices to run ``sample`` on: ``devices``, plus the sample's own device when no keys were asked for;
    CPU first (the baseline for values), meta last."""
    ordered = list(devices)
    home = _home_device(sample)
    if keys is None and home is not None and home not in ordered:
        ordered.insert(0, home)
    ordered.sort(key=lambda device: (device.type != "cpu", device.type == "meta"))
    return ordered


def _candidate_devices(op: StructuredOp | ViewOp, keys: Sequence[KeyLike] | None) -> tuple[list[Device], list[str]]:
    """Devices to check on: the given ones, or every device type whose key serves the op and that can allocate
    (CUDA without a GPU cannot); and why others were skipped."""
    skipped: list[str] = []
    if keys is not None:
        devices: list[Device] = []
        for key in keys:
            if isinstance(key, DispatchKey):
                type_names = [type_name for type_name, type_key in device_types() if type_key is key]
                if not type_names:
                    raise ArgumentValueError(f"check: no device type dispatches to {key!r}")
                key = type_names[0]
            devices.append(Device(key).resolved())
        return devices, skipped
    devices = []
    for type_name, type_key in device_types():
        served = (
            type_key in (DispatchKey.CPU, DispatchKey.Meta)
            or type_key in op.table.kernels
            or bool(op.table.overrides.get(type_key))
            or (isinstance(op, StructuredOp) and backend_fallback(type_key) is not None)  # none serve view ops
        )
        if not served:
            continue
        try:
            device = Device(type_name).resolved()
            backend_for(device).empty((1,), np.dtype(np.float32), device)
        except Exception as error:
            skipped.append(f"{type_name}: unavailable ({type(error).__name__}: {error})")
            continue
        devices.append(device)
    return devices, skipped


def check(
    op: OpLike,
    samples: Iterable[Sample | tuple[Sequence[Any], Mapping[str, Any]]],
    *,
    keys: Sequence[KeyLike] | None = None,
    reference: Callable[..., Any] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    raise_on_error: bool = False,
) -> CheckReport:
    """Check an op like ``torch.library.opcheck``: run each sample through every variant on every available
    dispatch key and report what disagrees.

    For each sample (``Sample(args, kwargs)`` or an ``(args, kwargs)`` pair) and each device (``keys``, or by
    default: CPU, Meta, the sample's devices, and every other registered device type whose key has a kernel,
    override or fallback for the op and that can hold the sample; CUDA only with a GPU), on fresh copies of the
    sample's tensors:

    * the meta function runs and gives the same (shape, dtype) on every device (it may read metadata only);
    * the functional variant returns a new Tensor (version 0) of the meta's shape and dtype on that device;
    * the out variant, twice with outs pre-filled with two different sentinels, returns ``out``, bumps its
      version by exactly one and writes every element (elements that differ between the two runs kept their
      sentinel: the kernel did not write them); its values equal the functional's;
    * the inplace variant (where the result fits ``self``: same shape, same_kind castable) returns ``self``,
      bumps its version by one, and equals the functional result cast to ``self``'s dtype;
    * no variant writes any argument other than its output (data compared before/after) or bumps its version;
    * results on every device with data equal those on the first one (CPU), within ``rtol``/``atol`` (default
      per dtype: float16 1e-3/1e-3, float32 1.3e-6/1e-5, others 1e-7/1e-7; integers and bools exactly);
    * with ``reference`` (a NumPy function of the sample with tensors as arrays), the CPU result has the
      reference's shape, dtype and values: this catches a meta function whose dtype or shape differs from what
      the computation really produces when the kernel casts or broadcasts silently into the output.

    A kernel that cannot write into the output the meta function described (NumPy's broadcast or cast errors
    on ``out=``) is reported as a meta problem.

    A view op (``"transpose"``; its samples start with the base tensor) has one variant and writes nothing; on
    each device the checker compares the meta function's shapes with the views returned (and their dtype with
    the base's), checks that each view shares its base's storage (same version; a data-preserving write through
    the view bumps the base's version too; a view that cannot be written is noted in ``skipped``), that the call
    neither writes the base nor bumps its version, and that every device gives the CPU's values exactly.

    Returns:
        A :class:`CheckReport`; with ``raise_on_error=True`` an AssertionError listing the problems is raised
        instead when there are any.
    Raises:
        KeyError / TypeError: ``op`` is not an op.  ValueError: a malformed sample or an unknown key.
    """
    found: StructuredOp | ViewOp = find_op(op, "check")
    if isinstance(found, ViewOp):
        report = _check_view_op(found, samples, keys)
        if raise_on_error:
            report.raise_if_failed()
        return report
    report = CheckReport(found.name)
    runner = SampleRunner(found, reference, rtol, atol, report)
    devices, unavailable = _candidate_devices(found, keys)
    report.skipped.extend(unavailable)
    for index, raw in enumerate(samples):
        sample = _as_sample(raw)
        ordered = _sample_devices(sample, devices, keys)
        home_spec: TensorSpec | PlannedSpec[Any] | None = None
        try:
            meta_args, meta_kwargs = runner.split(sample.args, sample.kwargs)
            home_spec = found.meta(*meta_args, **meta_kwargs)
        except Exception as error:
            reason = f"the meta function raised {type(error).__name__}: {error}"
            runner.problem("meta", str(_home_device(sample)), "meta", index, reason)
            continue
        baseline: tuple[str, np.ndarray[Any, Any]] | None = None
        for device in ordered:
            result = runner.run_key(index, sample, device, home_spec)
            if result is None:
                continue
            if baseline is None:
                baseline = (str(device), result)
                if reference is not None and device.type == "cpu":
                    runner.compare_reference(index, sample, result)
            elif result.dtype != baseline[1].dtype or not runner.close(result, baseline[1]):
                runner.problem(
                    "values",
                    device.key.name,
                    "functional",
                    index,
                    f"the result ({result.dtype}) differs from the one on {baseline[0]} ({baseline[1].dtype})",
                )
    if raise_on_error:
        report.raise_if_failed()
    return report


def _check_view_op(
    op: ViewOp, samples: Iterable[Sample | tuple[Sequence[Any], Mapping[str, Any]]], keys: Sequence[KeyLike] | None
) -> CheckReport:
    """:func:`check` for a view op: each sample on each device (CPU first, the baseline for values)."""
    report = CheckReport(op.name)
    runner = ViewSampleRunner(op, report)
    devices, unavailable = _candidate_devices(op, keys)
    report.skipped.extend(unavailable)
    for index, raw in enumerate(samples):
        sample = _as_sample(raw)
        ordered = _sample_devices(sample, devices, keys)
        baseline: tuple[Device, list[np.ndarray[Any, Any]]] | None = None
        for device in ordered:
            hosts = runner.run(index, sample, device)
            if hosts is None:
                continue
            if baseline is None:
                baseline = (device, hosts)
            elif not same_views(hosts, baseline[1]):
                runner.problem("values", device, index, f"the views differ from those on {baseline[0]}")
    return report


def _as_sample(raw: Sample | tuple[Sequence[Any], Mapping[str, Any]]) -> Sample:
    """``raw`` as a Sample (an ``(args, kwargs)`` pair converted); ValueError for anything else."""
    if isinstance(raw, Sample):
        return raw
    if isinstance(raw, tuple) and len(raw) == 2 and isinstance(raw[0], (tuple, list)) and isinstance(raw[1], Mapping):
        return Sample(tuple(raw[0]), dict(raw[1]))
    raise ArgumentValueError(f"check: a sample must be a Sample or an (args, kwargs) pair, got {raw!r}")


def _home_device(sample: Sample) -> Device | None:
    """The device of the sample's first tensor (None without tensors)."""
    for tensor in flat_tensors((*sample.args, *sample.kwargs.values())):
        return tensor.device
    return None
