"""Import cost of devtensor beside NumPy's own, in fresh processes.

Prints, with and without devtensor's bytecode caches, the best time (of ``--repeat`` fresh interpreter runs) of
``import numpy`` and of ``import numpy, devtensor``, devtensor's extra time, and that extra over NumPy's own time
(with caches about 1.5 on the 2-core development machine). "Without caches" imports a copy of the package that has no
``__pycache__`` and may not write one (``PYTHONDONTWRITEBYTECODE=1``), while NumPy keeps its caches, so the extra
time includes compiling devtensor's source.

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


def measure(repeat: int, caches: bool) -> tuple[float, float]:
    """Best seconds of ``import numpy`` and of ``import numpy, devtensor`` over ``repeat`` interleaved runs."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        if caches:
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # (some environments set it)
            env["PYTHONPATH"] = str(PACKAGE.parent)
            _seconds("import numpy, devtensor", env)  # writes the bytecode caches
        else:
            shutil.copytree(PACKAGE, Path(tmp) / "devtensor", ignore=shutil.ignore_patterns("__pycache__"))
            env["PYTHONPATH"] = tmp
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
    print(f"{'bytecode caches':>16} | {'numpy (ms)':>10} | {'numpy+devtensor':>15} | {'extra':>7} | extra/numpy")
    for caches in (True, False):
        numpy_alone, both = measure(args.repeat, caches)
        extra = both - numpy_alone
        print(
            f"{'with' if caches else 'without':>16} | {numpy_alone * 1e3:10.1f} | {both * 1e3:15.1f} | "
            f"{extra * 1e3:7.1f} | {extra / numpy_alone:.2f}"
        )


if __name__ == "__main__":
    main()
