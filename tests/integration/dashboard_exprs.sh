# Prints every PromQL expression of the iogate Grafana dashboard, one a line, ready for a plain
# Prometheus query: $node (or ${node}) becomes .* (what "All" selects) and $__rate_interval and
# $__interval become 5m. Multi-line expressions are joined with spaces.
#
#   bash tests/integration/dashboard_exprs.sh [DASHBOARD.json]    # prints
#   source tests/integration/dashboard_exprs.sh; dashboard_exprs [DASHBOARD.json]
#
# The default dashboard is charts/iogate/dashboards/iogate-node.json of this checkout. Needs jq.

DASHBOARD_EXPRS_DEFAULT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/charts/iogate/dashboards/iogate-node.json"

dashboard_exprs() {
  local dashboard=${1:-$DASHBOARD_EXPRS_DEFAULT}
  # Panels inside a collapsed row sit in the row's own panels list.
  jq -r '[.panels[] | ., (.panels // [])[]] | .[] | (.targets // [])[] | .expr // empty
         | gsub("\\$\\{?node\\}?"; ".*")
         | gsub("\\$\\{?__(rate_)?interval\\}?"; "5m")
         | gsub("\\s*\\n\\s*"; " ")' "$dashboard"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  dashboard_exprs "$@"
fi
