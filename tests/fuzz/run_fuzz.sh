#!/usr/bin/env bash
# Builds the libFuzzer target for the mountinfo parser with clang++ and runs it for a short,
# bounded time on a copy of the seed corpus. ctest runs this as fuzz.mountinfo.
#
# Environment:
#   IOGATE_SOURCE_DIR  repository root (ctest sets it; default: two levels above this script)
#   BUILD_DIR          if set, the fuzzer binary goes to $BUILD_DIR/fuzz, else into a temp dir
#   FUZZ_SECONDS       fuzzing time, default 20
#   FUZZ_CXX           compiler, default the first of clang++, clang++-19 ... clang++-14 found
#   FUZZ_ARTIFACT_DIR  where a crashing input is kept (default $BUILD_DIR/fuzz/artifacts, or a
#                      new /tmp/iogate-fuzz-artifacts.* dir); never the source tree
#
# Exit: 0 no finding, 1 build failure or finding, 77 (after "SKIP: ...") no usable clang/libFuzzer.
# All work happens in a temp dir that is removed on exit; nothing is written to the source tree.
set -euo pipefail

SRC_DIR=${IOGATE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SRC_DIR=$(cd "$SRC_DIR" && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
MAX_LEN=4096

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[[ -f "$SRC_DIR/agent/device/mountinfo.cc" ]] || fail "no agent/device/mountinfo.cc under $SRC_DIR (set IOGATE_SOURCE_DIR)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/iogate-fuzz.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT

CXX=${FUZZ_CXX:-}
if [[ -z "$CXX" ]]; then
  for c in clang++ clang++-{19..14}; do
    if command -v "$c" >/dev/null 2>&1; then CXX=$c; break; fi
  done
fi
[[ -n "$CXX" ]] || skip "clang++ not found (install clang)"
command -v "$CXX" >/dev/null 2>&1 || skip "$CXX not found"

SAN_FLAGS=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)

# Probe: can this compiler build and link a libFuzzer binary with these sanitizers at all?
cat >"$TMP/probe.cc" <<'PROBE'
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }
PROBE
if ! "$CXX" "${SAN_FLAGS[@]}" "$TMP/probe.cc" -o "$TMP/probe" >"$TMP/probe.log" 2>&1; then
  skip "$CXX cannot build with -fsanitize=fuzzer,address,undefined: $(head -n 1 "$TMP/probe.log")"
fi

if [[ -n "${BUILD_DIR:-}" ]]; then
  OUT_DIR=$BUILD_DIR/fuzz
else
  OUT_DIR=$TMP/bin
fi
mkdir -p "$OUT_DIR"
FUZZER=$OUT_DIR/mountinfo_fuzz

echo "building $FUZZER with $CXX ($("$CXX" --version | head -n 1))"
"$CXX" -std=c++20 -O1 -g "${SAN_FLAGS[@]}" \
  -I"$SRC_DIR/agent" -DFMT_HEADER_ONLY -DSPDLOG_HEADER_ONLY \
  "$SRC_DIR/tests/fuzz/mountinfo_fuzz.cc" \
  "$SRC_DIR/agent/device/mountinfo.cc" \
  "$SRC_DIR/agent/device/kernel_file.cc" \
  "$SRC_DIR/agent/base/units.cc" \
  -o "$FUZZER" || fail "building the fuzzer failed"

# Run in the temp dir on a copy of the seeds: libFuzzer adds new inputs to the corpus directory and
# writes crash-*/leak-*/timeout-* files to the artifact prefix (and the cwd), both under $TMP.
WORK=$TMP/work
mkdir -p "$WORK/corpus" "$WORK/artifacts"
cp "$SRC_DIR"/tests/fuzz/corpus/mountinfo/* "$WORK/corpus/"
cd "$WORK"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

echo "fuzzing for ${FUZZ_SECONDS}s (max_len $MAX_LEN, $(ls "$WORK/corpus" | wc -l) seeds)"
rc=0
# Exit codes forced to 1: libFuzzer's default for a finding is 77, which ctest would read as SKIP.
"$FUZZER" -max_total_time="$FUZZ_SECONDS" -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 \
  -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
  -artifact_prefix="$WORK/artifacts/" "$WORK/corpus" >"$WORK/fuzz.log" 2>&1 || rc=$?
# The log without libFuzzer's per-input progress lines (#123 NEW ..., REDUCE, pulse).
grep -avE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD)' "$WORK/fuzz.log" | grep -av '# Uses: ' || true

shopt -s nullglob
found=("$WORK"/artifacts/* "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$WORK"/oom-*)
if [[ $rc -eq 0 && ${#found[@]} -eq 0 ]]; then
  echo "ok: no findings in ${FUZZ_SECONDS}s ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$WORK/fuzz.log" | awk '{print $2}') runs)"
  exit 0
fi

echo "FAIL: fuzzer exited $rc" >&2
if [[ ${#found[@]} -gt 0 ]]; then
  KEEP=${FUZZ_ARTIFACT_DIR:-}
  [[ -n "$KEEP" ]] || { [[ -n "${BUILD_DIR:-}" ]] && KEEP=$BUILD_DIR/fuzz/artifacts; }
  [[ -n "$KEEP" ]] || KEEP=$(mktemp -d /tmp/iogate-fuzz-artifacts.XXXXXX)
  mkdir -p "$KEEP"
  for f in "${found[@]}"; do
    cp "$f" "$KEEP/"
    kept=$KEEP/$(basename "$f")
    echo "crashing input: $kept ($(wc -c <"$f") bytes)" >&2
    od -A x -t x1z -v "$f" | head -n 256 >&2
    echo "reproduce: $FUZZER $kept   (rebuild first if $FUZZER was in a temp dir)" >&2
  done
fi
exit 1
