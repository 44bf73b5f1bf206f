#!/usr/bin/env bash
# Dataset mode on a FUSE network file system against a real PyTorch DataLoader (issue 33): sshfs
# over a loopback OpenSSH server (tests/lib/sshfs.sh) whose disk is a rig volume capped at 600 read
# IOPS and 30 MB/s (tests/lib/rig.sh), holding 5,000 files of 64 KiB ("64k", the issue's file size) or of
# 20-200 KiB ("imagenet", tests/lib/au_volumes.sh's). Each reader starts on a cold mount (sshfs_cold: a
# fresh mount, the server's pages of the dataset dropped), 2 workers each; 5,000 files so that no
# reader reaches a second epoch, which the server would serve from its memory:
#   iogate        probe --mode dataset, the headline (a first epoch: files listed, never looked up)
#   iogate-warm   the same run's warm-metadata epoch (files looked up just before)
#   dataloader    tests/lib/dataloader_au.py, 4 accelerators of 250 samples/s (more than the volume
#                 feeds, so it reads as fast as it can), listing by name as ImageFolder does
#   dataloader-stat  the same, every file stat'ed while listing (--stat-listing): metadata warm,
#                 as the old iogate scan left it
#
#   bench/netfs.sh [ROUNDS]    (default 3)
# Prints rows: tree, round, reader, samples_per_s, lookup_p50_ns (iogate rows), limit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${1:-3}
IOGATE=${IOGATE:-$here/../build/iogate}
[[ $(id -u) -eq 0 ]] || { echo "bench/netfs.sh needs root (the rig, sshd, FUSE)" >&2; exit 2; }
source "$here/../tests/lib/rig.sh"
source "$here/../tests/lib/sshfs.sh"
source "$here/../tests/lib/au_volumes.sh"
why=$(sshfs_check) || { echo "bench/netfs.sh: $why" >&2; exit 2; }
au_check_torch >&2 || exit 2
trap 'sshfs_down_all; rig_down_all' EXIT
trap 'exit 143' TERM INT

for tree in 64k:64:64 imagenet:$AU_MIN_KIB:$AU_MAX_KIB; do
  IFS=: read -r name lo hi <<<"$tree"
  AU_MIN_KIB=$lo AU_MAX_KIB=$hi au_volume_up "netfs-$name" 600 30000000 1g 5000 >&2
  sshfs_up "netfs-$name" "$(rig_dir "netfs-$name")/data" --run rig_run "netfs-$name" -- -o Ciphers=aes128-gcm@openssh.com
  mnt=$(sshfs_mnt "netfs-$name")
  for round in $(seq "$ROUNDS"); do
    sshfs_cold "netfs-$name"
    out=$("$IOGATE" probe --mode dataset "$mnt" --workers 2 --runtime 5s --output-format json)
    jq -r --arg t "$name" --arg r "$round" '
      [$t, $r, "iogate", .loader.samples_per_s, .loader.open_ns.p50, .limit.resource],
      [$t, $r, "iogate-warm", .metadata.warm_samples_per_s, .metadata.lookup_ns.p50, "-"] | @tsv' <<<"$out"
    for listing in "" --stat-listing; do
      sshfs_cold "netfs-$name"
      "$AU_PY" "$here/../tests/lib/dataloader_au.py" "$mnt" --accelerators 4 --samples-per-s 250 --workers 2 --batch 64 \
        --runtime 6 --seed "$RANDOM" $listing |
        jq -r --arg t "$name" --arg r "$round" --arg who "dataloader${listing:+-stat}" '[$t, $r, $who, .samples_per_s, "-", "-"] | @tsv'
    done
  done
  sshfs_down "netfs-$name"
  rig_down "netfs-$name"
done
