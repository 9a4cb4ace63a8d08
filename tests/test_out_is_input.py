"""``out=`` one of the inputs (NumPy's and PyTorch's rule for an exact alias): every op gives the functional
call's values, written into ``out`` with one version bump. Ops whose kernel may write over its input
(``out_may_be_input``: elementwise ops) do it directly; every other op (matmul family, softmax, flip,
reductions, cat, …) computes into a temporary and copies it in. A partial overlap stays an error, and an
inplace variant of such an op with ``self`` passed again goes through a temporary too. Driven by the op sample
registry (tests/op_samples.py), on the CPU and the CUDA stand-in."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from helpers import unique
from op_samples import OPS, Sample
from test_op_generic import BUILTIN, assert_same, functional, host

import devtensor as dt
from devtensor import library
from devtensor.structured import StructuredOp
from devtensor.tensor import Tensor, TensorSpec
from devtensor.typed import ConstOut, CPUTensor

# (samples with no elements warn as NumPy does, e.g. "Mean of empty slice": values, not the subject here)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _cases() -> Iterator[Any]:
    for name, entry in OPS.items():
        op = BUILTIN[name]
        if not isinstance(op, StructuredOp):
            continue  # view ops have no out=
        for sample in entry.samples:
            yield pytest.param(name, sample, id=f"{name}{sample.id}")


def out_positions(args: list[Any], result: dt.Tensor) -> list[tuple[int, int | None]]:
    """(argument index, list index or None) of each tensor operand that can be the out: the result's shape
    and dtype, and no other operand sharing its memory."""
    found: list[tuple[int, int | None]] = []
    for i, a in enumerate(args):
        items: list[tuple[Any, int | None]] = [(a, None)]
        if isinstance(a, list):
            items = [(t, j) for j, t in enumerate(a)]
        for t, j in items:
            if isinstance(t, dt.Tensor) and t.shape == result.shape and t.dtype == result.dtype:
                found.append((i, j))
    return found


@pytest.mark.parametrize("device", ["cpu", "stand-in"])
@pytest.mark.parametrize(("name", "sample"), list(_cases()))
def test_out_is_an_input_gives_the_functional_values(
    name: str, sample: Sample, device: str, request: pytest.FixtureRequest
) -> None:
    if device == "stand-in":
        request.getfixturevalue("fake_cupy")  # the CUDA stand-in
        device = "cuda"
    args, kwargs = sample.make(device)
    expected = functional(name)(*args, **kwargs)
    if not isinstance(expected, dt.Tensor):
        pytest.skip("several results")
    for i, j in out_positions(args, expected):
        args, kwargs = sample.make(device)
        out = args[i] if j is None else args[i][j]
        version = out.version
        result = functional(name)(*args, **kwargs, out=out)
        context = f"{name}{sample.id} out=argument {i}" + ("" if j is None else f"[{j}]")
        assert result is out, context
        assert_same(host(out), host(expected), context)
        assert out.version == version + 1, context


def test_the_issue_example() -> None:
    x = dt.ones(3, 3) + dt.arange(3.0)
    expected = dt.mm(x, x)
    assert dt.mm(x, x, out=x) is x
    np.testing.assert_array_equal(x.numpy(), expected.numpy())
    assert x.version == 1  # the add's result was fresh: one bump, by mm


@pytest.mark.parametrize(
    ("call", "op"),
    [
        (lambda b: dt.matmul(b[0:2], b[1:3], out=b[1:3]), "matmul"),
        (lambda b: dt.flip(b[0:2], [0], out=b[1:3]), "flip"),
        (lambda b: dt.softmax(b[0:2], 1, out=b[1:3]), "softmax"),
        (lambda b: dt.cat([b[0], b[1]], out=b[1:3].reshape(-1)[:4]), "cat"),
    ],
)
def test_partial_overlap_stays_an_error(call: Any, op: str) -> None:
    big = dt.arange(6.0).reshape(3, 2)
    before = big.numpy().copy()
    with pytest.raises(dt.MemoryOverlapError, match=op):
        call(big)
    np.testing.assert_array_equal(big.numpy(), before)
    assert big.version == 0


def test_an_alias_through_another_view_object_counts_too() -> None:
    x = dt.arange(4.0)
    same = x[:]
    expected = dt.flip(x, [0]).numpy()
    dt.flip(same, [0], out=x)
    np.testing.assert_array_equal(x.numpy(), expected)


# --- a user op that cannot write over its input ----------------------------------------------------------------


def _reversed_sum_meta(self: Tensor, other: Tensor) -> TensorSpec:
    return self.shape, self.dtype


def _define_reversed_sum() -> StructuredOp:
    """``out[i] = self[n-1-i] + other[i]`` written element by element: wrong if out is self or other."""
    op = library.custom_op(unique("reversed_sum"), inplace=True)(_reversed_sum_meta)

    @op.impl("cpu")
    def _(self: CPUTensor, other: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        a, b, o = self.array, other.array, out.array
        n = a.shape[0]
        for i in range(n):
            o[i] = a[n - 1 - i] + b[i]

    return op


@pytest.mark.usefixtures("remove_new_ops")
def test_a_custom_op_not_flagged_goes_through_a_temporary() -> None:
    op = _define_reversed_sum()
    assert op.inplace is not None
    x = dt.tensor([1.0, 2.0, 3.0])
    y = dt.tensor([10.0, 20.0, 30.0])
    expected = op.functional(x, y).numpy()
    np.testing.assert_array_equal(expected, [13.0, 22.0, 31.0])
    for out_is in ("self", "other"):
        a, b = dt.clone(x), dt.clone(y)
        out = a if out_is == "self" else b
        assert op.functional(a, b, out=out) is out
        np.testing.assert_array_equal(out.numpy(), expected, err_msg=out_is)
        assert out.version == 1
    # inplace with self passed again: op(x, x) into x
    a = dt.clone(x)
    want = op.functional(a, a).numpy()
    assert op.inplace(a, a) is a
    np.testing.assert_array_equal(a.numpy(), want)
    assert a.version == 1
    b = dt.clone(x)
    op.inplace(b, b[:])  # another tensor object over the same elements
    np.testing.assert_array_equal(b.numpy(), want)
    c = dt.arange(4.0)
    with pytest.raises(dt.MemoryOverlapError, match="partial overlap"):
        op.inplace(c[1:], c[:-1])
    assert c.version == 0


def test_stand_in_mm(fake_cupy: ModuleType) -> None:
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    expected = host(dt.mm(x, x))
    dt.mm(x, x, out=x)
    np.testing.assert_array_equal(host(x), expected)
