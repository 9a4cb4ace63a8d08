"""The compiled core: C lanes in front of the elementwise ops' Python fronts.

``devtensor._core`` (``devtensor/_core.c``, built by ``pip install -e .``) defines ``Front``, a callable that
takes the commonest call of one elementwise op variant without leaving C (no dispatch mode, tensors of one device
with no guard, the meta answer in the op's inline entries, the built-in kernel as the handler, no ``out=`` or an
``out=``/inplace ``self`` that fits exactly) and forwards every other call, arguments untouched, to the op's
Python front, where the rules (:mod:`devtensor.structured.rules`) live. The lanes answer only calls whose answer
those rules would give; ``tests/test_compiled_core.py`` runs the op samples through both and compares results,
dtypes, versions, errors and warnings.

The core is used when the extension is importable, was built from the ``_core.c`` beside it (a fingerprint of
the source compiled into it; a mismatch is one ``RuntimeWarning`` and the Python fronts serve every call), and
``DEVTENSOR_PURE_PYTHON`` is unset or ``0``. Without it every call runs the Python fronts: the same results,
slower.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from devtensor import modes
from devtensor.device import Device
from devtensor.structured import rules
from devtensor.tensor import Storage, Tensor

if TYPE_CHECKING:
    from devtensor.structured.registry import StructuredOp

__all__ = ["CORE", "PURE_PYTHON", "core_status", "lazy_front", "reflected", "source_fingerprint"]

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
        from devtensor import _core  # type: ignore[attr-defined]
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
