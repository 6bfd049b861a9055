#!/usr/bin/env bash
# Runs every check CI runs: ruff (lint + format), mypy strict, then the whole pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
PY=${PYTHON:-python3}
$PY -m ruff check tiered_mq tests benchmarks spark
$PY -m ruff format --check tiered_mq tests benchmarks spark
$PY -m mypy
$PY -m pytest "$@"
