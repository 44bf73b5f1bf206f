#!/usr/bin/env bash
# A Job of N pods on one volume, all starting at once: N `iogate preflight` processes, each its
# own pod (a token bound to its own Pod object, as the kubelet projects one), against a real
# control plane (tests/e2e/cluster_lib.sh) with the apiserver's audit log on. The chart installed
# for preflight as tests/e2e/preflight_world.sh does; one PVC whose volume is a folder on this
# host's disk; N Pod objects; a short probe (64 MiB, ramp 1 s, runtime 3 s), result_ttl 1h. The
# processes are forked first and let go together (tests/e2e/stampede.py run). Then:
#   - exactly one probe (the pods' reports: results[0].source), every pod exit 0 and annotated
#     (iogate.io/verdict, by kubectl), no lock left on the PVC;
#   - from the audit log, per pod: its requests (one per auditID) by verb and resource, and those
#     beyond its own verdict PATCH and Event POST (and the prober's lock renewals): max and
#     distribution; 429s (retried by the client); every request the apiserver served meanwhile,
#     and per second;
#   - the slowest pod's wall time (release to exit) and the median's; the apiserver's, etcd's and
#     all preflights' CPU time over the stampede (/proc, wait4).
# One row to ROWS (tab-separated, the columns below), replacing an earlier row of the same LABEL;
# a summary on stdout. Not a test: times depend on the machine (2 cores here, shared with
# everything else: the 1-minute load average before the run is in the row).
#
#   bash bench/stampede.sh                                   # N=512, LABEL = the commit
#   N=64 LABEL="before (polling waiter)" ROWS=/tmp/s.tsv bash bench/stampede.sh
#   bash bench/run.sh stampede                               # the row, then bench/RESULTS.md
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
N=${N:-512}
ROWS=${ROWS:-$here/results/stampede.tsv}
export IOGATE=${IOGATE:-$root/build/iogate}
[[ -x $IOGATE ]] || { echo "build iogate first: bash scripts/build.sh" >&2; exit 2; }
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "N must be a pod count, not '$N'" >&2; exit 2; }
commit=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- agent charts || echo '+changes')
LABEL=${LABEL:-$commit}
# Each process holds a few descriptors and the apiserver one or two connections per pod.
(($(ulimit -n) >= 4 * N + 1024)) || ulimit -n $((4 * N + 1024)) ||
  { echo "raise the open-files limit to $((4 * N + 1024)) (ulimit -n)" >&2; exit 2; }

# The e2e world: a cluster (audit log on) in a scratch folder removed on exit, helpers, the chart.
CLUSTER_AUDIT_LOG=audit.log
source "$root/tests/e2e/lib.sh"
source "$root/tests/e2e/preflight_world.sh"
make_node "$NODE"
k create namespace "$NS" >/dev/null
helm_install iogate iogate-system --set nodeAgent.enabled=false --set webhook.enabled=false \
  --set grafanaDashboard.enabled=false --set "preflight.namespaces={$NS}"
jq -n --arg ns "$NS" --arg name "$PVC" '{apiVersion: "v1", kind: "PersistentVolumeClaim",
  metadata: {name: $name, namespace: $ns}, spec: {accessModes: ["ReadWriteMany"], resources: {requests: {storage: "1Ti"}}}}' |
  k create -f - >/dev/null
preflight_pods train- "$N"
runs="$SCRATCH/runs"
python3 "$root/tests/e2e/stampede.py" tokens "$runs" "$NS" "$SA" $(seq -f "train-%g" 0 $((N - 1)))
cat >"$SCRATCH/policy.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
on_error: fail-closed
deadline: 300s
result_ttl: 1h
workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, ramp: 1s, runtime: 3s, size: 64m}
rules:
  - name: gpu-feed
    min_iops: 100
P
pass "$N pods on PVC $PVC, each with a kubeconfig holding a token bound to it"

# The machine settles after the set-up (helm, N pod creations, N token requests) before the run.
sleep 10
load=$(cut -d' ' -f1 /proc/loadavg)
POD_NAMESPACE=$NS NODE_NAME=$NODE python3 "$root/tests/e2e/stampede.py" run "$runs" \
  "apiserver=$CLUSTER_APISERVER_PID,etcd=${CLUSTER_PIDS[0]}" -- \
  "$IOGATE" preflight "$DATA" --policy "$SCRATCH/policy.yaml" --output-format json >"$SCRATCH/run.json"
python3 "$root/tests/e2e/stampede.py" audit "$CLUSTER_AUDIT_LOG" "$SCRATCH/run.json" "$NS" "$SA" >"$SCRATCH/audit.json"

failed=$(jq '[.pods[] | select(.exit != 0)] | length' "$SCRATCH/run.json")
((failed == 0)) || echo "bench: $failed pods failed, e.g.: $(jq -r '[.pods | to_entries[] | select(.value.exit != 0) | .key][0]' \
  "$SCRATCH/run.json" | xargs -I{} tail -2 "$runs/{}.log")" >&2
probes=$(cat "$runs"/*.json | jq -s '[.[] | select(.results[0].source == "probe")] | length')
annotated=$(k -n "$NS" get pods -o json | jq '[.items[] | select(.metadata.name | startswith("train-")) |
  select(.metadata.annotations["iogate.io/verdict"] == "pass")] | length')
lock_left=$(k -n "$NS" get pvc "$PVC" -o json | jq '.metadata.annotations | has("iogate.io/probe-lock")')

# The row: LABEL date commit load1 N failed probes annotated lock_left wall_p50_s wall_max_s
# stampede_s apiserver_requests apiserver_rps apiserver_429 preflight_requests beyond_max
# beyond_hist apiserver_cpu_s etcd_cpu_s preflights_cpu_s requests_by_verb
row=$(jq -r --slurpfile a "$SCRATCH/audit.json" --arg lbl "$LABEL" --arg commit "$commit" --arg load "$load" \
  --arg date "$(date -u +%Y-%m-%dT%H:%MZ)" --argjson n "$N" --argjson failed "$failed" --argjson probes "$probes" \
  --argjson annotated "$annotated" --arg lock "$lock_left" '
  $a[0] as $a | ([.pods[].wall_s] | sort) as $w | (.end - .start) as $s |
  [$lbl, $date, $commit, $load, $n, $failed, $probes, $annotated, $lock,
   $w[($w | length) / 2 | floor], $w[-1], ($s * 1000 | round / 1000), $a.apiserver_requests,
   ($a.apiserver_requests / $s | round), $a.apiserver_429, $a.preflight_requests, $a.beyond_max,
   ($a.beyond_hist | to_entries | map("\(.key):\(.value)") | join(" ")),
   .cpu_s.apiserver, .cpu_s.etcd, .cpu_s.preflights,
   ($a.by | to_entries | map("\(.key) \(.value)") | join(", "))] | @tsv' "$SCRATCH/run.json")
mkdir -p "$(dirname "$ROWS")"
{ [[ -f $ROWS ]] && awk -F'\t' -v l="$LABEL" '$1 != l' "$ROWS"; echo "$row"; } >"$ROWS.new"
mv "$ROWS.new" "$ROWS"
echo "$row" | tr '\t' '\n' | paste <(printf '%s\n' label date commit load1 pods failed probes annotated lock_left \
  wall_p50_s wall_max_s stampede_s apiserver_requests apiserver_rps apiserver_429 preflight_requests \
  beyond_max beyond_hist apiserver_cpu_s etcd_cpu_s preflights_cpu_s requests_by_verb) -
