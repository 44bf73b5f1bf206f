# The world of a training pod that iogate preflight runs in (no kubelet runs it: preflight runs on
# this host, in its shoes). Source it after lib.sh; it sets the names below.
NS=ml
NODE=gpu-node-1
POD=train-0
PVC=imagenet
SA=iogate-preflight       # the chart's preflight account: <fullname>-preflight, release iogate
DATA="$SCRATCH/dataset"   # the PVC's volume, a folder on this host
mkdir -p "$DATA"

# preflight_world POD: a Node (make_node), the namespace, the chart installed (release iogate in
# iogate-system) with preflight for it, so the ServiceAccount SA and its Role are the chart's own
# (the webhook and the node agent off: no kubelet runs their pods), the dataset's claim PVC (with
# an annotation of someone else's that must survive), and the pod POD (preflight_pod).
preflight_world() {
  make_node "$NODE"
  k create namespace "$NS" >/dev/null
  helm_install iogate iogate-system --set nodeAgent.enabled=false --set webhook.enabled=false \
    --set grafanaDashboard.enabled=false --set "preflight.namespaces={$NS}"
  k -n "$NS" get serviceaccount "$SA" >/dev/null || fail "the chart made no ServiceAccount $SA in $NS"
  jq -n --arg ns "$NS" --arg name "$PVC" '{apiVersion: "v1", kind: "PersistentVolumeClaim",
    metadata: {name: $name, namespace: $ns, annotations: {"example.com/backup": "daily"}},
    spec: {accessModes: ["ReadWriteMany"], resources: {requests: {storage: "1Ti"}}}}' | k create -f - >/dev/null
  preflight_pod "$1"
}

# preflight_pod NAME: a training pod on NODE as SA, 2 GPUs, the PVC mounted at DATA, iogate
# preflight as its init container.
preflight_pod() {
  jq -n --arg ns "$NS" --arg name "$1" --arg node "$NODE" --arg sa "$SA" --arg pvc "$PVC" --arg data "$DATA" '{
    apiVersion: "v1", kind: "Pod",
    metadata: {name: $name, namespace: $ns, annotations: {"example.com/owner": "alice"}},
    spec: {nodeName: $node, serviceAccountName: $sa, automountServiceAccountToken: false, restartPolicy: "Never",
      initContainers: [{name: "iogate-preflight", image: "iogate:0.1.0", volumeMounts: [{name: "dataset", mountPath: $data}]}],
      containers: [{name: "train", image: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                    resources: {limits: {"nvidia.com/gpu": "2"}}, volumeMounts: [{name: "dataset", mountPath: $data}]}],
      volumes: [{name: "dataset", persistentVolumeClaim: {claimName: $pvc}}]}}' | k create -f - >/dev/null
}

# preflight_pods PREFIX N: N pods PREFIX0..PREFIX(N-1) like preflight_pod's (1 GPU each), created
# as one List: a Job's workers on one volume.
preflight_pods() {
  jq -n --arg prefix "$1" --argjson n "$2" --arg ns "$NS" --arg node "$NODE" --arg sa "$SA" --arg pvc "$PVC" --arg data "$DATA" '
    {apiVersion: "v1", kind: "List", items: [range($n) | {apiVersion: "v1", kind: "Pod",
      metadata: {name: "\($prefix)\(.)", namespace: $ns},
      spec: {nodeName: $node, serviceAccountName: $sa, automountServiceAccountToken: false, restartPolicy: "Never",
        initContainers: [{name: "iogate-preflight", image: "iogate:0.1.0", volumeMounts: [{name: "dataset", mountPath: $data}]}],
        containers: [{name: "train", image: "trainer", resources: {limits: {"nvidia.com/gpu": "1"}},
                      volumeMounts: [{name: "dataset", mountPath: $data}]}],
        volumes: [{name: "dataset", persistentVolumeClaim: {claimName: $pvc}}]}}]}' | k create -f - >/dev/null
}
