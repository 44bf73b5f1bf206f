#!/usr/bin/env bash
# Runs one container of a Pod object the way a container runtime runs it, for
# tests/e2e/test_preflight.sh: no kubelet runs in the e2e cluster, so this stands in for the two
# steps between the Pod object and the process. Call it through as_pod (tests/e2e/lib.sh), which
# has already put the service-account token, ca.crt and namespace at
# /var/run/secrets/kubernetes.io/serviceaccount in a private mount namespace, and set
# KUBERNETES_SERVICE_HOST/PORT.
#
#   preflight_container.sh SPEC.json ROOTDIR
#
# SPEC.json (the test resolves it from the Pod object, its volumes and the image):
#   {"binary": host path of the image's entrypoint, "entrypoint": "/iogate",
#    "args": [...], "env": {"NAME": "value", ...}, "user": UID, "group": GID,
#    "mounts": [{"source": host dir, "target": path in the container, "readOnly": bool}, ...]}
#
# What the container gets, as in a pod: a root filesystem holding only the image's binary (the
# image is FROM scratch), mounted read-only (readOnlyRootFilesystem); /proc, /sys and /dev; each
# volumeMount at its mountPath, read-only where the pod says so; the service account at its path;
# only the pod's env plus what the kubelet adds (KUBERNETES_SERVICE_*, HOSTNAME); the image's
# numeric user with no capabilities and no_new_privs (allowPrivilegeEscalation: false, drop ALL).
set -euo pipefail
spec=$1 root=$2
sa_dir=/var/run/secrets/kubernetes.io/serviceaccount
[[ -f "$sa_dir/token" ]] || { echo "preflight_container: no token at $sa_dir: run me through as_pod" >&2; exit 2; }

mkdir -p "$root"
mount -t tmpfs -o size=1m,mode=755 tmpfs "$root"
mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root$sa_dir"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount --bind "$sa_dir" "$root$sa_dir"
mount -o remount,bind,ro "$root$sa_dir"
entry=$(jq -r .entrypoint "$spec")
touch "$root$entry"
mount --bind "$(jq -r .binary "$spec")" "$root$entry"
n=$(jq '.mounts | length' "$spec")
for ((i = 0; i < n; i++)); do
  src=$(jq -r ".mounts[$i].source" "$spec")
  dst=$root$(jq -r ".mounts[$i].target" "$spec")
  mkdir -p "$dst"
  mount --bind "$src" "$dst"
  if [[ $(jq -r ".mounts[$i].readOnly" "$spec") == true ]]; then
    mount -o remount,bind,ro "$dst"
  fi
done
mount -o remount,ro "$root"

mapfile -t env < <(jq -r '.env | to_entries[] | "\(.key)=\(.value)"' "$spec")
env+=("KUBERNETES_SERVICE_HOST=$KUBERNETES_SERVICE_HOST" "KUBERNETES_SERVICE_PORT=$KUBERNETES_SERVICE_PORT"
      "HOSTNAME=$(jq -r '.env.POD_NAME // "pod"' "$spec")"
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
mapfile -t args < <(jq -r '.args[]' "$spec")
uid=$(jq -r .user "$spec") gid=$(jq -r .group "$spec")
# chroot needs CAP_SYS_CHROOT and its --userspec CAP_SETUID/SETGID; the switch to a non-zero uid
# then clears every capability before the entrypoint runs.
exec env -i "${env[@]}" "$(command -v setpriv)" --no-new-privs --bounding-set -all,+setuid,+setgid,+sys_chroot -- \
  "$(command -v chroot)" --userspec="$uid:$gid" --groups="$gid" "$root" "$entry" "${args[@]}"
