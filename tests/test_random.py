"""Random numbers: generators (reproducible, independent, seeds and states), the distributions (moments and
ranges, hypothesis over seeds and shapes), dtypes, the out rules of the factories, errors, dispatch (modes and
overrides see the random ops), and the CUDA paths through the stand-in (tests/fake_cupy.py)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import devtensor as dt
from devtensor import library
from devtensor.structured import GENERATOR, get_op, remove_op, schema_from_meta
from devtensor.tensor import TensorMeta, TensorSpec

SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
SHAPES = st.lists(st.integers(min_value=0, max_value=5), min_size=0, max_size=3).map(tuple)
FLOATS = [dt.float16, dt.float32, dt.float64]
RANDOM_OPS = [
    "uniform",
    "normal",
    "random",
    "bernoulli",
    "multinomial",
    "randperm",
    "exponential",
    "geometric",
    "log_normal",
    "cauchy",
]


@pytest.fixture(autouse=True)
def _restore_default_generator() -> Iterator[None]:
    """Tests seed the default generator; give it back its state afterwards."""
    state = dt.get_rng_state()
    seed = dt.initial_seed()
    yield
    dt.default_generator.manual_seed(seed)
    dt.set_rng_state(state)


def values(t: dt.Tensor) -> np.ndarray[Any, Any]:
    return np.array(t.cpu().numpy(), copy=True)


# --- generators ---------------------------------------------------------------------------------------------------


@settings(max_examples=25)
@given(seed=SEEDS, shape=SHAPES)
def test_a_seed_gives_the_same_values_and_generators_are_independent(seed: int, shape: tuple[int, ...]) -> None:
    g1, g2 = dt.Generator(seed), dt.Generator(seed)
    a = values(dt.rand(shape, generator=g1))
    dt.randn(7, generator=dt.Generator(seed))  # another generator, and the default one, move on their own
    dt.rand(5)
    b = values(dt.rand(shape, generator=g2))
    np.testing.assert_array_equal(a, b)
    g1.manual_seed(seed)
    np.testing.assert_array_equal(values(dt.rand(shape, generator=g1)), a)


def test_different_seeds_and_successive_draws_differ() -> None:
    a = values(dt.rand(100, generator=dt.Generator(1)))
    b = values(dt.rand(100, generator=dt.Generator(2)))
    g = dt.Generator(1)
    first, second = values(dt.rand(100, generator=g)), values(dt.rand(100, generator=g))
    assert not np.array_equal(a, b)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, a)


def test_manual_seed_makes_the_default_generator_reproducible() -> None:
    assert dt.manual_seed(123) is dt.default_generator
    assert dt.initial_seed() == 123
    a = values(dt.randn(2, 3))
    i = values(dt.randint(0, 100, (5,)))
    dt.manual_seed(123)
    np.testing.assert_array_equal(values(dt.randn(2, 3)), a)
    np.testing.assert_array_equal(values(dt.randint(0, 100, (5,))), i)
    s = dt.seed()
    assert isinstance(s, int) and dt.initial_seed() == s


def test_seeds_follow_pytorch_range_and_negative_seeds_wrap() -> None:
    assert dt.Generator(-1).initial_seed() == 2**64 - 1
    assert dt.Generator(2**64 - 1).initial_seed() == 2**64 - 1
    assert dt.Generator(np.int64(5)).initial_seed() == 5
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError, match="seed"):
            dt.Generator(bad)
    for wrong in (1.0, True, "1"):
        with pytest.raises(TypeError, match="seed"):
            dt.Generator(wrong)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="device="):
        dt.Generator("cpu")  # type: ignore[arg-type]  # PyTorch's positional device
    with pytest.raises(ValueError, match="cpu or cuda"):
        dt.Generator(device="meta")
    g = dt.Generator(7)
    with pytest.raises(ValueError):
        g.manual_seed(2**70)
    assert g.initial_seed() == 7  # a failed reseed changes nothing


def test_generator_seed_draws_a_new_seed_and_none_takes_entropy() -> None:
    g = dt.Generator()
    s = g.seed()
    assert g.initial_seed() == s
    assert 0 <= s < 2**64
    assert dt.Generator().initial_seed() != dt.Generator().initial_seed()
    assert g.manual_seed(3) is g
    assert g.device == dt.Device("cpu") and "initial_seed=3" in repr(g)


def test_state_round_trip() -> None:
    g = dt.Generator(5)
    dt.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype == dt.uint8 and state.shape == (37,)
    a = values(dt.randn(10, generator=g))
    g.set_state(state)
    np.testing.assert_array_equal(values(dt.randn(10, generator=g)), a)
    dt.set_rng_state(state)
    np.testing.assert_array_equal(values(dt.randn(10)), a)
    assert dt.get_rng_state().shape == (37,)


def test_bad_states_are_refused_and_change_nothing() -> None:
    g = dt.Generator(5)
    before = g.get_state()
    with pytest.raises(TypeError, match="uint8"):
        g.set_state(dt.zeros(37))
    with pytest.raises(TypeError, match="uint8"):
        g.set_state(np.zeros(37, np.uint8))
    with pytest.raises(ValueError, match="37 bytes"):
        g.set_state(dt.zeros(36, dtype=dt.uint8))
    with pytest.raises(ValueError, match="get_state"):
        g.set_state(dt.zeros(37, dtype=dt.uint8))  # an even PCG64 increment: not a state
    np.testing.assert_array_equal(values(g.get_state()), values(before))


# --- distributions --------------------------------------------------------------------------------------------------

N = 20_000


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_rand_and_uniform_moments_and_ranges(seed: int) -> None:
    g = dt.Generator(seed)
    for dtype in FLOATS:
        u = values(dt.rand(N, generator=g, dtype=dtype)).astype(np.float64)
        assert u.min() >= 0.0 and u.max() < 1.0
        assert abs(u.mean() - 0.5) < 0.02 and abs(u.var() - 1 / 12) < 0.01
        v = values(dt.uniform(-2.0, 6.0, (N,), generator=g, dtype=dtype)).astype(np.float64)
        assert v.min() >= -2.0 and v.max() < 6.0
        assert abs(v.mean() - 2.0) < 0.15 and abs(v.var() - 64 / 12) < 0.3


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_normal_moments(seed: int) -> None:
    g = dt.Generator(seed)
    for dtype in FLOATS:
        z = values(dt.randn(N, generator=g, dtype=dtype)).astype(np.float64)
        assert abs(z.mean()) < 0.05 and abs(z.std() - 1.0) < 0.05
        x = values(dt.normal(3.0, 2.0, (N,), generator=g, dtype=dtype)).astype(np.float64)
        assert abs(x.mean() - 3.0) < 0.1 and abs(x.std() - 2.0) < 0.1


def test_normal_with_tensors_broadcasts_mean_and_std() -> None:
    g = dt.Generator(0)
    mean = dt.tensor([[-10.0], [10.0]], dtype=dt.float32)
    std = dt.tensor([0.5, 1.0, 2.0] * 2000, dtype=dt.float32)
    x = dt.normal(mean, std, generator=g)
    assert x.shape == (2, 6000) and x.dtype == dt.float32
    v = values(x)
    np.testing.assert_allclose(v.mean(axis=1), [-10.0, 10.0], atol=0.1)
    np.testing.assert_allclose(v[0, ::3].std(), 0.5, rtol=0.1)
    np.testing.assert_allclose(v[1, 2::3].std(), 2.0, rtol=0.1)
    y = dt.normal(mean, 0.0)
    np.testing.assert_array_equal(values(y), [[-10.0], [10.0]])
    z = dt.normal(1.0, dt.zeros(3))
    np.testing.assert_array_equal(values(z), [1.0, 1.0, 1.0])


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, shape=SHAPES, low=st.integers(-50, 50), span=st.integers(1, 20))
def test_randint_range(seed: int, shape: tuple[int, ...], low: int, span: int) -> None:
    r = values(dt.randint(low, low + span, shape, generator=dt.Generator(seed)))
    assert r.dtype == np.int64 and r.shape == shape
    if r.size:
        assert r.min() >= low and r.max() < low + span


def test_randint_covers_its_range_and_takes_pytorch_forms() -> None:
    g = dt.Generator(3)
    r = values(dt.randint(5, (1000,), generator=g))
    assert set(r.tolist()) == {0, 1, 2, 3, 4}
    r = values(dt.randint(-2, 2, (1000,), generator=g, dtype=dt.int8))
    assert r.dtype == np.int8 and set(r.tolist()) == {-2, -1, 0, 1}
    b = values(dt.randint(0, 2, (1000,), generator=g, dtype=dt.bool))
    assert b.dtype == np.bool_ and set(b.tolist()) == {False, True}
    f = values(dt.randint(0, 3, (100,), generator=g, dtype=dt.float16))
    assert set(f.tolist()) <= {0.0, 1.0, 2.0}
    assert dt.randint(0, 10, [2, 3]).shape == (2, 3)


def test_random_inplace_ranges() -> None:
    g = dt.Generator(0)
    t = dt.empty(2000, dtype=dt.uint8).random_(generator=g)
    assert values(t).max() > 200  # [0, 255]
    b = dt.empty(200, dtype=dt.bool).random_(generator=g)
    assert set(values(b).tolist()) == {False, True}
    f = dt.empty(2000, dtype=dt.float16).random_(generator=g)
    v = values(f)
    assert v.min() >= 0 and v.max() <= 2048 and np.all(v == np.round(v))
    u = dt.empty(1000, dtype=dt.uint64).random_(generator=g)
    assert values(u).max() > 2**63  # the whole uint64 range
    i = dt.empty(1000, dtype=dt.int64).random_(3, 7, generator=g)
    assert set(values(i).tolist()) == {3, 4, 5, 6}


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, p=st.floats(0.0, 1.0))
def test_bernoulli_mean(seed: int, p: float) -> None:
    g = dt.Generator(seed)
    x = values(dt.empty(N).bernoulli_(p, generator=g))
    assert set(np.unique(x).tolist()) <= {0.0, 1.0}
    assert abs(x.mean() - p) < 0.03
    probs = dt.tensor([0.0, 1.0, p] * 1000)
    y = values(dt.bernoulli(probs, generator=g))
    assert np.all(y[0::3] == 0) and np.all(y[1::3] == 1)


def test_bernoulli_forms_and_dtypes() -> None:
    g = dt.Generator(1)
    t = dt.zeros(4, 1000, dtype=dt.int32)
    t.bernoulli_(dt.tensor([[0.0], [1.0], [0.5], [0.25]]), generator=g)
    v = values(t)
    assert v.dtype == np.int32 and np.all(v[0] == 0) and np.all(v[1] == 1)
    assert abs(v[2].mean() - 0.5) < 0.1 and abs(v[3].mean() - 0.25) < 0.1
    b = dt.bernoulli(dt.zeros(3, dtype=dt.bool), 1.0)
    assert b.dtype == dt.bool and values(b).all()
    assert dt.bernoulli(dt.ones(3, dtype=dt.float16)).dtype == dt.float16


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_multinomial_frequencies(seed: int) -> None:
    g = dt.Generator(seed)
    w = dt.tensor([[1.0, 0.0, 3.0], [0.0, 2.0, 2.0]])
    s = values(dt.multinomial(w, 4000, True, generator=g))
    assert s.shape == (2, 4000) and s.dtype == np.int64
    np.testing.assert_allclose(np.bincount(s[0], minlength=3) / 4000, [0.25, 0.0, 0.75], atol=0.03)
    np.testing.assert_allclose(np.bincount(s[1], minlength=3) / 4000, [0.0, 0.5, 0.5], atol=0.03)
    d = values(dt.multinomial(dt.tensor([1.0, 1.0, 5.0, 0.0, 2.0]), 4, generator=g))
    assert sorted(d.tolist()) == [0, 1, 2, 4]  # without replacement: distinct, never the zero weight


def test_multinomial_without_replacement_follows_the_weights() -> None:
    g = dt.Generator(0)
    firsts = [int(dt.multinomial(dt.tensor([1.0, 9.0]), 1, generator=g).item()) for _ in range(400)]
    assert abs(np.mean(firsts) - 0.9) < 0.05


def test_multinomial_never_draws_a_zero_weight_over_many_rows() -> None:
    w = dt.tensor(np.tile([1.0, 2.0, 0.0, 0.0], (3000, 1)))
    s = values(dt.multinomial(w, 50, True, generator=dt.Generator(0)))
    counts = np.bincount(s.ravel(), minlength=4) / s.size
    assert counts[2] == 0 and counts[3] == 0 and abs(counts[1] - 2 / 3) < 0.01


@settings(max_examples=20, deadline=None)
@given(seed=SEEDS, n=st.integers(0, 50))
def test_randperm_is_a_permutation(seed: int, n: int) -> None:
    p = values(dt.randperm(n, generator=dt.Generator(seed)))
    assert p.dtype == np.int64
    np.testing.assert_array_equal(np.sort(p), np.arange(n))
    f = values(dt.randperm(n, generator=dt.Generator(seed), dtype=dt.float32))
    np.testing.assert_array_equal(f, p.astype(np.float32))  # the same draws, cast


@settings(max_examples=8, deadline=None)
@given(seed=SEEDS)
def test_more_samplers_moments(seed: int) -> None:
    g = dt.Generator(seed)
    for dtype in FLOATS:
        e = values(dt.empty(N, dtype=dtype).exponential_(2.0, generator=g)).astype(np.float64)
        assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.03
        ln = values(dt.empty(N, dtype=dtype).log_normal_(0.5, 0.25, generator=g)).astype(np.float64)
        assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.02 and abs(np.log(ln).std() - 0.25) < 0.02
        c = values(dt.empty(N + 1, dtype=dtype).cauchy_(1.0, 2.0, generator=g)).astype(np.float64)
        assert abs(np.median(c) - 1.0) < 0.15
        q1, q3 = np.percentile(c, [25, 75])  # the quartiles of Cauchy(m, s) are m -+ s
        assert abs(q1 + 1.0) < 0.2 and abs(q3 - 3.0) < 0.2
    for dtype in (dt.int32, dt.float32):
        k = values(dt.empty(N, dtype=dtype).geometric_(0.25, generator=g)).astype(np.float64)
        assert k.min() >= 1 and np.all(k == np.round(k)) and abs(k.mean() - 4.0) < 0.15


def test_more_samplers_errors() -> None:
    t = dt.zeros(3)
    with pytest.raises(ValueError, match="lambd > 0"):
        t.exponential_(0.0)
    with pytest.raises(ValueError, match=r"p in \(0, 1\]"):
        t.geometric_(0.0)
    with pytest.raises(ValueError, match="std >= 0"):
        t.log_normal_(0.0, -1.0)
    with pytest.raises(ValueError, match="sigma >= 0"):
        t.cauchy_(0.0, float("nan"))
    with pytest.raises(TypeError, match="geometric_"):
        dt.zeros(3, dtype=dt.bool).geometric_(0.5)
    with pytest.raises(TypeError, match="exponential_"):
        dt.zeros(3, dtype=dt.int64).exponential_()
    assert t.version == 0
    big = values(dt.zeros(1000, dtype=dt.int8).geometric_(1e-6, generator=dt.Generator(0)))
    assert big.max() == 127  # clipped to the dtype's range


# --- dtypes, devices, methods ---------------------------------------------------------------------------------------


def test_default_dtypes_and_dtype_argument() -> None:
    assert dt.rand(2).dtype == dt.float64  # NumPy's default float, as dt.empty
    assert dt.randn(2, dtype=dt.float16).dtype == dt.float16
    assert dt.randint(3, (2,)).dtype == dt.int64
    assert dt.randperm(3).dtype == dt.int64
    assert dt.rand((2, 3), dtype="float32").shape == (2, 3)
    assert dt.rand().shape == ()


def test_like_functions() -> None:
    x = dt.zeros(2, 3, dtype=dt.float32)
    g = dt.Generator(0)
    r = dt.rand_like(x, generator=g)
    assert r.shape == (2, 3) and r.dtype == dt.float32 and values(r).max() < 1
    assert dt.randn_like(x, dtype=dt.float64).dtype == dt.float64
    i = dt.randint_like(x, 3)
    assert i.dtype == dt.float32 and set(values(i).ravel().tolist()) <= {0.0, 1.0, 2.0}
    assert set(values(dt.randint_like(dt.zeros(100, dtype=dt.int8), -2, 0)).tolist()) == {-2, -1}
    assert dt.rand_like(x, device="meta").device.type == "meta"
    with pytest.raises(ValueError, match="low < high"):
        dt.randint_like(x, 3, 3)
    with pytest.raises(TypeError, match="uniform_"):
        dt.rand_like(dt.zeros(2, dtype=dt.int64))
    with pytest.raises(TypeError, match="Tensor"):
        dt.rand_like(np.zeros(2))  # type: ignore[arg-type]


def test_float16_rand_never_reaches_one() -> None:
    u = values(dt.rand(200_000, dtype=dt.float16, generator=dt.Generator(0)))
    assert u.max() < 1.0 and u.min() >= 0.0


def test_uniform_stays_below_to_after_rounding() -> None:
    # float32 values of 1 + u * 1e-7 round to 1 + 1.19e-7 = to's float32 value often: kept below it.
    t = dt.empty(10_000, dtype=dt.float32).uniform_(1.0, 1.0 + 1e-7, generator=dt.Generator(0))
    assert values(t).max() < np.float32(1.0 + 1e-7)


def test_meta_tensors_check_arguments_only() -> None:
    m = dt.rand(3, 4, device="meta")
    assert m.device.type == "meta" and m.shape == (3, 4)
    assert dt.randperm(5, device="meta").shape == (5,)
    with pytest.raises(ValueError, match="from_ <= to"):
        dt.empty(2, device="meta").uniform_(1.0, 0.0)


def test_tensor_methods() -> None:
    g = dt.Generator(0)
    t = dt.empty(3, 4)
    assert t.uniform_(generator=g) is t and t.version == 1
    assert t.normal_(0.0, 2.0, generator=g) is t and t.version == 2
    assert t.random_(0, 3, generator=g) is t
    assert t.bernoulli_(generator=g) is t
    assert dt.tensor([0.1, 0.9]).multinomial(3, True, generator=g).shape == (3,)
    assert not hasattr(dt.Tensor, "uniform") and not hasattr(dt.Tensor, "random")


def test_strided_tensors_are_filled_through_their_view() -> None:
    base = dt.zeros(4, 6)
    view = base[:, ::2]
    view.uniform_(5.0, 6.0, generator=dt.Generator(0))
    b = values(base)
    assert np.all(b[:, 1::2] == 0) and np.all((b[:, ::2] >= 5) & (b[:, ::2] < 6))


# --- out= rules ----------------------------------------------------------------------------------------------------


def test_out_of_the_right_shape_is_written_in_place() -> None:
    out = dt.zeros(2, 3, dtype=dt.float32)
    assert dt.rand(2, 3, out=out, generator=dt.Generator(0)) is out
    assert out.version == 1 and out.dtype == dt.float32
    np.testing.assert_array_equal(values(out), values(dt.rand(2, 3, generator=dt.Generator(0), dtype=dt.float32)))
    i = dt.zeros(5, dtype=dt.int32)
    assert dt.randint(0, 4, (5,), out=i) is i and values(i).max() < 4
    p = dt.zeros(6, dtype=dt.int64)
    assert dt.randperm(6, out=p) is p and sorted(values(p).tolist()) == list(range(6))
    n = dt.zeros(2)
    assert dt.normal(dt.zeros(2), dt.zeros(2), out=n) is n


def test_out_of_another_shape_is_resized_with_a_warning() -> None:
    out = dt.zeros(2)
    with pytest.warns(UserWarning, match="resized"):
        assert dt.randn(3, 2, out=out) is out
    assert out.shape == (3, 2) and out.version == 1
    empty = dt.empty(0, dtype=dt.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dt.randperm(4, out=empty)  # an empty out is resized silently
    assert empty.shape == (4,)


def test_out_that_cannot_be_resized_or_does_not_match_is_refused_and_unchanged() -> None:
    array = np.zeros(2)
    out = dt.from_numpy(array)
    with pytest.raises(dt.ShapeError, match="does not own"):
        dt.rand(3, out=out)
    assert out.shape == (2,) and out.version == 0
    o = dt.zeros(3)
    with pytest.raises(TypeError, match="does not match the dtype of out"):
        dt.rand(3, out=o, dtype=dt.float32)
    with pytest.raises(TypeError, match="out"):
        dt.rand(3, out=np.zeros(3))  # type: ignore[arg-type]
    with pytest.raises(dt.CastingError):
        dt.bernoulli(dt.full((3,), 0.5), out=dt.zeros(3, dtype=dt.int64))
    with pytest.raises(dt.DeviceMismatchError):
        dt.rand(3, out=o, device="meta")
    assert o.version == 0 and values(o).tolist() == [0, 0, 0]


# --- errors ----------------------------------------------------------------------------------------------------------


def test_bad_dtypes_are_refused() -> None:
    with pytest.raises(TypeError, match="uniform_"):
        dt.rand(3, dtype=dt.int64)
    with pytest.raises(TypeError, match="normal_"):
        dt.randn(3, dtype=dt.int32)
    with pytest.raises(TypeError, match="random_"):
        dt.randint(0, 3, (2,), dtype=dt.complex64)
    with pytest.raises(TypeError, match="randperm"):
        dt.randperm(3, dtype=dt.bool)
    with pytest.raises(TypeError, match="multinomial"):
        dt.multinomial(dt.tensor([1, 2]), 1)
    with pytest.raises(TypeError, match="bernoulli"):
        dt.bernoulli(dt.tensor([1, 0]))  # integer probabilities
    with pytest.raises(TypeError):
        dt.rand(3, dtype="nonsense")


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_complex_draws_as_pytorch(device: str) -> None:
    # PyTorch draws a complex tensor as its real view: rand/uniform_ each part from [from_, to); randn/normal_
    # the complex normal (each part with std / sqrt(2), the mean added to both parts).
    g = dt.Generator(device=device).manual_seed(7)
    z = dt.randn(100_000, dtype=dt.complex128, generator=g, device=device).cpu().numpy()
    assert z.dtype == np.complex128
    assert abs(np.mean(np.abs(z) ** 2) - 1.0) < 0.03 and abs(z.real.std() - z.imag.std()) < 0.02
    u = dt.rand(50_000, dtype=dt.complex64, generator=g, device=device).cpu().numpy()
    assert u.dtype == np.complex64 and (u.real >= 0).all() and (u.real < 1).all() and (u.imag < 1).all()
    assert abs(u.real.mean() - 0.5) < 0.02 and abs(u.imag.mean() - 0.5) < 0.02
    t = dt.zeros(50_000, dtype=dt.complex128, device=device)
    t.uniform_(2.0, 3.0, generator=g)
    w = t.cpu().numpy()
    assert (w.real >= 2).all() and (w.imag < 3).all() and abs(w.imag.mean() - 2.5) < 0.02
    t.normal_(1.0, 2.0, generator=g)
    n = t.cpu().numpy()
    assert abs(n.real.mean() - 1.0) < 0.05 and abs(n.imag.mean() - 1.0) < 0.05
    assert abs(n.real.std() - 2.0 / np.sqrt(2.0)) < 0.05
    assert dt.randn_like(t).dtype == dt.rand_like(t).dtype == dt.complex128


def test_bad_bounds_and_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="low < high"):
        dt.randint(5, 5, (2,))
    with pytest.raises(ValueError, match="does not fit"):
        dt.randint(0, 300, (2,), dtype=dt.uint8)
    with pytest.raises(ValueError, match="does not fit"):
        dt.randint(-1, 2, (2,), dtype=dt.bool)
    with pytest.raises(ValueError, match="does not fit"):
        dt.randint(0, 2**25, (2,), dtype=dt.float32)
    with pytest.raises(TypeError, match="size"):
        dt.randint(5)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="size"):
        dt.randint(1, 5)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="'low'"):
        dt.randint(1.5, 5, (2,))  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="from_ <= to"):
        dt.uniform(2.0, 1.0, (3,))
    with pytest.raises(ValueError, match="finite"):
        dt.uniform(0.0, float("inf"), (3,))
    with pytest.raises(ValueError, match="beyond"):
        dt.empty(2, dtype=dt.float16).uniform_(-60000.0, 60000.0)
    with pytest.raises(ValueError, match="std >= 0"):
        dt.normal(0.0, -1.0, (3,))
    with pytest.raises(ValueError, match="std >= 0"):
        dt.normal(dt.zeros(2), dt.tensor([1.0, -1.0]))
    with pytest.raises(TypeError, match="size"):
        dt.normal(0.0, 1.0)
    with pytest.raises(TypeError, match="not taken"):
        dt.normal(dt.zeros(2), 1.0, (2,))
    with pytest.raises(ValueError, match="negative"):
        dt.rand(-1)
    with pytest.raises(ValueError, match="non-negative"):
        dt.randperm(-1)
    with pytest.raises(ValueError, match="ambiguous"):
        dt.empty(3).random_(10)
    with pytest.raises(ValueError, match="less than"):
        dt.empty(3).random_(4, 2)


def test_bad_probabilities_are_refused_and_change_nothing() -> None:
    t = dt.zeros(3)
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="0 <= p <= 1"):
            t.bernoulli_(p)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        t.bernoulli_(dt.tensor([0.5, 1.2, 0.0]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        dt.bernoulli(dt.tensor([0.5, float("nan")]))
    with pytest.raises(dt.ShapeError, match="broadcast"):
        t.bernoulli_(dt.zeros(2, 3))
    assert t.version == 0 and values(t).tolist() == [0, 0, 0]


def test_bad_multinomial_weights_are_refused() -> None:
    out = dt.zeros(2, dtype=dt.int64)
    for w, message in (
        (dt.tensor([1.0, -1.0]), "non-negative"),
        (dt.tensor([1.0, float("inf")]), "finite"),
        (dt.tensor([0.0, 0.0]), "sums to 0"),
        (dt.tensor([1.0, 0.0, 0.0]), "fewer non-zero"),
    ):
        with pytest.raises(ValueError, match=message):
            dt.multinomial(w, 2, out=out)
        assert out.version == 0
    with pytest.raises(ValueError, match="without replacement"):
        dt.multinomial(dt.ones(2), 3)
    with pytest.raises(ValueError, match="positive"):
        dt.multinomial(dt.ones(2), 0)
    with pytest.raises(ValueError, match="1-d or 2-d"):
        dt.multinomial(dt.ones(2, 2, 2), 1)
    with pytest.raises(ValueError, match="no categories"):
        dt.multinomial(dt.ones(2, 0), 1, True)
    with pytest.raises(TypeError, match="replacement"):
        dt.multinomial(dt.ones(2), 1, 1)  # type: ignore[arg-type]


def test_bad_generators_are_refused() -> None:
    with pytest.raises(TypeError, match="Generator"):
        dt.rand(3, generator=np.random.default_rng(0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Generator"):
        dt.empty(2).normal_(generator=0)  # type: ignore[arg-type]


# --- ops like any other -----------------------------------------------------------------------------------------


def test_random_ops_are_marked_nondeterministic() -> None:
    for name in RANDOM_OPS:
        assert get_op(name).nondeterministic is True, name
    assert get_op("add").nondeterministic is False
    assert get_op("uniform").public_functional is False
    assert get_op("multinomial").public_functional is True
    assert get_op("uniform").schema.params[-1].category == GENERATOR


def test_modes_see_the_random_ops() -> None:
    with library.CountingMode() as mode:
        dt.rand(3)
        dt.randn(2, out=dt.empty(0))
        dt.randint(3, (2,))
        dt.bernoulli(dt.rand(2))
        dt.multinomial(dt.ones(2), 1)
        dt.randperm(3)
    counts = dict(mode.counts)
    for name in ("uniform_", "normal.out", "random_", "bernoulli", "multinomial", "randperm.out"):
        assert counts.get(name, 0) >= 1, (name, counts)


def test_an_override_replaces_a_random_kernel() -> None:
    def fives(self: Any, from_: float, to: float, *, generator: Any, out: Any) -> None:
        out.array[...] = 5.0

    handle = library.override("uniform", "cpu", fives)
    try:
        assert values(dt.rand(3)).tolist() == [5.0, 5.0, 5.0]
    finally:
        handle.remove()
    assert values(dt.rand(3)).max() < 1.0


def test_generator_category_in_meta_annotations_and_schema_strings() -> None:
    def noise(self: TensorMeta, *, generator: dt.Generator | None = None) -> TensorSpec:
        return self.shape, self.dtype

    schema = schema_from_meta("noise", noise)
    assert schema.params[1].category == GENERATOR and schema.params[1].annotation == "Generator | None"

    def required(self: TensorMeta, generator: dt.Generator) -> TensorSpec:
        return self.shape, self.dtype

    with pytest.raises(TypeError, match=r"Generator \| None"):
        schema_from_meta("required", required)
    from devtensor.library.schema_parser import parse_schema

    parsed = parse_schema("noise(Tensor self, *, Generator? generator=None) -> Tensor")
    assert parsed.params[1].category == GENERATOR
    with pytest.raises(ValueError, match="optional"):
        parse_schema("noise(Tensor self, *, Generator generator) -> Tensor")


# --- CUDA through the stand-in ------------------------------------------------------------------------------------


def test_cuda_generators_are_reproducible_and_differ_from_cpu(fake_cupy: ModuleType) -> None:
    g = dt.Generator(11, device="cuda")
    assert g.device == dt.Device("cuda:0")
    a = dt.rand(50, device="cuda", generator=g)
    assert a.device.type == "cuda"
    g.manual_seed(11)
    np.testing.assert_array_equal(values(dt.rand(50, device="cuda", generator=g)), values(a))
    cpu = values(dt.rand(50, generator=dt.Generator(11)))
    assert not np.array_equal(cpu, values(a))  # the streams differ per device type
    dt.manual_seed(4)
    x = values(dt.randn(20, device="cuda"))
    dt.manual_seed(4)
    np.testing.assert_array_equal(values(dt.randn(20, device="cuda")), x)


def test_cuda_sampling_paths(fake_cupy: ModuleType) -> None:
    g = dt.Generator(0, device="cuda")
    checks: list[tuple[dt.Tensor, Callable[[np.ndarray[Any, Any]], bool]]] = [
        (dt.randint(2, 5, (100,), device="cuda", generator=g), lambda v: set(v.tolist()) == {2, 3, 4}),
        (dt.randperm(10, device="cuda", generator=g), lambda v: sorted(v.tolist()) == list(range(10))),
        (dt.normal(1.0, 0.0, (3,), device="cuda", generator=g), lambda v: v.tolist() == [1.0] * 3),
        (dt.bernoulli(dt.full((4,), 1.0, device="cuda"), generator=g), lambda v: v.tolist() == [1.0] * 4),
        (dt.rand(10, dtype=dt.float16, device="cuda", generator=g), lambda v: v.max() < 1 and v.dtype == np.float16),
        (
            dt.multinomial(dt.tensor([[0.0, 1.0], [1.0, 0.0]], device="cuda"), 3, True, generator=g),
            lambda v: v.tolist() == [[1, 1, 1], [0, 0, 0]],
        ),
        (
            dt.multinomial(dt.tensor([1.0, 1.0, 1.0], device="cuda"), 3, generator=g),
            lambda v: len(set(v.tolist())) == 3,
        ),
    ]
    for t, ok in checks:
        assert t.device.type == "cuda" and ok(values(t)), t


def test_generator_on_another_device_is_refused(fake_cupy: ModuleType) -> None:
    cuda_gen = dt.Generator(0, device="cuda")
    t = dt.zeros(3)
    with pytest.raises(dt.DeviceMismatchError, match="generator"):
        t.uniform_(generator=cuda_gen)
    with pytest.raises(dt.DeviceMismatchError, match="generator"):
        dt.rand(3, device="cuda", generator=dt.Generator(0))
    with pytest.raises(dt.DeviceMismatchError, match="generator"):
        dt.rand(3, device="cuda:1", generator=cuda_gen)
    assert t.version == 0
    with pytest.raises(NotImplementedError, match="state"):
        cuda_gen.get_state()


def test_cuda_draws_run_on_the_generators_device(fake_cupy: ModuleType) -> None:
    g1 = dt.Generator(0, device="cuda:1")
    t = dt.rand(4, device="cuda:1", generator=g1)  # the stand-in raises for a draw outside the device guard
    assert t.device == dt.Device("cuda:1")
    assert dt.rand(2, device="cuda:1").device == dt.Device("cuda:1")  # that device's default generator


def test_manual_seed_needs_no_cuda_and_reseeds_cuda_defaults_on_next_use(fake_cupy: ModuleType) -> None:
    dt.manual_seed(9)
    a = values(dt.rand(5, device="cuda"))
    dt.rand(5, device="cuda")
    dt.manual_seed(9)
    np.testing.assert_array_equal(values(dt.rand(5, device="cuda")), a)
    del sys.modules["cupy"]  # CuPy gone: seeding the CPU still works
    try:
        dt.manual_seed(10)
    finally:
        sys.modules["cupy"] = fake_cupy


def test_a_custom_op_can_take_a_generator() -> None:
    from devtensor.generator import default_generator_for
    from devtensor.kernels.random import check_generator

    def noise(self: TensorMeta, scale: float = 1.0, *, generator: dt.Generator | None = None) -> TensorSpec:
        check_generator("noise", generator, self.device)
        return self.shape, self.dtype

    op = library.custom_op("test_random_noise", inplace=True)(noise)
    try:

        @op.impl("cpu")
        def _(self: Any, scale: float, *, generator: dt.Generator | None, out: Any) -> None:
            gen = generator if generator is not None else default_generator_for(self.device)
            out.array[...] = scale * gen.stream.normal(out.array.shape, np.float64)

        assert op.schema.params[-1].category == GENERATOR
        a = values(op.functional(dt.zeros(4), 2.0, generator=dt.Generator(3)))
        assert op.inplace is not None
        b = op.inplace(dt.zeros(4), 2.0, generator=dt.Generator(3))
        np.testing.assert_array_equal(values(b), a)
        with pytest.raises(TypeError, match="generator"):
            op.functional(dt.zeros(4), generator=1)
    finally:
        remove_op("test_random_noise")


def test_normal_with_tensor_arguments_names_itself_for_its_out() -> None:
    # The draw is copied into out by clone: its errors are normal's.
    with pytest.raises(dt.DeviceMismatchError, match=r"^normal: expected out on the device of mean and std \(meta\)"):
        dt.normal(dt.empty(3, device="meta"), 1.0, out=dt.empty(3))
    with pytest.raises(dt.CastingError, match=r"^normal: .*argument 'out'"):
        dt.normal(dt.zeros(3), 1.0, out=dt.zeros(3, dtype=dt.int64))
    with pytest.raises(dt.CastingError, match=r"^fft_fftfreq: .*argument 'out'"):
        dt.fft.fftfreq(4, out=dt.zeros(4, dtype=dt.int64))
