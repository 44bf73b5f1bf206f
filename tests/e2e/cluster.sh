#!/usr/bin/env bash
# A throwaway Kubernetes control plane (with --node, a real node too), by hand or around a command:
#
#   tests/e2e/cluster.sh [--dir DIR] [--node]      start it, print how to use it, serve until Ctrl-C
#   tests/e2e/cluster.sh [--dir DIR] [--node] -- CMD [ARG...]
#                                                  start it, run CMD with KUBECONFIG set, stop it;
#                                                  exits with CMD's status
#
# etcd, kube-apiserver (Node,RBAC authorization, the default admission plugins),
# kube-controller-manager and kube-scheduler, built from the pins in tests/upstream/versions.env
# (built on first use: tens of minutes cold). --node adds a real node (tests/e2e/node_lib.sh: the
# pinned kubelet, a containerd of its own, the bridge CNI; root and a Docker Engine), named after
# this machine, with the apiserver on the Docker bridge's gateway where its pods reach it and
# webhook Services dialled at their pods. State lives in DIR (default: a new folder under /tmp)
# and is removed, with every process, mount and network change, on exit, failure or signal. Exit
# codes: CMD's, else 0; 1 when the cluster or node did not come up; 2 for bad usage.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster_lib.sh"

dir=""
node=false
cmd=()
while (($# > 0)); do
  case "$1" in
    --dir) dir=${2:?--dir needs a folder}; shift 2 ;;
    --node) node=true; shift ;;
    --) shift; cmd=("$@"); break ;;
    -h|--help) sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cluster.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z "$dir" ]]; then
  dir=$(mktemp -d /tmp/iogate-cluster.XXXXXX)
elif [[ -e "$dir" && -n "$(ls -A "$dir" 2>/dev/null)" ]]; then
  echo "cluster.sh: --dir $dir is not empty; cluster.sh removes the folder on exit, so give it a new one" >&2
  exit 2
fi

if $node; then
  source "$(dirname "${BASH_SOURCE[0]}")/node_lib.sh"
  node_name=$(node_default_name) || {
    echo "cluster.sh: --node: the hostname $(hostname) does not resolve to an address of this machine (the apiserver dials the kubelet by it); add it to /etc/hosts" >&2
    exit 1
  }
  CLUSTER_HOST=$(cluster_docker_gateway) || {
    echo "cluster.sh: --node: no Docker bridge to put the apiserver on (is the Docker Engine running?)" >&2
    exit 1
  }
  export CLUSTER_HOST CLUSTER_ENDPOINT_ROUTING=true
fi

sleeper=""
trap '[[ -z $sleeper ]] || kill $sleeper 2>/dev/null; if $node; then node_down; fi; cluster_down; rmdir "$dir" 2>/dev/null || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cluster_up "$dir/cluster" || exit 1
if $node; then
  node_up "$dir/node" "$node_name" || exit 1
fi

if ((${#cmd[@]} > 0)); then
  set +e
  "${cmd[@]}"
  exit $?
fi

cat <<EOF
cluster up: $CLUSTER_SERVER (kubectl, helm and etcd from $UPSTREAM_BIN)
In another shell:
  export KUBECONFIG=$KUBECONFIG PATH=$UPSTREAM_BIN:\$PATH
  kubectl get --raw /version
Logs: $CLUSTER_DIR/logs/. Ctrl-C stops the cluster and removes $dir.
EOF
if $node; then
  cat <<EOF
node up: $NODE_NAME (kubelet and containerd logs in $NODE_DIR/logs/). Nothing is pulled: import
images into its containerd, then run them with imagePullPolicy Never or IfNotPresent:
  docker save IMAGE | ctr --address $NODE_CONTAINERD_SOCK -n k8s.io images import -
EOF
fi
# A background sleep and wait, so that a signal's trap runs at once.
sleep infinity &
sleeper=$!
wait $sleeper
