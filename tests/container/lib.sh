# Shared by the container tests (tests/container/test_*.sh, ctest container.*): the image that `docker build` made
# from the Dockerfile (container.build, a ctest fixture the others require), run by the real
# Docker Engine the way the kubelet would run the chart's pods. Source it first; it sources
# tests/integration/lib.sh (tests/lib's check.sh, scratch.sh and objects.sh; IOGATE: the host's
# binary, for host-vs-container comparisons) and tests/lib/yaml.sh.
#
# The pod's settings are not copied by hand: chart_render renders the chart with the real helm,
# and pod_docker_args turns a rendered pod spec's container (securityContext, resources, env,
# args, volumeMounts) into `docker run` flags, as the kubelet asks its runtime for them.
CONTAINER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TESTS_DIR=${TESTS_DIR:-$(cd "$CONTAINER_DIR/.." && pwd)}
ROOT=$(cd "$TESTS_DIR/.." && pwd)
# A test that needs a cluster sources tests/e2e/lib.sh first (it sources the integration lib and
# starts the cluster); the integration lib is then not sourced twice.
declare -F on_exit >/dev/null || source "$TESTS_DIR/integration/lib.sh"
CHART="$ROOT/charts/iogate"
# The tag container.build gives the image; the other tests run it.
IMAGE=${IOGATE_TEST_IMAGE:-iogate:test}

[[ $(id -u) -eq 0 ]] || fail "the container tests need root (docker, loop devices, cgroups): run them, or ctest, as root"
need_tool docker jq
docker info >/dev/null 2>&1 ||
  fail "no Docker Engine answers on /var/run/docker.sock: start it (systemctl start docker, or dockerd &)"
source "$TESTS_DIR/lib/yaml.sh"  # PY, to_json
if [[ -z "${UPSTREAM_BIN:-}" ]]; then
  UPSTREAM_BIN=${IOGATE_TOOLS_CACHE:-/var/cache/iogate-tools}/bin
fi

# need_image: the image must be there (container.build makes it; by hand:
# scripts/build-image.sh --tag iogate:test).
need_image() {
  docker image inspect "$IMAGE" >/dev/null 2>&1 ||
    fail "no image $IMAGE: ctest runs container.build first; by hand: bash scripts/build-image.sh --tag $IMAGE"
}

# image_only_iogate IMAGE: `docker save` of IMAGE holds one layer and in it exactly iogate,
# -rwxr-xr-x 0/0; extracted to $SCRATCH/saved/iogate, its size in $lsize.
image_only_iogate() {
  local layer_tars listing mode owner name
  mkdir "$SCRATCH/saved"
  docker save "$1" | tar -x -C "$SCRATCH/saved"
  mapfile -t layer_tars < <(jq -r '.[0].Layers[]' "$SCRATCH/saved/manifest.json")
  [[ ${#layer_tars[@]} -eq 1 ]] || fail "docker save: ${#layer_tars[@]} layers"
  listing=$(tar --numeric-owner -tvf "$SCRATCH/saved/${layer_tars[0]}")
  [[ $(wc -l <<<"$listing") -eq 1 ]] || fail "the layer holds more than /iogate: $listing"
  read -r mode owner lsize _ _ name <<<"$listing"
  [[ "$name" == iogate && "$mode" == -rwxr-xr-x && "$owner" == 0/0 ]] || fail "the layer's entry is not iogate -rwxr-xr-x 0/0: $listing"
  tar -xf "$SCRATCH/saved/${layer_tars[0]}" -C "$SCRATCH/saved" iogate
}

# Everything this test starts carries its label and is removed on exit; each run's cgroup parent
# (for its memory peak) is removed after its container.
TEST_ID="iogate-test-$$"
# One cleanup, in that order: a cgroup is removable only once its container is gone.
on_exit 'docker ps -aq --filter "label=iogate.test=$TEST_ID" | xargs -r docker rm -f;
  for cg in /sys/fs/cgroup/*/"$TEST_ID"-* /sys/fs/cgroup/"$TEST_ID"-*; do [[ -d $cg ]] && rmdir "$cg"; done'

# chart_render OUT.json [helm template flags...]: the chart rendered by the pinned helm (release
# iogate in iogate-system), as a JSON array of its objects.
chart_render() {
  local out=$1; shift
  [[ -x "$UPSTREAM_BIN/helm" ]] || fail "$UPSTREAM_BIN/helm is not built: bash tests/upstream/build.sh"
  "$UPSTREAM_BIN/helm" template iogate "$CHART" -n iogate-system "$@" >"$out.yaml" 2>"$out.err" ||
    fail "helm template: $(cat "$out.err")"
  to_json "$out.yaml" >"$out" || fail "helm template gave no YAML: $out.yaml"
}

# pod_spec RENDERED.json KIND NAME: the pod spec of a rendered workload (DaemonSet, Deployment)
# or Pod, on stdout.
pod_spec() {
  jq -e --arg k "$2" --arg n "$3" 'first(.[] | select(.kind == $k and .metadata.name == $n)) |
    if .kind == "Pod" then .spec else .spec.template.spec end' "$1" ||
    fail "no $2 $3 in $1"
}

# pod_docker_args SPEC.json CONTAINER VOLUMES FIELDS: `docker run` arguments for one container of
# a pod spec, one per line: the runtime flags, then "--", then the container's args.
#   VOLUMES: JSON {"<volume name>": "<host path>"} for the volumes the test provides (PVCs,
#     Secrets, ConfigMaps, projected); hostPath volumes mount their path, emptyDir a tmpfs when
#     its medium is Memory and a folder in SCRATCH (on the node's disk, like the kubelet's) else.
#   FIELDS: JSON {"metadata.name": ..., ...} for the downward API's fieldRef env.
# Mapped as the kubelet maps them: runAsUser/runAsGroup (container over pod) to --user, else the
# image's USER; fsGroup and supplementalGroups to --group-add; readOnlyRootFilesystem to
# --read-only; capabilities to --cap-drop/--cap-add; allowPrivilegeEscalation: false to
# no-new-privileges; seccomp RuntimeDefault to the engine's default profile (Unconfined to none);
# limits.memory to --memory with no swap beyond it; limits.cpu to --cpus; requests.cpu to
# --cpu-shares (1024 a core); command to --entrypoint.
pod_docker_args() {
  local spec=$1 name=$2 volumes=$3 fields=$4
  jq -r --arg c "$name" --argjson vols "$volumes" --argjson fields "$fields" --arg scratch "$SCRATCH" '
    def bytes: if type == "number" then . else
      capture("^(?<n>[0-9.]+)(?<u>[A-Za-z]*)$") as $m |
      ($m.n | tonumber) * ({"": 1, k: 1000, M: 1000000, G: 1000000000, Ki: 1024, Mi: 1048576, Gi: 1073741824}[$m.u]
        // error("unknown memory unit \($m.u)")) | floor end;
    def cores: if type == "number" then . elif endswith("m") then (.[:-1] | tonumber) / 1000 else tonumber end;
    (.securityContext // {}) as $psc |
    first((.containers + (.initContainers // []))[] | select(.name == $c)) as $ctr |
    ($ctr.securityContext // {}) as $csc |
    ($csc.runAsUser // $psc.runAsUser) as $uid |
    ($csc.runAsGroup // $psc.runAsGroup) as $gid |
    (($csc.seccompProfile // $psc.seccompProfile // {type: "RuntimeDefault"}).type) as $seccomp |
    (.volumes // []) as $podvols |
    [
      (if $uid != null then "--user", "\($uid)\(if $gid != null then ":\($gid)" else "" end)" else empty end),
      (($psc.supplementalGroups // []) + (if $psc.fsGroup != null then [$psc.fsGroup] else [] end) | .[] | "--group-add", "\(.)"),
      (if $csc.readOnlyRootFilesystem == true then "--read-only" else empty end),
      (if $csc.privileged == true then "--privileged" else empty end),
      (($csc.capabilities.drop // [])[] | "--cap-drop", .),
      (($csc.capabilities.add // [])[] | "--cap-add", .),
      (if $csc.allowPrivilegeEscalation == false then "--security-opt", "no-new-privileges" else empty end),
      (if $seccomp == "Unconfined" then "--security-opt", "seccomp=unconfined"
       elif $seccomp == "RuntimeDefault" then empty
       else error("seccomp profile \($seccomp) is not mapped") end),
      (if $ctr.resources.limits.memory then
         ($ctr.resources.limits.memory | bytes) as $m | "--memory", "\($m)", "--memory-swap", "\($m)" else empty end),
      (if $ctr.resources.limits.cpu then "--cpus", "\($ctr.resources.limits.cpu | cores)" else empty end),
      (if $ctr.resources.requests.cpu then "--cpu-shares", "\([($ctr.resources.requests.cpu | cores) * 1024 | floor, 2] | max)" else empty end),
      (($ctr.env // [])[] |
        if has("value") then "--env", "\(.name)=\(.value)"
        elif .valueFrom.fieldRef then
          (.valueFrom.fieldRef.fieldPath) as $f |
          "--env", "\(.name)=\($fields[$f] // error("env \(.name): no value for fieldRef \($f) in FIELDS"))"
        else error("env \(.name): only value and fieldRef are mapped") end),
      (($ctr.volumeMounts // [])[] | . as $vm |
        (first($podvols[] | select(.name == $vm.name)) // error("volumeMount \($vm.name): no such volume")) as $v |
        (if $v.emptyDir.medium == "Memory" then "--mount", "type=tmpfs,dst=\($vm.mountPath)"
         else
           (if $v.hostPath then $v.hostPath.path
            elif $v.emptyDir then "\($scratch)/emptydir/\($vm.name)"
            else ($vols[$vm.name] // error("volume \($vm.name): not given in VOLUMES")) end) as $src |
           "--mount", ("type=bind,src=\($src)\(if $vm.subPath then "/\($vm.subPath)" else "" end),dst=\($vm.mountPath)" +
             (if $vm.readOnly then ",readonly" else "" end) +
             (if $vm.mountPropagation == "HostToContainer" then ",bind-propagation=rslave" else "" end))
         end)),
      (if $ctr.command then "--entrypoint", $ctr.command[0] else empty end),
      "--",
      (($ctr.command // [])[1:][]),
      (($ctr.args // [])[])
    ] | .[]' "$spec"
}

# docker_pod RUN SPEC.json CONTAINER VOLUMES FIELDS [DOCKER FLAGS...] [-- ARGS...]: runs the
# container with pod_docker_args's flags plus DOCKER FLAGS (-d, --rm, -p, -e, --mount ...) from
# IMAGE, with the spec's args or, after "--", ARGS instead; returns its exit status (or docker
# run -d's). The container is named $TEST_ID-RUN; its cgroup parent
# /$TEST_ID-RUN keeps the memory peak after it is gone (memory_peak RUN). emptyDir folders are made.
docker_pod() {
  local run=$1 spec=$2 ctr=$3 volumes=$4 fields=$5; shift 5
  local args=() flags=() cargs=() a d seen=false
  mapfile -t args < <(pod_docker_args "$spec" "$ctr" "$volumes" "$fields")
  [[ ${#args[@]} -gt 0 ]] || fail "pod_docker_args: container $ctr of $spec gave nothing"
  for a in "${args[@]}"; do
    if $seen; then cargs+=("$a"); elif [[ $a == -- ]]; then seen=true; else flags+=("$a"); fi
  done
  local extra=()
  while (($# > 0)); do
    if [[ $1 == -- ]]; then shift; cargs=("$@"); break; fi
    extra+=("$1"); shift
  done
  mkdir -p "$SCRATCH/emptydir"
  while read -r d; do mkdir -p "$SCRATCH/emptydir/$d"; done < <(jq -r '(.volumes // [])[] | select(.emptyDir and .emptyDir.medium != "Memory") | .name' "$spec")
  printf '%s\n' "${flags[@]}" >"$SCRATCH/docker-flags.$run"
  docker run --name "$TEST_ID-$run" --label "iogate.test=$TEST_ID" --cgroup-parent "/$TEST_ID-$run" \
    "${flags[@]}" "${extra[@]}" "$IMAGE" "${cargs[@]}"
}

# memory_peak RUN: the most memory the run's cgroup ever charged, in bytes (cgroup v1
# memory.max_usage_in_bytes, v2 memory.peak): what the pod's memory limit is enforced against.
memory_peak() {
  local f
  for f in "/sys/fs/cgroup/memory/$TEST_ID-$1/memory.max_usage_in_bytes" "/sys/fs/cgroup/$TEST_ID-$1/memory.peak"; do
    [[ -r $f ]] && { cat "$f"; return; }
  done
  fail "no memory peak for run $1: cgroup $TEST_ID-$1 not found"
}

# loop_volume NAME [SIZE [RIG OPTIONS...]]: an ext4 file system on a loop device whose backing file
# is on this host's disk (tests/lib/rig.sh, uncapped; `--backing tmpfs` for one in memory), as a CSI
# driver would mount a block PV. Sets LOOP_DIR (its mount point, root-owned 0755 like a fresh file
# system), LOOP_DEV and LOOP_IMG (the backing file). Not in a subshell: the rig is torn down on exit.
loop_volume() {
  if [[ -z "${RIG_STATE_SET:-}" ]]; then
    source "$ROOT/tests/lib/rig.sh"
    RIG_STATE="$SCRATCH/rig" RIG_STATE_SET=1
    on_exit rig_down_all
  fi
  rig_up "$1" --size "${2:-1g}" "${@:3}" >/dev/null || fail "loop volume $1: tests/lib/rig.sh up failed (message above)"
  LOOP_DEV=$(cat "$RIG_STATE/$1/dev") LOOP_IMG=$(cat "$RIG_STATE/$1/img") LOOP_DIR=$(rig_dir "$1")
  # Shared, as a systemd node's mounts are: a HostToContainer (rslave) volumeMount of it is refused
  # by the engine (and by containerd's CRI) where the mount is private, as / is on this machine.
  mount --make-shared "$LOOP_DIR" || fail "mount --make-shared $LOOP_DIR"
}

# docker_gateway: the default bridge's gateway address (cluster_docker_gateway, cluster_lib.sh),
# where a container on that bridge reaches this host. A test that needs a cluster sets
# CLUSTER_HOST to it before sourcing tests/e2e/lib.sh, so that the apiserver listens there: a
# container then reaches it at KUBERNETES_SERVICE_HOST=$CLUSTER_HOST, as a pod reaches the
# kubernetes Service.
docker_gateway() {
  source "$TESTS_DIR/e2e/cluster_lib.sh"
  cluster_docker_gateway ||
    fail "no address for the Docker Engine's default bridge (docker network inspect bridge; ip addr show docker0)"
}

# container_cluster: a throwaway control plane (tests/e2e/lib.sh, sourced here: k, make_node,
# sa_token, helm_install, wait_until) whose apiserver listens on the bridge's gateway, where a
# container reaches it as a pod reaches the kubernetes Service (KUBERNETES_SERVICE_HOST=
# $CLUSTER_HOST, KUBERNETES_SERVICE_PORT=$CLUSTER_PORT) and this host reaches it too.
container_cluster() {
  CLUSTER_HOST=$(docker_gateway) || exit 1
  export CLUSTER_HOST
  source "$TESTS_DIR/e2e/lib.sh"
  CLUSTER_PORT=${CLUSTER_SERVER##*:}
  [[ $CLUSTER_SERVER == "https://$CLUSTER_HOST:"* ]] || fail "the apiserver is at $CLUSTER_SERVER, not on the bridge's $CLUSTER_HOST"
}

# preflight_values OUT NAMESPACE: the preflight tests' chart values (tests/fixtures/
# preflight-values.yaml) with the image under test and preflight for NAMESPACE, written to OUT.
preflight_values() {
  { cat "$TESTS_DIR/fixtures/preflight-values.yaml"
    printf 'image: {repository: "%s", tag: "%s"}\npreflight: {namespaces: [%s]}\n' "${IMAGE%:*}" "${IMAGE##*:}" "$2"
  } >"$1"
}
