"""Faults a fresh-user review found (issue 12): the generic check of bool and Literal arguments of every op, errors
of the random factories naming the function called, ``round(t, huge)``, ``divmod`` on tensors, and the 2023.12
Array API namespace. Boundary arguments by kind over every op's samples: huge ints to every int argument, 0-d
inputs to every op with a dim argument: a result or a devtensor error, never another exception."""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_samples import OPS, Sample, Strided, builtin_ops
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor import array_api as xp
from devtensor.errors import ArgumentTypeError, ArgumentValueError, IndexOutOfRangeError
from devtensor.structured import get_op, rules
from devtensor.structured.data_dependent import all_data_dependent_ops
from devtensor.structured.multi import all_multi_ops

# --- the generic check of bool and Literal arguments ------------------------------------------------------------


def _checked(name: str) -> tuple[Any, tuple[rules.ValueCheck, ...]]:
    op = get_op(name)
    schema = getattr(op, "schema", None)
    return op, rules.value_checks(schema.params) if schema is not None else ()


CHECKED = sorted(n for n in OPS if _checked(n)[1])


def test_ops_with_such_arguments_exist() -> None:
    assert {"sum", "div", "sort", "topk", "unique", "nonzero", "multinomial"} <= set(CHECKED)


@pytest.mark.parametrize("name", CHECKED)
def test_a_bad_bool_or_literal_argument_names_the_op_argument_and_value(name: str) -> None:
    """Each op's first sample, with one bool argument given an int (TypeError) or one Literal argument given a
    value of the wrong type (TypeError) or an unknown value (ValueError): the error names the op, the argument and
    the value, and no tensor changes."""
    op, checks = _checked(name)
    sample = OPS[name].samples[0]
    signature = inspect.signature(op.functional)
    for param, _optional, allowed in checks:
        bads: list[tuple[object, type[Exception]]] = [(1, TypeError), ("yes", TypeError)]
        if allowed is not None:
            kind = type(allowed[0])
            bads = [(2.5, TypeError)]
            if kind is str:
                bads.append(("no-such-value", ValueError))
        for bad, error in bads:
            args, kwargs = sample.make("cpu")
            bound = signature.bind(*args, **kwargs)
            bound.arguments[param] = bad
            tensors = [a for a in (*bound.args, *bound.kwargs.values()) if isinstance(a, dt.Tensor)]
            before = snapshot(*tensors)
            with pytest.raises(error, match=rf"{name}: argument '{param}' must be .*{bad!r}"):
                op.functional(*bound.args, **bound.kwargs)
            assert_unchanged(before)


def test_inplace_variants_and_device_bindings_check_too() -> None:
    t, u = dt.ones(3), dt.full((3,), 2.0)
    with pytest.raises(ValueError, match="div_: argument 'rounding_mode' must be one of 'trunc', 'floor' or None"):
        t.div_(u, rounding_mode="round")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sum: argument 'keepdim' must be a bool, got int 1"):
        dt.cpu.sum(t, 0, keepdim=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sort: argument 'stable' must be a bool"):
        dt.sort(t, stable=None)  # type: ignore[arg-type]
    assert dt.div(t, u, rounding_mode=None).tolist() == [0.5] * 3


def test_numpy_bools_are_bools() -> None:
    """NumPy and PyTorch accept a NumPy bool where a bool is expected: every kind of front takes it as the Python
    bool (generated fronts, device bindings, inplace variants, multi-output and data-dependent ops, hand-written
    functions); ints stay refused."""
    t = dt.tensor([3.0, 1.0, 1.0, 2.0])
    T, F = np.True_, np.False_
    assert dt.sum(t, 0, keepdim=T).shape == (1,)  # type: ignore[arg-type]
    assert dt.cpu.sum(t, 0, keepdim=T).shape == (1,)  # type: ignore[arg-type]
    assert t.sum(0, keepdims=T).shape == (1,)  # type: ignore[call-overload]
    assert dt.sort(t, descending=T)[0].tolist() == [3.0, 2.0, 1.0, 1.0]  # type: ignore[arg-type]
    assert t.max(0, keepdim=T)[0].shape == (1,)  # type: ignore[call-overload]
    assert dt.topk(t, 1, largest=F)[0].tolist() == [1.0]  # type: ignore[arg-type]
    values, inverse = dt.unique_consecutive(t, return_inverse=T)  # type: ignore[call-overload]
    assert values.tolist() == [3.0, 1.0, 2.0] and inverse.tolist() == [0, 1, 1, 2]
    assert len(dt.nonzero(t, as_tuple=T)) == 1  # type: ignore[call-overload]
    assert dt.linalg.svd(dt.eye(2), full_matrices=F)[0].shape == (2, 2)  # type: ignore[arg-type]
    assert t.astype(dt.float32, copy=F).dtype == dt.float32  # type: ignore[arg-type]
    assert t.to(dt.float64, copy=F) is t  # type: ignore[call-overload]
    assert xp.asarray(t, copy=F) is t  # type: ignore[arg-type]
    assert xp.cumulative_sum(t, include_initial=T).tolist() == [0.0, 3.0, 4.0, 5.0, 7.0]  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sum: argument 'keepdim' must be a bool, got int 1"):
        dt.sum(t, 0, keepdim=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t: dt.meshgrid(t, t, indexing=0), "meshgrid: argument 'indexing' must be 'ij' or 'xy', got int 0"),  # type: ignore[arg-type]
        (lambda t: xp.meshgrid(t, t, indexing=0), "meshgrid: argument 'indexing'.*got int 0"),  # type: ignore[arg-type]
        (lambda t: dt.div(t, t, rounding_mode=1), "div: argument 'rounding_mode'.*got int 1"),  # type: ignore[arg-type]
        (lambda t: dt.fft.fft(t, norm=1), "fft_fft: argument 'norm'.*got int 1"),  # type: ignore[arg-type]
        (lambda t: dt.linalg.qr(dt.eye(2), mode=1), "linalg_qr: argument 'mode'.*got int 1"),  # type: ignore[arg-type]
        (lambda t: xp.linalg.qr(dt.eye(2), mode=1), "qr: argument 'mode'.*got int 1"),  # type: ignore[arg-type]
        (lambda t: dt.linalg.eigh(dt.eye(2), UPLO=1), "linalg_eigh: argument 'UPLO'.*got int 1"),  # type: ignore[arg-type]
        (lambda t: dt.searchsorted(t, t, side=1), "searchsorted: argument 'side'.*got int 1"),  # type: ignore[arg-type]
        (lambda t: xp.searchsorted(t, t, side=1), "searchsorted: argument 'side'.*got int 1"),  # type: ignore[arg-type]
        (lambda t: dt.linalg.matrix_norm(dt.eye(2), ord=[1]), "linalg_matrix_norm: argument 'ord'.*\\[1\\]"),  # type: ignore[arg-type]
        (lambda t: xp.asarray(t, copy=1), "asarray: argument 'copy' must be None or a bool, got int 1"),  # type: ignore[arg-type]
        (lambda t: dt.asarray(t, copy="yes"), "asarray: argument 'copy'.*got str 'yes'"),  # type: ignore[arg-type]
        (lambda t: xp.cumulative_sum(t, include_initial=1), "cumulative_sum: argument 'include_initial'.*int 1"),  # type: ignore[arg-type]
        (lambda t: xp.cumulative_prod(t, include_initial=1), "cumulative_prod: argument 'include_initial'.*int 1"),  # type: ignore[arg-type]
        (lambda t: xp.reshape(t, (3,), copy=1), "reshape: argument 'copy'.*int 1"),  # type: ignore[arg-type]
        (lambda t: t.astype(dt.float32, copy=1), "astype: argument 'copy'.*int 1"),
        (lambda t: t.to(dt.float32, copy=1), "to: argument 'copy'.*int 1"),
    ],
)
def test_a_wrong_type_is_a_type_error_everywhere(call: Any, message: str) -> None:
    """A bool or Literal argument of the wrong type is a TypeError (ArgumentTypeError) in every function, the
    generated fronts' rule; an unknown value of the right type stays a ValueError."""
    t = dt.tensor([1.0, 2.0, 3.0])
    with pytest.raises(dt.errors.ArgumentTypeError, match=message):
        call(t)


def test_an_unknown_literal_value_is_a_value_error() -> None:
    t = dt.tensor([1.0, 2.0, 3.0])
    for call in (
        lambda: dt.meshgrid(t, t, indexing="yx"),
        lambda: xp.meshgrid(t, t, indexing="yx"),
        lambda: dt.searchsorted(t, t, side="middle"),
        lambda: dt.linalg.qr(dt.eye(2), mode="full"),  # type: ignore[arg-type]
        lambda: dt.linalg.matrix_norm(dt.eye(2), ord=3),
    ):
        with pytest.raises(dt.errors.ArgumentValueError):
            call()


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none(), st.booleans(), st.lists(st.integers())))
def test_check_values_against_the_rule(value: Any) -> None:
    checks: tuple[rules.ValueCheck, ...] = (("flag", False, None), ("mode", True, ("a", "b")))
    for name, check in (("flag", checks[0]), ("mode", checks[1])):
        error: type[Exception]
        if name == "flag":
            ok, error = type(value) is bool, TypeError
        else:
            ok = value is None or (type(value) is str and value in ("a", "b"))
            error = ValueError if type(value) is str else TypeError
        if ok:
            rules.check_values("op", (check,), {name: value})
            continue
        with pytest.raises(error, match=f"op: argument '{name}'"):
            rules.check_values("op", (check,), {name: value})


# --- random factories name the function called ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: dt.uniform(2.0, 1.0, (3,)), "uniform"),
        (lambda: dt.uniform(0.0, float("inf"), (3,), out=dt.empty(5)), "uniform"),
        (lambda: dt.randint(0, 300, (3,), dtype=dt.uint8), "randint"),
        (lambda: dt.rand(3, generator=3), "rand"),  # type: ignore[arg-type]
        (lambda: dt.randn(3, generator=3), "randn"),  # type: ignore[arg-type]
        (lambda: dt.normal(0.0, -1.0, (3,)), "normal"),
        (lambda: dt.rand_like(dt.ones(2), generator=3), "rand_like"),  # type: ignore[arg-type]
        (lambda: dt.randn_like(dt.ones(2), generator=3), "randn_like"),  # type: ignore[arg-type]
        (lambda: dt.randint_like(dt.ones(2, dtype=dt.uint8), 0, 300), "randint_like"),
    ],
)
def test_factory_errors_name_the_function_called(call: Any, name: str) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    assert str(info.value).startswith(f"{name}: "), str(info.value)


# --- round ---------------------------------------------------------------------------------------------------


def test_round_with_a_huge_ndigits() -> None:
    t = dt.tensor([1.25, 2.5])
    for ndigits in (2**70, -(2**70), 2**31):
        with pytest.raises(OverflowError, match=rf"round: argument 'decimals' \({ndigits}\) is out of range"):
            round(t, ndigits)
    with pytest.raises(dt.ScalarOverflowError, match="decimals"):
        dt.round(t, decimals=2**40)
    # The largest NumPy takes is accepted: checked on a meta tensor (the check only), since NumPy's own rounding
    # with 2**31 - 1 decimals takes seconds (its values are NumPy's: NaN here).
    assert round(dt.empty(2, device="meta"), 2**31 - 1).shape == (2,)
    with pytest.warns(RuntimeWarning, match="invalid value"):  # (NumPy's value: NaN)
        assert round(t, 2**15).shape == (2,)


# --- divmod --------------------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(
    hnp.arrays(np.int64, st.integers(1, 6), elements=st.integers(-50, 50)),
    st.integers(-9, 9).filter(bool),
    st.sampled_from([np.int64, np.float64]),
)
def test_divmod_follows_numpy(a: Any, b: int, dtype: Any) -> None:
    x = a.astype(dtype)
    t = dt.tensor(x)
    divisor = np.where(x == 0, 1, x).astype(dtype)
    d = dt.tensor(divisor)
    for got, want in (
        (divmod(t, b), np.divmod(x, b)),
        (divmod(b, d), np.divmod(b, divisor)),
        (divmod(t, d), np.divmod(x, divisor)),
    ):
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g.numpy(), w)


def test_divmod_of_python_numbers_agrees_with_python() -> None:
    q, r = divmod(dt.tensor([7.0, -7.0, 7.0, -7.0]), dt.tensor([2.0, 2.0, -2.0, -2.0]))
    assert q.tolist() == [divmod(a, b)[0] for a, b in ((7.0, 2.0), (-7.0, 2.0), (7.0, -2.0), (-7.0, -2.0))]
    assert r.tolist() == [divmod(a, b)[1] for a, b in ((7.0, 2.0), (-7.0, 2.0), (7.0, -2.0), (-7.0, -2.0))]
    with pytest.raises(TypeError):
        divmod(dt.tensor([1.0j]), 2)


# --- the 2023.12 namespace -----------------------------------------------------------------------------------


def test_the_2023_12_namespace_reports_its_version() -> None:
    t = dt.tensor([1.0, 2.0])
    old = t.__array_namespace__(api_version="2023.12")
    assert old.__array_api_version__ == "2023.12" and xp.__array_api_version__ == "2024.12"
    assert old is t.__array_namespace__(api_version="2023.12")
    assert old.sum is xp.sum and old.float64 == xp.float64 and "sum" in dir(old)
    assert old.sum(t).item() == 3.0
    assert t.__array_namespace__() is xp and t.__array_namespace__(api_version="2024.12") is xp
    for bad in ("2022.12", "2025.12", "latest", 2024.12):
        with pytest.raises(ValueError, match="api_version"):
            t.__array_namespace__(api_version=bad)  # type: ignore[arg-type]


def test_numpy_divmod_and_numpy_operands_give_tensors() -> None:
    a = np.array([7.0, -7.0])
    t = dt.tensor(a)
    cases: list[tuple[Any, Any]] = [
        (np.divmod(t, 2), np.divmod(a, 2)),
        (divmod(a, t), np.divmod(a, a)),
        (divmod(np.float64(7.0), t), np.divmod(7.0, a)),
        (divmod(t, np.float64(2.0)), np.divmod(a, 2.0)),
    ]
    for got, want in cases:
        assert all(isinstance(g, dt.Tensor) for g in got)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g.numpy(), w)


# --- boundary arguments by kind, over every op's samples ------------------------------------------------------------

_BUILTIN = builtin_ops()
#: Ints no C long holds (NumPy refuses them with a raw OverflowError) and the int64 edges.
HUGE_INTS = (2**63, -(2**63) - 1, 2**100, -(2**63), 2**63 - 1)


def _with_int(sample: Sample, where: tuple[str, Any, int | None], value: int) -> Sample:
    kind, key, item = where
    args, kwargs = list(sample.args), dict(sample.kwargs)
    holder: Any = args if kind == "arg" else kwargs
    if item is None:
        holder[key] = value
    else:
        seq = list(holder[key])
        seq[item] = value
        holder[key] = type(holder[key])(seq)
    return Sample(tuple(args), kwargs)


def _int_places(sample: Sample) -> list[tuple[str, Any, int | None]]:
    """Every int argument of ``sample`` (positional, keyword, or an item of a tuple or list of them)."""
    places: list[tuple[str, Any, int | None]] = []
    for kind, items in (("arg", list(enumerate(sample.args))), ("kwarg", list(sample.kwargs.items()))):
        for key, value in items:
            if type(value) is int:
                places.append((kind, key, None))
            elif type(value) in (tuple, list):
                places += [(kind, key, i) for i, v in enumerate(value) if type(v) is int]
    return places


INT_OPS = sorted(n for n in OPS if any(_int_places(s) for s in OPS[n].samples))


def test_ops_with_int_arguments_exist() -> None:
    assert {"tril", "triu", "roll", "linalg_diagonal", "linalg_trace", "repeat_interleave", "topk"} <= set(INT_OPS)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", INT_OPS)
def test_a_huge_int_argument_gives_a_result_or_a_devtensor_error(name: str) -> None:
    fn = _BUILTIN[name].functional
    for sample in OPS[name].samples:
        for where in _int_places(sample):
            for value in HUGE_INTS:
                args, kwargs = _with_int(sample, where, value).make("cpu")
                with contextlib.suppress(dt.DevtensorError):
                    fn(*args, **kwargs)


@pytest.mark.parametrize("k", [*HUGE_INTS, 3, -3, 4, -4, 0])
def test_diagonal_offsets_beyond_the_matrix_are_as_the_nearest_that_is(k: int) -> None:
    # NumPy refuses an offset beyond a C long (and tril/triu negate it): the same triangles and diagonals.
    a = np.arange(12.0).reshape(3, 4)
    near = max(-3, min(4, k))
    t = dt.tensor(a)
    np.testing.assert_array_equal(dt.tril(t, k).numpy(), np.tril(a, near))
    np.testing.assert_array_equal(dt.triu(t, diagonal=k).numpy(), np.triu(a, near))
    np.testing.assert_array_equal(xp.tril(t, k=k).numpy(), np.tril(a, near))
    np.testing.assert_array_equal(dt.linalg.diagonal(t, offset=k).numpy(), np.diagonal(a, near))
    assert dt.linalg.trace(t, offset=k).item() == np.trace(a, near)
    t.tril_(k)
    np.testing.assert_array_equal(t.numpy(), np.tril(a, near))
    assert dt.roll(dt.tensor(a), k, 1).numpy().tolist() == np.roll(a, k % 4, 1).tolist()


def test_huge_sizes_outside_ops_are_devtensor_errors() -> None:
    for fn in (dt.fft.fftfreq, dt.fft.rfftfreq):
        with pytest.raises(ArgumentValueError, match=rf"fft_{fn.__name__}: a tensor of shape .* can address"):
            fn(2**64)
    assert dt.repeat_interleave(dt.ones(0), 2**100).shape == (0,)


_DIM_NAMES = ("dim", "dims", "dim0", "dim1", "dim2", "source", "destination", "start_dim", "end_dim")
_DIMS = (0, -1, 1, (0,), (), [0, 0], (0, 1), True, 1.0, "a", 2**70)


def _params(name: str) -> list[str]:
    schema = getattr(_BUILTIN[name], "schema", None)
    if schema is not None:
        return [p.name for p in schema.params]
    return list(inspect.signature(_BUILTIN[name].functional).parameters)


DIM_OPS = sorted(n for n in OPS if any(p in _DIM_NAMES for p in _params(n)))


def _zero_d(a: Any) -> Any:
    """A 0-d array of the operand's dtype (its first value when it has one)."""
    if isinstance(a, np.ndarray):
        return np.asarray(a.reshape(-1)[:1].reshape(()) if a.size else np.zeros((), a.dtype))
    if isinstance(a, Strided):
        return _zero_d(a.array)
    if isinstance(a, list):
        return [_zero_d(x) for x in a]
    return a


def test_ops_with_dim_arguments_exist() -> None:
    assert {"sum", "linalg_vector_norm", "linalg_norm", "tensordot", "cumsum", "transpose"} <= set(DIM_OPS)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", DIM_OPS)
def test_zero_d_inputs_to_an_op_with_a_dim_give_a_result_or_a_devtensor_error(name: str) -> None:
    fn = _BUILTIN[name].functional
    names = _params(name)
    for sample in OPS[name].samples:
        args0 = [_zero_d(a) for a in sample.args]
        kwargs0 = {k: _zero_d(v) for k, v in sample.kwargs.items()}
        for param in (p for p in names if p in _DIM_NAMES):
            index = names.index(param)
            for dim in _DIMS:
                args, kwargs = list(args0), dict(kwargs0)
                if index < len(args):
                    args[index] = dim
                else:
                    kwargs[param] = dim
                made_args, made_kwargs = Sample(tuple(args), kwargs).make("cpu")
                with contextlib.suppress(dt.DevtensorError):
                    fn(*made_args, **made_kwargs)


def test_norms_of_a_zero_d_tensor_over_dim() -> None:
    # PyTorch's rule: dim 0 and -1 name a 0-d tensor's one value (as its sum does).
    z = dt.tensor(-3.0)
    for call in (
        lambda: dt.linalg.vector_norm(z, dim=0),
        lambda: dt.linalg.vector_norm(z, dim=(-1,), keepdim=True),
        lambda: dt.linalg.vector_norm(z, 0.5, dim=0),
        lambda: dt.linalg.vector_norm(z, float("inf"), dim=-1),
        lambda: dt.linalg.norm(z, dim=0),
        lambda: xp.linalg.vector_norm(z, axis=0),
    ):
        got: dt.Tensor = call()  # type: ignore[no-untyped-call]
        assert got.shape == () and got.item() == pytest.approx(3.0)
    with pytest.raises(IndexOutOfRangeError, match="linalg_vector_norm"):
        dt.linalg.vector_norm(z, dim=1)
    for bad in (True, 1.0, "a"):
        with pytest.raises(ArgumentTypeError, match=rf"linalg_norm: argument 'dim' .*{bad!r}"):
            dt.linalg.norm(dt.ones(3, 3), dim=bad)  # type: ignore[arg-type]  # the point of the test
    with pytest.raises(IndexOutOfRangeError, match="tensordot: argument 'dims'"):
        dt.tensordot(z, z, dims=[0, 0])


@pytest.mark.parametrize("name", [op.name for op in [*all_multi_ops(), *all_data_dependent_ops()]])
def test_a_closure_fronts_binding_errors_name_the_op(name: str) -> None:
    """A multi-output or data-dependent op's front binds a call by its meta function's signature (schema.call_binder;
    a multi-output op's ``out`` keyword-only, last):
    a missing argument, an unknown keyword, one given twice or too many positional ones is an ArgumentTypeError
    (a TypeError) naming the op, raised before anything runs; a call omitting the defaulted ones takes the
    defaults, as eager PyTorch does."""
    op = get_op(name)
    front = op.functional
    t = dt.tensor(np.eye(3))
    required = [p for p in op.schema.params if not p.kw_only and not p.has_default]
    positional = [p for p in op.schema.params if not p.kw_only]
    with pytest.raises(ArgumentTypeError, match=rf"{name}: {name}\(\) missing 1 required positional argument"):
        front(*[t] * (len(required) - 1)) if len(required) > 1 else front()
    with pytest.raises(ArgumentTypeError, match=rf"{name}: {name}\(\) got an unexpected keyword argument 'bogus'"):
        front(t, bogus=1)
    first = positional[0].name
    with pytest.raises(ArgumentTypeError, match=rf"{name}: {name}\(\) got multiple values for argument '{first}'"):
        front(t, **{first: t})
    with pytest.raises(ArgumentTypeError, match=rf"{name}: {name}\(\) takes .* positional argument"):
        front(*[t] * (len(positional) + 1))
