"""A first end-to-end check: one op, three variants, against NumPy."""

from __future__ import annotations

import numpy as np

import devtensor as dt


def test_add_three_variants_agree_with_numpy() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.linspace(0, 1, 3, dtype=np.float32)
    expected = np.add(a, b)
    ta, tb = dt.from_numpy(a.copy()), dt.from_numpy(b.copy())
    np.testing.assert_array_equal(dt.add(ta, tb).numpy(), expected)
    out = dt.empty(2, 3, dtype=dt.float32)
    assert dt.add(ta, tb, out=out) is out
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out.version == 1
    assert ta.add_(tb) is ta
    np.testing.assert_array_equal(ta.numpy(), expected)
    assert ta.version == 1


def test_codegen_is_fresh() -> None:
    from devtensor.codegen import main

    assert main(["--check"]) == 0, "generated files are stale: run `python -m devtensor.codegen`"
