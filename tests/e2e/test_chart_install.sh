#!/usr/bin/env bash
# The Helm chart (charts/iogate) installed for real, by the pinned helm, into a throwaway control
# plane (tests/e2e/lib.sh): what only a real install shows, beyond tests/deploy/test_chart.sh's
# offline renderings.
#   - helm install with the default values: every object the release's manifest names is in the
#     cluster (the apiserver validated each one), and exactly the objects the defaults promise;
#     cert-manager "auto" falls back to the self-signed pair, since this cluster does not serve
#     cert-manager.io/v1 (.Capabilities from real discovery);
#   - helm upgrade with each documented toggle, the cluster checked after each: an unchanged
#     upgrade REUSES the self-signed pair (the chart's lookup of its Secret, which helm template
#     cannot show); webhook off and on; nodeAgent off and on; preflight in listed namespaces
#     (created first, as the chart requires) and off; injection (preflight.rbac.
#     extraServiceAccounts, so a pod's own account runs the injected initContainer); cert-manager
#     (minimal cert-manager.io/v1 CRDs, tests/deploy/fixtures): auto switches to it, false goes
#     back to a self-signed pair, true with the user's issuerRef; the Grafana dashboard off and
#     in another namespace; the ServiceMonitor, refused by the apiserver without its CRD (helm
#     reports it) and created with a minimal monitoring.coreos.com/v1 CRD;
#   - RBAC: for each ServiceAccount the chart makes (node agent, webhook, preflight in each of its
#     namespaces), `kubectl auth can-i --list` is exactly what the agent needs (the API calls in
#     agent/kube as used by the modes: tests/deploy/expected-rbac.yaml) plus the baseline every
#     account of the cluster has, itself checked on an account the chart never binds;
#   - helm uninstall (--no-hooks: no kubelet here to run the post-delete cleanup Job) leaves none
#     of the chart's objects (of any revision) behind, nor the pods and ReplicaSets its
#     controllers made.
E2E_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$E2E_HERE/lib.sh"
FIXTURES="$ROOT/tests/deploy/fixtures"
NS=iogate-system
REL=iogate
# kubectl's and helm's discovery cache in the scratch folder, not in $HOME/.kube/cache (helm
# invalidates it before it reads .Capabilities; served checks below ask the apiserver directly).
export KUBECACHEDIR="$SCRATCH/kube-cache"

# served GROUP/VERSION: the apiserver serves the API now (no discovery cache in between).
served() { k get --raw "/apis/$1" >/dev/null 2>&1; }

# ---------------------------------------------------------------------------------------------
# Helpers. Each step writes the release's manifest to $SCRATCH/manifest-REVISION.yaml; the
# uninstall check goes through all of them.
REV=0
save_manifest() {
  REV=$(helm status "$REL" -n "$NS" -o json | jq -r .version)
  helm get manifest "$REL" -n "$NS" >"$SCRATCH/manifest-$REV.yaml" || fail "helm get manifest (revision $REV)"
}

# upgrade WHAT [helm flags...]: helm upgrade to the chart's defaults plus the flags
# (--reset-values: without flags helm would otherwise keep the previous revision's values).
upgrade() {
  local what=$1
  shift
  helm upgrade "$REL" "$CHART" -n "$NS" --reset-values "$@" >"$SCRATCH/upgrade.out" 2>&1 ||
    fail "helm upgrade ($what): $(cat "$SCRATCH/upgrade.out")"
  save_manifest
  pass "helm upgrade ($what) -> revision $REV"
}

# live_objects: "Kind namespace/name" of every object in the current revision's manifest, read
# back from the cluster (kubectl get -f fails on any that is missing), sorted.
live_objects() {
  k get -f "$SCRATCH/manifest-$REV.yaml" -o json |
    jq -r '(.items // [.])[] | "\(.kind) \(.metadata.namespace // "-")/\(.metadata.name)"' | sort
}

# expect_objects WHAT <<EOF lines: the release's objects, as found in the cluster, are exactly these.
expect_objects() {
  local what=$1
  sort >"$SCRATCH/want"
  live_objects >"$SCRATCH/got" 2>"$SCRATCH/got.err" || fail "$what: objects of the manifest missing in the cluster: $(cat "$SCRATCH/got.err")"
  diff -u "$SCRATCH/want" "$SCRATCH/got" >"$SCRATCH/objects.diff" ||
    fail "$what: the release's objects differ (- expected, + in the cluster):
$(tail -n +3 "$SCRATCH/objects.diff")"
  pass "$what: the release's $(wc -l <"$SCRATCH/want") objects are in the cluster, exactly the expected ones"
}

# absent WHAT KIND NAME [NAMESPACE]: the object is not in the cluster.
absent() {
  local what=$1 kind=$2 name=$3 ns=${4:-}
  local out
  out=$(k get "$kind" "$name" ${ns:+-n "$ns"} -o name --ignore-not-found 2>&1) || fail "$what: kubectl get $kind $name: $out"
  [[ -z "$out" ]] || fail "$what: $kind ${ns:+$ns/}$name is still in the cluster"
}

# The object sets (tests/lib/chart_objects.sh) of release iogate in iogate-system (fullname iogate).
source "$TESTS_DIR/lib/chart_objects.sh"
self_signed() { echo "Secret $NS/iogate-webhook-tls"; }
cert_manager() { printf '%s\n' "Issuer $NS/iogate-selfsigned" "Certificate $NS/iogate-webhook-tls"; }
dashboard() { echo "ConfigMap ${1:-$NS}/iogate-grafana-dashboard"; }

# tls_state: the Secret's ca.crt and tls.crt and both configurations' caBundle, one per line.
tls_state() {
  k -n "$NS" get secret iogate-webhook-tls -o json | jq -r '.data["ca.crt"], .data["tls.crt"]'
  k get mutatingwebhookconfiguration iogate-webhook -o json | jq -r '.webhooks[0].clientConfig.caBundle // "none"'
  k get validatingwebhookconfiguration iogate-webhook -o json | jq -r '.webhooks[0].clientConfig.caBundle // "none"'
}
# expect_self_signed WHAT: the Secret holds a pair whose CA is both configurations' caBundle, and
# the serving certificate verifies against it for the Service's name.
expect_self_signed() {
  local what=$1 ca crt mwc vwc
  { read -r ca; read -r crt; read -r mwc; read -r vwc; } < <(tls_state)
  [[ -n "$ca" && "$ca" != null && "$mwc" == "$ca" && "$vwc" == "$ca" ]] ||
    fail "$what: caBundles (${mwc:0:16}..., ${vwc:0:16}...) are not the Secret's ca.crt (${ca:0:16}...)"
  base64 -d <<<"$ca" >"$SCRATCH/ca.pem"
  base64 -d <<<"$crt" >"$SCRATCH/tls.pem"
  openssl verify -CAfile "$SCRATCH/ca.pem" -verify_hostname "iogate-webhook.$NS.svc" "$SCRATCH/tls.pem" >/dev/null 2>&1 ||
    fail "$what: the serving certificate does not verify against the caBundle for iogate-webhook.$NS.svc"
  pass "$what: self-signed: the Secret's CA is both configurations' caBundle and signs the certificate for iogate-webhook.$NS.svc"
}
# expect_cert_manager WHAT ISSUER-KIND ISSUER-NAME: a Certificate for the Secret from that issuer,
# both configurations annotated for cert-manager's CA injector and without a caBundle of their own.
expect_cert_manager() {
  local what=$1 kind=$2 issuer=$3 kinds
  k -n "$NS" get certificate iogate-webhook-tls -o json | jq -e --arg k "$kind" --arg i "$issuer" '
    .spec.secretName == "iogate-webhook-tls" and .spec.issuerRef.kind == $k and .spec.issuerRef.name == $i
    and (.spec.dnsNames | index("iogate-webhook.iogate-system.svc") != null)' >/dev/null ||
    fail "$what: Certificate iogate-webhook-tls: $(k -n "$NS" get certificate iogate-webhook-tls -o json | jq -c .spec)"
  for kinds in mutatingwebhookconfiguration validatingwebhookconfiguration; do
    k get "$kinds" iogate-webhook -o json | jq -e '
      .metadata.annotations["cert-manager.io/inject-ca-from"] == "iogate-system/iogate-webhook-tls"
      and (.webhooks[0].clientConfig | has("caBundle") | not)' >/dev/null ||
      fail "$what: $kinds is not left to cert-manager's CA injector: $(k get "$kinds" iogate-webhook -o json | jq -c '[.metadata.annotations, .webhooks[0].clientConfig]')"
  done
  pass "$what: cert-manager: Certificate from $kind $issuer, both configurations carry inject-ca-from and no caBundle"
}

# ---------------------------------------------------------------------------------------------
# RBAC as the apiserver grants it. can_i NAMESPACE ACCOUNT IN-NAMESPACE: `kubectl auth can-i
# --list` for system:serviceaccount:NAMESPACE:ACCOUNT in IN-NAMESPACE (cluster-wide rules show
# in every namespace), one line per resource (or non-resource URL), resource name and verb:
# "RESOURCE NAMES VERB", "-" for no names, sorted. Each table row may group several of these;
# the lines do not depend on how roles group them.
can_i() {
  k auth can-i --list --as="system:serviceaccount:$1:$2" -n "$3" | awk '
    NR == 1 {
      r = index($0, "Non-Resource URLs"); n = index($0, "Resource Names"); v = index($0, "Verbs")
      if (!r || !n || !v) { print "unexpected header: " $0; exit 1 }
      next
    }
    function items(s, out,   k) {  # "[a b]" -> out[1..k]
      gsub(/^ +| +$/, "", s); gsub(/^\[|\]$/, "", s)
      return split(s, out, " ")
    }
    {
      res = substr($0, 1, r - 1); gsub(/ /, "", res)
      nu = items(substr($0, r, n - r), urls); nn = items(substr($0, n, v - n), names)
      nv = items(substr($0, v), verbs)
      name = nn ? names[1] : "-"
      for (i = 2; i <= nn; i++) name = name "," names[i]
      for (j = 1; j <= nv; j++) {
        if (res != "") print res, name, verbs[j]
        for (i = 1; i <= nu; i++) print "url:" urls[i], name, verbs[j]
      }
    }' | sort -u
}
# What every account of this cluster may do whatever the chart binds: the default ClusterRoles
# system:basic-user (its own access and identity reviews), system:discovery and
# system:public-info-viewer (API discovery, health, version: every authenticated user),
# system:service-account-issuer-discovery (the OIDC issuer documents) and
# system:cluster-trust-bundle-discovery (reading ClusterTrustBundles), both bound to every
# service account (kube-apiserver's RBAC bootstrap policy).
BASELINE='clustertrustbundles.certificates.k8s.io - get
clustertrustbundles.certificates.k8s.io - list
clustertrustbundles.certificates.k8s.io - watch
selfsubjectaccessreviews.authorization.k8s.io - create
selfsubjectreviews.authentication.k8s.io - create
selfsubjectrulesreviews.authorization.k8s.io - create
url:/.well-known/openid-configuration - get
url:/.well-known/openid-configuration/ - get
url:/api - get
url:/api/* - get
url:/apis - get
url:/apis/* - get
url:/healthz - get
url:/livez - get
url:/openapi - get
url:/openapi/* - get
url:/openid/v1/jwks - get
url:/openid/v1/jwks/ - get
url:/readyz - get
url:/version - get
url:/version/ - get'
# What each agent needs (tests/deploy/expected-rbac.yaml, from its API calls):
# the node agent (agent/node/node.cc, node_sync.cc): GET its Node (labels, taints), PATCH it
# (labels, annotations, taint), PATCH nodes/status (the StorageBelowPolicy condition), and
# create an Event (events.k8s.io/v1, falling back to core v1: agent/kube/events.cc).
NODE_NEEDS='events - create
events.events.k8s.io - create
nodes - get
nodes - patch
nodes/status - patch'
# the webhook (agent/webhook/node_informer.cc, node_source.cc): LIST and WATCH the Nodes (the
# decision view of each), GET one by name while the watch is not current.
WEBHOOK_NEEDS='nodes - get
nodes - list
nodes - watch'
# preflight (agent/preflight/preflight.cc, agent/kube/shared_result.cc), in its namespace: GET and PATCH
# its own Pod (annotations) and the dataset's PVC (probe lock and shared result), WATCH the PVC
# (a waiter waits for another pod's result on a watch), and an Event.
PREFLIGHT_NEEDS='events - create
events.events.k8s.io - create
persistentvolumeclaims - get
persistentvolumeclaims - patch
persistentvolumeclaims - watch
pods - get
pods - patch'
# expect_rbac NAMESPACE ACCOUNT IN-NAMESPACE NEEDS: can_i equals NEEDS plus the baseline, exactly.
expect_rbac() {
  local ns=$1 sa=$2 in=$3 needs=$4
  can_i "$ns" "$sa" "$in" >"$SCRATCH/can-i" 2>&1 || fail "kubectl auth can-i --list as $ns:$sa: $(cat "$SCRATCH/can-i")"
  printf '%s\n%s\n' "$BASELINE" "$needs" | grep -v '^$' | sort -u >"$SCRATCH/can-i.want"
  diff -u "$SCRATCH/can-i.want" "$SCRATCH/can-i" >"$SCRATCH/can-i.diff" ||
    fail "auth can-i --list as system:serviceaccount:$ns:$sa in $in (- needed + baseline, + granted):
$(tail -n +3 "$SCRATCH/can-i.diff")"
  local list
  list=$(sed '/^$/d' <<<"$needs" | paste -sd ';')
  pass "system:serviceaccount:$ns:$sa in namespace $in may do exactly the baseline${list:+ and $list}"
}

# ---------------------------------------------------------------------------------------------
# 0. The baseline itself, on an account nothing binds.
k -n default create serviceaccount nobody >/dev/null
expect_rbac default nobody default ""

# 1. helm install with the default values. The release namespace is the preflight namespace by
#    default; helm creates it (--create-namespace).
helm_install "$REL" "$NS"
save_manifest
[[ "$(helm status "$REL" -n "$NS" -o json | jq -r .info.status)" == deployed ]] || fail "helm status: not deployed"
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; self_signed;
  preflight_objects iogate "$NS"; policy_objects iogate "$NS"; dashboard; } |
  expect_objects "install (defaults)"
k get -f "$SCRATCH/manifest-$REV.yaml" -o json | jq -e --arg r "$REL" --arg ns "$NS" '
  [(.items // [.])[] | select(.metadata.labels["app.kubernetes.io/managed-by"] != "Helm"
     or .metadata.annotations["meta.helm.sh/release-name"] != $r
     or .metadata.annotations["meta.helm.sh/release-namespace"] != $ns)] | length == 0' >/dev/null ||
  fail "install: objects without Helm's ownership labels and annotations"
pass "install: every object is owned by release $REL (managed-by Helm, meta.helm.sh/release-*)"
# The controllers act on the release (no kubelet runs the pods): the webhook's ReplicaSet and its
# two pods exist, so the uninstall check below covers what the controllers made too.
deadline=$((SECONDS + 60))
until [[ "$(k -n "$NS" get pods -l "app.kubernetes.io/instance=$REL,app.kubernetes.io/component=webhook" -o name | wc -l)" -eq 2 ]]; do
  ((SECONDS < deadline)) || fail "install: the webhook's 2 pods were not created in 60 s: $(k -n "$NS" get events -o custom-columns=R:.reason,M:.message --no-headers | tail -5)"
  sleep 1
done
pass "install: the Deployment's ReplicaSet created the webhook's 2 pods (pod admission passed)"
# No cert-manager.io/v1 here, so "auto" made the self-signed pair.
served cert-manager.io/v1 && fail "the cluster serves cert-manager.io/v1 before the test installs its CRDs"
expect_self_signed "install (certManager auto, no cert-manager.io/v1 served)"
tls_state >"$SCRATCH/tls-install"

# RBAC of each account the chart made, as the apiserver grants it.
expect_rbac "$NS" iogate-node default "$NODE_NEEDS"
expect_rbac "$NS" iogate-node "$NS" "$NODE_NEEDS"
expect_rbac "$NS" iogate-webhook default "$WEBHOOK_NEEDS"
expect_rbac "$NS" iogate-webhook "$NS" "$WEBHOOK_NEEDS"
expect_rbac "$NS" iogate-preflight "$NS" "$PREFLIGHT_NEEDS"
expect_rbac "$NS" iogate-preflight default ""   # a Role: nothing outside its namespace
expect_rbac "$NS" default "$NS" ""               # the namespace's default account gets nothing

# 2. An upgrade with the same values keeps the self-signed pair: the chart looks its Secret up.
upgrade "same values"
tls_state >"$SCRATCH/tls-upgrade"
cmp -s "$SCRATCH/tls-install" "$SCRATCH/tls-upgrade" ||
  fail "upgrade: the self-signed CA, certificate or caBundles changed (the lookup of the existing Secret did not reuse them)"
pass "upgrade: the self-signed CA, serving certificate and both caBundles are reused unchanged (lookup of the existing Secret)"
expect_self_signed "upgrade (same values)"

# 3. The webhook off, then on again (a new pair: its Secret went with it).
upgrade "webhook.enabled=false" --set webhook.enabled=false
{ node_objects iogate "$NS"; preflight_objects iogate "$NS"; policy_objects iogate "$NS";
  dashboard; } | expect_objects "webhook off"
for o in "deployment iogate-webhook $NS" "service iogate-webhook $NS" "secret iogate-webhook-tls $NS" \
         "serviceaccount iogate-webhook $NS" "poddisruptionbudget iogate-webhook $NS" "clusterrole iogate-webhook" \
         "clusterrolebinding iogate-webhook" "mutatingwebhookconfiguration iogate-webhook" "validatingwebhookconfiguration iogate-webhook"; do
  # shellcheck disable=SC2086
  absent "webhook off" $o
done
pass "webhook off: its Deployment, Service, PDB, Secret, account, RBAC and both configurations are gone"
upgrade "webhook.enabled=true" --set webhook.enabled=true
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; self_signed;
  preflight_objects iogate "$NS"; policy_objects iogate "$NS"; dashboard; } | expect_objects "webhook on again"
expect_self_signed "webhook on again"

# 4. The node agent off, then on again.
upgrade "nodeAgent.enabled=false" --set nodeAgent.enabled=false
{ webhook_objects iogate "$NS"; self_signed; preflight_objects iogate "$NS";
  policy_objects iogate "$NS"; dashboard; } | expect_objects "node agent off"
for o in "daemonset iogate-node $NS" "service iogate-node-metrics $NS" "serviceaccount iogate-node $NS" \
         "clusterrole iogate-node" "clusterrolebinding iogate-node"; do
  # shellcheck disable=SC2086
  absent "node agent off" $o
done
pass "node agent off: its DaemonSet, metrics Service, account and RBAC are gone"
upgrade "nodeAgent.enabled=true" --set nodeAgent.enabled=true
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; self_signed;
  preflight_objects iogate "$NS"; policy_objects iogate "$NS"; dashboard; } | expect_objects "node agent on again"
expect_rbac "$NS" iogate-node default "$NODE_NEEDS"

# 5. Preflight in the training namespaces, which must exist first (the chart does not make them).
k create namespace ml-train >/dev/null
k create namespace ml-eval >/dev/null
upgrade "preflight.namespaces={ml-train,ml-eval}" --set 'preflight.namespaces={ml-train,ml-eval}'
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; self_signed;
  preflight_objects iogate ml-train ml-eval; policy_objects iogate "$NS" ml-train ml-eval; dashboard; } |
  expect_objects "preflight in ml-train and ml-eval"
absent "preflight moved" role iogate-preflight "$NS"
expect_rbac ml-train iogate-preflight ml-train "$PREFLIGHT_NEEDS"
expect_rbac ml-eval iogate-preflight ml-eval "$PREFLIGHT_NEEDS"
expect_rbac ml-train iogate-preflight ml-eval ""   # each namespace's account only in its own
[[ "$(k -n ml-train get configmap iogate-policy -o jsonpath='{.data.policy\.yaml}')" == \
   "$(k -n "$NS" get configmap iogate-policy -o jsonpath='{.data.policy\.yaml}')" ]] ||
  fail "preflight: ml-train's policy copy differs from the release namespace's"
pass "preflight: ml-train holds the same policy.yaml as $NS"

# 6. Injection: the webhook injects the preflight initContainer into a training pod that runs as
#    its own account, reading the policy copy named by --policy-configmap: both must be in the
#    training namespace. extraServiceAccounts binds the pod's account (here: default).
upgrade "injection: preflight.namespaces={ml-train}, rbac.extraServiceAccounts={default}" \
  --set 'preflight.namespaces={ml-train}' --set 'preflight.rbac.extraServiceAccounts={default}'
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; self_signed;
  preflight_objects iogate ml-train; policy_objects iogate "$NS" ml-train; dashboard; } |
  expect_objects "injection"
args=$(k -n "$NS" get deployment iogate-webhook -o json | jq -c '.spec.template.spec.containers[0].args')
cm=$(jq -r '.[index("--policy-configmap") + 1]' <<<"$args")
[[ "$cm" == iogate-policy ]] && k -n ml-train get configmap "$cm" >/dev/null ||
  fail "injection: the webhook's --policy-configmap ($cm, args $args) is not a ConfigMap in ml-train"
pass "injection: the webhook's --policy-configmap $cm is in ml-train, where it injects"
expect_rbac ml-train default ml-train "$PREFLIGHT_NEEDS"
expect_rbac ml-eval iogate-preflight ml-eval ""   # ml-eval left preflight: its account is gone
k -n ml-eval get serviceaccount iogate-preflight >/dev/null 2>&1 && fail "ml-eval: iogate-preflight still there"
absent "ml-eval left preflight" configmap iogate-policy ml-eval

# 7. Preflight off: its objects go from every namespace.
upgrade "preflight.enabled=false" --set preflight.enabled=false
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; self_signed;
  policy_objects iogate "$NS"; dashboard; } | expect_objects "preflight off"
expect_rbac ml-train default ml-train ""

# 8. cert-manager: with its API served (the CRD fixture), "auto" switches to it.
k apply --server-side -f "$FIXTURES/cert-manager-crds.yaml" >/dev/null
k wait --for=condition=Established --timeout=60s crd/issuers.cert-manager.io crd/certificates.cert-manager.io >/dev/null
for _ in $(seq 50); do served cert-manager.io/v1 && break; sleep 0.2; done
served cert-manager.io/v1 || fail "cert-manager.io/v1 is not served after its CRDs"
upgrade "certManager auto, cert-manager.io/v1 served"
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; cert_manager;
  preflight_objects iogate "$NS"; policy_objects iogate "$NS"; dashboard; } |
  expect_objects "certManager auto with cert-manager"
absent "cert-manager" secret iogate-webhook-tls "$NS"   # cert-manager (not running here) would write it
expect_cert_manager "certManager auto with cert-manager" Issuer iogate-selfsigned
upgrade "webhook.certManager.enabled=false" --set webhook.certManager.enabled=false
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; self_signed;
  preflight_objects iogate "$NS"; policy_objects iogate "$NS"; dashboard; } |
  expect_objects "certManager false"
expect_self_signed "certManager false, although cert-manager.io/v1 is served"
upgrade "webhook.certManager.enabled=true with issuerRef ClusterIssuer corp-ca" --set webhook.certManager.enabled=true \
  --set webhook.certManager.issuerRef.name=corp-ca --set webhook.certManager.issuerRef.kind=ClusterIssuer \
  --set webhook.certManager.issuerRef.group=cert-manager.io
{ node_objects iogate "$NS"; webhook_objects iogate "$NS";
  echo "Certificate $NS/iogate-webhook-tls"; preflight_objects iogate "$NS"; policy_objects iogate "$NS"; dashboard; } |
  expect_objects "certManager true with issuerRef"
expect_cert_manager "certManager true with issuerRef" ClusterIssuer corp-ca

# 9. The Grafana dashboard: off, then in Grafana's namespace. (From here on the cluster serves
#    cert-manager.io/v1, so the default "auto" takes cert-manager.)
upgrade "grafanaDashboard.enabled=false" --set grafanaDashboard.enabled=false
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; cert_manager;
  preflight_objects iogate "$NS"; policy_objects iogate "$NS"; } | expect_objects "dashboard off"
k create namespace monitoring >/dev/null
upgrade "grafanaDashboard.namespace=monitoring" --set grafanaDashboard.namespace=monitoring
{ node_objects iogate "$NS"; webhook_objects iogate "$NS"; cert_manager;
  preflight_objects iogate "$NS"; policy_objects iogate "$NS"; dashboard monitoring; } |
  expect_objects "dashboard in monitoring"
k -n monitoring get configmap iogate-grafana-dashboard -o json | jq -e '
  .metadata.labels.grafana_dashboard == "1" and (.data | to_entries | length == 1 and (.[0].value | fromjson | .panels | length > 0))' >/dev/null ||
  fail "dashboard: ConfigMap monitoring/iogate-grafana-dashboard lacks the sidecar label or a dashboard JSON"
pass "dashboard: monitoring/iogate-grafana-dashboard carries grafana_dashboard=1 and the dashboard JSON"

# 10. The ServiceMonitor: without prometheus-operator's CRD the apiserver has no such kind and
#     helm refuses the upgrade, naming it; with the CRD (fixture) it is created.
if helm upgrade "$REL" "$CHART" -n "$NS" --reset-values --set nodeAgent.serviceMonitor.enabled=true >"$SCRATCH/sm.out" 2>&1; then
  fail "serviceMonitor: helm upgrade succeeded without the monitoring.coreos.com/v1 CRD"
fi
grep -q 'no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"' "$SCRATCH/sm.out" ||
  fail "serviceMonitor without its CRD: helm's error does not name the kind: $(cat "$SCRATCH/sm.out")"
pass "serviceMonitor without its CRD: helm refuses: $(grep -o 'no matches for kind "ServiceMonitor"[^;]*' "$SCRATCH/sm.out" | head -1)"
k apply --server-side -f "$FIXTURES/servicemonitor-crd.yaml" >/dev/null
k wait --for=condition=Established --timeout=60s crd/servicemonitors.monitoring.coreos.com >/dev/null
for _ in $(seq 50); do served monitoring.coreos.com/v1 && break; sleep 0.2; done
served monitoring.coreos.com/v1 || fail "monitoring.coreos.com/v1 is not served after its CRD"
upgrade "nodeAgent.serviceMonitor.enabled=true, interval 2m, labels release=kube-prometheus-stack" \
  --set nodeAgent.serviceMonitor.enabled=true --set nodeAgent.serviceMonitor.interval=2m \
  --set nodeAgent.serviceMonitor.labels.release=kube-prometheus-stack
{ node_objects iogate "$NS"; echo "ServiceMonitor $NS/iogate-node";
  webhook_objects iogate "$NS"; cert_manager; preflight_objects iogate "$NS"; policy_objects iogate "$NS"; dashboard; } |
  expect_objects "serviceMonitor on"
sel=$(k -n "$NS" get servicemonitor iogate-node -o json)
svc=$(k -n "$NS" get service iogate-node-metrics -o json)
jq -e --argjson svc "$svc" '
  .spec.selector.matchLabels as $m | ($m | length) > 0
  and ($m | to_entries | all(. as $e | $svc.metadata.labels[$e.key] == $e.value))
  and .spec.endpoints[0].port == "metrics" and .spec.endpoints[0].interval == "2m"
  and .metadata.labels.release == "kube-prometheus-stack"' <<<"$sel" >/dev/null ||
  fail "serviceMonitor: $(jq -c '{labels: .metadata.labels, spec}' <<<"$sel") does not select $(jq -c .metadata.labels <<<"$svc") on port metrics every 2m"
pass "serviceMonitor: selects the metrics Service's labels, port metrics, every 2m, with the release label"

# ---------------------------------------------------------------------------------------------
# 11. helm uninstall: no object of any revision is left, and the controllers' pods and
#     ReplicaSets go too (garbage collection by the controller-manager).
#     --no-hooks: this cluster runs no kubelet, so the chart's post-delete cleanup Job would never
#     run and helm would wait for it until its timeout; the hook itself is shown on a real node by
#     tests/e2e/test_kubelet_gate.sh (its objects are checked offline by tests/deploy/test_chart.sh).
helm uninstall "$REL" -n "$NS" --no-hooks >"$SCRATCH/uninstall.out" 2>&1 || fail "helm uninstall: $(cat "$SCRATCH/uninstall.out")"
pass "helm uninstall: $(head -1 "$SCRATCH/uninstall.out")"
cat "$SCRATCH"/manifest-*.yaml >"$SCRATCH/every-revision.yaml"
left=$(k get -f "$SCRATCH/every-revision.yaml" --ignore-not-found -o name 2>&1 | sort -u)
[[ -z "$left" ]] || fail "uninstall left objects of the chart behind: $left"
pass "uninstall: none of the $(grep -c '^kind:' "$SCRATCH/every-revision.yaml") objects of the $REV revisions is left"
kinds=all,configmaps,secrets,serviceaccounts,roles,rolebindings,poddisruptionbudgets,servicemonitors,issuers,certificates
deadline=$((SECONDS + 60))
while :; do
  left=$(k get "$kinds" -A -l "app.kubernetes.io/instance=$REL" -o name 2>&1
         k get clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations \
           -l "app.kubernetes.io/instance=$REL" -o name 2>&1)
  [[ -z "$left" ]] && break
  ((SECONDS < deadline)) || fail "uninstall: objects labelled app.kubernetes.io/instance=$REL remain after 60 s: $left"
  sleep 1
done
pass "uninstall: nothing labelled app.kubernetes.io/instance=$REL remains (pods and ReplicaSets included)"
[[ -z "$(k -n "$NS" get secrets -l owner=helm,name="$REL" -o name)" ]] || fail "uninstall: helm's release records remain"
pass "uninstall: helm's release records are gone"
