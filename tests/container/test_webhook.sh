#!/usr/bin/env bash
# iogate webhook in the image, run by the Docker Engine as the chart runs its Deployment's pod
# (rendered with the webhook on, the node agent off; pod_docker_args maps the pod's security
# context, resources, args and its one projected volume), called by the real kube-apiserver of a
# throwaway control plane through a port published on 127.0.0.1. The volume at /etc/iogate (policy
# ConfigMap + TLS Secret) and the service-account volume are host folders laid out as the kubelet
# lays them out: files are links through `..data` to a timestamped folder, mounted read-only. The
# chart's Mutating/ValidatingWebhookConfiguration are applied as rendered, with clientConfig
# switched from the Service to url https://127.0.0.1:PORT/... and caBundle the test's CA. Through
# kubectl: a GPU pod pinned to a node below the policy is refused with the webhook's message (which
# needs its in-cluster Node look-up: the chart's ServiceAccount token, CA, namespace and
# KUBERNETES_SERVICE_HOST/PORT), one pinned to a fast node is admitted with the required node
# affinity, a CPU pod is admitted unchanged. Rotation: a pair from a second CA is published by
# swapping `..data`, the configurations get the new caBundle alone; the webhook reloads (default
# --cert-check-interval), openssl s_client sees the new certificate and the apiserver's calls work
# again, which only the new certificate can satisfy. The container stops cleanly on SIGTERM, its
# memory peak stays under the chart's limit, and the token never reaches its log.
source "$(dirname "$0")/lib.sh"
need_image
container_cluster

NS=iogate-system
HOOK=iogate-webhook
TRAIN=ml
CTR="$TEST_ID-hook"

# --- the chart as rendered ---------------------------------------------------------------------
# The first release's policy defaults (the 4 KiB floor, enforced): what this test refuses by.
chart_render "$SCRATCH/chart.json" --set nodeAgent.enabled=false --set policy.profile=image-classification \
  --set policy.mode=enforce
pod_spec "$SCRATCH/chart.json" Deployment "$HOOK" >"$SCRATCH/spec.json"
assert_jq "$SCRATCH/spec.json" '.containers[0].args[0] == "webhook" and
  (.containers[0].ports | map(select(.name == "https")) | length == 1) and
  (.volumes | map(.name) == ["config"]) and (.containers[0].volumeMounts == [{name: "config", mountPath: "/etc/iogate", readOnly: true}])' \
  "rendered Deployment $HOOK: iogate webhook, port https, one read-only projected volume at /etc/iogate"
CPORT=$(jq -r '.containers[0].ports[] | select(.name == "https") | .containerPort' "$SCRATCH/spec.json")
[[ $(jq '[.[] | select(.kind == "DaemonSet")] | length' "$SCRATCH/chart.json") == 0 ]] || fail "nodeAgent.enabled=false still renders a DaemonSet"

# publish DIR PATH=FILE...: a volume as the kubelet's atomic writer writes it: the files in a new
# ..<timestamp> folder, ..data swapped to it by a rename, each top-level name a link through
# ..data, the previous generation removed. Mode 0644 (a projected volume's defaultMode), so the
# image's user 65532 reads them.
publish() {
  local dir=$1 gen kv old top; shift
  gen=$(date -u +..%Y_%m_%d_%H_%M_%S.%N)
  mkdir -p "$dir/$gen"
  for kv in "$@"; do
    mkdir -p "$(dirname "$dir/$gen/${kv%%=*}")"
    install -m 0644 "${kv#*=}" "$dir/$gen/${kv%%=*}"
  done
  chmod -R a+rX "$dir"
  old=$(readlink "$dir/..data" || true)
  ln -s "$gen" "$dir/..data_tmp" && mv -T "$dir/..data_tmp" "$dir/..data"
  for kv in "$@"; do
    top=${kv%%/*} top=${top%%=*}
    [[ -L $dir/$top ]] || ln -s "..data/$top" "$dir/$top"
  done
  [[ -z $old ]] || rm -rf "${dir:?}/$old"
}
# The projected volume's items, from the rendered spec: ConfigMap policy.yaml and Secret tls.crt/tls.key.
item() { jq -r --arg s "$1" --arg k "$2" '.volumes[0].projected.sources[][$s] // empty | .items[] | select(.key == $k) | .path' "$SCRATCH/spec.json"; }
P_POLICY=$(item configMap policy.yaml) P_CRT=$(item secret tls.crt) P_KEY=$(item secret tls.key)
[[ $P_POLICY == policy.yaml && $P_CRT == tls/tls.crt && $P_KEY == tls/tls.key ]] ||
  fail "unexpected projected items: $P_POLICY $P_CRT $P_KEY"
jq -r --arg n iogate-policy '.[] | select(.kind == "ConfigMap" and .metadata.name == $n) | .data["policy.yaml"]' \
  "$SCRATCH/chart.json" >"$SCRATCH/policy.yaml"
[[ -s $SCRATCH/policy.yaml ]] || fail "no ConfigMap iogate-policy in the rendered chart"

# Two CAs, a serving pair from each, valid for the published address (the webhook URL's host) and
# the Service names.
SANS="IP:127.0.0.1,DNS:$HOOK.$NS.svc,DNS:$HOOK.$NS.svc.cluster.local"
for i in 1 2; do
  pki_ca "$SCRATCH/pki$i" "iogate-webhook-test-ca-$i"
  pki_sign "$SCRATCH/pki$i" tls "/CN=$HOOK.$NS.svc" "$(pki_server_ext "$SANS")"
done
fp() { openssl x509 -noout -fingerprint -sha256 -in "$1"; }
serial() { openssl x509 -noout -serial -in "$1" | cut -d= -f2; }
VOL="$SCRATCH/vol-config"
publish "$VOL" "$P_POLICY=$SCRATCH/policy.yaml" "$P_CRT=$SCRATCH/pki1/tls.crt" "$P_KEY=$SCRATCH/pki1/tls.key"
[[ -L $VOL/tls && $(readlink "$VOL/..data") == ..20* && $(cat "$VOL/$P_CRT") == "$(cat "$SCRATCH/pki1/tls.crt")" ]] ||
  fail "volume layout: $(ls -la "$VOL")"
pass "config volume as the kubelet writes it: policy.yaml, tls -> ..data/... -> $(readlink "$VOL/..data")"

# --- the cluster side: namespaces, nodes, the chart's webhook RBAC -----------------------------
k create namespace "$NS" >/dev/null
k create namespace "$TRAIN" >/dev/null
make_node fast-1 iogate.io/randread-iops=250000 iogate.io/disk-class=nvme iogate.io/tier=fast
make_node slow-1 iogate.io/randread-iops=3000 iogate.io/disk-class=cloud-block iogate.io/tier=slow
jq --arg n "$HOOK" '{apiVersion: "v1", kind: "List", items: [.[] | select(.metadata.name == $n and
  (.kind == "ServiceAccount" or .kind == "ClusterRole" or .kind == "ClusterRoleBinding"))]}' "$SCRATCH/chart.json" >"$SCRATCH/rbac.json"
[[ $(jq '.items | length' "$SCRATCH/rbac.json") == 3 ]] || fail "the chart's webhook ServiceAccount/ClusterRole/Binding not rendered"
k apply -f "$SCRATCH/rbac.json" >/dev/null
TOKEN=$(sa_token "$NS" "$HOOK")
printf '%s' "$TOKEN" >"$SCRATCH/token" && printf '%s' "$NS" >"$SCRATCH/namespace"
SA="$SCRATCH/vol-sa"
publish "$SA" "token=$SCRATCH/token" "ca.crt=$CLUSTER_CA" "namespace=$SCRATCH/namespace"
pass "nodes fast-1 (250000 IOPS), slow-1 (3000); the chart's RBAC; token of $NS/$HOOK"

# --- the container -------------------------------------------------------------------------------
read -r PORT <<<"$(free_ports 1)"
API=${CLUSTER_SERVER#https://}
docker_pod hook "$SCRATCH/spec.json" webhook "$(jq -nc --arg v "$VOL" '{config: $v}')" '{}' -d \
  -p "127.0.0.1:$PORT:$CPORT" -e "KUBERNETES_SERVICE_HOST=${API%:*}" -e "KUBERNETES_SERVICE_PORT=${API##*:}" \
  --mount "type=bind,src=$SA,dst=/var/run/secrets/kubernetes.io/serviceaccount,readonly" >/dev/null ||
  fail "docker run: $(docker logs "$CTR" 2>&1 | tail -5)"
# Removed before lib.sh's cleanup removes the run's cgroup (on_exit runs last-in first-out, and a
# cgroup with a live container in it cannot be removed).
on_exit "docker rm -f $CTR"
# logs: the container's log (both streams); in_log GREP ARGS: a line of it matches (no pipe into grep
# -q: under pipefail, docker logs cut off by grep's early exit would read as no match).
logs() { docker logs "$CTR" 2>&1; }
in_log() { docker logs "$CTR" >"$SCRATCH/hook.log" 2>&1 && grep -q "$@" "$SCRATCH/hook.log"; }
wait_until 30 in_log -F "serving /mutate" ||
  fail "iogate webhook not serving after 30 s ($(docker inspect -f '{{.State.Status}}' "$CTR")): $(logs)"
docker inspect "$CTR" >"$SCRATCH/inspect.json"
LIMIT=$(jq '.containers[0].resources.limits.memory | capture("^(?<n>[0-9]+)Mi$").n | tonumber * 1048576' "$SCRATCH/spec.json")
assert_jq "$SCRATCH/inspect.json" '.[0] | .Config.User == "65532:65532" and .HostConfig.ReadonlyRootfs and
  .HostConfig.CapDrop == ["ALL"] and (.HostConfig.SecurityOpt | index("no-new-privileges")) != null and
  .HostConfig.Memory == '"$LIMIT"' and .HostConfig.NanoCpus > 0 and
  (.Mounts | map(select(.Destination == "/etc/iogate")) | .[0].RW == false)' \
  "container: user 65532:65532, read-only root, cap-drop ALL, no-new-privileges, the chart's limits ($((LIMIT / 1048576))Mi), /etc/iogate read-only"
# Its API client checks the apiserver before it serves; a failure there is logged and /validate
# would then allow pinned pods with a warning.
in_log -F "api: in-cluster (KUBERNETES_SERVICE_HOST=$CLUSTER_HOST" && ! in_log -E '^[^ ]+ (error|warning) api:' ||
  fail "the webhook has no working in-cluster API client: $(logs)"
in_log -F "serial $(serial "$SCRATCH/pki1/tls.crt")" || fail "the webhook does not serve the first pair: $(logs)"
pass "iogate webhook serving in $CTR on 127.0.0.1:$PORT -> $CPORT, in-cluster as $NS/$HOOK"

# --- the chart's webhook configurations, pointed at the published port ------------------------
# configurations CA: applied with caBundle CA alone (kubectl apply: the rotation updates them).
configurations() {
  jq --arg url "https://127.0.0.1:$PORT" --arg ca "$(base64 -w0 "$1")" '{apiVersion: "v1", kind: "List",
    items: [.[] | select(.kind | test("^(Mutating|Validating)WebhookConfiguration$")) |
      .webhooks |= map(.clientConfig |= {url: ($url + .service.path), caBundle: $ca})]}' "$SCRATCH/chart.json" >"$SCRATCH/whc.json"
  k apply -f "$SCRATCH/whc.json" >/dev/null
}
configurations "$SCRATCH/pki1/ca.crt"
assert_jq "$SCRATCH/whc.json" '[.items[].webhooks[] | {name, u: .clientConfig.url, failurePolicy}] ==
  [{name: "mutate.iogate.io", u: "https://127.0.0.1:'"$PORT"'/mutate", failurePolicy: "Ignore"},
   {name: "validate.iogate.io", u: "https://127.0.0.1:'"$PORT"'/validate", failurePolicy: "Fail"}]' \
  "the chart's two configurations, clientConfig url https://127.0.0.1:$PORT/{mutate,validate}"

# reached NAME: a dry-run create goes through both webhooks (validate fails closed) and the
# webhook logged it: the apiserver has the configurations and trusts the served certificate.
reached() { kubectl create --dry-run=server -f "$SCRATCH/$1.json" && in_log -F "validate CREATE pods $TRAIN/$1 "; }

# round TAG: the admission checks, through kubectl, against the webhook in the container.
round() {
  local t=$1 out="$SCRATCH/$1.out" f floor
  pod "slow-$t" "$TRAIN" 1 '{"nodeName": "slow-1"}' >"$SCRATCH/slow-$t.json"
  ! k apply -f "$SCRATCH/slow-$t.json" >"$out" 2>&1 || fail "[$t] a GPU pod pinned to slow-1 was admitted"
  for want in 'admission webhook "validate.iogate.io" denied the request' 'node slow-1 measured 3,000 randread IOPS'; do
    grep -qF "$want" "$out" || fail "[$t] the denial does not say '$want': $(cat "$out")"
  done
  ! k -n "$TRAIN" get pod "slow-$t" >/dev/null 2>&1 || fail "[$t] slow-$t exists after the denial"
  pass "[$t] GPU pod pinned to slow-1 refused: $(cat "$out")"
  # The floor /validate named is the one /mutate requires: randread-iops Gt floor - 1.
  floor=$(grep -o 'below the [0-9,]* the pod needs' "$out" | tr -dc 0-9)
  [[ -n $floor ]] || fail "[$t] no floor in the denial: $(cat "$out")"
  pod "fast-$t" "$TRAIN" 1 '{"nodeName": "fast-1"}' >"$SCRATCH/fast-$t.json"
  k apply -f "$SCRATCH/fast-$t.json" >"$out" 2>&1 || fail "[$t] a GPU pod pinned to fast-1 was refused: $(cat "$out")"
  f="$SCRATCH/fast-$t.got.json" && k -n "$TRAIN" get pod "fast-$t" -o json >"$f"
  assert_jq "$f" '.spec.nodeName == "fast-1" and (.metadata.annotations["iogate.io/node-requirements"] != null) and
    any(.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[];
      . == {key: "iogate.io/randread-iops", operator: "Gt", values: ["'"$((floor - 1))"'"]})' \
    "[$t] GPU pod pinned to fast-1 admitted, mutated: required affinity iogate.io/randread-iops Gt $((floor - 1)), annotation iogate.io/node-requirements"
  pod "cpu-$t" "$TRAIN" 0 >"$SCRATCH/cpu-$t.json"
  k apply -f "$SCRATCH/cpu-$t.json" >"$out" 2>&1 || fail "[$t] a CPU pod was refused: $(cat "$out")"
  f="$SCRATCH/cpu-$t.got.json" && k -n "$TRAIN" get pod "cpu-$t" -o json >"$f"
  ! in_log -F " pods $TRAIN/cpu-$t " || fail "[$t] cpu-$t was sent to the webhook despite the chart's matchConditions: $(logs | grep -F "cpu-$t")"
  assert_jq "$f" '.spec.affinity == null and ((.metadata.annotations // {}) | keys | map(select(startswith("iogate.io/"))) == [])' \
    "[$t] CPU pod not sent to the webhook (matchConditions), admitted unchanged"
}

pod ready-1 "$TRAIN" 1 >"$SCRATCH/ready-1.json"
wait_until 60 reached ready-1 ||
  fail "the apiserver does not reach the webhook after 60 s: $(kubectl create --dry-run=server -f "$SCRATCH/ready-1.json" 2>&1); $(logs | tail -5)"
pass "kube-apiserver calls the webhook in the container (TLS verified against CA 1)"
round ca1

# --- rotation: a pair from CA 2, published by swapping ..data; caBundle CA 2 alone ---------------
served() {  # the SHA-256 fingerprint of the certificate served on the published port, verified by CA $1
  openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$1" -verify_return_error -verify_ip 127.0.0.1 </dev/null 2>/dev/null |
    openssl x509 -noout -fingerprint -sha256
}
[[ $(served "$SCRATCH/pki1/ca.crt") == "$(fp "$SCRATCH/pki1/tls.crt")" ]] || fail "s_client does not see the first certificate"
OLD_GEN=$(readlink "$VOL/..data")
publish "$VOL" "$P_POLICY=$SCRATCH/policy.yaml" "$P_CRT=$SCRATCH/pki2/tls.crt" "$P_KEY=$SCRATCH/pki2/tls.key"
[[ $(readlink "$VOL/..data") != "$OLD_GEN" && ! -e $VOL/$OLD_GEN ]] || fail "..data not swapped: $(ls -la "$VOL")"
configurations "$SCRATCH/pki2/ca.crt"
pass "rotated: ..data $OLD_GEN -> $(readlink "$VOL/..data") (CA 2's pair), caBundle CA 2 only"
FP2=$(fp "$SCRATCH/pki2/tls.crt") SERIAL2=$(serial "$SCRATCH/pki2/tls.crt")
wait_until 90 bash -c '[[ $(openssl s_client -connect "127.0.0.1:$0" -CAfile "$1" -verify_return_error -verify_ip 127.0.0.1 </dev/null 2>/dev/null |
  openssl x509 -noout -fingerprint -sha256) == "$2" ]]' "$PORT" "$SCRATCH/pki2/ca.crt" "$FP2" ||
  fail "the webhook still serves $(served "$SCRATCH/pki1/ca.crt") 90 s after the swap: $(logs | tail -5)"
in_log -F "reloaded --tls-cert /etc/iogate/$P_CRT: now serving subject CN=$HOOK.$NS.svc, serial $SERIAL2" ||
  fail "no reload line for serial $SERIAL2: $(logs | grep 'webhook TLS')"
pass "openssl s_client sees the new certificate (serial $SERIAL2, $FP2); the webhook logged the reload"
pod ready-2 "$TRAIN" 1 >"$SCRATCH/ready-2.json"
wait_until 60 reached ready-2 ||
  fail "the apiserver does not reach the webhook with caBundle CA 2 after 60 s: $(kubectl create --dry-run=server -f "$SCRATCH/ready-2.json" 2>&1)"
pass "kube-apiserver calls the webhook again, trusting CA 2 alone"
round ca2
[[ $(docker inspect -f '{{.RestartCount}} {{.State.StartedAt}}' "$CTR") == "0 $(jq -r '.[0].State.StartedAt' "$SCRATCH/inspect.json")" ]] ||
  fail "the container was restarted during the rotation"
pass "rotation without a restart"

# --- stop, memory, token -------------------------------------------------------------------------
docker stop -t 20 "$CTR" >/dev/null
docker inspect "$CTR" >"$SCRATCH/stopped.json"
assert_jq "$SCRATCH/stopped.json" '.[0].State | .ExitCode == 0 and .OOMKilled == false' "SIGTERM (docker stop): exit 0, not OOM-killed"
in_log -F 'stopped by a signal' || fail "no clean shutdown line: $(logs | tail -3)"
PEAK=$(memory_peak hook)
((PEAK > 0 && PEAK < LIMIT)) || fail "memory peak $PEAK bytes, limit $LIMIT"
pass "memory peak $((PEAK / 1024)) KiB ($((PEAK * 100 / LIMIT))% of the chart's limit $((LIMIT / 1048576))Mi)"
logs >"$SCRATCH/hook.log"
! grep -qF "$TOKEN" "$SCRATCH/hook.log" && ! grep -qF "${TOKEN##*.}" "$SCRATCH/hook.log" || fail "the token reached the container's log"
pass "no token in the container's log ($(wc -l <"$SCRATCH/hook.log") lines)"
