# The objects the chart (charts/iogate) makes, part by part, as "Kind namespace/name" lines
# ("-" for a cluster-scoped object), for a release whose fullname and namespace are given:
# deploy.chart expects them in each rendering, e2e.chart_install in the cluster after each
# install and upgrade.
node_objects() { # fullname namespace
  cat <<EOF
ServiceAccount $2/$1-node
ClusterRole -/$1-node
ClusterRoleBinding -/$1-node
DaemonSet $2/$1-node
Service $2/$1-node-metrics
ValidatingAdmissionPolicy -/$1-node
ValidatingAdmissionPolicyBinding -/$1-node
EOF
}
webhook_objects() { # fullname namespace
  cat <<EOF
ServiceAccount $2/$1-webhook
ClusterRole -/$1-webhook
ClusterRoleBinding -/$1-webhook
Deployment $2/$1-webhook
PodDisruptionBudget $2/$1-webhook
Service $2/$1-webhook
Service $2/$1-webhook-metrics
MutatingWebhookConfiguration -/$1-webhook
ValidatingWebhookConfiguration -/$1-webhook
EOF
}
preflight_objects() { # fullname namespace...
  local f=$1 ns
  shift
  for ns in "$@"; do
    printf '%s\n' "ServiceAccount $ns/$f-preflight" "Role $ns/$f-preflight" "RoleBinding $ns/$f-preflight"
  done
  # The least-reach policy: cluster-scoped, one for every preflight namespace.
  printf '%s\n' "ValidatingAdmissionPolicy -/$f-preflight" "ValidatingAdmissionPolicyBinding -/$f-preflight"
}
# The post-delete cleanup (hooks): its account, RBAC, least-reach policy and Job; a Role and
# binding on PVCs in each namespace given after the release's.
cleanup_objects() { # fullname namespace pvc-namespace...
  local f=$1 release_ns=$2 ns
  shift 2
  printf '%s\n' "ServiceAccount $release_ns/$f-cleanup" "ClusterRole -/$f-cleanup" "ClusterRoleBinding -/$f-cleanup" \
    "ValidatingAdmissionPolicy -/$f-cleanup" "ValidatingAdmissionPolicyBinding -/$f-cleanup" "Job $release_ns/$f-cleanup"
  for ns in "$@"; do printf '%s\n' "Role $ns/$f-cleanup-pvcs" "RoleBinding $ns/$f-cleanup-pvcs"; done
}
# The helm test hooks: the account, and per check its RBAC and pod (node: nodes list; webhook:
# pods create in the test namespace, dry runs only by its policy).
test_objects() { # fullname namespace test-namespace node|webhook...
  local f=$1 ns=$2 tns=$3 part
  shift 3
  echo "ServiceAccount $ns/$f-test"
  for part in "$@"; do
    case $part in
      node) printf '%s\n' "ClusterRole -/$f-test" "ClusterRoleBinding -/$f-test" "Pod $ns/$f-test-node" ;;
      webhook) printf '%s\n' "Role $tns/$f-test-pods" "RoleBinding $tns/$f-test-pods" "ValidatingAdmissionPolicy -/$f-test" \
        "ValidatingAdmissionPolicyBinding -/$f-test" "Pod $ns/$f-test-webhook" ;;
    esac
  done
}
policy_objects() { # fullname namespace...
  local f=$1 ns
  shift
  for ns in "$@"; do echo "ConfigMap $ns/$f-policy"; done
}

