"""scikit-learn estimators fitted on devtensor tensors through the Array API standard, beside the same on NumPy.

scikit-learn (with ``array_api_dispatch=True``) and SciPy (with ``SCIPY_ARRAY_API=1``, set before either is
imported) find ``devtensor.array_api`` through ``Tensor.__array_namespace__`` and compute with devtensor's ops, so the
fitted attributes and results are devtensor tensors on the input's device. This script fits StandardScaler, PCA,
Ridge and LinearDiscriminantAnalysis on a synthetic dataset both ways and prints the largest difference of each
result; it exits with status 1 when one exceeds the tolerance.

    python examples/sklearn_array_api.py [--device cuda] [--rows 2000]
"""

from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # (read when SciPy is first imported)

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import sklearn
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

import devtensor as dt


def _numpy(x: Any) -> np.ndarray[Any, Any]:
    return x.cpu().numpy() if isinstance(x, dt.Tensor) else np.asarray(x)


def _cases() -> list[tuple[str, Callable[[Any, Any], Any]]]:
    return [
        ("StandardScaler.fit_transform", lambda X, y: StandardScaler().fit_transform(X)),
        ("PCA(3).fit_transform", lambda X, y: abs(PCA(n_components=3, svd_solver="full").fit_transform(X))),
        ("Ridge.coef_", lambda X, y: Ridge(alpha=1.0, solver="svd").fit(X, y).coef_),
        ("LDA.predict_proba", lambda X, y: LinearDiscriminantAnalysis().fit(X, y > 0).predict_proba(X)),
    ]


def main(argv: list[str] | None = None) -> int:
    """Fit each estimator on NumPy arrays and on devtensor tensors on ``--device``; print the differences."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="the tensors' device (cpu, cuda, cuda:1)")
    parser.add_argument("--rows", type=int, default=2000, help="samples in the synthetic dataset")
    args = parser.parse_args(argv)
    # devtensor reports floating-point conditions as NumPy does (a RuntimeWarning for 0/0); scikit-learn silences
    # them with np.errstate only for NumPy arrays, so its incremental variance's 0/0 would show here.
    warnings.filterwarnings("ignore", "invalid value encountered in divide", RuntimeWarning)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.rows, 8))
    y = X @ rng.standard_normal(8) + 0.1 * rng.standard_normal(args.rows)
    Xt, yt = dt.asarray(X, device=args.device), dt.asarray(y, device=args.device)
    worst = 0.0
    print(f"scikit-learn {sklearn.__version__}, devtensor tensors on {Xt.device}, {args.rows} x 8 float64")
    for name, fit in _cases():
        start = time.perf_counter()
        expected = _numpy(fit(X, y))
        numpy_s = time.perf_counter() - start
        with sklearn.config_context(array_api_dispatch=True):
            start = time.perf_counter()
            result = fit(Xt, yt)
            devtensor_s = time.perf_counter() - start
        if not isinstance(result, dt.Tensor):
            print(f"{name:32s} returned {type(result).__name__}, not a devtensor tensor")
            return 1
        diff = float(np.max(np.abs(_numpy(result) - expected)))
        worst = max(worst, diff)
        print(
            f"{name:32s} max |diff| {diff:.2e}   numpy {numpy_s * 1e3:7.1f} ms   devtensor {devtensor_s * 1e3:7.1f} ms"
        )
    ok = worst <= 1e-8
    print("results agree" if ok else f"results differ: {worst:.2e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
