#!/usr/bin/env bash
# Every unit binary cross-built for arm64 and run under qemu-user: tests/cross/arm64.sh with
# ARM64_UNITS=all. ctest's build.arm64 runs a subset to keep a cold CI run within its budget
# (docs/testing.md, "arm64"); this is the whole of it, by hand or before a release.
#
#   bash bench/arm64_units.sh [BUILD_DIR]    (default build/; the arm64 build goes to BUILD_DIR/arm64)
#
# BUILD_DIR holds the host's build (its iogate is the one --version is compared with):
# bash scripts/build.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
[[ -x "$build/iogate" ]] || { echo "arm64_units: no $build/iogate: bash scripts/build.sh" >&2; exit 2; }
IOGATE="$build/iogate" ARM64_BUILD_DIR="$build/arm64" ARM64_UNITS=all exec bash "$root/tests/cross/arm64.sh"
