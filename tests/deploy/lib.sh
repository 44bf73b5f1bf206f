# Shared by the deployment tests (test_chart.sh, test_manifests.sh): reporting, the tools, and
# YAML to JSON. Source it after setting HERE (this directory); it sets ROOT, SCRATCH (removed on
# exit), HELM_RENDER, CHECK_MANIFESTS, IOGATE, APP_VERSION and PY, or skips (77) with the reason.
set -uo pipefail

ROOT=$(cd "$HERE/../.." && pwd)
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/iogate-deploy.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

# Checks go on after a failure, so one run reports every problem; finish() sets the exit code.
FAILS=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
finish() {  # finish WHAT
  if ((FAILS > 0)); then
    echo "$FAILS check(s) failed" >&2
    exit 1
  fi
  echo "all $1 checks passed"
}

# need_tools TOOL...: skip when one is missing.
need_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps.sh installs it)"
  done
}

# Debian's python3 has python3-yaml (a yamllint dependency); another python3 first on PATH may not.
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3
"$PY" -c 'import yaml' 2>/dev/null || skip "python3 has no yaml module (python3-yaml)"

# YAML (multi-document) -> a JSON array of the non-empty documents.
to_json() {
  "$PY" -c '
import json, sys, yaml
json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)' "$1"
}

# The renderer and the checker: HELM_RENDER and CHECK_MANIFESTS if set, else built by
# build_tools.sh into DEPLOY_TOOLS_DIR (ctest sets it to <build>/deploy-tools; the script takes
# a lock, so the deploy tests can build at once).
if [[ -z "${HELM_RENDER:-}" || -z "${CHECK_MANIFESTS:-}" ]]; then
  TOOLS_DIR=${DEPLOY_TOOLS_DIR:-$ROOT/build/deploy-tools}
  need_tools go
  mkdir -p "$TOOLS_DIR"
  bash "$HERE/build_tools.sh" "$TOOLS_DIR" >"$SCRATCH/build.log" 2>&1 ||
    die "build_tools.sh failed: $(tail -20 "$SCRATCH/build.log")"
  HELM_RENDER=${HELM_RENDER:-$TOOLS_DIR/helm-render}
  CHECK_MANIFESTS=${CHECK_MANIFESTS:-$TOOLS_DIR/check-manifests}
fi
[[ -x "$HELM_RENDER" ]] || die "HELM_RENDER=$HELM_RENDER is not executable"
[[ -x "$CHECK_MANIFESTS" ]] || die "CHECK_MANIFESTS=$CHECK_MANIFESTS is not executable"
IOGATE=${IOGATE:-$ROOT/build/iogate}
[[ -x "$IOGATE" ]] || skip "IOGATE=$IOGATE is not built"
APP_VERSION=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$ROOT/charts/iogate/Chart.yaml")
[[ -n "$APP_VERSION" ]] || die "charts/iogate/Chart.yaml has no appVersion"
