#!/usr/bin/env bash
# Installs what is missing, builds, and runs a short 4k randread probe of the current directory.
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --build-only
bash scripts/build.sh >/dev/null
exec "${BUILD_DIR:-build}/iogate" probe "$here" --size 256m --runtime 5s "$@"
