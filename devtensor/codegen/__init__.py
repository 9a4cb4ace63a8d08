"""Generate, from the op definitions, the checked-in modules that make the ops fast to import and visible to mypy.

The ops are defined at import time from their meta functions (:mod:`devtensor.structured`); from the same
schemas this package writes:

* ``devtensor/_generated_ops.py``: the module-level functions (``add``, ``add_``, …) bound to the ops' variants,
  typed in the stub ``_generated_ops.pyi`` beside it (:mod:`~devtensor.codegen.declarations`);
* ``devtensor/_generated_methods.py``: ``TensorOpMethods``, the mixin that declares the Tensor methods and
  operators for mypy (empty at run time: the ops attach the real ones);
* ``devtensor/cpu.py``, ``devtensor/cuda.py``: the device bindings, typed in the stubs ``cpu.pyi``, ``cuda.pyi``
  beside them;
* ``devtensor/kernel_signatures.pyi``: the type of each op's impls and typed registrars
  (:mod:`~devtensor.codegen.kernels`), a stub beside the small run-time module ``kernel_signatures.py`` (the
  registrars), so that importing devtensor never compiles the declarations;
* ``devtensor/_generated_schemas.py``: the ops' schemas as data, so that no schema is derived for built-in ops at
  import (:mod:`~devtensor.codegen.fronts`). No front is written to a file: every structured op's front is the
  generic front (:func:`devtensor.structured.fronts.build_front`), the compiled core's lanes in front of them.

Run ``python -m devtensor.codegen`` to regenerate, ``python -m devtensor.codegen --check`` to exit 1 when the
checked-in files are stale (a test runs the check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from devtensor.codegen.declarations import OPERATORS, bindings_module, methods_module, ops_module
from devtensor.codegen.fronts import schemas_module
from devtensor.codegen.kernels import KERNELS_TITLE, KEYS, kernels_module, kernels_stub_and_module
from devtensor.structured import all_ops, schema_from_meta
from devtensor.views import all_view_ops

__all__ = ["KEYS", "OPERATORS", "generate", "generate_for_package", "main"]

_PACKAGE = Path(__file__).resolve().parent.parent
OPS_FILE = _PACKAGE / "_generated_ops.py"
OPS_STUB = _PACKAGE / "_generated_ops.pyi"
METHODS_FILE = _PACKAGE / "_generated_methods.py"
KERNELS_FILE = _PACKAGE / "kernel_signatures.py"
KERNELS_STUB = _PACKAGE / "kernel_signatures.pyi"
SCHEMAS_FILE = _PACKAGE / "_generated_schemas.py"


def generate() -> dict[Path, str]:
    """The text of every generated file, from the ops defined now (importing devtensor defines them)."""
    import devtensor  # noqa: F401  (defines the built-in ops)

    ops = [op for op in all_ops() if op.module.split(".")[0] == "devtensor"]
    view_ops = [op for op in all_view_ops() if op.module.split(".")[0] == "devtensor"]
    # Built-in ops may have taken their schema from the (maybe stale) generated module: derive each anew, so that
    # what is written follows the definitions.
    for op in ops:
        op.schema = schema_from_meta(op.name, op.meta)
    for vop in view_ops:
        vop.schema = schema_from_meta(vop.name, vop.meta)
    kernels, kernels_stub = kernels_stub_and_module(ops, KERNELS_TITLE, [v.name for v in view_ops])
    ops_text, ops_stub = ops_module(ops, view_ops)
    return {
        OPS_FILE: ops_text,
        OPS_STUB: ops_stub,
        METHODS_FILE: methods_module(ops, view_ops),
        KERNELS_FILE: kernels,
        KERNELS_STUB: kernels_stub,
        SCHEMAS_FILE: schemas_module(ops, view_ops),
        **{
            _PACKAGE / f"{device}.{suffix}": text
            for device in KEYS
            for suffix, text in zip(("py", "pyi"), bindings_module(ops, device), strict=True)
        },
    }


def generate_for_package(package: str) -> str:
    """The kernel-signatures module for the ops defined by ``package`` (imported here to define them).

    The import registers the package's impls; an impl that does not match its op's schema (written for a signature
    that just changed, or through a stale generated registrar) is skipped, not raised, and named on stderr: the
    declarations are generated from the meta functions alone, and the type checker then reports each such impl
    against them (see :mod:`devtensor.structured.stale`).
    """
    import importlib

    from devtensor.structured.stale import collecting_stale_impls

    with collecting_stale_impls() as stale:
        importlib.import_module(package)
    for message in stale:
        print(f"codegen: skipped a registration that does not match its op now: {message}", file=sys.stderr)
    ops = [op for op in all_ops() if op.module == package or op.module.startswith(package + ".")]
    if not ops:
        raise SystemExit(f"codegen: package {package!r} defines no structured op")
    title = f"The type of each impl of the ops defined in ``{package}``, and typed registration decorators."
    return kernels_module(ops, title)


_BOOTSTRAP = '''"""Bootstrap written by `python -m devtensor.codegen --package ...`; the generated module replaces
it."""

from devtensor.structured import KernelRegistrar


def __getattr__(name: str) -> KernelRegistrar:
    return KernelRegistrar(name)
'''


def main(argv: list[str] | None = None) -> int:
    """Write the generated files, or with ``--check`` report stale ones and return 1."""
    parser = argparse.ArgumentParser(prog="python -m devtensor.codegen", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale; write nothing")
    parser.add_argument("--package", help="generate the kernel signatures of the ops a (user) package defines")
    parser.add_argument("--out", type=Path, help="with --package: the file to write (default: print it)")
    args = parser.parse_args(argv)
    if args.package:
        if args.out is not None and not args.out.exists() and not args.check:
            # First generation: the package may already import the file it is about to get. A bootstrap module
            # registers untyped until the real one replaces it below.
            args.out.write_text(_BOOTSTRAP)
        text = generate_for_package(args.package)
        if args.out is None:
            print(text, end="")
        elif args.check:
            if args.out.exists() and args.out.read_text() == text:
                return 0
            print(f"stale: {args.out} (rerun without --check to regenerate it)", file=sys.stderr)
            return 1
        else:
            args.out.write_text(text)
            print(f"wrote {args.out}")
        return 0
    stale = [path for path, text in generate().items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"stale: {path} (run `python -m devtensor.codegen`)", file=sys.stderr)
        return 1 if stale else 0
    for path, text in generate().items():
        if path in stale:
            path.write_text(text)
            print(f"wrote {path}")
    return 0
