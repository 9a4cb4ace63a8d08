"""The elementwise op family: an op that one ufunc computes is one declarative entry.

``add = binary_ufunc("add", np.add, alpha=True, doc="...")`` defines a structured op whose

* meta function is :func:`devtensor.meta.binary_ufunc_meta` (or :func:`~devtensor.meta.unary_ufunc_meta`):
  NumPy's broadcasting, NumPy's own type resolution for the ufunc as the dtype rule, Python numbers weak in
  promotion (NEP 50), Python ints range-checked against the integer dtype they meet; these metas offer the
  fronts their inline fast path (``devtensor.meta.INLINE``);
* kernel is ONE function of the array module ``xp`` (NumPy on the CPU, CuPy on CUDA), calling the ufunc of
  the entry's NumPy name (CuPy's by the same name, or the entry's ``cupy`` name) with ``out=``;
* docstring is built from the entry's fields (summary, ufunc names, variants, errors).

Ops that need more than the ufunc (``div``'s rounding modes, ``pow``'s negative integer powers, ...) are general
structured ops with one xp kernel each, registered for both devices by ``kernel_signatures.<op>.xp``.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final, LiteralString, TypeVar, cast

import numpy as np

from devtensor.dispatcher import DispatchKey
from devtensor.dtypes import DType, Scalar
from devtensor.lowering import Lowering, Ref
from devtensor.meta import _COMPARISONS, _IINFO, DIRECT, binary_ufunc_meta, int_bounds, unary_ufunc_meta
from devtensor.structured import StructuredOp
from devtensor.structured.rules import caller_level
from devtensor.structured.tables import PLAIN_KERNELS
from devtensor.tensor import Tensor
from devtensor.typed import CPUTensor, CUDATensor
from devtensor.typed.const_out import InplaceOut

__all__ = [
    "D",
    "arr",
    "binary_ufunc",
    "deferred_conditions",
    "elementwise_doc",
    "EXTOBJ",
    "QUIET",
    "errstate",
    "quiet",
    "quiet_extobj",
    "register_xp",
    "unary_ufunc",
    "weak",
]

_np: Final = np
_ndarray: Final = np.ndarray
#: The tensors of a kernel for both devices: all CPUTensor (``xp`` is NumPy) or all CUDATensor (CuPy).
D = TypeVar("D", CPUTensor, CUDATensor)
#: An op's name, kept as a Literal in the op's type (StructuredOp[...]: pyright checks its impls by it).
_N = TypeVar("_N", bound=LiteralString)
_PYTHON_NUMBERS: Final = (bool, int, float, complex)


def register_xp(op: StructuredOp, kernel: Callable[..., None]) -> Callable[..., None]:
    """Register ``kernel(xp, *op's parameters, out)`` as ``op``'s impl for CPU (``xp`` = NumPy) and CUDA (``xp`` =
    CuPy), as ``op.impl("cpu", "cuda")`` does, for kernels made at run time (the typed ``kernel_signatures.<op>.xp``
    registers hand-written ones); returns it.

    Raises:
        TypeError: ``kernel``'s parameters after ``xp`` do not match the op's schema.
    """
    return op.impl(DispatchKey.CPU, DispatchKey.CUDA)(kernel)


def errstate(xp: Any, **kwargs: str) -> contextlib.AbstractContextManager[Any]:
    """NumPy's ``np.errstate(**kwargs)`` when ``xp`` is NumPy; nothing for other array modules (CuPy reports
    no floating-point errors)."""
    return np.errstate(**kwargs) if xp is _np else contextlib.nullcontext()  # type: ignore[arg-type]


# NumPy (2.x) keeps its floating-point settings (np.errstate, np.seterr) in one context variable holding an
# opaque "extobj". np.errstate builds a new extobj on every entry (about 0.7 µs, 2 µs with call=); the states
# below are derived from the caller's extobj once, through np.errstate itself, cached per extobj, and set and
# reset directly (about 0.15 µs). Without that variable (another NumPy) they fall back to np.errstate.
try:
    from numpy._core import _ufunc_config as _ufunc_config

    _EXTOBJ: Final[Any] = getattr(_ufunc_config, "_extobj_contextvar", None)
except ImportError:  # pragma: no cover (NumPy 2 has it)
    _EXTOBJ = None  # type: ignore[misc]
_MAX_CACHED: Final = 64  # (extobjs seen: a caller's few distinct settings; cleared when full)
_QUIET: Final[dict[Any, Any]] = {}
#: For kernels that set the :class:`quiet` state inline (``EXTOBJ.set(QUIET.get(EXTOBJ.get()) or
#: quiet_extobj())``, then ``EXTOBJ.reset``): NumPy's state variable and the cache; both None without it.
EXTOBJ: Final[Any] = _EXTOBJ
QUIET: Final[dict[Any, Any] | None] = _QUIET if _EXTOBJ is not None else None


def quiet_extobj() -> Any:
    """The caller's floating-point state with divide, invalid and over ignored (under as the caller has it)."""
    current = _EXTOBJ.get()
    derived = _QUIET.get(current)
    if derived is None:
        if len(_QUIET) >= _MAX_CACHED:
            _QUIET.clear()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            derived = _QUIET[current] = _EXTOBJ.get()
    return derived


class quiet:
    """``with quiet(xp):`` is ``np.errstate(divide="ignore", invalid="ignore", over="ignore")`` for NumPy, made
    cheap (the state is cached, see above); nothing for other array modules. For kernels whose intermediate
    steps may overflow or divide harmlessly (softmax, cross_entropy)."""

    __slots__ = ("_token",)

    def __init__(self, xp: Any = _np) -> None:
        self._token: Any = None if xp is not _np else False

    def __enter__(self) -> None:
        if self._token is False:
            if _EXTOBJ is None:  # pragma: no cover
                self._token = np.errstate(divide="ignore", invalid="ignore", over="ignore")
                self._token.__enter__()
            else:
                self._token = _EXTOBJ.set(quiet_extobj())

    def __exit__(self, *exc_info: object) -> None:
        token = self._token
        if token is not None:
            if _EXTOBJ is None:  # pragma: no cover
                token.__exit__(None, None, None)
            else:
                _EXTOBJ.reset(token)


# One NumPy call that raises each floating-point condition, so that replaying it goes through the caller's own
# np.errstate settings (warn, raise, call, print, log or ignore), in NumPy's order of checks.
# (Each with its np.errstate key.)
_CONDITIONS: Final[tuple[tuple[str, str, Callable[[], object]], ...]] = (
    ("divide by zero", "divide", lambda: np.divide(np.ones(()), np.zeros(()))),
    ("overflow", "over", lambda: np.multiply(np.full((), 1e308), np.full((), 10.0))),
    ("underflow", "under", lambda: np.multiply(np.full((), 1e-308), np.full((), 1e-308))),
    ("invalid value", "invalid", lambda: np.subtract(np.full((), np.inf), np.full((), np.inf))),
)


class _Recorder:
    """The ``np.errstate(call=...)`` callback of :class:`deferred_conditions` (one per thread, so that its
    cached states can embed it): adds each condition's name to the innermost active block's set."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, kind: str, flag: int) -> None:
        self.seen.add(kind)


#: The condition recorder of :class:`deferred_conditions` (one per thread); a static plan's replay has its own.
Recorder: Final = _Recorder


class _PerThread(threading.local):
    def __init__(self) -> None:
        recorder = _Recorder()
        # (the recorder, and the caller's extobj -> that state with every condition recorded; one attribute, so
        # a block reads the thread's state once)
        self.state: tuple[_Recorder, dict[Any, Any]] = (recorder, {})


_THREAD: Final = _PerThread()


class deferred_conditions:
    """Run a multi-step kernel with NumPy's floating-point conditions (divide by zero, overflow, underflow,
    invalid value) recorded rather than reported, then report each one seen, once, through the caller's
    ``np.errstate`` settings: so a condition that a warnings filter or ``np.errstate(...='raise')`` turns into
    an error surfaces after the kernel wrote its whole result, never between two of its steps (the rule of
    docs in :mod:`devtensor.structured.rules`: the write happens, then the condition). A kernel that is one
    ufunc call needs none of this (NumPy checks after the loop). Nothing is reported when the body raises.
    Blocks nest (each reports its own conditions)."""

    __slots__ = ("_outer", "_recorder", "_seen", "_token")

    #: The op whose kernel runs in the block: a condition the caller's ``np.errstate`` raises (or prints) names
    #: it. Set by the subclasses :func:`conditions_of` makes (no per-call cost); "" names no op.
    op: str = ""

    def __enter__(self) -> None:
        # (no __init__: one frame less per kernel call; the block's state is made here)
        recorder, states = _THREAD.state
        self._recorder = recorder
        if _EXTOBJ is None:  # pragma: no cover
            self._token = np.errstate(all="call", call=recorder)
            self._token.__enter__()
        else:
            current = _EXTOBJ.get()
            state = states.get(current)
            if state is None:
                if len(states) >= _MAX_CACHED:
                    states.clear()
                with np.errstate(all="call", call=recorder):
                    state = states[current] = _EXTOBJ.get()
            self._token = _EXTOBJ.set(state)
        self._outer = recorder.seen
        seen: set[str] = set()
        recorder.seen = self._seen = seen

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._recorder.seen = self._outer
        if _EXTOBJ is None:  # pragma: no cover
            self._token.__exit__(kind, error, trace)
        else:
            _EXTOBJ.reset(self._token)
        if kind is None and self._seen:
            _report(self._seen, self.op)


_NAMED: dict[str, type[deferred_conditions]] = {}


def conditions_of(op: str) -> type[deferred_conditions]:
    """:class:`deferred_conditions` for the kernel of ``op``: a condition raised (``np.errstate(...="raise")``)
    or printed names ``op``, not the NumPy call that replays it. One subclass per op, made once."""
    named = _NAMED.get(op)
    if named is None:
        named = _NAMED.setdefault(op, type(f"conditions_of_{op}", (deferred_conditions,), {"__slots__": (), "op": op}))
    return named


def _report(seen: set[str], op: str = "") -> None:
    """Report each recorded condition once, in NumPy's order, as the caller's ``np.errstate`` says: a
    RuntimeWarning (mode "warn") attributed to the first frame outside devtensor, the user's line
    (:func:`~devtensor.structured.rules.caller_level`; NumPy's own warning would name the kernel's line); a
    FloatingPointError (mode "raise") naming ``op`` (the replaying NumPy call would name its own ufunc); any
    other mode through NumPy itself (call, print, log, ignore)."""
    modes: Any = np.geterr()  # (a TypedDict: indexed by the keys above)
    for condition, key, trigger in _CONDITIONS:
        if condition not in seen:
            continue
        mode = modes[key]
        if mode == "raise":
            raise FloatingPointError(f"{condition} encountered in {op}" if op else f"{condition} encountered")
        if mode != "warn":
            trigger()
            continue
        warnings.warn(f"{condition} encountered", RuntimeWarning, stacklevel=caller_level())


def write_with_special(xp: Any, ufunc: np.ufunc, operands: tuple[Any, ...], out: Any, special: Any, fixed: Any) -> None:
    """Write ``ufunc(*operands)`` into ``out`` except where ``special`` (a bool array broadcasting to ``out``) holds,
    where ``fixed`` goes instead: the kernels of ops whose value there is the Array API standard's, not NumPy's
    (``tanh``, ``expm1``, floor division). ``special`` and ``fixed`` must be computed before the call (``out`` may
    be an input). NumPy skips the special elements (``where=``), so no condition is raised for them; both writes
    happen before a remaining condition is reported (:class:`deferred_conditions`)."""
    with conditions_of(ufunc.__name__)():
        if xp is np:
            ufunc(*operands, out=out, where=~special)
        else:
            getattr(xp, ufunc.__name__)(*operands, out=out)
        xp.copyto(out, fixed, where=special, casting="same_kind")


def arr(x: Tensor | Scalar | None) -> Any:
    """A kernel operand as the array module takes it: a tensor's array, or the Python number (or None) itself."""
    return x._array if isinstance(x, Tensor) else x


def weak(x: Any) -> Any:
    """An operand as NumPy's promotion takes it: an array's dtype, or a (weak) Python number itself."""
    return x if isinstance(x, _PYTHON_NUMBERS) else x.dtype


_COMMON_DOC: Final = """
    Shapes broadcast as NumPy's; the result has the broadcast shape, on the device of the tensor arguments
    (all must be on one device, else DeviceMismatchError). Python numbers are accepted where a tensor is and
    are weak in promotion (NEP 50). Variants: functional ``{name}(...)``, out ``{name}(..., out=t)``{inplace}.
    Devices: cpu (NumPy), cuda (CuPy); meta tensors give the result's shape and dtype only.

    Raises:
        ArgumentTypeError (TypeError): an argument that is neither a Tensor nor a Python number, no tensor
            argument at all, or dtypes NumPy's ``{ufunc}`` has no loop for.
        ShapeError (ValueError): shapes that do not broadcast; an inplace result shape != ``self.shape``.
        CastingError (TypeError): the result dtype does not cast (same_kind) to ``out``/``self``'s dtype.
        ScalarOverflowError (OverflowError): a Python int out of range of the integer dtype it meets.
        DeviceMismatchError (ValueError): tensors on different devices.
        MemoryOverlapError, ReadOnlyError (ValueError): an output overlapping an input partially, with
            internal overlap, or read-only.
"""

_ALPHA_DOC: Final = """
    ``alpha * other`` is computed in the result dtype for a tensor ``other`` (as PyTorch), in Python for a
    Python number. Also ArgumentTypeError when ``alpha`` does not suit the result dtype (PyTorch's rule: bool
    for bool, no float for integral, no complex for real results), and ScalarOverflowError when an int
    ``alpha``, or ``alpha * other`` for a Python int ``other``, is out of range of an integer result dtype.
"""


def elementwise_doc(name: str, summary: str, ufunc: str, *, inplace: bool = True, extra: str = "") -> str:
    """The docstring of the elementwise op ``name``: ``summary``, then the rules every elementwise op shares
    (shapes, promotion, variants, devices, errors; ``ufunc`` names the NumPy function whose loops decide the
    dtypes), then ``extra`` (op-specific errors)."""
    variant = f" and inplace ``{name}_(self, ...)`` / ``t.{name}_(...)``" if inplace else ""
    return summary.strip() + "\n" + _COMMON_DOC.format(name=name, ufunc=ufunc, inplace=variant) + extra


def _define(
    name: _N,
    meta: Callable[..., Any],
    doc: str,
    kernel: Callable[..., None],
    ufunc: np.ufunc | None = None,
    *,
    inplace: bool = True,
    scaled: Callable[..., Any] | None = None,
) -> StructuredOp[_N]:
    meta.__doc__ = doc
    direct: list[Any] = [None, ufunc] if scaled is None else [None, ufunc, scaled]
    # (the kernel is that one ufunc call for every functional call it gets: meta.DIRECT; without one, no direct path
    # is offered for the meta either)
    meta.__dict__[DIRECT] = direct if ufunc is not None else None
    op = cast("StructuredOp[_N]", StructuredOp(name, meta, out_may_be_input=True, inplace=inplace))
    op.functional.__doc__ = doc
    if op.inplace is not None:
        op.inplace.__doc__ = doc
    register_xp(op, kernel)
    if ufunc is not None:
        direct[0] = op.table.kernels.get(DispatchKey.CPU)
        PLAIN_KERNELS[direct[0]] = ufunc
    return op


def unary_ufunc(
    name: _N,
    ufunc: np.ufunc,
    *,
    doc: str,
    cupy: str | None = None,
    inplace: bool = True,
    kernel: Callable[..., None] | None = None,
    dtypes: dict[DType, DType] | None = None,
) -> StructuredOp[_N]:
    """Define the one-argument elementwise op ``name(self)`` computed by NumPy's ``ufunc`` (CuPy's ``cupy``,
    by default the same name). Result: ``self``'s shape, the dtype NumPy's ``ufunc`` gives for ``self``'s
    (``exp`` of int8 is float16). ``doc`` is the one-paragraph summary (with the PyTorch and NumPy names whose
    semantics the op follows); the rest of the docstring is generated. ``inplace=False`` defines no inplace
    variant (where PyTorch has none, e.g. ``isnan``). ``kernel(xp, self, *, out)`` replaces the generated
    kernel, for an op whose CuPy function differs from NumPy's somewhere (the meta and docs stay the family's);
    with it, ``dtypes`` maps input dtypes to result dtypes that differ from the ufunc's. Returns the StructuredOp.

    Raises:
        ValueError: an op named ``name`` exists already.
    """
    cp_name = cupy or ufunc.__name__
    summary = elementwise_doc(name, doc, f"np.{ufunc.__name__}", inplace=inplace)
    if kernel is not None:
        return _define(name, unary_ufunc_meta(name, ufunc, dtypes), summary, kernel, inplace=inplace)

    # Hot path (about half of a call's time at 100 elements): arrays read straight off the slot, the output
    # passed positionally (NumPy parses it faster), and an inplace call reads self through the output's array
    # object (NumPy's in-place fast path, see InplaceOut).
    def ufunc_kernel(xp: Any, self: Tensor, *, out: Any) -> None:
        o = out.array
        if xp is _np:
            ufunc(o if type(out) is InplaceOut else self._array, o)
        else:
            getattr(xp, cp_name)(self._array, out=o)

    ufunc_kernel.__name__ = ufunc_kernel.__qualname__ = f"{name}_kernel"
    return _define(name, unary_ufunc_meta(name, ufunc), summary, ufunc_kernel, ufunc, inplace=inplace)


def binary_ufunc(
    name: _N,
    ufunc: np.ufunc,
    *,
    doc: str,
    alpha: bool = False,
    cupy: str | None = None,
    inplace: bool = True,
    numbers: str = "both",
) -> StructuredOp[_N]:
    """Define the two-argument elementwise op ``name(self, other)`` computed by NumPy's ``ufunc`` (CuPy's
    ``cupy``, by default the same name); either argument may be a Python number. Result: the broadcast shape,
    the dtype NumPy's ``ufunc`` gives (Python numbers weak). With ``alpha`` the op is ``ufunc(self, alpha *
    other)`` with a keyword ``alpha=1`` checked by PyTorch's rule (``add``, ``sub``). ``doc`` is the summary;
    the rest of the docstring is generated. ``inplace=False`` defines no inplace variant (where PyTorch has
    none, e.g. ``logaddexp``). ``numbers``: where PyTorch's schema takes a Python number (``"both"``,
    ``"other"``, ``"none"``; :func:`devtensor.meta.binary_ufunc_meta`). Returns the StructuredOp.

    Raises:
        ValueError: an op named ``name`` exists already.
    """
    cp_name = cupy or ufunc.__name__
    meta = binary_ufunc_meta(name, ufunc, alpha=alpha, numbers=numbers)
    summary = elementwise_doc(name, doc, f"np.{ufunc.__name__}", inplace=inplace, extra=_ALPHA_DOC if alpha else "")
    kernel: Callable[..., None]
    scaled: Callable[..., Any] | None = None
    if alpha:
        scaled = _scaled_call(ufunc)

        def kernel(xp: Any, self: Tensor | Scalar, other: Tensor | Scalar, *, alpha: Scalar, out: Any) -> None:
            o = out.array  # (a hot path: see unary_ufunc)
            a = o if type(out) is InplaceOut else self._array if isinstance(self, Tensor) else self
            b = other._array if isinstance(other, Tensor) else other
            if xp is _np:
                scaled(a, b, alpha, o)
            elif alpha != 1 or type(alpha) is complex:
                with conditions_of(cp_name)():  # (for array modules that report conditions as NumPy does)
                    getattr(xp, cp_name)(a, _scaled(xp, a, b, alpha), out=o)
            else:
                getattr(xp, cp_name)(a, b, out=o)

    elif ufunc in _COMPARISONS:

        def kernel(xp: Any, self: Tensor | Scalar, other: Tensor | Scalar, *, out: Any) -> None:
            o = out.array
            if xp is _np:  # (NumPy 2 compares an out-of-range Python int exactly itself: the direct path's call)
                a = o if type(out) is InplaceOut else self._array if isinstance(self, Tensor) else self
                ufunc(a, other._array if isinstance(other, Tensor) else other, out=o)
                return
            if isinstance(self, Tensor):
                a = o if type(out) is InplaceOut else self._array
                if isinstance(other, Tensor):
                    b = other._array
                elif type(other) is int and a.dtype.kind in "iu":
                    # (off the tensor-tensor path: only a Python int operand is range-tested)
                    a, b = _exact_int_operands(a, other)
                else:
                    b = other
            else:
                b = other._array  # type: ignore[union-attr]
                a = self
                if type(self) is int and b.dtype.kind in "iu":
                    b, a = _exact_int_operands(b, self)
            getattr(xp, cp_name)(a, b, out=o)

    else:

        def kernel(xp: Any, self: Tensor | Scalar, other: Tensor | Scalar, *, out: Any) -> None:
            o = out.array
            a = o if type(out) is InplaceOut else self._array if isinstance(self, Tensor) else self
            # (``out=``: NumPy deprecates a positional output for maximum and minimum)
            (ufunc if xp is _np else getattr(xp, cp_name))(
                a, other._array if isinstance(other, Tensor) else other, out=o
            )

    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    # (comparisons too: NumPy 2, the least NumPy devtensor supports, compares an out-of-range Python int with
    # an integer array exactly, so the CPU kernel is the one ufunc call; other array modules get stand-ins)
    return _define(name, meta, summary, kernel, ufunc, inplace=inplace, scaled=scaled)


def _scaled_call(ufunc: np.ufunc) -> Callable[..., Any]:
    """The NumPy computation of ``ufunc(self, alpha * other)`` (``add``/``sub`` with ``alpha``), shared by the
    op's CPU kernel and the fronts' direct path (meta.DIRECT's third item): ``scaled(a, b, alpha, out)`` takes
    the operands as the ufunc does (arrays or Python numbers; ``a`` may be ``out``'s own array, for NumPy's
    in-place fast path) and writes ``out``, or returns a new array when ``out`` is None (then ``a`` and ``b``
    must be arrays of one dtype: the result dtype is theirs). ``alpha`` is the meta-checked factor: 1 (not
    complex) is one ufunc call; any other is two steps (the product, as :func:`_scaled` computes it, then the
    ufunc), run with NumPy's floating-point conditions recorded and reported after the write, as
    :class:`deferred_conditions` does (inline here: this is a hot path of the training loops' updates)."""

    def scaled(a: Any, b: Any, alpha: Scalar, out: Any) -> Any:
        if alpha == 1 and type(alpha) is not complex:
            return ufunc(a, b, out=out)
        recorder, states = _THREAD.state
        state = states.get(_EXTOBJ.get()) if _EXTOBJ is not None else None
        if state is None:  # (a state not seen yet: deferred_conditions derives and caches it)
            with conditions_of(ufunc.__name__)():
                return _scaled_steps(ufunc, a, b, alpha, out)
        token = _EXTOBJ.set(state)
        outer = recorder.seen
        seen: set[str] = set()
        recorder.seen = seen
        try:
            if type(b) is _ndarray and type(a) is _ndarray and b.dtype == a.dtype:
                result = ufunc(a, _np.multiply(b, alpha, dtype=b.dtype), out=out)  # (_scaled's one-dtype case)
            else:
                result = ufunc(a, _scaled(_np, a, b, alpha), out=out)
        finally:
            recorder.seen = outer
            _EXTOBJ.reset(token)
        if seen:
            _report(seen, ufunc.__name__)
        return result

    return scaled


def lower_ufunc(lw: Lowering, ufunc: np.ufunc, operands: list[Any], alpha: Any, out: Any) -> bool:
    """The family's lowering (devtensor.lowering), for a static plan's replay of a one-ufunc op on the CPU (its
    direct path: meta.DIRECT): ``ufunc(*operands, out=out)``; for ``add``/``sub`` with an ``alpha`` other than 1,
    :func:`_scaled_call`'s two steps with the product in a temporary, or in ``other`` itself when the plan reads it
    no more (``lw.spare``), (``alpha * other`` in ``other``'s dtype when both operands are arrays of one dtype, as
    ``scaled`` computes it), the conditions reported after the write.
    ``alpha``: None for ops without one. False (the kernel replays) for the other operand kinds."""
    if alpha is None or (alpha == 1 and type(alpha) is not complex):
        lw.call(ufunc, *operands, out=out)
        return True
    a, b = operands
    if not (isinstance(a, (_ndarray, Ref)) and isinstance(b, (_ndarray, Ref))) or a.dtype != b.dtype:
        return False
    # (the product into other itself when the plan reads it no more: as NumPy code scaling its array in place)
    product = b if id(b) in lw.spare else lw.temp(b.shape, b.dtype)
    if b.dtype.kind == "f" and type(alpha) in (int, float):
        # (a floating b and a Python float or int: NumPy 2 computes in b's dtype without dtype=, as NEP 50 takes
        # such a scalar, so the same loop and conversions with no keyword, which a constant call pays for)
        lw.call(_np.multiply, b, alpha, out=product)
    else:
        lw.call(_np.multiply, b, alpha, out=product, dtype=b.dtype)
    lw.call(ufunc, a, product, out=out)
    lw.deferred = True
    return True


def recording_state_of(recorder: Any, states: dict[Any, Any], current: Any) -> Any:
    """The floating-point state ``current`` (an extobj of NumPy's state variable, :data:`EXTOBJ`) with every
    condition it does not ignore recorded by ``recorder`` (an ignored one stays ignored: reporting it would do
    nothing, and NumPy calls no recorder for it), derived through ``np.errstate`` and cached in ``states``: a
    replay that records the conditions of a whole step sets it once (:class:`deferred_conditions` does the same
    per block)."""
    if len(states) >= _MAX_CACHED:
        states.clear()
    token = _EXTOBJ.set(current)
    try:
        modes: Any = np.geterr()
        kept: Any = {key: "ignore" if mode == "ignore" else "call" for key, mode in modes.items()}
        with np.errstate(call=recorder, **kept):
            state = states[current] = _EXTOBJ.get()
    finally:
        _EXTOBJ.reset(token)
    return state


def report_conditions(seen: set[str]) -> None:
    """Report the conditions a recording block saw, once each, through the caller's settings (see
    :class:`deferred_conditions`)."""
    _report(seen)


def _scaled_steps(ufunc: np.ufunc, a: Any, b: Any, alpha: Scalar, out: Any) -> Any:
    if type(b) is _ndarray and type(a) is _ndarray and b.dtype == a.dtype:
        return ufunc(a, _np.multiply(b, alpha, dtype=b.dtype), out=out)  # (_scaled's one-dtype case)
    return ufunc(a, _scaled(_np, a, b, alpha), out=out)


def _exact_int_operands(array: Any, value: int) -> tuple[Any, Any]:
    """Stand-ins ``(for array, for value)`` in a comparison of an integer array with a Python int, so that it
    compares exactly, as NumPy 2 does (the meta function lets an out-of-range int through only here; NumPy
    itself needs no stand-ins): an int beyond the dtype's range compares the same with every element, as 1 does
    with an array of 0 (above the range) or 0 with an array of 1 (below it), whichever operand it is. Every
    array module is then exact, whatever it does with an int its dtype cannot hold; an int in range is returned
    as it is."""
    lo, hi = _IINFO.get(array.dtype) or int_bounds(array.dtype)
    if lo <= value <= hi:
        return array, value
    above = value > hi
    return array * 0 + (0 if above else 1), (1 if above else 0)


def _scaled(xp: Any, self: Any, other: Any, alpha: Scalar) -> Any:
    # alpha * other as PyTorch computes it, before any write to out: a tensor in the result dtype (not in other's
    # own, narrower dtype, where it could wrap around or reject alpha), a Python number in Python, where it stays
    # weak (bool and bool stay bool). The meta function has checked that alpha and a Python product fit.
    if isinstance(other, _PYTHON_NUMBERS):
        return (other and alpha) if type(other) is bool and type(alpha) is bool else other * alpha
    if not isinstance(self, _PYTHON_NUMBERS) and self.dtype == other.dtype:
        return xp.multiply(other, alpha, dtype=other.dtype)  # (one dtype: no np.result_type needed)
    return xp.multiply(other, alpha, dtype=np.result_type(weak(self), other.dtype))
