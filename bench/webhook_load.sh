#!/usr/bin/env bash
# The webhook under load: `iogate webhook --no-api` on 127.0.0.1, driven by bench/httpload (Go,
# standard library only) with real AdmissionReviews for a 4-GPU pod (the full /mutate path: floor,
# affinity, patch; /validate: pinned to a node it cannot look up, so allowed with a warning) at
# 1, 50 and 200 concurrent keep-alive clients, each as fast as it is answered, then 200 sharing a
# fixed RATE; then one client (keep-alive, and a new connection per request) and the 200 at RATE
# while 64 raw TCP connections sit open sending nothing. Prints a markdown table. Not a test:
# figures depend on the machine, and on 2 cores the load generator takes about half of it.
#
#   bash bench/webhook_load.sh                        # build/iogate
#   IOGATE=/tmp/iogate-old DURATION=5s IDLE=64 CLIENTS=1,50,200 RATE=2000 bash bench/webhook_load.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
IOGATE=${IOGATE:-$root/build/iogate}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[[ -x "$IOGATE" ]] || { echo "build iogate first: bash scripts/build.sh" >&2; exit 2; }
[[ -x "$GO" ]] || { echo "Go is needed for bench/httpload (GO=path/to/go)" >&2; exit 2; }
for tool in jq openssl; do command -v $tool >/dev/null || { echo "$tool is not installed" >&2; exit 2; }; done

work=$(mktemp -d /tmp/iogate-webhook-load.XXXXXX)
hook=
trap '[[ -n $hook ]] && kill $hook 2>/dev/null; rm -rf "$work"' EXIT
(cd "$root/bench/httpload" && GOFLAGS=-mod=mod "$GO" build -o "$work/httpload" .)

source "$root/tests/lib/pki.sh"
pki_ca "$work/pki" iogate-webhook-load
pki_sign "$work/pki" server /CN=localhost "$(pki_server_ext IP:127.0.0.1,DNS:localhost)"

"$IOGATE" webhook --listen 127.0.0.1:0 --metrics-listen none --tls-cert "$work/pki/server.crt" --tls-key "$work/pki/server.key" \
  --policy "$root/tests/fixtures/webhook-policy.yaml" --no-api >/dev/null 2>"$work/webhook.log" &
hook=$!
for _ in $(seq 100); do grep -q "serving /mutate" "$work/webhook.log" && break; sleep 0.1; done
addr=$(sed -n 's/.*serving \/mutate \/validate \/healthz on \([0-9.:]*\).*/\1/p' "$work/webhook.log" | head -1)
[[ -n $addr ]] || { echo "webhook did not start: $(cat "$work/webhook.log")" >&2; exit 1; }

# review POD_JSON: an AdmissionReview as the API server sends it (as tests/integration/test_webhook.sh).
review() {
  jq -n --argjson pod "$1" '{
    apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: {group: "", version: "v1", kind: "Pod"}, resource: {group: "", version: "v1", resource: "pods"},
      requestKind: {group: "", version: "v1", kind: "Pod"}, requestResource: {group: "", version: "v1", resource: "pods"},
      namespace: "ml", operation: "CREATE",
      userInfo: {username: "system:serviceaccount:kube-system:job-controller", groups: ["system:serviceaccounts"]},
      object: $pod, oldObject: null, dryRun: false, options: {apiVersion: "meta.k8s.io/v1", kind: "CreateOptions"}}}'
}
gpu_pod() {  # gpu_pod [SPEC_EXTRA_JSON]
  jq -n --argjson extra "${1:-{\}}" '{apiVersion: "v1", kind: "Pod",
    metadata: {generateName: "train-", namespace: "ml", labels: {"job-name": "train"}},
    spec: ({containers: [{name: "train", image: "pytorch", resources: {limits: {"nvidia.com/gpu": "4"}}}]} + $extra)}'
}
review "$(gpu_pod)" >"$work/mutate.json"
review "$(gpu_pod '{"nodeName":"slow-1"}')" >"$work/validate.json"

echo "iogate webhook on $addr ($("$IOGATE" --version)), $(nproc) cores, $(date -u +%FT%TZ)"
echo
"$work/httpload" -addr "$addr" -ca "$work/pki/ca.crt" -validate "$work/validate.json" -mutate "$work/mutate.json" \
  -clients "${CLIENTS:-1,50,200}" -duration "${DURATION:-5s}" -idle "${IDLE:-64}" -rate "${RATE:-2000}"
