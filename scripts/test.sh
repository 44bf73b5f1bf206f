#!/usr/bin/env bash
# Installs what is missing, builds iogate and the pinned upstream Kubernetes tools, and runs every
# test (unit, integration, deploy, e2e, fuzz) through ctest. Arguments go to ctest (-L unit, -R ...).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
bash scripts/install-deps.sh
mkdir -p "$BUILD_DIR"
# The image (debootstrap of its base, the build stage's packages, its own compile) builds beside
# the host build and the upstream tools rather than first in ctest's one-at-a-time lane: its
# downloads overlap their compiles, and ctest's container.build then finds every layer cached
# (about 5 of a cold run's 60 minutes). container.build still runs the build, checks the image and
# reports a failure; this one's log is $BUILD_DIR/image-early.log. Same tag as the tests'
# (tests/CMakeLists.txt's IOGATE_TEST_IMAGE).
image_pid=""
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  # A session of its own, so that a failed step stops the whole build, docker client included.
  setsid bash scripts/build-image.sh --tag iogate:test >"$BUILD_DIR/image-early.log" 2>&1 &
  image_pid=$!
  trap '[[ -z "$image_pid" ]] || kill -- "-$image_pid" 2>/dev/null || true' EXIT
fi
bash scripts/build.sh
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and helm from the pins in
# tests/upstream/versions.env: built once into the cache (tens of minutes on 2 cores), reused after.
bash tests/upstream/build.sh
if [[ -n "$image_pid" ]]; then
  wait "$image_pid" || echo "test.sh: the early image build failed ($BUILD_DIR/image-early.log); container.build reports why" >&2
  image_pid=""
fi
cd "$BUILD_DIR"
# Integration tests hold the "disk" resource lock and run one at a time; unit tests, the fuzz
# targets (CPU-bound, minutes of clang builds) and the e2e tests (each with its own cluster) run
# beside them.
ctest --output-on-failure -j"$(nproc)" "$@"
