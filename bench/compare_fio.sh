#!/usr/bin/env bash
# iogate probe against fio on the same file with the same parameters, interleaved rounds.
#
#   bench/compare_fio.sh [DIR] [ROUNDS] [RUNTIME]      (defaults: /var/tmp, 3, 5)
#
# For each case (4k randread QD1, QD32, QD32×2 jobs, 128k sequential read) it runs, in each
# round: iogate, fio with its defaults (one io_submit/io_getevents per I/O), and fio tuned for
# batching (iodepth_batch_submit=16, iodepth_batch_complete_max=32, userspace_reap=1). It prints
# the medians and the ratios iogate/fio of IOPS, p99 latency and CPU time per I/O.
# Latency: iogate's clat_ns runs from just before io_submit to the completion being seen, which is
# fio's total latency lat_ns (slat + clat), so fio runs with --lat_percentiles=1 and its lat_ns
# percentiles are compared (fio's clat_ns leaves out the time io_submit itself takes: on this
# virtio disk that is ~40 µs of a 70 µs QD1 read).
# CPU per I/O: iogate's report (getrusage over the measured window) against fio's usr_cpu+sys_cpu
# (percent of job runtime, also reset after ramp_time), divided by the I/Os completed.
source "$(dirname "$0")/lib.sh"
DIR=${1:-/var/tmp}
ROUNDS=${2:-3}
RUNTIME=${3:-5}
SIZE=${SIZE:-1g}
bench_make_file "$DIR" "$SIZE"

cases=("randread 4k 1 1" "randread 4k 32 1" "randread 4k 32 2" "read 128k 32 1")
results="$work/results.tsv"
: >"$results"

run_iogate() {  # rw bs depth jobs -> "iops p99_ns cpu_ns_per_io"
  "$IOGATE" probe "$file" --rw "$1" --bs "$2" --iodepth "$3" --numjobs "$4" --runtime "${RUNTIME}s" --ramp 1s \
    --output-format json | jq -r '[.aggregate.read.iops, .aggregate.read.clat_ns.percentile["99.000000"], .cpu.ns_per_io] | @tsv'
}
run_fio() {  # variant rw bs depth jobs
  local extra=()
  [[ $1 == tuned ]] && extra=(--iodepth_batch_submit=16 --iodepth_batch_complete_max=32 --userspace_reap=1)
  fio_json --rw="$2" --bs="$3" --iodepth="$4" --numjobs="$5" --runtime="$RUNTIME" --ramp_time=1 --lat_percentiles=1 \
    "${extra[@]}" |
    jq -r '[([.jobs[].read.iops] | add),
            ([.jobs[].read.lat_ns.percentile["99.000000"]] | max),
            (([.jobs[] | (.usr_cpu + .sys_cpu) / 100 * .job_runtime * 1e6] | add) / ([.jobs[].read.total_ios] | add))] | @tsv'
}

for c in "${cases[@]}"; do
  read -r rw bs depth jobs <<<"$c"
  for ((r = 1; r <= ROUNDS; r++)); do
    printf '%s\t%s\t%s\n' "$c" iogate "$(run_iogate "$rw" "$bs" "$depth" "$jobs")" >>"$results"
    printf '%s\t%s\t%s\n' "$c" fio "$(run_fio default "$rw" "$bs" "$depth" "$jobs")" >>"$results"
    printf '%s\t%s\t%s\n' "$c" fio-tuned "$(run_fio tuned "$rw" "$bs" "$depth" "$jobs")" >>"$results"
  done
done

echo "iogate vs fio on $file ($(stat -f -c %T "$file"), $ROUNDS rounds × ${RUNTIME}s, medians)"
python3 - "$results" <<'PY' 2>/dev/null || awk -F'\t' '{print}' "$results"
import sys, statistics, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
order = []
for line in open(sys.argv[1]):
    if line.count("\t") != 4: continue
    case, tool, iops, p99, cpu = line.rstrip("\n").split("\t")
    if case not in order: order.append(case)
    rows[case][tool].append((float(iops), float(p99), float(cpu)))
med = lambda xs, i: statistics.median(x[i] for x in xs)
print(f"{'case':<20}{'iogate':>9}{'fio':>9}{'tuned':>9} | {'IOPS ratio':>10}{'/tuned':>8} | {'p99 ratio':>9}{'/tuned':>8} | {'CPU/IO ns':>9}{'fio':>7}{'tuned':>7}{'ratio':>7}{'/tuned':>8}")
for case in order:
    rw, bs, depth, jobs = case.split()
    name = f"{rw} {bs} QD{depth}" + (f"x{jobs}" if jobs != "1" else "")
    g, f, t = rows[case]["iogate"], rows[case]["fio"], rows[case]["fio-tuned"]
    print(f"{name:<20}{med(g,0):>9.0f}{med(f,0):>9.0f}{med(t,0):>9.0f} | {med(g,0)/med(f,0):>10.3f}{med(g,0)/med(t,0):>8.3f} | "
          f"{med(g,1)/med(f,1):>9.3f}{med(g,1)/med(t,1):>8.3f} | {med(g,2):>9.0f}{med(f,2):>7.0f}{med(t,2):>7.0f}"
          f"{med(g,2)/med(f,2):>7.2f}{med(g,2)/med(t,2):>8.2f}")
PY
