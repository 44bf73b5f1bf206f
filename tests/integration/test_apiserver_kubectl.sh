# The test API server (tests/apiserver) against the real kubectl, the pinned build of tests/upstream
# (the version the e2e cluster runs), so that the stand-in the in-process unit tests use keeps
# behaving as kube-apiserver does for a current client: discovery, get, label, annotate,
# taint, patch (merge, strategic, status subresource), events, errors kubectl must understand
# (NotFound, Invalid, Conflict, Unauthorized), a 429 client-go retries, client-certificate auth by
# kubeconfig. Every write is read back through kubectl and through the server's /_test/ store.
source "$(dirname "$0")/lib.sh"
# The pinned kubectl (tests/upstream, the version the e2e cluster runs), never whatever kubectl
# the machine has: UPSTREAM_BIN, else tests/upstream/build.sh's cache (kubectl's module built on
# first use).
UPSTREAM_BIN=${UPSTREAM_BIN:-$(bash "$TESTS_DIR/upstream/build.sh" --print-bin kubectl)} ||
  fail "the pinned kubectl is not built: run bash tests/upstream/build.sh (scripts/test.sh does)"
KUBECTL=$UPSTREAM_BIN/kubectl
[[ -x $KUBECTL ]] || fail "$KUBECTL is not built: run bash tests/upstream/build.sh (scripts/test.sh does)"
kubectl() { "$KUBECTL" "$@"; }
KUBECTL_VERSION=$("$KUBECTL" version --client -o json | jq -r .clientVersion.gitVersion)
[[ $KUBECTL_VERSION =~ ^v1\.[0-9]+\.[0-9]+ ]] || fail "$KUBECTL: no client version ($KUBECTL_VERSION)"
pass "kubectl $KUBECTL_VERSION ($KUBECTL)"
source "$(dirname "$0")/apiserver_lib.sh"
start_apiserver
certs=$API_CERTS TOKEN=$API_TOKEN URL=$API_URL server_pid=$API_PID

# ctl METHOD PATH [BODY]: the control API (and raw API calls) with the token.
ctl() {
  curl -sS --fail-with-body --cacert "$certs/ca.crt" -H "Authorization: Bearer $TOKEN" \
    -H "Content-Type: ${CT:-application/json}" -X "$1" "$URL$2" ${3:+--data-binary "$3"}
}
# k ARGS...: kubectl with the token; each call gets its own cache directory.
calls=0
k() {
  calls=$((calls + 1))
  KUBECACHEDIR="$SCRATCH/cache-$calls" kubectl --server "$URL" --certificate-authority "$certs/ca.crt" \
    --token "$TOKEN" --cache-dir "$SCRATCH/cache-$calls" "$@"
}
stored() { ctl GET "/_test/objects/$1" >"$SCRATCH/stored.json"; }

ctl POST /_test/objects '[
 {"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","labels":{"kubernetes.io/hostname":"n1"}},
  "spec":{"taints":[{"key":"other.io/maintenance","value":"soon","effect":"PreferNoSchedule"}]},
  "status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}],
            "nodeInfo":{"kubeletVersion":"v1.32.4"}}},
 {"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1","namespace":"ml","labels":{"app":"train"},
  "annotations":{"team":"vision"}},"spec":{"nodeName":"n1","containers":[{"name":"train","image":"t:1"}]},
  "status":{"phase":"Running"}}]' >/dev/null

# Reads.
k get node n1 -o json >"$SCRATCH/n1.json"
assert_jq "$SCRATCH/n1.json" '.metadata.name == "n1" and .kind == "Node" and (.metadata.resourceVersion | test("^[0-9]+$"))' \
  "kubectl get node n1 -o json"
k get nodes >"$SCRATCH/nodes.txt"
grep -Eq '^NAME +STATUS +ROLES +AGE +VERSION' "$SCRATCH/nodes.txt" && grep -Eq '^n1 +Ready +<none> +[0-9]+s +v1.32.4' "$SCRATCH/nodes.txt" ||
  fail "kubectl get nodes table: $(cat "$SCRATCH/nodes.txt")"
pass "kubectl get nodes prints the server's Table"
k get pods -n ml -o name | grep -qx 'pod/p1' || fail "kubectl get pods -n ml lists p1"
pass "kubectl get pods -n ml -o name"
out=$(k get node nope 2>&1) && fail "get of a missing node succeeded"
[[ $out == *'Error from server (NotFound): nodes "nope" not found'* ]] || fail "NotFound message: $out"
pass "NotFound Status as kubectl prints it"

# kubectl label: a merge patch; other labels, taints and status survive.
rv_before=$(jq -r .metadata.resourceVersion "$SCRATCH/n1.json")
k label node n1 iogate.io/tier=fast | grep -q 'node/n1 labeled' || fail "kubectl label"
k get node n1 -o json >"$SCRATCH/n1.json"
assert_jq "$SCRATCH/n1.json" '.metadata.labels["iogate.io/tier"] == "fast" and .metadata.labels["kubernetes.io/hostname"] == "n1"' \
  "label read back through kubectl, the other label kept"
stored nodes/n1
assert_jq "$SCRATCH/stored.json" ".metadata.labels[\"iogate.io/tier\"] == \"fast\" and (.metadata.resourceVersion | tonumber) > $rv_before
  and (.spec.taints | length) == 1 and .status.conditions[0].type == \"Ready\"" \
  "label in the store, resourceVersion advanced, taints and conditions untouched"

# kubectl annotate: a merge patch on the pod.
k annotate pod p1 -n ml iogate.io/verdict=pass | grep -q 'pod/p1 annotated' || fail "kubectl annotate"
k get pod p1 -n ml -o json >"$SCRATCH/p1.json"
assert_jq "$SCRATCH/p1.json" '.metadata.annotations == {"team":"vision","iogate.io/verdict":"pass"}' \
  "annotation read back through kubectl, the other annotation kept"
stored pods/ml/p1
assert_jq "$SCRATCH/stored.json" '.metadata.annotations["iogate.io/verdict"] == "pass" and .metadata.labels.app == "train"
  and .spec.containers[0].image == "t:1" and .status.phase == "Running"' "annotation in the store, the rest untouched"

# kubectl taint: a strategic merge patch carrying the whole (atomic) taint list.
ctl DELETE /_test/requests >/dev/null
k taint node n1 iogate.io/storage-below-policy=true:NoSchedule | grep -q 'node/n1 tainted' || fail "kubectl taint"
ctl GET /_test/requests >"$SCRATCH/log.json"
assert_jq "$SCRATCH/log.json" '[.[] | select(.method == "PATCH")] | length == 1 and .[0].path == "/api/v1/nodes/n1"
  and .[0].content_type == "application/strategic-merge-patch+json" and .[0].status == 200' \
  "kubectl taint sent one strategic merge PATCH"
assert_jq "$SCRATCH/log.json" "all(.[]; .auth == \"Bearer <redacted>\") and (tostring | contains(\"$TOKEN\") | not)" \
  "the request log redacts the token"
k get node n1 -o json >"$SCRATCH/n1.json"
assert_jq "$SCRATCH/n1.json" '[.spec.taints[].key] | sort == ["iogate.io/storage-below-policy","other.io/maintenance"]' \
  "taint read back through kubectl, the foreign taint kept"
stored nodes/n1
assert_jq "$SCRATCH/stored.json" '.spec.taints | map(select(.key == "iogate.io/storage-below-policy"))[0] == {"key":"iogate.io/storage-below-policy","value":"true","effect":"NoSchedule"}' \
  "taint in the store"
k taint node n1 iogate.io/storage-below-policy- | grep -q 'node/n1 untainted' || fail "kubectl taint KEY-"
stored nodes/n1
assert_jq "$SCRATCH/stored.json" '.spec.taints == [{"key":"other.io/maintenance","value":"soon","effect":"PreferNoSchedule"}]' \
  "taint removed, the foreign one kept"

# Status subresource: conditions merge by type; the main resource ignores status.
k patch node n1 --subresource=status --type=strategic \
  -p '{"status":{"conditions":[{"type":"StorageBelowPolicy","status":"True","reason":"Slow"}]},"spec":{"unschedulable":true}}' >/dev/null
stored nodes/n1
assert_jq "$SCRATCH/stored.json" '[.status.conditions[].type] == ["Ready","StorageBelowPolicy"] and (.spec.unschedulable | not)' \
  "nodes/status strategic merge: conditions merged by type, spec ignored"
k patch node n1 --type=merge -p '{"status":{"conditions":[]},"metadata":{"labels":{"x":"y"}}}' >/dev/null
stored nodes/n1
assert_jq "$SCRATCH/stored.json" '(.status.conditions | length) == 2 and .metadata.labels.x == "y"' \
  "a patch of the main resource ignores status"

# Errors kubectl must understand.
out=$(k patch node n1 --type=merge -p '{"metadata":{"labels":{"iogate.io/tier":"not valid!"}}}' 2>&1) && fail "invalid label accepted"
[[ $out == *'The Node "n1" is invalid: metadata.labels: Invalid value: "not valid!"'* ]] || fail "Invalid message: $out"
pass "422 Invalid for a bad label value, as kubectl prints it"
out=$(k patch node n1 --type=merge -p '{"metadata":{"resourceVersion":"1","labels":{"x":"z"}}}' 2>&1) && fail "stale patch accepted"
[[ $out == *'Operation cannot be fulfilled on nodes "n1": the object has been modified; please apply your changes to the latest version and try again'* ]] ||
  fail "Conflict message: $out"
pass "409 Conflict for a stale resourceVersion"
out=$(KUBECACHEDIR="$SCRATCH/cache-bad" kubectl --server "$URL" --certificate-authority "$certs/ca.crt" --token wrong \
  --cache-dir "$SCRATCH/cache-bad" get node n1 2>&1) && fail "a wrong token was accepted"
[[ $out == *'You must be logged in to the server (the server has asked for the client to provide credentials)'* ]] ||
  fail "Unauthorized message: $out"
pass "401 for a wrong token"

# A 429 from priority and fairness: client-go waits Retry-After and retries.
ctl POST /_test/faults '{"method":"GET","path_regex":"/api/v1/nodes/n1","kind":"429","retry_after_s":1,"count":1}' >/dev/null
ctl DELETE /_test/requests >/dev/null
k get node n1 -o name | grep -qx 'node/n1' || fail "kubectl get after a 429"
ctl GET /_test/requests >"$SCRATCH/log.json"
assert_jq "$SCRATCH/log.json" '[.[] | select(.path == "/api/v1/nodes/n1") | .status] == [429, 200]' \
  "kubectl retried the 429 and succeeded"
ctl DELETE /_test/faults >/dev/null

# Events: created through events.k8s.io/v1 and core/v1, listed by kubectl.
ctl POST /apis/events.k8s.io/v1/namespaces/ml/events '{"apiVersion":"events.k8s.io/v1","kind":"Event",
  "metadata":{"generateName":"p1."},"eventTime":"2025-01-01T00:00:00.000000Z","type":"Warning",
  "reason":"StorageBelowPolicy","action":"Preflight","note":"randread 900 IOPS < 10000",
  "reportingController":"iogate.io/preflight","reportingInstance":"iogate-n1",
  "regarding":{"kind":"Pod","namespace":"ml","name":"p1","apiVersion":"v1"}}' >"$SCRATCH/ev.json"
assert_jq "$SCRATCH/ev.json" '.note == "randread 900 IOPS < 10000" and (.metadata.name | startswith("p1."))' \
  "events.k8s.io/v1 event created"
out=$(ctl POST /apis/events.k8s.io/v1/namespaces/ml/events '{"metadata":{"name":"e2"},"type":"Warning","reason":"R",
  "regarding":{"kind":"Pod","namespace":"ml","name":"p1"}}' 2>&1) && fail "an events.k8s.io/v1 event without eventTime was accepted"
[[ $out == *'"code":422'* && $out == *'eventTime: Required value'* ]] || fail "events.k8s.io/v1 eventTime: $out"
out=$(ctl POST /apis/events.k8s.io/v1/namespaces/ml/events '{"metadata":{"name":"e3"},"type":"Warning","reason":"R",
  "eventTime":"2025-01-01T00:00:00.000000Z","regarding":{"kind":"Pod","namespace":"ml","name":"p1"}}' 2>&1) &&
  fail "an events.k8s.io/v1 event without reportingController was accepted"
[[ $out == *'reportingController: Required value'* && $out == *'reportingInstance: Required value'* && $out == *'action: Required value'* ]] ||
  fail "events.k8s.io/v1 validation: $out"
pass "events.k8s.io/v1 requires eventTime, reportingController, ..."
k get events -n ml >"$SCRATCH/events.txt"
grep -Eq 'Warning +StorageBelowPolicy +pod/p1 +randread 900 IOPS < 10000' "$SCRATCH/events.txt" ||
  fail "kubectl get events: $(cat "$SCRATCH/events.txt")"
pass "kubectl get events shows it through core/v1"

# Client-certificate authentication from a kubeconfig.
cat >"$SCRATCH/kubeconfig" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "$URL", certificate-authority: "$certs/ca.crt"}
users:
- name: cert
  user: {client-certificate: "$certs/client.crt", client-key: "$certs/client.key"}
contexts:
- name: test
  context: {cluster: test, user: cert, namespace: ml}
current-context: test
KCFG
ctl DELETE /_test/requests >/dev/null
KUBECONFIG="$SCRATCH/kubeconfig" KUBECACHEDIR="$SCRATCH/cache-cert" kubectl --cache-dir "$SCRATCH/cache-cert" \
  get pod p1 -o jsonpath='{.metadata.name}' | grep -qx p1 || fail "kubeconfig with client certificate"
ctl GET /_test/requests >"$SCRATCH/log.json"
assert_jq "$SCRATCH/log.json" 'any(.[]; .path == "/api/v1/namespaces/ml/pods/p1" and .auth == "x509 CN=iogate-test" and .status == 200)' \
  "kubeconfig client-certificate auth"

kill -TERM "$server_pid"
code=0
wait "$server_pid" || code=$?
[[ $code -eq 0 ]] || fail "server exit on SIGTERM: $code"
pass "server exits 0 on SIGTERM"
