#!/usr/bin/env bash
# Least reach (issue 18, finding 4), decided by the real kube-apiserver (tests/e2e/lib.sh): the
# chart's ValidatingAdmissionPolicies <fullname>-preflight and <fullname>-node (docs/security.md),
# installed by helm, against tokens bound as a kubelet binds them (to a pod; a pod on a node
# carries the node-name claim), used through kubectl:
#   - the policies and bindings are there, type-checked by the apiserver without a warning, Deny;
#   - preflight's account, with the token of pod train-a: its own pod's iogate.io/verdict set and
#     removed, the PVC's iogate.io/probe-result and probe-lock (a merge patch carrying the
#     resourceVersion, as the agent takes the lock; a stale one still gets the apiserver's 409);
#     refused, each with the policy's message naming the account, the object and why: another
#     pod's annotation, its own pod's label, a non-iogate annotation, the webhook's
#     iogate.io/skip, its spec (activeDeadlineSeconds), the PVC's spec (a resize the apiserver
#     would otherwise accept: the admin's server-side dry run of the same patch passes), label and
#     a non-iogate annotation; and any write with a token not bound to a pod;
#   - the node agent's account, with the token of a pod on gpu-a: gpu-a's iogate.io labels,
#     annotation, the iogate.io/storage-below-policy taint (set and removed) and the
#     StorageBelowPolicy condition (nodes/status); refused likewise: gpu-b's label, gpu-a's
#     foreign label and annotation, removing or adding a foreign taint, spec.unschedulable,
#     another condition type, the GPU capacity (nodes/status), and a token not bound to a pod;
#   - every refused write left the object as it was (resourceVersion unchanged);
#   - RBAC unchanged: kubectl auth can-i says yes to each permission expected-rbac.yaml grants,
#     and the Role and ClusterRole rules are exactly those;
#   - the hooks' accounts (their objects rendered by helm and created as Helm creates hooks): the
#     cleanup's may only remove iogate.io/ keys (refused: adding or changing an iogate.io label,
#     adding an iogate.io taint, removing a foreign label, annotation, taint, the Ready condition,
#     a PVC's foreign annotation; a cordon), and the real `iogate node prune` with its token
#     removes every iogate.io/ key from both Nodes and the PVC, keeps the rest and the pods';
#     helm test's may create a pod only as a server-side dry run and only in tests.namespace, and
#     the real `iogate node check` and `iogate webhook check` with its token pass and fail as
#     the cluster is (no webhook here: the dry run comes back unmutated, exit 3);
#   - preflight.leastReachPolicy=false (helm upgrade) removes the policy, after which the Role
#     alone lets the same token patch another pod: the refusals above were the policy's.
source "$(dirname "$0")/lib.sh"

NS=iogate-system
TRAIN=ml
REL=iogate
PREFLIGHT_SA=iogate-preflight
NODE_SA=iogate-node
PF_POLICY=iogate-preflight
NODE_POLICY=iogate-node

# --- the chart: node agent and preflight for namespace ml (the webhook off: no kubelet runs it) ---
k create namespace "$TRAIN" >/dev/null
helm_install "$REL" "$NS" --set webhook.enabled=false --set grafanaDashboard.enabled=false \
  --set "preflight.namespaces={$TRAIN}"

for p in "$PF_POLICY" "$NODE_POLICY"; do
  k get validatingadmissionpolicy "$p" -o json >"$SCRATCH/vap-$p.json" || fail "no ValidatingAdmissionPolicy $p from the chart"
  k get validatingadmissionpolicybinding "$p" -o json >"$SCRATCH/vapb-$p.json" || fail "no ValidatingAdmissionPolicyBinding $p"
  assert_jq "$SCRATCH/vapb-$p.json" '.spec.policyName == "'"$p"'" and .spec.validationActions == ["Deny"]' \
    "binding $p: policy $p, validationActions [Deny]"
  # The apiserver type-checks each expression against the OpenAPI schemas of the matched kinds
  # (status.typeChecking, written asynchronously): a misspelt field shows up there.
  wait_until 60 bash -c "kubectl get validatingadmissionpolicy $p -o json |
    jq -e '.status.observedGeneration == .metadata.generation and (.status | has(\"typeChecking\"))'" ||
    fail "policy $p: not type-checked after 60 s: $(k get validatingadmissionpolicy "$p" -o jsonpath='{.status}')"
  k get validatingadmissionpolicy "$p" -o json >"$SCRATCH/vap-$p.json"
  jq -e '.spec.failurePolicy == "Fail" and ((.status.typeChecking.expressionWarnings // []) | length) == 0' "$SCRATCH/vap-$p.json" >/dev/null ||
    fail "policy $p: failurePolicy $(jq -r .spec.failurePolicy "$SCRATCH/vap-$p.json"), type-checking warnings: $(jq -c .status.typeChecking "$SCRATCH/vap-$p.json")"
  pass "policy $p: failurePolicy Fail; the apiserver type-checked its $(jq '[.spec.variables[], .spec.validations[]] | length' "$SCRATCH/vap-$p.json") expressions without a warning"
done
assert_jq "$SCRATCH/vap-$PF_POLICY.json" '.spec.matchConditions[0].expression | contains("\"system:serviceaccount:'"$TRAIN:$PREFLIGHT_SA"'\"")' \
  "policy $PF_POLICY matches the preflight account $TRAIN:$PREFLIGHT_SA"
assert_jq "$SCRATCH/vap-$NODE_POLICY.json" '.spec.matchConditions[0].expression | contains("system:serviceaccount:'"$NS:$NODE_SA"'")' \
  "policy $NODE_POLICY matches the node agent account $NS:$NODE_SA"

# --- the world: two Nodes with other owners' labels, taints and conditions; two training pods on
# gpu-a; the dataset's PVC, bound to a PV of an expandable StorageClass (so a resize is something
# the apiserver would accept, but for the policy) ---
for node in gpu-a gpu-b; do
  make_node "$node" team.example.com/owner=vision
  k annotate node "$node" example.com/rack=r42 >/dev/null
  k taint node "$node" example.com/maintenance=planned:PreferNoSchedule >/dev/null
done
for pod in train-a train-b; do
  jq -n --arg ns "$TRAIN" --arg name "$pod" --arg sa "$PREFLIGHT_SA" '{apiVersion: "v1", kind: "Pod",
    metadata: {name: $name, namespace: $ns, labels: {team: "vision"}},
    spec: {nodeName: "gpu-a", serviceAccountName: $sa, restartPolicy: "Never",
      containers: [{name: "train", image: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                    resources: {limits: {"nvidia.com/gpu": "1"}}}]}}' | k create -f - >/dev/null
done
k create -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: expandable}
provisioner: example.com/none
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: dataset-pv}
spec:
  capacity: {storage: 1Ti}
  accessModes: [ReadWriteMany]
  storageClassName: expandable
  hostPath: {path: /var/lib/iogate-e2e-dataset}
  claimRef: {namespace: $TRAIN, name: dataset}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: dataset, namespace: $TRAIN, labels: {team: vision}}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: expandable
  volumeName: dataset-pv
  resources: {requests: {storage: 1Ti}}
EOF
wait_until 60 bash -c "[[ \$(kubectl -n $TRAIN get pvc dataset -o jsonpath='{.status.phase}') == Bound ]]" ||
  fail "PVC $TRAIN/dataset not Bound after 60 s: $(k -n "$TRAIN" get pvc dataset -o jsonpath='{.status}')"
pass "Nodes gpu-a, gpu-b (foreign label, annotation, taint); pods $TRAIN/train-a, train-b on gpu-a as $PREFLIGHT_SA; PVC $TRAIN/dataset Bound"

# --- the tokens, bound as the kubelet binds them ---
# kc NAME TOKEN: a kubeconfig for the token, straight to the apiserver; prints its path.
kc() { token_kubeconfig "$SCRATCH/kc-$1" "$CLUSTER_SERVER" "$1" "$2" && echo "$SCRATCH/kc-$1"; }
PF=$(kc preflight "$(sa_token "$TRAIN" "$PREFLIGHT_SA" train-a)")
PF_UNBOUND=$(kc preflight-unbound "$(sa_token "$TRAIN" "$PREFLIGHT_SA")")
AGENT=$(kc agent "$(node_agent_token "$NS" "$NODE_SA" gpu-a)")
AGENT_UNBOUND=$(kc agent-unbound "$(sa_token "$NS" "$NODE_SA")")
for f in "$PF" "$PF_UNBOUND" "$AGENT" "$AGENT_UNBOUND"; do
  [[ -s $f ]] && grep -q 'token: "[^"]' "$f" || fail "no token kubeconfig at '$f' (a token request failed)"
done
# What the apiserver makes of each token (SelfSubjectReview): the account and the claims.
whoami() { kubectl --kubeconfig "$1" auth whoami -o json >"$SCRATCH/whoami.json" 2>&1 || fail "auth whoami ($1): $(cat "$SCRATCH/whoami.json")"; }
whoami "$PF"
assert_jq "$SCRATCH/whoami.json" '.status.userInfo | .username == "system:serviceaccount:'"$TRAIN:$PREFLIGHT_SA"'"
  and .extra["authentication.kubernetes.io/pod-name"] == ["train-a"] and .extra["authentication.kubernetes.io/node-name"] == ["gpu-a"]' \
  "preflight token (bound to pod train-a): $TRAIN:$PREFLIGHT_SA with claims pod-name train-a, node-name gpu-a"
whoami "$AGENT"
assert_jq "$SCRATCH/whoami.json" '.status.userInfo | .username == "system:serviceaccount:'"$NS:$NODE_SA"'"
  and .extra["authentication.kubernetes.io/node-name"] == ["gpu-a"]' \
  "node agent token (bound to its pod on gpu-a): $NS:$NODE_SA with claim node-name gpu-a"
whoami "$PF_UNBOUND"
assert_jq "$SCRATCH/whoami.json" '.status.userInfo | (.extra // {}) | has("authentication.kubernetes.io/pod-name") | not' \
  "an unbound token of $TRAIN:$PREFLIGHT_SA (kubectl create token without a bound object): no pod-name claim"

# status_patch KUBECONFIG NODE strategic|merge BODY: PATCH nodes/NODE/status with the kubeconfig's
# token, as the agent sends it (kubectl patch --subresource=status would GET nodes/status first,
# which RBAC does not grant the agent); the response body on stdout, success on 2xx.
status_patch() {
  local token code type=application/merge-patch+json
  [[ $3 == strategic ]] && type=application/strategic-merge-patch+json
  token=$(sed -n 's/.*token: "\([^"]*\)".*/\1/p' "$1")
  code=$(curl -sS --cacert "$CLUSTER_CA" -H "Authorization: Bearer $token" -X PATCH \
    -H "Content-Type: $type" --data "$4" -o "$SCRATCH/status.body" -w '%{http_code}' \
    "$CLUSTER_SERVER/api/v1/nodes/$2/status") || return 1
  cat "$SCRATCH/status.body"
  [[ $code == 2?? ]]
}
# as KUBECONFIG ARGS...: kubectl with that identity (or status-patch NODE TYPE BODY); output (both
# streams) in $SCRATCH/out.
as() {
  local kc=$1; shift
  if [[ $1 == status-patch ]]; then shift; status_patch "$kc" "$@"; else kubectl --kubeconfig "$kc" "$@"; fi >"$SCRATCH/out" 2>&1
}
# rv KIND NAME [NS]: the object's resourceVersion, read as admin.
rv() { k get "$1" "$2" ${3:+-n "$3"} -o jsonpath='{.metadata.resourceVersion}'; }
# allowed WHAT KUBECONFIG ARGS...: the write succeeds.
allowed() {
  local what=$1 kc=$2; shift 2
  as "$kc" "$@" || fail "allowed: $what: refused: $(cat "$SCRATCH/out")"
}
# refused WHAT POLICY MESSAGE KIND NAME NS KUBECONFIG ARGS...: the write is refused by POLICY with a
# 403 whose message holds MESSAGE, and the object is unchanged (same resourceVersion). Where
# ADMIN_DRY_RUN=1, the same command as admin passes a server-side dry run (so the apiserver would
# accept the write itself: the refusal is the policy's alone).
refused() {
  local what=$1 policy=$2 msg=$3 kind=$4 name=$5 ns=$6 kc=$7; shift 7
  local before
  before=$(rv "$kind" "$name" "$ns")
  if as "$kc" "$@"; then
    fail "refused: $what: the write was allowed: $(cat "$SCRATCH/out")"
  fi
  grep -qF "is forbidden: ValidatingAdmissionPolicy '$policy' with binding '$policy' denied request: " "$SCRATCH/out" &&
    grep -qF -- "$msg" "$SCRATCH/out" ||
    fail "refused: $what: not the policy's refusal with \"$msg\": $(cat "$SCRATCH/out")"
  [[ $(rv "$kind" "$name" "$ns") == "$before" ]] || fail "refused: $what: the $kind changed nonetheless"
  if [[ ${ADMIN_DRY_RUN:-} == 1 ]]; then
    if [[ $1 == status-patch ]]; then
      set -- patch node "$2" --subresource=status --type "$3" -p "$4"
    fi
    k "$@" --dry-run=server >"$SCRATCH/dry.out" 2>&1 ||
      fail "refused: $what: the admin's server-side dry run of the same write fails too: $(cat "$SCRATCH/dry.out")"
  fi
  pass "refused: $what: $(sed -n 's/.*denied request: \(.*\)/\1/p' "$SCRATCH/out" | sed 's/",$//' | head -1)"
}
PFA="system:serviceaccount:$TRAIN:$PREFLIGHT_SA"
NA="system:serviceaccount:$NS:$NODE_SA"

# The policies reach the apiserver's admission asynchronously after their creation: wait until
# the first refusal (a write the Role allows, by a token the policy refuses: harmless if it lands
# before the policy does).
wait_until 60 bash -c "kubectl --kubeconfig $PF_UNBOUND -n $TRAIN annotate pod train-a --overwrite iogate.io/warmup=x 2>&1 | grep -q 'denied request'" ||
  fail "the preflight policy refused nothing within 60 s"
wait_until 60 bash -c "kubectl --kubeconfig $AGENT_UNBOUND annotate node gpu-a --overwrite iogate.io/warmup=x 2>&1 | grep -q 'denied request'" ||
  fail "the node agent policy refused nothing within 60 s"
k -n "$TRAIN" annotate pod train-a iogate.io/warmup- >/dev/null 2>&1 || true
k annotate node gpu-a iogate.io/warmup- >/dev/null 2>&1 || true

# ---------------------------------------------------------------------------------------------
# Preflight's account, token bound to train-a.
allowed "own pod's iogate.io/verdict" "$PF" -n "$TRAIN" annotate pod train-a iogate.io/verdict=pass iogate.io/randread-iops=25000
assert_jq <(pod_json train-a "$TRAIN") '.metadata.annotations["iogate.io/verdict"] == "pass" and .metadata.annotations["iogate.io/randread-iops"] == "25000"' \
  "allowed: $PFA sets iogate.io/verdict and randread-iops on its own pod train-a"
allowed "own pod's iogate.io/ annotations as preflight writes them (merge patch)" "$PF" -n "$TRAIN" patch pod train-a --type merge \
  -p '{"metadata":{"annotations":{"iogate.io/verdict":"fail","iogate.io/randread-iops":null}}}'
assert_jq <(pod_json train-a "$TRAIN") '.metadata.annotations["iogate.io/verdict"] == "fail" and (.metadata.annotations | has("iogate.io/randread-iops") | not)' \
  "allowed: $PFA changes and removes iogate.io/ annotations of train-a by merge patch (as agent/kube does)"
rv_pvc=$(rv pvc dataset "$TRAIN")
allowed "PVC probe-lock with the resourceVersion" "$PF" -n "$TRAIN" patch pvc dataset --type merge \
  -p '{"metadata":{"resourceVersion":"'"$rv_pvc"'","annotations":{"iogate.io/probe-lock":"{\"pod\":\"ml/train-a\",\"node\":\"gpu-a\",\"renewed\":\"2030-01-01T00:00:00Z\",\"lease_seconds\":15}"}}}'
if as "$PF" -n "$TRAIN" patch pvc dataset --type merge -p '{"metadata":{"resourceVersion":"'"$rv_pvc"'","annotations":{"iogate.io/probe-lock":"x"}}}'; then
  fail "a stale resourceVersion on the PVC lock was accepted"
fi
grep -q 'Conflict\|the object has been modified' "$SCRATCH/out" || fail "stale lock: want the apiserver's 409, got: $(cat "$SCRATCH/out")"
allowed "PVC probe-result" "$PF" -n "$TRAIN" annotate pvc dataset --overwrite iogate.io/probe-result='{"pod":"ml/train-a"}' iogate.io/probe-lock-
assert_jq <(pvc_json dataset "$TRAIN") '.metadata.annotations["iogate.io/probe-result"] == "{\"pod\":\"ml/train-a\"}" and (.metadata.annotations | has("iogate.io/probe-lock") | not)' \
  "allowed: $PFA takes the PVC's iogate.io/probe-lock (resourceVersion kept: a stale one gets the apiserver's 409), writes probe-result, releases the lock"

refused "another pod's annotation" "$PF_POLICY" "$PFA may change only its own pod $TRAIN/train-a (the pod its token is bound to), not pod $TRAIN/train-b" \
  pod train-b "$TRAIN" "$PF" -n "$TRAIN" annotate pod train-b iogate.io/verdict=pass
refused "its own pod's label" "$PF_POLICY" "$PFA may not change labels of pod $TRAIN/train-a (team)" \
  pod train-a "$TRAIN" "$PF" -n "$TRAIN" label pod train-a --overwrite team=other
refused "its own pod's non-iogate annotation" "$PF_POLICY" "$PFA may change only iogate.io/ annotations of pod $TRAIN/train-a" \
  pod train-a "$TRAIN" "$PF" -n "$TRAIN" annotate pod train-a example.com/owner=mallory
grep -qF 'refused: example.com/owner' "$SCRATCH/out" || fail "the refusal does not name the annotation: $(cat "$SCRATCH/out")"
refused "the webhook's iogate.io/skip on its own pod" "$PF_POLICY" "refused: iogate.io/skip" \
  pod train-a "$TRAIN" "$PF" -n "$TRAIN" annotate pod train-a iogate.io/skip=true
ADMIN_DRY_RUN=1 refused "its own pod's spec (activeDeadlineSeconds)" "$PF_POLICY" "$PFA may not change the spec of pod $TRAIN/train-a" \
  pod train-a "$TRAIN" "$PF" -n "$TRAIN" patch pod train-a --type merge -p '{"spec":{"activeDeadlineSeconds":60}}'
ADMIN_DRY_RUN=1 refused "the PVC's spec (a resize to 2Ti)" "$PF_POLICY" "$PFA may not change the spec of PersistentVolumeClaim $TRAIN/dataset" \
  pvc dataset "$TRAIN" "$PF" -n "$TRAIN" patch pvc dataset --type merge -p '{"spec":{"resources":{"requests":{"storage":"2Ti"}}}}'
refused "the PVC's label" "$PF_POLICY" "$PFA may not change labels of PersistentVolumeClaim $TRAIN/dataset (team)" \
  pvc dataset "$TRAIN" "$PF" -n "$TRAIN" label pvc dataset --overwrite team=other
refused "the PVC's non-iogate annotation" "$PF_POLICY" "refused: example.com/backup" \
  pvc dataset "$TRAIN" "$PF" -n "$TRAIN" annotate pvc dataset example.com/backup=never
refused "a token not bound to a pod (its own pod's iogate.io/verdict)" "$PF_POLICY" "$PFA may not change pod $TRAIN/train-a: iogate accepts only a token bound to a pod" \
  pod train-a "$TRAIN" "$PF_UNBOUND" -n "$TRAIN" annotate pod train-a --overwrite iogate.io/verdict=pass
refused "a token not bound to a pod (the PVC's probe-result)" "$PF_POLICY" "$PFA may not change PersistentVolumeClaim $TRAIN/dataset: iogate accepts only a token bound to a pod" \
  pvc dataset "$TRAIN" "$PF_UNBOUND" -n "$TRAIN" annotate pvc dataset --overwrite iogate.io/probe-result=forged
assert_jq <(pod_json train-b "$TRAIN") '(.metadata.annotations // {}) | has("iogate.io/verdict") | not' "train-b: no verdict of train-a's token"

# ---------------------------------------------------------------------------------------------
# The node agent's account, token bound to its pod on gpu-a.
allowed "own Node's iogate.io labels and annotation" "$AGENT" patch node gpu-a --type merge \
  -p '{"metadata":{"labels":{"iogate.io/tier":"ok","iogate.io/randread-iops":"25000"},"annotations":{"iogate.io/last-probe":"2026-12-05T00:00:00Z"}}}'
allowed "own Node's iogate.io/storage-below-policy taint" "$AGENT" taint node gpu-a iogate.io/storage-below-policy=true:NoSchedule
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
allowed "own Node's StorageBelowPolicy condition (nodes/status)" "$AGENT" status-patch gpu-a strategic \
  '{"status":{"conditions":[{"type":"StorageBelowPolicy","status":"True","reason":"StorageBelowPolicy","message":"below","lastHeartbeatTime":"'"$NOW"'","lastTransitionTime":"'"$NOW"'"}]}}'
assert_jq <(node_json gpu-a) '.metadata.labels["iogate.io/tier"] == "ok" and .metadata.annotations["iogate.io/last-probe"] == "2026-12-05T00:00:00Z"
  and ([.spec.taints[] | "\(.key)=\(.value // ""):\(.effect)"] | sort) == ["example.com/maintenance=planned:PreferNoSchedule","iogate.io/storage-below-policy=true:NoSchedule"]
  and ([.status.conditions[] | select(.type == "StorageBelowPolicy") | .status] == ["True"])
  and ([.status.conditions[] | select(.type == "Ready") | .status] == ["True"])' \
  "allowed: $NA sets gpu-a's iogate.io labels, annotation, taint and StorageBelowPolicy condition; the foreign taint and Ready kept"
allowed "removing its own iogate.io taint" "$AGENT" taint node gpu-a iogate.io/storage-below-policy-
assert_jq <(node_json gpu-a) '[.spec.taints[].key] == ["example.com/maintenance"]' "allowed: $NA removes its iogate.io taint from gpu-a"

refused "another Node's label" "$NODE_POLICY" "$NA may change only its own Node gpu-a (the node of the pod its token is bound to), not Node gpu-b" \
  node gpu-b "" "$AGENT" label node gpu-b iogate.io/tier=ok
refused "its own Node's non-iogate label" "$NODE_POLICY" "$NA may change only iogate.io/ labels of Node gpu-a; refused: team.example.com/owner" \
  node gpu-a "" "$AGENT" label node gpu-a --overwrite team.example.com/owner=mallory
refused "its own Node's non-iogate annotation" "$NODE_POLICY" "$NA may change only iogate.io/ annotations of Node gpu-a; refused: example.com/rack" \
  node gpu-a "" "$AGENT" annotate node gpu-a --overwrite example.com/rack=r1
refused "removing a foreign taint" "$NODE_POLICY" "$NA may add, change or remove only iogate.io/ taints of Node gpu-a; refused a change to: example.com/maintenance" \
  node gpu-a "" "$AGENT" taint node gpu-a example.com/maintenance-
refused "adding a foreign taint" "$NODE_POLICY" "refused a change to: example.com/evil" \
  node gpu-a "" "$AGENT" taint node gpu-a example.com/evil=x:NoExecute
ADMIN_DRY_RUN=1 refused "spec.unschedulable (cordon)" "$NODE_POLICY" "$NA may not change the spec of Node gpu-a beyond iogate.io/ taints" \
  node gpu-a "" "$AGENT" patch node gpu-a --type merge -p '{"spec":{"unschedulable":true}}'
ADMIN_DRY_RUN=1 refused "another condition type (Ready False) in nodes/status" "$NODE_POLICY" "$NA may change only the StorageBelowPolicy condition of Node gpu-a (status); refused a change to: Ready" \
  node gpu-a "" "$AGENT" status-patch gpu-a strategic \
  '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Mallory","message":"x","lastHeartbeatTime":"'"$NOW"'","lastTransitionTime":"'"$NOW"'"}]}}'
ADMIN_DRY_RUN=1 refused "the GPU capacity in nodes/status" "$NODE_POLICY" "$NA may not change status fields other than the StorageBelowPolicy condition of Node gpu-a (status)" \
  node gpu-a "" "$AGENT" status-patch gpu-a merge '{"status":{"capacity":{"nvidia.com/gpu":"64"}}}'
refused "a token not bound to a pod on a node (its iogate.io label)" "$NODE_POLICY" "$NA may not change Node gpu-a: iogate accepts only a token bound to a pod on a node" \
  node gpu-a "" "$AGENT_UNBOUND" label node gpu-a --overwrite iogate.io/tier=slow
assert_jq <(node_json gpu-b) '(.metadata.labels | has("iogate.io/tier") | not) and [.spec.taints[].key] == ["example.com/maintenance"]
  and (.spec.unschedulable // false) == false' "gpu-b untouched by gpu-a's agent"

# ---------------------------------------------------------------------------------------------
# The hooks' accounts. helm install creates no hook: their objects (the post-delete cleanup's
# account, RBAC and policy; helm test's account, RBAC and dry-run policy) are rendered by helm and
# created as Helm creates them at uninstall and at `helm test`, less the Job and the test pods
# (no kubelet here). Then the real `iogate node prune` runs with the cleanup account's token.
CLEANUP_SA=iogate-cleanup
TEST_SA=iogate-test
helm template "$REL" "$CHART" -n "$NS" --set webhook.enabled=true --set "preflight.namespaces={$TRAIN}" \
  --set "tests.namespace=$TRAIN" --show-only templates/cleanup-hook.yaml --show-only templates/tests-hook.yaml \
  >"$SCRATCH/hooks.yaml" 2>&1 || fail "helm template of the hooks: $(cat "$SCRATCH/hooks.yaml")"
python3 -c '
import json, sys, yaml
items = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] not in ("Job", "Pod")]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))' "$SCRATCH/hooks.yaml" >"$SCRATCH/hooks.json"
k create -f "$SCRATCH/hooks.json" >/dev/null || fail "the hooks' objects were not created"
pass "the hooks' objects created: $(jq -r '[.items[] | "\(.kind)/\(.metadata.name)"] | join(", ")' "$SCRATCH/hooks.json")"
for p in "$CLEANUP_SA" "$TEST_SA"; do
  wait_until 60 bash -c "kubectl get validatingadmissionpolicy $p -o json |
    jq -e '.status.observedGeneration == .metadata.generation and (.status | has(\"typeChecking\"))'" ||
    fail "policy $p: not type-checked after 60 s"
  k get validatingadmissionpolicy "$p" -o json >"$SCRATCH/vap-$p.json"
  jq -e '((.status.typeChecking.expressionWarnings // []) | length) == 0' "$SCRATCH/vap-$p.json" >/dev/null ||
    fail "policy $p: type-checking warnings: $(jq -c .status.typeChecking "$SCRATCH/vap-$p.json")"
  pass "policy $p: the apiserver type-checked its expressions without a warning"
done
CLEANUP=$(kc cleanup "$(sa_token "$NS" "$CLEANUP_SA")")
TESTER=$(kc tester "$(sa_token "$NS" "$TEST_SA")")
CA="system:serviceaccount:$NS:$CLEANUP_SA"
TA="system:serviceaccount:$NS:$TEST_SA"
# A label that lands before the policy does is removed at once (as admin): the next try is an
# add again, which kubectl would otherwise refuse itself (the label is there, no --overwrite)
# without asking the apiserver, and the wait could never end.
wait_until 60 bash -c "kubectl --kubeconfig $CLEANUP label node gpu-b iogate.io/warmup=x 2>&1 | grep -q 'denied request' ||
  { kubectl label node gpu-b iogate.io/warmup- >/dev/null 2>&1; false; }" ||
  fail "the cleanup policy refused nothing within 60 s"
k label node gpu-b iogate.io/warmup- >/dev/null 2>&1 || true
# What the agent and preflight would have left, plus other owners' keys the prune must keep.
k taint node gpu-a iogate.io/storage-below-policy=true:NoSchedule >/dev/null
k label node gpu-b iogate.io/disk-class=nvme >/dev/null
k -n "$TRAIN" annotate pvc dataset iogate.io/probe-result='{}' example.com/backup=daily --overwrite >/dev/null
k -n "$TRAIN" annotate pod train-a iogate.io/verdict=pass --overwrite >/dev/null
refused "cleanup: adding an iogate.io label" "$CLEANUP_SA" "$CA may only remove iogate.io/ labels of nodes gpu-b" \
  node gpu-b "" "$CLEANUP" label node gpu-b iogate.io/tier=slow
refused "cleanup: changing an iogate.io label" "$CLEANUP_SA" "$CA may only remove iogate.io/ labels of nodes gpu-b" \
  node gpu-b "" "$CLEANUP" label node gpu-b --overwrite iogate.io/disk-class=hdd
refused "cleanup: removing a foreign label" "$CLEANUP_SA" "$CA may only remove iogate.io/ labels of nodes gpu-a" \
  node gpu-a "" "$CLEANUP" label node gpu-a team.example.com/owner-
refused "cleanup: removing a foreign annotation" "$CLEANUP_SA" "$CA may only remove iogate.io/ annotations of nodes gpu-a" \
  node gpu-a "" "$CLEANUP" annotate node gpu-a example.com/rack-
refused "cleanup: removing a foreign taint" "$CLEANUP_SA" "$CA may only remove iogate.io/ taints of nodes gpu-a" \
  node gpu-a "" "$CLEANUP" taint node gpu-a example.com/maintenance-
refused "cleanup: adding an iogate.io taint" "$CLEANUP_SA" "$CA may only remove iogate.io/ taints of nodes gpu-b" \
  node gpu-b "" "$CLEANUP" taint node gpu-b iogate.io/storage-below-policy=true:NoExecute
ADMIN_DRY_RUN=1 refused "cleanup: cordon" "$CLEANUP_SA" "$CA may not change the spec of nodes gpu-a beyond removing iogate.io/ taints" \
  node gpu-a "" "$CLEANUP" patch node gpu-a --type merge -p '{"spec":{"unschedulable":true}}'
ADMIN_DRY_RUN=1 refused "cleanup: removing the Ready condition" "$CLEANUP_SA" "$CA may only remove the StorageBelowPolicy condition of nodes gpu-a (status)" \
  node gpu-a "" "$CLEANUP" status-patch gpu-a strategic '{"status":{"conditions":[{"type":"Ready","$patch":"delete"}]}}'
refused "cleanup: a PVC's foreign annotation" "$CLEANUP_SA" "$CA may only remove iogate.io/ annotations of persistentvolumeclaims $TRAIN/dataset" \
  pvc dataset "$TRAIN" "$CLEANUP" -n "$TRAIN" annotate pvc dataset example.com/backup-
k get node gpu-a -o json >"$SCRATCH/gpu-a-before.json"
"$IOGATE" node prune --kubeconfig "$CLEANUP" --pvc-namespace "$TRAIN" >"$SCRATCH/prune.out" 2>"$SCRATCH/prune.err" ||
  fail "iogate node prune as $CA: exit $?: $(cat "$SCRATCH/prune.out" "$SCRATCH/prune.err")"
grep -qx 'node/gpu-a pruned: 2 labels, 1 annotation, 1 taint, 1 condition' "$SCRATCH/prune.out" &&
  grep -qx 'node/gpu-b pruned: 1 label, 0 annotations, 0 taints, 0 conditions' "$SCRATCH/prune.out" &&
  grep -qE "^persistentvolumeclaim/$TRAIN/dataset pruned: [0-9]+ annotations?$" "$SCRATCH/prune.out" &&
  grep -qE '^pruned 2 of 2 nodes, 1 of 1 PVCs in ml; 0 failures$' "$SCRATCH/prune.out" ||
  fail "iogate node prune printed: $(cat "$SCRATCH/prune.out" "$SCRATCH/prune.err")"
pass "iogate node prune as $CA, through its least-reach policy: $(paste -sd ';' "$SCRATCH/prune.out")"
k get nodes -o json >"$SCRATCH/nodes.json"
assert_jq "$SCRATCH/nodes.json" '[.items[] | (.metadata.labels | keys[]), (.metadata.annotations // {} | keys[]), (.spec.taints // [] | .[].key)
  | select(startswith("iogate.io/"))] == [] and ([.items[].status.conditions[]? | select(.type == "StorageBelowPolicy")] == [])
  and all(.items[]; .metadata.labels["team.example.com/owner"] == "vision" and .metadata.annotations["example.com/rack"] == "r42"
    and [.spec.taints[].key] == ["example.com/maintenance"] and any(.status.conditions[]; .type == "Ready" and .status == "True"))' \
  "after the prune: no iogate.io/ key or StorageBelowPolicy on gpu-a, gpu-b; their foreign label, annotation, taint and Ready kept"
assert_jq <(pvc_json dataset "$TRAIN") '(.metadata.annotations | keys | map(select(startswith("iogate.io/")))) == []
  and .metadata.annotations["example.com/backup"] == "daily" and .spec.resources.requests.storage == "1Ti"' \
  "after the prune: PVC $TRAIN/dataset has no iogate.io/ annotation; example.com/backup kept"
assert_jq <(pod_json train-a "$TRAIN") '.metadata.annotations["iogate.io/verdict"] == "pass"' \
  "after the prune: pod train-a keeps its iogate.io/verdict (pods are the record of a workload)"
"$IOGATE" node prune --kubeconfig "$CLEANUP" --pvc-namespace "$TRAIN" >"$SCRATCH/prune2.out" 2>&1 &&
  grep -qx 'pruned 0 of 2 nodes, 0 of 1 PVCs in ml; 0 failures' "$SCRATCH/prune2.out" ||
  fail "a second prune: $(cat "$SCRATCH/prune2.out")"
pass "a second iogate node prune finds nothing: $(cat "$SCRATCH/prune2.out")"

# helm test's account: pods only as a server-side dry run, only in tests.namespace.
test_pod() {
  jq -n --arg ns "$TRAIN" '{apiVersion: "v1", kind: "Pod", metadata: {name: "probe-me", namespace: $ns},
    spec: {containers: [{name: "c", image: "registry.k8s.io/pause:3.10"}]}}'
}
test_pod >"$SCRATCH/probe-me.json"
# A real create that lands before the policy does is deleted at once.
wait_until 60 bash -c "kubectl --kubeconfig $TESTER create -f $SCRATCH/probe-me.json 2>&1 | grep -q 'denied request'" ||
  fail "the test policy refused nothing within 60 s"
k -n "$TRAIN" delete pod probe-me --ignore-not-found >/dev/null 2>&1
as "$TESTER" create -f - --dry-run=server <<<"$(test_pod)" || fail "the test account's server-side dry run was refused: $(cat "$SCRATCH/out")"
pass "allowed: $TA creates a pod in $TRAIN as a server-side dry run"
if as "$TESTER" create -f - <<<"$(test_pod)"; then fail "the test account created a pod for real: $(cat "$SCRATCH/out")"; fi
grep -qF "ValidatingAdmissionPolicy '$TEST_SA' with binding '$TEST_SA' denied request: $TA may create pods only as a server-side dry run" "$SCRATCH/out" ||
  fail "the test account's real create: not the policy's refusal: $(cat "$SCRATCH/out")"
[[ -z $(k -n "$TRAIN" get pod probe-me -o name --ignore-not-found) ]] || fail "pod probe-me exists"
pass "refused: $TA creating a pod for real: $(sed -n 's/.*denied request: \(.*\)/\1/p' "$SCRATCH/out" | head -1)"
as "$TESTER" -n default create -f - --dry-run=server <<<"$(test_pod | jq '.metadata.namespace = "default"')" &&
  fail "the test account created a pod in default (not tests.namespace)"
grep -q 'forbidden' "$SCRATCH/out" || fail "the test account in default: $(cat "$SCRATCH/out")"
pass "refused (RBAC): $TA in namespace default"
# The real checks with its token: the node check finds no labelled node now (the prune ran) and
# names the values; the webhook check's dry run goes through but, the webhook being off here,
# comes back unmutated: a failure naming the namespaceSelector and webhook.port.
k label node gpu-b iogate.io/tier=ok >/dev/null
"$IOGATE" node check --kubeconfig "$TESTER" >"$SCRATCH/check.out" 2>&1 &&
  grep -qx 'node/gpu-b labelled: 1 iogate.io/ label, tier ok' "$SCRATCH/check.out" || fail "iogate node check: $(cat "$SCRATCH/check.out")"
pass "iogate node check as $TA: $(paste -sd ';' "$SCRATCH/check.out")"
k label node gpu-b iogate.io/tier- >/dev/null
rc=0; "$IOGATE" node check --kubeconfig "$TESTER" >"$SCRATCH/check.out" 2>&1 || rc=$?
[[ $rc == 3 ]] && grep -q 'none of the 2 nodes carries an iogate.io/ label' "$SCRATCH/check.out" && grep -q 'nodeAgent.nodeSelector' "$SCRATCH/check.out" ||
  fail "iogate node check with no labelled node: exit $rc: $(cat "$SCRATCH/check.out")"
pass "iogate node check with no labelled node: exit 3: $(cut -c1-160 "$SCRATCH/check.out")"
rc=0; "$IOGATE" webhook check --kubeconfig "$TESTER" --namespace "$TRAIN" >"$SCRATCH/wcheck.out" 2>&1 || rc=$?
[[ $rc == 3 ]] && grep -q "admitted a dry-run pod requesting nvidia.com/gpu in namespace $TRAIN without calling" "$SCRATCH/wcheck.out" ||
  fail "iogate webhook check with no webhook: exit $rc: $(cat "$SCRATCH/wcheck.out")"
[[ -z $(k -n "$TRAIN" get pods -l app.kubernetes.io/component=webhook-check -o name) ]] || fail "the webhook check's dry run stored a pod"
pass "iogate webhook check as $TA with no webhook installed: exit 3, nothing stored: $(cut -c1-200 "$SCRATCH/wcheck.out")"

# ---------------------------------------------------------------------------------------------
# RBAC unchanged: what the chart grants is what expected-rbac.yaml lists, and can-i says yes.
python3 - "$ROOT/tests/deploy/expected-rbac.yaml" >"$SCRATCH/expected-rbac.json" <<'PY'
import json, sys, yaml
print(json.dumps(yaml.safe_load(open(sys.argv[1]))))
PY
norm='[.[] | {apiGroups: (.apiGroups | sort), resources: (.resources | sort), verbs: (.verbs | sort)}] | sort'
k -n "$TRAIN" get role iogate-preflight -o json | jq "[.rules | $norm]" >"$SCRATCH/role.json"
k get clusterrole iogate-node -o json | jq "[.rules | $norm]" >"$SCRATCH/clusterrole.json"
jq -e --slurpfile r "$SCRATCH/role.json" --slurpfile c "$SCRATCH/clusterrole.json" \
  "(.preflight | $norm) == \$r[0][0] and (.node | $norm) == \$c[0][0]" "$SCRATCH/expected-rbac.json" >/dev/null ||
  fail "RBAC differs from tests/deploy/expected-rbac.yaml: Role $(cat "$SCRATCH/role.json"), ClusterRole $(cat "$SCRATCH/clusterrole.json")"
while read -r as_user verb res ns; do
  # shellcheck disable=SC2086
  answer=$(k auth can-i "$verb" "$res" ${ns:+-n "$ns"} --as "$as_user" 2>/dev/null || true)
  [[ $answer == yes ]] || fail "can-i $verb $res ${ns:+-n $ns} as $as_user: $answer, want yes (the policies must not need RBAC changes)"
done <<L
$PFA get pods $TRAIN
$PFA patch pods $TRAIN
$PFA get persistentvolumeclaims $TRAIN
$PFA patch persistentvolumeclaims $TRAIN
$PFA create events $TRAIN
$PFA create events.events.k8s.io $TRAIN
$NA get nodes
$NA patch nodes
$NA patch nodes/status
$NA create events default
$NA create events.events.k8s.io default
L
pass "RBAC unchanged: the Role and ClusterRole grant exactly expected-rbac.yaml's rules, and can-i says yes to each (the policies narrow writes, not RBAC)"

# ---------------------------------------------------------------------------------------------
# The switch: preflight.leastReachPolicy=false removes the policy; the Role alone then lets the
# same token annotate another pod (so the refusal above was the policy's).
helm upgrade "$REL" "$CHART" -n "$NS" --reuse-values --set preflight.leastReachPolicy=false >"$SCRATCH/upgrade.out" 2>&1 ||
  fail "helm upgrade (preflight.leastReachPolicy=false): $(cat "$SCRATCH/upgrade.out")"
[[ -z $(k get validatingadmissionpolicy "$PF_POLICY" -o name --ignore-not-found) &&
   -z $(k get validatingadmissionpolicybinding "$PF_POLICY" -o name --ignore-not-found) &&
   -n $(k get validatingadmissionpolicy "$NODE_POLICY" -o name --ignore-not-found) ]] ||
  fail "preflight.leastReachPolicy=false: the preflight policy or binding is still there, or the node agent's is gone"
wait_until 60 kubectl --kubeconfig "$PF" -n "$TRAIN" annotate pod train-b iogate.io/verdict=pass ||
  fail "without the policy, the Role's patch on another pod is still refused: $(kubectl --kubeconfig "$PF" -n "$TRAIN" annotate pod train-b --overwrite iogate.io/verdict=pass 2>&1)"
pass "preflight.leastReachPolicy=false: policy and binding gone; the Role alone lets train-a's token annotate train-b"
