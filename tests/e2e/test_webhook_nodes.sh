#!/usr/bin/env bash
# iogate webhook's /validate looking Nodes up in the real kube-apiserver, through tests/faultproxy
# (no fault injected: the proxy only writes down every request the webhook makes). The webhook
# runs as a pod would (in-cluster config: the service-account token, the cluster CA,
# KUBERNETES_SERVICE_HOST/PORT, here pointing at the proxy). AdmissionReviews are posted with curl
# (test_admission.sh sends them through kube-apiserver); the Nodes are real objects (make_node).
#
# First under a ClusterRole that grants only `get nodes` (an older chart's): the webhook's LIST is
# refused (403), it logs one warning naming the fix and looks each node up by name. A GPU pod
# pinned by nodeName to a node below the floor is refused, naming node, measured and required
# IOPS; one pinned by nodeSelector kubernetes.io/hostname to a node with IOPS enough but the
# iogate.io/storage-below-policy taint is refused for the taint; one pinned to a fast node is
# allowed; one pinned to a node that does not exist is allowed with a warning (the apiserver's real
# 404). The GET cache: two reviews of pods pinned to the same node cost one GET; the proxy's log
# holds the refused LIST and exactly one GET /api/v1/nodes/NAME per node, nothing else.
#
# Then under the chart's ClusterRole (get, list, watch), a second webhook: it lists the nodes and
# watches them, and decides from memory: a label lowered, a label raised and a taint added reach
# its next decision for a pod pinned to that node (polled, within a generous bound), a node created
# after its list is judged by its labels, an unknown node is allowed with a warning, all without a
# single GET of a node (the proxy's log, /debug/node-cache's counters and /metrics agree). The token never
# reaches the webhooks' logs.
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

# --- the webhook's identity: get nodes, nothing else (an older chart's ClusterRole) -------------
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
# start_webhook LOG [FLAG...]: iogate webhook in-cluster through the proxy, logging to LOG; sets
# WEBHOOK_PID and ADDR.
start_webhook() {
  local log=$1; shift
  CLUSTER_SERVER=$PROXY_URL start_webhook_pod "$log" "$NS" "$TOKEN" webhook --listen 127.0.0.1:0 \
    --metrics-listen 127.0.0.1:0 --tls-cert "$SCRATCH/hook-pki/hook.crt" --tls-key "$SCRATCH/hook-pki/hook.key" \
    --policy "$POLICY" "$@"
  ADDR=$(sed -n 's/.*serving \/mutate \/validate \/healthz on \([0-9.:]*\).*/\1/p' "$log" | head -1)
  [[ -n $ADDR ]] || fail "no address in the webhook's log: $(cat "$log")"
  METRICS=$(sed -n 's/.*serving \/metrics on \([0-9.:]*\).*/\1/p' "$log" | head -1)
  [[ -n $METRICS ]] || fail "no metrics address in the webhook's log: $(cat "$log")"
  [[ $(curl -sS --cacert "$CA" "https://$ADDR/healthz") == ok ]] || fail "/healthz"
}
# node_cache OUT: GET /debug/node-cache.
node_cache() { curl -sS --fail --cacert "$CA" "https://$ADDR/debug/node-cache" >"$1" || fail "GET /debug/node-cache"; }

# The GET cache's TTL is an hour, so that "one GET for two reviews" does not depend on how fast
# this machine is (the TTL's expiry is unit.webhook's).
LOG1="$SCRATCH/webhook.log"
start_webhook "$LOG1" --node-cache-ttl 1h
pass "iogate webhook on https://$ADDR, in-cluster as $NS/$SA through the proxy"
wait_until 20 grep -q 'node cache: cannot list nodes' "$LOG1" ||
  fail "no warning that nodes cannot be listed after 20 s: $(cat "$LOG1")"
grep 'node cache: cannot list nodes' "$LOG1" | grep -q 'grant the webhook.s ClusterRole list and watch on nodes' ||
  fail "the warning does not name the fix: $(grep 'node cache' "$LOG1")"
[[ $(grep -c 'node cache: cannot list nodes' "$LOG1") -eq 1 ]] || fail "the refusal was warned more than once"
node_cache "$SCRATCH/nc1.json"
assert_jq "$SCRATCH/nc1.json" '.watch == true and .informer.forbidden == true and .store.synced == false' \
  "a ClusterRole without list: one warning naming the fix; /debug/node-cache says forbidden, not synced"

validate() {  # validate OUT: POST the review on stdin to /validate
  curl -sS --fail --cacert "$CA" -H 'Content-Type: application/json' --data-binary @- "https://$ADDR/validate" >"$1" ||
    fail "POST /validate failed: $(tail -5 "$LOG1" "${LOG2:-/dev/null}")"
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
jq -s -c 'map({method, path, query, upstream_status})' "$PROXY_LOG" >"$SCRATCH/requests.json"
[[ $(node_gets slow-1) -eq 1 ]] || fail "node cache: slow-1 fetched $(node_gets slow-1) times for two reviews, want 1"
pass "validate: node look-ups cached (one GET of slow-1 for two reviews)"
assert_jq "$SCRATCH/requests.json" '. == [
  {method: "GET", path: "/api/v1/nodes", query: "limit=100", upstream_status: 403},
  {method: "GET", path: "/api/v1/nodes/slow-1", query: null, upstream_status: 200},
  {method: "GET", path: "/api/v1/nodes/tainted-1", query: null, upstream_status: 200},
  {method: "GET", path: "/api/v1/nodes/fast-1", query: null, upstream_status: 200},
  {method: "GET", path: "/api/v1/nodes/ghost-9", query: null, upstream_status: 404}]' \
  "the webhook's requests, in order: the refused LIST, GET slow-1, tainted-1, fast-1 (200), ghost-9 (the apiserver's 404); no watch"
node_cache "$SCRATCH/nc1b.json"
assert_jq "$SCRATCH/nc1b.json" '.lookups == {from_watch: 0, from_get: 5, gets: 4}' \
  "/debug/node-cache: 5 look-ups by GET (4 GETs), none from a watch"
jq -s -e 'all(.[]; .auth == "Bearer <redacted>" and .status == .upstream_status)' "$PROXY_LOG" >/dev/null ||
  fail "the proxy changed an answer or saw no bearer token: $(cat "$PROXY_LOG")"
pass "every request carried the bearer token and got the apiserver's answer unchanged"

shutdown_webhook "$LOG1"
pass "iogate webhook stopped by SIGTERM"

# --- the chart's ClusterRole: list and watch -------------------------------------------------------
k patch clusterrole iogate-webhook-nodes --type=json \
  -p '[{"op": "replace", "path": "/rules/0/verbs", "value": ["get", "list", "watch"]}]' >/dev/null
[[ $(k auth can-i list nodes --as "$AS" 2>/dev/null) == yes && $(k auth can-i watch nodes --as "$AS" 2>/dev/null) == yes ]] ||
  fail "RBAC: $AS should list and watch nodes now"
MARK=$(mark)
LOG2="$SCRATCH/webhook-watch.log"
start_webhook "$LOG2"
wait_until 20 grep -q 'node cache: 3 nodes, ' "$LOG2" || fail "the webhook did not log its list of 3 nodes: $(cat "$LOG2")"
# watching: the watch from the list's version is open.
synced() { node_cache "$SCRATCH/nc2.json" && jq -e '.store.synced and .store.watching' "$SCRATCH/nc2.json" >/dev/null; }
wait_until 20 synced || fail "the node cache is not synced and watching after 20 s: $(cat "$SCRATCH/nc2.json")"
assert_jq "$SCRATCH/nc2.json" '.store.nodes == 3 and .store.lists == 1 and .store.current and .informer.forbidden == false and
  .store.bytes > 0 and .store.bytes < 10000' "list+watch: 3 nodes in memory, a few KB; its log says so"

# decide POD_SPEC_EXTRA OUT: a 4-GPU pod pinned so, reviewed.
decide() { review CREATE "$(gpu_pod 4 "$1")" | validate "$2"; }
# until_decided PRED WHAT POD_SPEC_EXTRA: reviews until the answer satisfies PRED (within 30 s).
until_decided() {
  local pred=$1 what=$2 extra=$3 i
  for ((i = 0; i < 150; i++)); do
    decide "$extra" "$SCRATCH/poll.json"
    jq -e "$pred" "$SCRATCH/poll.json" >/dev/null && { pass "$what: $(jq -c .response "$SCRATCH/poll.json" | cut -c1-200)"; return; }
    sleep 0.2
  done
  fail "$what: not within 30 s: $(jq -c .response "$SCRATCH/poll.json")"
}
decide '{"nodeName":"slow-1"}' "$SCRATCH/w1.json"
assert_jq "$SCRATCH/w1.json" '.response.allowed == false and (.response.status.message | test("slow-1"))' \
  "from the watch: pinned to slow-1 (3,000 IOPS) refused"
k label node slow-1 iogate.io/randread-iops=260000 --overwrite >/dev/null
until_decided '.response.allowed == true' "slow-1 relabelled 260,000 IOPS: the next decisions allow it" '{"nodeName":"slow-1"}'
k label node fast-1 iogate.io/randread-iops=4000 --overwrite >/dev/null
until_decided '.response.allowed == false and (.response.status.message | test("4,?000"))' \
  "fast-1 relabelled 4,000 IOPS: refused, naming the new figure" '{"nodeName":"fast-1"}'
k taint node slow-1 iogate.io/storage-below-policy=true:NoSchedule >/dev/null
until_decided '.response.allowed == false and (.response.status.message | test("iogate.io/storage-below-policy"))' \
  "slow-1 tainted iogate.io/storage-below-policy: refused for the taint" '{"nodeName":"slow-1"}'
make_node late-1 iogate.io/randread-iops=2500 iogate.io/disk-class=nvme
until_decided '.response.allowed == false and (.response.status.message | test("late-1")) and
  (.response.status.message | test("2,?500"))' "late-1, created after the list: known from the watch, refused" \
  '{"nodeSelector":{"kubernetes.io/hostname":"late-1"}}'
decide '{"nodeName":"ghost-9"}' "$SCRATCH/w5.json"
assert_jq "$SCRATCH/w5.json" '.response.allowed == true and (.response.warnings | any(test("ghost-9.*not found")))' \
  "from the watch: unknown node ghost-9 allowed with a warning, not found"

# --- what the second webhook asked: one LIST, watches, no GET of a node -----------------------------
node_cache "$SCRATCH/nc3.json"
assert_jq "$SCRATCH/nc3.json" '.lookups.gets == 0 and .lookups.from_get == 0 and .lookups.from_watch >= 6 and
  .store.nodes == 4 and .store.events >= 4 and .store.watching and .informer.watches >= 1 and
  .store.last_event_lag_ms != null' \
  "/debug/node-cache: every look-up from the watch, no GET; 4 nodes; the label, taint and node events applied"
# The same from /metrics: the watch synced and current with 4 nodes, in contact within the last
# minute; the decisions counted (the slow, relabelled, tainted and late nodes refused, the others
# allowed), no node look-up error.
curl -sS --fail "http://$METRICS/metrics" >"$SCRATCH/metrics.txt" || fail "GET http://$METRICS/metrics"
metric() { awk -v n="$1" '$1 == n { print $2 }' "$SCRATCH/metrics.txt"; }
[[ $(metric iogate_webhook_node_watch_synced) == 1 && $(metric iogate_webhook_node_watch_current) == 1 &&
  $(metric iogate_webhook_node_watch_nodes) == 4 ]] ||
  fail "node watch metrics: $(grep '^iogate_webhook_node_watch' "$SCRATCH/metrics.txt" | tr '\n' ' ')"
contact=$(metric iogate_webhook_node_watch_last_contact_timestamp_seconds)
awk -v c="$contact" -v now="$(date +%s)" 'BEGIN { exit !(c > now - 60 && c <= now + 1) }' ||
  fail "last contact $contact is not within the last minute of $(date +%s)"
denied=$(metric 'iogate_webhook_admission_requests_total{webhook="validate",operation="CREATE",decision="denied"}')
allowed=$(metric 'iogate_webhook_admission_requests_total{webhook="validate",operation="CREATE",decision="allowed"}')
lookup_errors=$(metric 'iogate_webhook_admission_errors_total{webhook="validate",kind="node_lookup"}')
((denied >= 4 && allowed >= 2)) && [[ $lookup_errors == 0 ]] ||
  fail "decision counts: denied $denied (want >= 4), allowed $allowed (>= 2), node_lookup errors $lookup_errors (want 0)"
pass "/metrics: node watch synced, current, 4 nodes, in contact $(awk -v c="$contact" -v now="$(date +%s)" 'BEGIN { printf "%d", now - c }') s ago; $denied denied, $allowed allowed, no look-up error"
requests_since "$MARK" "$SCRATCH/requests2.json"
assert_jq "$SCRATCH/requests2.json" '[.[] | select(.path | startswith("/api/v1/nodes/"))] == []' \
  "the proxy's log: no GET of a node by the watching webhook (late-1 included)"
assert_jq "$SCRATCH/requests2.json" '[.[] | select(.path == "/api/v1/nodes" and (.query | test("watch") | not))] |
  length == 1 and .[0].status == 200 and .[0].query == "limit=100"' "the proxy's log: one LIST of the nodes (200)"
shutdown_webhook "$LOG2"
pass "the watching webhook stopped by SIGTERM"
# The proxy writes a watch down when it ends: the webhook's, at its shutdown.
watches_logged() {
  requests_since "$MARK" "$SCRATCH/requests2.json"
  jq -e '[.[] | select(.path == "/api/v1/nodes" and (.query | test("watch=1")))] | length >= 1' \
    "$SCRATCH/requests2.json" >/dev/null
}
wait_until 10 watches_logged || fail "the proxy logged no watch of the nodes: $(cat "$SCRATCH/requests2.json")"
assert_jq "$SCRATCH/requests2.json" '[.[] | select(.path == "/api/v1/nodes" and (.query | test("watch=1")))] |
  all(.query | test("allowWatchBookmarks=true") and test("resourceVersion=[0-9]+") and test("timeoutSeconds="))' \
  "the proxy's log: the webhook's watches, with bookmarks, from a resourceVersion, with a timeout"

# --- the token -----------------------------------------------------------------------------------
! grep -qF "$TOKEN" "$LOG1" "$LOG2" "$PROXY_LOG" || fail "the token reached a webhook's or the proxy's log"
! grep -qF "${TOKEN##*.}" "$LOG1" "$LOG2" || fail "the token's signature reached a webhook's log"
pass "no token in the webhooks' logs or the proxy's"
