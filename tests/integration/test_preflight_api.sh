#!/usr/bin/env bash
# iogate preflight end to end against the test API server (real TLS, real patch semantics): pass,
# fail (exit 1, Warning Event, annotations), warn mode, --gpus, the PVC's shared result within and
# after its TTL and while another pod holds the probe lock, fail-open and fail-closed under API
# faults, retries through 429/500/dropped connections, the deadline, in-cluster config with token
# rotation, client-certificate kubeconfig, and no cluster at all.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/apiserver_lib.sh"

start_apiserver
DATA="$SCRATCH/dataset"
mkdir -p "$DATA"
NS=ml
POD=train-0
NODE=gpu-node-1

seed_objects() {
  seed '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}'
  seed "$(jq -n --arg data "$DATA" '{apiVersion:"v1",kind:"Pod",
    metadata:{name:"train-0",namespace:"ml",uid:"6f1d2c9e-0000-4000-8000-000000000001",labels:{team:"vision"},
              annotations:{"example.com/owner":"alice"}},
    spec:{nodeName:"gpu-node-1",
      initContainers:[{name:"iogate-preflight",image:"iogate",volumeMounts:[{name:"dataset",mountPath:$data}]}],
      containers:[{name:"train",image:"pytorch",resources:{limits:{"nvidia.com/gpu":"2"}},
                   volumeMounts:[{name:"dataset",mountPath:$data}]}],
      volumes:[{name:"dataset",persistentVolumeClaim:{claimName:"imagenet"}}]}}')"
  seed '{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"imagenet","namespace":"ml",
         "annotations":{"example.com/backup":"daily"}},
         "spec":{"accessModes":["ReadWriteMany"],"resources":{"requests":{"storage":"1Ti"}}},"status":{"phase":"Bound"}}'
}

KUBECONFIG_FILE="$SCRATCH/kubeconfig"
write_kubeconfig "$KUBECONFIG_FILE" ml

# policy NAME MIN_IOPS [MODE] [ON_ERROR] [DEADLINE] [TTL]
policy() {
  cat >"$SCRATCH/$1.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: ${3:-enforce}
on_error: ${4:-fail-closed}
deadline: ${5:-40s}
result_ttl: ${6:-1h}
workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, runtime: 4s, size: 64m}
rules:
  - name: gpu-feed
    min_iops: $2
    min_iops_per_gpu: 50
    max_p99_latency: 2s
    forbidden_classes: [hdd]
P
  echo "$SCRATCH/$1.yaml"
}

# preflight OUT POLICY [extra flags]: runs as the initContainer would, exit code in $rc.
preflight() {
  local out=$1 pol=$2; shift 2
  set +e
  KUBECONFIG="$KUBECONFIG_FILE" POD_NAME=$POD POD_NAMESPACE=$NS NODE_NAME=$NODE \
    "$IOGATE" preflight "$DATA" --policy "$pol" --output-format json "$@" >"$out" 2>"$out.log"
  rc=$?
  set -e
}
pod_json() { api GET "/_test/objects/pods/$NS/$POD"; }
pvc_json() { api GET "/_test/objects/persistentvolumeclaims/$NS/imagenet"; }
events_json() { api GET "/_test/objects/events/$NS"; }
reset_pvc_share() {
  api PATCH "/api/v1/namespaces/$NS/persistentvolumeclaims/imagenet" \
    '{"metadata":{"annotations":{"iogate.io/probe-result":null,"iogate.io/probe-lock":null}}}' >/dev/null
}
annotation() { pod_json | jq -r --arg k "$1" '.metadata.annotations[$k] // ""'; }
last_event() { events_json | jq -c '[.[] | select(.involvedObject.name == "train-0")] | last'; }
seed_objects

# --- pass: probe, annotations, Event, the result recorded on the PVC ---
pass_policy=$(policy pass 100)
preflight "$SCRATCH/a.json" "$pass_policy"
[[ $rc -eq 0 ]] || fail "pass: exit $rc: $(tail -5 "$SCRATCH/a.json.log")"
assert_jq "$SCRATCH/a.json" '.schema == "iogate.preflight/v1" and .outcome == "pass" and .exit_code == 0 and .api == "ok"' "pass: report outcome"
assert_jq "$SCRATCH/a.json" '.gpus == 2 and .gpus_from == "pod" and .pod.node == "gpu-node-1"' "pass: 2 GPUs read from the pod's limits"
assert_jq "$SCRATCH/a.json" '.results[0].source == "probe" and .results[0].pvc == "imagenet" and .results[0].report.schema == "iogate.report/v1"' \
  "pass: probed, PVC found through the pod's volumeMounts"
assert_jq "$SCRATCH/a.json" '.results[0].verdict.checks | map(.check) | index("min_iops") != null and index("max_p99_latency") != null' \
  "pass: every check listed"
assert_jq "$SCRATCH/a.json" '.results[0].verdict.checks[] | select(.check == "min_iops") | .threshold_value == 100' \
  "pass: floor is max(min_iops 100, 50/GPU x 2)"
iops=$(jq -r '.results[0].measurement.iops | round' "$SCRATCH/a.json")
[[ $(annotation iogate.io/verdict) == pass ]] || fail "pass: iogate.io/verdict is '$(annotation iogate.io/verdict)'"
[[ $(annotation iogate.io/randread-iops) == "$iops" ]] || fail "pass: randread-iops $(annotation iogate.io/randread-iops) != $iops"
[[ $(annotation iogate.io/p99-latency-us) =~ ^[0-9]+$ ]] || fail "pass: p99-latency-us not an integer"
[[ -n $(annotation iogate.io/device-class) ]] || fail "pass: no device-class"
annotation iogate.io/report | jq -e '.outcome == "pass" and .gpus == 2 and (.paths | length) == 1' >/dev/null || fail "pass: compact report"
[[ $(annotation example.com/owner) == alice ]] || fail "pass: another owner's annotation was lost"
pass "pass: pod annotations verdict, randread-iops=$iops, p99, class, report; foreign annotation kept"
last_event >"$SCRATCH/ev.json"
assert_jq "$SCRATCH/ev.json" '.type == "Normal" and .reason == "StoragePolicyMet" and (.message | test("IOPS"))' "pass: Normal StoragePolicyMet Event on the pod"
pvc_json >"$SCRATCH/pvc.json"
assert_jq "$SCRATCH/pvc.json" '.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod == "ml/train-0" and .node == "gpu-node-1" and .workload == "randread/4k/qd16x1"' \
  "pass: result recorded on the PVC with pod, node and workload"
assert_jq "$SCRATCH/pvc.json" '(.metadata.annotations | has("iogate.io/probe-lock") | not) and .metadata.annotations["example.com/backup"] == "daily"' \
  "pass: probe lock released, the PVC's other annotations kept"
assert_no_test_files "$DATA"

# --- the next pod reuses the PVC's result: no second benchmark ---
preflight "$SCRATCH/b.json" "$pass_policy"
[[ $rc -eq 0 ]] || fail "reuse: exit $rc"
assert_jq "$SCRATCH/b.json" '.results[0].source == "shared" and .results[0].report == {} and (.results[0].shared_from | test("ml/train-0"))' \
  "reuse: shared result within the TTL, no probe"
jq -e --argjson i "$iops" '.results[0].measurement.iops | round == $i' "$SCRATCH/b.json" >/dev/null ||
  fail "reuse: not the recorded measurement"
pass "reuse: judged on the recorded measurement ($iops IOPS)"

# --- fail: enforce exits 1 with a Warning Event naming the rule ---
preflight "$SCRATCH/c.json" "$(policy fail 50000000)"
[[ $rc -eq 1 ]] || fail "fail: exit $rc, want 1: $(tail -3 "$SCRATCH/c.json.log")"
assert_jq "$SCRATCH/c.json" '.outcome == "fail" and (.results[0].verdict.checks[] | select(.check == "min_iops") | .passed == false)' "fail: min_iops failed"
[[ $(annotation iogate.io/verdict) == fail ]] || fail "fail: verdict annotation"
last_event >"$SCRATCH/ev.json"
assert_jq "$SCRATCH/ev.json" '.type == "Warning" and .reason == "StorageBelowPolicy" and (.message | test("gpu-feed")) and (.message | test("min_iops"))' \
  "fail: Warning StorageBelowPolicy naming rule and check"

# --- warn: records and lets the pod start ---
preflight "$SCRATCH/d.json" "$(policy warn 50000000 warn)"
[[ $rc -eq 0 ]] || fail "warn: exit $rc, want 0"
assert_jq "$SCRATCH/d.json" '.outcome == "warn"' "warn: outcome warn, exit 0"
[[ $(annotation iogate.io/verdict) == warn ]] || fail "warn: verdict annotation"
pass "warn: annotation iogate.io/verdict=warn"

# --- --gpus overrides the pod: 50/GPU x 4000 GPUs = 200,000 ---
preflight "$SCRATCH/e.json" "$pass_policy" --gpus 4000
assert_jq "$SCRATCH/e.json" '.gpus == 4000 and .gpus_from == "--gpus" and (.results[0].verdict.checks[] | select(.check == "min_iops") | .threshold_value == 200000)' \
  "--gpus 4000: floor scaled to 200,000"

# --- after the TTL the result is stale: probe again ---
old=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%SZ)
stale=$(jq -c --arg t "$old" '.metadata.annotations["iogate.io/probe-result"] | fromjson | .time = $t' "$SCRATCH/pvc.json")
api PATCH "/api/v1/namespaces/$NS/persistentvolumeclaims/imagenet" \
  "$(jq -n --arg v "$stale" '{metadata:{annotations:{"iogate.io/probe-result":$v}}}')" >/dev/null
preflight "$SCRATCH/f.json" "$pass_policy"
[[ $rc -eq 0 ]] || fail "stale: exit $rc"
assert_jq "$SCRATCH/f.json" '.results[0].source == "probe"' "after the TTL (2 h old result, ttl 1h): probed again"
pvc_json | jq -e --arg t "$old" '.metadata.annotations["iogate.io/probe-result"] | fromjson | .time > $t' >/dev/null ||
  fail "stale: the PVC's result was not renewed"
pass "stale: the PVC's result renewed"

# --- another pod holds the probe lock: wait for its result ---
reset_pvc_share
future=$(date -u -d '+10 minutes' +%Y-%m-%dT%H:%M:%SZ)
lock=$(jq -cn --arg e "$future" '{pod:"ml/train-7",node:"gpu-node-7",expires:$e}')
api PATCH "/api/v1/namespaces/$NS/persistentvolumeclaims/imagenet" \
  "$(jq -n --arg v "$lock" '{metadata:{annotations:{"iogate.io/probe-lock":$v}}}')" >/dev/null
other=$(jq -c --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod = "ml/train-7" | .node = "gpu-node-7" | .time = $t' "$SCRATCH/pvc.json")
( sleep 2
  api PATCH "/api/v1/namespaces/$NS/persistentvolumeclaims/imagenet" \
    "$(jq -n --arg v "$other" '{metadata:{annotations:{"iogate.io/probe-result":$v,"iogate.io/probe-lock":null}}}')" >/dev/null ) &
writer=$!
preflight "$SCRATCH/g.json" "$pass_policy"
wait $writer
[[ $rc -eq 0 ]] || fail "lock: exit $rc"
assert_jq "$SCRATCH/g.json" '.results[0].source == "shared" and (.results[0].shared_from | test("ml/train-7"))' \
  "lock held by another pod: waited and reused its result"
grep -q "train-7 on node gpu-node-7 is probing it; waiting" "$SCRATCH/g.json.log" || fail "lock: no 'waiting' log line"
pass "lock: the log says whom it waited for"

# A lock that is never released: give up waiting while a probe still fits the deadline.
reset_pvc_share
api PATCH "/api/v1/namespaces/$NS/persistentvolumeclaims/imagenet" \
  "$(jq -n --arg v "$lock" '{metadata:{annotations:{"iogate.io/probe-lock":$v}}}')" >/dev/null
preflight "$SCRATCH/h.json" "$(policy shortwait 100 enforce fail-closed 14s)"
[[ $rc -eq 0 ]] || fail "stuck lock: exit $rc: $(tail -3 "$SCRATCH/h.json.log")"
assert_jq "$SCRATCH/h.json" '.results[0].source == "probe"' "stuck lock: probed without it before the deadline"
pvc_json | jq -e '.metadata.annotations["iogate.io/probe-lock"] | fromjson | .pod == "ml/train-7"' >/dev/null ||
  fail "stuck lock: another pod's lock was overwritten"
pass "stuck lock: the other pod's lock left alone"

# SIGTERM while waiting for another pod's probe: stop waiting, exit 3, nothing left behind.
KUBECONFIG="$KUBECONFIG_FILE" POD_NAME=$POD POD_NAMESPACE=$NS NODE_NAME=$NODE \
  "$IOGATE" preflight "$DATA" --policy "$pass_policy" --output-format json >"$SCRATCH/t.json" 2>"$SCRATCH/t.log" &
pid=$!
for _ in $(seq 100); do
  grep -q "is probing it; waiting" "$SCRATCH/t.log" && break
  sleep 0.1
done
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
[[ $code -eq 3 ]] || fail "SIGTERM while waiting: exit $code, want 3"
grep -q "stopped waiting for pod ml/train-7: interrupted" "$SCRATCH/t.log" || fail "SIGTERM while waiting: $(tail -3 "$SCRATCH/t.log")"
assert_jq "$SCRATCH/t.json" '.outcome == "error" and (.error | test("interrupted"))' "SIGTERM while waiting for another pod's probe: exit 3"
assert_no_test_files "$DATA"
reset_pvc_share

# --- many pods, one volume: four pods start at once, one probes, the others reuse its result ---
reset_pvc_share
clear_requests
for i in 1 2 3 4; do
  pod_json | jq -c --arg n "train-w$i" '.metadata = {name: $n, namespace: "ml", uid: ("uid-" + $n)}' >"$SCRATCH/w$i.pod"
  seed "$(cat "$SCRATCH/w$i.pod")"
done
pids=()
for i in 1 2 3 4; do
  KUBECONFIG="$KUBECONFIG_FILE" POD_NAME=train-w$i POD_NAMESPACE=$NS NODE_NAME=$NODE \
    "$IOGATE" preflight "$DATA" --policy "$pass_policy" --output-format json >"$SCRATCH/w$i.json" 2>"$SCRATCH/w$i.log" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a racing pod failed: $(tail -3 "$SCRATCH"/w*.log)"; done
jq -s '[.[].results[0].source] | sort' "$SCRATCH"/w[1-4].json >"$SCRATCH/sources.json"
assert_jq "$SCRATCH/sources.json" '. == ["probe", "shared", "shared", "shared"]' "4 racing pods: exactly one probed, three reused its result"
api GET /_test/requests >"$SCRATCH/req.json"
assert_jq "$SCRATCH/req.json" '[.[] | select(.method == "PATCH" and (.path | endswith("/persistentvolumeclaims/imagenet")) and (.body | test("probe-lock")) and .status == 200)] | length == 2' \
  "the lock was taken once and released once (in the result's patch)"
for i in 1 2 3 4; do
  api GET "/_test/objects/pods/$NS/train-w$i" | jq -e '.metadata.annotations["iogate.io/verdict"] == "pass"' >/dev/null ||
    fail "train-w$i has no verdict annotation"
done
pass "every racing pod got its own verdict annotations"
assert_no_test_files "$DATA"

# --- API faults: transient ones are retried ---
preflight "$SCRATCH/seed.json" "$pass_policy"  # records a fresh shared result: the next runs are quick
clear_requests
fault '{"method":"GET","path_regex":"/api/v1/namespaces/ml/pods/train-0","kind":"429","retry_after_s":1,"count":1}'
fault '{"method":"PATCH","path_regex":"/api/v1/namespaces/ml/pods/train-0","kind":"drop","count":1}'
fault '{"method":"POST","path_regex":".*/events","kind":"500","count":1}'
preflight "$SCRATCH/i.json" "$pass_policy"
[[ $rc -eq 0 ]] || fail "transient faults: exit $rc: $(tail -5 "$SCRATCH/i.json.log")"
api GET /_test/requests >"$SCRATCH/req.json"
assert_jq "$SCRATCH/req.json" '[.[] | select(.method == "GET" and (.path | endswith("/pods/train-0"))) | .status] | .[0:2] == [429, 200]' \
  "429 with Retry-After, then the GET retried"
assert_jq "$SCRATCH/req.json" '[.[] | select(.method == "PATCH" and (.path | endswith("/pods/train-0"))) | .status] | .[0:2] == [0, 200]' \
  "dropped connection, then the PATCH retried"
assert_jq "$SCRATCH/req.json" '[.[] | .auth] | all(. == "Bearer <redacted>")' "every request authenticated"
grep -q "$API_TOKEN" "$SCRATCH/i.json.log" "$SCRATCH/i.json" && fail "the token reached a log or report"
pass "the token appears in neither log nor report"
clear_faults

# --- API down for the records: fail-closed exits 3, fail-open lets the pod start ---
fault '{"method":"PATCH","path_regex":".*/pods/train-0","kind":"500"}'
preflight "$SCRATCH/j.json" "$(policy closed 100 enforce fail-closed 20s)"
[[ $rc -eq 3 ]] || fail "fail-closed: exit $rc, want 3"
assert_jq "$SCRATCH/j.json" '.outcome == "error" and (.error | test("500|InternalError"))' "fail-closed: API 500s → exit 3, error names it"
preflight "$SCRATCH/k.json" "$(policy open 100 enforce fail-open 20s)"
[[ $rc -eq 0 ]] || fail "fail-open: exit $rc, want 0"
assert_jq "$SCRATCH/k.json" '.outcome == "pass" and (.error | test("could not record"))' "fail-open: verdict stands, exit 0, the failure reported"
clear_faults

# --- the deadline bounds everything, the API included ---
fault '{"method":"GET","path_regex":".*/pods/train-0","kind":"delay","delay_ms":9000}'
preflight "$SCRATCH/l.json" "$(policy deadline 100 enforce fail-closed 6s)"
clear_faults
[[ $rc -eq 3 ]] || fail "deadline: exit $rc, want 3"
assert_jq "$SCRATCH/l.json" '.outcome == "error" and (.error | test("deadline"))' "deadline 6s with a 9 s API stall: error names the deadline"

# --- client-certificate kubeconfig ---
cat >"$SCRATCH/kubeconfig-x509" <<KC
apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "$API_URL", certificate-authority: "$API_CERTS/ca.crt"}}]
users: [{name: x509, user: {client-certificate: "$API_CERTS/client.crt", client-key: "$API_CERTS/client.key"}}]
contexts: [{name: test, context: {cluster: test, user: x509, namespace: ml}}]
current-context: test
KC
preflight "$SCRATCH/m.json" "$pass_policy" --kubeconfig "$SCRATCH/kubeconfig-x509"
[[ $rc -eq 0 ]] || fail "x509 kubeconfig: exit $rc: $(tail -3 "$SCRATCH/m.json.log")"
api GET /_test/requests | jq -e '[.[] | .auth] | any(. == "x509 CN=iogate-test")' >/dev/null || fail "x509: not authenticated by certificate"
pass "client-certificate kubeconfig: authenticated as CN=iogate-test"

# --- no cluster at all: the verdict is printed, the API skipped ---
set +e
env -i PATH="$PATH" HOME="$SCRATCH/nohome" "$IOGATE" preflight "$DATA" --policy "$pass_policy" --gpus 1 \
  --output-format json >"$SCRATCH/n.json" 2>"$SCRATCH/n.log"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "no cluster: exit $rc"
assert_jq "$SCRATCH/n.json" '.outcome == "pass" and (.api | startswith("skipped: not in a cluster"))' "no cluster: verdict printed, API skipped"

# --- in cluster: service account files, token rotated mid-run (a ..data symlink swap) ---
if [[ $(id -u) -ne 0 ]] || ! unshare -m true 2>/dev/null; then
  echo "SKIP (part): in-cluster token rotation needs root and mount namespaces to place the service account at its fixed path"
else
  sa="$SCRATCH/sa"
  mkdir -p "$sa/..2026_a" "$sa/..2026_b"
  printf '%s' "$API_TOKEN" >"$sa/..2026_a/token"
  cp "$API_CERTS/ca.crt" "$sa/..2026_a/ca.crt"
  printf '%s' "$NS" >"$sa/..2026_a/namespace"
  new_token="rotated-$RANDOM$RANDOM"
  printf '%s' "$new_token" >"$sa/..2026_b/token"
  cp "$sa/..2026_a/ca.crt" "$sa/..2026_a/namespace" "$sa/..2026_b/"
  ln -s ..2026_a "$sa/..data"
  for f in token ca.crt namespace; do ln -s "..data/$f" "$sa/$f"; done
  reset_pvc_share
  clear_requests
  port=${API_URL##*:}
  ttl0=$(policy ttl0 100 enforce fail-closed 40s 0s)
  set +e
  unshare -m bash -c '
    mount -t tmpfs tmpfs /run && mkdir -p /run/secrets/kubernetes.io &&
    ln -s "$1" /run/secrets/kubernetes.io/serviceaccount &&
    env -i PATH="$PATH" HOME=/nonexistent KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$2" \
      POD_NAME=train-0 NODE_NAME=gpu-node-1 "$3" preflight "$4" --policy "$5" --output-format json' \
    _ "$sa" "$port" "$IOGATE" "$DATA" "$ttl0" >"$SCRATCH/o.json" 2>"$SCRATCH/o.log" &
  pf=$!
  for _ in $(seq 100); do  # rotate once preflight has read the pod with the old token
    api GET /_test/requests | jq -e 'any(.[]; .method == "GET" and (.path | endswith("/pods/train-0")) and .status == 200)' >/dev/null && break
    sleep 0.1
  done
  ln -sfn ..2026_b "$sa/..data.tmp" && mv -T "$sa/..data.tmp" "$sa/..data"
  api POST /_test/token "$(jq -n --arg t "$new_token" '{token:$t}')" >/dev/null
  API_TOKEN=$new_token
  wait $pf
  rc=$?
  set -e
  [[ $rc -eq 0 ]] || fail "in-cluster rotation: exit $rc: $(tail -5 "$SCRATCH/o.log")"
  assert_jq "$SCRATCH/o.json" '.api == "ok" and .pod.namespace == "ml" and .outcome == "pass"' "in-cluster: namespace from the service account, verdict recorded"
  api GET /_test/requests >"$SCRATCH/req.json"
  assert_jq "$SCRATCH/req.json" '[.[] | select(.method == "PATCH" and (.path | endswith("/pods/train-0"))) | .status] | .[0:2] == [401, 200]' \
    "token rotated mid-run: one 401, the token file re-read, the PATCH retried"
fi
