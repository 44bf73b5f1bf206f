#!/usr/bin/env bash
# One verdict for a job on a shared volume (issue 33), on the real kube-apiserver: the pods of one
# job meet on their PVC, read the volume at the same time for the same window, and the sum of what
# they read is judged against the whole job's demand (kube/job_barrier.h).
#
# The volume is a network file system whose server has a limit of its own: sshfs
# (tests/lib/sshfs.sh) served by a loopback sshd inside a rig cgroup (tests/lib/rig.sh) that caps the
# server's reads at RBPS bytes/s; the dataset is 64 KiB files, so the server serves at most
# RBPS / 64 KiB samples/s, to one client or to four. Every preflight is a process of its own
# with its own pod-bound token, straight to the apiserver. The demand is DEMAND samples/s per GPU
# at AU 0.9: one 1-GPU pod needs 0.9 × DEMAND, about half the server's rate; four need twice it.
#   - a lone pod (no job): probes alone, passes; writes nothing on the PVC (a dataset result is
#     never shared with a lone pod);
#   - four pods of one Job (label batch.kubernetes.io/job-name, iogate.io/job-pods: "4"), at once:
#     one barrier, four members, each reports its samples/s; the sum, bounded by the server's cap,
#     is judged for 4 GPUs: each pod fails with the same job-wide figures, annotated on the pod;
#     its record on the PVC is the only one there;
#   - a fifth pod of the job after them: reuses the job's result, probes nothing;
#   - four pods of another job, one SIGKILLed mid-window: the other three do not hang, and their
#     verdict says 3 of 4 reported, still judged for 4 GPUs.
# JOBWIDE_TSV=FILE writes the figures as rows for bench/RESULTS.md (bench/run.sh jobwide).
E2E_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$E2E_HERE/lib.sh"
source "$E2E_HERE/preflight_world.sh"
source "$ROOT/tests/lib/rig.sh"
source "$ROOT/tests/lib/sshfs.sh"

[[ $(id -u) -eq 0 ]] || fail "e2e.jobwide needs root: a loop device and cgroup for the server's cap, sshd, a FUSE mount"
why=$(rig_check 2>&1) || fail "the rig cannot cap the file server here: $why"
why=$(sshfs_check) || fail "$why"

RBPS=${RBPS:-10485760}   # the server's read cap: 10 MiB/s, 160 samples/s of 64 KiB
DEMAND=${DEMAND:-90}     # samples/s per GPU: one pod needs 81 at AU 0.9, four need 324
FILES=${FILES:-3000}
RIG_STATE="$SCRATCH/rig"
SSHFS_STATE="$SCRATCH/sshfs"
on_exit rig_down_all
on_exit sshfs_down_all
rig_up jobwide --backing tmpfs --rbps "$RBPS" --size 512m >/dev/null || fail "rig_up failed"
python3 "$ROOT/tests/integration/make_dataset.py" "$(rig_dir jobwide)/data" --files "$FILES" --dirs 30 --subdirs 3 \
  --min-kib 64 --max-kib 64 --large 0 >/dev/null || fail "make_dataset.py failed"
sync
sshfs_up jobwide "$(rig_dir jobwide)/data" --run rig_run jobwide >/dev/null || fail "sshfs_up failed"
DATA=$(sshfs_mnt jobwide)
findmnt -n -o FSTYPE "$DATA" | grep -q fuse.sshfs || fail "$DATA is not an sshfs mount"
pass "a file server capped at $RBPS bytes/s of reads (sshd in a rig cgroup), $FILES files of 64 KiB, mounted by sshfs at $DATA"

preflight_world "$POD"  # the Node, namespace, chart (preflight's Role), the PVC mounted at $DATA

cat >"$SCRATCH/policy.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
on_error: fail-closed
deadline: 150s
result_ttl: 1h
job_gather_window: 30s
workload: {mode: dataset, runtime: 5s, workers: 4, sample: $FILES, scan_time: 20s}
rules:
  - name: feed
    demand: {samples_per_s: $DEMAND, min_au: 0.9}
P

# job_pods PREFIX N JOB: N 1-GPU pods PREFIX0.. of the Job JOB (its label, and iogate.io/job-pods N).
job_pods() {
  jq -n --arg prefix "$1" --argjson n "$2" --arg job "$3" --arg ns "$NS" --arg node "$NODE" --arg sa "$SA" \
    --arg pvc "$PVC" --arg data "$DATA" '
    {apiVersion: "v1", kind: "List", items: [range($n) | {apiVersion: "v1", kind: "Pod",
      metadata: {name: "\($prefix)\(.)", namespace: $ns, labels: {"batch.kubernetes.io/job-name": $job},
                 annotations: {"iogate.io/job-pods": "\($n)"}},
      spec: {nodeName: $node, serviceAccountName: $sa, automountServiceAccountToken: false, restartPolicy: "Never",
        initContainers: [{name: "iogate-preflight", image: "iogate:0.1.0", volumeMounts: [{name: "dataset", mountPath: $data}]}],
        containers: [{name: "train", image: "trainer", resources: {limits: {"nvidia.com/gpu": "1"}},
                      volumeMounts: [{name: "dataset", mountPath: $data}]}],
        volumes: [{name: "dataset", persistentVolumeClaim: {claimName: $pvc}}]}}]}' | k create -f - >/dev/null
}

# start POD: its preflight in the background, straight to the apiserver with a token bound to
# POD; report POD.json, log POD.log, exit code POD.rc.
start() {
  local kc="$SCRATCH/kubeconfig-$1"
  [[ -f $kc ]] || token_kubeconfig "$kc" "$CLUSTER_SERVER" "$SA" "$(sa_token "$NS" "$SA" "$1")" "$NS"
  (
    rc=0
    KUBECONFIG="$kc" POD_NAME=$1 POD_NAMESPACE=$NS NODE_NAME=$NODE CONTAINER_NAME=iogate-preflight \
      timeout 240 "$IOGATE" preflight "$DATA" --policy "$SCRATCH/policy.yaml" --output-format json \
      --log-level debug >"$SCRATCH/$1.json" 2>"$SCRATCH/$1.log" || rc=$?
    echo $rc >"$SCRATCH/$1.rc"
  ) &
  RUNNING+=($!)
}
# wait_preflights: wait for the preflights started (not the cluster's processes, also this shell's jobs).
RUNNING=()
wait_preflights() {
  local pid
  for pid in "${RUNNING[@]}"; do wait "$pid" || true; done
  RUNNING=()
}
rc_of() { cat "$SCRATCH/$1.rc"; }
cold() { sshfs_cold jobwide || fail "sshfs_cold failed"; }
max_bytes=$(jq -n --argjson r "$RBPS" '$r * 1.15')  # the cap, and the rig's burst slack

# --- a lone pod: one client on the server, alone ---
job_pods solo 1 ""  # (an empty job label: no job)
k -n "$NS" label pod solo0 batch.kubernetes.io/job-name- >/dev/null
k -n "$NS" annotate pod solo0 iogate.io/job-pods- >/dev/null
cold
start solo0
wait_preflights
[[ $(rc_of solo0) -eq 0 ]] || fail "lone pod: exit $(rc_of solo0), want 0 (pass): $(tail -5 "$SCRATCH/solo0.log")"
assert_jq "$SCRATCH/solo0.json" '.outcome == "pass" and .results[0].source == "probe" and .results[0].job == {} and
    (.results[0].verdict.checks[] | select(.check == "demand") | .passed and .demand.accelerators == 1)' \
  "a lone pod (no job): probed alone, one client on the server, passes its 1 GPU's demand"
[[ -z $(pod_annotation solo0 iogate.io/job-measurement) ]] || fail "lone pod: annotated as a job measurement"
# A lone pod's dataset result is its own (its dataset path may differ from the next pod's): never on the PVC.
[[ -z $(pvc_json | jq -r '.metadata.annotations // {} | to_entries[] | select(.key | startswith("iogate.io/")) | .key') ]] ||
  fail "lone pod: wrote on the PVC: $(pvc_json | jq -c .metadata.annotations)"
assert_jq "$SCRATCH/solo0.json" ".results[0].measurement.bandwidth_bytes_per_s <= $max_bytes" \
  "lone pod: read no faster than the server's cap (no client cache posing as the server)"

# --- four pods of one Job at once: one barrier, four clients, one verdict ---
job_pods train-j 5 train  # the fifth comes later
for i in 0 1 2 3; do k -n "$NS" annotate pod "train-j$i" --overwrite iogate.io/job-pods=4 >/dev/null; done
k -n "$NS" annotate pod train-j4 --overwrite iogate.io/job-pods=4 >/dev/null
cold
for i in 0 1 2 3; do start "train-j$i"; done
wait_preflights
for i in 0 1 2 3; do
  p=train-j$i
  [[ $(rc_of $p) -eq 1 ]] || fail "$p: exit $(rc_of $p), want 1 (below policy): $(tail -5 "$SCRATCH/$p.log")"
  assert_jq "$SCRATCH/$p.json" '.outcome == "fail" and .results[0].source == "job" and
      .results[0].job.name == "Job train" and .results[0].job.recognised_by == "job" and
      (.results[0].job.members | length == 4) and .results[0].job.members_reported == 4 and
      .results[0].job.demand_gpus == 4 and
      (.results[0].job.samples_per_s - ([.results[0].job.members[].samples_per_s] | add) | fabs < 0.01) and
      (.results[0].measurement.samples_per_s == .results[0].job.samples_per_s) and
      (.results[0].verdict.checks[] | select(.check == "demand") | (.passed | not) and .demand.accelerators == 4)' \
    "$p: a member of 4, the sum of their samples/s judged for the job's 4 GPUs: fail"
  assert_jq "$SCRATCH/$p.json" ".results[0].job.bandwidth_bytes_per_s <= $max_bytes" \
    "$p: the four together read no faster than the server's cap"
  a=$(pod_annotation $p iogate.io/job-measurement)
  jq -e '.members == 4 and .reported == 4 and .demand_gpus == 4 and (.per_member | length == 4)' <<<"$a" >/dev/null ||
    fail "$p: iogate.io/job-measurement: $a"
done
# One verdict: every member judged the same figures.
[[ $(jq -s '[.[].results[0].job.samples_per_s] | unique | length' "$SCRATCH"/train-j[0-3].json) -eq 1 ]] ||
  fail "the members judged different sums: $(jq -c '.results[0].job.samples_per_s' "$SCRATCH"/train-j[0-3].json)"
pass "one verdict for the job: the same sum on every member's report and pod"
barrier=$(pvc_json | jq -c '.metadata.annotations | to_entries[] | select(.key | startswith("iogate.io/job-probe.")) | .value | fromjson')
jq -e '.state == "done" and .job == "'"$NS"'/Job/train" and (.members | length == 4)' <<<"$barrier" >/dev/null ||
  fail "the job's record on the PVC: $barrier"
[[ $(pvc_json | jq '[.metadata.annotations | keys[] | select(startswith("iogate.io/"))] | length') -eq 1 ]] ||
  fail "the PVC holds more than the job's record: $(pvc_json | jq -c '.metadata.annotations | keys')"
pass "the PVC: the job's result recorded once under its own key, no lone pod's result beside it"
solo_sps=$(jq '.results[0].measurement.samples_per_s' "$SCRATCH/solo0.json")
job_sps=$(jq '.results[0].job.samples_per_s' "$SCRATCH/train-j0.json")
echo "lone client: $solo_sps samples/s; four clients together: $job_sps samples/s ($(jq -c '[.results[0].job.members[].samples_per_s | round]' "$SCRATCH/train-j0.json"))"

# --- a fifth pod of the job, late: reuses the job's result ---
start train-j4
wait_preflights
[[ $(rc_of train-j4) -eq 1 ]] || fail "late pod: exit $(rc_of train-j4), want 1: $(tail -5 "$SCRATCH/train-j4.log")"
assert_jq "$SCRATCH/train-j4.json" '.results[0].source == "job-shared" and .results[0].job.member_index == -1 and
    (.results[0].job.samples_per_s - '"$job_sps"' | fabs) < 0.001' "a late pod of the job: the job's result reused, the same sum"
if grep -q "probing dataset" "$SCRATCH/train-j4.log"; then fail "late pod: probed"; fi

# --- another job of four, one member SIGKILLed mid-window: the others finish ---
job_pods train-k 4 train-k
cold
for i in 0 1 2 3; do start "train-k$i"; done
wait_until 120 grep -q "probes with 4 members" "$SCRATCH/train-k3.log" || fail "kill: train-k3 never started probing"
sleep 2
victim=""
for pid in $(pgrep -x iogate); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx POD_NAME=train-k3; then victim=$pid; fi
done
[[ -n $victim ]] || fail "kill: no iogate process for train-k3"
kill -KILL "$victim"
wait_preflights
for i in 0 1 2; do
  p=train-k$i
  [[ $(rc_of $p) -le 1 ]] || fail "$p: exit $(rc_of $p) after a member died: $(tail -5 "$SCRATCH/$p.log")"
  assert_jq "$SCRATCH/$p.json" '.results[0].source == "job" and .results[0].job.members_reported == 3 and
      (.results[0].job.members | length == 4) and .results[0].job.demand_gpus == 4' \
    "$p: a member died mid-window: finished with 3 of 4 reported, still judged for 4 GPUs"
done

if [[ -n ${JOBWIDE_TSV:-} ]]; then
  # date, commit, run, pods, reported, samples/s, bytes/s, GPUs judged, samples/s needed, predicted AU,
  # verdict, the server's cap (bytes/s), each member's samples/s
  stamp=$(date -u +%Y-%m-%dT%H:%MZ)
  commit=$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- agent || echo '+changes')
  row() {  # RUN REPORT WHERE: WHERE the figures' object (.measurement or .job)
    jq -r --arg d "$stamp" --arg c "$commit" --arg run "$1" --arg rbps "$RBPS" '[$d, $c, $run,
        (.results[0].job.members // [1] | length), (.results[0].job.members_reported // 1),
        .results[0]'"$3"'.samples_per_s, .results[0]'"$3"'.bandwidth_bytes_per_s,
        (.results[0].verdict.checks[] | select(.check == "demand") | .demand | .accelerators, .samples_per_s_needed, .predicted_au),
        .outcome, $rbps, ([.results[0].job.members[]?.samples_per_s | round | tostring] | join(","))] | @tsv' "$2"
  }
  { row "one pod alone" "$SCRATCH/solo0.json" .measurement; row "4 pods of one job" "$SCRATCH/train-j0.json" .job;
    row "4 pods, one killed mid-window" "$SCRATCH/train-k0.json" .job; } >"$JOBWIDE_TSV"
fi
pass "e2e.jobwide"
