#!/usr/bin/env bash
# A GPU fleet on the real API server: N_NODES nodes kept alive by kwok, every node labelled as its
# `iogate node` agent labels it, the chart's webhook (a host process, registered as the chart
# installs it) admitting a burst of N_PODS GPU pods at RATE a second; then the same webhook driven
# directly, and the time it takes to see LAG_NODES nodes fall below policy. Prints TSV rows
# (LABEL, metric, value) for bench/results/fleet.tsv; progress on stderr. Not a test: the figures
# depend on the machine, and everything (etcd, kube-apiserver, scheduler, kwok, the webhook, the
# load generators) shares its cores.
#
#   sudo bash bench/fleet.sh > rows.tsv                     # 5,000 nodes, 1,000 pods at 200/s
#   N_NODES=200 N_PODS=100 LAG_NODES=50 bash bench/fleet.sh # a smoke run (~3 minutes)
#   FLEET_LABEL=informer bash bench/fleet.sh                # the rows' label (default: the commit)
#
# Steps:
#  1. cluster_up (tests/e2e/cluster_lib.sh): etcd, kube-apiserver, controller-manager, scheduler.
#  2. helm install the chart (node agent off: its DaemonSet would add a pod per node; the webhook
#     on, training namespace ml opted in); `iogate webhook` runs on this host with the Deployment's
#     arguments, as the chart's webhook ServiceAccount (its token, the chart's RBAC), reached by
#     the API server through the chart's Service turned ExternalName (tests/e2e/test_admission.sh
#     says why), with the chart's caBundle.
#  3. One node, and the real agent: `iogate node --once` probes a directory here under the
#     chart's policy and writes its node twice (a first sync, then an unchanged one); the API
#     server's request counts around each are the requests per sync, and what it wrote is the
#     template for every other node.
#  4. kwok (tests/upstream/kwok) takes over nodes annotated kwok.x-k8s.io/node=fake, with kwok's
#     own stages: node-initialize (fast), node-heartbeat-with-lease (status every 10 min ± 10;
#     the Lease renewed as a kubelet does, 40 s lease) and the fast pod lifecycle.
#  5. `fleet nodes`: the other nodes (8 GPUs each); `fleet sync` twice: every node's first sync
#     (labels, annotations, a taint on 1 in 20 below policy, the condition, an Event), then the
#     periodic unchanged one, as fast as the API server takes them: the time to absorb a round.
#  6. `fleet pods`: N_PODS GPU pods at RATE/s through the API server, half pinned to random nodes
#     (/validate looks them up), half left to the scheduler (/mutate adds the affinity); the API
#     server's webhook latency histogram before and after.
#  7. `fleet direct`: /validate at RATE/s for 20 s, pods pinned to random nodes.
#  8. `fleet lag`: LAG_NODES nodes fall below policy (their agents' syncs); per node, the time
#     from the labels patch until /validate denies a pod pinned there.
#  The webhook's VmRSS, VmHWM and threads after each step; the node cache's size: its own report
#  where it gives one, else the distinct nodes /validate looked up (its request log).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
N_NODES=${N_NODES:-5000}
N_PODS=${N_PODS:-1000}
RATE=${RATE:-200}
LAG_NODES=${LAG_NODES:-500}
DIRECT_SECONDS=${DIRECT_SECONDS:-20}
SYNC_WORKERS=${SYNC_WORKERS:-16}
BURST_WORKERS=${BURST_WORKERS:-128}  # creates in flight at most (one HTTP/2 connection, as client-go)
IOGATE=${IOGATE:-$root/build/iogate}
GO=${GO:-/usr/local/go/bin/go}
LABEL=${FLEET_LABEL:-$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- agent || echo '+changes')}
[[ $(id -u) -eq 0 ]] || { echo "bench/fleet.sh needs root (the webhook's port 443 on a loopback address)" >&2; exit 2; }
[[ -x "$IOGATE" ]] || { echo "build iogate first: bash scripts/build.sh" >&2; exit 2; }
[[ -x "$GO" ]] || { echo "Go is needed for bench/fleet (GO=path/to/go)" >&2; exit 2; }
for v in N_NODES N_PODS RATE LAG_NODES DIRECT_SECONDS SYNC_WORKERS BURST_WORKERS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench/fleet.sh: $v must be a positive integer, not '${!v}'" >&2; exit 2; }
done
((LAG_NODES < N_NODES)) || { echo "bench/fleet.sh: LAG_NODES ($LAG_NODES) must be below N_NODES ($N_NODES)" >&2; exit 2; }
for tool in jq openssl curl python3 setpriv; do command -v $tool >/dev/null || { echo "$tool is not installed" >&2; exit 2; }; done
UPSTREAM_BIN=$(bash "$root/tests/upstream/build.sh" --print-bin kube-apiserver etcd helm kwok) || exit 1
export UPSTREAM_BIN PATH="$UPSTREAM_BIN:$PATH"

work=$(mktemp -d /tmp/iogate-fleet.XXXXXX)
export KUBECACHEDIR="$work/kube-cache" HELM_CACHE_HOME="$work/helm/cache" HELM_CONFIG_HOME="$work/helm/config" \
  HELM_DATA_HOME="$work/helm/data"
source "$root/tests/e2e/cluster_lib.sh"
hook_pid= kwok_pid= probe_dir=
cleanup() {
  local pid
  for pid in $hook_pid $kwok_pid; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $hook_pid $kwok_pid; do wait "$pid" 2>/dev/null || true; done
  cluster_down
  rm -rf "$work" ${probe_dir:+"$probe_dir"}
}
trap cleanup EXIT
trap 'exit 143' TERM INT
t_start=$SECONDS
say() { printf '[fleet %4ds] %s\n' $((SECONDS - t_start)) "$*" >&2; }
row() { printf '%s\t%s\t%s\n' "$LABEL" "$1" "$2"; }
# hook_mem STEP: the webhook's resident memory, its peak and its threads, as rows.
hook_mem() {
  local s=/proc/$hook_pid/status
  row "rss_kib.$1" "$(awk '/^VmRSS:/ {print $2}' "$s")"
  row "hwm_kib.$1" "$(awk '/^VmHWM:/ {print $2}' "$s")"
  row "threads.$1" "$(awk '/^Threads:/ {print $2}' "$s")"
}
# fleet ARGS...: the Go driver with the admin's credentials and the run's sizes.
fleet() {
  local cmd=$1; shift
  "$work/fleet" "$cmd" -server "$CLUSTER_SERVER" -ca "$CLUSTER_CA" -cert "$CLUSTER_DIR/pki/admin.crt" \
    -key "$CLUSTER_DIR/pki/admin.key" -nodes "$N_NODES" "$@"
}
metrics() { kubectl get --raw /metrics >"$1"; }

row nodes "$N_NODES"
row pods "$N_PODS"
row rate "$RATE"
row burst_workers "$BURST_WORKERS"
row cores "$(nproc)"
row load_start "$(cut -d' ' -f1 /proc/loadavg)"
(cd "$root/bench/fleet" && GOFLAGS=-mod=mod GOTOOLCHAIN=local "$GO" build -o "$work/fleet" .)

# --- 1. the control plane -------------------------------------------------------------------
cluster_up "$work/cluster" >&2 || exit 1
say "cluster up at $CLUSTER_SERVER"

# --- 2. the chart and its webhook -----------------------------------------------------------
NS=iogate-system HOOK=iogate-webhook
kubectl create namespace ml >/dev/null
kubectl label namespace ml iogate.io/enabled=true >/dev/null
helm install iogate "$root/charts/iogate" -n "$NS" --create-namespace --set nodeAgent.enabled=false \
  --set webhook.replicas=1 --set 'preflight.namespaces={ml}' \
  --set-json 'webhook.namespaceSelector={"matchLabels":{"iogate.io/enabled":"true"}}' >"$work/helm.out" 2>&1 ||
  { cat "$work/helm.out" >&2; exit 1; }
kubectl -n "$NS" get deployment "$HOOK" -o json >"$work/deploy.json"
# Its arguments are all the host process needs; its pod would be bound to the first node that
# appears, and the scheduler's Event would count among the agent's requests below.
kubectl -n "$NS" scale deployment "$HOOK" --replicas=0 >/dev/null
kubectl -n "$NS" get secret "$HOOK-tls" -o json >"$work/secret.json"
ETC=$work/etc-iogate
mkdir -p "$ETC/tls"
kubectl -n "$NS" get configmap iogate-policy -o jsonpath='{.data.policy\.yaml}' >"$ETC/policy.yaml"
jq -r '.data["tls.crt"]' "$work/secret.json" | base64 -d >"$ETC/tls/tls.crt"
jq -r '.data["tls.key"]' "$work/secret.json" | base64 -d >"$ETC/tls/tls.key"
jq -r '.data["ca.crt"]' "$work/secret.json" | base64 -d >"$work/hook-ca.crt"
chmod 600 "$ETC/tls/tls.key"
ADDR=$(free_loopback_443)
[[ -n $ADDR ]] || { echo "no free 443 on a loopback address" >&2; exit 1; }
mapfile -t ARGS < <(jq -r --arg etc "$ETC" --arg listen "$ADDR:443" '.spec.template.spec.containers[0].args as $a |
  [range(0; $a | length) as $i | $a[$i] as $v |
    if $i > 0 and $a[$i - 1] == "--listen" then $listen
    elif ($v | startswith("/etc/iogate/")) then $etc + ($v | ltrimstr("/etc/iogate")) else $v end] | .[]' "$work/deploy.json")
token_kubeconfig "$work/webhook.kubeconfig" "$CLUSTER_SERVER" "$NS:$HOOK" "$(kubectl -n "$NS" create token "$HOOK" --duration 2h)"
setpriv --pdeathsig TERM -- "$IOGATE" "${ARGS[@]}" --kubeconfig "$work/webhook.kubeconfig" >/dev/null 2>"$work/webhook.log" &
hook_pid=$!
for _ in $(seq 100); do grep -q "serving /mutate" "$work/webhook.log" && break; sleep 0.2; done
grep -q "serving /mutate" "$work/webhook.log" || { echo "webhook did not start: $(cat "$work/webhook.log")" >&2; exit 1; }
kubectl -n "$NS" patch service "$HOOK" --type merge -p "$(jq -nc --arg a "$ADDR" '{spec: {type: "ExternalName", externalName: $a,
  clusterIP: null, clusterIPs: null, ipFamilies: null, ipFamilyPolicy: null, internalTrafficPolicy: null, selector: null}}')" >/dev/null
probe_pod='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ready-probe","namespace":"ml"},"spec":{"containers":[{"name":"c","image":"x","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}'
for _ in $(seq 150); do
  kubectl create --dry-run=server -f - <<<"$probe_pod" >/dev/null 2>&1 && grep -q "ml/ready-probe" "$work/webhook.log" && break
  sleep 0.2
done
grep -q "ml/ready-probe" "$work/webhook.log" || { echo "the API server does not reach the webhook: $(tail -3 "$work/webhook.log")" >&2; exit 1; }
say "webhook $HOOK.$NS.svc -> $ADDR:443 (pid $hook_pid): ${ARGS[*]:1}"
row webhook_memory_limit "$(jq -r '.spec.template.spec.containers[0].resources.limits.memory' "$work/deploy.json")"
# The webhook's worker pool's cap (a thread per connection being served, up to this many).
row webhook_max_workers "$(sed -n 's/^ *int max_workers = \([0-9]*\);.*/\1/p' "$root/agent/webhook/webhook_server.h" | head -1)"
hook_mem start

# --- 3. one node and the real agent ---------------------------------------------------------
fleet nodes -nodes 1 >/dev/null
probe_dir=$(mktemp -d /var/tmp/iogate-fleet-probe.XXXXXX)
agent_once() {  # the node agent, once, on node 0; the API server's request counts around it
  metrics "$work/m0"
  local rc=0  # 0 pass or warn, 1 below policy: both wrote the node
  "$IOGATE" node --once --node-name "${N0}" --kubeconfig "$KUBECONFIG" --policy "$ETC/policy.yaml" --gpus 8 \
    --path "rootfs=$probe_dir" --listen none --output-format json >"$work/agent-$1.json" 2>"$work/agent-$1.log" || rc=$?
  ((rc <= 1)) || { echo "iogate node --once: exit $rc: $(tail -3 "$work/agent-$1.log")" >&2; return 1; }
  metrics "$work/m1"
  "$work/fleet" metrics -codes "$work/m0" "$work/m1" | jq '.requests | with_entries(select(.key | test(" (nodes|events)")))' >"$work/agent-$1.req"
}
N0=fleet-00000
agent_once first
agent_once again
rm -rf "$probe_dir"
for s in first again; do
  row "agent_requests.$s" "$(jq 'add' "$work/agent-$s.req")"
  row "agent_writes.$s" "$(jq '[to_entries[] | select(.key | test("^(PATCH|POST|PUT)")) | .value] | add' "$work/agent-$s.req")"
  row "agent_requests_by_verb.$s" "$(jq -c . "$work/agent-$s.req" | tr -d '"{}')"
done
kubectl get node "$N0" -o json | jq '{
  labels: (.metadata.labels | with_entries(select(.key | startswith("iogate.io/")))),
  annotations: (.metadata.annotations | with_entries(select(.key | startswith("iogate.io/")))),
  condition: (.status.conditions[] | select(.type == "StorageBelowPolicy") | {type, status, reason, message})}' >"$work/template.json"
row agent_annotation_bytes "$(jq '[.annotations[] | length] | add' "$work/template.json")"
say "real agent on $N0: $(jq -c .labels "$work/template.json"); requests $(jq -c . "$work/agent-first.req") then $(jq -c . "$work/agent-again.req")"

# --- 4. kwok ----------------------------------------------------------------------------------
kwok_src=$(cd "$root/tests/upstream/kwok" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local "$GO" list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
{
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"
    cat "$kwok_src/kustomize/stage/$f"
  done
} >"$work/kwok-stages.yaml"
setpriv --pdeathsig TERM -- kwok --kubeconfig "$KUBECONFIG" --config "$work/kwok-stages.yaml" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds 40 --cidr 10.128.0.0/12 >"$work/kwok.log" 2>&1 &
kwok_pid=$!
sleep 2
kill -0 "$kwok_pid" 2>/dev/null || { echo "kwok exited: $(tail -5 "$work/kwok.log")" >&2; exit 1; }

# --- 5. the fleet and its agents' writes --------------------------------------------------------
fleet nodes -workers 16 >"$work/nodes.json"
row nodes_create_s "$(jq .seconds "$work/nodes.json")"
ready() { kubectl get nodes --no-headers 2>/dev/null | awk '$2 == "Ready"' | wc -l; }
for _ in $(seq 300); do (($(ready) >= N_NODES)) && break; sleep 2; done
row nodes_ready "$(ready)"
say "$N_NODES nodes created in $(jq .seconds "$work/nodes.json") s; $(ready) Ready (kwok)"
for round in first again; do
  metrics "$work/m0"
  fleet sync -template "$work/template.json" -workers "$SYNC_WORKERS" >"$work/sync-$round.json"
  metrics "$work/m1"
  "$work/fleet" metrics "$work/m0" "$work/m1" >"$work/sync-$round.metrics"
  row "sync_s.$round" "$(jq .seconds "$work/sync-$round.json")"
  row "sync_per_s.$round" "$(jq .syncs_per_s "$work/sync-$round.json")"
  row "sync_requests_per_sync.$round" "$(jq .requests_per_sync "$work/sync-$round.json")"
  row "sync_p99_ms.$round" "$(jq .sync.p99_ms "$work/sync-$round.json")"
  # Everything the API server served meanwhile, kwok's heartbeats and the controllers included.
  row "apiserver_requests.$round" "$(jq '[.requests[]] | add' "$work/sync-$round.metrics")"
  row "apiserver_node_writes.$round" "$(jq '[.requests | to_entries[] | select(.key | test("^(PATCH|PUT|POST) nodes")) | .value] | add' "$work/sync-$round.metrics")"
  say "sync round $round: $(jq -c '{seconds, syncs_per_s, requests, requests_per_sync, below}' "$work/sync-$round.json")"
done
row below_policy "$(jq .below "$work/sync-first.json")"
# The agents' default interval: the chart's policy's node.interval (nodeAgent.interval empty).
row agent_interval_s "$("$IOGATE" policy check "$ETC/policy.yaml" --output-format json | jq '.node.interval_ns / 1e9')"
hook_mem synced

# --- 6. the burst through the API server ----------------------------------------------------------
lookups_before=$(grep -c '^.*validate CREATE' "$work/webhook.log" || true)
metrics "$work/m0"
row load_burst "$(cut -d' ' -f1 /proc/loadavg)"
# A driver that saw errors exits 1 with its figures all the same: they are rows (errors counted).
fleet pods -n "$N_PODS" -rate "$RATE" -workers "$BURST_WORKERS" >"$work/pods.json" || say "fleet pods: exit $?"
metrics "$work/m1"
"$work/fleet" metrics "$work/m0" "$work/m1" >"$work/pods.metrics"
say "burst: $(jq -c '{seconds, achieved_per_s, created, refused, pinned_below_policy, refused_unexpected, errors, create}' "$work/pods.json")"
for q in p50 p99 max; do
  row "create_${q}_ms" "$(jq ".create.${q}_ms" "$work/pods.json")"
  row "create_from_due_${q}_ms" "$(jq ".create_from_due.${q}_ms" "$work/pods.json")"
done
row create_pinned_p99_ms "$(jq .pinned.p99_ms "$work/pods.json")"
row create_unpinned_p99_ms "$(jq .unpinned.p99_ms "$work/pods.json")"
for k in achieved_per_s created refused pinned_below_policy refused_unexpected errors; do row "burst_$k" "$(jq ".$k" "$work/pods.json")"; done
# The cluster's own traffic meanwhile: kwok renewing every node's Lease (a kubelet's 10 s).
row burst_lease_renewals_per_s "$(jq --argjson s "$(jq .seconds "$work/pods.json")" '[.requests | to_entries[] | select(.key | test("^(PUT|PATCH) leases")) | .value] | add // 0 | . / $s | round' "$work/pods.metrics")"
row burst_requests_by_verb "$(jq -c '.requests' "$work/pods.metrics" | tr -d '"{}')"
row burst_apiserver_requests_per_s "$(jq --argjson s "$(jq .seconds "$work/pods.json")" '[.requests[]] | add / $s | round' "$work/pods.metrics")"
for hk in "validate.iogate.io CREATE" "mutate.iogate.io CREATE"; do
  n=${hk%%.*}
  row "apiserver_${n}_p50_ms" "$(jq --arg k "$hk" '.webhooks[$k].p50_ms' "$work/pods.metrics")"
  row "apiserver_${n}_p99_ms" "$(jq --arg k "$hk" '.webhooks[$k].p99_ms' "$work/pods.metrics")"
  row "apiserver_${n}_count" "$(jq --arg k "$hk" '.webhooks[$k].count' "$work/pods.metrics")"
  row "apiserver_${n}_buckets" "$(jq -r --arg k "$hk" '.webhooks[$k].buckets' "$work/pods.metrics")"
done
hook_mem burst

# --- 7. /validate directly ------------------------------------------------------------------------
hookargs=(-addr "$ADDR:443" -hook-ca "$work/hook-ca.crt" -server-name "$HOOK.$NS.svc")
row load_direct "$(cut -d' ' -f1 /proc/loadavg)"
fleet direct "${hookargs[@]}" -rate "$RATE" -duration "${DIRECT_SECONDS}s" -conns 32 >"$work/direct.json" ||
  say "fleet direct: exit $?"
say "direct: $(jq -c . "$work/direct.json")"
for q in p50 p99 max; do row "direct_${q}_ms" "$(jq ".validate_from_due.${q}_ms" "$work/direct.json")"; done
for k in requests distinct_nodes denied errors; do row "direct_$k" "$(jq ".$k" "$work/direct.json")"; done
hook_mem direct
# The node cache's size: the webhook's own figures where it gives them (GET /debug/node-cache:
# a list+watch store), else the distinct nodes its /validate looked up (a per-name cache holds
# each until its TTL passes).
node_cache() {  # node_cache STEP
  local nc
  nc=$(curl -s --resolve "$HOOK.$NS.svc:443:$ADDR" --cacert "$work/hook-ca.crt" "https://$HOOK.$NS.svc/debug/node-cache" || true)
  if jq -e '.store.nodes' <<<"$nc" >/dev/null 2>&1; then
    row "node_cache_nodes.$1" "$(jq .store.nodes <<<"$nc")"
    row "node_cache_bytes.$1" "$(jq .store.bytes <<<"$nc")"
    row "node_cache_events.$1" "$(jq .store.events <<<"$nc")"
    row "node_cache_lists.$1" "$(jq .store.lists <<<"$nc")"
    row "node_cache_last_event_lag_ms.$1" "$(jq .store.last_event_lag_ms <<<"$nc")"
  elif [[ $1 == direct ]]; then
    row node_cache_nodes_looked_up "$(grep -oE '\bfleet-[0-9]{5}\b' "$work/webhook.log" | sort -u | wc -l)"
  fi
}
node_cache direct

# --- 8. the lag after label changes -----------------------------------------------------------
row load_lag "$(cut -d' ' -f1 /proc/loadavg)"
fleet lag "${hookargs[@]}" -n "$LAG_NODES" -template "$work/template.json" -workers 16 -conns 16 -poll-rate "$RATE" \
  >"$work/lag.json" || say "fleet lag: exit $?"
say "lag: $(jq -c . "$work/lag.json")"
for q in p50 p99 max; do row "lag_${q}_ms" "$(jq ".lag.${q}_ms" "$work/lag.json")"; done
row lag_resolution_p99_ms "$(jq .resolution.p99_ms "$work/lag.json")"
row lag_nodes "$(jq .nodes "$work/lag.json")"
row lag_write_s "$(jq .write_seconds "$work/lag.json")"
row lag_stale_answers "$(jq .stale_answers "$work/lag.json")"
hook_mem end
node_cache end
row load_end "$(cut -d' ' -f1 /proc/loadavg)"
row kwok_version "$(kwok --version 2>/dev/null | head -1)"
row wall_s "$((SECONDS - t_start))"
say "done in $((SECONDS - t_start)) s"
