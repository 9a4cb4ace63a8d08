"""The checker's part for view ops (:class:`~devtensor.views.ViewOp`): :func:`~devtensor.library.check` hands a
view op here. A view op has one variant (the functional) and writes nothing; what can go wrong is the meta
function disagreeing with the kernel, a view that does not share its base's memory record, or a kernel that
writes its base (PyTorch's ``opcheck`` checks aliasing the same way: a view must alias its input)."""

from __future__ import annotations

from typing import Any

import numpy as np

from devtensor.device import Device
from devtensor.library.check_report import CheckProblem, CheckReport, Sample
from devtensor.library.check_runs import SampleRunner
from devtensor.tensor import Tensor
from devtensor.typed import as_cpu
from devtensor.views import ViewOp, ViewSpec

__all__ = ["ViewSampleRunner", "same_views"]


class ViewSampleRunner:
    """Runs the samples of one view op on one device at a time and records what disagrees in ``report``."""

    def __init__(self, op: ViewOp, report: CheckReport) -> None:
        self.op = op
        self.report = report

    def problem(self, kind: str, device: Device, sample: int, message: str) -> None:
        """Record one problem for the functional variant on ``device``."""
        self.report.problems.append(CheckProblem(kind, self.op.name, str(device), "functional", sample, message))

    def run(self, index: int, sample: Sample, device: Device) -> list[np.ndarray[Any, Any]] | None:
        """Run sample ``index`` on ``device``: meta against the results, storage and version sharing, no write to
        the base. Returns the results' host copies (None on meta, or when the call failed)."""
        copies: dict[int, Tensor] = {}
        args = tuple(SampleRunner.move(value, device, copies) for value in sample.args)
        kwargs = {name: SampleRunner.move(value, device, copies) for name, value in sample.kwargs.items()}
        base = args[0] if args else None
        if not isinstance(base, Tensor):
            self.problem("exception", device, index, "a view op's sample needs a tensor first argument (its base)")
            return None
        on_meta = device.type == "meta"
        before = None if on_meta else np.array(base.cpu().numpy(), copy=True)
        version = base.version
        self.report.runs.append((index, str(device), "functional"))
        try:
            raw_specs = self.op.meta(*args, **kwargs)
            result = self.op.functional(*args, **kwargs)
        except Exception as error:
            self.problem("exception", device, index, f"raised {type(error).__name__}: {error}")
            return None
        specs: tuple[ViewSpec, ...] = tuple(raw_specs) if self.op.multi else (raw_specs,)
        results: tuple[Any, ...] = tuple(result) if self.op.multi else (result,)
        # Checked before the sharing checks below write through the views.
        if base.version != version:
            self.problem(
                "version", device, index, f"the call moved the base's version from {version} to {base.version}"
            )
        if before is not None:
            after = base.cpu().numpy()
            if before.shape != after.shape or not np.array_equal(before, after, equal_nan=before.dtype.kind in "fc"):
                self.problem("mutation", device, index, "the base's data changed")
        if len(results) != len(specs):
            self.problem("result", device, index, f"{len(results)} results, the meta function said {len(specs)}")
            return None
        hosts: list[np.ndarray[Any, Any]] = []
        for position, (spec, view) in enumerate(zip(specs, results, strict=True)):
            where = f"result {position}: " if self.op.multi else ""
            if not isinstance(view, Tensor) or view.device != base.device:
                self.problem("result", device, index, f"{where}expected a Tensor on {base.device}, got {view!r}")
                continue
            if view.dtype != base.dtype:
                self.problem("result", device, index, f"{where}dtype {view.dtype}, its base's is {base.dtype}")
            if view.shape != tuple(spec.shape):
                self.problem(
                    "meta", device, index, f"{where}shape {list(view.shape)}, the meta function said {list(spec.shape)}"
                )
            if not on_meta:
                hosts.append(np.array(view.cpu().numpy(), copy=True))
            if not spec.copy:
                self._check_shared(index, device, base, view, where)
        return None if on_meta else hosts

    def _check_shared(self, index: int, device: Device, base: Tensor, view: Tensor, where: str) -> None:
        """The view must share the base's version counter: a mutation through the view bumps both by one. The
        mutation multiplies by True (every value stays what it was); a view that cannot be written (read-only, or
        overlapping itself as an expanded one) has its version compared only, and the report says so."""
        if view.version != base.version:
            self.problem("version", device, index, f"{where}the view's version differs from its base's")
            return
        # On the CPU the memory itself is visible: a kernel returning a copy where its spec promised a view
        # would leave writes through the "view" unseen by the base.
        if device.type == "cpu" and view.numel() > 0 and not np.shares_memory(as_cpu(view).array, as_cpu(base).array):
            self.problem("result", device, index, f"{where}the view does not share its base's memory (a copy?)")
        start = base.version
        try:
            view.mul_(True)
        except Exception as error:
            self.report.skipped.append(
                f"{self.op.name} sample {index} on {device}: {where}storage sharing not checked by a write "
                f"({type(error).__name__})"
            )
            return
        if base.version != start + 1 or view.version != start + 1:
            self.problem(
                "version",
                device,
                index,
                f"{where}a write through the view moved the versions from {start} to {view.version} (view) and "
                f"{base.version} (base): the view does not share its base's storage",
            )


def same_views(actual: list[np.ndarray[Any, Any]], expected: list[np.ndarray[Any, Any]]) -> bool:
    """Whether two devices' views hold the same values (exactly: a view moves no value; NaN equals NaN)."""
    return len(actual) == len(expected) and all(
        a.shape == e.shape and a.dtype == e.dtype and np.array_equal(a, e, equal_nan=a.dtype.kind in "fc")
        for a, e in zip(actual, expected, strict=True)
    )
