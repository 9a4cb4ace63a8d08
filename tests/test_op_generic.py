"""Generic checks run on every built-in op with every sample of the registry (``tests/op_samples.py``):

* registry: every op devtensor defines has an entry whose samples cover 0-d, empty, non-contiguous, broadcast
  (where the op broadcasts) and each dtype class it accepts;
* reference: where the entry gives a NumPy reference, the functional result has its values and dtype;
* variants: the out variant (an out of the result's shape and dtype) and, where legal (``self`` a tensor of the
  result's shape whose dtype the result casts to, same_kind), the inplace variant give the functional result;
* out rules: an out of a dtype the result cannot cast to (same_kind) raises a TypeError naming the op and changes
  no tensor (data, shape, dtype, strides, version); a non-empty out of the wrong shape is resized with a
  UserWarning and holds the result;
* meta: the op on meta tensors (functional and out) gives the CPU result's shape and dtype (a data-dependent op
  raises NoDataError: a meta tensor has no values to size its result by);
* CUDA stand-in: the op on CUDA tensors (through the ``fake_cupy`` fixture) gives the CPU result, in each variant;
* version counters: the functional variant leaves its inputs as they were; out bumps the out's version once;
  inplace bumps self's once;
* written memory (a property test): with operands made empty along a dim and cast to any dtype, every element
  of a result is written: the functional result does not depend on what the allocator's memory held, and the
  out variant (an out holding other bytes) gives it bit for bit.

An op that cannot take part in a check says so, with the reason, in its registry entry (``skip``); a check that
applies to no sample of an op that does not skip it fails, so nothing is left out silently.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from helpers import SUPPORTED_DTYPES
from hypothesis import given, settings
from hypothesis import strategies as st
from op_samples import CHECKS, DTYPES, OPS, TAGS, OpSamples, Sample, Strided, builtin_ops, required_tags
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor import backends
from devtensor.structured import rules

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

NAMES = sorted(OPS)
BUILTIN = builtin_ops()


# --- helpers ----------------------------------------------------------------------------------------------------


def functional(name: str) -> Callable[..., Any]:
    fn: Callable[..., Any] = BUILTIN[name].functional
    return fn


def inplace(name: str) -> Callable[..., Any] | None:
    fn: Callable[..., Any] | None = getattr(BUILTIN[name], "inplace", None)
    return fn


def host(result: Any) -> Any:
    """A tensor's values as a NumPy array (copied to the host); a tuple of tensors as a list of them."""
    if isinstance(result, dt.Tensor):
        return np.array(result.cpu().numpy(), copy=True)
    return [host(r) for r in result]


def assert_same(got: Any, want: Any, context: str) -> None:
    """Equal dtypes and values (NaNs equal), element by element for lists."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), context
        for g, w in zip(got, want, strict=True):
            assert_same(g, w, context)
        return
    assert got.dtype == want.dtype, f"{context}: dtype {got.dtype}, expected {want.dtype}"
    np.testing.assert_array_equal(got, want, err_msg=context, strict=True)


def tensors_in(args: list[Any], kwargs: dict[str, Any]) -> list[dt.Tensor]:
    found: list[dt.Tensor] = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, dt.Tensor):
            found.append(a)
        elif isinstance(a, list):
            found.extend(x for x in a if isinstance(x, dt.Tensor))
    return found


def outputs(result: Any) -> list[dt.Tensor]:
    """The output tensors of a result: the tensor, or each of a multi-output op's tuple."""
    return [result] if isinstance(result, dt.Tensor) else list(result)


def new_out(result: Any, device: str = "cpu") -> Any:
    """An out (a tuple of outs for a multi-output op) of ``result``'s shapes and dtypes on ``device``."""
    outs = [dt.empty(r.shape, dtype=r.dtype, device=device) for r in outputs(result)]
    return outs[0] if isinstance(result, dt.Tensor) else tuple(outs)


def returns_out(got: Any, out: Any) -> bool:
    """Whether an out call returned its out (a multi-output op: a tuple of those very tensors)."""
    if isinstance(out, dt.Tensor):
        return got is out
    return len(got) == len(out) and all(g is o for g, o in zip(got, out, strict=True))


def cpu_result(name: str, sample: Sample) -> Any:
    args, kwargs = sample.make("cpu")
    return functional(name)(*args, **kwargs)


def inplace_legal(name: str, sample: Sample, result: Any) -> bool:
    """PyTorch's rule: the op has an inplace variant, ``self`` is a tensor of the result's shape, and the result's
    dtype casts (same_kind) to ``self``'s (is ``self``'s, for the variants of ``rules.EXACT_DTYPE``)."""
    if inplace(name) is None or not isinstance(result, dt.Tensor):
        return False
    first = sample.args[0]
    self_array = getattr(first, "array", first)
    return (
        isinstance(self_array, np.ndarray)
        and self_array.shape == result.shape
        and bool(np.can_cast(result.dtype, self_array.dtype, "same_kind"))
        and (name + "_" not in rules.EXACT_DTYPE or result.dtype == self_array.dtype)
    )


def refused_out_dtype(result_dtype: np.dtype[Any]) -> np.dtype[Any] | None:
    """A dtype ``result_dtype`` cannot cast to under same_kind, or None (bool casts to every dtype)."""
    for candidate in (np.dtype(np.bool_), np.dtype(np.int64), np.dtype(np.float64)):
        if not np.can_cast(result_dtype, candidate, "same_kind"):
            return candidate
    return None


def skipped(entry: OpSamples, check: str) -> None:
    if check in entry.skip:
        pytest.skip(f"{entry.name}: {entry.skip[check]}")


def ran_somewhere(entry: OpSamples, check: str, count: int) -> None:
    assert count > 0, (
        f"{entry.name}: no sample takes part in the {check!r} check; add one to its entry in tests/op_samples.py, "
        f"or give the reason it cannot in the entry's skip"
    )


def label(name: str, sample: Sample, what: str = "") -> str:
    return f"{name}{sample.id}{' ' + what if what else ''}"


# --- the registry -------------------------------------------------------------------------------------------------


def test_every_builtin_op_has_samples() -> None:
    missing = sorted(set(BUILTIN) - set(OPS))
    assert not missing, (
        f"ops without samples: {missing}; add an OpSamples entry for each to OPS in tests/op_samples.py "
        "(the generic checks of tests/test_op_generic.py then run on it)"
    )
    stale = sorted(set(OPS) - set(BUILTIN))
    assert not stale, f"tests/op_samples.py has entries for ops devtensor does not define: {stale}"


@pytest.mark.parametrize("name", NAMES)
def test_samples_cover_the_op(name: str) -> None:
    entry = OPS[name]
    covered = set().union(*(s.tags for s in entry.samples))
    missing = required_tags(entry) - covered
    assert not missing, f"{name}: no sample in tests/op_samples.py covers {sorted(missing)}"
    assert set(entry.skip) <= set(CHECKS), f"{name}: unknown checks in skip: {sorted(set(entry.skip) - set(CHECKS))}"
    assert set(entry.lacks) <= set(TAGS), f"{name}: unknown tags in lacks: {sorted(set(entry.lacks) - set(TAGS))}"
    if inplace(name) is None:
        assert "inplace" in entry.skip, f"{name} has no inplace variant: say so in its entry's skip"


# --- values and variants ----------------------------------------------------------------------------------------


def numpy_args(value: Any) -> Any:
    array = getattr(value, "array", value)
    if isinstance(array, list):
        return [numpy_args(v) for v in array]
    return array


@pytest.mark.parametrize("name", NAMES)
def test_functional_matches_the_numpy_reference(name: str) -> None:
    entry = OPS[name]
    if entry.reference is None:
        pytest.skip(f"{name}: no NumPy reference in its entry")
    skipped(entry, "reference")
    for sample in entry.samples:
        got = host(cpu_result(name, sample))
        ref = entry.reference(
            *(numpy_args(a) for a in sample.args), **{k: numpy_args(v) for k, v in sample.kwargs.items()}
        )
        want = [np.asarray(r) for r in ref] if isinstance(ref, tuple) else np.asarray(ref)
        assert_same(got, want, label(name, sample, "vs NumPy"))


@pytest.mark.parametrize("name", NAMES)
def test_out_and_inplace_give_the_functional_result(name: str) -> None:
    entry = OPS[name]
    fn = functional(name)
    out_runs = inplace_runs = 0
    for sample in entry.samples:
        result = cpu_result(name, sample)
        want = host(result)
        if "out" not in entry.skip:
            args, kwargs = sample.make("cpu")
            out = new_out(result)
            assert returns_out(fn(*args, **kwargs, out=out), out), label(name, sample, "out")
            assert_same(host(out), want, label(name, sample, "out"))
            out_runs += 1
        if "inplace" not in entry.skip and inplace_legal(name, sample, result):
            fn_ = inplace(name)
            assert fn_ is not None
            args, kwargs = sample.make("cpu")
            self = args[0]
            assert fn_(*args, **kwargs) is self, label(name, sample, "inplace")
            assert_same(host(self), want.astype(self.dtype), label(name, sample, "inplace"))
            inplace_runs += 1
    if "out" not in entry.skip:
        ran_somewhere(entry, "out", out_runs)
    if "inplace" not in entry.skip:
        ran_somewhere(entry, "inplace", inplace_runs)


# --- out rules and atomicity ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_out_of_a_dtype_the_result_cannot_cast_to_is_refused_and_changes_nothing(name: str) -> None:
    entry = OPS[name]
    skipped(entry, "out_dtype")
    runs = 0
    for sample in entry.samples:
        result = cpu_result(name, sample)
        bads = [refused_out_dtype(r.dtype) for r in outputs(result)]
        if all(b is None for b in bads):
            continue
        args, kwargs = sample.make("cpu")
        # (a multi-output op: the first output that can be refused gets the bad dtype, the others fit)
        first_bad = next(i for i, b in enumerate(bads) if b is not None)
        outs = [dt.zeros(r.shape, dtype=bads[i] if i == first_bad else r.dtype) for i, r in enumerate(outputs(result))]
        out = outs[0] if isinstance(result, dt.Tensor) else tuple(outs)
        before = snapshot(*tensors_in(args, kwargs), *outs)
        with pytest.raises(TypeError, match=name):
            functional(name)(*args, **kwargs, out=out)
        assert_unchanged(before)
        runs += 1
    ran_somewhere(entry, "out_dtype", runs)


@pytest.mark.parametrize("name", NAMES)
def test_non_empty_out_of_the_wrong_shape_is_resized_with_a_warning(name: str) -> None:
    entry = OPS[name]
    skipped(entry, "out_resize")
    for sample in entry.samples:
        result = cpu_result(name, sample)
        args, kwargs = sample.make("cpu")
        outs = [dt.zeros(r.numel() + 2, dtype=r.dtype) for r in outputs(result)]
        out = outs[0] if isinstance(result, dt.Tensor) else tuple(outs)
        with pytest.warns(UserWarning, match="resized"):
            assert returns_out(functional(name)(*args, **kwargs, out=out), out)
        for o, r in zip(outs, outputs(result), strict=True):
            assert o.shape == r.shape, label(name, sample, "resized out")
        assert_same(host(out), host(result), label(name, sample, "resized out"))


@pytest.mark.parametrize("name", NAMES)
def test_illegal_inplace_call_is_refused_and_changes_nothing(name: str) -> None:
    """Where ``self`` is a tensor but the result does not fit it (its shape differs: ValueError; its dtype does not
    cast same_kind: TypeError), the inplace variant raises, naming the op, and changes no tensor."""
    entry = OPS[name]
    fn_ = inplace(name)
    if fn_ is None:
        pytest.skip(f"{name}: {entry.skip['inplace']}")
    for sample in entry.samples:
        result = cpu_result(name, sample)
        if inplace_legal(name, sample, result) or not isinstance(numpy_args(sample.args[0]), np.ndarray):
            continue
        args, kwargs = sample.make("cpu")
        before = snapshot(*tensors_in(args, kwargs))
        error = ValueError if args[0].shape != result.shape else TypeError
        with pytest.raises(error, match=name):
            fn_(*args, **kwargs)
        assert_unchanged(before)


_KIND_CODES = {"bool": "b", "int": "i", "float": "f", "complex": "c"}


@pytest.mark.parametrize("name", [n for n in NAMES if set(OPS[n].kinds) != set("bifc")])
def test_dtype_classes_the_op_does_not_accept_are_refused(name: str) -> None:
    """The entry's ``kinds`` is the whole truth: the first sample, with its operands of the first class turned
    into each class the op does not accept, raises a TypeError naming the op."""
    entry = OPS[name]
    first = entry.samples[0]
    kind = first.arrays()[0].dtype.kind

    def convert(value: Any, to: str) -> Any:
        if isinstance(value, list):
            return [convert(v, to) for v in value]
        array = getattr(value, "array", value)
        if isinstance(array, np.ndarray) and array.dtype.kind == kind:
            return array.astype(DTYPES[to])
        return value

    for to in sorted(set("bifc") - set(entry.kinds)):
        sample = Sample(tuple(convert(a, to) for a in first.args), first.kwargs)
        args, kwargs = sample.make("cpu")
        with pytest.raises(TypeError, match=name):
            functional(name)(*args, **kwargs)


# --- meta and the CUDA stand-in -----------------------------------------------------------------------------------


def shapes_and_dtypes(result: Any) -> Any:
    if isinstance(result, dt.Tensor):
        return (result.shape, result.dtype)
    return [shapes_and_dtypes(r) for r in result]


def devices(result: Any) -> set[str]:
    if isinstance(result, dt.Tensor):
        return {result.device.type}
    return set().union(*(devices(r) for r in result)) if result else set()


@pytest.mark.parametrize("name", NAMES)
def test_meta_tensors_give_the_cpu_shape_and_dtype(name: str) -> None:
    entry = OPS[name]
    skipped(entry, "meta")
    for sample in entry.samples:
        if getattr(BUILTIN[name], "data_dependent", False):
            # no values to size the result by
            args, kwargs = sample.make("meta")
            with pytest.raises(dt.NoDataError, match=name):
                functional(name)(*args, **kwargs)
            continue
        want = shapes_and_dtypes(cpu_result(name, sample))
        args, kwargs = sample.make("meta")
        got = functional(name)(*args, **kwargs)
        assert devices(got) <= {"meta"}, label(name, sample, "meta")
        assert shapes_and_dtypes(got) == want, label(name, sample, "meta")
        if "out" not in entry.skip:
            args, kwargs = sample.make("meta")
            out = new_out(got, "meta")
            assert returns_out(functional(name)(*args, **kwargs, out=out), out), label(name, sample, "meta out")
            assert shapes_and_dtypes(out) == want, label(name, sample, "meta out")


@pytest.mark.parametrize("name", NAMES)
def test_cuda_stand_in_gives_the_cpu_result(name: str, fake_cupy: ModuleType) -> None:
    entry = OPS[name]
    skipped(entry, "cuda")
    fn = functional(name)
    for sample in entry.samples:
        result = cpu_result(name, sample)
        args, kwargs = sample.make("cuda")
        got = fn(*args, **kwargs)
        assert devices(got) <= {"cuda"}, label(name, sample, "cuda")
        assert_same(host(got), host(result), label(name, sample, "cuda"))
        if "out" not in entry.skip:
            args, kwargs = sample.make("cuda")
            out = new_out(result, "cuda")
            assert returns_out(fn(*args, **kwargs, out=out), out)
            assert_same(host(out), host(result), label(name, sample, "cuda out"))
        fn_ = inplace(name)
        if "inplace" not in entry.skip and fn_ is not None and inplace_legal(name, sample, result):
            args, kwargs = sample.make("cuda")
            assert fn_(*args, **kwargs) is args[0]
            assert_same(host(args[0]), host(result).astype(args[0].dtype), label(name, sample, "cuda inplace"))


# --- version counters ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_version_counters(name: str) -> None:
    entry = OPS[name]
    skipped(entry, "versions")
    fn = functional(name)
    for sample in entry.samples:
        args, kwargs = sample.make("cpu")
        inputs = tensors_in(args, kwargs)
        before = snapshot(*inputs)
        result = fn(*args, **kwargs)
        assert_unchanged(before)  # functional: inputs keep data and version
        if "out" not in entry.skip:
            args, kwargs = sample.make("cpu")
            before = snapshot(*tensors_in(args, kwargs))
            out = new_out(result)
            fn(*args, **kwargs, out=out)
            for o in outputs(out):
                assert o.version == 1, label(name, sample, f"out version {o.version}")
            assert_unchanged(before)
        fn_ = inplace(name)
        if "inplace" not in entry.skip and fn_ is not None and inplace_legal(name, sample, result):
            args, kwargs = sample.make("cpu")
            self = args[0]
            start = self.version
            fn_(*args, **kwargs)
            assert self.version == start + 1, label(name, sample, f"inplace version {start} -> {self.version}")


# --- every element written ------------------------------------------------------------------------------------------


def emptied(sample: Sample) -> list[Sample]:
    """The sample with its operands made empty along one dim: for each dim ``d`` of the first operand, every
    operand of the same rank and size along ``d`` loses all of ``d`` (so the shapes stay compatible)."""
    arrays = sample.arrays()
    if not arrays:
        return []
    first = arrays[0]
    variants = []
    for d in range(first.ndim):

        def shrink(a: Any, d: int = d) -> Any:
            if isinstance(a, np.ndarray):
                ok = a.ndim == first.ndim and a.shape[d] == first.shape[d]
                return np.take(a, np.zeros(0, np.intp), axis=d) if ok else a
            if isinstance(a, Strided):
                made = shrink(a.array)
                return made if made.size == 0 else Strided(made)  # (an empty view is contiguous)
            if isinstance(a, list):
                return [shrink(x) for x in a]
            return a

        args = tuple(shrink(a) for a in sample.args)
        variants.append(Sample(args, {k: shrink(v) for k, v in sample.kwargs.items()}, sample.broadcast))
    return variants


def cast(sample: Sample, dtype: np.dtype[Any]) -> Sample:
    """The sample with every operand cast to ``dtype`` (as NumPy's astype)."""

    def c(a: Any) -> Any:
        if isinstance(a, np.ndarray):
            return a.astype(dtype)
        if isinstance(a, Strided):
            return Strided(a.array.astype(dtype))
        if isinstance(a, list):
            return [c(x) for x in a]
        return a

    return Sample(tuple(c(a) for a in sample.args), {k: c(v) for k, v in sample.kwargs.items()}, sample.broadcast)


@contextlib.contextmanager
def allocations_holding(byte: int) -> Iterator[None]:
    """The CPU allocator's new arrays hold ``byte`` in every byte (NumPy's empty holds whatever was there)."""

    def alloc(shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
        array = np.empty(shape, dtype)
        array.reshape(-1).view(np.uint8)[:] = byte
        return array

    saved = backends.Backend.__dict__["alloc"]
    backends.Backend.alloc = staticmethod(alloc)
    try:
        yield
    finally:
        backends.Backend.alloc = saved


def exact(result: Any) -> list[tuple[tuple[int, ...], np.dtype[Any], bytes]]:
    """Each output's shape, dtype and bytes."""
    return [(o.shape, o.dtype, np.ascontiguousarray(o.numpy()).tobytes()) for o in outputs(result)]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=max(10, settings().max_examples // 4))  # (per op: 180 ops share the time)
@given(data=st.data())
def test_every_element_of_a_result_is_written(name: str, data: st.DataObject) -> None:
    entry = OPS[name]
    fn = functional(name)
    sample = data.draw(st.sampled_from(entry.samples), label="sample")
    variants = emptied(sample) or [sample]
    chosen = data.draw(st.sampled_from(variants), label="emptied")
    dtype = data.draw(st.sampled_from([None, *SUPPORTED_DTYPES]), label="dtype")
    if dtype is not None:
        chosen = cast(chosen, dtype)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for byte in (0xA5, 0x5A):
            args, kwargs = chosen.make("cpu")
            with allocations_holding(byte):
                try:
                    result = fn(*args, **kwargs)
                except (dt.DevtensorError, ArithmeticError):  # an argument this op refuses (a dtype, a size)
                    return
            results.append(exact(result))
        context = label(name, chosen)
        assert results[0] == results[1], f"{context}: the result depends on the allocator's memory"
        if "out" in entry.skip:
            return
        out = new_out(result)
        for o in outputs(out):
            o.numpy().reshape(-1).view(np.uint8)[:] = 0x3C
        args, kwargs = chosen.make("cpu")
        fn(*args, **kwargs, out=out)
        assert exact(out) == results[0], f"{context}: out= differs from the functional result"
