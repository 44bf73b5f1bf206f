#!/usr/bin/env bash
# iogate node against the test API server (real TLS, real patch semantics): labels, annotations,
# taint and condition after the first probe; others' labels, taints and conditions survive, also a
# concurrent writer that changes the taints between the agent's read and write (409); recovery
# removes the taint; one Event per verdict change, none when nothing changed; warn mode; a restart
# that does not flap the node before it has probed; an API outage, then recovery; SIGTERM.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/apiserver_lib.sh"

start_apiserver
DATA="$SCRATCH/data"
mkdir -p "$DATA"
NODE=gpu-1

seed '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}'
seed '{"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-1","uid":"0b0e0000-0000-4000-8000-00000000n0d1",
  "labels":{"kubernetes.io/hostname":"gpu-1","team":"ml","iogate.io/disk-class.old":"hdd","iogate.io/owned-by-someone-else":"x"}},
  "spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
  "status":{"capacity":{"cpu":"64","nvidia.com/gpu":"4"},
            "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status",
                           "lastHeartbeatTime":"2026-12-01T00:00:00Z","lastTransitionTime":"2026-12-01T00:00:00Z"}]}}'

KUBECONFIG_FILE="$SCRATCH/kubeconfig"
write_kubeconfig "$KUBECONFIG_FILE"

# policy NAME MIN_IOPS_PER_GPU [MODE]: 4 GPUs on the node, so the floor is 4 × the per-GPU figure.
policy() {
  cat >"$SCRATCH/$1.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: ${3:-enforce}
workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, runtime: 3s, ramp: 500ms, size: 64m}
rules:
  - name: gpu-feed
    min_iops_per_gpu: $2
    forbidden_classes: [hdd]
node:
  taint_effect: NoSchedule
  fast_min_iops: 1000000000
P
  echo "$SCRATCH/$1.yaml"
}
PASS_POLICY=$(policy pass 10)
FAIL_POLICY=$(policy fail 100000000)
WARN_POLICY=$(policy warn 100000000 warn)

# node_once OUT POLICY [flags]: one round, exit code in $rc.
node_once() {
  local out=$1 pol=$2; shift 2
  set +e
  "$IOGATE" node --once --policy "$pol" --path "data=$DATA" --node-name $NODE --kubeconfig "$KUBECONFIG_FILE" \
    --listen none --busy-util 100% --output-format json "$@" >"$out" 2>"$out.log"
  rc=$?
  set -e
}
node_json() { api GET /_test/objects/nodes/$NODE; }
label() { node_json | jq -r --arg k "$1" '.metadata.labels[$k] // ""'; }
condition() { node_json | jq -c '.status.conditions[] | select(.type == "StorageBelowPolicy")'; }
node_events() { api GET /_test/objects/events/default | jq -c '[.[] | select(.involvedObject.kind == "Node" and .involvedObject.name == "gpu-1")]'; }
event_count() { node_events | jq length; }
our_taints() { node_json | jq -c '[.spec.taints[]? | select(.key == "iogate.io/storage-below-policy")]'; }

# --- first probe, passing: labels, annotations, condition False, one Normal Event ---
node_once "$SCRATCH/a.json" "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "pass: exit $rc: $(tail -5 "$SCRATCH/a.json.log")"
assert_jq "$SCRATCH/a.json" '.schema == "iogate.node/v1" and .outcome == "pass" and .below_policy == false and .api.state == "ok"' "pass: report"
assert_jq "$SCRATCH/a.json" '.gpus == 4 and .gpus_from == "status.capacity"' "pass: 4 GPUs from the node's capacity"
assert_jq "$SCRATCH/a.json" '.paths[0].verdict.checks[] | select(.check == "min_iops") | .threshold_value == 40' "pass: floor 10/GPU x 4 GPUs = 40"
iops=$(jq -r '.paths[0].measurement.iops | round' "$SCRATCH/a.json")
class=$(jq -r '.paths[0].measurement.device_class' "$SCRATCH/a.json")
[[ $(label iogate.io/randread-iops) == "$iops" ]] || fail "pass: randread-iops label $(label iogate.io/randread-iops), report $iops"
[[ $(label iogate.io/randread-iops) =~ ^[0-9]+$ ]] || fail "pass: randread-iops is not a plain integer"
[[ $(label iogate.io/disk-class) == "$class" ]] || fail "pass: disk-class $(label iogate.io/disk-class) != $class"
[[ $(label iogate.io/tier) == ok ]] || fail "pass: tier $(label iogate.io/tier), want ok (fast needs 10^9 IOPS)"
[[ $(label iogate.io/disk-class.data) == "$class" && $(label iogate.io/randread-iops.data) == "$iops" ]] ||
  fail "pass: the named path's labels"
pass "pass: labels disk-class=$class randread-iops=$iops tier=ok, and per path name data"
[[ $(label team) == ml && $(label kubernetes.io/hostname) == gpu-1 && $(label iogate.io/owned-by-someone-else) == x ]] ||
  fail "pass: another owner's label was touched"
[[ -z $(label iogate.io/disk-class.old) ]] || fail "pass: the stale label of a path no longer configured was kept"
[[ -z $(label iogate.io/mixed-media) ]] || fail "pass: mixed-media set on a single-class volume"
pass "pass: others' labels kept, our stale label removed, no mixed-media"
node_json >"$SCRATCH/node.json"
assert_jq "$SCRATCH/node.json" '.metadata.annotations["iogate.io/report"] | fromjson | .outcome == "pass" and .gpus == 4 and .paths[0].path != null' \
  "pass: iogate.io/report annotation"
assert_jq "$SCRATCH/node.json" '.metadata.annotations["iogate.io/last-probe"] | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")' "pass: iogate.io/last-probe is RFC 3339"
assert_jq "$SCRATCH/node.json" '[.spec.taints[] | .key] == ["nvidia.com/gpu"]' "pass: no taint of ours, the GPU taint kept"
assert_jq "$SCRATCH/node.json" '(.status.conditions[] | select(.type == "StorageBelowPolicy") | .status == "False" and .reason == "StorageMeetsPolicy")
  and (.status.conditions[] | select(.type == "Ready") | .reason == "KubeletReady")' "pass: condition False, the kubelet's Ready kept"
node_events >"$SCRATCH/ev.json"
assert_jq "$SCRATCH/ev.json" 'length == 1 and .[0].type == "Normal" and .[0].reason == "StoragePolicyMet" and .[0].metadata.namespace == "default"
  and (.[0].message | test("IOPS"))' "pass: one Normal StoragePolicyMet Event on the node, in default"
api GET /_test/requests | jq -e '[.[] | select(.path | test("/events$")) | .path] | all(test("^/apis/events.k8s.io/v1/namespaces/default/events$"))' >/dev/null ||
  fail "pass: the Event did not go through events.k8s.io/v1"
transition=$(condition | jq -r .lastTransitionTime)

# --- the same verdict again: no new Event, no transition ---
node_once "$SCRATCH/b.json" "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "again: exit $rc"
[[ $(event_count) -eq 1 ]] || fail "again: $(event_count) Events, want still 1"
[[ $(condition | jq -r .lastTransitionTime) == "$transition" ]] || fail "again: lastTransitionTime moved"
pass "same verdict again: no second Event, lastTransitionTime kept"

# --- below policy, with a concurrent writer adding its own taint between our GET and PATCH ---
clear_requests
fault '{"method":"PATCH","path_regex":"/api/v1/nodes/gpu-1","body_regex":"taints","kind":"write","count":1,
  "patch":{"spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"},{"key":"other.io/maintenance","value":"soon","effect":"PreferNoSchedule"}]}}}'
node_once "$SCRATCH/c.json" "$FAIL_POLICY"
clear_faults
[[ $rc -eq 1 ]] || fail "fail: exit $rc, want 1: $(tail -5 "$SCRATCH/c.json.log")"
assert_jq "$SCRATCH/c.json" '.outcome == "fail" and .below_policy == true and .tier == "slow"' "fail: report below policy, tier slow"
api GET /_test/requests | jq -e '[.[] | select(.method == "PATCH" and .status == 409)] | length >= 1' >/dev/null ||
  fail "fail: the concurrent writer did not cause a 409"
node_json >"$SCRATCH/node.json"
assert_jq "$SCRATCH/node.json" '[.spec.taints[] | "\(.key)=\(.value):\(.effect)"] | sort ==
  ["iogate.io/storage-below-policy=true:NoSchedule","nvidia.com/gpu=present:NoSchedule","other.io/maintenance=soon:PreferNoSchedule"]' \
  "fail: 409 from a concurrent writer, re-read: our taint added, both others kept"
assert_jq "$SCRATCH/node.json" '.status.conditions[] | select(.type == "StorageBelowPolicy") | .status == "True" and .reason == "StorageBelowPolicy"
  and (.message | test("gpu-feed"))' "fail: condition True naming the rule"
[[ $(label iogate.io/tier) == slow ]] || fail "fail: tier label $(label iogate.io/tier)"
node_events >"$SCRATCH/ev.json"
assert_jq "$SCRATCH/ev.json" 'length == 2 and .[1].type == "Warning" and .[1].reason == "StorageBelowPolicy"' "fail: one Warning Event for the change"

# --- recovery: taint removed, others' taints kept, condition False, one Normal Event ---
node_once "$SCRATCH/d.json" "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "recovery: exit $rc"
node_json >"$SCRATCH/node.json"
assert_jq "$SCRATCH/node.json" '[.spec.taints[] | .key] | sort == ["nvidia.com/gpu","other.io/maintenance"]' "recovery: our taint removed, others kept"
assert_jq "$SCRATCH/node.json" '.status.conditions[] | select(.type == "StorageBelowPolicy") | .status == "False"' "recovery: condition False"
[[ $(event_count) -eq 3 ]] || fail "recovery: $(event_count) Events, want 3"
pass "recovery: a third Event, one per change"

# --- warn mode: the condition says below, no taint, exit 0 ---
node_once "$SCRATCH/e.json" "$WARN_POLICY"
[[ $rc -eq 0 ]] || fail "warn: exit $rc, want 0"
[[ $(our_taints) == "[]" ]] || fail "warn: tainted in warn mode: $(our_taints)"
[[ $(condition | jq -r .status) == True ]] || fail "warn: condition not True"
pass "warn mode: condition True, no taint, exit 0"
node_once "$SCRATCH/e2.json" "$FAIL_POLICY" --taint-effect NoExecute
[[ $(our_taints | jq -r '.[0].effect') == NoExecute ]] || fail "--taint-effect NoExecute: $(our_taints)"
pass "--taint-effect NoExecute"
events_before=$(event_count)

# --- restart: loop mode says nothing before its first probe, then writes without a spurious Event ---
LOOP_LOG="$SCRATCH/loop.log"
"$IOGATE" node --policy "$FAIL_POLICY" --path "data=$DATA" --node-name $NODE --kubeconfig "$KUBECONFIG_FILE" \
  --listen 127.0.0.1:0 --busy-util 100% --interval 1h --taint-effect NoExecute >/dev/null 2>"$LOOP_LOG" &
agent=$!
on_exit "kill $agent"
for _ in $(seq 100); do grep -q "serving /metrics" "$LOOP_LOG" && break; sleep 0.1; done
ADDR=$(sed -n 's/.*serving .* on \([0-9.:]*\).*/\1/p' "$LOOP_LOG" | head -1)
[[ -n $ADDR ]] || fail "restart: no listen address in the log: $(cat "$LOOP_LOG")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz")
[[ $code == 503 ]] || fail "restart: /readyz $code before the first probe, want 503"
[[ $(condition | jq -r .status) == True ]] || fail "restart: condition changed before the first probe"
pass "restart: /readyz 503 and the node untouched while the first probe runs"
for _ in $(seq 300); do [[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz") == 200 ]] && break; sleep 0.1; done
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz") == 200 ]] || fail "restart: never ready: $(tail -5 "$LOOP_LOG")"
for _ in $(seq 50); do grep -q "verdict fail" "$LOOP_LOG" && break; sleep 0.1; done
[[ $(event_count) -eq $events_before ]] || fail "restart: $(event_count) Events, want $events_before (same verdict as before the restart)"
pass "restart: ready after the first probe; same verdict, no Event"

# --- SIGTERM: exit 0 promptly, no test file left ---
t0=$(date +%s%N)
kill -TERM $agent
code=0
wait $agent || code=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[[ $code -eq 0 ]] || fail "SIGTERM: exit $code, want 0"
pass "SIGTERM while idle: exit 0 after $ms ms"
assert_no_test_files "$DATA"

# --- API outage: probing and metrics go on; the state lands when the API is back ---
api PATCH /api/v1/nodes/$NODE '{"metadata":{"labels":{"iogate.io/tier":null,"iogate.io/randread-iops":null}}}' >/dev/null
fault '{"path_regex":"/api/v1/nodes/gpu-1.*","kind":"500"}'
"$IOGATE" node --policy "$PASS_POLICY" --path "data=$DATA" --node-name $NODE --kubeconfig "$KUBECONFIG_FILE" \
  --listen 127.0.0.1:0 --busy-util 100% --interval 1h >/dev/null 2>"$LOOP_LOG.2" &
agent=$!
on_exit "kill $agent"
for _ in $(seq 100); do grep -q "serving /metrics" "$LOOP_LOG.2" && break; sleep 0.1; done
ADDR=$(sed -n 's/.*serving .* on \([0-9.:]*\).*/\1/p' "$LOOP_LOG.2" | head -1)
for _ in $(seq 600); do grep -q "could not write the state" "$LOOP_LOG.2" && break; sleep 0.1; done
grep -q "could not write the state" "$LOOP_LOG.2" || fail "outage: no failed write logged: $(tail -5 "$LOOP_LOG.2")"
curl -s "http://$ADDR/metrics" >"$SCRATCH/metrics.txt"
grep -q '^iogate_api_sync_pending{node="gpu-1"} 1$' "$SCRATCH/metrics.txt" || fail "outage: iogate_api_sync_pending is not 1"
grep -q '^iogate_probe_iops{' "$SCRATCH/metrics.txt" || fail "outage: no IOPS metric while the API is down"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz") == 200 ]] || fail "outage: not ready although probed"
[[ -z $(label iogate.io/tier) ]] || fail "outage: a label was written through a 500"
pass "outage: probed, /metrics and /readyz served, sync pending"
clear_faults
for _ in $(seq 300); do [[ -n $(label iogate.io/tier) ]] && break; sleep 0.1; done
[[ $(label iogate.io/tier) == ok && $(label iogate.io/randread-iops) =~ ^[0-9]+$ ]] || fail "outage: state not written after recovery: $(tail -5 "$LOOP_LOG.2")"
[[ $(our_taints) == "[]" ]] || fail "outage: the NoExecute taint of the failing run was not removed"
# The labels land first in a sync; the gauge flips once the whole sync is done.
for _ in $(seq 100); do curl -s "http://$ADDR/metrics" | grep -q '^iogate_api_sync_pending{node="gpu-1"} 0$' && break; sleep 0.1; done
curl -s "http://$ADDR/metrics" | grep -q '^iogate_api_sync_pending{node="gpu-1"} 0$' || fail "outage: still pending after recovery"
pass "outage: labels, taint and condition written once the API answered again"
kill -TERM $agent
wait $agent || fail "SIGTERM after outage: exit $?"

# --- no API at all, and usage errors ---
set +e
"$IOGATE" node --once --no-api --policy "$PASS_POLICY" --path "$DATA" --listen none --busy-util 100% >"$SCRATCH/n.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "--no-api: exit $rc: $(tail -3 "$SCRATCH/n.txt")"
grep -q "node verdict  pass" "$SCRATCH/n.txt" || fail "--no-api: human output lacks the verdict: $(cat "$SCRATCH/n.txt")"
pass "--no-api --once: human report, exit 0"
expect_usage "--path" node --policy "$PASS_POLICY" --no-api --listen none
expect_usage "--path: $SCRATCH/nope" node --policy "$PASS_POLICY" --path "$SCRATCH/nope" --no-api
expect_usage "--taint-effect" node --policy "$PASS_POLICY" --path "$DATA" --taint-effect Sometimes
expect_usage "--listen" node --policy "$PASS_POLICY" --path "$DATA" --listen nonsense --no-api
expect_usage "--policy" node --path "$DATA"
expect_usage "--sysfs-root: /other/sys is not under the root /host" node --policy "$PASS_POLICY" --path "$DATA" --proc-root /host/proc --sysfs-root /other/sys
expect_usage "--proc-root: expected ROOT/proc" node --policy "$PASS_POLICY" --path "$DATA" --proc-root /host/sys
grep -rq "$API_TOKEN" "$SCRATCH"/*.log "$LOOP_LOG"* && fail "the token reached a log"
pass "no token in any log"
