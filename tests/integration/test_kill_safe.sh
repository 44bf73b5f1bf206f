# A probe killed without a chance to clean up (SIGKILL: an OOM kill, a pod's grace period over)
# must not block the next run on the volume. In a container iogate is PID 1, so the restarted
# initContainer has the dead run's PID: the file name once held only size and PID, the new run's
# O_EXCL create failed with exit 3 forever. Here each run is PID 1 of a PID namespace of its own:
#   - SIGKILL mid-run leaves the test file; the next run (PID 1 again) passes and removes it;
#   - two runs as PID 1 at once on one directory (two pods on one PVC) both pass, and neither
#     removes the other's file while it lives (each holds an flock on its own).
source "$(dirname "$0")/lib.sh"
need_root "a PID namespace (unshare --pid)"
need_tool unshare
DIR="$SCRATCH/volume"
mkdir "$DIR"
# as_pid1 ARGS...: iogate probe DIR ARGS as PID 1 of a new PID namespace.
as_pid1() { unshare --pid --fork --kill-child -- "$IOGATE" probe "$DIR" --size 64m "$@"; }

as_pid1 --runtime 60s --output-format json >/dev/null 2>"$SCRATCH/killed.err" &
holder=$!
for _ in $(seq 100); do [[ -n $(ls -A "$DIR") ]] && break; sleep 0.1; done
sleep 1  # into the measurement, past the fill
child=$(pgrep -f "^$IOGATE probe $DIR --size 64m --runtime 60s") || fail "no iogate under unshare: $(cat "$SCRATCH/killed.err")"
kill -KILL "$child"
wait "$holder" || true
left=$(ls -A "$DIR")
[[ $left == .iogate-probe-67108864.1.*.tmp ]] || fail "SIGKILL left '$left', want the PID 1 run's test file"
pass "SIGKILL of iogate as PID 1 left $left"

as_pid1 --runtime 1s --output-format json >"$SCRATCH/next.json" 2>"$SCRATCH/next.err" ||
  fail "the next run as PID 1 failed: $(cat "$SCRATCH/next.err")"
assert_jq "$SCRATCH/next.json" '.target.test_file_created == true and .aggregate.read.iops > 0' "the next run as PID 1 measured"
grep -q "removed .*$left.*killed" "$SCRATCH/next.err" || fail "the next run did not say it removed $left: $(cat "$SCRATCH/next.err")"
assert_no_test_files "$DIR"

# Two pods' initContainers on one PVC: PID 1 both, at the same time.
as_pid1 --runtime 3s --output-format json >"$SCRATCH/a.json" 2>"$SCRATCH/a.err" & a=$!
as_pid1 --runtime 3s --output-format json >"$SCRATCH/b.json" 2>"$SCRATCH/b.err" & b=$!
wait "$a" || fail "run a (PID 1 beside b): $(cat "$SCRATCH/a.err")"
wait "$b" || fail "run b (PID 1 beside a): $(cat "$SCRATCH/b.err")"
! grep -q "removed" "$SCRATCH/a.err" "$SCRATCH/b.err" || fail "a live run's test file was removed: $(cat "$SCRATCH/a.err" "$SCRATCH/b.err")"
assert_jq "$SCRATCH/a.json" '.target.test_file_created == true' "two runs as PID 1 at once on one directory: both measured, neither removed the other's file"
assert_no_test_files "$DIR"
