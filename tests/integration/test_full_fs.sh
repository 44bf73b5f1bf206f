# A file system without room for the test file: a clear error that suggests --size, exit 3,
# nothing left behind.
source "$(dirname "$0")/lib.sh"
need_root "a loop-mounted small file system"
img="$SCRATCH/small.img"
truncate -s 48M "$img"
mkfs.ext4 -q -F "$img" || fail "mkfs.ext4"
mnt="$SCRATCH/small"
mkdir -p "$mnt"
mount -o loop "$img" "$mnt" || skip "loop mount failed"
on_exit "umount -l '$mnt'"
code=0
"$IOGATE" probe "$mnt" --size 1g --runtime 1s 2>"$SCRATCH/err" >/dev/null || code=$?
[[ $code -eq 3 ]] || fail "exit $code, want 3: $(cat "$SCRATCH/err")"
grep -q "not enough space" "$SCRATCH/err" || fail "no space message: $(cat "$SCRATCH/err")"
grep -q -- "--size" "$SCRATCH/err" || fail "does not suggest --size: $(cat "$SCRATCH/err")"
[[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "expected one line: $(cat "$SCRATCH/err")"
pass "clear space error: $(cat "$SCRATCH/err")"
assert_no_test_files "$mnt"
# The suggested size works.
size=$(grep -o -- '--size [0-9a-z]*' "$SCRATCH/err" | awk '{print $2}')
"$IOGATE" probe "$mnt" --size "$size" --runtime 1s --ramp 0 --output-format json >"$SCRATCH/ok.json"
assert_jq "$SCRATCH/ok.json" '.jobs[0].read.total_ios > 0' "the suggested --size $size runs"
assert_no_test_files "$mnt"
