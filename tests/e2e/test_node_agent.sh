#!/usr/bin/env bash
# iogate node against a real kube-apiserver (Node,RBAC authorization, NodeRestriction), as the
# chart's node agent: its ServiceAccount, ClusterRole and binding from a real helm install, its
# token, in-cluster configuration, NODE_NAME from the environment. Two Nodes carry other owners'
# labels, annotations, taints and conditions. A passing and a failing node: iogate's labels,
# annotations, taint (failing node only), StorageBelowPolicy condition and Events; everything
# foreign kept. Races on one node: two agents and a second controller at once (nothing lost), and
# a write placed between the agent's read and its write of the taints (the apiserver answers 409,
# the agent reads again, nothing lost). Recovery: only iogate's taint goes, the condition flips.
# Every request the agent made is listed from its debug log: none got 401/403, and
# `kubectl auth can-i` as the ServiceAccount allows each.
#
# The webhook and preflight are off: no kubelet runs the webhook's pods, nothing here sends pods
# through it, and preflight only sets up namespaces for training pods. The node agent's objects
# do not depend on either, and its rights come from its own ClusterRole alone.
source "$(dirname "$0")/lib.sh"

NS=iogate-system
RELEASE=iogate
DATA="$SCRATCH/data"
mkdir -p "$DATA"
RACE_PY="$E2E_DIR/node_race.py"

# --- the chart's node agent identity ---
helm_install "$RELEASE" "$NS" --set webhook.enabled=false --set preflight.enabled=false
SA=$(k -n "$NS" get serviceaccount -l "app.kubernetes.io/component=node-agent,app.kubernetes.io/instance=$RELEASE" \
  -o jsonpath='{.items[*].metadata.name}')
[[ -n $SA && $SA != *" "* ]] || fail "want one node-agent ServiceAccount from the chart, got '$SA'"
k get clusterrolebinding "$SA" -o json >"$SCRATCH/crb.json"
assert_jq --arg sa "$SA" --arg ns "$NS" "$SCRATCH/crb.json" '.subjects == [{"kind":"ServiceAccount","name":$sa,"namespace":$ns}] and .roleRef.kind == "ClusterRole"' \
  "the chart's ClusterRoleBinding $SA binds ServiceAccount $NS/$SA"
AS="system:serviceaccount:$NS:$SA"

# --- two Nodes with other owners' labels, annotations, taints and conditions ---
# make_node: Ready (the kubelet's condition), 4 nvidia.com/gpu in capacity. Then what others put
# there: a zone and a team label, an annotation, a maintenance taint, a MemoryPressure condition,
# and a per-path label of iogate's for a path no longer configured (ours, stale: to be removed).
NODES=(gpu-a gpu-b)
for node in "${NODES[@]}"; do
  make_node "$node" topology.kubernetes.io/zone=zone-1 team.example.com/owner=vision iogate.io/disk-class.old=hdd
  k annotate node "$node" example.com/rack=r42 >/dev/null
  k taint node "$node" example.com/maintenance=planned:PreferNoSchedule >/dev/null
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  k patch node "$node" --subresource=status --type=strategic -p "$(jq -nc --arg t "$now" '{status:{conditions:[
    {type:"MemoryPressure",status:"False",reason:"KubeletHasSufficientMemory",message:"kubelet has sufficient memory available",
     lastHeartbeatTime:$t,lastTransitionTime:$t}]}}')" >/dev/null
  k get node "$node" -o json >"$SCRATCH/$node.before.json"
done
assert_jq "$SCRATCH/gpu-a.before.json" '([.status.conditions[].type] | sort) == ["MemoryPressure","Ready"]
  and ([.spec.taints[].key] == ["example.com/maintenance"])' "two Nodes with foreign labels, an annotation, a taint and two conditions"

# The floor is 4 × the per-GPU figure (4 GPUs on each node): 10 any disk passes, 10^8 none does.
PASS_POLICY=$(node_policy pass 10)
FAIL_POLICY=$(node_policy fail 100000000)

# agent OUT NODE POLICY: `iogate node --once` as the DaemonSet's container runs it:
# in-cluster with the agent's token (as_pod), NODE_NAME from the environment (the downward API's
# spec.nodeName). Report in OUT, debug log (every API request and its status) in OUT.log, exit code
# in $rc. The busy check is off (--busy-util 100%): this machine's disk is shared with builds.
agent() {
  local out=$1 node=$2 pol=$3
  set +e
  # The token the kubelet of NODE projects into the DaemonSet's pod there (node-name claim): the
  # chart's least-reach policy lets it write that Node alone.
  as_pod "$NS" "$(node_agent_token "$NS" "$SA" "$node")" env NODE_NAME="$node" "$IOGATE" node --once --policy "$pol" --path "data=$DATA" \
    --listen none --busy-util 100% --log-level debug --output-format json >"$out" 2>"$out.log"
  rc=$?
  set -e
  AGENT_LOGS+=("$out.log")
}
AGENT_LOGS=()
# requests LOG...: "METHOD PATH STATUS" for every API request in the agents' debug logs.
requests() { sed -n 's/.*kube: \(GET\|PATCH\|POST\|PUT\|DELETE\) \([^ ]*\) \([0-9]\{3\}\) (.*/\1 \2 \3/p' "$@"; }
# no_denials LOG...: a 401 or 403 anywhere is a permission the agent lacks (or a bad token): fail.
no_denials() {
  local denied
  denied=$(requests "$@" | grep -E ' 40[13]$' || true)
  [[ -z $denied ]] || fail "the API refused the agent: $denied ($(grep -h -m3 -E 'forbidden|Forbidden|Unauthorized' "$@"))"
}
# events NODE: the Events about NODE in default, oldest first, as kubectl shows them (core/v1).
events() {
  k -n default get events --field-selector "involvedObject.kind=Node,involvedObject.name=$1" -o json |
    jq '.items | sort_by(.eventTime // .firstTimestamp)' >"$SCRATCH/$1.events.json"
  echo "$SCRATCH/$1.events.json"
}
RFC3339='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'
# foreign_kept NODE FILE: the other owners' labels, annotation, taint and conditions are as before.
foreign_kept() {
  local before="$SCRATCH/$1.before.json"
  jq -e --slurpfile b "$before" '
    ($b[0].metadata.labels | to_entries | map(select(.key | startswith("iogate.io/") | not)) | from_entries) as $lb
    | (.metadata.labels | with_entries(select(.key as $k | $lb | has($k)))) == $lb
    and .metadata.annotations["example.com/rack"] == "r42"
    and ([.spec.taints[] | select(.key == "example.com/maintenance")] == [$b[0].spec.taints[] | select(.key == "example.com/maintenance")])
    and ([.status.conditions[] | select(.type == "Ready" or .type == "MemoryPressure")] | sort_by(.type))
        == ([$b[0].status.conditions[] | select(.type == "Ready" or .type == "MemoryPressure")] | sort_by(.type))' "$2" >/dev/null ||
    fail "$1: another owner's label, annotation, taint or condition changed: $(jq -c '{labels: .metadata.labels, taints: .spec.taints,
      conditions: [.status.conditions[] | {type, status, reason, lastTransitionTime}]}' "$2")"
}
# ours NODE FILE REPORT TIER: iogate's labels and annotations on the node agree with the agent's report.
ours() {
  local node=$1 file=$2 report=$3 tier=$4 iops class
  iops=$(jq -r '.paths[0].measurement.iops | round' "$report")
  class=$(jq -r '.paths[0].measurement.device_class' "$report")
  [[ $iops =~ ^[0-9]+$ && -n $class && $class != null ]] || fail "$node: no measurement in the report: $(head -c 400 "$report")"
  jq -e --arg iops "$iops" --arg class "$class" --arg tier "$tier" '.metadata.labels as $l
    | $l["iogate.io/randread-iops"] == $iops and $l["iogate.io/disk-class"] == $class and $l["iogate.io/tier"] == $tier
    and $l["iogate.io/randread-iops.data"] == $iops and $l["iogate.io/disk-class.data"] == $class
    and ($l | has("iogate.io/mixed-media") | not) and ($l | has("iogate.io/disk-class.old") | not)' "$file" >/dev/null ||
    fail "$node: iogate's labels $(jq -c '.metadata.labels | with_entries(select(.key | startswith("iogate.io/")))' "$file"), want randread-iops=$iops disk-class=$class tier=$tier"
  pass "$node: labels randread-iops=$iops (the report's IOPS) disk-class=$class tier=$tier, per path data; stale disk-class.old removed"
  assert_jq --arg o "$(jq -r .outcome "$report")" --arg re "$RFC3339" "$file" '.metadata.annotations as $a
    | ($a["iogate.io/report"] | fromjson | .outcome == $o and .gpus == 4 and (.paths | length) == 1)
    and ($a["iogate.io/last-probe"] | test($re))' \
    "$node: annotations iogate.io/report (outcome, 4 GPUs) and last-probe (RFC 3339)"
}
condition() { jq -c '.status.conditions[] | select(.type == "StorageBelowPolicy")' "$1"; }

# --- first probes: gpu-a passes, gpu-b fails ---
agent "$SCRATCH/a1.json" gpu-a "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "gpu-a: exit $rc, want 0: $(grep -v 'kube: ' "$SCRATCH/a1.json.log" | tail -5)"
agent "$SCRATCH/b1.json" gpu-b "$FAIL_POLICY"
[[ $rc -eq 1 ]] || fail "gpu-b: exit $rc, want 1 (below policy, enforce): $(grep -v 'kube: ' "$SCRATCH/b1.json.log" | tail -5)"
no_denials "$SCRATCH/a1.json.log" "$SCRATCH/b1.json.log"
assert_jq "$SCRATCH/a1.json" '.outcome == "pass" and .node == "gpu-a" and .gpus == 4 and .gpus_from == "status.capacity" and .api.state == "ok"' \
  "gpu-a: report pass, 4 GPUs read from the Node's capacity, written (in-cluster, NODE_NAME)"
assert_jq "$SCRATCH/b1.json" '.outcome == "fail" and .below_policy == true and .tier == "slow" and .api.state == "ok"' \
  "gpu-b: report below policy, tier slow, written"

node_json gpu-a >"$SCRATCH/gpu-a.json"
A="$SCRATCH/gpu-a.json"
ours gpu-a "$A" "$SCRATCH/a1.json" ok
assert_jq "$A" '[.spec.taints[] | .key] == ["example.com/maintenance"]' "gpu-a: no taint of iogate's, the maintenance taint kept"
assert_jq --arg re "$RFC3339" "$A" '.status.conditions[] | select(.type == "StorageBelowPolicy")
  | .status == "False" and .reason == "StorageMeetsPolicy" and (.message | length > 0)
    and (.lastHeartbeatTime | test($re)) and (.lastTransitionTime | test($re))' \
  "gpu-a: condition StorageBelowPolicy False, StorageMeetsPolicy, RFC 3339 times"
foreign_kept gpu-a "$A"
pass "gpu-a: every foreign label, the annotation, the taint and the Ready and MemoryPressure conditions unchanged"

node_json gpu-b >"$SCRATCH/gpu-b.json"
B="$SCRATCH/gpu-b.json"
ours gpu-b "$B" "$SCRATCH/b1.json" slow
assert_jq "$B" '[.spec.taints[] | "\(.key)=\(.value):\(.effect)"] | sort ==
  ["example.com/maintenance=planned:PreferNoSchedule","iogate.io/storage-below-policy=true:NoSchedule"]' \
  "gpu-b: taint iogate.io/storage-below-policy=true:NoSchedule added, the maintenance taint kept"
assert_jq --arg re "$RFC3339" "$B" '.status.conditions[] | select(.type == "StorageBelowPolicy")
  | .status == "True" and .reason == "StorageBelowPolicy" and (.message | test("gpu-feed")) and (.message | test("IOPS"))
    and (.lastHeartbeatTime | test($re)) and (.lastTransitionTime | test($re))' \
  "gpu-b: condition StorageBelowPolicy True, naming the rule and the IOPS, RFC 3339 times"
assert_jq "$B" '(.status.conditions | map(select(.type == "Ready"))[0] | keys) ==
  (.status.conditions | map(select(.type == "StorageBelowPolicy"))[0] | keys)' \
  "gpu-b: the condition has exactly the fields of the kubelet's Ready condition"
foreign_kept gpu-b "$B"
pass "gpu-b: every foreign label, the annotation, the taint and the Ready and MemoryPressure conditions unchanged"
echo "--- kubectl get node gpu-b -o yaml: status.conditions"
k get node gpu-b -o yaml >"$SCRATCH/gpu-b.yaml"
awk '/^  conditions:/{p=1; print; next} p && /^  [^ -]/{exit} p' "$SCRATCH/gpu-b.yaml"
echo "---"

# Events: one per node, in default, about the Node (its uid), from iogate.io/node.
for node in gpu-a gpu-b; do
  [[ $node == gpu-a ]] && want='["Normal","StoragePolicyMet"]' || want='["Warning","StorageBelowPolicy"]'
  assert_jq --argjson want "$want" --arg uid "$(jq -r .metadata.uid "$SCRATCH/$node.json")" \
    --arg msg "$(condition "$SCRATCH/$node.json" | jq -r .message)" "$(events $node)" '
    length == 1 and [.[0].type, .[0].reason] == $want and .[0].involvedObject.uid == $uid
    and .[0].involvedObject.kind == "Node" and .[0].reportingComponent == "iogate.io/node" and .[0].message == $msg' \
    "$node: one Event $want about the Node (its uid), from iogate.io/node, with the condition's message"
done
k -n default get events.v1.events.k8s.io -o json >"$SCRATCH/events-v1.json"
assert_jq "$SCRATCH/events-v1.json" '[.items[] | select(.regarding.kind == "Node")] | length == 2
  and all(.reportingController == "iogate.io/node" and .action == "Probe" and (.reportingInstance | startswith("iogate-node-")))' \
  "the Events through events.k8s.io/v1: regarding the Node, reportingController, action, reportingInstance"

# --- race 1: two agents on gpu-b at once, and a second controller writing the same Node ---
# Neither agent's taint is there at the start (removed as admin), so both read, edit and write the
# taint list while the writer rewrites its own taint, label and condition, 20 ms between rounds of
# three writes: a write every 10-15 ms, far busier than any Node sees (a kubelet writes its
# status every 10 s at most), yet a client that reads and writes within a few ms wins within its retries.
# (A PATCH held some 50 ms by Nagle's algorithm against delayed ACKs loses every round.) 409s are likely but not certain (the timing is the scheduler's): race 2 forces one. What
# must hold: nothing lost, one taint of iogate's, the writer's latest values all there.
k taint node gpu-b iogate.io/storage-below-policy:NoSchedule- >/dev/null
before_race=$(condition <(node_json gpu-b))
events_before=$(jq length "$(events gpu-b)")
PKI="$CLUSTER_DIR/pki"
ADMIN=(--server "$CLUSTER_SERVER" --ca "$CLUSTER_CA" --cert "$PKI/admin.crt" --key "$PKI/admin.key")
python3 "$RACE_PY" writer "${ADMIN[@]}" --node gpu-b --pause 0.02 --stop "$SCRATCH/writer.stop" \
  --out "$SCRATCH/writer.json" 2>"$SCRATCH/writer.err" &
writer=$!
on_exit "kill $writer"
for _ in $(seq 300); do
  [[ -n $(k get node gpu-b -o jsonpath='{.metadata.labels.writer\.example\.com/seq}') ]] && break
  kill -0 $writer 2>/dev/null || fail "race: the writer died: $(cat "$SCRATCH/writer.err")"
  sleep 0.1
done
(agent "$SCRATCH/r1.json" gpu-b "$FAIL_POLICY"; exit $rc) & a1=$!
(agent "$SCRATCH/r2.json" gpu-b "$FAIL_POLICY"; exit $rc) & a2=$!
wait $a1 && rc1=0 || rc1=$?
wait $a2 && rc2=0 || rc2=$?
touch "$SCRATCH/writer.stop"
wait $writer || fail "race: the writer failed: $(cat "$SCRATCH/writer.err")"
AGENT_LOGS+=("$SCRATCH/r1.json.log" "$SCRATCH/r2.json.log")
[[ $rc1 -eq 1 && $rc2 -eq 1 ]] || fail "race: agents exited $rc1 and $rc2, want 1 (below policy): $(grep -hv 'kube: ' "$SCRATCH/r1.json.log" "$SCRATCH/r2.json.log" | tail -6)"
[[ $(jq -r .outcome "$SCRATCH/r1.json") == fail && $(jq -r .outcome "$SCRATCH/r2.json") == fail ]] ||
  fail "race: the agents' reports: $(jq -c '{outcome, api}' "$SCRATCH/r1.json" "$SCRATCH/r2.json")"
[[ $(jq -r .api.state "$SCRATCH/r1.json") == ok && $(jq -r .api.state "$SCRATCH/r2.json") == ok ]] ||
  fail "race: an agent did not write: $(jq -c .api "$SCRATCH/r1.json" "$SCRATCH/r2.json")"
no_denials "$SCRATCH/r1.json.log" "$SCRATCH/r2.json.log"
node_json gpu-b >"$SCRATCH/gpu-b.json"
B="$SCRATCH/gpu-b.json"
W="$SCRATCH/writer.json"
assert_jq --slurpfile w "$W" "$B" '[.spec.taints[] | "\(.key)=\(.value):\(.effect)"] | sort ==
  ["example.com/maintenance=planned:PreferNoSchedule", "example.com/writer=\($w[0].last.taint):PreferNoSchedule",
   "iogate.io/storage-below-policy=true:NoSchedule"]' \
  "race: iogate's taint once, the writer's latest taint value and the maintenance taint all there"
assert_jq --slurpfile w "$W" "$B" '.metadata.labels["writer.example.com/seq"] == $w[0].last.label
  and (.status.conditions[] | select(.type == "ExampleWriter") | .message == $w[0].last.condition_message)' \
  "race: the writer's latest label and condition there"
iops_now=$(jq -r '.metadata.labels["iogate.io/randread-iops"]' "$B")
jq -se --arg v "$iops_now" 'map(.paths[0].measurement.iops | round | tostring) | index($v) != null' \
  "$SCRATCH/r1.json" "$SCRATCH/r2.json" >/dev/null || fail "race: randread-iops $iops_now is neither agent's IOPS"
[[ $(jq -r '.metadata.labels["iogate.io/tier"]' "$B") == slow ]] || fail "race: tier label lost"
foreign_kept gpu-b "$B"
after_race=$(condition "$B")
[[ $(jq -r .status <<<"$after_race") == True &&
   $(jq -r .lastTransitionTime <<<"$after_race") == $(jq -r .lastTransitionTime <<<"$before_race") &&
   $(jq -r .lastHeartbeatTime <<<"$after_race") > $(jq -r .lastHeartbeatTime <<<"$before_race") ]] ||
  fail "race: condition before $before_race, after $after_race: want True, the same lastTransitionTime, a later lastHeartbeatTime"
[[ $(jq length "$(events gpu-b)") -eq $events_before ]] || fail "race: a new Event although the verdict did not change"
conflicts=$(requests "$SCRATCH/r1.json.log" "$SCRATCH/r2.json.log" | grep -c ' 409$' || true)
pass "race: two agents (exit $rc1, $rc2) and $(jq .rounds "$W") writer rounds: nothing lost; condition True kept its
  lastTransitionTime, heartbeat moved; no new Event (409s met: agents $conflicts, writer $(jq .conflicts "$W"))"

# --- race 2: a write between the agent's read and its write of the taints: a real 409 ---
# node_race.py proxy forwards the agent's requests to the apiserver unchanged; before the agent's
# PATCH that carries the resourceVersion of its read, it adds a taint as admin. The apiserver
# refuses that PATCH (409); the agent must read again and keep the newcomer.
k taint node gpu-b iogate.io/storage-below-policy:NoSchedule- >/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$SCRATCH/proxy.key" 2>/dev/null
openssl req -new -key "$SCRATCH/proxy.key" -subj "/CN=race-proxy" -out "$SCRATCH/proxy.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$SCRATCH/proxy.ext"
openssl x509 -req -in "$SCRATCH/proxy.csr" -CA "$CLUSTER_CA" -CAkey "$PKI/ca.key" -CAcreateserial \
  -CAserial "$SCRATCH/ca.srl" -days 1 -extfile "$SCRATCH/proxy.ext" -out "$SCRATCH/proxy.crt" 2>/dev/null
python3 "$RACE_PY" proxy "${ADMIN[@]}" --node gpu-b --tls-cert "$SCRATCH/proxy.crt" --tls-key "$SCRATCH/proxy.key" \
  --port-file "$SCRATCH/proxy.port" --log "$SCRATCH/proxy.log" 2>"$SCRATCH/proxy.err" &
proxy=$!
on_exit "kill $proxy"
for _ in $(seq 100); do [[ -s $SCRATCH/proxy.port ]] && break; kill -0 $proxy || break; sleep 0.1; done
[[ -s $SCRATCH/proxy.port ]] || fail "race 2: the proxy did not start: $(cat "$SCRATCH/proxy.err")"
CLUSTER_SERVER=https://127.0.0.1:$(cat "$SCRATCH/proxy.port") agent "$SCRATCH/r3.json" gpu-b "$FAIL_POLICY"
[[ $rc -eq 1 ]] || fail "race 2: exit $rc, want 1: $(grep -v 'kube: ' "$SCRATCH/r3.json.log" | tail -5)"
no_denials "$SCRATCH/r3.json.log"
grep -q '^racer PATCH /api/v1/nodes/gpu-b 200 ' "$SCRATCH/proxy.log" || fail "race 2: the racer's write: $(cat "$SCRATCH/proxy.log")"
# After the racer: the agent's PATCH refused by the apiserver, a fresh GET, the PATCH again.
after_racer=$(awk '/^racer PATCH/{p=1; next} p && !/^racer/ && n < 3 {printf "%s;", $0; n++}' "$SCRATCH/proxy.log")
[[ $after_racer == "PATCH /api/v1/nodes/gpu-b 409;GET /api/v1/nodes/gpu-b 200;PATCH /api/v1/nodes/gpu-b 200;" ]] ||
  fail "race 2: after the racer's write, want 409, GET, PATCH 200; the proxy saw: $(cat "$SCRATCH/proxy.log")"
grep -q 'changed while setting its taint' "$SCRATCH/r3.json.log" || fail "race 2: the agent did not log the conflict"
requests "$SCRATCH/r3.json.log" >"$SCRATCH/r3.requests"
grep -q '^PATCH /api/v1/nodes/gpu-b 409$' "$SCRATCH/r3.requests" || fail "race 2: no 409 in the agent's log"
pass "race 2: the apiserver answered the agent's taint write 409 Conflict; the agent read the Node again and wrote"
node_json gpu-b >"$SCRATCH/gpu-b.json"
B="$SCRATCH/gpu-b.json"
assert_jq "$B" '[.spec.taints[] | .key] | sort ==
  ["example.com/maintenance","example.com/racer","example.com/writer","iogate.io/storage-below-policy"]' \
  "race 2: iogate's taint added, the racer's and every earlier foreign taint kept"
foreign_kept gpu-b "$B"
kill $proxy

# --- recovery: gpu-b passes; only iogate's taint goes, the condition flips ---
before=$(condition "$B")  # written seconds ago: the probe alone takes longer than the 1 s resolution
agent "$SCRATCH/b2.json" gpu-b "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "recovery: exit $rc, want 0: $(grep -v 'kube: ' "$SCRATCH/b2.json.log" | tail -5)"
no_denials "$SCRATCH/b2.json.log"
node_json gpu-b >"$SCRATCH/gpu-b.json"
B="$SCRATCH/gpu-b.json"
ours gpu-b "$B" "$SCRATCH/b2.json" ok
assert_jq "$B" '[.spec.taints[] | .key] | sort == ["example.com/maintenance","example.com/racer","example.com/writer"]' \
  "recovery: iogate's taint removed, the three foreign taints kept"
after=$(condition "$B")
jq -e --argjson b "$before" --arg re "$RFC3339" '.status == "False" and .reason == "StorageMeetsPolicy"
  and (.lastTransitionTime | test($re)) and .lastTransitionTime > $b.lastTransitionTime' <<<"$after" >/dev/null ||
  fail "recovery: condition before $before, after $after"
pass "recovery: condition False (StorageMeetsPolicy), lastTransitionTime $(jq -r .lastTransitionTime <<<"$before") -> $(jq -r .lastTransitionTime <<<"$after")"
foreign_kept gpu-b "$B"
assert_jq "$B" '.metadata.labels["writer.example.com/seq"] != null and ([.status.conditions[].type] | sort) ==
  ["ExampleWriter","MemoryPressure","Ready","StorageBelowPolicy"]' "recovery: the writer's label and condition kept"
assert_jq "$(events gpu-b)" 'length == 2 and [.[] | [.type, .reason]] == [["Warning","StorageBelowPolicy"],["Normal","StoragePolicyMet"]]' \
  "recovery: a Normal StoragePolicyMet Event after the Warning, nothing in between"

# --- what the agent asked of the API, and RBAC's answer for each ---
requests "${AGENT_LOGS[@]}" | awk '{print $1, $2}' | sed 's#/nodes/gpu-[ab]#/nodes/NODE#' | sort -u >"$SCRATCH/calls"
echo "--- the agent's API calls (method path), from its debug logs"
cat "$SCRATCH/calls"
echo "---"
no_denials "${AGENT_LOGS[@]}"
pass "no 401/403 in $(requests "${AGENT_LOGS[@]}" | wc -l) API requests of ${#AGENT_LOGS[@]} agent runs"
while read -r method path; do
  case "$method $path" in
    "GET /api/v1/nodes/NODE") check=(get nodes/gpu-a) ;;
    "PATCH /api/v1/nodes/NODE") check=(patch nodes/gpu-a) ;;
    "PATCH /api/v1/nodes/NODE/status") check=(patch nodes/gpu-a --subresource=status) ;;
    "POST /apis/events.k8s.io/v1/namespaces/default/events") check=(create events.events.k8s.io -n default) ;;
    "POST /api/v1/namespaces/default/events") check=(create events -n default) ;;
    *) fail "the agent called $method $path: not in the manual's RBAC list, or this test does not know it" ;;
  esac
  # (stderr: kubectl's warning that nodes are not namespaced)
  answer=$(k auth can-i "${check[@]}" --as "$AS" 2>"$SCRATCH/can-i.err" || true)
  [[ $answer == yes ]] || fail "can-i ${check[*]} as $AS: $answer $(cat "$SCRATCH/can-i.err") (the agent called $method $path)"
  pass "can-i ${check[*]} as $AS: yes ($method $path)"
done <"$SCRATCH/calls"
# The core/v1 fallback for Events is not called here (this apiserver serves events.k8s.io/v1);
# the manual lists it, so the chart must grant it.
[[ $(k auth can-i create events -n default --as "$AS" 2>/dev/null || true) == yes ]] ||
  fail "can-i create events (core) -n default as $AS: not yes; the manual's RBAC lists it for the Event fallback"
pass "can-i create events (core/v1, the fallback) -n default as $AS: yes"
# And can-i says no where it should, so the yeses above are RBAC's answers.
for check in "list nodes" "update nodes/gpu-a" "delete nodes/gpu-a" "get secrets -n $NS" "patch pods -n default"; do
  # shellcheck disable=SC2086
  answer=$(k auth can-i $check --as "$AS" 2>/dev/null || true)
  [[ $answer == no ]] || fail "can-i $check as $AS: $answer, want no"
done
pass "can-i as $AS: no to list/update/delete nodes, secrets, pods"
assert_no_test_files "$DATA"
