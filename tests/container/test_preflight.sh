#!/usr/bin/env bash
# iogate preflight in the real image under the real Docker Engine, run as the chart's initContainer
# runs in a training pod, against a real throwaway control plane (tests/e2e/lib.sh):
#   - helm install of charts/iogate (preflight for namespace ml; node agent and webhook off) with
#     the image set to the tested one; the initContainer and policy volume are the snippet the
#     release's NOTES print, put in Pods bound to a Node with a PVC; the Pod as the apiserver stored
#     it (with the service-account volume its admission plugin added) is mapped to `docker run`
#     flags by pod_docker_args: the image's user 65532, read-only root, no capabilities,
#     no-new-privileges, Docker's default seccomp profile, the chart's memory and CPU limits, the
#     downward-API env, the dataset volume (an ext4 loop device) at /data, the policy ConfigMap's
#     items at /etc/iogate, and a token minted for the chart's preflight ServiceAccount (bound to
#     the pod), ca.crt and namespace read-only at /var/run/secrets/kubernetes.io/serviceaccount,
#     with KUBERNETES_SERVICE_HOST/PORT pointing at the apiserver across the Docker bridge;
#   - pass (exit 0, the chart's read-only dataset mount: the shard on it is read, nothing written)
#     and fail (exit 1, a floor no disk meets, a writable mount: the test file is written to the
#     loop device and removed): the pod's iogate.io/* annotations and the Event, read with kubectl;
#   - libaio under the default seccomp profile: the filter is in force in the running container
#     (Seccomp: 2, no capabilities, no_new_privs), and its report says libaio with O_DIRECT ran;
#   - the token appears in neither run's logs nor reports; each run's memory peak (its cgroup's)
#     stays under the chart's preflight memory limit, which the container was given.
source "$(dirname "$0")/lib.sh"
need_image
container_cluster

NS=ml REL=iogate REL_NS=iogate-system NODE=gpu-node-1 PVC=imagenet CTR=iogate-preflight
SA_PATH=/var/run/secrets/kubernetes.io/serviceaccount
k create namespace "$NS" >/dev/null
# The policy of tests/fixtures/preflight-values.yaml (a 64 MiB, 4 s workload), the image the
# tested one, so the Pod names the image docker runs.
preflight_values "$SCRATCH/values.yaml" "$NS"
helm_install "$REL" "$REL_NS" -f "$SCRATCH/values.yaml"

# The initContainer and policy volume as the release's NOTES print them (dataset volume at /data).
helm get notes "$REL" -n "$REL_NS" | awk '/^spec:$/ {on = 1} on && /^$/ {exit} on' >"$SCRATCH/snippet.yaml"
{ printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: snippet}\n'; cat "$SCRATCH/snippet.yaml"; } |
  k create --dry-run=client -o json -f - >"$SCRATCH/snippet.json" 2>"$SCRATCH/snippet.err" ||
  fail "the NOTES' pod snippet is not a pod spec: $(cat "$SCRATCH/snippet.err")"
assert_jq "$SCRATCH/snippet.json" '.spec.initContainers[0] | .name == "'"$CTR"'" and .image == "'"$IMAGE"'" and
    (.volumeMounts[] | select(.name == "dataset") | .mountPath == "/data" and .readOnly == true)' \
  "NOTES: initContainer $CTR of image $IMAGE, dataset read-only at /data"
# The initContainer sets no runAsUser: the image's USER runs it.
IMAGE_USER=$(docker image inspect -f '{{.Config.User}}' "$IMAGE") IMAGE_UID=${IMAGE_USER%%:*}
[[ $IMAGE_UID =~ ^[0-9]+$ && $IMAGE_UID -ne 0 ]] || fail "$IMAGE has no numeric non-root USER"
LIMIT=$(jq -r '.spec.initContainers[0].resources.limits.memory' "$SCRATCH/snippet.json")
LIMIT_BYTES=$(numfmt --from=iec-i "$LIMIT") || fail "the initContainer's memory limit '$LIMIT' is not a quantity"

make_node "$NODE"
jq -n --arg ns "$NS" --arg n "$PVC" '{apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: {name: $n, namespace: $ns},
  spec: {accessModes: ["ReadWriteMany"], resources: {requests: {storage: "1Gi"}}}}' | k create -f - >/dev/null
# The PVC's volume: ext4 on a loop device, bind-mounted by docker at /data as a CSI driver's
# mount would be; a written (not sparse) dataset shard on it for the read-only run.
loop_volume dataset 1g
on_exit 'docker ps -aq --filter "label=iogate.test=$TEST_ID" | xargs -r docker rm -f'  # before the rig goes
head -c 64M /dev/urandom >"$LOOP_DIR/shard-00000.tar"
chmod 644 "$LOOP_DIR/shard-00000.tar"

# The initContainer's args get --output-format json (a report to read) and --log-level debug (every
# API request logged: more for the token to leak into).
DEBUG_JSON='.spec.initContainers[0].args += ["--output-format", "json", "--log-level", "debug"]'

# run_pod POD: POD's initContainer in docker, from the Pod as the apiserver stored it, as the kubelet
# would run it: the service-account volume's files (a token bound to the pod, ca.crt, namespace,
# mode 0644 as its defaultMode), the ConfigMap volume's items, the PVC's loop volume. Report in
# $SCRATCH/POD.json, stderr in POD.log, the process's status while it ran in POD.status, exit in $rc.
declare -A TOKENS=()
run_pod() {
  local pod=$1 base="$SCRATCH/$1" c="$TEST_ID-$1" sa_vol pid
  mkdir -p "$base.sa" "$base.policy"
  k -n "$NS" get pod "$pod" -o json >"$base.pod.json"
  jq .spec "$base.pod.json" >"$base.spec.json"
  sa_vol=$(jq -er '.volumes[] | select(.projected.sources // [] | any(has("serviceAccountToken"))) | .name' "$base.spec.json") ||
    fail "$pod: the apiserver added no service-account volume"
  TOKENS[$pod]=$(k -n "$NS" create token "$(jq -r .serviceAccountName "$base.spec.json")" --duration 1h \
    --bound-object-kind Pod --bound-object-name "$pod" --bound-object-uid "$(jq -r .metadata.uid "$base.pod.json")")
  printf '%s' "${TOKENS[$pod]}" >"$base.sa/token"
  printf '%s' "$NS" >"$base.sa/namespace"
  cp "$CLUSTER_CA" "$base.sa/ca.crt"
  chmod 644 "$base.sa"/*
  k -n "$NS" get configmap "$(jq -r '.volumes[] | select(.name == "iogate-policy") | .configMap.name' "$base.spec.json")" -o json >"$base.cm.json"
  jq -r '.volumes[] | select(.name == "iogate-policy") | .configMap.items[] | "\(.key)\t\(.path)"' "$base.spec.json" |
    while IFS=$'\t' read -r key path; do jq -j --arg k "$key" '.data[$k]' "$base.cm.json" >"$base.policy/$path"; done
  chmod -R a+rX "$base.policy" "$base.sa"
  docker_pod "$pod" "$base.spec.json" "$CTR" \
    "$(jq -nc --arg sa "$sa_vol" --arg sd "$base.sa" --arg pd "$base.policy" --arg ld "$LOOP_DIR" '{dataset: $ld, "iogate-policy": $pd, ($sa): $sd}')" \
    "$(jq -c '{"metadata.name": .metadata.name, "metadata.namespace": .metadata.namespace, "spec.nodeName": .spec.nodeName}' "$base.pod.json")" \
    -d -e KUBERNETES_SERVICE_HOST="$CLUSTER_HOST" -e KUBERNETES_SERVICE_PORT="$CLUSTER_PORT" >/dev/null ||
    fail "$pod: docker run failed"
  # Read while it runs (the probe alone takes seconds): what the kernel enforces on the process.
  pid=$(docker inspect -f '{{.State.Pid}}' "$c")
  grep -E '^(Uid|Seccomp|NoNewPrivs|CapEff):' "/proc/$pid/status" >"$base.status" 2>/dev/null || true
  rc=$(docker wait "$c")
  docker logs "$c" >"$SCRATCH/$pod.json" 2>"$SCRATCH/$pod.log"
  docker inspect "$c" >"$base.inspect.json"
}

# check_run POD WANT_RC: what every run must show, besides its verdict.
check_run() {
  local pod=$1 base="$SCRATCH/$1" r="$SCRATCH/$1.json" peak
  [[ $rc -eq $2 ]] || fail "$pod: exit $rc, want $2: $(tail -5 "$SCRATCH/$pod.log")"
  grep -q 'api: in-cluster' "$SCRATCH/$pod.log" || fail "$pod: not configured in cluster: $(head -5 "$SCRATCH/$pod.log")"
  assert_jq "$r" '.api == "ok" and .error == "" and .pod == {namespace: "'"$NS"'", name: "'"$pod"'", node: "'"$NODE"'"} and .gpus == 2' \
    "$pod: exit $rc; in-cluster API ok, the pod from the downward API, 2 GPUs from its spec"
  assert_jq "$base.inspect.json" '.[0] | .HostConfig.ReadonlyRootfs and .HostConfig.Memory == '"$LIMIT_BYTES"' and
      .State.OOMKilled == false and (.Mounts[] | select(.Destination == "'"$SA_PATH"'") | .RW == false)' \
    "$pod: read-only root, --memory $LIMIT_BYTES (the chart's $LIMIT), not OOM-killed, the service account mounted read-only"
  grep -qx $'Uid:\t'"$IMAGE_UID"$'\t.*' "$base.status" && grep -qx $'Seccomp:\t2' "$base.status" &&
    grep -qx $'NoNewPrivs:\t1' "$base.status" && grep -qx $'CapEff:\t0000000000000000' "$base.status" ||
    fail "$pod: the running process was not uid $IMAGE_UID under a seccomp filter with no_new_privs and no capabilities: $(cat "$base.status")"
  # libaio, not the psync fallback, and O_DIRECT as asked: io_setup/io_submit got past the filter.
  assert_jq "$r" '.results[0].report | .ioengine == "libaio" and .direct == true and
      ([.warnings[] | select(test("fallback|buffered|seccomp"; "i"))] | length == 0)' \
    "$pod: uid $IMAGE_UID, the default seccomp profile in force (Seccomp: 2, NoNewPrivs, CapEff 0); the report's engine: libaio with O_DIRECT"
  assert_jq "$r" '.results[0].report.target | .fs_type == "ext4" and .source == "'"$LOOP_DEV"'"' \
    "$pod: /data is the ext4 on $LOOP_DEV"
  peak=$(memory_peak "$pod")
  ((peak > 0 && peak < LIMIT_BYTES)) || fail "$pod: memory peak $peak bytes, limit $LIMIT_BYTES"
  PEAKS+=("$pod $(awk -v b="$peak" 'BEGIN { printf "%.1f", b / 1048576 }') MiB ($peak bytes)")
}
PEAKS=()

# ---------------------------------------------------------------------------------------------
# Pass: the chart's read-only dataset mount; the shard on it is read, nothing written.
notes_pod train-0 "$DEBUG_JSON"
run_pod train-0
check_run train-0 0
assert_jq "$SCRATCH/train-0.json" '.outcome == "pass" and .results[0].source == "probe" and .results[0].pvc == "'"$PVC"'" and
    .results[0].report.target.read_only == true and .results[0].report.target.test_file_created == false and
    any(.results[0].report.target.files[]; .path == "/data/shard-00000.tar")' \
  "train-0: outcome pass on PVC $PVC, read-only: the shard read, no test file"
iops=$(jq -r '.results[0].measurement.iops | round' "$SCRATCH/train-0.json")
k -n "$NS" get pod train-0 -o json >"$SCRATCH/p0.json"
assert_jq "$SCRATCH/p0.json" '.metadata.annotations | .["iogate.io/verdict"] == "pass" and .["iogate.io/randread-iops"] == "'"$iops"'" and
    (.["iogate.io/report"] | fromjson | .outcome == "pass" and .node == "'"$NODE"'") and .["example.com/owner"] == "alice"' \
  "train-0 (kubectl): iogate.io/verdict=pass, randread-iops=$iops (the report's), iogate.io/report; other annotations kept"
core_events train-0 >"$SCRATCH/ev0.json"
assert_jq "$SCRATCH/ev0.json" 'length == 1 and (.[0] | .type == "Normal" and .reason == "StoragePolicyMet" and
    .involvedObject.uid == "'"$(jq -r .metadata.uid "$SCRATCH/p0.json")"'" and .reportingComponent == "iogate.io/preflight")' \
  "train-0 (kubectl get events): Normal StoragePolicyMet on the pod"

# ---------------------------------------------------------------------------------------------
# Fail: a floor no disk meets (helm upgrade; result_ttl 0s so it probes), a writable dataset
# mount owned by the image's user as fsGroup would make it: the test file is written and removed.
helm upgrade "$REL" "$CHART" -n "$REL_NS" -f "$SCRATCH/values.yaml" -f "$TESTS_DIR/fixtures/preflight-fail-values.yaml" >"$SCRATCH/upgrade.out" 2>&1 ||
  fail "helm upgrade (fail policy): $(cat "$SCRATCH/upgrade.out")"
chown "$IMAGE_USER" "$LOOP_DIR"
notes_pod train-1 "$DEBUG_JSON"' | (.spec.initContainers[0].volumeMounts[] | select(.name == "dataset")).readOnly = false'
loop_writes() { awk '{print $7}' "/sys/block/${LOOP_DEV#/dev/}/stat"; }  # sectors written to the device
w0=$(loop_writes)
run_pod train-1
w1=$(loop_writes)
check_run train-1 1
assert_jq "$SCRATCH/train-1.json" '.outcome == "fail" and .results[0].report.target.read_only == false and
    .results[0].report.target.test_file_created == true and
    (.results[0].verdict.checks[] | select(.check == "min_iops") | .passed == false and .threshold_value == 50000000)' \
  "train-1: outcome fail (min_iops 50000000 from the upgraded ConfigMap), on a test file it created"
((w1 - w0 >= 64 * 2048)) || fail "train-1: $(((w1 - w0) / 2048)) MiB written to $LOOP_DEV, want the 64 MiB test file"
pass "train-1: $(((w1 - w0) / 2048)) MiB written to $LOOP_DEV (the test file)"
assert_no_test_files "$LOOP_DIR"
[[ $(k -n "$NS" get pod train-1 -o jsonpath='{.metadata.annotations.iogate\.io/verdict}') == fail ]] ||
  fail "train-1: iogate.io/verdict is not fail: $(k -n "$NS" get pod train-1 -o jsonpath='{.metadata.annotations}')"
core_events train-1 >"$SCRATCH/ev1.json"
assert_jq "$SCRATCH/ev1.json" 'length == 1 and (.[0] | .type == "Warning" and .reason == "StorageBelowPolicy" and
    (.message | test("rule gpu-feed min_iops")))' \
  "train-1 (kubectl): iogate.io/verdict=fail, Warning StorageBelowPolicy naming rule gpu-feed min_iops"

# ---------------------------------------------------------------------------------------------
# The token (or any of its three parts) in no log or report; the logs are not empty of requests.
for pod in train-0 train-1; do
  (($(grep -c 'kube: ' "$SCRATCH/$pod.log") >= 3)) || fail "$pod: its debug log holds no API requests: $(head -5 "$SCRATCH/$pod.log")"
  IFS=. read -r -a parts <<<"${TOKENS[$pod]}"
  ((${#parts[@]} == 3)) || fail "$pod: the minted token is not a JWT"
  for s in "${TOKENS[$pod]}" "${parts[@]}"; do
    if grep -qF -- "$s" "$SCRATCH/$pod.log" "$SCRATCH/$pod.json"; then fail "$pod: its token is in its container's logs"; fi
  done
done
pass "the tokens are in neither container's logs ($(cat "$SCRATCH"/train-{0,1}.log | wc -l) lines) nor reports"
pass "memory peak (cgroup) under the chart's preflight limit $LIMIT: $(printf "%s; " "${PEAKS[@]}" | sed "s/; $//")"
