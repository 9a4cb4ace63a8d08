"""Build of devtensor's compiled core (``devtensor/_core.c`` and the ``_core_*.h`` it includes); everything else is in
pyproject.toml.

The extension is optional: where no C compiler is present the build goes on without it and the Python fronts
serve every call (devtensor/structured/core.py). The source's fingerprint is compiled in, so an extension left
over from another source is never used.
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

_HERE = Path(__file__).parent
# The core's sources (_core.c includes the headers): their fingerprint, as devtensor/structured/core.py computes it.
_SOURCES = sorted((_HERE / "devtensor").glob("_core*.[ch]"))
_FINGERPRINT = hashlib.sha256(b"".join(p.read_bytes() for p in _SOURCES)).hexdigest()[:16]

setup(
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
