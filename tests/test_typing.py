"""The typing tests: files in tests/typing/ that must type-check (pass_*.py), and files in which each line marked
``# E: code`` must fail with that mypy error code and no other line may fail (fail_*.py). One mypy run (with the
project's mypy.ini, so ``--strict``) checks them all; each file is one test."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[1]
TYPING = ROOT / "tests" / "typing"
FILES = sorted(TYPING.glob("pass_*.py")) + sorted(TYPING.glob("fail_*.py"))
_ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<message>.*?)  \[(?P<code>[a-z-]+)\]$")
# ``# E: code`` marks a line mypy must reject with that code; `` !pyright`` after it: pyright cannot (a plugin check).
_EXPECT = re.compile(r"#\s*E:\s*(?P<code>[a-z-]+)(?:\s+!pyright)?\s*$")


@pytest.fixture(scope="module")
def mypy_errors() -> dict[str, dict[int, list[tuple[str, str]]]]:
    """path name -> line -> [(code, message)] for every error mypy reports on the typing files."""
    stdout, stderr, _ = mypy_api.run(
        ["--config-file", str(ROOT / "mypy.ini"), "--no-error-summary", "--show-error-codes", *map(str, FILES)]
    )
    assert not stderr.strip(), stderr
    found: dict[str, dict[int, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for line in stdout.splitlines():
        match = _ERROR.match(line.strip())
        if match:
            found[Path(match["path"]).name][int(match["line"])].append((match["code"], match["message"]))
    return found


def _expected(path: Path) -> dict[int, str]:
    expected: dict[int, str] = {}
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        match = _EXPECT.search(text)
        if match:
            expected[number] = match["code"]
    return expected


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_typing_file(path: Path, mypy_errors: dict[str, dict[int, list[tuple[str, str]]]]) -> None:
    errors = mypy_errors.get(path.name, {})
    expected = _expected(path)
    if path.name.startswith("pass_"):
        assert not expected, "a pass_ file must not mark expected errors"
    problems: list[str] = []
    for line, code in expected.items():
        codes = [c for c, _ in errors.get(line, [])]
        if code not in codes:
            problems.append(f"line {line}: expected a [{code}] error, mypy gave {codes or 'none'}")
    for line, found in errors.items():
        for code, message in found:
            if expected.get(line) != code:
                problems.append(f"line {line}: unexpected [{code}] {message}")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def pyright_errors() -> dict[str, dict[int, list[str]]]:
    """path name -> line -> [message] for every error pyright strict (basedpyright, else pyright; the project's
    ``[tool.pyright]`` settings) reports on the typing files; the tests using it are skipped without pyright."""
    exe = shutil.which("basedpyright") or shutil.which("pyright")
    if exe is None:
        pytest.skip("pyright is not installed (pip install basedpyright: its Node.js comes in the wheel)")
    done = subprocess.run(
        [exe, "--outputjson", *map(str, FILES)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    found: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for diag in json.loads(done.stdout)["generalDiagnostics"]:
        if diag["severity"] == "error":
            found[Path(diag["file"]).name][diag["range"]["start"]["line"] + 1].append(diag["message"])
    return found


def _pyright_expected(path: Path) -> set[int]:
    """The marked lines pyright must reject too (not marked ``!pyright``)."""
    return {
        n
        for n, text in enumerate(path.read_text().splitlines(), start=1)
        if _EXPECT.search(text) and ("!pyright" not in text)
    }


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_typing_file_under_pyright(path: Path, pyright_errors: dict[str, dict[int, list[str]]]) -> None:
    """The same files under pyright strict, no plugin: pass_ files clean, each marked line of a fail_ file an error
    unless marked ``!pyright`` (a check only the mypy plugin makes), no other line an error."""
    errors = pyright_errors.get(path.name, {})
    marked = set(_expected(path))
    wanted = _pyright_expected(path)
    problems = [f"line {n}: pyright accepts it" for n in sorted(wanted - set(errors))]
    problems += [f"line {n}: unexpected: {errors[n]}" for n in sorted(set(errors) - marked)]
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_every_fail_file_marks_errors() -> None:
    for path in TYPING.glob("fail_*.py"):
        assert _expected(path), f"{path.name} marks no expected error"


# --- A user's package, outside the repository, against devtensor installed as the README says ---------------------

PYRIGHT = shutil.which("basedpyright") or shutil.which("pyright")

_USER_OPS = '''\
import numpy as np

from devtensor import library
from devtensor.structured import TensorSpec
from devtensor.tensor import TensorMeta
from devtensor.typed import ConstOut, CPUTensor
from mypkg import softplus_kernels


@library.custom_op("fused_softplus", out_may_be_input=True)
def softplus_op(self: TensorMeta, beta: float = 1.0, threshold: float = 20.0) -> TensorSpec:
    """The meta function."""
    return self.shape, self.dtype


@softplus_kernels.fused_softplus.cpu
def _(self: CPUTensor, beta: float, threshold: float, *, out: ConstOut[CPUTensor]) -> None:
    x = self.array * beta
    out.array[...] = np.where(x > threshold, self.array, np.logaddexp(0, x) / beta)
'''

_USER_CUDA = """\
import cupy

from devtensor.typed import CUDATensor


def data(t: CUDATensor) -> cupy.ndarray:
    return t.array
"""


@pytest.fixture(scope="module")
def user_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtual environment where devtensor is installed as the README says (``pip install -e``,
    the default editable mode; its dependencies come from this environment's site-packages)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return python


def _run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run([str(python), *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def _pyright(python: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PYRIGHT is not None
    return subprocess.run(
        [PYRIGHT, "--pythonpath", str(python), "mypkg"], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_author_path_outside_the_repository(user_python: Path, tmp_path: Path) -> None:
    """README's author path: install, define an op, generate its declarations, type-check (mypy --strict with the
    plugin, pyright strict when installed) with no extra flag, change the op's signature, regenerate (the stale impl
    does not stop the generator), and the type checkers then point at the impl."""
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ops.py").write_text(_USER_OPS)
    (package / "cuda_part.py").write_text(_USER_CUDA)
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\nplugins = devtensor_mypy\n")
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict", "reportMissingModuleSource": false}')
    codegen = ("-m", "devtensor.codegen", "--package", "mypkg.ops", "--out", "mypkg/softplus_kernels.py")

    done = _run(user_python, tmp_path, *codegen)
    assert done.returncode == 0, done.stderr
    done = _run(user_python, tmp_path, "-m", "mypy", "mypkg")
    assert done.returncode == 0, done.stdout + done.stderr
    if PYRIGHT is not None:
        done = _pyright(user_python, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    done = _run(
        user_python,
        tmp_path,
        "-c",
        "import devtensor as dt, mypkg.ops as m; print(m.softplus_op.functional(dt.ones(2)))",
    )
    assert done.returncode == 0, done.stderr

    # A new parameter: --check says the file is stale, the generator still runs, the checkers flag the old impl.
    ops = package / "ops.py"
    ops.write_text(ops.read_text().replace("threshold: float = 20.0)", "threshold: float = 20.0, scale: float = 1.0)"))
    done = _run(user_python, tmp_path, *codegen, "--check")
    assert done.returncode == 1 and "stale: mypkg/softplus_kernels.py" in done.stderr, done.stderr
    done = _run(user_python, tmp_path, *codegen)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "fused_softplus: impl '_' has parameters" in done.stderr
    done = _run(user_python, tmp_path, "-m", "mypy", "mypkg")
    assert done.returncode == 1 and "mypkg/ops.py:16: error:" in done.stdout, done.stdout
    if PYRIGHT is not None:
        done = _pyright(user_python, tmp_path)
        assert done.returncode == 1 and "ops.py:16" in done.stdout, done.stdout

    # The impl fixed: everything passes again.
    ops.write_text(ops.read_text().replace("threshold: float, *,", "threshold: float, scale: float, *,"))
    done = _run(user_python, tmp_path, *codegen, "--check")
    assert done.returncode == 0, done.stderr
    done = _run(user_python, tmp_path, "-m", "mypy", "mypkg")
    assert done.returncode == 0, done.stdout
    if PYRIGHT is not None:
        done = _pyright(user_python, tmp_path)
        assert done.returncode == 0, done.stdout

    # A module that registers through op.impl without importing the generated module, checked alone (first in
    # mypy's order, nothing cached for it): still checked against the generated declarations, named plainly.
    (package / "aaa_impls.py").write_text(
        "from devtensor.typed import ConstOut, CPUTensor\n"
        "from mypkg.ops import softplus_op\n"
        "@softplus_op.impl('cpu')\n"
        "def _(self: CPUTensor, beta: float, *, out: ConstOut[CPUTensor]) -> None: ...\n"
    )
    done = _run(user_python, tmp_path, "-m", "mypy", "mypkg/aaa_impls.py")
    assert "aaa_impls.py:3: error: impl of 'fused_softplus' (cpu) has parameters (self, beta, *, out), expected " in (
        done.stdout
    ), done.stdout
    assert "Never" not in done.stdout
