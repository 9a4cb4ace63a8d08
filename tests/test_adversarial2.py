"""Adversarial reproductions, second pass: reductions, linear algebra, shape and view ops, NN ops, device
bindings, ``devtensor.library`` and conversions. Each test asserts the behaviour README.md / DESIGN.md /
the docstrings promise (or PyTorch's / NumPy's, where devtensor says it follows them), on inputs that currently
break it. Ranked by severity (most severe first).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import library
from devtensor.structured import all_ops
from devtensor.tensor import Tensor, TensorMeta, TensorSpec
from devtensor.typed import ConstOut, CPUTensor

_counter = itertools.count()


def unique(prefix: str) -> str:
    """A name (op or device type) no other test uses."""
    return f"{prefix}adv2x{next(_counter)}"


@pytest.fixture(autouse=True)
def _remove_new_ops() -> Iterator[None]:
    """Ops a test defines are removed afterwards (with their device bindings)."""
    before = {op.name for op in all_ops()}
    yield
    for op in all_ops():
        if op.name not in before:
            library.remove_op(op)
            vars(dt.cpu).pop(op.name, None)
            vars(dt.cpu).pop(op.name + "_", None)


def _raises_devtensor_error_naming(call: Callable[[], object], op: str) -> BaseException:
    with pytest.raises(Exception) as info:
        call()
    assert isinstance(info.value, dt.DevtensorError), f"{type(info.value).__name__}: {info.value}"
    assert op in str(info.value)
    return info.value


# --- 1. the inplace variant of any custom op with a tensor-list parameter crashes --------------------------------


def _accumulate_meta(self: TensorMeta, others: Sequence[TensorMeta]) -> TensorSpec:
    return self.shape, self.dtype


def _accumulate_cpu(self: CPUTensor, others: Sequence[CPUTensor], *, out: ConstOut[CPUTensor]) -> None:
    total = self.array.copy()
    for t in others:
        total += t.array
    out.array[...] = total


def _define_accumulate() -> tuple[str, Any]:
    name = unique("acc")
    op: Any = library.custom_op(name)(_accumulate_meta)
    op.impl("cpu")(_accumulate_cpu)
    return name, op


@pytest.mark.parametrize("front", ["op.inplace", "devtensor.cpu binding"])
def test_inplace_variant_of_a_custom_op_with_a_tensor_list_parameter_runs(front: str) -> None:
    name, op = _define_accumulate()
    x = dt.ones(2)
    y = dt.full((2,), 2.0)
    # currently UnboundLocalError "cannot access local variable '_t0'" from the generated inplace front, for every
    # call (the functional and out variants work)
    result = op.inplace(x, [y]) if front == "op.inplace" else getattr(dt.cpu, name + "_")(x, [y])
    assert result is x
    assert x.tolist() == [3.0, 3.0]
    assert x.version == 1


def test_library_check_passes_a_correct_op_with_a_tensor_list_parameter() -> None:
    _, op = _define_accumulate()
    report = library.check(op, [library.Sample((dt.ones(2), [dt.full((2,), 2.0)]))], keys=["cpu", "meta"])
    # currently two "exception" problems (the inplace runs raise UnboundLocalError)
    assert report.ok, str(report)


# --- 2. mean of float16 overflows where NumPy (and PyTorch) accumulate in float32 -----------------------------


@pytest.mark.parametrize(
    "dim, keepdim",
    [(None, False), (1, True)],
    ids=["all", "dim1-keepdim"],
)
def test_mean_of_float16_accumulates_in_float32(dim: int | tuple[int, ...] | None, keepdim: bool) -> None:
    data = np.full((2, 2), 60000, np.float16)
    expected = np.mean(data, axis=dim, keepdims=keepdim)  # 60000 in float16 (float32 accumulation)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = dt.mean(dt.from_numpy(data), dim, keepdim)  # currently inf: np.mean(..., out=<float16>) sums in f16
    assert result.dtype == expected.dtype
    assert result.numpy().tolist() == expected.tolist()


# --- 3. upsample_nearest1d picks other source elements than PyTorch at small sizes ----------------------------


def _pytorch_nearest_sources(length: int, output_size: int | None, scale_factor: float | None) -> list[int]:
    """aten's nearest_idx: exact for L_out == L and 2L, else floor(j * scale) in float32 with scale =
    float32(L / L_out) (size given) or float32(1 / scale_factor); checked against torch 2.13."""
    if output_size is not None:
        if output_size == length:
            return list(range(length))
        if output_size == 2 * length:
            return [j >> 1 for j in range(output_size)]
        scale = np.float32(length / output_size)
        n = output_size
    else:
        assert scale_factor is not None
        scale = np.float32(1.0 / scale_factor)
        n = math.floor(length * scale_factor)
    return [min(int(np.floor(np.float32(j) * scale)), length - 1) for j in range(n)]


@pytest.mark.parametrize(
    "length, output_size, scale_factor",
    [(14, 46, None), (29, None, 0.28)],
    ids=["L14-size46", "L29-scale0.28"],
)
def test_upsample_nearest1d_matches_pytorch_at_small_lengths(
    length: int, output_size: int | None, scale_factor: float | None
) -> None:
    # The docstring says indices may differ from PyTorch's only "for lengths beyond about 2**24"; they differ at
    # L = 14: e.g. output_size=46 gives source 7 at position 23 where torch.nn.functional.interpolate gives 6.
    x = dt.arange(float(length)).reshape(1, 1, length)
    result = dt.upsample_nearest1d(x, output_size, scale_factor)
    expected = [float(i) for i in _pytorch_nearest_sources(length, output_size, scale_factor)]
    assert result.reshape(-1).tolist() == expected


# --- 4. an out view that gets resized silently stops being a view of its base ------------------------------------


def test_resized_out_view_keeps_sharing_storage_and_version_with_its_base() -> None:
    base = dt.zeros(2, 3)
    out = base[0]  # a view: shares storage and version counter with base
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the documented deprecation warning of a resize
            dt.sum(dt.ones(2, 4), 1, out=out)
    except (ValueError, RuntimeError):
        # refusing to resize a view is acceptable; then nothing changed
        assert base.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
        assert base.version == out.version == 0
        return
    assert out.tolist() == [4.0, 4.0]
    # PyTorch writes the resized view into the base's storage (torch gives base [[4, 4, 0], [0, 0, 0]] and
    # version 1 for both); currently out got a new storage: base unchanged at version 0 while out is at 1
    assert base.version == out.version
    assert base.tolist() == [[4.0, 4.0, 0.0], [0.0, 0.0, 0.0]]


# --- 5. errors outside the DevtensorError hierarchy: IndexError for dims and class indices ------------------------


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: dt.sum(dt.ones(2, 2), 2), "sum"),
        (lambda: dt.ones(2, 2).transpose(0, 2), "transpose"),
        (lambda: dt.stack([dt.ones(2), dt.ones(2)], 2), "stack"),
        (lambda: dt.one_hot(dt.tensor([0, 3]), 3), "one_hot"),
        (lambda: dt.ones(3)[5], "__getitem__"),
    ],
    ids=[
        "sum-dim",
        "transpose-dim",
        "stack-dim",
        "one_hot-class",
        "getitem",
    ],
)
def test_index_errors_are_in_the_devtensor_hierarchy(call: Callable[[], object], op: str) -> None:
    # errors.py: "Every error devtensor raises on bad input is an instance of DevtensorError and of the standard
    # exception"; these raise a plain IndexError (which names the op, but `except DevtensorError` misses it)
    error = _raises_devtensor_error_naming(call, op)
    assert isinstance(error, IndexError)


# --- 6. addmm with a Python int alpha/beta too large for a float result: NumPy's bare OverflowError --------------


@pytest.mark.parametrize("coefficient", ["alpha", "beta"])
def test_addmm_with_a_huge_int_coefficient_raises_a_devtensor_error_and_writes_nothing(coefficient: str) -> None:
    out = dt.zeros(1, 1)
    kwargs: dict[str, Any] = {coefficient: 10**400}
    # add/mul give ScalarOverflowError "add: Python integer ... is too large to convert to float64"; addmm raises
    # NumPy's bare "int too large to convert to float" from inside the kernel
    error = _raises_devtensor_error_naming(
        lambda: dt.addmm(dt.ones(1), dt.ones(1, 1), dt.ones(1, 1), out=out, **kwargs), "addmm"
    )
    assert isinstance(error, OverflowError)
    assert out.tolist() == [[0.0]]
    assert out.version == 0


# --- 7. sizes NumPy cannot represent: bare NumPy errors that do not name the op -----------------------------------


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: dt.ones(1).expand(10**20), "expand"),
        (lambda: dt.empty(10**20), "empty"),
        (lambda: dt.one_hot(dt.empty(1, dtype=dt.int64, device="meta"), 10**20), "one_hot"),
        (lambda: dt.upsample_nearest1d(dt.empty(1, 1, 4, device="meta"), scale_factor=1e30), "upsample_nearest1d"),
        (lambda: dt.ones(0).reshape(10**10, 10**10, 0), "reshape"),
    ],
    ids=["expand", "empty", "one_hot-meta", "upsample-meta", "reshape-empty"],
)
def test_unrepresentable_sizes_give_a_devtensor_error_naming_the_op(call: Callable[[], Tensor], op: str) -> None:
    # currently "Python int too large to convert to C long", "Maximum allowed dimension exceeded", "array is too
    # big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size" (on meta tensors, which hold
    # no data), "cannot reshape array of size 0 into shape ...": plain ValueError/OverflowError
    try:
        call()
    except Exception as error:
        assert isinstance(error, dt.DevtensorError), f"{type(error).__name__}: {error}"
        assert op in str(error)
        assert isinstance(error, (ValueError, OverflowError, RuntimeError))


# --- 8. from_dlpack of an unsupported dtype: the producer's RuntimeError instead of ArgumentTypeError -----------


def test_from_dlpack_of_an_unsupported_dtype_is_the_documented_argument_type_error() -> None:
    torch = pytest.importorskip("torch")
    # docstring: "ArgumentTypeError: obj ... has an unsupported dtype"; currently NumPy's bare
    # RuntimeError "Unsupported dtype in DLTensor."
    error = _raises_devtensor_error_naming(lambda: dt.from_dlpack(torch.ones(2, dtype=torch.bfloat16)), "from_dlpack")
    assert isinstance(error, TypeError)


# --- 9. softmax / log_softmax of a slice holding +inf: half nan, half a confident 0 -------------------------------


@pytest.mark.parametrize(
    "fn, limit", [(dt.softmax, [1.0, 0.0]), (dt.log_softmax, [0.0, -math.inf])], ids=["softmax", "log_softmax"]
)
def test_softmax_of_a_slice_with_positive_infinity(fn: Callable[[Tensor, int], Tensor], limit: list[float]) -> None:
    result = fn(dt.tensor([math.inf, 1.0]), 0).tolist()
    # torch gives [nan, nan] (the module follows PyTorch); the limit would be `limit`; currently [nan, 0.0] and
    # [nan, -inf]: a nan probability beside a finite one in the same slice
    assert all(math.isnan(v) for v in result) or result == limit


# --- 10. devtensor.library errors outside the hierarchy -----------------------------------------------------------


def _meta_with_dict(self: TensorMeta, table: dict[str, int]) -> TensorSpec:
    return self.shape, self.dtype


def _impl_without_out(self: CPUTensor) -> None:
    pass


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: library.parse_schema("f(Tensor self) -> Tensor(a)"), "parse_schema"),
        (lambda: library.custom_op(unique("dictop"))(_meta_with_dict), "dictop"),
        (lambda: library.override("add", "cpu", _impl_without_out), "add"),
    ],
    ids=["parse_schema", "custom_op-annotation", "override-signature"],
)
def test_library_errors_are_in_the_devtensor_hierarchy(call: Callable[[], object], op: str) -> None:
    # parse_schema raises plain ValueError for malformed text (its tokenizer's errors are ArgumentValueError);
    # custom_op/override raise plain TypeError for an unsupported annotation or a mismatched impl
    _raises_devtensor_error_naming(call, op)


# --- 11. a custom op's meta result is not validated: tensors of unsupported dtypes, NumPy ints in shapes ----------


def _object_dtype_meta(self: TensorMeta) -> TensorSpec:
    return self.shape, np.dtype(object)


def _numpy_int_shape_meta(self: TensorMeta) -> TensorSpec:
    shape: Any = tuple(np.int64(n) for n in self.shape)  # a meta author's slip mypy would not see in untyped code
    return shape, self.dtype


def _fill_one(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
    out.array[...] = 1


@pytest.mark.parametrize("meta", [_object_dtype_meta, _numpy_int_shape_meta], ids=["object-dtype", "numpy-int-shape"])
def test_meta_results_are_validated(meta: Callable[[TensorMeta], TensorSpec]) -> None:
    op: Any = library.custom_op(unique("badmeta"))(meta)
    op.impl("cpu")(_fill_one)
    try:
        result = op.functional(dt.ones(2))
    except TypeError as error:
        assert isinstance(error, dt.DevtensorError)
        return
    # currently a tensor of dtype object, and a tensor whose .shape is (np.int64(2),)
    assert result.dtype in {dt.float64, dt.float32, dt.int64, dt.bool}
    assert all(type(n) is int for n in result.shape)


# --- 12. register_backend takes a CPUTensor subclass as an out-of-tree backend's tensor class -------------------


def test_register_backend_refuses_a_tensor_class_that_is_a_cpu_tensor() -> None:
    class SubTensor(CPUTensor):
        __slots__ = ()

    # docstring: "tensor_class: the refined tensor class: a direct subclass of Tensor"; a CPUTensor subclass is
    # accepted, so mypy then types every tensor of the new device as a CPUTensor (is_cpu says False at run time)
    with pytest.raises(ValueError) as info:
        library.register_backend(unique("sub"), tensor_class=SubTensor)
    assert isinstance(info.value, dt.DevtensorError)
