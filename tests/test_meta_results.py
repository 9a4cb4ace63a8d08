"""A custom op's meta result is checked the same way every time: a shape of whole floats or a list is refused
with a devtensor error naming the op, whether or not the front's cache of valid shapes already holds an equal
shape; integers by ``__index__`` (NumPy's) are accepted and made Python ints."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import unique

import devtensor as dt
from devtensor import library
from devtensor.structured import StructuredOp
from devtensor.tensor import PlannedSpec, Tensor, TensorSpec
from devtensor.typed import ConstOut, CPUTensor

pytestmark = pytest.mark.usefixtures("remove_new_ops")

_RESULT: list[Any] = [((5,), np.dtype(np.float64))]


def _define(planned: bool = False) -> StructuredOp:
    name = unique("metaresult")
    if planned:

        def meta_planned(self: Tensor) -> PlannedSpec[int]:
            shape, dtype = _RESULT[0]
            return PlannedSpec(shape, dtype, 0)

        op: StructuredOp = library.custom_op(name)(meta_planned)

        @op.impl("cpu")
        def _(self: CPUTensor, *, plan: int, out: ConstOut[CPUTensor]) -> None:
            out.array[...] = 1.0

    else:

        def meta(self: Tensor) -> TensorSpec:
            return _RESULT[0]  # type: ignore[no-any-return]

        op = library.custom_op(name)(meta)

        @op.impl("cpu")
        def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
            out.array[...] = 1.0

    return op


@pytest.mark.parametrize("planned", [False, True])
@pytest.mark.parametrize("warm", [False, True], ids=["fresh-cache", "cache-holds-(5,)"])
@pytest.mark.parametrize(
    ("shape", "pattern"),
    [((5.0,), "not a tuple of ints"), ([5], "not a tuple of ints"), ((-1,), "negative"), ("5", "not a tuple")],
)
def test_bad_shapes_are_refused_every_time(planned: bool, warm: bool, shape: object, pattern: str) -> None:
    op = _define(planned)
    x = dt.zeros(5)
    if warm:
        _RESULT[0] = ((5,), np.dtype(np.float64))
        assert op.functional(x).shape == (5,)
    _RESULT[0] = (shape, np.dtype(np.float64))
    for _ in range(2):
        with pytest.raises(dt.DevtensorError, match=pattern) as info:
            op.functional(x)
        assert op.name in str(info.value)
        assert isinstance(info.value, (TypeError, ValueError))
        out = dt.zeros(5)
        with pytest.raises(dt.DevtensorError, match=pattern):
            op.functional(x, out=out)
        assert out.version == 0


@pytest.mark.parametrize("planned", [False, True])
@pytest.mark.parametrize("warm", [False, True])
def test_index_integers_are_accepted_as_python_ints(planned: bool, warm: bool) -> None:
    op = _define(planned)
    x = dt.zeros(5)
    if warm:
        _RESULT[0] = ((5,), np.dtype(np.float64))
        op.functional(x)
    _RESULT[0] = ((np.int64(5),), np.dtype(np.float64))
    for _ in range(2):
        r = op.functional(x)
        assert r.shape == (5,) and type(r.shape[0]) is int


def test_a_dtype_name_is_accepted_like_a_dtype() -> None:
    op = _define()
    _RESULT[0] = ((2,), "float32")
    for _ in range(2):
        assert op.functional(dt.zeros(2)).dtype == dt.float32
