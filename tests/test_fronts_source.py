"""Fronts as source: every front (built-in or custom) is built at run time from the generator and registers its
source with linecache, so tracebacks and inspect.getsource show it; with the compiled core, importing devtensor
builds none of them (each is built on its first call the compiled lane does not take)."""

from __future__ import annotations

import inspect
import itertools
import subprocess
import sys
import traceback
from types import ModuleType
from typing import Any

import pytest

import devtensor as dt
from devtensor import library
from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError
from devtensor.structured import StructuredOp, TensorSpec, all_ops, core, get_op, schema_from_meta
from devtensor.structured.fronts import front_source
from devtensor.structured.schema import stored_schema
from devtensor.tensor import Tensor
from devtensor.typed import ConstOut, CPUTensor
from devtensor.views import ViewOp, all_view_ops

_counter = itertools.count()


pytestmark = pytest.mark.usefixtures("remove_new_ops")


def test_getsource_of_a_builtin_front() -> None:
    source = inspect.getsource(dt.add)
    assert source.lstrip().startswith("def add(self, other, *, alpha=_default_alpha, out=None):")
    assert "_handler(self, other, alpha=alpha, out=_const_out)" in source
    assert front_source(dt.add).startswith("def add(")
    assert dt.add.__name__ == dt.add.__qualname__ == "add"


def test_every_front_is_built_from_the_generator_with_its_source_registered() -> None:
    """No front is checked in: each one's code is the generator's, compiled under ``<devtensor.NAME>``."""
    for op in all_ops():
        if op.module.split(".")[0] != "devtensor":
            continue
        for fn, suffix in ((op.functional, ""), (op.inplace, "_")):
            if fn is not None:
                code = inspect.unwrap(fn).__code__
                assert code.co_filename == f"<devtensor.{op.name}{suffix}>", (op.name, code.co_filename)
    for vop in all_view_ops():
        assert inspect.unwrap(vop.functional).__code__.co_filename == f"<devtensor.{vop.name}>", vop.name
        if vop.method is not None and vop.method is not vop.functional:  # (a varargs method of its own)
            assert inspect.unwrap(vop.method).__code__.co_filename == f"<devtensor.{vop.name}.method>", vop.name
    for fn, name in ((dt.cpu.add, "cpu.add"), (dt.cuda.mul_, "cuda.mul_"), (dt.cpu.sum, "cpu.sum")):
        assert inspect.unwrap(fn).__code__.co_filename == f"<devtensor.{name}>"
        assert f"def {name.split('.')[1]}(" in inspect.getsource(fn)


@pytest.mark.skipif(core.CORE is None, reason="without the compiled core the Python fronts are built at import")
def test_importing_devtensor_builds_no_structured_front() -> None:
    code = (
        "import devtensor as dt\n"
        "from devtensor.structured import all_ops\n"
        "fronts = [f for op in all_ops() for f in (op.functional, op.inplace) if f is not None]\n"
        "print(len(fronts), sum(f.python_built for f in fronts))\n"
        "dt.ones(2) + 1.0\n"
        "print(sum(f.python_built for f in fronts))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    total, built, after = (int(n) for n in done.stdout.split())
    assert total > 200 and built == 0 and 0 < after < 10


def define_checked(name: str) -> StructuredOp:
    def meta(self: Tensor, limit: float) -> TensorSpec:
        if limit < 0:
            raise ValueError(f"{name}: argument 'limit' must be non-negative, got {limit}")
        return self.shape, self.dtype

    op = library.custom_op(name, inplace=True)(meta)

    @op.impl("cpu")
    def _(self: CPUTensor, limit: float, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = self.array

    return op


def test_a_traceback_through_a_custom_front_shows_its_source() -> None:
    name = f"checked_src{next(_counter)}"
    op = define_checked(name)
    with pytest.raises(ValueError) as info:
        op.functional(dt.tensor([1.0]), -1.0)
    text = "".join(traceback.format_exception(info.value))
    # The meta function's line that raised, whichever front ran the call; the Python front's own line where it ran
    # it (without the core: the compiled core's general lane calls the meta function from C).
    assert 'raise ValueError(f"{name}: argument' in text
    if core.CORE is None:
        assert f'File "<devtensor.custom.{name}>"' in text
        assert "_spec = _meta(self, limit)" in text
    python_front = inspect.unwrap(op.functional)
    with pytest.raises(ValueError) as info:
        python_front(dt.tensor([1.0]), -1.0)
    text = "".join(traceback.format_exception(info.value))
    assert f'File "<devtensor.custom.{name}>"' in text and "_spec = _meta(self, limit)" in text
    assert op.inplace is not None
    with pytest.raises(ValueError) as info:
        inspect.unwrap(op.inplace)(dt.tensor([1.0]), -1.0)
    assert f'File "<devtensor.custom.{name}_>"' in "".join(traceback.format_exception(info.value))


def test_getsource_of_a_custom_front_and_its_bindings() -> None:
    name = f"checked_src{next(_counter)}"
    op = define_checked(name)
    assert inspect.getsource(op.functional).lstrip().startswith(f"def {name}(self, limit, *, out=None):")
    binding = getattr(dt.cpu, name)
    assert inspect.unwrap(binding).__code__.co_filename == f"<devtensor.cpu.custom.{name}>"
    assert f"def {name}(" in inspect.getsource(binding)


def test_stored_schemas_match_the_definitions() -> None:
    """Built-in ops take their schema from the generated module: it must be the one their meta function gives."""
    ops: list[StructuredOp | ViewOp] = [*all_ops(), *all_view_ops()]
    stored = 0
    for op in ops:
        if op.module.split(".")[0] != "devtensor":
            continue
        derived = schema_from_meta(op.name, op.meta)
        assert [repr(p) for p in op.schema.params] == [repr(p) for p in derived.params], op.name
        for got, want in zip(op.schema.params, derived.params, strict=True):
            assert (got.kw_only, got.optional, got.has_default) == (want.kw_only, want.optional, want.has_default)
            assert not got.has_default or (type(got.default) is type(want.default) and got.default == want.default)
        assert op.schema.plan == derived.plan, op.name
        stored += stored_schema(op.name, op.meta) is not None
    assert stored == len([op for op in ops if op.module.split(".")[0] == "devtensor"])
    assert stored_schema("add", lambda self: None) is None  # another meta function: derived, not stored


# --- view ops in the op registry ------------------------------------------------------------------------------


def test_view_ops_are_in_the_op_registry_with_a_kernel_table() -> None:
    op = get_op("transpose")
    assert isinstance(op, ViewOp) and op is dt.transpose.op  # type: ignore[attr-defined]
    assert get_op("add") is dt.add.op  # type: ignore[attr-defined]
    with pytest.raises(KeyError):
        get_op("no_such_op")
    assert op.kernels is op.table.kernels and DispatchKey.CPU in op.kernels


def test_view_op_impl_by_key_name_and_override_through_its_table() -> None:
    op = get_op("transpose")
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    kernel = op.kernels[DispatchKey.CPU]
    calls: list[object] = []

    def flipped(xp: ModuleType, array: Any, plan: Any) -> Any:
        calls.append(plan)
        return kernel(xp, array, plan)

    op.check_handler(flipped)
    op.table.push_override(DispatchKey.CPU, flipped)
    try:
        assert dt.transpose(x, 0, 1).tolist() == [[1.0, 3.0], [2.0, 4.0]]
        assert len(calls) == 1
    finally:
        assert op.table.remove_override(DispatchKey.CPU, flipped)
    dt.transpose(x, 0, 1)
    assert len(calls) == 1
    try:
        op.impl("CPU")(flipped)  # a key name, as for every op
        assert dt.transpose(x, 0, 1).shape == (2, 2) and len(calls) == 2
    finally:
        op.register_kernel("cpu", kernel)
    with pytest.raises(ArgumentTypeError):
        op.check_handler(3)


def test_backend_fallbacks_do_not_serve_view_ops() -> None:
    assert get_op("transpose").table.fallbacks is False
    assert get_op("add").table.fallbacks is True
