"""The compiled core's general lane (``devtensor/_core_general.h``): the common call of any structured op, built-in
or custom, from the op's tables. It must answer as the op's Python front answers (results, dtypes, versions,
identities, errors and warnings), run the meta function once per call whichever way the call goes, and leave every
other call to the Python front."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from itertools import count
from typing import Any, Literal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled_core import _outcome, _python

import devtensor as dt
from devtensor import Tensor, library
from devtensor.errors import ArgumentTypeError, ArgumentValueError
from devtensor.structured import PlannedSpec, TensorSpec, core
from devtensor.tensor import TensorOrScalar
from devtensor.typed import ConstOut, CPUTensor

needs_core = pytest.mark.skipif(core.CORE is None, reason=f"the compiled core is not in use: {core.core_status()}")

_names = count()
META_CALLS: list[int] = [0]


def _scaled_op() -> Any:
    """A custom op with a tensor, a tensor-or-number, an optional tensor, and keyword-only number, bool and Literal
    parameters; its meta function counts its calls."""

    def meta(
        self: Tensor,
        other: TensorOrScalar,
        weight: Tensor | None = None,
        *,
        scale: float = 1.0,
        clip: bool = False,
        mode: Literal["add", "sub"] = "add",
    ) -> TensorSpec:
        META_CALLS[0] += 1
        shape = self.shape if not isinstance(other, Tensor) else np.broadcast_shapes(self.shape, other.shape)
        if weight is not None:
            shape = np.broadcast_shapes(shape, weight.shape)
        return tuple(shape), self.dtype

    op = library.custom_op(f"general_scaled_{next(_names)}", out_may_be_input=True)(meta)

    @op.impl("cpu")
    def _(
        self: CPUTensor,
        other: CPUTensor | int | float | complex | bool,
        weight: CPUTensor | None = None,
        *,
        scale: float = 1.0,
        clip: bool = False,
        mode: Literal["add", "sub"] = "add",
        out: ConstOut[CPUTensor],
    ) -> None:
        b = other.array if isinstance(other, Tensor) else other
        r = self.array + b if mode == "add" else self.array - b
        if weight is not None:
            r = r * weight.array
        np.multiply(r, scale, out=out.array, casting="unsafe")
        if clip:
            np.clip(out.array, -1, 1, out=out.array)

    return op


def _python_frames(fn: Callable[[], Any]) -> list[str]:
    """The names of the Python fronts (sources named ``<devtensor...>``) that ran during ``fn()``."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith("<devtensor"):
            seen.append(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


@needs_core
def test_ops_without_a_kind_lane_and_custom_ops_run_no_python_front() -> None:
    a = dt.tensor(np.arange(6.0).reshape(2, 3))
    b = dt.ones((2, 3))
    out = dt.empty((2, 3))
    c: Any = a  # (a CPU tensor, for the device binding)
    op = _scaled_op()
    calls: list[Callable[[], Any]] = [
        lambda: dt.where(a > 2, a, b),
        lambda: dt.where(a > 2, a, b, out=out),
        lambda: dt.clamp(a, 0.0, 4.0),
        lambda: a.clamp_(0.0, 9.0),
        lambda: op.functional(a, 2.0, b, scale=0.5),
        lambda: op.functional(a, b, out=out, mode="sub"),
        lambda: op.inplace(a, 1.0, clip=True),
        lambda: dt.cpu.where(c > 2, c, c),
        lambda: dt.add(dt.ones(3, device="meta"), 2.0),  # (the meta device: no kernel, the kind lane's fallback)
    ]
    for call in calls:
        call()
        call()  # (the first call checks out= and self writable, through the Python front)
        assert _python_frames(call) == []


@needs_core
def test_the_meta_function_runs_once_per_call_whichever_way_the_call_goes() -> None:
    op = _scaled_op()
    a = dt.tensor(np.arange(4.0))
    calls: list[Callable[[], Any]] = [
        lambda: op.functional(a, 1.0),  # the lane
        lambda: op.functional(a, np.float64(1.0)),  # a NumPy scalar: the Python front
        lambda: op.functional(a, np.ones(4)),  # a NumPy array: converted, then the front again
        lambda: op.functional(a, a, out=dt.empty(4)),  # out= not yet checked writable: the Python front
        lambda: op.functional(a, 2, out=dt.empty(7)),  # out= resized (with its warning)
        lambda: op.inplace(dt.tensor(np.arange(4.0)), 1.0),
        lambda: op.inplace(a, a),  # self passed again: the Python front's overlap rules
        lambda: op.functional(a, 1.0, clip=True, mode="sub"),
    ]
    warm = dt.empty(4)
    op.functional(a, 1.0, out=warm)
    calls.append(lambda: op.functional(a, 1.0, out=warm))  # out= that fits: the lane
    for call in calls:
        META_CALLS[0] = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
        assert META_CALLS[0] == 1
    META_CALLS[0] = 0
    with pytest.raises(ArgumentValueError, match="mode"):
        op.functional(a, 1.0, mode="mul")  # a Literal out of its values: refused before the meta function
    with pytest.raises(ArgumentTypeError, match="clip"):
        op.functional(a, 1.0, clip=1)
    assert META_CALLS[0] == 0


_VALUES: list[Callable[[], Any]] = [
    lambda: dt.tensor(np.arange(4.0)),
    lambda: dt.tensor(np.arange(4, dtype=np.float32)),
    lambda: dt.tensor(np.arange(8.0).reshape(2, 4)),
    lambda: dt.tensor(np.arange(4)),
    lambda: 2.0,
    lambda: 3,
    lambda: True,
    lambda: np.float32(2.0),
    lambda: np.arange(4.0),
    lambda: None,
    lambda: "x",
    lambda: dt.ones(4, device="meta"),
]
_KEYWORDS = st.fixed_dictionaries(
    {},
    optional={
        "scale": st.sampled_from([0.5, 2, None, "s", np.float64(2.0)]),
        "clip": st.sampled_from([True, False, 1, np.True_, None]),
        "mode": st.sampled_from(["add", "sub", "mul", 3]),
    },
)
# (zeros, not empty: an out an error leaves unwritten is compared byte for byte)
_OUTS: list[Callable[[], Any] | None] = [
    None,
    lambda: dt.zeros(4),
    lambda: dt.zeros(4, dtype=dt.float32),
    lambda: dt.zeros(4, dtype=dt.int64),
    lambda: dt.zeros(2),
    lambda: dt.zeros(4, device="meta"),
    lambda: dt.from_numpy(_readonly(4)),
    lambda: np.zeros(4),
]


def _readonly(n: int) -> np.ndarray[Any, Any]:
    array = np.zeros(n)
    array.flags.writeable = False
    return array


_OP = _scaled_op()


@needs_core
@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(range(len(_VALUES))),
    st.sampled_from(range(len(_VALUES))),
    st.sampled_from([None, 0, 2]),
    _KEYWORDS,
    st.sampled_from(range(len(_OUTS))),
    st.booleans(),
    st.sampled_from(["ignore", "raise"]),
    st.booleans(),
)
def test_custom_op_calls_agree_with_the_python_front(
    i: int,
    j: int,
    w: int | None,
    keywords: dict[str, Any],
    o: int,
    inplace: bool,
    fp: Literal["ignore", "raise"],
    checked: bool,
) -> None:
    """Any mix of good and bad arguments, out=, inplace, and floating-point errors raised: the compiled front
    (the general lane where it takes the call) answers as the Python front. ``checked``: the out= or inplace self
    comes marked checked writable (as after an earlier call), so the lane takes it; a read-only one is then memory
    made read-only behind devtensor's back, which both fronts find when the write fails."""
    make_out = _OUTS[o]

    def make() -> tuple[list[Any], dict[str, Any]]:
        args = [_VALUES[i](), _VALUES[j]()]
        if w is not None:
            args.append(_VALUES[w]())
        kwargs = dict(keywords)
        if make_out is not None and not inplace:
            kwargs["out"] = make_out()
        target = args[0] if inplace else kwargs.get("out")
        if checked and isinstance(target, Tensor):
            target._write_checked = True
        return args, kwargs

    front = _OP.inplace if inplace else _OP.functional
    with np.errstate(all=fp):
        for _ in range(2):
            assert _outcome(front, make) == _outcome(_python(front), make)


@needs_core
@pytest.mark.parametrize(
    "spec",
    [
        [(4,), np.dtype(np.float64)],
        ((4.0,), np.dtype(np.float64)),
        ((np.int64(4),), np.dtype(np.float64)),
        ((-1,), np.dtype(np.float64)),
        ((4,), None),
        ((4,), np.dtype("U3")),
        ((4,), np.float64),
        ((4,), "float32"),
        ((4,), np.dtype(np.float64), 1),
        ((4,), [1]),  # (an unhashable dtype: the same error on the first call and every later one)
        ((4, [1]), np.float32),  # (an unhashable dim: the full check's error, not the shape memo's TypeError)
        (([4],), np.float32),
        [4],
    ],
    ids=repr,
)
def test_custom_meta_results_are_checked_as_in_the_python_front(spec: Any) -> None:
    def meta(self: Tensor) -> TensorSpec:
        return spec  # type: ignore[no-any-return]

    op = library.custom_op(f"general_spec_{next(_names)}", out_may_be_input=True)(meta)

    @op.impl("cpu")
    def _(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = 1

    def make() -> tuple[list[Any], dict[str, Any]]:
        return [dt.zeros(4)], {}

    outcomes = [(_outcome(op.functional, make), _outcome(_python(op.functional), make)) for _attempt in range(3)]
    assert all(lane == python == outcomes[0][0] for lane, python in outcomes)
    error = outcomes[0][0][1]
    assert error is None or issubclass(error[0], (ArgumentTypeError, ArgumentValueError)), error


@needs_core
def test_a_plan_reaches_the_kernel_through_the_general_lane() -> None:
    def meta(self: Tensor, dim: int = 0) -> PlannedSpec[int]:
        d = dim % self.ndim
        return PlannedSpec(self.shape[:d] + self.shape[d + 1 :], self.dtype, d)

    op = library.custom_op(f"general_plan_{next(_names)}")(meta)
    seen: list[int] = []

    @op.impl("cpu")
    def _(self: CPUTensor, dim: int = 0, *, plan: int, out: ConstOut[CPUTensor]) -> None:
        seen.append(plan)
        np.sum(self.array, axis=plan, out=out.array)

    x = dt.tensor(np.arange(6.0).reshape(2, 3))
    for _attempt in range(2):
        assert op.functional(x, -1).tolist() == [3.0, 12.0]
    assert _python_frames(lambda: op.functional(x, -1)) == []
    assert seen == [1, 1, 1]


# --- the view lane ------------------------------------------------------------------------------------------------


def _view_state(result: Any, base: Any) -> Any:
    """A view's result as the tests compare it: its state, and whether it shares ``base``'s storage record."""
    if isinstance(result, tuple):
        return tuple(_view_state(r, base) for r in result)
    shared = isinstance(result, Tensor) and isinstance(base, Tensor) and result._storage is base._storage
    return (_outcome(lambda: result, lambda: ([], {}))[0], shared)


def _view_outcome(fn: Callable[..., Any], make: Callable[[], tuple[list[Any], dict[str, Any]]]) -> Any:
    args, kwargs = make()
    try:
        result = fn(*args, **kwargs)
    except Exception as e:  # (compared by type and message)
        return (type(e), str(e))
    return _view_state(result, args[0] if args else None)


_VIEW_OPS = sorted(op.name for op in dt.views.all_view_ops())


@needs_core
@pytest.mark.parametrize("name", _VIEW_OPS)
def test_view_fronts_answer_every_sample_as_the_python_fronts(name: str) -> None:
    """Each view op's samples, functional and (where the op has one) its varargs method with the sizes spread out,
    through the compiled front and its Python front: results, shapes, dtypes, storage shared, errors."""
    from op_samples import OPS

    vop: Any = library.get_op(name)
    for sample in OPS[name].samples:

        def make(sample: Any = sample) -> tuple[list[Any], dict[str, Any]]:
            args, kwargs = sample.make("cpu")
            return list(args), dict(kwargs)

        for _attempt in range(2):
            assert _view_outcome(vop.functional, make) == _view_outcome(_python(vop.functional), make), sample.id
        method = vop.method
        args, kwargs = make()
        if method is not None and method is not vop.functional and len(args) == 2 and not kwargs:
            sizes = args[1]
            if isinstance(sizes, (tuple, list)):

                def spread(sizes: Any = sizes) -> tuple[list[Any], dict[str, Any]]:
                    base, _ = make()
                    return [base[0], *sizes], {}

                assert _view_outcome(method, spread) == _view_outcome(_python(method), spread), sample.id


@needs_core
@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([(2, 3, 4), (6,), (1, 6, 1), (0, 3), ()]),
    st.lists(st.sampled_from([-1, 0, 1, 2, 3, 4, 6, 24, 2.0, None, np.int64(2), "x"]), max_size=4),
    st.sampled_from(["reshape", "view", "permute", "transpose", "squeeze", "unsqueeze", "expand", "flatten"]),
    st.sampled_from(["C", "T", "step"]),
    st.booleans(),
)
def test_view_calls_agree_with_the_python_front(
    shape: tuple[int, ...], sizes: list[Any], name: str, layout: str, spread: bool
) -> None:
    """Any sizes (good, bad, of other types) through a view op's functional and varargs method, on contiguous,
    transposed and strided bases: the compiled front answers as the Python front."""
    vop: Any = library.get_op(name)

    def base() -> Any:
        x = dt.tensor(np.arange(float(np.prod(shape) * 2)).reshape((2, *shape)))[0]
        if layout == "T" and len(shape) >= 2:
            return x.transpose(0, 1)
        if layout == "step" and shape and shape[0] > 1:
            return dt.tensor(np.arange(float(np.prod(shape) * 2)).reshape((shape[0] * 2, *shape[1:])))[::2]
        return x

    def functional() -> tuple[list[Any], dict[str, Any]]:
        if name in ("transpose",):
            return [base(), *sizes[:2]], {}
        if name in ("squeeze", "unsqueeze", "flatten"):
            return [base(), *sizes[:1]], {}
        return [base(), tuple(sizes)], {}

    assert _view_outcome(vop.functional, functional) == _view_outcome(_python(vop.functional), functional)
    method = vop.method
    if method is not None and method is not vop.functional:

        def method_call() -> tuple[list[Any], dict[str, Any]]:
            return ([base(), *sizes] if spread else [base(), tuple(sizes)]), {}

        assert _view_outcome(method, method_call) == _view_outcome(_python(method), method_call)


# --- the direct path through the general lane -----------------------------------------------------------------------

_BIG = 3e38
_DIRECT_CALLS = ["addmm out", "sub alpha", "add_ alpha", "sum out", "softmax out", "relu_", "mul int", "matmul out"]


@needs_core
@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(_DIRECT_CALLS),
    st.sampled_from([np.float32, np.float64, np.float16]),
    st.sampled_from(["ignore", "raise", "warn"]),
    st.sampled_from([1.0, _BIG]),
    st.booleans(),
)
def test_direct_calls_agree_with_the_python_front(
    call: str, dtype: Any, fp: Literal["ignore", "raise", "warn"], scale: float, checked: bool
) -> None:
    """The ops' direct path (their one NumPy call while the built-in kernel is the handler), taken by the general
    lane for out= and inplace calls and for the calls the kind lanes leave: the same values, versions, errors and
    warnings as the Python front's, floating-point conditions raised included (written, then raised)."""

    def tensor(shape: tuple[int, ...]) -> Any:
        values = np.linspace(-2.0, 2.0, int(np.prod(shape))).reshape(shape) * scale
        with np.errstate(all="ignore"):
            return dt.tensor(values.astype(dtype))

    def out(shape: tuple[int, ...]) -> Any:
        t = dt.zeros(shape, dtype=dt.float32 if dtype is np.float16 else dtype)
        t._write_checked = checked
        return t

    makers: dict[str, tuple[Any, Callable[[], tuple[list[Any], dict[str, Any]]]]] = {
        "addmm out": (dt.addmm, lambda: ([tensor((3,)), tensor((3, 3)), tensor((3, 3))], {"out": out((3, 3))})),
        "sub alpha": (dt.sub, lambda: ([tensor((4,)), tensor((4,))], {"alpha": 1e30})),
        "add_ alpha": (dt.add_, lambda: ([tensor((4,)), tensor((4,))], {"alpha": 2.5e30})),
        "sum out": (dt.sum, lambda: ([tensor((3, 4)), 0], {"out": out((4,))})),
        "softmax out": (dt.softmax, lambda: ([tensor((3, 4)), 1], {"out": out((3, 4))})),
        "relu_": (dt.relu_, lambda: ([tensor((4,))], {})),
        "mul int": (dt.mul, lambda: ([tensor((4,)), 2**70], {})),
        "matmul out": (dt.matmul, lambda: ([tensor((3, 3)), tensor((3, 3))], {"out": out((3, 3))})),
    }
    front, make = makers[call]
    with np.errstate(all=fp), warnings.catch_warnings():
        warnings.simplefilter("always")
        for _attempt in range(2):
            assert _outcome(front, make) == _outcome(_python(front), make)


def _damaged(how: str) -> Any:
    """A CPU tensor whose record was damaged behind devtensor's back (a field deleted or replaced), or one made by
    ``object.__new__`` with no field set."""
    t: Any = dt.ones(3)
    if how == "new":
        return object.__new__(type(t))
    if how == "device":
        t._device = "cpu"
    elif how == "storage":
        t._storage = "s"
    else:
        delattr(t, how)
    return t


@needs_core
@pytest.mark.parametrize("how", ["new", "device", "storage", "_storage", "_device", "_array", "_shape", "_dtype"])
def test_a_damaged_tensor_is_left_to_the_python_front(how: str) -> None:
    """The lanes read a tensor's fields unchecked: a damaged tensor (self of a view, an input, an out=, an inplace
    self) must reach the Python front, which fails on it as Python code does, not crash the process (the view
    lane's reshape/permute and the general lane's out= path read a missing or foreign field)."""
    op = _scaled_op()
    a, out = dt.ones(3), dt.zeros(3)
    op.functional(a, a, out=out)
    calls: list[tuple[Callable[..., Any], Callable[[], tuple[list[Any], dict[str, Any]]]]] = [
        (dt.reshape, lambda: ([_damaged(how), (3,)], {})),
        (dt.permute, lambda: ([_damaged(how), (0,)], {})),
        (Tensor.reshape, lambda: ([_damaged(how), 3], {})),
        (op.functional, lambda: ([_damaged(how), a], {})),
        (op.functional, lambda: ([a, _damaged(how)], {"out": out})),
        (op.functional, lambda: ([a, a], {"out": _damaged(how)})),
        (op.inplace, lambda: ([_damaged(how), a], {})),
        (dt.add, lambda: ([_damaged(how), a], {"out": out})),
        (dt.sum, lambda: ([_damaged(how)], {})),
    ]

    def error(fn: Callable[..., Any], make: Callable[[], tuple[list[Any], dict[str, Any]]]) -> Any:
        args, kwargs = make()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(*args, **kwargs)
        except Exception as e:  # (compared by type and message)
            return type(e), str(e)
        return None

    for front, make in calls:
        assert error(front, make) == error(_python(front), make)


def _family_custom_ops() -> tuple[Any, Any]:
    """Custom ops defined from the ufunc family's meta functions with the built-in ``mul``'s and ``exp``'s CPU
    kernels (plain ufunc kernels): only the definition path differs from the built-in ops."""
    from devtensor.meta import binary_ufunc_meta, unary_ufunc_meta

    mul, exp = library.get_op("mul"), library.get_op("exp")
    n = next(_names)
    cmul = library.custom_op(f"family_mul_{n}", out_may_be_input=True, schema=mul.schema)(
        binary_ufunc_meta(f"family_mul_{n}", np.multiply)
    )
    cmul.register_kernel("cpu", mul.table.kernels[dt.DispatchKey.CPU])
    cexp = library.custom_op(f"family_exp_{n}", out_may_be_input=True, schema=exp.schema)(
        unary_ufunc_meta(f"family_exp_{n}", np.exp)
    )
    cexp.register_kernel("cpu", exp.table.kernels[dt.DispatchKey.CPU])
    return cmul, cexp


def _family_calls(mul: Any, mul_: Any, exp: Any, exp_: Any) -> list[Callable[[], tuple[list[Any], dict[str, Any]]]]:
    """Calls of a mul-like and an exp-like op (functional and inplace fronts given), each making fresh arguments."""

    def f32(*shape: int) -> Tensor:
        return dt.tensor(np.linspace(-2.0, 2.0, int(np.prod(shape))).reshape(shape).astype(np.float32))

    def i8() -> Tensor:
        return dt.tensor(np.arange(-4, 4, dtype=np.int8))

    return [
        lambda: ([mul, f32(3, 4), f32(4)], {}),
        lambda: ([mul, f32(3), 2.5], {}),
        lambda: ([mul, 2, i8()], {}),
        lambda: ([mul, i8(), 300], {}),  # (out of int8's range: the meta's ScalarOverflowError)
        lambda: ([mul, i8(), f32(8)], {}),
        lambda: ([mul, f32(3), f32(3)], {"out": dt.empty(3)}),
        lambda: ([mul, f32(3), 2.0], {"out": dt.empty(5)}),  # (resized, with its warning)
        lambda: ([mul, f32(2, 3), f32(3, 2)], {}),  # (shapes that do not broadcast)
        lambda: ([mul_, f32(3), 4.0], {}),
        lambda: ([mul_, i8(), 2.5], {}),  # (a float into int8 in place: refused)
        lambda: ([exp, f32(2, 2)], {}),
        lambda: ([exp, i8()], {}),
        lambda: ([exp, f32(4)], {"out": dt.empty(4, dtype=dt.float64)}),
        lambda: ([exp_, f32(4)], {}),
    ]


def _call_first(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


def test_a_custom_op_on_the_ufunc_family_answers_as_the_built_in_op() -> None:
    cmul, cexp = _family_custom_ops()
    ours = _family_calls(cmul.functional, cmul.inplace, cexp.functional, cexp.inplace)
    builtin = _family_calls(dt.mul, dt.mul_, dt.exp, dt.exp_)
    for make, make_builtin in zip(ours, builtin, strict=True):
        got = _outcome(_call_first, make)
        want = _outcome(_call_first, make_builtin)
        names = str(got).replace(cmul.name, "mul").replace(cexp.name, "exp")
        assert names == str(want)


@needs_core
def test_a_custom_op_on_the_ufunc_family_takes_the_built_in_lanes() -> None:
    from devtensor.meta import DIRECT

    cmul, cexp = _family_custom_ops()
    builtin_mul, builtin_exp = library.get_op("mul"), library.get_op("exp")
    fronts: list[Any] = [cmul.functional, builtin_mul.functional, cexp.functional, builtin_exp.functional]
    assert fronts[0]._lane[0] == fronts[1]._lane[0] and fronts[2]._lane[0] == fronts[3]._lane[0]
    a, out = dt.ones(4), dt.empty(4)
    calls: list[Callable[[], Any]] = [
        lambda: cmul.functional(a, 2.0),
        lambda: cmul.functional(a, a, out=out),
        lambda: cmul.inplace(out, 0.5),
        lambda: cexp.functional(a),
        lambda: cexp.inplace(out),
    ]
    for call in calls:
        call()
        call()
        assert _python_frames(call) == []
    # Another kernel registered: it is the handler, so it runs (the direct path is the plain kernel's only).
    plain = cmul.table.kernels[dt.DispatchKey.CPU]
    ran: list[int] = []

    def kernel(self: CPUTensor, other: TensorOrScalar, *, out: ConstOut[CPUTensor]) -> None:
        ran.append(1)
        np.multiply(self.array, other.numpy() if isinstance(other, Tensor) else other, out=out.array)

    cmul.register_kernel("cpu", kernel)
    np.testing.assert_array_equal(cmul.functional(a, 3.0).numpy(), np.full(4, 3.0, np.float32))
    assert ran == [1]
    cmul.register_kernel("cpu", plain)
    assert getattr(cmul.meta, DIRECT)[0] is plain
    cmul.functional(a, 3.0)
    assert ran == [1]


def test_a_custom_op_on_a_unary_meta_with_its_own_dtypes_keeps_them() -> None:
    # (a meta given dtypes that differ from its ufunc's makes no direct path: the ufunc's own call would make an
    # array of the ufunc's dtype, which the lanes labelled with the meta's: a float32 tensor over float16 data)
    from devtensor.meta import unary_ufunc_meta

    exp = library.get_op("exp")
    plain = exp.table.kernels[dt.DispatchKey.CPU]
    dtypes: dict[Any, Any] = {np.dtype(np.int8): np.dtype(np.float32), np.dtype(np.float32): np.dtype(np.float64)}

    def wrapping(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        plain(self, out=out)

    ops: list[Any] = []
    for kernel in (plain, wrapping):
        name = f"family_exp_dtypes_{next(_names)}"
        op = library.custom_op(name, out_may_be_input=True, schema=f"{name}(Tensor self) -> Tensor")(
            unary_ufunc_meta(name, np.exp, dict(dtypes))
        )
        op.register_kernel("cpu", kernel)
        ops.append(op)
    ours, reference = ops

    def calls(op: Any) -> list[Callable[[], tuple[list[Any], dict[str, Any]]]]:
        def t(dtype: str, *shape: int) -> Tensor:
            return dt.tensor(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))

        return [
            lambda: ([op.functional, t("int8", 4)], {}),
            lambda: ([op.functional, t("int8", 3, 4).T], {}),
            lambda: ([op.functional, t("int8")], {}),
            lambda: ([op.functional, t("float32", 4)], {}),
            lambda: ([op.functional, t("float32", 4)], {"out": dt.empty(4, dtype=dt.float64)}),
            lambda: ([op.functional, t("int64", 4)], {}),
            lambda: ([op.inplace, t("float32", 4)], {}),
        ]

    def python_first(fn: Any, *args: Any, **kwargs: Any) -> Any:
        return _python(fn)(*args, **kwargs)

    for call in (_call_first, python_first):
        for make, make_reference in zip(calls(ours), calls(reference), strict=True):
            for _attempt in range(2):
                got = _outcome(call, make)
                want = _outcome(_call_first, make_reference)
                assert str(got).replace(ours.name, "op") == str(want).replace(reference.name, "op")


def test_a_meta_wrapping_a_ufunc_family_meta_is_called_on_every_call() -> None:
    # (functools.wraps copies the family meta's marks, INLINE and UFUNC, onto the wrapper: neither front may answer
    # from the wrapped meta's entries or take its ufunc's direct path, as the wrapper's results need not be those)
    import functools

    from devtensor.meta import binary_ufunc_meta

    name = f"family_wrapped_{next(_names)}"
    inner = binary_ufunc_meta(name, np.multiply)
    calls: list[int] = []

    @functools.wraps(inner)
    def meta(self: TensorOrScalar, other: TensorOrScalar) -> TensorSpec:
        calls.append(1)
        shape, _dtype = inner(self, other)
        return shape, np.dtype(np.float64)

    op = library.custom_op(name, out_may_be_input=True)(meta)
    op.register_kernel("cpu", library.get_op("mul").table.kernels[dt.DispatchKey.CPU])
    x = dt.tensor(np.arange(3, dtype=np.float32))
    for front in (op.functional, _python(op.functional)):
        for other in (x, 2.0):
            for _attempt in range(2):
                before = len(calls)
                got = front(x, other)
                assert got.dtype == np.float64 and got.numpy().dtype == np.float64
                np.testing.assert_array_equal(got.numpy(), x.numpy() * (x.numpy() if other is x else 2.0))
                assert len(calls) == before + 1
