"""Import cost of devtensor beside NumPy's own, in fresh processes.

Prints the best time (of ``--repeat`` fresh interpreter runs) of ``import numpy`` and of ``import numpy, devtensor``,
devtensor's extra time, and that extra over NumPy's own time, in three settings:

* ``with caches``: the checkout as it is, bytecode caches allowed (written by a first import if missing);
* ``as installed, no writes``: the checkout as the README's ``pip install -e .`` left it, with
  ``PYTHONDONTWRITEBYTECODE=1`` (containers, this project's machines): Python writes no cache, so devtensor's come
  from the install (setup.py writes them, as pip does for a wheel);
* ``without caches``: a copy of the package with no ``__pycache__`` that may not write one, so the extra time
  includes compiling all of devtensor's source (NumPy keeps its caches).

Run: ``python benchmarks/import_cost.py [--repeat 7]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "devtensor"


def _seconds(code: str, env: dict[str, str]) -> float:
    """Wall seconds ``code`` takes in a fresh interpreter (timed inside it, so start-up is not counted)."""
    script = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
    # (run outside any checkout: ``-c`` puts the working directory first on sys.path)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True, cwd=tempfile.gettempdir()
    )
    return float(done.stdout.split()[-1])


def measure(repeat: int, setting: str) -> tuple[float, float]:
    """Best seconds of ``import numpy`` and of ``import numpy, devtensor`` over ``repeat`` interleaved runs, in
    ``setting`` (``"with"``, ``"installed"`` or ``"without"``: see the module's docstring)."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        if setting == "without":
            shutil.copytree(PACKAGE, Path(tmp) / "devtensor", ignore=shutil.ignore_patterns("__pycache__"))
            env["PYTHONPATH"] = tmp
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env["PYTHONPATH"] = str(PACKAGE.parent)
            if setting == "with":
                env.pop("PYTHONDONTWRITEBYTECODE", None)  # (some environments set it)
                _seconds("import numpy, devtensor", env)  # writes the bytecode caches
            else:
                env["PYTHONDONTWRITEBYTECODE"] = "1"
        numpy_alone = both = float("inf")
        for _ in range(repeat):
            numpy_alone = min(numpy_alone, _seconds("import numpy", env))
            both = min(both, _seconds("import numpy, devtensor", env))
    return numpy_alone, both


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=7, help="fresh processes per measurement (best is kept)")
    args = parser.parse_args(argv)
    print(f"{'bytecode caches':>24} | {'numpy (ms)':>10} | {'numpy+devtensor':>15} | {'extra':>7} | extra/numpy")
    for setting, label in (("with", "with"), ("installed", "as installed, no writes"), ("without", "without")):
        numpy_alone, both = measure(args.repeat, setting)
        extra = both - numpy_alone
        print(
            f"{label:>24} | {numpy_alone * 1e3:10.1f} | {both * 1e3:15.1f} | "
            f"{extra * 1e3:7.1f} | {extra / numpy_alone:.2f}"
        )


if __name__ == "__main__":
    main()
