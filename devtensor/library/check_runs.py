"""The runs behind :func:`~devtensor.library.check`: :class:`SampleRunner` runs one sample through the meta
function and every variant (functional, out, inplace) on one device, on fresh copies of its tensors, and records
each disagreement in the report as a :class:`~devtensor.library.CheckProblem`.

The checks follow the idea of ``torch.library.opcheck``, reduced to what a devtensor op can get wrong: its meta
function, its outputs, mutation of its inputs and version counters.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final, NamedTuple

import numpy as np

from devtensor.creation import from_numpy
from devtensor.device import Device
from devtensor.library.check_report import CheckProblem, CheckReport, Sample
from devtensor.structured import PlannedSpec, StructuredOp, TensorSpec
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


class _InputState(NamedTuple):
    """A tensor argument before a run: where it is, the tensor, a host copy of its values, its version."""

    label: str
    tensor: Tensor
    values: np.ndarray[Any, Any] | None
    version: int


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
        """Record one problem (see :class:`~devtensor.library.CheckProblem` for the kinds)."""
        self.report.problems.append(CheckProblem(kind, self.op.name, key, variant, sample, message))

    def tolerances(self, dtype: np.dtype[Any]) -> tuple[float, float]:
        """``(rtol, atol)`` for comparing results of ``dtype``: the caller's, else the per-dtype default."""
        rtol, atol = _TOLERANCES.get(dtype.name, (1e-7, 1e-7))
        return (self.rtol if self.rtol is not None else rtol, self.atol if self.atol is not None else atol)

    def close(self, actual: np.ndarray[Any, Any], expected: np.ndarray[Any, Any]) -> bool:
        """Whether two host results agree: same shape, and values within tolerance (exactly for ints, bools)."""
        if actual.shape != expected.shape:
            return False
        if actual.dtype.kind in "fc" or expected.dtype.kind in "fc":
            rtol, atol = self.tolerances(actual.dtype)
            return bool(np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(actual, expected))

    def split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The sample bound to the op's signature (defaults applied), split as the front calls meta."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        values.pop("out", None)
        params = self.op.schema.params
        positional = tuple(values[param.name] for param in params if not param.kw_only)
        keywords = {param.name: values[param.name] for param in params if param.kw_only}
        return positional, keywords

    @staticmethod
    def move(value: Any, device: Device, copies: dict[int, Tensor]) -> Any:
        """``value`` with each tensor (also in lists and tuples) copied to ``device``; a tensor passed twice is
        copied once (``copies``: by the original's id), so aliasing inside the sample is kept."""
        if isinstance(value, Tensor):
            moved = copies.get(id(value))
            if moved is None:
                moved = copies[id(value)] = value.to(device, copy=True)
            return moved
        if isinstance(value, list):
            return [SampleRunner.move(item, device, copies) for item in value]
        if isinstance(value, tuple):
            return tuple(SampleRunner.move(item, device, copies) for item in value)
        return value

    def fresh(self, sample: Sample, device: Device) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The sample's arguments with fresh copies of its tensors on ``device`` (the sample is never written)."""
        copies: dict[int, Tensor] = {}
        args = tuple(self.move(arg, device, copies) for arg in sample.args)
        kwargs = {name: self.move(value, device, copies) for name, value in sample.kwargs.items()}
        return args, kwargs

    @staticmethod
    def host(tensor: Tensor) -> np.ndarray[Any, Any] | None:
        """A host copy of the tensor's values (None for a meta tensor, which has none)."""
        if tensor.device.type == "meta":
            return None
        return np.array(tensor.to("cpu").numpy(), copy=True)

    @staticmethod
    def labelled(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Tensor]]:
        """Every tensor among the arguments with a label naming where it is (``args[0]``, ``tensors[1]``)."""
        found: list[tuple[str, Tensor]] = []

        def visit(label: str, value: Any) -> None:
            if isinstance(value, Tensor):
                found.append((label, value))
            elif isinstance(value, (list, tuple)):
                for position, item in enumerate(value):
                    visit(f"{label}[{position}]", item)

        for position, arg in enumerate(args):
            visit(f"args[{position}]", arg)
        for name, value in kwargs.items():
            visit(name, value)
        return found

    def snapshot(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[_InputState]:
        """The state of every tensor argument before a run, to compare with after it."""
        return [
            _InputState(label, tensor, self.host(tensor), tensor.version)
            for label, tensor in self.labelled(args, kwargs)
        ]

    def check_inputs(
        self,
        before: list[_InputState],
        written: Tensor | None,
        key: str,
        variant: str,
        index: int,
    ) -> None:
        """Record a problem for each argument other than ``written`` (the output) whose values or version
        changed during the run."""
        for label, tensor, values, version in before:
            if tensor is written:
                continue
            if values is not None:
                now = self.host(tensor)
                assert now is not None
                unchanged = now.shape == values.shape and np.array_equal(
                    now, values, equal_nan=values.dtype.kind in "fc"
                )
                if not unchanged:
                    bumped = "" if tensor.version != version else " (and its version counter was not bumped)"
                    self.problem(
                        "mutation",
                        key,
                        variant,
                        index,
                        f"input {label} was modified{bumped}; only the output may be written",
                    )
                    continue
            if tensor.version != version:
                self.problem(
                    "version",
                    key,
                    variant,
                    index,
                    f"the version of input {label} changed ({version} -> {tensor.version})",
                )

    def exception(self, error: BaseException, key: str, variant: str, index: int) -> None:
        """Record what a run raised: a meta problem when it is NumPy refusing the output the meta function
        described (a broadcast or cast error on ``out=``), else an exception problem."""
        text = f"{type(error).__name__}: {error}"
        if isinstance(error, (ValueError, TypeError)) and any(hint in str(error) for hint in _META_ERROR_HINTS):
            self.problem(
                "meta",
                key,
                variant,
                index,
                f"the kernel could not write its result into the output the meta function described ({text})",
            )
        else:
            import traceback  # (here, not at import: only a failing check reports)

            where = "".join(traceback.format_exception_only(type(error), error)).strip()
            self.problem("exception", key, variant, index, f"raised {where}")

    # one sample on one device ------------------------------------------------------------------------

    def run_key(
        self, index: int, sample: Sample, device: Device, home_spec: TensorSpec | PlannedSpec[Any] | None
    ) -> np.ndarray[Any, Any] | None:
        """Run every variant of the sample on ``device``; the functional result on the host (None for meta or
        failure). ``home_spec``: what the meta function said on the sample's own device."""
        key = device.key.name
        try:
            args, kwargs = self.fresh(sample, device)
            meta_args, meta_kwargs = self.split(args, kwargs)
        except Exception as error:
            self.report.skipped.append(f"sample {index} on {device}: cannot move it there ({error})")
            return None
        try:
            spec: TensorSpec | PlannedSpec[Any] = self.op.meta(*meta_args, **meta_kwargs)
        except Exception as error:
            self.problem("meta", key, "meta", index, f"the meta function raised {type(error).__name__}: {error}")
            return None
        shape, dtype = tuple(spec[0]), np.dtype(spec[1])
        if home_spec is not None and (shape != tuple(home_spec[0]) or dtype != home_spec[1]):
            self.problem(
                "meta",
                key,
                "meta",
                index,
                f"the meta function gives {list(shape)} {dtype} here but {list(home_spec[0])} {home_spec[1]} on the "
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
        """Run the functional variant; its result on the host (None on failure or on meta)."""
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
        """An out tensor on ``device`` filled with sentinel ``which``."""
        return from_numpy(self.sentinel(shape, dtype, which)).to(device, copy=True)

    def run_out(
        self, index: int, sample: Sample, device: Device, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> np.ndarray[Any, Any] | None:
        """Run the out variant twice (outs filled with two different sentinels); its values on the host."""
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
        """Run the inplace variant where the result fits ``self``; compare it with the functional result."""
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
        """Compare the CPU result with the reference function's on the sample's values."""
        assert self.reference is not None

        def to_host(value: Any) -> Any:
            if isinstance(value, Tensor):
                return np.array(value.to("cpu").numpy(), copy=True)
            if isinstance(value, (list, tuple)):
                return type(value)(to_host(item) for item in value)
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


def _equal_elements(first: np.ndarray[Any, Any], second: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Elementwise equality in which NaN equals NaN."""
    same: np.ndarray[Any, Any] = first == second
    if first.dtype.kind in "fc":
        same |= np.isnan(first) & np.isnan(second)
    return same
