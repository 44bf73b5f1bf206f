# Shared by the e2e tests (tests/e2e/test_*.sh): each test gets its own throwaway control plane
# (cluster_lib.sh) in its scratch folder, torn down on every exit path, and these helpers.
# Source it first; it sources tests/integration/lib.sh (tests/lib's check.sh, scratch.sh and
# objects.sh; IOGATE) and exports KUBECONFIG (system:masters) and PATH with the pinned kubectl, helm
# and etcd first.
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TESTS_DIR=${TESTS_DIR:-$(cd "$E2E_DIR/.." && pwd)}
ROOT=$(cd "$TESTS_DIR/.." && pwd)
declare -F on_exit >/dev/null || source "$TESTS_DIR/integration/lib.sh"  # once, if a container test sourced it
source "$E2E_DIR/cluster_lib.sh"
CHART="$ROOT/charts/iogate"

need_tool jq curl openssl python3 setpriv
# The pinned builds: UPSTREAM_BIN (ctest sets it), else tests/upstream/build.sh's cache, which
# ctest fills first (the tools.* tests, fixtures of the e2e tests). A missing build fails loudly with the fix.
if [[ -z "${UPSTREAM_BIN:-}" ]]; then
  UPSTREAM_BIN=${IOGATE_TOOLS_CACHE:-/var/cache/iogate-tools}/bin
fi
for tool in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl helm; do
  [[ -x "$UPSTREAM_BIN/$tool" ]] ||
    fail "$UPSTREAM_BIN/$tool is not built: run bash tests/upstream/build.sh (ctest runs it as the tools.* tests)"
done
export UPSTREAM_BIN PATH="$UPSTREAM_BIN:$PATH"

# kubectl's discovery cache and helm's caches and config live in the scratch folder, not in $HOME:
# a cache shared between clusters (each test's has its own CRDs) goes stale within a run.
export KUBECACHEDIR="$SCRATCH/kube-cache" HELM_CACHE_HOME="$SCRATCH/helm/cache" \
  HELM_CONFIG_HOME="$SCRATCH/helm/config" HELM_DATA_HOME="$SCRATCH/helm/data"
on_exit cluster_down
cluster_up "$SCRATCH/cluster" || fail "the test cluster did not come up (logs above)"
pass "cluster up at $CLUSTER_SERVER ($(kubectl version -o json | jq -r .serverVersion.gitVersion))"

# wait_until SECONDS CMD...: retry CMD every 0.2 s until it succeeds (0) or SECONDS pass (1); a
# readiness wait, never a speed assertion.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# k ARGS...: kubectl as cluster admin.
k() { kubectl "$@"; }

# The objects as the apiserver has them now, as JSON on stdout (as a file: <(pod_json ...)). The
# defaults are the test's NS, POD, PVC and NODE (preflight_world.sh sets them).
pod_json() { k -n "${2:-$NS}" get pod "${1:-$POD}" -o json; }      # [POD [NAMESPACE]]
pvc_json() { k -n "${2:-$NS}" get pvc "${1:-$PVC}" -o json; }      # [PVC [NAMESPACE]]
node_json() { k get node "${1:-$NODE}" -o json; }                  # [NODE]
# pod_annotation POD KEY: the annotation of pod POD in NS, empty if it has none.
pod_annotation() { pod_json "$1" | jq -r --arg k "$2" '.metadata.annotations[$k] // ""'; }
# core_events POD, v1_events POD: the Events about pod POD in NS, as a JSON array, through core/v1
# (what kubectl get events and describe read) and through events.k8s.io/v1.
core_events() { k -n "$NS" get events -o json | jq --arg p "$1" '[.items[] | select(.involvedObject.kind == "Pod" and .involvedObject.name == $p)]'; }
v1_events() { k -n "$NS" get events.v1.events.k8s.io -o json | jq --arg p "$1" '[.items[] | select(.regarding.kind == "Pod" and .regarding.name == $p)]'; }

# make_node NAME [LABEL=VALUE...]: a Node object as a kubelet would register it and keep it:
# Ready, with capacity (cpu, memory, pods, and nvidia.com/gpu as a device plugin advertises it,
# written through the status subresource) and without the not-ready taint that the
# TaintNodesByCondition admission plugin puts on a new Node (no kubelet here clears it).
make_node() {
  local name=$1; shift
  local labels='{"kubernetes.io/hostname":"'"$name"'","kubernetes.io/os":"linux"}' kv
  for kv in "$@"; do
    labels=$(jq -c --arg k "${kv%%=*}" --arg v "${kv#*=}" '. + {($k): $v}' <<<"$labels")
  done
  jq -n --arg n "$name" --argjson l "$labels" \
    '{apiVersion:"v1",kind:"Node",metadata:{name:$n,labels:$l}}' | kubectl create -f - >/dev/null
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  kubectl patch node "$name" --subresource=status --type=merge -p "$(jq -nc --arg t "$now" '{status:{
    capacity:{cpu:"8",memory:"32Gi",pods:"110","nvidia.com/gpu":"4"},
    allocatable:{cpu:"8",memory:"32Gi",pods:"110","nvidia.com/gpu":"4"},
    conditions:[{type:"Ready",status:"True",reason:"KubeletReady",message:"kubelet is posting ready status",
                 lastHeartbeatTime:$t,lastTransitionTime:$t}],
    nodeInfo:{kubeletVersion:"v1.37.2",architecture:"amd64",operatingSystem:"linux"}}}')" >/dev/null
  kubectl taint node "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
}

# sa_token NAMESPACE SERVICEACCOUNT [POD]: a token for the account. With POD (a pod of NAMESPACE
# running as the account): bound to that pod as the kubelet projects one into it, so it carries the
# authentication.kubernetes.io/pod-name and pod-uid claims (and node-name when the pod is on a
# node), which the chart's least-reach policies require of the preflight and node agent accounts.
# Without POD: bound to no object (kubectl create token's default), so those policies refuse its
# writes: use it only for accounts they do not cover, or to show that refusal.
sa_token() {
  if [[ -n "${3:-}" ]]; then
    local uid
    uid=$(kubectl -n "$1" get pod "$3" -o jsonpath='{.metadata.uid}') || return 1
    kubectl -n "$1" create token "$2" --duration 1h --bound-object-kind Pod --bound-object-name "$3" \
      --bound-object-uid "$uid"
  else
    kubectl -n "$1" create token "$2" --duration 1h
  fi
}

# node_agent_token NAMESPACE SERVICEACCOUNT NODE: the token the kubelet of NODE projects into the
# node agent's DaemonSet pod there: bound to a pod on NODE running as the account, so it carries
# the authentication.kubernetes.io/node-name claim the node agent's least-reach policy matches
# against the Node it writes. The pod (iogate-agent-NODE, created once, never run: no kubelet
# here) stands for the DaemonSet's; it tolerates every taint, as the agent's pods stay on nodes
# they taint, so the taint manager never evicts it (which would revoke the token).
node_agent_token() {
  local ns=$1 sa=$2 node=$3 pod="iogate-agent-$3"
  if ! kubectl -n "$ns" get pod "$pod" >/dev/null 2>&1; then
    jq -n --arg ns "$ns" --arg name "$pod" --arg node "$node" --arg sa "$sa" '{apiVersion: "v1", kind: "Pod",
      metadata: {name: $name, namespace: $ns, labels: {"iogate.io/e2e": "token-holder"}},
      spec: {nodeName: $node, serviceAccountName: $sa, restartPolicy: "Always", tolerations: [{operator: "Exists"}],
        containers: [{name: "node-agent", image: "registry.k8s.io/pause:3.10"}]}}' |
      kubectl create -f - >/dev/null || return 1
  fi
  sa_token "$ns" "$sa" "$pod"
}

# as_pod NAMESPACE TOKEN CMD...: CMD as a container would run it: in its own mount namespace with
# the service-account token, the cluster CA and the namespace at
# /var/run/secrets/kubernetes.io/serviceaccount (a tmpfs seen by CMD alone), and
# KUBERNETES_SERVICE_HOST/PORT pointing at the apiserver. Root only (unshare -m).
as_pod() {
  local ns=$1 token=$2; shift 2
  local sa="$SCRATCH/sa.$RANDOM"
  mkdir -p "$sa"
  printf '%s' "$token" >"$sa/token"
  printf '%s' "$ns" >"$sa/namespace"
  cp "$CLUSTER_CA" "$sa/ca.crt"
  local hostport=${CLUSTER_SERVER#https://}
  env -u KUBECONFIG KUBERNETES_SERVICE_HOST="${hostport%:*}" KUBERNETES_SERVICE_PORT="${hostport##*:}" \
    unshare -m -- bash -c 'mount --make-rprivate / &&
      mount -t tmpfs -o size=1m tmpfs /var/run/secrets/kubernetes.io/serviceaccount &&
      cp "$0"/token "$0"/namespace "$0"/ca.crt /var/run/secrets/kubernetes.io/serviceaccount/ &&
      exec "$@"' "$sa" "$@"
}

# as_pod's mount point must exist on the host's root file system. Made here, at the top level (as_pod
# may run in a subshell, whose on_exit would be lost), and removed on exit by rmdir: only while
# empty, and only what this test created.
if [[ $(id -u) -eq 0 && ! -d /var/run/secrets/kubernetes.io/serviceaccount ]]; then
  for d in /var/run/secrets /var/run/secrets/kubernetes.io /var/run/secrets/kubernetes.io/serviceaccount; do
    [[ -d $d ]] || { mkdir "$d"; on_exit "rmdir $d"; }
  done
fi

# start_webhook_pod LOG NAMESPACE TOKEN ARGS...: `iogate ARGS...` (a webhook) in the background,
# in-cluster as as_pod runs it, logging to LOG, stopped on exit; waits until it serves and checks
# that it took the in-cluster configuration. Sets WEBHOOK_PID.
start_webhook_pod() {
  local log=$1 ns=$2 token=$3
  shift 3
  as_pod "$ns" "$token" bash -c 'echo $$ >"$0"; exec "$@"' "$SCRATCH/webhook.pid" "$IOGATE" "$@" >/dev/null 2>"$log" &
  wait_until 20 grep -q 'serving /mutate' "$log" || fail "iogate webhook not serving after 20 s: $(cat "$log")"
  [[ -n ${WEBHOOK_PID:-} ]] || on_exit stop_webhook
  WEBHOOK_PID=$(cat "$SCRATCH/webhook.pid")
  grep -q 'api: in-cluster (KUBERNETES_SERVICE_HOST=127.0.0.1' "$log" ||
    fail "the webhook does not use the in-cluster config: $(cat "$log")"
}
# stop_webhook: SIGTERM to that webhook if it still runs (and its pid is not reused meanwhile).
stop_webhook() {
  [[ -n ${WEBHOOK_PID:-} && -r /proc/$WEBHOOK_PID/cmdline ]] &&
    tr '\0' ' ' </proc/"$WEBHOOK_PID"/cmdline | grep -q "^$IOGATE webhook " && kill -TERM "$WEBHOOK_PID"
}
# shutdown_webhook LOG: SIGTERM, and the webhook gone within 20 s.
shutdown_webhook() {
  stop_webhook || fail "iogate webhook (pid $WEBHOOK_PID) is not running: $(tail -5 "$1")"
  wait_until 20 bash -c '! kill -0 "$0"' "$WEBHOOK_PID" || fail "iogate webhook (pid $WEBHOOK_PID) still runs 20 s after SIGTERM"
}

# notes_pod NAME [JQ FILTER]: a training pod as NOTES tells users to write it, created: the
# initContainer, ServiceAccount and volumes of the snippet in $SCRATCH/snippet.json, on NODE in NS,
# 2 GPUs, the dataset PVC mounted at /data; the filter (default: none) edits it first.
notes_pod() {
  local name=$1 edit=${2:-.}
  jq --arg name "$name" --arg ns "$NS" --arg node "$NODE" --arg pvc "$PVC" '{apiVersion: "v1", kind: "Pod",
    metadata: {name: $name, namespace: $ns, labels: {team: "vision", "job-name": "resnet50"},
               annotations: {"example.com/owner": "alice"}},
    spec: {nodeName: $node, serviceAccountName: .spec.serviceAccountName, restartPolicy: "Never",
           initContainers: .spec.initContainers,
           containers: [{name: "train", image: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                         command: ["torchrun", "/data/train.py"],
                         resources: {limits: {"nvidia.com/gpu": "2"}},
                         volumeMounts: [{name: "dataset", mountPath: "/data"}]}],
           volumes: (.spec.volumes + [{name: "dataset", persistentVolumeClaim: {claimName: $pvc}}])}}' \
    "$SCRATCH/snippet.json" | jq "$edit" | k create -f - >"$SCRATCH/create.out" 2>&1 ||
    fail "create pod $name: $(cat "$SCRATCH/create.out")"
}

# helm_install RELEASE NAMESPACE [helm flags...]: the chart, installed for real (no --wait: no
# kubelet runs its pods); fails the test with helm's output.
helm_install() {
  local release=$1 ns=$2; shift 2
  helm install "$release" "$CHART" -n "$ns" --create-namespace "$@" >"$SCRATCH/helm-$release.out" 2>&1 ||
    fail "helm install $release: $(cat "$SCRATCH/helm-$release.out")"
  pass "helm install $release -n $ns${*:+ $*}"
}
