"""pyright's forms of the generated kernel signatures beyond the kernel Protocols: overloads that refuse an impl
taking more than its schema positionally (``@deprecated`` overloads on the call shapes only such an impl accepts),
and the per-op classes and by-name overloads of ``library.get_op``/``override``/``register_kernel``. See
docs/design.md ("What pyright checks without a plugin beyond the Protocols")."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from devtensor.structured import Param, StructuredOp

#: Dispatch keys with typed kernels and bindings: device type -> (refined tensor class, key name).
KEYS: dict[str, tuple[str, str]] = {"cpu": ("CPUTensor", "CPU"), "cuda": ("CUDATensor", "CUDA")}


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _call_shape(op: StructuredOp, xp: bool) -> tuple[int, list[str]]:
    """(how many parameters an impl of ``op`` takes positionally, the names it takes keyword-only) by its schema:
    ``xp`` first for an impl of several keys; ``plan`` (an op with a plan) and ``out`` keyword-only last."""
    positional = sum(1 for p in op.schema.params if not p.kw_only) + (1 if xp else 0)
    keywords = [p.name for p in op.schema.params if p.kw_only]
    if op.schema.plan is not None:
        keywords.append("plan")
    return positional, [*keywords, "out"]


def _inexact_shapes(positional: int, keywords: list[str]) -> list[tuple[int, tuple[str, ...]]]:
    """The call shapes that only an impl taking more than its schema allows accepts, as (positional count,
    keyword names): one more positional argument with every keyword-only parameter given (an extra parameter,
    ``*args``), and, per keyword-only parameter, one more positional argument in its place (that parameter taken
    positionally, as ``out`` before the ``*``)."""
    shapes = [(positional + 1, tuple(keywords))]
    shapes += [(positional + 1, tuple(k for k in keywords if k != name)) for name in keywords]
    return shapes


class Inexact:
    """The detector Protocols of :func:`_kernels_text`, one per call shape, named in order of first use."""

    def __init__(self) -> None:
        self.names: dict[tuple[int, tuple[str, ...]], str] = {}

    def name(self, shape: tuple[int, tuple[str, ...]]) -> str:
        if shape not in self.names:
            self.names[shape] = f"_Inexact{len(self.names)}"
        return self.names[shape]

    def lines(self) -> list[str]:
        out: list[str] = []
        for (positional, keywords), name in self.names.items():
            params = [f"_{i}: Never" for i in range(positional)] + ["/"]
            if keywords:
                params += ["*", *(f"{k}: Never" for k in keywords)]
            out += [
                "",
                "",
                f"class {name}(Protocol):",
                f'    """An impl that takes {positional} arguments positionally'
                + (f" with {', '.join(keywords)} by keyword" if keywords else "")
                + ': more than its op\'s schema lets it."""',
                "",
                f"    def __call__(_k, {', '.join(params)}) -> object: ...",
            ]
        return out


def _inexact_message(op: StructuredOp, key: str, xp: bool) -> str:
    positional, keywords = _call_shape(op, xp)
    return (
        f"{op.name}'s {key} impl takes exactly its schema's parameters: {positional} positional, then "
        f"{', '.join(keywords)} keyword-only; the run-time check refuses this impl"
    )


def pyright_overloads(
    head: str,
    op: StructuredOp,
    method: str,
    typed: str,
    returns: tuple[str, str],
    inexact: Inexact,
    xp_typed: str | None = None,
    refused: str | None = None,
    one_device: bool = False,
) -> list[str]:
    """pyright's overloads of a registration (``head``: ``def cpu(self, `` for the registrar's method ``method``,
    ``def __call__(_k, `` for ``op.impl(key)``'s decorator) taking an impl typed ``typed`` (``method``: ``cpu``,
    ``cuda`` or ``xp``): an impl typed ``...`` (or ``*args: Any, **kwargs: Any``, the same to pyright) passes as
    gradual; with ``xp_typed``, an impl taking ``xp`` first passes as typed so; an impl that takes a parameter
    beyond the schema positionally, or one of its keyword-only parameters (``out``, ``plan``) positionally,
    matches a deprecated overload, which pyright strict reports (``reportDeprecated``): a Protocol cannot say
    "exactly these parameters", but an overload can catch the call shapes only such an impl accepts.
    ``returns``: (the return type of the gradual and deprecated forms, of the typed form); the two must be one type
    with ``Any`` for the TypeVars, or an ``Any`` argument is ambiguous between them and reported deprecated.
    ``refused``: the deprecated forms' return type instead: pyright reports a deprecated overload only where the
    callee is a name or attribute (``@op.cpu``), not a call (``@op.impl("cpu")``), so there they return the TypeVar
    ``_Refused``, which nothing solves: a decorator returning an unknown type is an error of pyright strict
    (``reportUntypedFunctionDecorator``).
    ``one_device`` (an ``xp`` impl of an op with numbers, whose impl must take both device types): before the typed
    form, an impl whose tensors fit ``CUDATensor`` passes, then one whose tensors fit ``CPUTensor`` only is refused
    (deprecated). Requiring both would need a Protocol with an overload per device type, and pyright matches no
    generic impl (``D = TypeVar("D", CPUTensor, CUDATensor)``) against one; a chain of overloads can require one
    device type, so an impl of CUDA tensors only still passes."""
    positional, keywords = _call_shape(op, method == "xp")
    key = "CPU and CUDA (xp)" if method == "xp" else KEYS[method][1]
    message = _inexact_message(op, key, method == "xp")
    any_return, typed_return = returns
    lines = ["@overload", f"{head}fn: _Gradual) -> {any_return}: ..."]
    if xp_typed is not None:
        lines += ["@overload", f"{head}fn: {xp_typed}) -> {any_return}: ..."]
    for shape in _inexact_shapes(positional, keywords):
        lines += [
            "@overload",
            f"@deprecated({message!r})",
            f"{head}fn: {inexact.name(shape)}) -> {refused or any_return}: ...",
        ]
    if one_device:
        lines += one_device_overloads(head, op, typed, any_return, refused or any_return, deprecate=True)
    lines += ["@overload", f"{head}fn: {typed}) -> {typed_return}: ..."]
    return lines


def one_device_overloads(
    head: str, op: StructuredOp, typed: str, passed: str, refused: str, deprecate: bool
) -> list[str]:
    """pyright's check that an ``xp`` impl of an op with numbers (``typed``: its ``<Op>XPKernelGeneric[_XPB]``)
    takes the tensors of both device types: an impl that takes a plain Tensor at a parameter
    (``<Op>XPKernelPlain<i>``, the other parameters ``Never``) is refused; then one that fits
    ``<Op>XPKernelBoth``, whose ``__call__`` is generic over a TypeVar constrained to CPUTensor and CUDATensor
    (so the impl must accept both: a generic impl does, a one-device impl does not), passes; then one whose
    tensors fit CUDATensor only, or CPUTensor only, is refused. (A Protocol of two overloads, one per device,
    would say the same, but pyright matches no impl generic over a constrained TypeVar against one.)"""
    base = typed.split("Generic[")[0]
    lines: list[str] = []
    for i, name in enumerate(plain_targets(op)):
        message = (
            f"{op.name}'s impl for CPU and CUDA (xp) takes a plain Tensor at {name!r}, not CPUTensor or CUDATensor"
        )
        lines += ["@overload", *([f"@deprecated({message!r})"] if deprecate else [])]
        lines.append(f"{head}fn: {base}Plain{i}) -> {refused}: ...")
    lines += ["@overload", f"{head}fn: {base}Both) -> {passed}: ..."]
    for device in ("CUDA", "CPU"):
        message = (
            f"{op.name}'s impl for CPU and CUDA (xp) takes the tensors of either device type (as a TypeVar "
            f"constrained to CPUTensor and CUDATensor); this one takes {device}Tensor only"
        )
        lines += ["@overload", *([f"@deprecated({message!r})"] if deprecate else [])]
        lines.append(f"{head}fn: {typed.replace('[_XPB]', f'[_XP{device}]')}) -> {refused}: ...")
    return lines


def plain_targets(op: StructuredOp) -> list[str]:
    """The parameters of an ``xp`` impl of ``op`` where pyright's one-device check looks for a plain Tensor (one
    detector Protocol each, ``<Op>XPKernelPlain<i>``): every parameter with tensors, then ``out``."""
    return [p.name for p in op.schema.params if p.category in ("Tensor", "TensorList", "TensorOrScalar")] + ["out"]


def has_numbers(op: StructuredOp) -> bool:
    """Whether ``op`` has a tensor-or-number parameter (its ``xp`` impl is typed per device type for mypy)."""
    return any(p.category == "TensorOrScalar" for p in op.schema.params)


def impl_protocols(op: StructuredOp, typed: dict[str, str], any_typed: dict[str, str], inexact: Inexact) -> list[str]:
    """pyright's decorators of ``op``'s impls, one Protocol per key (``cpu``, ``cuda``, ``xp``) whose ``__call__``
    has the overloads of :func:`pyright_overloads`: the type of the registrar's ``@<op>.cpu`` (an attribute of
    the registrar in pyright's branch) and of ``get_op("<op>").impl("cpu")`` alike, written once. ``typed``:
    the impl type per key; ``any_typed``: the same with ``Any`` for its TypeVars (the gradual form's return). A
    refused (deprecated) form returns the Protocol's parameter: the registrar's attribute is
    ``_<Op>CPUImpl[<the gradual form's return>]`` (every form returns one type, so an ``Any`` impl is not
    ambiguous between them, and pyright reports a deprecated one: the callee is an attribute), ``impl("cpu")``'s
    is ``_<Op>CPUImpl[_Refused]`` (unknown: pyright reports no deprecated overload on a call's result, but does a
    decorator returning an unknown type, see :func:`pyright_overloads`). For one key, an ``xp`` impl is accepted
    too (the run time takes it)."""
    cls = camel(op.name)
    lines: list[str] = []
    xp_generic = f"{cls}XPKernelGeneric[_XPB]"
    for method in (*KEYS, "xp"):
        overloads = pyright_overloads(
            "def __call__(_k, ",
            op,
            method,
            typed[method],
            (any_typed[method], typed[method]),
            inexact,
            xp_typed=xp_generic if method != "xp" else None,
            refused="_RefusedAs",
            one_device=method == "xp" and has_numbers(op),
        )
        key = "CPU and CUDA (xp)" if method == "xp" else KEYS[method][1]
        lines += [
            "",
            "",
            f"class _{cls}{method.upper()}Impl(Protocol[_RefusedAs]):",
            f'    """The decorator that registers ``{op.name}``\'s {key} impl (``@{op.name}.{method}``), as pyright'
            ' types it."""',
            "",
            *("    " + line for line in overloads),
        ]
    return lines


def op_class(op: StructuredOp) -> list[str]:
    """The class ``library.get_op("<name>")`` is for pyright: the op's StructuredOp with ``impl`` typed per key
    (the Protocols of :func:`impl_protocols`)."""
    cls = camel(op.name)
    return [
        "",
        "",
        f"class {cls}Op(StructuredOp[Literal[{op.name!r}]]):",
        f'    """``{op.name}`` as ``library.get_op({op.name!r})`` gives it to pyright: ``impl`` checked per key as'
        f' ``@{op.name}.cpu`` / ``.cuda`` / ``.xp``."""',
        "",
        "    @overload",
        f"    def impl(self, key: _CPUName, /) -> _{cls}CPUImpl[_Refused]: ...",
        "    @overload",
        f"    def impl(self, key: _CUDAName, /) -> _{cls}CUDAImpl[_Refused]: ...",
        "    @overload",
        f"    def impl(self, key: _CPUName, key2: _CUDAName, /) -> _{cls}XPImpl[_Refused]: ...",
        "    @overload",
        f"    def impl(self, key: _CUDAName, key2: _CPUName, /) -> _{cls}XPImpl[_Refused]: ...",
        "    @overload",
        "    def impl(self, *keys: DispatchKey | str) -> Callable[[Callable[..., None]], Callable[..., None]]: ...",
    ]


def xp_param_texts(
    op: StructuredOp, xp: str, annotation: Callable[[Param], str], plan: str | None, out: str
) -> list[str]:
    """Parameter texts of an impl of ``op`` taking the array module first: ``xp: <xp>``, the schema's parameters
    annotated by ``annotation`` (keyword-only ones after ``*``), then, keyword-only, ``plan: <plan>`` (when the op
    has a plan) and ``out: <out>``."""
    texts = [f"xp: {xp}"]
    star = False
    for p in op.schema.params:
        if p.kw_only and not star:
            texts.append("*")
            star = True
        texts.append(f"{p.name}: {annotation(p)}")
    if not star:
        texts.append("*")
    if op.schema.plan is not None:
        texts.append(f"plan: {plan}")
    texts.append(f"out: {out}")
    return texts


def _loose_xp(op: StructuredOp) -> str:
    """The parameters of an impl of ``op`` taking ``xp`` first, any types (``override``/``register_kernel`` take one
    for any key, an out-of-tree backend's too)."""
    return ", ".join(xp_param_texts(op, "Any", lambda _: "Any", "Any", "Any"))


def _literal(group: Sequence[StructuredOp]) -> str:
    return "Literal[" + ", ".join(repr(o.name) for o in group) + "]"


def _shape_groups(ops: Sequence[StructuredOp], xp: bool) -> dict[tuple[int, tuple[str, ...]], list[StructuredOp]]:
    """The ops by each call shape only an impl taking more than their schema accepts (see :func:`_inexact_shapes`)."""
    shapes: dict[tuple[int, tuple[str, ...]], list[StructuredOp]] = {}
    for op in ops:
        for shape in _inexact_shapes(*_call_shape(op, xp)):
            shapes.setdefault(shape, []).append(op)
    return shapes


def _kernel_groups(ops: Sequence[StructuredOp]) -> list[list[StructuredOp]]:
    """The ops grouped by the kernel Protocols their schemas give: a group shares one overload (taking its first
    op's Protocols), so that pyright evaluates fewer overloads on each call."""
    same: dict[object, list[StructuredOp]] = {}
    for op in ops:
        schema = tuple((p.name, p.kw_only, p.category, p.annotation, p.optional) for p in op.schema.params)
        same.setdefault((schema, op.schema.plan), []).append(op)
    return list(same.values())


def impl_of_lines(ops: Sequence[StructuredOp], typed: dict[str, dict[str, str]], inexact: Inexact) -> list[str]:
    """pyright's ``CPUImplOf``, ``CUDAImplOf`` and ``XPImplOf``: what ``op.impl("cpu")`` (``"cuda"``, both)
    returns for an op object typed ``StructuredOp[<name Literal>]`` (``from devtensor.kernels.linalg import mm``;
    devtensor.structured.registry declares ``impl`` so for pyright). Its ``__call__`` is overloaded on ``self``'s
    name: for an op of devtensor's, the forms of :func:`pyright_overloads` (gradual, an ``xp`` impl for one key,
    the refused call shapes, the one-device check, the kernel Protocol), each shared by the ops whose kernels or
    call shapes are the same, then any other impl refused; an op of another name (or ``object``) takes any impl.
    A refused form returns ``_Refused`` (pyright reports a decorator returning an unknown type)."""
    groups = _kernel_groups(ops)
    lines: list[str] = []
    for method in (*KEYS, "xp"):
        cls = f"{method.upper()}ImplOf"
        xp = method == "xp"
        key = "CPU and CUDA (xp)" if xp else KEYS[method][1]

        def head(group: Sequence[StructuredOp], cls: str = cls) -> str:
            return f"def __call__(self: {cls}[{_literal(group)}], "

        body = ["@overload", "def __call__(self, fn: _Gradual) -> Callable[..., None]: ..."]
        if not xp:
            for group in groups:
                generic = f"{camel(group[0].name)}XPKernelGeneric[_XPB]"
                body += ["@overload", f"{head(group)}fn: {generic}) -> Callable[..., None]: ..."]
        for (positional, keywords), group in _shape_groups(ops, xp).items():
            message = (
                f"the {key} impl takes {positional} arguments positionally"
                + (f" with {', '.join(keywords)} by keyword" if keywords else "")
                + ": more than the op's schema lets it (an extra parameter, or a keyword-only one such as out "
                "taken positionally); the run-time check refuses it"
            )
            body += [
                "@overload",
                f"@deprecated({message!r})",
                f"{head(group)}fn: {inexact.name((positional, keywords))}) -> _Refused: ...",
            ]
        for group in groups:
            form = typed[group[0].name][method]
            if xp and has_numbers(group[0]):
                body += one_device_overloads(head(group), group[0], form, "Callable[..., None]", "_Refused", False)
            body += ["@overload", f"{head(group)}fn: {form}) -> Callable[..., None]: ..."]
        body += [
            "@overload",
            f"{head(ops)}fn: Callable[..., None]) -> _Refused: ...",
            "@overload",
            "def __call__(self, fn: Callable[..., None]) -> Callable[..., None]: ...",
        ]
        lines += [
            "",
            "",
            f"class {cls}(Protocol[_KeyOf]):",
            f'    """``op.impl({method!r})`` of an op typed ``StructuredOp[<its name>]``, as pyright types it."""',
            "",
            *("    " + line for line in body),
        ]
    return lines


def by_name_lines(ops: Sequence[StructuredOp], typed: dict[str, dict[str, str]], inexact: Inexact) -> list[str]:
    """pyright's ``library.get_op``, ``library.override`` and ``library.register_kernel``: an op given by its name
    (a Literal) or as ``get_op`` typed it, and a CPU or CUDA key by name, take the op's impl type for that key; an
    impl that takes more than the schema positionally is reported for any key, and any other impl for a known op
    and key matches a deprecated overload (pyright strict reports it), before the untyped forms for other ops and
    keys."""
    lines: list[str] = []
    loose: dict[str, list[StructuredOp]] = {}
    for op in ops:
        loose.setdefault(_loose_xp(op), []).append(op)
    loose_names: dict[str, str] = {}
    for i, params in enumerate(loose):
        loose_names[params] = f"_XPAny{i}"
        lines += [
            "",
            "",
            f"class _XPAny{i}(Protocol):",
            '    """An impl taking ``xp`` first, of any types."""',
            "",
            f"    def __call__(_k, {params}) -> None: ...",
        ]

    def named(group: Sequence[StructuredOp]) -> str:
        # an op by name, or an op object whose type carries its name (StructuredOp[Literal["mm"]])
        return f"{_literal(group)} | StructuredOp[{_literal(group)}]"

    shapes = _shape_groups(ops, xp=False)
    same_kernels = _kernel_groups(ops)
    for function in ("override", "register_kernel"):
        head = f"def {function}("
        lines += ["", "", "@overload", f"{head}op: OpLike, key: KeyLike, fn: _Gradual) -> RegistrationHandle: ..."]
        for params, group in loose.items():
            lines += [
                "@overload",
                f"{head}op: {named(group)}, key: KeyLike, fn: {loose_names[params]}) -> RegistrationHandle: ...",
            ]
        for shape, group in shapes.items():
            message = (
                f"{function}: the impl takes {shape[0]} arguments positionally, more than the op's schema lets it "
                "(an extra parameter, or a keyword-only one such as out taken positionally); the run-time check "
                "refuses it"
            )
            lines += [
                "@overload",
                f"@deprecated({message!r})",
                f"{head}op: {named(group)}, key: KeyLike, fn: {inexact.name(shape)}) -> RegistrationHandle: ...",
            ]
        for group in same_kernels:
            for device in KEYS:
                lines += [
                    "@overload",
                    f"{head}op: {named(group)}, key: _{KEYS[device][1]}Name, fn: {typed[group[0].name][device]})"
                    " -> RegistrationHandle: ...",
                ]
        message = (
            f"{function}: fn is not typed as the op's impl for this key (<Op><KEY>Kernel in "
            "devtensor.kernel_signatures: the schema's names and kinds, tensors of the key's refined type, out a "
            "ConstOut of it)"
        )
        lines += [
            "@overload",
            f"@deprecated({message!r})",
            f"{head}op: {named(ops)}, key: _CPUName | _CUDAName, fn: Callable[..., None]) -> RegistrationHandle: ...",
            "@overload",
            f"{head}op: OpLike, key: KeyLike, fn: Callable[..., None]) -> RegistrationHandle: ...",
        ]
    lines += [
        "",
        "",
        "@overload",
        "def get_op(op: ViewOp | ViewOpName) -> ViewOp: ...",
        *(
            line
            for op in ops
            for line in ("@overload", f"def get_op(op: Literal[{op.name!r}]) -> {camel(op.name)}Op: ...")
        ),
        "@overload",
        "def get_op(op: StructuredOp | str) -> StructuredOp: ...",
        "@overload",
        "def get_op(op: Callable[..., Any]) -> StructuredOp | ViewOp: ...",
    ]
    return lines
