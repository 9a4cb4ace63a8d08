"""examples/sklearn_array_api.py: scikit-learn estimators fitted on devtensor tensors through the Array API agree
with the same fitted on NumPy arrays. Run in a subprocess: SCIPY_ARRAY_API=1 must be set before SciPy or
scikit-learn is first imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("device", ["cpu"])
def test_estimators_agree_on_tensors_and_arrays(device: str) -> None:
    pytest.importorskip("sklearn")
    env = {**os.environ, "SCIPY_ARRAY_API": "1", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "sklearn_array_api.py"), "--rows", "300", "--device", device],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    for name in ("StandardScaler", "PCA", "Ridge", "LDA"):
        assert name in run.stdout
    assert "results agree" in run.stdout
