# Shared by the bench scripts: the iogate binary, a scratch directory removed on exit, the test
# file iogate writes (and fio then reads too, so both measure the same blocks), and paired rows of
# iogate and fio figures measured the same way.
set -euo pipefail
bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOGATE=${IOGATE:-$bench_root/build/iogate}
command -v fio >/dev/null || { echo "fio is not installed (bash scripts/install-deps.sh)"; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed (bash scripts/install-deps.sh)"; exit 2; }
[[ -x "$IOGATE" ]] || { echo "build iogate first: bash scripts/build.sh"; exit 2; }
source "$bench_root/tests/lib/rig.sh"

# What every measured command is prefixed with: empty on the real disk, `rig_run NAME` on a rig
# (then both tools' I/O is throttled alike).
BENCH_RUN=()

# bench_make_file DIR SIZE: sets $work (a scratch directory under DIR, removed on exit) and $file
# (a SIZE test file iogate wrote there: preallocated, incompressible, kept for the runs).
bench_make_file() {
  work=$(mktemp -d "$1/iogate-bench.XXXXXX")
  trap 'rm -rf "$work"; rig_down_all' EXIT
  "$IOGATE" probe "$work" --size "$2" --keep-file --runtime 200ms --ramp 0 >/dev/null
  file=$(ls "$work"/.iogate-probe-*.dat)
}

# fio_json [fio options]: fio on $file with libaio, O_DIRECT, a cold page cache and a fresh
# random sequence each run, time-based, jobs reported as one group; prints fio's JSON.
fio_json() {
  "${BENCH_RUN[@]}" fio --name=bench --filename="$file" --ioengine=libaio --direct=1 --time_based --invalidate=1 \
    --randrepeat=0 --group_reporting --output-format=json "$@" 2>/dev/null
}

# The figures a row holds, in this order, for both tools:
#   iops (read + write), bw_bytes per s (read + write), p50 and p99 latency in ns (reads, or
#   writes for a write-only run), CPU ns per I/O over the measured window.
# Latency like for like: iogate's clat_ns runs from just before io_submit to the completion being
# seen, which is fio's total latency lat_ns (slat + clat), hence --lat_percentiles=1.
# CPU: iogate's getrusage over its window; fio's usr_cpu + sys_cpu (percent of the summed job
# runtime, reset after ramp_time too).
bench_row_fields='iops bw_bytes_per_s p50_ns p99_ns cpu_ns_per_io'

# probe_row RW BS DEPTH JOBS RUNTIME_S [extra iogate flags]
probe_row() {
  local rw=$1 bs=$2 depth=$3 jobs=$4 runtime=$5 target=("$file")
  shift 5
  # iogate writes only to a test file it created: the kept one, named by its directory and size.
  [[ $rw == read || $rw == randread ]] || target=("$work" --size "$(stat -c %s "$file")" --keep-file)
  "${BENCH_RUN[@]}" "$IOGATE" probe "${target[@]}" --rw "$rw" --bs "$bs" --iodepth "$depth" --numjobs "$jobs" \
    --runtime "${runtime}s" --ramp 1s ${RWMIX:+--rwmixread "$RWMIX"} "$@" --output-format json |
    jq -r '.aggregate as $a | (if $a.read.total_ios > 0 then $a.read else $a.write end) as $l |
      [$a.read.iops + $a.write.iops, $a.read.bw_bytes + $a.write.bw_bytes,
       $l.clat_ns.percentile["50.000000"], $l.clat_ns.percentile["99.000000"], .cpu.ns_per_io] | @tsv'
}

# fio_row RW BS DEPTH JOBS RUNTIME_S [extra fio options]
# A writing fio gets its own copy of the test file: its writes would overwrite the marker that
# lets iogate reuse its kept file. Same size, same incompressible data, same file system.
fio_row() {
  local rw=$1 bs=$2 depth=$3 jobs=$4 runtime=$5 target=$file
  shift 5
  if [[ $rw != read && $rw != randread ]]; then
    target=$work/fio-write.dat
    [[ -f $target ]] || cp --sparse=never "$file" "$target" ||
      { rm -f "$target"; echo "bench: no room for fio's copy of the test file beside it" >&2; return 1; }
  fi
  file=$target fio_json --rw="$rw" --bs="$bs" --iodepth="$depth" --numjobs="$jobs" --runtime="$runtime" --ramp_time=1 \
    --lat_percentiles=1 ${RWMIX:+--rwmixread="$RWMIX"} "$@" |
    jq -r '.jobs[0] as $j | (if $j.read.total_ios > 0 then $j.read else $j.write end) as $l |
      [$j.read.iops + $j.write.iops, $j.read.bw_bytes + $j.write.bw_bytes,
       $l.lat_ns.percentile["50.000000"], $l.lat_ns.percentile["99.000000"],
       (($j.usr_cpu + $j.sys_cpu) / 100 * $j.job_runtime * 1e6) / ($j.read.total_ios + $j.write.total_ios)] | @tsv'
}
