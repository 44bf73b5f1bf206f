#!/usr/bin/env bash
# iogate preflight against the real kube-apiserver (tests/e2e/lib.sh): the floor and the modes, the
# PVC's shared result and its probe lock among many pods, faults and deadlines, and kubeconfigs as
# users have them, where test_preflight.sh checks the initContainer in the image and
# test_api_faults.sh the in-cluster client under faults. preflight runs with a kubeconfig holding
# the token of the chart's preflight ServiceAccount (its Role grants what docs/manual.md lists),
# pointed at tests/faultproxy in front of the apiserver, so the proxy's log is the request
# sequence and faults are injected there:
#   - pod mode: 2 GPUs from the pod's limits, the floor max(min_iops 100, 50/GPU x 2) = 100;
#   - warn mode: verdict warn recorded, exit 0; --gpus 4000 scales the floor to 200,000;
#   - the PVC's result after its TTL (2 h old, ttl 1h): probed again, the result renewed;
#   - another pod's probe lock (a lease): waited for (the log names it, no PVC write of ours) and
#     its result reused (one watch of the PVC, no read a second); a holder that keeps renewing: never probed beside, fail-closed exit 3 and
#     fail-open exit 0 naming it, its lock left alone; an orphan renewed 2 h ago: taken over at
#     once, probed, recorded, the lock gone; SIGTERM while waiting: exit 3, interrupted, no test file;
#   - four pods at once on one PVC: one probes, three reuse; the PVC written twice (lock taken,
#     result + release), every other PVC write the apiserver's 409; each pod its own verdict;
#   - 64 pods on one PVC, each with its own pod-bound token, the prober SIGKILLed mid-probe:
#     exactly one takeover, no other waiter probes, every surviving pod its verdict annotation and
#     Event, no lock left;
#   - faults: a 429 (Retry-After) on the pod GET and a dropped pod PATCH, a 500 on the Event POST:
#     retried; the pod PATCH always 500: fail-closed exit 3 naming it, fail-open exit 0 with the
#     verdict and "could not record"; a 9 s stall against a 6 s deadline: exit 3 naming it;
#   - a client-certificate kubeconfig (a cert signed by the cluster CA, straight to the
#     apiserver): unbound, the apiserver's 403 names the certificate's user; bound, recorded;
#   - kubeconfigs as cloud users have them: KUBECONFIG of two files (a missing one between them),
#     --context, an exec credential plugin (a real script handing out a ServiceAccount's token):
#     the current context's refused token: the plugin re-run once after the 401, then exit 3
#     naming the user entry and plugin; --context prod: exit 2 naming it and the files read; a
#     failing plugin: exit 3 with its first stderr line; unbound: the apiserver's 403 names the
#     plugin token's account; bound: recorded, the plugin re-run as its 1 s credentials expire;
#   - no cluster at all: the verdict printed, the API skipped; no token in any log;
#   - a stampede: 64 pods at once on one PVC, straight to the apiserver: one probe, every pod its
#     verdict, no lock left, and by the apiserver's audit log at most 4 requests per pod beyond
#     its own verdict PATCH and Event.
E2E_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLUSTER_AUDIT_LOG=audit.log  # the stampede's count, at the end
source "$E2E_HERE/lib.sh"
source "$E2E_HERE/faultproxy_lib.sh"
source "$E2E_HERE/preflight_world.sh"

# --- the proxy ---
faultproxy_start

# --- the pod's world: a Node, the namespace, the claim, the account and its Role, the pod ---
preflight_world "$POD"
TOKEN=$(sa_token "$NS" "$SA" "$POD")  # bound to the pod (the least-reach policy needs it)
KC="$SCRATCH/kubeconfig"
token_kubeconfig "$KC" "$PROXY_URL" "$SA" "$TOKEN" "$NS"
pass "Node $NODE, PVC $PVC, pod $POD (2 GPUs), ServiceAccount $SA with its Role; a token kubeconfig at the proxy"

# case_policy NAME MIN_IOPS [MODE] [ON_ERROR] [DEADLINE] [TTL]: rule gpu-feed with MIN_IOPS and 50 per GPU.
case_policy() {
  policy "$1" 3s "min_iops: $2, min_iops_per_gpu: 50, max_p99_latency: 2s, forbidden_classes: [hdd]" "mode: ${3:-enforce}" \
    "on_error: ${4:-fail-closed}" "deadline: ${5:-40s}" "result_ttl: ${6:-1h}"
}
PASS_POLICY=$(case_policy pass 100)

# preflight NAME POLICY [flags]: as the initContainer runs it; report NAME.json, log NAME.log,
# exit code in $rc. POD (default train-0) and KUBECONFIG_FILE (default $KC) override.
preflight() {
  local name=$1 pol=$2 kc=${KUBECONFIG_FILE:-$KC}; shift 2
  if [[ -z ${KUBECONFIG_FILE:-} && -n ${RUN_POD:-} ]]; then  # a token bound to RUN_POD (least-reach policy)
    kc="$SCRATCH/kubeconfig-$RUN_POD"
    [[ -f $kc ]] || token_kubeconfig "$kc" "$PROXY_URL" "$SA" "$(sa_token "$NS" "$SA" "$RUN_POD")" "$NS"
  fi
  set +e
  KUBECONFIG="$kc" POD_NAME="${RUN_POD:-$POD}" POD_NAMESPACE=$NS NODE_NAME=$NODE \
    CONTAINER_NAME=iogate-preflight timeout 180 "$IOGATE" preflight "$DATA" --policy "$pol" \
    --output-format json --log-level debug "$@" >"$SCRATCH/$name.json" 2>"$SCRATCH/$name.log"
  rc=$?
  set -e
}
pvc_annotate() { k -n "$NS" annotate pvc "$PVC" --overwrite "$@" >/dev/null; }
reset_share() { k -n "$NS" annotate pvc "$PVC" iogate.io/probe-result- iogate.io/probe-lock- >/dev/null; }

# --- a first run probes; the floor from the pod's 2 GPUs ---
preflight a "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "first run: exit $rc: $(tail -5 "$SCRATCH/a.log")"
assert_jq "$SCRATCH/a.json" '.outcome == "pass" and .api == "ok" and .gpus == 2 and .gpus_from == "pod" and .results[0].source == "probe" and
    (.results[0].verdict.checks[] | select(.check == "min_iops") | .threshold_value == 100)' \
  "first run: pass, probed, 2 GPUs from the pod, floor max(min_iops 100, 50/GPU x 2) = 100"
pvc_json >"$SCRATCH/pvc.json"
jq -e '.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod == "'"$NS/$POD"'"' "$SCRATCH/pvc.json" >/dev/null ||
  fail "first run: no result on the PVC"

# --- warn mode: the verdict recorded, the pod let start ---
preflight warn "$(case_policy warn 50000000 warn)"
[[ $rc -eq 0 ]] || fail "warn: exit $rc, want 0: $(tail -3 "$SCRATCH/warn.log")"
assert_jq "$SCRATCH/warn.json" '.outcome == "warn" and .exit_code == 0 and
    (.results[0].verdict.checks[] | select(.check == "min_iops") | .passed == false)' "warn: min_iops failed, outcome warn, exit 0"
[[ $(pod_annotation "$POD" iogate.io/verdict) == warn ]] || fail "warn: iogate.io/verdict is '$(pod_annotation "$POD" iogate.io/verdict)'"
pass "warn (kubectl): iogate.io/verdict=warn on the pod"

# --- --gpus overrides the pod: 50/GPU x 4000 GPUs = 200,000 ---
preflight gpus "$PASS_POLICY" --gpus 4000
assert_jq "$SCRATCH/gpus.json" '.gpus == 4000 and .gpus_from == "--gpus" and
    (.results[0].verdict.checks[] | select(.check == "min_iops") | .threshold_value == 200000) and
    .exit_code == (if .outcome == "fail" then 1 else 0 end)' "--gpus 4000: floor scaled to 200,000"
[[ $rc -eq $(jq .exit_code "$SCRATCH/gpus.json") ]] || fail "--gpus: exit $rc, report says $(jq .exit_code "$SCRATCH/gpus.json")"

# --- after the TTL the PVC's result is stale: probed again, renewed ---
old=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%SZ)
RESULT=$(jq -r '.metadata.annotations["iogate.io/probe-result"]' "$SCRATCH/pvc.json")
pvc_annotate "iogate.io/probe-result=$(jq -c --arg t "$old" '.time = $t' <<<"$RESULT")"
preflight stale "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "stale: exit $rc: $(tail -3 "$SCRATCH/stale.log")"
assert_jq "$SCRATCH/stale.json" '.results[0].source == "probe"' "a 2 h old result (ttl 1h): probed again"
pvc_json | jq -e --arg t "$old" '.metadata.annotations["iogate.io/probe-result"] | fromjson | .time > $t and .pod == "'"$NS/$POD"'"' >/dev/null ||
  fail "stale: the PVC's result was not renewed: $(pvc_json | jq -c .metadata.annotations)"
pass "stale (kubectl): the PVC's result renewed"

# --- another pod holds the probe lock: wait, then reuse its result ---
# live_lock [RENEWED]: ml/train-7's lock as a live holder writes it (renewed now, or at RENEWED).
live_lock() {
  jq -cn --arg r "${1:-$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)}" '{pod: "ml/train-7", node: "gpu-node-7", renewed: $r, lease_seconds: 15}'
}
reset_share
pvc_annotate "iogate.io/probe-lock=$(live_lock)"
m=$(mark)
( preflight lock "$PASS_POLICY"; exit $rc ) &
pf=$!
wait_until 60 grep -q "pod ml/train-7 on node gpu-node-7 is probing it; waiting" "$SCRATCH/lock.log" ||
  fail "lock: no 'waiting' line: $(tail -5 "$SCRATCH/lock.log")"
# train-7 finishes: its result written and its lock released in one write, as iogate does.
k -n "$NS" annotate pvc "$PVC" iogate.io/probe-lock- --overwrite \
  "iogate.io/probe-result=$(jq -c --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '.pod = "ml/train-7" | .node = "gpu-node-7" | .time = $t' <<<"$RESULT")" >/dev/null
wait $pf && rc=0 || rc=$?
[[ $rc -eq 0 ]] || fail "lock: exit $rc: $(tail -3 "$SCRATCH/lock.log")"
assert_jq "$SCRATCH/lock.json" '.results[0].source == "shared" and (.results[0].shared_from | test("ml/train-7"))' \
  "lock held by ml/train-7: waited (the log names it) and reused its result"
requests_since "$m" "$SCRATCH/lock.req.json"
assert_jq "$SCRATCH/lock.req.json" '([.[] | select(.method == "GET" and (.path | endswith("/persistentvolumeclaims")) and
        (.query | test("watch=1") and test("fieldSelector=metadata.name%3D'"$PVC"'")))] | length == 1) and
    ([.[] | select(.method == "GET" and (.path | endswith("/persistentvolumeclaims/'"$PVC"'")))] | length == 0) and
    ([.[] | select(.method == "PATCH" and (.path | endswith("/persistentvolumeclaims/'"$PVC"'")))] | length == 0)' \
  "lock: waited on one watch of the PVC (its lock, then the result, arrived on it), no read a second, never written by the waiting pod"

# --- a holder that keeps renewing its lock is never probed beside, whatever the deadline ---
# renew_lock: ml/train-7 renewing every 2 s (a third of the lease would be 5 s), until killed.
renew_lock() { while sleep 2; do pvc_annotate "iogate.io/probe-lock=$(live_lock)"; done; }
for mode in fail-closed fail-open; do
  reset_share
  pvc_annotate "iogate.io/probe-lock=$(live_lock)"
  renew_lock &
  renewer=$!
  preflight "held-$mode" "$(case_policy "held-$mode" 100 enforce "$mode" 12s)"
  kill "$renewer"
  wait "$renewer" 2>/dev/null || true
  want=3
  [[ $mode == fail-open ]] && want=0
  [[ $rc -eq $want ]] || fail "held lock, $mode: exit $rc, want $want: $(tail -3 "$SCRATCH/held-$mode.log")"
  assert_jq "$SCRATCH/held-$mode.json" '.outcome == "error" and .results == [] and
      (.error | test("pod ml/train-7 on node gpu-node-7 is still probing it \\(lock renewed"))' \
    "a holder renewing its lock, deadline 12s, $mode: exit $want, the error names the holder"
  if grep -q "$DATA: probing" "$SCRATCH/held-$mode.log"; then fail "held lock, $mode: probed beside a live holder"; fi
  pvc_json | jq -e '.metadata.annotations["iogate.io/probe-lock"] | fromjson | .pod == "ml/train-7"' >/dev/null ||
    fail "held lock, $mode: the holder's lock changed: $(pvc_json | jq -c .metadata.annotations)"
done
pass "held lock (kubectl): ml/train-7's lock left to it; no probe started beside it"

# --- an orphaned lock (its holder renewed it 2 h ago): taken over at once, cleaned up ---
reset_share
pvc_annotate "iogate.io/probe-lock=$(live_lock "$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%SZ)")"
preflight orphan "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "orphaned lock: exit $rc: $(tail -3 "$SCRATCH/orphan.log")"
grep -q "took over the probe lock of pod ml/train-7 on node gpu-node-7 (renewed 2h ago" "$SCRATCH/orphan.log" ||
  fail "orphaned lock: the log does not say it took over: $(grep -i train-7 "$SCRATCH/orphan.log" | head -3)"
assert_jq "$SCRATCH/orphan.json" '.outcome == "pass" and .results[0].source == "probe"' "an orphaned lock (renewed 2 h ago): taken over at once, probed"
pvc_json | jq -e '(.metadata.annotations | has("iogate.io/probe-lock") | not) and
    (.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod == "'"$NS/$POD"'")' >/dev/null ||
  fail "orphaned lock: the PVC: $(pvc_json | jq -c .metadata.annotations)"
pass "orphaned lock (kubectl): replaced, then removed with our result recorded"

# --- SIGTERM while waiting for another pod's probe: exit 3, nothing left behind ---
reset_share
pvc_annotate "iogate.io/probe-lock=$(live_lock)"
( preflight term "$PASS_POLICY"; exit $rc ) &
pf=$!
wait_until 60 grep -q "is probing it; waiting" "$SCRATCH/term.log" || fail "SIGTERM: never waited: $(tail -3 "$SCRATCH/term.log")"
tpid=$(pgrep -P $pf -x timeout) && ipid=$(pgrep -P "$tpid") || fail "SIGTERM: no iogate process under $pf"
kill -TERM "$ipid"
wait $pf && rc=0 || rc=$?
[[ $rc -eq 3 ]] || fail "SIGTERM while waiting: exit $rc, want 3: $(tail -3 "$SCRATCH/term.log")"
grep -q "stopped waiting for pod ml/train-7: interrupted" "$SCRATCH/term.log" || fail "SIGTERM while waiting: $(tail -3 "$SCRATCH/term.log")"
assert_jq "$SCRATCH/term.json" '.outcome == "error" and (.error | test("interrupted"))' "SIGTERM while waiting for another pod's probe: exit 3, interrupted"
assert_no_test_files "$DATA"

# --- four pods at once on one PVC: one probes, three reuse its result ---
reset_share
for i in 1 2 3 4; do preflight_pod "train-w$i"; done
m=$(mark)
pids=()
for i in 1 2 3 4; do
  ( RUN_POD=train-w$i preflight "w$i" "$PASS_POLICY"; exit $rc ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a racing pod failed: $(tail -n3 "$SCRATCH"/w*.log)"; done
jq -s '[.[].results[0].source] | sort' "$SCRATCH"/w[1-4].json >"$SCRATCH/sources.json"
assert_jq "$SCRATCH/sources.json" '. == ["probe", "shared", "shared", "shared"]' "4 racing pods: exactly one probed, three reused its result"
winner=$(jq -rs '.[] | select(.results[0].source == "probe") | .pod.name' "$SCRATCH"/w[1-4].json)
requests_since "$m" "$SCRATCH/race.req.json"
assert_jq "$SCRATCH/race.req.json" '[.[] | select(.method == "PATCH" and (.path | endswith("/persistentvolumeclaims/'"$PVC"'"))) | .status] |
    (map(select(. == 200)) | length) == 2 and all(.[]; . == 200 or . == 409)' \
  "the PVC written twice (lock taken, then result + release); any other lock attempt got the apiserver's 409"
pvc_json | jq -e '(.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod == "'"$NS/$winner"'") and
    (.metadata.annotations | has("iogate.io/probe-lock") | not)' >/dev/null || fail "race: the PVC: $(pvc_json | jq -c .metadata.annotations)"
for i in 1 2 3 4; do
  [[ $(pod_json "train-w$i" | jq -r '.metadata.annotations["iogate.io/verdict"]') == pass ]] || fail "train-w$i has no verdict annotation"
done
pass "race (kubectl): $winner's result on the PVC, lock released; every racing pod its own iogate.io/verdict=pass"
assert_no_test_files "$DATA"

# --- 64 pods on one PVC, the prober SIGKILLed mid-probe: exactly one takeover, one verdict each ---
# Each pod is its own process with a token bound to its own pod object (the least-reach policy
# checks it), as 64 initContainers would be. The prober takes the lock alone first, the 63 others
# start and wait, and the prober dies during its probe's ramp: its lock stops being renewed.
reset_share
N=64
preflight_pods train-k "$N"
for ((i = 0; i < N; i++)); do
  token_kubeconfig "$SCRATCH/kubeconfig-train-k$i" "$PROXY_URL" "$SA" "$(sa_token "$NS" "$SA" "train-k$i")" "$NS"
done
# Deadline 60 s, probe 16 s (file 3 s, ramp 10 s, runtime 3 s): the takeover comes a lease
# (15 s) after the kill, and the new probe ends well before the waiters' deadlines (a lock that
# outlived them would have every waiter give up and probe at once).
cat >"$SCRATCH/takeover.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
on_error: fail-closed
deadline: 60s
result_ttl: 1h
workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, ramp: 10s, runtime: 3s, size: 64m}
rules:
  - name: gpu-feed
    min_iops: 100
P
# start_k I: pod train-kI's preflight in the background, straight (no wrapper), so $! is iogate.
start_k() {
  KUBECONFIG="$SCRATCH/kubeconfig-train-k$1" POD_NAME="train-k$1" POD_NAMESPACE=$NS NODE_NAME=$NODE \
    CONTAINER_NAME=iogate-preflight "$IOGATE" preflight "$DATA" --policy "$SCRATCH/takeover.yaml" \
    --output-format json --log-level debug >"$SCRATCH/k$1.json" 2>"$SCRATCH/k$1.log" &
}
m=$(mark)
t0=$SECONDS
start_k 0
prober=$!
wait_until 30 grep -q "probing (lock taken)" "$SCRATCH/k0.log" || fail "64 pods: train-k0 took no lock: $(tail -3 "$SCRATCH/k0.log")"
pids=()
for ((i = 1; i < N; i++)); do
  start_k "$i"
  pids+=($!)
done
wait_until 60 bash -c '(( $(grep -l "is probing it; waiting for its result" "$0"/k*.log | wc -l) >= $1 - 1 ))' "$SCRATCH" "$N" ||
  fail "64 pods: only $(grep -l "is probing it; waiting" "$SCRATCH"/k*.log | wc -l) of $((N - 1)) waiting"
grep -q "$DATA: probing" "$SCRATCH/k0.log" || fail "64 pods: train-k0 is not probing yet: $(tail -3 "$SCRATCH/k0.log")"
kill -KILL "$prober"
wait "$prober" 2>/dev/null || true
grep -q "$DATA: [0-9]* IOPS" "$SCRATCH/k0.log" && fail "64 pods: train-k0 finished its probe before the SIGKILL (the ramp is 10 s)"
killed_at=$((SECONDS - t0))
rm -f "$DATA"/.iogate-probe-*."$prober".*.tmp  # what a SIGKILL leaves: no process can remove it
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
took=$((SECONDS - t0))
((failed == 0)) || fail "64 pods: $failed of $((N - 1)) surviving pods failed: $(grep -h '"error"' "$SCRATCH"/k*.json | grep -v '"error": ""' | head -3)"
takers=$(grep -l "took over the probe lock of pod $NS/train-k0" "$SCRATCH"/k*.log | wc -l)
probers=$(grep -l "$DATA: probing" "$SCRATCH"/k[1-9]*.log | wc -l)
((takers == 1 && probers == 1)) || fail "64 pods: $takers took the lock over and $probers probed, want 1 and 1"
jq -s '[.[].results[0].source] | group_by(.) | map({(.[0]): length}) | add' "$SCRATCH"/k[1-9]*.json >"$SCRATCH/k-sources.json"
assert_jq "$SCRATCH/k-sources.json" '. == {"probe": 1, "shared": '"$((N - 2))"'}' \
  "64 pods, train-k0 SIGKILLed ${killed_at}s in, mid-probe: exactly one of 63 took its lock over and probed; 62 reused that result; no second probe"
taker=$(jq -rs '.[] | select(.results[0].source == "probe") | .pod.name' "$SCRATCH"/k[1-9]*.json)
k -n "$NS" get pods -o json | jq --arg n "$N" '[.items[] | select(.metadata.name | startswith("train-k")) |
  {(.metadata.name): (.metadata.annotations["iogate.io/verdict"] // "")}] | add' >"$SCRATCH/k-verdicts.json"
assert_jq "$SCRATCH/k-verdicts.json" 'del(.["train-k0"]) | (length == 63 and all(.[]; . == "pass"))' \
  "64 pods (kubectl): every surviving pod has iogate.io/verdict=pass"
k -n "$NS" get events.v1.events.k8s.io -o json | jq '[.items[] | select(.regarding.name | startswith("train-k")) |
  select(.reason == "StoragePolicyMet") | .regarding.name] | unique | length' >"$SCRATCH/k-events.json"
[[ $(cat "$SCRATCH/k-events.json") == 63 ]] || fail "64 pods: StoragePolicyMet Events for $(cat "$SCRATCH/k-events.json") pods, want 63"
pvc_json | jq -e '(.metadata.annotations | has("iogate.io/probe-lock") | not) and
    (.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod == "'"$NS/$taker"'")' >/dev/null ||
  fail "64 pods: the PVC: $(pvc_json | jq -c .metadata.annotations)"
requests_since "$m" "$SCRATCH/k.req.json"
jq '{requests: length, pvc_gets: [.[] | select(.method == "GET" and (.path | endswith("/persistentvolumeclaims/'"$PVC"'")))] | length,
    pvc_patches: [.[] | select(.method == "PATCH" and (.path | endswith("/persistentvolumeclaims/'"$PVC"'"))) | .status] | group_by(.) | map({(.[0] | tostring): length}) | add}' \
  "$SCRATCH/k.req.json" >"$SCRATCH/k-counts.json"
pass "64 pods (kubectl): 63 StoragePolicyMet Events, $taker's result on the PVC, no lock left; all done in ${took}s; API: $(jq -c . "$SCRATCH/k-counts.json")"
assert_no_test_files "$DATA"

# --- transient faults, retried: 429 with Retry-After on the GET, a dropped PATCH, a 500 Event POST ---
k -n "$NS" annotate pod "$POD" iogate.io/verdict- >/dev/null
m=$(mark)
fault '{"method":"GET","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"429","retry_after":1,"count":1}' >/dev/null
fault '{"method":"PATCH","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"drop","count":1}' >/dev/null
fault '{"method":"POST","path":".*/events","action":"500","count":1}' >/dev/null
preflight transient "$PASS_POLICY"
clear_faults
[[ $rc -eq 0 ]] || fail "transient faults: exit $rc: $(tail -5 "$SCRATCH/transient.log")"
requests_since "$m" "$SCRATCH/transient.req.json"
[[ $(statuses "$SCRATCH/transient.req.json" GET "/pods/$POD") == "[429,200]" ]] ||
  fail "pod GET: want 429, 200; got $(statuses "$SCRATCH/transient.req.json" GET "/pods/$POD")"
[[ $(statuses "$SCRATCH/transient.req.json" PATCH "/pods/$POD") == "[0,200]" ]] ||
  fail "pod PATCH: want dropped (0), 200; got $(statuses "$SCRATCH/transient.req.json" PATCH "/pods/$POD")"
[[ $(statuses "$SCRATCH/transient.req.json" POST "/events") == "[500,201]" ]] ||
  fail "Event POST: want 500, 201; got $(statuses "$SCRATCH/transient.req.json" POST "/events")"
assert_jq "$SCRATCH/transient.req.json" 'all(.[]; .auth == "Bearer <redacted>")' \
  "429 (Retry-After) on the pod GET, a dropped pod PATCH, a 500 Event POST: each retried and answered; every request with the token"
[[ $(pod_annotation "$POD" iogate.io/verdict) == pass ]] || fail "transient: the verdict did not land"
pass "transient (kubectl): iogate.io/verdict=pass"

# --- the pod PATCH always 500: fail-closed exits 3, fail-open lets the pod start ---
fault '{"method":"PATCH","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"500"}' >/dev/null
preflight closed "$(case_policy closed 100 enforce fail-closed 20s)"
[[ $rc -eq 3 ]] || fail "fail-closed: exit $rc, want 3: $(tail -3 "$SCRATCH/closed.log")"
assert_jq "$SCRATCH/closed.json" '.outcome == "error" and (.error | test("500|InternalError"))' "fail-closed: pod PATCH 500s, exit 3, the error names it"
preflight open "$(case_policy open 100 enforce fail-open 20s)"
[[ $rc -eq 0 ]] || fail "fail-open: exit $rc, want 0: $(tail -3 "$SCRATCH/open.log")"
assert_jq "$SCRATCH/open.json" '.outcome == "pass" and (.error | test("could not record"))' "fail-open: the verdict stands, exit 0, the failure reported"
clear_faults

# --- the deadline bounds the API: a 9 s stall of the pod GET against a 6 s deadline ---
fault '{"method":"GET","path":"/api/v1/namespaces/'"$NS"'/pods/'"$POD"'","action":"delay","delay":"9s"}' >/dev/null
preflight deadline "$(case_policy deadline 100 enforce fail-closed 6s)"
clear_faults
[[ $rc -eq 3 ]] || fail "deadline: exit $rc, want 3: $(tail -3 "$SCRATCH/deadline.log")"
assert_jq "$SCRATCH/deadline.json" '.outcome == "error" and (.error | test("deadline"))' "deadline 6s with a 9 s API stall: exit 3, the error names the deadline"

# --- client-certificate kubeconfig, straight to the apiserver (the proxy passes no client cert) ---
X509_USER=iogate-preflight-x509
PKI="$CLUSTER_DIR/pki"
pki_sign "$PKI" x509 "/CN=$X509_USER" "$(pki_client_ext)"
cluster_kubeconfig "$SCRATCH/kubeconfig-x509" x509 "$NS"
KUBECONFIG_FILE="$SCRATCH/kubeconfig-x509" preflight x509-unbound "$PASS_POLICY"
[[ $rc -eq 3 ]] || fail "x509, no RoleBinding: exit $rc, want 3: $(tail -3 "$SCRATCH/x509-unbound.log")"
assert_jq "$SCRATCH/x509-unbound.json" '.outcome == "error" and (.error | test("403|Forbidden")) and (.error | test("'"$X509_USER"'"))' \
  "x509, no RoleBinding: the apiserver's 403 names the certificate's user $X509_USER"
k -n "$NS" create rolebinding x509 --role "$SA" --user "$X509_USER" >/dev/null
k -n "$NS" annotate pod "$POD" iogate.io/verdict- >/dev/null
KUBECONFIG_FILE="$SCRATCH/kubeconfig-x509" preflight x509 "$PASS_POLICY"
[[ $rc -eq 0 ]] || fail "x509: exit $rc: $(tail -3 "$SCRATCH/x509.log")"
assert_jq "$SCRATCH/x509.json" '.outcome == "pass" and .api == "ok"' "x509, bound: exit 0, recorded"
[[ $(pod_annotation "$POD" iogate.io/verdict) == pass ]] || fail "x509: no verdict on the pod"
pass "client-certificate kubeconfig (kubectl): iogate.io/verdict=pass written as $X509_USER"

# --- kubeconfigs as EKS, GKE and AKS users have them: KUBECONFIG of two files (the cluster and
# its contexts in one, the users in the other, each with paths relative to its own file), --context
# choosing a context that is not current, and an exec credential plugin (client.authentication.
# k8s.io/v1) handing out a ServiceAccount's token, straight to the apiserver. The account has no
# RoleBinding at first: the apiserver's 403 names it, so the identity is the plugin's. The plugin
# says its credential expires 1 s after each run: the run re-executes it (client-go's rule). ---
EXEC_SA=iogate-exec
k -n "$NS" create serviceaccount "$EXEC_SA" >/dev/null
KX="$SCRATCH/kubeconfigs"
mkdir -p "$KX/clusters" "$KX/users/bin"
cp "$CLUSTER_DIR/pki/ca.crt" "$KX/clusters/ca.crt"
kubectl -n "$NS" create token "$EXEC_SA" --duration 1h >"$KX/users/exec.token"
cat >"$KX/clusters/config" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "$CLUSTER_SERVER", certificate-authority: ca.crt}
contexts:
- name: exec
  context: {cluster: e2e, user: exec-user, namespace: $NS}
- name: wrong
  context: {cluster: e2e, user: wrong-user, namespace: $NS}
- name: broken
  context: {cluster: e2e, user: broken-user, namespace: $NS}
current-context: wrong
KC
# The plugin: one line per run in PLUGIN_LOG; the token from the file named by its first
# argument; with a second, an expirationTimestamp that many seconds ahead (whole seconds).
cat >"$KX/users/bin/get-token" <<'PLUGIN'
#!/bin/sh
case "$KUBERNETES_EXEC_INFO" in *'"interactive":false'*) ;; *) echo "no KUBERNETES_EXEC_INFO" >&2; exit 1 ;; esac
echo "run $(date -u +%s.%N)" >>"$PLUGIN_LOG"
expiry=
[ -z "$2" ] || expiry=$(printf ',"expirationTimestamp":"%s"' "$(date -u -d "+$2 second" +%Y-%m-%dT%H:%M:%SZ)")
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"%s}}\n' \
  "$(cat "$1")" "$expiry"
PLUGIN
cat >"$KX/users/bin/broken" <<'PLUGIN'
#!/bin/sh
echo "error: the SSO session has expired; run the login command again" >&2
echo "details that stay out of iogate's message" >&2
exit 1
PLUGIN
chmod +x "$KX/users/bin/get-token" "$KX/users/bin/broken"
echo "not-a-token" >"$KX/users/wrong.token"
cat >"$KX/users/config" <<KC
apiVersion: v1
kind: Config
users:
- name: exec-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/get-token
      args: [$KX/users/exec.token, "1"]
      env: [{name: PLUGIN_LOG, value: "$KX/exec-runs.log"}]
      interactiveMode: Never
      installHint: the plugin ships with this test
- name: wrong-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/get-token
      args: [$KX/users/wrong.token]
      env: [{name: PLUGIN_LOG, value: "$KX/wrong-runs.log"}]
      interactiveMode: Never
- name: broken-user
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: ./bin/broken, interactiveMode: Never}
KC
KX_LIST="$KX/clusters/config:$KX/missing-config:$KX/users/config"
# kx_preflight NAME [flags]: preflight with KUBECONFIG=KX_LIST, straight to the apiserver.
kx_preflight() {
  local name=$1; shift
  set +e
  KUBECONFIG="$KX_LIST" POD_NAME="$POD" POD_NAMESPACE=$NS NODE_NAME=$NODE CONTAINER_NAME=iogate-preflight \
    timeout 180 "$IOGATE" preflight "$DATA" --policy "$PASS_POLICY" --output-format json --log-level debug "$@" \
    >"$SCRATCH/$name.json" 2>"$SCRATCH/$name.log"
  rc=$?
  set -e
}

kx_preflight kx-no-context
[[ $rc -eq 3 ]] || fail "KUBECONFIG, current-context wrong: exit $rc, want 3: $(tail -3 "$SCRATCH/kx-no-context.log")"
assert_jq "$SCRATCH/kx-no-context.json" '.outcome == "error" and (.error | test("401 Unauthorized")) and
    (.error | test("users\\[wrong-user\\]")) and (.error | test("get-token"))' \
  "KUBECONFIG, current-context wrong (a token the apiserver refuses): exit 3, 401 naming the user entry and the plugin"
# No expirationTimestamp: only a 401 makes it run again, once per request.
grep -q "401 Unauthorized; re-running the exec plugin; retrying once" "$SCRATCH/kx-no-context.log" &&
  [[ $(wc -l <"$KX/wrong-runs.log") -ge 2 ]] ||
  fail "the refused token: the plugin ran $(wc -l <"$KX/wrong-runs.log") time(s), want a re-run after the 401: $(grep -c 401 "$SCRATCH/kx-no-context.log") lines with 401"
pass "the refused token: the plugin ran again after the 401 ($(wc -l <"$KX/wrong-runs.log") runs), the request retried once, then the error"

kx_preflight kx-missing-context --context prod
[[ $rc -eq 2 ]] || fail "--context prod: exit $rc, want 2: $(tail -3 "$SCRATCH/kx-missing-context.log")"
grep -qF -- "--context \"prod\": no such context in kubeconfig $KX/clusters/config, $KX/users/config (contexts: broken, exec, wrong)" \
  "$SCRATCH/kx-missing-context.log" "$SCRATCH/kx-missing-context.json" ||
  fail "--context prod: the error does not name the context and the files: $(tail -3 "$SCRATCH/kx-missing-context.log")"
pass "--context prod: exit 2 naming the context, the two files read (the missing one skipped) and the contexts there"

kx_preflight kx-broken --context broken
[[ $rc -eq 3 ]] || fail "a failing plugin: exit $rc, want 3: $(tail -3 "$SCRATCH/kx-broken.log")"
assert_jq "$SCRATCH/kx-broken.json" '.outcome == "error" and
    (.error | contains("users[broken-user] (kubeconfig '"$KX/users/config"') exec plugin \"'"$KX/users/bin/broken"'\": exit status 1: error: the SSO session has expired; run the login command again")) and
    (.error | contains("details") | not)' \
  "a failing plugin: exit 3, one line naming the user entry, its file and the command, with the plugin's first stderr line"

k -n "$NS" annotate pod "$POD" iogate.io/verdict- >/dev/null
reset_share  # so that this run probes for seconds, past the plugin's 1 s credentials
kx_preflight kx-unbound --context exec
[[ $rc -eq 3 ]] || fail "exec plugin, no RoleBinding: exit $rc, want 3: $(tail -3 "$SCRATCH/kx-unbound.log")"
assert_jq "$SCRATCH/kx-unbound.json" '.outcome == "error" and (.error | test("403|Forbidden")) and
    (.error | test("system:serviceaccount:'"$NS:$EXEC_SA"'"))' \
  "exec plugin, no RoleBinding: the apiserver's 403 names the plugin token's account $NS:$EXEC_SA"
k -n "$NS" create rolebinding exec --role "$SA" --serviceaccount "$NS:$EXEC_SA" >/dev/null
: >"$KX/exec-runs.log"
kx_preflight kx-exec --context exec
[[ $rc -eq 0 ]] || fail "exec plugin: exit $rc: $(tail -3 "$SCRATCH/kx-exec.log")"
assert_jq "$SCRATCH/kx-exec.json" '.outcome == "pass" and .api == "ok" and .results[0].source == "probe"' \
  "exec plugin, --context exec, bound: probed, exit 0, recorded"
[[ $(pod_annotation "$POD" iogate.io/verdict) == pass ]] || fail "exec plugin: no verdict on the pod"
grep -qF "context exec (cluster e2e, user exec-user, exec $KX/users/bin/get-token)" "$SCRATCH/kx-exec.log" ||
  fail "exec plugin: the log does not say which context, user and plugin: $(grep 'api:' "$SCRATCH/kx-exec.log")"
runs=$(wc -l <"$KX/exec-runs.log")
[[ $runs -ge 2 ]] || fail "exec plugin: ran $runs time(s) in a run of several seconds with 1 s credentials, want 2 or more"
pass "exec plugin (kubectl): iogate.io/verdict=pass written as $NS:$EXEC_SA; the plugin ran $runs times, again after each credential expired"
for f in "$SCRATCH"/kx-*.log "$SCRATCH"/kx-*.json; do
  if grep -qF -e "$(cat "$KX/users/exec.token")" -e not-a-token "$f"; then fail "a plugin's token leaked into $f"; fi
done
pass "no plugin token in iogate's logs or reports"

# --- no cluster at all: the verdict printed, the API skipped ---
set +e
env -i PATH="$PATH" HOME="$SCRATCH/nohome" timeout 120 "$IOGATE" preflight "$DATA" --policy "$PASS_POLICY" --gpus 1 \
  --output-format json >"$SCRATCH/none.json" 2>"$SCRATCH/none.log"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "no cluster: exit $rc: $(tail -3 "$SCRATCH/none.log")"
assert_jq "$SCRATCH/none.json" '.outcome == "pass" and (.api | startswith("skipped: not in a cluster"))' "no cluster: verdict printed, API skipped"

# --- no token anywhere ---
if hit=$(grep -lF -e "$TOKEN" -e "${TOKEN##*.}" "$PROXY_LOG" "$SCRATCH"/*.log "$SCRATCH"/*.json 2>/dev/null); then
  fail "the token leaked into: $hit"
fi
pass "no token (whole or its signature) in the proxy's log ($(wc -l <"$PROXY_LOG") requests), iogate's logs or reports"

# --- a stampede: 64 pods on one PVC at once, each its own process, counted by the apiserver ---
# Straight to the apiserver (no proxy): its audit log (cluster_lib.sh, CLUSTER_AUDIT_LOG) is the
# count, per pod by its bound token's pod-name. The 64 are forked first and let go together
# (stampede.py run). Exactly one probes; a waiter's traffic must not grow with the probe's length
# or the number of pods: at most 4 requests each beyond its own verdict PATCH and Event (issue
# 32; the prober's lock renewals, 2 per 5 s of probe, not counted). bench/stampede.sh runs 512.
reset_share
S=64
preflight_pods train-s "$S"
STAMPEDE="$SCRATCH/stampede"
python3 "$E2E_HERE/stampede.py" tokens "$STAMPEDE" "$NS" "$SA" $(seq -f "train-s%g" 0 $((S - 1)))
cat >"$SCRATCH/stampede.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
on_error: fail-closed
deadline: 120s
result_ttl: 1h
workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, ramp: 1s, runtime: 3s, size: 64m}
rules:
  - name: gpu-feed
    min_iops: 100
P
POD_NAMESPACE=$NS NODE_NAME=$NODE python3 "$E2E_HERE/stampede.py" run "$STAMPEDE" "" -- \
  "$IOGATE" preflight "$DATA" --policy "$SCRATCH/stampede.yaml" --output-format json >"$SCRATCH/stampede-run.json"
assert_jq "$SCRATCH/stampede-run.json" '[.pods[].exit] | length == '"$S"' and all(. == 0)' "$S pods at once: every preflight exit 0"
cat "$STAMPEDE"/*.json | jq -s '[.[].results[0].source] | group_by(.) | map({(.[0]): length}) | add' >"$SCRATCH/s-sources.json"
assert_jq "$SCRATCH/s-sources.json" '. == {"probe": 1, "shared": '"$((S - 1))"'}' "$S pods at once: exactly one probed, $((S - 1)) reused its result"
prober=$(cat "$STAMPEDE"/*.json | jq -rs '.[] | select(.results[0].source == "probe") | .pod.name')
k -n "$NS" get pods -o json | jq '[.items[] | select(.metadata.name | startswith("train-s")) |
  {(.metadata.name): (.metadata.annotations["iogate.io/verdict"] // "")}] | add' >"$SCRATCH/s-verdicts.json"
assert_jq "$SCRATCH/s-verdicts.json" 'length == '"$S"' and all(.[]; . == "pass")' "$S pods at once (kubectl): every pod has iogate.io/verdict=pass"
pvc_json | jq -e '(.metadata.annotations | has("iogate.io/probe-lock") | not) and
    (.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod == "'"$NS/$prober"'")' >/dev/null ||
  fail "$S pods at once: the PVC: $(pvc_json | jq -c .metadata.annotations)"
pass "$S pods at once (kubectl): $prober's result on the PVC, no lock left"
assert_no_test_files "$DATA"
python3 "$E2E_HERE/stampede.py" audit "$CLUSTER_AUDIT_LOG" "$SCRATCH/stampede-run.json" "$NS" "$SA" >"$SCRATCH/s-audit.json"
assert_jq "$SCRATCH/s-audit.json" '.pods | length == '"$S"' and all(.[]; .annotated == 1 and .events >= 1)' \
  "$S pods at once (audit log): each pod's own verdict PATCH and Event POST answered"
worst=$(jq -c '.pods | to_entries | max_by(.value.beyond) | {(.key): .value.by}' "$SCRATCH/s-audit.json")
assert_jq "$SCRATCH/s-audit.json" '.beyond_max <= 4' \
  "$S pods at once (audit log): at most 4 requests per pod beyond its annotation and Event (per pod: $(jq -c .beyond_hist "$SCRATCH/s-audit.json"); the most: $worst; all: $(jq -c .by "$SCRATCH/s-audit.json"))"
