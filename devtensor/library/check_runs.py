"""The runs behind :func:`~devtensor.library.check`: :class:`SampleRunner` runs one sample through the meta
function and every variant (functional, out, inplace) on one device, on fresh copies of its tensors, and records
each disagreement in the report as a :class:`~devtensor.library.CheckProblem`.

The checks follow the idea of ``torch.library.opcheck``, reduced to what a devtensor op can get wrong: its meta
function, its outputs, mutation of its inputs and version counters.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from devtensor.creation import from_numpy
from devtensor.device import Device
from devtensor.library.check_report import CheckProblem, CheckReport, Sample
from devtensor.structured import StructuredOp, TensorSpec
from devtensor.tensor import Tensor

__all__ = ["SampleRunner"]


_TOLERANCES: Final[dict[str, tuple[float, float]]] = {
    "float16": (1e-3, 1e-3),
    "float32": (1.3e-6, 1e-5),
    "complex64": (1.3e-6, 1e-5),
}
_META_ERROR_HINTS: Final = (
    "non-broadcastable output",
    "could not broadcast",
    "Cannot cast ufunc",
    "output parameter",
    "output array",
    "wrong dimensions",
    "wrong number of dimensions",
    "shape mismatch",
    "does not match",
)


class SampleRunner:
    """Runs the samples of one :func:`~devtensor.library.check` call and records problems in ``report``."""

    def __init__(
        self,
        op: StructuredOp,
        reference: Callable[..., Any] | None,
        rtol: float | None,
        atol: float | None,
        report: CheckReport,
    ) -> None:
        self.op = op
        self.reference = reference
        self.rtol = rtol
        self.atol = atol
        self.report = report
        self.signature = inspect.signature(op.functional)

    # helpers -------------------------------------------------------------------------------------------

    def problem(self, kind: str, key: str, variant: str, sample: int, message: str) -> None:
        self.report.problems.append(CheckProblem(kind, self.op.name, key, variant, sample, message))

    def tolerances(self, dtype: np.dtype[Any]) -> tuple[float, float]:
        rtol, atol = _TOLERANCES.get(dtype.name, (1e-7, 1e-7))
        return (self.rtol if self.rtol is not None else rtol, self.atol if self.atol is not None else atol)

    def close(self, a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            rtol, atol = self.tolerances(a.dtype)
            return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(a, b))

    def split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The sample bound to the op's signature (defaults applied), split as the front calls meta."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        values.pop("out", None)
        positional = tuple(values[p.name] for p in self.op.schema.params if not p.kw_only)
        keywords = {p.name: values[p.name] for p in self.op.schema.params if p.kw_only}
        return positional, keywords

    @staticmethod
    def move(value: Any, device: Device, memo: dict[int, Tensor]) -> Any:
        if isinstance(value, Tensor):
            moved = memo.get(id(value))
            if moved is None:
                moved = memo[id(value)] = value.to(device, copy=True)
            return moved
        if isinstance(value, list):
            return [SampleRunner.move(v, device, memo) for v in value]
        if isinstance(value, tuple):
            return tuple(SampleRunner.move(v, device, memo) for v in value)
        return value

    def fresh(self, sample: Sample, device: Device) -> tuple[tuple[Any, ...], dict[str, Any]]:
        memo: dict[int, Tensor] = {}
        args = tuple(self.move(a, device, memo) for a in sample.args)
        kwargs = {k: self.move(v, device, memo) for k, v in sample.kwargs.items()}
        return args, kwargs

    @staticmethod
    def host(t: Tensor) -> np.ndarray[Any, Any] | None:
        if t.device.type == "meta":
            return None
        return np.array(t.to("cpu").numpy(), copy=True)

    @staticmethod
    def labelled(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Tensor]]:
        found: list[tuple[str, Tensor]] = []

        def visit(label: str, value: Any) -> None:
            if isinstance(value, Tensor):
                found.append((label, value))
            elif isinstance(value, (list, tuple)):
                for i, v in enumerate(value):
                    visit(f"{label}[{i}]", v)

        for i, a in enumerate(args):
            visit(f"args[{i}]", a)
        for k, v in kwargs.items():
            visit(k, v)
        return found

    def snapshot(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Tensor, Any, int]]:
        return [(label, t, self.host(t), t.version) for label, t in self.labelled(args, kwargs)]

    def check_inputs(
        self,
        before: list[tuple[str, Tensor, Any, int]],
        written: Tensor | None,
        key: str,
        variant: str,
        index: int,
    ) -> None:
        for label, t, data, version in before:
            if t is written:
                continue
            if data is not None:
                now = self.host(t)
                assert now is not None
                if not (now.shape == data.shape and np.array_equal(now, data, equal_nan=data.dtype.kind in "fc")):
                    bumped = "" if t.version != version else " (and its version counter was not bumped)"
                    self.problem(
                        "mutation",
                        key,
                        variant,
                        index,
                        f"input {label} was modified{bumped}; only the output may be written",
                    )
                    continue
            if t.version != version:
                self.problem(
                    "version", key, variant, index, f"the version of input {label} changed ({version} -> {t.version})"
                )

    def exception(self, error: BaseException, key: str, variant: str, index: int) -> None:
        text = f"{type(error).__name__}: {error}"
        if isinstance(error, (ValueError, TypeError)) and any(h in str(error) for h in _META_ERROR_HINTS):
            self.problem(
                "meta",
                key,
                variant,
                index,
                f"the kernel could not write its result into the output the meta function described ({text})",
            )
        else:
            where = "".join(traceback.format_exception_only(type(error), error)).strip()
            self.problem("exception", key, variant, index, f"raised {where}")

    # one sample on one device ------------------------------------------------------------------------

    def run_key(
        self, index: int, sample: Sample, device: Device, spec0: TensorSpec | None
    ) -> np.ndarray[Any, Any] | None:
        """Run every variant of the sample on ``device``; the functional result on the host (None for meta or
        failure)."""
        key = device.key.name
        try:
            args, kwargs = self.fresh(sample, device)
            meta_args, meta_kwargs = self.split(args, kwargs)
        except Exception as error:
            self.report.skipped.append(f"sample {index} on {device}: cannot move it there ({error})")
            return None
        try:
            spec: TensorSpec = self.op.meta(*meta_args, **meta_kwargs)
        except Exception as error:
            self.problem("meta", key, "meta", index, f"the meta function raised {type(error).__name__}: {error}")
            return None
        shape, dtype = tuple(spec[0]), np.dtype(spec[1])
        if spec0 is not None and (shape != tuple(spec0[0]) or dtype != spec0[1]):
            self.problem(
                "meta",
                key,
                "meta",
                index,
                f"the meta function gives {list(shape)} {dtype} here but {list(spec0[0])} {spec0[1]} on the "
                "sample's own device (a meta function must read metadata only)",
            )
        functional = self.run_functional(index, sample, device, shape, dtype)
        out_values = self.run_out(index, sample, device, shape, dtype)
        if functional is not None and out_values is not None and not self.close(out_values, functional):
            self.problem("values", key, "out", index, "the out variant's values differ from the functional's")
        self.run_inplace(index, sample, device, shape, dtype, functional)
        return functional

    def run_functional(
        self, index: int, sample: Sample, device: Device, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> np.ndarray[Any, Any] | None:
        key = device.key.name
        args, kwargs = self.fresh(sample, device)
        before = self.snapshot(args, kwargs)
        self.report.runs.append((index, str(device), "functional"))
        try:
            result: Any = self.op.functional(*args, **kwargs)
        except Exception as error:
            self.exception(error, key, "functional", index)
            return None
        if not isinstance(result, Tensor):
            self.problem("result", key, "functional", index, f"returned {type(result).__name__}, not a Tensor")
            return None
        if result.device is not device or result.shape != shape or result.dtype != dtype:
            self.problem(
                "meta",
                key,
                "functional",
                index,
                f"the result is {list(result.shape)} {result.dtype} on {result.device}; the meta function says "
                f"{list(shape)} {dtype} on {device}",
            )
        if result.version != 0:
            self.problem("version", key, "functional", index, f"a new result has version {result.version}, not 0")
        self.check_inputs(before, None, key, "functional", index)
        return self.host(result)

    @staticmethod
    def sentinel(shape: tuple[int, ...], dtype: np.dtype[Any], which: int) -> np.ndarray[Any, Any]:
        """The host array an out is filled with before run ``which`` (0 or 1: two different values)."""
        if dtype.kind == "b":
            value: Any = which == 0
        elif dtype.kind in "fc":
            value = np.nan if which == 0 else 7.0
        elif dtype.kind == "u":
            value = 123 if which == 0 else 45
        else:
            value = -123 if which == 0 else 45
        return np.full(shape, value, dtype=dtype)

    def sentinel_out(self, shape: tuple[int, ...], dtype: np.dtype[Any], device: Device, which: int) -> Tensor:
        return from_numpy(self.sentinel(shape, dtype, which)).to(device, copy=True)

    def run_out(
        self, index: int, sample: Sample, device: Device, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> np.ndarray[Any, Any] | None:
        key = device.key.name
        results: list[np.ndarray[Any, Any] | None] = []
        for which in (0, 1):
            args, kwargs = self.fresh(sample, device)
            out = self.sentinel_out(shape, dtype, device, which)
            version = out.version
            before = self.snapshot(args, kwargs)
            if which == 0:
                self.report.runs.append((index, str(device), "out"))
            try:
                result = self.op.functional(*args, **kwargs, out=out)
            except Exception as error:
                self.exception(error, key, "out", index)
                return None
            if result is not out:
                self.problem("result", key, "out", index, "the out variant did not return its out tensor")
            if out.shape != shape or out.dtype != dtype:
                self.problem("result", key, "out", index, f"out became {list(out.shape)} {out.dtype}")
            if out.version != version + 1:
                self.problem(
                    "version", key, "out", index, f"out's version went {version} -> {out.version}; expected +1"
                )
            self.check_inputs(before, out, key, "out", index)
            results.append(self.host(out))
        first, second = results
        if first is None or second is None:
            return None
        # An element the kernel did not write keeps its sentinel in both runs (and the two sentinels differ);
        # exact, and blind to nondeterministic kernels whose written values differ slightly between runs.
        kept = _equal_elements(first, self.sentinel(shape, dtype, 0)) & _equal_elements(
            second, self.sentinel(shape, dtype, 1)
        )
        if kept.any():
            count = int(kept.sum())
            self.problem(
                "unwritten",
                key,
                "out",
                index,
                f"{count} of {first.size} output elements were not written by the kernel (they kept the "
                "sentinel the out tensor was filled with)",
            )
        return second

    def run_inplace(
        self,
        index: int,
        sample: Sample,
        device: Device,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        functional: np.ndarray[Any, Any] | None,
    ) -> None:
        key = device.key.name
        if self.op.inplace is None:
            return
        args, kwargs = self.fresh(sample, device)
        meta_args, _ = self.split(args, kwargs)
        target = meta_args[0]
        if not isinstance(target, Tensor):
            return
        if target.shape != shape or not np.can_cast(dtype, target.dtype, "same_kind"):
            self.report.skipped.append(
                f"sample {index} on {device}: inplace (result {list(shape)} {dtype} does not fit self "
                f"{list(target.shape)} {target.dtype})"
            )
            return
        before = self.snapshot(args, kwargs)
        version = target.version
        self.report.runs.append((index, str(device), "inplace"))
        try:
            result = self.op.inplace(*args, **kwargs)
        except Exception as error:
            self.exception(error, key, "inplace", index)
            return
        if result is not target:
            self.problem("result", key, "inplace", index, "the inplace variant did not return self")
        if target.version != version + 1:
            self.problem(
                "version", key, "inplace", index, f"self's version went {version} -> {target.version}; expected +1"
            )
        self.check_inputs(before, target, key, "inplace", index)
        values = self.host(target)
        if values is not None and functional is not None:
            expected = functional.astype(target.dtype, casting="unsafe")
            if not self.close(values, expected):
                self.problem(
                    "values", key, "inplace", index, "the inplace variant's values differ from the functional's"
                )

    def compare_reference(self, index: int, sample: Sample, result: np.ndarray[Any, Any]) -> None:
        assert self.reference is not None

        def to_host(value: Any) -> Any:
            if isinstance(value, Tensor):
                return np.array(value.to("cpu").numpy(), copy=True)
            if isinstance(value, (list, tuple)):
                return type(value)(to_host(v) for v in value)
            return value

        try:
            expected = np.asarray(self.reference(*to_host(sample.args), **to_host(sample.kwargs)))
        except Exception as error:
            self.report.skipped.append(f"sample {index}: the reference raised {type(error).__name__}: {error}")
            return
        if expected.shape != result.shape or expected.dtype != result.dtype:
            self.problem(
                "meta",
                "CPU",
                "functional",
                index,
                f"the meta function says {list(result.shape)} {result.dtype}; the reference computes "
                f"{list(expected.shape)} {expected.dtype}",
            )
        elif not self.close(result, expected):
            self.problem("values", "CPU", "functional", index, "the result differs from the reference's")


def _equal_elements(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    same: np.ndarray[Any, Any] = a == b
    if a.dtype.kind in "fc":
        same |= np.isnan(a) & np.isnan(b)
    return same
