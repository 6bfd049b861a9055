#!/usr/bin/env bash
# Starts a single-node tiered-mq broker on embedded defaults (no ZooKeeper, no Docker).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh run
exec "${PYTHON:-python3}" -m tiered_mq dev "$@"
