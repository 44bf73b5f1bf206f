#!/usr/bin/env bash
# arm64 (GH200 and GB200 nodes are aarch64) on this amd64 machine (ctest build.arm64). Cross-builds
# iogate and unit test binaries with Debian's cross compiler and arm64 packages (ARCH=arm64
# scripts/build.sh, cmake/aarch64-linux-gnu.cmake) into ARM64_BUILD_DIR, and runs them under
# qemu-user, called by name (qemu-aarch64-static PROGRAM): no binfmt_misc registration is needed. Shows:
#   - iogate is an ARM aarch64 ELF, statically linked, with no dynamic loader to ask for;
#   - every doctest case of the unit binaries built passes under qemu, except the cases named in
#     QEMU_EXCLUDED below, each printed with its reason;
#   - `iogate --version` under qemu says what the host's build says;
#   - a real probe of a scratch file under qemu: buffered (psync) reads and writes whose figures
#     agree with each other (never asserted as speed); the default O_DIRECT probe as qemu-user
#     allows it (below).
# Which unit binaries: ARM64_UNITS (module names; "all" for every one). The default is a subset
# that keeps a cold build within CI's budget (docs/testing.md, "arm64"); bench/arm64_units.sh
# runs them all. Build times and ccache hits are printed, never asserted.
source "$(dirname "$0")/../integration/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
: "${ARM64_BUILD_DIR:?ARM64_BUILD_DIR must name the arm64 build folder (ctest: <build>/arm64)}"
need_tool aarch64-linux-gnu-g++ qemu-aarch64-static file readelf jq
# No -L: the unit binaries (dynamic; iogate is static) load through /lib/ld-linux-aarch64.so.1,
# the multiarch libc6:arm64 that came with the arm64 -dev packages. -L /usr/aarch64-linux-gnu would
# pair the cross toolchain's loader (glibc 2.36-8cross1) with that libc (deb12u14), and the first
# std::thread then hangs, spinning.
[[ -e /lib/ld-linux-aarch64.so.1 ]] || fail "no /lib/ld-linux-aarch64.so.1 (libc6:arm64): bash scripts/install-deps.sh"
QEMU=(qemu-aarch64-static)

# Cases that cannot pass under qemu-user, by binary: a doctest --test-case-exclude filter, then why.
declare -A QEMU_EXCLUDED=(
  [device]='live: a file in /tmp: statfs agrees with mountinfo*'
)
declare -A QEMU_WHY=(
  [device]="qemu-user 7.2 passes statx's STATX_DIOALIGN bit but not stx_dio_mem_align and stx_dio_offset_align (0 where the kernel says 512)"
)

# The default subset: the modules whose code depends most on the CPU and its ABI (integer widths,
# atomics and threads, the clock, floating-point formatting, parsing of /proc and /sys), not those
# that are YAML, JSON and HTTP over the same libraries (policy, kube, webhook, http, preflight, cli,
# node, metrics), which would double the cold build (docs/testing.md, "arm64"). ARM64_UNITS=all
# runs every module (bench/arm64_units.sh).
units=(${ARM64_UNITS:-base probe dataset device measure report})
if [[ "${units[*]}" == all ]]; then
  units=()
  for dir in "$ROOT"/tests/unit/*/; do
    compgen -G "$dir*_test.cc" >/dev/null && units+=("$(basename "$dir")")
  done
fi
targets=(iogate)
for u in "${units[@]}"; do
  [[ -d "$ROOT/tests/unit/$u" ]] || fail "ARM64_UNITS: no module $u under tests/unit"
  targets+=("unit_$u")
done

# --- the cross build ---
# In the background (tests/lib/background.sh): ctest runs it without a lock, beside the
# control-plane tests, which keep the CPU they need; the cross build takes what is left.
export CCACHE_STATSLOG="$SCRATCH/ccache.log"
t0=$(date +%s.%N)
ARCH=arm64 BUILD_DIR="$ARM64_BUILD_DIR" bash "$ROOT/tests/lib/background.sh" bash "$ROOT/scripts/build.sh" "${targets[@]}" >"$SCRATCH/build.log" 2>&1 ||
  { tail -40 "$SCRATCH/build.log" >&2; fail "ARCH=arm64 scripts/build.sh ${targets[*]} failed (log above)"; }
t1=$(date +%s.%N)
cache="no ccache"
if command -v ccache >/dev/null && [[ ! -s "$CCACHE_STATSLOG" ]]; then cache="nothing to compile"; fi
if command -v ccache >/dev/null && [[ -s "$CCACHE_STATSLOG" ]]; then
  cache=$(ccache --show-log-stats 2>/dev/null | awk '/^ *Hits:/ { h = $2 } /^ *Misses:/ { m = $2 } END { printf "ccache %d hits, %d misses", h, m }')
fi
pass "cross-built ${targets[*]} in $(awk "BEGIN { printf \"%.0f\", $t1 - $t0 }") s ($cache)"

bin="$ARM64_BUILD_DIR/iogate"
desc=$(file -L "$bin")
[[ "$desc" == *"ARM aarch64"* && "$desc" == *"statically linked"* ]] || fail "$bin is not a static aarch64 ELF: $desc"
! readelf -lW "$bin" | grep -q INTERP || fail "$bin asks for a dynamic loader"
pass "file: ${desc#*: }"

# --- the unit binaries under qemu ---
for u in "${units[@]}"; do
  test_bin="$ARM64_BUILD_DIR/tests/unit_$u"
  [[ "$(file -L "$test_bin")" == *"ARM aarch64"* ]] || fail "$test_bin is not an aarch64 binary: $(file -L "$test_bin")"
  args=()
  if [[ -n "${QEMU_EXCLUDED[$u]:-}" ]]; then
    echo "excluded under qemu: unit_$u --test-case-exclude=${QEMU_EXCLUDED[$u]}: ${QEMU_WHY[$u]}"
    args=(--test-case-exclude="${QEMU_EXCLUDED[$u]}")
  fi
  IOGATE_SOURCE_DIR="$ROOT" "${QEMU[@]}" "$test_bin" "${args[@]}" >"$SCRATCH/unit_$u.log" 2>&1 ||
    { tail -60 "$SCRATCH/unit_$u.log" >&2; fail "unit_$u under qemu (log above)"; }
  summary=$(grep '^\[doctest\] test cases:' "$SCRATCH/unit_$u.log" | tr -s ' ')
  [[ "$summary" =~ test\ cases:\ ([0-9]+)\ \|\ ([0-9]+)\ passed\ \|\ 0\ failed\ \|\ ([0-9]+)\ skipped ]] ||
    fail "unit_$u: no doctest summary: $(tail -5 "$SCRATCH/unit_$u.log")"
  ((BASH_REMATCH[2] > 0)) || fail "unit_$u ran no test case under qemu"
  # An exclusion that matches nothing is stale: it must go.
  if [[ -n "${QEMU_EXCLUDED[$u]:-}" ]]; then ((BASH_REMATCH[3] > 0)) || fail "unit_$u: the exclusion ${QEMU_EXCLUDED[$u]} matched no case"; fi
  pass "unit_$u (aarch64) under qemu: ${summary#\[doctest\] }"
done

# --- iogate itself under qemu ---
host_version=$("$IOGATE" --version | head -1)
arm_version=$("${QEMU[@]}" "$bin" --version | head -1)
[[ "$arm_version" == "$host_version" && "$arm_version" =~ ^iogate\ [0-9]+\.[0-9]+\.[0-9]+ ]] ||
  fail "iogate --version under qemu: \"$arm_version\", the host's build: \"$host_version\""
pass "iogate --version under qemu: $arm_version (the host's build says the same)"

# A buffered probe: psync threads, whose pread/pwrite qemu passes to the host's kernel.
dir="$SCRATCH/probe"
mkdir "$dir"
out="$SCRATCH/psync.json"
"${QEMU[@]}" "$bin" probe "$dir" --size 64m --runtime 2s --ramp 500ms --direct=0 --iodepth 4 --rw randrw \
  --output-format json >"$out" 2>"$SCRATCH/psync.err" || fail "probe --direct=0 under qemu: $(cat "$SCRATCH/psync.err")"
assert_jq "$out" '.schema == "iogate.report/v1" and .ioengine == "psync" and .direct == false' "under qemu: a report, psync, buffered"
assert_jq "$out" '.jobs[0].read.total_ios > 100 and .jobs[0].write.total_ios > 100' "under qemu: reads and writes completed"
assert_jq "$out" '.jobs[0].read as $r | $r.io_bytes == $r.total_ios * 4096 and
  (($r.iops - $r.total_ios / ($r.runtime_ns / 1e9)) | fabs) <= 0.01 * $r.iops' "under qemu: io_bytes = total_ios x 4096, iops = total_ios / runtime"
assert_jq "$out" '.jobs[0].read.clat_ns as $c | $c.min > 0 and $c.min <= $c.percentile["50.000000"] and
  $c.percentile["50.000000"] <= $c.percentile["99.000000"] and $c.percentile["99.000000"] <= $c.max' "under qemu: latency percentiles ordered, above 0"
assert_jq "$out" '.cpu.ns_per_io > 0 and .measured_ns > 0' "under qemu: CPU per I/O and the window measured"
echo "  psync under qemu: $(jq -r '"\(.jobs[0].read.iops | floor) read + \(.jobs[0].write.iops | floor) write IOPS, p99 read \(.jobs[0].read.clat_ns.percentile["99.000000"] / 1000 | floor) us"' "$out")"
assert_no_test_files "$dir"

# The default probe (O_DIRECT, libaio). qemu-user 7.2 (Debian 12) passes statx's STATX_DIOALIGN bit
# but not its alignment fields (both 0), so iogate finds O_DIRECT unsupported and falls back to
# buffered psync, saying so; qemu also implements no aio system call (io_setup: ENOSYS). Where a
# qemu passes both through, the run is libaio with O_DIRECT and is checked as such.
"${QEMU[@]}" "$bin" probe "$dir" --size 64m --runtime 2s --ramp 500ms --output-format json \
  >"$SCRATCH/aio.json" 2>"$SCRATCH/aio.err" || fail "probe (O_DIRECT) under qemu: $(cat "$SCRATCH/aio.err")"
if jq -e '.ioengine == "libaio"' "$SCRATCH/aio.json" >/dev/null; then
  assert_jq "$SCRATCH/aio.json" '.direct == true and .jobs[0].read.total_ios > 100 and
    .jobs[0].read.io_bytes == .jobs[0].read.total_ios * 4096' "under qemu: libaio with O_DIRECT measured"
else
  assert_jq "$SCRATCH/aio.json" '.ioengine == "psync" and .direct == false and .workload.direct == true and
    ([.warnings[] | test("O_DIRECT was refused")] | any) and .jobs[0].read.total_ios > 100' \
    "under qemu: O_DIRECT found unsupported (qemu zeroes statx's DIO alignment), buffered psync used and the report says so"
fi
assert_no_test_files "$dir"
