# Shared helpers for the integration tests. Each test sources this, uses $IOGATE (the built
# binary, set by ctest) and a scratch directory that is removed on every exit path
# (tests/lib/scratch.sh); pass, fail, skip, need_root, need_tool and assert_jq are
# tests/lib/check.sh's, the pods, reviews and policies tests/lib/objects.sh's.
set -euo pipefail

: "${IOGATE:?IOGATE must point at the iogate binary (ctest sets it)}"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/scratch.sh" iogate-it  # SCRATCH, on_exit
source "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/objects.sh"  # pod, gpu_pod, review, policy

# prometheus_up JOB=TARGET...: a real Prometheus (Debian's) scraping each target every second as
# its job, on a free loopback port, killed on exit; defines query QUERY (the HTTP API's JSON).
# A loaded machine can drop one connection to Prometheus: curl retries it. A query that still
# fails is reported where it is used.
prometheus_up() {
  need_tool prometheus
  need_tool promtool
  PROM_PORT=$((20000 + RANDOM % 20000))
  {
    echo "global: {scrape_interval: 1s, evaluation_interval: 1s}"
    echo "scrape_configs:"
    local job
    for job in "$@"; do
      echo "  - job_name: ${job%%=*}"
      echo "    static_configs: [{targets: [\"${job#*=}\"]}]"
    done
  } >"$SCRATCH/prometheus.yml"
  promtool check config "$SCRATCH/prometheus.yml" >/dev/null || fail "promtool check config"
  prometheus --config.file="$SCRATCH/prometheus.yml" --storage.tsdb.path="$SCRATCH/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$SCRATCH/prom.log" 2>&1 &
  PROM_PID=$!
  on_exit "kill $PROM_PID"
}
query() { curl -s --retry 3 --retry-all-errors --retry-delay 0 --get "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }

# No test file may be left anywhere under a directory.
assert_no_test_files() {
  local left
  left=$(find "$1" -name '.iogate-probe-*' 2>/dev/null | head -5)
  [[ -z "$left" ]] || fail "test files left behind: $left"
  pass "no test file left under $1"
}

# webhook_up LOG FLAG...: `iogate webhook FLAG...` in the background, its log in LOG, killed on
# exit; waits up to 20 s for it to serve. Sets hook (its pid) and ADDR (where it serves /mutate,
# /validate and /healthz); fails with the log where it does not start.
webhook_up() {
  local log=$1 _
  shift
  "$IOGATE" webhook "$@" >/dev/null 2>"$log" &
  hook=$!
  on_exit "kill $hook"
  for _ in $(seq 200); do grep -q "serving /mutate" "$log" && break; sleep 0.1; done
  ADDR=$(sed -n 's/.*serving \/mutate \/validate \/healthz on \([0-9.:]*\).*/\1/p' "$log" | head -1)
  [[ -n $ADDR ]] || fail "webhook did not start: $(cat "$log")"
}

# wait_test_file DIR [PERIOD]: until a test file is under DIR (a probe has started writing it),
# polled 100 times PERIOD s apart (default 0.1); status 1 if none came.
wait_test_file() {
  local _
  for _ in $(seq 100); do
    [[ -n $(find "$1" -name '.iogate-probe-*' -print -quit 2>/dev/null) ]] && return 0
    sleep "${2:-0.1}"
  done
  return 1
}

# A quick probe: small file, short runtime. Extra flags follow the path.
quick_probe() {
  local path=$1; shift
  "$IOGATE" probe "$path" --size 64m --runtime 2s --ramp 500ms --output-format json "$@"
}

# expect_usage WANT ARGS...: `iogate ARGS...` must exit 2 with one line on stderr that matches WANT
# (grep), and leave no test file under $USAGE_DIR (default: the scratch directory).
expect_usage() {
  local want=$1; shift
  local code=0
  "$IOGATE" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || code=$?
  [[ $code -eq 2 ]] || fail "iogate $*: exit $code, want 2 ($(cat "$SCRATCH/err"))"
  [[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "iogate $*: want one line, got: $(cat "$SCRATCH/err")"
  grep -q -- "$want" "$SCRATCH/err" || fail "iogate $*: error does not name $want: $(cat "$SCRATCH/err")"
  pass "iogate $* -> $(cat "$SCRATCH/err")"
  assert_no_test_files "${USAGE_DIR:-$SCRATCH}"
}

# use_rig: the steady-device rig (tests/lib/rig.sh) with its state in the scratch directory, every
# rig torn down on exit; skips, naming the missing piece, where the kernel lacks one. fio too.
use_rig() {
  need_root "the rig (losetup, mount, cgroups)"
  need_tool fio
  source "$TESTS_DIR/lib/rig.sh"
  RIG_STATE="$SCRATCH/rig-state" RIG_TMPFS_DIR=/dev/shm
  local checks
  checks=$(rig_check) || skip "the rig cannot run here: $(grep '^no' <<<"$checks" | head -2 | tr '\n' ';')"
  on_exit rig_down_all
}
