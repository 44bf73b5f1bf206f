# iogate detect on this machine's real /proc and /sys: /, a temp dir, /dev/shm, a loop device.
source "$(dirname "$0")/lib.sh"
out="$SCRATCH/d.json"
"$IOGATE" detect / --output-format json >"$out"
root_dev=$(findmnt -n -o SOURCE /)
assert_jq "$out" '.schema == "iogate.detect/v1" and .path == "/" and .mount.point == "/"' "/ resolves to the root mount"
assert_jq "$out" '.mount.source == "'"$root_dev"'"' "root source $root_dev"
if [[ $root_dev == /dev/vd* ]]; then
  assert_jq "$out" '.class == "virtio" and .stack[0].transport == "virtio"' "the virtio root disk is virtio, whatever rotational says"
  assert_jq "$out" '.reason | test("virtio")' "the reason names virtio"
fi
"$IOGATE" detect "$SCRATCH" --output-format json >"$SCRATCH/t.json"
assert_jq "$SCRATCH/t.json" '.class == "'"$(jq -r .class "$out")"'"' "a temp dir on / has the root's class"
"$IOGATE" detect /dev/shm --output-format json >"$out"
assert_jq "$out" '.class == "ram" and .mount.fstype == "tmpfs" and (.stack | length == 0)' "/dev/shm is ram (tmpfs)"
"$IOGATE" detect / | grep -q "^class" || fail "human output lacks the class line"
pass "human output"

code=0
"$IOGATE" detect "$SCRATCH/nope" 2>"$SCRATCH/err" || code=$?
[[ $code -eq 2 && $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "nonexistent path: exit $code, $(cat "$SCRATCH/err")"
pass "nonexistent path: exit 2: $(cat "$SCRATCH/err")"

need_root "a loop device"
img="$SCRATCH/disk.img"
truncate -s 64M "$img"
dev=$(losetup --find --show "$img" 2>/dev/null) || skip "losetup failed"
on_exit "losetup -d '$dev'"
mkfs.ext4 -q -F "$dev"
mkdir -p "$SCRATCH/mnt"
mount "$dev" "$SCRATCH/mnt" || skip "mount failed"
on_exit "umount -l '$SCRATCH/mnt'"
"$IOGATE" detect "$SCRATCH/mnt" --output-format json >"$out"
root_class=$(jq -r .class "$SCRATCH/t.json")
assert_jq "$out" '.stack[0].kind == "loop" and .stack[0].name == "'"$(basename "$dev")"'"' "the mount is on the loop device"
assert_jq "$out" '.stack[0].backing_file == "'"$img"'" and .stack[0].children[0].kind == "file"' "loop → its backing file"
assert_jq "$out" '.class == "'"$root_class"'"' "loop over a file on / has the class of the disk under it ($root_class)"
