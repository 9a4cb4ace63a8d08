#!/usr/bin/env bash
# The project's test command (README): lint, type-check, then the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m ruff check devtensor tests examples benchmarks
python -m ruff format --check devtensor tests examples benchmarks
python -m mypy
python -m pytest -q
# The pure-Python fronts (no compiled core: as on a machine without a C compiler), through every op's samples and
# the rules' own tests; the compiled-against-Python comparison is tests/test_compiled_core.py above.
DEVTENSOR_PURE_PYTHON=1 python -m pytest -q tests/test_op_generic.py tests/test_compiled_core.py \
  tests/test_fronts_source.py tests/test_direct_path.py tests/test_out_is_input.py tests/test_fp_conditions.py
