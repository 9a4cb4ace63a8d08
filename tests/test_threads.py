"""Thread safety of op (re)definition: threads call a custom op (functional through ``get_op``, Tensor method,
``devtensor.cpu`` binding and its inplace variant) while others replace or remove it. A call that starts after a
replacement returned uses the new definition; lookups never find a half-registered op; concurrent replacements
and removals do not collide. Views of meta tensors, plan tracing and dispatch modes from several threads: a
handler cache never hands a sentinel to another thread, and a mode sees only its own thread's calls.
Assertions are about order (barriers, events, published versions), never timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import unique

import devtensor as dt
from devtensor import Tensor, library, structured
from devtensor.dispatcher import registry_lock
from devtensor.errors import NoKernelError
from devtensor.structured import TensorSpec, registry
from devtensor.structured.fronts import generate_front
from devtensor.typed import ConstOut, CPUTensor

pytestmark = pytest.mark.usefixtures("remove_new_ops")

#: Threads calling the op in each test, and how many (re)definitions the writers make.
READERS = 4
ROUNDS = 25


def define(name: str, version: int, *, with_lock: bool = True) -> structured.StructuredOp:
    """(Re)define the op ``name``: every variant writes ``version`` everywhere. With ``with_lock``, the
    definition and its CPU kernel are one step (the registry lock held around both)."""

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    def kernel(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = version

    if not with_lock:
        op = library.custom_op(name, replace=True, method=True, out_may_be_input=True)(meta)
        op.impl("cpu")(kernel)
        return op
    with registry_lock:
        op = library.custom_op(name, replace=True, method=True, out_may_be_input=True)(meta)
        op.impl("cpu")(kernel)
    return op


def ways(name: str) -> list[Callable[[Tensor], Tensor]]:
    """Each way a user reaches the op by name: functional (``get_op``), Tensor method, the ``devtensor.cpu``
    binding and its inplace variant."""
    return [
        lambda x: library.get_op(name).functional(x),
        lambda x: getattr(x, name)(),
        lambda x: getattr(dt.cpu, name)(x),
        lambda x: getattr(dt.cpu, name + "_")(x),
    ]


def value(t: Tensor) -> float:
    first: float = t.tolist()[0]
    return first


def run_threads(targets: list[Callable[[], None]]) -> None:
    """Start a thread per target, all released together by a barrier; join them (bounded)."""
    barrier = threading.Barrier(len(targets))

    def start(target: Callable[[], None]) -> Callable[[], None]:
        def body() -> None:
            barrier.wait(timeout=30)
            target()

        return body

    threads = [threading.Thread(target=start(target), daemon=True) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive(), "a thread did not finish"


def test_a_call_after_a_replacement_uses_the_new_definition() -> None:
    name = unique("thr_replace")
    define(name, 0)
    published = [0]  # the last version whose replacement returned
    stop = threading.Event()
    problems: list[str] = []

    def reader() -> None:
        x = dt.zeros(3)
        while not stop.is_set():
            for i, call in enumerate(ways(name)):
                before = published[0]
                try:
                    got = value(call(x))
                except Exception as error:  # any exception is a failure here
                    problems.append(f"way {i}: {type(error).__name__}: {error}")
                    continue
                if got < before:
                    problems.append(f"way {i}: got version {got} after version {before} was defined")

    def writer() -> None:
        try:
            for version in range(1, ROUNDS + 1):
                define(name, version)
                published[0] = version
                # Calls from this thread, after the replacement returned, see it (every way).
                x = dt.zeros(2)
                for i, call in enumerate(ways(name)):
                    got = value(call(x))
                    if got != version:
                        problems.append(f"writer, way {i}: got version {got}, defined {version}")
        except Exception as error:
            problems.append(f"writer: {type(error).__name__}: {error}")
        finally:
            stop.set()

    run_threads([writer] + [reader] * READERS)
    assert problems == []
    op = library.get_op(name)
    assert value(getattr(dt.cpu, name)(dt.zeros(1))) == ROUNDS and getattr(dt.cpu, name).op is op


def test_kernels_registered_after_the_definition_leave_a_window_of_no_kernel_only() -> None:
    """Without the lock around definition and kernel, a call in between sees the new op without its kernel:
    NoKernelError, never a missing op (KeyError, AttributeError) or a stale result."""
    name = unique("thr_window")
    define(name, 0, with_lock=False)
    published = [0]
    stop = threading.Event()
    problems: list[str] = []

    def reader() -> None:
        x = dt.zeros(3)
        while not stop.is_set():
            for i, call in enumerate(ways(name)):
                before = published[0]
                try:
                    got = value(call(x))
                except NoKernelError:
                    continue
                except Exception as error:
                    problems.append(f"way {i}: {type(error).__name__}: {error}")
                    continue
                if got < before:
                    problems.append(f"way {i}: got version {got} after version {before} was defined")

    def writer() -> None:
        try:
            for version in range(1, ROUNDS + 1):
                define(name, version, with_lock=False)
                published[0] = version
        except Exception as error:
            problems.append(f"writer: {type(error).__name__}: {error}")
        finally:
            stop.set()

    run_threads([writer] + [reader] * READERS)
    assert problems == []


@pytest.mark.parametrize("with_lock", [True, False])
def test_two_threads_replacing_one_op(with_lock: bool) -> None:
    name = unique("thr_two")
    define(name, 0)
    problems: list[str] = []
    defined: dict[int, structured.StructuredOp] = {}

    def writer(offset: int) -> Callable[[], None]:
        def body() -> None:
            try:
                for i in range(1, ROUNDS + 1):
                    defined[offset + i] = define(name, offset + i, with_lock=with_lock)
            except Exception as error:
                problems.append(f"writer {offset}: {type(error).__name__}: {error}")

        return body

    def reader() -> None:
        x = dt.zeros(2)
        for _ in range(ROUNDS):
            for call in ways(name):
                try:
                    call(x)
                except NoKernelError:
                    if with_lock:
                        problems.append("NoKernelError with the lock held around definition and kernel")
                except Exception as error:
                    problems.append(f"reader: {type(error).__name__}: {error}")

    run_threads([writer(1000), writer(2000), reader, reader])
    assert problems == []
    # One consistent op at the end: registry, Tensor method and binding all belong to one of the definitions.
    op = library.get_op(name)
    version = next(v for v, defined_op in defined.items() if defined_op is op)
    assert structured.ops_by_name[name] is op
    assert getattr(Tensor, name) is op.functional and getattr(Tensor, name + "_") is op.inplace
    assert getattr(dt.cpu, name).op is op
    assert [value(call(dt.zeros(1))) for call in ways(name)] == [version] * 4


def test_remove_op_during_calls() -> None:
    name = unique("thr_remove")
    held = define(name, 0)
    defined = threading.Event()  # set while the op is defined (set after the definition returned)
    problems: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        x = dt.zeros(2)
        while not stop.is_set():
            if value(held.functional(x)) != 0:  # a reference to a removed op keeps working
                problems.append("held reference changed")
            for i, call in enumerate(ways(name)):
                was_defined = defined.is_set()
                try:
                    call(x)
                except (KeyError, AttributeError) as error:
                    if was_defined and defined.is_set():  # defined throughout the call, yet not found
                        problems.append(f"way {i}: {type(error).__name__} while defined: {error}")
                except Exception as error:
                    problems.append(f"way {i}: {type(error).__name__}: {error}")

    def writer() -> None:
        try:
            for version in range(1, ROUNDS + 1):
                defined.clear()
                library.remove_op(name)
                # After remove_op returned, no lookup by name finds the op.
                with pytest.raises(KeyError):
                    library.get_op(name)
                with pytest.raises(AttributeError):
                    getattr(dt.cpu, name)
                assert not hasattr(Tensor, name)
                define(name, version)
                defined.set()
                assert value(getattr(dt.cpu, name)(dt.zeros(1))) == version
        except Exception as error:
            problems.append(f"writer: {type(error).__name__}: {error!r}")
        finally:
            stop.set()

    defined.set()
    run_threads([writer] + [reader] * READERS)
    assert problems == []


def test_a_binding_compiled_for_a_replaced_op_is_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``devtensor.cpu`` lookup compiles the binding while the op is replaced: the binding compiled for the old
    op is not cached; the lookup gives the new op's binding."""
    name = unique("thr_stale")
    old = define(name, 1)
    compiling = threading.Event()
    replaced = threading.Event()

    def slow_generate_front(op: Any, variant: str, binding: Any = None) -> Any:
        if binding is not None and op is old:
            compiling.set()
            assert replaced.wait(timeout=30)
        return generate_front(op, variant, binding)

    monkeypatch.setattr(registry, "generate_front", slow_generate_front)
    found: list[Any] = []
    thread = threading.Thread(target=lambda: found.append(getattr(dt.cpu, name)), daemon=True)
    thread.start()
    assert compiling.wait(timeout=30)
    new = define(name, 2)  # compiling happens outside the lock: the replacement does not wait for it
    replaced.set()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert found[0].op is new
    assert getattr(dt.cpu, name).op is new and value(getattr(dt.cpu, name)(dt.zeros(1))) == 2


def test_remove_op_of_a_replaced_op_leaves_its_replacement() -> None:
    name = unique("thr_stale_remove")
    old = define(name, 1)
    new = define(name, 2)
    with pytest.raises(KeyError, match="replaced"):
        library.remove_op(old)
    with pytest.raises(KeyError, match="replaced"):
        library.remove_op(old.functional)
    assert library.get_op(name) is new
    assert library.remove_op(name) is new
    with pytest.raises(KeyError):
        library.get_op(name)


def test_registering_a_built_op_in_place_of_another_checks_the_registered_one() -> None:
    name = unique("thr_register")
    first = define(name, 1)

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    built = structured.StructuredOp(name, meta, register=False)
    assert library.get_op(name) is first  # building registers nothing
    with pytest.raises(ValueError, match="defined already"):
        registry.register_op(built)
    second = define(name, 2)
    with pytest.raises(ValueError, match="no longer the registered one"):
        registry.register_op(built, replacing=first)
    assert library.get_op(name) is second


def test_a_new_op_takes_over_the_binding_name_of_an_inplace_variant() -> None:
    """``devtensor.cpu.<name>_`` resolves to the op named ``<name>_`` first: defining that op drops the cached
    inplace binding of ``<name>`` under that attribute name."""
    name = unique("thr_names")
    define(name, 1)
    assert getattr(dt.cpu, name + "_").op is library.get_op(name)

    def meta(self: Tensor) -> TensorSpec:
        return self.shape, self.dtype

    def kernel(self: CPUTensor, *, out: ConstOut[CPUTensor]) -> None:
        out.array[...] = 2

    taker = library.custom_op(name + "_", inplace=False)(meta)  # no method: Tensor has <name>_ already
    taker.impl("cpu")(kernel)
    assert getattr(dt.cpu, name + "_").op is taker
    assert value(getattr(dt.cpu, name + "_")(dt.zeros(1))) == 2


@pytest.fixture
def frequent_switches() -> Any:
    """Threads switched as often as the interpreter allows, so that races show within few calls."""
    import sys

    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def run_together(work: Callable[[int], None], n: int = 6) -> list[BaseException]:
    """Run ``work(i)`` in ``n`` threads started together; the exceptions they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def body(i: int) -> None:
        start.wait()
        try:
            work(i)
        except BaseException as e:  # (collected: the test asserts there are none)
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_a_view_ops_handler_cache_never_holds_the_meta_only_sentinel() -> None:
    # A view front calls whatever the cache holds: "meta only" (no kernel for the Meta key) stays out of it.
    from devtensor.dispatcher import META_ONLY, DispatchKey

    m = dt.empty((3, 4), device="meta")
    for name in ("transpose", "reshape", "split"):
        table = dt.library.get_op(name).table
        assert table.resolve(DispatchKey.Meta, "meta") is META_ONLY
        assert META_ONLY not in table.handlers.values()
    assert m.transpose(0, 1).shape == (4, 3)
    assert m.reshape(12).shape == (12,)
    assert META_ONLY not in dt.library.get_op("transpose").table.handlers.values()


@pytest.mark.usefixtures("frequent_switches")
def test_views_of_meta_tensors_from_several_threads() -> None:
    def work(i: int) -> None:
        m = dt.empty((3, 4 + i), device="meta")
        for _ in range(3000):
            assert m.transpose(0, 1).shape == (4 + i, 3)
            assert m.unsqueeze(0).squeeze(0).shape == (3, 4 + i)

    assert run_together(work, 8) == []


@pytest.mark.usefixtures("frequent_switches")
def test_plans_traced_from_several_threads() -> None:
    # Tracing runs on meta tensors through the dispatch modes: each thread's trace sees its own calls only.
    def step(w: Tensor, x: Tensor) -> Tensor:
        return (x @ w.transpose(0, 1)).relu().sum(dim=0)

    def work(i: int) -> None:
        rng = np.random.default_rng(i)
        w, x = (dt.tensor(rng.standard_normal(s)) for s in ((3, 4 + i), (5, 4 + i)))
        expected = step(w, x).numpy()
        for _ in range(15):
            p = dt.plan(step, w, x)
            np.testing.assert_array_equal(p(w, x).numpy(), expected)
            np.testing.assert_array_equal(dt.planned(step)(w, x).numpy(), expected)

    assert run_together(work) == []


@pytest.mark.usefixtures("frequent_switches")
def test_a_dispatch_mode_sees_only_its_own_threads_calls() -> None:
    # PyTorch's modes are per thread: a mode entered in one thread does not see another thread's calls.
    seen: dict[int, list[str]] = {}

    class Recorder(dt.modes.DispatchMode):
        def __init__(self, i: int) -> None:
            self.i = i

        def __dispatch__(self, op: Any, variant: str, func: Any, args: Any, kwargs: Any) -> Any:
            seen[self.i].append(f"{op.name}:{threading.get_ident() == idents[self.i]}")
            return func(*args, **kwargs)

    idents: dict[int, int] = {}

    def work(i: int) -> None:
        idents[i] = threading.get_ident()
        seen[i] = []
        x = dt.ones(3)
        if i % 2:  # half the threads call ops with no mode entered
            for _ in range(300):
                x.neg().transpose(0, 0)
            return
        with Recorder(i):
            for _ in range(300):
                x.neg().transpose(0, 0)

    assert run_together(work) == []
    for i, calls in seen.items():
        if i % 2:
            assert calls == []
        else:
            assert calls == ["neg:True", "transpose:True"] * 300
