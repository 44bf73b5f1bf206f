#!/usr/bin/env bash
# Every benchmark of the probe, and bench/RESULTS.md regenerated from what they measured.
#
#   bash bench/run.sh                      # all sections (about an hour on 2 cores)
#   bash bench/run.sh parity_rig verdict   # only these; the others' last rows are kept
#   ROUNDS=5 RUNTIME=5 DIR=/var/tmp bash bench/run.sh
#
# Sections: machine, parity (= parity_disk + parity_rig: bench/parity.sh on the disk and on a rig
# capped at 50k IOPS and 500 MiB/s each way), verdict (bench/verdict.sh
# on rigs capped at 3k/16k/50k read IOPS and on the disk), dataset (bench/dataset_vs_python.sh, and
# the sweep's advice on a 2,000 IOPS rig and on the disk), dataset_verdict (bench/dataset_verdict.sh:
# time to a dataset verdict on 1.3M files and on a capped rig, before and after its bounds), au
# (bench/au_grid.sh: iogate's predicted accelerator utilisation against a real PyTorch DataLoader's
# on rigs capped like gp3, SATA, NVMe and HDD volumes, 1-8 accelerators; about 12 minutes a round),
# au_shards (the same with records streamed out of 16 MiB tar shards by the DataLoader and
# iogate; about 6 minutes), checkpoint (bench/checkpoint_grid.sh: iogate's predicted save and restore against real torch.save
# and torch.load ranks, 1-8 ranks, on a rig capped at 50 MB/s of writes, writeback included; about
# 4 minutes), netfs (bench/netfs.sh: dataset mode on sshfs over a capped server against a real PyTorch
# DataLoader, first epoch and warm metadata; about 5 minutes), stampede (bench/stampede.sh: N=512 preflights, each its own pod, on one PVC against a real
# apiserver with its audit log; the row replaces the one of the same LABEL, so a "before" stays),
# jobwide (tests/e2e/test_jobwide.sh: one pod alone and 4 pods of one job, each its own preflight
# process, on a capped sshfs server against a real apiserver; about 3 minutes),
# budgets (peak RSS, preflight wall time,
# binary size), fleet (bench/fleet.sh: 5,000 kwok nodes on the real API server, the webhook under a
# burst of 1,000 GPU pods at 200/s, its memory, node cache and lag, the agents' API write rate;
# about 15 minutes; not in the default list: run it as `bash bench/run.sh fleet`). Raw rows go to bench/results/SECTION.tsv; bench/results.py turns them into
# bench/RESULTS.md. Needs root (the rigs) and an idle machine: anything else running is measured too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${RESULTS_DIR:-$here/results}
mkdir -p "$out"
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-5}
DIR=${DIR:-/var/tmp}
IOGATE=${IOGATE:-$root/build/iogate}
export IOGATE
[[ $(id -u) -eq 0 ]] || { echo "bench/run.sh needs root (loop devices, cgroups, drop_caches)"; exit 2; }
bash "$here/../tests/lib/rig.sh" check >/dev/null || { bash "$here/../tests/lib/rig.sh" check; exit 2; }
sections=("$@")
((${#sections[@]})) || sections=(machine parity verdict dataset dataset_verdict au au_shards checkpoint netfs stampede jobwide budgets)
# The rig that stands in for a fast provisioned volume: tmpfs-backed, so the cap, not the host's
# disk, sets the pace. 50k IOPS each way and 500 MiB/s each way.
RIG_FAST="--backing tmpfs --riops 50000 --wiops 50000 --rbps 524288000 --wbps 524288000"

section_machine() {
  local disk
  disk=$(findmnt -no SOURCE --target "$DIR" | sed 's|/dev/||')
  {
    printf 'date\t%s\n' "$(date -u +%Y-%m-%dT%H:%MZ)"
    printf 'commit\t%s\n' "$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- agent || echo '+changes')"
    printf 'iogate\t%s\n' "$("$IOGATE" --version 2>&1 | head -1)"
    printf 'fio\t%s\n' "$(fio --version)"
    printf 'kernel\t%s\n' "$(uname -r)"
    printf 'cpu\t%s × %s\n' "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    printf 'memory\t%s\n' "$(free -g | awk '/Mem:/ {print $2 " GiB"}')"
    printf 'disk\t%s (%s, rotational=%s, scheduler %s) under %s, %s\n' "$disk" \
      "$(cat "/sys/block/$disk/device/model" 2>/dev/null || echo virtio)" "$(cat "/sys/block/$disk/queue/rotational")" \
      "$(sed 's/.*\[\(.*\)\].*/\1/' "/sys/block/$disk/queue/scheduler")" "$DIR" "$(stat -f -c %T "$DIR")"
    printf 'rig\t%s\n' "$(bash "$here/../tests/lib/rig.sh" check | tr '\n' ';' | sed 's/;$//')"
    printf 'load\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
  } >"$out/machine.tsv"
}

section_parity_disk() {
  TARGET=disk bash "$here/parity.sh" "$DIR" "$ROUNDS" "$RUNTIME" >"$out/parity_disk.tsv.new"
  mv "$out/parity_disk.tsv.new" "$out/parity_disk.tsv"
}
section_parity_rig() {
  TARGET="rig 50k" RIG=$RIG_FAST bash "$here/parity.sh" "$DIR" "$ROUNDS" "$RUNTIME" >"$out/parity_rig.tsv.new"
  mv "$out/parity_rig.tsv.new" "$out/parity_rig.tsv"
}
section_parity() { section_parity_disk && section_parity_rig; }

section_verdict() {
  {
    for cap in 3000 16000 50000; do CAP=$cap bash "$here/verdict.sh" "$DIR" "$ROUNDS" 30; done
    bash "$here/verdict.sh" "$DIR" "$ROUNDS" 30
  } >"$out/verdict.tsv.new"
  mv "$out/verdict.tsv.new" "$out/verdict.tsv"
}

section_dataset() {
  # The issue's dataset: 6,000 files of ~60 KiB, cold page cache before each run.
  FILES=6000 MIN_KIB=30 MAX_KIB=90 ROWS="$out/dataset.tsv.new" \
    bash "$here/dataset_vs_python.sh" "$DIR" "$ROUNDS" "$RUNTIME" 1 2 4 8 16 >&2
  mv "$out/dataset.tsv.new" "$out/dataset.tsv"
  # The sweep's advice where the storage is the limit (a 2,000 IOPS cap) and where it is not.
  source "$here/../tests/lib/rig.sh"
  trap rig_down_all EXIT
  rig_up ds-2k --backing tmpfs --riops 2000 --size 1g >/dev/null
  local rig_data data
  rig_data=$(rig_dir ds-2k)/data
  data=$(mktemp -d "$DIR/iogate-dsadvice.XXXXXX")
  for d in "$rig_data" "$data"; do
    python3 "$root/tests/integration/make_dataset.py" "$d" --files 6000 --dirs 60 --subdirs 10 --min-kib 30 --max-kib 90 --large 0 >/dev/null
  done
  sync
  {
    for where in "cap 2000:$rig_data:rig_run ds-2k" "disk:$data:"; do
      IFS=: read -r label d runner <<<"$where"
      echo 3 >/proc/sys/vm/drop_caches
      $runner "$IOGATE" probe --mode dataset "$d" --workers 1,2,4,8,16 --runtime 3s --target-samples-per-s 5000 \
        --output-format json | jq -r --arg t "$label" \
        '[$t, .loader.knee_workers, ([.loader.sweep[] | "\(.workers):\(.samples_per_s | round)"] | join(" ")),
          ([.recommendations[] | select(.id == "workers-for-target") | .message] | first // "-")] | @tsv'
    done
  } >"$out/dataset_advice.tsv"
  rm -rf "$data"
  rig_down ds-2k
}

# Time to a dataset verdict on ImageNet's 1.3M files and on a capped rig, before and after the
# scan's file budget and the loader's early stop (bench/dataset_verdict.sh).
section_dataset_verdict() {
  bash "$here/dataset_verdict.sh" "$DIR" "$ROUNDS" >"$out/dataset_verdict.tsv.new"
  mv "$out/dataset_verdict.tsv.new" "$out/dataset_verdict.tsv"
}

section_au() {
  ROWS="$out/au.tsv.new" bash "$here/au_grid.sh"
  mv "$out/au.tsv.new" "$out/au.tsv"
}

# The same proof for shard streams: records out of 16 MiB tar shards (64 KiB each), a DataLoader
# streaming them with tarfile against iogate's prediction from the shards (bench/au_grid.sh with
# AU_SHARDS; FILES is then the number of shards).
section_au_shards() {
  AU_SHARDS=16m AU_SAMPLE_SIZE=64k FILES=${SHARD_FILES:-48} ROWS="$out/au_shards.tsv.new" bash "$here/au_grid.sh"
  mv "$out/au_shards.tsv.new" "$out/au_shards.tsv"
}

section_checkpoint() {
  ROWS="$out/checkpoint.tsv.new" bash "$here/checkpoint_grid.sh"
  mv "$out/checkpoint.tsv.new" "$out/checkpoint.tsv"
}

section_netfs() {
  bash "$here/netfs.sh" "$ROUNDS" >"$out/netfs.tsv.new"
  mv "$out/netfs.tsv.new" "$out/netfs.tsv"
}

section_stampede() {
  ROWS="$out/stampede.tsv" bash "$here/stampede.sh" >&2
}

section_jobwide() {
  JOBWIDE_TSV="$out/jobwide.tsv" IOGATE="$IOGATE" bash "$root/tests/e2e/test_jobwide.sh" >&2
}

section_budgets() {
  local work
  work=$(mktemp -d "$DIR/iogate-budget.XXXXXX")
  {
    # Peak RSS of the whole process (getrusage of the child), with the test file laid out first.
    for shape in "1 32" "4 32" "16 256"; do
      read -r jobs depth <<<"$shape"
      kib=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
        "$IOGATE" probe "$work" --size 256m --numjobs "$jobs" --iodepth "$depth" --runtime 3s --ramp 500ms)
      printf 'rss\tprobe numjobs %s iodepth %s\t%s\n' "$jobs" "$depth" "$((kib * 1024))"
    done
    # preflight from process start to exit, test-file layout (256 MiB) and removal included,
    # against the image-classification profile's floor (10,000 IOPS), no API server.
    for ((r = 1; r <= ROUNDS; r++)); do
      local t0 t1
      t0=$(date +%s%N)
      "$IOGATE" preflight "$work" --policy profile:image-classification --no-api >/dev/null 2>&1 || true
      t1=$(date +%s%N)
      printf 'preflight_wall\tround %s\t%s\n' "$r" "$(((t1 - t0) / 1000))"
    done
    printf 'binary\tbuild/iogate (with symbols)\t%s\n' "$(stat -c %s "$IOGATE")"
    strip -o "$work/iogate.stripped" "$IOGATE"
    printf 'binary\tstripped, as in the image\t%s\n' "$(stat -c %s "$work/iogate.stripped")"
  } >"$out/budgets.tsv"
  rm -rf "$work"
}

# The fleet at scale (bench/fleet.sh; N_NODES, N_PODS, RATE, LAG_NODES pass through). Rows are
# labelled by the commit (or FLEET_LABEL): this run's replace those of its label, others are kept,
# so the "before" and "after" of a change stand side by side.
section_fleet() {
  bash "$here/fleet.sh" >"$out/fleet.tsv.run"
  local label
  label=$(head -1 "$out/fleet.tsv.run" | cut -f1)
  {
    [[ -f "$out/fleet.tsv" ]] && awk -F'\t' -v l="$label" '$1 != l' "$out/fleet.tsv"
    cat "$out/fleet.tsv.run"
  } >"$out/fleet.tsv.new"
  mv "$out/fleet.tsv.new" "$out/fleet.tsv"
  rm -f "$out/fleet.tsv.run"
}

for s in "${sections[@]}"; do
  echo "bench: $s…" >&2
  "section_$s"
done
python3 "$here/results.py" "$out" >"${RESULTS_MD:-$here/RESULTS.md}"
echo "bench: wrote ${RESULTS_MD:-$here/RESULTS.md}" >&2
