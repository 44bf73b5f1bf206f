#!/usr/bin/env bash
# What iogate's Node labels, taint and the webhook's node affinity do under the real kube-scheduler.
# Nodes carry iogate's labels as `iogate node` writes them and advertise nvidia.com/gpu: 4 through
# their status (make_node). GPU pods get their requirements from `iogate webhook` itself (its
# /mutate patch, applied by kubectl's JSON patch), so the scheduler sees exactly what the webhook
# writes:
# - while no node meets a 4-GPU pod's floor, it stays Pending with a FailedScheduling Event naming
#   the node affinity; once a node that meets it appears, the pod is bound there;
# - 1-GPU pods go only to the node that meets their floor: not to a node below it, not to one of
#   a forbidden class with IOPS enough, though both have free GPUs and take pods pinned there
#   without the affinity, and not to the fast node whose GPUs are taken;
# - the taint iogate.io/storage-below-policy:NoSchedule keeps an untolerating pod off its node,
#   a tolerating one lands there;
# - a pod asking more nvidia.com/gpu than any node has stays Pending (Insufficient nvidia.com/gpu);
# - under a demand policy (a second webhook), pods go only to nodes whose
#   iogate.io/accelerators.RULE label sustains their GPUs, whatever their 4k IOPS; a pod no node
#   sustains stays Pending.
# Waits are bounded readiness polls, never speed assertions.
#
# Why the webhook runs beside the cluster (on loopback, --no-api) rather than admitting through
# it: this test is about scheduling; test_admission.sh covers the path through kube-apiserver.
# Asking the webhook keeps the requirements those of the webhook, not a hand-written copy.
source "$(dirname "$0")/lib.sh"

NS=train

# --- iogate webhook on loopback, for the requirements ------------------------------------------
mkdir -p "$SCRATCH/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$SCRATCH/tls/tls.key" -out "$SCRATCH/tls/tls.crt" 2>/dev/null
webhook_up "$SCRATCH/webhook.log" --no-api --listen 127.0.0.1:0 --metrics-listen none --tls-cert "$SCRATCH/tls/tls.crt" \
  --tls-key "$SCRATCH/tls/tls.key" --policy "$E2E_DIR/scheduling_policy.yaml"
HOOK_ADDR=$ADDR
pass "iogate webhook (policy scheduling_policy.yaml) on https://$HOOK_ADDR"

# with_requirements: the pod JSON on stdin as the webhook's /mutate patch leaves it.
with_requirements() {
  local pod
  pod=$(cat)
  review CREATE "$pod" |
    curl -sS --cacert "$SCRATCH/tls/tls.crt" -H 'Content-Type: application/json' --data-binary @- \
      "https://$HOOK_ADDR/mutate" >"$SCRATCH/review.json" || fail "POST /mutate failed"
  jq -e '.response.allowed == true and .response.patchType == "JSONPatch"' "$SCRATCH/review.json" >/dev/null ||
    fail "/mutate gave no patch: $(cat "$SCRATCH/review.json")"
  printf '%s' "$pod" >"$SCRATCH/pod-in.json"
  kubectl patch --local -f "$SCRATCH/pod-in.json" --type json -p "$(jq -r .response.patch "$SCRATCH/review.json" | base64 -d)" \
    -o json
}
create() { kubectl create -f - >/dev/null || fail "kubectl create $1 failed"; }
node_of() { kubectl -n "$NS" get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [[ -n $(node_of "$1") ]]; }
# expect_bound POD NODE: the scheduler binds POD (poll), to NODE.
expect_bound() {
  wait_until 90 bound "$1" ||
    fail "pod $1 not bound after 90 s: $(kubectl -n "$NS" get events --field-selector involvedObject.name="$1" -o jsonpath='{.items[*].message}')"
  [[ $(node_of "$1") == "$2" ]] || fail "pod $1 bound to $(node_of "$1"), want $2"
}
failed_scheduling() {
  kubectl -n "$NS" get events --field-selector "involvedObject.name=$1,reason=FailedScheduling" -o json |
    jq -er '.items | sort_by(.lastTimestamp // .eventTime) | last | .message'
}
# expect_pending POD TEXT...: a FailedScheduling Event for POD (poll) saying each TEXT; still unbound.
expect_pending() {
  local p=$1 msg t; shift
  wait_until 90 failed_scheduling "$p" ||
    fail "no FailedScheduling Event for $p after 90 s (bound to '$(node_of "$p")')"
  msg=$(failed_scheduling "$p")
  for t in "$@"; do [[ $msg == *"$t"* ]] || fail "$p: the FailedScheduling Event does not say '$t': $msg"; done
  bound "$p" && fail "$p was bound to $(node_of "$p") after: $msg"
  [[ $(kubectl -n "$NS" get pod "$p" -o jsonpath='{.status.phase}/{.status.conditions[?(@.type=="PodScheduled")].reason}') == Pending/Unschedulable ]] ||
    fail "$p: not Pending/Unschedulable: $(kubectl -n "$NS" get pod "$p" -o jsonpath='{.status}')"
  pass "$p Pending, FailedScheduling: $msg"
}

k create namespace "$NS" >/dev/null

# --- nodes: none meets a 4-GPU pod's floor yet ---------------------------------------------------
make_node ok-1 iogate.io/randread-iops=15000 iogate.io/disk-class=nvme iogate.io/tier=ok
make_node low-1 iogate.io/randread-iops=6000 iogate.io/disk-class=cloud-block iogate.io/tier=slow
make_node hdd-1 iogate.io/randread-iops=30000 iogate.io/disk-class=hdd iogate.io/tier=ok
make_node slow-1 iogate.io/randread-iops=3000 iogate.io/disk-class=cloud-block iogate.io/tier=slow
k taint node slow-1 iogate.io/storage-below-policy=true:NoSchedule >/dev/null
for n in ok-1 low-1 hdd-1 slow-1; do
  [[ $(k get node "$n" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}/{.status.capacity.nvidia\.com/gpu}') == 4/4 ]] ||
    fail "$n does not advertise nvidia.com/gpu 4: $(k get node "$n" -o jsonpath='{.status}')"
done
pass "nodes ok-1 (15000 IOPS, nvme), low-1 (6000, cloud-block), hdd-1 (30000, hdd), slow-1 (3000, tainted); nvidia.com/gpu 4 each"

pod big "$NS" 4 | with_requirements >"$SCRATCH/big.json"
jq -e '.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms |
  map(.matchExpressions |= sort_by(.key)) == [{matchExpressions: [
  {key: "iogate.io/disk-class", operator: "NotIn", values: ["hdd"]},
  {key: "iogate.io/randread-iops", operator: "Gt", values: ["19999"]}]}]' "$SCRATCH/big.json" >/dev/null ||
  fail "big: not the requirements expected from the policy: $(jq -c .spec.affinity "$SCRATCH/big.json")"
pass "big (4 GPUs): the webhook requires iogate.io/randread-iops Gt 19999, disk-class NotIn [hdd]"
create big <"$SCRATCH/big.json"
# ok-1 (15,000 < 20,000), low-1 (6,000) and hdd-1 (hdd) fail the affinity; slow-1 its taint.
expect_pending big "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) didn't match Pod's node affinity/selector"

# --- a node that meets it appears: the pending pod is bound there --------------------------------
make_node fast-1 iogate.io/randread-iops=250000 iogate.io/disk-class=nvme iogate.io/tier=fast
expect_bound big fast-1
pass "fast-1 (250000 IOPS, nvme) added: big bound to fast-1"

# --- 1-GPU pods: only the node that meets the floor (fast-1's GPUs are taken) ------------------
for p in small-a small-b; do
  pod "$p" "$NS" 1 | with_requirements | create "$p"
done
expect_bound small-a ok-1
expect_bound small-b ok-1
pass "small-a, small-b (1 GPU, Gt 9999, NotIn hdd): both on ok-1, none on low-1 (6000), hdd-1 (hdd) or fast-1 (GPUs taken)"
# Control: low-1 and hdd-1 take a GPU pod pinned to them by nodeSelector without iogate's affinity,
# so the affinity alone kept the pods above off them; with it, the same pod stays Pending.
for n in low-1 hdd-1; do
  pod "plain-$n" "$NS" 1 "{\"nodeSelector\":{\"kubernetes.io/hostname\":\"$n\"}}" | create "plain-$n"
  expect_bound "plain-$n" "$n"
done
pass "control: GPU pods without the affinity, nodeSelector low-1 / hdd-1, are bound there"
pod affinity-low "$NS" 1 '{"nodeSelector":{"kubernetes.io/hostname":"low-1"}}' | with_requirements | create affinity-low
expect_pending affinity-low "0/5 nodes are available" "4 node(s) didn't match Pod's node affinity/selector"

# --- the taint --------------------------------------------------------------------------------
# The scheduler's message does not name the taint (v1.37: "had untolerated taint(s)"): slow-1 has
# only iogate's, and the pod may go nowhere else.
[[ $(k get node slow-1 -o json | jq -c '[.spec.taints[] | {key, effect}]') == '[{"key":"iogate.io/storage-below-policy","effect":"NoSchedule"}]' ]] ||
  fail "slow-1 has other taints than iogate's: $(k get node slow-1 -o jsonpath='{.spec.taints}')"
pod untolerating "$NS" 1 '{"nodeSelector":{"kubernetes.io/hostname":"slow-1"}}' | create untolerating
expect_pending untolerating "0/5 nodes are available" "1 node(s) had untolerated taint" "4 node(s) didn't match Pod's node affinity/selector"
pod tolerating "$NS" 1 '{"nodeSelector":{"kubernetes.io/hostname":"slow-1"},
  "tolerations":[{"key":"iogate.io/storage-below-policy","operator":"Exists","effect":"NoSchedule"}]}' | create tolerating
expect_bound tolerating slow-1
pass "tolerating (iogate.io/storage-below-policy Exists): bound to slow-1"

# --- more GPUs than any node has ------------------------------------------------------------------
pod huge "$NS" 8 | create huge
expect_pending huge "0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 Insufficient nvidia.com/gpu"

# --- demand rules: nodes judged in accelerators sustained, not in 4k IOPS ------------------------
# A second webhook under a demand policy (workload.mode auto, the image-training profile's numbers).
# Its affinity is iogate.io/accelerators.feed-gpus Gt N-1, N the pod's GPUs: feeds-2 serves 41,000
# small reads (above any IOPS floor here) but sustains 2 accelerators (a gp3 disk: bandwidth-poor),
# feeds-4 sustains 4; the nodes above carry no accelerators label (never measured under a demand
# policy) and take none of these pods.
cat >"$SCRATCH/demand_policy.yaml" <<'P'
apiVersion: iogate.io/v1
kind: StoragePolicy
metadata: {name: e2e-demand}
mode: enforce
workload: {mode: auto}
rules:
  - name: feed-gpus
    demand: {samples_per_s: 2500, sample_size: 110k, min_au: 0.9}
P
webhook_up "$SCRATCH/demand-webhook.log" --no-api --listen 127.0.0.1:0 --metrics-listen none --tls-cert "$SCRATCH/tls/tls.crt" \
  --tls-key "$SCRATCH/tls/tls.key" --policy "$SCRATCH/demand_policy.yaml"
HOOK_ADDR=$ADDR
make_node feeds-2 iogate.io/accelerators.feed-gpus=2 iogate.io/randread-iops=41000 iogate.io/disk-class=cloud-block iogate.io/tier=ok
make_node feeds-4 iogate.io/accelerators.feed-gpus=4 iogate.io/randread-iops=9000 iogate.io/disk-class=ssd iogate.io/tier=ok
pass "nodes feeds-2 (sustains 2, 41000 IOPS) and feeds-4 (sustains 4, 9000 IOPS)"

pod demand-4 "$NS" 4 | with_requirements >"$SCRATCH/demand-4.json"
assert_jq "$SCRATCH/demand-4.json" '.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms ==
  [{matchExpressions: [{key: "iogate.io/accelerators.feed-gpus", operator: "Gt", values: ["3"]}]}]' \
  "demand-4 (4 GPUs): the webhook requires iogate.io/accelerators.feed-gpus Gt 3, no IOPS floor"
jq -e '.response.warnings | any(contains("sustains 4 accelerators of rule feed-gpus"))' "$SCRATCH/review.json" >/dev/null ||
  fail "demand-4: no warning naming the rule and N: $(jq -c .response.warnings "$SCRATCH/review.json")"
create demand-4 <"$SCRATCH/demand-4.json"
expect_bound demand-4 feeds-4
pass "demand-4 bound to feeds-4, not to feeds-2 (41000 IOPS, sustains 2) nor any unmeasured node"
pod demand-2 "$NS" 2 | with_requirements | create demand-2
expect_bound demand-2 feeds-2
pass "demand-2 (Gt 1) bound to feeds-2: it sustains 2 (feeds-4's GPUs are taken)"
pod demand-3 "$NS" 3 | with_requirements | create demand-3
expect_pending demand-3 "didn't match Pod's node affinity/selector"
k label node feeds-2 iogate.io/accelerators.feed-gpus=6 --overwrite >/dev/null
pod demand-2b "$NS" 2 | with_requirements | create demand-2b
expect_bound demand-2b feeds-2
pass "feeds-2 relabelled to sustain 6 (a faster disk): demand-2b bound there"
