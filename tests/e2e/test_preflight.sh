#!/usr/bin/env bash
# iogate preflight as the initContainer of a training pod, against a real control plane
# (tests/e2e/lib.sh: etcd, kube-apiserver with Node,RBAC authorization and the default admission
# plugins, controller-manager, scheduler), for everything a real apiserver decides. API faults
# (429, 5xx, drops, stalls, token rotation) are injected by tests/faultproxy in
# test_api_faults.sh and test_preflight_cases.sh.
#   - helm install of charts/iogate with preflight for the training namespace and the image set to
#     the tested one (tests/container/lib.sh's IMAGE, built by `docker build`, ctest fixture
#     iogate_image): the preflight ServiceAccount, Role, RoleBinding and the policy ConfigMap are
#     the chart's own; the policy the test sets through values is read back from the ConfigMap,
#     and the initContainer and policy volume come from the snippet the release's NOTES print;
#   - a Node (make_node), a PVC and Pods bound to the node, run as the chart's preflight
#     ServiceAccount, asking for 2 GPUs; no kubelet runs them: the real image runs under the real
#     Docker Engine as the pod's initContainer, from the Pod as the apiserver stored it (with the
#     service-account volume its admission plugin added), mapped to `docker run` flags by
#     tests/container/lib.sh's docker_pod (the image's user, read-only root, no capabilities,
#     no-new-privileges, the chart's limits, the downward-API env, the volumeMounts), with a token
#     minted for the pod's ServiceAccount, ca.crt and namespace read-only in its service-account
#     volume and KUBERNETES_SERVICE_HOST/PORT pointing at the apiserver across the Docker bridge.
#     The PVC's "volume" is a folder on this host bind-mounted at the pod's mountPath, probed for real;
#   - pass (exit 0): the pod's iogate.io/* annotations (randread-iops equal to the report's
#     measurement), other annotations kept; the Event in both the core/v1 and events.k8s.io/v1
#     views and in kubectl describe; the PVC's probe-result written, probe-lock released;
#   - a second pod on the PVC reuses that result (no probe) and gets its own annotations/Event;
#     a 253-character pod name still gets its Event (events.k8s.io/v1's length limits); the
#     apiserver refuses a merge patch with a stale resourceVersion (409), the lock's premise, and
#     of two pods' containers started at once on the PVC one probes and the other reuses its result;
#   - fail (a floor far above any disk, helm upgrade): exit 1, verdict fail, Warning
#     StorageBelowPolicy naming rule and check; its writable volume left without a test file;
#   - RBAC: every request preflight made was answered 2xx (any 403 fails the test), and the
#     chart's account may make exactly those calls (kubectl auth can-i); a pod whose account the
#     chart does not bind is refused (403) and exits 3, which shows the 403 check can fail.
# Root (docker, chown of the volume for the image's user): tests/container/lib.sh says so.
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../container" && pwd)/lib.sh"
need_image
container_cluster

NS=ml                 # the training namespace
REL=iogate            # release name; the chart names its objects iogate-*
REL_NS=iogate-system
NODE=gpu-node-1
PVC=imagenet
DATA="$SCRATCH/volumes/$PVC"  # the PVC's volume: a host folder, as a CSI driver would mount it
mkdir -p "$DATA"
chmod 755 "$DATA"
# The image's user (its USER): the initContainer sets no runAsUser, so preflight runs as it.
IMAGE_USER=$(docker image inspect -f '{{.Config.User}}' "$IMAGE") IMAGE_UID=${IMAGE_USER%%:*}
[[ $IMAGE_USER =~ ^[0-9]+:[0-9]+$ && $IMAGE_UID -ne 0 ]] || fail "$IMAGE has no numeric non-root USER uid:gid ($IMAGE_USER)"

# ---------------------------------------------------------------------------------------------
# The chart. The webhook and the node agent are off: no kubelet runs their pods, and the
# webhook's validating configuration (failurePolicy Fail) would then refuse every pod in the
# training namespace; both have tests of their own (test_admission.sh, test_node_agent.sh).
# The policy is the test's through values (tests/fixtures/preflight-values.yaml: a 64 MiB, <= 4 s
# workload, so the test stays quick), rendered by the chart into its ConfigMap like any user's.
k create namespace "$NS" >/dev/null
preflight_values "$SCRATCH/values.yaml" "$NS"
helm_install "$REL" "$REL_NS" -f "$SCRATCH/values.yaml"
SA=$REL-preflight CM=$REL-policy
for obj in "serviceaccount/$SA" "role/$SA" "rolebinding/$SA" "configmap/$CM"; do
  k -n "$NS" get "$obj" -o json >"$SCRATCH/obj.json" 2>"$SCRATCH/obj.err" ||
    fail "the chart made no $obj in $NS: $(cat "$SCRATCH/obj.err")"
  jq -e --arg r "$REL" '.metadata.labels["app.kubernetes.io/instance"] == $r' "$SCRATCH/obj.json" >/dev/null ||
    fail "$obj in $NS is not the release's"
done
pass "the chart's preflight objects in $NS: ServiceAccount, Role, RoleBinding $SA, ConfigMap $CM"

k -n "$NS" get configmap "$CM" -o json | jq -j '.data["policy.yaml"]' >"$SCRATCH/chart-policy.yaml"
"$IOGATE" policy check "$SCRATCH/chart-policy.yaml" >"$SCRATCH/check.out" 2>&1 ||
  fail "iogate policy check of the chart's ConfigMap: $(cat "$SCRATCH/check.out")"
grep -q 'size: 64m' "$SCRATCH/chart-policy.yaml" && grep -q 'min_iops: 100' "$SCRATCH/chart-policy.yaml" ||
  fail "the ConfigMap does not hold the values' policy: $(cat "$SCRATCH/chart-policy.yaml")"
pass "the policy read back from ConfigMap $CM passes iogate policy check"

# The initContainer and the policy volume exactly as the release's NOTES print them for a volume
# "dataset" at /data (the chart's named templates), turned into JSON by kubectl.
helm get notes "$REL" -n "$REL_NS" >"$SCRATCH/notes.txt"
awk '/^spec:$/ {on = 1} on && /^$/ {exit} on' "$SCRATCH/notes.txt" >"$SCRATCH/snippet.yaml"
{ printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: snippet}\n'; cat "$SCRATCH/snippet.yaml"; } |
  k create --dry-run=client -o json -f - >"$SCRATCH/snippet.json" 2>"$SCRATCH/snippet.err" ||
  fail "the NOTES' pod snippet is not a pod spec: $(cat "$SCRATCH/snippet.err")"
assert_jq "$SCRATCH/snippet.json" \
  '.spec.serviceAccountName == "'"$SA"'" and .spec.initContainers[0].name == "iogate-preflight" and
   .spec.initContainers[0].image == "'"$IMAGE"'" and
   .spec.initContainers[0].args == ["preflight", "/data", "--policy", "/etc/iogate/policy.yaml"] and
   .spec.volumes[0].configMap.name == "'"$CM"'"' \
  "NOTES print the initContainer (image $IMAGE, preflight /data --policy /etc/iogate/policy.yaml) and policy volume"

# ---------------------------------------------------------------------------------------------
# The training job's objects: a GPU node, the dataset's claim, and pods bound to the node as the
# scheduler would bind them (spec.nodeName), each asking for 2 GPUs, with the NOTES' initContainer.
make_node "$NODE"
pass "Node $NODE (Ready, 4 nvidia.com/gpu)"
jq -n --arg ns "$NS" --arg name "$PVC" '{apiVersion: "v1", kind: "PersistentVolumeClaim",
  metadata: {name: $name, namespace: $ns, annotations: {"example.com/backup": "daily"}},
  spec: {accessModes: ["ReadWriteMany"], resources: {requests: {storage: "1Ti"}}}}' |
  k create -f - >/dev/null
# A dataset shard already on the volume: the chart mounts the dataset read-only, so preflight reads
# the files there (written, not sparse: a hole would be skipped).
head -c 64M /dev/urandom >"$DATA/shard-00000.tar"
chmod 644 "$DATA/shard-00000.tar"


# run_init POD TOKEN OUT: runs POD's iogate-preflight initContainer in the image under the Docker
# Engine as the kubelet would, from the Pod object as the apiserver stored it: docker_pod maps its
# securityContext, resources, env (the downward-API fieldRefs resolved against the object here)
# and volumeMounts to `docker run` flags; its args get --output-format json --log-level debug, so
# the report is machine-read and every API request is logged with its status. The volumes, as the
# kubelet fills them: the PVC's folder, the ConfigMap's items written as files, and the
# service-account volume the admission plugin added (TOKEN, the cluster CA, the namespace; mode
# 0644, its defaultMode). The container's hostname is the pod's name cut to 63 characters (and
# trailing - or .), as the kubelet sets it. Report (its stdout) in OUT, stderr in OUT.log, exit code in $rc.
declare -A CLAIM_DIR=(["$PVC"]="$DATA")
run_init() {
  local pod=$1 token=$2 out=$3 p="$3.x"  # not named after the pod: names run to 253 characters
  # The docker run's name (container $TEST_ID-RUN, cgroup /$TEST_ID-RUN): OUT's base name, short.
  local run c vols='{}' i n name src claim cm key path hn args=()
  run=$(basename "$out" .json)
  c="$TEST_ID-$run"
  k -n "$NS" get pod "$pod" -o json >"$p.pod.json"
  jq .spec "$p.pod.json" >"$p.spec.json"
  jq -e '.initContainers[] | select(.name == "iogate-preflight")' "$p.spec.json" >"$p.ctr.json" ||
    fail "$pod has no iogate-preflight initContainer"
  n=$(jq '.volumeMounts | length' "$p.ctr.json")
  for ((i = 0; i < n; i++)); do
    name=$(jq -r ".volumeMounts[$i].name" "$p.ctr.json")
    jq -e --arg v "$name" '.volumes[] | select(.name == $v)' "$p.spec.json" >"$p.vol.json" ||
      fail "$pod: volumeMount $name has no volume"
    if claim=$(jq -er .persistentVolumeClaim.claimName "$p.vol.json"); then
      src=${CLAIM_DIR[$claim]:-}
      [[ -n "$src" ]] || fail "$pod: no folder stands for PVC $claim"
    elif cm=$(jq -er .configMap.name "$p.vol.json"); then
      src="$p.cm.$name"
      mkdir -p "$src"
      k -n "$NS" get configmap "$cm" -o json >"$p.cm.json"
      # Its items, or every key where it lists none.
      while IFS=$'\t' read -r key path; do
        jq -j --arg k "$key" '.data[$k] // error("ConfigMap '"$cm"' has no key \($k)")' "$p.cm.json" >"$src/$path"
      done < <(jq -r --slurpfile cm "$p.cm.json" '(.configMap.items // ($cm[0].data // {} | keys | map({key: ., path: .}))) | .[] | "\(.key)\t\(.path)"' "$p.vol.json")
      chmod -R a+rX "$src"
    elif jq -e '.projected.sources | any(has("serviceAccountToken"))' "$p.vol.json" >/dev/null; then
      src="$p.sa"
      mkdir -p "$src"
      printf '%s' "$token" >"$src/token"
      printf '%s' "$NS" >"$src/namespace"
      cp "$CLUSTER_CA" "$src/ca.crt"
      chmod 755 "$src" && chmod 644 "$src"/*
    else
      fail "$pod: volume $name is of a kind this test does not provide: $(cat "$p.vol.json")"
    fi
    vols=$(jq -c --arg n "$name" --arg s "$src" '. + {($n): $s}' <<<"$vols")
  done
  jq -c --slurpfile ctr "$p.ctr.json" '. as $pod | [$ctr[0].env[]? | .valueFrom.fieldRef.fieldPath // empty] |
    map(. as $f | {key: $f, value: ($pod | getpath($f | split(".")))}) | from_entries' "$p.pod.json" >"$p.fields.json"
  mapfile -t args < <(jq -r '((.command // [])[1:] + (.args // []))[]' "$p.ctr.json")  # after the entrypoint
  hn=$(jq -r '.metadata.name[:63] | sub("[-.]+$"; "")' "$p.pod.json")
  docker_pod "$run" "$p.spec.json" iogate-preflight "$vols" "$(cat "$p.fields.json")" -d --hostname "$hn" \
    -e KUBERNETES_SERVICE_HOST="$CLUSTER_HOST" -e KUBERNETES_SERVICE_PORT="$CLUSTER_PORT" \
    -- "${args[@]}" --output-format json --log-level debug >/dev/null 2>"$out.run" ||
    fail "$pod: docker run failed: $(cat "$out.run")"
  rc=$(docker wait "$c") || fail "$pod: docker wait $c failed"
  docker logs "$c" >"$out" 2>"$out.log"
}

# The pod's Events through each API: core/v1 (what kubectl get events and describe read) and
# events.k8s.io/v1.

# ---------------------------------------------------------------------------------------------
# Pass: train-0 probes the volume (read-only, as the chart mounts it) and records everything.
notes_pod train-0
TOKEN=$(sa_token "$NS" "$SA" train-0)  # bound to the pod, as the kubelet mounts it (least-reach policy)
run_init train-0 "$TOKEN" "$SCRATCH/a.json"
[[ $rc -eq 0 ]] || fail "train-0: exit $rc, want 0 (pass): $(tail -5 "$SCRATCH/a.json.log")"
pass "train-0: exit 0"
assert_jq "$SCRATCH/a.json" '.schema == "iogate.preflight/v1" and .outcome == "pass" and .exit_code == 0 and .api == "ok" and .error == ""' \
  "train-0: report outcome pass, api ok"
grep -q 'api: in-cluster' "$SCRATCH/a.json.log" || fail "train-0: not configured in cluster: $(head -5 "$SCRATCH/a.json.log")"
assert_jq "$SCRATCH/a.json" '.policy.source == "/etc/iogate/policy.yaml" and .policy.name == "'"$REL"'" and .policy.mode == "enforce"' \
  "train-0: judged by the chart's policy from the ConfigMap volume"
assert_jq "$SCRATCH/a.json" '.pod == {namespace: "'"$NS"'", name: "train-0", node: "'"$NODE"'"} and .gpus == 2 and .gpus_from == "pod"' \
  "train-0: the pod from the downward API, 2 GPUs read from its limits"
assert_jq "$SCRATCH/a.json" '.results[0].path == "/data" and .results[0].source == "probe" and .results[0].pvc == "'"$PVC"'"' \
  "train-0: probed /data; PVC $PVC found through the pod's mounts"
assert_jq "$SCRATCH/a.json" '.results[0].report.target.read_only == true and .results[0].report.target.test_file_created == false and
    any(.results[0].report.target.files[]; .path == "/data/shard-00000.tar")' \
  "train-0: the read-only dataset mount: the shard on it read, nothing written"
assert_jq "$SCRATCH/a.json" '.results[0].verdict.checks | map(.check) | index("min_iops") != null and index("max_p99_latency") != null' \
  "train-0: every check of rule gpu-feed listed"
iops=$(jq -r '.results[0].measurement.iops | round' "$SCRATCH/a.json")
p99=$(jq -r '.results[0].measurement.p99_latency_ns / 1000 | round' "$SCRATCH/a.json")
class=$(jq -r '.results[0].measurement.device_class' "$SCRATCH/a.json")
[[ $iops =~ ^[0-9]+$ && $iops -gt 0 ]] || fail "train-0: no IOPS measured ($iops)"

pod_json train-0 >"$SCRATCH/p0.json"
assert_jq "$SCRATCH/p0.json" '.metadata.annotations | .["iogate.io/verdict"] == "pass" and
    .["iogate.io/randread-iops"] == "'"$iops"'" and .["iogate.io/p99-latency-us"] == "'"$p99"'" and
    .["iogate.io/device-class"] == "'"$class"'"' \
  "train-0 (kubectl): iogate.io/verdict=pass, randread-iops=$iops (the report's), p99-latency-us=$p99, device-class=$class"
assert_jq "$SCRATCH/p0.json" '.metadata.annotations["iogate.io/report"] | fromjson |
    .outcome == "pass" and .gpus == 2 and .node == "'"$NODE"'" and .policy == "/etc/iogate/policy.yaml" and
    (.paths | length) == 1 and .paths[0].iops == '"$iops"' and .paths[0].pvc == "'"$PVC"'" and .paths[0].source == "probe"' \
  "train-0 (kubectl): iogate.io/report, compact JSON of the verdict"
assert_jq "$SCRATCH/p0.json" '.metadata.annotations["example.com/owner"] == "alice"' "train-0: another owner's annotation kept"

uid0=$(jq -r .metadata.uid "$SCRATCH/p0.json")
core_events train-0 >"$SCRATCH/ev-core.json"
assert_jq "$SCRATCH/ev-core.json" 'length == 1 and (.[0] | .type == "Normal" and .reason == "StoragePolicyMet" and
    .involvedObject.uid == "'"$uid0"'" and .involvedObject.namespace == "'"$NS"'" and .involvedObject.apiVersion == "v1" and
    (.message | test("^/data .*meets policy /etc/iogate/policy.yaml for 2 GPUs")) and .reportingComponent == "iogate.io/preflight")' \
  "train-0: kubectl get events (core/v1): one Normal StoragePolicyMet on the pod"
v1_events train-0 >"$SCRATCH/ev-v1.json"
assert_jq "$SCRATCH/ev-v1.json" 'length == 1 and (.[0] | .type == "Normal" and .reason == "StoragePolicyMet" and
    .regarding.uid == "'"$uid0"'" and .reportingController == "iogate.io/preflight" and
    .reportingInstance == "iogate-preflight-train-0" and .action == "Preflight" and (.eventTime | length) > 0 and
    .note == '"$(jq '.[0].message' "$SCRATCH/ev-core.json")"')' \
  "train-0: kubectl get events.v1.events.k8s.io: regarding the pod, the same note, reportingController iogate.io/preflight"
k -n "$NS" get events --field-selector involvedObject.name=train-0,reason=StoragePolicyMet -o name | grep -q . ||
  fail "train-0: kubectl get events --field-selector reason=StoragePolicyMet finds nothing"
k -n "$NS" describe pod train-0 | grep -Eq 'Normal +StoragePolicyMet +.*iogate.io/preflight' ||
  fail "train-0: kubectl describe pod does not show the Event: $(k -n "$NS" describe pod train-0 | sed -n '/^Events:/,$p')"
pass "train-0: the Event found by --field-selector and shown by kubectl describe pod"

pvc_json >"$SCRATCH/pvc0.json"
assert_jq "$SCRATCH/pvc0.json" '.metadata.annotations["iogate.io/probe-result"] | fromjson |
    .pod == "'"$NS"'/train-0" and .node == "'"$NODE"'" and .workload == "randread/4k/qd16x1" and (.result.iops | round) == '"$iops"'' \
  "PVC $PVC: iogate.io/probe-result by $NS/train-0 on $NODE, its measurement"
assert_jq "$SCRATCH/pvc0.json" '(.metadata.annotations | has("iogate.io/probe-lock") | not) and .metadata.annotations["example.com/backup"] == "daily"' \
  "PVC $PVC: probe-lock released, its other annotation kept"
assert_no_test_files "$DATA"

# ---------------------------------------------------------------------------------------------
# Many pods, one volume: train-1 on the same PVC reuses train-0's result instead of probing.
notes_pod train-1
run_init train-1 "$(sa_token "$NS" "$SA" train-1)" "$SCRATCH/b.json"
[[ $rc -eq 0 ]] || fail "train-1: exit $rc, want 0: $(tail -5 "$SCRATCH/b.json.log")"
assert_jq "$SCRATCH/b.json" '.outcome == "pass" and .pod.name == "train-1" and .results[0].source == "shared" and .results[0].report == {} and
    (.results[0].shared_from | test("^pod '"$NS"'/train-0 on node '"$NODE"' at ")) and (.results[0].measurement.iops | round) == '"$iops"'' \
  "train-1: exit 0 on the shared result of $NS/train-0 ($iops IOPS), no probe"
grep -q "probing /data" "$SCRATCH/b.json.log" && fail "train-1: probed although a fresh result was on the PVC"
pod_json train-1 >"$SCRATCH/p1.json"
assert_jq "$SCRATCH/p1.json" '.metadata.annotations | .["iogate.io/verdict"] == "pass" and .["iogate.io/randread-iops"] == "'"$iops"'" and
    (.["iogate.io/report"] | fromjson | .paths[0].source == "shared") and .["example.com/owner"] == "alice"' \
  "train-1 (kubectl): its own annotations, from the shared measurement"
v1_events train-1 >"$SCRATCH/ev-v1.json"
assert_jq "$SCRATCH/ev-v1.json" 'length == 1 and (.[0] | .reason == "StoragePolicyMet" and (.note | test("shared result of pod '"$NS"'/train-0")) and
    .regarding.uid == "'"$(jq -r .metadata.uid "$SCRATCH/p1.json")"'")' \
  "train-1: its own StoragePolicyMet Event, naming the shared result"
pvc_json | jq -r '.metadata.annotations["iogate.io/probe-result"]' >"$SCRATCH/result1"
[[ $(cat "$SCRATCH/result1") == "$(jq -r '.metadata.annotations["iogate.io/probe-result"]' "$SCRATCH/pvc0.json")" ]] ||
  fail "train-1 rewrote the PVC's probe-result"
pass "PVC $PVC: probe-result unchanged by the pod that reused it"

# A pod name may be 253 characters (a DNS subdomain): its Event must still pass events.k8s.io/v1
# validation (reportingInstance at most 128 characters, the Event's name at most 253), not be
# refused with a 422 and lost.
long=train-$(printf 'x%.0s' {1..245})-1
notes_pod "$long"
run_init "$long" "$(sa_token "$NS" "$SA" "$long")" "$SCRATCH/long.json"
[[ $rc -eq 0 ]] || fail "253-character pod name: exit $rc: $(tail -3 "$SCRATCH/long.json.log")"
if grep -qE 'not posted' "$SCRATCH/long.json.log"; then
  fail "253-character pod name: the Event was refused: $(grep -oE '[0-9]{3} Invalid: .{0,60}|is invalid: .*' "$SCRATCH/long.json.log" | cut -c1-300)"
fi
v1_events "$long" >"$SCRATCH/ev-v1.json"
assert_jq "$SCRATCH/ev-v1.json" 'length == 1 and (.[0] | .reason == "StoragePolicyMet" and (.reportingInstance | length) <= 128 and
    (.metadata.name | length) <= 253)' \
  "253-character pod name: its Event posted (reportingInstance and name within the API's limits)"

# The lock rests on the apiserver refusing a merge patch that carries a stale resourceVersion
# (409), as it refuses a stale Lease update. The real one does:
rv=$(pvc_json | jq -r .metadata.resourceVersion)
k -n "$NS" annotate persistentvolumeclaim "$PVC" example.com/touched=1 >/dev/null
if k -n "$NS" patch persistentvolumeclaim "$PVC" --type merge \
    -p '{"metadata":{"resourceVersion":"'"$rv"'","annotations":{"iogate.io/probe-lock":"{}"}}}' >"$SCRATCH/stale.out" 2>&1; then
  fail "a merge patch with a stale resourceVersion was accepted"
fi
grep -q 'the object has been modified' "$SCRATCH/stale.out" || fail "stale resourceVersion: $(cat "$SCRATCH/stale.out")"
pass "a merge patch with a stale resourceVersion: 409 Conflict from the apiserver"

# Two pods start at once on a PVC with no result: exactly one probes, the other waits for its
# result (or loses the lock race with a 409 and then waits) and reuses it.
k -n "$NS" annotate persistentvolumeclaim "$PVC" iogate.io/probe-result- example.com/touched- >/dev/null
notes_pod train-4
notes_pod train-5
( run_init train-4 "$(sa_token "$NS" "$SA" train-4)" "$SCRATCH/r4.json"; exit $rc ) &
racer4=$!
( run_init train-5 "$(sa_token "$NS" "$SA" train-5)" "$SCRATCH/r5.json"; exit $rc ) &
racer5=$!
wait $racer4 || fail "train-4 (racing): exit $?: $(tail -3 "$SCRATCH/r4.json.log")"
wait $racer5 || fail "train-5 (racing): exit $?: $(tail -3 "$SCRATCH/r5.json.log")"
jq -s '[.[] | .results[0].source] | sort' "$SCRATCH/r4.json" "$SCRATCH/r5.json" >"$SCRATCH/sources.json"
assert_jq "$SCRATCH/sources.json" '. == ["probe", "shared"]' "2 racing pods on one PVC: one probed, the other reused its result"
winner=$(jq -rs '.[] | select(.results[0].source == "probe") | .pod.name' "$SCRATCH/r4.json" "$SCRATCH/r5.json")
jq -s '.[] | select(.results[0].source == "shared")' "$SCRATCH/r4.json" "$SCRATCH/r5.json" >"$SCRATCH/loser.json"
assert_jq "$SCRATCH/loser.json" '.outcome == "pass" and (.results[0].shared_from | test("^pod '"$NS"'/'"$winner"' on "))' \
  "the other pod's result names $winner"
pvc_json >"$SCRATCH/pvc-race.json"
assert_jq "$SCRATCH/pvc-race.json" '(.metadata.annotations["iogate.io/probe-result"] | fromjson | .pod == "'"$NS"'/'"$winner"'") and
    (.metadata.annotations | has("iogate.io/probe-lock") | not)' \
  "PVC $PVC: $winner's result recorded, the lock released"

# ---------------------------------------------------------------------------------------------
# Fail: the policy raised far above what any disk does (helm upgrade; the ConfigMap follows),
# result_ttl 0s so train-2 probes for itself. Its dataset mount is writable (the named template's
# readOnly: false), owned by the image's user as an fsGroup volume would be: the probe writes its
# test file, and must remove it.
helm upgrade "$REL" "$CHART" -n "$REL_NS" -f "$SCRATCH/values.yaml" -f "$TESTS_DIR/fixtures/preflight-fail-values.yaml" >"$SCRATCH/upgrade.out" 2>&1 ||
  fail "helm upgrade (fail policy): $(cat "$SCRATCH/upgrade.out")"
k -n "$NS" get configmap "$CM" -o json | jq -r '.data["policy.yaml"]' | grep -q 'min_iops: 50000000' ||
  fail "helm upgrade did not put the new floor in ConfigMap $CM"
pass "helm upgrade: ConfigMap $CM now asks for 50,000,000 IOPS"
chown "$IMAGE_USER" "$DATA"
notes_pod train-2 '(.spec.initContainers[] | select(.name == "iogate-preflight") | .volumeMounts[] | select(.name == "dataset")).readOnly = false'
run_init train-2 "$(sa_token "$NS" "$SA" train-2)" "$SCRATCH/c.json"
[[ $rc -eq 1 ]] || fail "train-2: exit $rc, want 1 (below policy, enforce): $(tail -5 "$SCRATCH/c.json.log")"
pass "train-2: exit 1"
assert_jq "$SCRATCH/c.json" '.outcome == "fail" and .exit_code == 1 and .results[0].source == "probe" and
    (.results[0].verdict.checks[] | select(.check == "min_iops") | .passed == false and .threshold_value == 50000000)' \
  "train-2: report outcome fail, min_iops failed"
assert_jq "$SCRATCH/c.json" '.results[0].report.target.read_only == false and .results[0].report.target.test_file_created == true' \
  "train-2: probed the writable volume with a test file"
assert_no_test_files "$DATA"
[[ $(pod_annotation train-2 iogate.io/verdict) == fail ]] || fail "train-2: iogate.io/verdict is '$(pod_annotation train-2 iogate.io/verdict)'"
pass "train-2 (kubectl): iogate.io/verdict=fail"
core_events train-2 >"$SCRATCH/ev-core.json"
assert_jq "$SCRATCH/ev-core.json" 'length == 1 and (.[0] | .type == "Warning" and .reason == "StorageBelowPolicy" and
    (.message | test("rule gpu-feed min_iops: .* against")))' \
  "train-2: kubectl get events (core/v1): Warning StorageBelowPolicy naming rule gpu-feed and check min_iops"
v1_events train-2 >"$SCRATCH/ev-v1.json"
assert_jq "$SCRATCH/ev-v1.json" 'length == 1 and (.[0] | .type == "Warning" and .reason == "StorageBelowPolicy" and
    (.note | test("rule gpu-feed min_iops")) and .reportingController == "iogate.io/preflight")' \
  "train-2: kubectl get events.v1.events.k8s.io: the same Warning"
pvc_json >"$SCRATCH/pvc2.json"
[[ $(jq -c .metadata.annotations "$SCRATCH/pvc2.json") == "$(jq -c .metadata.annotations "$SCRATCH/pvc-race.json")" ]] ||
  fail "PVC $PVC: a result_ttl 0s run changed its annotations: $(jq -c .metadata.annotations "$SCRATCH/pvc2.json")"
pass "PVC $PVC: untouched by a result_ttl 0s run (no lock taken, the recorded result kept)"

# ---------------------------------------------------------------------------------------------
# RBAC. Every request the runs made, from their debug logs ("kube: METHOD PATH STATUS"): each
# must have been answered 2xx by the real authorizer (a 409 to the racing pods' lock patch
# aside); a 403 anywhere fails the test.
requests_of() { grep -ohE 'kube: (GET|POST|PUT|PATCH|DELETE|WATCH) /[^ ]+ [0-9]{3} \(' "$@" | sed 's/^kube: //; s/ ($//'; }
# A 403 in a log: a request's status, or the Status reason/message an error carries ("Forbidden",
# "pods \"x\" is forbidden: User ..."); not the policy's forbidden_classes.
forbidden_in() { grep -lE ' 403 \(|Forbidden|is forbidden' "$@"; }
RUN_LOGS=("$SCRATCH"/a.json.log "$SCRATCH"/b.json.log "$SCRATCH"/long.json.log "$SCRATCH"/c.json.log "$SCRATCH"/r4.json.log "$SCRATCH"/r5.json.log)
requests_of "${RUN_LOGS[@]}" >"$SCRATCH/requests.txt"
(( $(wc -l <"$SCRATCH/requests.txt") >= 20 )) ||
  fail "too few API requests logged ($(wc -l <"$SCRATCH/requests.txt")): is --log-level debug still logging them?"
if bad=$(forbidden_in "${RUN_LOGS[@]}"); then
  fail "403/Forbidden in $bad: $(grep -hE ' 403 \(|Forbidden|is forbidden' $bad | head -5)"
fi
for f in "$SCRATCH"/{a,b,long,c,r4,r5}.json; do
  jq -e '.error == ""' "$f" >/dev/null || fail "$f: error $(jq .error "$f")"
done
awk '$3 !~ /^2/ && !($1 == "PATCH" && $2 ~ /\/persistentvolumeclaims\// && $3 == 409)' "$SCRATCH/requests.txt" >"$SCRATCH/not2xx.txt"
[[ ! -s "$SCRATCH/not2xx.txt" ]] || fail "API requests not answered 2xx: $(head -5 "$SCRATCH/not2xx.txt")"
pass "no 403: all $(wc -l <"$SCRATCH/requests.txt") API requests of the ${#RUN_LOGS[@]} runs answered 2xx ($(grep -c ' 409$' "$SCRATCH/requests.txt" || true) lock patch(es) of the race answered 409)"

# What they were, as RBAC sees them (verb, resource.group), against what the chart's Role grants.
awk '{ verb = $1 == "GET" ? "get" : $1 == "POST" ? "create" : $1 == "PATCH" ? "patch" : $1 == "PUT" ? "update" : $1 == "WATCH" ? "watch" : "delete"
       sub(/\?.*/, "", $2)
       n = split($2, p, "/")
       if (p[2] == "api") { res = p[6]; grp = "" } else { res = p[7]; grp = "." p[3] }
       print verb, res grp }' "$SCRATCH/requests.txt" | sort -u >"$SCRATCH/calls.txt"
# The PVC is read by a watch (a waiter's, and each run's first read); a GET of it is a holder's
# lock renewal, which only a probe longer than a renewal period makes.
printf '%s\n' "create events.events.k8s.io" "get pods" "patch persistentvolumeclaims" "patch pods" "watch persistentvolumeclaims" |
  diff - <(grep -vx "get persistentvolumeclaims" "$SCRATCH/calls.txt") >"$SCRATCH/calls.diff" ||
  fail "preflight's calls are not the expected ones: $(cat "$SCRATCH/calls.diff")"
pass "preflight's calls: $(paste -sd, "$SCRATCH/calls.txt")"
as_sa="--as=system:serviceaccount:$NS:$SA"
while read -r verb res; do
  [[ $(k auth can-i "$verb" "$res" -n "$NS" "$as_sa") == yes ]] || fail "kubectl auth can-i $verb $res $as_sa: no"
done <"$SCRATCH/calls.txt"
[[ $(k auth can-i create events -n "$NS" "$as_sa") == yes ]] || fail "can-i create events (core, the fallback): no"
while read -r verb res ns; do
  [[ $(k auth can-i "$verb" "$res" -n "$ns" "$as_sa" 2>/dev/null || true) == no ]] ||
    fail "kubectl auth can-i $verb $res -n $ns $as_sa: yes, want no"
done <<L
list pods $NS
watch pods $NS
update pods $NS
delete pods $NS
create pods $NS
list persistentvolumeclaims $NS
get secrets $NS
get pods default
patch nodes $NS
L
pass "kubectl auth can-i $as_sa: yes for each call made (and core events create), no beyond them"

# The 403 check can fail: a pod running as an account the chart does not bind (the namespace's
# default) is refused by RBAC reading its own pod, and fail-closed stops it with exit 3.
notes_pod train-3 '.spec.serviceAccountName = "default"'
run_init train-3 "$(sa_token "$NS" default)" "$SCRATCH/d.json"
[[ $rc -eq 3 ]] || fail "train-3 (unbound account): exit $rc, want 3: $(tail -5 "$SCRATCH/d.json.log")"
forbidden_in "$SCRATCH/d.json.log" >/dev/null || fail "train-3: no 403 found in its log: $(tail -5 "$SCRATCH/d.json.log")"
assert_jq "$SCRATCH/d.json" '.outcome == "error" and (.error | test("403|Forbidden")) and (.error | test("system:serviceaccount:'"$NS"':default"))' \
  "unbound account: real RBAC 403 on its own pod, named in the error, exit 3 (and the 403 check sees it)"
[[ -z $(pod_annotation train-3 iogate.io/verdict) ]] || fail "train-3: a verdict was written without permission"
