#!/usr/bin/env bash
# iogate webhook over real TLS, with no Kubernetes API (--no-api): /mutate adds the node affinity
# to a GPU pod (the JSONPatch checked op by op) and leaves a CPU pod alone; dry-run answers alike;
# without the API, /validate allows a pinned GPU pod with a warning; malformed bodies get
# 400/415/413, never a crash; TLS 1.1 is refused; the certificate rotated on disk (a new CA, even)
# is served without a restart; usage errors; SIGTERM.
# /validate's node look-ups (slow, tainted, fast and unknown nodes, the node cache) run against the
# real kube-apiserver: tests/e2e/test_webhook_nodes.sh; through kube-apiserver itself:
# tests/e2e/test_admission.sh.
source "$(dirname "$0")/lib.sh"
need_tool openssl  # makes the certificates
source "$TESTS_DIR/lib/pki.sh"

# The webhook's serving certificate, and another from another CA for the rotation.
for d in pki1 pki2; do
  pki_ca "$SCRATCH/$d" "iogate-webhook-test-$d"
  pki_sign "$SCRATCH/$d" server /CN=localhost "$(pki_server_ext IP:127.0.0.1,DNS:localhost)"
done
mkdir -p "$SCRATCH/tls"
cp "$SCRATCH/pki1/server.crt" "$SCRATCH/tls/tls.crt"
cp "$SCRATCH/pki1/server.key" "$SCRATCH/tls/tls.key"

POLICY="$TESTS_DIR/fixtures/webhook-policy.yaml"

"$IOGATE" webhook --listen 127.0.0.1:0 --tls-cert "$SCRATCH/tls/tls.crt" --tls-key "$SCRATCH/tls/tls.key" \
  --policy "$POLICY" --no-api --cert-check-interval 200ms \
  >/dev/null 2>"$SCRATCH/webhook.log" &
hook=$!
on_exit "kill $hook"
for _ in $(seq 100); do grep -q "serving /mutate" "$SCRATCH/webhook.log" && break; sleep 0.1; done
ADDR=$(sed -n 's/.*serving \/mutate \/validate \/healthz on \([0-9.:]*\).*/\1/p' "$SCRATCH/webhook.log" | head -1)
[[ -n $ADDR ]] || fail "webhook did not start: $(cat "$SCRATCH/webhook.log")"
CA="$SCRATCH/pki1/ca.crt"
hook_curl() { curl -sS --cacert "$CA" "$@"; }
[[ $(hook_curl "https://$ADDR/healthz") == ok ]] || fail "/healthz"
pass "webhook serving on https://$ADDR, /healthz ok"

# review OP POD_JSON [DRYRUN]: an AdmissionReview as the API server sends it.
review() {
  jq -n --arg op "$1" --argjson pod "$2" --argjson dry "${3:-false}" '{
    apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: {group: "", version: "v1", kind: "Pod"}, resource: {group: "", version: "v1", resource: "pods"},
      requestKind: {group: "", version: "v1", kind: "Pod"}, requestResource: {group: "", version: "v1", resource: "pods"},
      namespace: "ml", operation: $op,
      userInfo: {username: "system:serviceaccount:kube-system:job-controller", groups: ["system:serviceaccounts"]},
      object: $pod, oldObject: null, dryRun: $dry, options: {apiVersion: "meta.k8s.io/v1", kind: "CreateOptions"}}}'
}
post() { hook_curl -H 'Content-Type: application/json' --data-binary @- "https://$ADDR/$1"; }
gpu_pod() {  # gpu_pod GPUS [SPEC_EXTRA_JSON]
  jq -n --arg g "$1" --argjson extra "${2:-{\}}" '{apiVersion: "v1", kind: "Pod",
    metadata: {generateName: "train-", namespace: "ml", labels: {"job-name": "train"}},
    spec: ({containers: [{name: "train", image: "pytorch", resources: {limits: {"nvidia.com/gpu": $g}}}]} + $extra)}'
}

# --- /mutate: a GPU pod without affinity gets one term with the IOPS floor ---
review CREATE "$(gpu_pod 4)" | post mutate >"$SCRATCH/m.json"
assert_jq "$SCRATCH/m.json" '.apiVersion == "admission.k8s.io/v1" and .kind == "AdmissionReview" and
  .response.uid == "705ab4f5-6393-11e8-b7cc-42010a800002" and .response.allowed == true and .response.patchType == "JSONPatch"' \
  "mutate: allowed with a JSONPatch, uid echoed"
jq -r .response.patch "$SCRATCH/m.json" | base64 -d >"$SCRATCH/patch.json"
assert_jq "$SCRATCH/patch.json" '[.. | objects | select(.key? == "iogate.io/randread-iops")] | .[0] | .operator == "Gt" and .values == ["19999"]' \
  "mutate: randread-iops Gt 19999 for 4 GPUs (max of 10,000 and 5,000 x 4, minus 1)"
assert_jq "$SCRATCH/patch.json" '[.. | objects | select(.key? == "iogate.io/disk-class")] | .[0] | .operator == "NotIn" and .values == ["hdd"]' \
  "mutate: disk-class NotIn [hdd] from forbidden_classes"

# --- a CPU-only pod passes unchanged; dry-run answers the same ---
cpu=$(jq -n '{apiVersion:"v1",kind:"Pod",metadata:{name:"web",namespace:"ml"},spec:{containers:[{name:"web",image:"nginx"}]}}')
review CREATE "$cpu" | post mutate >"$SCRATCH/c.json"
assert_jq "$SCRATCH/c.json" '.response.allowed == true and (.response | has("patch") | not)' "mutate: a CPU pod passes without a patch"
review CREATE "$(gpu_pod 4)" true | post mutate >"$SCRATCH/d.json"
jq -e --slurpfile a "$SCRATCH/m.json" '.response.patch == $a[0].response.patch' "$SCRATCH/d.json" >/dev/null ||
  fail "dry-run: a different answer"
pass "mutate: dry-run gets the same answer (the webhook has no side effects)"

# --- /validate without the API: a pinned GPU pod is allowed, with a warning ---
review CREATE "$(gpu_pod 4 '{"nodeName":"slow-1"}')" | post validate >"$SCRATCH/v1.json"
assert_jq "$SCRATCH/v1.json" '.response.uid == "705ab4f5-6393-11e8-b7cc-42010a800002" and .response.allowed == true and
  (.response.warnings | length) >= 1 and (.response.warnings | any(test("slow-1")))' \
  "validate --no-api: a GPU pod pinned to slow-1 allowed with a warning naming the node ($(jq -r '.response.warnings[0]' "$SCRATCH/v1.json"))"

# --- malformed input: well-formed answers, the server lives on ---
code=$(printf 'not json' | hook_curl -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @- "https://$ADDR/mutate")
[[ $code == 400 ]] || fail "not JSON: HTTP $code, want 400"
code=$(printf '{}' | hook_curl -o /dev/null -w '%{http_code}' -H 'Content-Type: text/plain' --data-binary @- "https://$ADDR/mutate")
[[ $code == 415 ]] || fail "text/plain: HTTP $code, want 415"
head -c 16000000 /dev/zero | tr '\0' ' ' >"$SCRATCH/big.json"
code=$(hook_curl -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$SCRATCH/big.json" "https://$ADDR/validate")
[[ $code == 413 ]] || fail "16 MB body: HTTP $code, want 413"
jq -n '{apiVersion:"admission.k8s.io/v1beta1",kind:"AdmissionReview",request:{uid:"x"}}' | post mutate >"$SCRATCH/bad.json"
assert_jq "$SCRATCH/bad.json" '.response.allowed == false and .response.status.code == 400 and .response.uid == "x"' \
  "wrong apiVersion: a well-formed refusal echoing the uid"
[[ $(hook_curl "https://$ADDR/healthz") == ok ]] || fail "the webhook died on malformed input"
pass "malformed: 400 not JSON, 415 text/plain, 413 oversized, still serving"

# --- TLS 1.2 minimum ---
if curl -sS --cacert "$CA" --tls-max 1.1 "https://$ADDR/healthz" >/dev/null 2>&1; then
  fail "a TLS 1.1 client was served"
fi
pass "TLS 1.1 refused"

# --- rotation: new files (another CA) are served to new connections, no restart ---
serial() { openssl s_client -connect "$ADDR" -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -serial; }
before=$(serial)
cp "$SCRATCH/pki2/server.key" "$SCRATCH/tls/tls.key.new"
cp "$SCRATCH/pki2/server.crt" "$SCRATCH/tls/tls.crt.new"
mv "$SCRATCH/tls/tls.crt.new" "$SCRATCH/tls/tls.crt"
mv "$SCRATCH/tls/tls.key.new" "$SCRATCH/tls/tls.key"
for _ in $(seq 50); do [[ $(serial) != "$before" ]] && break; sleep 0.1; done
after=$(serial)
want=$(openssl x509 -noout -serial -in "$SCRATCH/pki2/server.crt")
[[ $after == "$want" ]] || fail "rotation: serving $after, want $want (was $before)"
CA="$SCRATCH/pki2/ca.crt"
[[ $(hook_curl "https://$ADDR/healthz") == ok ]] || fail "rotation: the new CA does not verify"
kill -0 $hook || fail "rotation: the webhook exited"
pass "rotation: the new certificate ($want) served without a restart"
printf 'garbage' >"$SCRATCH/tls/tls.crt"
sleep 0.5
[[ $(hook_curl "https://$ADDR/healthz") == ok ]] || fail "a corrupt replacement broke serving"
pass "a corrupt replacement is refused; the previous certificate keeps serving"

# --- usage errors and SIGTERM ---
expect_usage "--tls-cert" webhook --tls-key "$SCRATCH/tls/tls.key" --policy "$POLICY"
expect_usage "--tls-key" webhook --tls-cert "$SCRATCH/pki1/server.crt" --tls-key "$SCRATCH/pki2/server.key" --policy "$POLICY" --no-api
expect_usage "--policy" webhook --tls-cert "$SCRATCH/pki1/server.crt" --tls-key "$SCRATCH/pki1/server.key" --policy "$SCRATCH/nope.yaml" --no-api
expect_usage "--request-deadline" webhook --tls-cert "$SCRATCH/pki1/server.crt" --tls-key "$SCRATCH/pki1/server.key" --policy "$POLICY" --request-deadline 5m
# A resource list is checked at start: a bad quantity would otherwise fail every pod it is put into.
expect_usage '--preflight-limits: memory: "256MB" is not a quantity' webhook --tls-cert "$SCRATCH/pki1/server.crt" \
  --tls-key "$SCRATCH/pki1/server.key" --policy "$POLICY" --preflight-limits cpu=1,memory=256MB
KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 expect_usage "--context dev: in-cluster" webhook \
  --tls-cert "$SCRATCH/pki1/server.crt" --tls-key "$SCRATCH/pki1/server.key" --policy "$POLICY" --context dev --log-level warn
expect_usage "--preflight-requests: expected NAME=QUANTITY" webhook --tls-cert "$SCRATCH/pki1/server.crt" \
  --tls-key "$SCRATCH/pki1/server.key" --policy "$POLICY" --preflight-requests cpu
kill -TERM $hook
code=0
wait $hook || code=$?
[[ $code -eq 0 ]] || fail "SIGTERM: exit $code"
pass "SIGTERM: exit 0"
