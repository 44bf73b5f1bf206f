#!/usr/bin/env bash
# Builds a libFuzzer target with clang++ and runs it for a short, bounded time on a copy of its
# seed corpus. ctest runs this as fuzz.mountinfo (the mountinfo parser), fuzz.admission (the
# webhook's admission decisions) and fuzz.policy (policy parsing, what every mode reads first).
#
# Usage: run_fuzz.sh [TARGET]   TARGET: mountinfo (default), admission or policy
#
# Environment:
#   IOGATE_SOURCE_DIR  repository root (ctest sets it; default: two levels above this script)
#   BUILD_DIR          if set, the fuzzer binary goes to $BUILD_DIR/fuzz, else into a temp dir
#   FUZZ_SECONDS       fuzzing time, default 20
#   FUZZ_CXX           compiler, default the first of clang++, clang++-19 ... clang++-14 found
#   FUZZ_ARTIFACT_DIR  where a crashing input is kept (default $BUILD_DIR/fuzz/artifacts, or a
#                      new /tmp/iogate-fuzz-artifacts.* dir); never the source tree
#
# Exit: 0 no finding, 1 build failure, finding, or a missing clang/libFuzzer/library (named, with
# the fix: scripts/install-deps.sh installs them all).
# All work happens in a temp dir that is removed on exit; nothing is written to the source tree.
set -euo pipefail

SRC_DIR=${IOGATE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SRC_DIR=$(cd "$SRC_DIR" && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
TARGET=${1:-mountinfo}

# A missing tool or library is a missing prerequisite, not a capability this machine lacks.
missing() { echo "FAIL: $*; bash scripts/install-deps.sh installs it" >&2; exit 1; }
source "$SRC_DIR/tests/lib/check.sh"  # fail

# Per target: its sources (the fuzz driver first), the longest input, libraries to link.
# The sources after the driver go into an archive, so the linker takes only the objects the driver
# reaches: each target lists whole folders where it can (base/ always), and a helper moved between
# files of a listed folder needs no edit here.
LIBS=()
add_folder() {  # FOLDER [EXCLUDED_FILE...]: every .cc of an agent/ folder but the excluded ones
  local folder=$1 f rel
  shift
  for f in "$SRC_DIR/agent/$folder"/*.cc; do
    rel=${f#"$SRC_DIR"/}
    [[ " $* " == *" $rel "* ]] || SOURCES+=("$rel")
  done
}
case "$TARGET" in
  mountinfo)
    SOURCES=(tests/fuzz/mountinfo_fuzz.cc agent/device/mountinfo.cc agent/device/kernel_file.cc)
    add_folder base
    MAX_LEN=4096
    ;;
  admission)
    # The webhook's decisions and what its policy needs: parsing (yaml-cpp), evaluation, and the
    # few probe/, dataset/ and device/ files the policy's types pull in. Not the webhook's HTTPS
    # server and run loop: the fuzzer calls neither. libcrypto: base64's encoder (the patch) is
    # OpenSSL's.
    SOURCES=(tests/fuzz/admission_fuzz.cc)
    add_folder webhook agent/webhook/webhook.cc agent/webhook/webhook_server.cc
    add_folder policy
    add_folder base
    SOURCES+=(agent/kube/pod_spec.cc agent/kube/api_error.cc agent/probe/workload.cc agent/probe/probe_result.cc
              agent/probe/stop_reason.cc agent/probe/latency_histogram.cc agent/dataset/dataset_loader.cc
              agent/probe/adaptive_stop.cc agent/dataset/feed_limit.cc agent/device/device_class.cc)
    LIBS+=(-lcrypto)
    MAX_LEN=16384
    ;;
  policy)
    # parse_policy and what an accepted policy is shown with (policy_render, its table layout in
    # base/); the probe/, dataset/ and device/ files the policy's types pull in, as for admission.
    SOURCES=(tests/fuzz/policy_fuzz.cc)
    add_folder policy
    add_folder base
    SOURCES+=(agent/probe/workload.cc agent/probe/probe_result.cc agent/probe/stop_reason.cc
              agent/probe/latency_histogram.cc agent/dataset/dataset_loader.cc agent/probe/adaptive_stop.cc
              agent/dataset/feed_limit.cc agent/device/device_class.cc)
    MAX_LEN=16384
    ;;
  *)
    echo "usage: $0 [mountinfo|admission|policy]" >&2
    exit 1
    ;;
esac
for f in "${SOURCES[@]}"; do
  [[ -f "$SRC_DIR/$f" ]] || fail "no $f under $SRC_DIR (set IOGATE_SOURCE_DIR)"
done
if [[ "$TARGET" == admission || "$TARGET" == policy ]]; then
  YAML_LIB=""
  for l in /usr/lib/x86_64-linux-gnu/libyaml-cpp.a /usr/lib/aarch64-linux-gnu/libyaml-cpp.a /usr/local/lib/libyaml-cpp.a \
           /usr/lib/libyaml-cpp.a; do
    if [[ -f "$l" ]]; then YAML_LIB=$l; break; fi
  done
  [[ -n "$YAML_LIB" ]] || missing "libyaml-cpp.a not found (install libyaml-cpp-dev)"
  LIBS+=("$YAML_LIB")
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/iogate-fuzz.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT

CXX=${FUZZ_CXX:-}
if [[ -z "$CXX" ]]; then
  for c in clang++ clang++-{19..14}; do
    if command -v "$c" >/dev/null 2>&1; then CXX=$c; break; fi
  done
fi
[[ -n "$CXX" ]] || missing "clang++ not found (install clang)"
command -v "$CXX" >/dev/null 2>&1 || missing "$CXX not found"

SAN_FLAGS=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)

# Probe: can this compiler build and link a libFuzzer binary with these sanitizers at all?
cat >"$TMP/probe.cc" <<'PROBE'
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }
PROBE
if ! "$CXX" "${SAN_FLAGS[@]}" "$TMP/probe.cc" -o "$TMP/probe" >"$TMP/probe.log" 2>&1; then
  missing "$CXX cannot build with -fsanitize=fuzzer,address,undefined: $(head -n 1 "$TMP/probe.log")"
fi

if [[ -n "${BUILD_DIR:-}" ]]; then
  OUT_DIR=$BUILD_DIR/fuzz
else
  OUT_DIR=$TMP/bin
fi
mkdir -p "$OUT_DIR"
FUZZER=$OUT_DIR/${TARGET}_fuzz

# One object per source, two compilers at a time (CI machines are small), through ccache when
# there is one: the admission target has some 30 files, and a rerun should not rebuild them.
# Sources are named by absolute path, so the working directory (ctest's or a shell's) need not be
# part of ccache's key: CCACHE_NOHASHDIR lets both share the cache.
LAUNCH=()
if command -v ccache >/dev/null 2>&1; then LAUNCH=(env CCACHE_NOHASHDIR=1 ccache); fi
OBJ_DIR=$TMP/obj
mkdir -p "$OBJ_DIR"
echo "building $FUZZER with $CXX ($("$CXX" --version | head -n 1)), ${#SOURCES[@]} sources"
compile() {
  local src=$1
  local obj=$OBJ_DIR/$(echo "$src" | tr '/' '_').o
  # The definitions iogate_core has in CMakeLists.txt: fmt and spdlog compiled once, in base/.
  "${LAUNCH[@]}" "$CXX" -std=c++20 -O1 -gline-tables-only "${SAN_FLAGS[@]}" -I"$SRC_DIR/agent" -DSPDLOG_COMPILED_LIB \
    -c "$SRC_DIR/$src" -o "$obj" >"$obj.log" 2>&1 || { cat "$obj.log" >&2; return 1; }
}
pids=()
objs=()
status=0
for src in "${SOURCES[@]}"; do
  if [[ ${#pids[@]} -ge 2 ]]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
  compile "$src" &
  pids+=($!)
  objs+=("$OBJ_DIR/$(echo "$src" | tr '/' '_').o")
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
[[ $status -eq 0 ]] || fail "building the fuzzer failed"
# The driver, then the rest as an archive: only the objects it needs are linked (the policy's
# renderers, say, are not, and neither is what they would pull in).
rm -f "$OBJ_DIR/lib.a"
ar rcs "$OBJ_DIR/lib.a" "${objs[@]:1}" || fail "ar failed"
"$CXX" "${SAN_FLAGS[@]}" "${objs[0]}" "$OBJ_DIR/lib.a" "${LIBS[@]}" -o "$FUZZER" || fail "linking the fuzzer failed"

# Run in the temp dir on a copy of the seeds: libFuzzer adds new inputs to the corpus directory and
# writes crash-*/leak-*/timeout-* files to the artifact prefix (and the cwd), both under $TMP.
WORK=$TMP/work
mkdir -p "$WORK/corpus" "$WORK/artifacts"
cp "$SRC_DIR"/tests/fuzz/corpus/"$TARGET"/* "$WORK/corpus/"
cd "$WORK"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# A target's dictionary, where it has one (tests/fuzz/TARGET.dict).
DICT=()
if [[ -f "$SRC_DIR/tests/fuzz/$TARGET.dict" ]]; then DICT=(-dict="$SRC_DIR/tests/fuzz/$TARGET.dict"); fi
echo "fuzzing for ${FUZZ_SECONDS}s (max_len $MAX_LEN, $(ls "$WORK/corpus" | wc -l) seeds)"
rc=0
# Exit codes forced to 1: libFuzzer's default for a finding is 77, which ctest would read as SKIP.
"$FUZZER" -max_total_time="$FUZZ_SECONDS" -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 "${DICT[@]}" \
  -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
  -artifact_prefix="$WORK/artifacts/" "$WORK/corpus" >"$WORK/fuzz.log" 2>&1 || rc=$?
# The log without libFuzzer's per-input progress lines (#123 NEW ..., REDUCE, pulse).
grep -avE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD)' "$WORK/fuzz.log" | grep -avE '# Uses: |^[[:space:]]+NEW_FUNC' || true

shopt -s nullglob
found=("$WORK"/artifacts/* "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$WORK"/oom-*)
if [[ $rc -eq 0 && ${#found[@]} -eq 0 ]]; then
  pass "no findings in ${FUZZ_SECONDS}s ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$WORK/fuzz.log" | awk '{print $2}') runs)"
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
