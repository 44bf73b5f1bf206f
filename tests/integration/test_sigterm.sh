# SIGTERM (and SIGINT) mid-run, and during the test-file fill, leave no test file behind.
source "$(dirname "$0")/lib.sh"
for sig in TERM INT; do
  "$IOGATE" probe "$SCRATCH" --size 64m --runtime 60s --output-format json >"$SCRATCH/out.json" 2>"$SCRATCH/err" &
  pid=$!
  # Wait until the measurement runs (the file is complete once the marker is written).
  for _ in $(seq 100); do
    ls "$SCRATCH"/.iogate-probe-* >/dev/null 2>&1 && break
    sleep 0.1
  done
  sleep 1.5
  ls "$SCRATCH"/.iogate-probe-* >/dev/null 2>&1 || fail "the test file never appeared"
  kill -"$sig" "$pid"
  code=0
  wait "$pid" || code=$?
  [[ $code -eq 3 ]] || fail "SIG$sig: exit $code, want 3"
  grep -q "interrupted" "$SCRATCH/err" || fail "no interruption message: $(cat "$SCRATCH/err")"
  assert_jq "$SCRATCH/out.json" '.stop_reason == "signal"' "SIG$sig: partial report with stop_reason signal"
  assert_no_test_files "$SCRATCH"
done

# During the fill of a large file.
"$IOGATE" probe "$SCRATCH" --size 4g --runtime 60s >/dev/null 2>"$SCRATCH/err" &
pid=$!
for _ in $(seq 100); do
  ls "$SCRATCH"/.iogate-probe-* >/dev/null 2>&1 && break
  sleep 0.05
done
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
[[ $code -eq 3 ]] || fail "SIGTERM during fill: exit $code, want 3"
assert_no_test_files "$SCRATCH"
