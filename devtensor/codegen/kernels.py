"""The kernel signatures: per op a Protocol per dispatch key and one for an impl of both (``xp``), and the typed
registrars (``kernel_signatures.py``, or a package's own with ``--package``)."""

from __future__ import annotations

from collections.abc import Sequence

from devtensor.codegen.pyright_forms import (
    KEYS,
    Inexact,
    by_name_lines,
    camel,
    impl_of_lines,
    impl_protocols,
    op_class,
    plain_targets,
    xp_param_texts,
)
from devtensor.structured import Param, StructuredOp, plan_imports

__all__ = ["KERNELS_TITLE", "KEYS", "camel", "kernels_module", "kernels_stub_and_module", "tensor_annotation"]

_MAX_TYPEVARS = 8


def _meta_fullname(op: StructuredOp) -> str:
    """``module.qualname`` of the op's meta function (what mypy calls its fullname)."""
    return f"{op.meta.__module__}.{op.meta.__qualname__}"


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
    return xp_param_texts(
        op, "ModuleType", lambda p: tensor_annotation(p, tensor), op.schema.plan, f"ConstOut[{tensor}]"
    )


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
    # pyright's one-device check (codegen.pyright_forms.one_device_overloads): generic over both device types, and
    # a detector of a plain Tensor per parameter.
    generic += [
        "",
        "",
        f"class {name}Both(Protocol):",
        doc[:-3] + ' (pyright: both device types, through a generic ``__call__``)."""',
        "",
        f"    def __call__(_k, {', '.join(_xp_kernel_params(op, '_XPD'))}) -> None: ...",
    ]
    for i, target in enumerate(plain_targets(op)):

        def plain_at(p: Param, target: str = target) -> str:
            return tensor_annotation(p, "Tensor") if p.name == target else "Never"

        texts = xp_param_texts(op, "Never", plain_at, "Never", "ConstOut[Tensor]" if target == "out" else "Never")
        generic += [
            "",
            "",
            f"class {name}Plain{i}(Protocol):",
            f'    """An impl of ``{op.name}`` for CPU and CUDA at once that takes a plain Tensor at ``{target}``."""',
            "",
            f"    def __call__(_k, {', '.join(texts)}) -> None: ...",
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
    inexact = Inexact()
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
        # What mypy reads (``if MYPY:``, a name mypy takes as always true) and what pyright reads (the ``else``
        # branch: pyright takes the last declaration of a name) where the two checkers need different forms.
        mypy_lines: list[str] = []
        typed: dict[str, str] = {}
        any_typed: dict[str, str] = {}
        for device, (cls_name, typevars) in protocols.items():
            text = f"{cls_name}[{', '.join(typevars)}]"
            args = _pyright_args(typevars, KEYS[device][1])
            mypy_lines.append(f"def {device}(self, fn: {text}) -> {text}: ...")
            typed[device] = f"{cls_name}[{', '.join(args)}]"
            any_typed[device] = f"{cls_name}[{', '.join('Any' for _ in args)}]"
        mypy_lines.append(f"def xp(self, fn: {xp_typed}) -> {xp_typed}: ...")
        generic = f"{camel(op.name)}XPKernelGeneric"
        typed["xp"], any_typed["xp"] = f"{generic}[_XPB]", f"{generic}[Any]"
        pyright_typed[op.name] = typed
        # pyright's decorators, one Protocol per key: the registrar's attributes, and get_op's impl (op_class).
        body += impl_protocols(op, typed, any_typed, inexact)
        cls = camel(op.name)
        registrar = f"_{cls}Kernels"
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
            "    if MYPY:",
            *("        " + line for line in mypy_lines),
            "    else:",
            *(f"        {m}: _{cls}{m.upper()}Impl[{any_typed[m]}]" for m in (*KEYS, "xp")),
        ]
        body += ["", "", f"{op.name}: {registrar}"]
        if split:
            pyright_only += op_class(op)
    if split:
        # pyright's alone: mypy (taking MYPY as always true) skips the block; its plugin checks these forms.
        pyright_only += impl_of_lines(ops, pyright_typed, inexact)
        pyright_only += by_name_lines(ops, pyright_typed, inexact)
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
        "# pyright's one-device check of an xp impl of an op with numbers (see codegen.pyright_forms).",
        '_XPCPU = TypeVar("_XPCPU", bound=CPUTensor | _NoTensor, contravariant=True)',
        '_XPCUDA = TypeVar("_XPCUDA", bound=CUDATensor | _NoTensor, contravariant=True)',
        "# The same, generic in one <Op>XPKernelBoth.__call__: an impl must take both device types.",
        '_XPD = TypeVar("_XPD", CPUTensor, CUDATensor)',
        "# mypy takes a name MYPY as always true (pyright does not): `if MYPY:` holds the forms mypy reads.",
        "MYPY: bool",
        "",
        "",
        "# What a refused impl's decorator returns (see codegen.pyright_forms): solved by nothing, so unknown.",
        '_Refused = TypeVar("_Refused")',
        "# What the refused forms of an impl decorator Protocol return (see codegen.pyright_forms.impl_protocols).",
        '_RefusedAs = TypeVar("_RefusedAs", covariant=True)',
        "# The name Literal of an op typed StructuredOp[...] (see codegen.pyright_forms.impl_of_lines).",
        '_KeyOf = TypeVar("_KeyOf", covariant=True)',
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
        # (pyright reports the registrars' two declarations, one per checker, as a redeclaration in strict mode, and
        # its form, the decorator Protocols as attributes, as overriding KernelRegistrar's methods)
        "# pyright: reportRedeclaration=false, reportIncompatibleMethodOverride=false",
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
