# Sparse files lie: a hole-only file is refused; a partly written one is read only where written.
source "$(dirname "$0")/lib.sh"
truncate -s 1G "$SCRATCH/holes.bin"
code=0
"$IOGATE" probe "$SCRATCH" --file "$SCRATCH/holes.bin" --runtime 1s 2>"$SCRATCH/err" >/dev/null || code=$?
[[ $code -eq 3 ]] || fail "hole-only file: exit $code, want 3"
grep -q "holes" "$SCRATCH/err" || fail "no mention of holes: $(cat "$SCRATCH/err")"
pass "hole-only file refused: $(cat "$SCRATCH/err")"

truncate -s 256M "$SCRATCH/part.bin"
dd if=/dev/urandom of="$SCRATCH/part.bin" bs=1M count=16 seek=64 conv=notrunc status=none
sync "$SCRATCH/part.bin"
out="$SCRATCH/p.json"
quick_probe "$SCRATCH" --file "$SCRATCH/part.bin" >"$out"
assert_jq "$out" '.target.files[0].readable_bytes == 16777216' "only the 16 MiB that hold data are read"
assert_jq "$out" '[.warnings[] | test("holes")] | any' "a warning names the holes"
assert_jq "$out" '.diskstats.available == false or (.diskstats.reads_per_s * .diskstats.interval_ns / 1e9 >= 0.9 * .aggregate.read.total_ios)' "reads reached the device"
