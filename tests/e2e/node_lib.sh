# A real node for the throwaway control plane of cluster_lib.sh: a kubelet (the pinned upstream
# build, tests/upstream) and a containerd of its own (Debian's package) with runc and the bridge
# CNI plugin (Debian's containernetworking-plugins), its pause image built here. Source it after
# cluster_lib.sh, once cluster_up has run; root only. Then:
#
#   node_up DIR NAME        start containerd and a kubelet registered as Node NAME, state under DIR
#                           (created; removed by node_down), and wait until the Node is Ready and
#                           schedulable; exports NODE_NAME, NODE_DIR, NODE_CONTAINERD_SOCK and
#                           NODE_KUBELET_URL (the kubelet's HTTPS API)
#   node_import_image FILE  a `docker save` archive (scripts/build-image.sh --save, docker save)
#                           into the node's containerd, where the kubelet finds it (k8s.io
#                           namespace); pods use it with imagePullPolicy Never or IfNotPresent
#   node_docker_image TAG   the Docker Engine's image TAG, saved and imported the same way
#   node_down               stop every container, the kubelet and containerd; unmount, remove the
#                           bridge, the cgroups and DIR. Docker and its containerd are not touched.
#   node_throttle_reads DEV BYTES_PER_S
#                           cap the node's pods' reads from block device DEV at BYTES_PER_S each
#                           (a bandwidth-poor disk), until node_throttle_stop (run on exit)
#
# Nothing is pulled: no registry answers these machines. The sandbox ("pause") image is
# tests/e2e/pause built with gcc and the Docker Engine (node_pause_image). Isolation from the
# machine's own Docker: containerd has its own root, state, socket (under DIR), runc root and
# network namespaces (under DIR), and the pods' cgroups live under a cgroup root of their own
# (/iogate-e2e-NAME-TAG in every hierarchy, TAG from DIR); the only shared place is
# /run/containerd/s/, where containerd 1.6 always puts its shims' sockets (named by a hash of our
# socket's path).
#
# The pods reach the apiserver as in a cluster, at the kubernetes Service's address (the
# KUBERNETES_SERVICE_HOST/PORT the kubelet gives every container) with the token the kubelet
# projects, when the apiserver listens on an address other than loopback: CLUSTER_HOST set to
# the Docker bridge's gateway before cluster_up, as the container tests do (tests/container/lib.sh
# docker_gateway). No kube-proxy: one DNAT rule of node_up's (nat PREROUTING, from the node's
# bridge, tagged with a comment) sends the Service's address and port to the apiserver; node_down
# deletes it. With the apiserver on 127.0.0.1 (the default) pods cannot reach it.
#
# cgroup v1: these machines boot with it and kubelet >= 1.35 refuses it unless its configuration
# says failCgroupV1: false (it then warns, and runs).
#
# Addresses. The Node's InternalIP is NODE_IP (default: the address of the default route's
# interface); the kubelet refuses a loopback one. kube-apiserver reaches the kubelet (`kubectl
# logs`, exec) at the first of the Node's addresses its --kubelet-preferred-address-types names,
# by default the Hostname address, which is NAME: so NAME must resolve to an address of this
# machine, and the kubelet listens on that one address only. The machine's hostname does
# (/etc/hosts maps it to 127.0.0.1 on these machines): node_default_name.
# Authentication: as in a kubeadm cluster. The kubelet takes no anonymous request; it checks a
# client certificate against the cluster's CA and a bearer token with a TokenReview, and asks the
# apiserver (a SubjectAccessReview, which the Node authorizer lets it create) whether that user may
# reach nodes/proxy, nodes/log and the rest. The apiserver presents its kubelet client certificate
# (cluster_lib.sh, system:masters) and verifies the kubelet's serving one (made here for NAME and
# the node's addresses) against the same CA.

NODE_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODE_PIDS=()
NODE_DIR=""
NODE_NAME=""
NODE_CONTAINERD_SOCK=""
NODE_KUBELET_URL=""
NODE_CGROUP_ROOT=""
NODE_BRIDGE=""
# The pods' addresses on the node's bridge (no masquerading: no pod traffic leaves the machine):
# NODE_POD_CIDR if set, else a /24 of 10.244.0.0/16 picked by DIR, as the bridge's name and the
# cgroup root are, so that two nodes on one machine (two tests by hand) do not share them.
NODE_POD_CIDR_SET=${NODE_POD_CIDR:-}
NODE_POD_CIDR=""
NODE_PAUSE_IMAGE=iogate.test/pause:1.0
NODE_CNI_BIN=${NODE_CNI_BIN:-/usr/lib/cni}
NODE_SERVICE_RULE=()  # the DNAT rule's iptables arguments (after -A/-D), for node_down
NODE_THROTTLE_PID=""   # node_throttle_reads's poller
NODE_THROTTLE_ROOT=""  # the blkio cgroup it writes under, the device's MAJ:MIN and the cap
NODE_THROTTLE_DEV=""
NODE_THROTTLE_CAP=""

# node_tools: kubelet (UPSTREAM_BIN, tests/upstream/build.sh's), containerd, its runc shim, runc, ctr,
# the CNI plugins, gcc (the pause program) and the Docker Engine (its image).
node_tools() {
  if [[ -z "${UPSTREAM_BIN:-}" ]]; then
    UPSTREAM_BIN=$(bash "$NODE_LIB_DIR/../upstream/build.sh" --print-bin kubelet) || return 1
  fi
  [[ -x "$UPSTREAM_BIN/kubelet" ]] ||
    { echo "node: $UPSTREAM_BIN/kubelet is not built: run bash tests/upstream/build.sh (ctest runs it as the tools.* tests)" >&2; return 1; }
  local t
  for t in containerd containerd-shim-runc-v2 runc ctr; do
    command -v "$t" >/dev/null ||
      { echo "node: $t is missing: apt-get install containerd runc (Debian's docker.io brings both)" >&2; return 1; }
  done
  for t in bridge host-local loopback; do
    [[ -x "$NODE_CNI_BIN/$t" ]] ||
      { echo "node: $NODE_CNI_BIN/$t is missing: bash scripts/install-deps.sh (containernetworking-plugins)" >&2; return 1; }
  done
  command -v gcc >/dev/null || { echo "node: gcc is missing (the pause program)" >&2; return 1; }
  docker info >/dev/null 2>&1 || { echo "node: no Docker Engine answers (it builds the pause image)" >&2; return 1; }
  [[ $(id -u) -eq 0 ]] || { echo "node: a kubelet and containerd need root" >&2; return 1; }
}

# node_start NAME CMD...: CMD in the background, logging to NODE_DIR/logs/NAME.log, killed (TERM)
# when this shell dies.
node_start() {
  local name=$1; shift
  setpriv --pdeathsig TERM -- "$@" >"$NODE_DIR/logs/$name.log" 2>&1 &
  NODE_PIDS+=($!)
}

node_fail() {  # MESSAGE: say what failed, with the tail of the node's logs
  echo "node: $1" >&2
  tail_logs "$NODE_DIR" 25
  return 1
}

# node_wait WHAT SECONDS CMD...: retry CMD every 0.5 s until it succeeds; fail with the logs, or at
# once when containerd or the kubelet has died (wait_alive, cluster_lib.sh).
node_wait() { wait_alive NODE_PIDS node_fail 0.5 "$@"; }

node_ctr() { ctr --address "$NODE_CONTAINERD_SOCK" -n k8s.io "$@"; }

# node_pause_image FILE: the pause program (tests/e2e/pause/pause.c) built static, in an image of
# its own (tests/e2e/pause/Dockerfile) tagged NODE_PAUSE_IMAGE, saved to FILE (about 1 s; the
# Docker Engine keeps no copy).
node_pause_image() {
  local ctx
  ctx=$(mktemp -d "${NODE_DIR:-/tmp}/pause-ctx.XXXXXX") || return 1
  gcc -static -Os -Wall -Wextra -Werror -o "$ctx/pause" "$NODE_LIB_DIR/pause/pause.c" &&
    strip "$ctx/pause" &&
    docker build -q -t "$NODE_PAUSE_IMAGE" -f "$NODE_LIB_DIR/pause/Dockerfile" "$ctx" >"$ctx/build.log" 2>&1 &&
    docker save -o "$1" "$NODE_PAUSE_IMAGE"
  local rc=$?
  # Nothing of the node's stays in the Docker Engine: the archive is all containerd needs.
  docker rmi "$NODE_PAUSE_IMAGE" >/dev/null 2>&1 || true
  ((rc == 0)) || cat "$ctx/build.log" >&2 2>/dev/null
  rm -rf "$ctx"
  return $rc
}

node_import_image() {  # FILE
  local out
  out=$(node_ctr images import "$1" 2>&1) || { echo "node: ctr images import $1: $out" >&2; return 1; }
}

node_docker_image() {  # TAG
  local f="$NODE_DIR/image.$$.tar" rc=0
  docker save -o "$f" "$1" && node_import_image "$f" || rc=$?
  rm -f "$f"
  return $rc
}

# node_containerd_config FILE: containerd 1.6's configuration (version 2), everything under
# NODE_DIR/containerd; the CRI plugin with runc (cgroupfs, as the kubelet's cgroupDriver), the
# overlayfs snapshotter and the bridge CNI configuration of NODE_DIR/cni/net.d.
node_containerd_config() {
  local d=$NODE_DIR/containerd
  cat >"$1" <<EOF
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$NODE_PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  netns_mounts_under_state_dir = true
  # No oom_score_adj below containerd's own: root on these machines lacks CAP_SYS_RESOURCE (not
  # in the bounding set), so runc's write of the sandbox's -998 fails ("failed to update
  # /proc/self/oom_score_adj: Permission denied") and no pod starts.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$d/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$NODE_CNI_BIN"
    conf_dir = "$NODE_DIR/cni/net.d"
    max_conf_num = 1
EOF
}

# node_cni_config FILE: one bridge (NODE_BRIDGE), addresses from NODE_POD_CIDR by host-local
# (its state under NODE_DIR), the host its gateway; no masquerading, no port maps.
node_cni_config() {
  local gw
  gw=$(python3 -c 'import ipaddress, sys; print(next(ipaddress.ip_network(sys.argv[1]).hosts()))' "$NODE_POD_CIDR")
  cat >"$1" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "iogate-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$NODE_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$NODE_DIR/cni/ipam",
        "ranges": [[{"subnet": "$NODE_POD_CIDR", "gateway": "$gw"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "loopback"}
  ]
}
EOF
}

# node_default_name: the machine's hostname, when it resolves to an address of this machine (a
# name node_up takes); nothing (status 1) otherwise.
node_default_name() {
  local h
  h=$(hostname | tr '[:upper:]' '[:lower:]')
  node_local_address "$h" >/dev/null || return 1
  echo "$h"
}

# node_local_address NAME: the first IPv4 address NAME resolves to, if it is one of this machine's
# (loopback included); status 1 otherwise.
node_local_address() {
  local a
  a=$(getent ahostsv4 "$1" | awk 'NR == 1 { print $1 }')
  [[ -n "$a" ]] || return 1
  if [[ $a == 127.* ]] || ip -4 -o addr show | awk -v a="$a" '{ split($4, x, "/"); if (x[1] == a) f = 1 } END { exit !f }'; then
    echo "$a"
  else
    return 1
  fi
}

# node_default_ip: the address of the interface of the default route (the kubelet's InternalIP).
node_default_ip() {
  ip -4 -o route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p'
}

node_up() {
  NODE_DIR=${1:?node_up DIR NAME}
  NODE_NAME=${2:?node_up DIR NAME}
  [[ -n "${CLUSTER_DIR:-}" && -n "${CLUSTER_SERVER:-}" ]] || { echo "node: cluster_up first" >&2; return 1; }
  node_tools || return 1
  mkdir -p "$NODE_DIR"/{logs,containerd,kubelet,pod-logs,cni/net.d,cni/ipam}
  NODE_DIR=$(cd "$NODE_DIR" && pwd)
  NODE_CONTAINERD_SOCK=$NODE_DIR/containerd/containerd.sock
  # A unix socket path is at most 107 bytes.
  ((${#NODE_CONTAINERD_SOCK} < 100)) || { echo "node: $NODE_CONTAINERD_SOCK is too long for a socket" >&2; return 1; }
  local tag
  tag=$(printf '%s' "$NODE_DIR" | sha256sum | cut -c1-8)
  NODE_BRIDGE=iog$tag  # at most 15 characters
  NODE_CGROUP_ROOT=/iogate-e2e-$NODE_NAME-$tag
  NODE_POD_CIDR=${NODE_POD_CIDR_SET:-10.244.$((16#${tag:0:2})).0/24}
  local node_ip listen_ip
  node_ip=${NODE_IP:-$(node_default_ip)}
  [[ -n "$node_ip" ]] || { echo "node: no default route to take the node's address from (set NODE_IP)" >&2; return 1; }
  listen_ip=$(node_local_address "$NODE_NAME") ||
    { echo "node: $NODE_NAME does not resolve to an address of this machine (getent ahostsv4 $NODE_NAME: $(getent ahostsv4 "$NODE_NAME" | head -1)); the apiserver dials the kubelet by that name: use node_default_name" >&2; return 1; }

  # --- containerd, and the sandbox image in it ---
  node_containerd_config "$NODE_DIR/containerd/config.toml"
  node_cni_config "$NODE_DIR/cni/net.d/10-iogate-e2e.conflist"
  node_start containerd containerd --config "$NODE_DIR/containerd/config.toml"
  node_wait containerd 30 ctr --address "$NODE_CONTAINERD_SOCK" version || return 1
  node_pause_image "$NODE_DIR/pause.tar" || { echo "node: the pause image did not build" >&2; return 1; }
  node_import_image "$NODE_DIR/pause.tar" || return 1
  rm -f "$NODE_DIR/pause.tar"

  # --- the kubelet's identity: system:node:NAME in system:nodes (the Node authorizer and the
  # NodeRestriction admission plugin of the apiserver), a serving pair for its own port ---
  local pki=$CLUSTER_DIR/pki
  pki_sign "$pki" "kubelet-$NODE_NAME" "/O=system:nodes/CN=system:node:$NODE_NAME" "$(pki_client_ext)"
  pki_sign "$pki" "kubelet-$NODE_NAME-serving" "/CN=$NODE_NAME" \
    "$(pki_server_ext "IP:$listen_ip,IP:$node_ip,DNS:$NODE_NAME")"
  cluster_kubeconfig "$NODE_DIR/kubelet.kubeconfig" "kubelet-$NODE_NAME"

  # --- the pods' cgroup root, in every v1 hierarchy (the kubelet wants it there) ---
  local h
  for h in /sys/fs/cgroup/*/; do
    [[ -d "$h" && ! -L "${h%/}" ]] || continue
    mkdir -p "$h${NODE_CGROUP_ROOT#/}" 2>/dev/null || true
  done

  local port healthz_port
  read -r port healthz_port <<<"$(free_ports 2)"
  cat >"$NODE_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: $NODE_CGROUP_ROOT
cgroupsPerQOS: true
containerRuntimeEndpoint: unix://$NODE_CONTAINERD_SOCK
address: $listen_ip
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
tlsCertFile: $pki/kubelet-$NODE_NAME-serving.crt
tlsPrivateKeyFile: $pki/kubelet-$NODE_NAME-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true, cacheTTL: 30s}
  x509: {clientCAFile: $pki/ca.crt}
authorization:
  mode: Webhook
  webhook: {cacheAuthorizedTTL: 30s, cacheUnauthorizedTTL: 5s}
failSwapOn: false
staticPodPath: ""
podLogsDir: $NODE_DIR/pod-logs
podCIDR: $NODE_POD_CIDR
clusterDomain: cluster.local
resolvConf: ""
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "50Mi"
  nodefs.available: "1%"
  nodefs.inodesFree: "1%"
  imagefs.available: "1%"
syncFrequency: 10s
nodeStatusUpdateFrequency: 5s
fileCheckFrequency: 20s
protectKernelDefaults: false
localStorageCapacityIsolation: true
maxPods: 30
EOF
  node_start kubelet "$UPSTREAM_BIN/kubelet" --config "$NODE_DIR/kubelet.yaml" \
    --kubeconfig "$NODE_DIR/kubelet.kubeconfig" --root-dir "$NODE_DIR/kubelet" \
    --cert-dir "$NODE_DIR/kubelet/pki" --hostname-override "$NODE_NAME" --node-ip "$node_ip" \
    --oom-score-adj 0 --v=2
  node_wait "the kubelet's /healthz" 60 curl -sf "http://127.0.0.1:$healthz_port/healthz" || return 1
  node_wait "Node $NODE_NAME Ready" 120 node_is_ready || return 1
  # The TaintNodesByCondition admission plugin put the not-ready taint on the new Node; the node
  # lifecycle controller, which would lift it, is off in cluster_lib.sh.
  kubectl taint node "$NODE_NAME" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
  node_service_route || return 1
  NODE_KUBELET_URL=https://$listen_ip:$port
  export NODE_NAME NODE_DIR NODE_CONTAINERD_SOCK NODE_KUBELET_URL
}

# node_service_route: the kubernetes Service's address and port DNAT'd to the apiserver for the
# pods of this node's bridge, when the apiserver listens where they can reach it (not loopback).
node_service_route() {
  local host=${CLUSTER_SERVER#https://} svc_ip svc_port
  host=${host%:*}
  [[ $host != 127.* && $host != localhost ]] || return 0
  command -v iptables >/dev/null || { echo "node: iptables is missing (the kubernetes Service's route): apt-get install iptables" >&2; return 1; }
  svc_ip=$(kubectl -n default get service kubernetes -o jsonpath='{.spec.clusterIP}') &&
    svc_port=$(kubectl -n default get service kubernetes -o jsonpath='{.spec.ports[0].port}') ||
    { echo "node: no kubernetes Service to route" >&2; return 1; }
  NODE_SERVICE_RULE=(PREROUTING -t nat -i "$NODE_BRIDGE" -d "$svc_ip" -p tcp --dport "$svc_port"
    -m comment --comment "iogate-e2e node $NODE_NAME $NODE_BRIDGE" -j DNAT --to-destination "${CLUSTER_SERVER#https://}")
  iptables -A "${NODE_SERVICE_RULE[@]}" || { echo "node: iptables -A ${NODE_SERVICE_RULE[*]} failed" >&2; NODE_SERVICE_RULE=(); return 1; }
}

node_is_ready() {
  [[ $(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

# node_pids_using SOCKET: the processes whose command line names SOCKET: the runc shims a
# containerd on SOCKET started (they outlive it: containerd starts each in a session of its own),
# containerd itself. Compared in the shell, so that no matcher's own command line matches.
node_pids_using() {
  local p cmd
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    [[ "$cmd" == *" $1 "* || "$cmd" == *" $1" ]] && echo "${p#/proc/}"
  done
  return 0
}

node_mounts() {  # the mount points under NODE_DIR, one a line
  findmnt -rn -o TARGET | awk -v d="$NODE_DIR/" 'index($0, d) == 1'
}

node_down() {
  [[ -n "$NODE_DIR" ]] || return 0
  local pid
  # The kubelet first, so that nothing restarts what is stopped next.
  if ((${#NODE_PIDS[@]} > 1)); then
    kill -TERM "${NODE_PIDS[1]}" 2>/dev/null || true
  fi
  # Every container, then containerd: killed tasks, deleted containers, the sandboxes' shims gone.
  if [[ -S "$NODE_CONTAINERD_SOCK" ]]; then
    local c
    for c in $(node_ctr tasks ls -q 2>/dev/null); do node_ctr tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true; done
    sleep 0.5
    for c in $(node_ctr tasks ls -q 2>/dev/null); do node_ctr tasks delete -f "$c" >/dev/null 2>&1 || true; done
    for c in $(node_ctr containers ls -q 2>/dev/null); do node_ctr containers delete "$c" >/dev/null 2>&1 || true; done
  fi
  # The shims, by the socket they were given (-address SOCKET); containerd is in NODE_PIDS.
  for pid in $(node_pids_using "$NODE_CONTAINERD_SOCK"); do
    [[ " ${NODE_PIDS[*]} " == *" $pid "* ]] || kill -KILL "$pid" 2>/dev/null || true
  done
  stop_pids NODE_PIDS
  # Whatever is still mounted under NODE_DIR (the kubelet's pod volumes, among them bind mounts
  # of host paths and of local PersistentVolumes, containerd's rootfs mounts and sandbox network
  # namespaces), deepest first.
  local m left
  node_mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  [[ -z "$NODE_BRIDGE" ]] || ip link delete "$NODE_BRIDGE" 2>/dev/null || true
  if ((${#NODE_SERVICE_RULE[@]} > 0)); then
    iptables -D "${NODE_SERVICE_RULE[@]}" 2>/dev/null || true
    NODE_SERVICE_RULE=()
  fi
  # The pods' cgroups, children first; empty once every container is gone.
  if [[ -n "$NODE_CGROUP_ROOT" ]]; then
    local h
    for h in /sys/fs/cgroup/*/; do
      [[ -d "$h${NODE_CGROUP_ROOT#/}" ]] || continue
      find "$h${NODE_CGROUP_ROOT#/}" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
  fi
  # Never a recursive removal through a mount: a volume's bind mount left there would take the
  # volume's (or the host's) files with it.
  left=$(node_mounts | head -5)
  if [[ -n "$left" ]]; then
    echo "node: still mounted under $NODE_DIR, not removed: $left" >&2
  else
    rm -rf --one-file-system "$NODE_DIR"
  fi
  NODE_DIR="" NODE_NAME="" NODE_CONTAINERD_SOCK="" NODE_KUBELET_URL="" NODE_CGROUP_ROOT="" NODE_BRIDGE=""
}

# node_throttle_reads DEV BYTES_PER_S: every pod of the node reads block device DEV (its MAJ:MIN)
# at most BYTES_PER_S, each container on its own: a disk with little bandwidth (a gp3 volume's
# 125-1,000 MB/s) and as many small reads as it had (IOPS are not capped). cgroup v1's blkio
# throttle, which this machine has, is not hierarchical: a cap on the node's cgroup root does not
# reach the processes of the pods' cgroups below it, and the kubelet and runc make those (pod,
# container) as pods start. So a poller writes the cap into blkio.throttle.read_bps_device of
# every cgroup under the root, at every depth, every 0.1 s, new ones as they appear: a
# container's first tenth of a second may go uncapped (the probes' ramp covers it). It writes a
# file only where the cap is not there already: each write restarts the kernel's accounting slice.
# Stopped on exit (on_exit: call it from the test's own shell, not a subshell) by
# node_throttle_stop, which also takes the cap off the cgroups still there.
node_throttle_reads() {
  local dev=${1:?node_throttle_reads DEV BYTES_PER_S} bps=${2:?node_throttle_reads DEV BYTES_PER_S} majmin root
  [[ $bps =~ ^[1-9][0-9]*$ ]] || { echo "node: node_throttle_reads: BYTES_PER_S must be a positive integer, got \"$bps\"" >&2; return 1; }
  [[ -n $NODE_CGROUP_ROOT ]] || { echo "node: node_throttle_reads: no node (node_up first)" >&2; return 1; }
  [[ -z $NODE_THROTTLE_PID ]] || { echo "node: node_throttle_reads: a throttle already runs (node_throttle_stop first)" >&2; return 1; }
  root=/sys/fs/cgroup/blkio/${NODE_CGROUP_ROOT#/}
  [[ -f $root/blkio.throttle.read_bps_device ]] ||
    { echo "node: node_throttle_reads: no $root/blkio.throttle.read_bps_device (it needs cgroup v1's blkio controller)" >&2; return 1; }
  majmin=$(lsblk -dno MAJ:MIN "$dev" 2>/dev/null | tr -d ' ')
  [[ $majmin =~ ^[0-9]+:[0-9]+$ ]] || { echo "node: node_throttle_reads: $dev is not a block device" >&2; return 1; }
  # Once here, so that a cap the kernel refuses fails now and not in the poller.
  echo "$majmin $bps" 2>/dev/null >"$root/blkio.throttle.read_bps_device" ||
    { echo "node: node_throttle_reads: the kernel refused \"$majmin $bps\" in $root/blkio.throttle.read_bps_device" >&2; return 1; }
  NODE_THROTTLE_ROOT=$root NODE_THROTTLE_DEV=$majmin
  # Python's scandir reads the entry types from the directory: a third of the CPU of a shell's glob.
  setpriv --pdeathsig TERM -- python3 -c '
import os, sys, time
root, want = sys.argv[1], sys.argv[2] + " " + sys.argv[3]
while os.path.isdir(root):
    dirs = [root]
    while dirs:
        d = dirs.pop()
        try:  # a cgroup may go between the listing and the read or write
            with os.scandir(d) as entries:
                dirs.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
            f = os.path.join(d, "blkio.throttle.read_bps_device")
            with open(f) as h:
                have = h.read().splitlines()
            if want not in have:
                with open(f, "w") as h:
                    h.write(want)
        except OSError:
            pass
    time.sleep(0.1)
' "$root" "$majmin" "$bps" &
  NODE_THROTTLE_PID=$!
  on_exit node_throttle_stop
  NODE_THROTTLE_CAP=$bps
  # Returns once the poller's first pass is done: the cgroups there now are capped.
  local deadline=$((SECONDS + 20))
  until [[ -z $(node_throttle_uncapped) ]]; do
    kill -0 "$NODE_THROTTLE_PID" 2>/dev/null || { echo "node: node_throttle_reads: the poller exited" >&2; return 1; }
    ((SECONDS < deadline)) || { echo "node: node_throttle_reads: cgroups still uncapped after 20 s: $(node_throttle_uncapped | head -3)" >&2; return 1; }
    sleep 0.1
  done
}

# node_throttle_uncapped: the cgroups under the node's root that lack node_throttle_reads's cap,
# one a line (none while it holds).
node_throttle_uncapped() {
  [[ -n $NODE_THROTTLE_ROOT ]] || return 0
  find "$NODE_THROTTLE_ROOT" -name blkio.throttle.read_bps_device \
    -exec grep -L -x -F "$NODE_THROTTLE_DEV $NODE_THROTTLE_CAP" {} + 2>/dev/null | sed 's|/blkio.throttle.read_bps_device$||'
  return 0
}

# node_throttle_stop: the poller stopped, the cap taken off the cgroups still there ("MAJ:MIN 0"
# deletes a rule). Quiet and idempotent.
node_throttle_stop() {
  [[ -n $NODE_THROTTLE_PID ]] || return 0
  kill -TERM "$NODE_THROTTLE_PID" 2>/dev/null || true
  wait "$NODE_THROTTLE_PID" 2>/dev/null || true
  NODE_THROTTLE_PID=""
  local d
  while IFS= read -r -d '' d; do
    grep -q "^$NODE_THROTTLE_DEV " "$d/blkio.throttle.read_bps_device" 2>/dev/null &&
      echo "$NODE_THROTTLE_DEV 0" 2>/dev/null >"$d/blkio.throttle.read_bps_device"
  done < <(find "$NODE_THROTTLE_ROOT" -type d -print0 2>/dev/null)
  NODE_THROTTLE_ROOT="" NODE_THROTTLE_DEV="" NODE_THROTTLE_CAP=""
  return 0
}
