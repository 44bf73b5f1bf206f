# --early-stop on a real file: the run ends when the mean IOPS is settled (or clearly beside
# --min-iops), within --runtime, and the report's interval agrees with why it stopped.
source "$(dirname "$0")/lib.sh"
out="$SCRATCH/report.json"
early_reasons='["settled", "above-threshold", "below-threshold"]'

# Every convergence key, with its type, in every report.
check_convergence_shape() {
  assert_jq "$1" '.convergence | (.early_stop | type == "boolean") and (.trusted | type == "boolean")
    and ([.tolerance, .confidence, .sample_interval_ns, .min_window_ns, .threshold_iops, .threshold_margin,
          .samples, .batches, .batch_samples, .batch_lag1_correlation, .mean_iops, .ci_half_width_iops,
          .ci_relative_half_width] | all(type == "number"))' "convergence has every key, typed"
}

"$IOGATE" probe "$SCRATCH" --size 64m --runtime 8s --ramp 500ms --early-stop --keep-file --output-format json >"$out"
check_convergence_shape "$out"
assert_jq "$out" ".stop_reason as \$r | ($early_reasons + [\"runtime\"]) | index(\$r) != null" \
  "stop_reason is runtime or an early-stop reason ($(jq -r .stop_reason "$out") after $(jq .measured_ns "$out") ns)"
assert_jq "$out" '.measured_ns <= .workload.runtime_ns' "measured window within --runtime"
assert_jq "$out" '.convergence.early_stop == true and .convergence.tolerance == 0.03 and .convergence.confidence == 0.95' \
  "the rule as run is reported"
assert_jq "$out" '.convergence.threshold_iops == 0' "no threshold: 0"
# One sample per 100 ms of the measured window (the last, partial one only if half a tick).
assert_jq "$out" '(.measured_ns / .convergence.sample_interval_ns) as $n | .convergence.samples >= ($n | floor) - 1 and .convergence.samples <= ($n | ceil) + 1' \
  "a sample per interval of the window"
assert_jq "$out" '.convergence.batches >= 2 and .convergence.batches <= 40 and .convergence.batches * .convergence.batch_samples <= .convergence.samples' \
  "batch count in range"
assert_jq "$out" '(.convergence.mean_iops - .aggregate.read.iops | fabs) <= 0.1 * .aggregate.read.iops' \
  "the interval's mean is the report's IOPS (within 10%: the oldest leftover samples are not batched)"
assert_jq "$out" '.stop_reason != "settled" or (.convergence.trusted and .convergence.ci_relative_half_width <= .convergence.tolerance
  and .measured_ns >= .convergence.min_window_ns and .measured_ns < .workload.runtime_ns)' \
  "settled: a trusted interval within tolerance, after the minimum window, before the limit"
assert_jq "$out" '.stop_reason != "runtime" or ([.warnings[] | test("did not settle")] | any)' \
  "not settled within --runtime: a warning says so"
assert_jq "$out" '.aggregate.read.total_ios > 0 and (.jobs[0].job_runtime_ns - .measured_ns | fabs) < 300000000' \
  "the jobs' window is the probe's window"
assert_jq "$out" '.diskstats.available == false or ((.diskstats.interval_ns - .measured_ns | fabs) < 300000000)' \
  "diskstats cover the same window"
file=$(ls "$SCRATCH"/.iogate-probe-*.dat)

# A floor every disk clears by far: it may stop as soon as the interval is trusted, and only as above.
"$IOGATE" probe "$file" --runtime 6s --ramp 500ms --early-stop --min-iops 1 --output-format json >"$out"
check_convergence_shape "$out"
assert_jq "$out" '.convergence.threshold_iops == 1' "the threshold is reported"
assert_jq "$out" '.stop_reason == "above-threshold" or .stop_reason == "runtime"' \
  "far above a floor: only above-threshold may stop it ($(jq -r .stop_reason "$out"))"
assert_jq "$out" '.stop_reason != "above-threshold" or (.measured_ns >= .convergence.min_window_ns and
  .convergence.mean_iops - .convergence.ci_half_width_iops >= 1.1)' "above-threshold: the whole interval is 10% above"
# A floor no disk reaches.
"$IOGATE" probe "$file" --runtime 6s --ramp 500ms --early-stop --min-iops 1000000000000 --output-format json >"$out"
assert_jq "$out" '.stop_reason == "below-threshold" or .stop_reason == "runtime"' \
  "far below a floor: only below-threshold may stop it ($(jq -r .stop_reason "$out"))"

# Without --early-stop: the full runtime, and the interval still reported.
"$IOGATE" probe "$file" --runtime 2s --ramp 200ms --output-format json >"$out"
check_convergence_shape "$out"
assert_jq "$out" '.stop_reason == "runtime" and .measured_ns == .workload.runtime_ns' "early stop off: the full runtime"
assert_jq "$out" '.convergence.early_stop == false and .convergence.samples >= 19 and .convergence.mean_iops > 0' \
  "early stop off: the interval is still there"

human=$("$IOGATE" probe "$file" --runtime 3s --ramp 200ms --early-stop)
grep -q "95% CI  *±" <<<"$human" || fail "human output lacks the interval line: $human"
pass "human output states the interval: $(grep '95% CI' <<<"$human" | tr -s ' ')"
rm -f "$file"
assert_no_test_files "$SCRATCH"
