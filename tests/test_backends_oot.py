"""Out-of-tree backends through devtensor.library: registration, tensors on the new device, the backend
fallback, native kernels winning over it, and the common code (meta checks, out/inplace rules, overlap checks,
version bumps) applying to a backend devtensor knows nothing about."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterator
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import devtensor as dt
from devtensor import Tensor, library
from devtensor.backends import Backend
from devtensor.dtypes import Scalar
from devtensor.errors import CastingError, DeviceMismatchError, MemoryOverlapError, NoKernelError, ShapeError
from devtensor.structured import StructuredOp, TensorSpec
from devtensor.typed import ConstOut, CPUTensor


class OotTensor(Tensor):
    """A tensor on the test device ``oottest`` (NumPy memory)."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def array(self) -> np.ndarray[Any, np.dtype[Any]]: ...

    else:
        array = property(attrgetter("_array"))


OOT = library.register_backend("oottest", key="OotTest", tensor_class=OotTensor)
FALLBACK_CALLS: Counter[str] = Counter()


def counting_fallback(op: StructuredOp, *args: Any, out: ConstOut[Any], **kwargs: Any) -> None:
    FALLBACK_CALLS[op.name] += 1
    library.cpu_fallback(op, *args, out=out, **kwargs)


@pytest.fixture
def fallback() -> Iterator[Counter[str]]:
    """The CPU-copy fallback registered for ``oottest`` during one test (counting calls per op)."""
    FALLBACK_CALLS.clear()
    with library.register_fallback("oottest", counting_fallback):
        yield FALLBACK_CALLS


pytestmark = pytest.mark.usefixtures("remove_new_ops")


def oot(values: Any, dtype: Any = None) -> Tensor:
    return dt.tensor(values, dtype=dtype, device="oottest")


def test_registration_record_and_errors() -> None:
    assert OOT.name == "oottest" and OOT.key is dt.DispatchKey("OotTest") and OOT.tensor_class is OotTensor
    assert OOT.device is dt.Device("oottest")
    for bad in ("Bad", "x-y", "cpu", "oottest", "", "\uff58", "__init__"):
        with pytest.raises(ValueError):
            library.register_backend(bad)
    with pytest.raises(ValueError, match="exists already"):
        library.register_backend("oottest2", key="CPU")

    class Unslotted(Tensor):
        pass

    class Slotted(Tensor):
        __slots__ = ()

    with pytest.raises(ValueError, match="__slots__"):
        library.register_backend("oottest3", tensor_class=Unslotted)
    with pytest.raises(ValueError, match="another backend"):
        library.register_backend("oottest4", tensor_class=CPUTensor)
    with pytest.raises(ValueError, match="serves device type"):
        library.register_backend("oottest5", tensor_class=Slotted, backend=Backend())
    with pytest.raises(ValueError):
        dt.Device("oottest3")  # nothing half-registered


def test_tensors_live_on_the_new_device() -> None:
    t = oot([[1.0, 2.0], [3.0, 4.0]])
    assert type(t) is OotTensor and t.device.type == "oottest" and t.dtype == np.float64
    assert OOT.refine(t) is t
    with pytest.raises(DeviceMismatchError):
        OOT.refine(dt.ones(1))
    assert "device='oottest'" in repr(t)
    back = t.cpu()
    assert type(back) is CPUTensor and back.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert dt.zeros(3, device="oottest").tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(TypeError, match="cpu"):
        np.asarray(t)  # no implicit host view of another device's memory
    # view ops got the CPU view kernels (NumPy-backed): views share storage and version
    v = t.reshape(4)
    assert type(v) is OotTensor and v.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert t.transpose(0, 1).tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_no_kernel_and_no_fallback_is_an_error_naming_the_key() -> None:
    with pytest.raises(NoKernelError, match=r"OotTest.*oottest"):
        dt.exp(oot([1.0]))
    # meta still works for everything: the meta key is separate
    assert dt.exp(oot([1.0]).to("meta")).shape == (1,)


def test_fallback_runs_builtin_and_custom_ops(fallback: Counter[str]) -> None:
    a_np = np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.5]])
    a, b = oot(a_np), oot(a_np * 2)
    cases: list[tuple[Tensor, np.ndarray[Any, Any]]] = [
        (dt.exp(a), np.exp(a_np)),
        (dt.add(a, b, alpha=3), a_np + 3 * (a_np * 2)),
        (dt.sum(a, 1), a_np.sum(axis=1)),
        (dt.matmul(a, a.transpose(0, 1)), a_np @ a_np.T),
        (dt.cat([a, b], 0), np.concatenate([a_np, a_np * 2])),
        (dt.where(dt.gt(a, 0), a, b), np.where(a_np > 0, a_np, a_np * 2)),
        (dt.softmax(a, 1), np.exp(a_np) / np.exp(a_np).sum(axis=1, keepdims=True)),
    ]
    for result, expected in cases:
        assert type(result) is OotTensor and result.version == 0
        np.testing.assert_allclose(result.cpu().numpy(), expected, rtol=1e-12)
    assert fallback["exp"] == 1 and fallback["cat"] == 1 and fallback["softmax"] == 1
    # out and inplace variants, with their version bumps; the inputs are never written
    out = dt.empty(2, 3, device="oottest")
    assert dt.mul(a, b, out=out) is out and out.version == 1
    np.testing.assert_allclose(out.cpu().numpy(), a_np * a_np * 2)
    c = a.clone()
    assert dt.sqrt_(dt.abs_(c)) is c and c.version == 2
    np.testing.assert_allclose(c.cpu().numpy(), np.sqrt(np.abs(a_np)))
    np.testing.assert_array_equal(a.cpu().numpy(), a_np)
    assert a.version == 0


def test_fallback_serves_custom_ops_and_needs_a_cpu_kernel(fallback: Counter[str]) -> None:
    def meta(self: Tensor, k: float = 1.0) -> TensorSpec:
        return self.shape, self.dtype

    op = library.custom_op("oot_scale_t", out_may_be_input=True)(meta)
    with pytest.raises(NoKernelError, match="CPU"):
        op.functional(oot([1.0]))  # the fallback finds no CPU kernel to run

    @op.impl("cpu")
    def _(self: CPUTensor, k: float, *, out: ConstOut[CPUTensor]) -> None:
        np.multiply(self.array, k, out=out.array)

    assert op.functional(oot([1.0, 2.0]), 3.0).tolist() == [3.0, 6.0]
    assert op.inplace is not None
    x = oot([1.0, 2.0])
    assert op.inplace(x, 0.5) is x and x.tolist() == [0.5, 1.0] and x.version == 1


def test_the_common_code_applies_to_the_new_backend(fallback: Counter[str]) -> None:
    a = oot([1.0, 2.0, 3.0])
    with pytest.raises(CastingError):
        dt.exp(a, out=dt.empty(3, dtype=dt.int64, device="oottest"))
    with pytest.raises(ShapeError):
        dt.add_(a, oot([[1.0], [2.0]]))  # an inplace op never broadcasts self
    with pytest.raises(MemoryOverlapError):
        dt.add_(a[1:], a[:-1])  # partial overlap
    with pytest.raises(DeviceMismatchError):
        dt.add(a, dt.ones(3))
    assert a.version == 0 and a.tolist() == [1.0, 2.0, 3.0]  # a call that raises changes nothing
    out = dt.empty(5, device="oottest")
    with pytest.warns(UserWarning, match="resized"):
        dt.neg(a, out=out)
    assert out.shape == (3,) and out.tolist() == [-1.0, -2.0, -3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty_out = dt.empty(0, device="oottest")
        dt.neg(a, out=empty_out)  # an out without elements resizes silently
    assert empty_out.shape == (3,)
    assert fallback["neg"] == 2


def test_native_kernels_win_over_the_fallback(fallback: Counter[str]) -> None:
    native: list[str] = []

    def add_native(self: OotTensor | Scalar, other: OotTensor | Scalar, *, alpha: Scalar, out: ConstOut[Any]) -> None:
        native.append("add")
        lhs = self.array if isinstance(self, OotTensor) else self
        rhs = other.array if isinstance(other, OotTensor) else other
        np.add(lhs, np.multiply(rhs, alpha), out=out.array)

    a = oot([1.0, 2.0])
    with library.register_kernel(dt.add, "oottest", add_native):
        assert (a + a).tolist() == [2.0, 4.0]
        assert native == ["add"] and fallback["add"] == 0

        def add_override(
            self: OotTensor | Scalar, other: OotTensor | Scalar, *, alpha: Scalar, out: ConstOut[Any]
        ) -> None:
            native.append("override")
            out.array.fill(7)

        with library.override(dt.add, OOT.key, add_override):
            assert (a + a).tolist() == [7.0, 7.0]  # an override wins over the native kernel
        assert native == ["add", "override"]
    assert (a + a).tolist() == [2.0, 4.0]
    assert fallback["add"] == 1 and native == ["add", "override"]


def test_check_covers_the_new_backend(fallback: Counter[str]) -> None:
    x = dt.tensor([[1.0, -2.0], [3.0, 0.5]])
    report = library.check(dt.mul, [((x, x), {}), ((x, 2.0), {})])
    assert report.ok, str(report)
    assert {key for _, key, _ in report.runs} >= {"cpu", "meta", "oottest"}
    # samples may start on the new device too
    report = library.check(dt.exp, [((x.to("oottest"),), {})], keys=["oottest", "cpu"])
    assert report.ok and {key for _, key, _ in report.runs} == {"oottest", "cpu"}


def test_xp_kernels_receive_the_backends_array_module(fallback: Counter[str]) -> None:
    """An impl taking ``xp`` first, registered for the new key (``op.impl`` or ``library.register_kernel``),
    receives the backend's array module (NumPy for a NumpyBackend); the fallback is not used."""
    modules: list[tuple[str, Any]] = []

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    op = library.custom_op("oot_negate_xp")(meta)

    @op.impl("cpu", "oottest")
    def _(xp: Any, self: Any, *, out: ConstOut[Any]) -> None:
        modules.append(("impl", xp))
        xp.negative(self.array, out=out.array)

    assert op.functional(oot([1.0, -2.0])).tolist() == [-1.0, 2.0]
    assert op.functional(dt.tensor([3.0])).tolist() == [-3.0]
    assert modules == [("impl", OOT.backend.xp), ("impl", np)] and OOT.backend.xp is np

    def doubled(xp: Any, self: Any, *, out: ConstOut[Any]) -> None:
        modules.append(("register_kernel", xp))
        xp.multiply(self.array, 2, out=out.array)

    with library.register_kernel(op, OOT.device, doubled):
        assert op.functional(oot([1.5])).tolist() == [3.0]
    assert op.functional(oot([1.5])).tolist() == [-1.5]  # the impl is back
    assert modules[2:] == [("register_kernel", OOT.backend.xp), ("impl", OOT.backend.xp)]
    assert fallback["oot_negate_xp"] == 0


def test_check_covers_view_ops_on_the_new_backend() -> None:
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    report = library.check("transpose", [((x, 0, 1), {})], keys=["cpu", "oottest"])
    assert report.ok, str(report)
    assert {key for _, key, _ in report.runs} == {"cpu", "oottest"}


def test_register_backend_argument_types() -> None:
    with pytest.raises(TypeError, match="identifier"):
        library.register_backend(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tensor_class"):
        library.register_backend("oottypes", tensor_class=int)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not Tensor itself"):
        library.register_backend("oottypes", tensor_class=Tensor)
