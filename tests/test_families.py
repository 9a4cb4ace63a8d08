"""The op families (devtensor.kernels.ufunc_family, devtensor.kernels.reduction_family), the one dim normaliser
(devtensor.meta.normalize_dim) and the shape of the kernels package: one xp kernel per op, modules <= 600 lines."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import devtensor as dt
from devtensor.dispatcher import DispatchKey
from devtensor.kernels.reduction_family import ReductionPlan, fixed, like_numpy, reduction
from devtensor.kernels.ufunc_family import binary_ufunc, unary_ufunc
from devtensor.library import get_op
from devtensor.meta import normalize_dim, normalize_dims
from devtensor.structured import StructuredOp, all_ops, remove_op

KERNELS = Path(dt.__file__).parent / "kernels"


@pytest.fixture
def fresh_names() -> Iterator[list[str]]:
    """Names of ops a test defines; removed afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        remove_op(name)


def _xp_function(op: StructuredOp, key: DispatchKey) -> object:
    """The function behind ``op``'s kernel for ``key``: a CPU xp kernel is bound by functools.partial, another
    key's by a closure holding it."""
    kernel = op.table.kernels[key]
    if isinstance(kernel, functools.partial):
        return kernel.func
    cells = [c.cell_contents for c in (getattr(kernel, "__closure__", None) or ())]
    return next((c for c in cells if callable(c) and not isinstance(c, list)), kernel)


# --- every built-in op has one kernel for both devices ---------------------------------------------------


@pytest.mark.parametrize("op", [op for op in all_ops() if op.module.startswith("devtensor")], ids=lambda op: op.name)
def test_builtin_ops_have_one_kernel_for_cpu_and_cuda(op: StructuredOp) -> None:
    assert isinstance(op.table.kernels[DispatchKey.CPU], functools.partial), "not an xp kernel"
    assert _xp_function(op, DispatchKey.CPU) is _xp_function(op, DispatchKey.CUDA)


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.py")), ids=lambda p: p.name)
def test_kernel_modules_are_at_most_600_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 600


# --- the elementwise family --------------------------------------------------------------------------------


def test_binary_ufunc_entry_defines_a_complete_op(fresh_names: list[str]) -> None:
    op = binary_ufunc("fam_hypot", np.hypot, doc="Hypotenuse, elementwise (``np.hypot``).")
    fresh_names.append("fam_hypot")
    a = dt.tensor([3.0, 5.0])
    np.testing.assert_array_equal(op.functional(a, 4.0).numpy(), np.hypot([3.0, 5.0], 4.0))
    np.testing.assert_array_equal(getattr(a, "fam_hypot")(dt.tensor([4.0, 12.0])).numpy(), [5.0, 13.0])  # noqa: B009
    out = dt.empty(2)
    op.functional(a, 4.0, out=out)
    np.testing.assert_array_equal(out.numpy(), np.hypot([3.0, 5.0], 4.0))
    assert op.inplace is not None
    op.inplace(a, 4.0)
    np.testing.assert_array_equal(a.numpy(), np.hypot([3.0, 5.0], 4.0))
    # Dtype rule and scalar rules as NumPy's ufunc (NEP 50 weak scalars).
    assert op.functional(dt.ones(2, dtype="float32"), 2.0).dtype == dt.float32
    with pytest.raises(TypeError, match="fam_hypot"):
        op.functional(dt.ones(2, dtype="complex128"), 1.0)
    doc = op.functional.__doc__ or ""
    assert doc.startswith("Hypotenuse") and "Raises:" in doc and "np.hypot" in doc


def test_unary_ufunc_entry_and_its_inline_meta(fresh_names: list[str]) -> None:
    op = unary_ufunc("fam_expm1", np.expm1, doc="``exp(self) - 1``, elementwise (``np.expm1``).")
    fresh_names.append("fam_expm1")
    x = dt.tensor([0.0, 1e-10, 1.0])
    np.testing.assert_allclose(op.functional(x).numpy(), np.expm1([0.0, 1e-10, 1.0]))
    assert op.functional(dt.ones(3, dtype="int8")).dtype == dt.float16  # NumPy's loop for int8
    assert op.meta.__dict__["_devtensor_inline"][0] == "unary"


def test_alpha_entries_keep_pytorchs_rules() -> None:
    a = dt.tensor([1, 2], dtype="int64")
    np.testing.assert_array_equal(dt.add(a, a, alpha=3).numpy(), [4, 8])
    np.testing.assert_array_equal(dt.sub(a, 1, alpha=2).numpy(), [-1, 0])
    with pytest.raises(TypeError, match="alpha"):
        dt.add(a, a, alpha=0.5)


# --- the reduction family ------------------------------------------------------------------------------------


def test_reduction_meta_hands_the_kernel_a_plan() -> None:
    meta: Any = get_op("sum").meta  # (typed as returning a TensorSpec; the family's return a PlannedSpec)
    spec = meta(dt.empty(2, 3, 4, device="meta"), (-1, 0), True, dtype="float32")
    assert spec.shape == (1, 3, 1) and spec.dtype == dt.float32
    assert isinstance(spec.plan, ReductionPlan)
    assert spec.plan.axis == (0, 2) and spec.plan.dtype == dt.float32 and spec.plan.compute == dt.float32
    mean_meta: Any = get_op("mean").meta
    plan = mean_meta(dt.empty(4, device="meta", dtype="float16")).plan
    assert plan.axis is None and plan.dtype == dt.float16 and plan.compute == dt.float32
    argmax_meta: Any = get_op("argmax").meta
    assert argmax_meta(dt.empty(2, 3, device="meta"), -1).plan.axis == 1


def test_reduction_entry_defines_a_complete_op(fresh_names: list[str]) -> None:
    op = reduction(
        "fam_nansum", like_numpy(np.nansum), dtype_arg=True, function="nansum", doc="Sum ignoring NaN (np.nansum)."
    )
    fresh_names.append("fam_nansum")
    t = dt.tensor([[1.0, float("nan")], [2.0, 3.0]])
    np.testing.assert_array_equal(op.functional(t, 1).numpy(), [1.0, 5.0])
    np.testing.assert_array_equal(op.functional(t, (0, 1), keepdim=True).numpy(), [[6.0]])
    assert op.functional(t, dtype="float32").dtype == dt.float32
    with pytest.raises(IndexError, match="fam_nansum: dimension out of range"):
        op.functional(t, 2)
    assert op.inplace is None
    doc = op.functional.__doc__ or ""
    assert doc.startswith("Sum ignoring NaN") and "keepdim" in doc and "``dtype``" in doc


def test_reduction_rules_are_shared(fresh_names: list[str]) -> None:
    op = reduction("fam_any_nonzero", fixed(dt.bool), function="any", ordered=True, nonempty=True, doc="Any.")
    fresh_names.append("fam_any_nonzero")
    with pytest.raises(TypeError, match="fam_any_nonzero: not supported for complex"):
        op.functional(dt.ones(2, dtype="complex64"))
    with pytest.raises(ValueError, match="fam_any_nonzero: cannot reduce over dimension 1 of size 0"):
        op.functional(dt.ones(2, 0), 1)
    with pytest.raises(TypeError, match="fam_any_nonzero: argument 'keepdim'"):
        op.functional(dt.ones(2), 0, 1)
    assert op.functional(dt.tensor([[0, 1], [0, 0]]), 1).numpy().tolist() == [True, False]


# --- one dim normaliser ---------------------------------------------------------------------------------------


def test_normalize_dim() -> None:
    assert normalize_dim("op", -1, 3) == 2
    assert normalize_dim("op", np.int64(1), 3) == 1
    assert normalize_dim("op", -1, 0) == normalize_dim("op", 0, 0) == 0
    with pytest.raises(IndexError, match=re.escape("op: dimension out of range: argument 'd' is 3, expected to be")):
        normalize_dim("op", 3, 3, "d")
    with pytest.raises(TypeError, match="op: argument 'dim' must be an int, got bool"):
        normalize_dim("op", True, 3)
    assert normalize_dims("op", (0, -1), 3) == (0, 2)
    with pytest.raises(ValueError, match="op: dim 2 appears multiple times"):
        normalize_dims("op", (2, -1), 3)


def test_one_message_for_one_dim_mistake() -> None:
    t = dt.zeros(2, 3)
    messages = []
    calls: list[Callable[[], object]] = [
        lambda: t.transpose(0, 5),
        lambda: dt.sum(t, 5),
        lambda: dt.softmax(t, 5),
        lambda: dt.flip(t, 5),
        lambda: dt.cat([t, t], 5),
    ]
    for call in calls:
        with pytest.raises(IndexError) as info:
            call()
        messages.append(re.sub(r"^\w+: ", "", str(info.value)).replace("'dim1'", "'dim'").replace("'dims'", "'dim'"))
    assert len(set(messages)) == 1, messages
    assert messages[0] == (
        "dimension out of range: argument 'dim' is 5, expected to be in range of [-2, 1] (a tensor of 2 dimension(s))"
    )


def test_reduction_specs_are_cached_without_confusing_bools_and_ints() -> None:
    t = dt.ones(2, 3)
    assert dt.sum(t, (1, 0)).shape == () and dt.sum(t, 1).shape == (2,)
    assert dt.var(t, 1, correction=1).shape == (2,) and dt.amax(t, 1, keepdim=True).shape == (2, 1)
    with pytest.raises(TypeError, match="sum: argument 'dim'"):
        dt.sum(t, (True, 0))
    with pytest.raises(TypeError, match="sum: argument 'dim'"):
        dt.sum(t, True)
    with pytest.raises(TypeError, match="var: argument 'correction'"):
        dt.var(t, 1, correction=True)
    with pytest.raises(TypeError, match="amax: argument 'keepdim'"):
        dt.amax(t, 1, keepdim=1)  # type: ignore[arg-type]
    assert dt.sum(t, [1, 0]).shape == ()  # a list: not hashable, not cached, fine
