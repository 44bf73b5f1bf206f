#!/usr/bin/env bash
# iogate's Kubernetes client under API faults, with the real kube-apiserver (tests/e2e/lib.sh)
# behind tests/faultproxy: a TLS proxy on loopback, its serving certificate signed by the cluster
# CA for 127.0.0.1, so iogate verifies TLS against the cluster CA exactly as in a pod. The proxy
# passes the bearer token through: the real apiserver authenticates, RBAC authorizes, and every
# answer that is not an injected fault (409s, a real 401 for a revoked token, 403s) is the real
# one. Faults are what a real apiserver does not do on demand: 429 with Retry-After, 500, dropped
# connections (before the write reaches the apiserver, and after it did), hangs, a 401.
#
#   - preflight (in-cluster config: a service-account volume in the kubelet's ..data layout,
#     KUBERNETES_SERVICE_HOST/PORT at the proxy; the chart's preflight account and Role):
#     a clean run (every call 2xx, the calls the manual names);
#     429 x2 with Retry-After on the pod PATCH, 500 on the Event POST, a drop on the PVC GET, a
#     TCP reset on the pod GET: each retried, Retry-After honoured, the annotations and exactly one new Event in the
#     apiserver;
#     drops after the write: the PVC lock PATCH (the retry meets the apiserver's real 409, the
#     lock is read back as ours and taken again) and the Event POST (no duplicate Event);
#     one injected 401: the token file re-read, the request retried;
#     one injected 409 on the pod's annotation PATCH (no resourceVersion: safe to repeat): retried,
#     logged, the annotations land;
#     a real rotation: the token in the file revoked in the apiserver (its bound Secret deleted),
#     the kubelet's ..data swap under a held request, the apiserver's own 401, the new token;
#     every request hanging with a 12 s deadline: fail-closed exit 3, fail-open exit 0, both
#     within the deadline plus slack;
#     the real apiserver stopped (SIGSTOP) for 30 s from the start, preflight talking to it
#     directly under a 60 s fail-closed deadline: its TLS handshakes time out and are retried,
#     exit 0, the annotations and one Event;
#   - iogate node --once with every Node PATCH answered 500: probing goes on, /metrics says
#     iogate_api_sync_pending 1 with sync errors, nothing lands; the API back: the state lands;
#   - no token in the proxy's log, iogate's logs or reports.
E2E_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$E2E_HERE/lib.sh"
source "$E2E_HERE/faultproxy_lib.sh"
source "$E2E_HERE/preflight_world.sh"
need_root "the service-account volume at its fixed path (unshare -m, mount --bind)"

# ---------------------------------------------------------------------------------------------
# The proxy: built (cached by its sources' hash) after its own checks, then started.
faultproxy_start --test

# ---------------------------------------------------------------------------------------------
# The pod's world: a Node, the namespace, the dataset's claim, the preflight account with a Role
# granting exactly what docs/manual.md's "The Kubernetes client" lists, and the training pod bound to the
# node (no kubelet runs it: preflight runs here, in its shoes).
preflight_world "$POD"
TOKEN=$(sa_token "$NS" "$SA" "$POD")  # bound to the pod, as the kubelet mounts it (the least-reach policy needs it)
pass "Node $NODE, namespace $NS, PVC $PVC, pod $POD (2 GPUs), ServiceAccount $SA with the Role the manual lists"

# Through the proxy, the real apiserver decides: TLS verified against the cluster CA, the
# account's token authenticated, RBAC allowing its own pod and refusing another account.
printf 'Authorization: Bearer %s\n' "$TOKEN" >"$SCRATCH/auth.hdr"
code=$(curl -sS --cacert "$CLUSTER_CA" -H @"$SCRATCH/auth.hdr" -o "$SCRATCH/curl.json" -w '%{http_code}' \
  "$PROXY_URL/api/v1/namespaces/$NS/pods/$POD")
[[ $code == 200 ]] && jq -e --arg p "$POD" '.metadata.name == $p' "$SCRATCH/curl.json" >/dev/null ||
  fail "GET the pod through the proxy as $SA: $code $(head -c 300 "$SCRATCH/curl.json")"
printf 'Authorization: Bearer %s\n' "$(sa_token "$NS" default)" >"$SCRATCH/default.hdr"
code=$(curl -sS --cacert "$CLUSTER_CA" -H @"$SCRATCH/default.hdr" -o "$SCRATCH/curl.json" -w '%{http_code}' \
  "$PROXY_URL/api/v1/namespaces/$NS/pods/$POD")
rm -f "$SCRATCH/default.hdr"
[[ $code == 403 ]] && jq -e '.kind == "Status" and .reason == "Forbidden" and (.message | test("system:serviceaccount:'"$NS"':default"))' \
  "$SCRATCH/curl.json" >/dev/null || fail "GET the pod as $NS:default: want the apiserver's 403, got $code $(head -c 300 "$SCRATCH/curl.json")"
pass "through the proxy (TLS against the cluster CA): $SA reads its pod (200), $NS:default is refused by RBAC (403 naming it)"

# sa_volume DIR TOKEN: a service-account volume as the kubelet writes it: token, ca.crt and
# namespace in a timestamped folder that ..data points at, each name a link through ..data.
sa_volume() {
  mkdir -p "$1/..2026_12_04_a"
  printf '%s' "$2" >"$1/..2026_12_04_a/token"
  cp "$CLUSTER_CA" "$1/..2026_12_04_a/ca.crt"
  printf '%s' "${3:-$NS}" >"$1/..2026_12_04_a/namespace"
  ln -s ..2026_12_04_a "$1/..data"
  local f
  for f in token ca.crt namespace; do ln -s "..data/$f" "$1/$f"; done
}
# rotate DIR TOKEN: the kubelet's atomic writer: a new folder, then ..data swapped by rename.
rotate() {
  local v="..2026_12_04_$RANDOM$RANDOM"
  mkdir "$1/$v"
  printf '%s' "$2" >"$1/$v/token"
  cp "$1/..data/ca.crt" "$1/..data/namespace" "$1/$v/"
  ln -sfn "$v" "$1/..data_tmp"
  mv -T "$1/..data_tmp" "$1/..data"
}
# in_pod SA_DIR CMD...: lib.sh's as_pod with two differences: the service-account volume is
# SA_DIR bind-mounted (so the test can rotate the token under a running CMD), and
# KUBERNETES_SERVICE_HOST/PORT name the proxy, or API_HOSTPORT where set (the apiserver itself).
in_pod() {
  local sa=$1 api=${API_HOSTPORT:-127.0.0.1:$PROXY_PORT}; shift
  env -u KUBECONFIG KUBERNETES_SERVICE_HOST="${api%:*}" KUBERNETES_SERVICE_PORT="${api##*:}" \
    unshare -m -- bash -c 'mount --make-rprivate / && mkdir -p /var/run/secrets/kubernetes.io/serviceaccount &&
      mount --bind "$0" /var/run/secrets/kubernetes.io/serviceaccount && exec "$@"' "$sa" "$@"
}
SA_DIR="$SCRATCH/sa"
sa_volume "$SA_DIR" "$TOKEN"

# quick_policy NAME [ON_ERROR] [DEADLINE]: a quick randread workload any disk passes.
quick_policy() {
  policy "$1" 3s "min_iops: 10, max_p99_latency: 5s" "mode: enforce" "on_error: ${2:-fail-closed}" "deadline: ${3:-60s}" \
    "result_ttl: 1h"
}
POLICY=$(quick_policy pass)

# preflight NAME [SA_DIR]: the initContainer's command in the pod's shoes (POD_NAME and
# NODE_NAME from the downward API, the namespace from the service account); the report in
# NAME.json, the debug log in NAME.log, the exit code in $rc, the wall time in $took (seconds).
preflight() {
  local name=$1 sa=${2:-$SA_DIR} pol=${3:-$POLICY} t0
  t0=$(date +%s.%N)
  set +e
  in_pod "$sa" env POD_NAME="$POD" NODE_NAME="$NODE" CONTAINER_NAME=iogate-preflight \
    timeout 180 "$IOGATE" preflight "$DATA" --policy "$pol" --output-format json --log-level debug \
    >"$SCRATCH/$name.json" 2>"$SCRATCH/$name.log"
  rc=$?
  set -e
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}
# The pod's iogate.io annotations removed, so that the next run's are its own.
unannotate() {
  k -n "$NS" annotate pod "$POD" iogate.io/verdict- iogate.io/randread-iops- iogate.io/p99-latency-us- \
    iogate.io/device-class- iogate.io/report- >/dev/null
}
# faulted NAME FAULT...: the pod's annotations removed, each FAULT added to the proxy, preflight NAME
# run (exit code in $rc), the faults cleared; the requests it made in $SCRATCH/NAME.req.json.
faulted() {
  local name=$1 f m
  shift
  unannotate
  m=$(mark)
  for f in "$@"; do fault "$f" >/dev/null; done
  preflight "$name"
  clear_faults
  requests_since "$m" "$SCRATCH/$name.req.json"
}
assert_annotated() {  # NAME: the run's verdict is on the pod in the apiserver
  pod_json >"$SCRATCH/$1.pod.json"
  local iops
  iops=$(jq -r '.results[0].measurement.iops | round' "$SCRATCH/$1.json")
  assert_jq "$SCRATCH/$1.pod.json" '.metadata.annotations | .["iogate.io/verdict"] == "pass" and
      .["iogate.io/randread-iops"] == "'"$iops"'" and (.["iogate.io/report"] | fromjson | .outcome == "pass") and
      .["example.com/owner"] == "alice"' \
    "$1: kubectl reads iogate.io/verdict=pass, randread-iops=$iops (the report's), the report; alice's annotation kept"
}

# ---------------------------------------------------------------------------------------------
# A clean run through the proxy: it probes and records the result on the PVC for the next runs.
m=$(mark)
preflight clean
[[ $rc -eq 0 ]] || fail "clean: exit $rc: $(tail -5 "$SCRATCH/clean.log")"
assert_jq "$SCRATCH/clean.json" '.outcome == "pass" and .api == "ok" and .error == "" and .results[0].source == "probe" and .results[0].pvc == "'"$PVC"'"' \
  "clean: exit 0, pass, probed, PVC $PVC found through the pod's mounts"
grep -q "api: in-cluster (KUBERNETES_SERVICE_HOST=127.0.0.1" "$SCRATCH/clean.log" || fail "clean: not in-cluster: $(head -5 "$SCRATCH/clean.log")"
requests_since "$m" "$SCRATCH/clean.req.json"
# The PVC's watch is the one request the client ends itself (once it holds the lock), so the
# proxy records no upstream status for it.
assert_jq "$SCRATCH/clean.req.json" 'length >= 6 and ([.[] | select(.query // "" | test("watch=1"))] | length == 1) and
    all(.[]; .status >= 200 and .status < 300 and (.upstream_status == .status or (.query // "" | test("watch=1"))) and
    (has("fault") | not) and .auth == "Bearer <redacted>")' \
  "clean: every request ($(jq length "$SCRATCH/clean.req.json"), one a watch of the PVC) forwarded and answered 2xx by the apiserver, bearer token redacted"
# The PVC is read by a watch (its first event is the PVC as it is); a GET of it is the lock's
# renewal, which a probe shorter than a renewal period does not make.
assert_jq "$SCRATCH/clean.req.json" '[.[] | .method + " " + (.path | sub("/namespaces/[^/]+/"; "/NS/")) +
      (if (.query // "" | test("watch=1")) then "?watch" else "" end)] | unique - ["GET /api/v1/NS/persistentvolumeclaims/'"$PVC"'"] ==
    ["GET /api/v1/NS/persistentvolumeclaims?watch", "GET /api/v1/NS/pods/'"$POD"'",
     "PATCH /api/v1/NS/persistentvolumeclaims/'"$PVC"'", "PATCH /api/v1/NS/pods/'"$POD"'",
     "POST /apis/events.k8s.io/v1/NS/events"]' \
  "clean: the calls the manual's RBAC list covers: pod get/patch, PVC get/watch/patch, events.k8s.io create"
assert_annotated clean

# ---------------------------------------------------------------------------------------------
# Transient faults, each before the request reaches the apiserver: retried, and what was asked
# for lands once. The PVC's fresh result is reused: no probe.
# The PVC is first read by its watch (the collection's path, watch=1): a watch is one attempt, and
# a failed one gives way to a GET of the PVC, retried as any request.
events_before=$(v1_events "$POD" | jq length)
faulted transient \
  '{"method":"PATCH","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"429","count":2,"retry_after":1}' \
  '{"method":"POST","path":".*/events","action":"500","count":1}' \
  '{"method":"GET","path":"/api/v1/namespaces/'"$NS"'/persistentvolumeclaims","action":"drop","count":1}' \
  '{"method":"GET","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"reset","count":1}'
[[ $rc -eq 0 ]] || fail "transient faults: exit $rc: $(tail -5 "$SCRATCH/transient.log")"
assert_jq "$SCRATCH/transient.json" '.outcome == "pass" and .exit_code == 0 and .error == "" and .api == "ok" and .results[0].source == "shared"' \
  "transient faults: exit 0, pass, the PVC's result reused"
[[ $(statuses "$SCRATCH/transient.req.json" PATCH "/pods/$POD") == "[429,429,200]" ]] ||
  fail "pod PATCH: want 429, 429, 200; got $(statuses "$SCRATCH/transient.req.json" PATCH "/pods/$POD")"
assert_jq "$SCRATCH/transient.req.json" '[.[] | select(.method == "PATCH" and (.path | endswith("/pods/'"$POD"'")))] |
    (.[1].unix_ms - .[0].unix_ms) >= 1000 and (.[2].unix_ms - .[1].unix_ms) >= 1000 and .[2].upstream_status == 200' \
  "pod PATCH: 429, 429 (Retry-After: 1), then 200 from the apiserver; each retry at least 1 s after the previous request"
[[ $(grep -Ec 'PATCH /api/v1/namespaces/'"$NS"'/pods/'"$POD"': 429 TooManyRequests.*retry [12] in 1000 ms \(Retry-After\), [0-9]+ ms before the deadline' "$SCRATCH/transient.log") -eq 2 ]] ||
  fail "iogate's log does not show two Retry-After waits of 1000 ms: $(grep -i 'retry' "$SCRATCH/transient.log" | head -5)"
pass "iogate's log: two retries after exactly the Retry-After (1000 ms)"
[[ $(statuses "$SCRATCH/transient.req.json" POST /events) == "[500,201]" ]] ||
  fail "Event POST: want 500, 201; got $(statuses "$SCRATCH/transient.req.json" POST /events)"
assert_jq "$SCRATCH/transient.req.json" '[.[] | select(.method == "POST")] | (.[0] | has("upstream_status") | not) and .[1].upstream_status == 201' \
  "Event POST: the injected 500 (never reached the apiserver), then created (201)"
[[ $(statuses "$SCRATCH/transient.req.json" GET "/persistentvolumeclaims") == "[0]" &&
   $(statuses "$SCRATCH/transient.req.json" GET "/persistentvolumeclaims/$PVC") == "[200]" ]] ||
  fail "PVC: want the watch dropped (0), then a GET (200); got watch $(statuses "$SCRATCH/transient.req.json" GET "/persistentvolumeclaims"), GET $(statuses "$SCRATCH/transient.req.json" GET "/persistentvolumeclaims/$PVC")"
grep -q "watch not opened (WATCH /api/v1/namespaces/$NS/persistentvolumeclaims?watch=1.*: ConnectionLost" "$SCRATCH/transient.log" ||
  fail "iogate's log does not name the lost connection: $(grep -i pvc "$SCRATCH/transient.log" | head -3)"
pass "PVC watch: connection dropped without an answer, iogate saw ConnectionLost and read the PVC instead (200)"
[[ $(statuses "$SCRATCH/transient.req.json" GET "/pods/$POD") == "[0,200]" ]] ||
  fail "pod GET: want reset (0), 200; got $(statuses "$SCRATCH/transient.req.json" GET "/pods/$POD")"
grep -Eq "GET /api/v1/namespaces/$NS/pods/$POD: ConnectionLost.*retry 1 in [0-9]+ ms" "$SCRATCH/transient.log" ||
  fail "iogate's log does not show the reset connection retried: $(grep "GET /api/v1/namespaces/$NS/pods/" "$SCRATCH/transient.log" | head -3)"
pass "pod GET: connection reset (TCP RST), iogate saw ConnectionLost and retried (200)"
assert_annotated transient
v1_events "$POD" >"$SCRATCH/transient.events.json"
assert_jq "$SCRATCH/transient.events.json" "length == $events_before + 1 and (.[-1] | .reason == \"StoragePolicyMet\" and .reportingController == \"iogate.io/preflight\")" \
  "Event: exactly one new StoragePolicyMet in the apiserver after the 500 and the retry"

# ---------------------------------------------------------------------------------------------
# Connections dropped after the apiserver applied the write: the client cannot know, retries, and
# meets the apiserver's own answer to a repeated write. The PVC's result removed so the pod probes
# and takes the PVC's lock.
k -n "$NS" annotate pvc "$PVC" iogate.io/probe-result- >/dev/null
events_before=$(v1_events "$POD" | jq length)
faulted after \
  '{"method":"PATCH","path":"/api/v1/namespaces/'"$NS"'/persistentvolumeclaims/'"$PVC"'","action":"drop","count":1,"after_upstream":true}' \
  '{"method":"POST","path":".*/events","action":"drop","count":1,"after_upstream":true}'
[[ $rc -eq 0 ]] || fail "drops after the write: exit $rc: $(tail -5 "$SCRATCH/after.log")"
assert_jq "$SCRATCH/after.json" '.outcome == "pass" and .results[0].source == "probe"' "drops after the write: exit 0, pass, probed"
assert_jq "$SCRATCH/after.req.json" '[.[] | select(.method == "PATCH" and (.path | endswith("/persistentvolumeclaims/'"$PVC"'"))) |
    [.status, .upstream_status]] == [[0, 200], [409, 409], [200, 200], [200, 200]]' \
  "PVC lock PATCH: applied then dropped; the retry (old resourceVersion) got the apiserver's 409; re-read, taken again; result written"
grep -q "another pod wrote first (409), reading it again" "$SCRATCH/after.log" || fail "iogate's log does not show the 409 re-read"
k -n "$NS" get pvc "$PVC" -o json >"$SCRATCH/after.pvc.json"
assert_jq "$SCRATCH/after.pvc.json" '(.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod == "'"$NS/$POD"'") and
    (.metadata.annotations | has("iogate.io/probe-lock") | not) and .metadata.annotations["example.com/backup"] == "daily"' \
  "PVC (kubectl): the new result by $NS/$POD, the lock released, the backup annotation kept"
assert_jq "$SCRATCH/after.req.json" '[.[] | select(.method == "POST") | [.status, .upstream_status]] == [[0, 201], [409, 409]]' \
  "Event POST: created then dropped; the retry (same name) got the apiserver's 409 AlreadyExists"
v1_events "$POD" >"$SCRATCH/after.events.json"
assert_jq "$SCRATCH/after.events.json" "length == $events_before + 1" "Event: exactly one new Event, no duplicate from the retry"
assert_annotated after
# The retry's AlreadyExists is the first attempt's success, not a failure to post.
if grep -q 'not posted' "$SCRATCH/after.log"; then
  fail "iogate says the Event was not posted, though it exists: $(grep -o 'event .* not posted.*' "$SCRATCH/after.log" | head -1)"
fi
pass "Event: the retry's 409 AlreadyExists counted as posted"

# ---------------------------------------------------------------------------------------------
# One 401 (the token expired or rotated, as the apiserver would answer): the token file re-read,
# the request retried once.
faulted unauth '{"method":"PATCH","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"401","count":1}'
[[ $rc -eq 0 ]] || fail "one 401: exit $rc: $(tail -5 "$SCRATCH/unauth.log")"
[[ $(statuses "$SCRATCH/unauth.req.json" PATCH "/pods/$POD") == "[401,200]" ]] ||
  fail "pod PATCH: want 401, 200; got $(statuses "$SCRATCH/unauth.req.json" PATCH "/pods/$POD")"
[[ $(grep -c "401 Unauthorized; re-reading the token file; retrying once" "$SCRATCH/unauth.log") -eq 1 ]] ||
  fail "iogate's log does not show one token re-read: $(grep -i 401 "$SCRATCH/unauth.log" | head -3)"
pass "one injected 401 on the pod PATCH: token file re-read, the PATCH retried (200)"
assert_annotated unauth

# ---------------------------------------------------------------------------------------------
# One 409 Conflict on the pod's annotation PATCH (what the apiserver answers a write it could not
# apply). That merge patch carries no resourceVersion, so it cannot be stale and is safe to send
# again: retried with the client's backoff, logged, the annotations land. (Writes that carry a
# resourceVersion re-read on 409 instead: the PVC lock above.)
faulted conflict '{"method":"PATCH","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"409","count":1}'
[[ $rc -eq 0 ]] || fail "one 409: exit $rc: $(tail -5 "$SCRATCH/conflict.log")"
assert_jq "$SCRATCH/conflict.json" '.outcome == "pass" and .exit_code == 0 and .api == "ok" and .error == ""' \
  "one 409 on the pod PATCH: exit 0, pass, recorded"
assert_jq "$SCRATCH/conflict.req.json" '[.[] | select(.method == "PATCH" and (.path | endswith("/pods/'"$POD"'")))] |
    length == 2 and (.[0] | .status == 409 and .fault == "409" and (has("upstream_status") | not)) and
    (.[1] | .status == 200 and .upstream_status == 200 and (has("fault") | not))' \
  "pod PATCH: the injected 409 (never reached the apiserver), then the same patch applied by the apiserver (200)"
grep -Eq "kube: PATCH /api/v1/namespaces/$NS/pods/$POD: 409 Conflict: Operation cannot be fulfilled on pods .*retry 1 in [0-9]+ ms" \
  "$SCRATCH/conflict.log" || fail "iogate's log does not show the 409 retried: $(grep -i '409\|conflict' "$SCRATCH/conflict.log" | head -3)"
pass "iogate's log: the 409 named and the PATCH retried once"
assert_annotated conflict

# ---------------------------------------------------------------------------------------------
# A real rotation. Token A is bound to a Secret that is then deleted, so the apiserver itself
# refuses A; the pod's volume holds A when preflight starts. Its first request (GET pod, sent
# with A) is held by the proxy while the kubelet's swap puts token B in place, then released: the
# apiserver answers 401, iogate re-reads the file and retries with B.
k -n "$NS" create secret generic token-a-binding >/dev/null
TOKEN_A=$(k -n "$NS" create token "$SA" --bound-object-kind Secret --bound-object-name token-a-binding --duration 1h)
k -n "$NS" delete secret token-a-binding --wait=true >/dev/null
printf 'Authorization: Bearer %s\n' "$TOKEN_A" >"$SCRATCH/a.hdr"
for i in $(seq 100); do
  code=$(curl -sS --cacert "$CLUSTER_CA" -H @"$SCRATCH/a.hdr" -o "$SCRATCH/curl.json" -w '%{http_code}' \
    "$CLUSTER_SERVER/api/v1/namespaces/$NS/pods/$POD")
  [[ $code == 401 ]] && break
  ((i < 100)) || fail "token A still accepted (HTTP $code) 30 s after its Secret was deleted"
  sleep 0.3
done
rm -f "$SCRATCH/a.hdr"
assert_jq "$SCRATCH/curl.json" '.kind == "Status" and .reason == "Unauthorized" and .code == 401' \
  "token A revoked: the apiserver answers its own 401 Unauthorized (its bound Secret is gone)"
SA_ROT="$SCRATCH/sa-rot"
sa_volume "$SA_ROT" "$TOKEN_A"
unannotate
m=$(mark)
hold=$(fault '{"method":"GET","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"hold","count":1}')
( preflight rotation "$SA_ROT"; exit "$rc" ) &
pf=$!
for i in $(seq 300); do
  [[ $(held) -eq 1 ]] && break
  kill -0 "$pf" 2>/dev/null || fail "rotation: preflight ended before its first request was held: $(tail -5 "$SCRATCH/rotation.log")"
  ((i < 300)) || fail "rotation: no request held after 30 s"
  sleep 0.1
done
rotate "$SA_ROT" "$TOKEN"
curl -sSf -X DELETE "$CONTROL_URL/faults/$hold" >/dev/null
rc=0
wait "$pf" || rc=$?
[[ $rc -eq 0 ]] || fail "rotation: exit $rc: $(tail -5 "$SCRATCH/rotation.log")"
requests_since "$m" "$SCRATCH/rotation.req.json"
assert_jq "$SCRATCH/rotation.req.json" '[.[] | select(.method == "GET" and (.path | endswith("/pods/'"$POD"'")))] | .[0:2] |
    (.[0] | .fault == "hold" and .status == 401 and .upstream_status == 401) and (.[1] | .status == 200 and (has("fault") | not))' \
  "rotation: the held GET with token A got the apiserver's 401; the retry with the rotated token B got 200"
[[ $(grep -c "401 Unauthorized; re-reading the token file; retrying once" "$SCRATCH/rotation.log") -eq 1 ]] ||
  fail "rotation: iogate's log does not show one token re-read: $(grep -i 401 "$SCRATCH/rotation.log" | head -3)"
assert_jq "$SCRATCH/rotation.json" '.outcome == "pass" and .api == "ok" and .error == ""' "rotation: exit 0, pass, recorded"
assert_annotated rotation

# ---------------------------------------------------------------------------------------------
# The API hangs: every request held until the client gives up. The policy's deadline (12 s) ends
# preflight: fail-closed exit 3, fail-open exit 0. The bound is the deadline plus 15 s of slack
# for a loaded machine; a client that ignored the deadline would wait for timeout's 180 s.
for mode in fail-closed fail-open; do
  m=$(mark)
  fault '{"path":".*","action":"hang"}' >/dev/null
  preflight "hang-$mode" "$SA_DIR" "$(quick_policy "hang-$mode" "$mode" 12s)"
  clear_faults
  for _ in $(seq 100); do [[ $(held) -eq 0 ]] && break; sleep 0.1; done
  want=3
  [[ $mode == fail-open ]] && want=0
  [[ $rc -eq $want ]] || fail "hang, $mode: exit $rc, want $want: $(tail -5 "$SCRATCH/hang-$mode.log")"
  awk -v t="$took" 'BEGIN { exit !(t <= 27) }' || fail "hang, $mode: preflight took ${took}s, more than the 12 s deadline plus 15 s"
  assert_jq "$SCRATCH/hang-$mode.json" '.outcome == "error" and .exit_code == '"$want"' and (.error | test("deadline"))' \
    "hang, $mode: exit $want after ${took%.*}s (deadline 12s), the error names the deadline"
  requests_since "$m" "$SCRATCH/hang-$mode.req.json"
  assert_jq "$SCRATCH/hang-$mode.req.json" 'length >= 1 and all(.[]; .fault == "hang" and .status == 0 and (has("upstream_status") | not))' \
    "hang, $mode: $(jq length "$SCRATCH/hang-$mode.req.json") request(s), each hung without an answer until iogate gave up"
done

# ---------------------------------------------------------------------------------------------
# The apiserver itself stopped (SIGSTOP) just before preflight starts and resumed (SIGCONT) 30 s
# later, preflight talking to it directly (no proxy), under a 60 s fail-closed deadline. Its
# kernel still completes TCP connections, so each TLS handshake waits unanswered: the client's
# tries time out after 10 s each and are retried, and the one waiting when the apiserver
# resumes is answered (a handshake that timed out is not a refused connection, which would fail
# the pod at 10 s). etcd runs throughout.
apiserver_pid=""
for pid in "${CLUSTER_PIDS[@]}"; do
  [[ $(ps -o comm= -p "$pid" 2>/dev/null) == kube-apiserver ]] && apiserver_pid=$pid
done
[[ -n $apiserver_pid ]] || fail "stalled apiserver: no kube-apiserver among the cluster's processes (${CLUSTER_PIDS[*]})"
resumer=""
resume_apiserver() {
  kill -CONT "$apiserver_pid" 2>/dev/null || true
  [[ -z $resumer ]] || kill -TERM "$resumer" 2>/dev/null || true
}
# On every exit path, and before cluster_down (on_exit runs last-in first): a stopped apiserver
# would hold its TERM until resumed.
on_exit resume_apiserver
unannotate
events_before=$(v1_events "$POD" | jq length)
stall_policy=$(quick_policy stalled fail-closed 60s)
kill -STOP "$apiserver_pid"
# The resume is a process of its own, so that it comes even if this shell is killed; a TERM
# (resume_apiserver's, on an early exit) ends it and its sleep at once.
(
  trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  sleep 30 &
  sleeper=$!
  wait "$sleeper"
  kill -CONT "$apiserver_pid"
) >/dev/null 2>&1 &
resumer=$!
API_HOSTPORT=${CLUSTER_SERVER#https://} preflight stalled "$SA_DIR" "$stall_policy"
wait "$resumer" || true
resumer=""
resume_apiserver
[[ $(ps -o state= -p "$apiserver_pid") != T ]] || fail "stalled apiserver: still stopped after the resume"
wait_until 60 kubectl get --raw /readyz || fail "stalled apiserver: not ready again after SIGCONT"
[[ $rc -eq 0 ]] || fail "stalled apiserver: exit $rc after ${took}s: $(grep -E 'warn|error' "$SCRATCH/stalled.log" | tail -5)"
assert_jq "$SCRATCH/stalled.json" '.outcome == "pass" and .exit_code == 0 and .api == "ok" and .error == ""' \
  "stalled apiserver: exit 0, pass, recorded, after ${took}s (stopped for 30 s, deadline 60 s)"
grep -q "api: in-cluster (KUBERNETES_SERVICE_HOST=127.0.0.1" "$SCRATCH/stalled.log" ||
  fail "stalled apiserver: not in-cluster: $(head -5 "$SCRATCH/stalled.log")"
# No answer could come before the resume: preflight's run spans it (a bound, not a speed check).
awk -v t="$took" 'BEGIN { exit !(t >= 29) }' || fail "stalled apiserver: preflight ended after ${took}s, before the apiserver resumed"
get_pod="GET /api/v1/namespaces/$NS/pods/$POD"
stalls=$(grep -Ec "kube: $get_pod: Timeout: TLS handshake with ${CLUSTER_SERVER#https://} timed out after [0-9]+ ms; retry [0-9]+ in" \
  "$SCRATCH/stalled.log" || true)
((stalls >= 1)) || fail "stalled apiserver: iogate's log shows no TLS handshake timeout retried: $(grep -i 'retry\|kube:' "$SCRATCH/stalled.log" | head -5)"
grep -Eq "kube: $get_pod 200 " "$SCRATCH/stalled.log" || fail "stalled apiserver: the pod GET never answered 200"
# Every try that failed before the answer was a handshake timeout: nothing else went wrong.
fails=$(awk -v ok="kube: $get_pod 200 " -v failed="kube: $get_pod failed" \
  'index($0, ok) { exit } index($0, failed)' "$SCRATCH/stalled.log")
[[ $(grep -c . <<<"$fails") -eq $stalls && $(grep -vc "TLS handshake with .* timed out" <<<"$fails") -eq 0 ]] ||
  fail "stalled apiserver: the pod GET's failures are not all handshake timeouts: $fails"
pass "stalled apiserver: the pod GET's TLS handshake timed out $stalls time(s), each retried; answered once it resumed"
assert_annotated stalled
v1_events "$POD" >"$SCRATCH/stalled.events.json"
assert_jq "$SCRATCH/stalled.events.json" "length == $events_before + 1 and (.[-1] | .reason == \"StoragePolicyMet\")" \
  "stalled apiserver: exactly one new StoragePolicyMet Event"

# ---------------------------------------------------------------------------------------------
# The node agent: every write to the Node answered 500. It probes, serves /metrics with the sync
# pending, writes nothing; once the API answers again, the state lands and --once exits 0.
# The agent's account and ClusterRole are the chart's: the release preflight_world installed, with
# the node agent turned on.
NODE_NS=iogate-system
helm upgrade iogate "$CHART" -n "$NODE_NS" --reuse-values --set nodeAgent.enabled=true >"$SCRATCH/helm-upgrade.out" 2>&1 ||
  fail "helm upgrade (node agent on): $(cat "$SCRATCH/helm-upgrade.out")"
NODE_TOKEN=$(node_agent_token "$NODE_NS" iogate-node "$NODE")  # node-name claim: the least-reach policy
SA_NODE="$SCRATCH/sa-node"
sa_volume "$SA_NODE" "$NODE_TOKEN" "$NODE_NS"
NODE_DATA="$SCRATCH/node-data"
mkdir -p "$NODE_DATA"
cat >"$SCRATCH/node-policy.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, ramp: 500ms, runtime: 2s, size: 64m}
rules:
  - name: gpu-feed
    min_iops_per_gpu: 10
P
m=$(mark)
fault '{"method":"PATCH","path":"/api/v1/nodes/'"$NODE"'(/status)?","action":"500"}' >/dev/null
# --busy-util 100%: never skipped as busy; other tests share this machine's disk.
in_pod "$SA_NODE" env NODE_NAME="$NODE" timeout 300 "$IOGATE" node --once --policy "$SCRATCH/node-policy.yaml" \
  --path "$NODE_DATA" --busy-util 100% --listen 127.0.0.1:0 --output-format json --log-level debug \
  >"$SCRATCH/node.json" 2>"$SCRATCH/node.log" &
agent=$!
metrics_url=""
for i in $(seq 1200); do
  kill -0 "$agent" 2>/dev/null || fail "node agent exited during the outage: $(tail -5 "$SCRATCH/node.log")"
  if [[ -z $metrics_url ]]; then
    addr=$(sed -n 's/.*serving \/metrics \/healthz \/readyz \/report on \([0-9.:]*\).*/\1/p' "$SCRATCH/node.log" | head -1)
    [[ -n $addr ]] && metrics_url="http://$addr/metrics"
  fi
  if [[ -n $metrics_url ]] && curl -sf "$metrics_url" >"$SCRATCH/node.metrics" 2>/dev/null &&
     grep -Eq '^iogate_api_sync_errors_total\{[^}]*\} [1-9]' "$SCRATCH/node.metrics" &&
     grep -Eq '^iogate_probes_total\{[^}]*\} [1-9]' "$SCRATCH/node.metrics"; then
    break
  fi
  ((i < 1200)) || fail "node agent: no failed sync on /metrics after 120 s: $(tail -5 "$SCRATCH/node.log")"
  sleep 0.1
done
grep -Eq '^iogate_api_sync_pending\{node="'"$NODE"'"\} 1$' "$SCRATCH/node.metrics" ||
  fail "node agent: iogate_api_sync_pending is not 1 during the outage: $(grep iogate_api "$SCRATCH/node.metrics")"
grep -Eq '^iogate_probe_iops\{' "$SCRATCH/node.metrics" || fail "node agent: no iogate_probe_iops while the API fails"
pass "node agent, Node PATCH 500ing: probed (iogate_probe_iops), /metrics says iogate_api_sync_pending 1, sync errors $(sed -n 's/^iogate_api_sync_errors_total{[^}]*} //p' "$SCRATCH/node.metrics")"
k get node "$NODE" -o json >"$SCRATCH/node-during.json"
assert_jq "$SCRATCH/node-during.json" '.metadata.labels | has("iogate.io/randread-iops") | not' \
  "node agent, during the outage: no iogate.io label on Node $NODE in the apiserver"
clear_faults
rc=0
wait "$agent" || rc=$?
[[ $rc -eq 0 ]] || fail "node agent --once after the outage: exit $rc: $(tail -5 "$SCRATCH/node.log")"
requests_since "$m" "$SCRATCH/node.req.json"
assert_jq "$SCRATCH/node.req.json" '[.[] | select(.method == "PATCH" and (.path | startswith("/api/v1/nodes/'"$NODE"'")))] |
    (map(select(.status == 500)) | length) >= 6 and all(.[]; .status == 500 or .status == 200) and
    (map(.status) | index(200)) > (map(.status) | rindex(500))' \
  "node agent: the Node PATCHes 500 (retried, then the sync retried), then 200 once the API answered"
assert_jq "$SCRATCH/node.json" '.api.state == "ok" and .api.sync_errors >= 1 and .outcome == "pass"' \
  "node agent --once: exit 0, api state ok after $(jq .api.sync_errors "$SCRATCH/node.json") failed sync(s)"
k get node "$NODE" -o json >"$SCRATCH/node-after.json"
assert_jq "$SCRATCH/node-after.json" '(.metadata.labels["iogate.io/randread-iops"] | test("^[0-9]+$")) and
    ([.status.conditions[] | select(.type == "StorageBelowPolicy") | .status] == ["False"]) and
    ([.status.conditions[] | select(.type == "Ready") | .status] == ["True"])' \
  "node agent, after the outage (kubectl): iogate.io/randread-iops label, condition StorageBelowPolicy False, the kubelet's Ready kept"

# ---------------------------------------------------------------------------------------------
# No token anywhere: the proxy's log and stderr, iogate's logs and reports.
leaks=""
for tok in "$TOKEN" "$TOKEN_A" "$NODE_TOKEN"; do
  [[ ${#tok} -gt 100 ]] || fail "a token looks wrong (${#tok} characters)"
  for needle in "$tok" "${tok##*.}"; do  # the whole token, and its signature alone
    if hit=$(grep -lF -- "$needle" "$PROXY_LOG" "$SCRATCH/proxy.err" "$SCRATCH/proxy.out" "$SCRATCH"/*.log "$SCRATCH"/*.json 2>/dev/null); then
      leaks+=" $hit"
    fi
  done
done
[[ -z $leaks ]] || fail "a token leaked into:$leaks"
jq -s -e 'all(.[]; .auth == "Bearer <redacted>" or .auth == "none")' "$PROXY_LOG" >/dev/null ||
  fail "the proxy logged an auth other than 'Bearer <redacted>': $(jq -s -c 'map(.auth) | unique' "$PROXY_LOG")"
[[ ! -s "$SCRATCH/proxy.err" ]] || fail "faultproxy reported errors (forwarding failed?): $(head -5 "$SCRATCH/proxy.err")"
pass "no token (whole or its signature) in the proxy's log ($(wc -l <"$PROXY_LOG") requests), iogate's logs or reports"
