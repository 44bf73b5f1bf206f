#!/usr/bin/env bash
# iogate's predicted accelerator utilisation (AU) against a real PyTorch DataLoader's measured AU,
# on rig volumes capped in both IOPS and bandwidth, for 1, 2, 4 and 8 emulated accelerators.
#
#   bash bench/au_grid.sh                       # the grid; rows on stdout (TSV), progress on stderr
#   ROWS=FILE ROUNDS=2 RUNTIME=15 PROBE_RUNTIME=5s VOLUMES="gp3 sata" ACCELS="1 8" bash bench/au_grid.sh
#   AU_PREDICT=probe bash bench/au_grid.sh      # the dataset probe + arithmetic, not the verdict
#
# Volumes and demand are in tests/lib/au_volumes.sh (every rate x0.1: 250 samples/s per accelerator, a
# 0.90 floor, 2 loader workers, batch 64, files of 20-200 KiB). Per volume: a tmpfs-backed rig with
# the caps and a dataset of FILES files, then per accelerator count N and round: iogate's
# prediction (iogate preflight --gpus N, its demand object; PROBE_RUNTIME; in the rig's cgroup) and the DataLoader's
# measured AU (tests/lib/dataloader_au.py, RUNTIME seconds of measured steps, first step excluded),
# back to back on the same files. Last, the same loop device without a cap, at the highest demand
# (N = the largest count) and at twice it: the client itself (the loader's samples/s at AU < 1 is
# its ceiling on this machine), not judged against the goals.
# Each row: round, volume, caps, then tests/lib/au_volumes.sh's AU_FIELDS. Needs root (the rig).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
IOGATE=${IOGATE:-$here/../build/iogate}
[[ $(id -u) -eq 0 ]] || { echo "bench/au_grid.sh needs root (loop devices, cgroups)" >&2; exit 2; }
[[ -x $IOGATE ]] || { echo "build iogate first: bash scripts/build.sh" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed (bash scripts/install-deps.sh)" >&2; exit 2; }
source "$here/../tests/lib/rig.sh"
source "$here/../tests/lib/au_volumes.sh"
au_check_torch >&2 || exit 2
trap rig_down_all EXIT
ROUNDS=${ROUNDS:-1}
RUNTIME=${RUNTIME:-15}
PROBE_RUNTIME=${PROBE_RUNTIME:-5s}
FILES=${FILES:-6000}
read -r -a volumes <<<"${VOLUMES:-gp3 sata nvme hdd}"
read -r -a accels <<<"${ACCELS:-1 2 4 8}"
rows=${ROWS:-/dev/stdout}
[[ $rows == /dev/stdout ]] || : >"$rows"

run_volume() {  # LABEL RIOPS RBPS ACCELS...
  local label=$1 riops=$2 rbps=$3 rig="au-$1" caps p m row
  shift 3
  caps=$( [[ -z $riops ]] && echo "no cap" ||
    awk -v i="$riops" -v b="$rbps" 'BEGIN {printf "%d IOPS, %.1f MB/s", i, b / 1e6}')
  echo "au_grid: $label ($caps): $FILES files…" >&2
  au_volume_up "$rig" "$riops" "$rbps" 1g "$FILES"
  local data
  data=$(rig_dir "$rig")/data
  for ((r = 1; r <= ROUNDS; r++)); do
    for n in "$@"; do
      p=$(au_predict "$rig" "$data" "$n" "$PROBE_RUNTIME") || true
      [[ -n $p ]] || { echo "au_grid: $label N=$n: no prediction from iogate" >&2; exit 1; }
      m=$(au_measure "$rig" "$data" "$n" "$RUNTIME")
      row=$(au_compare "$p" "$m" "$riops" "$rbps")
      printf '%s\t%s\t%s\t%s\n' "$r" "$label" "$caps" "$row" >>"$rows"
      echo "au_grid: $label N=$n round $r: predicted $(jq .predicted_au <<<"$p") measured $(jq .au <<<"$m")" \
        "(iogate $(jq '.samples_per_s_delivered | round' <<<"$p"), loader $(jq .samples_per_s <<<"$m") samples/s," \
        "bound: $(cut -f15,16 <<<"$row" | tr '\t' ' ') reads a sample;" \
        "loader waited $(jq .wait_s <<<"$m") s, slept $(jq .slept_s <<<"$m") s of $(jq .wall_s <<<"$m") s)" >&2
    done
  done
  rig_down "$rig"
}

for v in "${volumes[@]}"; do
  spec=""
  for s in "${AU_VOLUMES[@]}"; do [[ ${s%%:*} == "$v" ]] && spec=$s; done
  [[ -n $spec ]] || { echo "au_grid: VOLUMES: no volume named $v (tests/lib/au_volumes.sh AU_VOLUMES)" >&2; exit 2; }
  IFS=: read -r label riops rbps <<<"$spec"
  run_volume "$label" "$riops" "$rbps" "${accels[@]}"
done
max=$(printf '%s\n' "${accels[@]}" | sort -n | tail -1)
IFS=: read -r label riops rbps <<<"$AU_UNCAPPED"
run_volume "$label" "$riops" "$rbps" "$max" $((2 * max))
