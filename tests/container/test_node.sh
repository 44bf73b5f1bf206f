#!/usr/bin/env bash
# The node agent (`iogate node`) in the real image under the real Docker Engine, run as the
# chart's DaemonSet runs its pod, against a real throwaway control plane (tests/e2e/lib.sh):
#   - the pod spec is the chart's own (helm template, the values of a real helm install), with
#     nodeAgent.paths set to a data path that is ext4 on a loop device mounted on this host (its
#     backing file on the host's disk); pod_docker_args maps it to `docker run` flags: uid 0
#     without capabilities, read-only root, no-new-privileges, the default seccomp profile, the
#     chart's memory and CPU limits; the host's /proc and /sys read-only at /host (hostPath
#     volumes), the data path at its host path, the policy ConfigMap at /etc/iogate, NODE_NAME
#     from spec.nodeName; and what the kubelet adds: the chart's node ServiceAccount token, the CA
#     and the namespace at /var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST/PORT.
#     The DaemonSet's args plus --once (and JSON output), so that the container exits;
#   - the same command as a host process (the same policy, path and token; no --root) for a second
#     Node: the iogate.io/* labels the two agents wrote, read back with kubectl, are equal but for
#     the IOPS figures (printed as a host/container ratio in a loose band: never a timing assertion);
#   - detection in the container (the agent's report, and `iogate detect --root /host` in the same
#     pod spec) resolves the loop device and its backing file exactly as on the host;
#   - the test file was written and is gone; the container's memory peak (its cgroup's) stays
#     under the chart's nodeAgent memory limit.
source "$(dirname "$0")/lib.sh"
need_image
container_cluster

NS=iogate-system
loop_volume data 1g
DATA=$LOOP_DIR
# The DaemonSet mounts each data path with mountPropagation HostToContainer (rslave), which the
# runtime (dockerd, containerd's CRI alike) refuses on a private mount: "is mounted on ... but it is
# not a shared or slave mount". On a systemd node every mount is shared; this machine's root is
# private, so the loop volume is made shared as a node's disk mount would be.
mount --make-shared "$DATA" || fail "mount --make-shared $DATA"
pass "data path $DATA: ext4 on $LOOP_DEV, backing file $LOOP_IMG"

# --- the chart: rendered, and installed with the same values (its ServiceAccount and RBAC) ---
# The policy is the 4k random-read profile (image-classification, enforced), shortened, with thresholds far
# from any disk's figures, so that the outcome (pass) and tier (ok) do not hang on the disk's
# noise and host and container must agree on them. busy_util 100%: the disk is shared with builds.
cat >"$SCRATCH/values.yaml" <<V
nodeAgent:
  paths: [{name: data, hostPath: "$DATA"}]
webhook: {enabled: false}
preflight: {enabled: false}
policy:
  profile: image-classification
  mode: enforce
  workload: {runtime: 3s, ramp: 500ms, size: 64m}
  rules: [{name: gpu-feed, min_iops_per_gpu: 10}]
  node: {busy_util: 100%, fast_min_iops: 1000000000}
V
chart_render "$SCRATCH/chart.json" -f "$SCRATCH/values.yaml"
helm_install iogate "$NS" -f "$SCRATCH/values.yaml"
DS=$(jq -r 'first(.[] | select(.kind == "DaemonSet")) | .metadata.name' "$SCRATCH/chart.json")
pod_spec "$SCRATCH/chart.json" DaemonSet "$DS" >"$SCRATCH/spec.json"
assert_jq --arg d "$DATA" "$SCRATCH/spec.json" '(.volumes | map({(.name): .hostPath.path}) | add) as $hp | .containers[0] as $c
  | ($c.args | index("--root")) as $i | $c.name == "node-agent" and $i != null and $c.args[$i + 1] == "/host"
  and ([$c.volumeMounts[] | select($hp[.name] and .mountPath != $d) | [.mountPath, $hp[.name], .readOnly]]
       == [["/host/proc", "/proc", true], ["/host/sys", "/sys", true]])
  and any($c.volumeMounts[]; .mountPath == $d and $hp[.name] == $d and .readOnly == false)' \
  "DaemonSet $DS: --root /host; hostPath /proc and /sys read-only at /host/proc, /host/sys; $DATA read-write at its host path"
SA=$(jq -r .serviceAccountName "$SCRATCH/spec.json")
LIMIT=$(jq -r '.containers[0].resources.limits.memory' "$SCRATCH/spec.json")
[[ $LIMIT =~ ^([0-9]+)(Mi|Gi)$ ]] || fail "the chart's nodeAgent memory limit is '$LIMIT': this test reads Mi or Gi"
shift_by=20; [[ ${BASH_REMATCH[2]} == Gi ]] && shift_by=30
LIMIT_BYTES=$((BASH_REMATCH[1] << shift_by))
# The policy ConfigMap's file, as the kubelet writes the configMap volume (items: policy.yaml).
mkdir -p "$SCRATCH/policy"
jq -r 'first(.[] | select(.kind == "ConfigMap" and (.data["policy.yaml"] // null) != null)) | .data["policy.yaml"]' \
  "$SCRATCH/chart.json" >"$SCRATCH/policy/policy.yaml"
# What the kubelet projects into every pod with a ServiceAccount: a bound token, the CA, the namespace.
mkdir -p "$SCRATCH/sa"
printf '%s' "$NS" >"$SCRATCH/sa/namespace"
cp "$CLUSTER_CA" "$SCRATCH/sa/ca.crt"

# Two Nodes as kubelets register them (4 GPUs each): one for the container, one for the host process.
make_node ctr-node
make_node host-node
# The container's token as the kubelet of ctr-node projects it into the DaemonSet's pod there: its
# node-name claim is what the chart's least-reach policy lets write ctr-node (and only it).
node_agent_token "$NS" "$SA" ctr-node >"$SCRATCH/sa/token"

# --- the agent in the container ---
# The DaemonSet's args, plus --once and JSON output: one round, the report on stdout, exit.
jq '.containers[0].args += ["--once", "--output-format", "json"]' "$SCRATCH/spec.json" >"$SCRATCH/spec-once.json"
set +e
docker_pod node "$SCRATCH/spec-once.json" node-agent "$(jq -nc --arg p "$SCRATCH/policy" '{policy: $p}')" \
  '{"spec.nodeName": "ctr-node"}' \
  --mount "type=bind,src=$SCRATCH/sa,dst=/var/run/secrets/kubernetes.io/serviceaccount,readonly" \
  --env "KUBERNETES_SERVICE_HOST=$CLUSTER_HOST" --env "KUBERNETES_SERVICE_PORT=$CLUSTER_PORT" \
  >"$SCRATCH/ctr.json" 2>"$SCRATCH/ctr.log"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "container: exit $rc, want 0: $(tail -8 "$SCRATCH/ctr.log")"
pass "container: iogate $(jq -r '.containers[0].args | join(" ")' "$SCRATCH/spec-once.json") exited 0"
assert_no_test_files "$DATA"
# What the engine ran: the pod's securityContext, limits and mounts as the kubelet would ask for them.
docker inspect "$TEST_ID-node" >"$SCRATCH/ctr-inspect.json"
assert_jq --arg d "$DATA" --argjson mem "$LIMIT_BYTES" "$SCRATCH/ctr-inspect.json" '.[0] | (.Mounts | map({(.Destination): [.Source, .RW, .Propagation]}) | add) as $m
  | .Config.User == "0:0" and .HostConfig.ReadonlyRootfs and .HostConfig.CapDrop == ["ALL"]
  and any(.HostConfig.SecurityOpt[]; startswith("no-new-privileges")) and (any(.HostConfig.SecurityOpt[]; test("seccomp")) | not)
  and .HostConfig.Memory == $mem and .HostConfig.MemorySwap == $mem
  and $m["/host/proc"][:2] == ["/proc", false] and $m["/host/sys"][:2] == ["/sys", false] and $m[$d] == [$d, true, "rslave"]' \
  "container: user 0:0, read-only root, cap-drop ALL, no-new-privileges, default seccomp, memory $LIMIT; /proc and /sys read-only at /host, $DATA read-write (rslave)"

# --- the same command as a host process ---
# The DaemonSet's args with the host's paths: the policy file, no --root (the host's own /proc and
# /sys), metrics on a free port; in-cluster with a token bound to a pod on host-node (as_pod),
# NODE_NAME host-node.
mapfile -t HOST_ARGS < <(jq -r --arg pol "$SCRATCH/policy/policy.yaml" '.containers[0].args as $a
  | [range(0; $a | length) as $i | if $i > 0 and $a[$i - 1] == "--root" then empty
     elif $a[$i] == "--root" then empty elif $i > 0 and $a[$i - 1] == "--listen" then "127.0.0.1:0"
     elif $a[$i] == "/etc/iogate/policy.yaml" then $pol else $a[$i] end] | .[]' "$SCRATCH/spec-once.json")
# as_pod's mount point: tests/e2e/lib.sh makes it when missing, but a test run beside this one
# (by hand; ctest's resource lock serialises them) may have removed it on its exit since.
for d in /var/run/secrets /var/run/secrets/kubernetes.io /var/run/secrets/kubernetes.io/serviceaccount; do
  [[ -d $d ]] || { mkdir "$d"; on_exit "rmdir $d"; }
done
set +e
as_pod "$NS" "$(node_agent_token "$NS" "$SA" host-node)" env NODE_NAME=host-node "$IOGATE" "${HOST_ARGS[@]}" \
  >"$SCRATCH/host.json" 2>"$SCRATCH/host.log"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "host: exit $rc, want 0: $(tail -8 "$SCRATCH/host.log")"
pass "host: iogate ${HOST_ARGS[*]} exited 0"
assert_no_test_files "$DATA"

# --- the two reports: a measurement of a test file written for it, written to the API ---
for who in ctr host; do
  assert_jq --arg d "$DATA" --arg n "$who-node" "$SCRATCH/$who.json" '.outcome == "pass" and .tier == "ok" and .node == $n and .gpus == 4
    and .gpus_from == "status.capacity" and .api.state == "ok" and (.paths | length) == 1
    and (.paths[0] | .path == $d and .name == "data" and .state == "measured" and .measurement.wrote_test_file
         and (.measurement.read_existing_files | not) and .measurement.direct and (.measurement.page_cache | not)
         and .measurement.iops > 0)' \
    "$who: outcome pass, tier ok, 4 GPUs from status.capacity, written (api ok); $DATA measured by O_DIRECT I/O on a test file it wrote"
done
# Detection in the container (the host's mount table and sysfs through /host) names what the host
# process found: the same loop device, mount, class and reason (which names the backing file's disk).
jq -n --slurpfile c "$SCRATCH/ctr.json" --slurpfile h "$SCRATCH/host.json" \
  '$c[0].paths[0].storage == $h[0].paths[0].storage and $c[0].paths[0].storage != {}
   and $c[0].paths[0].measurement.device_class == $h[0].paths[0].measurement.device_class
   and $c[0].paths[0].measurement.leaf_classes == $h[0].paths[0].measurement.leaf_classes' >/dev/null ||
  fail "storage: container $(jq -c '.paths[0].storage' "$SCRATCH/ctr.json"), host $(jq -c '.paths[0].storage' "$SCRATCH/host.json")"
assert_jq --arg dev "$LOOP_DEV" --arg d "$DATA" --arg img "$LOOP_IMG" "$SCRATCH/ctr.json" '.paths[0].storage | .source == $dev and .mount_point == $d
  and .fs_type == "ext4" and (.reason | startswith("\($dev | ltrimstr("/dev/")) (loop) → \($img) (file) → "))' \
  "storage equal in both reports: $(jq -r '.paths[0].storage | "\(.device_class) on \(.source), \(.fs_type) at \(.mount_point)"' "$SCRATCH/ctr.json")"

# `iogate detect` in the same pod spec (args replaced), against the host's `iogate detect`.
jq --arg d "$DATA" '.containers[0].args = ["detect", "--root", "/host", $d, "--output-format", "json"]' \
  "$SCRATCH/spec.json" >"$SCRATCH/spec-detect.json"
docker_pod detect "$SCRATCH/spec-detect.json" node-agent "$(jq -nc --arg p "$SCRATCH/policy" '{policy: $p}')" \
  '{"spec.nodeName": "ctr-node"}' >"$SCRATCH/ctr-detect.json" 2>"$SCRATCH/ctr-detect.log" ||
  fail "detect in the container: $(cat "$SCRATCH/ctr-detect.log")"
"$IOGATE" detect "$DATA" --output-format json >"$SCRATCH/host-detect.json"
assert_jq --slurpfile h "$SCRATCH/host-detect.json" --arg dev "$(basename "$LOOP_DEV")" --arg img "$LOOP_IMG" \
  "$SCRATCH/ctr-detect.json" '. == $h[0] and .stack[0].kind == "loop" and .stack[0].name == $dev and .stack[0].backing_file == $img
  and .stack[0].children[0].kind == "file" and .stack[0].children[0].name == $img' \
  "detect in the container: $(basename "$LOOP_DEV") (loop) over $LOOP_IMG, class $(jq -r .class "$SCRATCH/host-detect.json"): the host's detect, field for field"

# --- the labels each agent wrote on its Node, read back ---
k get node ctr-node -o json >"$SCRATCH/ctr-node.json"
k get node host-node -o json >"$SCRATCH/host-node.json"
ours() { jq -c '.metadata.labels | with_entries(select(.key | startswith("iogate.io/")))' "$1"; }
CTR_LABELS=$(ours "$SCRATCH/ctr-node.json") HOST_LABELS=$(ours "$SCRATCH/host-node.json")
jq -en --argjson c "$CTR_LABELS" --argjson h "$HOST_LABELS" --slurpfile r "$SCRATCH/ctr.json" '
  def noiops: with_entries(select(.key | startswith("iogate.io/randread-iops") | not));
  ($r[0].paths[0].measurement | .iops | round | tostring) as $iops
  | ($c | noiops) == ($h | noiops) and ($c | keys) == ($h | keys)
  and $c["iogate.io/disk-class"] == $r[0].paths[0].measurement.device_class
  and $c["iogate.io/disk-class.data"] == $c["iogate.io/disk-class"] and $c["iogate.io/tier"] == "ok"
  and $c["iogate.io/randread-iops"] == $iops and $c["iogate.io/randread-iops.data"] == $iops' >/dev/null ||
  fail "labels: container's Node $CTR_LABELS, host's Node $HOST_LABELS"
pass "labels equal but for the IOPS: $(jq -r 'with_entries(select(.key | startswith("iogate.io/randread-iops") | not)) | to_entries | map("\(.key)=\(.value)") | join(" ")' <<<"$CTR_LABELS")"
assert_jq --arg d "$DATA" "$SCRATCH/ctr-node.json" '(.metadata.annotations["iogate.io/report"] | fromjson | .outcome == "pass" and .gpus == 4
  and (.paths | length) == 1) and ([(.spec.taints // [])[] | select(.key | startswith("iogate.io/"))] == [])' \
  "ctr-node: annotation iogate.io/report (pass, 4 GPUs, the data path) and no taint of iogate's"
CTR_IOPS=$(jq -r '.["iogate.io/randread-iops"]' <<<"$CTR_LABELS")
HOST_IOPS=$(jq -r '.["iogate.io/randread-iops"]' <<<"$HOST_LABELS")
RATIO=$(jq -n "$HOST_IOPS / $CTR_IOPS * 100 | round / 100")
# A sanity band, not a speed check: a factor of ten either way means something other than the disk
# was measured (the page cache, a throttled cgroup, another file system).
jq -en "$RATIO > 0.1 and $RATIO < 10" >/dev/null ||
  fail "randread IOPS host $HOST_IOPS, container $CTR_IOPS: ratio $RATIO outside 0.1-10"
pass "randread IOPS host $HOST_IOPS, container $CTR_IOPS: host/container $RATIO (band 0.1-10, not a timing check)"

# --- memory: the cgroup's peak, against the chart's limit ---
PEAK=$(memory_peak node)
((PEAK > 0 && PEAK < LIMIT_BYTES)) || fail "memory peak $PEAK bytes, chart limit $LIMIT ($LIMIT_BYTES bytes)"
pass "memory peak $((PEAK >> 20)) MiB ($PEAK bytes) under the chart's nodeAgent limit $LIMIT ($((PEAK * 100 / LIMIT_BYTES))%)"
assert_no_test_files "$DATA"
