#!/usr/bin/env bash
# Time to a verdict of `iogate probe --mode dataset`, before and after the verdict's bounds (the
# scan's file budget, --scan-files; the loader's early stop, --early-stop), on two trees:
#   imagenet  1,300,000 files of 100-120 KiB in 1,000 directories (ImageNet's shape), sparse (the
#             scan's cost is the walk and the stats, not the data), on an ext4 loop device made for
#             it (1.4M inodes) on DIR, unmounted and removed on exit; the page cache dropped
#             before each run, so the walk reads the directories from the device
#   capped    6,000 files of 100-120 KiB (real data) on a rig capped at 500 read IOPS (tests/lib/rig.sh),
#             where the loader, not the scan, takes the time
# "before" is the probe as it was: --scan-files 0 (no file budget: the 10 s and 2M-entry budgets
# only), no early stop, --no-limit (no limit measurement); "after" is --early-stop with the
# defaults (100,000 files listed, the ~1.2 s limit measurement included). Wall time from process
# start to exit.
#
#   bench/dataset_verdict.sh [DIR] [ROUNDS]     (defaults: /var/tmp, 3)
#
# Prints rows: tree, variant, round, wall_ms, scan_ms, loader_ms, files_estimate, samples_per_s,
# loader stop_reason, limit.
source "$(dirname "$0")/lib.sh"
DIR=${1:-/var/tmp}
ROUNDS=${2:-3}
[[ $(id -u) -eq 0 ]] || { echo "bench/dataset_verdict.sh needs root (a loop device, drop_caches)" >&2; exit 2; }
work=$(mktemp -d "$DIR/iogate-dsverdict.XXXXXX")
mnt="$work/mnt"
cleanup() {
  umount "$mnt" 2>/dev/null || true
  [[ -n ${loopdev:-} ]] && losetup -d "$loopdev" 2>/dev/null
  rig_down_all
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# IMAGENET=DIR: a tree made earlier the same way (the writing takes minutes on a busy machine).
if [[ -n ${IMAGENET:-} ]]; then
  train=$IMAGENET
else
  truncate -s 8g "$work/img"
  loopdev=$(losetup --find --show "$work/img")
  mkfs.ext4 -q -F -N 1400000 -E lazy_itable_init=0,lazy_journal_init=0 "$loopdev"
  mkdir -p "$mnt"
  mount "$loopdev" "$mnt"
  echo "writing 1,300,000 sparse files under $mnt…" >&2
  python3 "$bench_root/tests/integration/make_dataset.py" "$mnt/train" --files 1300000 --dirs 1000 --subdirs 1 \
    --min-kib 100 --max-kib 120 --large 0 --sparse >/dev/null
  train=$mnt/train
fi

rig_up dsv-500 --backing tmpfs --riops 500 --size 1g >/dev/null
capped=$(rig_dir dsv-500)/ds
python3 "$bench_root/tests/integration/make_dataset.py" "$capped" --files 6000 --dirs 60 --subdirs 6 \
  --min-kib 100 --max-kib 120 --large 0 >/dev/null

run() {  # TREE VARIANT ROUND RUNNER... -- ARGS...
  local tree=$1 variant=$2 round=$3 t0 t1 json
  shift 3
  sync
  echo 3 >/proc/sys/vm/drop_caches
  json="$work/out.json"
  t0=$(date +%s%N)
  "$@" --workers 2 --output-format json >"$json"
  t1=$(date +%s%N)
  jq -r --arg tree "$tree" --arg v "$variant" --arg r "$round" --arg wall "$(((t1 - t0) / 1000000))" \
    '[$tree, $v, $r, $wall, (.dataset.scan_ns / 1e6 | round), (.loader.elapsed_ns / 1e6 | round),
      .dataset.files_estimate, (.loader.samples_per_s | round), .loader.stop_reason, .limit.resource] | @tsv' "$json"
}

for ((r = 1; r <= ROUNDS; r++)); do
  run imagenet before "$r" "$IOGATE" probe --mode dataset "$train" --scan-files 0 --no-limit
  run imagenet after "$r" "$IOGATE" probe --mode dataset "$train" --early-stop
  run capped before "$r" rig_run dsv-500 "$IOGATE" probe --mode dataset "$capped" --scan-files 0 --no-limit
  run capped after "$r" rig_run dsv-500 "$IOGATE" probe --mode dataset "$capped" --early-stop
done
