#!/usr/bin/env bash
# A real node (tests/e2e/node_lib.sh: the pinned kubelet, a containerd of its own with runc and
# the bridge CNI plugin, a pause image built here) registered against the throwaway control plane,
# running the project's image (container.build's IOGATE_TEST_IMAGE, imported from the Docker
# Engine) as a pod. Shows:
#   - the kubelet registers Node NAME, authenticated as system:node:NAME (the Node authorizer),
#     and reports it Ready on cgroup v1 (failCgroupV1: false), with its runtime and capacity;
#   - the scheduler places a pod on it, containerd runs the sandbox (the local pause image) and the
#     iogate container (imagePullPolicy Never: no registry) as the chart runs its pods (non-root
#     65532, read-only root, no capabilities, RuntimeDefault seccomp), the pod gets an address of
#     the node's pod CIDR from the bridge CNI, and it completes (Succeeded, exit code 0);
#   - the kubelet's API refuses anonymous requests and asks the apiserver whether a user may use it
#     (authentication webhook and x509, authorization webhook);
#   - `kubectl logs` (apiserver -> kubelet with the apiserver's client certificate -> containerd's
#     log file) gives what the image's iogate printed, the host build's version;
#   - a pod reaches the apiserver as in a cluster: at the kubernetes Service's address (the
#     apiserver on the Docker bridge's gateway, tests/container/lib.sh container_cluster; node_up's
#     DNAT in place of kube-proxy) with the token the kubelet projected, bound to the pod and its
#     node (pod-name and node-name claims, which the chart's least-reach policies match): the
#     pinned kubectl, alone in an image, runs `kubectl auth whoami` in-cluster;
#   - node_down leaves no process, mount, bridge, cgroup or folder of the node behind, and the
#     machine's Docker Engine still answers.
# Times (node up, pod to completion) are printed, never asserted.
E2E_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The container tests' preamble (root, the Docker Engine, IMAGE) and their cluster: the apiserver
# on the Docker bridge's gateway, where pods reach it.
source "$E2E_HERE/../container/lib.sh"
need_image
container_cluster
source "$E2E_HERE/node_lib.sh"

NAME=$(node_default_name) ||
  fail "the hostname $(hostname) does not resolve to an address of this machine; the apiserver reaches the kubelet by the node's name"
on_exit node_down
t0=$SECONDS
node_up "$SCRATCH/node" "$NAME" || fail "the node did not come up (logs above)"
up_s=$((SECONDS - t0))
k get node "$NAME" -o json --show-managed-fields >"$SCRATCH/node.json"
assert_jq "$SCRATCH/node.json" '(.status.conditions[] | select(.type == "Ready") | .status == "True" and .reason == "KubeletReady")
  and ([.metadata.managedFields[] | select(.manager == "kubelet" and .operation == "Update")] | length) > 0' \
  "Node $NAME registered by the kubelet and Ready (up in ${up_s} s)"
assert_jq "$SCRATCH/node.json" '.status.nodeInfo.kubeletVersion == "'"$(kubectl version -o json | jq -r .serverVersion.gitVersion)"'"
  and (.status.nodeInfo.containerRuntimeVersion | startswith("containerd://"))' \
  "kubelet $(jq -r .status.nodeInfo.kubeletVersion "$SCRATCH/node.json") (the apiserver's version) on $(jq -r .status.nodeInfo.containerRuntimeVersion "$SCRATCH/node.json")"
assert_jq "$SCRATCH/node.json" '(.status.capacity.cpu | tonumber) >= 1 and (.status.allocatable.pods | tonumber) > 0 and
  ([.spec.taints[]? | select(.effect == "NoSchedule" or .effect == "NoExecute")] | length) == 0' \
  "capacity from the machine (cpu $(jq -r .status.capacity.cpu "$SCRATCH/node.json"), memory $(jq -r .status.capacity.memory "$SCRATCH/node.json")), no scheduling taint"
# The kubelet's own identity: its Lease in kube-node-lease, which only system:node:NAME may write.
wait_until 30 k -n kube-node-lease get lease "$NAME" || fail "no Lease for $NAME: the kubelet does not heartbeat"
pass "the kubelet heartbeats its Lease kube-node-lease/$NAME"
# The kubelet's own API authenticates and authorizes as the apiserver does: no anonymous access,
# a certificate of the cluster's CA for a user RBAC gives nothing is refused (a SubjectAccessReview
# the kubelet asks), the cluster admin is let in.
kubelet_get() {  # CURL ARGS...: the HTTP status of GET /pods on the kubelet
  curl -s -o /dev/null -w '%{http_code}' --cacert "$CLUSTER_CA" "$@" "$NODE_KUBELET_URL/pods"
}
pki_sign "$CLUSTER_DIR/pki" nobody "/CN=iogate-e2e-nobody" "$(pki_client_ext)"
anon=$(kubelet_get) nobody=$(kubelet_get --cert "$CLUSTER_DIR/pki/nobody.crt" --key "$CLUSTER_DIR/pki/nobody.key")
admin=$(kubelet_get --cert "$CLUSTER_DIR/pki/admin.crt" --key "$CLUSTER_DIR/pki/admin.key")
[[ $anon == 401 && $nobody == 403 && $admin == 200 ]] ||
  fail "GET $NODE_KUBELET_URL/pods: anonymous $anon (want 401), a user without RBAC $nobody (want 403), the admin $admin (want 200)"
pass "the kubelet's API ($NODE_KUBELET_URL, serving certificate of the cluster's CA): anonymous 401, a user without RBAC 403 (webhook authorization), the admin 200"

t0=$SECONDS
node_docker_image "$IMAGE" || fail "the image $IMAGE did not import into the node's containerd"
pass "$IMAGE imported into the node's containerd in $((SECONDS - t0)) s"

# --- a pod of the image, to completion ---
k create namespace kubelet-pod >/dev/null
jq -n --arg image "$IMAGE" '{apiVersion: "v1", kind: "Pod", metadata: {name: "iogate-version", namespace: "kubelet-pod"},
  spec: {restartPolicy: "Never", terminationGracePeriodSeconds: 5,
    securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: {type: "RuntimeDefault"}},
    containers: [{name: "iogate", image: $image, imagePullPolicy: "Never", args: ["--version"],
      securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}}}]}}' |
  k create -f - >/dev/null
t0=$SECONDS
pod_done() {
  local phase
  phase=$(k -n kubelet-pod get pod iogate-version -o jsonpath='{.status.phase}')
  [[ $phase == Succeeded || $phase == Failed ]]
}
wait_until 120 pod_done || {
  k -n kubelet-pod describe pod iogate-version >&2 || true
  node_fail "the pod did not complete in 120 s" || true
  fail "the pod did not complete (its description and the node's logs above)"
}
run_s=$((SECONDS - t0))
k -n kubelet-pod get pod iogate-version -o json >"$SCRATCH/pod.json"
assert_jq "$SCRATCH/pod.json" '.spec.nodeName == "'"$NAME"'"' "the scheduler placed the pod on $NAME"
assert_jq "$SCRATCH/pod.json" '.status.phase == "Succeeded" and
  .status.containerStatuses[0].state.terminated.exitCode == 0 and .status.containerStatuses[0].state.terminated.reason == "Completed"' \
  "the pod ran to completion: Succeeded, exit code 0 ($run_s s from create)"
assert_jq "$SCRATCH/pod.json" '(.status.containerStatuses[0].imageID | length) > 0 and
  (.status.containerStatuses[0].containerID | startswith("containerd://"))' "containerd ran it: $(jq -r '.status.containerStatuses[0].containerID' "$SCRATCH/pod.json" | cut -c1-25)..."
pod_ip=$(jq -r '.status.podIP // empty' "$SCRATCH/pod.json")
python3 -c 'import ipaddress, sys; sys.exit(ipaddress.ip_address(sys.argv[1]) not in ipaddress.ip_network(sys.argv[2]))' \
  "${pod_ip:-none}" "$NODE_POD_CIDR" 2>/dev/null ||
  fail "the pod's address ${pod_ip:-none} is not of the node's pod CIDR $NODE_POD_CIDR (bridge CNI)"
pass "the pod's address $pod_ip, from the bridge CNI's $NODE_POD_CIDR"

k -n kubelet-pod logs iogate-version >"$SCRATCH/logs" 2>"$SCRATCH/logs.err" ||
  fail "kubectl logs: $(cat "$SCRATCH/logs.err")"
want=$("$IOGATE" --version | head -1)
got=$(head -1 "$SCRATCH/logs")
[[ "$got" == "$want" ]] || fail "kubectl logs gave '$got', the host's iogate says '$want'"
pass "kubectl logs (apiserver -> kubelet -> containerd): '$got', as the host build"

# --- a pod talks to the apiserver in-cluster: the Service's address, the projected token ---
kctx="$SCRATCH/kubectl-image"
mkdir -p "$kctx"
cp "$UPSTREAM_BIN/kubectl" "$kctx/kubectl"
printf 'FROM scratch\nCOPY kubectl /kubectl\nUSER 65532:65532\nENTRYPOINT ["/kubectl"]\n' >"$kctx/Dockerfile"
KIMAGE=iogate.test/kubectl:e2e
docker build -q -t "$KIMAGE" "$kctx" >"$SCRATCH/kimage.log" 2>&1 || fail "docker build of $KIMAGE: $(cat "$SCRATCH/kimage.log")"
on_exit "docker rmi -f $KIMAGE"
node_docker_image "$KIMAGE" || fail "$KIMAGE did not import"
jq -n --arg image "$KIMAGE" '{apiVersion: "v1", kind: "Pod", metadata: {name: "whoami", namespace: "kubelet-pod"},
  spec: {restartPolicy: "Never", terminationGracePeriodSeconds: 5,
    containers: [{name: "kubectl", image: $image, imagePullPolicy: "Never", args: ["auth", "whoami", "-o", "json"]}]}}' |
  k create -f - >/dev/null
whoami_done() { [[ $(k -n kubelet-pod get pod whoami -o jsonpath='{.status.phase}') == Succeeded ]]; }
wait_until 120 whoami_done || {
  k -n kubelet-pod logs whoami >&2 || true
  fail "the in-cluster kubectl pod did not succeed: $(k -n kubelet-pod get pod whoami -o jsonpath='{.status.phase} {.status.containerStatuses[0].state}')"
}
k -n kubelet-pod logs whoami >"$SCRATCH/whoami.json" || fail "kubectl logs whoami"
svc=$(k -n default get service kubernetes -o jsonpath='{.spec.clusterIP}')
assert_jq "$SCRATCH/whoami.json" '.status.userInfo.username == "system:serviceaccount:kubelet-pod:default" and
  .status.userInfo.extra["authentication.kubernetes.io/pod-name"] == ["whoami"] and
  .status.userInfo.extra["authentication.kubernetes.io/node-name"] == ["'"$NAME"'"]' \
  "a pod reached the apiserver at the kubernetes Service ($svc:443) as system:serviceaccount:kubelet-pod:default, its token bound to pod whoami on node $NAME"
k -n kubelet-pod delete pod whoami --wait --timeout 60s >/dev/null || fail "pod whoami was not deleted in 60 s"

# --- the pod deleted through the API: the kubelet tears its sandbox down ---
k -n kubelet-pod delete pod iogate-version --wait --timeout 60s >/dev/null || fail "the pod was not deleted in 60 s"
wait_until 30 bash -c "[[ -z \$(ctr --address '$NODE_CONTAINERD_SOCK' -n k8s.io tasks ls -q) ]]" ||
  fail "containerd still runs tasks after the pod's deletion: $(node_ctr tasks ls)"
pass "the pod deleted: the kubelet stopped its sandbox, containerd runs no task"

# --- teardown leaves nothing ---
dir=$NODE_DIR bridge=$NODE_BRIDGE cgroot=$NODE_CGROUP_ROOT sock=$NODE_CONTAINERD_SOCK
node_down
[[ ! -e "$dir" ]] || fail "node_down left $dir"
left=$(findmnt -rn -o TARGET | grep -F "$dir/" | head -3 || true)
[[ -z "$left" ]] || fail "node_down left mounts: $left"
! ip link show "$bridge" >/dev/null 2>&1 || fail "node_down left the bridge $bridge"
left=$(ls -d /sys/fs/cgroup/*/"${cgroot#/}" 2>/dev/null | head -3 || true)
[[ -z "$left" ]] || fail "node_down left cgroups: $left"
left=$(node_pids_using "$sock" | head -3)
[[ -z "$left" ]] || fail "node_down left processes: $(for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done)"
! iptables -t nat -S PREROUTING 2>/dev/null | grep -qF "$bridge" || fail "node_down left its DNAT rule: $(iptables -t nat -S PREROUTING 2>/dev/null | grep -F "$bridge")"
docker info >/dev/null 2>&1 || fail "the Docker Engine no longer answers after node_down"
pass "node_down: no process, mount, bridge ($bridge), DNAT rule, cgroup ($cgroot) or folder left; Docker untouched"
