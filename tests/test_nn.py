"""The NN-style ops against NumPy references: softmax, log_softmax (values, stability with huge logits), relu
(all three variants), one_hot, cross_entropy (values and bad targets) and upsample_nearest1d (output_size and
scale_factor); meta tensors and out variants. Where PyTorch is installed, a few cases are also checked against
it, since its semantics are the ones followed."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_state import assert_unchanged, snapshot

import devtensor as dt
from devtensor.dtypes import DType
from devtensor.errors import ArgumentTypeError, CastingError, ShapeError
from devtensor.tensor import Tensor

Array = npt.NDArray[Any]

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]
bounded = st.floats(-50, 50, allow_nan=False, width=32)


# --- softmax, log_softmax ----------------------------------------------------------------------------------


def softmax_reference(x: Array, axis: int | None) -> Array:
    """The textbook formula, in extended precision (inputs are bounded, so exp does not overflow)."""
    e = np.exp(x.astype(np.longdouble))
    return np.asarray(e / e.sum(axis=axis, keepdims=True))


@st.composite
def logits_and_dim(draw: st.DrawFn) -> tuple[Array, int, int | None]:
    shape = draw(shapes)
    dtype: np.dtype[Any] = draw(st.sampled_from(FLOATS))
    arr = draw(hnp.arrays(dtype, shape, elements=bounded))
    if not shape:
        return arr, draw(st.sampled_from([0, -1])), None
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return arr, dim, dim % len(shape)


@given(case=logits_and_dim())
def test_softmax_and_log_softmax_match_numpy(case: tuple[Array, int, int | None]) -> None:
    arr, dim, axis = case
    t = dt.from_numpy(arr)
    expected = softmax_reference(arr, axis)
    rtol = 1e-5 if arr.dtype == np.float32 else 1e-12
    s = dt.softmax(t, dim)
    assert (s.shape, s.dtype) == (arr.shape, arr.dtype)
    np.testing.assert_allclose(s.numpy().astype(np.longdouble), expected, rtol=rtol, atol=rtol)
    ls = t.log_softmax(dim)
    assert (ls.shape, ls.dtype) == (arr.shape, arr.dtype)
    np.testing.assert_allclose(ls.numpy().astype(np.longdouble), np.log(expected), rtol=rtol, atol=rtol)


def test_softmax_is_stable_with_huge_logits() -> None:
    x = dt.tensor([[1e30, 0.0, -1e30], [1000.0, 1000.0, -np.inf], [-1e300, -1e300, -1e300]])
    s = dt.softmax(x, 1).numpy()
    np.testing.assert_array_equal(s[0], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(s[1], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(s[2], [1 / 3] * 3)
    ls = dt.log_softmax(x, -1).numpy()
    np.testing.assert_array_equal(ls[0], [0.0, -1e30, -2e30])
    np.testing.assert_allclose(ls[1], [-math.log(2), -math.log(2), -np.inf])
    # float32 logits far beyond exp's range
    f = dt.tensor([200.0, 100.0, 0.0], dtype=dt.float32)
    assert np.isfinite(dt.log_softmax(f, 0).numpy()).all()
    np.testing.assert_allclose(dt.log_softmax(f, 0).numpy(), [0.0, -100.0, -200.0], rtol=1e-6)
    # log_softmax keeps very negative log-probabilities that log(softmax) would turn into -inf
    assert dt.log_softmax(dt.tensor([0.0, -800.0]), 0).numpy()[1] == pytest.approx(-800.0)


def test_softmax_special_values_as_pytorch() -> None:
    s = dt.softmax(dt.tensor([-np.inf, -np.inf]), 0).numpy()
    assert np.isnan(s).all()
    # torch.softmax([inf, 1.0]) is [nan, nan] (checked against torch 2.13): the whole slice is nan.
    s = dt.softmax(dt.tensor([np.inf, 1.0]), 0).numpy()
    assert np.isnan(s).all()


def test_softmax_dtypes_and_argument_errors() -> None:
    assert dt.softmax(dt.tensor([1, 2, 3]), 0).dtype == np.float64
    h = dt.softmax(dt.tensor([1.0, 2.0], dtype=dt.float16), 0)
    assert h.dtype == np.float16
    np.testing.assert_allclose(h.numpy(), softmax_reference(np.array([1.0, 2.0]), 0), rtol=1e-3)
    for fn in (dt.softmax, dt.log_softmax):
        with pytest.raises(ArgumentTypeError, match=fn.__name__):
            fn(dt.tensor([1j]), 0)
        with pytest.raises(IndexError, match=rf"{fn.__name__}: dimension out of range"):
            fn(dt.ones(2, 3), 2)
        with pytest.raises(TypeError, match=rf"{fn.__name__}: argument 'dim'"):
            fn(dt.ones(2, 3), None)  # type: ignore[arg-type]
        assert fn(dt.empty(0, 3), 0).shape == (0, 3)
        assert fn(dt.tensor(5.0), -1).item() == (1.0 if fn is dt.softmax else 0.0)


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("device", ["cpu", "cuda:0", "meta"])
def test_softmax_dtype_argument(device: str) -> None:
    # PyTorch's dtype=: self is cast to it first; the result has it.
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
    for arr in (x, x.astype(np.int64), x.astype(np.float16)):
        t = dt.tensor(arr, device=device)
        for dtype in (dt.float32, "float64", np.float16):
            s, ls = dt.softmax(t, 1, dtype=dtype), t.log_softmax(1, dtype=dtype)
            assert s.dtype == ls.dtype == np.dtype(dtype) and s.shape == x.shape
            if device != "meta":
                expected = softmax_reference(arr.astype(np.dtype(dtype)), 1)
                rtol = 1e-3 if s.dtype == np.float16 else 1e-6
                np.testing.assert_allclose(s.cpu().numpy(), expected, rtol=rtol, atol=rtol)
                np.testing.assert_allclose(ls.cpu().numpy(), np.log(expected), rtol=rtol, atol=rtol)
    t = dt.tensor(x, device=device)
    for fn in (dt.softmax, dt.log_softmax):
        with pytest.raises(TypeError, match=rf"{fn.__name__}: argument 'dtype' must be a floating dtype"):
            fn(t, 0, dtype=dt.int32)
        with pytest.raises(TypeError, match=fn.__name__):
            fn(t, 0, dtype="complex64")


def test_softmax_out_variant() -> None:
    x = dt.from_numpy(np.random.default_rng(1).standard_normal((3, 4)))
    expected = dt.softmax(x, 1)
    out = dt.empty(3, 4)
    assert dt.softmax(x, 1, out=out) is out
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    out32 = dt.empty(0, dtype=dt.float32)  # an empty out is resized silently; float64 -> float32 is same_kind
    dt.log_softmax(x, 1, out=out32)
    assert out32.shape == (3, 4)
    np.testing.assert_allclose(out32.numpy(), dt.log_softmax(x, 1).numpy(), rtol=1e-6)
    wrong = dt.zeros(2)
    with pytest.warns(UserWarning, match="resized"):
        dt.softmax(x, 0, out=wrong)
    np.testing.assert_allclose(wrong.numpy(), dt.softmax(x, 0).numpy())
    bad = dt.zeros(3, 4, dtype=dt.int64)
    snap = snapshot(x, bad)
    with pytest.raises(CastingError, match="softmax"):
        dt.softmax(x, 1, out=bad)
    assert_unchanged(snap)


# --- relu ------------------------------------------------------------------------------------------------


@given(
    arr=hnp.arrays(
        st.sampled_from([np.dtype(t) for t in (np.int8, np.int64, np.uint8, np.float16, np.float32, np.float64)]),
        shapes,
    )
)
def test_relu_matches_numpy_in_every_variant(arr: Array) -> None:
    expected = np.maximum(arr, 0)
    t = dt.from_numpy(arr.copy())
    r = dt.relu(t)
    assert r.dtype == arr.dtype
    np.testing.assert_array_equal(r.numpy(), expected)
    out = dt.empty(*arr.shape, dtype=arr.dtype)
    assert dt.relu(t, out=out) is out
    np.testing.assert_array_equal(out.numpy(), expected)
    assert t.relu_() is t
    assert t.version == 1
    np.testing.assert_array_equal(t.numpy(), expected)


def test_relu_aliasing_and_dtype_errors() -> None:
    t = dt.tensor([-1.0, 0.5, np.nan])
    assert dt.relu(t, out=t) is t  # elementwise: out may be the input itself
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.5, np.nan])
    for bad in (dt.tensor([True]), dt.tensor([1j])):
        with pytest.raises(ArgumentTypeError, match="relu"):
            dt.relu(bad)
    assert dt.relu(dt.empty(2, 3, device="meta")).shape == (2, 3)


def test_relu_direct_path_keeps_layouts_casts_and_the_inline_dtype_check() -> None:
    """relu's fronts call np.maximum themselves (meta.DIRECT) and read the meta's dtype cache inline: a strided
    input, an out of another dtype and an inplace call give the kernel's results; a refused dtype stays refused
    after accepted ones filled the cache."""
    base = np.arange(-6.0, 6.0).reshape(3, 4)
    t = dt.from_numpy(base.copy()).transpose(0, 1)
    r = dt.relu(t)
    np.testing.assert_array_equal(r.numpy(), np.maximum(base.T, 0))
    out = dt.empty(4, 3, dtype=dt.float32)
    assert dt.relu(t, out=out) is out and out.version == 1
    np.testing.assert_array_equal(out.numpy(), np.maximum(base.T, 0).astype(np.float32))
    with pytest.raises(CastingError):
        dt.relu(t, out=dt.empty(4, 3, dtype=dt.int64))
    i = dt.tensor([-3, 4], dtype=dt.int16)
    assert i.relu_() is i and i.version == 1 and i.numpy().tolist() == [0, 4]
    assert dt.relu(dt.tensor(-2.0)).item() == 0.0  # (0-d: the kernel's ufunc call, an array result)
    with pytest.raises(ArgumentTypeError, match="relu"):
        dt.relu(dt.tensor([True, False]))


# --- one_hot ---------------------------------------------------------------------------------------------


@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    dtype=st.sampled_from([np.dtype(t) for t in (np.int8, np.int32, np.int64, np.uint8, np.uint64)]),
    num_classes=st.integers(1, 6),
    data=st.data(),
)
def test_one_hot_matches_numpy(
    shape: tuple[int, ...], dtype: np.dtype[Any], num_classes: int, data: st.DataObject
) -> None:
    idx = data.draw(hnp.arrays(dtype, shape, elements=st.integers(0, num_classes - 1)))
    r = dt.one_hot(dt.from_numpy(idx), num_classes)
    expected = np.eye(num_classes, dtype=np.int64)[idx.astype(np.int64)]
    assert (r.shape, r.dtype) == ((*shape, num_classes), dt.int64)
    np.testing.assert_array_equal(r.numpy(), expected)


def test_one_hot_errors() -> None:
    idx = dt.tensor([0, 3, 1])
    with pytest.raises(ValueError, match=r"one_hot: num_classes=-1 .* pass num_classes explicitly"):
        dt.one_hot(idx)
    with pytest.raises(ValueError, match="num_classes"):
        dt.one_hot(idx, -2)
    with pytest.raises(TypeError, match="one_hot: argument 'num_classes'"):
        dt.one_hot(idx, 3.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="one_hot: argument 'self' must be an integer tensor"):
        dt.one_hot(dt.tensor([0.0]), 2)
    out = dt.zeros(3, 3, dtype=dt.int64)
    snap = snapshot(idx, out)
    with pytest.raises(IndexError, match=r"one_hot: class index 3 .* out of bounds for 3 classes"):
        dt.one_hot(idx, 3, out=out)
    with pytest.raises(IndexError, match="class index -1"):
        dt.one_hot(dt.tensor([-1, 0]), 3)
    assert_unchanged(snap)
    assert dt.one_hot(dt.tensor([0, 3, 1]), 4, out=dt.empty(0, dtype=dt.int64)).shape == (3, 4)
    assert dt.one_hot(dt.empty(2, 5, dtype=dt.int32, device="meta"), 7).shape == (2, 5, 7)
    assert dt.one_hot(dt.tensor([], dtype=dt.int64), 0).shape == (0, 0)


# --- cross_entropy ---------------------------------------------------------------------------------------


def cross_entropy_reference(x: Array, target: Array) -> float:
    """Mean over samples of -log(softmax(x)[target]), in extended precision."""
    p = softmax_reference(x, 1)
    return float(np.mean(-np.log(p[np.arange(len(target)), target])))


@given(
    n=st.integers(1, 6),
    c=st.integers(1, 5),
    dtype=st.sampled_from(FLOATS),
    data=st.data(),
)
def test_cross_entropy_matches_numpy(n: int, c: int, dtype: np.dtype[Any], data: st.DataObject) -> None:
    x = data.draw(hnp.arrays(dtype, (n, c), elements=bounded))
    target = data.draw(hnp.arrays(np.dtype(np.int64), (n,), elements=st.integers(0, c - 1)))
    loss = dt.cross_entropy(dt.from_numpy(x), dt.from_numpy(target))
    assert (loss.shape, loss.dtype) == ((), dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert loss.item() == pytest.approx(cross_entropy_reference(x, target), rel=rtol, abs=rtol)


def test_cross_entropy_is_stable_and_accepts_any_integer_target() -> None:
    x = dt.tensor([[1e4, 0.0], [0.0, 1e4]], dtype=dt.float32)
    assert dt.cross_entropy(x, dt.tensor([0, 1], dtype=dt.uint8)).item() == 0.0
    assert dt.cross_entropy(x, dt.tensor([1, 1], dtype=dt.int32)).item() == pytest.approx(5e3)
    with pytest.warns(RuntimeWarning):
        empty = dt.cross_entropy(dt.empty(0, 3), dt.empty(0, dtype=dt.int64))
    assert math.isnan(empty.numpy())


def test_cross_entropy_errors() -> None:
    x = dt.zeros(3, 4)
    with pytest.raises(ShapeError, match=r"'target' must have shape \[\] for input of shape \[4\], got \[3\]"):
        dt.cross_entropy(dt.zeros(4), dt.zeros(3, dtype=dt.int64))
    with pytest.raises(ShapeError, match=r"'target' must have shape \[N\] = \[3\] .* got \[2\]"):
        dt.cross_entropy(x, dt.zeros(2, dtype=dt.int64))
    with pytest.raises(ShapeError, match="class probabilities 'target' must have the shape of 'input'"):
        dt.cross_entropy(x, dt.zeros(3))
    with pytest.raises(TypeError, match="'input' must be a real tensor"):
        dt.cross_entropy(dt.zeros(3, 4, dtype=dt.complex64), dt.zeros(3, dtype=dt.int64))
    out = dt.zeros(())
    for bad in ([0, 4, 1], [0, -1, 2]):
        target = dt.tensor(bad)
        snap = snapshot(x, target, out)
        with pytest.raises(IndexError, match=rf"cross_entropy(_full)?: class index {bad[1]} in argument 'target'"):
            dt.cross_entropy(x, target, out=out)
        assert_unchanged(snap)
    assert dt.cross_entropy(x, dt.tensor([0, 1, 2]), out=out) is out
    assert out.item() == pytest.approx(math.log(4))
    m = dt.cross_entropy(dt.empty(5, 3, device="meta"), dt.empty(5, dtype=dt.int64, device="meta"))
    assert (m.shape, m.dtype) == ((), dt.float64)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 5),
    c=st.integers(1, 5),
    data=st.data(),
    layout=st.sampled_from(["c", "transposed", "strided"]),
)
def test_cross_entropy_is_the_same_for_every_target_dtype_and_layout(
    n: int, c: int, data: st.DataObject, layout: str
) -> None:
    """The loss bit for bit whatever the targets' integer dtype (the class check folded into the gather for those
    castable to intp, a reduce first for the others) and the logits' layout; a bad class index, negative or past
    C, raises IndexError naming it for every dtype, and the out tensor keeps its value."""
    x = data.draw(hnp.arrays(np.dtype(np.float32), (n, c), elements=bounded))
    target = data.draw(hnp.arrays(np.dtype(np.int64), (n,), elements=st.integers(0, c - 1)))
    logits = {
        "c": lambda: dt.tensor(x),
        "transposed": lambda: dt.tensor(np.ascontiguousarray(x.T)).transpose(0, 1),
        "strided": lambda: dt.tensor(np.repeat(x, 2, axis=1))[:, ::2],
    }[layout]()
    expected = dt.cross_entropy(dt.tensor(x), dt.tensor(target)).numpy().tobytes()
    for code in np.typecodes["AllInteger"]:
        if np.iinfo(code).max < c:
            continue
        loss = dt.cross_entropy(logits, dt.tensor(target.astype(code)))
        assert loss.numpy().tobytes() == expected, code
        bad = target.copy()
        bad[data.draw(st.integers(0, n - 1))] = c if np.dtype(code).kind == "u" or c > 100 else -1
        out = dt.full((), 5.0)
        with pytest.raises(IndexError, match=rf"cross_entropy: class index {bad.max() if bad.max() >= c else -1} "):
            dt.cross_entropy(logits, dt.tensor(bad.astype(code)), out=out)
        assert out.item() == 5.0 and out.version == 0


def test_cross_entropy_writes_out_before_a_condition_surfaces() -> None:
    """The direct path (the front calls the array kernel) keeps the floating-point rule: an underflow the caller
    made an error (quiet keeps the caller's ``under``) and NumPy's "Mean of empty slice" warning made an error
    both surface after out holds the loss, with the version moved once."""
    x = dt.tensor([[0.0, -200.0], [1.0, 2.0]], dtype=dt.float32)
    t = dt.tensor([0, 1])
    want = dt.cross_entropy(x, t).numpy()
    out = dt.zeros((), dtype=dt.float32)
    with np.errstate(under="raise"), pytest.raises(FloatingPointError, match="underflow"):
        dt.cross_entropy(x, t, out=out)
    assert out.numpy().tobytes() == want.tobytes() and out.version == 1
    empty = dt.zeros(())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="Mean of empty slice"):
            dt.cross_entropy(dt.empty(0, 3), dt.empty(0, dtype=dt.int64), out=empty)
    assert math.isnan(empty.item()) and empty.version == 1


@pytest.mark.parametrize("shape", [(32, 10), (7, 3), (1, 1), (33, 17)])
@pytest.mark.parametrize("special", [None, np.inf, -np.inf, np.nan])
def test_cross_entropy_after_softmax_of_the_same_logits_is_bit_for_bit_a_fresh_one(
    shape: tuple[int, int], special: float | None
) -> None:
    """A cross_entropy after a softmax of the same logits (the main job's step) has the bytes of one computed from
    scratch, and a write to the logits in between (here through the NumPy array the tensor shares) is seen."""
    rng = np.random.default_rng(9)
    raw = (rng.standard_normal(shape) * 5).astype(np.float32)
    if special is not None:
        raw[0, 0] = special
    x = dt.from_numpy(raw)
    t = dt.from_numpy(rng.integers(0, shape[1], shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dt.softmax(dt.zeros(2, 2), 1)  # (another softmax's statistics: not these logits)
        fresh = dt.cross_entropy(x, t).numpy().tobytes()
        dt.softmax(x, 1)
        assert dt.cross_entropy(x, t).numpy().tobytes() == fresh
        dt.softmax(x, 1, out=dt.empty(*shape))
        raw[-1, -1] += 1.0  # a write devtensor does not see
        changed = dt.cross_entropy(x, t).numpy().tobytes()
        dt.softmax(dt.zeros(2, 2), 1)
        assert changed == dt.cross_entropy(x, t).numpy().tobytes()
    assert changed != fresh or special is not None or shape[1] == 1  # (one class: the loss is 0)


def test_cross_entropy_into_an_out_of_another_dtype_rounds_once_from_the_compute_dtype() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    t = rng.integers(0, 4, 7)
    loss = dt.cross_entropy(dt.from_numpy(x), dt.from_numpy(t))
    wide = dt.cross_entropy(dt.from_numpy(x), dt.from_numpy(t), out=dt.empty((), dtype=dt.float64))
    assert loss.dtype == dt.float32 and wide.dtype == dt.float64
    assert wide.item() == float(loss.item())  # the float32 loss, widened: not a float64 mean


# --- upsample_nearest1d ----------------------------------------------------------------------------------


def upsample_reference(x: Array, out_len: int, scale: float | None) -> Array:
    """For each output position, the source position PyTorch's legacy ``nearest`` rule picks."""
    length = x.shape[2]
    src = []
    for j in range(out_len):
        s = math.floor(j * length / out_len) if scale is None else min(math.floor(j / scale), length - 1)
        src.append(s)
    return x[:, :, src]


@given(
    n=st.integers(0, 2),
    c=st.integers(0, 3),
    length=st.integers(1, 9),
    out_len=st.integers(1, 25),
    dtype=st.sampled_from([np.dtype(np.float32), np.dtype(np.int16), np.dtype(np.bool_)]),
)
def test_upsample_with_output_size_matches_numpy(
    n: int, c: int, length: int, out_len: int, dtype: np.dtype[Any]
) -> None:
    x = (np.arange(n * c * length) % 7).astype(dtype).reshape(n, c, length)
    r = dt.upsample_nearest1d(dt.from_numpy(x), out_len)
    assert (r.shape, r.dtype) == ((n, c, out_len), dtype)
    np.testing.assert_array_equal(r.numpy(), upsample_reference(x, out_len, None))


@given(
    length=st.integers(1, 9),
    scale=st.one_of(st.sampled_from([0.5, 1, 1.5, 2, 2.5, 3, 1 / 3]), st.floats(0.2, 5.0)),
)
def test_upsample_with_scale_factor_matches_numpy(length: int, scale: float) -> None:
    out_len = math.floor(length * scale)
    x = np.arange(2 * 3 * length, dtype=np.float64).reshape(2, 3, length)
    if out_len == 0:
        with pytest.raises(ValueError, match="output length"):
            dt.upsample_nearest1d(dt.from_numpy(x), scale_factor=scale)
        return
    r = dt.upsample_nearest1d(dt.from_numpy(x), scale_factor=scale)
    assert r.shape == (2, 3, out_len)
    np.testing.assert_array_equal(r.numpy(), upsample_reference(x, out_len, scale))


def test_upsample_documented_examples() -> None:
    x = dt.tensor([[[10.0, 11.0, 12.0]]])
    assert dt.upsample_nearest1d(x, scale_factor=1.5).tolist() == [[[10.0, 10.0, 11.0, 12.0]]]
    assert dt.upsample_nearest1d(x, 6).tolist() == [[[10.0, 10.0, 11.0, 11.0, 12.0, 12.0]]]
    assert dt.upsample_nearest1d(x, 2).tolist() == [[[10.0, 11.0]]]
    assert dt.upsample_nearest1d(x, scale_factor=0.7).tolist() == [[[10.0, 11.0]]]


UPSAMPLE_ERRORS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({}, ValueError, "exactly one of 'output_size' and 'scale_factor' must be given, got neither"),
    ({"output_size": 4, "scale_factor": 2.0}, ValueError, "got both"),
    ({"output_size": 0}, ValueError, "'output_size' must be > 0"),
    ({"output_size": 2.0}, TypeError, "'output_size' must be an int"),
    ({"output_size": True}, TypeError, "'output_size' must be an int"),
    ({"scale_factor": "2"}, TypeError, "'scale_factor' must be a float"),
    ({"scale_factor": -1.0}, ValueError, "'scale_factor' must be finite and > 0"),
    ({"scale_factor": math.inf}, ValueError, "'scale_factor' must be finite and > 0"),
    ({"scale_factor": 0.1}, ValueError, r"floor\(3 \* 0.1\) = 0"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), UPSAMPLE_ERRORS)
def test_upsample_argument_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    for device in ("cpu", "meta"):
        with pytest.raises(error, match="upsample_nearest1d: .*" + match):
            dt.upsample_nearest1d(dt.zeros(1, 2, 3, device=device), **kwargs)


def test_upsample_shape_errors_meta_and_out() -> None:
    with pytest.raises(ShapeError, match=r"must be 3-d \[N, C, L\] .* got shape \[2, 3\]"):
        dt.upsample_nearest1d(dt.zeros(2, 3), 4)
    with pytest.raises(ShapeError, match="length L > 0"):
        dt.upsample_nearest1d(dt.zeros(1, 2, 0), 4)
    m = dt.upsample_nearest1d(dt.empty(4, 3, 10, dtype=dt.float32, device="meta"), scale_factor=2.5)
    assert (m.shape, m.dtype, m.device.type) == ((4, 3, 25), dt.float32, "meta")
    x = dt.from_numpy(np.arange(12.0).reshape(1, 2, 6))
    out = dt.empty(1, 2, 4, dtype=dt.float32)
    assert dt.upsample_nearest1d(x, 4, out=out) is out
    np.testing.assert_array_equal(out.numpy(), upsample_reference(x.numpy(), 4, None))
    with pytest.warns(UserWarning, match="resized"):
        dt.upsample_nearest1d(x, 3, out=out)
    assert out.shape == (1, 2, 3)


# --- the same cases against PyTorch, where it is installed ---------------------------------------------------


def test_against_pytorch_where_installed() -> None:
    torch = pytest.importorskip("torch")
    functional: Any = torch.nn.functional
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 7)) * 30
    target = rng.integers(0, 7, 5)
    expected = functional.cross_entropy(torch.from_numpy(x), torch.from_numpy(target)).item()
    assert dt.cross_entropy(dt.from_numpy(x), dt.from_numpy(target)).item() == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(
        dt.log_softmax(dt.from_numpy(x), 0).numpy(), functional.log_softmax(torch.from_numpy(x), 0).numpy()
    )
    np.testing.assert_array_equal(
        dt.one_hot(dt.from_numpy(target), 9).numpy(), functional.one_hot(torch.from_numpy(target), 9).numpy()
    )
    signal = np.arange(2 * 3 * 7, dtype=np.float32).reshape(2, 3, 7)
    ts = torch.from_numpy(signal)
    for size in (1, 3, 7, 10, 14, 23):
        ours = dt.upsample_nearest1d(dt.from_numpy(signal), size).numpy()
        np.testing.assert_array_equal(ours, functional.interpolate(ts, size=size, mode="nearest").numpy())
    for scale in (0.5, 1.5, 2.0, 2.09, 3.7, 1 / 3):
        ours = dt.upsample_nearest1d(dt.from_numpy(signal), scale_factor=scale).numpy()
        theirs = functional.interpolate(ts, scale_factor=scale, mode="nearest").numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=f"scale_factor={scale}")


# --- CUDA impls: through the NumPy-backed CuPy stand-in everywhere, and on a real GPU when one is present -------

_X = np.random.default_rng(7).standard_normal((4, 5)) * 10
_T = np.array([0, 4, 2, 2])
_S = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
NN_CUDA_CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("softmax", (_X, 1), {}),
    ("softmax", (_X.astype(np.float16), 0), {}),
    ("log_softmax", (_X, -1), {}),
    ("log_softmax", (np.array(3.0), 0), {}),
    ("relu", (_X,), {}),
    ("one_hot", (_T, 6), {}),
    ("cross_entropy", (_X, _T), {}),
    ("cross_entropy", (_X.astype(np.float32), _T.astype(np.uint8)), {}),
    ("upsample_nearest1d", (_S, 12), {}),
    ("upsample_nearest1d", (_S,), {"scale_factor": 0.6}),
]


def _nn_check_on(device: str) -> None:
    for name, args, kwargs in NN_CUDA_CASES:
        fn = getattr(dt, name)
        label = f"{name}{[getattr(a, 'shape', a) for a in args]}"
        want = fn(*[dt.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
        on_device = [dt.tensor(a, device=device) if isinstance(a, np.ndarray) else a for a in args]
        got = fn(*on_device, **kwargs)
        assert str(got.device) == device, label
        assert (got.shape, got.dtype) == (want.shape, want.dtype), label
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, err_msg=label)
        out = dt.empty(*want.shape, dtype=want.dtype, device=device)
        assert fn(*on_device, **kwargs, out=out) is out
        np.testing.assert_allclose(out.cpu().numpy(), want.numpy(), rtol=1e-6, err_msg=label)
    x = dt.tensor(_X, device=device)
    dt.relu_(x)
    np.testing.assert_array_equal(x.cpu().numpy(), np.maximum(_X, 0))
    with pytest.raises(IndexError, match="cross_entropy: class index 5"):
        dt.cross_entropy(dt.tensor(_X, device=device), dt.tensor([0, 5, 1, 1], device=device))


def test_cuda_impls_on_the_stand_in(fake_cupy: Any) -> None:
    fake_cupy.state.writeable_flag = True  # structured._check_writable reads NumPy's writeable flag
    _nn_check_on("cuda:1")
    for name in ("amax", "exp", "take", "equal", "take_along_axis"):
        assert set(fake_cupy.state.devices_of(name)) == {1}, name  # every kernel ran under cuda:1's guard


@pytest.mark.cuda
def test_cuda_impls_on_a_gpu() -> None:
    _nn_check_on("cuda")


# --- upsample_nearest1d picks other source elements than PyTorch at small sizes ----------------------------


def _pytorch_nearest_sources(
    length: int, output_size: int | None, scale_factor: float | None, double: bool = False
) -> list[int]:
    """aten's CPU nearest rule (compute_indices_weights_nearest): scale = L / L_out (size given) or
    1 / scale_factor, and j * scale, in the opmath type (float64 for float64 input: ``double``, else float32),
    then floorf of the product rounded to float32."""
    opmath = np.float64 if double else np.float32
    if output_size is not None:
        scale = opmath(length) / opmath(output_size)
        n = output_size
    else:
        assert scale_factor is not None
        scale = opmath(1.0 / scale_factor)
        n = math.floor(length * scale_factor)
    return [min(int(np.floor(np.float32(opmath(j) * scale))), length - 1) for j in range(n)]


@pytest.mark.parametrize("dtype", [dt.float64, dt.float32], ids=["float64", "float32"])
@pytest.mark.parametrize(
    "length, output_size, scale_factor",
    [(14, 46, None), (29, None, 0.28), (26, 22, None)],
    ids=["L14-size46", "L29-scale0.28", "L26-size22"],
)
def test_upsample_nearest1d_matches_pytorch_at_small_lengths(
    length: int, output_size: int | None, scale_factor: float | None, dtype: Any
) -> None:
    # Indices follow PyTorch's arithmetic per input dtype: e.g. L = 14, output_size=46 gives source 6 at position
    # 23 for float32 input (float32 product 6.9999995) and 7 for float64 (float64 product 7.000000000000001).
    # (This test pinned float32 arithmetic for float64 input, PyTorch's older kernel, until issue 9 item 10.)
    x = dt.arange(float(length), dtype=dtype).reshape(1, 1, length)
    result = dt.upsample_nearest1d(x, output_size, scale_factor)
    expected = [float(i) for i in _pytorch_nearest_sources(length, output_size, scale_factor, dtype == dt.float64)]
    assert result.reshape(-1).tolist() == expected


# --- softmax / log_softmax of a slice holding +inf: half nan, half a confident 0 -------------------------------


@pytest.mark.parametrize(
    "fn, limit", [(dt.softmax, [1.0, 0.0]), (dt.log_softmax, [0.0, -math.inf])], ids=["softmax", "log_softmax"]
)
def test_softmax_of_a_slice_with_positive_infinity(fn: Callable[[Tensor, int], Tensor], limit: list[float]) -> None:
    result = fn(dt.tensor([math.inf, 1.0]), 0).tolist()
    # torch gives [nan, nan] (the module follows PyTorch); the limit would be `limit`; once [nan, 0.0] and
    # [nan, -inf]: a nan probability beside a finite one in the same slice
    assert all(math.isnan(v) for v in result) or result == limit


def test_numpy_integer_sizes_are_ints() -> None:
    assert dt.one_hot(dt.tensor([1, 0]), np.int64(3)).shape == (2, 3)  # type: ignore[arg-type]  # (typed int; NumPy integers work at run time)
    assert dt.upsample_nearest1d(dt.ones(1, 1, 3), np.int32(6)).shape == (1, 1, 6)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="one_hot: argument 'num_classes'"):
        dt.one_hot(dt.tensor([1]), 2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", [dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint64])
def test_class_checks_of_every_integer_dtype(dtype: DType) -> None:
    # (the check reads a signed index as unsigned, one reduce: not where a negative index would then look valid,
    # as -1 of int8 does, 255, among 300 classes)
    hi = int(np.iinfo(dtype).max)
    for n in (3, 300):
        logits = dt.zeros(2, n, dtype=dt.float32)
        assert dt.one_hot(dt.tensor([0, min(n - 1, hi)], dtype=dtype), n).shape == (2, n)
        dt.cross_entropy(logits, dt.tensor([0, min(n - 1, hi)], dtype=dtype))
        if np.dtype(dtype).kind == "i":
            with pytest.raises(IndexError, match="class index -1"):
                dt.one_hot(dt.tensor([0, -1], dtype=dtype), n)
            with pytest.raises(IndexError, match="class index -1"):
                dt.cross_entropy(logits, dt.tensor([-1, 0], dtype=dtype))
        if hi >= n:
            with pytest.raises(IndexError, match=f"class index {n} "):
                dt.cross_entropy(logits, dt.tensor([0, n], dtype=dtype))


@pytest.mark.parametrize(
    ("call", "shape"),
    [
        (lambda out: dt.log_softmax(dt.tensor([[1e6, -1e6]]), 1, out=out), (1, 2)),
        (lambda out: dt.cross_entropy(dt.tensor([[1e6, -1e6]]), dt.tensor([1]), out=out), ()),
    ],
    ids=["log_softmax", "cross_entropy"],  # (softmax's values lie in [0, 1]: they never overflow)
)
def test_an_overflow_of_the_narrowing_write_into_out_is_reported_after_the_write(call: Any, shape: Any) -> None:
    """The cast of the float64 result into a float16 out runs in the caller's floating-point state, as every op's
    narrowing write: under 'raise' the out holds the result (inf where it overflowed) and its version moved."""
    out = dt.zeros(shape, dtype=dt.float16)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        call(out)
    assert out.version == 1 and np.isinf(out.numpy()).any()
    quiet = dt.zeros(shape, dtype=dt.float16)
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        call(quiet)
    np.testing.assert_array_equal(quiet.numpy(), out.numpy())


@given(hnp.arrays(np.float64, hnp.array_shapes(max_dims=3), elements=st.floats(-50, 50)), st.floats(0.1, 4.0))
def test_softplus_matches_the_formula_with_numpy(x: npt.NDArray[Any], beta: float) -> None:
    # PyTorch's formula: x itself where beta * x > threshold, else log1p(exp(beta * x)) / beta
    z = x * beta
    expected = np.where(z > 20.0, x, np.log1p(np.exp(z)) / beta)
    np.testing.assert_array_equal(dt.softplus(dt.tensor(x), beta=beta).numpy(), expected)


def test_softplus_dtypes_out_and_errors() -> None:
    x = dt.tensor([-2.0, 0.0, 3.0], dtype=dt.float32)
    got = dt.softplus(x, 1.0, 1.0)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), [np.log1p(np.exp(-2.0)), np.log(2.0), 3.0], rtol=1e-6)
    out = dt.empty(3, dtype=dt.float32)
    assert dt.softplus(x, out=out) is out and out.version == 1
    before = snapshot(x)
    with pytest.raises(ArgumentTypeError, match=r"softplus.*int64"):
        dt.softplus(dt.tensor([1, 2]))
    with pytest.raises(ArgumentTypeError, match=r"softplus.*beta"):
        dt.softplus(x, beta="2")  # type: ignore[arg-type]
    assert_unchanged(before)


# --- cross_entropy with PyTorch's every argument -------------------------------------------------------------


def _cross_entropy_ref(
    x: Any, t: Any, weight: Any = None, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0
) -> Any:
    """PyTorch's cross-entropy in NumPy (float64): see ``devtensor.kernels.nn.cross_entropy_full``."""
    x = np.moveaxis(x.astype(np.float64), 1 if x.ndim > 1 else 0, -1)
    classes, e = x.shape[-1], label_smoothing
    w = np.ones(classes) if weight is None else weight.astype(np.float64)
    logp = x - np.log(np.exp(x).sum(axis=-1, keepdims=True))
    if t.dtype.kind == "f":
        q = np.moveaxis(t, 1 if t.ndim > 1 else 0, -1) * (1 - e) + e / classes
        loss = -(logp * w * q).sum(axis=-1)
        return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / loss.size}[reduction]
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    wt = np.where(valid, w[safe], 0.0)
    nll = -np.take_along_axis(logp, safe[..., None], axis=-1)[..., 0] * wt
    smooth = np.where(valid, -(logp * w).sum(axis=-1), 0.0)
    if reduction == "none":
        return (1 - e) * nll + e / classes * smooth
    scale = wt.sum() if reduction == "mean" else 1.0
    return np.asarray(((1 - e) * nll.sum() + e / classes * smooth.sum()) / scale)


_CE_CASES: list[tuple[tuple[int, ...], Any, dict[str, Any]]] = [
    ((2, 4, 3), np.array([[0, 3, -100], [1, 1, 2]]), {"weight": True, "reduction": "none"}),
    ((2, 4, 3), np.array([[0, 3, -100], [1, 1, 2]]), {"weight": True}),
    ((2, 4, 3), np.array([[0, 3, 1], [1, 1, 2]]), {"ignore_index": 1, "reduction": "sum", "label_smoothing": 0.25}),
    ((2, 4), np.array([3, 0]), {"weight": True, "label_smoothing": 0.1}),
    ((2, 4), np.array([3, -100]), {}),  # (the common call with PyTorch's ignored class)
    ((4,), np.array(2), {}),
    ((2, 4, 3), "probabilities", {"label_smoothing": 0.2}),
    ((3, 4), "probabilities", {"weight": True, "reduction": "none"}),
    ((3, 4), np.array([-100, -100, -100]), {}),  # (every sample ignored: nan, as PyTorch)
]


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
@pytest.mark.parametrize("case", range(len(_CE_CASES)))
def test_cross_entropy_takes_pytorchs_arguments(case: int, device: str) -> None:
    shape, target, kwargs = _CE_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(shape)
    t = rng.uniform(0, 1, shape) if isinstance(target, str) else target
    w = rng.uniform(0.5, 2.0, shape[1 if len(shape) > 1 else 0])
    ref_kwargs = {**kwargs, "weight": w if kwargs.get("weight") else None}
    got = dt.cross_entropy(
        dt.tensor(x, device=device),
        dt.tensor(t, device=device),
        **{**kwargs, "weight": dt.tensor(w, device=device) if kwargs.get("weight") else None},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _cross_entropy_ref(x, t, **ref_kwargs)
    assert got.shape == np.shape(want) and got.dtype == np.float64
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-12, atol=1e-12)


def test_cross_entropy_argument_errors() -> None:
    x, t = dt.zeros(2, 3), dt.tensor([0, 1])
    with pytest.raises(IndexError, match="class index 3"):
        dt.cross_entropy(x, dt.tensor([0, 3]), ignore_index=0)
    with pytest.raises(ValueError, match="reduction"):
        dt.cross_entropy(x, t, reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        dt.cross_entropy(x, t, label_smoothing=1.5)
    with pytest.raises(dt.ShapeError, match="'weight' must have shape"):
        dt.cross_entropy(x, t, weight=dt.ones(2))
    with pytest.raises(dt.ShapeError, match="class probabilities"):
        dt.cross_entropy(x, dt.zeros(2, 2))
    with pytest.raises(dt.ShapeError, match="class indices"):
        dt.cross_entropy(dt.zeros(2, 3, 4), dt.tensor([0, 1]))
    with pytest.raises(TypeError, match=r"class indices .integers. or class probabilities"):
        dt.cross_entropy(x, dt.tensor([True, False]))
    with pytest.raises(ValueError, match="size_average"):
        dt.cross_entropy(x, t, size_average=True)  # type: ignore[arg-type]
