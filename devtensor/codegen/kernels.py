"""The kernel signatures: per op a Protocol per dispatch key and one for an impl of both (``xp``), and the typed
registrars (``kernel_signatures.py``, or a package's own with ``--package``)."""

from __future__ import annotations

from collections.abc import Sequence

from devtensor.structured import Param, StructuredOp, plan_imports

#: Dispatch keys with typed kernels and bindings: device type -> (refined tensor class, key name).
KEYS: dict[str, tuple[str, str]] = {"cpu": ("CPUTensor", "CPU"), "cuda": ("CUDATensor", "CUDA")}
_MAX_TYPEVARS = 8


def _meta_fullname(op: StructuredOp) -> str:
    """``module.qualname`` of the op's meta function (what mypy calls its fullname)."""
    return f"{op.meta.__module__}.{op.meta.__qualname__}"


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _count(typevars: list[str], family: str) -> int:
    """How many of ``typevars`` are of the family ``_<family><i>`` (``_CPU0``: a tensor; ``_CPUS0``: a
    tensor-or-number or an optional tensor, bounded with the numbers and None as well)."""
    return sum(1 for t in typevars if t[len(family) + 1 :].isdigit() and t.startswith(f"_{family}"))


def _kernel_params(op: StructuredOp, device: str) -> tuple[list[str], list[str]]:
    """(parameter texts of the impl type for ``device``, the TypeVars they use).

    Every Tensor, tensor-list or tensor-or-number parameter, and ``out``, gets its own TypeVar bounded by the
    refined type (``TypeVar | Scalar`` for a tensor-or-number one, ``| None`` for an optional one), so mypy
    infers the impl's own annotation and rejects anything that is not that refined type (a plain Tensor, or a
    ``ConstOut[Tensor]``, included); the impl must still accept the numbers and None of the schema.
    """
    key = KEYS[device][1]
    texts: list[str] = []
    typevars: list[str] = []
    star = False
    for p in op.schema.params:
        if p.kw_only and not star:
            texts.append("*")
            star = True
        none = " | None" if p.optional else ""
        if p.category in ("Tensor", "TensorList"):
            # An optional one is of the family bounded with None too: mypy infers the impl's whole union.
            family = key + "S" if p.optional else key
            tv = f"_{family}{_count(typevars, family)}"
            typevars.append(tv)
            annotation = (tv if p.category == "Tensor" else f"Sequence[{tv}]") + none
        elif p.category == "TensorOrScalar":
            # Its own TypeVar family, bounded with the number types and None: mypy infers the impl's whole union.
            tv = f"_{key}S{_count(typevars, key + 'S')}"
            typevars.append(tv)
            annotation = f"{tv} | Scalar{none}"
        else:
            annotation = p.annotation
        texts.append(f"{p.name}: {annotation}")
    if not star:
        texts.append("*")
    if op.schema.plan is not None:
        texts.append(f"plan: {op.schema.plan}")
    tv = f"_{key}{_count(typevars, key)}"
    typevars.append(tv)
    texts.append(f"out: ConstOut[{tv}]")
    if _count(typevars, key) > _MAX_TYPEVARS or _count(typevars, key + "S") > _MAX_TYPEVARS:
        raise TypeError(f"codegen: {op.name} has more than {_MAX_TYPEVARS - 1} tensor parameters of one kind")
    return texts, typevars


def tensor_annotation(param: Param, tensor: str) -> str:
    """The annotation text of ``param`` with its tensors typed ``tensor`` (a class or TypeVar name): ``tensor``,
    ``Sequence[tensor]`` or ``tensor | Scalar`` by its category, ``| None`` when optional; any other parameter
    keeps its own annotation."""
    none = " | None" if param.optional else ""
    if param.category == "Tensor":
        return f"{tensor}{none}"
    if param.category == "TensorList":
        return f"Sequence[{tensor}]{none}"
    if param.category == "TensorOrScalar":
        return f"{tensor} | Scalar{none}"
    return param.annotation


def _xp_kernel_params(op: StructuredOp, tensor: str = "_XP") -> list[str]:
    """Parameter texts of the type of an impl registered for CPU and CUDA at once (``@<op>.xp``): the array
    module first, then every tensor typed ``tensor``: the one TypeVar ``_XP``, constrained to (CPUTensor,
    CUDATensor), or one of those classes (see :func:`_xp_protocol`)."""
    texts = ["xp: ModuleType"]
    star = False
    for p in op.schema.params:
        if p.kw_only and not star:
            texts.append("*")
            star = True
        texts.append(f"{p.name}: {tensor_annotation(p, tensor)}")
    if not star:
        texts.append("*")
    if op.schema.plan is not None:
        texts.append(f"plan: {op.schema.plan}")
    texts.append(f"out: ConstOut[{tensor}]")
    return texts


def _xp_protocol(op: StructuredOp, name: str) -> tuple[list[str], str]:
    """(lines of the Protocols ``name`` and ``name + "Generic"``, the use of ``name`` in mypy's registrar) typing
    ``op``'s impls for CPU and CUDA at once.

    For mypy, tensors are one TypeVar constrained to (CPUTensor, CUDATensor), which mypy infers from the impl's own
    annotations: a plain Tensor is none of the constraints, and CPU and CUDA tensors mixed conflict (``out`` is a
    covariant ConstOut, the tensors contravariant); an impl generic over such a TypeVar is accepted. mypy cannot
    infer that TypeVar through a union with the Python number types of a generic impl (``D | Scalar``), so an op
    with a tensor-or-number parameter gets a Protocol with two overloads of ``__call__`` instead, one per
    device type: the impl must accept both (mixing is rejected).

    For pyright (``<Name>Generic``): one TypeVar ``_XPB`` bounded by ``CPUTensor | CUDATensor | _NoTensor``.
    pyright settles a constrained TypeVar on the first constraint that fits (so it would accept a plain Tensor), and
    matches no generic impl against overloads; through the bound it infers the impl's own annotation, so a plain
    Tensor (or ``Tensor | Scalar``) and mixed device types are rejected, and a generic impl is accepted.
    """
    doc = (
        f'    """The type of ``{op.name}``\'s impl for CPU and CUDA at once: the array module first, tensors of'
        ' one device type."""'
    )
    generic = [
        "",
        "",
        f"class {name}Generic(Protocol[_XPB]):",
        doc[:-3] + ' (the form pyright checks)."""',
        "",
        f"    def __call__(_k, {', '.join(_xp_kernel_params(op, '_XPB'))}) -> None: ...",
    ]
    if not any(p.category == "TensorOrScalar" for p in op.schema.params):
        lines = [
            f"class {name}(Protocol[_XP]):",
            doc,
            "",
            f"    def __call__(_k, {', '.join(_xp_kernel_params(op))}) -> None: ...",
        ]
        return lines + generic, f"{name}[_XP]"
    lines = [f"class {name}(Protocol):", doc]
    for device in KEYS:
        lines += [
            "",
            "    @overload",
            f"    def __call__(_k, {', '.join(_xp_kernel_params(op, KEYS[device][0]))}) -> None: ...",
        ]
    return lines + generic, name


def _pyright_args(typevars: list[str], key: str) -> list[str]:
    """The type arguments of a kernel Protocol for pyright: each tensor-or-number or optional tensor TypeVar
    (``_CPUS<i>``, bounded with the numbers and None) replaced by a free one of the plain family (``_CPU<j>``,
    bounded by the refined type and ``_NoTensor`` only).

    pyright settles a TypeVar of the impl parameter ``_CPUS0 | Scalar`` on the first member of the impl's union
    that fits the bound: for a plain ``Tensor | Scalar``, a number type, and accepts it. With a bound that holds no
    number, only the refined tensor fits; mypy instead infers the impl's whole union, which must fit the bound,
    hence the two forms (``if MYPY:`` in the registrar)."""
    used = _count(typevars, key)
    out: list[str] = []
    for tv in typevars:
        if tv.startswith(f"_{key}S"):
            out.append(f"_{key}{used}")
            used += 1
        else:
            out.append(tv)
    if used > 2 * _MAX_TYPEVARS:
        raise TypeError(f"codegen: too many tensor parameters ({used})")
    return out


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


class _Inexact:
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


def _pyright_overloads(
    head: str,
    op: StructuredOp,
    method: str,
    typed: str,
    returns: tuple[str, str],
    inexact: _Inexact,
    xp_typed: str | None = None,
    refused: str | None = None,
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
    (``reportUntypedFunctionDecorator``)."""
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
    lines += ["@overload", f"{head}fn: {typed}) -> {typed_return}: ..."]
    return lines


def _op_class(op: StructuredOp, pyright_typed: dict[str, str], inexact: _Inexact) -> list[str]:
    """The class ``library.get_op("<name>")`` is for pyright: the op's StructuredOp with ``impl`` typed per key
    (a Protocol per key whose ``__call__`` has the registrar's overloads)."""
    cls = camel(op.name)
    lines: list[str] = []
    xp_generic = f"{cls}XPKernelGeneric[_XPB]"
    for method in (*KEYS, "xp"):
        name = f"_{cls}{method.upper()}Impl"
        overloads = _pyright_overloads(
            "def __call__(_k, ",
            op,
            method,
            pyright_typed[method],
            ("Callable[..., None]", "Callable[..., None]"),
            inexact,
            xp_typed=xp_generic if method != "xp" else None,
            refused="_Refused",
        )
        lines += [
            "",
            "",
            f"class {name}(Protocol):",
            f'    """``{op.name}.impl({method!r})``\'s decorator, as pyright types it (see ``{cls}Op``)."""',
            "",
            *("    " + line for line in overloads),
        ]
    lines += [
        "",
        "",
        f"class {cls}Op(StructuredOp):",
        f'    """``{op.name}`` as ``library.get_op({op.name!r})`` gives it to pyright: ``impl`` checked per key as'
        f' ``@{op.name}.cpu`` / ``.cuda`` / ``.xp``."""',
        "",
        "    @overload",
        f"    def impl(self, key: _CPUName, /) -> _{cls}CPUImpl: ...",
        "    @overload",
        f"    def impl(self, key: _CUDAName, /) -> _{cls}CUDAImpl: ...",
        "    @overload",
        f"    def impl(self, key: _CPUName, key2: _CUDAName, /) -> _{cls}XPImpl: ...",
        "    @overload",
        f"    def impl(self, key: _CUDAName, key2: _CPUName, /) -> _{cls}XPImpl: ...",
        "    @overload",
        "    def impl(self, *keys: DispatchKey | str) -> Callable[[Callable[..., None]], Callable[..., None]]: ...",
    ]
    return lines


def _loose_xp(op: StructuredOp) -> str:
    """The parameters of an impl of ``op`` taking ``xp`` first, any types (``override``/``register_kernel`` take one
    for any key, an out-of-tree backend's too)."""
    texts = ["xp: Any"]
    star = False
    for p in op.schema.params:
        if p.kw_only and not star:
            texts.append("*")
            star = True
        texts.append(f"{p.name}: Any")
    if not star:
        texts.append("*")
    if op.schema.plan is not None:
        texts.append("plan: Any")
    texts.append("out: Any")
    return ", ".join(texts)


def _by_name_lines(ops: Sequence[StructuredOp], typed: dict[str, dict[str, str]], inexact: _Inexact) -> list[str]:
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
        return "Literal[" + ", ".join(repr(o.name) for o in group) + "]"

    shapes: dict[tuple[int, tuple[str, ...]], list[StructuredOp]] = {}
    for op in ops:
        for shape in _inexact_shapes(*_call_shape(op, False)):
            shapes.setdefault(shape, []).append(op)
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
        for op in ops:
            for device in KEYS:
                lines += [
                    "@overload",
                    f"{head}op: {named([op])}, key: _{KEYS[device][1]}Name, fn: {typed[op.name][device]})"
                    " -> RegistrationHandle: ...",
                ]
        message = (
            f"{function}: the impl does not have the op's impl type for this key (its Protocol in "
            "devtensor.kernel_signatures); the run-time check refuses it"
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


def _plan_import_lines(ops: Sequence[StructuredOp], indent: str = "    ") -> list[str]:
    """``from M import N`` lines (for the type checkers only: under ``TYPE_CHECKING`` when ``indent``) for the names
    the ops' plan types use."""
    needed: set[tuple[str, str]] = set()
    for op in ops:
        if op.schema.plan is not None:
            needed |= plan_imports(op.schema.plan_hint)
    needed -= {("typing", "Literal"), ("collections.abc", "Sequence")}
    by_module: dict[str, set[str]] = {}
    for module, name in needed:
        by_module.setdefault(module, set()).add(name)
    if not by_module:
        return []
    lines = ["", "if TYPE_CHECKING:"] if indent else [""]
    for module in sorted(by_module):
        lines.append(f"{indent}from {module} import {', '.join(sorted(by_module[module]))}")
    return lines


def _kernels_text(
    ops: Sequence[StructuredOp], title: str, split: bool, view_names: Sequence[str] = ()
) -> str | tuple[str, str]:
    """The text of :func:`kernels_module`, or with ``split`` of :func:`kernels_stub_and_module`."""
    body: list[str] = []
    inexact = _Inexact()
    pyright_typed: dict[str, dict[str, str]] = {}
    pyright_only: list[str] = []
    for op in ops:
        protocols: dict[str, tuple[str, list[str]]] = {}
        for device in KEYS:
            texts, typevars = _kernel_params(op, device)
            cls_name = f"{camel(op.name)}{KEYS[device][1]}Kernel"
            generic = f"Protocol[{', '.join(typevars)}]" if typevars else "Protocol"
            body += [
                "",
                "",
                f"class {cls_name}({generic}):",
                f'    """The type of ``{op.name}``\'s {KEYS[device][1]} impl (schema of its meta function, tensors as'
                f' {KEYS[device][0]})."""',
                "",
                f"    def __call__(_k, {', '.join(texts)}) -> None: ...",
            ]
            protocols[device] = (cls_name, typevars)
        xp_lines, xp_typed = _xp_protocol(op, f"{camel(op.name)}XPKernel")
        body += ["", "", *xp_lines]
        registrar = f"_{camel(op.name)}Kernels"
        body += [
            "",
            "",
            f"class {registrar}(KernelRegistrar):",
            f'    """Typed registration of ``{op.name}``\'s impls: ``@{op.name}.cpu`` / ``@{op.name}.cuda`` /'
            f' ``@{op.name}.xp``."""',
            "",
            "    __slots__ = ()",
            "    #: The op's meta function (the mypy plugin finds the registrar of an op by it).",
            f"    meta_function: Final = {_meta_fullname(op)!r}",
            "",
        ]
        # What mypy reads (``if MYPY:``, a name mypy takes as always true) and what pyright reads (the ``else``
        # branch: pyright takes the last declaration of a name) where the two checkers need different forms.
        mypy_lines: list[str] = []
        pyright_lines: list[str] = []
        typed: dict[str, str] = {}
        for device, (cls_name, typevars) in protocols.items():
            text = f"{cls_name}[{', '.join(typevars)}]"
            args = _pyright_args(typevars, KEYS[device][1])
            mypy_lines.append(f"def {device}(self, fn: {text}) -> {text}: ...")
            typed[device] = f"{cls_name}[{', '.join(args)}]"
            any_typed = f"{cls_name}[{', '.join('Any' for _ in args)}]"
            pyright_lines += _pyright_overloads(
                f"def {device}(self, ", op, device, typed[device], (any_typed, typed[device]), inexact
            )
        mypy_lines.append(f"def xp(self, fn: {xp_typed}) -> {xp_typed}: ...")
        generic = f"{camel(op.name)}XPKernelGeneric"
        typed["xp"] = f"{generic}[_XPB]"
        pyright_lines += _pyright_overloads(
            "def xp(self, ", op, "xp", typed["xp"], (f"{generic}[Any]", typed["xp"]), inexact
        )
        pyright_typed[op.name] = typed
        body += [
            "    if MYPY:",
            *("        " + line for line in mypy_lines),
            "    else:",
            *("        " + line for line in pyright_lines),
        ]
        body += ["", "", f"{op.name}: {registrar}"]
        if split:
            pyright_only += _op_class(op, typed, inexact)
    if split:
        # pyright's alone: mypy (taking MYPY as always true) skips the block; its plugin checks these forms.
        pyright_only += _by_name_lines(ops, pyright_typed, inexact)
        body += ["", "", "if not MYPY:", *("    " + line if line else "" for line in pyright_only[2:])]
    # Bounded by a union with a class no value has: mypy then infers each TypeVar as the impl's own annotation
    # (with a plain class bound it would settle on the bound, and accept a generic Tensor parameter). That class is
    # no Tensor, so the bound is no subtype of Tensor: pyright, which otherwise settles on the bound whenever the
    # bound fits the impl's annotation, then also infers the annotation and rejects a plain Tensor.
    typevar_lines = [
        "@final",
        "class _NoTensor:",
        '    """Never instantiated: widens the TypeVar bounds below into unions that are no subtype of Tensor."""',
        "",
        "",
        *(
            f'_{KEYS[d][1]}{i} = TypeVar("_{KEYS[d][1]}{i}", bound={KEYS[d][0]} | _NoTensor, contravariant=True)'
            for d in KEYS
            for i in range(2 * _MAX_TYPEVARS)
        ),
        *(
            f'_{KEYS[d][1]}S{i} = TypeVar("_{KEYS[d][1]}S{i}", bound={KEYS[d][0]} | _NoTensor | Scalar'
            " | None, contravariant=True)"
            for d in KEYS
            for i in range(_MAX_TYPEVARS)
        ),
        "# The tensors of an impl for CPU and CUDA at once (``@<op>.xp``): all of one of the two types.",
        '_XP = TypeVar("_XP", CPUTensor, CUDATensor, contravariant=True)',
        "# The same for pyright (see _xp_protocol): bounded, so that it infers the impl's own annotation.",
        '_XPB = TypeVar("_XPB", bound=CPUTensor | CUDATensor | _NoTensor, contravariant=True)',
        "# mypy takes a name MYPY as always true (pyright does not): `if MYPY:` holds the forms mypy reads.",
        "MYPY: bool",
        "",
        "",
        "# What a refused impl's decorator returns (see _pyright_overloads): solved by nothing, so unknown.",
        '_Refused = TypeVar("_Refused")',
        '_CPUName: TypeAlias = Literal["cpu", "CPU"]',
        '_CUDAName: TypeAlias = Literal["cuda", "CUDA"]',
        "",
        "",
        "class _Gradual(Protocol):",
        '    """An impl typed ``...`` (``Callable[..., None]``, ``*args: Any, **kwargs: Any``): passes as gradual."""',
        "",
        "    def __call__(_k, *args: object, **kwargs: object) -> None: ...",
        *inexact.lines(),
    ]
    header = [
        f'"""Generated by `python -m devtensor.codegen` from the op definitions; do not edit.\n\n{title}\n"""',
        "",
        "from __future__ import annotations",
        "",
    ]
    imports = [
        "from collections.abc import Sequence",
        "from types import ModuleType",
        "from typing import TYPE_CHECKING, Any, Final, Literal, Never, Protocol, TypeAlias, TypeVar, final, overload",
        "",
        "from typing_extensions import deprecated",
        "",
        "from devtensor.dtypes import DTypeLike, Scalar",
        "from devtensor.generator import Generator",
        "from devtensor.structured import KernelRegistrar",
        "from devtensor.tensor import Tensor, TensorOrScalar",
        "from devtensor.typed import ConstOut, CPUTensor, CUDATensor",
    ]
    names = ["__all__ = [", *(f'    "{op.name}",' for op in sorted(ops, key=lambda o: o.name)), "]", ""]
    if split:
        # The stub: what type checkers read (beside the .py, they read only it); the module: the registrars.
        view_alias = []
        if view_names:
            view_alias = [
                "#: The names of the view ops (``get_op`` returns a ViewOp for these, a StructuredOp for other names).",
                "ViewOpName: TypeAlias = Literal[",
                *(f'    "{name}",' for name in sorted(view_names)),
                "]",
                "",
                "",
            ]
        stub = [
            *header,
            *imports,
            "from collections.abc import Callable",
            "from devtensor.dispatcher import DispatchKey",
            "from devtensor.library.custom_ops import OpLike",
            "from devtensor.library.handles import KeyLike, RegistrationHandle",
            "from devtensor.structured import StructuredOp",
            "from devtensor.views import ViewOp",
            *_plan_import_lines(ops, indent=""),
            "",
            *names,
            *view_alias,
            *typevar_lines,
            *body,
            "",
        ]
        module = [
            *header,
            "from devtensor.structured import KernelRegistrar",
            "",
            *names,
            *(f"{op.name} = KernelRegistrar({op.name!r})" for op in ops),
            "",
            "",
            "def __getattr__(name: str) -> KernelRegistrar:",
            '    """An op defined after this file was generated still registers (untyped) until it is regenerated."""',
            "    return KernelRegistrar(name)",
            "",
        ]
        return "\n".join(module), "\n".join(stub).replace("\n\n\n\n", "\n\n\n")
    lines = [
        *header,
        # (pyright reports the registrars' two declarations, one per checker, as a redeclaration in strict mode)
        "# pyright: reportRedeclaration=false",
        "",
        *imports,
        *_plan_import_lines(ops),
        "",
        *names,
        # The Protocols and typed registrars exist for mypy only: creating some 300 Protocol classes would be
        # most of the import cost. At run time every registrar is a plain KernelRegistrar.
        "if TYPE_CHECKING:",
        *("    " + line.replace("MYPY: bool", "MYPY = False") if line else "" for line in [*typevar_lines, *body]),
        "",
        "else:",
        *(f"    {op.name} = KernelRegistrar({op.name!r})" for op in ops),
        "",
        "    def __getattr__(name: str) -> KernelRegistrar:",
        "        # An op defined after this file was generated still registers (untyped) until it is regenerated.",
        "        return KernelRegistrar(name)",
        "",
        "",
        "del Any, DTypeLike, Final, Generator, Literal, ModuleType, Never, Tensor, TensorOrScalar, Sequence, Protocol,"
        " TypeAlias, TypeVar, deprecated, final, overload",
        "",
    ]
    return "\n".join(lines)


def kernels_module(ops: Sequence[StructuredOp], title: str) -> str:
    """The kernel-signatures module: per op a Protocol per key and a typed registrar object, declared under
    ``TYPE_CHECKING`` (for a user's package, ``--package``: one file)."""
    text = _kernels_text(ops, title, split=False)
    assert isinstance(text, str)
    return text


def kernels_stub_and_module(ops: Sequence[StructuredOp], title: str, view_names: Sequence[str] = ()) -> tuple[str, str]:
    """``(module, stub)``: the kernel-signatures module as a small run-time module (the registrars) and a ``.pyi``
    stub beside it with the declarations, which type checkers read instead of the module. Python then never
    compiles the some 6,000 lines of declarations (most of devtensor's import time without a bytecode cache).
    ``view_names``: the view ops, declared as the alias ``ViewOpName`` (a Literal) for ``library.get_op``'s
    overloads."""
    text = _kernels_text(ops, title, split=True, view_names=view_names)
    assert isinstance(text, tuple)
    return text


KERNELS_TITLE = """The type each built-in op's impl must have per dispatch key (``AddCPUKernel``,
``AddCUDAKernel``, …), derived from the op's schema with tensor parameters refined to the key's tensor type and
the output as a ConstOut, and typed registration decorators (``@add.cpu``, ``@add.cuda``) that make mypy check
an impl against it; ``@add.xp`` types one impl for both keys (``AddXPKernel``: the array module first, tensors
of one device type). Run the same generator over your own package with
``python -m devtensor.codegen --package mypkg --out mypkg/kernel_signatures.py``."""
