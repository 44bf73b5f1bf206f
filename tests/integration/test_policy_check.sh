# iogate policy check on real files: valid ones exit 0 and show the policy as enforced, invalid
# ones exit 2 with one line naming the file and the field; profiles list and show.
source "$(dirname "$0")/lib.sh"
need_tool jq

# The manual's example policy, the file a user copies (examples/policy.yaml), and the same as JSON.
example="$TESTS_DIR/../examples/policy.yaml"
[[ -r $example ]] || fail "cannot read $example"
cp "$example" "$SCRATCH/example.yaml"
cat >"$SCRATCH/example.json" <<'JSON'
{"apiVersion": "iogate.io/v1", "kind": "StoragePolicy", "mode": "warn",
 "workload": {"rw": "randread", "bs": "4k", "iodepth": 32},
 "rules": [{"name": "gpu-feed", "min_iops": 10000, "min_iops_per_gpu": 5000, "max_p99_latency": "5ms"}]}
JSON

expect_valid() {
  local code=0
  "$IOGATE" policy check "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || code=$?
  [[ $code -eq 0 ]] || fail "policy check $*: exit $code: $(cat "$SCRATCH/err")"
  [[ ! -s "$SCRATCH/err" ]] || fail "policy check $*: wrote to stderr: $(cat "$SCRATCH/err")"
}

expect_valid "$SCRATCH/example.yaml" --gpus 8
grep -q ': valid$' "$SCRATCH/out" || fail "human output does not say valid: $(cat "$SCRATCH/out")"
grep -q '>= 40,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 8 GPUs)' "$SCRATCH/out" ||
  fail "the floor for 8 GPUs is not 40,000: $(cat "$SCRATCH/out")"
pass "the manual's example: valid, 40,000 IOPS floor at 8 GPUs"

expect_valid "$SCRATCH/example.yaml" --gpus 1 --output-format json
cp "$SCRATCH/out" "$SCRATCH/one.json"
assert_jq "$SCRATCH/one.json" '.rules[0].effective_min_iops == 10000' "1 GPU: the fixed floor 10,000 wins"
assert_jq "$SCRATCH/one.json" '.rules[0].max_p99_latency_ns == 5000000' "max_p99_latency 5ms is 5,000,000 ns"
assert_jq "$SCRATCH/one.json" '.deadline_ns == 60000000000 and .mode == "enforce" and .on_error == "fail-closed"' \
  "deadline, mode and on_error as written"
assert_jq "$SCRATCH/one.json" '.workload.size_bytes == 268435456 and .workload.runtime_ns == 10000000000' \
  "workload size 256m and runtime 10s"

expect_valid "$SCRATCH/example.json" --output-format json
cp "$SCRATCH/out" "$SCRATCH/json.json"
assert_jq "$SCRATCH/json.json" '.mode == "warn" and .gpus == null and (.rules[0] | has("effective_min_iops") | not)' \
  "a JSON policy loads; without --gpus nothing is resolved"

for profile in image-training image-classification streaming llm-pretraining checkpointing; do
  expect_valid "profile:$profile"
  expect_valid "$profile" --output-format json
  cp "$SCRATCH/out" "$SCRATCH/profile.json"
  assert_jq "$SCRATCH/profile.json" ".source == \"profile:$profile\" and (.rules | length) >= 1" "profile $profile"
  "$IOGATE" policy show "$profile" >"$SCRATCH/show.yaml" || fail "policy show $profile"
  expect_valid "$SCRATCH/show.yaml"
  pass "policy show $profile prints a policy that checks as valid"
done
[[ $("$IOGATE" policy profiles | wc -l) -ge 5 ]] || fail "policy profiles lists fewer than 5 profiles"
pass "policy profiles lists the built-ins"

# Invalid: exit 2, one line on stderr with the file and the field path, nothing on stdout.
expect_invalid() {
  local file=$1 want=$2
  local code=0
  "$IOGATE" policy check "$file" >"$SCRATCH/out" 2>"$SCRATCH/err" || code=$?
  [[ $code -eq 2 ]] || fail "$file: exit $code, want 2 ($(cat "$SCRATCH/err"))"
  [[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "$file: want one line, got: $(cat "$SCRATCH/err")"
  [[ ! -s "$SCRATCH/out" ]] || fail "$file: printed a policy for an invalid file"
  grep -qF -- "$want" "$SCRATCH/err" || fail "$file: error lacks '$want': $(cat "$SCRATCH/err")"
  pass "$(cat "$SCRATCH/err")"
}
bad() {  # bad NAME SED-EXPRESSION: the example with one edit
  sed "$2" "$SCRATCH/example.yaml" >"$SCRATCH/$1.yaml"
  echo "$SCRATCH/$1.yaml"
}
expect_invalid "$(bad fast 's/min_iops: 10000/min_iops: fast/')" \
  "$SCRATCH/fast.yaml: rules[0].min_iops: expected a positive integer, got \"fast\""
expect_invalid "$(bad unknown 's/max_p99_latency/max_p99_latncy/')" \
  'rules[0].max_p99_latncy: unknown key (did you mean "max_p99_latency"?)'
expect_invalid "$(bad duration 's/deadline: 60s/deadline: 60 seconds/')" 'deadline: unknown duration unit'
expect_invalid "$(bad class 's/\[hdd\]/[floppy]/')" 'rules[0].forbidden_classes[0]: unknown device class "floppy"'
expect_invalid "$(bad version 's#iogate.io/v1#iogate.io/v2#')" 'apiVersion: expected "iogate.io/v1", got "iogate.io/v2"'
expect_invalid "$(bad mode 's/mode: enforce/mode: strict/')" 'mode: expected enforce, warn or off, got "strict"'
expect_invalid "$(bad onerror 's/fail-closed/fail-maybe/')" 'on_error: expected fail-closed or fail-open'
expect_invalid "$(bad negative 's/min_iops_per_gpu: 5000/min_iops_per_gpu: -5000/')" \
  'rules[0].min_iops_per_gpu: expected a positive integer, got "-5000"'
expect_invalid "$(bad noname '/- name: gpu-feed/s/name: gpu-feed/min_iops: 1/; s/^    min_iops: 10000$//')" \
  'rules[0].name: missing'
expect_invalid "$(bad yaml 's/\[hdd\]/[hdd/')" 'not valid YAML or JSON'
expect_invalid "$SCRATCH/does-not-exist.yaml" "$SCRATCH/does-not-exist.yaml: cannot read the policy file"
expect_invalid "profile:imagenet" 'unknown profile "imagenet"'

code=0
"$IOGATE" policy check "$SCRATCH/example.yaml" --gpus many 2>"$SCRATCH/err" >/dev/null || code=$?
[[ $code -eq 2 ]] && grep -q -- '--gpus' "$SCRATCH/err" || fail "--gpus many: exit $code, $(cat "$SCRATCH/err")"
pass "--gpus many is a usage error naming --gpus"
