#!/usr/bin/env bash
# iogate node against the real kube-apiserver (tests/e2e/lib.sh): the agent's modes and its life
# over time (verdicts repeated, warn mode, restarts, an outage, --once's deadline), where
# test_node_agent.sh checks what one round writes and test_api_faults.sh the client under faults.
# The agent uses a kubeconfig with the token of the ServiceAccount the chart makes for the node
# agent (helm install), pointed at tests/faultproxy in front of the apiserver: the proxy's log is
# the request sequence, and the outage is injected there.
#   - first probe: the floor 10/GPU x 4 GPUs = 40; an iogate.io/-prefixed label iogate did not
#     write is kept; the same verdict again: no second Event, lastTransitionTime kept;
#   - warn mode: condition True, no taint, exit 0; --taint-effect NoExecute;
#   - a restart in loop mode: /readyz 503 and no write before the first probe, then ready; the
#     verdict it had before: no Event, lastTransitionTime kept; SIGTERM: exit 0, no test file;
#   - an API outage in loop mode (every Node request 500): probing, /metrics and /readyz go on,
#     iogate_api_sync_pending 1, nothing written; the API back: labels written, the NoExecute taint
#     of the failing run removed, iogate_api_sync_pending 0;
#   - --once with every request 500, then 401: --once-deadline (10 s) runs out, the log and the
#     report say so, exit 3 within the deadline after the probes (+ slack);
#   - --no-api --once (human report), usage errors; no token in any log.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faultproxy_lib.sh"

NODE=gpu-1
NS=iogate-system
SA=iogate-node
DATA="$SCRATCH/data"
mkdir -p "$DATA"

# --- the proxy ---
faultproxy_start

# --- the Node (Ready, 4 GPUs) with others' labels and the GPU taint; the agent's account ---
make_node "$NODE" team=ml iogate.io/disk-class.old=hdd iogate.io/owned-by-someone-else=x
k taint node "$NODE" nvidia.com/gpu=present:NoSchedule >/dev/null
# The agent's account and ClusterRole are the chart's own (the node agent alone).
helm_install iogate "$NS" --set webhook.enabled=false --set preflight.enabled=false \
  --set grafanaDashboard.enabled=false
k -n "$NS" get serviceaccount "$SA" >/dev/null || fail "the chart made no ServiceAccount $SA in $NS"
TOKEN=$(node_agent_token "$NS" "$SA" "$NODE")  # bound to a pod on NODE: the least-reach policy needs its node-name claim
KC="$SCRATCH/kubeconfig"
token_kubeconfig "$KC" "$PROXY_URL" "$SA" "$TOKEN"
pass "Node $NODE (4 GPUs, labels team, iogate.io/owned-by-someone-else, stale iogate.io/disk-class.old; taint nvidia.com/gpu); $SA's token kubeconfig at the proxy"

# 4 GPUs on the node, so the floor is 4 x the per-GPU figure.
PASS_POLICY=$(node_policy pass 10)
FAIL_POLICY=$(node_policy fail 100000000)
WARN_POLICY=$(node_policy warn 100000000 warn)

# node_once NAME POLICY [flags]: one round; report NAME.json, log NAME.log, exit code in $rc.
node_once() {
  local name=$1 pol=$2; shift 2
  set +e
  timeout 180 "$IOGATE" node --once --policy "$pol" --path "data=$DATA" --node-name "$NODE" --kubeconfig "$KC" \
    --listen none --busy-util 100% --output-format json --log-level debug "$@" >"$SCRATCH/$name.json" 2>"$SCRATCH/$name.log"
  rc=$?
  set -e
}
label() { node_json | jq -r --arg k "$1" '.metadata.labels[$k] // ""'; }
condition() { node_json | jq -c '.status.conditions[] | select(.type == "StorageBelowPolicy")'; }
our_taints() { node_json | jq -c '[.spec.taints[]? | select(.key == "iogate.io/storage-below-policy")]'; }
# iogate's Events about the Node, through events.k8s.io/v1, oldest first.
event_count() {
  k -n default get events.v1.events.k8s.io -o json |
    jq '[.items[] | select(.regarding.kind == "Node" and .regarding.name == "'"$NODE"'" and .reportingController == "iogate.io/node")] | length'
}

# --- first probe: the floor, others' labels; the same verdict again: nothing new ---
node_once a "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "pass: exit $rc: $(grep -v 'kube: ' "$SCRATCH/a.log" | tail -5)"
assert_jq "$SCRATCH/a.json" '.outcome == "pass" and .api.state == "ok" and .gpus == 4 and .gpus_from == "status.capacity" and
    (.paths[0].verdict.checks[] | select(.check == "min_iops") | .threshold_value == 40)' \
  "pass: 4 GPUs from the Node's capacity, floor 10/GPU x 4 = 40, written"
node_json >"$SCRATCH/node-a.json"
assert_jq "$SCRATCH/node-a.json" '.metadata.labels as $l | $l["iogate.io/owned-by-someone-else"] == "x" and $l.team == "ml" and
    ($l | has("iogate.io/disk-class.old") | not) and ($l["iogate.io/randread-iops"] | test("^[0-9]+$")) and
    [.spec.taints[] | .key] == ["nvidia.com/gpu"]' \
  "pass (kubectl): an iogate.io/ label iogate did not write kept, its own stale label removed; the GPU taint alone"
[[ $(event_count) -eq 1 ]] || fail "pass: $(event_count) Events, want 1"
transition=$(condition | jq -r .lastTransitionTime)
heartbeat=$(condition | jq -r .lastHeartbeatTime)
sleep 1  # the times have a 1 s resolution: a heartbeat written now must differ
node_once b "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "again: exit $rc"
[[ $(event_count) -eq 1 ]] || fail "again: $(event_count) Events, want still 1"
[[ $(condition | jq -r .lastTransitionTime) == "$transition" ]] || fail "again: lastTransitionTime moved: $(condition)"
[[ $(condition | jq -r .lastHeartbeatTime) > "$heartbeat" ]] || fail "again: the condition was not written (heartbeat $heartbeat): $(condition)"
pass "same verdict again (kubectl): the condition written (heartbeat moved), lastTransitionTime kept, no second Event"

# --- warn mode: the condition says below, no taint, exit 0; then --taint-effect NoExecute ---
node_once warn "$WARN_POLICY"
[[ $rc -eq 0 ]] || fail "warn: exit $rc, want 0"
assert_jq "$SCRATCH/warn.json" '.below_policy == true and .api.state == "ok"' "warn: below policy in the report, written"
[[ $(our_taints) == "[]" ]] || fail "warn: tainted in warn mode: $(our_taints)"
[[ $(condition | jq -r .status) == True ]] || fail "warn: condition not True: $(condition)"
pass "warn mode (kubectl): condition True, no taint, exit 0"
node_once noexec "$FAIL_POLICY" --taint-effect NoExecute
[[ $rc -eq 1 ]] || fail "--taint-effect NoExecute: exit $rc, want 1"
[[ $(our_taints | jq -c '[.[] | .effect]') == '["NoExecute"]' ]] || fail "--taint-effect NoExecute: $(our_taints)"
pass "--taint-effect NoExecute (kubectl): iogate.io/storage-below-policy:NoExecute, exit 1"
events_before=$(event_count)
transition=$(condition | jq -r .lastTransitionTime)
probed=$(node_json | jq -r '.metadata.annotations["iogate.io/last-probe"]')

# agent_loop NAME POLICY [flags]: the agent in loop mode (interval 1h) in the background, pid in
# $agent, its /metrics address in $ADDR.
agent_loop() {
  local name=$1 pol=$2; shift 2
  "$IOGATE" node --policy "$pol" --path "data=$DATA" --node-name "$NODE" --kubeconfig "$KC" --listen 127.0.0.1:0 \
    --busy-util 100% --interval 1h --log-level debug "$@" >/dev/null 2>"$SCRATCH/$name.log" &
  agent=$!
  on_exit "kill $agent"
  wait_until 30 grep -q "serving /metrics" "$SCRATCH/$name.log" || fail "$name: not serving: $(tail -5 "$SCRATCH/$name.log")"
  ADDR=$(sed -n 's/.*serving .* on \([0-9.:]*\).*/\1/p' "$SCRATCH/$name.log" | head -1)
  [[ -n $ADDR ]] || fail "$name: no listen address in the log"
}
readyz() { curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz"; }
metric() { curl -s "http://$ADDR/metrics" | sed -n "s/^$1{node=\"$NODE\"} //p"; }
# For wait_until, which runs a command again each time: each test evaluated anew.
is_ready() { [[ $(readyz) == 200 ]]; }
sync_done() { [[ $(metric iogate_api_sync_pending) == 0 ]]; }
has_tier() { [[ -n $(label iogate.io/tier) ]]; }
probe_written() { [[ $(node_json | jq -r '.metadata.annotations["iogate.io/last-probe"]') != "$probed" ]]; }
sigterm() {  # NAME: SIGTERM, exit 0 within 30 s
  kill -TERM $agent
  local i
  for i in $(seq 300); do kill -0 $agent 2>/dev/null || break; sleep 0.1; done
  kill -0 $agent 2>/dev/null && fail "$1: still running 30 s after SIGTERM"
  local code=0
  wait $agent || code=$?
  [[ $code -eq 0 ]] || fail "$1: SIGTERM: exit $code, want 0: $(tail -3 "$SCRATCH/$1.log")"
  pass "$1: SIGTERM: exit 0"
}

# --- restart: loop mode writes nothing before its first probe, then no spurious Event ---
m=$(mark)
agent_loop loop "$FAIL_POLICY" --taint-effect NoExecute
requests_since "$m" "$SCRATCH/early.req.json"   # read before /readyz: these came before the probe was done
code=$(readyz)
[[ $code == 503 ]] || fail "restart: /readyz $code before the first probe, want 503"
assert_jq "$SCRATCH/early.req.json" 'all(.[]; .method == "GET")' "restart: /readyz 503 and no write to the API before the first probe"
wait_until 120 is_ready || fail "restart: never ready: $(tail -5 "$SCRATCH/loop.log")"
wait_until 60 probe_written ||
  fail "restart: the probe was not written: $(grep -v 'kube: ' "$SCRATCH/loop.log" | tail -5)"
wait_until 30 sync_done || fail "restart: sync still pending"
[[ $(event_count) -eq $events_before ]] || fail "restart: $(event_count) Events, want $events_before (the same verdict as before the restart)"
[[ $(condition | jq -r '.status + " " + .lastTransitionTime') == "True $transition" ]] || fail "restart: condition $(condition)"
pass "restart (kubectl): ready after the first probe, written; same verdict: no Event, lastTransitionTime kept"
sigterm loop
assert_no_test_files "$DATA"

# --- API outage: probing and metrics go on; the state lands when the API is back ---
k label node "$NODE" iogate.io/tier- iogate.io/randread-iops- >/dev/null
m=$(mark)
fault '{"path":"/api/v1/nodes/'"$NODE"'(/.*)?","action":"500"}' >/dev/null
agent_loop outage "$PASS_POLICY"
wait_until 120 grep -q "could not write the state" "$SCRATCH/outage.log" || fail "outage: no failed write logged: $(tail -5 "$SCRATCH/outage.log")"
[[ $(metric iogate_api_sync_pending) == 1 ]] || fail "outage: iogate_api_sync_pending is '$(metric iogate_api_sync_pending)', want 1"
# Read whole, then searched: `curl | grep -q` under pipefail fails when grep stops reading early
# and curl dies of SIGPIPE (seen once in five runs).
curl -s "http://$ADDR/metrics" >"$SCRATCH/outage.metrics"
grep -q '^iogate_probe_iops{' "$SCRATCH/outage.metrics" || fail "outage: no iogate_probe_iops while the API is down"
[[ $(readyz) == 200 ]] || fail "outage: /readyz $(readyz) although probed"
[[ -z $(label iogate.io/tier) ]] || fail "outage: a label was written through a 500"
pass "outage: probed; /metrics (iogate_probe_iops, iogate_api_sync_pending 1) and /readyz 200 served; nothing on the Node"
clear_faults
wait_until 120 has_tier || fail "outage: state not written after recovery: $(tail -5 "$SCRATCH/outage.log")"
[[ $(label iogate.io/tier) == ok && $(label iogate.io/randread-iops) =~ ^[0-9]+$ ]] || fail "outage: labels $(node_json | jq -c .metadata.labels)"
wait_until 30 sync_done || fail "outage: still pending after recovery"
[[ $(our_taints) == "[]" ]] || fail "outage: the NoExecute taint of the failing run was not removed: $(our_taints)"
[[ $(condition | jq -r .status) == False ]] || fail "outage: condition $(condition)"
requests_since "$m" "$SCRATCH/outage.req.json"
assert_jq "$SCRATCH/outage.req.json" '[.[] | select(.path | startswith("/api/v1/nodes/'"$NODE"'")) | .status] |
    index(500) != null and index(200) > rindex(500)' "outage: the Node requests 500ed, then answered 200 once the API was back"
pass "outage (kubectl): tier=ok, randread-iops, the NoExecute taint removed, condition False; iogate_api_sync_pending 0"
sigterm outage

# --- --once against an API that keeps failing: --once-deadline ends it ---
# Every request answered 500 (an apiserver in trouble), then every request 401 (a revoked token):
# the agent probes, keeps retrying the writes until the deadline (10 s, the API's time in all,
# probes not counted) runs out, says so in its log and report, and exits 3. The bound checked is
# the documented limit (node.h: the deadline after the probes, at worst one 10 s request timeout
# more), not speed: 15 s of slack beyond the deadline for a loaded machine.
for action in 500 401; do
  m=$(mark)
  fault '{"path":".*","action":"'"$action"'"}' >/dev/null
  t0=$(date +%s.%N)
  node_once "deadline-$action" "$PASS_POLICY" --once-deadline 10s
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  clear_faults
  [[ $rc -eq 3 ]] || fail "--once-deadline, every request $action: exit $rc, want 3: $(grep -v 'kube: ' "$SCRATCH/deadline-$action.log" | tail -5)"
  probe_s=$(jq '[.paths[].probe_wall_ns] | add / 1e8 | round / 10' "$SCRATCH/deadline-$action.json")
  awk -v t="$took" -v p="$probe_s" 'BEGIN { exit !(t - p < 10 + 15) }' ||
    fail "--once-deadline 10s, every request $action: ${took}s in all, ${probe_s}s of it probing: past the deadline plus 15 s"
  grep -q -- "the result was not written within --once-deadline 10s .*giving up, exit 3; last error: .*$action" "$SCRATCH/deadline-$action.log" ||
    fail "--once-deadline, $action: the log does not say the deadline ended it: $(grep -v 'kube: ' "$SCRATCH/deadline-$action.log" | tail -3)"
  assert_jq "$SCRATCH/deadline-$action.json" '.paths[0].state == "measured" and .api.state == "pending" and
      (.api.last_error | startswith("not written within --once-deadline 10s; last: ") and contains("'"$action"'"))' \
    "--once-deadline 10s, every request $action: measured, not written, exit 3 after ${took}s (${probe_s}s probing); the report names the deadline"
  requests_since "$m" "$SCRATCH/deadline-$action.req.json"
  assert_jq "$SCRATCH/deadline-$action.req.json" 'length >= 2 and all(.[]; .status == '"$action"' and .fault == "'"$action"'")' \
    "--once-deadline, $action: $(jq length "$SCRATCH/deadline-$action.req.json") requests, each answered $action by the proxy"
done

# --- no API at all, and usage errors ---
set +e
"$IOGATE" node --once --no-api --policy "$PASS_POLICY" --path "$DATA" --listen none --busy-util 100% >"$SCRATCH/noapi.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "--no-api: exit $rc: $(tail -3 "$SCRATCH/noapi.txt")"
grep -q "node verdict  pass" "$SCRATCH/noapi.txt" || fail "--no-api: the human report lacks the verdict: $(cat "$SCRATCH/noapi.txt")"
pass "--no-api --once: human report, exit 0"
expect_usage "--path" node --policy "$PASS_POLICY" --no-api --listen none
expect_usage "--path: $SCRATCH/nope" node --policy "$PASS_POLICY" --path "$SCRATCH/nope" --no-api
expect_usage "--taint-effect" node --policy "$PASS_POLICY" --path "$DATA" --taint-effect Sometimes
expect_usage "--listen" node --policy "$PASS_POLICY" --path "$DATA" --listen nonsense --no-api
# No --policy: the default profile, image-training (samples judged in AU), in mode warn: exit 0.
set +e
"$IOGATE" node --once --no-api --path "$DATA" --listen none --busy-util 100% --output-format json \
  >"$SCRATCH/default.json" 2>"$SCRATCH/default.log"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "no --policy: exit $rc, want 0: $(tail -3 "$SCRATCH/default.log")"
assert_jq "$SCRATCH/default.json" '.policy.source == "profile:image-training" and .policy.mode == "warn"' \
  "no --policy: the node agent judges with profile:image-training in mode warn, exit 0"
expect_usage "--sysfs-root: /other/sys is not under the root /host" node --policy "$PASS_POLICY" --path "$DATA" --proc-root /host/proc --sysfs-root /other/sys
expect_usage "--proc-root: expected ROOT/proc" node --policy "$PASS_POLICY" --path "$DATA" --proc-root /host/sys
expect_usage "--once-deadline: only with --once" node --policy "$PASS_POLICY" --path "$DATA" --no-api --once-deadline 10s
expect_usage "--once-deadline: must be within \[1s, 1h\]" node --policy "$PASS_POLICY" --path "$DATA" --no-api --once --once-deadline 500ms
"$IOGATE" node --help | tr -s " \n" " " | grep -q -- "--once-deadline arg --once: the Kubernetes API's time in all ([^)]*); then exit 3 (default 60s)" || fail "node --help does not document --once-deadline and its default"
pass "node --help: --once-deadline, default 60s"

if hit=$(grep -lF -e "$TOKEN" -e "${TOKEN##*.}" "$PROXY_LOG" "$SCRATCH"/*.log "$SCRATCH"/*.json 2>/dev/null); then
  fail "the token leaked into: $hit"
fi
pass "no token (whole or its signature) in the proxy's log ($(wc -l <"$PROXY_LOG") requests), iogate's logs or reports"
