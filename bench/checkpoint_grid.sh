#!/usr/bin/env bash
# iogate's predicted checkpoint save and restore against real PyTorch ranks (torch.save + fsync,
# torch.load after the page cache drops the files), on a rig volume capped in write and read
# bandwidth, writeback included: 1, 2 and 8 ranks, a small and a large checkpoint each.
#
#   bash bench/checkpoint_grid.sh                 # the grid; rows on stdout (TSV), progress on stderr
#   ROWS=FILE ROUNDS=2 RANKS="1 8" SIZES="128 512" bash bench/checkpoint_grid.sh
#
# Volume and method: tests/lib/checkpoint_volumes.sh (a 500 MB/s write, 1 GB/s read volume, every
# rate x0.1: 50 MB/s and 100 MB/s). SIZES are the pod's checkpoint in MiB, split over its ranks;
# the interval is chosen per case so that the real stall lands near 2x or 0.5x the 5% budget in
# turn (a case either side of it), and the verdict is judged against the real save's stall. Each
# row: round, pod MiB, interval s, then CK_FIELDS. Needs root (the rig).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
IOGATE=${IOGATE:-$here/../build/iogate}
[[ $(id -u) -eq 0 ]] || { echo "bench/checkpoint_grid.sh needs root (loop devices, cgroups)" >&2; exit 2; }
[[ -x $IOGATE ]] || { echo "build iogate first: bash scripts/build.sh" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed (bash scripts/install-deps.sh)" >&2; exit 2; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "PyTorch is missing: apt-get install python3-torch" >&2; exit 2; }
source "$here/../tests/lib/rig.sh"
source "$here/../tests/lib/checkpoint_volumes.sh"
trap rig_down_all EXIT
ROUNDS=${ROUNDS:-1}
read -r -a ranks_list <<<"${RANKS:-1 2 8}"
read -r -a sizes <<<"${SIZES:-128 512}"
rows=${ROWS:-/dev/stdout}
[[ $rows == /dev/stdout ]] || : >"$rows"

ck_volume_up ck-grid 2g
dir=$(rig_dir ck-grid)
k=0
for ((r = 1; r <= ROUNDS; r++)); do
  for mib in "${sizes[@]}"; do
    for n in "${ranks_list[@]}"; do
      bytes=$((mib << 20))
      # The save takes about bytes / CK_WBPS: an interval putting its stall at 2x, then 0.5x, the budget.
      factor=$( ((k % 2 == 0)) && echo 0.5 || echo 2)
      k=$((k + 1))
      interval=$(awk -v b="$bytes" -v w="$CK_WBPS" -v s="$CK_MAX_STALL" -v f="$factor" \
        'BEGIN {printf "%d", b / w / s * f + 0.5}')
      p=$(ck_predict "$dir" "$n" "$bytes" "${interval}s")
      m=$(ck_measure "$dir" "$n" $((bytes / n)))
      row=$(ck_compare "$p" "$m" "$interval")
      printf '%s\t%s\t%s\t%s\n' "$r" "$mib" "$interval" "$row" >>"$rows"
      echo "checkpoint_grid: $mib MiB from $n ranks every ${interval}s, round $r: save $(cut -f3,4 <<<"$row" | tr '\t' '/') s," \
        "restore $(cut -f6,7 <<<"$row" | tr '\t' '/') s (predicted/measured), verdict $(cut -f11 <<<"$row")," \
        "agrees $(cut -f13 <<<"$row")" >&2
    done
  done
done
