#!/usr/bin/env bash
# probe and detect in the image, run by the Docker Engine the way the preflight initContainer
# runs: the image's user (65532), read-only root, every capability dropped, no-new-privileges,
# Docker's default seccomp profile, and the memory and CPU limits of the chart's
# preflight.resources. The volumes a training pod gets:
#   - a PVC: ext4 on a loop device backed by a file on this host's disk, bind-mounted at /data;
#   - an emptyDir with medium Memory: a tmpfs at /shm;
#   - an emptyDir on the node's root disk: a host folder on / bind-mounted at /cache;
#   - the container's own root (the engine's overlay), read-only.
# Shows: libaio works under the default seccomp profile (the report's engine); the test file is
# created and removed (also when `docker stop` sends SIGTERM to iogate as PID 1); IOPS agree with
# the same probe run on the host (paired, alternating rounds; the ratio is printed, and only a
# gross gap fails); detect in the container names the loop device and its backing file as on the
# host, leaves the backing file's host path unknown rather than misplacing it on the container's
# root, and with the host's /proc and /sys at /host (--root /host) gives the host's answer
# exactly; the memory peak (the cgroup's) stays under the limit.
source "$(dirname "$0")/lib.sh"
need_image

# The chart's preflight limits, as the user's values give them (defaults here).
read -r MEM CPU < <("$PY" -c 'import sys, yaml
r = yaml.safe_load(open(sys.argv[1]))["preflight"]["resources"]["limits"]
print(r["memory"], r["cpu"])' "$CHART/values.yaml")
SPEC="$SCRATCH/pod.json"
# The initContainer the webhook injects (agent/webhook/preflight_injection.cc: no runAsUser, so
# the image's USER), with the chart's preflight resources, as a pod spec pod_docker_args maps.
jq -n --arg mem "$MEM" --arg cpu "$CPU" '{containers: [{name: "iogate-preflight",
  securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}},
  resources: {limits: {memory: $mem, cpu: $cpu}, requests: {memory: $mem, cpu: $cpu}}}]}' >"$SPEC"
# in_pod RUN [docker flags...] -- IOGATE ARGS...: one run of the image with the pod's flags.
in_pod() {
  local run=$1; shift
  local flags=()
  while [[ $1 != -- ]]; do flags+=("$1"); shift; done
  shift
  docker_pod "$run" "$SPEC" iogate-preflight '{}' '{}' --rm "${flags[@]}" -- "$@"
}
docker_pod_args_ok=$(pod_docker_args "$SPEC" iogate-preflight '{}' '{}' | tr '\n' ' ')
[[ "$docker_pod_args_ok" == *"--read-only"*"--cap-drop ALL"*"no-new-privileges"*"--memory"*"--cpus"* ]] ||
  fail "pod_docker_args did not map the pod's securityContext and limits: $docker_pod_args_ok"
pass "the pod's flags: $docker_pod_args_ok(the image's user $(docker image inspect -f '{{.Config.User}}' "$IMAGE"))"

# --- the PVC: ext4 on a disk-backed loop device ---
loop_volume pvc 1g
chown 65532:65532 "$LOOP_DIR"   # what fsGroup or a provisioner's ownership gives the pod
# The host run is the same user: it must reach the mount point through the scratch folders.
d=$LOOP_DIR; while [[ $d != "$SCRATCH_BASE" && $d != / ]]; do d=$(dirname "$d"); chmod a+x "$d"; done
WORKLOAD=(--rw randread --bs 4k --iodepth 16 --size 64m --ramp 1s --runtime 3s --output-format json)
ROUNDS=3
for r in $(seq $ROUNDS); do
  # Alternating order, so that a drift of the shared disk favours neither side.
  for side in host container; do
    [[ $((r % 2)) -eq 0 ]] && side=$([[ $side == host ]] && echo container || echo host)
    if [[ $side == host ]]; then
      setpriv --reuid 65532 --regid 65532 --clear-groups "$IOGATE" probe "$LOOP_DIR" "${WORKLOAD[@]}" \
        >"$SCRATCH/host.$r.json" 2>"$SCRATCH/host.$r.err" || fail "host probe: $(cat "$SCRATCH/host.$r.err")"
    else
      in_pod "probe$r" --mount "type=bind,src=$LOOP_DIR,dst=/data" -- probe /data "${WORKLOAD[@]}" \
        >"$SCRATCH/ctr.$r.json" 2>"$SCRATCH/ctr.$r.err" || fail "probe in the container: $(cat "$SCRATCH/ctr.$r.err")"
    fi
  done
done
assert_jq "$SCRATCH/ctr.1.json" '.ioengine == "libaio" and .direct == true and .target.test_file_created == true' \
  "probe in the container: libaio with O_DIRECT under Docker's default seccomp profile, its own test file"
assert_no_test_files "$LOOP_DIR"
host_iops=$(jq -s 'map(.aggregate.read.iops) | add' "$SCRATCH"/host.*.json)
ctr_iops=$(jq -s 'map(.aggregate.read.iops) | add' "$SCRATCH"/ctr.*.json)
ratio=$(jq -n "$ctr_iops / $host_iops * 1000 | round / 1000")
per_round=$(for r in $(seq $ROUNDS); do jq -s '(.[1].aggregate.read.iops / .[0].aggregate.read.iops * 100 | round) / 100' "$SCRATCH/host.$r.json" "$SCRATCH/ctr.$r.json"; done | tr '\n' ' ')
# A gross gap only (a buffered or synchronous fallback, a throttled cgroup): the disk is shared.
jq -e -n "$ratio > 0.5 and $ratio < 2" >/dev/null ||
  fail "the container's IOPS are ${ratio}x the host's ($ctr_iops vs $host_iops over $ROUNDS rounds)"
pass "container/host IOPS ratio $ratio over $ROUNDS paired rounds (per round: $per_round; host $(jq -n "$host_iops / $ROUNDS | round"), container $(jq -n "$ctr_iops / $ROUNDS | round") IOPS)"
peak=$(memory_peak probe1)
limit=$(pod_docker_args "$SPEC" iogate-preflight '{}' '{}' | sed -n '/^--memory$/{n;p;q}')
((peak < limit)) || fail "memory peak $peak bytes reached the limit $limit"
pass "memory peak $((peak / 1024)) KiB (cgroup, page cache included) under the chart's limit $MEM"

# --- detect: the same stack from inside ---
# Compared: class, the stack (loop device, its backing file, the host disk under it), the mount's
# device, source and type; paths and mount points differ by design.
view='{class, slowest_leaf, stack, mount: {fstype: .mount.fstype, source: .mount.source, device: .mount.device}}'
"$IOGATE" detect "$LOOP_DIR" --output-format json | jq -S "$view" >"$SCRATCH/detect.host.json"
loop=$(basename "$LOOP_DEV")
jq -e --arg loop "$loop" --arg img "$LOOP_IMG" '[.. | objects | select(.name? == $loop and .backing_file? == $img)] | length == 1' \
  "$SCRATCH/detect.host.json" >/dev/null || fail "detect on the host does not name $loop backed by $LOOP_IMG: $(cat "$SCRATCH/detect.host.json")"
# As the preflight pod sees it: the device from its mount (sysfs is the host's), but the backing
# file's path is the host's, which this mount namespace does not hold. Left unknown, with the
# way to see it, rather than classed as the container's own root (it once said network-fs, the
# engine's fuse-overlayfs).
in_pod detect --mount "type=bind,src=$LOOP_DIR,dst=/data" -- detect /data --output-format json \
  >"$SCRATCH/detect.ctr.raw" 2>"$SCRATCH/detect.err" || fail "detect in the container: $(cat "$SCRATCH/detect.err")"
jq -e --arg loop "$loop" --arg img "$LOOP_IMG" --slurpfile h "$SCRATCH/detect.host.json" '
  .mount.device == $h[0].mount.device and .mount.source == $h[0].mount.source and .class == "unknown" and
  ([.. | objects | select(.name? == $loop and .backing_file? == $img and .class == "unknown")] | length == 1) and
  ([.. | objects | select(.kind? == "file" and (.reason | test("not in this mount namespace.*--root /host")))] | length == 1)' \
  "$SCRATCH/detect.ctr.raw" >/dev/null || fail "detect /data in a bare container: $(jq -c "$view" "$SCRATCH/detect.ctr.raw")"
pass "detect /data in the pod's container: $loop backed by $LOOP_IMG, as on the host; the host path is not followed (class unknown: $(jq -r '.. | objects | select(.kind? == "file") | .reason' "$SCRATCH/detect.ctr.raw" | head -c 90)...)"
# With the host's /proc and /sys read-only at /host, as the node agent's DaemonSet mounts them:
# exactly the host's answer.
in_pod detecthost --mount type=bind,src=/proc,dst=/host/proc,readonly --mount type=bind,src=/sys,dst=/host/sys,readonly -- \
  detect "$LOOP_DIR" --root /host --output-format json >"$SCRATCH/detect.root.raw" 2>"$SCRATCH/detect.err" ||
  fail "detect --root /host in the container: $(cat "$SCRATCH/detect.err")"
jq -S "$view" "$SCRATCH/detect.root.raw" >"$SCRATCH/detect.root.json"
diff -u "$SCRATCH/detect.host.json" "$SCRATCH/detect.root.json" >"$SCRATCH/detect.diff" ||
  fail "detect --root /host differs inside the container: $(cat "$SCRATCH/detect.diff")"
pass "detect --root /host in the container (host /proc, /sys read-only) = on the host: $loop backed by $LOOP_IMG, class $(jq -r .class "$SCRATCH/detect.root.json"), under $(jq -r '[.. | objects | select(.kind? == "disk") | .name] | join(",")' "$SCRATCH/detect.root.json")"

# --- emptyDir on the node's root disk: a host folder on / ---
NODE_DIR=$(mktemp -d /var/lib/iogate-emptydir.XXXXXX)
on_exit "rm -rf $NODE_DIR"
chown 65532:65532 "$NODE_DIR"
"$IOGATE" detect "$NODE_DIR" --output-format json | jq -S "$view" >"$SCRATCH/root.host.json"
in_pod rootdetect --mount "type=bind,src=$NODE_DIR,dst=/cache" -- detect /cache --output-format json \
  | jq -S "$view" >"$SCRATCH/root.ctr.json" || fail "detect /cache in the container"
diff -u "$SCRATCH/root.host.json" "$SCRATCH/root.ctr.json" >"$SCRATCH/root.diff" ||
  fail "detect of the node's root disk differs inside the container: $(cat "$SCRATCH/root.diff")"
in_pod rootprobe --mount "type=bind,src=$NODE_DIR,dst=/cache" -- probe /cache "${WORKLOAD[@]}" >"$SCRATCH/root.json" 2>"$SCRATCH/root.err" ||
  fail "probe /cache: $(cat "$SCRATCH/root.err")"
assert_jq "$SCRATCH/root.json" '.ioengine == "libaio" and .aggregate.read.iops > 0' \
  "emptyDir on the node's root disk ($(jq -r .class "$SCRATCH/root.ctr.json"), as on the host): probed, $(jq '.aggregate.read.iops | round' "$SCRATCH/root.json") IOPS"
assert_no_test_files "$NODE_DIR"

# --- emptyDir medium Memory: tmpfs ---
in_pod tmpfs --mount type=tmpfs,dst=/shm,tmpfs-mode=1777 -- detect /shm --output-format json >"$SCRATCH/tmpfs.json" 2>"$SCRATCH/tmpfs.err" ||
  fail "detect /shm: $(cat "$SCRATCH/tmpfs.err")"
assert_jq "$SCRATCH/tmpfs.json" '.class == "ram" and .mount.fstype == "tmpfs"' "emptyDir medium Memory: detect says class ram (tmpfs)"
rc=0
in_pod tmpfsprobe --mount type=tmpfs,dst=/shm,tmpfs-mode=1777 -- probe /shm "${WORKLOAD[@]}" >"$SCRATCH/tmpfs-probe.json" 2>"$SCRATCH/tmpfs-probe.err" || rc=$?
"$IOGATE" probe /dev/shm "${WORKLOAD[@]}" >"$SCRATCH/tmpfs-host.json" 2>"$SCRATCH/tmpfs-host.err" || host_rc=$?
[[ $rc -eq ${host_rc:-0} ]] || fail "probe on tmpfs: exit $rc in the container, ${host_rc:-0} on the host: $(cat "$SCRATCH/tmpfs-probe.err")"
if [[ $rc -eq 0 ]]; then
  jq -e --slurpfile h "$SCRATCH/tmpfs-host.json" '.direct == $h[0].direct and .ioengine == $h[0].ioengine' "$SCRATCH/tmpfs-probe.json" >/dev/null ||
    fail "probe on tmpfs: engine/direct differ from the host's"
  pass "probe on tmpfs: as on the host (engine $(jq -r .ioengine "$SCRATCH/tmpfs-probe.json"), direct $(jq -r .direct "$SCRATCH/tmpfs-probe.json"))"
else
  pass "probe on tmpfs: exit $rc as on the host: $(head -1 "$SCRATCH/tmpfs-probe.err")"
fi

# --- the container's own root: the engine's overlay, read-only ---
in_pod overlay -- detect / --output-format json >"$SCRATCH/overlay.json" 2>"$SCRATCH/overlay.err" || fail "detect /: $(cat "$SCRATCH/overlay.err")"
driver=$(docker info -f '{{.Driver}}')
assert_jq "$SCRATCH/overlay.json" '.mount.point == "/" and .mount.read_only == true and (.mount.fstype | test("overlay"))' \
  "detect / in the container: the engine's $driver root ($(jq -r '.mount.fstype + ", class " + .class' "$SCRATCH/overlay.json")), read-only"
# A read-only PATH is read, not written: its largest existing files, on its own file system only
# (the root's /proc and /sys are other mounts; a sysfs file lists 4096 bytes and reads 2, a
# "short pread").
in_pod rootro -- probe / "${WORKLOAD[@]}" >"$SCRATCH/rootro.json" 2>"$SCRATCH/rootro.err" ||
  fail "probe / on the read-only root: $(cat "$SCRATCH/rootro.err")"
assert_jq "$SCRATCH/rootro.json" '.target.read_only == true and .target.test_file_created == false and
  (.target.files | length) >= 1 and all(.target.files[]; (.path | test("^/(proc|sys|dev)/") | not)) and
  any(.target.files[]; .path == "/iogate") and (.warnings | any(test("read-only: read [0-9]+ existing file")))' \
  "probe / on the read-only root: reads the root's own files ($(jq -r '[.target.files[].path] | join(", ")' "$SCRATCH/rootro.json")), writes nothing"

# --- docker stop: SIGTERM to iogate as PID 1 removes the test file ---
in_pod stopped -d --mount "type=bind,src=$LOOP_DIR,dst=/data" -- probe /data --size 64m --runtime 60s --output-format json >/dev/null
wait_test_file "$LOOP_DIR" || fail "the long probe made no test file"
docker stop -t 10 "$TEST_ID-stopped" >/dev/null
assert_no_test_files "$LOOP_DIR"
pass "docker stop (SIGTERM to PID 1): the probe stopped and removed its test file"
