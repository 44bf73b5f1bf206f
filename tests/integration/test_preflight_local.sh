#!/usr/bin/env bash
# iogate preflight without an API server: bad input (exit 2, one line naming the flag or field),
# mode off (no probe), --no-api, JSON logs, a missing dataset path, and SIGTERM mid-probe (exit 3,
# no test file left), and workload.mode auto (synthetic samples on an empty volume, the dataset
# where there is one, judged as AU).
source "$(dirname "$0")/lib.sh"
DATA="$SCRATCH/data"
mkdir -p "$DATA"
USAGE_DIR=$DATA
export HOME="$SCRATCH/home" KUBECONFIG="" # no cluster here, whatever the machine has
unset KUBERNETES_SERVICE_HOST

write_policy() {  # NAME BODY-AFTER-KIND: enforced unless BODY names a mode
  local mode="mode: enforce"$'\n'
  [[ $2 == "mode: "* || $2 == *$'\n'"mode: "* ]] && mode=""  # a top-level mode line
  printf 'apiVersion: iogate.io/v1\nkind: StoragePolicy\n%s%s\n' "$mode" "$2" >"$SCRATCH/$1.yaml"
  echo "$SCRATCH/$1.yaml"
}
good=$(write_policy good 'workload: {rw: randread, bs: 4k, iodepth: 8, runtime: 3s, size: 32m}
rules:
  - {name: floor, min_iops: 10}')

expect_usage "PATH" preflight --policy "$good"
expect_usage "--gpus" preflight "$DATA" --policy "$good" --gpus many
expect_usage "--output-format" preflight "$DATA" --policy "$good" --output-format yaml
expect_usage "--log-format" preflight "$DATA" --policy "$good" --log-format xml
bad=$(write_policy bad 'rules:
  - {name: a, min_iops: 10}
  - {name: b, min_iops: fast}')
expect_usage 'rules\[1\].min_iops: expected a positive integer, got "fast"' preflight "$DATA" --policy "$bad"
expect_usage "no-such-profile" preflight "$DATA" --policy profile:no-such-profile
cat >"$SCRATCH/kc" <<'KC'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
KC
expect_usage "insecure-skip-tls-verify" preflight "$DATA" --policy "$good" --kubeconfig "$SCRATCH/kc"
expect_usage "$SCRATCH/missing" preflight "$SCRATCH/missing" --policy "$good" --no-api

# No --policy: the default profile, image-training, in mode warn (an empty volume: synthetic
# samples); whatever the verdict, exit 0.
code=0
"$IOGATE" preflight "$DATA" --no-api --gpus 1 --output-format json >"$SCRATCH/default.json" 2>"$SCRATCH/default.log" || code=$?
[[ $code -eq 0 ]] || fail "no --policy: exit $code, want 0 (warn mode blocks nothing): $(tail -3 "$SCRATCH/default.log")"
assert_jq "$SCRATCH/default.json" '.policy.source == "profile:image-training" and .policy.mode == "warn" and
  .results[0].verdict.checks[0].check == "demand" and
  ((.outcome == "warn") == (.would_block | startswith("preflight would exit 1: "))) and (.outcome | IN("pass", "warn"))' \
  "no --policy: profile:image-training in mode warn, judged in AU ($(jq -r .outcome "$SCRATCH/default.json"), exit 0)"
assert_no_test_files "$DATA"

# mode off: nothing is probed, the pod starts.
off=$(write_policy off 'mode: off
rules:
  - {name: floor, min_iops: 10}')
"$IOGATE" preflight "$DATA" --policy "$off" --output-format json >"$SCRATCH/off.json" 2>"$SCRATCH/off.log"
assert_jq "$SCRATCH/off.json" '.outcome == "off" and .exit_code == 0 and .results == []' "mode off: exit 0, nothing probed"

# --no-api with JSON logs: every stderr line is a JSON object, the verdict on stdout.
"$IOGATE" preflight "$DATA" --policy "$good" --no-api --gpus 1 --output-format json --log-format json \
  >"$SCRATCH/a.json" 2>"$SCRATCH/a.log"
assert_jq "$SCRATCH/a.json" '.outcome == "pass" and .api == "skipped: --no-api" and .gpus == 1 and .results[0].source == "probe"' \
  "--no-api: verdict printed, API skipped"
assert_jq "$SCRATCH/a.json" '.results[0].report.convergence.early_stop == true and .results[0].report.workload.iodepth == 8' \
  "the policy's workload ran with early stop"
jq -e -s 'length >= 3 and all(.[]; .level and .msg and .time)' "$SCRATCH/a.log" >/dev/null ||
  fail "--log-format json: not one JSON object per line: $(head -3 "$SCRATCH/a.log")"
pass "--log-format json: $(wc -l <"$SCRATCH/a.log") JSON log lines"
assert_no_test_files "$DATA"

# Human output: the verdict table and the exit line.
"$IOGATE" preflight "$DATA" --policy "$good" --no-api --log-level warn >"$SCRATCH/h.txt"
grep -Eq '^  floor +min_iops +pass ' "$SCRATCH/h.txt" || fail "human output lacks the check line: $(cat "$SCRATCH/h.txt")"
grep -q '^verdict  pass  exit 0' "$SCRATCH/h.txt" || fail "human output lacks the verdict line"
pass "human output: one line per check, the verdict and exit code"

# SIGTERM while probing: exit 3, test file removed.
slow=$(write_policy slow 'early_stop: {enabled: false}
workload: {rw: randread, bs: 4k, iodepth: 8, runtime: 30s, size: 32m}
rules:
  - {name: floor, min_iops: 10}')
"$IOGATE" preflight "$DATA" --policy "$slow" --no-api --output-format json >"$SCRATCH/t.json" 2>"$SCRATCH/t.log" &
pid=$!
wait_test_file "$DATA" || fail "SIGTERM: no test file while probing"
sleep 2
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
[[ $code -eq 3 ]] || fail "SIGTERM: exit $code, want 3"
assert_jq "$SCRATCH/t.json" '.outcome == "error" and (.error | test("interrupted"))' "SIGTERM mid-probe: exit 3, error says interrupted"
assert_no_test_files "$DATA"

# workload.mode auto: synthetic samples of the demand's size on a volume without a dataset, its
# own files where there is one; the verdict in AU either way, the test file removed.
demand=$(write_policy demand 'workload: {mode: auto, workers: 2, runtime: 3s, size: 32m}
rules:
  - name: feed
    demand: {samples_per_s: 1, sample_size: 64k, min_au: 0.9}')
code=0
"$IOGATE" preflight "$DATA" --policy "$demand" --gpus 2 --no-api --output-format json >"$SCRATCH/d.json" 2>"$SCRATCH/d.log" || code=$?
[[ $code -eq 0 ]] || fail "auto on an empty volume: exit $code ($(tail -3 "$SCRATCH/d.log"))"
assert_jq "$SCRATCH/d.json" '.results[0].measurement.samples and (.results[0].measurement.dataset | not)
  and .results[0].measurement.bs_bytes == 65536 and .results[0].measurement.samples_per_s > 2
  and .results[0].verdict.checks[0].check == "demand"
  and .results[0].verdict.checks[0].demand.accelerators == 2
  and .results[0].verdict.checks[0].demand.samples_per_s_needed == 2
  and .results[0].verdict.checks[0].demand.predicted_au == 1
  and .results[0].verdict.checks[0].demand.accelerators_sustained > 2' \
  "auto on an empty volume reads synthetic 64k samples, judged as AU for 2 GPUs"
grep -q "synthetic samples of 64k" "$SCRATCH/d.log" || fail "auto: the log does not say synthetic samples ($(cat "$SCRATCH/d.log"))"
assert_no_test_files "$DATA"
python3 "$(dirname "$0")/make_dataset.py" "$DATA/set" --files 300 --dirs 3 --subdirs 3 --min-kib 8 --max-kib 16 --large 0 >/dev/null
starving=$(write_policy starving 'workload: {mode: auto, workers: 2, runtime: 3s, size: 32m}
rules:
  - name: feed
    demand: {samples_per_s: 100000000, sample_size: 16k}')
code=0
"$IOGATE" preflight "$DATA/set" --policy "$starving" --gpus 1 --no-api --output-format json >"$SCRATCH/s.json" 2>"$SCRATCH/s.log" || code=$?
[[ $code -eq 1 ]] || fail "auto on a dataset below its demand: exit $code, want 1 ($(tail -3 "$SCRATCH/s.log"))"
assert_jq "$SCRATCH/s.json" '.results[0].measurement.dataset and .results[0].verdict.outcome == "fail"
  and .results[0].verdict.checks[0].demand.predicted_au < 0.9
  and .results[0].verdict.checks[0].demand.accelerators_sustained == 0
  and (.results[0].report.limit.resource | type == "string")' \
  "auto on a dataset reads its files; a demand it cannot meet fails with the AU"
