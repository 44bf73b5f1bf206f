#!/usr/bin/env bash
# Builds libFuzzer targets with clang++ and runs each for a short, bounded time on a copy of its
# seed corpus. ctest builds the three at once (fuzz.build: --build-only) and runs them as
# fuzz.mountinfo (the mountinfo parser), fuzz.admission (the webhook's admission decisions) and
# fuzz.policy (policy parsing, what every mode reads first), each --no-build.
#
# Usage: run_fuzz.sh [--build-only | --no-build] [TARGET...]
#   TARGET        mountinfo (the default), admission or policy; a source that several targets
#                 link is compiled once
#   --build-only  build the targets, run none (needs BUILD_DIR: the binaries stay there)
#   --no-build    run the targets already built in $BUILD_DIR/fuzz (fails, naming the fix, if one
#                 is missing)
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
build=true run=true
TARGETS=()
for a in "$@"; do
  case "$a" in
    --build-only) run=false ;;
    --no-build) build=false ;;
    mountinfo | admission | policy) TARGETS+=("$a") ;;
    *) echo "usage: $0 [--build-only | --no-build] [mountinfo|admission|policy...]" >&2; exit 1 ;;
  esac
done
((${#TARGETS[@]} > 0)) || TARGETS=(mountinfo)

# A missing tool or library is a missing prerequisite, not a capability this machine lacks.
missing() { echo "FAIL: $*; bash scripts/install-deps.sh installs it" >&2; exit 1; }
source "$SRC_DIR/tests/lib/check.sh"  # fail

add_folder() {  # FOLDER [EXCLUDED_FILE...]: every .cc of an agent/ folder but the excluded ones
  local folder=$1 f rel
  shift
  for f in "$SRC_DIR/agent/$folder"/*.cc; do
    rel=${f#"$SRC_DIR"/}
    [[ " $* " == *" $rel "* ]] || SOURCES+=("$rel")
  done
}
# target_config TARGET: its sources (SOURCES, the fuzz driver first), the longest input (MAX_LEN),
# libraries to link (LIBS). The sources after the driver go into an archive, so the linker takes
# only the objects the driver reaches: each target lists whole folders where it can (base/ always),
# and a helper moved between files of a listed folder needs no edit here.
target_config() {
  LIBS=()
  case "$1" in
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
  esac
  local f l yaml_lib=""
  for f in "${SOURCES[@]}"; do
    [[ -f "$SRC_DIR/$f" ]] || fail "no $f under $SRC_DIR (set IOGATE_SOURCE_DIR)"
  done
  if [[ "$1" == admission || "$1" == policy ]]; then
    for l in /usr/lib/x86_64-linux-gnu/libyaml-cpp.a /usr/lib/aarch64-linux-gnu/libyaml-cpp.a /usr/local/lib/libyaml-cpp.a \
             /usr/lib/libyaml-cpp.a; do
      if [[ -f "$l" ]]; then yaml_lib=$l; break; fi
    done
    [[ -n "$yaml_lib" ]] || missing "libyaml-cpp.a not found (install libyaml-cpp-dev)"
    LIBS+=("$yaml_lib")
  fi
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/iogate-fuzz.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT

if [[ -n "${BUILD_DIR:-}" ]]; then
  OUT_DIR=$BUILD_DIR/fuzz
else
  $build || { echo "run_fuzz.sh: --no-build needs BUILD_DIR (where fuzz.build left the targets)" >&2; exit 1; }
  $run || { echo "run_fuzz.sh: --build-only needs BUILD_DIR (where the targets stay)" >&2; exit 1; }
  OUT_DIR=$TMP/bin
fi
mkdir -p "$OUT_DIR"

build_targets() {
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

  # One object per source, however many targets link it, two compilers at a time (CI machines are
  # small), through ccache when there is one. Sources are named by absolute path, so the working
  # directory (ctest's or a shell's) need not be part of ccache's key: CCACHE_NOHASHDIR lets both
  # share the cache.
  local launch=() obj_dir=$TMP/obj target src status=0 pids=()
  local -A compiled=()
  if command -v ccache >/dev/null 2>&1; then launch=(env CCACHE_NOHASHDIR=1 ccache); fi
  mkdir -p "$obj_dir"
  object() { echo "$obj_dir/$(echo "$1" | tr '/' '_').o"; }
  compile() {
    local src=$1 obj
    obj=$(object "$src")
    # The definitions iogate_core has in CMakeLists.txt: fmt and spdlog compiled once, in base/.
    "${launch[@]}" "$CXX" -std=c++20 -O1 -gline-tables-only "${SAN_FLAGS[@]}" -I"$SRC_DIR/agent" -DSPDLOG_COMPILED_LIB \
      -c "$SRC_DIR/$src" -o "$obj" >"$obj.log" 2>&1 || { cat "$obj.log" >&2; return 1; }
  }
  for target in "${TARGETS[@]}"; do
    target_config "$target"
    for src in "${SOURCES[@]}"; do
      [[ -z "${compiled[$src]:-}" ]] || continue
      compiled[$src]=1
      if [[ ${#pids[@]} -ge 2 ]]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
      fi
      compile "$src" &
      pids+=($!)
    done
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  [[ $status -eq 0 ]] || fail "building the fuzzers failed"
  echo "built ${#compiled[@]} objects with $CXX ($("$CXX" --version | head -n 1)) for ${TARGETS[*]}"
  # Each target: its driver, then the rest of its sources as an archive: only the objects the
  # driver needs are linked (the policy's renderers, say, are not, nor what they would pull in).
  local objs
  for target in "${TARGETS[@]}"; do
    target_config "$target"
    objs=()
    for src in "${SOURCES[@]:1}"; do objs+=("$(object "$src")"); done
    rm -f "$obj_dir/$target.a"
    ar rcs "$obj_dir/$target.a" "${objs[@]}" || fail "ar failed"
    "$CXX" "${SAN_FLAGS[@]}" "$(object "${SOURCES[0]}")" "$obj_dir/$target.a" "${LIBS[@]}" -o "$OUT_DIR/${target}_fuzz" ||
      fail "linking ${target}_fuzz failed"
    echo "built $OUT_DIR/${target}_fuzz (${#SOURCES[@]} sources)"
  done
}

# fuzz_target TARGET: runs its binary for FUZZ_SECONDS in the temp dir on a copy of the seeds
# (libFuzzer adds new inputs to the corpus directory and writes crash-*/leak-*/timeout-* files to
# the artifact prefix and the cwd, both under $TMP). 0: no finding; 1: a finding, kept and shown.
fuzz_target() {
  local target=$1 fuzzer=$OUT_DIR/${1}_fuzz work=$TMP/work-$1 rc=0 dict=() found keep f kept
  target_config "$target"
  [[ -x "$fuzzer" ]] || fail "no $fuzzer: build it first (ctest runs fuzz.build; by hand: run_fuzz.sh --build-only $target)"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$SRC_DIR"/tests/fuzz/corpus/"$target"/* "$work/corpus/"
  # A target's dictionary, where it has one (tests/fuzz/TARGET.dict).
  if [[ -f "$SRC_DIR/tests/fuzz/$target.dict" ]]; then dict=(-dict="$SRC_DIR/tests/fuzz/$target.dict"); fi
  echo "fuzzing $target for ${FUZZ_SECONDS}s (max_len $MAX_LEN, $(ls "$work/corpus" | wc -l) seeds)"
  # Exit codes forced to 1: libFuzzer's default for a finding is 77, which ctest would read as SKIP.
  (cd "$work" && ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:symbolize=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$fuzzer" -max_total_time="$FUZZ_SECONDS" -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 "${dict[@]}" \
      -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/fuzz.log" 2>&1) || rc=$?
  # The log without libFuzzer's per-input progress lines (#123 NEW ..., REDUCE, pulse).
  grep -avE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD)' "$work/fuzz.log" | grep -avE '# Uses: |^[[:space:]]+NEW_FUNC' || true

  shopt -s nullglob
  found=("$work"/artifacts/* "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*)
  shopt -u nullglob
  if [[ $rc -eq 0 && ${#found[@]} -eq 0 ]]; then
    pass "$target: no findings in ${FUZZ_SECONDS}s ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/fuzz.log" | awk '{print $2}') runs)"
    return 0
  fi
  echo "FAIL: $target: fuzzer exited $rc" >&2
  if [[ ${#found[@]} -gt 0 ]]; then
    keep=${FUZZ_ARTIFACT_DIR:-}
    [[ -n "$keep" ]] || { [[ -n "${BUILD_DIR:-}" ]] && keep=$BUILD_DIR/fuzz/artifacts; }
    [[ -n "$keep" ]] || keep=$(mktemp -d /tmp/iogate-fuzz-artifacts.XXXXXX)
    mkdir -p "$keep"
    for f in "${found[@]}"; do
      cp "$f" "$keep/"
      kept=$keep/$(basename "$f")
      echo "crashing input: $kept ($(wc -c <"$f") bytes)" >&2
      od -A x -t x1z -v "$f" | head -n 256 >&2
      echo "reproduce: $fuzzer $kept   (rebuild first if $fuzzer was in a temp dir)" >&2
    done
  fi
  return 1
}

if $build; then build_targets; fi
$run || exit 0
status=0
for target in "${TARGETS[@]}"; do fuzz_target "$target" || status=1; done
exit $status
