"""Build of devtensor's compiled core (``devtensor/_core.c`` and the ``_core_*.h`` it includes); everything else is in
pyproject.toml.

The extension is optional: where no C compiler is present the build goes on without it and the Python fronts
serve every call (devtensor/structured/core.py). The source's fingerprint is compiled in, so an extension left
over from another source is never used.

An editable install (the README's ``pip install -e .``) also writes the package's bytecode caches, as pip does for an
installed wheel: where PYTHONDONTWRITEBYTECODE=1 is set (containers, this project's machines) Python never writes
them itself, and each ``import devtensor`` would compile the whole package's source again (about 4x the import).
Python checks each cache against its source's mtime and size, so an edited module is compiled afresh, never stale.
"""

import compileall
import hashlib
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_HERE = Path(__file__).parent
# The core's sources (_core.c includes the headers): their fingerprint, as devtensor/structured/core.py computes it.
_SOURCES = sorted((_HERE / "devtensor").glob("_core*.[ch]"))
_FINGERPRINT = hashlib.sha256(b"".join(p.read_bytes() for p in _SOURCES)).hexdigest()[:16]



class _BuildExt(build_ext):
    """build_ext, then (building in place: an editable install) the package's bytecode caches."""

    def run(self) -> None:
        super().run()
        if self.inplace or getattr(self, "editable_mode", False):
            # (best effort: a tree it may not write only costs the import its compile, as before)
            compileall.compile_dir(_HERE / "devtensor", quiet=1, workers=1)


setup(
    cmdclass={"build_ext": _BuildExt},
    ext_modules=[
        Extension(
            "devtensor._core",
            ["devtensor/_core.c"],
            depends=[str(p.relative_to(_HERE)) for p in _SOURCES],
            define_macros=[("DEVTENSOR_CORE_FINGERPRINT", f'"{_FINGERPRINT}"')],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
