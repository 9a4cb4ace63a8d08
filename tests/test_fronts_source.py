"""The fronts are generic fronts reading per-op tables (devtensor.structured.generic for structured ops,
devtensor.view_front for view ops): no per-op code is generated or exec'd; each front still shows its op's
signature, docstring and name, pickles by name, and a traceback through it shows the meta function's or kernel's
line that raised. With the compiled core, importing devtensor builds none of the structured ops' Python fronts
(each is built on its first call the compiled lane does not take)."""

from __future__ import annotations

import inspect
import itertools
import linecache
import pickle
import subprocess
import sys
import traceback
from types import ModuleType
from typing import Any

import pytest

import devtensor as dt
from devtensor import library, view_front
from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError
from devtensor.structured import StructuredOp, TensorSpec, all_ops, core, generic, get_op, schema_from_meta
from devtensor.structured.schema import stored_schema
from devtensor.tensor import Tensor
from devtensor.typed import ConstOut, CPUTensor
from devtensor.views import ViewOp, all_view_ops

_counter = itertools.count()


pytestmark = pytest.mark.usefixtures("remove_new_ops")


def _generic_code() -> Any:
    return inspect.unwrap(dt.add).__code__


def test_a_builtin_front_shows_its_ops_signature_name_and_docs() -> None:
    assert str(inspect.signature(dt.add)) == "(self, other, *, alpha=1, out=None)"
    assert str(inspect.signature(dt.add_)) == "(self, other, *, alpha=1)"
    assert str(inspect.signature(dt.sum)).startswith("(self, dim=None, keepdim=False, *, dtype=None, out=None, axis=")
    for fn, name, module in ((dt.add, "add", "devtensor"), (dt.cpu.add_, "add_", "devtensor.cpu")):
        python = inspect.unwrap(fn)
        for f in (fn, python):
            assert f.__name__ == f.__qualname__ == name
            assert f.__module__ == module
            assert f.__doc__ == get_op("add").doc
            assert getattr(f, "op", None) is get_op("add")
    assert pickle.loads(pickle.dumps(dt.add)) is dt.add
    assert pickle.loads(pickle.dumps(dt.cpu.add_)) is dt.cpu.add_


def test_no_front_is_generated() -> None:
    """Every structured front (built-in, custom, device binding) runs the one generic front's code, every view
    front the generic view front's: nothing is compiled per op, and no source is registered with linecache."""
    code = _generic_code()
    assert code.co_filename == generic.__file__
    for op in all_ops():
        for fn in (op.functional, op.inplace):
            if fn is not None:
                assert inspect.unwrap(fn).__code__ is code, op.name
                assert f"<devtensor.{op.name}>" not in linecache.cache
    for fn in (dt.cpu.add, dt.cuda.mul_, dt.cpu.sum):
        assert inspect.unwrap(fn).__code__ is code
    view_code = inspect.unwrap(dt.reshape).__code__
    assert view_code.co_filename == view_front.__file__
    for vop in all_view_ops():
        assert inspect.unwrap(vop.functional).__code__ is view_code, vop.name
    assert not any(name.startswith("<devtensor.") for name in linecache.cache)


def test_the_generic_front_binds_as_python_does() -> None:
    x = dt.tensor([1.0, 2.0])
    front = inspect.unwrap(dt.add)
    with pytest.raises(TypeError, match=r"add\(\) got an unexpected keyword argument 'beta'"):
        front(x, x, beta=2)
    with pytest.raises(TypeError, match=r"add\(\) got multiple values for argument 'self'"):
        front(x, x, self=x)
    with pytest.raises(TypeError, match=r"add\(\) missing 1 required positional argument: 'other'"):
        front(x)
    with pytest.raises(TypeError, match=r"add\(\) missing 2 required positional arguments: 'self' and 'other'"):
        front()
    with pytest.raises(TypeError, match=r"add\(\) takes 2 positional arguments but 3 were given"):
        front(x, x, 2)
    with pytest.raises(TypeError, match=r"sum\(\) takes from 1 to 3 positional arguments but 4 were given"):
        inspect.unwrap(dt.sum)(x, 0, False, None)
    assert front(other=x, self=x, alpha=2).tolist() == [3.0, 6.0]


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
        if limit > 100:
            raise ValueError(f"{name}: argument 'limit' must be at most 100, got {limit}")
        out.array[...] = self.array

    return op


def test_a_traceback_through_a_front_shows_the_meta_and_kernel_lines() -> None:
    name = f"checked_src{next(_counter)}"
    op = define_checked(name)
    assert op.inplace is not None
    for fn in (op.functional, op.inplace, getattr(dt.cpu, name)):
        # (the published front, whose compiled general lane calls the meta function from C, and the Python front)
        for front in (fn, inspect.unwrap(fn)):
            with pytest.raises(ValueError) as info:
                front(dt.tensor([1.0]), -1.0)
            text = "".join(traceback.format_exception(info.value))
            assert "raise ValueError(f\"{name}: argument 'limit' must be non-negative" in text
            if front is not fn or core.CORE is None:
                assert f'File "{generic.__file__}"' in text
            with pytest.raises(ValueError) as info:
                front(dt.tensor([1.0]), 1000.0)
            text = "".join(traceback.format_exception(info.value))
            assert "must be at most 100" in text
            assert "raise ValueError(f\"{name}: argument 'limit' must be at most" in text


def test_a_custom_front_and_its_bindings_show_the_ops_signature() -> None:
    name = f"checked_src{next(_counter)}"
    op = define_checked(name)
    assert str(inspect.signature(op.functional)) == "(self, limit, *, out=None)"
    assert op.inplace is not None and str(inspect.signature(op.inplace)) == "(self, limit)"
    binding = getattr(dt.cpu, name)
    assert str(inspect.signature(binding)) == "(self, limit, *, out=None)"
    assert binding.__module__ == "devtensor.cpu" and inspect.unwrap(binding).__code__ is _generic_code()


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
