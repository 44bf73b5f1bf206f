#!/usr/bin/env bash
# Configures and builds iogate (static release binary plus the tests) into build/.
# Arguments, if any, are the targets to build (scripts/image-rootfs.sh builds only `iogate`).
#
# ARCH=arm64 cross-builds for aarch64 (GH200, GB200 nodes) with cmake/aarch64-linux-gnu.cmake,
# from Debian's cross compiler and arm64 packages (scripts/install-deps.sh), into build-arm64/;
# its test binaries run under qemu-user (ctest build.arm64). BUILD_DIR overrides the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build${ARCH:+-$ARCH}}
toolchain_file=""
case "${ARCH:-}" in
  "") ;;
  arm64)
    command -v aarch64-linux-gnu-g++ >/dev/null ||
      { echo "build.sh: ARCH=arm64 needs aarch64-linux-gnu-g++: bash scripts/install-deps.sh" >&2; exit 1; }
    toolchain_file="$PWD/cmake/aarch64-linux-gnu.cmake" ;;
  *) echo "build.sh: ARCH=$ARCH: only arm64 (a cross build), or unset for the host's" >&2; exit 2 ;;
esac
# CMake keeps a build folder's compiler from its first configure: one folder, one architecture.
cached=$(sed -n 's/^CMAKE_TOOLCHAIN_FILE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
if [[ -f "$BUILD_DIR/CMakeCache.txt" && "$cached" != "$toolchain_file" ]]; then
  echo "build.sh: $BUILD_DIR was configured for another architecture (toolchain \"$cached\"): use another BUILD_DIR" >&2
  exit 2
fi
toolchain=()
if [[ -n "$toolchain_file" ]]; then toolchain=(-DCMAKE_TOOLCHAIN_FILE="$toolchain_file"); fi
# ccache, where installed, makes rebuilds in several checkouts (worktrees) cheap; CI does without.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# IOGATE_TESTS=OFF (the image's build stage) configures the binary alone, without tests/.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DIOGATE_TESTS="${IOGATE_TESTS:-ON}" \
  "${toolchain[@]}" "${launcher[@]}" >/dev/null
targets=()
if (($# > 0)); then targets=(--target "$@"); fi
cmake --build "$BUILD_DIR" -j"$(nproc)" "${targets[@]}"
