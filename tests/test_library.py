"""devtensor.library: custom ops (annotations, schema strings, variants, safety), overrides, registration handles,
modes, the checker."""

from __future__ import annotations

import inspect
import itertools
import sys
import threading
import time
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any, Literal

import custom_ops_future
import custom_ops_plain
import numpy as np
import pytest

import devtensor as dt
from devtensor import Tensor, library, structured
from devtensor.dispatcher import DispatchKey
from devtensor.errors import ArgumentTypeError, NoKernelError
from devtensor.structured import TensorSpec, all_ops
from devtensor.typed import ConstOut, CPUTensor

_counter = itertools.count()


def unique(prefix: str) -> str:
    """An op name no other test uses."""
    return f"{prefix}_t{next(_counter)}"


pytestmark = pytest.mark.usefixtures("remove_new_ops")


def cpu_array(t: Tensor) -> np.ndarray[Any, Any]:
    return np.array(t.cpu().numpy(), copy=True)


def define_mul2(name: str | None = None, *, method: bool = False) -> structured.StructuredOp:
    """A custom op: ``self * 2`` (CPU impl)."""

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    op = library.custom_op(name or unique("mul2"), out_may_be_input=True, method=method)(meta)

    @op.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 2, out=out.array)

    return op


# --- annotations -------------------------------------------------------------------------------------------

# meta name -> [(param, category, optional, kw_only, annotation text)]
EXPECTED: dict[str, list[tuple[str, str, bool, bool, str]]] = {
    "m_tensor": [("self", "Tensor", False, False, "Tensor")],
    "m_optional_tensor": [
        ("self", "Tensor", False, False, "Tensor"),
        ("other", "Tensor", True, False, "Tensor | None"),
        ("weight", "Tensor", True, False, "Tensor | None"),
    ],
    "m_list": [("tensors", "TensorList", False, False, "list[Tensor]")],
    "m_sequence": [
        ("tensors", "TensorList", False, False, "Sequence[Tensor]"),
        ("extra", "TensorList", True, False, "Sequence[Tensor] | None"),
    ],
    "m_typing_sequence": [("tensors", "TensorList", False, False, "Sequence[Tensor]")],
    "m_tuple": [("tensors", "TensorList", False, False, "tuple[Tensor, ...]")],
    "m_tensor_or_scalar": [
        ("self", "TensorOrScalar", False, False, "TensorOrScalar"),
        ("other", "TensorOrScalar", False, False, "TensorOrScalar"),
        ("bias", "TensorOrScalar", True, False, "TensorOrScalar | None"),
    ],
    "m_scalar": [
        ("self", "Tensor", False, False, "Tensor"),
        ("alpha", "Scalar", False, False, "Scalar"),
        ("beta", "Scalar", True, False, "Scalar | None"),
    ],
    "m_values": [
        ("self", "Tensor", False, False, "Tensor"),
        ("n", "other", False, False, "int"),
        ("x", "other", False, False, "float"),
        ("flag", "other", False, False, "bool"),
        ("name", "other", False, False, "str"),
        ("z", "other", False, False, "complex"),
    ],
    "m_optional_values": [
        ("self", "Tensor", False, False, "Tensor"),
        ("n", "other", True, False, "int | None"),
        ("x", "other", True, False, "float | None"),
        ("flag", "other", True, False, "bool | None"),
        ("name", "other", True, False, "str | None"),
        ("m", "other", True, False, "int | None"),
    ],
    "m_sequences": [
        ("self", "Tensor", False, False, "Tensor"),
        ("dims", "other", False, False, "Sequence[int]"),
        ("sizes", "other", True, False, "list[int] | None"),
        ("pads", "other", False, False, "tuple[int, ...]"),
        ("pair", "other", False, False, "tuple[int, int]"),
        ("scales", "other", False, False, "Sequence[float]"),
        ("dim", "other", True, False, "int | Sequence[int] | None"),
    ],
    "m_literal": [
        ("self", "Tensor", False, False, "Tensor"),
        ("mode", "other", False, False, "Literal['a', 'b']"),
        ("order", "other", True, False, "Literal[1, 2] | None"),
    ],
    "m_dtype": [("self", "Tensor", False, False, "Tensor"), ("dtype", "other", True, False, "DTypeLike | None")],
    "m_kw_only": [
        ("self", "Tensor", False, False, "Tensor"),
        ("other", "Tensor", False, False, "Tensor"),
        ("alpha", "other", False, True, "float"),
        ("out_dtype", "other", True, True, "str | None"),
    ],
}

MODULES = [pytest.param(custom_ops_plain, id="plain"), pytest.param(custom_ops_future, id="future")]


def _calls(m: Tensor) -> dict[str, tuple[tuple[Any, ...], dict[str, Any]]]:
    """One call per meta (on meta tensors: the front runs the meta function only)."""
    return {
        "m_tensor": ((m,), {}),
        "m_optional_tensor": ((m,), {"other": m, "weight": None}),
        "m_list": (([m, m],), {}),
        "m_sequence": (((m,),), {"extra": [m]}),
        "m_typing_sequence": (([m],), {}),
        "m_tuple": (((m, m),), {}),
        "m_tensor_or_scalar": ((2.0, m), {"bias": 1}),
        "m_scalar": ((m, 2), {}),
        "m_values": ((m, 1, 2.0, True, "x"), {}),
        "m_optional_values": ((m,), {"n": 3, "name": None}),
        "m_sequences": ((m,), {"dims": [0], "pads": (1, 1)}),
        "m_literal": ((m, "b"), {"order": 2}),
        "m_dtype": ((m,), {"dtype": "float32"}),
        "m_kw_only": ((m, m), {"alpha": 0.5}),
    }


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("meta_name", sorted(EXPECTED))
def test_annotation_forms(module: ModuleType, meta_name: str) -> None:
    """Every supported annotation gives the expected schema, with and without postponed annotations, and the
    generated front accepts a call."""
    meta = getattr(module, meta_name)
    op = library.custom_op(unique(meta_name))(meta)
    got = [(p.name, p.category, p.optional, p.kw_only, p.annotation) for p in op.schema.params]
    assert got == EXPECTED[meta_name]
    defaults = {p.name: p.default for p in op.schema.params if p.has_default}
    assert defaults == {
        p.name: p.default for p in inspect.signature(meta).parameters.values() if p.default is not p.empty
    }
    m = dt.empty(2, 3, device="meta")
    args, kwargs = _calls(m)[meta_name]
    result = op.functional(*args, **kwargs)
    assert result.device.type == "meta"


def test_plain_and_future_modules_share_one_body() -> None:
    marker = "# --- body shared with"
    bodies = []
    for module in (custom_ops_plain, custom_ops_future):
        assert module.__file__ is not None
        with open(module.__file__) as f:
            text = f.read()
        bodies.append(text.split(marker, 1)[1].split("\n", 1)[1])
    assert bodies[0] == bodies[1]


@pytest.mark.parametrize("module", MODULES)
def test_unsupported_annotations_name_parameter_and_nearest_type(module: ModuleType) -> None:
    for meta, param, nearest in module.UNSUPPORTED:
        name = unique(meta.__name__)
        with pytest.raises(TypeError) as info:
            library.custom_op(name)(meta)
        message = str(info.value)
        assert message.startswith(f"{name}:"), message
        assert f"'{param}'" in message, message
        assert f"nearest supported type: {nearest}" in message, message
        assert name not in {op.name for op in all_ops()}


def test_unresolvable_postponed_annotation_names_the_parameter() -> None:
    def meta(self: Tensor, k: int) -> TensorSpec:
        return self.shape, self.dtype

    meta.__annotations__ = {"self": "Tensor", "k": "NoSuchType", "return": "TensorSpec"}
    with pytest.raises(TypeError, match=r"parameter 'k'.*does not resolve"):
        library.custom_op(unique("unresolved"))(meta)


def test_definition_errors() -> None:
    def no_annotation(self: Tensor, k) -> TensorSpec:  # type: ignore[no-untyped-def]
        return self.shape, self.dtype

    def variadic(self: Tensor, *rest: int) -> TensorSpec:
        return self.shape, self.dtype

    def first_not_tensor(k: int, self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    def none_default(self: Tensor, k: int = None) -> TensorSpec:  # type: ignore[assignment]  # noqa: RUF013
        return self.shape, self.dtype

    def bad_literal_default(self: Tensor, mode: Literal["a", "b"] = "c") -> TensorSpec:  # type: ignore[assignment]
        return self.shape, self.dtype

    cases: list[tuple[Callable[..., TensorSpec], str]] = [
        (no_annotation, "has no annotation"),
        (variadic, r"\*args"),
        (first_not_tensor, "first parameter"),
        (none_default, "defaults to None"),
        (bad_literal_default, "not one of"),
    ]
    for meta, match in cases:
        with pytest.raises(TypeError, match=match):
            library.custom_op(unique("bad"))(meta)


# --- schema strings ------------------------------------------------------------------------------------------


def test_schema_string() -> None:
    schema = library.parse_schema(
        "softplus_s(Tensor self, float beta=1.0, float threshold=20.0, *, int[] dims=[0, 1], int[2] pad=1, "
        "str? mode=None, bool flag=False, Scalar alpha=-2.5e-1, ScalarType? dtype=None, Tensor? w=None) -> Tensor"
    )
    got = [(p.name, p.category, p.optional, p.kw_only, p.annotation, p.default) for p in schema.params]
    assert got == [
        ("self", "Tensor", False, False, "Tensor", inspect.Parameter.empty),
        ("beta", "other", False, False, "float", 1.0),
        ("threshold", "other", False, False, "float", 20.0),
        ("dims", "other", False, True, "Sequence[int]", (0, 1)),
        ("pad", "other", False, True, "Sequence[int]", (1, 1)),
        ("mode", "other", True, True, "str | None", None),
        ("flag", "other", False, True, "bool", False),
        ("alpha", "Scalar", False, True, "Scalar", -0.25),
        ("dtype", "other", True, True, "DTypeLike | None", None),
        ("w", "Tensor", True, True, "Tensor | None", None),
    ]
    strings = library.parse_schema("f(Tensor[] xs, str mode='a b', str? other=\"x\", float eps=inf) -> Tensor")
    assert [p.default for p in strings.params[1:]] == ["a b", "x", float("inf")]
    assert strings.params[0].category == "TensorList"


def test_custom_op_with_schema_string_runs_all_variants() -> None:
    name = unique("scaled")

    def meta(self, scale, *, shift):  # type: ignore[no-untyped-def]
        return self.shape, self.dtype

    op = library.custom_op(schema=f"{name}(Tensor self, float scale=2.0, *, float shift=0.5) -> Tensor", inplace=True)(
        meta
    )
    assert op.name == name

    @op.impl("cpu")
    def _(self: CPUTensor, scale: float, *, shift: float, out: ConstOut[CPUTensor]) -> None:
        np.copyto(out.array, self.array * scale + shift)

    x = dt.tensor([1.0, 2.0])
    assert op.functional(x).tolist() == [2.5, 4.5]
    assert op.functional(x, 3.0, shift=0.0).tolist() == [3.0, 6.0]
    assert op.inplace is not None
    op.inplace(x)
    assert x.tolist() == [2.5, 4.5]


@pytest.mark.parametrize(
    "text",
    [
        "f(Tensor self) -> Tensor junk",
        "f(Tensor self -> Tensor",
        "f(Tensor self) -> int",
        "f(Tensor(a!) self) -> Tensor",
        "f(Tensor self, dict d) -> Tensor",
        "f(Tensor self, int k=1.5) -> Tensor",
        "f(Tensor self, int k=None) -> Tensor",
        "f(Tensor self, str s='a\\'b') -> Tensor",
        "f(Tensor self, Tensor other=1) -> Tensor",
        "f(int k, Tensor self) -> Tensor",
        "f(Tensor self, int self) -> Tensor",
        "f(Tensor self, *, *, int k) -> Tensor",
        "f(Tensor self, int k=1, int j) -> Tensor",
        "f() -> Tensor",
        "f(Tensor self, float x=__import__) -> Tensor",
        "f(Tensor self, int[0] k) -> Tensor",
        "f(Tensor self, int[1.5] k) -> Tensor",
    ],
)
def test_malformed_schema_strings_are_rejected(text: str) -> None:
    with pytest.raises((ValueError, TypeError)):
        library.parse_schema(text)


def test_schema_string_must_match_meta_signature() -> None:
    def meta(self: Tensor, other: float) -> TensorSpec:
        return self.shape, self.dtype

    with pytest.raises(TypeError, match="same names and kinds"):
        library.custom_op(schema=f"{unique('mismatch')}(Tensor self, float scale) -> Tensor")(meta)


# --- safety ---------------------------------------------------------------------------------------------------

MALICIOUS_NAMES = [
    "x); import os; os.system('echo pwned')#",
    "x(): pass\nimport os\ndef y",
    "__class__",
    "__init__",
    "out",
    "ｏｕｔ",  # noqa: RUF001  fullwidth letters: NFKC-normalises to "out"
    "\u0430dd",  # a Cyrillic look-alike of "add"
    "class",
    "lambda",
    "",
    "1abc",
    "a b",
    "a.b",
    "_private",
    "isinstance",
    "type",
    "str",
    42,
]


@pytest.mark.parametrize("bad", MALICIOUS_NAMES, ids=repr)
def test_malicious_op_names_are_rejected(bad: Any) -> None:
    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    before = len(all_ops())
    with pytest.raises(TypeError if not isinstance(bad, str) else ValueError):
        library.custom_op(bad)(meta)
    with pytest.raises((ValueError, TypeError)):
        library.parse_schema(f"{bad}(Tensor self) -> Tensor")
    assert len(all_ops()) == before


@pytest.mark.parametrize("bad", [n for n in MALICIOUS_NAMES if isinstance(n, str) and n], ids=repr)
def test_malicious_parameter_names_are_rejected(bad: str) -> None:
    """Parameter names reach the generated source: a forged signature with any bad name is refused, and so is
    a schema string with one."""

    def meta(self: Tensor, k: int) -> TensorSpec:
        return self.shape, self.dtype

    params = list(inspect.signature(meta).parameters.values())
    forged = params[1].replace(name="k")
    object.__setattr__(forged, "_name", bad)  # inspect.Parameter validates names; forge past it
    meta.__signature__ = inspect.Signature([params[0], forged])  # type: ignore[attr-defined]
    meta.__annotations__ = {"self": Tensor, bad: int, "return": TensorSpec}
    with pytest.raises((ValueError, TypeError)):
        library.custom_op(unique("forged"))(meta)
    with pytest.raises(ValueError):
        library.parse_schema(f"f_{next(_counter)}(Tensor self, int {bad}) -> Tensor")


def test_string_defaults_are_held_as_objects_never_as_source() -> None:
    """A default is read from the schema's table as the object it is: no front is generated from text, so a
    string default cannot reach any source (the front's code is the one generic front's)."""
    name = unique("inject")
    payload = "'); import os; os.system('echo pwned') #"

    def meta(self, mode):  # type: ignore[no-untyped-def]
        return self.shape, self.dtype

    op = library.custom_op(schema=f'{name}(Tensor self, str mode="{payload}") -> Tensor')(meta)
    front = inspect.unwrap(op.functional)
    assert inspect.signature(front).parameters["mode"].default == payload
    assert front.__code__ is inspect.unwrap(dt.add).__code__
    assert op.schema.params[1].default == payload
    assert op.functional(dt.empty(2, device="meta")).shape == (2,)


def test_redefinition_needs_replace() -> None:
    name = unique("redef")
    first = define_mul2(name)
    with pytest.raises(ValueError, match="defined already"):
        define_mul2(name)

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    second = library.custom_op(name, replace=True)(meta)
    assert library.get_op(name) is second and second is not first
    with pytest.raises(NoKernelError):  # the new op has no kernels of the old one
        second.functional(dt.ones(2))


def test_builtin_and_view_ops_cannot_be_redefined_or_removed() -> None:
    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    for name in ("add", "reshape"):
        with pytest.raises(ValueError):
            library.custom_op(name, replace=True)(meta)
    with pytest.raises(ValueError):
        library.remove_op("add")
    assert dt.add(dt.ones(1), 1).tolist() == [2.0]


def test_methods_only_on_request_and_never_shadowing() -> None:
    op = define_mul2()
    assert not hasattr(Tensor, op.name)
    named = define_mul2(method=True)
    x = dt.tensor([1.0, 2.0])
    assert getattr(x, named.name)().tolist() == [2.0, 4.0]
    library.remove_op(named)
    assert not hasattr(Tensor, named.name)

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    for attr in ("numpy", "shape", "to"):
        with pytest.raises(ValueError, match="shadow"):
            library.custom_op(attr, method=True)(meta)
    assert isinstance(x.shape, tuple)


# --- variants --------------------------------------------------------------------------------------------------


def test_custom_op_variants_agree() -> None:
    name = unique("axpy")

    def meta(self: Tensor, other: Tensor, *, alpha: float = 1.0) -> TensorSpec:
        if self.shape != other.shape:
            raise ValueError(f"{name}: shapes differ")
        return self.shape, np.result_type(self.dtype, other.dtype)

    op = library.custom_op(name, out_may_be_input=True)(meta)

    @op.impl("cpu")
    def _(self: CPUTensor, other: CPUTensor, *, alpha: float, out: ConstOut[CPUTensor]) -> None:
        np.add(self.array * alpha, other.array, out=out.array)

    rng = np.random.default_rng(1)
    a_np, b_np = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    a, b = dt.from_numpy(a_np.copy()), dt.from_numpy(b_np.copy())
    expected = a_np * 0.5 + b_np
    functional = op.functional(a, b, alpha=0.5)
    out = dt.empty(3, 4)
    assert op.functional(a, b, alpha=0.5, out=out) is out
    assert op.inplace is not None
    inplace = op.inplace(a.clone(), b, alpha=0.5)
    for result in (functional, out, inplace):
        np.testing.assert_allclose(cpu_array(result), expected)
    assert (out.version, functional.version) == (1, 0)
    meta_result = op.functional(a.to("meta"), b.to("meta"))
    assert (meta_result.shape, meta_result.dtype) == ((3, 4), np.dtype(np.float64))
    # the common code comes for free: out dtype rules, partial overlap, device mismatch
    with pytest.raises(dt.CastingError):
        op.functional(a, b, out=dt.empty(3, 4, dtype=dt.int64))
    with pytest.raises(dt.MemoryOverlapError):
        op.inplace(a[:, 1:], a[:, :-1])
    with pytest.raises(ArgumentTypeError):
        op.functional(a, 1.0)
    assert library.check(op, [((a, b), {"alpha": 0.5}), ((a, a), {})]).ok


# --- overrides ------------------------------------------------------------------------------------------------


def test_override_handle_and_undo() -> None:
    op = define_mul2()
    x = dt.tensor([1.0, 2.0])

    def times3(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 3, out=out.array)

    def times4(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 4, out=out.array)

    h3 = library.override(op, "cpu", times3)
    assert op.functional(x).tolist() == [3.0, 6.0]
    with library.override(op.functional, DispatchKey.CPU, times4) as h4:
        assert "(active)" in repr(h4)
        assert op.functional(x).tolist() == [4.0, 8.0]
        assert op.inplace is not None
        assert op.inplace(x.clone()).tolist() == [4.0, 8.0]
    assert not h4.active
    assert op.functional(x).tolist() == [3.0, 6.0]
    assert h3.remove() is True
    assert h3.remove() is False and h4.remove() is False
    assert op.functional(x).tolist() == [2.0, 4.0]
    # removing an older override keeps the newer one on top
    h3 = library.override(op, "cpu", times3)
    h4 = library.override(op, "cpu", times4)
    h3.remove()
    assert op.functional(x).tolist() == [4.0, 8.0]
    h4.remove()
    assert op.functional(x).tolist() == [2.0, 4.0]


def test_override_of_a_builtin_and_on_meta() -> None:
    calls: list[str] = []

    def add_logged(
        self: CPUTensor | float, other: CPUTensor | float, *, alpha: float, out: ConstOut[CPUTensor]
    ) -> None:
        calls.append("add")
        np.add(getattr(self, "array", self), np.multiply(getattr(other, "array", other), alpha), out=out.array)

    x = dt.tensor([1.0, 2.0])
    with library.override(dt.add, "cpu", add_logged):
        assert (x + 1).tolist() == [2.0, 3.0]
    assert calls == ["add"]
    assert (x + 1).tolist() == [2.0, 3.0] and calls == ["add"]

    seen: list[tuple[int, ...]] = []

    def meta_add(self: Any, other: Any, *, alpha: Any, out: ConstOut[Any]) -> None:
        seen.append(out.shape)

    with library.override("add", "meta", meta_add):
        dt.add(dt.empty(3, device="meta"), 1)
    assert seen == [(3,)]


def test_override_signature_is_validated() -> None:
    op = define_mul2()

    def wrong(x: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        pass

    with pytest.raises(TypeError, match="parameters"):
        library.override(op, "cpu", wrong)
    with pytest.raises(KeyError):
        library.override("no_such_op_anywhere", "cpu", wrong)


def test_stale_impls_are_collected_not_registered_while_generating() -> None:
    """Inside collecting_stale_impls (the generator's import of a user package), an impl that does not match its op,
    through any registration form, is skipped and its message collected; outside, the same registration raises."""
    from devtensor.structured import KernelRegistrar
    from devtensor.structured.stale import collecting_stale_impls

    op = define_mul2()
    x = dt.tensor([1.0, 2.0])

    def stale(self: CPUTensor, scale: float, *, out: ConstOut[CPUTensor]) -> None:
        raise AssertionError("never registered")

    def stale_xp(xp: ModuleType, self: CPUTensor, scale: float, *, out: ConstOut[CPUTensor]) -> None:
        raise AssertionError("never registered")

    with collecting_stale_impls() as messages:
        assert op.impl("cpu")(stale) is stale
        op.register_kernel("cpu", stale)
        assert KernelRegistrar(op.name).cpu(stale) is stale
        assert KernelRegistrar(op.name).xp(stale_xp) is stale_xp
        assert KernelRegistrar(unique("gone")).cpu(stale) is stale
        # (the library functions return their impl unregistered instead of a handle here)
        assert typing.cast(object, library.register_kernel(op, "cpu", stale)) is stale
        assert typing.cast(object, library.override(op, "cpu", stale)) is stale
    assert len(messages) == 7, messages
    assert all("has parameters (self, scale, *out), expected (self, *out)" in m for m in messages[:3]), messages
    assert "has parameters (xp, self, scale, *out), expected (xp, self, *out)" in messages[3]
    assert "no op of this name is defined" in messages[4]
    np.testing.assert_array_equal(cpu_array(op.functional(x)), [2.0, 4.0])  # the original impl still serves
    with pytest.raises(TypeError, match="parameters"):
        KernelRegistrar(op.name).cpu(stale)
    with pytest.raises(ValueError, match="no op of this name"):
        KernelRegistrar(unique("gone")).cpu(stale)


def test_register_kernel_handle_restores_previous() -> None:
    op = define_mul2()
    x = dt.tensor([1.0])

    def times5(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 5, out=out.array)

    with library.register_kernel(op, "cpu", times5):
        assert op.functional(x).tolist() == [5.0]
    assert op.functional(x).tolist() == [2.0]


# --- unknown op names at every registry entry point ----------------------------------------------------------


def _cpu_impl(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
    pass


#: Each registry entry point taking an op or its name, with the name its errors give.
ENTRY_POINTS: list[tuple[str, Callable[[Any], object]]] = [
    ("get_op", library.get_op),
    ("override", lambda op: library.override(op, "cpu", _cpu_impl)),
    ("register_kernel", lambda op: library.register_kernel(op, "cpu", _cpu_impl)),
    ("remove_op", library.remove_op),
    ("check", lambda op: library.check(op, [])),
    ("get_op", structured.get_op),
]


@pytest.mark.parametrize(("entry", "call"), ENTRY_POINTS)
def test_an_unknown_op_name_is_a_devtensor_key_error_suggesting_near_names(
    entry: str, call: Callable[[Any], object]
) -> None:
    from devtensor.errors import DevtensorError, UnknownOpError

    with pytest.raises(UnknownOpError) as info:
        call("tranpose")
    assert isinstance(info.value, KeyError) and isinstance(info.value, DevtensorError)
    assert str(info.value).startswith(f"{entry}: no op named 'tranpose'; did you mean 'transpose'")
    with pytest.raises(UnknownOpError, match=rf"^{entry}: no op named 'no_such_op_xyz'$"):
        call("no_such_op_xyz")  # (nothing near it: no suggestion)
    if entry != "get_op" or call is library.get_op:
        with pytest.raises(ArgumentTypeError, match=rf"^{entry}: expected an op"):
            call(3.5)


def test_an_unknown_key_names_the_entry_point_and_argument() -> None:
    calls: list[tuple[str, Callable[[str], object]]] = [
        ("override", lambda k: library.override("neg", k, _cpu_impl)),
        ("register_kernel", lambda k: library.register_kernel("neg", k, _cpu_impl)),
    ]
    for entry, call in calls:
        with pytest.raises(ValueError, match=rf"^{entry}: argument 'key': unknown device type 'tpu'"):
            call("tpu")
        with pytest.raises(ValueError, match=rf"^{entry}: argument 'key': malformed device string ' cpu'"):
            call(" cpu")
    assert not library.get_op("neg").table.overrides


def test_removing_a_replaced_op_by_reference_names_remove_op() -> None:
    from devtensor.errors import UnknownOpError

    first = define_mul2()
    library.custom_op(first.name, replace=True, out_may_be_input=True)(first.meta)
    with pytest.raises(UnknownOpError, match=r"^remove_op: .*replaced"):
        library.remove_op(first)
    library.remove_op(first.name)


# --- view ops: get_op, override and register_kernel reach them as every op ---------------------------------------


def test_get_op_finds_view_ops() -> None:
    op = library.get_op("transpose")
    assert op is structured.get_op("transpose") and op.name == "transpose"
    assert library.get_op(op) is op and library.get_op(dt.transpose) is op
    with pytest.raises(KeyError):
        library.get_op("no_such_view_or_op")
    with pytest.raises(ValueError, match="view op"):
        library.remove_op("transpose")


def test_override_of_a_view_op_takes_effect_and_its_handle_undoes_it() -> None:
    base = dt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    seen: list[Any] = []
    kernel = library.get_op("transpose").table.kernels[DispatchKey.CPU]

    def logged(xp: ModuleType, array: Any, plan: Any) -> Any:
        seen.append((xp.__name__, plan))
        return kernel(xp, array, plan)

    handle = library.override("transpose", "cpu", logged)
    assert handle.kind == "override" and handle.op is library.get_op("transpose") and handle.active
    view = dt.transpose(base, 0, 1)
    assert seen == [("numpy", (1, 0))] and view.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    # the view front still makes a view: it shares the base's storage and version
    view.add_(1.0)
    assert base.version == view.version == 1 and base.tolist()[0] == [2.0, 3.0, 4.0]
    assert handle.remove() and not handle.remove()
    dt.transpose(base, 0, 1)
    assert len(seen) == 1
    with pytest.raises(TypeError, match="callable"):
        library.override("transpose", "cpu", "not a kernel")  # type: ignore[arg-type]


def test_view_op_overrides_stack_and_register_kernel_restores() -> None:
    base = dt.ones((2, 3))
    op = library.get_op("transpose")
    kernel = op.table.kernels[DispatchKey.CPU]

    def tagged(tag: str) -> Callable[..., Any]:
        def fn(xp: ModuleType, array: Any, plan: Any) -> Any:
            order.append(tag)
            return kernel(xp, array, plan)

        return fn

    order: list[str] = []
    first = library.override(op, "cpu", tagged("first"))
    second = library.override(dt.transpose, DispatchKey.CPU, tagged("second"))
    dt.transpose(base, 0, 1)
    first.remove()
    dt.transpose(base, 0, 1)
    second.remove()
    with library.register_kernel("transpose", "cpu", tagged("kernel")) as handle:
        assert handle.kind == "kernel" and op.table.kernels[DispatchKey.CPU] is handle.fn
        dt.transpose(base, 0, 1)
    assert op.table.kernels[DispatchKey.CPU] is kernel
    dt.transpose(base, 0, 1)
    assert order == ["second", "second", "kernel"]


# --- xp kernels: one body for several keys through library.register_kernel -----------------------------------


def define_negate() -> structured.StructuredOp:
    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    return library.custom_op(unique("negate"))(meta)


def test_register_kernel_accepts_an_xp_kernel_on_cpu_and_undoes_it() -> None:
    op = define_negate()
    modules: list[ModuleType] = []

    def negate(xp: ModuleType, self: Any, *, out: ConstOut[Any]) -> None:
        modules.append(xp)
        xp.negative(self.array, out=out.array)

    handle = library.register_kernel(op, "cpu", negate)
    assert handle.fn is negate
    assert op.functional(dt.tensor([1.0, -2.0])).tolist() == [-1.0, 2.0]
    assert modules == [np]
    handle.remove()
    assert DispatchKey.CPU not in op.table.kernels
    with pytest.raises(NoKernelError):
        op.functional(dt.tensor([1.0]))
    # stacked under a plain kernel: removing the xp one in any order restores what was there
    first = library.register_kernel(op, "cpu", negate)
    second = library.register_kernel(op, "cpu", negate)
    first.remove()
    assert op.functional(dt.tensor([3.0])).tolist() == [-3.0]
    second.remove()
    assert DispatchKey.CPU not in op.table.kernels


def test_register_kernel_xp_on_cuda_gets_the_cupy_module(fake_cupy: ModuleType) -> None:
    op = define_negate()
    modules: list[ModuleType] = []

    def negate(xp: ModuleType, self: Any, *, out: ConstOut[Any]) -> None:
        modules.append(xp)
        xp.negative(self.array, out=out.array)

    with library.register_kernel(op, "cuda", negate), library.register_kernel(op, "cpu", negate):
        result = op.functional(dt.tensor([1.0, -2.0], device="cuda"))
        np.testing.assert_array_equal(result.cpu().numpy(), [-1.0, 2.0])
        op.functional(dt.tensor([1.0]))
    assert modules == [fake_cupy, np]


def test_register_kernel_rejects_xp_in_the_wrong_place() -> None:
    op = define_negate()

    def late_xp(self: Any, xp: ModuleType, *, out: ConstOut[Any]) -> None:
        pass

    with pytest.raises(TypeError, match="parameters"):
        library.register_kernel(op, "cpu", late_xp)
    assert DispatchKey.CPU not in op.table.kernels


def test_overrides_under_concurrent_calls() -> None:
    """Threads call the op while another registers and undoes an override in a loop: every result is the
    kernel's or the override's, nothing raises, and once the loop is over calls use the kernel."""
    op = define_mul2()
    x_np = np.arange(64, dtype=np.float64)
    x = dt.from_numpy(x_np.copy())

    def times3(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 3, out=out.array)

    stop = threading.Event()
    errors: list[BaseException] = []
    seen = {"kernel": 0, "override": 0}
    lock = threading.Lock()

    def caller() -> None:
        try:
            while not stop.is_set():
                for _ in range(50):
                    y = cpu_array(op.functional(x))
                    if np.array_equal(y, x_np * 2):
                        kind = "kernel"
                    elif np.array_equal(y, x_np * 3):
                        kind = "override"
                    else:
                        raise AssertionError(f"unexpected result {y[:4]}")
                    with lock:
                        seen[kind] += 1
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: calls interleave with (un)registrations
    try:
        for i in itertools.count():
            handle = library.override(op, "cpu", times3)
            spin = time.perf_counter() + 50e-6
            while time.perf_counter() < spin:  # keep the override on for a moment while the callers run
                pass
            if i % 2:
                with handle:
                    pass
            else:
                handle.remove()
            handle.remove()
            with lock:
                both = seen["kernel"] > 0 and seen["override"] > 0
            if (i >= 300 and both) or time.monotonic() > deadline:
                break
    finally:
        stop.set()
        for t in threads:
            t.join()
        sys.setswitchinterval(interval)
    assert not errors, errors
    assert seen["kernel"] > 0 and seen["override"] > 0, seen
    assert not op.table.overrides
    assert np.array_equal(cpu_array(op.functional(x)), x_np * 2)


# --- registration handles: one type, the same behaviour for kernels, overrides and fallbacks ---------------------

HandleKind = Literal["kernel", "override", "fallback"]


@pytest.fixture(scope="module")
def handle_backend() -> library.OutOfTreeBackend:
    """An out-of-tree device type for the fallback handles (device types stay registered: one per module)."""
    return library.register_backend(unique("handletest"))


class Registrations:
    """Registers callables of one kind that fill the output with a value, and tells which value is in force."""

    def __init__(self, kind: HandleKind, backend: library.OutOfTreeBackend) -> None:
        self.kind = kind
        self.backend = backend
        self.op = library.custom_op(unique("handles"), out_may_be_input=True)(_same_shape_meta)
        if kind != "fallback":

            @self.op.impl("cpu")
            def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
                out.array[...] = -1.0  # the kernel that was there before any handle

    def register(self, value: float) -> library.RegistrationHandle:
        def fill(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
            out.array[...] = value

        def fill_fallback(op: structured.StructuredOp, *args: Any, out: ConstOut[Any], **kwargs: Any) -> None:
            out.array[...] = value

        if self.kind == "kernel":
            return library.register_kernel(self.op, "cpu", fill)
        if self.kind == "override":
            return library.override(self.op, "cpu", fill)
        return library.register_fallback(self.backend.name, fill_fallback)

    def in_force(self) -> float | None:
        """The value the op's call writes now; None when nothing serves it (no fallback left)."""
        device = "cpu" if self.kind != "fallback" else self.backend.name
        try:
            result = self.op.functional(dt.zeros(1, device=device))
        except NoKernelError:
            return None
        return float(result.cpu().tolist()[0])

    def original(self) -> float | None:
        return None if self.kind == "fallback" else -1.0


def _same_shape_meta(self: Tensor) -> TensorSpec:
    return self.shape, self.dtype


KINDS: tuple[HandleKind, ...] = ("kernel", "override", "fallback")


@pytest.mark.parametrize("kind", KINDS)
def test_handles_are_one_type_with_the_same_attributes(kind: HandleKind, handle_backend: Any) -> None:
    registrations = Registrations(kind, handle_backend)
    handle = registrations.register(1.0)
    assert type(handle) is library.RegistrationHandle
    assert handle.kind == kind and callable(handle.fn)  # active: its repr says so
    if kind == "fallback":
        assert handle.op is None and handle.key is handle_backend.key
        assert repr(handle) == f"<fallback for {handle_backend.key.name} (active)>"
    else:
        assert handle.op is registrations.op and handle.key is DispatchKey.CPU
        assert repr(handle) == f"<{kind} of {registrations.op.name} for CPU (active)>"
    assert registrations.in_force() == 1.0
    assert handle.remove() is True
    assert not handle.active and repr(handle).endswith("(removed)>")
    assert registrations.in_force() == registrations.original()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_handles_removed_in_any_order_leave_the_newest_remaining(
    kind: HandleKind, order: tuple[int, ...], handle_backend: Any
) -> None:
    registrations = Registrations(kind, handle_backend)
    handles = [registrations.register(float(value)) for value in (10, 20, 30)]
    assert registrations.in_force() == 30.0
    remaining = [10.0, 20.0, 30.0]
    for position in order:
        assert handles[position].remove() is True
        remaining.remove(float((position + 1) * 10))
        expected = remaining[-1] if remaining else registrations.original()
        assert registrations.in_force() == expected, (kind, order, position)


@pytest.mark.parametrize("kind", KINDS)
def test_handle_context_manager_and_double_remove(kind: HandleKind, handle_backend: Any) -> None:
    registrations = Registrations(kind, handle_backend)
    with registrations.register(5.0) as handle:
        assert handle.active and registrations.in_force() == 5.0
        with registrations.register(6.0):
            assert registrations.in_force() == 6.0
        assert registrations.in_force() == 5.0
        assert handle.remove() is True  # removing inside the block: the exit then does nothing
    assert registrations.in_force() == registrations.original()
    assert handle.remove() is False and handle.remove() is False
    assert registrations.in_force() == registrations.original()


def test_removing_a_kernel_handle_keeps_a_kernel_registered_outside_handles() -> None:
    op = define_mul2()
    x = dt.tensor([1.0])

    def times5(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 5, out=out.array)

    def times7(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 7, out=out.array)

    handle = library.register_kernel(op, "cpu", times5)
    op.impl("cpu")(times7)  # a plain registration, made after the handle's
    assert handle.remove() is True
    assert op.functional(x).tolist() == [7.0]


def test_a_failed_registration_changes_nothing() -> None:
    op = define_mul2()

    def wrong(x: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        pass

    with pytest.raises(TypeError, match="parameters"):
        library.register_kernel(op, "cpu", wrong)
    with pytest.raises(TypeError, match="callable"):
        library.register_fallback("cpu", "not callable")  # type: ignore[arg-type]
    assert op.functional(dt.tensor([1.0])).tolist() == [2.0]
    assert not op.table.overrides


# --- dispatch modes ---------------------------------------------------------------------------------------------


def test_modes_record_and_count_calls() -> None:
    op = define_mul2()
    x = dt.tensor([1.0, 2.0])
    out = dt.empty(2)
    lines: list[str] = []
    with library.LoggingMode(sink=lines.append) as log, library.CountingMode() as counter:
        y = op.functional(x)
        op.functional(x, out=out)
        assert op.inplace is not None
        op.inplace(y)
        dt.add(x, 1)
    assert log.names == [op.name, f"{op.name}.out", f"{op.name}_", "add"]
    assert counter.counts == {op.name: 1, f"{op.name}.out": 1, f"{op.name}_": 1, "add": 1}
    assert lines[0] == f"{op.name}(Tensor([2], float64, cpu))"
    assert log.calls[1].kwargs["out"] is out
    assert y.tolist() == [4.0, 8.0]
    assert library.active_modes() == ()

    class Doubling(library.DispatchMode):
        """A mode that changes results: runs every op twice on its own output (functional only)."""

        def __dispatch__(
            self, op: Any, variant: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            return func(func(*args, **kwargs))

    with Doubling():
        assert op.functional(x).tolist() == [4.0, 8.0]


# --- the checker ------------------------------------------------------------------------------------------------


def _unary(name: str, meta: Callable[..., TensorSpec], kernel: Callable[..., None]) -> structured.StructuredOp:
    op = library.custom_op(name, out_may_be_input=True)(meta)
    op.register_kernel("cpu", kernel)
    return op


def _same(self: Tensor) -> TensorSpec:
    return self.shape, self.dtype


SAMPLES: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((dt.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]]),), {}),
    ((dt.tensor([4.0]),), {}),
]


def test_check_passes_good_ops_and_builtins() -> None:
    op = define_mul2()
    report = library.check(op, SAMPLES, reference=lambda a: a * 2)
    assert report.ok, str(report)
    assert {(key, variant) for _, key, variant in report.runs} >= {
        ("cpu", "functional"),
        ("cpu", "out"),
        ("cpu", "inplace"),
        ("meta", "functional"),
        ("meta", "out"),
    }
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert library.check(dt.add, [((x, x), {"alpha": 2})], reference=lambda a, b, alpha: a + alpha * b).ok
    assert library.check(dt.sum, [((x,), {"dim": 1})], reference=lambda a, dim: a.sum(axis=dim)).ok
    assert library.check(dt.matmul, [((x, x), {})]).ok


def test_check_catches_a_wrong_meta_shape() -> None:
    def rowsum_meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype  # wrong: the row sums have shape self.shape[:1]

    def rowsum(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.sum(self.array, axis=1, out=out.array)

    op = library.custom_op(unique("rowsum"), inplace=False)(rowsum_meta)
    op.register_kernel("cpu", rowsum)
    report = library.check(op, SAMPLES[:1])
    assert "meta" in report.kinds(), str(report)
    with pytest.raises(AssertionError, match=r"\[meta\]"):
        library.check(op, SAMPLES[:1], raise_on_error=True)


def test_check_catches_a_wrong_meta_dtype_with_a_reference() -> None:
    def meta(self: Tensor) -> TensorSpec:
        return self.shape, np.dtype(np.float32)  # wrong: the computation is float64

    def kernel(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.exp(self.array, out=out.array)  # casts silently (same_kind) into the float32 output

    op = _unary(unique("exp32"), meta, kernel)
    assert library.check(op, SAMPLES).ok  # self-consistent...
    report = library.check(op, SAMPLES, reference=np.exp)
    assert "meta" in report.kinds(), str(report)  # ...but not what the computation gives


def test_check_catches_a_data_dependent_meta() -> None:
    def meta(self: Tensor) -> TensorSpec:
        n = int(np.count_nonzero(self.numpy()))  # reads data: fails on meta tensors
        return (n,), self.dtype

    def kernel(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.copyto(out.array, self.array[self.array != 0])

    op = library.custom_op(unique("nonzero"), inplace=False)(meta)
    op.register_kernel("cpu", kernel)
    report = library.check(op, SAMPLES)
    assert any(p.kind == "meta" and p.key == "Meta" for p in report.problems), str(report)


def test_check_catches_a_kernel_mutating_an_input() -> None:
    def kernel(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, 2, out=self.array)  # mutates its input
        np.copyto(out.array, self.array)

    op = _unary(unique("mutating"), _same, kernel)
    report = library.check(op, SAMPLES)
    assert "mutation" in report.kinds(), str(report)
    assert any("args[0] was modified" in p.message for p in report.problems)


def test_check_catches_a_kernel_that_forgets_its_output() -> None:
    def kernel(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        flat = out.array.reshape(-1)
        flat[: flat.size // 2] = self.array.reshape(-1)[: flat.size // 2]  # the second half is never written

    op = _unary(unique("lazy"), _same, kernel)
    report = library.check(op, SAMPLES)
    assert "unwritten" in report.kinds(), str(report)


def test_check_catches_wrong_version_bumps_and_disagreeing_variants() -> None:
    def bumping(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        self.add_(0)  # writes nothing new, but bumps the input's version counter
        np.copyto(out.array, self.array)

    report = library.check(_unary(unique("bumping"), _same, bumping), SAMPLES)
    assert "version" in report.kinds(), str(report)

    calls = itertools.count()

    def drifting(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        np.add(self.array, next(calls), out=out.array)  # a different answer on every call

    report = library.check(_unary(unique("drifting"), _same, drifting), SAMPLES)
    assert "values" in report.kinds(), str(report)


def test_check_report_api() -> None:
    op = define_mul2()
    report = library.check(op, [library.Sample((dt.ones(3),))], keys=["cpu"])
    assert report.ok and {key for _, key, _ in report.runs} == {"cpu"}
    assert "0 problem(s)" in str(report)
    report.raise_if_failed()
    with pytest.raises(ValueError, match="sample"):
        library.check(op, [dt.ones(3)])  # type: ignore[list-item]


def test_op_module_is_the_defining_module() -> None:
    """An op belongs to the module applying the decorator, even with a meta function made by a devtensor
    helper: codegen (which declares devtensor's own ops) must not pick it up, and it stays removable."""
    from devtensor.meta import binary_ufunc_meta

    name = unique("helper_meta")
    op = library.custom_op(name, out_may_be_input=True)(binary_ufunc_meta(name, np.multiply))
    assert op.module == __name__
    assert library.custom_op(unique("explicit"), module="mypkg.ops")(_same).module == "mypkg.ops"
    op.register_kernel("cpu", library.get_op("mul").table.kernels[DispatchKey.CPU])
    assert op.functional(dt.tensor([1.0, 2.0]), 3).tolist() == [3.0, 6.0]
    library.remove_op(op)
    with pytest.raises(KeyError):
        library.get_op(name)


def test_a_meta_that_is_a_callable_object_without_a_dict() -> None:
    """A meta function may be any callable, one with ``__slots__`` (no ``__dict__``) too: defining the op and
    registering its CPU kernel read no attribute dict of it."""

    class Meta:
        __slots__ = ()

        def __call__(self, x: Tensor) -> TensorSpec:
            return x.shape, x.dtype

    name = unique("slotted_meta")
    op = library.custom_op(name, schema=f"{name}(Tensor x) -> Tensor")(Meta())

    def kernel(x: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = x.array * 2

    op.register_kernel("cpu", kernel)
    assert op.functional(dt.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
