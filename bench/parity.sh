#!/usr/bin/env bash
# iogate probe against fio over a matrix of workloads, paired round by round on one file.
#
#   bench/parity.sh [DIR] [ROUNDS] [RUNTIME_S]             (defaults: /var/tmp, 5, 5)
#   RIG="--riops 50000 ..." bench/parity.sh                (the same on a throttled loop device, tests/lib/rig.sh)
#
# Prints one TSV row per run: target, case, tool, round, then $bench_row_fields (bench/lib.sh).
# In each round the two tools run back to back on the same file with the same parameters, in
# alternating order (odd rounds iogate first), so a drifting disk favours neither. fio runs with
# its defaults (one io_submit and one io_getevents per I/O). The "batch16" rows are iogate with
# --iodepth-batch 16, paired with the same round's fio: what batching saves in CPU and costs in IOPS.
source "$(dirname "$0")/lib.sh"
DIR=${1:-/var/tmp}
ROUNDS=${2:-5}
RUNTIME=${3:-5}
SIZE=${SIZE:-1g}
TARGET=${TARGET:-disk}
if [[ -n ${RIG:-} ]]; then
  # Room for the test file and the copy a writing fio gets (bench/lib.sh), and ext4's own.
  rig_up "parity-$$" $RIG --size "$(( $(numfmt --from=iec "${SIZE^^}") * 5 / 2 ))" >/dev/null
  DIR=$(rig_dir "parity-$$")
  BENCH_RUN=(rig_run "parity-$$")
fi
bench_make_file "$DIR" "$SIZE"

# rw bs iodepth numjobs [rwmixread]
cases=("randread 4k 1 1" "randread 4k 32 1" "randread 4k 128 1" "randread 4k 1 4" "randread 4k 32 4"
       "randread 4k 128 4" "read 128k 8 1" "randrw 4k 32 1 70")
for c in "${cases[@]}"; do
  read -r rw bs depth jobs mix <<<"$c"
  RWMIX=$mix
  name="$rw $bs QD$depth×$jobs${mix:+ $mix/$((100 - mix))}"
  for ((r = 1; r <= ROUNDS; r++)); do
    runs=(iogate fio)
    ((r % 2)) || runs=(fio iogate)
    [[ $c == "randread 4k 32 1" ]] && runs+=(batch16)
    for tool in "${runs[@]}"; do
      case $tool in
        iogate) row=$(probe_row "$rw" "$bs" "$depth" "$jobs" "$RUNTIME") ;;
        batch16) row=$(probe_row "$rw" "$bs" "$depth" "$jobs" "$RUNTIME" --iodepth-batch 16) ;;
        fio) row=$(fio_row "$rw" "$bs" "$depth" "$jobs" "$RUNTIME") ;;
      esac
      printf '%s\t%s\t%s\t%s\t%s\n' "$TARGET" "$name" "$tool" "$r" "$row"
    done
  done
done
