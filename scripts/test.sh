#!/usr/bin/env bash
# The project's test command (README): lint, type-check, then the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m ruff check devtensor devtensor_mypy.py tests examples benchmarks
python -m ruff format --check devtensor devtensor_mypy.py tests examples benchmarks
python -m mypy
python -m pytest -q
