"""Build of devtensor's compiled core (``devtensor/_core.c``); everything else is in pyproject.toml.

The extension is optional: where no C compiler is present the build goes on without it and the Python fronts
serve every call (devtensor/structured/core.py). The source's fingerprint is compiled in, so an extension left
over from another source is never used.
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

_SOURCE = Path(__file__).parent / "devtensor" / "_core.c"
_FINGERPRINT = hashlib.sha256(_SOURCE.read_bytes()).hexdigest()[:16]

setup(
    ext_modules=[
        Extension(
            "devtensor._core",
            [str(_SOURCE.relative_to(Path(__file__).parent))],
            define_macros=[("DEVTENSOR_CORE_FINGERPRINT", f'"{_FINGERPRINT}"')],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
