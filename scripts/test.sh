#!/usr/bin/env bash
# Installs what is missing, builds iogate, and runs every test (unit, integration, deploy, e2e,
# fuzz, container, cross) through ctest, which also builds the pinned upstream tools (tests
# tools.MODULE, into the cache of tests/upstream/build.sh) before the tests that run them.
# Arguments go to ctest (-L unit, -R ...): the quick loop. Each phase prints its time as it ends:
#   test.sh: <phase> took N s (N s in all)
set -euo pipefail
cd "$(dirname "$0")/.."

phase_start=$SECONDS
phase_done() {
  echo "test.sh: $1 took $((SECONDS - phase_start)) s ($SECONDS s in all)"
  phase_start=$SECONDS
}

# A full run (no ctest arguments) starts the control plane's tools (kube, etcd, helm: the one long
# build, some 13 minutes cold on 2 cores) at once, at nice 10: the module downloads overlap the
# package installs, and the compile takes what the C++ build leaves. ctest's tools.MODULE tests
# then wait for it on the module's lock, or find the build done; a failure here is theirs to
# report, so this build's own output goes only to its log. A warm cache makes it a no-op.
tools_pid=""
if (($# == 0)); then
  tools_log=$(mktemp "${TMPDIR:-/tmp}/iogate-tools-build.XXXXXX")
  # A process group of its own (set -m), to renice and to stop it, but this session: a new session
  # (setsid) gets a scheduler autogroup of its own, which takes half the CPU whatever its nice.
  set -m
  nice -n 10 bash tests/upstream/build.sh etcd helm kube-apiserver </dev/null >"$tools_log" 2>&1 &
  tools_pid=$!
  set +m
  trap '[[ -z $tools_pid ]] || kill -- -"$tools_pid" 2>/dev/null || true; rm -f "$tools_log"' EXIT
fi

bash scripts/install-deps.sh
phase_done "install-deps"
bash scripts/build.sh
phase_done "build (iogate and the unit tests)"
# The C++ build is done: the tools' build goes on at full priority (renice to a lower value
# needs root; CI is root).
if [[ -n $tools_pid ]]; then renice -n 0 -g "$tools_pid" >/dev/null 2>&1 || true; fi

cd "${BUILD_DIR:-build}"
# What runs beside what is set by resource locks, fixtures and nice levels in tests/CMakeLists.txt,
# not by -j: one full-speed build at a time (the tools, the image), integration tests one at a
# time on the disk, control planes one at a time on the CPU, and the cross, fuzz and SeaweedFS
# builds in the background (tests/lib/background.sh) in what is left. -j only has to leave room
# for all of them at once.
status=0
ctest --output-on-failure -j"$(($(nproc) * 3))" "$@" || status=$?
phase_done "ctest"
exit $status
