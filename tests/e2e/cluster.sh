#!/usr/bin/env bash
# A throwaway Kubernetes control plane on loopback, by hand or around a command:
#
#   tests/e2e/cluster.sh [--dir DIR]               start it, print how to use it, serve until Ctrl-C
#   tests/e2e/cluster.sh [--dir DIR] -- CMD [ARG...]
#                                                  start it, run CMD with KUBECONFIG set, stop it;
#                                                  exits with CMD's status
#
# etcd, kube-apiserver (Node,RBAC authorization, the default admission plugins),
# kube-controller-manager and kube-scheduler, built from the pins in tests/upstream/versions.env
# (built on first use: tens of minutes cold). State lives in DIR (default: a new folder under
# /tmp) and is removed, with every process, on exit, failure or signal. Exit codes: CMD's, else
# 0; 1 when the cluster did not come up; 2 for bad usage.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster_lib.sh"

dir=""
cmd=()
while (($# > 0)); do
  case "$1" in
    --dir) dir=${2:?--dir needs a folder}; shift 2 ;;
    --) shift; cmd=("$@"); break ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cluster.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z "$dir" ]]; then
  dir=$(mktemp -d /tmp/iogate-cluster.XXXXXX)
elif [[ -e "$dir" && -n "$(ls -A "$dir" 2>/dev/null)" ]]; then
  echo "cluster.sh: --dir $dir is not empty; cluster.sh removes the folder on exit, so give it a new one" >&2
  exit 2
fi

sleeper=""
trap '[[ -z $sleeper ]] || kill $sleeper 2>/dev/null; cluster_down' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cluster_up "$dir" || exit 1

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
Logs: $CLUSTER_DIR/logs/. Ctrl-C stops the cluster and removes $CLUSTER_DIR.
EOF
# A background sleep and wait, so that a signal's trap runs at once.
sleep infinity &
sleeper=$!
wait $sleeper
