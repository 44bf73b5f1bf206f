#!/usr/bin/env bash
# Configures and builds iogate (static release binary plus the tests) into build/.
# Arguments, if any, are the targets to build (scripts/image-rootfs.sh builds only `iogate`).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# ccache, where installed, makes rebuilds in several checkouts (worktrees) cheap; CI does without.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# IOGATE_TESTS=OFF (the image's build stage) configures the binary alone, without tests/.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DIOGATE_TESTS="${IOGATE_TESTS:-ON}" "${launcher[@]}" >/dev/null
targets=()
if (($# > 0)); then targets=(--target "$@"); fi
cmake --build "$BUILD_DIR" -j"$(nproc)" "${targets[@]}"
