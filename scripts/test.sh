#!/usr/bin/env bash
# Installs what is missing, builds iogate and the pinned upstream tools, and runs every
# test (unit, integration, deploy, e2e, fuzz) through ctest. Arguments go to ctest (-L unit, -R ...).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, helm, kwok and SeaweedFS's
# weed from the pins in tests/upstream/versions.env: built once into the cache (tens of minutes on
# 2 cores), reused after.
bash tests/upstream/build.sh
cd "${BUILD_DIR:-build}"
# Integration tests hold the "disk" resource lock and run one at a time; unit tests, the fuzz
# targets (CPU-bound, minutes of clang builds) and the e2e tests (each with its own cluster) run
# beside them.
ctest --output-on-failure -j"$(nproc)" "$@"
