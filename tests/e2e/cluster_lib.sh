# A throwaway Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager
# and kube-scheduler, the pinned upstream builds of tests/upstream. No kubelet: Nodes are objects
# the tests create. Source this file, then:
#
#   cluster_up DIR     start everything with its state under DIR (created; removed by cluster_down)
#                      and wait until /readyz and the controllers answer; exports KUBECONFIG
#                      (system:masters), CLUSTER_SERVER, CLUSTER_CA and CLUSTER_DIR, and sets
#                      CLUSTER_APISERVER_PID
#   cluster_down       stop every process cluster_up started (TERM, then KILL) and remove DIR
#
# Every process is started with a parent-death signal, so a test killed by ctest's timeout takes
# its cluster with it. The caller owns the EXIT trap and calls cluster_down from it.
#
# CLUSTER_HOST (default 127.0.0.1) is the one address the apiserver listens on and is reached at:
# the container tests set it to the Docker bridge's gateway, so that a container in a network
# namespace of its own reaches the apiserver as a pod reaches its Service.
#
# CLUSTER_ENDPOINT_ROUTING=true makes the apiserver dial a webhook (or aggregated API) Service at
# one of its ready endpoints, the pod's address (--enable-aggregator-routing), rather than at its
# ClusterIP: nothing routes ClusterIPs here (no kube-proxy), so a webhook running as a pod of a
# real node (node_lib.sh) is reached that way. Off by default: it refuses an ExternalName Service,
# which e2e.admission points at a webhook running on this host.
#
# The apiserver presents a client certificate to kubelets (system:masters) and verifies theirs
# against the cluster's CA, so a real kubelet (node_lib.sh) authenticates and authorizes it
# (webhook mode) like any other client.
#
# CLUSTER_AUDIT_LOG=FILE turns on the apiserver's audit log (off by default): every request, by
# every user, at level Metadata (who, verb, resource, name, response code, user.extra with a bound
# token's authentication.kubernetes.io/pod-name; no bodies), one JSON object a line per stage:
# ResponseComplete, and ResponseStarted before it for a watch (never RequestReceived); one
# request is one auditID. Each event is written before the response goes out (--audit-log-mode
# blocking, no batching), so the file is complete once the client has its answer. A relative
# FILE is under DIR, removed with it; cluster_up exports the absolute path. Never rotated
# (--audit-log-maxsize 0: a plain file; the default rotates at 100 MB).

CLUSTER_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$CLUSTER_LIB_DIR/../lib/pki.sh"
CLUSTER_PIDS=()
CLUSTER_DIR=""
# The in-cluster Service CIDR: the apiserver gives the kubernetes Service its first address. No
# traffic is sent to it; clients here use 127.0.0.1.
CLUSTER_SERVICE_CIDR=10.96.0.0/16

# cluster_tools: UPSTREAM_BIN (ctest sets it) or the pinned builds, built on first use.
cluster_tools() {
  if [[ -z "${UPSTREAM_BIN:-}" ]]; then
    UPSTREAM_BIN=$(bash "$CLUSTER_LIB_DIR/../upstream/build.sh" --print-bin etcd kube-apiserver) || return 1
  fi
  local t
  for t in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    [[ -x "$UPSTREAM_BIN/$t" ]] || {
      echo "cluster: $UPSTREAM_BIN/$t missing; build it with: bash tests/upstream/build.sh" >&2
      return 1
    }
  done
  export PATH="$UPSTREAM_BIN:$PATH"
}

# cluster_docker_gateway: the Docker Engine's default bridge's gateway address, where a container
# on that bridge (or a pod on a node_lib.sh node, through its own bridge and this host's routes)
# reaches this host: a CLUSTER_HOST that is not loopback and not on any outside network. Status 1
# when the engine has no such bridge.
cluster_docker_gateway() {
  local gw
  gw=$(docker network inspect bridge -f '{{range .IPAM.Config}}{{.Gateway}}{{end}}' 2>/dev/null)
  # Docker 20.10 leaves IPAM's Gateway empty when the daemon picked the subnet: the bridge
  # interface's address is the gateway.
  if [[ -z $gw ]]; then
    local bridge
    bridge=$(docker network inspect bridge -f '{{index .Options "com.docker.network.bridge.name"}}' 2>/dev/null)
    gw=$(ip -4 -o addr show "${bridge:-docker0}" 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
  fi
  [[ $gw =~ ^[0-9.]+$ ]] || return 1
  echo "$gw"
}

# free_ports N: N distinct TCP ports on 127.0.0.1 that were free a moment ago.
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# free_loopback_443: a random loopback address (127.x.y.z) whose port 443 was free a moment ago,
# where a webhook behind an ExternalName Service listens as a pod would on its own address; ""
# when 50 tries found none.
free_loopback_443() {
  python3 - <<'PY'
import random, socket
for _ in range(50):
    a = "127.%d.%d.%d" % (random.randint(1, 254), random.randint(0, 255), random.randint(1, 254))
    s = socket.socket()
    try:
        s.bind((a, 443))
    except OSError:
        continue
    finally:
        s.close()
    print(a)
    break
PY
}

# cluster_pki DIR: CA, apiserver serving pair, client pairs for admin, controller-manager and
# scheduler (tests/lib/pki.sh), and the service-account signing key: RSA, the algorithm every
# Kubernetes version accepts for RS256 tokens.
cluster_pki() {
  local d=$1
  pki_ca "$d" iogate-e2e-ca
  pki_sign "$d" apiserver "/CN=kube-apiserver" "$(pki_server_ext "IP:127.0.0.1,IP:${CLUSTER_HOST:-127.0.0.1},IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local")"
  pki_sign "$d" admin "/O=system:masters/CN=iogate-e2e-admin" "$(pki_client_ext)"
  pki_sign "$d" controller-manager "/CN=system:kube-controller-manager" "$(pki_client_ext)"
  pki_sign "$d" scheduler "/CN=system:kube-scheduler" "$(pki_client_ext)"
  pki_sign "$d" apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$(pki_client_ext)"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/sa.key" 2>/dev/null
  openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  chmod 600 "$d/sa.key"
}

# write_kubeconfig FILE SERVER USER CREDENTIALS [NAMESPACE]: a kubeconfig trusting the cluster's
# CA, for USER with CREDENTIALS (the user's fields as a YAML flow mapping), absolute paths.
write_kubeconfig() {
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "$2", certificate-authority: "$CLUSTER_DIR/pki/ca.crt"}
users:
- name: $3
  user: $4
contexts:
- name: e2e
  context: {cluster: e2e, user: $3${5:+, namespace: $5}}
current-context: e2e
KC
}

# cluster_kubeconfig FILE USER [NAMESPACE]: USER's client pair (pki/USER.crt, .key), to the apiserver.
cluster_kubeconfig() {
  write_kubeconfig "$1" "$CLUSTER_SERVER" "$2" \
    "{client-certificate: \"$CLUSTER_DIR/pki/$2.crt\", client-key: \"$CLUSTER_DIR/pki/$2.key\"}" "${3:-}"
}

# token_kubeconfig FILE SERVER USER TOKEN [NAMESPACE]: a bearer token (a ServiceAccount's) to SERVER.
token_kubeconfig() { write_kubeconfig "$1" "$2" "$3" "{token: \"$4\"}" "${5:-}"; }

# cluster_start NAME CMD...: CMD in the background, logging to DIR/logs/NAME.log, killed (TERM)
# when this shell dies.
cluster_start() {
  local name=$1; shift
  setpriv --pdeathsig TERM -- "$@" >"$CLUSTER_DIR/logs/$name.log" 2>&1 &
  CLUSTER_PIDS+=($!)
}

# tail_logs DIR LINES: the last LINES of every DIR/logs/*.log, on stderr, for a failure message.
tail_logs() {
  local f
  for f in "$1"/logs/*.log; do
    [[ -f "$f" ]] || continue
    echo "--- ${f##*/} (last $2 lines)" >&2
    tail -"$2" "$f" >&2
  done
}

# wait_alive PIDS FAIL PERIOD WHAT SECONDS CMD...: retry CMD every PERIOD s until it succeeds; on
# timeout, or at once when a process of the array named PIDS has died, FAIL MESSAGE.
wait_alive() {
  local -n pids_=$1
  local fail=$2 period=$3 what=$4 limit=$5 pid
  shift 5
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    for pid in "${pids_[@]}"; do
      kill -0 "$pid" 2>/dev/null || { "$fail" "a process exited while waiting for $what"; return 1; }
    done
    ((SECONDS < deadline)) || { "$fail" "$what not ready after ${limit}s"; return 1; }
    sleep "$period"
  done
}

# stop_pids PIDS: stops the processes of the array named PIDS last started first, each TERMed and
# waited for before the next (one started later may depend on one started earlier: an
# apiserver whose etcd is already gone spends some 10 s of its shutdown retrying it, against 1 s
# with etcd up), KILLs what is left after 15 s in all, reaps them all, and empties the array.
stop_pids() {
  local -n pids_=$1
  local i pid deadline=$((SECONDS + 15))
  for ((i = ${#pids_[@]} - 1; i >= 0; i--)); do
    pid=${pids_[i]}
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  pids_=()
}

cluster_fail() {  # MESSAGE: say what failed, with the tail of every log
  echo "cluster: $1" >&2
  tail_logs "$CLUSTER_DIR" 15
  return 1
}

# cluster_wait WHAT SECONDS CMD...: retry CMD every 0.2 s until it succeeds; fail with the logs,
# or at once when one of the cluster's processes has died.
cluster_wait() { wait_alive CLUSTER_PIDS cluster_fail 0.2 "$@"; }

cluster_up() {
  CLUSTER_DIR=${1:?cluster_up DIR}
  cluster_tools || return 1
  mkdir -p "$CLUSTER_DIR/logs" "$CLUSTER_DIR/etcd"
  CLUSTER_DIR=$(cd "$CLUSTER_DIR" && pwd)
  cluster_pki "$CLUSTER_DIR/pki"
  local etcd_port peer_port api_port cm_port sched_port
  read -r etcd_port peer_port api_port cm_port sched_port <<<"$(free_ports 5)"
  CLUSTER_SERVER=https://${CLUSTER_HOST:-127.0.0.1}:$api_port
  CLUSTER_CA=$CLUSTER_DIR/pki/ca.crt
  local pki=$CLUSTER_DIR/pki

  # No fsync: the data is thrown away with the test, and fsync on a shared disk is most of etcd's
  # latency.
  cluster_start etcd etcd --name e2e --data-dir "$CLUSTER_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "e2e=http://127.0.0.1:$peer_port" --unsafe-no-fsync --log-level warn
  cluster_wait etcd 30 curl -sf "http://127.0.0.1:$etcd_port/health"

  local audit=()
  if [[ -n ${CLUSTER_AUDIT_LOG:-} ]]; then
    [[ $CLUSTER_AUDIT_LOG == /* ]] || CLUSTER_AUDIT_LOG=$CLUSTER_DIR/$CLUSTER_AUDIT_LOG
    cat >"$CLUSTER_DIR/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
POLICY
    audit=(--audit-policy-file "$CLUSTER_DIR/audit-policy.yaml" --audit-log-path "$CLUSTER_AUDIT_LOG"
      --audit-log-format json --audit-log-mode blocking --audit-log-maxsize 0)
    export CLUSTER_AUDIT_LOG
  fi
  # The admission plugins are kube-apiserver's defaults (MutatingAdmissionWebhook and
  # ValidatingAdmissionWebhook among them) plus NodeRestriction, which goes with the Node
  # authorizer. The endpoint reconciler is off: it would publish 127.0.0.1 as the kubernetes
  # Service's endpoint, which validation refuses, and nothing in the cluster dials it.
  cluster_start kube-apiserver kube-apiserver \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address "${CLUSTER_HOST:-127.0.0.1}" --advertise-address "${CLUSTER_HOST:-127.0.0.1}" --secure-port "$api_port" \
    --endpoint-reconciler-type none \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$pki/ca.crt" \
    --enable-aggregator-routing="${CLUSTER_ENDPOINT_ROUTING:-false}" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range "$CLUSTER_SERVICE_CIDR" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --allow-privileged=true --profiling=false --v=1 "${audit[@]}"
  CLUSTER_APISERVER_PID=${CLUSTER_PIDS[-1]}  # setpriv execs: the apiserver itself, for /proc
  cluster_kubeconfig "$CLUSTER_DIR/admin.kubeconfig" admin
  cluster_kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" controller-manager
  cluster_kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" scheduler
  export KUBECONFIG=$CLUSTER_DIR/admin.kubeconfig
  cluster_wait "kube-apiserver /readyz" 120 kubectl get --raw /readyz

  # No kubelet heartbeats the Nodes the tests create, so the node lifecycle controller would
  # mark them unreachable and evict; everything else runs. Each controller gets its own
  # service account (--use-service-account-credentials), as in a real cluster.
  cluster_start kube-controller-manager kube-controller-manager \
    --kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$cm_port" --leader-elect=false \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --use-service-account-credentials --controllers '*,-node-lifecycle-controller' \
    --profiling=false --v=1
  cluster_start kube-scheduler kube-scheduler \
    --kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" \
    --authentication-kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" \
    --authorization-kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$sched_port" --leader-elect=false \
    --profiling=false --v=1
  cluster_wait "kube-controller-manager /healthz" 60 \
    curl -sfk "https://127.0.0.1:$cm_port/healthz"
  cluster_wait "kube-scheduler /healthz" 60 curl -sfk "https://127.0.0.1:$sched_port/healthz"
  # The service-account controller has run once the default namespace has its account; pods
  # and token requests need it.
  cluster_wait "the default ServiceAccount" 60 kubectl -n default get serviceaccount default
  export CLUSTER_SERVER CLUSTER_CA CLUSTER_DIR
}

cluster_down() {
  stop_pids CLUSTER_PIDS
  [[ -z "$CLUSTER_DIR" ]] || rm -rf "$CLUSTER_DIR"
  CLUSTER_DIR=""
}
