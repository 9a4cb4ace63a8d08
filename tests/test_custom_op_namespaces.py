"""Custom ops as first-class ops: namespaces (``devtensor.ops.<namespace>.<name>``, ``"ns::name"`` wherever an op
name is taken), calling the op itself, and an inplace variant only where one can succeed."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest
from helpers import unique

import devtensor as dt
from devtensor import library
from devtensor.errors import UnknownOpError
from devtensor.meta import unary_ufunc_meta
from devtensor.structured import TensorSpec
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut, CPUTensor

pytestmark = pytest.mark.usefixtures("remove_new_ops")


def words(*keys: str) -> str:
    """A regex matching a message that contains every key word, in any order."""
    return "".join(f"(?=.*{re.escape(k)})" for k in keys)


def _scale_op(
    qualified: str,
    *,
    inplace: bool | None = None,
    out_may_be_input: bool = False,
    method: bool = False,
    replace: bool = False,
    namespace: str | None = None,
) -> library.CustomOp[...]:
    """An elementwise op ``self * factor`` defined as ``qualified`` with these flags, its CPU kernel registered."""

    def meta(self: TensorMeta, factor: float = 2.0) -> TensorSpec:
        return self.shape, self.dtype

    op = library.custom_op(
        qualified,
        inplace=inplace,
        out_may_be_input=out_may_be_input,
        method=method,
        replace=replace,
        namespace=namespace,
    )(meta)

    @op.impl("cpu")
    def _(self: CPUTensor, factor: float, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, factor, out=out.array)

    return op


def _sum_op(name: str, *, inplace: bool | None = None, method: bool = False) -> library.CustomOp[...]:
    """A reduction-like op (the sum along ``dim``: its result has another shape than its input)."""

    def meta(self: TensorMeta, dim: int) -> TensorSpec:
        return self.shape[:dim] + self.shape[dim + 1 :], self.dtype

    op = library.custom_op(name, inplace=inplace, method=method)(meta)

    @op.impl("cpu")
    def _(self: CPUTensor, dim: int, *, out: ConstOut[CPUTensor]) -> None:
        np.sum(self.array, axis=dim, out=out.array)

    return op


def test_a_qualified_name_puts_the_op_in_its_namespace() -> None:
    name = unique("scale")
    op = _scale_op(f"mylib::{name}", out_may_be_input=True)
    assert isinstance(op, library.InplaceCustomOp) and isinstance(op, dt.structured.StructuredOp)
    assert (op.name, op.namespace, op.qualname) == (name, "mylib", f"mylib::{name}")
    assert getattr(dt.ops.mylib, name) is op and name in dir(dt.ops.mylib) and "mylib" in dir(dt.ops)
    assert repr(op) == f"<custom op mylib::{name}>"
    x = dt.tensor([1.0, -2.0, 3.0])
    for result in (op(x), op(x, 2.0), getattr(dt.ops.mylib, name)(x, factor=2.0), op.functional(x)):
        np.testing.assert_array_equal(result.numpy(), x.numpy() * 2.0)
    out = dt.empty(3, dtype=dt.float64)
    assert op.functional(x, 0.5, out=out) is out
    np.testing.assert_array_equal(out.numpy(), x.numpy() * 0.5)
    # By qualified name wherever an op name is taken: get_op, override, register_kernel, check.
    assert library.get_op(f"mylib::{name}") is op
    with library.override(f"mylib::{name}", "cpu", lambda self, factor, *, out: out.array.fill(7.0)):
        assert op(x).tolist() == [7.0, 7.0, 7.0]
    assert op(x).tolist() == [2.0, -4.0, 6.0]
    assert library.check(f"mylib::{name}", [((x,), {}), ((x, 3.0), {})]).ok


def test_the_namespace_argument_and_the_schema_string_name_it_too() -> None:
    by_arg = _scale_op(unique("byarg"), namespace="other", out_may_be_input=True)
    assert by_arg.namespace == "other" and getattr(dt.ops.other, by_arg.name) is by_arg
    name = unique("byschema")
    op = library.custom_op(schema=f"nslib::{name}(Tensor self, float factor=2.0) -> Tensor")(
        lambda self, factor: (self.shape, self.dtype)
    )
    assert (op.name, op.namespace) == (name, "nslib") and getattr(dt.ops.nslib, name) is op
    same = unique("same")
    assert _scale_op(f"agree::{same}", namespace="agree").namespace == "agree"


def test_without_a_namespace_the_op_is_in_its_modules_top_package() -> None:
    op = _scale_op(unique("plain"))
    assert op.namespace == __name__.split(".")[0] and getattr(getattr(dt.ops, op.namespace), op.name) is op

    def meta(self: TensorMeta) -> TensorSpec:
        return self.shape, self.dtype

    main_op = library.custom_op(unique("mainop"), module="__main__")(meta)
    assert main_op.namespace == "main"
    pkg_op = library.custom_op(unique("pkgop"), module="mypkg.sub.ops")(meta)
    assert pkg_op.qualname == f"mypkg::{pkg_op.name}"


@pytest.mark.parametrize(
    ("name", "namespace", "message"),
    [
        ("a::b::c", None, ("'a::b::c'", "<namespace>::<name>")),
        ("::x", None, ("'::x'", "identifier")),
        ("_private::x", None, ("'_private::x'", "'_'")),
        ("lib::x", "other", ("'other'", "'lib::x'", "differs")),
        ("x", "not an identifier", ("namespace", "identifier")),
    ],
)
def test_bad_namespaces_are_refused_and_define_nothing(name: str, namespace: str | None, message: tuple[str]) -> None:
    before = set(dt.structured.ops_by_name)

    def meta(self: TensorMeta) -> TensorSpec:
        return self.shape, self.dtype

    with pytest.raises(ValueError, match=words("custom_op", *message)):
        library.custom_op(name, namespace=namespace)(meta)
    assert set(dt.structured.ops_by_name) == before
    with pytest.raises(TypeError, match=words("custom_op", "'namespace'", "str")):
        library.custom_op("x", namespace=3)(meta)  # type: ignore[call-overload]


def test_unknown_names_in_a_namespace_say_what_it_holds() -> None:
    name = unique("held")
    op = _scale_op(f"holder::{name}")
    with pytest.raises(AttributeError, match=words("devtensor.ops.holder", "'nope'", name)):
        dt.ops.holder.nope  # noqa: B018
    with pytest.raises(AttributeError, match=words("'nope'", "none yet")):
        dt.ops.emptyns.nope  # noqa: B018
    with pytest.raises(UnknownOpError, match=words("get_op", f"'elsewhere::{name}'")):
        library.get_op(f"elsewhere::{name}")
    with pytest.raises(AttributeError):
        dt.ops._private  # noqa: B018
    # Removed or replaced: the namespace finds what is registered now.
    newer = _scale_op(f"holder::{name}", replace=True)
    assert getattr(dt.ops.holder, name) is newer is not op
    library.remove_op(newer)
    with pytest.raises(AttributeError, match=words(f"'{name}'", "none yet")):
        getattr(dt.ops.holder, name)
    with pytest.raises(UnknownOpError):
        library.get_op(f"holder::{name}")


def test_a_reduction_like_op_has_no_inplace_variant_unless_declared() -> None:
    op = _sum_op(unique("rsum"), method=True)
    assert type(op) is library.CustomOp and op.inplace is None
    assert not hasattr(dt.Tensor, op.name + "_") and hasattr(dt.Tensor, op.name)
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(op(x, 1).numpy(), [3.0, 7.0])
    np.testing.assert_array_equal(getattr(x, op.name)(0).numpy(), [4.0, 6.0])
    # Declared, it exists (and fails as the out rules say where the shapes differ).
    declared = _sum_op(unique("rsum_declared"), inplace=True)
    assert isinstance(declared, library.InplaceCustomOp) and declared.inplace is not None
    with pytest.raises(dt.ShapeError):
        declared.inplace(x, 0)


@pytest.mark.parametrize("how", ["out_may_be_input", "elementwise meta", "declared"])
def test_an_elementwise_op_gets_its_inplace_variant(how: str) -> None:
    name = unique("ew")
    if how == "elementwise meta":
        op = library.custom_op(name, method=True)(unary_ufunc_meta(name, np.negative))

        @op.impl("cpu")
        def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
            np.negative(self.array, out=out.array)

        expected = [-1.0, 2.0]
    else:
        if how == "out_may_be_input":
            op = _scale_op(name, method=True, out_may_be_input=True)
        else:
            op = _scale_op(name, method=True, inplace=True)
        expected = [2.0, -4.0]
    assert op.inplace is not None
    x = dt.tensor([1.0, -2.0])
    assert op.inplace(x) is x and x.tolist() == expected and x.version == 1
    y = dt.tensor([1.0, -2.0])
    assert getattr(y, name + "_")() is y and y.tolist() == expected


def test_out_may_be_input_on_an_op_with_a_tensor_list_first_asks_for_inplace_false() -> None:
    def meta(tensors: Sequence[TensorMeta]) -> TensorSpec:  # (a tensor list first: no inplace variant can be)
        return tensors[0].shape, tensors[0].dtype

    name = unique("nofirst")
    with pytest.raises(TypeError, match=words(name, "out_may_be_input=True", "inplace=False")):
        library.custom_op(name, out_may_be_input=True)(meta)
    assert name not in dt.structured.ops_by_name
    op = library.custom_op(name, out_may_be_input=True, inplace=False)(meta)
    assert type(op) is library.CustomOp and op.inplace is None
