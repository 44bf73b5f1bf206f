#!/usr/bin/env bash
# How close an early-stopped probe lands to a 30 s fio run, and how soon, paired round by round.
#
#   bench/verdict.sh [DIR] [ROUNDS] [FIO_RUNTIME_S]          (defaults: /var/tmp, 5, 30)
#   CAP=16000 bench/verdict.sh                               (on a loop device throttled to CAP read IOPS)
#
# Preflight's default workload (4k randread QD32, one job, 1 s ramp, 10 s limit). Per round:
#   early      iogate probe --early-stop --tolerance 3%: the "settled" rule alone
#   preflight  iogate preflight --no-api with a floor of FLOOR IOPS (default 0.9 × CAP, or the
#              image-classification profile's 10,000 on the real disk): what a pod waits for
#   fio        fio for FIO_RUNTIME_S seconds, defaults: the long run the verdict stands in for
# Prints one TSV row per run: target, round, tool, iops, stop_reason, verdict_s (ramp + measured
# window: what the verdict cost in device time), wall_s (process start to exit, test file
# included), ci_pct (the 95% interval's half-width), trusted.
source "$(dirname "$0")/lib.sh"
DIR=${1:-/var/tmp}
ROUNDS=${2:-5}
FIO_RUNTIME=${3:-30}
SIZE=${SIZE:-1g}
CAP=${CAP:-}
BACKING=${BACKING:-tmpfs}
TARGET=${TARGET:-${CAP:+cap $CAP}}
TARGET=${TARGET:-disk}
FLOOR=${FLOOR:-$([[ -n $CAP ]] && echo $((CAP * 9 / 10)) || echo 10000)}
if [[ -n $CAP ]]; then
  rig_up "verdict-$$" --backing "$BACKING" --riops "$CAP" --size "$(( $(numfmt --from=iec "${SIZE^^}") * 5 / 2 ))" >/dev/null
  DIR=$(rig_dir "verdict-$$")
  BENCH_RUN=(rig_run "verdict-$$")
fi
bench_make_file "$DIR" "$SIZE"
policy="$work/policy.yaml"
cat >"$policy" <<POLICY
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
workload: {rw: randread, bs: 4k, iodepth: 32, numjobs: 1, ramp: 1s, runtime: 10s, size: $SIZE}
rules:
  - {name: floor, min_iops: $FLOOR}
POLICY
# preflight lays out its own test file of the policy's size beside fio's; it removes it after.
pf_dir="$work/preflight"
mkdir -p "$pf_dir"

ms() { date +%s%N | cut -b1-13; }
row() { printf '%s\t%s\t%s\t%s\n' "$TARGET" "$1" "$2" "$3"; }
report_fields='[.aggregate.read.iops, .stop_reason, ((.workload.ramp_ns + .measured_ns) / 1e9), $wall,
  (.convergence.ci_relative_half_width * 100), .convergence.trusted] | @tsv'
for ((r = 1; r <= ROUNDS; r++)); do
  t0=$(ms)
  "${BENCH_RUN[@]}" "$IOGATE" probe "$file" --rw randread --bs 4k --iodepth 32 --numjobs 1 --ramp 1s --runtime 10s \
    --early-stop --tolerance 3% --output-format json >"$work/early.json"
  row "$r" early "$(jq -r --argjson wall "$((($(ms) - t0)))e-3" "$report_fields" "$work/early.json")"
  t0=$(ms)
  code=0
  "${BENCH_RUN[@]}" "$IOGATE" preflight "$pf_dir" --policy "$policy" --no-api --output-format json \
    >"$work/preflight.json" 2>/dev/null || code=$?
  ((code <= 1)) || { echo "preflight failed with exit $code" >&2; exit 1; }
  row "$r" preflight "$(jq -r --argjson wall "$((($(ms) - t0)))e-3" ".results[0].report | $report_fields" "$work/preflight.json")"
  fio_iops=$(fio_json --rw=randread --bs=4k --iodepth=32 --numjobs=1 --runtime="$FIO_RUNTIME" --ramp_time=1 |
    jq -r '.jobs[0].read.iops')
  row "$r" fio "$(printf '%s\t-\t%s\t-\t-\t-' "$fio_iops" "$((FIO_RUNTIME + 1))")"
done
