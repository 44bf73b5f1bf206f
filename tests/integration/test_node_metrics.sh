#!/usr/bin/env bash
# iogate node's HTTP side with the real peers: /metrics passes `promtool check metrics`, a real
# Prometheus server on loopback scrapes the agent and answers the IOPS series through its HTTP API
# with the value /report gives, and every query of the shipped Grafana dashboard runs on it. A
# second agent under a demand policy gives the accelerators-sustained, samples/s and 4k headline
# series, linted and scraped the same way.
# /healthz, /readyz and /report answer as documented.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dashboard_exprs.sh"
need_tool promtool
need_tool prometheus
need_tool curl

DATA="$SCRATCH/data"
mkdir -p "$DATA"
POLICY=$(policy policy 3s "min_iops: 100")

# A second agent under a demand policy (workload.mode auto: synthetic samples, then the 4 KiB
# headline): its accelerators-sustained and samples/s series, scraped by the same Prometheus.
SAMPLES="$SCRATCH/samples"
mkdir -p "$SAMPLES"
cat >"$SCRATCH/demand.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
workload: {mode: auto, runtime: 3s, ramp: 500ms, size: 64m}
rules:
  - name: feed-gpus
    demand: {samples_per_s: 2500, sample_size: 110k, min_au: 0.9}
P

# start_agent NAME POLICY PATH: an agent serving on a free loopback port; sets ADDR_<NAME> and agent_<NAME>.
start_agent() {
  "$IOGATE" node --policy "$2" --path "data=$3" --no-api --node-name "$1-node" \
    --listen 127.0.0.1:0 --busy-util 100% --interval 1h >/dev/null 2>"$SCRATCH/$1.log" &
  printf -v "agent_$1" %s $!
  on_exit "kill $!"
  for _ in $(seq 100); do grep -q "serving /metrics" "$SCRATCH/$1.log" && break; sleep 0.1; done
  printf -v "ADDR_$1" %s "$(sed -n 's/.*serving .* on \([0-9.:]*\).*/\1/p' "$SCRATCH/$1.log" | head -1)"
}
start_agent metrics "$POLICY" "$DATA"
start_agent demand "$SCRATCH/demand.yaml" "$SAMPLES"
agent=$agent_metrics ADDR=$ADDR_metrics
[[ -n $ADDR ]] || fail "no listen address in the log: $(cat "$SCRATCH/metrics.log")"
pass "agent serving on $ADDR"
[[ $(curl -s "http://$ADDR/healthz") == ok ]] || fail "/healthz"
for _ in $(seq 300); do [[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz") == 200 ]] && break; sleep 0.1; done
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/readyz") == 200 ]] || fail "never ready: $(tail -5 "$SCRATCH/metrics.log")"
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
prometheus_up iogate-node="$ADDR" iogate-demand="$ADDR_demand"
prom=$PROM_PID
for _ in $(seq 300); do
  query 'iogate_probe_iops{job="iogate-node"}' >"$SCRATCH/q.json" 2>/dev/null || true
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

# The demand agent: clean metrics, its figures in Prometheus as in its /report.
[[ -n $ADDR_demand ]] || fail "the demand agent has no listen address: $(cat "$SCRATCH/demand.log")"
for _ in $(seq 300); do [[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR_demand/readyz") == 200 ]] && break; sleep 0.1; done
curl -s "http://$ADDR_demand/report" >"$SCRATCH/demand.json"
assert_jq "$SCRATCH/demand.json" '.paths[0].measurement.samples == true and .paths[0].randread_headline.bs_bytes == 4096 and
  (.demands | length) == 1 and .demands[0].rule == "feed-gpus" and (.demands[0].accelerators_sustained | type) == "number"' \
  "demand agent /report: synthetic samples, the 4k headline, feed-gpus sustains $(jq -r '.demands[0].accelerators_sustained' "$SCRATCH/demand.json") accelerators ($(jq -r '.demands[0].samples_per_s' "$SCRATCH/demand.json") samples/s)"
curl -s "http://$ADDR_demand/metrics" >"$SCRATCH/demand-metrics.txt"
lint=$(promtool check metrics <"$SCRATCH/demand-metrics.txt" 2>&1) || fail "promtool check metrics (demand agent): $lint"
[[ -z $lint ]] || fail "promtool check metrics (demand agent) reports: $lint"
pass "promtool check metrics: the demand agent's metrics are clean"
sustained=$(jq -r '.demands[0].accelerators_sustained' "$SCRATCH/demand.json")
for _ in $(seq 100); do
  query 'iogate_node_accelerators_sustained{job="iogate-demand"}' >"$SCRATCH/s.json" || true
  jq -e '(.data.result | length) == 1' "$SCRATCH/s.json" >/dev/null 2>&1 && break
  sleep 0.2
done
assert_jq "$SCRATCH/s.json" '.data.result[0] | .metric.rule == "feed-gpus" and .metric.node == "demand-node" and
  (.value[1] | tonumber) == '"$sustained" \
  "Prometheus: iogate_node_accelerators_sustained{rule=\"feed-gpus\"} $sustained, as /report says"
query 'iogate_probe_iops{job="iogate-demand",bs="4k"}' | jq -e '(.data.result | length) == 1' >/dev/null ||
  fail "no 4k headline series of the demand agent in Prometheus"
query 'iogate_probe_samples_per_second{job="iogate-demand"}' | jq -e '(.data.result | length) == 1' >/dev/null ||
  fail "no samples/s series of the demand agent in Prometheus"
pass "Prometheus: the demand agent's 4k headline and samples/s series"
kill -TERM "$agent_demand"
wait "$agent_demand" || fail "the demand agent: exit $? on SIGTERM"
assert_no_test_files "$SAMPLES"

kill -TERM $agent
code=0
wait $agent || code=$?
[[ $code -eq 0 ]] || fail "SIGTERM: exit $code"
curl -s -m 2 "http://$ADDR/healthz" >/dev/null 2>&1 && fail "still serving after SIGTERM"
pass "SIGTERM: exit 0, no longer serving"
assert_no_test_files "$DATA"
