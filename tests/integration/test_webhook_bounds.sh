#!/usr/bin/env bash
# The webhook's memory has a bound whatever its clients send (docs/security.md, "Webhook"): the
# real `iogate webhook` over real TLS, pushed by tests/integration/webhook_client.py, its peak RSS
# (VmHWM, reset before each case) held under the chart's memory limit (charts/iogate/values.yaml,
# webhook.resources.limits.memory) in every case:
#   (a) an endless header line: 431 as it arrives, the connection closed;
#   (b) endless header lines: 431;
#   (c) bodies: a Content-Length over the limit, 413 with its body unread; a chunked body (an
#       endless chunk-size line), 411 unread;
#   (d) 64 reviews at once, of just under the body limit (one long annotation) and of 3 MiB (what
#       the API server takes in one request) of a pod of short environment variables (the densest
#       JSON a real pod makes): every one answered 200, its uid echoed, /mutate's patch there;
#   (e) reviews whose JSON would take more memory parsed than the webhook gives reviews (empty
#       objects, and environment variables up to the body limit): 413, naming what they would take;
#   (f) /mutate on pods of 3 MiB whose node affinity is most of them (one nodeSelectorTerm of
#       80,000 expressions, or one expression of some 220,000 node names), one alone and 64 at once:
#       each answered with a patch of a few hundred bytes (the pod's terms are extended in place,
#       never copied); under a policy whose floors differ by disk class (two alternatives, each
#       term repeated) the same pods are refused (allowed false), the message naming the bytes.
source "$(dirname "$0")/lib.sh"
need_tool openssl
need_tool python3
source "$TESTS_DIR/lib/pki.sh"
CLIENT="$TESTS_DIR/integration/webhook_client.py"

# The limit, as the chart sets it (a Kubernetes quantity: 128Mi).
QUANTITY=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["webhook"]["resources"]["limits"]["memory"])' \
  "$TESTS_DIR/../charts/iogate/values.yaml")
LIMIT=$(numfmt --from=iec-i "$QUANTITY") || fail "webhook.resources.limits.memory: '$QUANTITY' is not a quantity"

pki_ca "$SCRATCH/pki" iogate-webhook-bounds
pki_sign "$SCRATCH/pki" server /CN=localhost "$(pki_server_ext IP:127.0.0.1,DNS:localhost)"
CA="$SCRATCH/pki/ca.crt"

# start_webhook POLICY: the webhook judging by POLICY, as $hook on $ADDR (one at a time).
# --request-deadline 30s: a request waits up to half of it for room in each budget, so that on a
# slow machine the answers depend on the bounds, not on the speed.
start_webhook() {
  webhook_up "$SCRATCH/webhook.log" --listen 127.0.0.1:0 --metrics-listen none --tls-cert "$SCRATCH/pki/server.crt" \
    --tls-key "$SCRATCH/pki/server.key" --policy "$1" --no-api --request-deadline 30s
}
start_webhook "$TESTS_DIR/fixtures/webhook-policy.yaml"

vm_kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$hook/status"; }
# client NAME ARGS...: resets the webhook's peak, runs the client case into $SCRATCH/NAME.json,
# and checks that the webhook lives and peaked under the limit.
client() {
  local name=$1; shift
  echo 5 >"/proc/$hook/clear_refs"  # VmHWM from here on
  python3 "$CLIENT" "$ADDR" "$CA" "$@" >"$SCRATCH/$name.json" || fail "$name: the client failed"
  kill -0 $hook 2>/dev/null || fail "$name: the webhook died: $(tail -3 "$SCRATCH/webhook.log")"
  PEAK=$(($(vm_kib VmHWM) * 1024))
  ((PEAK < LIMIT)) || fail "$name: peak RSS $((PEAK >> 20)) MiB, over the chart's limit of $((LIMIT >> 20)) MiB ($(cat "$SCRATCH/$name.json" | head -c 300))"
}
mib() { echo "$(($1 >> 20)) MiB"; }
echo "chart limit $(mib "$LIMIT"); webhook idle at $(mib $(($(vm_kib VmRSS) * 1024)))"

# (a) An endless header line, sent up to past the limit.
client endless-header endless-header --max-bytes $((LIMIT + (32 << 20)))
assert_jq "$SCRATCH/endless-header.json" '.status == "HTTP/1.1 431 Request Header Fields Too Large"' \
  "endless header line: 431 after $(jq .sent "$SCRATCH/endless-header.json") bytes sent, peak $(mib "$PEAK")"

# (b) 100,000 header lines.
client many-headers many-headers --count 100000
assert_jq "$SCRATCH/many-headers.json" '.status == "HTTP/1.1 431 Request Header Fields Too Large"' \
  "100,000 header lines: 431, peak $(mib "$PEAK")"

# (c) Bodies that are not read: one declared over the limit (64 MiB of it sent), which also says the
# limit, one just over it, one chunked.
client huge-body big-body --length $((1 << 30)) --send $((64 << 20))
MAX_BODY=$(jq -r '.body | capture("^request body over (?<n>[0-9]+) bytes").n' "$SCRATCH/huge-body.json")
assert_jq "$SCRATCH/huge-body.json" '.status == "HTTP/1.1 413 Payload Too Large"' \
  "a 1 GiB body: 413 unread after $(jq .sent "$SCRATCH/huge-body.json") bytes sent (the limit: $MAX_BODY bytes), peak $(mib "$PEAK")"
client big-body big-body --length $((MAX_BODY + 1))
assert_jq "$SCRATCH/big-body.json" '.status == "HTTP/1.1 413 Payload Too Large"' "a body one byte over: 413"
client endless-chunk endless-chunk --max-bytes $((LIMIT + (32 << 20)))
assert_jq "$SCRATCH/endless-chunk.json" '.status == "HTTP/1.1 411 Length Required"' \
  "a chunked body (an endless chunk-size line): 411 unread, peak $(mib "$PEAK")"

# (d) 64 reviews at once: of just under the limit, one long annotation each; of 3 MiB, the most
# the API server takes in a request, a dense pod each.
API_REQUEST=$((3 << 20))
for kind in sparse dense; do
  size=$((API_REQUEST - 100))
  [[ $kind == sparse ]] && size=$((MAX_BODY - 100))
  client "reviews-$kind" reviews --count 64 --bytes $size --kind $kind
  assert_jq "$SCRATCH/reviews-$kind.json" '.ok == 64' \
    "64 $kind reviews of $(jq .bytes "$SCRATCH/reviews-$kind.json") bytes at once: all answered ($(jq .busy_retries "$SCRATCH/reviews-$kind.json") sent again after a 503 busy), peak $(mib "$PEAK") ($(jq -c .failed "$SCRATCH/reviews-$kind.json"))"
done

# (e) Reviews that would take more parsed than all reviews together may.
for kind in objects dense; do
  client "too-much-$kind" reviews --count 4 --bytes $((MAX_BODY - 100)) --kind $kind
  assert_jq "$SCRATCH/too-much-$kind.json" \
    '.statuses == {"413": 4} and (.messages | length == 1) and (.messages[0] | test("^this JSON would take [0-9]+ MiB parsed, more than the [0-9]+ MiB reviews may take$"))' \
    "4 $kind reviews of just under the limit: 413, $(jq -r '.messages[0]' "$SCRATCH/too-much-$kind.json"), peak $(mib "$PEAK")"
done

# (f) /mutate on pods whose node affinity is most of their 3 MiB.
for kind in affinity affinity-values; do
  for count in 1 64; do
    client "$kind-$count" reviews --count $count --bytes $((API_REQUEST - 100)) --kind $kind --mutate-only
    assert_jq "$SCRATCH/$kind-$count.json" ".ok == $count and .patch_bytes < 4096" \
      "$count $kind review(s) of 3 MiB at once: all answered, a patch of $(jq .patch_bytes "$SCRATCH/$kind-$count.json") bytes, peak $(mib "$PEAK") ($(jq -c .failed "$SCRATCH/$kind-$count.json"))"
  done
done
[[ $(curl -sS --cacert "$CA" "https://$ADDR/healthz") == ok ]] || fail "/healthz after the cases"
kill $hook
wait $hook 2>/dev/null

# The same under a policy whose floors differ by disk class: every term is repeated, once for
# each of the two alternatives; the repeat is the API server's (a copy operation), and counted.
cat >"$SCRATCH/two-floors.yaml" <<'POLICY'
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
workload: {rw: randread, bs: 4k, iodepth: 32}
rules:
  - {name: gpu-feed, min_iops: 10000, min_iops_per_gpu: 5000, forbidden_classes: [hdd]}
  - {name: local-nvme, selector: {device_classes: [nvme]}, min_iops: 50000}
POLICY
start_webhook "$SCRATCH/two-floors.yaml"
for count in 1 64; do
  client "affinity-two-$count" reviews --count $count --bytes $((API_REQUEST - 100)) --kind affinity --mutate-only
  assert_jq "$SCRATCH/affinity-two-$count.json" \
    ".statuses == {\"200\": $count} and (.messages | length == 1) and (.messages[0] | test(\"^the patch would add [0-9]+ bytes to the pod .*, more than a pod may grow by\"))" \
    "$count affinity review(s) of 3 MiB, two alternatives: refused, '$(jq -r '.messages[0]' "$SCRATCH/affinity-two-$count.json" | cut -c1-80)...', peak $(mib "$PEAK")"
done

[[ $(curl -sS --cacert "$CA" "https://$ADDR/healthz") == ok ]] || fail "/healthz after the cases"
pass "still serving"
