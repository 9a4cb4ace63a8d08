"""The source of the calls a plan's compiled replay makes (devtensor.plan.replay): one call, folded into a
``functools.partial`` made at compile time when all its arguments are constants (a C-level call per replay and a
shorter line to compile), and the steps a kernel's lowering emits (devtensor.lowering), calls and lines of source
alike, with their arrays, arguments and locals named."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from devtensor.lowering import Local, Lowering, Ref

__all__ = ["bump_on_condition", "call_line", "lowered_lines"]

#: The ufuncs whose out NumPy wants as a keyword (a positional one is deprecated since NumPy 2.4).
_KEYWORD_OUT = frozenset({np.maximum, np.minimum})


def call_line(ns: dict[str, Any], const: Callable[[Any], str], func: str, parts: list[str]) -> str:
    """The line calling ``ns[func]`` with ``parts`` (sources, ``name=source`` for keywords): a ufunc's ``out``
    passed positionally (the same call, whose arguments NumPy parses faster); when every part is a constant of
    ``ns`` and none a keyword, one ``functools.partial`` made now (named by ``const``) and called. A call with
    keywords stays in the source: a partial holding keywords takes CPython's slow path (a dict merged per call
    and a tuple of arguments), which costs more than the keywords' names in the call."""
    fn = ns.get(func)
    if type(fn) is np.ufunc and fn not in _KEYWORD_OUT and sum("=" not in part for part in parts) == fn.nin:
        outs = [part for part in parts if part.startswith("out=")]
        if len(outs) == 1:
            rest = [part for part in parts if "=" in part and part is not outs[0]]
            parts = [*(part for part in parts if "=" not in part), outs[0][4:], *rest]
    if all("=" not in part and part in ns for part in parts):
        return f"{const(functools.partial(ns[func], *(ns[part] for part in parts)))}()"
    return f"{func}({', '.join(parts)})"


def lowered_lines(lw: Lowering, ns: dict[str, Any], const: Callable[[Any], str], names: dict[Local, str]) -> list[str]:
    """The lines of ``lw``'s steps: its calls (:func:`call_line`) and its lines of source, each value named as
    the replay knows it (a :class:`Ref` by its name, a :class:`Local` by the name ``names`` gives it, new ones
    numbered in order, anything else as a constant)."""

    def src(value: Any) -> str:
        if type(value) is Ref:
            return value.name
        if type(value) is Local:
            return names.setdefault(value, f"_l{len(names)}")
        return const(value)

    lines = []
    for fn, args, kwargs in lw.calls:
        if type(fn) is str:
            lines.append(fn.format(*(src(value) for value in args)))
        else:
            parts = [src(value) for value in args] + [f"{key}={src(value)}" for key, value in kwargs.items()]
            lines.append(call_line(ns, const, const(fn), parts))
    return lines


def bump_on_condition(lines: list[str], bumps: list[tuple[int, int, str]], ns: dict[str, Any]) -> list[str]:
    """``lines`` with each write of ``bumps`` (its first line, its end, its version bump) in a ``try`` whose
    handler bumps the version when a floating-point condition the caller made an error (``np.errstate`` "raise",
    a warning filter "error") surfaces after the write, as the fronts do (rules.written_then_raised): the write
    happened. On a replay that raises nothing this costs one jump per write (over the handler)."""
    ns["_FPE"] = (Warning, FloatingPointError)
    lines = list(lines)
    for begin, end, bump in reversed(bumps):
        mark = lines[begin].partition("  #@")[2]
        mark = f"  #@{mark}" if mark else ""
        body = lines[begin:end]  # (one line: "try: call", no NOP for the try's own line)
        head = [f"try: {body[0]}"] if len(body) == 1 else [f"try:{mark}", *("    " + line for line in body)]
        lines[begin:end] = [*head, f"except _FPE: {bump}; raise{mark}"]
    return lines
