# The 5-second verdict on a steady device: a loop device on tmpfs throttled by the cgroup I/O
# controller (tests/lib/rig.sh) to gp3's 3,000 baseline and 16,000 provisioned read IOPS serves its cap
# round after round, so an early-stopped probe can be held to a 10 s fio run of the same workload:
# within 5%. The cap is the kernel's, exact to well under 1% over seconds, so the tolerance holds
# on a busy machine; a wrong window, a dropped or double-counted completion, or an early stop on
# too little data would not. Preflight against a floor 15% below the cap passes and 20% above it
# fails, each stopped early as clearly beside the floor (the interval excludes floor ± 10%).
source "$(dirname "$0")/lib.sh"
use_rig

for cap in 3000 16000; do
  rig="verdict-$cap"
  rig_up "$rig" --backing tmpfs --riops "$cap" --size 640m || fail "tests/lib/rig.sh up $rig"
  dir=$(rig_dir "$rig")
  out="$SCRATCH/early-$cap.json"
  rig_run "$rig" "$IOGATE" probe "$dir" --size 256m --keep-file --ramp 1s --runtime 10s --early-stop --tolerance 3% \
    --output-format json >"$out"
  file=$(ls "$dir"/.iogate-probe-*.dat)
  assert_jq "$out" '.stop_reason == "settled" and .measured_ns < .workload.runtime_ns and .convergence.trusted' \
    "cap $cap: settled early ($(jq -r '"\(.measured_ns / 1e9) s, ±\(.convergence.ci_relative_half_width * 100 | . * 100 | round / 100)%"' "$out"))"
  rig_run "$rig" fio --name=long --filename="$file" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=32 \
    --runtime=10 --ramp_time=1 --time_based --randrepeat=0 --output-format=json >"$SCRATCH/fio-$cap.json" 2>/dev/null ||
    fail "cap $cap: fio failed"
  fio_iops=$(jq '.jobs[0].read.iops' "$SCRATCH/fio-$cap.json")
  assert_jq "$out" "(.aggregate.read.iops / $fio_iops - 1 | fabs) <= 0.05" \
    "cap $cap: early IOPS $(jq '.aggregate.read.iops | round' "$out") within 5% of a 10 s fio run ($fio_iops)"
  assert_jq "$out" "(.aggregate.read.iops / $cap - 1 | fabs) <= 0.05" "cap $cap: and of the cap"

  for floor in $((cap * 85 / 100)):0:pass:above-threshold $((cap * 12 / 10)):1:fail:below-threshold; do
    IFS=: read -r min want_code want_outcome want_stop <<<"$floor"
    printf 'apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: enforce\nworkload: {ramp: 1s, runtime: 10s, size: 256m}\nrules:\n  - {name: floor, min_iops: %s}\n' \
      "$min" >"$SCRATCH/policy.yaml"
    code=0
    rig_run "$rig" "$IOGATE" preflight "$dir" --policy "$SCRATCH/policy.yaml" --no-api --output-format json \
      >"$SCRATCH/pf.json" 2>"$SCRATCH/pf.err" || code=$?
    [[ $code -eq $want_code ]] || fail "cap $cap, floor $min: preflight exit $code, want $want_code ($(tail -1 "$SCRATCH/pf.err"))"
    assert_jq "$SCRATCH/pf.json" ".outcome == \"$want_outcome\" and .results[0].report.stop_reason == \"$want_stop\"
      and .results[0].report.measured_ns < .results[0].report.workload.runtime_ns" \
      "cap $cap, floor $min: $want_outcome, stopped early ($want_stop after $(jq '.results[0].report.measured_ns / 1e9' "$SCRATCH/pf.json") s)"
  done
  left=$(find "$dir" -name '.iogate-probe-*' ! -name "$(basename "$file")")
  [[ -z $left ]] || fail "cap $cap: preflight left a test file: $left"
  pass "cap $cap: preflight left no test file beside the kept one"
  rig_down "$rig"
done
