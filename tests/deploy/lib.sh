# Shared by the deployment tests (test_chart.sh, test_manifests.sh): reporting (tests/lib/check.sh),
# the tools, and YAML to JSON. Source it after setting HERE (this directory); it sets ROOT, SCRATCH
# (tests/lib/scratch.sh, removed on exit), UPSTREAM_BIN, HELM, KUBECTL (the pinned builds), CHECK_MANIFESTS, IOGATE, APP_VERSION and PY, or fails naming
# the missing piece and its fix.
set -uo pipefail

ROOT=$(cd "$HERE/../.." && pwd)
source "$ROOT/tests/lib/scratch.sh" iogate-deploy  # SCRATCH, on_exit (a test's cluster)
# Checks go on after a failure, so one run reports every problem: a failed check is fail_later,
# finish WHAT sets the exit code; fail is for what leaves nothing to check (a missing tool).
source "$ROOT/tests/lib/check.sh"

source "$ROOT/tests/lib/yaml.sh"  # PY, to_json

# The pinned upstream tools (tests/upstream/versions.env) the test names in DEPLOY_UPSTREAM
# (default: helm): UPSTREAM_BIN (ctest sets it), else tests/upstream/build.sh's cache, built on
# first use. Never a helm or kubectl from PATH.
read -ra deploy_upstream <<<"${DEPLOY_UPSTREAM:-helm}"
if [[ -z "${UPSTREAM_BIN:-}" ]]; then
  UPSTREAM_BIN=$(bash "$ROOT/tests/upstream/build.sh" --print-bin "${deploy_upstream[@]}") ||
    fail "tests/upstream/build.sh could not build ${deploy_upstream[*]} (output above)"
fi
for tool in "${deploy_upstream[@]}"; do
  [[ -x "$UPSTREAM_BIN/$tool" ]] ||
    fail "$UPSTREAM_BIN/$tool is not built: run bash tests/upstream/build.sh (ctest runs it as the tools.* tests)"
done
HELM=$UPSTREAM_BIN/helm
KUBECTL=$UPSTREAM_BIN/kubectl
export UPSTREAM_BIN
# helm keeps its caches, repositories and plugins in the scratch folder, not in $HOME; it never
# needs them here (a local chart, no repositories).
export HELM_CACHE_HOME="$SCRATCH/helm/cache" HELM_CONFIG_HOME="$SCRATCH/helm/config" \
  HELM_DATA_HOME="$SCRATCH/helm/data"
# kubectl's (and helm's) discovery cache too: not in $HOME/.kube/cache.
export KUBECACHEDIR="$SCRATCH/kube-cache"

# The checker: CHECK_MANIFESTS if set, else built by build_tools.sh into DEPLOY_TOOLS_DIR (ctest
# sets it to <build>/deploy-tools; the script takes a lock, so the deploy tests can build at once).
if [[ -z "${CHECK_MANIFESTS:-}" ]]; then
  TOOLS_DIR=${DEPLOY_TOOLS_DIR:-$ROOT/build/deploy-tools}
  mkdir -p "$TOOLS_DIR"
  bash "$HERE/build_tools.sh" "$TOOLS_DIR" >"$SCRATCH/build.log" 2>&1 ||
    fail "build_tools.sh failed: $(tail -20 "$SCRATCH/build.log")"
  CHECK_MANIFESTS=$TOOLS_DIR/check-manifests
fi
[[ -x "$CHECK_MANIFESTS" ]] || fail "CHECK_MANIFESTS=$CHECK_MANIFESTS is not executable"
IOGATE=${IOGATE:-$ROOT/build/iogate}
[[ -x "$IOGATE" ]] || fail "IOGATE=$IOGATE is not built: run bash scripts/build.sh"
APP_VERSION=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$ROOT/charts/iogate/Chart.yaml")
[[ -n "$APP_VERSION" ]] || fail "charts/iogate/Chart.yaml has no appVersion"
