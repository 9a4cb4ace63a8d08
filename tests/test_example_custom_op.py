"""The custom-op example (examples/custom_op/): its script runs and checks itself against NumPy, its CUDA impl
works (through the CuPy stand-in), and it runs as a script from the repository root."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import devtensor as dt

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_DIR = ROOT / "examples" / "custom_op"


@pytest.fixture(scope="module")
def run_module() -> ModuleType:
    """``examples/custom_op/run.py`` imported as a module (its siblings importable as when run as a script)."""
    if str(EXAMPLE_DIR) not in sys.path:
        sys.path.insert(0, str(EXAMPLE_DIR))
    spec = importlib.util.spec_from_file_location("custom_op_example_run", EXAMPLE_DIR / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_main_matches_numpy(run_module: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_module.main(["--n", "64"]) == 0
    printed = capsys.readouterr().out
    assert "all results match NumPy" in printed
    assert "[fallback]" in printed and "MISMATCH" not in printed


@pytest.mark.usefixtures("fake_cupy")
def test_example_cuda_impl(run_module: ModuleType) -> None:
    fused_softplus = sys.modules["fused_softplus"]  # imported by run.py (typed loosely: not on mypy's path here)
    x_np = np.linspace(-30, 30, 41, dtype=np.float32)
    x = dt.from_numpy(x_np.copy()).to("cuda")
    y = fused_softplus.softplus(x, 2.0, 5.0)
    assert y.device.type == "cuda"
    np.testing.assert_allclose(y.cpu().numpy(), fused_softplus.softplus_reference(x_np, 2.0, 5.0), rtol=1e-5, atol=1e-6)
    fused_softplus.softplus_(x)
    np.testing.assert_allclose(x.cpu().numpy(), fused_softplus.softplus_reference(x_np), rtol=1e-5, atol=1e-6)
    report = run_module.library.check(fused_softplus.softplus_op, [((x,), {})], keys=["cuda", "cpu"])
    assert report.ok, str(report)


@pytest.mark.slow
def test_example_runs_as_a_script() -> None:
    done = subprocess.run(
        [sys.executable, "examples/custom_op/run.py", "--n", "64"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all results match NumPy" in done.stdout


def test_generated_kernel_signatures_are_fresh() -> None:
    """The documented command regenerates examples/custom_op/softplus_kernels.py; the checked-in file is current."""
    from devtensor.codegen import main

    if str(EXAMPLE_DIR) not in sys.path:
        sys.path.insert(0, str(EXAMPLE_DIR))
    out = EXAMPLE_DIR / "softplus_kernels.py"
    assert main(["--package", "fused_softplus", "--out", str(out), "--check"]) == 0, (
        "stale: run `PYTHONPATH=examples/custom_op python -m devtensor.codegen --package fused_softplus "
        "--out examples/custom_op/softplus_kernels.py`"
    )


def test_mypy_checks_user_impls_against_the_generated_signatures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's impl registered through their generated decorators is type-checked like a built-in one."""
    mypy_api = pytest.importorskip("mypy.api")
    source = tmp_path / "user_impls.py"
    source.write_text(
        "from devtensor.tensor import Tensor\n"
        "from devtensor.typed import ConstOut, CPUTensor, CUDATensor\n"
        "import softplus_kernels\n"
        "@softplus_kernels.fused_softplus.cpu\n"
        "def good(self: CPUTensor, beta: float, threshold: float, *, out: ConstOut[CPUTensor]) -> None: ...\n"
        "@softplus_kernels.fused_softplus.cpu\n"
        "def generic(self: Tensor, beta: float, threshold: float, *, out: ConstOut[CPUTensor]) -> None: ...\n"
        "@softplus_kernels.fused_softplus.cuda\n"
        "def no_threshold(self: CUDATensor, beta: float, *, out: ConstOut[CUDATensor]) -> None: ...\n"
    )
    monkeypatch.setenv("MYPYPATH", f"{EXAMPLE_DIR}{':'}{ROOT / 'stubs'}")
    stdout, _, _ = mypy_api.run(["--config-file", str(ROOT / "mypy.ini"), "--no-error-summary", str(source)])
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert any(":6: error:" in e and "[type-var]" in e for e in errors), stdout
    assert any(":8: error:" in e and "[kernel-signature]" in e for e in errors), stdout
    assert not any(":4: error:" in e or ":5: error:" in e for e in errors), stdout
