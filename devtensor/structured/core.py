"""The compiled core: C lanes in front of the structured ops' Python fronts.

``devtensor._core`` (``devtensor/_core.c``, built by ``pip install -e .``) defines ``Front``, a callable that
takes the commonest calls of one op variant without leaving C and forwards every other call, arguments untouched,
to the op's Python front, where the rules (:mod:`devtensor.structured.rules`) live. The kinds' lanes
(elementwise, memo) take the commonest call of their ops with no Python frame at all (no dispatch mode, tensors of
one device with no guard, the meta answer in the op's inline entries or memo, the built-in kernel as the handler,
no ``out=`` or an ``out=``/inplace ``self`` that fits exactly); the general lane (:func:`general_table`) takes the
common call of any op, custom ones included, calling its meta function and handler. The lanes answer only calls
whose answer those rules would give; ``tests/test_compiled_core.py`` and ``tests/test_compiled_core_general.py``
run the op samples and custom ops through both and compare results, dtypes, versions, errors and warnings.

The core is used when the extension is importable, was built from the ``_core.c`` beside it (a fingerprint of
the source compiled into it; a mismatch is one ``RuntimeWarning`` and the Python fronts serve every call), and
``DEVTENSOR_PURE_PYTHON`` is unset or ``0``. Without it every call runs the Python fronts: the same results,
slower.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from devtensor import modes
from devtensor.device import Device
from devtensor.structured import rules
from devtensor.tensor import Storage, Tensor

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp

__all__ = [
    "CORE",
    "PURE_PYTHON",
    "core_status",
    "general_table",
    "lazy_front",
    "lazy_view_front",
    "reflected",
    "source_fingerprint",
    "view_table",
]

#: ``DEVTENSOR_PURE_PYTHON=1``: the Python fronts serve every call (no compiled lane), for stepping through a call.
PURE_PYTHON: Final = os.environ.get("DEVTENSOR_PURE_PYTHON", "").strip() not in ("", "0")

#: The core's sources beside the package (``_core.c`` and the headers it includes), when present (a checkout or an
#: editable install; a wheel may not carry them).
_SOURCES: Final = sorted((Path(__file__).resolve().parent.parent).glob("_core*.[ch]"))

# Front's lane kinds and variant codes (devtensor/_core.c): FORWARD has no lane; the memo kinds are
# tables.MEMO_* (3 to 7).
_FORWARD, _UNARY, _BINARY = 0, 1, 2
_FUNCTIONAL, _INPLACE, _REFLECTED = 1, 2, 3


def source_fingerprint(sources: list[Path]) -> str:
    """The fingerprint of the core's C sources as ``setup.py`` compiles it into the extension: the first 16 hex
    digits of the SHA-256 of their bytes, in name order."""
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(sources))).hexdigest()[:16]


def _load() -> tuple[ModuleType | None, str]:
    """The extension ready for use, or None, with the reason in words."""
    if PURE_PYTHON:
        return None, "DEVTENSOR_PURE_PYTHON is set"
    try:
        _core = importlib.import_module("devtensor._core")
    except ImportError:
        return None, "the extension devtensor._core is not built (no C compiler when devtensor was installed?)"
    if _SOURCES:
        expected = source_fingerprint(_SOURCES)
        if expected != _core.FINGERPRINT:
            warnings.warn(
                f"devtensor: the compiled core ({_core.__file__}) was built from other devtensor/_core* sources "
                f"(fingerprint {_core.FINGERPRINT}, the source's is {expected}); it is not used and the Python "
                "fronts serve every call. Rebuild it with `pip install -e .` from the checkout.",
                RuntimeWarning,
                stacklevel=2,
            )
            return None, "the extension is stale (built from other _core* sources)"
    _core.setup(
        Tensor, Storage, Device, modes.ACTIVE, rules.alloc_failed, rules.check_writable, rules.written_then_raised
    )
    from devtensor.dispatcher import META_ONLY
    from devtensor.dtypes import SCALAR_TYPES
    from devtensor.tensor import PlannedSpec
    from devtensor.typed.const_out import ConstOut, InplaceOut, new_const_out

    _core.setup_general(
        META_ONLY,
        ConstOut,
        new_const_out,
        InplaceOut,
        SCALAR_TYPES,
        rules.SPEC_SHAPES,
        rules.SPEC_DTYPES,
        PlannedSpec,
        rules.prepare_out,
        rules.prepare_inplace,
        rules.finish_out,
        rules.copy_back,
        rules.complete_after_condition,
    )
    return _core, f"compiled ({_core.__file__})"


CORE, _STATUS = _load()


def core_status() -> str:
    """How calls are served in this process: ``"compiled (<path>)"`` or why the Python fronts serve them all."""
    return _STATUS


def lazy_front(
    op: StructuredOp,
    variant: str,
    build: Callable[..., Callable[..., Any]],
    binding: tuple[Any, type[Any]] | None = None,
) -> Callable[..., Any]:
    """The front to publish for ``op``'s ``variant`` (``"functional"`` or ``"inplace"``); ``build(op, variant)``
    makes its Python front (:func:`devtensor.structured.fronts.build_front`).

    With the compiled core: a ``Front`` that builds the Python front on the first call it does not take itself
    (so importing devtensor compiles no front), with the C lane of the op's kind where it has one
    (:func:`~devtensor.structured.tables.ufunc_lane`, ``unary_call_lane``, ``memo_lane``; a lane reads the
    same per-op values the Python front reads). It carries the front's name, docstring,
    module and ``op``; ``__wrapped__`` is the Python front (built on access), so :func:`inspect.signature` and
    :func:`inspect.getsource` show it. ``binding`` (dispatch key, refined tensor class): a device binding's
    (``devtensor.cpu.add``; ``build(op, variant, binding)``), whose lanes take tensors of exactly that class and
    look the handler up for that key, as its Python front does. Without the core (not built, stale, or
    ``DEVTENSOR_PURE_PYTHON=1``): the Python front itself, built now.
    """
    if CORE is None:
        return build(op, variant, binding)
    from devtensor.structured.tables import UNARY_CALL, memo_lane, meta_values, ufunc_lane, unary_call_lane

    name = op.name if variant == "functional" else op.name + "_"
    kind = _FUNCTIONAL if variant == "functional" else _INPLACE
    lane: tuple[Any, ...] = (_FORWARD, None, None, op.table.handlers)
    extra: tuple[Any, ...] = ()
    if ufunc_lane(op):
        values = meta_values(op)
        if "_meta_last" in values:
            lane = (_BINARY, values["_meta_last"], values["_direct"], op.table.handlers)
        else:
            lane = (_UNARY, values["_meta_cache"], values["_direct"], op.table.handlers)
    elif variant == "functional" and unary_call_lane(op):
        values = meta_values(op)
        lane = (UNARY_CALL, values["_meta_cache"], values["_direct"], op.table.handlers)
    elif variant == "functional" and (memo := memo_lane(op)) is not None:
        values = meta_values(op)
        lane = (memo[0], None, values["_direct"], op.table.handlers)
        extra = (values.get("_specs", values.get("_memo")), memo[1], memo[2])
    bound = None if binding is None else (binding[1], binding[0])
    if binding is not None and not extra:
        extra = (None, (), 0)
    maker = partial(build, op, variant, binding)
    front: Any = CORE.Front(maker, name, lane[0], kind, *lane[1:], *extra, *((bound,) if bound else ()))
    front._lane = lane
    front.__name__ = front.__qualname__ = name
    front.__doc__ = op.doc
    front.__module__ = "devtensor" if binding is None else f"devtensor.{binding[0].name.lower()}"
    front.op = op
    front.general = partial(general_table, op)  # (made on the first call the kind's lane leaves: none at import)
    return front  # type: ignore[no-any-return]


#: The general lane's parameter categories (``devtensor/_core_general.h``): any other category is passed through.
_CATEGORIES: Final = {"Tensor": 1, "TensorOrScalar": 2, "Scalar": 3}


def _param_rows(params: Any) -> tuple[tuple[Any, ...], ...]:
    """The lanes' row per parameter: ``(name, category, kw_only, optional, has_default, default)``, the category as
    ``_CATEGORIES`` codes it (0: passed through; the view lane reads none)."""
    return tuple(
        (p.name, _CATEGORIES.get(p.category, 0), p.kw_only, p.optional, p.has_default, p.default) for p in params
    )


def general_table(op: StructuredOp) -> tuple[Any, ...] | None:
    """The table of ``op`` the compiled core's general lane reads (``devtensor/_core_general.h``), or None where
    the op's schema is one the lane does not take (a tensor list, more than 16 parameters): per parameter ``(name,
    category, kw_only, optional, has_default, default)``, the meta function, the spec checker of a custom op
    (None: a built-in op's meta results are trusted, as the Python front trusts them), whether the kernel takes
    ``plan=``, out_may_be_input, the inline bool/Literal checks (``rules.value_tests``; a Literal of mixed types
    is left to the meta function, as in the Python front), the meta call's and the kernel call's keyword names,
    the number of parameters that may be passed positionally, and the op's direct path (:func:`_direct_offer`).
    Built from the op's definition, the same values the Python front reads."""
    from devtensor.structured.annotations import TENSOR_LIST

    params = op.schema.params
    if len(params) > 16 or any(p.category == TENSOR_LIST for p in params):
        return None
    index = {p.name: i for i, p in enumerate(params)}
    # (the generic front's quick tests, by parameter index; a failing one sends the call to the Python front)
    checks = tuple(
        (index[name], optional, kind, None if allowed is None else tuple(allowed))
        for name, optional, kind, allowed in rules.value_tests(params)
    )
    keywords = tuple(p.name for p in params if p.kw_only)
    plan = op.schema.plan is not None
    builtin = op.module.split(".")[0] == "devtensor"
    checker = None if builtin else rules.checked_planned_spec if plan else rules.checked_spec
    return (
        _param_rows(params),
        op.meta,
        checker,
        plan,
        op.out_may_be_input,
        checks,
        keywords,
        (*keywords, *(("plan",) if plan else ()), "out"),
        sum(1 for p in params if not p.kw_only),
        _direct_offer(op),
    )


def _direct_offer(op: StructuredOp) -> tuple[list[Any], int, Any, Any] | None:
    """``(direct, form, meta.ONE, the unary inline entry or None)`` where the op's Python front makes its direct
    path's NumPy call itself (meta.DIRECT: ``[built-in kernel, NumPy call, ...]``, while that kernel is the
    handler), which the general lane then makes as the Python front makes it (``devtensor/_core_general.h``
    ``direct_call``; the form: 1 a unary call, 2 a binary one, 3 binary with ``alpha``, 4 the tensors' arrays, 5
    arrays and numbers, 6 arrays and the meta's plan); None otherwise (a tensor list's call is the Python
    front's). A unary op's inline entry (meta.INLINE: self's dtype -> the result's) gives its spec without a meta
    call, as in the Python front."""
    from devtensor.meta import DIRECT, ONE
    from devtensor.structured.tables import _call_direct, _inline_kind, meta_values

    direct = getattr(op.meta, DIRECT, None)
    if not isinstance(direct, list) or "_direct" not in meta_values(op):
        return None
    kind = _call_direct(op)
    forms = {"arrays": 4, "scalars": 5, "plan": 6}
    if kind is not None:
        return (direct, forms[kind], ONE, None) if kind in forms else None
    inline, state = _inline_kind(op)
    if inline == "unary":
        return direct, 1, ONE, state
    return direct, (3 if len(op.schema.params) == 3 else 2), ONE, None


_VIEW = 9  # (devtensor/_core.c's lane kind of the view fronts)


def view_table(op: Any, method: bool) -> tuple[Any, ...] | None:
    """The table of the view op ``op`` (:class:`devtensor.views.ViewOp`) the compiled core's view lane reads
    (``devtensor/_core_view.h``) for its functional front, or with ``method`` its varargs Tensor method; None for
    an op the lane does not take (several results, more than 16 parameters). Per parameter as
    :func:`general_table`; the meta function, the op and the views module's helpers for a copy or a cache miss
    (``_rare``) and a size error (``_too_large``); for devtensor's reshape and view, their memo and built-in kernel
    (read as their Python front reads them); the meta call's keyword names; how many parameters may be positional.
    """
    from devtensor import views

    params = op.schema.params
    if op.multi or len(params) > 16 or (method and op.varargs is None):
        return None
    reshapes = views._reshapes(op)
    return (
        _param_rows(params),
        op.meta,
        op,
        views._rare,
        views._too_large,
        views.RESHAPE_SPECS if reshapes else None,
        views.RESHAPE_KERNEL if reshapes else None,
        np.ndarray,
        method,
        tuple(p.name for p in params if p.kw_only),
        sum(1 for p in params if not p.kw_only),
    )


def lazy_view_front(op: Any, method: bool, build: Callable[[Any, bool], Callable[..., Any]]) -> Callable[..., Any]:
    """The front to publish for the view op ``op`` (its functional, or with ``method`` its varargs Tensor method):
    with the compiled core and a :func:`view_table`, a ``Front`` taking the common call in C and building the Python
    front (``build(op, method)``: :func:`devtensor.views._front`) on the first call it leaves; else that Python
    front, built now."""
    table = view_table(op, method) if CORE is not None else None
    if table is None:
        return build(op, method)
    front: Any = CORE.Front(partial(build, op, method), op.name, _VIEW, _FUNCTIONAL, table, (), op.table.handlers)  # type: ignore[union-attr]
    front.__name__ = front.__qualname__ = op.name
    front.__doc__ = op.doc
    front.__module__ = "devtensor"
    front.op = op
    return front  # type: ignore[no-any-return]


def reflected(fn: Callable[..., Any]) -> Callable[..., Any] | None:
    """A compiled front for the reflected operator of the binary functional front ``fn`` (``2 - t`` is
    ``sub(2, t)``): its lane with the operands swapped, the rest through ``fn``'s Python front (swapped too).
    None where ``fn`` is no compiled binary front (the caller then wraps ``fn`` in Python)."""
    compiled: Any = fn
    lane = getattr(compiled, "_lane", None)
    if CORE is None or type(compiled) is not CORE.Front or lane is None or lane[0] != _BINARY:
        return None
    # (the Python front is fn's, built once for both)
    front: Any = CORE.Front(lambda: compiled.__wrapped__, compiled.__name__, _BINARY, _REFLECTED, *lane[1:])
    name = compiled.__name__
    front.__name__ = front.__qualname__ = f"reflected_{name}"
    front.__doc__ = f"``{name}(other, self)``: the reflected operator of ``{name}`` (operands swapped)."
    front.__module__ = "devtensor"
    return front  # type: ignore[no-any-return]
