# A probe on ext4 on a loop device: the loop device's diskstats are sampled.
source "$(dirname "$0")/lib.sh"
need_root "losetup"
img="$SCRATCH/disk.img"
truncate -s 256M "$img"
dev=$(losetup --find --show --direct-io=on "$img" 2>/dev/null) || skip "losetup failed (no loop devices here)"
on_exit "losetup -d '$dev'"
mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 on $dev"
mnt="$SCRATCH/mnt"
mkdir -p "$mnt"
mount "$dev" "$mnt" || skip "mount $dev failed"
on_exit "umount -l '$mnt'"
out="$SCRATCH/l.json"
quick_probe "$mnt" >"$out"
name=$(basename "$dev")
assert_jq "$out" '.diskstats.available == true and .diskstats.device == "'"$name"'"' "diskstats of $name"
assert_jq "$out" '.diskstats.reads_per_s > 0 and .diskstats.util_percent > 0' "the loop device was busy"
assert_jq "$out" '.target.fs_type == "ext4" and .target.mount_point == "'"$mnt"'"' "mount resolved"
assert_jq "$out" '.jobs[0].read.total_ios > 0' "reads measured"
assert_no_test_files "$mnt"

# The raw block device, read-only, as fio's filename=/dev/loopN.
umount "$mnt"
quick_probe "$dev" >"$out"
assert_jq "$out" '.target.fs_type == "block device" and .target.files[0].size_bytes == 268435456' "raw block device target"
assert_jq "$out" '.target.page_cache == false and .diskstats.device == "'"$name"'"' "raw device: its own diskstats, not /dev's tmpfs"
assert_jq "$out" '.jobs[0].read.total_ios > 0' "raw device reads measured"
code=0
"$IOGATE" probe "$dev" --rw randwrite 2>"$SCRATCH/err" >/dev/null || code=$?
[[ $code -eq 2 ]] || fail "randwrite on a raw device: exit $code, want 2"
pass "never writes to a device it did not create: $(cat "$SCRATCH/err")"
