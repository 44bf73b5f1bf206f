#!/usr/bin/env bash
# iogate webhook over real TLS, with no Kubernetes API (--no-api): /mutate adds the node affinity
# to a GPU pod (the JSONPatch checked op by op) and leaves a CPU pod alone; dry-run answers alike;
# without the API, /validate allows a pinned GPU pod with a warning; malformed bodies get
# 400/415/413, never a crash; TLS 1.1 is refused; the certificate rotated on disk (a new CA, even)
# is served without a restart; usage errors; SIGTERM. /metrics on --metrics-listen (plain HTTP):
# promtool-clean, and a real Prometheus scrapes the counts of the reviews sent here (requests by
# webhook, operation and decision, errors by kind, the latency histogram, the certificate's
# not-after, which follows the rotation).
# /validate's node look-ups (slow, tainted, fast and unknown nodes, the node cache) run against the
# real kube-apiserver: tests/e2e/test_webhook_nodes.sh; through kube-apiserver itself:
# tests/e2e/test_admission.sh.
source "$(dirname "$0")/lib.sh"
need_tool openssl  # makes the certificates
need_tool promtool
need_tool prometheus
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

webhook_up "$SCRATCH/webhook.log" --listen 127.0.0.1:0 --tls-cert "$SCRATCH/tls/tls.crt" --tls-key "$SCRATCH/tls/tls.key" \
  --policy "$POLICY" --no-api --cert-check-interval 200ms --metrics-listen 127.0.0.1:0
METRICS=$(sed -n 's/.*serving \/metrics on \([0-9.:]*\).*/\1/p' "$SCRATCH/webhook.log" | head -1)
[[ -n $METRICS ]] || fail "webhook metrics listener did not start: $(cat "$SCRATCH/webhook.log")"
CA="$SCRATCH/pki1/ca.crt"
hook_curl() { curl -sS --cacert "$CA" "$@"; }
[[ $(hook_curl "https://$ADDR/healthz") == ok ]] || fail "/healthz"
pass "webhook serving on https://$ADDR, /healthz ok"

post() { hook_curl -H 'Content-Type: application/json' --data-binary @- "https://$ADDR/$1"; }

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

# --- /metrics on its own plain-HTTP port: promtool-clean, scraped by a real Prometheus ---
# So far: mutate CREATE 2 mutated (one dry-run) and 1 allowed (the CPU pod); validate CREATE 1
# allowed whose node could not be read (no API); mutate 2 bad requests (not JSON, a v1beta1
# review). 415 and 413 are refused by the server before a decision: not counted as reviews.
curl -sS "http://$METRICS/metrics" >"$SCRATCH/metrics.txt" || fail "GET http://$METRICS/metrics"
lint=$(promtool check metrics <"$SCRATCH/metrics.txt" 2>&1) || fail "promtool check metrics: $lint"
[[ -z $lint ]] || fail "promtool check metrics reports: $lint"
pass "webhook /metrics on http://$METRICS: promtool check metrics is clean ($(grep -c '^iogate_' "$SCRATCH/metrics.txt") samples)"
code=$(hook_curl -o /dev/null -w '%{http_code}' "https://$ADDR/metrics")
[[ $code == 404 ]] || fail "the TLS port serves /metrics (HTTP $code): it should only be on --metrics-listen"
pass "the admission port does not serve /metrics"

prometheus_up iogate-webhook="$METRICS"
prom=$PROM_PID
# value QUERY: the single result's value, or "none".
value() { query "$1" | jq -r 'if .status == "success" and (.data.result | length) == 1 then .data.result[0].value[1] else "none" end'; }
for _ in $(seq 300); do
  [[ $(value 'up{job="iogate-webhook"}') == 1 ]] && [[ $(value 'iogate_build_info{job="iogate-webhook"}') == 1 ]] && break
  kill -0 $prom 2>/dev/null || fail "prometheus exited: $(tail -5 "$SCRATCH/prom.log")"
  sleep 0.2
done
[[ $(value 'up{job="iogate-webhook"}') == 1 ]] || fail "Prometheus does not scrape the webhook: $(tail -5 "$SCRATCH/prom.log")"
expect_value() {  # expect_value QUERY WANT
  local got
  got=$(value "$1")
  [[ $got == "$2" ]] || fail "Prometheus: $1 = $got, want $2"
}
R=iogate_webhook_admission_requests_total
expect_value "$R{webhook=\"mutate\",operation=\"CREATE\",decision=\"mutated\"}" 2
expect_value "$R{webhook=\"mutate\",operation=\"CREATE\",decision=\"allowed\"}" 1
expect_value "$R{webhook=\"mutate\",operation=\"CREATE\",decision=\"denied\"}" 0
expect_value "$R{webhook=\"mutate\",operation=\"unknown\",decision=\"error\"}" 2
expect_value "$R{webhook=\"validate\",operation=\"CREATE\",decision=\"allowed\"}" 1
expect_value "sum($R)" 6
E=iogate_webhook_admission_errors_total
expect_value "$E{webhook=\"mutate\",kind=\"bad_request\"}" 2
expect_value "$E{webhook=\"validate\",kind=\"node_lookup\"}" 1
expect_value "sum($E)" 3
pass "Prometheus: requests by webhook, operation and decision, and errors by kind, as sent"
H=iogate_webhook_admission_duration_seconds
expect_value "sum($H""_count)" 6
expect_value "$H""_bucket{webhook=\"mutate\",le=\"+Inf\"}" 5
expect_value "$H""_count{webhook=\"validate\"}" 1
p99=$(value "histogram_quantile(0.99, sum by (le) ($H""_bucket))")
[[ $p99 != none && $p99 != NaN ]] || fail "no p99 from the latency histogram: $p99"
pass "Prometheus: the latency histogram counts every review (p99 estimate $p99 s)"
not_after=$(date -d "$(openssl x509 -noout -enddate -in "$SCRATCH/pki1/server.crt" | cut -d= -f2)" +%s)
expect_value 'iogate_webhook_certificate_not_after_timestamp_seconds{job="iogate-webhook"}' "$not_after"
query 'iogate_webhook_node_watch_synced' | jq -e '.status == "success" and (.data.result | length) == 0' >/dev/null ||
  fail "--no-api: a node watch series is there"
pass "Prometheus: the certificate's not-after ($not_after) as in the file; no node watch series without an API"

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
want_after=$(date -d "$(openssl x509 -noout -enddate -in "$SCRATCH/pki2/server.crt" | cut -d= -f2)" +%s)
curl -sS "http://$METRICS/metrics" >"$SCRATCH/metrics2.txt" || fail "GET http://$METRICS/metrics after the rotation"
awk -v want="$want_after" '$1 == "iogate_webhook_certificate_not_after_timestamp_seconds" { found = 1; ok = ($2 + 0 == want + 0) }
  END { exit !(found && ok) }' "$SCRATCH/metrics2.txt" ||
  fail "rotation: /metrics does not show the new certificate's not-after $want_after: $(grep not_after "$SCRATCH/metrics2.txt")"
pass "rotation: the not-after gauge follows the new certificate"
printf 'garbage' >"$SCRATCH/tls/tls.crt"
sleep 0.5
[[ $(hook_curl "https://$ADDR/healthz") == ok ]] || fail "a corrupt replacement broke serving"
pass "a corrupt replacement is refused; the previous certificate keeps serving"

# --- usage errors and SIGTERM ---
expect_usage "--tls-cert" webhook --tls-key "$SCRATCH/tls/tls.key" --policy "$POLICY"
expect_usage "--tls-key" webhook --tls-cert "$SCRATCH/pki1/server.crt" --tls-key "$SCRATCH/pki2/server.key" --policy "$POLICY" --no-api
expect_usage "--policy" webhook --tls-cert "$SCRATCH/pki1/server.crt" --tls-key "$SCRATCH/pki1/server.key" --policy "$SCRATCH/nope.yaml" --no-api
expect_usage "--metrics-listen" webhook --tls-cert "$SCRATCH/pki1/server.crt" --tls-key "$SCRATCH/pki1/server.key" --policy "$POLICY" --no-api --metrics-listen 9561
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
