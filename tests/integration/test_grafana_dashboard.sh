# The Grafana dashboard (charts/iogate/dashboards/iogate-node.json) against the metrics contract:
# valid JSON with the expected uid, title and variables; every panel queries something; every
# metric it names is in agent/metrics/node_metrics.h's or webhook_metrics.h's table (a histogram's
# _bucket, _sum and _count by its name); every selector of a series that has a node label filters
# by $node; a panel shows the alerts of the chart's rules (ALERTS{alertname=~"Iogate.*"}). And the
# chart ships the file. Needs jq, not the iogate binary.
IOGATE=${IOGATE:-unused}
source "$(dirname "$0")/lib.sh"
need_tool jq

TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
ROOT=$(cd "$TESTS_DIR/.." && pwd)
CHART="$ROOT/charts/iogate"
DASH="$CHART/dashboards/iogate-node.json"
HEADERS=("$ROOT/agent/metrics/node_metrics.h" "$ROOT/agent/metrics/webhook_metrics.h")
[[ -f "$DASH" ]] || fail "no dashboard at $DASH"
for h in "${HEADERS[@]}"; do [[ -f "$h" ]] || fail "no metrics contract at $h"; done

jq empty "$DASH" 2>"$SCRATCH/jq.err" || fail "not valid JSON: $(cat "$SCRATCH/jq.err")"
pass "valid JSON"
assert_jq "$DASH" '.uid == "iogate-node" and .title == "iogate: node storage"' "uid and title"
assert_jq "$DASH" '(.schemaVersion >= 36) and (.panels | length) >= 8' "schemaVersion and panels"
assert_jq "$DASH" '.templating.list | any(.name == "datasource" and .type == "datasource" and .query == "prometheus")' \
  "a datasource variable of type prometheus"
assert_jq "$DASH" '.templating.list | any(.name == "node" and .type == "query" and .multi and .includeAll
    and ((.query | if type == "object" then .query else . end) == "label_values(iogate_probe_iops, node)"))' \
  "a node variable from label_values(iogate_probe_iops, node), multi-select with All"

# Panels inside a collapsed row sit in the row's own panels list; rows themselves query nothing.
PANELS='[.panels[] | ., (.panels // [])[]] | map(select(.type != "row"))'
assert_jq "$DASH" "$PANELS | all((.targets // []) | any((.expr // \"\") | length > 0))" \
  "every panel has a target with an expression"
assert_jq "$DASH" "$PANELS | all(.datasource.uid == \"\${datasource}\" and all(.targets[]; .datasource.uid == \"\${datasource}\"))" \
  "every panel and target queries the chosen data source"
assert_jq "$DASH" "$PANELS | map(.id) | (length == (unique | length))" "panel ids are unique"

# The contract's table: "//   iogate_name{label,label}  ...", one metric a line.
for h in "${HEADERS[@]}"; do
  sed -nE 's|^//   (iogate_[a-z_]+)\{([a-z_,]*)\}.*|\1 \2|p' "$h" >"$SCRATCH/contract.one"
  [[ $(wc -l <"$SCRATCH/contract.one") -ge 5 ]] || fail "could not read the metric table of $h"
  cat "$SCRATCH/contract.one" >>"$SCRATCH/contract"
done
declare -A LABELS
while read -r name labels; do LABELS[$name]=",$labels,"; done <"$SCRATCH/contract"
pass "${#LABELS[@]} metrics in the contract"

jq -r "$PANELS | .[] | .targets[] | .expr // empty | gsub(\"\\\\s*\\\\n\\\\s*\"; \" \")" "$DASH" >"$SCRATCH/exprs"
checked=0
while IFS= read -r expr; do
  while IFS= read -r name; do
    [[ -n "${LABELS[$name]:-}" || -n "${LABELS[${name%_bucket}]:-}" ]] ||
      fail "'$name' is not in the tables of ${HEADERS[*]} (expr: $expr)"
  done < <(grep -oE 'iogate_[a-z_]+' <<<"$expr" | sort -u)
  # Each selector: the name and, where written, its braces.
  while IFS= read -r selector; do
    name=${selector%%\{*}
    [[ "${LABELS[$name]:-${LABELS[${name%_bucket}]}}" == *,node,* ]] || continue
    [[ "$selector" == *'node=~"$node"'* ]] || fail "$name has a node label but is not filtered by \$node: $expr"
  done < <(grep -oE 'iogate_[a-z_]+(\{[^}]*\})?' <<<"$expr")
  checked=$((checked + 1))
done <"$SCRATCH/exprs"
[[ $checked -ge 8 ]] || fail "only $checked expressions found"
pass "$checked expressions: only contract metrics, each filtered by node=~\"\$node\" where it has a node label"
EXPRS_JQ="$PANELS | map(.targets[].expr // \"\")"
assert_jq "$DASH" "$EXPRS_JQ | any(startswith(\"ALERTS{alertname=~\\\"Iogate.*\\\"}\"))" \
  "a panel shows the iogate alerts (ALERTS{alertname=~\"Iogate.*\"})"
assert_jq "$DASH" "$EXPRS_JQ | any(contains(\"iogate_webhook_admission_duration_seconds_bucket\"))
  and any(contains(\"iogate_webhook_admission_requests_total\"))" "panels of the webhook's requests and latency"

# dashboard_exprs.sh gives the same expressions, runnable as they are.
bash "$TESTS_DIR/integration/dashboard_exprs.sh" "$DASH" >"$SCRATCH/runnable"
[[ $(wc -l <"$SCRATCH/runnable") -eq $checked ]] || fail "dashboard_exprs.sh printed $(wc -l <"$SCRATCH/runnable") lines, want $checked"
! grep -n '\$' "$SCRATCH/runnable" || fail "dashboard_exprs.sh left a Grafana variable in"
pass "dashboard_exprs.sh prints $checked expressions without Grafana variables"

# promtool parses recording rules' expressions as Prometheus does: a cheap PromQL syntax check.
if command -v promtool >/dev/null; then
  {
    echo "groups:"
    echo "  - name: iogate-dashboard"
    echo "    rules:"
    i=0
    while IFS= read -r expr; do
      i=$((i + 1))
      echo "      - record: iogate_dashboard:expr$i"
      echo "        expr: $(jq -Rn --arg e "$expr" '$e')"
    done <"$SCRATCH/runnable"
  } >"$SCRATCH/rules.yaml"
  promtool check rules "$SCRATCH/rules.yaml" >"$SCRATCH/promtool.out" 2>&1 ||
    fail "promtool rejects a dashboard expression: $(cat "$SCRATCH/promtool.out")"
  pass "promtool parses every expression"
else
  echo "note: promtool is not installed; the expressions' PromQL syntax was not checked"
fi

# The chart ships the file through the sidecar's ConfigMap.
[[ -f "$CHART/Chart.yaml" && -f "$CHART/values.yaml" ]] || fail "the chart lacks Chart.yaml or values.yaml"
TEMPLATE="$CHART/templates/grafana-dashboard-configmap.yaml"
grep -qF '.Files.Get "dashboards/iogate-node.json"' "$TEMPLATE" || fail "$TEMPLATE does not embed the dashboard"
grep -qE '^grafanaDashboard:' "$CHART/values.yaml" || fail "values.yaml has no grafanaDashboard section"
pass "the chart's ConfigMap template embeds the dashboard"
if command -v helm >/dev/null; then
  helm template rel "$CHART" --namespace monitoring >"$SCRATCH/rendered.yaml" 2>"$SCRATCH/helm.err" ||
    fail "helm template: $(cat "$SCRATCH/helm.err")"
  grep -q 'name: rel-iogate-grafana-dashboard' "$SCRATCH/rendered.yaml" || fail "no rel-iogate-grafana-dashboard ConfigMap"
  grep -q 'grafana_dashboard: "1"' "$SCRATCH/rendered.yaml" || fail "the ConfigMap lacks the sidecar's label"
  grep -q '"uid": "iogate-node"' "$SCRATCH/rendered.yaml" || fail "the ConfigMap lacks the dashboard"
  pass "helm template renders the ConfigMap with the label and the dashboard"
else
  echo "note: helm is not installed; the template was not rendered"
fi
