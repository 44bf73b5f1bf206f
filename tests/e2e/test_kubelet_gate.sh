#!/usr/bin/env bash
# The whole chain on a real node: what iogate promises a training job, with nothing standing in for
# Kubernetes. The pinned control plane (tests/e2e/cluster_lib.sh), a kubelet and a containerd of
# its own (tests/e2e/node_lib.sh) and the project's image (container.build) imported there.
#   - `helm install --wait` of the chart: the node agent's DaemonSet pod and both webhook
#     replicas run on the node as pods and turn Ready (the kubelet's readiness probes);
#   - the DaemonSet pod probes the node's data path (an ext4 loop device, mounted shared as on a
#     systemd node so that HostToContainer propagation is allowed) and labels the Node
#     (iogate.io/randread-iops, disk-class, tier ok, condition StorageBelowPolicy False) through
#     its kubelet-projected token, which the chart's least-reach policy checks against the Node;
#     its /metrics answers on the pod's address;
#   - a GPU training pod (nvidia.com/gpu: 1; the Node advertises 4 through its status, as a device
#     plugin does) applied in an opted-in namespace: the apiserver sends it to the webhook pod (at
#     the pod's address: --enable-aggregator-routing, no kube-proxy here), which injects the
#     preflight initContainer and the node affinity on the agent's label; the scheduler places it;
#     the kubelet mounts the PVC (a local PersistentVolume on the loop device) read-only into the
#     initContainer, which probes it and (a) passes: the pod reaches Running with the iogate.io/*
#     annotations, a StoragePolicyMet Event and the result recorded on the PVC;
#   - a second pod on the same PVC reuses that result (source shared, no second probe);
#   - (b) a pod the policy's low-latency rule selects (by its label: a p99 of at most 20 us, which
#     no volume here can serve at QD16: Little's law puts the mean alone at 16 / IOPS) on a PVC of
#     its own: its initContainer probes and exits 1, the pod stays Init:Error (restartPolicy Never:
#     a Job's pod) and never starts its training container, and `kubectl describe pod` shows the
#     StorageBelowPolicy Event with the rule, the measured p99 and the threshold;
#   - (c) a pod whose claim is still empty (the dataset not copied yet) under on_error
#     fail-closed: nothing to read on the read-only mount, preflight exits 3, Init:Error and a
#     StoragePreflightFailed Event saying why;
#   - (d) a node whose disk serves many small reads and little bandwidth (a gp3 volume's shape):
#     `helm upgrade` to image-training's demand (2,500 samples/s of 110k per accelerator at AU >=
#     0.9, workload mode auto), the Node advertising 8 GPUs, and every pod's reads from the loop
#     device capped at 600 MB/s (node_throttle_reads, tests/e2e/node_lib.sh; IOPS not capped):
#     about 5,300 samples/s. The new agent pod labels the node iogate.io/accelerators.image-training
#     (more than 0, fewer than 8; the same figure in the iogate.io/demand annotation and in
#     iogate_node_accelerators_sustained), keeps writing randread-iops and puts no taint on it (it
#     feeds one accelerator). An 8-GPU pod gets the required affinity on that label (Gt 7) and
#     kubectl prints the webhook's warning naming the rule, 8 and the samples/s it needs; the
#     scheduler leaves it Pending (FailedScheduling). Pinned to the node (spec.nodeName), /validate
#     refuses it, naming the node's figure. A 1-GPU pod on a fresh claim of the same device gets
#     Gt 0, its preflight passes and it runs, and its accelerators-sustained is fewer than 8: node
#     label, webhook and preflight agree. Both probes read no faster than the cap (the throttle
#     holds for their pods);
#   - (e) after the uninstall below, a first install with the chart's defaults (image-training in
#     mode warn) on the node with its reads capped lower (about 900 samples/s, under one
#     accelerator's need): no taint, /validate failurePolicy Ignore, the node labelled 0
#     accelerators with the StorageBelowPolicy condition, Event and iogate.io/would-block
#     annotation saying what enforce would do; a 1-GPU pod gets a preferred affinity only, its
#     preflight exits 0 with verdict warn and runs, its annotation and Event say "would block in
#     enforce mode"; a pod pinned to the node is admitted with that warning; `iogate audit` lists
#     the node and both pods. `helm upgrade --set policy.mode=enforce` then taints the node and a
#     new GPU pod waits Pending;
#   - (f) then `helm install` with the previous chart's defaults (image-classification, enforce)
#     (reads no longer capped) and a GPU pod admitted under its required affinity on randread-iops;
#     `helm upgrade` to the new defaults adds iogate.io/accelerators.feed-gpus and iogate.io/demand,
#     keeps randread-iops, taints nothing, and the pod keeps running with the affinity it was
#     admitted with;
#   - `helm test`: with the webhook's Service sent to a port nothing listens on (as a wrong
#     webhook.port or a firewall would), the webhook check fails, exits 3 and its log names
#     webhook.port, webhook.hostNetwork and the firewall rule and quotes the API server's error;
#     as installed, both test pods (the webhook reached in a server-side dry run; a labelled node)
#     pass and every object of the test hooks is gone afterwards;
#   - helm uninstall removes the chart's pods from the node, and its post-delete hook (iogate node
#     prune) leaves no iogate.io/ label, annotation, taint or StorageBelowPolicy condition on any
#     Node and no iogate.io/ annotation on any PVC, while a foreign label, annotation, taint
#     (PreferNoSchedule, so the hook's pod still lands), condition and PVC annotation put there
#     beforehand stay exactly as they were; the hook's Job, account, RBAC and policy are gone. An
#     iogate taint is put on the node by hand first (it meets the policy, so its agent put none).
#     The training pods are deleted before: their iogate.io/ annotations are the record of a
#     workload, which the prune leaves on purpose, and a pod still in its preflight could write a
#     PVC annotation after the prune.
# The time from `kubectl apply` to each verdict is printed (TIMES line), never asserted; (d)'s
# measured figures too (FIGURES line).
#
# Why the failing case is a stricter rule and not a slower volume: the webhook already keeps a GPU
# pod off nodes whose measured IOPS are below its floor (the pod would stay Pending, which
# e2e.scheduling shows), so a pod reaches its initContainer's verdict only where the node's own
# disk meets the floor and the dataset volume does not. A slower volume needs a device of its own
# throttled apart from the node agent's: no dm-delay target here, and (d)'s throttle caps one
# device for every pod of the node, the agent's among them (cgroup v1's blkio throttle is not
# hierarchical, so node_throttle_reads writes the cap into each pod's cgroup).
E2E_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$E2E_HERE/../container/lib.sh"
need_image
# The webhook runs as a pod: the apiserver reaches it at its endpoint's address.
export CLUSTER_ENDPOINT_ROUTING=true
container_cluster
source "$E2E_HERE/node_lib.sh"

NAME=$(node_default_name) ||
  fail "the hostname $(hostname) does not resolve to an address of this machine; the apiserver reaches the kubelet by the node's name"
RELEASE=iogate
NS=iogate-system
TRAIN=ml
GPU=nvidia.com/gpu
TIER_LABEL=example.com/storage-tier
PAUSE=$NODE_PAUSE_IMAGE  # the training container: it runs until deleted

# The data disk, before the node: cleanups run in reverse, so node_down (which unmounts the pods'
# bind mounts of it) runs before the rig is torn down. In memory (tmpfs backing): the probes then
# measure the engine, not a disk other tests share.
loop_volume data 1g --backing tmpfs
mkdir -p "$LOOP_DIR/node-agent" "$LOOP_DIR/dataset-a" "$LOOP_DIR/dataset-b" "$LOOP_DIR/dataset-c"
# A dataset shard on claims a and b (written, not sparse): the injected preflight mounts the
# dataset read-only and reads what is there. Claim c stays empty.
for x in a b; do
  head -c 64M /dev/urandom >"$LOOP_DIR/dataset-$x/shard-00000.tar"
  chmod 644 "$LOOP_DIR/dataset-$x/shard-00000.tar"
done

on_exit node_down
t0=$SECONDS
node_up "$SCRATCH/node" "$NAME" || fail "the node did not come up (logs above)"
pass "Node $NAME up and Ready in $((SECONDS - t0)) s (kubelet $(k get node "$NAME" -o jsonpath='{.status.nodeInfo.kubeletVersion}'), $(k get node "$NAME" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}'))"
t0=$SECONDS
node_docker_image "$IMAGE" || fail "the image $IMAGE did not import into the node's containerd"
pass "$IMAGE imported into the node's containerd in $((SECONDS - t0)) s"

# GPUs as a device plugin advertises them: in the Node's status, which the kubelet keeps.
k patch node "$NAME" --subresource=status --type=merge \
  -p "{\"status\":{\"capacity\":{\"$GPU\":\"4\"},\"allocatable\":{\"$GPU\":\"4\"}}}" >/dev/null
gpus_kept() { [[ $(k get node "$NAME" -o jsonpath="{.status.allocatable.nvidia\.com/gpu}") == 4 ]]; }
sleep 6  # past one of the kubelet's status updates (nodeStatusUpdateFrequency 5s)
gpus_kept || fail "the Node lost its $GPU capacity after a kubelet status update"
pass "Node $NAME advertises 4 $GPU (kept across the kubelet's status updates)"

# --- the training namespace, its dataset claims: local PersistentVolumes on the loop device ---
k create namespace "$TRAIN" >/dev/null
k label namespace "$TRAIN" iogate.io/enabled=true >/dev/null
# dataset_claim X: PVC dataset-X in the training namespace, bound to a local PersistentVolume on
# the node's folder LOOP_DIR/dataset-X.
dataset_claim() {
  jq -n --arg x "$1" --arg path "$LOOP_DIR/dataset-$1" --arg node "$NAME" --arg ns "$TRAIN" '
    {apiVersion: "v1", kind: "PersistentVolume", metadata: {name: "e2e-dataset-\($x)"},
     spec: {capacity: {storage: "512Mi"}, accessModes: ["ReadWriteOnce"], volumeMode: "Filesystem",
       persistentVolumeReclaimPolicy: "Retain", storageClassName: "local-loop", local: {path: $path},
       claimRef: {namespace: $ns, name: "dataset-\($x)"},
       nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [
         {key: "kubernetes.io/hostname", operator: "In", values: [$node]}]}]}}}},
    {apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: {name: "dataset-\($x)", namespace: $ns},
     spec: {storageClassName: "local-loop", accessModes: ["ReadWriteOnce"], volumeName: "e2e-dataset-\($x)",
       resources: {requests: {storage: "512Mi"}}}}' | k apply -f - >/dev/null
}
for x in a b c; do dataset_claim "$x"; done
pvcs_bound() {
  [[ $(k -n "$TRAIN" get pvc dataset-a dataset-b dataset-c -o jsonpath='{.items[*].status.phase}') == "Bound Bound Bound" ]]
}
wait_until 60 pvcs_bound || fail "the dataset claims did not bind: $(k -n "$TRAIN" get pvc 2>&1)"
pass "PVCs $TRAIN/dataset-a, -b and -c Bound to local PersistentVolumes on $LOOP_DEV (ext4)"

# --- the chart, as a user installs it ---
cat >"$SCRATCH/values.yaml" <<EOF
image: {repository: "${IMAGE%:*}", tag: "${IMAGE##*:}", pullPolicy: Never}
policy:
  profile: null
  mode: enforce
  on_error: fail-closed
  deadline: 40s
  result_ttl: 1h
  # Short, so that a test waits seconds; any volume here meets the floor.
  workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, ramp: 1s, runtime: 4s, size: 64m}
  # The node's disk is the test's own; other tests' I/O on this machine must not defer the probe.
  node: {busy_util: 100%}
  rules:
    - name: gpu-feed
      min_iops: 100
      min_iops_per_gpu: 50
      max_p99_latency: 2s
      forbidden_classes: [hdd]
    - name: low-latency
      description: pods that asked for the low-latency tier
      selector: {pod_labels: {$TIER_LABEL: low-latency}}
      max_p99_latency: 20us
nodeAgent:
  paths: [{name: data, hostPath: "$LOOP_DIR/node-agent"}]
webhook:
  namespaceSelector: {matchLabels: {iogate.io/enabled: "true"}}
# helm test's dry-run pod goes where the webhook looks (the opted-in namespace).
tests: {namespace: $TRAIN}
preflight:
  namespaces: [$TRAIN]
  # The injected initContainer's request stays the pod's for its life (the larger of it and the
  # containers', which request nothing here): four such pods at the default 1 CPU would not fit
  # a test machine's few CPUs beside the agent and the webhook. A smaller request, the same limit.
  resources:
    requests: {cpu: 200m, memory: 128Mi}
    limits: {cpu: "1", memory: 256Mi}
EOF
t0=$SECONDS
helm install "$RELEASE" "$CHART" -n "$NS" --create-namespace -f "$SCRATCH/values.yaml" --wait --timeout 5m \
  >"$SCRATCH/helm-install.out" 2>&1 || {
  k -n "$NS" get pods -o wide >&2 || true
  k -n "$NS" describe pods >&2 || true
  node_fail "helm install --wait failed" || true
  fail "helm install --wait: $(cat "$SCRATCH/helm-install.out")"
}
install_s=$((SECONDS - t0))
k -n "$NS" get pods -o json >"$SCRATCH/chart-pods.json"
assert_jq "$SCRATCH/chart-pods.json" '[.items[] | select(.metadata.labels["app.kubernetes.io/component"] == "node-agent")] |
  length == 1 and all(.spec.nodeName == "'"$NAME"'" and .status.phase == "Running" and
    (.status.conditions[] | select(.type == "Ready") | .status == "True"))' \
  "helm install --wait (${install_s} s): the node agent's DaemonSet pod runs on $NAME and is Ready (its /readyz: a first round probed)"
assert_jq "$SCRATCH/chart-pods.json" '[.items[] | select(.metadata.labels["app.kubernetes.io/component"] == "webhook")] |
  length == 2 and all(.spec.nodeName == "'"$NAME"'" and .status.phase == "Running" and
    (.status.conditions[] | select(.type == "Ready") | .status == "True"))' \
  "both webhook replicas run on $NAME and are Ready (the kubelet's HTTPS readiness probe)"

# --- the DaemonSet pod labels the node ---
labelled() { [[ -n $(k get node "$NAME" -o jsonpath='{.metadata.labels.iogate\.io/randread-iops}') ]]; }
wait_until 120 labelled || fail "the node agent did not label $NAME: $(k -n "$NS" logs -l app.kubernetes.io/component=node-agent --tail 20 2>&1)"
k get node "$NAME" -o json >"$SCRATCH/node.json"
node_iops=$(jq -r '.metadata.labels["iogate.io/randread-iops"]' "$SCRATCH/node.json")
assert_jq "$SCRATCH/node.json" '(.metadata.labels["iogate.io/randread-iops"] | tonumber) >= 200 and
  .metadata.labels["iogate.io/tier"] != "slow" and (.metadata.labels["iogate.io/disk-class"] | length) > 0 and
  (.metadata.annotations["iogate.io/report"] | fromjson | .outcome == "pass" and .gpus == 4) and
  ([.spec.taints[]? | select(.key == "iogate.io/storage-below-policy")] | length) == 0' \
  "the DaemonSet pod labelled $NAME: randread-iops $node_iops (the floor for 4 GPUs: 200), disk-class $(jq -r '.metadata.labels["iogate.io/disk-class"]' "$SCRATCH/node.json"), tier $(jq -r '.metadata.labels["iogate.io/tier"]' "$SCRATCH/node.json"), judged for its 4 GPUs, no taint"
wait_until 30 bash -c "[[ \$(kubectl get node '$NAME' -o jsonpath='{.status.conditions[?(@.type==\"StorageBelowPolicy\")].status}') == False ]]" ||
  fail "no StorageBelowPolicy=False condition on $NAME: $(k get node "$NAME" -o jsonpath='{.status.conditions}')"
pass "condition StorageBelowPolicy False on $NAME (nodes/status, the agent's pod-bound token)"
agent_ip=$(k -n "$NS" get pods -l app.kubernetes.io/component=node-agent -o jsonpath='{.items[0].status.podIP}')
curl -sf "http://$agent_ip:9560/metrics" >"$SCRATCH/metrics.txt" || fail "GET http://$agent_ip:9560/metrics failed"
grep -q '^iogate_probe_iops{' "$SCRATCH/metrics.txt" || fail "no iogate_probe_iops in the agent's metrics: $(head -20 "$SCRATCH/metrics.txt")"
pass "the agent's /metrics answers at its pod address $agent_ip:9560 ($(grep -c '^iogate_' "$SCRATCH/metrics.txt") iogate_ samples)"

# --- training pods, as a user applies them ---
# train_pod NAME CLAIM [JQ FILTER]: a GPU pod asking for preflight injection on its dataset
# volume, applied with kubectl apply; the filter edits it first. What kubectl says on stderr (the
# webhooks' warnings among it) is shown and kept in $SCRATCH/NAME.apply.err. train_pod_json
# prints the pod instead.
train_pod() {
  local rc=0
  train_pod_json "$@" | k apply -f - >/dev/null 2>"$SCRATCH/$1.apply.err" || rc=$?
  cat "$SCRATCH/$1.apply.err" >&2
  return $rc
}
train_pod_json() {
  jq -n --arg name "$1" --arg ns "$TRAIN" --arg claim "$2" --arg pause "$PAUSE" --arg gpu "$GPU" '
    {apiVersion: "v1", kind: "Pod",
     metadata: {name: $name, namespace: $ns, labels: {app: "resnet50"}, annotations: {"iogate.io/inject-preflight": "dataset"}},
     spec: {serviceAccountName: "iogate-preflight", terminationGracePeriodSeconds: 2,
       containers: [{name: "train", image: $pause, imagePullPolicy: "Never",
         resources: {limits: {($gpu): 1}},
         volumeMounts: [{name: "dataset", mountPath: "/data", readOnly: true}]}],
       volumes: [{name: "dataset", persistentVolumeClaim: {claimName: $claim}}]}}' |
    jq "${3:-.}"
}
verdict_of() { k -n "$TRAIN" get pod "$1" -o jsonpath='{.metadata.annotations.iogate\.io/verdict}'; }
phase_of() { k -n "$TRAIN" get pod "$1" -o jsonpath='{.status.phase}'; }
# status_of POD: the STATUS column of kubectl get (Init:Error, Running, ...).
status_of() { k -n "$TRAIN" get pod "$1" --no-headers | awk '{ print $3 }'; }
show_pod() {  # POD: its description and the preflight's log, for a failure message
  k -n "$TRAIN" describe pod "$1" >&2 || true
  k -n "$TRAIN" logs "$1" -c iogate-preflight >&2 || true
}
# wait_running POD: until the pod runs (60 s); else its description and a failure.
running() { [[ $(phase_of "$1") == Running ]]; }
wait_running() { wait_until 60 running "$1" || { show_pod "$1"; fail "$1 did not reach Running"; }; }
# wait_verdict POD SECONDS: until the pod's verdict annotation is there; prints the seconds taken
# from START (set by the caller just before kubectl apply).
wait_verdict() {
  local deadline=$((SECONDS + $2))
  until [[ -n $(verdict_of "$1") ]]; do
    ((SECONDS < deadline)) || { show_pod "$1"; fail "$1: no verdict after $2 s"; }
    sleep 0.2
  done
}

since() { python3 -c "import time; print(f'{time.time() - $1:.1f}')"; }  # START: seconds since, 0.1 s
# init_error POD EXIT: wait until the pod has failed in its init container (restartPolicy Never)
# with exit code EXIT, then check what the user sees: Init:Error in kubectl get, the training
# container never started. Leaves the pod in $SCRATCH/POD.json.
init_error() {
  local pod=$1 code=$2
  failed() { [[ $(phase_of "$pod") == Failed ]]; }
  wait_until 120 failed || { show_pod "$pod"; fail "$pod did not fail its preflight"; }
  k -n "$TRAIN" get pod "$pod" -o json >"$SCRATCH/$pod.json"
  [[ $(status_of "$pod") == Init:Error ]] || fail "kubectl get pod $pod shows $(status_of "$pod"), not Init:Error"
  assert_jq "$SCRATCH/$pod.json" '.status.initContainerStatuses[0].state.terminated.exitCode == '"$code"' and
    ([.status.containerStatuses[0] | .state.running, .state.terminated.startedAt] | all(. == null))' \
    "$pod: kubectl get shows Init:Error; preflight exited $code and the training container never started"
}
# described_event POD REGEX: the line of `kubectl describe pod` matching REGEX (an Event), on
# stdout; fails showing the Events otherwise.
described_event() {
  k -n "$TRAIN" describe pod "$1" >"$SCRATCH/$1.describe"
  grep -E "$2" "$SCRATCH/$1.describe" ||
    fail "kubectl describe pod $1 shows no Event matching '$2': $(sed -n '/^Events:/,$p' "$SCRATCH/$1.describe")"
}

# (a) the volume meets the policy: probed, Running.
START=$(date +%s.%N)
train_pod train-a dataset-a
wait_verdict train-a 120
verdict_a=$(since "$START")
wait_running train-a
running_a=$(since "$START")
k -n "$TRAIN" get pod train-a -o json >"$SCRATCH/train-a.json"
assert_jq "$SCRATCH/train-a.json" '.spec.initContainers[0].name == "iogate-preflight" and .spec.initContainers[0].image == "'"$IMAGE"'" and
  (.spec.initContainers[0].volumeMounts[] | select(.name == "dataset") | .readOnly == true and .mountPath == "/data")' \
  "train-a: the webhook pod injected the preflight initContainer ($IMAGE, dataset read-only at /data)"
assert_jq "$SCRATCH/train-a.json" '.spec.initContainers[0].resources ==
  {"requests": {"cpu": "200m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}}' \
  "train-a: with the chart's preflight.resources (the webhook's --preflight-requests and --preflight-limits)"
assert_jq "$SCRATCH/train-a.json" '[.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[] |
  select(.key == "iogate.io/randread-iops" and .operator == "Gt")] | length == 1' \
  "train-a: and the required node affinity on the agent's iogate.io/randread-iops label"
assert_jq "$SCRATCH/train-a.json" '.spec.nodeName == "'"$NAME"'" and .status.phase == "Running" and
  .status.initContainerStatuses[0].state.terminated.exitCode == 0 and
  (.status.containerStatuses[0].state.running | type) == "object"' \
  "train-a: scheduled on $NAME, preflight exited 0, the training container runs"
assert_jq "$SCRATCH/train-a.json" '.metadata.annotations as $a | $a["iogate.io/verdict"] == "pass" and
  ($a["iogate.io/randread-iops"] | tonumber) > 0 and ($a["iogate.io/p99-latency-us"] | length) > 0 and
  ($a["iogate.io/report"] | fromjson | .gpus == 1 and .node == "'"$NAME"'" and .paths[0].source == "probe" and .paths[0].pvc == "dataset-a")' \
  "train-a: annotations verdict pass, randread-iops $(jq -r '.metadata.annotations["iogate.io/randread-iops"]' "$SCRATCH/train-a.json"), p99 $(jq -r '.metadata.annotations["iogate.io/p99-latency-us"]' "$SCRATCH/train-a.json") us; probed on PVC dataset-a for 1 GPU"
wait_until 20 bash -c "kubectl -n '$TRAIN' get events --field-selector involvedObject.name=train-a,reason=StoragePolicyMet -o name | grep -q ." ||
  fail "train-a: no StoragePolicyMet Event"
pass "train-a: Event StoragePolicyMet"
k -n "$TRAIN" get pvc dataset-a -o json >"$SCRATCH/pvc-a.json"
assert_jq "$SCRATCH/pvc-a.json" '.metadata.annotations["iogate.io/probe-result"] | fromjson | (.pod | endswith("train-a")) and .node == "'"$NAME"'"' \
  "the result is recorded on PVC dataset-a (iogate.io/probe-result, by train-a on $NAME)"

# The second pod on the same claim reuses it, and (b) a pod of the low-latency tier on its own
# claim fails: applied together.
START=$(date +%s.%N)
train_pod train-a2 dataset-a
START_B=$(date +%s.%N)
train_pod train-b dataset-b '.metadata.labels["'"$TIER_LABEL"'"] = "low-latency" | .spec.restartPolicy = "Never"'
wait_verdict train-a2 120
verdict_a2=$(since "$START")
wait_running train-a2
k -n "$TRAIN" get pod train-a2 -o json >"$SCRATCH/train-a2.json"
assert_jq "$SCRATCH/train-a2.json" '.metadata.annotations as $a | $a["iogate.io/verdict"] == "pass" and
  ($a["iogate.io/report"] | fromjson | .paths[0].source == "shared" and .paths[0].pvc == "dataset-a") and
  $a["iogate.io/randread-iops"] == "'"$(jq -r '.metadata.annotations["iogate.io/randread-iops"]' "$SCRATCH/train-a.json")"'"' \
  "train-a2: the same PVC: train-a's measurement reused (source shared, the same IOPS), Running"
k -n "$TRAIN" logs train-a2 -c iogate-preflight >"$SCRATCH/train-a2.log" 2>&1 || fail "kubectl logs train-a2 -c iogate-preflight: $(cat "$SCRATCH/train-a2.log")"
grep -q "shared result of" "$SCRATCH/train-a2.log" || fail "train-a2's preflight log does not say the result was shared: $(cat "$SCRATCH/train-a2.log")"
! grep -qE "probed [0-9.]+ s" "$SCRATCH/train-a2.log" || fail "train-a2's preflight probed: $(cat "$SCRATCH/train-a2.log")"
pass "kubectl logs train-a2 -c iogate-preflight: '$(grep -m1 'shared result of' "$SCRATCH/train-a2.log" | sed 's/^ *//')'"

init_error train-b 1
verdict_b=$(since "$START_B")
assert_jq "$SCRATCH/train-b.json" '.metadata.annotations as $a | $a["iogate.io/verdict"] == "fail" and
  ($a["iogate.io/report"] | fromjson | .paths[0].source == "probe" and .paths[0].pvc == "dataset-b" and
    ([.paths[0].checks[] | select(.[0] == "low-latency" and .[4] == false)] | length) == 1)' \
  "train-b: verdict fail, probed on its own PVC dataset-b, the low-latency rule's check failed"
event=$(described_event train-b "Warning +StorageBelowPolicy .*rule low-latency") || exit 1
[[ $event == *"max_p99_latency"* && $event == *"<= 20 µs"* ]] || fail "the Event does not name the check and threshold: $event"
pass "kubectl describe pod train-b: $(sed 's/  */ /g' <<<"$event" | cut -c1-240)"

# (c) the claim is empty: preflight cannot measure it and, fail-closed, keeps the pod out.
START=$(date +%s.%N)
train_pod train-c dataset-c '.spec.restartPolicy = "Never"'
init_error train-c 3
verdict_c=$(since "$START")
assert_jq "$SCRATCH/train-c.json" '.metadata.annotations["iogate.io/verdict"] == "error"' \
  "train-c: the empty claim: verdict error (fail-closed)"
event=$(described_event train-c "Warning +StoragePreflightFailed .*holds no regular file") || exit 1
pass "kubectl describe pod train-c: $(sed 's/  */ /g' <<<"$event" | cut -c1-240)"

echo "TIMES: kubectl apply -> verdict: probed and passed ${verdict_a} s (Running ${running_a} s); reused ${verdict_a2} s; probed and failed (Init:Error) ${verdict_b} s; empty claim (Init:Error) ${verdict_c} s; node agent: helm install --wait ${install_s} s"

# --- (d) a disk rich in small reads and poor in bandwidth, judged in the job's units ---
# The policy becomes image-training's demand in workload mode auto, the Node advertises 8 GPUs
# and every pod of the node reads the loop device at most CAP bytes/s (node_throttle_reads; IOPS
# are not capped): at 110 KiB a sample that is about 5,300 samples/s, two accelerators' worth at
# AU 0.9 (2,250 samples/s each), while 4 KiB random reads stay plentiful (146,000/s under the
# cap), as on a gp3 volume. The node agent's label, the webhook's affinity and refusal and the
# preflight's verdict must then agree: one GPU, yes; eight, no.
phase_t0=$SECONDS
CAP=600000000
SAMPLE_BYTES=112640  # 110k: sizes are binary, as fio's
ACC_LABEL=iogate.io/accelerators.image-training
# The earlier pods go: all 8 GPUs and the node's CPU free, so that storage alone keeps a pod out.
k -n "$TRAIN" delete pod train-a train-a2 train-b train-c --wait --timeout 60s >/dev/null ||
  fail "the earlier training pods were not deleted: $(k -n "$TRAIN" get pods 2>&1)"
k patch node "$NAME" --subresource=status --type=merge \
  -p "{\"status\":{\"capacity\":{\"$GPU\":\"8\"},\"allocatable\":{\"$GPU\":\"8\"}}}" >/dev/null
sleep 6  # past one of the kubelet's status updates
[[ $(k get node "$NAME" -o jsonpath="{.status.allocatable.nvidia\.com/gpu}") == 8 ]] ||
  fail "the Node lost its 8 $GPU after a kubelet status update"
pass "Node $NAME advertises 8 $GPU (the earlier training pods deleted: all free)"

node_throttle_reads "$LOOP_DEV" "$CAP" || fail "the read throttle on $LOOP_DEV did not start (message above)"
pass "reads from $LOOP_DEV capped at $((CAP / 1000000)) MB/s in every cgroup of $NAME's pods ($(find "$NODE_THROTTLE_ROOT" -type d | wc -l) now, new ones as they come; IOPS not capped)"

# A fresh claim with one 64 MiB shard: fewer files than a dataset, so auto mode reads synthetic
# 110 KiB samples of it. Synced: the loader drops clean pages only, and dirty ones would be read
# from memory, past the throttle.
mkdir -p "$LOOP_DIR/dataset-d"
head -c 64M /dev/urandom >"$LOOP_DIR/dataset-d/shard-00000.tar"
chmod 644 "$LOOP_DIR/dataset-d/shard-00000.tar"
sync "$LOOP_DIR/dataset-d/shard-00000.tar"
dataset_claim d
wait_until 60 bash -c "[[ \$(kubectl -n '$TRAIN' get pvc dataset-d -o jsonpath='{.status.phase}') == Bound ]]" ||
  fail "PVC dataset-d did not bind: $(k -n "$TRAIN" get pvc dataset-d 2>&1)"

# The same values, the policy's workload and rules replaced: image-training's (iogate policy
# profiles), with the short probe and the busy check of the first install.
cat >"$SCRATCH/policy-demand.yaml" <<EOF
workload: {mode: auto, ramp: 1s, runtime: 4s, size: 64m}
rules:
  - name: image-training
    description: samples fast enough to keep every GPU at least 90% busy
    demand: {samples_per_s: 2500, sample_size: 110k, min_au: 0.9}
EOF
"$PY" -c 'import sys, yaml
v = yaml.safe_load(open(sys.argv[1]))
v["policy"].update(yaml.safe_load(open(sys.argv[2])))
yaml.safe_dump(v, sys.stdout)' "$SCRATCH/values.yaml" "$SCRATCH/policy-demand.yaml" >"$SCRATCH/values-demand.yaml"
t0=$SECONDS
helm upgrade "$RELEASE" "$CHART" -n "$NS" -f "$SCRATCH/values-demand.yaml" --wait --timeout 5m \
  >"$SCRATCH/helm-upgrade.out" 2>&1 || {
  k -n "$NS" get pods -o wide >&2 || true
  node_fail "helm upgrade --wait failed" || true
  fail "helm upgrade --wait: $(cat "$SCRATCH/helm-upgrade.out")"
}
upgrade_s=$((SECONDS - t0))
pass "helm upgrade --wait (${upgrade_s} s): policy image-training (2,500 samples/s of 110k per accelerator, AU >= 0.9), workload mode auto"

# --- the node agent's figures ---
acc_labelled() { [[ -n $(k get node "$NAME" -o jsonpath='{.metadata.labels.iogate\.io/accelerators\.image-training}') ]]; }
wait_until 120 acc_labelled ||
  fail "the node agent did not write $ACC_LABEL on $NAME: $(k -n "$NS" logs -l app.kubernetes.io/component=node-agent --tail 20 2>&1)"
label_s=$((SECONDS - t0))
k get node "$NAME" -o json >"$SCRATCH/node-d.json"
node_sustained=$(jq -r --arg k "$ACC_LABEL" '.metadata.labels[$k]' "$SCRATCH/node-d.json")
node_iops_d=$(jq -r '.metadata.labels["iogate.io/randread-iops"] // ""' "$SCRATCH/node-d.json")
node_samples=$(jq -r '.metadata.annotations["iogate.io/demand"] // "[]" | fromjson |
  [.[] | select(.rule == "image-training")] | max_by(.accelerators_sustained) | .samples_per_s // empty' "$SCRATCH/node-d.json")
assert_jq "$SCRATCH/node-d.json" '.metadata.labels["'"$ACC_LABEL"'"] | test("^[0-9]+$") and (tonumber | . >= 1 and . <= 7)' \
  "$NAME: label $ACC_LABEL=$node_sustained (more than none, fewer than its 8 GPUs)"
assert_jq "$SCRATCH/node-d.json" '(.metadata.annotations["iogate.io/demand"] | fromjson | [.[] | select(.rule == "image-training")]) as $d |
  ($d | length) >= 1 and ([$d[].accelerators_sustained] | max) == (.metadata.labels["'"$ACC_LABEL"'"] | tonumber) and
  all($d[]; .sample_bytes == '"$SAMPLE_BYTES"' and .samples_per_s_per_accelerator == 2500 and .min_au == 0.9 and
    (.samples_per_s + 0.5) / (0.9 * 2500) >= .accelerators_sustained and
    (.samples_per_s - 0.5) / (0.9 * 2500) < .accelerators_sustained + 1)' \
  "$NAME: annotation iogate.io/demand: $node_samples samples/s of $SAMPLE_BYTES bytes on its best path, floor($node_samples / (0.9 x 2,500)) = $node_sustained, as the label"
# The throttle held: what the agent's pod read is no more than the cap lets through (the kernel
# lets a slice's worth, 0.1 s, ahead at most).
assert_jq "$SCRATCH/node-d.json" '('"${node_samples:-0}"' * '"$SAMPLE_BYTES"') as $b | $b > 0 and $b <= '"$CAP"' * 1.1' \
  "$NAME: the agent read $(jq -n "${node_samples:-0} * $SAMPLE_BYTES / 1000000 | floor") MB/s under the $((CAP / 1000000)) MB/s cap: the throttle holds for its pod"
assert_jq "$SCRATCH/node-d.json" '(.metadata.labels["iogate.io/randread-iops"] // "") | test("^[0-9]+$") and tonumber > 0' \
  "$NAME: label iogate.io/randread-iops=$node_iops_d still written (the 4 KiB random-read probe beside the samples)"
assert_jq "$SCRATCH/node-d.json" '[.spec.taints[]? | select(.key | startswith("iogate.io/"))] | length == 0' \
  "$NAME: no iogate taint (it feeds one accelerator; how many is the label's job)"
pass "$NAME's iogate labels after the upgrade: $(jq -r '.metadata.labels | to_entries[] | select(.key | startswith("iogate.io/")) | "\(.key)=\(.value)"' "$SCRATCH/node-d.json" | paste -sd ' ')"
agent_ip=$(k -n "$NS" get pods -l app.kubernetes.io/component=node-agent -o jsonpath='{.items[0].status.podIP}')
curl -sf "http://$agent_ip:9560/metrics" >"$SCRATCH/metrics-d.txt" || fail "GET http://$agent_ip:9560/metrics failed"
metric=$(grep '^iogate_node_accelerators_sustained{' "$SCRATCH/metrics-d.txt" | grep 'rule="image-training"' | grep "node=\"$NAME\"" | awk '{ print $NF }')
[[ -n $metric && $metric == "$node_sustained" ]] ||
  fail "iogate_node_accelerators_sustained for image-training is '${metric}', the label $node_sustained: $(grep '^iogate_node_acc' "$SCRATCH/metrics-d.txt")"
headline=$(grep '^iogate_probe_iops{' "$SCRATCH/metrics-d.txt" | grep 'rw="randread"' | grep 'bs="4k"' | awk '{ print $NF }' | head -1)
[[ -n $headline ]] && jq -en "($headline - $node_iops_d) | fabs <= 1" >/dev/null ||
  fail "the agent's 4k randread headline in /metrics is '$headline', the label randread-iops $node_iops_d: $(grep '^iogate_probe_iops{' "$SCRATCH/metrics-d.txt")"
pass "the agent's /metrics: iogate_node_accelerators_sustained{rule=\"image-training\"} $metric, as the label; its 4k randread headline $headline, the randread-iops label's (this agent wrote it)"

# --- an 8-GPU pod: the webhook keeps it off the node ---
GPUS8='.spec.containers[0].resources.limits["'"$GPU"'"] = 8'
START=$(date +%s.%N)
train_pod train-8 dataset-d "$GPUS8"
k -n "$TRAIN" get pod train-8 -o json >"$SCRATCH/train-8.json"
assert_jq "$SCRATCH/train-8.json" '[.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[] |
  any(.matchExpressions[]?; .key == "'"$ACC_LABEL"'" and .operator == "Gt" and .values == ["7"])] | length >= 1 and all' \
  "train-8: required node affinity $ACC_LABEL Gt 7 in every term (8 GPUs)"
assert_jq "$SCRATCH/train-8.json" '.metadata.annotations["iogate.io/node-requirements"] | contains("image-training")' \
  "train-8: annotation iogate.io/node-requirements: $(jq -r '.metadata.annotations["iogate.io/node-requirements"]' "$SCRATCH/train-8.json" | cut -c1-200)"
warning=$(grep -m1 '^Warning: iogate:' "$SCRATCH/train-8.apply.err") ||
  fail "train-8: kubectl apply printed no 'Warning: iogate:': $(cat "$SCRATCH/train-8.apply.err")"
EIGHT='(^|[^0-9.,])8([^0-9.,]|$)'  # the number 8 alone, not in 1,800 or 0.8
[[ $warning == *image-training* && $warning =~ $EIGHT && $warning =~ 20,?000 ]] ||
  fail "train-8: the warning does not name the rule, 8 GPUs and 20,000 samples/s: $warning"
pass "train-8: kubectl apply: $warning"
failed_scheduling() {
  k -n "$TRAIN" get events --field-selector involvedObject.name=train-8,reason=FailedScheduling -o jsonpath='{.items[*].message}'
}
scheduler_said() { [[ -n $(failed_scheduling) ]]; }
wait_until 60 scheduler_said ||
  { show_pod train-8; fail "train-8: no FailedScheduling Event"; }
pending_8=$(since "$START")
event=$(failed_scheduling)
[[ $event == *"didn't match Pod's node affinity/selector"* && $event != *Insufficient* ]] ||
  fail "train-8: FailedScheduling, but not for the node affinity alone: $event"
[[ $(phase_of train-8) == Pending && -z $(k -n "$TRAIN" get pod train-8 -o jsonpath='{.spec.nodeName}') ]] ||
  fail "train-8 is $(phase_of train-8) on '$(k -n "$TRAIN" get pod train-8 -o jsonpath='{.spec.nodeName}')', not Pending"
pass "train-8: Pending; the scheduler: $event"
# Pinned to the node (spec.nodeName: no scheduler), /validate refuses it.
train_pod_json train-8-pinned dataset-d "$GPUS8"' | .spec.nodeName = "'"$NAME"'" | del(.metadata.annotations["iogate.io/inject-preflight"])' |
  k apply -f - >"$SCRATCH/pinned.out" 2>&1 && fail "train-8-pinned (spec.nodeName $NAME, 8 GPUs) was admitted: $(cat "$SCRATCH/pinned.out")"
# The refusal's line (/mutate's warning comes before it).
msg=$(grep -m1 'denied the request' "$SCRATCH/pinned.out") || fail "train-8-pinned: no refusal: $(cat "$SCRATCH/pinned.out")"
for want in "node $NAME sustains $node_sustained" image-training; do
  [[ $msg == *"$want"* ]] || fail "train-8-pinned: the refusal does not say '$want': $msg"
done
[[ $msg =~ $EIGHT ]] || fail "train-8-pinned: the refusal does not name its 8 GPUs: $msg"
k -n "$TRAIN" get pod train-8-pinned >/dev/null 2>&1 && fail "train-8-pinned exists after the refusal"
pass "train-8-pinned (spec.nodeName $NAME): refused: $msg"

# --- a 1-GPU pod on the same volume: admitted, its preflight passes ---
START=$(date +%s.%N)
train_pod train-d dataset-d
k -n "$TRAIN" get pod train-d -o json >"$SCRATCH/train-d.json"
assert_jq "$SCRATCH/train-d.json" '[.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[] |
  any(.matchExpressions[]?; .key == "'"$ACC_LABEL"'" and .operator == "Gt" and .values == ["0"])] | length >= 1 and all' \
  "train-d: required node affinity $ACC_LABEL Gt 0 (1 GPU)"
wait_verdict train-d 120
verdict_d=$(since "$START")
wait_running train-d
running_d=$(since "$START")
k -n "$TRAIN" get pod train-d -o json >"$SCRATCH/train-d.json"
pod_samples=$(jq -r '.metadata.annotations["iogate.io/samples-per-s"] // 0' "$SCRATCH/train-d.json")
pod_sustained=$(jq -r '.metadata.annotations["iogate.io/accelerators-sustained"] // ""' "$SCRATCH/train-d.json")
assert_jq "$SCRATCH/train-d.json" '.spec.nodeName == "'"$NAME"'" and .status.initContainerStatuses[0].state.terminated.exitCode == 0 and
  .metadata.annotations as $a | $a["iogate.io/verdict"] == "pass" and
  ($a["iogate.io/accelerators-sustained"] | test("^[0-9]+$") and (tonumber | . >= 1 and . <= 7)) and
  ($a["iogate.io/report"] | fromjson | .gpus == 1 and .paths[0].source == "probe" and .paths[0].pvc == "dataset-d")' \
  "train-d: on $NAME, preflight passed on dataset-d: $pod_samples samples/s, predicted AU $(jq -r '.metadata.annotations["iogate.io/predicted-au"]' "$SCRATCH/train-d.json"), sustains $pod_sustained accelerators (fewer than 8: it would fail train-8 too)"
assert_jq "$SCRATCH/train-d.json" '('"$pod_samples"' * '"$SAMPLE_BYTES"') <= '"$CAP"' * 1.1' \
  "train-d: its preflight read $(jq -n "$pod_samples * $SAMPLE_BYTES / 1000000 | floor") MB/s under the cap: the throttle holds for it"
throttle_covers() { [[ -z $(node_throttle_uncapped) ]]; }  # a new cgroup waits up to 0.1 s for the poller
wait_until 5 throttle_covers ||
  fail "cgroups of $NAME's pods without the cap: $(node_throttle_uncapped | head -3)"
[[ $(phase_of train-8) == Pending ]] || fail "train-8 left Pending: $(phase_of train-8)"
pass "train-8 still Pending beside train-d; every cgroup of $NAME's pods capped"

echo "TIMES (bandwidth-poor node): helm upgrade --wait ${upgrade_s} s, label ${label_s} s after its start; kubectl apply -> FailedScheduling (8 GPUs) ${pending_8} s; -> verdict (1 GPU) ${verdict_d} s (Running ${running_d} s); phase $((SECONDS - phase_t0)) s"
echo "FIGURES (bandwidth-poor node, $((CAP / 1000000)) MB/s cap): node agent $node_samples samples/s, sustains $node_sustained, randread-iops $node_iops_d; preflight on dataset-d $pod_samples samples/s, sustains $pod_sustained"

# --- helm test: the API server can call the webhook; the agent labelled the node ---
# test_objects: what of the helm test hooks is in the cluster ("" when nothing).
test_objects() {
  { k -n "$NS" get pods,serviceaccounts -l app.kubernetes.io/component=test -o name
    k -n "$TRAIN" get roles,rolebindings -l app.kubernetes.io/component=test -o name
    k get clusterroles,clusterrolebindings,validatingadmissionpolicies,validatingadmissionpolicybindings \
      -l app.kubernetes.io/component=test -o name; } 2>&1
}
# (1) A webhook the API server cannot reach: the Service sends to a port no webhook listens on, as
# a firewall or the wrong webhook.port would. The failing pod's log names the value and quotes the
# API server. (GPU pods are refused meanwhile: validate fails closed; none is created here.)
target_port=$(k -n "$NS" get service iogate-webhook -o jsonpath='{.spec.ports[0].targetPort}')
k -n "$NS" patch service iogate-webhook --type=json -p '[{"op":"replace","path":"/spec/ports/0/targetPort","value":9}]' >/dev/null
if helm test "$RELEASE" -n "$NS" --timeout 3m >"$SCRATCH/helm-test-bad.out" 2>&1; then
  fail "helm test passed with the webhook's Service on port 9: $(cat "$SCRATCH/helm-test-bad.out")"
fi
k -n "$NS" logs iogate-test-webhook >"$SCRATCH/test-webhook-bad.log" 2>&1 ||
  fail "no log of the failed test pod iogate-test-webhook: $(cat "$SCRATCH/helm-test-bad.out")"
for want in "could not call iogate's webhook" "failed calling webhook" "webhook.port" "webhook.hostNetwork=true" "firewall rule"; do
  grep -qF -- "$want" "$SCRATCH/test-webhook-bad.log" || fail "the failed webhook check does not say '$want': $(cat "$SCRATCH/test-webhook-bad.log")"
done
[[ $(k -n "$NS" get pod iogate-test-webhook -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}') == 3 ]] ||
  fail "iogate-test-webhook did not exit 3: $(k -n "$NS" get pod iogate-test-webhook -o jsonpath='{.status.containerStatuses[0].state}')"
pass "helm test with the webhook unreachable fails; iogate webhook check exits 3: $(cut -c1-300 "$SCRATCH/test-webhook-bad.log")"
k -n "$NS" patch service iogate-webhook --type=json \
  -p "[{\"op\":\"replace\",\"path\":\"/spec/ports/0/targetPort\",\"value\":$(jq -n --arg p "$target_port" '$p | tonumber? // $p')}]" >/dev/null
# (2) As installed: both checks pass, and the hooks delete every object they made.
helm test "$RELEASE" -n "$NS" --timeout 3m >"$SCRATCH/helm-test.out" 2>&1 ||
  fail "helm test: $(cat "$SCRATCH/helm-test.out"; k -n "$NS" logs iogate-test-webhook 2>&1; k -n "$NS" logs iogate-test-node 2>&1)"
for pod in iogate-test-webhook iogate-test-node; do
  grep -A3 "TEST SUITE: *$pod" "$SCRATCH/helm-test.out" | grep -q 'Phase: *Succeeded' ||
    fail "helm test: $pod did not succeed: $(cat "$SCRATCH/helm-test.out")"
done
pass "helm test: iogate-test-webhook (the API server called the webhook in a dry run) and iogate-test-node (a labelled node) Succeeded"
no_test_objects() { [[ -z $(test_objects) ]]; }
wait_until 30 no_test_objects || fail "helm test's objects remain after a pass: $(test_objects)"
pass "helm test: its pods, account, RBAC and dry-run policy are gone after the pass (hook-succeeded)"

# --- helm uninstall: the chart's pods go, and the post-delete hook prunes every iogate.io/ key ---
# Keys iogate does not own, which the prune must leave: a label, an annotation, a taint and a
# condition on the Node, an annotation on a PVC that holds iogate's shared result.
k label node "$NAME" example.com/rack=r1 >/dev/null
k annotate node "$NAME" example.com/owner=ml-platform >/dev/null
k taint node "$NAME" example.com/maintenance=soon:PreferNoSchedule >/dev/null
k patch node "$NAME" --subresource=status --type=strategic -p '{"status":{"conditions":[{"type":"ExampleHealthy","status":"True",
  "reason":"ExampleOK","message":"set by the e2e test","lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' >/dev/null
k -n "$TRAIN" annotate pvc dataset-a example.com/backup=daily >/dev/null
# The node meets the policy here, so its agent put no taint: add iogate's own, as on a node below
# policy, so that the prune's taint removal is shown too.
k taint node "$NAME" iogate.io/storage-below-policy=true:NoSchedule >/dev/null
k get node "$NAME" -o json >"$SCRATCH/node-before.json"
k -n "$TRAIN" get pvc -o json >"$SCRATCH/pvcs-before.json"
assert_jq "$SCRATCH/node-before.json" '([.metadata.labels, .metadata.annotations] | map(keys[] | select(startswith("iogate.io/"))) | length) > 3
  and any(.spec.taints[]; .key == "iogate.io/storage-below-policy") and any(.status.conditions[]; .type == "StorageBelowPolicy")' \
  "before uninstall: $NAME carries $(jq '[.metadata.labels, .metadata.annotations] | map(keys[] | select(startswith("iogate.io/"))) | length' "$SCRATCH/node-before.json") iogate.io/ labels and annotations, its taint and the StorageBelowPolicy condition"
assert_jq "$SCRATCH/pvcs-before.json" '[.items[].metadata.annotations // {} | keys[] | select(startswith("iogate.io/"))] | length > 0' \
  "before uninstall: the claims carry $(jq '[.items[].metadata.annotations // {} | keys[] | select(startswith("iogate.io/"))] | length' "$SCRATCH/pvcs-before.json") iogate.io/ annotations (shared results)"
# The training pods go first. Their iogate.io/ annotations (verdicts; the user's inject-preflight)
# are the record of a workload, which the prune leaves on purpose and which goes with the pod; and
# a pod still in its preflight could write a PVC annotation after the prune ran.
k -n "$TRAIN" delete pods --all --wait --timeout 60s >/dev/null || fail "the training pods were not deleted: $(k -n "$TRAIN" get pods 2>&1)"
t0=$SECONDS
helm uninstall "$RELEASE" -n "$NS" --wait --timeout 3m >"$SCRATCH/helm-uninstall.out" 2>&1 || {
  k -n "$NS" get jobs,pods -o wide >&2 || true
  k -n "$NS" logs job/iogate-cleanup >&2 || true
  fail "helm uninstall: $(cat "$SCRATCH/helm-uninstall.out")"
}
uninstall_s=$((SECONDS - t0))
no_chart_pods() { [[ -z $(k -n "$NS" get pods -o name) ]]; }
wait_until 60 no_chart_pods || fail "pods of the release still there after helm uninstall: $(k -n "$NS" get pods)"
pass "helm uninstall --wait (${uninstall_s} s, the post-delete cleanup Job included): no pod of the release left on $NAME"

k get nodes -o json >"$SCRATCH/nodes-after.json"
k get pvc -A -o json >"$SCRATCH/pvcs-after.json"
assert_jq "$SCRATCH/nodes-after.json" '([.items[] | (.metadata.labels // {} | keys[]), (.metadata.annotations // {} | keys[]),
  (.spec.taints // [] | .[].key) | select(startswith("iogate.io/"))] | length == 0)
  and ([.items[].status.conditions[]? | select(.type == "StorageBelowPolicy")] | length) == 0' \
  "after uninstall: no iogate.io/ label, annotation or taint and no StorageBelowPolicy condition on any Node"
k get node "$NAME" -o json >"$SCRATCH/node-after.json"
jq -n --slurpfile b "$SCRATCH/node-before.json" --slurpfile a "$SCRATCH/node-after.json" '{b: $b[0], a: $a[0]}' \
  >"$SCRATCH/node-compare.json"
assert_jq "$SCRATCH/node-compare.json" '.b as $b | .a
  | .metadata.labels == ($b.metadata.labels | with_entries(select(.key | startswith("iogate.io/") | not)))
  and .metadata.annotations == ($b.metadata.annotations | with_entries(select(.key | startswith("iogate.io/") | not)))
  and .spec.taints == ($b.spec.taints | map(select(.key | startswith("iogate.io/") | not)))
  and ([.status.conditions[].type] | sort) == ([$b.status.conditions[].type | select(. != "StorageBelowPolicy")] | sort)
  and .metadata.labels["example.com/rack"] == "r1" and .metadata.annotations["example.com/owner"] == "ml-platform"
  and any(.spec.taints[]; .key == "example.com/maintenance" and .effect == "PreferNoSchedule")
  and any(.status.conditions[]; .type == "ExampleHealthy" and .status == "True")' \
  "after uninstall: everything else on $NAME is as before (foreign label, annotation, taint, condition; the kubelet's own)"
assert_jq "$SCRATCH/pvcs-after.json" '[.items[].metadata.annotations // {} | keys[] | select(startswith("iogate.io/"))] | length == 0' \
  "after uninstall: no iogate.io/ annotation on any PVC"
jq -n --slurpfile b "$SCRATCH/pvcs-before.json" --slurpfile a "$SCRATCH/pvcs-after.json" '{b: $b[0], a: $a[0]}' \
  >"$SCRATCH/pvcs-compare.json"
assert_jq "$SCRATCH/pvcs-compare.json" '
  [.a.items[] | select(.metadata.namespace == "'"$TRAIN"'") | {n: .metadata.name, a: (.metadata.annotations // {})}] ==
  [.b.items[] | {n: .metadata.name, a: (.metadata.annotations // {} | with_entries(select(.key | startswith("iogate.io/") | not)))}]
  and (.a.items[] | select(.metadata.name == "dataset-a") | .metadata.annotations["example.com/backup"]) == "daily"' \
  "after uninstall: every other PVC annotation is as before (example.com/backup on dataset-a, the provisioner's)"
hook_left=$({ k -n "$NS" get jobs,serviceaccounts -l app.kubernetes.io/component=cleanup -o name
  k -n "$TRAIN" get roles,rolebindings -l app.kubernetes.io/component=cleanup -o name
  k get clusterroles,clusterrolebindings,validatingadmissionpolicies,validatingadmissionpolicybindings \
    -l app.kubernetes.io/component=cleanup -o name; } 2>&1)
[[ -z $hook_left ]] || fail "the cleanup hook's objects remain after it succeeded: $hook_left"
pass "after uninstall: the cleanup hook's Job, account, RBAC and policy are gone (hook-succeeded)"

# --- (e) a first install with the chart's defaults on a node whose disk fails them: nothing blocked ---
# The chart's defaults (profile image-training, mode warn; only what this machine needs besides:
# the image, the data path, the namespaces, a short probe, no busy check) on the node, its reads
# capped at CAP_E: about 900 samples/s of 110 KiB, under one accelerator's 2,250 at AU 0.9. Warn
# mode records every verdict and blocks nothing: no taint, the GPU pods run, and the node, the pod
# and the Event say what enforce would block; `iogate audit` lists the node and the pods. Then
# --set policy.mode=enforce blocks as before: the node tainted, a new GPU pod Pending.
phase_t0=$SECONDS
CAP_E=100000000
node_throttle_stop
node_throttle_reads "$LOOP_DEV" "$CAP_E" || fail "the read throttle on $LOOP_DEV did not start (message above)"
mkdir -p "$LOOP_DIR/dataset-e"
head -c 64M /dev/urandom >"$LOOP_DIR/dataset-e/shard-00000.tar"
chmod 644 "$LOOP_DIR/dataset-e/shard-00000.tar"
sync "$LOOP_DIR/dataset-e/shard-00000.tar"
dataset_claim e
wait_until 60 bash -c "[[ \$(kubectl -n '$TRAIN' get pvc dataset-e -o jsonpath='{.status.phase}') == Bound ]]" ||
  fail "PVC dataset-e did not bind: $(k -n "$TRAIN" get pvc dataset-e 2>&1)"
cat >"$SCRATCH/values-default.yaml" <<EOV
image: {repository: "${IMAGE%:*}", tag: "${IMAGE##*:}", pullPolicy: Never}
policy:
  workload: {mode: auto, ramp: 1s, runtime: 4s, size: 64m}
  node: {busy_util: 100%}
nodeAgent:
  paths: [{name: data, hostPath: "$LOOP_DIR/node-agent"}]
webhook:
  namespaceSelector: {matchLabels: {iogate.io/enabled: "true"}}
tests: {namespace: $TRAIN}
preflight:
  namespaces: [$TRAIN]
  resources:
    requests: {cpu: 200m, memory: 128Mi}
    limits: {cpu: "1", memory: 256Mi}
EOV
helm install "$RELEASE" "$CHART" -n "$NS" -f "$SCRATCH/values-default.yaml" --wait --timeout 5m \
  >"$SCRATCH/helm-install-e.out" 2>&1 || {
  k -n "$NS" get pods -o wide >&2 || true
  fail "helm install (defaults) --wait: $(cat "$SCRATCH/helm-install-e.out")"
}
grep -q "MODE WARN: nothing is blocked" "$SCRATCH/helm-install-e.out" ||
  fail "helm install's NOTES do not say that warn mode blocks nothing: $(cat "$SCRATCH/helm-install-e.out")"
k -n "$NS" get configmap iogate-policy -o jsonpath='{.data.policy\.yaml}' >"$SCRATCH/policy-e.yaml"
grep -qx 'mode: warn' "$SCRATCH/policy-e.yaml" && grep -qx 'profile: image-training' "$SCRATCH/policy-e.yaml" ||
  fail "the default policy is not image-training in mode warn: $(cat "$SCRATCH/policy-e.yaml")"
[[ $(k get validatingwebhookconfiguration iogate-webhook -o jsonpath='{.webhooks[0].failurePolicy}') == Ignore ]] ||
  fail "warn mode: /validate's failurePolicy is not Ignore (a webhook that refuses nothing must not refuse when down)"
pass "helm install with the defaults: policy image-training in mode warn, /validate failurePolicy Ignore, NOTES say nothing is blocked"
E_LABEL=iogate.io/accelerators.feed-gpus
e_labelled() { [[ -n $(k get node "$NAME" -o jsonpath='{.metadata.labels.iogate\.io/accelerators\.feed-gpus}') ]]; }
wait_until 120 e_labelled ||
  fail "the node agent did not write $E_LABEL on $NAME: $(k -n "$NS" logs -l app.kubernetes.io/component=node-agent --tail 20 2>&1)"
wait_until 30 bash -c "[[ \$(kubectl get node '$NAME' -o jsonpath='{.status.conditions[?(@.type==\"StorageBelowPolicy\")].status}') == True ]]" ||
  fail "no StorageBelowPolicy=True condition on $NAME: $(k get node "$NAME" -o jsonpath='{.status.conditions}')"
k get node "$NAME" -o json >"$SCRATCH/node-e.json"
assert_jq "$SCRATCH/node-e.json" '.metadata.labels["'"$E_LABEL"'"] == "0" and
  ([.spec.taints[]? | select(.key | startswith("iogate.io/"))] | length) == 0 and
  (.metadata.annotations["iogate.io/would-block"] | startswith("taint iogate.io/storage-below-policy=true:NoSchedule: rule feed-gpus")) and
  (.status.conditions[] | select(.type == "StorageBelowPolicy") | .message | contains("would block in enforce mode"))' \
  "$NAME below the default policy ($E_LABEL=0), not tainted; annotation iogate.io/would-block: $(jq -r '.metadata.annotations["iogate.io/would-block"]' "$SCRATCH/node-e.json" | cut -c1-160)"
node_event_e() {
  k get events -A --field-selector "involvedObject.kind=Node,involvedObject.name=$NAME,reason=StorageBelowPolicy" \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -m1 "would block in enforce mode"
}
wait_until 30 node_event_e >/dev/null || fail "no StorageBelowPolicy Event on Node $NAME saying 'would block in enforce mode'"
pass "Event StorageBelowPolicy on Node $NAME: $(node_event_e | cut -c1-200)"

# A 1-GPU pod with preflight on the slow claim: it runs, its verdict warn, what enforce would do said.
START=$(date +%s.%N)
train_pod train-e dataset-e
grep -q "enforce mode would require it" "$SCRATCH/train-e.apply.err" ||
  fail "train-e: kubectl apply printed no warning of what enforce would require: $(cat "$SCRATCH/train-e.apply.err")"
k -n "$TRAIN" get pod train-e -o json >"$SCRATCH/train-e.json"
assert_jq "$SCRATCH/train-e.json" '.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution == null and
  ([.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[]?.preference.matchExpressions[]? | select(.key == "'"$E_LABEL"'")] | length) >= 1' \
  "train-e: a preferred node affinity on $E_LABEL, none required"
wait_verdict train-e 120
wait_running train-e
k -n "$TRAIN" get pod train-e -o json >"$SCRATCH/train-e.json"
assert_jq "$SCRATCH/train-e.json" '.status.initContainerStatuses[0].state.terminated.exitCode == 0 and
  .metadata.annotations as $a | $a["iogate.io/verdict"] == "warn" and
  ($a["iogate.io/would-block"] | startswith("preflight would exit 1: /data rule feed-gpus")) and
  ($a["iogate.io/predicted-au"] | tonumber < 0.9)' \
  "train-e: Running after $(since "$START") s; preflight exit 0, verdict warn, predicted AU $(jq -r '.metadata.annotations["iogate.io/predicted-au"]' "$SCRATCH/train-e.json"); iogate.io/would-block: $(jq -r '.metadata.annotations["iogate.io/would-block"]' "$SCRATCH/train-e.json" | cut -c1-160)"
event=$(described_event train-e "Warning +StorageBelowPolicy .*would block in enforce mode") || exit 1
pass "kubectl describe pod train-e: $(sed 's/  */ /g' <<<"$event" | cut -c1-240)"
# Pinned to the node below policy: /validate warns and admits.
train_pod_json train-e-pinned dataset-e '.spec.nodeName = "'"$NAME"'" | del(.metadata.annotations["iogate.io/inject-preflight"])' |
  k apply -f - >"$SCRATCH/pinned-e.out" 2>&1 || fail "train-e-pinned was refused in warn mode: $(cat "$SCRATCH/pinned-e.out")"
grep -q "Warning: iogate: would block in enforce mode: node $NAME sustains 0" "$SCRATCH/pinned-e.out" ||
  fail "train-e-pinned: no admission warning saying what enforce would block: $(cat "$SCRATCH/pinned-e.out")"
wait_running train-e-pinned
pass "train-e-pinned (spec.nodeName $NAME): admitted and Running; kubectl apply: $(grep -m1 'would block' "$SCRATCH/pinned-e.out" | cut -c1-200)"

# iogate audit, read-only, from the recorded verdicts and the chart's policy.
"$IOGATE" audit --policy-configmap "$NS/iogate-policy" --since 1h >"$SCRATCH/audit.txt" 2>&1 ||
  fail "iogate audit: $(cat "$SCRATCH/audit.txt")"
cat "$SCRATCH/audit.txt" >&2
"$IOGATE" audit --policy-configmap "$NS/iogate-policy" --since 1h --output-format json >"$SCRATCH/audit.json" ||
  fail "iogate audit --output-format json failed"
assert_jq "$SCRATCH/audit.json" '.schema == "iogate.audit/v1" and .policy.mode == "warn" and
  any(.nodes[]; .name == "'"$NAME"'" and .tainted == false and (.enforce_would | startswith("taint ")) and .accelerators_sustained["feed-gpus"] == 0) and
  any(.pods[]; .name == "train-e" and .gate == "preflight") and any(.pods[]; .name == "train-e-pinned" and .gate == "node" and (.enforce_would | startswith("kept off node '"$NAME"' (spec.nodeName)"))) and
  .summary.nodes_would_taint >= 1 and .summary.pods_would_block >= 2' \
  "iogate audit: $NAME would be tainted; train-e stopped at preflight and train-e-pinned kept off $NAME in enforce mode"

# The operator switches: enforce blocks as before.
helm upgrade "$RELEASE" "$CHART" -n "$NS" --reuse-values --set policy.mode=enforce --wait --timeout 5m \
  >"$SCRATCH/helm-upgrade-e.out" 2>&1 || fail "helm upgrade --set policy.mode=enforce: $(cat "$SCRATCH/helm-upgrade-e.out")"
[[ $(k get validatingwebhookconfiguration iogate-webhook -o jsonpath='{.webhooks[0].failurePolicy}') == Fail ]] ||
  fail "enforce mode: /validate's failurePolicy is not Fail"
e_tainted() { [[ -n $(k get node "$NAME" -o jsonpath='{.spec.taints[?(@.key=="iogate.io/storage-below-policy")].effect}') ]]; }
wait_until 120 e_tainted || fail "enforce mode: the agent did not taint $NAME: $(k -n "$NS" logs -l app.kubernetes.io/component=node-agent --tail 20 2>&1)"
k get node "$NAME" -o json >"$SCRATCH/node-e2.json"
assert_jq "$SCRATCH/node-e2.json" '.metadata.annotations["iogate.io/would-block"] == null' \
  "enforce mode: $NAME tainted iogate.io/storage-below-policy:NoSchedule, the would-block annotation gone"
train_pod train-e2 dataset-e || fail "train-e2 was refused (it should wait Pending)"
scheduler_said_e2() {
  [[ -n $(k -n "$TRAIN" get events --field-selector involvedObject.name=train-e2,reason=FailedScheduling -o jsonpath='{.items[*].message}') ]]
}
wait_until 60 scheduler_said_e2 || { show_pod train-e2; fail "train-e2: no FailedScheduling Event"; }
[[ $(phase_of train-e2) == Pending ]] || fail "train-e2 is $(phase_of train-e2), not Pending"
pass "enforce mode: a new 1-GPU pod waits Pending: $(k -n "$TRAIN" get events --field-selector involvedObject.name=train-e2,reason=FailedScheduling -o jsonpath='{.items[0].message}')"
k -n "$TRAIN" delete pods --all --wait --timeout 60s >/dev/null || fail "the training pods of (e) were not deleted"
helm uninstall "$RELEASE" -n "$NS" --wait --timeout 3m >"$SCRATCH/helm-uninstall-e.out" 2>&1 ||
  fail "helm uninstall (e): $(cat "$SCRATCH/helm-uninstall-e.out")"
echo "TIMES (default install, warn then enforce): phase $((SECONDS - phase_t0)) s"

# --- (f) helm upgrade from the previous chart's defaults (image-classification, enforce) ---
# The same values with the first release's policy defaults, the node at 4 GPUs and its reads no
# longer capped, so that it meets that floor (max(10,000, 2,500 x 4) IOPS, p99 <= 20 ms). A GPU
# pod admitted then carries the required affinity on randread-iops; `helm upgrade` to the chart's
# defaults must add the accelerators label, keep randread-iops, taint nothing, and leave that pod
# running with the affinity it was admitted with (IgnoredDuringExecution).
phase_t0=$SECONDS
node_throttle_stop
k patch node "$NAME" --subresource=status --type=merge \
  -p "{\"status\":{\"capacity\":{\"$GPU\":\"4\"},\"allocatable\":{\"$GPU\":\"4\"}}}" >/dev/null
helm install "$RELEASE" "$CHART" -n "$NS" -f "$SCRATCH/values-default.yaml" --set policy.profile=image-classification \
  --set policy.mode=enforce --set policy.workload.mode=io --set webhook.validate.failurePolicy=Fail --wait --timeout 5m \
  >"$SCRATCH/helm-install-f.out" 2>&1 || fail "helm install (the previous defaults): $(cat "$SCRATCH/helm-install-f.out")"
# The uninstall above pruned every iogate.io/ key: what is there now, this release's agent wrote.
f_labelled() {
  [[ -n $(k get node "$NAME" -o jsonpath='{.metadata.labels.iogate\.io/randread-iops}') &&
    $(k get node "$NAME" -o jsonpath='{.status.conditions[?(@.type=="StorageBelowPolicy")].status}') == False ]]
}
wait_until 120 f_labelled || fail "the previous defaults: $NAME not judged meeting the 4 KiB floor: $(k get node "$NAME" -o jsonpath='{.metadata.labels}')"
k get node "$NAME" -o json >"$SCRATCH/node-f1.json"
assert_jq "$SCRATCH/node-f1.json" '(.metadata.labels | has("'"$E_LABEL"'") | not) and (.metadata.labels["iogate.io/randread-iops"] | tonumber) > 10000' \
  "previous defaults: $NAME randread-iops $(jq -r '.metadata.labels["iogate.io/randread-iops"]' "$SCRATCH/node-f1.json"), no accelerators label"
train_pod_json train-old dataset-e 'del(.metadata.annotations["iogate.io/inject-preflight"])' | k apply -f - >/dev/null ||
  fail "train-old was not admitted under the previous defaults"
wait_running train-old
k -n "$TRAIN" get pod train-old -o json >"$SCRATCH/train-old.json"
old_affinity=$(jq -c .spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution "$SCRATCH/train-old.json")
assert_jq "$SCRATCH/train-old.json" '[.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[] |
  select(.key == "iogate.io/randread-iops" and .operator == "Gt")] | length >= 1' \
  "train-old: admitted under the previous defaults with a required affinity on randread-iops, Running"
helm upgrade "$RELEASE" "$CHART" -n "$NS" -f "$SCRATCH/values-default.yaml" --reset-values --wait --timeout 5m \
  >"$SCRATCH/helm-upgrade-f.out" 2>&1 || fail "helm upgrade to the new defaults: $(cat "$SCRATCH/helm-upgrade-f.out")"
[[ $(k get validatingwebhookconfiguration iogate-webhook -o jsonpath='{.webhooks[0].failurePolicy}') == Ignore ]] ||
  fail "after the upgrade: /validate's failurePolicy is not Ignore"
f_upgraded() { [[ -n $(k get node "$NAME" -o jsonpath='{.metadata.labels.iogate\.io/accelerators\.feed-gpus}') ]]; }
wait_until 120 f_upgraded || fail "after the upgrade: no $E_LABEL on $NAME"
k get node "$NAME" -o json >"$SCRATCH/node-f2.json"
assert_jq "$SCRATCH/node-f2.json" '(.metadata.labels["'"$E_LABEL"'"] | test("^[0-9]+$")) and (.metadata.labels["iogate.io/randread-iops"] | tonumber) > 0 and
  ([.spec.taints[]? | select(.key | startswith("iogate.io/"))] | length) == 0 and
  (.metadata.annotations["iogate.io/report"] | fromjson | .mode == "warn") and
  (.metadata.annotations | has("iogate.io/demand"))' \
  "after the upgrade: $NAME gains $E_LABEL=$(jq -r '.metadata.labels["'"$E_LABEL"'"]' "$SCRATCH/node-f2.json") and iogate.io/demand, keeps randread-iops, no taint; judged in mode warn"
pass "after the upgrade, $NAME's iogate labels: $(jq -r '.metadata.labels | to_entries[] | select(.key | startswith("iogate.io/")) | "\(.key)=\(.value)"' "$SCRATCH/node-f2.json" | paste -sd ' ')"
k -n "$TRAIN" get pod train-old -o json >"$SCRATCH/train-old2.json"
assert_jq "$SCRATCH/train-old2.json" '.status.phase == "Running" and
  (.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution | tojson) == ('"$(jq -n --arg a "$old_affinity" '$a')"')' \
  "after the upgrade: train-old still Running with the affinity it was admitted with"
k -n "$TRAIN" delete pods --all --wait --timeout 60s >/dev/null || fail "the training pods of (f) were not deleted"
helm uninstall "$RELEASE" -n "$NS" --wait --timeout 3m >"$SCRATCH/helm-uninstall-f.out" 2>&1 ||
  fail "helm uninstall (f): $(cat "$SCRATCH/helm-uninstall-f.out")"
echo "TIMES (upgrade from the previous defaults): phase $((SECONDS - phase_t0)) s"
