#!/usr/bin/env bash
# How close an early-stopped iogate probe lands to a long fio run, and how soon.
#
#   bench/early_verdict.sh [DIR] [ROUNDS] [FIO_RUNTIME]      (defaults: /var/tmp, 3, 30)
#   MIN_IOPS=10000 bench/early_verdict.sh ...                (with a policy floor, as preflight runs it)
#
# Preflight's default workload (4k randread, QD32, one job, 1 s ramp, a 10 s limit) with
# --early-stop --tolerance 3%, against fio with the same parameters for FIO_RUNTIME seconds (the
# "long run" the verdict stands in for), on the same file, interleaved round by round: fio with
# its defaults, and fio tuned for batching as in compare_fio.sh (its defaults are CPU-bound at
# QD32 on a small VM, see README), and iogate itself for FIO_RUNTIME seconds without early stop
# (which separates "does the early verdict land on the long run" from "does the engine match fio").
# Prints per round: iogate's IOPS, why and when it stopped (ramp included: the time a pod waits),
# its interval, each long run's IOPS and the ratio early/long.
source "$(dirname "$0")/lib.sh"
DIR=${1:-/var/tmp}
ROUNDS=${2:-3}
FIO_RUNTIME=${3:-30}
SIZE=${SIZE:-1g}
LIMIT=${LIMIT:-10s}
TOLERANCE=${TOLERANCE:-3%}
MIN_IOPS=${MIN_IOPS:-}
bench_make_file "$DIR" "$SIZE"

run_iogate() {  # -> "iops stop_reason verdict_s wall_s ci_percent trusted"
  local t0 t1
  t0=$(date +%s%N)
  "$IOGATE" probe "$file" --rw randread --bs 4k --iodepth 32 --numjobs 1 --ramp 1s --runtime "$LIMIT" \
    --early-stop --tolerance "$TOLERANCE" ${MIN_IOPS:+--min-iops "$MIN_IOPS"} --output-format json >"$work/iogate.json"
  t1=$(date +%s%N)
  jq -r --argjson wall "$(((t1 - t0) / 1000000))" \
    '[.aggregate.read.iops, .stop_reason, ((.workload.ramp_ns + .measured_ns) / 1e9), ($wall / 1000),
      (.convergence.ci_relative_half_width * 100), .convergence.trusted] | @tsv' "$work/iogate.json"
}
run_iogate_long() {  # the same engine for FIO_RUNTIME seconds, no early stop -> iops
  "$IOGATE" probe "$file" --rw randread --bs 4k --iodepth 32 --numjobs 1 --ramp 1s --runtime "${FIO_RUNTIME}s" \
    --output-format json | jq -r '.aggregate.read.iops'
}
run_fio() {  # [extra fio options] -> iops
  fio_json --rw=randread --bs=4k --iodepth=32 --numjobs=1 --runtime="$FIO_RUNTIME" --ramp_time=1 "$@" |
    jq -r '[.jobs[].read.iops] | add'
}
tuned=(--iodepth_batch_submit=16 --iodepth_batch_complete_max=32 --userspace_reap=1)

echo "early verdict vs fio ${FIO_RUNTIME} s on $file ($(stat -f -c %T "$file"), 4k randread QD32, limit $LIMIT, tolerance $TOLERANCE${MIN_IOPS:+, floor $MIN_IOPS IOPS})"
printf '%-6s %10s %-16s %9s %8s %8s %10s %7s %10s %7s %10s %7s\n' round iogate "stop reason" "verdict" wall "CI ±" \
  "iogate ${FIO_RUNTIME}s" ratio "fio ${FIO_RUNTIME}s" ratio "tuned" ratio
ratios=() tuned_ratios=() long_ratios=() verdicts=()
for ((r = 1; r <= ROUNDS; r++)); do
  IFS=$'\t' read -r iops reason verdict wall ci trusted <<<"$(run_iogate)"
  long_iops=$(run_iogate_long)
  fio_iops=$(run_fio)
  tuned_iops=$(run_fio "${tuned[@]}")
  ratio=$(jq -n --argjson a "$iops" --argjson b "$fio_iops" '$a / $b')
  tuned_ratio=$(jq -n --argjson a "$iops" --argjson b "$tuned_iops" '$a / $b')
  long_ratio=$(jq -n --argjson a "$iops" --argjson b "$long_iops" '$a / $b')
  ratios+=("$ratio") tuned_ratios+=("$tuned_ratio") long_ratios+=("$long_ratio") verdicts+=("$verdict")
  ci=$(printf '%.1f%%' "$ci")
  [[ $trusted == true ]] || ci+="*"
  printf '%-6s %10.0f %-16s %8.2fs %7.2fs %8s %10.0f %7.3f %10.0f %7.3f %10.0f %7.3f\n' "$r" "$iops" "$reason" \
    "$verdict" "$wall" "$ci" "$long_iops" "$long_ratio" "$fio_iops" "$ratio" "$tuned_iops" "$tuned_ratio"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "* interval not trusted: successive batch means were still correlated (IOPS drifting)"
echo "median ratio $(median "${long_ratios[@]}") (iogate ${FIO_RUNTIME} s), $(median "${ratios[@]}") (fio defaults), $(median "${tuned_ratios[@]}") (tuned), median time to verdict $(median "${verdicts[@]}") s (ramp + measured window)"
