# SIGTERM (and SIGINT) mid-run, and during the test-file fill, leave no test file behind.
source "$(dirname "$0")/lib.sh"
for sig in TERM INT; do
  "$IOGATE" probe "$SCRATCH" --size 64m --runtime 60s --output-format json >"$SCRATCH/out.json" 2>"$SCRATCH/err" &
  pid=$!
  # Wait until the measurement runs (the file is complete once the marker is written).
  wait_test_file "$SCRATCH" || fail "the test file never appeared"
  sleep 1.5
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
wait_test_file "$SCRATCH" 0.05 || fail "during fill: the test file never appeared"
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
[[ $code -eq 3 ]] || fail "SIGTERM during fill: exit $code, want 3"
assert_no_test_files "$SCRATCH"
