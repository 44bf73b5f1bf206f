#!/usr/bin/env bash
# iogate webhook behind the real kube-apiserver, configured by the chart as installed: helm
# installs the chart (self-signed certificate, webhook.namespaceSelector opting training
# namespaces in, a preflight namespace); `iogate webhook` runs as a host process with the chart's
# Deployment arguments, Secret and policy, under the webhook ServiceAccount's token (in-cluster
# config, the chart's RBAC). Through kubectl: a GPU pod gets the required node affinity with the
# floor the manual gives for its GPUs under the chart's policy, and the real scheduler binds it to the
# only node that meets it; iogate.io/inject-preflight injects the chart's preflight initContainer;
# a CPU pod is never sent to it (the chart's matchConditions) and is created unchanged; a pod
# without GPUs whose labels match a policy rule is sent and mutated; --dry-run=server returns the mutated pod and stores nothing; a GPU
# pod pinned to the slow node is denied with the node, the measured and required IOPS and the rule,
# one pinned to the fast node is admitted, one pinned to an unknown node gets the warning; an
# UPDATE is reviewed. Webhook stopped: validate (Fail) refuses a GPU pod with the apiserver's
# "failed calling webhook", mutate (Ignore) admits it unmutated (counted as failing open); a pod
# without GPUs in the opted-in namespace is created at once, neither refused nor failing open; kube-system, the
# release namespace and a namespace not opted in are never sent to the webhook (pods created while
# validate fails closed; no line in the webhook's request log).
#
# How the apiserver reaches a host process while the chart's Service-based clientConfig stays
# exactly as rendered: kube-apiserver resolves a webhook Service through its ClusterIP (no
# --enable-aggregator-routing here) and verifies the certificate for <service>.<namespace>.svc, the
# name the chart's self-signed certificate is made for. Nothing routes a ClusterIP here (no
# kube-proxy), and an EndpointSlice may not hold a loopback address (validation refuses
# 127.0.0.0/8), so the test turns the chart's Service into an ExternalName Service naming a
# loopback address: the apiserver then dials <externalName>:<the configuration's port, 443> and
# still verifies the chart's certificate for the Service name against the chart's caBundle. The
# webhook configurations, the Secret and the certificate are the chart's, unchanged. The address
# is a random one in 127.0.0.0/8, where nothing else listens on 443.
source "$(dirname "$0")/lib.sh"

RELEASE=iogate
NS=iogate-system            # the release namespace
TRAIN=ml                    # opted in (iogate.io/enabled=true), a preflight namespace
OTHER=batch                 # not opted in
HOOK=$RELEASE-webhook       # the chart's object names: <fullname>-webhook
GPU=nvidia.com/gpu

# thousands N: N with a comma every three digits, as iogate's messages print it.
thousands() { sed -E ':a;s/([0-9])([0-9]{3})($|,)/\1,\2\3/;ta' <<<"$1"; }
# apply OUT [kubectl flags]: kubectl apply the pod JSON on stdin; its output (both streams) in OUT,
# its exit status in $rc (lastpipe: `pod ... | apply ...` runs apply in this shell).
shopt -s lastpipe
apply() {
  local out=$1; shift
  rc=0
  k apply -f - "$@" >"$out" 2>&1 || rc=$?
}
get_pod() { k -n "$1" get pod "$2" -o json >"$SCRATCH/$1.$2.json" && echo "$SCRATCH/$1.$2.json"; }
# hook_lines PATTERN: the webhook's request-log lines matching PATTERN (grep -E).
hook_lines() { grep -E "$1" "$SCRATCH/webhook.log" || true; }
# fail_open NAME: kube-apiserver's count of calls to webhook NAME that failed open.
fail_open() {
  k get --raw /metrics | awk -v n="name=\"$1\"" '/^apiserver_admission_webhook_fail_open_count\{/ && index($0, n) { s += $NF } END { print s + 0 }'
}

# --- namespaces, nodes ---------------------------------------------------------------------------
# kube-system and the release namespace carry the opt-in label too: only the chart's exclusion
# (namespaceSelector NotIn) may keep them from the webhook.
k create namespace "$TRAIN" >/dev/null
k create namespace "$NS" >/dev/null
k create namespace "$OTHER" >/dev/null
for n in "$TRAIN" "$NS" kube-system; do k label namespace "$n" iogate.io/enabled=true >/dev/null; done
# Labels as `iogate node` writes them (docs/reference.md "Node (written by iogate node)"): fast, slow (tainted while
# below policy in enforce mode), and low (below the floor, not tainted: e.g. measured by an agent in
# warn mode), so that only the affinity keeps a pod off it.
make_node fast-1 iogate.io/randread-iops=250000 iogate.io/disk-class=nvme iogate.io/tier=fast
make_node low-1 iogate.io/randread-iops=6000 iogate.io/disk-class=cloud-block iogate.io/tier=slow
make_node slow-1 iogate.io/randread-iops=3000 iogate.io/disk-class=cloud-block iogate.io/tier=slow
k taint node slow-1 iogate.io/storage-below-policy=true:NoSchedule >/dev/null
pass "nodes fast-1 (250000 IOPS, nvme), low-1 (6000, cloud-block), slow-1 (3000, cloud-block, tainted)"

# --- the chart, for real ----------------------------------------------------------------------
helm_install "$RELEASE" "$NS" -f "$E2E_DIR/admission_values.yaml"
k get mutatingwebhookconfiguration "$HOOK" -o json >"$SCRATCH/mwc.json"
k get validatingwebhookconfiguration "$HOOK" -o json >"$SCRATCH/vwc.json"
k -n "$NS" get secret "$HOOK-tls" -o json >"$SCRATCH/secret.json"
k -n "$NS" get deployment "$HOOK" -o json >"$SCRATCH/deploy.json"
k -n "$NS" get service "$HOOK" -o json >"$SCRATCH/service.json"
k -n "$NS" get configmap "$RELEASE-policy" -o json >"$SCRATCH/policy-cm.json"
k -n "$TRAIN" get configmap "$RELEASE-policy" >/dev/null || fail "no policy ConfigMap copy in the preflight namespace $TRAIN"
if k -n "$NS" get certificates.cert-manager.io >/dev/null 2>&1; then
  fail "cert-manager objects in a cluster without cert-manager (certManager.enabled auto)"
fi
for f in mwc vwc; do
  assert_jq --arg ns "$NS" --arg svc "$HOOK" "$SCRATCH/$f.json" '.webhooks | length == 1 and (.[0].clientConfig | has("url") | not) and
    (.[0].clientConfig.service == {name: $svc, namespace: $ns, path: .[0].clientConfig.service.path, port: 443})' \
    "$f: one webhook, clientConfig the Service $NS/$HOOK:443"
done
jq -r '.data["tls.crt"]' "$SCRATCH/secret.json" | base64 -d >"$SCRATCH/tls.crt"
jq -r '.data["ca.crt"]' "$SCRATCH/secret.json" | base64 -d >"$SCRATCH/ca.crt"
for f in mwc vwc; do
  [[ $(jq -r '.webhooks[0].clientConfig.caBundle' "$SCRATCH/$f.json" | base64 -d) == "$(cat "$SCRATCH/ca.crt")" ]] ||
    fail "$f: caBundle is not the Secret's ca.crt"
done
openssl verify -CAfile "$SCRATCH/ca.crt" -purpose sslserver -verify_hostname "$HOOK.$NS.svc" "$SCRATCH/tls.crt" \
  >"$SCRATCH/verify.out" 2>&1 || fail "the chart's certificate does not verify for $HOOK.$NS.svc: $(cat "$SCRATCH/verify.out")"
pass "self-signed pair in Secret $HOOK-tls; both caBundles are its CA, the certificate is valid for $HOOK.$NS.svc"

# The chart's documented failure policies (docs/manual.md "failurePolicy and an outage", values.yaml), as installed.
assert_jq "$SCRATCH/mwc.json" '.webhooks[0] | .failurePolicy == "Ignore" and .sideEffects == "None" and
  .clientConfig.service.path == "/mutate" and .rules == [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"],
  resources: ["pods"], scope: "Namespaced"}]' "mutate.iogate.io: failurePolicy Ignore, sideEffects None, pods CREATE"
assert_jq "$SCRATCH/vwc.json" '.webhooks[0] | .failurePolicy == "Fail" and .sideEffects == "None" and
  .clientConfig.service.path == "/validate" and .rules == [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"],
  resources: ["pods"], scope: "Namespaced"}]' "validate.iogate.io: failurePolicy Fail, sideEffects None, pods CREATE, UPDATE"
deadline=$(jq -r '.spec.template.spec.containers[0].args as $a | $a[($a | index("--request-deadline")) + 1]' "$SCRATCH/deploy.json")
for f in mwc vwc; do
  assert_jq --arg d "$deadline" "$SCRATCH/$f.json" '.webhooks[0].timeoutSeconds as $t | ($d | test("^[0-9]+s$")) and ($d | rtrimstr("s") | tonumber) < $t' \
    "$f: timeoutSeconds above --request-deadline $deadline"
  assert_jq --arg ns "$NS" "$SCRATCH/$f.json" '.webhooks[0].namespaceSelector == {matchLabels: {"iogate.io/enabled": "true"},
     matchExpressions: [{key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", $ns]}]}' \
    "$f: namespaceSelector opts iogate.io/enabled=true in, kube-system and $NS out"
done

# --- iogate webhook: the Deployment's container, as a host process -----------------------------
# The chart's files (/etc/iogate/policy.yaml, /etc/iogate/tls/tls.{crt,key}: one projected volume
# of the policy ConfigMap and the Secret) under $SCRATCH/etc-iogate; the Deployment's arguments
# with those paths, --listen and --metrics-listen (any free loopback port) rewritten; the webhook
# ServiceAccount's token.
ETC="$SCRATCH/etc-iogate"
mkdir -p "$ETC/tls"
jq -r '.data["policy.yaml"]' "$SCRATCH/policy-cm.json" >"$ETC/policy.yaml"
cp "$SCRATCH/tls.crt" "$ETC/tls/tls.crt"
jq -r '.data["tls.key"]' "$SCRATCH/secret.json" | base64 -d >"$ETC/tls/tls.key"
chmod 600 "$ETC/tls/tls.key"
ADDR=$(free_loopback_443)
[[ -n $ADDR ]] || fail "no free 443 on a loopback address"
[[ $(jq -r '.spec.template.spec.containers[0].args[0]' "$SCRATCH/deploy.json") == webhook ]] ||
  fail "the Deployment's container does not run iogate webhook: $(jq -c '.spec.template.spec.containers[0].args' "$SCRATCH/deploy.json")"
mapfile -t ARGS < <(jq -r --arg etc "$ETC" --arg listen "$ADDR:443" '.spec.template.spec.containers[0].args as $a |
  [range(0; $a | length) as $i | $a[$i] as $v |
    if $i > 0 and $a[$i - 1] == "--listen" then $listen
    elif $i > 0 and $a[$i - 1] == "--metrics-listen" then "127.0.0.1:0"
    elif ($v | startswith("/etc/iogate/")) then $etc + ($v | ltrimstr("/etc/iogate")) else $v end] | .[]' "$SCRATCH/deploy.json")
[[ " ${ARGS[*]} " == *" --listen $ADDR:443 "* && " ${ARGS[*]} " == *" --policy $ETC/policy.yaml "* ]] ||
  fail "unexpected Deployment arguments: ${ARGS[*]}"
TOKEN=$(sa_token "$NS" "$HOOK")
start_webhook_pod "$SCRATCH/webhook.log" "$NS" "$TOKEN" "${ARGS[@]}"
pass "iogate webhook ${ARGS[*]:1} (pid $WEBHOOK_PID), in-cluster as $NS/$HOOK"

# The chart's Service, then pointed at the host process (see the header).
assert_jq "$SCRATCH/service.json" '.spec.type == "ClusterIP" and (.spec.ports | map({port, targetPort}) == [{port: 443, targetPort: "https"}])' \
  "the chart's Service $HOOK: ClusterIP, 443 -> https"
k -n "$NS" patch service "$HOOK" --type merge -p "$(jq -nc --arg a "$ADDR" '{spec: {type: "ExternalName", externalName: $a,
  clusterIP: null, clusterIPs: null, ipFamilies: null, ipFamilyPolicy: null, internalTrafficPolicy: null, selector: null}}')" >/dev/null
pass "Service $HOOK -> ExternalName $ADDR (the stand-in for kube-proxy routing its ClusterIP to the pod)"
# The apiserver watches configurations and Services: wait until it reaches the webhook.
pod ready-probe "$TRAIN" 1 >"$SCRATCH/ready-probe.json"
wait_until 60 bash -c 'kubectl create --dry-run=server -f "$0" && grep -q "validate CREATE pods ml/ready-probe" "$1"' \
  "$SCRATCH/ready-probe.json" "$SCRATCH/webhook.log" ||
  fail "the apiserver does not reach the webhook after 60 s: $(kubectl create --dry-run=server -f "$SCRATCH/ready-probe.json" 2>&1); webhook log: $(tail -5 "$SCRATCH/webhook.log")"
pass "kube-apiserver reaches the webhook (TLS to $HOOK.$NS.svc, trusting the chart's caBundle)"

# --- the chart's policy, and the floor the manual gives ---------------------------------------------
"$IOGATE" policy check "$ETC/policy.yaml" --output-format json >"$SCRATCH/policy.json" ||
  fail "the chart's policy does not check"
assert_jq "$SCRATCH/policy.json" '.mode == "enforce" and .workload.rw == "randread" and
  (.rules | map(select(.selector == {device_classes: [], paths: [], pod_labels: {}})) | length) >= 1 and
  (.rules | map(select(.selector.pod_labels == {team: "vision"})) | length) == 1' \
  "chart policy $(jq -r .name "$SCRATCH/policy.json"): enforce, randread, rules for every volume and one for pods labelled team=vision"
# floor GPUS: max(min_iops, min_iops_per_gpu x GPUS), the highest of the rules (docs/manual.md, "iogate webhook").
floor() { jq --argjson g "$1" '[.rules[] | [.min_iops // 0, (.min_iops_per_gpu // 0) * $g] | max] | max' "$SCRATCH/policy.json"; }
FORBIDDEN=$(jq -c '[.rules[].forbidden_classes[]] | unique' "$SCRATCH/policy.json")
RULE=$(jq -r '.rules | max_by([.min_iops // 0, .min_iops_per_gpu // 0]) | .name' "$SCRATCH/policy.json")
F1=$(floor 1) F6=$(floor 6)
((F1 > 0 && F6 > F1)) || fail "the chart's policy gives floors $F1 (1 GPU) and $F6 (6 GPUs); the test needs a per-GPU floor above min_iops at 6"
pass "floors: $F1 IOPS for 1 GPU, $F6 for 6; forbidden classes $FORBIDDEN"

# --- /mutate through kubectl apply -------------------------------------------------------------
# affinity_has FILE OPERATOR KEY VALUES_JSON: every required term carries the expression.
expr_check() {
  jq -e --arg op "$2" --arg key "$3" --argjson v "$4" '.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms |
    length >= 1 and all(.[]; any(.matchExpressions[]?; . == {key: $key, operator: $op, values: $v}))' "$1" >/dev/null
}
for g in 1 6; do
  fl=$(floor $g)
  pod "gpu-$g" "$TRAIN" $g | apply "$SCRATCH/apply.out"
  ((rc == 0)) || fail "kubectl apply gpu-$g: $(cat "$SCRATCH/apply.out")"
  f=$(get_pod "$TRAIN" "gpu-$g")
  expr_check "$f" Gt iogate.io/randread-iops "[\"$((fl - 1))\"]" ||
    fail "gpu-$g: no required iogate.io/randread-iops Gt $((fl - 1)): $(jq -c .spec.affinity "$f")"
  pass "gpu-$g ($g GPU): required nodeAffinity iogate.io/randread-iops Gt $((fl - 1))"
done
f="$SCRATCH/$TRAIN.gpu-1.json"
if [[ $FORBIDDEN != "[]" ]]; then
  expr_check "$f" NotIn iogate.io/disk-class "$FORBIDDEN" || fail "gpu-1: no disk-class NotIn $FORBIDDEN: $(jq -c .spec.affinity "$f")"
  pass "gpu-1: required nodeAffinity iogate.io/disk-class NotIn $FORBIDDEN (the policy's forbidden classes)"
fi
assert_jq --arg r "$RULE" "$f" '.metadata.annotations["iogate.io/node-requirements"] | test("rule " + $r)' \
  "gpu-1: annotation iogate.io/node-requirements names rule $RULE"
assert_jq "$f" '.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms | length == 1' \
  "gpu-1: one nodeSelectorTerm (the pod had none)"
[[ -n $(hook_lines "mutate CREATE pods $TRAIN/gpu-1 uid=[^ ]+: allowed, [0-9]+ patch operations") ]] ||
  fail "no /mutate log line for $TRAIN/gpu-1: $(cat "$SCRATCH/webhook.log")"

# The pod's own affinity is kept; the expressions join its term.
pod gpu-own "$TRAIN" 1 '{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
  {"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":["linux"]}]}]}}}}' | apply "$SCRATCH/apply.out"
((rc == 0)) || fail "kubectl apply gpu-own: $(cat "$SCRATCH/apply.out")"
f=$(get_pod "$TRAIN" gpu-own)
expr_check "$f" In kubernetes.io/os '["linux"]' && expr_check "$f" Gt iogate.io/randread-iops "[\"$((F1 - 1))\"]" ||
  fail "gpu-own: own expression and the floor not in one term: $(jq -c .spec.affinity "$f")"
pass "gpu-own: the pod's own expression kept, the floor added to its term"

# The real scheduler: gpu-1 may only go to fast-1 (low-1 is below the floor, slow-1 tainted too).
wait_until 60 bash -c '[[ -n $(kubectl -n "$0" get pod gpu-1 -o jsonpath="{.spec.nodeName}") ]]' "$TRAIN" ||
  fail "gpu-1 not bound after 60 s: $(k -n "$TRAIN" get events --field-selector involvedObject.name=gpu-1 -o jsonpath='{.items[*].message}')"
[[ $(k -n "$TRAIN" get pod gpu-1 -o jsonpath='{.spec.nodeName}') == fast-1 ]] ||
  fail "gpu-1 scheduled to $(k -n "$TRAIN" get pod gpu-1 -o jsonpath='{.spec.nodeName}'), want fast-1"
pass "kube-scheduler bound gpu-1 to fast-1, the only node meeting the affinity"

# A CPU-only pod: the chart's matchConditions keep it from the webhook altogether.
pod cpu "$TRAIN" 0 | apply "$SCRATCH/apply.out"
((rc == 0)) || fail "kubectl apply cpu: $(cat "$SCRATCH/apply.out")"
f=$(get_pod "$TRAIN" cpu)
assert_jq "$f" '(.spec.affinity == null) and (.spec.initContainers == null) and
  ([.metadata.annotations // {} | keys[] | select(startswith("iogate.io/"))] == [])' "cpu: no affinity, no initContainer, no iogate annotation"
[[ -z $(hook_lines " pods $TRAIN/cpu ") ]] || fail "cpu: sent to the webhook despite the matchConditions: $(hook_lines " pods $TRAIN/cpu ")"
pass "cpu: not sent to the webhook (matchConditions pods-iogate-judges), created unchanged"
# A container asking for 0 GPUs names the resource: sent (the conditions are a superset of what
# the webhook judges), and passed there without a patch.
pod gpu-zero "$TRAIN" 0 '{"containers":[{"name":"train","image":"registry.example/pytorch:2.5","resources":{"limits":{"nvidia.com/gpu":"0"}}}]}' |
  apply "$SCRATCH/apply.out"
((rc == 0)) || fail "kubectl apply gpu-zero: $(cat "$SCRATCH/apply.out")"
[[ -n $(hook_lines "mutate CREATE pods $TRAIN/gpu-zero uid=[^ ]+: allowed, no patch; no GPUs") ]] ||
  fail "gpu-zero: want reviewed by /mutate and passed without a patch: $(hook_lines gpu-zero)"
pass "gpu-zero (nvidia.com/gpu: 0): sent, reviewed, no patch"
# No GPUs, but the labels of the values' rule "vision": sent, and the rule's floor required.
pod labelled "$TRAIN" 0 '{}' '{"labels":{"app":"train","team":"vision"}}' | apply "$SCRATCH/apply.out"
((rc == 0)) || fail "kubectl apply labelled: $(cat "$SCRATCH/apply.out")"
f=$(get_pod "$TRAIN" labelled)
assert_jq "$f" '.metadata.annotations["iogate.io/node-requirements"] | test("the pod labels of rule vision")' \
  "labelled (team=vision, no GPU): sent, and given the affinity of rule vision"

# iogate.io/inject-preflight: the initContainer of the chart's named template (helm's NOTES print
# it filled in for volume "dataset" at /data), first, and the policy volume.
helm get notes "$RELEASE" -n "$NS" >"$SCRATCH/notes.txt"
python3 - "$SCRATCH/notes.txt" >"$SCRATCH/snippet.json" <<'PY'
import json, sys, yaml
lines = open(sys.argv[1]).read().split("\n")
start = lines.index("spec:")
end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "")
print(json.dumps(yaml.safe_load("\n".join(lines[start:end]))["spec"]))
PY
assert_jq "$SCRATCH/snippet.json" '(.initContainers | length) == 1 and (.volumes | length) == 1' "NOTES: the preflight snippet parses"
pod train-inject "$TRAIN" 1 "$(jq -c '{serviceAccountName, volumes: [{name: "dataset", emptyDir: {}}]}' "$SCRATCH/snippet.json")" \
  '{"annotations":{"iogate.io/inject-preflight":"dataset"}}' |
  jq '.spec.containers[0].volumeMounts = [{name: "dataset", mountPath: "/data"}]' | apply "$SCRATCH/apply.out"
((rc == 0)) || fail "kubectl apply train-inject: $(cat "$SCRATCH/apply.out")"
f=$(get_pod "$TRAIN" train-inject)
# The webhook's patch makes kube-apiserver run its in-tree mutating plugins again: the
# ServiceAccount plugin mounts the token into the injected container too, which preflight needs to
# write its verdict. Checked, then dropped with the apiserver's defaults for the comparison. The
# resources are the chart's preflight.resources in both (the webhook gets them as flags).
SA_DIR=/var/run/secrets/kubernetes.io/serviceaccount
assert_jq --arg d "$SA_DIR" "$f" '.spec.initContainers[0].volumeMounts | any(.mountPath == $d and .readOnly == true and (.name | startswith("kube-api-access-")))' \
  "train-inject: the injected container has the ServiceAccount token mounted (in-tree plugins re-ran)"
jq --arg d "$SA_DIR" '.spec | {init: (.initContainers[0] | del(.terminationMessagePath, .terminationMessagePolicy, .imagePullPolicy) |
    .env |= map(if .valueFrom.fieldRef then .valueFrom.fieldRef |= del(.apiVersion) else . end) |
    .volumeMounts |= map(select(.mountPath != $d))),
  inits: (.initContainers | length), volume: (.volumes[] | select(.name == "iogate-policy") | .configMap |= del(.defaultMode))}' \
  "$f" >"$SCRATCH/injected.json"
jq -e --slurpfile s "$SCRATCH/snippet.json" '.init == $s[0].initContainers[0] and .inits == 1 and
  .volume == $s[0].volumes[0]' "$SCRATCH/injected.json" >/dev/null ||
  fail "injected initContainer/volume differ from the chart's named template: $(jq -c . "$SCRATCH/injected.json") vs $(jq -c . "$SCRATCH/snippet.json")"
pass "train-inject: initContainer iogate-preflight (image $(jq -r .init.image "$SCRATCH/injected.json"), /data read-only, resources $(jq -c .init.resources "$SCRATCH/injected.json")) and volume iogate-policy, as the chart's named template"
expr_check "$f" Gt iogate.io/randread-iops "[\"$((F1 - 1))\"]" || fail "train-inject: no affinity"
pass "train-inject: the affinity too"

# --dry-run=server: the mutated pod comes back, nothing is stored.
pod gpu-dry "$TRAIN" 1 | apply "$SCRATCH/dry.json" --dry-run=server -o json
((rc == 0)) || fail "kubectl apply --dry-run=server: $(cat "$SCRATCH/dry.json")"
expr_check "$SCRATCH/dry.json" Gt iogate.io/randread-iops "[\"$((F1 - 1))\"]" ||
  fail "dry-run: the returned pod is not mutated: $(jq -c .spec.affinity "$SCRATCH/dry.json")"
k -n "$TRAIN" get pod gpu-dry >/dev/null 2>&1 && fail "dry-run: pod gpu-dry was stored"
[[ -n $(hook_lines "mutate CREATE pods $TRAIN/gpu-dry uid=[^ ]+ dry-run: allowed") &&
   -n $(hook_lines "validate CREATE pods $TRAIN/gpu-dry uid=[^ ]+ dry-run: allowed") ]] ||
  fail "dry-run: the webhook did not see request.dryRun: $(hook_lines gpu-dry)"
pass "apply --dry-run=server: the mutated pod returned, not stored; the webhook saw dryRun on both"

# --- /validate: pinned pods --------------------------------------------------------------------
pod pinned-slow "$TRAIN" 1 '{"nodeName":"slow-1"}' | apply "$SCRATCH/deny.out"
((rc != 0)) || fail "pinned-slow was admitted"
msg=$(cat "$SCRATCH/deny.out")
# "(Forbidden)": the webhook's status.reason, passed through by the apiserver, as its own
# admission plugins' refusals read.
for want in 'Error from server (Forbidden)' 'admission webhook "validate.iogate.io" denied the request' 'slow-1' '3,000' "$(thousands "$F1")" \
            "rule $RULE" 'iogate.io/storage-below-policy'; do
  [[ $msg == *"$want"* ]] || fail "pinned-slow: the denial does not say '$want': $msg"
done
k -n "$TRAIN" get pod pinned-slow >/dev/null 2>&1 && fail "pinned-slow exists after the denial"
pass "pinned to slow-1: denied: $msg"
pod pinned-low "$TRAIN" 1 '{"nodeSelector":{"kubernetes.io/hostname":"low-1"}}' | apply "$SCRATCH/deny.out"
((rc != 0)) && [[ $(cat "$SCRATCH/deny.out") == *'low-1 measured 6,000'* ]] ||
  fail "pinned-low (nodeSelector hostname): want a denial naming low-1 measured 6,000: $(cat "$SCRATCH/deny.out")"
pass "nodeSelector kubernetes.io/hostname=low-1: denied ($(grep -o 'node low-1 measured[^;]*' "$SCRATCH/deny.out" | head -1))"
pod pinned-fast "$TRAIN" 1 '{"nodeName":"fast-1"}' | apply "$SCRATCH/apply.out"
((rc == 0)) || fail "pinned-fast refused: $(cat "$SCRATCH/apply.out")"
[[ $(k -n "$TRAIN" get pod pinned-fast -o jsonpath='{.spec.nodeName}') == fast-1 ]] || fail "pinned-fast not on fast-1"
pass "pinned to fast-1: admitted"
pod pinned-ghost "$TRAIN" 1 '{"nodeName":"ghost-9"}' | apply "$SCRATCH/apply.out"
((rc == 0)) && grep -q '^Warning: iogate: node ghost-9 was not found' "$SCRATCH/apply.out" ||
  fail "pinned to an unknown node: want admitted with kubectl printing the webhook's warning: $(cat "$SCRATCH/apply.out")"
pass "pinned to ghost-9 (no such node): admitted, kubectl shows: $(grep '^Warning' "$SCRATCH/apply.out" | head -1)"
# An UPDATE goes to /validate with the old object; one that keeps the node is allowed.
k -n "$TRAIN" label pod pinned-fast touched=yes >/dev/null 2>"$SCRATCH/label.err" || fail "UPDATE of pinned-fast refused: $(cat "$SCRATCH/label.err")"
[[ -n $(hook_lines "validate UPDATE pods $TRAIN/pinned-fast uid=[^ ]+: allowed, the update keeps node fast-1") ]] ||
  fail "UPDATE: not reviewed as keeping the node: $(hook_lines 'UPDATE')"
pass "UPDATE (a label) of pinned-fast: reviewed with its old object, allowed"

# --- namespaces the webhook never sees (webhook up) ---------------------------------------------
for ns in kube-system "$NS" "$OTHER"; do
  pod gpu-up "$ns" 1 | apply "$SCRATCH/apply.out"
  ((rc == 0)) || fail "GPU pod in $ns refused: $(cat "$SCRATCH/apply.out")"
  f=$(get_pod "$ns" gpu-up)
  assert_jq "$f" '.spec.affinity == null' "$ns: a GPU pod created unmutated while the webhook is up"
done
# Meanwhile the chart's own controllers made pods in the release namespace (webhook Deployment,
# node-agent DaemonSet): none of those reached the webhook either.
[[ -z $(hook_lines " pods (kube-system|$NS|$OTHER)/") ]] ||
  fail "the webhook was sent pods of kube-system, $NS or $OTHER: $(hook_lines " pods (kube-system|$NS|$OTHER)/")"
n=$(k -n "$NS" get pods -o name | wc -l)
((n > 0)) || fail "no pods of the chart's own Deployment/DaemonSet in $NS (the controllers did not run?)"
pass "request log: no review of a pod in kube-system, $NS ($n pods there) or $OTHER; $(hook_lines " pods $TRAIN/" | wc -l) reviews of pods in $TRAIN"
! grep -Eq 'could not be read|Forbidden' "$SCRATCH/webhook.log" ||
  fail "the webhook's node look-ups failed (RBAC?): $(grep -E 'could not be read|Forbidden' "$SCRATCH/webhook.log" | head -3)"
pass "no failed node look-up with the chart's ServiceAccount and RBAC"

# --- webhook stopped: the failurePolicies ------------------------------------------------------
opened=$(fail_open mutate.iogate.io)
shutdown_webhook "$SCRATCH/webhook.log"
pass "iogate webhook stopped"
pod gpu-down "$TRAIN" 1 | apply "$SCRATCH/down.out"
((rc != 0)) || fail "validate failurePolicy Fail: a GPU pod was admitted with the webhook down"
grep -q 'failed calling webhook "validate.iogate.io"' "$SCRATCH/down.out" ||
  fail "webhook down: want the apiserver's failed calling webhook \"validate.iogate.io\": $(cat "$SCRATCH/down.out")"
pass "webhook down, validate (Fail): $(cat "$SCRATCH/down.out")"
((after = $(fail_open mutate.iogate.io), after > opened)) ||
  fail "webhook down: kube-apiserver did not count mutate.iogate.io failing open ($opened, then $after)"
pass "webhook down, mutate (Ignore): kube-apiserver let the pod through mutation (fail-open count $opened -> $after)"
# The outage an operator fears: every other pod must not wait on the webhook or be refused.
pod cpu-down "$TRAIN" 0 | apply "$SCRATCH/apply.out"
((rc == 0)) || fail "webhook down: a pod without GPUs in the opted-in $TRAIN was refused: $(cat "$SCRATCH/apply.out")"
((now = $(fail_open mutate.iogate.io), now == after)) ||
  fail "webhook down: creating a pod without GPUs made mutate.iogate.io fail open ($after, then $now): it was sent"
pass "webhook down: a pod without GPUs in $TRAIN created at once (not sent: fail-open count stays $now)"
for ns in kube-system "$NS" "$OTHER"; do
  pod gpu-down "$ns" 2 | apply "$SCRATCH/apply.out"
  ((rc == 0)) || fail "webhook down: a GPU pod in $ns was refused, so the webhook intercepts $ns: $(cat "$SCRATCH/apply.out")"
done
pass "webhook down, validate Fail in force: GPU pods in kube-system, $NS and $OTHER created (never sent to it)"

# mutate's Ignore on its own: without the validating configuration, a GPU pod in the opted-in
# namespace is created, unmutated. (The configuration is removed last; the test ends here.)
k delete validatingwebhookconfiguration "$HOOK" >/dev/null
create_unmutated() { pod gpu-ignored "$TRAIN" 1 | kubectl apply -f -; }
wait_until 30 create_unmutated ||
  fail "without the validating configuration, a GPU pod is still refused after 30 s: $(create_unmutated 2>&1)"
f=$(get_pod "$TRAIN" gpu-ignored)
assert_jq "$f" '.spec.affinity == null and ((.metadata.annotations // {}) | has("iogate.io/node-requirements") | not)' \
  "webhook down, mutate alone (Ignore): the GPU pod created without the affinity"
