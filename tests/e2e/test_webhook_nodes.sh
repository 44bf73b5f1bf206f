#!/usr/bin/env bash
# iogate webhook's /validate looking Nodes up in the real kube-apiserver, through tests/faultproxy
# (no fault injected: the proxy only writes down every request the webhook makes). The webhook
# runs as a pod would (in-cluster config: the service-account token, the cluster CA,
# KUBERNETES_SERVICE_HOST/PORT, here pointing at the proxy) under a ServiceAccount whose only
# permission is `get nodes`, as the chart's webhook ClusterRole. AdmissionReviews are posted with
# curl (test_admission.sh sends them through kube-apiserver); the Nodes are real objects
# (make_node). A GPU pod pinned by nodeName to a node below the floor is refused, naming node,
# measured and required IOPS; one pinned by nodeSelector kubernetes.io/hostname to a node with IOPS
# enough but the iogate.io/storage-below-policy taint is refused for the taint; one pinned to a
# fast node is allowed; one pinned to a node that does not exist is allowed with a warning (the
# apiserver's real 404). The node cache: two reviews of pods pinned to the same node cost one GET;
# the proxy's log holds exactly one GET /api/v1/nodes/NAME per node and nothing else (no list, no
# watch, nothing the RBAC would refuse). The token never reaches the webhook's log.
# Moved here from tests/integration/test_webhook.sh, which ran these against the stand-in apiserver.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faultproxy_lib.sh"
source "$TESTS_DIR/lib/pki.sh"

NS=iogate-system
SA=iogate-webhook

# --- nodes as `iogate node` labels and taints them -----------------------------------------------
make_node fast-1 iogate.io/randread-iops=250000 iogate.io/disk-class=nvme
make_node slow-1 iogate.io/randread-iops=3000 iogate.io/disk-class=cloud-block
make_node tainted-1 iogate.io/randread-iops=90000 iogate.io/disk-class=nvme
k taint node tainted-1 iogate.io/storage-below-policy=true:NoSchedule >/dev/null
pass "nodes fast-1 (250000 IOPS), slow-1 (3000), tainted-1 (90000, tainted iogate.io/storage-below-policy)"

# --- the webhook's identity: get nodes, nothing else ---------------------------------------------
k create namespace "$NS" >/dev/null
k -n "$NS" create serviceaccount "$SA" >/dev/null
k create clusterrole iogate-webhook-nodes --verb=get --resource=nodes >/dev/null
k create clusterrolebinding iogate-webhook-nodes --clusterrole=iogate-webhook-nodes \
  --serviceaccount="$NS:$SA" >/dev/null
AS="system:serviceaccount:$NS:$SA"
[[ $(k auth can-i get nodes --as "$AS" 2>/dev/null) == yes && $(k auth can-i list nodes --as "$AS" 2>/dev/null) == no ]] ||
  fail "RBAC: $AS should get nodes and not list them"
pass "ServiceAccount $NS/$SA may get nodes, not list them"
TOKEN=$(sa_token "$NS" "$SA")

# --- the proxy in front of the apiserver, only to count ------------------------------------------
faultproxy_start

# --- iogate webhook, in-cluster through the proxy ------------------------------------------------
pki_ca "$SCRATCH/hook-pki" iogate-webhook-test-ca
pki_sign "$SCRATCH/hook-pki" hook /CN=localhost "$(pki_server_ext IP:127.0.0.1,DNS:localhost)"
CA="$SCRATCH/hook-pki/ca.crt"
POLICY="$TESTS_DIR/fixtures/webhook-policy.yaml"
# The cache's TTL is an hour, so that "one GET for two reviews" does not depend on how fast this
# machine is (the TTL's expiry is unit.webhook's).
CLUSTER_SERVER=$PROXY_URL as_pod "$NS" "$TOKEN" bash -c 'echo $$ >"$0"; exec "$@"' "$SCRATCH/webhook.pid" \
  "$IOGATE" webhook --listen 127.0.0.1:0 --tls-cert "$SCRATCH/hook-pki/hook.crt" --tls-key "$SCRATCH/hook-pki/hook.key" \
  --policy "$POLICY" --node-cache-ttl 1h >/dev/null 2>"$SCRATCH/webhook.log" &
wait_until 20 grep -q 'serving /mutate' "$SCRATCH/webhook.log" ||
  fail "iogate webhook not serving after 20 s: $(cat "$SCRATCH/webhook.log")"
WEBHOOK_PID=$(cat "$SCRATCH/webhook.pid")
stop_webhook() {
  [[ -r /proc/$WEBHOOK_PID/cmdline ]] && tr '\0' ' ' </proc/"$WEBHOOK_PID"/cmdline | grep -q "^$IOGATE webhook " &&
    kill -TERM "$WEBHOOK_PID"
}
on_exit stop_webhook
grep -q "api: in-cluster (KUBERNETES_SERVICE_HOST=127.0.0.1" "$SCRATCH/webhook.log" ||
  fail "the webhook does not use the in-cluster config: $(cat "$SCRATCH/webhook.log")"
ADDR=$(sed -n 's/.*serving \/mutate \/validate \/healthz on \([0-9.:]*\).*/\1/p' "$SCRATCH/webhook.log" | head -1)
[[ -n $ADDR ]] || fail "no address in the webhook's log: $(cat "$SCRATCH/webhook.log")"
[[ $(curl -sS --cacert "$CA" "https://$ADDR/healthz") == ok ]] || fail "/healthz"
pass "iogate webhook on https://$ADDR, in-cluster as $NS/$SA through the proxy"

# review OP POD_JSON: an AdmissionReview as the API server sends it.
review() {
  jq -n --arg op "$1" --argjson pod "$2" '{
    apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: {group: "", version: "v1", kind: "Pod"}, resource: {group: "", version: "v1", resource: "pods"},
      requestKind: {group: "", version: "v1", kind: "Pod"}, requestResource: {group: "", version: "v1", resource: "pods"},
      namespace: "ml", operation: $op,
      userInfo: {username: "system:serviceaccount:kube-system:job-controller", groups: ["system:serviceaccounts"]},
      object: $pod, oldObject: null, dryRun: false, options: {apiVersion: "meta.k8s.io/v1", kind: "CreateOptions"}}}'
}
validate() {  # validate OUT: POST the review on stdin to /validate
  curl -sS --fail --cacert "$CA" -H 'Content-Type: application/json' --data-binary @- "https://$ADDR/validate" >"$1" ||
    fail "POST /validate failed: $(tail -5 "$SCRATCH/webhook.log")"
}
gpu_pod() {  # gpu_pod GPUS [SPEC_EXTRA_JSON]
  jq -n --arg g "$1" --argjson extra "${2:-{\}}" '{apiVersion: "v1", kind: "Pod",
    metadata: {generateName: "train-", namespace: "ml", labels: {"job-name": "train"}},
    spec: ({containers: [{name: "train", image: "pytorch", resources: {limits: {"nvidia.com/gpu": $g}}}]} + $extra)}'
}
# node_gets NAME: how many requests for Node NAME the proxy has logged.
node_gets() { jq -s --arg p "/api/v1/nodes/$1" '[.[] | select(.path == $p)] | length' "$PROXY_LOG" 2>/dev/null || echo 0; }
logged() { (($(node_gets "$1") >= 1)); }

# --- /validate: pinned to a slow node, a tainted node, a fast node, an unknown node --------------
review CREATE "$(gpu_pod 4 '{"nodeName":"slow-1"}')" | validate "$SCRATCH/v1.json"
assert_jq "$SCRATCH/v1.json" '.response.allowed == false and (.response.status.message | test("slow-1")) and
  (.response.status.message | test("3,?000")) and (.response.status.message | test("20,?000"))' \
  "validate: pinned to slow-1 refused, naming node, measured (3,000) and required (20,000) IOPS"
pass "validate: $(jq -r .response.status.message "$SCRATCH/v1.json")"
wait_until 10 logged slow-1 || fail "the proxy logged no request for slow-1: $(cat "$PROXY_LOG")"
# The same node again: answered from the cache.
review CREATE "$(gpu_pod 4 '{"nodeName":"slow-1"}')" | validate "$SCRATCH/v1b.json"
jq -e --slurpfile a "$SCRATCH/v1.json" '.response.allowed == false and .response.status.message == $a[0].response.status.message' \
  "$SCRATCH/v1b.json" >/dev/null || fail "the second review of a pod on slow-1 answered otherwise: $(jq -c .response "$SCRATCH/v1b.json")"

review CREATE "$(gpu_pod 1 '{"nodeSelector":{"kubernetes.io/hostname":"tainted-1"}}')" | validate "$SCRATCH/v2.json"
assert_jq "$SCRATCH/v2.json" '.response.allowed == false and (.response.status.message | test("tainted-1")) and
  (.response.status.message | test("iogate.io/storage-below-policy"))' \
  "validate: nodeSelector kubernetes.io/hostname=tainted-1 (IOPS enough, tainted) refused for the taint"
review CREATE "$(gpu_pod 4 '{"nodeName":"fast-1"}')" | validate "$SCRATCH/v3.json"
assert_jq "$SCRATCH/v3.json" '.response.allowed == true' "validate: pinned to fast-1 allowed"
review CREATE "$(gpu_pod 4 '{"nodeName":"ghost-9"}')" | validate "$SCRATCH/v4.json"
assert_jq "$SCRATCH/v4.json" '.response.allowed == true and (.response.warnings | length) >= 1 and
  (.response.warnings | any(test("ghost-9")))' "validate: unknown node ghost-9 allowed with a warning naming it"

# --- what the webhook asked the apiserver: one GET per node, nothing else ------------------------
# The proxy writes a request down once it is over; ghost-9's, the last, marks the log complete.
wait_until 10 logged ghost-9 || fail "the proxy logged no request for ghost-9: $(cat "$PROXY_LOG")"
jq -s -c 'map({method, path, upstream_status})' "$PROXY_LOG" >"$SCRATCH/requests.json"
[[ $(node_gets slow-1) -eq 1 ]] || fail "node cache: slow-1 fetched $(node_gets slow-1) times for two reviews, want 1"
pass "validate: node look-ups cached (one GET of slow-1 for two reviews)"
assert_jq "$SCRATCH/requests.json" '. == [
  {method: "GET", path: "/api/v1/nodes/slow-1", upstream_status: 200},
  {method: "GET", path: "/api/v1/nodes/tainted-1", upstream_status: 200},
  {method: "GET", path: "/api/v1/nodes/fast-1", upstream_status: 200},
  {method: "GET", path: "/api/v1/nodes/ghost-9", upstream_status: 404}]' \
  "the webhook's requests, in order: GET slow-1, tainted-1, fast-1 (200), ghost-9 (the apiserver's 404); no list, no watch, no 403"
jq -s -e 'all(.[]; .auth == "Bearer <redacted>" and .status == .upstream_status)' "$PROXY_LOG" >/dev/null ||
  fail "the proxy changed an answer or saw no bearer token: $(cat "$PROXY_LOG")"
pass "every request carried the bearer token and got the apiserver's answer unchanged"

# --- shutdown; the token ---------------------------------------------------------------------------
stop_webhook || fail "iogate webhook (pid $WEBHOOK_PID) is not running: $(tail -5 "$SCRATCH/webhook.log")"
wait_until 20 bash -c '! kill -0 "$0"' "$WEBHOOK_PID" || fail "iogate webhook still runs 20 s after SIGTERM"
pass "iogate webhook stopped by SIGTERM"
! grep -qF "$TOKEN" "$SCRATCH/webhook.log" "$PROXY_LOG" || fail "the token reached the webhook's or the proxy's log"
! grep -qF "${TOKEN##*.}" "$SCRATCH/webhook.log" || fail "the token's signature reached the webhook's log"
pass "no token in the webhook's log or the proxy's"
