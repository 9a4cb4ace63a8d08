#!/usr/bin/env bash
# The project's test command (README): lint, type-check, then the test suite on every core (pytest-xdist, from the
# dev extra; its tests are independent of the process they run in). Extra arguments go to pytest
# (`bash scripts/test.sh -n 0` runs it in one process, `-x` stops at the first failure).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== ruff (lint and format)"
python -m ruff check devtensor devtensor_mypy tests examples benchmarks
python -m ruff format --check devtensor devtensor_mypy tests examples benchmarks
echo "== mypy --strict"
python -m mypy
echo "== pytest on every core (the 10 slowest tests are listed at the end)"
python -m pytest -q -n auto --durations=10 "$@"
echo "== pytest, the pure-Python fronts (DEVTENSOR_PURE_PYTHON=1: no compiled core, as without a C compiler)"
# Every op's samples and the rules' own tests; the compiled-against-Python comparison is tests/test_compiled_core.py.
DEVTENSOR_PURE_PYTHON=1 python -m pytest -q -n auto tests/test_op_generic.py tests/test_compiled_core.py \
  tests/test_fronts_source.py tests/test_direct_path.py tests/test_out_is_input.py tests/test_fp_conditions.py
