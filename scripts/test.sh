#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit and integration) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd "${BUILD_DIR:-build}"
# Integration tests hold the "disk" resource lock and run one at a time; unit tests and the fuzz
# targets (CPU-bound, minutes of clang builds) run beside them.
ctest --output-on-failure -j"$(nproc)" "$@"
