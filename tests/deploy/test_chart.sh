#!/usr/bin/env bash
# The Helm chart (charts/iogate), rendered by the real, pinned helm (tests/upstream/versions.env)
# without a cluster and checked object by object (tests/e2e/test_chart_install.sh installs it):
#   - helm lint --strict at the pinned Kubernetes version (its deprecated-API rule included), on
#     the default values and on each non-default values file below;
#   - renderings (helm template): default values; each part alone (nodeAgent, webhook,
#     preflight); non-default values (another release and namespace, fullnameOverride,
#     cert-manager, ServiceMonitor, several node paths, extra preflight namespaces, a custom
#     image); cert-manager "auto" with and without the cert-manager.io/v1 API (--api-versions);
#     a release name without "iogate";
#   - each rendering: yamllint (tests/deploy/yamllint.yaml), check-manifests (RBAC exactly as in
#     tests/deploy/expected-rbac.yaml, images pinned, labels, security contexts, resources), and
#     the exact set of objects, so each part's objects appear iff it is enabled;
#   - the webhook configurations call the Service at /mutate and /validate, with a caBundle
#     (self-signed: it verifies the serving certificate, whose SANs cover the Service's DNS names)
#     or cert-manager's inject-ca-from annotation; without a cluster lookup finds no Secret, so
#     each rendering makes a new pair (the reuse on upgrade is shown by test_chart_install.sh);
#   - Chart.yaml: kubeVersion >=1.30.0-0 (helm template --kube-version 1.29.0 fails naming it;
#     1.30.0 and providers' v1.30.2-eks-..., v1.31.1-gke.N pass), home, sources, keywords, and
#     Artifact Hub annotations (category, links, images = the default values' image);
#   - pull secrets: global.imagePullSecrets then imagePullSecrets, each name once, on every pod
#     spec the chart renders (hooks and tests too); none without them; the schema refuses bad shapes;
#   - the rendered policy passes `iogate policy check`;
#   - values the schema refuses (a typo'd key, a wrong enum, a bad duration) fail in helm with the
#     schema's message naming the field, and the chart's own checks (deadline vs timeout, node
#     paths) with theirs;
#   - the webhook's networking values (port, metrics.port, hostNetwork) reach its flags, ports,
#     Services and ServiceMonitor, and the combinations that cannot work are refused;
#   - the PrometheusRule (prometheusRule.enabled, refused where monitoring.coreos.com/v1 is not
#     served) carries rules/iogate.rules.yaml's groups as they are; promtool checks the file and
#     the rendering and runs tests/deploy/alerts_test.yaml (every alert fires and stays silent
#     where it should); every alert has severity, summary, description and a runbook section;
#   - NOTES.txt renders (helm install --dry-run=client) and prints the preflight snippet; the named
#     template iogate.preflight.initContainer builds the container
#     agent/webhook/preflight_injection.cc does.
# Tools: the pinned helm from UPSTREAM_BIN (ctest sets it; else tests/upstream/build.sh builds
# it); CHECK_MANIFESTS if set, else tests/deploy/build_tools.sh builds it into DEPLOY_TOOLS_DIR
# (ctest sets it to <build>/deploy-tools). IOGATE: the binary. A missing tool fails the test.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
need_tool jq yamllint openssl promtool
source "$ROOT/tests/upstream/versions.env"
# No cluster here: a kubeconfig that points nowhere, so nothing can reach a real one by accident.
export KUBECONFIG="$SCRATCH/no-cluster.kubeconfig"
: >"$KUBECONFIG"
CHART="$ROOT/charts/iogate"
CHART_VERSION=$(sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$CHART/Chart.yaml")
[[ -n "$CHART_VERSION" ]] || fail "Chart.yaml lacks version"
[[ "$("$IOGATE" --version)" == "iogate $APP_VERSION" ]] ||
  fail_later "Chart.yaml appVersion $APP_VERSION is not the binary's version ($("$IOGATE" --version))"

# template RELEASE CHART-DIR NAMESPACE [helm flags...]: helm template, its manifests on stdout.
template() {
  local release=$1 chart=$2 ns=$3
  shift 3
  "$HELM" template "$release" "$chart" -n "$ns" "$@"
}

# render NAME RELEASE NAMESPACE [helm template flags...]: writes $SCRATCH/NAME.yaml and .json,
# lints and checks it. The app version expected on images is $EXPECT_TAG (default: appVersion).
render() {
  local name=$1 release=$2 ns=$3
  shift 3
  if ! template "$release" "$CHART" "$ns" "$@" >"$SCRATCH/$name.yaml" 2>"$SCRATCH/$name.err"; then
    fail_later "$name: the chart does not render: $(cat "$SCRATCH/$name.err")"
    return 1
  fi
  to_json "$SCRATCH/$name.yaml" >"$SCRATCH/$name.json" || { fail_later "$name: not YAML"; return 1; }
  if yamllint -f parsable -c "$HERE/yamllint.yaml" "$SCRATCH/$name.yaml" >"$SCRATCH/$name.lint" 2>&1; then
    pass "$name: yamllint is clean"
  else
    fail_later "$name: yamllint: $(head -20 "$SCRATCH/$name.lint")"
  fi
  if "$CHECK_MANIFESTS" --expect-rbac "$HERE/expected-rbac.yaml" --app-version "${EXPECT_TAG:-$APP_VERSION}" \
      --require-labels "$SCRATCH/$name.yaml" >"$SCRATCH/$name.check" 2>&1; then
    pass "$name: check-manifests accepts it (RBAC as expected, images, labels, security contexts, resources)"
  else
    fail_later "$name: check-manifests: $(cat "$SCRATCH/$name.check")"
  fi
}

# objects NAME: "Kind namespace/name" per object, sorted (cluster-scoped objects have "-").
objects() {
  jq -r '.[] | "\(.kind) \(.metadata.namespace // "-")/\(.metadata.name)"' "$SCRATCH/$1.json" | sort
}

# expect_objects NAME <<EOF lines: the rendering holds exactly these objects.
expect_objects() {
  local name=$1
  sort >"$SCRATCH/$name.want"
  objects "$name" >"$SCRATCH/$name.got"
  if diff -u "$SCRATCH/$name.want" "$SCRATCH/$name.got" >"$SCRATCH/$name.diff"; then
    pass "$name: exactly the expected $(wc -l <"$SCRATCH/$name.want") objects"
  else
    fail_later "$name: objects differ from the expected (- expected, + rendered):
$(tail -n +3 "$SCRATCH/$name.diff")"
  fi
}

# obj NAME KIND OBJNAME [NAMESPACE]: the object as JSON.
obj() {
  jq -c --arg k "$2" --arg n "$3" --arg ns "${4:-}" \
    'first(.[] | select(.kind == $k and .metadata.name == $n and ($ns == "" or .metadata.namespace == $ns)))' \
    "$SCRATCH/$1.json"
}

# check NAME DESCRIPTION JSON [jq --arg/--argjson...] JQ-FILTER: the filter, run on JSON, yields true.
check() {
  local name=$1 what=$2 json=$3 filter=${*: -1}
  local args=("${@:4:$# - 4}")
  if [[ "$(jq -r "${args[@]}" "$filter" <<<"$json" 2>&1)" == "true" ]]; then
    pass "$name: $what"
  else
    fail_later "$name: $what (jq '$filter' is not true on: $(jq -c . <<<"$json" 2>/dev/null | cut -c1-600))"
  fi
}

# ---------------------------------------------------------------------------------------------
# The object sets (tests/lib/chart_objects.sh). Reference: release iogate in iogate-system
# (fullname iogate).
source "$ROOT/tests/lib/chart_objects.sh"

# 0. The chart's own YAML and JSON.
yamllint -f parsable -c "$HERE/yamllint.yaml" "$CHART/values.yaml" "$CHART/Chart.yaml" >"$SCRATCH/values.lint" 2>&1 &&
  pass "values.yaml and Chart.yaml are clean YAML" || fail_later "values.yaml/Chart.yaml: yamllint: $(head -20 "$SCRATCH/values.lint")"
jq -e '."$schema" == "http://json-schema.org/draft-07/schema#" and .additionalProperties == false' "$CHART/values.schema.json" >/dev/null &&
  pass "values.schema.json is draft-07 JSON, closed at the top" || fail_later "values.schema.json is not draft-07 JSON with additionalProperties false"

# helm lint --strict at the pinned Kubernetes version: the chart's metadata, every template
# rendered with these values, the values schema, and (its deprecation rule, --kube-version) no API
# that Kubernetes deprecates or removes there. --strict makes a warning fail.
# lint NAME [helm flags...]
lint() {
  local name=$1
  shift
  if "$HELM" lint --strict --kube-version "$KUBERNETES_VERSION" "$CHART" -n iogate-system "$@" \
      >"$SCRATCH/lint-$name.out" 2>&1; then
    pass "helm lint --strict --kube-version $KUBERNETES_VERSION ($name): $(grep -E 'linted' "$SCRATCH/lint-$name.out")"
  else
    fail_later "helm lint --strict ($name): $(cat "$SCRATCH/lint-$name.out")"
  fi
}
lint "default values"

# 1. Default values, at the pinned Kubernetes version as the cluster of the install test runs it.
render default iogate iogate-system --kube-version "$KUBERNETES_VERSION"
{
  node_objects iogate iogate-system
  webhook_objects iogate iogate-system
  echo "Secret iogate-system/iogate-webhook-tls"
  preflight_objects iogate iogate-system
  policy_objects iogate iogate-system
  echo "ConfigMap iogate-system/iogate-grafana-dashboard"
  cleanup_objects iogate iogate-system iogate-system
  test_objects iogate iogate-system default node webhook
} | expect_objects default

# 2. Each part alone (the dashboard off too, so that only the part's objects remain).
ALONE=(--set grafanaDashboard.enabled=false --set nodeAgent.enabled=false --set webhook.enabled=false --set preflight.enabled=false)
render node-only iogate iogate-system "${ALONE[@]}" --set nodeAgent.enabled=true
{
  node_objects iogate iogate-system
  policy_objects iogate iogate-system
  cleanup_objects iogate iogate-system
  test_objects iogate iogate-system default node
} | expect_objects node-only
render webhook-only iogate iogate-system "${ALONE[@]}" --set webhook.enabled=true
{
  webhook_objects iogate iogate-system
  echo "Secret iogate-system/iogate-webhook-tls"
  policy_objects iogate iogate-system
  test_objects iogate iogate-system default webhook
} | expect_objects webhook-only
render preflight-only iogate iogate-system "${ALONE[@]}" --set preflight.enabled=true
{
  preflight_objects iogate iogate-system
  policy_objects iogate iogate-system
  cleanup_objects iogate iogate-system iogate-system
} | expect_objects preflight-only
render nothing iogate iogate-system "${ALONE[@]}"
: | expect_objects nothing

# 3. Non-default values: another release and namespace, fullnameOverride, cert-manager,
#    ServiceMonitor, three node paths (one read-only), preflight in three namespaces (one of them
#    the release's), a custom image, common labels.
cat >"$SCRATCH/custom-values.yaml" <<'EOF'
fullnameOverride: gate
commonLabels:
  team: ml-platform
image:
  repository: registry.example.com/ml/iogate
  tag: 0.2.0-rc1
  pullPolicy: Always
imagePullSecrets:
  - name: regcred
nodeAgent:
  paths:
    - {name: nvme, hostPath: /mnt/nvme}
    - {name: scratch, hostPath: /mnt/scratch/iogate, readOnly: false}
    - {name: datasets, hostPath: /srv/datasets, readOnly: true}
  interval: 2h
  extraArgs: [--busy-util, 30%]
  nodeSelector:
    nvidia.com/gpu.present: "true"
  priorityClassName: ""
  serviceMonitor:
    enabled: true
    interval: 2m
    labels:
      release: kube-prometheus-stack
webhook:
  replicas: 3
  certManager:
    enabled: true
  excludeNamespaces: [monitoring]
  namespaceSelector:
    matchLabels:
      iogate.io/enabled: "true"
  requestDeadline: 4s
  timeoutSeconds: 5
  gpuResources: [gpu.intel.com/i915]
  port: 10250
  metrics:
    port: 9100
  serviceMonitor:
    enabled: true
    labels:
      release: kube-prometheus-stack
preflight:
  namespaces: [ml-train, ml-eval, storage]
policy:
  mode: warn
  node:
    taint_effect: PreferNoSchedule
EOF
lint "custom-values.yaml" -f "$SCRATCH/custom-values.yaml"
EXPECT_TAG=0.2.0-rc1 render custom gpu-gate storage -f "$SCRATCH/custom-values.yaml"
{
  node_objects gate storage
  echo "ServiceMonitor storage/gate-node"
  webhook_objects gate storage
  echo "ServiceMonitor storage/gate-webhook"
  echo "Issuer storage/gate-selfsigned"
  echo "Certificate storage/gate-webhook-tls"
  preflight_objects gate ml-eval ml-train storage
  policy_objects gate ml-eval ml-train storage
  echo "ConfigMap storage/gate-grafana-dashboard"
  cleanup_objects gate storage ml-eval ml-train storage
  test_objects gate storage default node webhook
} | expect_objects custom

# 4. cert-manager "auto": on when the cluster serves cert-manager.io/v1, off otherwise (default).
#    helm template's --api-versions adds the API to .Capabilities.APIVersions, as a cluster that
#    serves it would.
render auto-cm iogate iogate-system --api-versions cert-manager.io/v1
objects auto-cm | grep -qx 'Certificate iogate-system/iogate-webhook-tls' && ! objects auto-cm | grep -q '^Secret ' &&
  pass "auto-cm: certManager.enabled=auto uses cert-manager when cert-manager.io/v1 is served" ||
  fail_later "auto-cm: certManager.enabled=auto did not switch to cert-manager: $(objects auto-cm | tr '\n' ' ')"
render no-cm iogate iogate-system --api-versions cert-manager.io/v1 --set webhook.certManager.enabled=false
objects no-cm | grep -qx 'Secret iogate-system/iogate-webhook-tls' && ! objects no-cm | grep -q '^Certificate ' &&
  pass "no-cm: certManager.enabled=false makes its own pair even where cert-manager is served" ||
  fail_later "no-cm: certManager.enabled=false: $(objects no-cm | tr '\n' ' ')"

# 5. A release whose name lacks "iogate": objects are <release>-iogate-*.
render plain-name rel default --set preflight.enabled=false
objects plain-name | grep -qx 'DaemonSet default/rel-iogate-node' && objects plain-name | grep -qx 'ConfigMap default/rel-iogate-policy' &&
  pass "plain-name: release rel names its objects rel-iogate-*" || fail_later "plain-name: $(objects plain-name | tr '\n' ' ')"

# 6. Chart.yaml (as `helm show chart` reads it): the Kubernetes it needs, which helm enforces
#    against the cluster's version (--kube-version stands for it here); where it comes from; the
#    Artifact Hub annotations, whose image is the one the default values run.
if "$HELM" show chart "$CHART" >"$SCRATCH/chart-meta.yaml" 2>"$SCRATCH/chart-meta.err"; then
  meta=$(to_json "$SCRATCH/chart-meta.yaml" | jq -c '.[0]')
  yaml_field() { jq -r --arg k "$1" '.annotations[$k] // ""' <<<"$meta" | "$PY" -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'; }
  check Chart.yaml 'kubeVersion >=1.30.0-0 (the least-reach ValidatingAdmissionPolicies need 1.30)' "$meta" '.kubeVersion == ">=1.30.0-0"'
  check Chart.yaml "home, sources (https) and keywords" "$meta" \
    '(.home | startswith("https://")) and (.sources | length > 0 and all(startswith("https://"))) and (.keywords | length > 0)'
  check Chart.yaml "artifacthub.io/category is one of Artifact Hub's" "$meta" \
    '.annotations["artifacthub.io/category"] | IN("ai-machine-learning", "database", "integration-delivery", "monitoring-logging", "networking", "security", "storage", "streaming-messaging")'
  check Chart.yaml "artifacthub.io/links: a YAML list of {name, https url}" "$(yaml_field artifacthub.io/links)" \
    'type == "array" and length > 0 and all(.name != null and (.url | startswith("https://")))'
  image=$(jq -r '.[] | select(.kind == "DaemonSet") | .spec.template.spec.containers[0].image' "$SCRATCH/default.json")
  check Chart.yaml "artifacthub.io/images names the image the default values run ($image)" "$(yaml_field artifacthub.io/images)" \
    --arg image "$image" '. == [{"name": "iogate", "image": $image}]'
else
  fail_later "helm show chart: $(cat "$SCRATCH/chart-meta.err")"
fi
# kubeVersion: helm refuses an older cluster before rendering anything, naming the requirement;
# 1.30 passes, and so do providers' builds of it (v1.30.2-eks-..., SemVer pre-releases: the "-0").
if template iogate "$CHART" iogate-system --kube-version 1.29.0 >/dev/null 2>"$SCRATCH/kube129.err"; then
  fail_later "helm template --kube-version 1.29.0 renders: kubeVersion is not enforced"
elif grep -qF 'requires kubeVersion: >=1.30.0-0' "$SCRATCH/kube129.err" && grep -qF '1.29.0' "$SCRATCH/kube129.err"; then
  pass "helm template --kube-version 1.29.0 fails: $(head -1 "$SCRATCH/kube129.err")"
else
  fail_later "helm template --kube-version 1.29.0 fails without naming the requirement: $(cat "$SCRATCH/kube129.err")"
fi
for v in 1.30.0 v1.30.2-eks-1a2b3c4 v1.31.1-gke.1146000; do
  template iogate "$CHART" iogate-system --kube-version "$v" >/dev/null 2>"$SCRATCH/kube-ok.err" &&
    pass "helm template --kube-version $v renders" || fail_later "helm template --kube-version $v: $(cat "$SCRATCH/kube-ok.err")"
done

# 7. Pull secrets: global.imagePullSecrets (an umbrella chart's, a name or {name}) and then the
#    chart's imagePullSecrets, each name once, on every pod spec the chart renders: workloads,
#    hook Jobs and test Pods alike (helm template renders hooks and tests too). Other keys of
#    global belong to other charts and pass the schema.
podspecs='[.[] | (if .kind == "Pod" then .spec elif .kind == "CronJob" then .spec.jobTemplate.spec.template.spec
                  else (.spec.template.spec? // empty) end) as $s | {object: "\(.kind)/\(.metadata.name)", secrets: $s.imagePullSecrets}]'
render pull-secrets iogate iogate-system --set-json 'global.imagePullSecrets=["shared",{"name":"mirror"}]' \
  --set-json 'imagePullSecrets=[{"name":"mirror"},{"name":"regcred"}]' --set-json 'global.otherChart={"enabled":true}'
check pull-secrets "every pod spec (at least the DaemonSet and the Deployment) pulls with shared, mirror, regcred in that order" \
  "$(jq -c "$podspecs" "$SCRATCH/pull-secrets.json")" \
  'length >= 2 and (map(.object) | index("DaemonSet/iogate-node") != null and index("Deployment/iogate-webhook") != null)
   and all(.secrets == [{"name":"shared"},{"name":"mirror"},{"name":"regcred"}])'
render pull-secrets-global iogate iogate-system --set-json 'global.imagePullSecrets=[{"name":"shared"}]'
check pull-secrets-global "global.imagePullSecrets alone reaches every pod spec" "$(jq -c "$podspecs" "$SCRATCH/pull-secrets-global.json")" \
  'length >= 2 and all(.secrets == [{"name":"shared"}])'
check default "without pull secrets no pod spec has imagePullSecrets" "$(jq -c "$podspecs" "$SCRATCH/default.json")" \
  'length >= 2 and all(.secrets == null)'

# ---------------------------------------------------------------------------------------------
# Labels: the standard set on every object and pod template, selectors stable.
for r in default custom; do
  tag=$APP_VERSION
  [[ $r == custom ]] && tag=0.2.0-rc1
  inst=iogate
  [[ $r == custom ]] && inst=gpu-gate
  bad=$(jq -r --arg v "$APP_VERSION" --arg c "iogate-$CHART_VERSION" --arg i "$inst" '
    .[] | [.metadata.labels, (.spec.template.metadata.labels // empty)][] as $l
    | select($l["app.kubernetes.io/name"] != "iogate" or $l["app.kubernetes.io/instance"] != $i
        or $l["app.kubernetes.io/version"] != $v or $l["app.kubernetes.io/managed-by"] != "Helm"
        or $l["helm.sh/chart"] != $c
        or ($l["app.kubernetes.io/component"] | IN("node-agent", "webhook", "preflight", "policy", "dashboard", "cleanup", "test") | not))
    | "\(.kind)/\(.metadata.name)"' "$SCRATCH/$r.json")
  [[ -z "$bad" ]] && pass "$r: every object and pod template has the standard labels" || fail_later "$r: labels wrong on: $bad"
done
check custom "commonLabels reach objects and pod templates" "$(cat "$SCRATCH/custom.json")" \
  '[.[] | .metadata.labels.team, (.spec.template.metadata.labels.team // "ml-platform")] | all(. == "ml-platform")'

# ---------------------------------------------------------------------------------------------
# The node agent's DaemonSet.
ds=$(obj default DaemonSet iogate-node iogate-system)
check default "node agent args are node --policy ... --root /host --listen :9560 --path rootfs=/var/lib/iogate" "$ds" \
  '.spec.template.spec.containers[0].args == ["node","--policy","/etc/iogate/policy.yaml","--root","/host","--listen",":9560","--path","rootfs=/var/lib/iogate"]'
check default "node agent: NODE_NAME from spec.nodeName" "$ds" \
  '.spec.template.spec.containers[0].env == [{"name":"NODE_NAME","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}]'
check default "node agent mounts host /proc, /sys read-only, the policy, the data path read-write at its host path" "$ds" '
  .spec.template.spec as $s | $s.containers[0].volumeMounts as $m
  | ($m | map({(.mountPath): .}) | add) as $by
  | $by["/host/proc"].readOnly == true and $by["/host/sys"].readOnly == true and $by["/etc/iogate"].readOnly == true
    and $by["/var/lib/iogate"].readOnly == false
    and ($s.volumes | map({(.name): .}) | add) as $v
    | $v[$by["/host/proc"].name].hostPath.path == "/proc" and $v[$by["/host/sys"].name].hostPath.path == "/sys"
      and $v[$by["/etc/iogate"].name].configMap.name == "iogate-policy"
      and $v[$by["/var/lib/iogate"].name].hostPath == {"path":"/var/lib/iogate","type":"DirectoryOrCreate"}'
check default "node agent: readiness /readyz, liveness /healthz on the metrics port 9560" "$ds" '
  .spec.template.spec.containers[0] | .ports == [{"name":"metrics","containerPort":9560,"protocol":"TCP"}]
  and .readinessProbe.httpGet == {"path":"/readyz","port":"metrics"} and .livenessProbe.httpGet == {"path":"/healthz","port":"metrics"}'
check default "node agent tolerates its own taint and the GPU taints" "$ds" '
  .spec.template.spec.tolerations | (map(.key) | index("iogate.io/storage-below-policy") != null)
  and (map(.key) | index("nvidia.com/gpu") != null) and all(.operator == "Exists")'
check default "node agent runs as uid 0 without capabilities, RuntimeDefault seccomp; priority system-node-critical" "$ds" '
  .spec.template.spec | .securityContext.runAsUser == 0 and .securityContext.seccompProfile.type == "RuntimeDefault"
  and .containers[0].securityContext == {"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"readOnlyRootFilesystem":true}
  and .priorityClassName == "system-node-critical" and .serviceAccountName == "iogate-node"'
check default "node agent pods carry the policy's checksum (a policy change rolls them)" "$ds" \
  '.spec.template.metadata.annotations["checksum/policy"] | test("^[0-9a-f]{64}$")'
ds=$(obj custom DaemonSet gate-node storage)
check custom "three node paths: --path NAME=PATH each, interval, extra args" "$ds" '
  .spec.template.spec.containers[0].args | .[7:] == ["--path","nvme=/mnt/nvme","--path","scratch=/mnt/scratch/iogate","--path","datasets=/srv/datasets","--interval","2h","--busy-util","30%"]'
check custom "each path a hostPath at its host path; datasets read-only" "$ds" '
  .spec.template.spec as $s
  | ($s.containers[0].volumeMounts | map(select(.name | startswith("data-"))) | map({mountPath, readOnly})) ==
      [{"mountPath":"/mnt/nvme","readOnly":false},{"mountPath":"/mnt/scratch/iogate","readOnly":false},{"mountPath":"/srv/datasets","readOnly":true}]
  and ($s.volumes | map(select(.name | startswith("data-")) | .hostPath.path)) == ["/mnt/nvme","/mnt/scratch/iogate","/srv/datasets"]'
check custom "custom image and pull policy, pull secret, nodeSelector, no priority class" "$ds" '
  .spec.template.spec | .containers[0].image == "registry.example.com/ml/iogate:0.2.0-rc1" and .containers[0].imagePullPolicy == "Always"
  and .imagePullSecrets == [{"name":"regcred"}] and .nodeSelector == {"kubernetes.io/os":"linux","nvidia.com/gpu.present":"true"} and (has("priorityClassName") | not)'
# 6. The PrometheusRule: off by default; on, where monitoring.coreos.com/v1 is served, its groups are
#    rules/iogate.rules.yaml as they are, which promtool checks and tests (tests/deploy/alerts_test.yaml).
RULES="$CHART/rules/iogate.rules.yaml"
objects default | grep -q '^PrometheusRule ' && fail_later "default: a PrometheusRule without prometheusRule.enabled"
render prom-rule iogate iogate-system --api-versions monitoring.coreos.com/v1 \
  --set prometheusRule.enabled=true --set prometheusRule.labels.release=kube-prometheus-stack
{
  objects default
  echo "PrometheusRule iogate-system/iogate"
} | expect_objects prom-rule
to_json "$RULES" >"$SCRATCH/rules.json" || fail_later "$RULES is not YAML"
check prom-rule "PrometheusRule: the groups of rules/iogate.rules.yaml as they are, its labels, component alerts" \
  "$(jq -nc --argjson r "$(obj prom-rule PrometheusRule iogate iogate-system)" --slurpfile f "$SCRATCH/rules.json" '{r:$r,f:$f[0][0]}')" '
  .r.spec == {groups: .f.groups} and (.f.groups | length) >= 2
  and .r.metadata.labels.release == "kube-prometheus-stack" and .r.metadata.labels["app.kubernetes.io/component"] == "alerts"'
if promtool check rules "$RULES" >"$SCRATCH/rules.check" 2>&1; then
  pass "promtool check rules: $RULES ($(grep -o '[0-9]* rules found' "$SCRATCH/rules.check"))"
else
  fail_later "promtool check rules $RULES: $(cat "$SCRATCH/rules.check")"
fi
obj prom-rule PrometheusRule iogate iogate-system | jq '.spec' >"$SCRATCH/rendered-rules.json"
promtool check rules "$SCRATCH/rendered-rules.json" >"$SCRATCH/rendered-rules.check" 2>&1 &&
  pass "promtool check rules: the rendered PrometheusRule's spec" ||
  fail_later "promtool check rules (rendered spec): $(cat "$SCRATCH/rendered-rules.check")"
if promtool test rules "$HERE/alerts_test.yaml" >"$SCRATCH/rules.test" 2>&1; then
  pass "promtool test rules: tests/deploy/alerts_test.yaml passes"
else
  fail_later "promtool test rules tests/deploy/alerts_test.yaml: $(cat "$SCRATCH/rules.test")"
fi
# Every alert: severity, a summary, a description and a runbook_url whose anchor is a section of
# docs/runbooks.md; and at least one firing and one silent case in the rule tests.
to_json "$HERE/alerts_test.yaml" >"$SCRATCH/alerts-test.json" || fail_later "alerts_test.yaml is not YAML"
jq -r '.[0].groups[].rules[] | select(.alert) | .alert' "$SCRATCH/rules.json" >"$SCRATCH/alerts"
[[ $(wc -l <"$SCRATCH/alerts") -ge 9 ]] || fail_later "only $(wc -l <"$SCRATCH/alerts") alerts in $RULES"
while read -r alert; do
  jq -e --arg a "$alert" '.[0].groups[].rules[] | select(.alert == $a)
    | (.labels.severity | IN("warning", "critical")) and (.annotations.summary | length > 0)
      and (.annotations.description | length > 0)
      and .annotations.runbook_url == "https://github.com/iogate/iogate/blob/main/docs/runbooks.md#\($a | ascii_downcase)"' \
    "$SCRATCH/rules.json" >/dev/null || fail_later "$alert: severity, summary, description or runbook_url missing or malformed"
  grep -qx "## $alert" "$ROOT/docs/runbooks.md" || fail_later "$alert: no section \"## $alert\" in docs/runbooks.md"
  jq -e --arg a "$alert" '[.[0].tests[].alert_rule_test[] | select(.alertname == $a)]
    | any((.exp_alerts // []) | length > 0) and any((.exp_alerts // []) | length == 0)' "$SCRATCH/alerts-test.json" >/dev/null ||
    fail_later "$alert: alerts_test.yaml lacks a firing or a silent case"
done <"$SCRATCH/alerts"
pass "$(wc -l <"$SCRATCH/alerts") alerts: each with severity, summary, description, a runbook section, a firing and a silent test"

sm=$(obj custom ServiceMonitor gate-node storage)
svc=$(obj custom Service gate-node-metrics storage)
check custom "ServiceMonitor selects the metrics Service's labels, port metrics, interval 2m, its labels" "$(jq -nc --argjson sm "$sm" --argjson svc "$svc" '{sm:$sm,svc:$svc}')" '
  .sm.spec.selector.matchLabels as $sel | (.svc.metadata.labels | to_entries | map(select($sel[.key] == .value)) | length) == ($sel | length)
  and .sm.spec.endpoints == [{"port":"metrics","path":"/metrics","scheme":"http","interval":"2m","scrapeTimeout":"10s",
    "relabelings":[{"targetLabel":"job","replacement":"iogate-node"}]}]
  and .sm.metadata.labels.release == "kube-prometheus-stack" and .sm.spec.namespaceSelector.matchNames == ["storage"]'
check custom "the metrics Service exposes port 9560 named metrics and selects the agent's pods" "$(jq -nc --argjson svc "$svc" --argjson ds "$ds" '{svc:$svc,ds:$ds}')" '
  .svc.spec.ports == [{"name":"metrics","port":9560,"targetPort":"metrics","protocol":"TCP"}]
  and .svc.spec.selector == .ds.spec.selector.matchLabels'

# ---------------------------------------------------------------------------------------------
# The webhook: Deployment, Service, PDB, configurations, TLS.
dep=$(obj default Deployment iogate-webhook iogate-system)
check default "webhook args as the contract says" "$dep" '
  .spec.template.spec.containers[0].args[0:15] == ["webhook","--listen",":8443","--metrics-listen",":9561","--tls-cert","/etc/iogate/tls/tls.crt","--tls-key","/etc/iogate/tls/tls.key","--policy","/etc/iogate/policy.yaml","--preflight-image","iogate:'"$APP_VERSION"'","--policy-configmap","iogate-policy"]
  and .spec.template.spec.containers[0].args[15:] == ["--preflight-requests","cpu=1,memory=256Mi","--preflight-limits","cpu=1,memory=256Mi","--request-deadline","8s"]'
check default "webhook: 2 replicas spread by pod anti-affinity on hostname, non-root 65532" "$dep" '
  .spec.replicas == 2
  and .spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey == "kubernetes.io/hostname"
  and .spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels == .spec.selector.matchLabels
  and .spec.template.spec.securityContext.runAsNonRoot == true and .spec.template.spec.securityContext.runAsUser == 65532'
check default "webhook: port https 8443 and metrics 9561, /healthz over HTTPS for readiness and liveness, pod network" "$dep" '
  ((.spec.template.spec | has("hostNetwork") or has("dnsPolicy")) | not) as $pod_network
  | .spec.template.spec.containers[0] | $pod_network and .ports == [{"name":"https","containerPort":8443,"protocol":"TCP"},{"name":"metrics","containerPort":9561,"protocol":"TCP"}]
  and .readinessProbe.httpGet == {"path":"/healthz","port":"https","scheme":"HTTPS"} and .livenessProbe.httpGet == .readinessProbe.httpGet'
check default "webhook: /etc/iogate holds policy.yaml and tls/tls.{crt,key} from the ConfigMap and the Secret" "$dep" '
  .spec.template.spec.volumes[0].projected.sources == [
    {"configMap":{"name":"iogate-policy","items":[{"key":"policy.yaml","path":"policy.yaml"}]}},
    {"secret":{"name":"iogate-webhook-tls","items":[{"key":"tls.crt","path":"tls/tls.crt"},{"key":"tls.key","path":"tls/tls.key"}]}}]
  and .spec.template.spec.containers[0].volumeMounts == [{"name":.spec.template.spec.volumes[0].name,"mountPath":"/etc/iogate","readOnly":true}]'
check default "webhook Service: 443 -> https, selecting the Deployment's pods" \
  "$(jq -nc --argjson s "$(obj default Service iogate-webhook iogate-system)" --argjson d "$dep" '{s:$s,d:$d}')" '
  .s.spec.ports == [{"name":"https","port":443,"targetPort":"https","protocol":"TCP"}] and .s.spec.selector == .d.spec.selector.matchLabels'
check default "PDB keeps the webhook serving (maxUnavailable 1, its pods)" \
  "$(jq -nc --argjson p "$(obj default PodDisruptionBudget iogate-webhook iogate-system)" --argjson d "$dep" '{p:$p,d:$d}')" \
  '.p.spec.maxUnavailable == 1 and .p.spec.selector.matchLabels == .d.spec.selector.matchLabels'

# The webhook's metrics: a headless Service on the container's metrics port, a ServiceMonitor on request
# whose targets are job iogate-webhook (the alerts' job).
check default "webhook metrics Service: headless, port 9561 -> metrics, selecting the Deployment's pods" \
  "$(jq -nc --argjson s "$(obj default Service iogate-webhook-metrics iogate-system)" --argjson d "$dep" '{s:$s,d:$d}')" '
  .s.spec.clusterIP == "None" and .s.spec.ports == [{"name":"metrics","port":9561,"targetPort":"metrics","protocol":"TCP"}]
  and .s.spec.selector == .d.spec.selector.matchLabels'
cdep=$(obj custom Deployment gate-webhook storage)
check custom "webhook.port 10250 and metrics.port 9100: the flags, container ports and Services follow" \
  "$(jq -nc --argjson d "$cdep" --argjson s "$(obj custom Service gate-webhook storage)" --argjson m "$(obj custom Service gate-webhook-metrics storage)" \
    --argjson sm "$(obj custom ServiceMonitor gate-webhook storage)" '{d:$d,s:$s,m:$m,sm:$sm}')" '
  .d.spec.template.spec.containers[0] as $c
  | ($c.args[1:5] == ["--listen",":10250","--metrics-listen",":9100"])
  and $c.ports == [{"name":"https","containerPort":10250,"protocol":"TCP"},{"name":"metrics","containerPort":9100,"protocol":"TCP"}]
  and $c.readinessProbe.httpGet.port == "https" and $c.livenessProbe.httpGet.port == "https"
  and .s.spec.ports == [{"name":"https","port":443,"targetPort":"https","protocol":"TCP"}]
  and .m.spec.ports == [{"name":"metrics","port":9100,"targetPort":"metrics","protocol":"TCP"}]
  and .sm.spec.selector.matchLabels == .d.spec.selector.matchLabels and .sm.metadata.labels.release == "kube-prometheus-stack"
  and .sm.spec.endpoints == [{"port":"metrics","path":"/metrics","scheme":"http","interval":"30s","scrapeTimeout":"10s",
    "relabelings":[{"targetLabel":"job","replacement":"iogate-webhook"}]}]'
# hostNetwork: for control planes that cannot reach pod IPs (EKS with a custom CNI).
render host-net iogate iogate-system --set webhook.hostNetwork=true
check host-net "webhook.hostNetwork: hostNetwork, dnsPolicy ClusterFirstWithHostNet, ports as before" \
  "$(obj host-net Deployment iogate-webhook iogate-system)" '
  .spec.template.spec.hostNetwork == true and .spec.template.spec.dnsPolicy == "ClusterFirstWithHostNet"
  and (.spec.template.spec.containers[0].ports | map(.containerPort)) == [8443,9561]'

# webhook_configs NAME FULLNAME NS [VALIDATE_POLICY]: checks both configurations, /validate's
# failurePolicy VALIDATE_POLICY (default Ignore: the default mode, warn, refuses nothing).
webhook_configs() {
  local r=$1 f=$2 ns=$3 validate_policy=${4:-Ignore} kind
  for kind in MutatingWebhookConfiguration ValidatingWebhookConfiguration; do
    local c
    c=$(obj "$r" "$kind" "$f-webhook")
    local name=validate.iogate.io path=/validate policy=$validate_policy ops='["CREATE","UPDATE"]'
    if [[ $kind == Mutating* ]]; then name=mutate.iogate.io path=/mutate policy=Ignore ops='["CREATE"]'; fi
    check "$r" "$kind: $name calls Service $ns/$f-webhook:443$path, failurePolicy $policy, sideEffects None, v1, pods $ops" "$c" '
      (.webhooks | length) == 1 and .webhooks[0] as $w
      | $w.name == "'"$name"'" and $w.clientConfig.service == {"name":"'"$f"'-webhook","namespace":"'"$ns"'","path":"'"$path"'","port":443}
        and $w.failurePolicy == "'"$policy"'" and $w.sideEffects == "None" and $w.admissionReviewVersions == ["v1"]
        and $w.rules == [{"apiGroups":[""],"apiVersions":["v1"],"operations":'"$ops"',"resources":["pods"],"scope":"Namespaced"}]
        and ($w.namespaceSelector.matchExpressions | any(.key == "kubernetes.io/metadata.name" and .operator == "NotIn"
              and (.values | index("kube-system") != null and index("'"$ns"'") != null)))'
  done
}
webhook_configs default iogate iogate-system
# /validate fails closed where it refuses (enforce), and as the user says whatever the mode.
render enforce iogate iogate-system --set policy.mode=enforce
webhook_configs enforce iogate iogate-system Fail
render warn-fail iogate iogate-system --set webhook.validate.failurePolicy=Fail
webhook_configs warn-fail iogate iogate-system Fail
mwc=$(obj default MutatingWebhookConfiguration iogate-webhook)
vwc=$(obj default ValidatingWebhookConfiguration iogate-webhook)
check default "timeoutSeconds 10 on both, above --request-deadline 8s; objectSelector empty" "[$mwc,$vwc]" \
  'map(.webhooks[0] | .timeoutSeconds == 10 and .objectSelector == {}) | all'
# matchConditions: only the pods the webhook judges reach it (their CEL is compiled and evaluated
# by the real kube-apiserver in tests/e2e/test_admission.sh; here: what the values put in it).
gpu_cel='(object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])).exists(c, has(c.resources) && ((has(c.resources.limits) && c.resources.limits.exists(r, r in ["nvidia.com/gpu", "amd.com/gpu"])) || (has(c.resources.requests) && c.resources.requests.exists(r, r in ["nvidia.com/gpu", "amd.com/gpu"]))))'
inject_cel="(has(object.metadata.annotations) && 'iogate.io/inject-preflight' in object.metadata.annotations)"
check default "matchConditions: validate gets GPU pods only, mutate GPU pods and iogate.io/inject-preflight" "[$mwc,$vwc]" \
  --arg gpu "$gpu_cel" --arg inject "$inject_cel" \
  '.[0].webhooks[0].matchConditions == [{name: "pods-iogate-judges", expression: ($gpu + " || " + $inject)}]
   and .[1].webhooks[0].matchConditions == [{name: "pods-iogate-judges", expression: $gpu}]'
check custom "matchConditions: webhook.gpuResources joins the GPU resource names" "$(obj custom ValidatingWebhookConfiguration gate-webhook)" \
  '.webhooks[0].matchConditions[0].expression | contains("r in [\"nvidia.com/gpu\", \"amd.com/gpu\", \"gpu.intel.com/i915\"]")'
render label-rules iogate iogate-system --set-json \
  'policy.rules=[{"name":"vision","selector":{"pod_labels":{"team":"vision","tier":"1"}},"min_iops":20000},{"name":"all","min_iops":5000}]'
check label-rules "matchConditions: a rule's selector.pod_labels sends pods with all those labels" \
  "$(obj label-rules ValidatingWebhookConfiguration iogate-webhook)" --arg gpu "$gpu_cel" \
  '.webhooks[0].matchConditions[0].expression == $gpu + " || (has(object.metadata.labels) && \"team\" in object.metadata.labels && object.metadata.labels[\"team\"] == \"vision\" && \"tier\" in object.metadata.labels && object.metadata.labels[\"tier\"] == \"1\")"'
render all-pods iogate iogate-system --set webhook.matchAllPods=true
check all-pods "webhook.matchAllPods: no matchConditions, every pod of the selected namespaces" \
  "[$(obj all-pods MutatingWebhookConfiguration iogate-webhook),$(obj all-pods ValidatingWebhookConfiguration iogate-webhook)]" \
  'map(.webhooks[0] | has("matchConditions") | not) | all'

# Self-signed TLS: the caBundle verifies the serving certificate, whose SANs cover the Service.
secret=$(obj default Secret iogate-webhook-tls iogate-system)
ca_mwc=$(jq -r '.webhooks[0].clientConfig.caBundle // ""' <<<"$mwc")
ca_vwc=$(jq -r '.webhooks[0].clientConfig.caBundle // ""' <<<"$vwc")
ca_sec=$(jq -r '.data["ca.crt"] // ""' <<<"$secret")
[[ -n "$ca_mwc" && "$ca_mwc" == "$ca_vwc" && "$ca_mwc" == "$ca_sec" ]] &&
  pass "default: both configurations carry the Secret's CA as caBundle" ||
  fail_later "default: caBundles differ or are empty (mutating ${#ca_mwc}, validating ${#ca_vwc}, secret ${#ca_sec} chars)"
check default "the TLS Secret is kubernetes.io/tls with ca.crt, tls.crt, tls.key" "$secret" \
  '.type == "kubernetes.io/tls" and (.data | keys) == ["ca.crt","tls.crt","tls.key"]'
base64 -d <<<"$ca_mwc" >"$SCRATCH/ca.pem" 2>/dev/null
jq -r '.data["tls.crt"]' <<<"$secret" | base64 -d >"$SCRATCH/tls.crt" 2>/dev/null
jq -r '.data["tls.key"]' <<<"$secret" | base64 -d >"$SCRATCH/tls.key" 2>/dev/null
if openssl verify -purpose sslserver -CAfile "$SCRATCH/ca.pem" "$SCRATCH/tls.crt" >"$SCRATCH/verify.out" 2>&1; then
  pass "default: the serving certificate verifies against the caBundle (purpose sslserver)"
else
  fail_later "default: openssl verify: $(cat "$SCRATCH/verify.out")"
fi
[[ "$(openssl x509 -in "$SCRATCH/tls.crt" -noout -pubkey 2>/dev/null | sha256sum)" == "$(openssl pkey -in "$SCRATCH/tls.key" -pubout 2>/dev/null | sha256sum)" ]] &&
  pass "default: tls.key is the certificate's key" || fail_later "default: tls.key does not match tls.crt"
sans=$(openssl x509 -in "$SCRATCH/tls.crt" -noout -text 2>/dev/null | grep -A1 'Subject Alternative Name' | tail -1 | tr -d ' ' | tr ',' '\n' | sed 's/^DNS://' | sort)
want_sans=$(printf '%s\n' iogate-webhook iogate-webhook.iogate-system iogate-webhook.iogate-system.svc iogate-webhook.iogate-system.svc.cluster.local | sort)
[[ "$sans" == "$want_sans" ]] && pass "default: the certificate's SANs are svc, svc.ns, svc.ns.svc, svc.ns.svc.cluster.local" ||
  fail_later "default: SANs are [$(echo $sans)], want [$(echo $want_sans)]"
# The API server connects to <svc>.<ns>.svc: check the name as a client would.
openssl verify -CAfile "$SCRATCH/ca.pem" -verify_hostname iogate-webhook.iogate-system.svc "$SCRATCH/tls.crt" >/dev/null 2>&1 &&
  pass "default: the certificate is valid for the host name the API server dials" ||
  fail_later "default: the certificate does not verify for iogate-webhook.iogate-system.svc"
# Without a cluster helm's lookup finds no Secret, so another rendering makes another pair: the
# reuse of the existing pair on upgrade needs a cluster (tests/e2e/test_chart_install.sh).
if template iogate "$CHART" iogate-system --show-only templates/webhook-configurations.yaml >"$SCRATCH/again.yaml" 2>"$SCRATCH/again.err"; then
  ca_again=$(to_json "$SCRATCH/again.yaml" | jq -r 'first(.[] | select(.kind == "Secret")) | .data["ca.crt"]')
  [[ -n "$ca_again" && "$ca_again" != null && "$ca_again" != "$ca_sec" ]] &&
    pass "default: without a cluster (lookup empty) each helm template makes a new CA" ||
    fail_later "default: a second rendering's CA is ${ca_again:0:20}..., the first's ${ca_sec:0:20}... (want two different ones)"
else
  fail_later "default: a second rendering failed: $(cat "$SCRATCH/again.err")"
fi

# cert-manager (custom): Issuer, Certificate, inject-ca-from, no caBundle, no Secret from the chart.
cert=$(obj custom Certificate gate-webhook-tls storage)
check custom "Certificate: secret gate-webhook-tls for the Service's four DNS names, from the self-signed Issuer" "$cert" '
  .spec.secretName == "gate-webhook-tls"
  and (.spec.dnsNames | sort) == (["gate-webhook","gate-webhook.storage","gate-webhook.storage.svc","gate-webhook.storage.svc.cluster.local"] | sort)
  and .spec.issuerRef == {"group":"cert-manager.io","kind":"Issuer","name":"gate-selfsigned"}'
check custom "Issuer gate-selfsigned is selfSigned" "$(obj custom Issuer gate-selfsigned storage)" '.spec == {"selfSigned":{}}'
webhook_configs custom gate storage
for kind in MutatingWebhookConfiguration ValidatingWebhookConfiguration; do
  check custom "$kind: cert-manager.io/inject-ca-from storage/gate-webhook-tls and no caBundle of its own" "$(obj custom $kind gate-webhook)" '
    .metadata.annotations["cert-manager.io/inject-ca-from"] == "storage/gate-webhook-tls" and (.webhooks[0].clientConfig | has("caBundle") | not)'
done
check custom "namespaceSelector: the user's matchLabels plus the NotIn of kube-system, storage, monitoring; timeout 5" "$(obj custom ValidatingWebhookConfiguration gate-webhook)" '
  .webhooks[0] | .namespaceSelector == {"matchLabels":{"iogate.io/enabled":"true"},"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system","storage","monitoring"]}]}
  and .timeoutSeconds == 5'
dep=$(obj custom Deployment gate-webhook storage)
check custom "webhook: 3 replicas, custom image as --preflight-image, gate-policy, deadline 4s, --gpu-resource" "$dep" '
  .spec.replicas == 3 and .spec.template.spec.containers[0].image == "registry.example.com/ml/iogate:0.2.0-rc1"
  and .spec.template.spec.containers[0].args[11:] == ["--preflight-image","registry.example.com/ml/iogate:0.2.0-rc1","--policy-configmap","gate-policy","--preflight-requests","cpu=1,memory=256Mi","--preflight-limits","cpu=1,memory=256Mi","--request-deadline","4s","--gpu-resource","gpu.intel.com/i915"]'

# ---------------------------------------------------------------------------------------------
# Preflight RBAC objects: one set per namespace, bound to the part's ServiceAccount (+ extras).
for ns in ml-train ml-eval storage; do
  check custom "RoleBinding $ns/gate-preflight binds Role gate-preflight to ServiceAccount gate-preflight in $ns" \
    "$(obj custom RoleBinding gate-preflight "$ns")" '
    .roleRef == {"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"gate-preflight"}
    and .subjects == [{"kind":"ServiceAccount","name":"gate-preflight","namespace":"'"$ns"'"}]'
done
# preflight.rbac.extraServiceAccounts binds ServiceAccounts the chart does not make (check-manifests
# would rightly flag them as not in the input), so this rendering is checked here only.
template iogate "$CHART" ml --set 'preflight.namespaces={ml,ml2}' --set 'preflight.rbac.extraServiceAccounts={default,trainer}' \
  --show-only templates/preflight-rbac.yaml >"$SCRATCH/extra-sa.yaml" 2>&1 && to_json "$SCRATCH/extra-sa.yaml" >"$SCRATCH/extra-sa.json" &&
  check extra-sa "extraServiceAccounts are bound in every preflight namespace, after the chart's own" "$(cat "$SCRATCH/extra-sa.json")" '
    [.[] | select(.kind == "RoleBinding") | [.metadata.namespace, (.subjects | map(.namespace + "/" + .name))]]
    == [["ml", ["ml/iogate-preflight","ml/default","ml/trainer"]], ["ml2", ["ml2/iogate-preflight","ml2/default","ml2/trainer"]]]' ||
  fail_later "extra-sa: $(cat "$SCRATCH/extra-sa.yaml" | head -5)"

# ---------------------------------------------------------------------------------------------
# Least reach: the ValidatingAdmissionPolicies (their CEL is compiled, type-checked and enforced by
# the real kube-apiserver in tests/e2e/test_least_reach.sh; here: what the values put in them).
for pol in "node:node-agent:nodes nodes/status" "preflight:preflight:pods persistentvolumeclaims"; do
  IFS=: read -r suffix component resources <<<"$pol"
  check default "ValidatingAdmissionPolicy iogate-$suffix: UPDATE of $resources, failurePolicy Fail, every validation Forbidden with a messageExpression" \
    "$(obj default ValidatingAdmissionPolicy "iogate-$suffix")" --arg res "$resources" --arg c "$component" '
    .apiVersion == "admissionregistration.k8s.io/v1" and .metadata.labels["app.kubernetes.io/component"] == $c
    and .spec.failurePolicy == "Fail"
    and .spec.matchConstraints.resourceRules == [{apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ($res | split(" "))}]
    and (.spec.validations | length) >= 6 and all(.spec.validations[]; .reason == "Forbidden" and (.messageExpression | length) > 0)'
  check default "ValidatingAdmissionPolicyBinding iogate-$suffix: binds the policy, validationActions [Deny], no narrowing" \
    "$(obj default ValidatingAdmissionPolicyBinding "iogate-$suffix")" \
    '.spec == {policyName: "iogate-'"$suffix"'", validationActions: ["Deny"]}'
done
check default "the node agent's policy matches its ServiceAccount alone" "$(obj default ValidatingAdmissionPolicy iogate-node)" \
  '.spec.matchConditions == [{name: "node-agent-account", expression: "request.userInfo.username == '"'"'system:serviceaccount:iogate-system:iogate-node'"'"'"}]'
# The preflight policy matches exactly the accounts the RoleBindings bind (one helper makes both lists).
template iogate "$CHART" ml --set 'preflight.namespaces={ml,ml2}' --set 'preflight.rbac.extraServiceAccounts={default,trainer}' \
  --show-only templates/preflight-rbac.yaml --show-only templates/preflight-least-reach-policy.yaml >"$SCRATCH/extra-vap.yaml" 2>&1 &&
  to_json "$SCRATCH/extra-vap.yaml" >"$SCRATCH/extra-vap.json" &&
  check extra-vap "the preflight policy matches exactly the RoleBindings' subjects (every namespace, extraServiceAccounts)" "$(cat "$SCRATCH/extra-vap.json")" '
    ([.[] | select(.kind == "RoleBinding") | .subjects[] | "system:serviceaccount:\(.namespace):\(.name)"]) as $subjects
    | ($subjects | length) == 6
    and [.[] | select(.kind == "ValidatingAdmissionPolicy") | .spec.matchConditions]
        == [[{name: "preflight-account", expression: ("request.userInfo.username in " + ($subjects | tojson))}]]' ||
  fail_later "extra-vap: $(head -5 "$SCRATCH/extra-vap.yaml")"
# The switches: each policy goes with its own; the RBAC stays.
render no-least-reach iogate iogate-system --set nodeAgent.leastReachPolicy=false --set preflight.leastReachPolicy=false
# (The hooks' policies, iogate-cleanup and iogate-test, have switches of their own.)
objects no-least-reach | grep 'AdmissionPolicy' | grep -qv -e '/iogate-cleanup$' -e '/iogate-test$' &&
  fail_later "no-least-reach: $(objects no-least-reach | grep AdmissionPolicy)"
render no-cleanup-policy iogate iogate-system --set cleanup.leastReachPolicy=false
! objects no-cleanup-policy | grep -q 'AdmissionPolicy.* -/iogate-cleanup$' && objects no-cleanup-policy | grep -qx 'Job iogate-system/iogate-cleanup' &&
  pass "cleanup.leastReachPolicy=false: the cleanup Job without its policy" ||
  fail_later "cleanup.leastReachPolicy=false: $(objects no-cleanup-policy | grep -- -cleanup | tr '\n' ' ')"
objects no-least-reach | grep -qx 'Role iogate-system/iogate-preflight' && objects no-least-reach | grep -qx 'ClusterRole -/iogate-node' &&
  pass "no-least-reach: nodeAgent/preflight.leastReachPolicy=false render no policy or binding, the RBAC unchanged" ||
  fail_later "no-least-reach: $(objects no-least-reach | tr '\n' ' ')"

# ---------------------------------------------------------------------------------------------
# Hooks: the post-delete cleanup (iogate node prune) and the helm test pods. Hooks are not part of
# the release, so each carries its delete policy: replaced by the next run, gone once it succeeds.
check default "every cleanup object is a post-delete hook, account and RBAC before the Job, deleted on success" \
  "$(jq -c '[.[] | select(.metadata.labels["app.kubernetes.io/component"] == "cleanup")]' "$SCRATCH/default.json")" '
  length == 8 and all(.metadata.annotations["helm.sh/hook"] == "post-delete"
    and .metadata.annotations["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded")
  and all(if .kind == "Job" then .metadata.annotations["helm.sh/hook-weight"] == "0" else .metadata.annotations["helm.sh/hook-weight"] == "-10" end)'
job=$(obj default Job iogate-cleanup iogate-system)
check default "cleanup Job: iogate node prune of the preflight namespaces' PVCs, as iogate-cleanup, tolerating iogate's taint" "$job" '
  .spec.template.spec as $s | $s.containers[0].args == ["node","prune","--pvc-namespace","iogate-system","--log-level","info"]
  and $s.containers[0].image == "iogate:'"$APP_VERSION"'" and $s.serviceAccountName == "iogate-cleanup" and $s.restartPolicy == "Never"
  and ($s.tolerations | any(.key == "iogate.io/storage-below-policy" and .operator == "Exists"))
  and $s.securityContext.runAsNonRoot == true and .spec.backoffLimit == 3 and .spec.activeDeadlineSeconds == 300'
check default "cleanup: nodes get/list/patch and nodes/status cluster-wide; PVCs only in the preflight namespace" \
  "$(jq -nc --argjson b "$(obj default ClusterRoleBinding iogate-cleanup)" --argjson rb "$(obj default RoleBinding iogate-cleanup-pvcs iogate-system)" '{b:$b,rb:$rb}')" '
  .b.subjects == [{"kind":"ServiceAccount","name":"iogate-cleanup","namespace":"iogate-system"}] and .rb.subjects == .b.subjects
  and .rb.roleRef.name == "iogate-cleanup-pvcs"'
check default "cleanup's least-reach policy matches its account's UPDATEs of nodes, nodes/status and PVCs" \
  "$(obj default ValidatingAdmissionPolicy iogate-cleanup)" '
  .spec.matchConditions == [{"name":"cleanup-account","expression":"request.userInfo.username == '"'"'system:serviceaccount:iogate-system:iogate-cleanup'"'"'"}]
  and .spec.matchConstraints.resourceRules == [{"apiGroups":[""],"apiVersions":["v1"],"operations":["UPDATE"],"resources":["nodes","nodes/status","persistentvolumeclaims"]}]
  and .spec.failurePolicy == "Fail" and (.spec.validations | length) == 7'
check custom "cleanup Job of the custom values: the three preflight namespaces, custom image, pull secret" "$(obj custom Job gate-cleanup storage)" '
  .spec.template.spec | .containers[0].args == ["node","prune","--pvc-namespace","ml-train,ml-eval,storage","--log-level","info"]
  and .containers[0].image == "registry.example.com/ml/iogate:0.2.0-rc1" and .imagePullSecrets == [{"name":"regcred"}]'
render no-cleanup iogate iogate-system --set cleanup.enabled=false
! objects no-cleanup | grep -q -- '-cleanup' && pass "cleanup.enabled=false: no cleanup objects" ||
  fail_later "cleanup.enabled=false still renders: $(objects no-cleanup | grep -- -cleanup | tr '\n' ' ')"
render no-pvc-cleanup iogate iogate-system --set cleanup.pvcs=false
check no-pvc-cleanup "cleanup.pvcs=false: nodes only, no PVC Role, no --pvc-namespace" "$(cat "$SCRATCH/no-pvc-cleanup.json")" '
  (map(select(.metadata.name == "iogate-cleanup-pvcs")) | length) == 0
  and (map(select(.kind == "Job")) | .[0].spec.template.spec.containers[0].args) == ["node","prune","--log-level","info"]'
check default "every helm test object is a test hook, deleted once the tests pass" \
  "$(jq -c '[.[] | select(.metadata.labels["app.kubernetes.io/component"] == "test")]' "$SCRATCH/default.json")" '
  length == 9 and all(.metadata.annotations["helm.sh/hook"] == "test"
    and .metadata.annotations["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded")'
check default "test pods: webhook check in tests.namespace, node check waiting tests.nodeWait; as iogate-test" \
  "[$(obj default Pod iogate-test-webhook iogate-system),$(obj default Pod iogate-test-node iogate-system)]" '
  .[0].spec.containers[0].args == ["webhook","check","--namespace","default","--gpu-resource","nvidia.com/gpu"]
  and .[1].spec.containers[0].args == ["node","check","--wait","2m"]
  and all(.spec.serviceAccountName == "iogate-test" and .spec.restartPolicy == "Never")'
check default "the test account creates pods only in tests.namespace, and only as dry runs (its policy)" \
  "$(jq -nc --argjson r "$(obj default Role iogate-test-pods default)" --argjson p "$(obj default ValidatingAdmissionPolicy iogate-test)" '{r:$r,p:$p}')" '
  .r.metadata.namespace == "default"
  and .p.spec.matchConstraints.resourceRules == [{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["pods"]}]
  and .p.spec.matchConditions[0].expression == "request.userInfo.username == '"'"'system:serviceaccount:iogate-system:iogate-test'"'"'"
  and (.p.spec.validations | map(.expression)) == ["has(request.dryRun) && request.dryRun == true"]'
render no-tests iogate iogate-system --set tests.enabled=false
! objects no-tests | grep -q -- '-test' && pass "tests.enabled=false: no test hooks" ||
  fail_later "tests.enabled=false still renders: $(objects no-tests | grep -- -test | tr '\n' ' ')"

# ---------------------------------------------------------------------------------------------
# The policy: every copy the same, and the binary accepts it.
for r in default custom preflight-only; do
  n=$(jq '[.[] | select(.kind == "ConfigMap" and (.metadata.name | endswith("-policy")))] | length' "$SCRATCH/$r.json")
  d=$(jq '[.[] | select(.kind == "ConfigMap" and (.metadata.name | endswith("-policy"))) | .data["policy.yaml"]] | unique | length' "$SCRATCH/$r.json")
  [[ $n -ge 1 && $d -eq 1 ]] && pass "$r: $n policy ConfigMap(s), all holding the same policy.yaml" ||
    fail_later "$r: $n policy ConfigMaps with $d different contents"
  jq -r 'first(.[] | select(.kind == "ConfigMap" and (.metadata.name | endswith("-policy")))) | .data["policy.yaml"]' \
    "$SCRATCH/$r.json" >"$SCRATCH/$r-policy.yaml"
  if "$IOGATE" policy check "$SCRATCH/$r-policy.yaml" >"$SCRATCH/$r-policy.out" 2>&1; then
    pass "$r: iogate policy check accepts the rendered policy ($(head -1 "$SCRATCH/$r-policy.out" | sed 's/  */ /g'))"
  else
    fail_later "$r: iogate policy check: $(cat "$SCRATCH/$r-policy.out")"
  fi
done
grep -q 'from profile image-training' "$SCRATCH/default-policy.out" && grep -q '^mode *warn' "$SCRATCH/default-policy.out" &&
  pass "default: the policy is the image-training profile (AU), in mode warn (blocks nothing)" || fail_later "default policy: $(head -3 "$SCRATCH/default-policy.out")"
grep -q '^mode *warn' "$SCRATCH/custom-policy.out" && grep -q 'taint PreferNoSchedule' "$SCRATCH/custom-policy.out" &&
  pass "custom: policy overrides (mode warn, taint PreferNoSchedule) reach the policy" || fail_later "custom policy: $(head -6 "$SCRATCH/custom-policy.out")"
# Each built-in profile, chosen in values, renders a policy the binary accepts.
for p in $("$IOGATE" policy profiles | awk '{print $1}'); do
  template iogate "$CHART" ns --set "policy.profile=$p" --show-only templates/policy-configmap.yaml >"$SCRATCH/p.yaml" 2>&1 &&
    to_json "$SCRATCH/p.yaml" | jq -r '.[0].data["policy.yaml"]' >"$SCRATCH/p-policy.yaml" &&
    "$IOGATE" policy check "$SCRATCH/p-policy.yaml" >/dev/null 2>"$SCRATCH/p.err" &&
    pass "profile $p: the rendered policy passes iogate policy check" || fail_later "profile $p: $(cat "$SCRATCH/p.err" "$SCRATCH/p.yaml" | head -5)"
done
# A dataset-mode policy (workload.mode dataset, samples/s floors) goes through the schema and the binary.
cat >"$SCRATCH/dataset-values.yaml" <<'EOF2'
policy:
  profile: null
  workload: {mode: dataset, workers: 4, sample: 5000, scan_time: 5s, scan_entries: 100000, runtime: 10s}
  rules:
    - {name: feed-gpus, min_samples_per_s: 2000, samples_per_s_per_gpu: 800}
EOF2
lint "dataset-values.yaml" -f "$SCRATCH/dataset-values.yaml"
template iogate "$CHART" ns -f "$SCRATCH/dataset-values.yaml" --show-only templates/policy-configmap.yaml >"$SCRATCH/d.yaml" 2>&1 &&
  to_json "$SCRATCH/d.yaml" | jq -r '.[0].data["policy.yaml"]' >"$SCRATCH/d-policy.yaml" &&
  "$IOGATE" policy check "$SCRATCH/d-policy.yaml" >"$SCRATCH/d.out" 2>&1 && grep -q 'samples' "$SCRATCH/d.out" &&
  pass "a dataset-mode policy (samples/s floors) renders and passes iogate policy check" ||
  fail_later "dataset policy: $(cat "$SCRATCH/d.out" "$SCRATCH/d.yaml" 2>/dev/null | head -8)"

# ---------------------------------------------------------------------------------------------
# Bad values: helm refuses them, with the schema's message naming the key, or the chart's own
# check (fail/required in a template) naming the fix.
# expect_failure DESCRIPTION PATTERN helm-template-flags...
expect_failure() {
  local what=$1 pattern=$2
  shift 2
  if template iogate "$CHART" iogate-system "$@" >"$SCRATCH/bad.out" 2>"$SCRATCH/bad.err"; then
    fail_later "bad values accepted: $what"
  elif grep -qE -- "$pattern" "$SCRATCH/bad.err"; then
    pass "refused: $what ($(grep -E -- "$pattern" "$SCRATCH/bad.err" | head -1 | sed 's/^ *//'))"
  else
    fail_later "refused, but the message lacks /$pattern/: $what: $(cat "$SCRATCH/bad.err")"
  fi
}
# The schema's refusals: helm's message, under its heading "values don't meet the specifications
# of the schema(s)", names the failing key as a JSON pointer ("at '/a/b'").
# expect_schema_failure DESCRIPTION MESSAGE (a literal part of it) helm-template-flags...
expect_schema_failure() {
  local what=$1 message=$2
  shift 2
  if template iogate "$CHART" iogate-system "$@" >"$SCRATCH/bad.out" 2>"$SCRATCH/bad.err"; then
    fail_later "bad values accepted: $what"
  elif grep -qF "values don't meet the specifications of the schema(s)" "$SCRATCH/bad.err" &&
      grep -qF -- "$message" "$SCRATCH/bad.err"; then
    pass "schema refuses: $what ($(grep -F -- "$message" "$SCRATCH/bad.err" | head -1 | sed 's/^ *//'))"
  else
    fail_later "refused, but not by the schema with \"$message\": $what: $(cat "$SCRATCH/bad.err")"
  fi
}
expect_schema_failure "a typo'd top-level key (nodeAgnet)" "at '': additional properties 'nodeAgnet' not allowed" --set nodeAgnet.enabled=false
expect_schema_failure "a typo'd nested key (nodeAgent.toleration)" "at '/nodeAgent': additional properties 'toleration' not allowed" \
  --set 'nodeAgent.toleration[0].key=x'
expect_schema_failure "a typo'd key in a toleration (efect)" "at '/nodeAgent/tolerations/0': additional properties 'efect' not allowed" \
  --set 'nodeAgent.tolerations[0].efect=NoSchedule'
expect_schema_failure "failurePolicy ignore (lower case)" "at '/webhook/mutate/failurePolicy': value must be one of 'Ignore', 'Fail'" \
  --set webhook.mutate.failurePolicy=ignore
expect_schema_failure "a taint effect that does not exist" "at '/nodeAgent/tolerations/0/effect': value must be one of" \
  --set 'nodeAgent.tolerations[0].effect=NoRun'
expect_schema_failure "a workload mode that does not exist (datasets)" "at '/policy/workload/mode': value must be one of 'io', 'dataset'" \
  --set policy.workload.mode=datasets
expect_schema_failure "image.pullPolicy sometimes" "at '/image/pullPolicy': value must be one of" --set image.pullPolicy=Sometimes
expect_schema_failure "certManager.enabled maybe" "at '/webhook/certManager/enabled': value must be one of true, false, 'auto'" \
  --set webhook.certManager.enabled=maybe
expect_schema_failure "serviceMonitor.interval 1 minute" "at '/nodeAgent/serviceMonitor/interval': '1 minute' does not match pattern" \
  --set 'nodeAgent.serviceMonitor.interval=1 minute'
expect_schema_failure "a policy mode that does not exist" "at '/policy/mode': value must be one of 'enforce', 'warn', 'off'" --set policy.mode=strict
expect_schema_failure "a selector label value of 64 characters" "at '/policy/rules/0/selector/pod_labels/team': maxLength: got 64, want 63" \
  --set-json 'policy.rules=[{"name":"vision","selector":{"pod_labels":{"team":"'"$(printf 'v%.0s' {1..64})"'"}},"min_iops":100}]'
expect_schema_failure "a selector label value ending in a dash" "at '/policy/rules/0/selector/pod_labels/team': 'vision-' does not match pattern" \
  --set-json 'policy.rules=[{"name":"vision","selector":{"pod_labels":{"team":"vision-"}},"min_iops":100}]'
expect_schema_failure "a selector label key with a space" "invalid propertyName 'my team'" \
  --set-json 'policy.rules=[{"name":"vision","selector":{"pod_labels":{"my team":"vision"}},"min_iops":100}]'
expect_schema_failure "a misspelt policy key (min_iop)" "at '/policy/rules/0': additional properties 'min_iop' not allowed" \
  --set 'policy.rules[0].name=r' --set 'policy.rules[0].min_iop=5'
expect_schema_failure "a node path name with capitals" "at '/nodeAgent/paths/0/name': 'Data' does not match pattern" \
  --set 'nodeAgent.paths[0].name=Data' --set 'nodeAgent.paths[0].hostPath=/mnt/d'
expect_schema_failure "a relative hostPath" "at '/nodeAgent/paths/0/hostPath': 'mnt/d' does not match pattern" \
  --set 'nodeAgent.paths[0].name=d' --set 'nodeAgent.paths[0].hostPath=mnt/d'
expect_schema_failure "global.imagePullSecrets a string, not a list" "at '/global/imagePullSecrets': got string, want array" \
  --set-json 'global.imagePullSecrets="regcred"'
expect_schema_failure "a global pull secret with a typo'd key (nam)" "at '/global/imagePullSecrets/0'" \
  --set-json 'global.imagePullSecrets=[{"nam":"regcred"}]'
expect_schema_failure "an empty global pull secret name" "at '/global/imagePullSecrets/0'" \
  --set-json 'global.imagePullSecrets=[""]'
expect_schema_failure "a chart pull secret as a bare name (Kubernetes' shape is {name})" "at '/imagePullSecrets/0': got string, want object" \
  --set-json 'imagePullSecrets=["regcred"]'
# The chart's own checks (fail in a template), each message naming the value and the fix.
expect_failure "a request deadline not below timeoutSeconds" 'requestDeadline.*shorter than webhook.timeoutSeconds' --set webhook.requestDeadline=10s
expect_failure "a node path that would hide /proc" 'cannot be mounted' --set 'nodeAgent.paths[0].name=p' --set 'nodeAgent.paths[0].hostPath=/proc'
expect_failure "two node paths with one name" 'used twice' --set 'nodeAgent.paths[0].name=a' --set 'nodeAgent.paths[0].hostPath=/a' \
  --set 'nodeAgent.paths[1].name=a' --set 'nodeAgent.paths[1].hostPath=/b'
expect_failure "webhook.hostNetwork on the kubelet's port" 'webhook.port 10250 is a Kubernetes component.s port.*webhook.hostNetwork' \
  --set webhook.hostNetwork=true --set webhook.port=10250
expect_failure "webhook.port equal to webhook.metrics.port" 'webhook.port and webhook.metrics.port are both 9561' --set webhook.port=9561
expect_schema_failure "webhook.port 443 (below 1024: the webhook is not root)" "at '/webhook/port': minimum: got 443, want 1,024" \
  --set webhook.port=443
expect_schema_failure "webhook.hostNetwork as a string" "at '/webhook/hostNetwork': got string, want boolean" --set-string webhook.hostNetwork=yes
expect_failure "prometheusRule.enabled where monitoring.coreos.com/v1 is not served" \
  'prometheusRule.enabled is true, but the cluster does not serve monitoring.coreos.com/v1' --set prometheusRule.enabled=true
expect_schema_failure "tests.namespace not a DNS label" "at '/tests/namespace': 'ML' does not match pattern" --set tests.namespace=ML
expect_schema_failure "cleanup.activeDeadlineSeconds below 30" "at '/cleanup/activeDeadlineSeconds': minimum: got 5" \
  --set cleanup.activeDeadlineSeconds=5
expect_schema_failure "a typo'd cleanup key (enable)" "at '/cleanup': additional properties 'enable' not allowed" --set cleanup.enable=false
expect_failure "a fullname too long for the -webhook suffix" 'longer than 63' --set "fullnameOverride=$(printf 'a%.0s' {1..60})"

# ---------------------------------------------------------------------------------------------
# NOTES.txt and the preflight named template.
# notes OUT [helm flags...]: NOTES.txt as helm install renders it, without a cluster
# (--dry-run=client); helm template leaves NOTES.txt out.
notes() {
  local out=$1
  shift
  "$HELM" install iogate "$CHART" -n iogate-system --dry-run=client -o json "$@" >"$out.json" 2>"$out.err" &&
    jq -er '.info.notes' "$out.json" >"$out" 2>>"$out.err"
}
if notes "$SCRATCH/notes.txt"; then
  pass "NOTES.txt renders"
  grep -qF 'kubectl get nodes -L iogate.io/randread-iops,iogate.io/disk-class,iogate.io/tier' "$SCRATCH/notes.txt" &&
    pass "NOTES.txt shows how to see the node labels" || fail_later "NOTES.txt lacks the kubectl get nodes -L line"
  grep -qF 'iogate-node-metrics' "$SCRATCH/notes.txt" && grep -q 'events' "$SCRATCH/notes.txt" &&
    pass "NOTES.txt points at events and metrics" || fail_later "NOTES.txt lacks events or metrics"
  # The snippet: from "spec:" to the first blank line after it.
  awk '/^spec:$/{on=1} on && /^$/{exit} on' "$SCRATCH/notes.txt" >"$SCRATCH/notes-snippet.yaml"
  "$PY" -c 'import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' \
    "$SCRATCH/notes-snippet.yaml" >"$SCRATCH/notes-snippet.json" 2>"$SCRATCH/notes-snippet.err" ||
    fail_later "NOTES.txt's preflight snippet is not YAML: $(cat "$SCRATCH/notes-snippet.err")"
else
  fail_later "NOTES.txt does not render: $(cat "$SCRATCH/notes.txt.err")"
fi
if notes "$SCRATCH/notes-off.txt" --set preflight.enabled=false; then
  ! grep -q 'iogate-preflight' "$SCRATCH/notes-off.txt" && grep -q 'is installed as release iogate' "$SCRATCH/notes-off.txt" &&
    pass "NOTES.txt prints no preflight snippet when preflight is off" ||
    fail_later "NOTES.txt with preflight off: $(head -5 "$SCRATCH/notes-off.txt")"
else
  fail_later "NOTES.txt with preflight off does not render: $(cat "$SCRATCH/notes-off.txt.err")"
fi

# What agent/webhook/preflight_injection.cc adds for a pod whose container mounts volume VOLUME
# at PATH (iogate webhook --preflight-image IMAGE --policy-configmap CM): the container (first
# in initContainers) and, when the pod lacks it, the volume iogate-policy.
injected() { # VOLUME PATH IMAGE CM [extra mount fields as JSON]
  jq -nc --arg v "$1" --arg p "$2" --arg img "$3" --arg cm "$4" --argjson extra "${5:-{\}}" '{
    container: {
      name: "iogate-preflight",
      image: $img,
      args: ["preflight", $p, "--policy", "/etc/iogate/policy.yaml"],
      env: [
        {name: "POD_NAME", valueFrom: {fieldRef: {fieldPath: "metadata.name"}}},
        {name: "POD_NAMESPACE", valueFrom: {fieldRef: {fieldPath: "metadata.namespace"}}},
        {name: "NODE_NAME", valueFrom: {fieldRef: {fieldPath: "spec.nodeName"}}},
        {name: "CONTAINER_NAME", value: "iogate-preflight"}],
      volumeMounts: [({name: $v, readOnly: true} + $extra + {mountPath: $p}),
                     {name: "iogate-policy", mountPath: "/etc/iogate", readOnly: true}],
      securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}}},
    volume: {name: "iogate-policy", configMap: {name: $cm, items: [{key: "policy.yaml", path: "policy.yaml"}]}}}'
}
# compare_preflight WHAT RENDERED-CONTAINER RENDERED-VOLUME EXPECTED RESOURCES
compare_preflight() {
  local what=$1 c=$2 v=$3 want=$4 res=$5 field ok=1
  for field in name image args env volumeMounts securityContext; do
    if [[ "$(jq -cS ".$field" <<<"$c")" != "$(jq -cS ".container.$field" <<<"$want")" ]]; then
      fail_later "$what: $field differs from the webhook's: $(jq -c ".$field" <<<"$c") vs $(jq -c ".container.$field" <<<"$want")"
      ok=0
    fi
  done
  [[ "$(jq -cS 'del(.resources) | keys' <<<"$c")" == "$(jq -cS '.container | keys' <<<"$want")" ]] ||
    { fail_later "$what: fields beyond the webhook's (and resources): $(jq -c 'keys' <<<"$c")"; ok=0; }
  [[ "$(jq -cS .resources <<<"$c")" == "$(jq -cS . <<<"$res")" ]] ||
    { fail_later "$what: resources $(jq -c .resources <<<"$c"), want preflight.resources $res"; ok=0; }
  [[ "$(jq -cS . <<<"$v")" == "$(jq -cS .volume <<<"$want")" ]] ||
    { fail_later "$what: policy volume $(jq -c . <<<"$v") differs from the webhook's $(jq -c .volume <<<"$want")"; ok=0; }
  ((ok)) && pass "$what: the initContainer and policy volume are the webhook's (name, image, args, env, mounts, securityContext) plus resources"
}
default_res=$(jq -c '.preflight.resources' <("$PY" -c 'import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' "$CHART/values.yaml"))
if [[ -s "$SCRATCH/notes-snippet.json" ]]; then
  compare_preflight "NOTES snippet" "$(jq -c '.spec.initContainers[0]' "$SCRATCH/notes-snippet.json")" \
    "$(jq -c '.spec.volumes[0]' "$SCRATCH/notes-snippet.json")" \
    "$(injected dataset /data "iogate:$APP_VERSION" iogate-policy)" "$default_res"
  check notes "the snippet runs the pod as the preflight ServiceAccount" "$(cat "$SCRATCH/notes-snippet.json")" \
    '.spec.serviceAccountName == "iogate-preflight" and (.spec.initContainers | length) == 1'
fi

# The named template as a user includes it, with other arguments: a Pod template added to a copy
# of the chart, rendered with the custom values. (It ends in "-}}": helm ends each document with a
# blank line of its own, and the file's final newline would make a second one at the end.)
cp -r "$CHART" "$SCRATCH/chart"
cat >"$SCRATCH/chart/templates/zz-preflight-example.yaml" <<'EOF'
{{- range $i, $case := list (dict "volume" "train-data" "path" "/mnt/ds") (dict "volume" "ckpt" "path" "/ckpt" "readOnly" false "subPath" "run-1") }}
---
apiVersion: v1
kind: Pod
metadata:
  name: example-{{ $i }}
spec:
  initContainers:
    {{- include "iogate.preflight.initContainer" (merge (dict "root" $) $case) | nindent 4 }}
  containers:
    - name: train
      image: busybox
  volumes:
    {{- include "iogate.preflight.volumes" (dict "root" $) | nindent 4 }}
{{- end -}}
EOF
if template gpu-gate "$SCRATCH/chart" ml-train -f "$SCRATCH/custom-values.yaml" --show-only templates/zz-preflight-example.yaml \
    >"$SCRATCH/example.yaml" 2>"$SCRATCH/example.err"; then
  yamllint -f parsable -c "$HERE/yamllint.yaml" "$SCRATCH/example.yaml" >"$SCRATCH/example.lint" 2>&1 &&
    pass "the named templates' output is clean YAML" || fail_later "named templates: yamllint: $(cat "$SCRATCH/example.lint")"
  to_json "$SCRATCH/example.yaml" >"$SCRATCH/example.json"
  custom_res='{"requests":{"cpu":"1","memory":"256Mi"},"limits":{"cpu":"1","memory":"256Mi"}}'
  img=registry.example.com/ml/iogate:0.2.0-rc1
  compare_preflight "named template (train-data at /mnt/ds)" "$(jq -c '.[0].spec.initContainers[0]' "$SCRATCH/example.json")" \
    "$(jq -c '.[0].spec.volumes[0]' "$SCRATCH/example.json")" "$(injected train-data /mnt/ds "$img" gate-policy)" "$custom_res"
  # readOnly false and a subPath: the webhook copies subPath; readOnly false is the template's option.
  want=$(injected ckpt /ckpt "$img" gate-policy '{"subPath":"run-1"}' | jq -c '.container.volumeMounts[0].readOnly = false')
  compare_preflight "named template (ckpt, readOnly false, subPath)" "$(jq -c '.[1].spec.initContainers[0]' "$SCRATCH/example.json")" \
    "$(jq -c '.[1].spec.volumes[0]' "$SCRATCH/example.json")" "$want" "$custom_res"
  # The webhook in the same release injects with the same image and ConfigMap name.
  check custom "the webhook's --preflight-image and --policy-configmap are what the named template uses" \
    "$(jq -nc --argjson d "$(obj custom Deployment gate-webhook storage)" --argjson e "$(jq -c '.[0]' "$SCRATCH/example.json")" '{d:$d,e:$e}')" '
    .d.spec.template.spec.containers[0].args as $a
    | $a[($a | index("--preflight-image")) + 1] == .e.spec.initContainers[0].image
      and $a[($a | index("--policy-configmap")) + 1] == .e.spec.volumes[0].configMap.name'
  check custom "the webhook's --preflight-requests and --preflight-limits are the named template's resources" \
    "$(jq -nc --argjson d "$(obj custom Deployment gate-webhook storage)" --argjson e "$(jq -c '.[0]' "$SCRATCH/example.json")" '{d:$d,e:$e}')" '
    def list($a; $flag): $a[($a | index($flag)) + 1] | split(",") | map(split("=") | {(.[0]): .[1]}) | add;
    .d.spec.template.spec.containers[0].args as $a
    | {requests: list($a; "--preflight-requests"), limits: list($a; "--preflight-limits")}
      == .e.spec.initContainers[0].resources'
else
  fail_later "the named templates do not render: $(cat "$SCRATCH/example.err")"
fi
cat >"$SCRATCH/chart/templates/zz-preflight-example.yaml" <<'EOF'
{{- include "iogate.preflight.initContainer" (dict "root" $ "path" "/data") }}
EOF
template iogate "$SCRATCH/chart" default --show-only templates/zz-preflight-example.yaml >/dev/null 2>"$SCRATCH/example.err" &&
  fail_later "the named template accepted a call without a volume" ||
  { grep -q 'volume' "$SCRATCH/example.err" && pass "the named template refuses a call without a volume, naming it" ||
    fail_later "the named template's error lacks 'volume': $(cat "$SCRATCH/example.err")"; }

finish chart
