# iogate on a FUSE network file system (issue 33): sshfs over a loopback OpenSSH server whose disk
# is a rig volume capped at 600 read IOPS and 30 MB/s (tests/lib/sshfs.sh, tests/lib/rig.sh), holding
# an ImageNet-like dataset (5,000 files of 20-200 KiB). Every reader starts on a cold mount
# (sshfs_cold: a fresh mount, the server's pages of the dataset dropped).
#  - detect names it: class network-fs, backend sshfs, the server.
#  - the block probe runs there and says what the mount did to O_DIRECT, libaio and extent
#    mapping, measured.
#  - dataset mode measures a first epoch (files listed, never looked up) and, on a network file
#    system, the warm-metadata epoch beside it.
#  - the verdict in the job's units agrees with a real PyTorch DataLoader on the cold mount, with
#    the method and tolerance of test_au_verdict.sh (same verdict, AU within 0.10). The demand is
#    100 samples/s an accelerator: one is fed (AU 1), five starve (the capped volume reads well under
#    500 samples/s, less when the machine is busy: sshfs costs CPU on both ends). A pair more than 0.10 apart is
#    measured once more, then fails. The tree has 5,000 files so that no reader gets to a second
#    epoch, which the server would read from its page cache (only the client's pages are dropped).
source "$(dirname "$0")/lib.sh"
use_rig
need_tool jq
source "$TESTS_DIR/lib/sshfs.sh"
SSHFS_STATE="$SCRATCH/sshfs"
why=$(sshfs_check) || fail "$why"
on_exit sshfs_down_all
source "$TESTS_DIR/lib/au_volumes.sh"
au_check_torch || fail "$(au_check_torch)"
AU_SPS=100
AU_BATCH=64

au_volume_up netfs 600 30000000 1g 5000 || fail "tests/lib/rig.sh up netfs and its dataset"
data=$(rig_dir netfs)/data
# The server in the rig's cgroup: its reads of the dataset pay the cap, as a file server's disk.
sshfs_up fs "$data" --run rig_run netfs -- -o Ciphers=aes128-gcm@openssh.com || fail "sshfs over the rig"
mnt=$(sshfs_mnt fs)

"$IOGATE" detect "$mnt" --output-format json >"$SCRATCH/detect.json"
assert_jq "$SCRATCH/detect.json" \
  '.class == "network-fs" and .mount.fstype == "fuse.sshfs" and .network.backend == "sshfs" and .network.servers == ["127.0.0.1"] and .network.export == "'"$(realpath "$data")"'"' \
  "detect: network-fs, backend sshfs, server 127.0.0.1, export the served directory"

# The block probe writes its test file through sshfs; the warnings carry what the mount did.
"$IOGATE" probe "$mnt" --size 32m --runtime 2s --ramp 500ms --output-format json >"$SCRATCH/probe.json" ||
  fail "iogate probe on sshfs: $(jq -r '.warnings[]?' "$SCRATCH/probe.json" 2>/dev/null)"
assert_jq "$SCRATCH/probe.json" '.aggregate.read.total_ios > 0 and .storage.class == "network-fs"' "probe: reads measured on sshfs"
assert_jq "$SCRATCH/probe.json" '[.warnings[] | select(test("server.s memory"))] | length == 1' \
  "probe: says a test file just written may be read from the server's memory"
# O_DIRECT: accepted (FUSE passes it through) or refused with a note; libaio: submission time is
# measured and the depth the kernel really held is said when io_submit blocked.
assert_jq "$SCRATCH/probe.json" \
  '(.direct == true or ([.warnings[] | select(test("O_DIRECT was refused"))] | length == 1)) and (.jobs[0].submit_ns > 0)' \
  "probe: O_DIRECT as run is reported, io_submit's time measured ($(jq -r '.jobs[0].submit_ns / .jobs[0].submit_calls / 1000 | round' "$SCRATCH/probe.json") µs a call)"
jq -r '.warnings[] | select(test("io_submit|synchronously"))' "$SCRATCH/probe.json" | sed 's/^/note: /'
assert_no_test_files "$data"
# An existing sparse file read through the mount: FUSE maps no extents and sshfs fakes st_blocks,
# so the holes cannot be skipped; the report says how the ranges were found, and warns.
truncate -s 8M "$data/sparse.bin"
"$IOGATE" probe "$mnt" --file "$mnt/sparse.bin" --runtime 1s --ramp 200ms --output-format json >"$SCRATCH/sparse.json" ||
  fail "iogate probe --file on sshfs"
rm -f "$data/sparse.bin"
assert_jq "$SCRATCH/sparse.json" \
  '.target.files[0].extent_map != "fiemap" and ([.warnings[] | select(test("maps no extents"))] | length == 1)' \
  "probe --file: extent_map $(jq -r '.target.files[0].extent_map' "$SCRATCH/sparse.json"), holes cannot be told from data, said"

# Dataset mode on a cold mount.
sshfs_cold fs
"$IOGATE" probe --mode dataset "$mnt" --workers 2 --runtime 3s --output-format json >"$SCRATCH/ds.json" ||
  fail "dataset mode on sshfs"
assert_jq "$SCRATCH/ds.json" \
  '.metadata.headline == "cold" and .metadata.measured and .metadata.files_looked_up > 0 and .metadata.lookup_ns.count > 0 and .metadata.warm.files_read > 0 and .metadata.warm.errors == 0' \
  "dataset: first epoch $(jq -r '.loader.samples_per_s | round' "$SCRATCH/ds.json") samples/s, with metadata cached $(jq -r '.metadata.warm_samples_per_s | round' "$SCRATCH/ds.json") (lookup p50 $(jq -r '.metadata.lookup_ns.p50 / 1000 | round' "$SCRATCH/ds.json") µs)"
assert_jq "$SCRATCH/ds.json" '.loader.errors == 0 and .dataset.files_sized > 0 and .dataset.file_size_bytes.p50 > 0' \
  "dataset: sizes taken after the timed reads ($(jq -r .dataset.files_sized "$SCRATCH/ds.json") files)"

# The verdict against the real DataLoader, each on a cold mount.
for n in 1 5; do
  for try in 1 2; do
    sshfs_cold fs
    p=$(au_predict netfs "$mnt" "$n" 3s) || fail "$n accelerators: iogate gave no prediction ($p)"
    sshfs_cold fs
    m=$(au_measure netfs "$mnt" "$n" 8) || fail "$n accelerators: the DataLoader failed"
    IFS=$'\t' read -r -a f <<<"$(au_compare "$p" "$m" 600 30000000)"
    what="sshfs (600 IOPS, 30 MB/s), $n accelerators of $AU_SPS samples/s: iogate ${f[2]} samples/s, predicted AU ${f[3]} (${f[9]});"
    what+=" DataLoader ${f[6]} samples/s, measured AU ${f[7]}"
    ok=$(awk -v e="${f[8]}" 'BEGIN {print (e <= 0.10 && e >= -0.10) ? 1 : 0}')
    [[ ${f[10]} == true && ${f[11]} == true && $ok == 1 ]] && break
    echo "note: $what: try $try (judged ${f[10]}, agree ${f[11]}, error ${f[8]})"
  done
  [[ ${f[10]} == true ]] || fail "$what: within 0.05 of the floor; the case is meant to be clear of it"
  [[ ${f[11]} == true ]] || fail "$what: the verdict disagrees with the DataLoader"
  [[ $ok == 1 ]] || fail "$what: prediction off by ${f[8]} (more than 0.10)"
  pass "$what: verdict agrees, error ${f[8]}"
done

sshfs_down fs
findmnt -n "$mnt" >/dev/null && fail "$mnt still mounted after sshfs_down"
pass "sshfs down: nothing mounted, state removed"
