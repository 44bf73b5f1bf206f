#!/usr/bin/env bash
# iogate node's HTTP side with the real peers: /metrics passes `promtool check metrics`, a real
# Prometheus server on loopback scrapes the agent and answers the IOPS series through its HTTP API
# with the value /report gives, and every query of the shipped Grafana dashboard runs on it.
# /healthz, /readyz and /report answer as documented.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dashboard_exprs.sh"
need_tool promtool
need_tool prometheus
need_tool curl

DATA="$SCRATCH/data"
mkdir -p "$DATA"
cat >"$SCRATCH/policy.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, runtime: 3s, ramp: 500ms, size: 64m}
rules:
  - name: gpu-feed
    min_iops: 100
P

"$IOGATE" node --policy "$SCRATCH/policy.yaml" --path "data=$DATA" --no-api --node-name metrics-node \
  --listen 127.0.0.1:0 --busy-util 100% --interval 1h >/dev/null 2>"$SCRATCH/agent.log" &
agent=$!
on_exit "kill $agent"
for _ in $(seq 100); do grep -q "serving /metrics" "$SCRATCH/agent.log" && break; sleep 0.1; done
ADDR=$(sed -n 's/.*serving .* on \([0-9.:]*\).*/\1/p' "$SCRATCH/agent.log" | head -1)
[[ -n $ADDR ]] || fail "no listen address in the log: $(cat "$SCRATCH/agent.log")"
pass "agent serving on $ADDR"
[[ $(curl -s "http://$ADDR/healthz") == ok ]] || fail "/healthz"
for _ in $(seq 300); do [[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz") == 200 ]] && break; sleep 0.1; done
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz") == 200 ]] || fail "never ready: $(tail -5 "$SCRATCH/agent.log")"
pass "/healthz ok, /readyz 200 after the first probe"

curl -s -D "$SCRATCH/headers" "http://$ADDR/metrics" >"$SCRATCH/metrics.txt"
grep -qi '^content-type: text/plain; version=0.0.4' "$SCRATCH/headers" || fail "/metrics content type: $(grep -i content-type "$SCRATCH/headers")"
lint=$(promtool check metrics <"$SCRATCH/metrics.txt" 2>&1) || fail "promtool check metrics: $lint"
[[ -z $lint ]] || fail "promtool check metrics reports: $lint"
pass "promtool check metrics: clean ($(grep -c '^iogate_' "$SCRATCH/metrics.txt") samples)"
for family in iogate_probe_iops iogate_probe_bandwidth_bytes_per_second iogate_probe_latency_seconds \
  iogate_probe_duration_seconds iogate_probe_last_success_timestamp_seconds iogate_probe_errors_total \
  iogate_probe_skips_total iogate_policy_verdict iogate_node_below_policy iogate_device_info; do
  grep -q "^$family{" "$SCRATCH/metrics.txt" || fail "/metrics lacks $family"
done
grep -q '^iogate_policy_verdict{.*verdict="pass"} 1$' "$SCRATCH/metrics.txt" || fail "verdict gauge is not pass=1"
grep -q '^iogate_node_below_policy{node="metrics-node"} 0$' "$SCRATCH/metrics.txt" || fail "below-policy gauge is not 0"
pass "/metrics: every documented family, verdict pass, not below policy"

curl -s "http://$ADDR/report" >"$SCRATCH/report.json"
assert_jq "$SCRATCH/report.json" '.schema == "iogate.node/v1" and .node == "metrics-node" and .paths[0].state == "measured" and .paths[0].name == "data"' "/report: schema, node, path measured"
iops=$(jq -r '.paths[0].measurement.iops' "$SCRATCH/report.json")

# A real Prometheus, scraping the agent every second.
PROM_PORT=$((20000 + RANDOM % 20000))
cat >"$SCRATCH/prometheus.yml" <<Y
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: iogate-node
    static_configs: [{targets: ["$ADDR"]}]
Y
promtool check config "$SCRATCH/prometheus.yml" >/dev/null || fail "promtool check config"
prometheus --config.file="$SCRATCH/prometheus.yml" --storage.tsdb.path="$SCRATCH/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$SCRATCH/prom.log" 2>&1 &
prom=$!
on_exit "kill $prom"
# A loaded machine can drop one connection to Prometheus: curl retries it. A query that still fails
# is reported where it is used (under set -e it used to end the test with no message).
query() { curl -s --retry 3 --retry-all-errors --retry-delay 0 --get "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
for _ in $(seq 300); do
  query 'iogate_probe_iops' >"$SCRATCH/q.json" 2>/dev/null || true
  jq -e '.status == "success" and (.data.result | length) == 1' "$SCRATCH/q.json" >/dev/null 2>&1 && break
  kill -0 $prom 2>/dev/null || fail "prometheus exited: $(tail -5 "$SCRATCH/prom.log")"
  sleep 0.2
done
assert_jq "$SCRATCH/q.json" '.data.result[0].metric | .node == "metrics-node" and .name == "data" and .rw == "randread" and .bs == "4k" and .job == "iogate-node"' \
  "Prometheus scraped iogate_probe_iops with node, name, rw, bs labels"
jq -e --argjson want "$iops" '(.data.result[0].value[1] | tonumber) as $got | ($got - $want | fabs) <= 0.5' "$SCRATCH/q.json" >/dev/null ||
  fail "Prometheus has $(jq -r '.data.result[0].value[1]' "$SCRATCH/q.json") IOPS, /report says $iops"
pass "Prometheus's IOPS equals /report's ($iops)"
# Prometheus commits a scrape's own series (up, scrape_duration_seconds) just after its samples.
for _ in $(seq 50); do
  query 'up{job="iogate-node"}' >"$SCRATCH/up.json" || true
  jq -e '(.data.result | length) == 1' "$SCRATCH/up.json" >/dev/null && break
  sleep 0.2
done
jq -e '.data.result[0].value[1] == "1"' "$SCRATCH/up.json" >/dev/null || fail "up != 1: $(cat "$SCRATCH/up.json")"
pass "target up"

n=0
while IFS= read -r expr; do
  [[ -n $expr ]] || continue
  query "$expr" >"$SCRATCH/d.json" || fail "Prometheus did not answer the dashboard query $expr"
  jq -e '.status == "success"' "$SCRATCH/d.json" >/dev/null || fail "dashboard query fails on Prometheus: $expr: $(jq -r .error "$SCRATCH/d.json")"
  n=$((n + 1))
done < <(dashboard_exprs)
[[ $n -gt 0 ]] || fail "no dashboard queries found"
pass "all $n Grafana dashboard queries run on Prometheus"
for expr in 'iogate_probe_latency_seconds{quantile="0.99",node=~".*"}' 'count by (device_class) (iogate_device_info)'; do
  query "$expr" | jq -e '(.data.result | length) >= 1' >/dev/null || fail "dashboard series empty: $expr"
done
pass "the dashboard's p99 and device-class panels have data"

kill -TERM $agent
code=0
wait $agent || code=$?
[[ $code -eq 0 ]] || fail "SIGTERM: exit $code"
curl -s -m 2 "http://$ADDR/healthz" >/dev/null 2>&1 && fail "still serving after SIGTERM"
pass "SIGTERM: exit 0, no longer serving"
assert_no_test_files "$DATA"
