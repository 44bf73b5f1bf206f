# Read-only volumes: existing files are read, nothing is written (hash and mtime unchanged),
# write workloads are refused with exit 2.
source "$(dirname "$0")/lib.sh"
data="$SCRATCH/data"
mkdir -p "$data/sub"
head -c $((24 << 20)) /dev/urandom >"$data/big.bin"
head -c $((8 << 20)) /dev/urandom >"$data/sub/medium.bin"
head -c 1000 /dev/urandom >"$data/tiny.txt"
snapshot() { (cd "$data" && find . -type f -printf '%p %s %T@\n' | sort && find . -type f -exec sha256sum {} + | sort); }
before=$(snapshot)

check_unchanged() {
  [[ "$(snapshot)" == "$before" ]] || fail "files under $data changed"
  pass "nothing under the volume changed (hashes, sizes, mtimes)"
  assert_no_test_files "$data"
}

# 1. A file with no write permission, read with --file, as a non-root user if we can be one.
chmod 0444 "$data/big.bin"
out="$SCRATCH/f.json"
quick_probe "$SCRATCH" --file "$data/big.bin" >"$out"
assert_jq "$out" '.target.files | length == 1 and .[0].readable_bytes == 25165824' "--file reads the whole written file"
assert_jq "$out" '.jobs[0].read.total_ios > 0' "--file was read"
check_unchanged

code=0
"$IOGATE" probe "$SCRATCH" --file "$data/big.bin" --rw randwrite 2>"$SCRATCH/err" || code=$?
[[ $code -eq 2 ]] || fail "randwrite with --file: exit $code, want 2"
grep -q -- "--file" "$SCRATCH/err" || fail "the error does not name --file: $(cat "$SCRATCH/err")"
pass "randwrite with --file is refused with exit 2"

# 2. A read-only bind mount of the directory.
need_root "a read-only bind mount"
ro="$SCRATCH/ro"
mkdir -p "$ro"
mount --bind "$data" "$ro" || skip "mount --bind failed (no mount namespace privileges)"
on_exit "umount -l '$ro'"
mount -o remount,bind,ro "$ro" || skip "remount read-only failed"
quick_probe "$ro" >"$out"
assert_jq "$out" '.target.read_only == true and .target.test_file_created == false' "read-only volume detected"
assert_jq "$out" '.target.files | map(.path) | sort == ["'"$ro"'/big.bin", "'"$ro"'/sub/medium.bin"]' "the largest files were read, the tiny one skipped"
assert_jq "$out" '.jobs[0].read.total_ios > 0' "reads were measured"
assert_jq "$out" '[.warnings[] | test("read-only")] | any' "the report says it was read-only"
check_unchanged

code=0
"$IOGATE" probe "$ro" --rw randwrite 2>"$SCRATCH/err" || code=$?
[[ $code -eq 2 ]] || fail "randwrite on a read-only mount: exit $code, want 2"
[[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "expected one error line, got: $(cat "$SCRATCH/err")"
grep -q "read-only" "$SCRATCH/err" || fail "error does not say read-only: $(cat "$SCRATCH/err")"
pass "randwrite on a read-only mount is refused: $(cat "$SCRATCH/err")"
check_unchanged

# An empty read-only volume (a claim the dataset was not copied to yet) has nothing to measure:
# exit 3, one line that says so and what to do, without a flag only the probe has (preflight says
# it too).
empty="$SCRATCH/empty" empty_ro="$SCRATCH/empty-ro"
mkdir -p "$empty" "$empty_ro"
mount --bind "$empty" "$empty_ro" && on_exit "umount -l '$empty_ro'" && mount -o remount,bind,ro "$empty_ro" ||
  fail "read-only bind mount of an empty directory"
code=0
"$IOGATE" probe "$empty_ro" 2>"$SCRATCH/err" >/dev/null || code=$?
[[ $code -eq 3 ]] || fail "empty read-only volume: exit $code, want 3"
[[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "expected one error line, got: $(cat "$SCRATCH/err")"
grep -q "holds no regular file of at least 4k to read: copy the data in first" "$SCRATCH/err" ||
  fail "the error does not say what to do: $(cat "$SCRATCH/err")"
! grep -q -- "--file" "$SCRATCH/err" || fail "the error names --file, which preflight has not: $(cat "$SCRATCH/err")"
pass "an empty read-only volume: exit 3, $(cat "$SCRATCH/err")"

# A checkpoint rule on a read-only volume: the check fails saying why (a save there would fail
# too), and nothing is written.
ck_policy="$SCRATCH/ck.yaml"
printf '%s\n' 'apiVersion: iogate.io/v1' 'kind: StoragePolicy' 'mode: enforce' 'rules:' \
  '  - {name: save, demand: {checkpoint: {size: 1g, interval: 30m}}}' >"$ck_policy"
code=0
"$IOGATE" preflight "$ro" --policy "$ck_policy" --gpus 2 --no-api --output-format json >"$SCRATCH/ck.json" \
  2>"$SCRATCH/ck.err" || code=$?
[[ $code -eq 1 ]] || fail "a checkpoint rule on a read-only mount: exit $code, want 1 (the verdict fails): $(cat "$SCRATCH/ck.err")"
assert_jq "$SCRATCH/ck.json" '[.. | objects | select(.check? == "checkpoint")][0] |
  .passed == false and (.measured | test("read-only; a checkpoint cannot be saved"))' \
  "a checkpoint rule on a read-only mount fails, saying the volume is read-only"
check_unchanged

# 3. A writable mount the probe's user may not write to (a volume without fsGroup): read as a
# read-only one, but said as what it is, permission denied, not "read-only".
chmod 0755 "$data" "$data/sub" && chmod 0644 "$data/big.bin" "$data/sub/medium.bin" "$data/tiny.txt"
d=$data; while [[ $d != / ]]; do d=$(dirname "$d"); chmod a+x "$d"; done
before=$(snapshot)
setpriv --reuid 65532 --regid 65532 --clear-groups "$IOGATE" probe "$data" --size 64m --runtime 2s --ramp 500ms \
  --output-format json >"$SCRATCH/denied.json" 2>"$SCRATCH/denied.err" || fail "probe as uid 65532: $(cat "$SCRATCH/denied.err")"
assert_jq "$SCRATCH/denied.json" '.target.read_only == true and .target.test_file_created == false and
  ([.warnings[] | test("not writable by uid 65532 \\(permission denied\\)")] | any) and
  ([.warnings[] | test("is read-only")] | any | not)' "a directory uid 65532 may not write: said as permission denied, its files read"
check_unchanged
code=0
setpriv --reuid 65532 --regid 65532 --clear-groups "$IOGATE" probe "$data" --rw randwrite 2>"$SCRATCH/err" || code=$?
[[ $code -eq 2 ]] && grep -q "not writable" "$SCRATCH/err" && ! grep -q "read-only" "$SCRATCH/err" ||
  fail "randwrite where permission is denied: exit $code, $(cat "$SCRATCH/err")"
pass "randwrite where permission is denied: exit 2, $(cat "$SCRATCH/err")"
