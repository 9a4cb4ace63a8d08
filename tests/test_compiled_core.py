"""The compiled core (devtensor/_core.c, devtensor/structured/core.py): its lanes answer exactly as the Python
fronts do (results, dtypes, classes, versions, errors, warnings), on every op sample and on the lane's edge cases;
the pure-Python mode and a stale extension fall back to the Python fronts."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_samples import OPS, Sample

import devtensor as dt
from devtensor import library
from devtensor.structured import core

needs_core = pytest.mark.skipif(core.CORE is None, reason=f"the compiled core is not in use: {core.core_status()}")


def _python(front: Any) -> Callable[..., Any]:
    """The Python front behind a published front (the front itself without the core)."""
    wrapped: Callable[..., Any] = getattr(front, "__wrapped__", front)
    return wrapped


def _outcome(fn: Callable[..., Any], make: Callable[[], tuple[list[Any], dict[str, Any]]]) -> tuple[Any, ...]:
    """Everything a call shows: its result (or error), the warnings it gave, and every tensor argument after it
    (values, dtype, shape, version)."""
    args, kwargs = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: Any = fn(*args, **kwargs)
            error = None
        except Exception as e:  # (compared by type and message below)
            result, error = None, (type(e), str(e))
    shown = [(w.category, str(w.message)) for w in caught]
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, dt.Tensor)]
    return (_state(result), error, shown, [_state(t) for t in tensors], _same_objects(result, args, kwargs))


def _state(t: Any) -> Any:
    if not isinstance(t, dt.Tensor):
        return t if t is None else type(t)
    data = t.numpy().tobytes() if t.device.type == "cpu" else None
    return (type(t), t.shape, t.dtype, t.version, data)


def _same_objects(result: Any, args: list[Any], kwargs: dict[str, Any]) -> list[bool]:
    """Which arguments the result is (an out= or inplace call returns its target)."""
    return [result is a for a in (*args, *kwargs.values())]


def _op(name: str) -> Any:
    """The registered op ``name`` (seen as Any: structured and view ops alike)."""
    return dt.library.get_op(name)


def _inplace(name: str) -> Callable[..., Any]:
    fn: Callable[..., Any] | None = _op(name).inplace
    assert fn is not None
    return fn


def _variants(name: str, sample: Sample) -> list[tuple[str, Callable[..., Any], Callable[[], Any]]]:
    """(label, published front, argument maker) for the functional, out= and inplace calls of a sample."""
    builtin = _op(name)
    calls: list[tuple[str, Callable[..., Any], Callable[[], Any]]] = [
        ("functional", builtin.functional, lambda: sample.make("cpu"))
    ]
    first = sample.make("cpu")
    try:
        reference = builtin.functional(*first[0], **first[1])
    except Exception:
        reference = None
    if isinstance(reference, dt.Tensor):

        def with_out() -> tuple[list[Any], dict[str, Any]]:
            args, kwargs = sample.make("cpu")
            return args, {**kwargs, "out": dt.empty(reference.shape, dtype=reference.dtype)}

        calls.append(("out", builtin.functional, with_out))
    if getattr(builtin, "inplace", None) is not None:
        calls.append(("inplace", builtin.inplace, lambda: sample.make("cpu")))
    return calls


_LANE_OPS = sorted(
    name
    for name in OPS
    if name in {op.name for op in dt.structured.all_ops()}
    and getattr(_op(name).functional, "python_built", None) is not None
)


@needs_core
@pytest.mark.parametrize("name", _LANE_OPS)
def test_compiled_fronts_answer_every_sample_as_the_python_fronts(name: str) -> None:
    """Each sample's functional, out= and inplace calls, twice (the second finds the meta's inline entries the
    first filled, so the lanes take it), through the compiled front and through its Python front."""
    for sample in OPS[name].samples:
        for label, front, make in _variants(name, sample):
            for attempt in range(2):
                want = _outcome(_python(front), make)
                got = _outcome(front, make)
                assert got == want, f"{name} {label} {sample.id} (call {attempt + 1})"


@needs_core
def test_the_lane_ops_are_compiled_fronts() -> None:
    assert type(dt.add).__name__ == "Front"
    assert type(dt.Tensor.__mul__) is type(dt.add)
    assert dt.add.__name__ == "add" and getattr(dt.add, "op", None) is _op("add")
    assert "self" in str(__import__("inspect").signature(dt.add))


# --- the lanes' edge cases, compiled against Python ----------------------------------------------------------------

_DTYPES = [np.float32, np.float64, np.int8, np.int64, np.bool_, np.complex64]
_SCALARS = [2, -3, 2**40, 2.5, float("nan"), True, 1 + 2j, np.float32(2)]


def _pair(lhs: Any, rhs: Any, fn: Callable[..., Any], **kwargs: Any) -> None:
    def make() -> tuple[list[Any], dict[str, Any]]:
        made = [x() if callable(x) else x for x in (lhs, rhs)]
        return made, {k: (v() if callable(v) else v) for k, v in kwargs.items()}

    for _ in range(2):
        assert _outcome(fn, make) == _outcome(_python(fn), make), (fn, lhs, rhs, kwargs)


@needs_core
@given(
    dtype=st.sampled_from(_DTYPES),
    scalar=st.sampled_from(_SCALARS),
    shape=st.sampled_from([(), (3,), (2, 3), (0, 2)]),
    op=st.sampled_from(["add", "sub", "mul", "div", "eq", "lt", "maximum", "bitwise_and", "pow"]),
)
def test_tensor_and_number_calls_agree(dtype: Any, scalar: Any, shape: tuple[int, ...], op: str) -> None:
    array = (np.arange(int(np.prod(shape))) % 3).reshape(shape).astype(dtype)
    front = getattr(dt, op)

    def tensor() -> dt.Tensor:
        return dt.tensor(array)

    _pair(tensor, scalar, front)
    _pair(scalar, tensor, front)
    inplace = _op(op).inplace
    if inplace is not None:
        _pair(tensor, scalar, inplace)
    _pair(tensor, scalar, front, out=lambda: dt.empty(shape, dtype=dtype))


@needs_core
@given(
    dtypes=st.tuples(st.sampled_from(_DTYPES), st.sampled_from(_DTYPES)),
    layout=st.sampled_from(["same", "transposed", "strided", "broadcast"]),
    op=st.sampled_from(["add", "mul", "sub", "hypot", "logical_xor", "ne"]),
)
def test_tensor_and_tensor_calls_agree(dtypes: tuple[Any, Any], layout: str, op: str) -> None:
    a = (np.arange(6) % 4).reshape(2, 3).astype(dtypes[0])
    b = (np.arange(6) % 3).reshape(2, 3).astype(dtypes[1])

    def lhs() -> dt.Tensor:
        return dt.tensor(a)

    def rhs() -> dt.Tensor:
        if layout == "transposed":
            return dt.tensor(np.ascontiguousarray(b.T)).transpose(0, 1)
        if layout == "strided":
            return dt.tensor(np.repeat(b, 2, axis=1))[:, ::2]
        if layout == "broadcast":
            return dt.tensor(b[0])
        return dt.tensor(b)

    front = getattr(dt, op)
    _pair(lhs, rhs, front)
    _pair(lhs, rhs, front, out=lambda: dt.empty((2, 3), dtype=np.result_type(*dtypes)))
    inplace = _op(op).inplace
    if inplace is not None:
        _pair(lhs, rhs, inplace)
    if op in ("add", "sub"):  # alpha= (a float: the lanes' two steps; other values: the Python front)
        for alpha in (0.5, 2, -1.5, 1.0, 1 + 1j, float("inf")):
            _pair(lhs, rhs, front, alpha=alpha, out=lambda: dt.empty((2, 3), dtype=np.result_type(*dtypes)))
            _pair(lhs, rhs, _inplace(op), alpha=alpha)
            _pair(lhs, 3.0, _inplace(op), alpha=alpha)


@needs_core
def test_out_and_inplace_lanes_keep_the_rules() -> None:
    x = dt.tensor(np.arange(4.0))
    # out is an input, out aliases an input, out is read-only, out of another dtype: each answered as Python.
    _pair(lambda: x.clone(), lambda: x.clone(), dt.add, out=lambda: dt.empty(4))

    def out_is_self() -> tuple[list[Any], dict[str, Any]]:
        shared = dt.tensor(np.arange(4.0))
        return [shared, 1.0], {"out": shared}

    def out_is_a_view_of_self() -> tuple[list[Any], dict[str, Any]]:
        base = dt.tensor(np.arange(8.0))
        return [base[:4], 1.0], {"out": base[4:]}

    for make in (out_is_self, out_is_a_view_of_self):
        for _ in range(2):
            assert _outcome(dt.add, make) == _outcome(_python(dt.add), make)
    readonly = np.arange(4.0)
    readonly.flags.writeable = False
    _pair(x, 1.0, dt.add, out=lambda: dt.from_numpy(readonly))
    _pair(x, 1.0, dt.mul, out=lambda: dt.empty(4, dtype=dt.float32))
    _pair(lambda: dt.from_numpy(readonly), 2.0, _inplace("mul"))
    # a floating-point condition made an error: written, version bumped, then raised
    big = np.full(3, 3e38, np.float32)
    with np.errstate(over="raise"):
        _pair(lambda: dt.tensor(big), 10.0, dt.mul, out=lambda: dt.empty(3, dtype=dt.float32))
        _pair(lambda: dt.tensor(big), 10.0, _inplace("mul"))
        _pair(lambda: dt.tensor(big), 10.0, dt.mul)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _pair(lambda: dt.tensor(big), 10.0, dt.mul, out=lambda: dt.empty(3, dtype=dt.float32))


@needs_core
def test_a_mode_sees_calls_the_lane_would_take() -> None:
    a = dt.ones(3)
    a + a  # (fills the inline entry)
    with library.CountingMode() as counts:
        a + a
        dt.exp(a)
        a.mul_(2.0)
    assert (counts.counts["add"], counts.counts["exp"], counts.counts["mul_"]) == (1, 1, 1)


@needs_core
def test_a_stale_extension_is_not_used(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "_core.c"
    source.write_text("/* another source */\n")
    monkeypatch.setattr(core, "_SOURCES", [source])
    with pytest.warns(RuntimeWarning, match="built from other devtensor/_core"):
        loaded, why = core._load()
    assert loaded is None and "stale" in why


@pytest.mark.skipif(core.PURE_PYTHON, reason="DEVTENSOR_PURE_PYTHON is set")
def test_the_core_is_in_use_where_a_c_compiler_is() -> None:
    """The build skips the extension quietly without a compiler (the Python fronts then serve): where one is
    present, a failed compile or a stale build must not pass unnoticed."""
    import shutil

    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine")
    assert core.CORE is not None, core.core_status()


def test_the_source_fingerprint_is_what_setup_compiles_in() -> None:
    names = [p.name for p in core._SOURCES]
    assert names == [
        "_core.c",
        "_core_common.h",
        "_core_elementwise.h",
        "_core_entry.h",
        "_core_general.h",
        "_core_memo.h",
        "_core_softmax.h",
        "_core_view.h",
    ]
    text = b"".join(p.read_bytes() for p in core._SOURCES)
    expected = __import__("hashlib").sha256(text).hexdigest()[:16]
    assert core.source_fingerprint(core._SOURCES) == expected
    if core.CORE is not None:
        assert expected == core.CORE.FINGERPRINT


def test_pure_python_mode_serves_every_call_from_the_python_fronts() -> None:
    code = (
        "import numpy as np, devtensor as dt\n"
        "from devtensor.structured import core\n"
        "assert core.CORE is None and 'DEVTENSOR_PURE_PYTHON' in core.core_status(), core.core_status()\n"
        "assert type(dt.add).__name__ == 'function'\n"
        "a = dt.tensor(np.arange(3.0)); a + a; b = a + a; a.add_(1.0); a.add_(1.0)\n"
        "print(b.numpy().tolist(), a.numpy().tolist(), a.version)\n"
    )
    env = {**__import__("os").environ, "DEVTENSOR_PURE_PYTHON": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0.0, 2.0, 4.0] [2.0, 3.0, 4.0] 2"


@needs_core
@given(
    dtype=st.sampled_from(_DTYPES),
    scalar=st.sampled_from(_SCALARS),
    operator=st.sampled_from(["__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__", "__rand__"]),
)
def test_reflected_operators_agree(dtype: Any, scalar: Any, operator: str) -> None:
    """``2 - t`` through the compiled reflected lane and through the Python front with the operands swapped."""
    array = (np.arange(6) % 3).reshape(2, 3).astype(dtype)
    method = getattr(dt.Tensor, operator)
    python = _python(
        getattr(method, "__wrapped__", None) and _op(method.__name__.removeprefix("reflected_")).functional
    )

    def make() -> tuple[list[Any], dict[str, Any]]:
        return [dt.tensor(array), scalar], {}

    def swapped(t: Any, x: Any) -> Any:
        return python(x, t)

    for _ in range(2):
        assert _outcome(method, make) == _outcome(swapped if python is not None else method, make), operator


@needs_core
@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 3, 4), (0, 4)])
def test_memo_lanes_agree_on_layouts_and_dims(shape: tuple[int, ...]) -> None:
    """The memo lanes (reductions, softmax, matmul, addmm) on C-ordered, transposed and strided operands."""
    base = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) / 7

    def layouts() -> list[Callable[[], dt.Tensor]]:
        made = [lambda: dt.tensor(base)]
        if len(shape) >= 2:
            made.append(lambda: dt.tensor(np.ascontiguousarray(np.swapaxes(base, -1, -2))).transpose(-1, -2))
        made.append(lambda: dt.tensor(np.repeat(base, 2, axis=-1))[..., ::2])
        return made

    for make_self in layouts():
        for name, extra in [("sum", ()), ("sum", (0,)), ("amax", (-1,)), ("all", (0, True)), ("prod", (None, True))]:
            front = getattr(dt, name)

            def call(front: Any = front, extra: tuple[Any, ...] = extra, make_self: Any = make_self) -> Any:
                return [make_self(), *extra], {}

            for _ in range(2):
                assert _outcome(front, call) == _outcome(_python(front), call), (name, extra, shape)
        for name, args in [("softmax", (-1,)), ("log_softmax", (0,))]:
            front = getattr(dt, name)

            def call2(front: Any = front, args: tuple[Any, ...] = args, make_self: Any = make_self) -> Any:
                return [make_self(), *args], {}

            for _ in range(2):
                assert _outcome(front, call2) == _outcome(_python(front), call2), (name, shape)
    if len(shape) == 2:
        for a, b in [(layouts()[0], lambda: dt.tensor(base.T.copy())), (layouts()[1], layouts()[1])]:

            def mm(a: Any = a, b: Any = b) -> Any:
                x = a()
                y = b()
                return [x, y if y.shape[0] == x.shape[1] else y.transpose(0, 1)], {}

            for front in (dt.matmul, dt.mm):
                for _ in range(2):
                    assert _outcome(front, mm) == _outcome(_python(front), mm)

            def addmm(a: Any = a) -> Any:
                x = a()
                return [dt.ones(x.shape[0], dtype=dt.float32), x, dt.tensor(base.T.copy())], {}

            for _ in range(2):
                assert _outcome(dt.addmm, addmm) == _outcome(_python(dt.addmm), addmm)


def test_fronts_pickle_by_reference() -> None:
    """Process pools and Dask send fronts by name, as functions are sent."""
    import pickle

    for fn in (dt.add, dt.softmax, dt.sum, dt.Tensor.add_, dt.matmul):
        assert pickle.loads(pickle.dumps(fn)) is fn


@needs_core
@given(
    dtypes=st.lists(st.sampled_from(_DTYPES), min_size=1, max_size=4),
    shape=st.sampled_from([(3,), (0,), (2, 3)]),
    dim=st.sampled_from([None, 0, -1, 1]),
)
def test_cat_lane_agrees(dtypes: list[Any], shape: tuple[int, ...], dim: Any) -> None:
    def make() -> tuple[list[Any], dict[str, Any]]:
        tensors = [dt.tensor(np.ones(shape, d)) for d in dtypes]
        return ([tensors] if dim is None else [tensors, dim]), {}

    for _ in range(2):
        assert _outcome(dt.cat, make) == _outcome(_python(dt.cat), make)


def test_first_calls_from_many_threads_build_one_working_front() -> None:
    """A front's Python front is built at its first call the lane leaves; threads racing to that first call all
    get the op's answer (whichever build is kept)."""
    import threading

    def meta(self: dt.Tensor, scale: float) -> Any:
        return self.shape, self.dtype

    name = f"core_race_{threading.get_ident()}"
    op = library.custom_op(name)(meta)

    @op.impl("cpu")
    def _(self: Any, scale: float, *, out: Any) -> None:
        np.multiply(self.array, scale, out=out.array)

    results: list[Any] = []
    barrier = threading.Barrier(8)

    def call() -> None:
        barrier.wait()
        results.append(op.functional(dt.tensor(np.arange(3.0)), 2.0).numpy().tolist())

    threads = [threading.Thread(target=call) for _ in range(8)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        library.remove_op(name)
    assert results == [[0.0, 2.0, 4.0]] * 8


@needs_core
@pytest.mark.parametrize("name", ["add", "mul", "exp", "sum", "matmul", "softmax", "cat", "relu", "addmm"])
def test_device_bindings_take_the_lanes_for_their_class_only(name: str, fake_cupy: Any) -> None:
    """``devtensor.cpu.<op>`` and ``devtensor.cuda.<op>`` are compiled fronts with the key fixed: the same answers
    as their Python fronts, and a tensor of another class is refused as the Python front refuses it."""
    for device in ("cpu", "cuda"):
        binding = getattr(getattr(dt, device), name)
        assert type(binding) is type(dt.add), (device, name)
        for sample in OPS[name].samples:

            def make(sample: Sample = sample, device: str = device) -> tuple[list[Any], dict[str, Any]]:
                return sample.make(device)

            def make_wrong(sample: Sample = sample, device: str = device) -> tuple[list[Any], dict[str, Any]]:
                return sample.make("meta" if device == "cpu" else "cpu")

            for _ in range(2):
                assert _outcome(binding, make) == _outcome(_python(binding), make), (device, name, sample.id)
            assert _outcome(binding, make_wrong) == _outcome(_python(binding), make_wrong), (device, name)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(0, 3), min_size=1, max_size=3),
            st.sampled_from(["float32", "float64", "int64"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_cat_calls_in_a_row_answer_each_by_its_own_arguments(calls: list[tuple[list[int], str]]) -> None:
    # (the lane compares the key looked up last field by field: a call that differs from the one before in one
    # shape or dtype must not take its spec)
    for sizes, dtype in calls:
        arrays = [np.arange(n, dtype=np.int64).astype(dtype if i % 2 else "float32") for i, n in enumerate(sizes)]
        got = dt.cat([dt.tensor(a) for a in arrays])
        want = np.concatenate(arrays)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


def _array_outcome(fn: Callable[..., Any], args: list[Any], state: dict[str, str]) -> tuple[Any, ...]:
    """An array kernel's result (dtype and bytes, or its error), the warnings it gave and its out argument after."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as caught, np.errstate(**state):  # type: ignore[arg-type]
        warnings.simplefilter("always")
        try:
            result = fn(*args)
            made: Any = (result.dtype, result.shape, result.tobytes(), result is args[-1])
        except Exception as e:  # (compared by type and message)
            made = (type(e), str(e))
    after = [(a.dtype, a.tobytes()) for a in args if isinstance(a, np.ndarray)]
    return made, [(w.category, str(w.message)) for w in caught], after


@needs_core
@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
    dtype=st.sampled_from([np.float16, np.float32, np.float64, np.int64]),
    log=st.booleans(),
    special=st.sampled_from([None, np.inf, -np.inf, np.nan, 3e38, -3e38]),
    out=st.sampled_from([None, "same", "compute", "other"]),
    state=st.sampled_from([{}, {"under": "raise"}, {"all": "raise"}, {"under": "warn"}]),
    dim=st.integers(-3, 2),
)
def test_softmax_direct_in_c_agrees_with_its_python_body(
    shape: tuple[int, ...], dtype: Any, log: bool, special: Any, out: str | None, state: dict[str, str], dim: int
) -> None:
    """softmax's direct path in C (devtensor/_core_softmax.h) against _softmax_cpu, the Python body it stands for:
    the same result bytes and dtype, the same error or warnings, the same out array, in every floating-point state."""
    from devtensor.kernels import nn

    assert nn._softmax_direct is not nn._softmax_cpu
    x = (np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 11.5 - 40).astype(dtype)
    if special is not None and x.size and x.dtype.kind == "f":
        with np.errstate(over="ignore"):  # (3e38 is inf in float16)
            x.flat[x.size // 2] = special
    compute = np.dtype(np.float32) if dtype == np.float16 else np.dtype(np.float64 if dtype == np.int64 else dtype)
    axis = None if not shape else dim % len(shape)
    plan = nn.SoftmaxPlan(axis, log, compute)
    args: list[Any] = [x, plan]
    if out is not None:
        args.append(
            np.full(shape, 7, {"same": x.dtype, "compute": compute, "other": np.float16}[out])
            if out != "same" or x.dtype.kind == "f"
            else None
        )
    assert _array_outcome(nn._softmax_direct, args, state) == _array_outcome(nn._softmax_cpu, args, state)


@needs_core
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("into", ["new", "out", "input"])
def test_softmax_direct_in_c_recovers_from_a_condition_as_its_python_body(log: bool, into: str) -> None:
    """A step's floating-point condition the caller made an error (a seterrcall callback that raises, an underflow
    raised into an out array that is the input too): the C path calls the callback once, as _softmax_cpu does
    (not again by running the whole body a second time), raises the same error, and leaves the out array as the
    body's recovery writes it."""
    from devtensor.kernels import nn

    def outcome(fn: Callable[..., Any], mode: str) -> tuple[Any, ...]:
        x = np.array([[0.0, -800.0, 1.0], [2.0, 3.0, -1000.0]])
        plan = nn.SoftmaxPlan(1, log, x.dtype)
        args: list[Any] = [x, plan] + {"new": [], "out": [np.full(x.shape, 7.0)], "input": [x]}[into]
        calls: list[str] = []

        def callback(kind: str, flag: int) -> None:
            calls.append(kind)
            if len(calls) == 1 or mode == "always":  # (a callback that raises only the first time, too)
                raise FloatingPointError(f"callback: {kind}")

        old = np.seterrcall(callback)
        try:
            with np.errstate(under="call"):
                try:
                    made: Any = fn(*args).tobytes()
                except FloatingPointError as e:
                    made = str(e)
        finally:
            np.seterrcall(old)
        return made, calls, args[2].tobytes() if len(args) == 3 else None

    for mode in ("always", "first"):
        assert outcome(nn._softmax_direct, mode) == outcome(nn._softmax_cpu, mode)
    x = np.array([[0.0, -800.0, 1.0]])
    with np.errstate(under="raise"), pytest.raises(FloatingPointError, match="underflow"):
        nn._softmax_direct(x, nn.SoftmaxPlan(1, log, x.dtype), x)
