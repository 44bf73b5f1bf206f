# io_setup failing with EAGAIN (fs.aio-max-nr exhausted) is a clear error naming the sysctl.
source "$(dirname "$0")/lib.sh"
need_root "lowering fs.aio-max-nr"
old=$(cat /proc/sys/fs/aio-max-nr)
in_use=$(cat /proc/sys/fs/aio-nr)
# Leave room for what others already hold, but not for 8 jobs × QD128 more.
echo $((in_use + 64)) >/proc/sys/fs/aio-max-nr 2>/dev/null || skip "cannot write fs.aio-max-nr (read-only /proc/sys)"
on_exit "echo $old >/proc/sys/fs/aio-max-nr"
code=0
"$IOGATE" probe "$SCRATCH" --size 16m --iodepth 128 --numjobs 8 --runtime 1s 2>"$SCRATCH/err" >/dev/null || code=$?
echo "$old" >/proc/sys/fs/aio-max-nr
[[ $code -eq 3 ]] || fail "exit $code, want 3: $(cat "$SCRATCH/err")"
grep -q "fs.aio-max-nr" "$SCRATCH/err" || fail "the error does not name fs.aio-max-nr: $(cat "$SCRATCH/err")"
[[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "want one line: $(cat "$SCRATCH/err")"
pass "$(cat "$SCRATCH/err")"
assert_no_test_files "$SCRATCH"
