#!/usr/bin/env bash
# The kustomize manifests (manifests/): the same objects as the Helm chart's defaults, and sound.
#   - drift: scripts/render-manifests.sh, rerun on a copy of manifests/, changes nothing, so the
#     generated files are what the chart renders today;
#   - `kubectl kustomize` (kubectl's built-in kustomize, offline) builds the base and each overlay;
#     each build passes yamllint and check-manifests (RBAC exactly as tests/deploy/expected-rbac.yaml,
#     images pinned to the chart's appVersion, standard labels, security contexts, resources);
#   - the overlays together hold exactly the chart's default objects (the webhook's certificate
#     from cert-manager rather than a Secret made at install), plus the Namespace and the example's
#     Job and PVC; each overlay holds its own part's objects and nothing of another part;
#   - the policy ConfigMap has the chart's policy document, and `iogate policy check` accepts it;
#   - the sample Job's initContainer is the chart's preflight, mounts the Job's dataset volume,
#     reads the base's policy ConfigMap iogate-policy and runs as the overlay's ServiceAccount.
# Tools as in test_chart.sh: HELM_RENDER/CHECK_MANIFESTS, else tests/deploy/build_tools.sh.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
need_tools kubectl jq yamllint

objects() { jq -r '.[] | "\(.kind) \(.metadata.namespace // "-")/\(.metadata.name)"' "$1" | sort -u; }

# 1. The generated files are what the chart renders now.
cp -r "$ROOT/manifests" "$SCRATCH/regen"
if HELM_RENDER=$HELM_RENDER bash "$ROOT/scripts/render-manifests.sh" "$SCRATCH/regen" 2>"$SCRATCH/regen.err"; then
  if diff -ru "$ROOT/manifests" "$SCRATCH/regen" >"$SCRATCH/regen.diff"; then
    pass "manifests/ is what scripts/render-manifests.sh makes of the chart today"
  else
    fail "manifests/ differs from the chart; rerun scripts/render-manifests.sh:
$(head -40 "$SCRATCH/regen.diff")"
  fi
else
  fail "scripts/render-manifests.sh failed: $(cat "$SCRATCH/regen.err")"
fi

# 2. Each kustomization builds and passes the linters.
builds=(base overlays/node-agent overlays/webhook overlays/preflight-example)
for b in "${builds[@]}"; do
  name=$(basename "$b")
  if ! kubectl kustomize "$ROOT/manifests/$b" >"$SCRATCH/$name.yaml" 2>"$SCRATCH/$name.err"; then
    fail "kubectl kustomize manifests/$b: $(cat "$SCRATCH/$name.err")"
    continue
  fi
  pass "kubectl kustomize manifests/$b builds ($(grep -c '^kind:' "$SCRATCH/$name.yaml") objects)"
  to_json "$SCRATCH/$name.yaml" >"$SCRATCH/$name.json" || fail "$b: not YAML"
  yamllint -f parsable -c "$HERE/yamllint.yaml" "$SCRATCH/$name.yaml" >"$SCRATCH/$name.lint" 2>&1 &&
    pass "$b: yamllint is clean" || fail "$b: yamllint: $(head -20 "$SCRATCH/$name.lint")"
  "$CHECK_MANIFESTS" --expect-rbac "$HERE/expected-rbac.yaml" --app-version "$APP_VERSION" --require-labels \
    "$SCRATCH/$name.yaml" >"$SCRATCH/$name.check" 2>&1 &&
    pass "$b: check-manifests accepts it" || fail "$b: check-manifests: $(cat "$SCRATCH/$name.check")"
done

# 3. The same objects as the chart's defaults.
"$HELM_RENDER" -n iogate-system --set webhook.certManager.enabled=true iogate "$ROOT/charts/iogate" \
  >"$SCRATCH/chart.yaml" || die "the chart does not render"
to_json "$SCRATCH/chart.yaml" >"$SCRATCH/chart.json"
"$HELM_RENDER" -n iogate-system iogate "$ROOT/charts/iogate" >"$SCRATCH/chart-default.yaml" || die "the chart does not render"
to_json "$SCRATCH/chart-default.yaml" >"$SCRATCH/chart-default.json"
{ objects "$SCRATCH/chart.json"
  printf '%s\n' "Namespace -/iogate-system" "Job iogate-system/training-example" \
    "PersistentVolumeClaim iogate-system/training-dataset"; } | sort -u >"$SCRATCH/want"
cat "$SCRATCH"/{node-agent,webhook,preflight-example}.json | jq -s 'add' >"$SCRATCH/all.json"
objects "$SCRATCH/all.json" >"$SCRATCH/got"
diff -u "$SCRATCH/want" "$SCRATCH/got" >"$SCRATCH/objects.diff" &&
  pass "the overlays hold the chart's $(wc -l <"$SCRATCH/want") default objects (cert-manager TLS) + Namespace, Job, PVC" ||
  fail "overlays vs chart (- chart, + kustomize): $(tail -n +3 "$SCRATCH/objects.diff")"
# The chart's default TLS (a Secret made at install) is what kustomize replaces with cert-manager.
diff <(objects "$SCRATCH/chart-default.json" | grep -v -e '^Secret ') \
     <(objects "$SCRATCH/chart.json" | grep -v -e '^Issuer ' -e '^Certificate ') >/dev/null &&
  pass "cert-manager's Issuer and Certificate replace only the chart's self-signed Secret" ||
  fail "the chart's default and cert-manager renderings differ in more than the TLS objects"
for overlay in node-agent webhook preflight-example; do
  component=${overlay%-example}
  others=$(jq -r --arg c "$component" '.[] | select(.kind != "Namespace" and .metadata.name != "iogate-policy")
      | select((.metadata.labels["app.kubernetes.io/component"] // "") as $x
               | ($x != $c and $x != ($c + "-example") and ($c != "node-agent" or .metadata.name != "iogate-grafana-dashboard")))
      | "\(.kind)/\(.metadata.name)"' "$SCRATCH/$overlay.json")
  [[ -z "$others" ]] && pass "overlay $overlay holds only its part's objects (and the base)" ||
    fail "overlay $overlay holds other parts' objects: $others"
done
# Same content, not only the same names: every chart object equals its kustomize twin, but for
# the labels that say who manages it.
strip='walk(if type == "object" then del(.["helm.sh/chart"], .["app.kubernetes.io/managed-by"]) else . end)'
mismatch=$(jq -r --slurpfile k "$SCRATCH/all.json" "
  .[] | select(.metadata.name != \"iogate-policy\") | ($strip) as \$c
  | (\$k[0][] | select(.kind == \$c.kind and .metadata.name == \$c.metadata.name) | $strip) as \$m
  | select(\$m != \$c) | \"\(.kind)/\(.metadata.name)\"" "$SCRATCH/chart.json")
[[ -z "$mismatch" ]] && pass "every chart object has an identical kustomize twin (labels of the manager aside)" ||
  fail "these differ between chart and kustomize: $mismatch"

# 4. The policy.
jq -r '.[] | select(.kind == "ConfigMap" and .metadata.name == "iogate-policy") | .data["policy.yaml"]' \
  "$SCRATCH/base.json" >"$SCRATCH/policy-kustomize.yaml"
jq -r '.[] | select(.kind == "ConfigMap" and .metadata.name == "iogate-policy") | .data["policy.yaml"]' \
  "$SCRATCH/chart.json" >"$SCRATCH/policy-chart.yaml"
diff <(grep -v '^#' "$SCRATCH/policy-kustomize.yaml") <(grep -v '^#' "$SCRATCH/policy-chart.yaml") >/dev/null &&
  pass "the base's policy.yaml is the chart's policy document" ||
  fail "base policy differs from the chart's: $(diff "$SCRATCH/policy-kustomize.yaml" "$SCRATCH/policy-chart.yaml" | head)"
"$IOGATE" policy check "$SCRATCH/policy-kustomize.yaml" >"$SCRATCH/policy.out" 2>&1 &&
  pass "iogate policy check accepts the base's policy" || fail "iogate policy check: $(cat "$SCRATCH/policy.out")"

# 5. The sample Job.
job=$(jq -c '.[] | select(.kind == "Job" and .metadata.name == "training-example")' "$SCRATCH/preflight-example.json")
check() { [[ "$(jq -r "$2" <<<"$job" 2>&1)" == "true" ]] && pass "Job: $1" || fail "Job: $1 ($2)"; }
check "its first initContainer is iogate-preflight, image pinned to $APP_VERSION" \
  ".spec.template.spec.initContainers[0] | .name == \"iogate-preflight\" and (.image | endswith(\":$APP_VERSION\"))"
check "preflight probes /data, where the dataset volume is mounted, with the mounted policy" \
  '.spec.template.spec.initContainers[0] | .args == ["preflight", "/data", "--policy", "/etc/iogate/policy.yaml"]
   and any(.volumeMounts[]; .name == "dataset" and .mountPath == "/data")
   and any(.volumeMounts[]; .name == "iogate-policy" and .mountPath == "/etc/iogate")'
check "volume iogate-policy is the base's ConfigMap iogate-policy, key policy.yaml" \
  'any(.spec.template.spec.volumes[]; .name == "iogate-policy" and .configMap.name == "iogate-policy"
       and .configMap.items == [{"key": "policy.yaml", "path": "policy.yaml"}])'
check "the dataset volume is the PVC training-dataset" \
  'any(.spec.template.spec.volumes[]; .name == "dataset" and .persistentVolumeClaim.claimName == "training-dataset")'
check "it runs as the preflight ServiceAccount, never retried" \
  '.spec.template.spec.serviceAccountName == "iogate-preflight" and .spec.backoffLimit == 0 and .spec.template.spec.restartPolicy == "Never"'
check "the downward API gives preflight its pod, namespace and node" \
  '[.spec.template.spec.initContainers[0].env[] | .name] == ["POD_NAME", "POD_NAMESPACE", "NODE_NAME", "CONTAINER_NAME"]'
jq -e '.[] | select(.kind == "ConfigMap" and .metadata.name == "iogate-policy" and .metadata.namespace == "iogate-system")' \
  "$SCRATCH/preflight-example.json" >/dev/null && pass "the overlay carries ConfigMap iogate-policy in the Job's namespace" ||
  fail "no ConfigMap iogate-policy in iogate-system in the preflight-example overlay"
jq -e '.[] | select(.kind == "ServiceAccount" and .metadata.name == "iogate-preflight" and .metadata.namespace == "iogate-system")' \
  "$SCRATCH/preflight-example.json" >/dev/null && pass "the overlay carries the Job's ServiceAccount" ||
  fail "no ServiceAccount iogate-preflight in the preflight-example overlay"

finish manifest
