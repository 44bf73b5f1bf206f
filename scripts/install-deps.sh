#!/usr/bin/env bash
# Installs everything iogate needs to build, test and benchmark, from Debian packages only.
# Idempotent: packages already present are skipped, so it is cheap to run before every build.
# Used by README.md, .ci/run and the Dockerfile.
set -euo pipefail

build_packages=(
  g++ cmake make pkg-config file
  libaio-dev libcpp-httplib-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libboost-program-options-dev doctest-dev libssl-dev
)
# Real peers and tools the integration tests and benchmarks drive.
test_packages=(fio jq util-linux e2fsprogs coreutils procps clang)

want=("${build_packages[@]}")
if [[ "${1:-}" != "--build-only" ]]; then
  want+=("${test_packages[@]}")
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
