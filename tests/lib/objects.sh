# The objects the tests feed iogate, written once: pods, AdmissionReviews and StoragePolicies.
# The layer's lib.sh sources this; jq makes the JSON (as kubectl would send it), policy writes
# into SCRATCH.

# pod NAME NAMESPACE GPUS [SPEC_JSON [METADATA_JSON]]: a training pod (label app=train, one
# container "train"; GPUS 0: no nvidia.com/gpu at all), SPEC_JSON and METADATA_JSON merged over
# its spec and metadata. JSON on stdout.
pod() {
  jq -n --arg n "$1" --arg ns "$2" --argjson g "$3" --argjson spec "${4:-{\}}" --argjson meta "${5:-{\}}" '
    {apiVersion: "v1", kind: "Pod", metadata: ({name: $n, namespace: $ns, labels: {app: "train"}} + $meta),
     spec: ({containers: [{name: "train", image: "registry.example/pytorch:2.5",
       resources: (if $g > 0 then {limits: {"nvidia.com/gpu": ($g | tostring)}} else {} end)}]} + $spec)}'
}

# gpu_pod GPUS [SPEC_JSON]: a Job's worker as the job controller creates it (generateName train-,
# label job-name=train, in ml), its limit nvidia.com/gpu: "GPUS" as given (0 included),
# SPEC_JSON merged over its spec. JSON on stdout.
gpu_pod() {
  jq -n --arg g "$1" --argjson extra "${2:-{\}}" '{apiVersion: "v1", kind: "Pod",
    metadata: {generateName: "train-", namespace: "ml", labels: {"job-name": "train"}},
    spec: ({containers: [{name: "train", image: "pytorch", resources: {limits: {"nvidia.com/gpu": $g}}}]} + $extra)}'
}

# review OP POD_JSON [DRYRUN]: the AdmissionReview kube-apiserver sends a webhook for POD_JSON
# (operation OP: CREATE, UPDATE), from the job controller, in the pod's namespace (ml where it
# has none). JSON on stdout.
review() {
  jq -n --arg op "$1" --argjson pod "$2" --argjson dry "${3:-false}" '{
    apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: {group: "", version: "v1", kind: "Pod"}, resource: {group: "", version: "v1", resource: "pods"},
      requestKind: {group: "", version: "v1", kind: "Pod"}, requestResource: {group: "", version: "v1", resource: "pods"},
      namespace: ($pod.metadata.namespace // "ml"), operation: $op,
      userInfo: {username: "system:serviceaccount:kube-system:job-controller", groups: ["system:serviceaccounts"]},
      object: $pod, oldObject: null, dryRun: $dry, options: {apiVersion: "meta.k8s.io/v1", kind: "CreateOptions"}}}'
}

# policy NAME RUNTIME RULE [FIELD...]: a StoragePolicy written to $SCRATCH/NAME.yaml, its path
# printed: a quick 4k randread workload (queue depth 16, 64 MiB, RUNTIME after a 500 ms ramp), one
# rule gpu-feed with RULE's fields (a YAML flow mapping's body: "min_iops: 100, forbidden_classes:
# [hdd]"), and each FIELD a top-level line ("mode: warn", "node: {taint_effect: NoSchedule}").
policy() {
  local name=$1 runtime=$2 rule=$3
  shift 3
  {
    echo "apiVersion: iogate.io/v1"
    echo "kind: StoragePolicy"
    (($# == 0)) || printf '%s\n' "$@"
    # The tests judge enforcement unless a FIELD says otherwise; a policy naming no mode is warn.
    local field named=""
    for field in "$@"; do [[ $field == mode:* ]] && named=1; done
    [[ -n $named ]] || echo "mode: enforce"
    echo "workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, ramp: 500ms, runtime: $runtime, size: 64m}"
    echo "rules:"
    echo "  - {name: gpu-feed, $rule}"
  } >"$SCRATCH/$name.yaml"
  echo "$SCRATCH/$name.yaml"
}

# node_policy NAME MIN_IOPS_PER_GPU [MODE]: policy's for the node agent, a 2 s probe: rule gpu-feed
# (MIN_IOPS_PER_GPU per GPU, hdd forbidden), MODE (default enforce), the NoSchedule taint, and a
# "fast" tier no disk reaches.
node_policy() {
  policy "$1" 2s "min_iops_per_gpu: $2, forbidden_classes: [hdd]" "mode: ${3:-enforce}" \
    "node: {taint_effect: NoSchedule, fast_min_iops: 1000000000}"
}
