// Where the Kubernetes API server is and how to authenticate to it: in-cluster (the pod's service
// account) or a kubeconfig file, as client-go finds them.
//
// TLS is always verified against the configured CA: a kubeconfig without a CA, with an http://
// server or with `insecure-skip-tls-verify: true` is refused with an error naming the field.
// Certificates, keys and the CA are read into memory at load time; a token file is kept as a path
// because the kubelet rotates bound service-account tokens and the client must re-read it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kube/exec_plugin.h"

namespace iogate {

struct KubeConfig {
  std::string server;                      // "https://10.96.0.1:443", possibly with a path prefix
  std::string ca_pem;                      // the CA bundle the server certificate must chain to
  std::string token_file;                  // re-read by path (in-cluster: the kubelet swaps a ..data symlink)
  std::string token;                       // static bearer token (kubeconfig `token:`); never logged
  std::string client_cert_pem;             // client certificate (and chain), PEM
  std::string client_key_pem;              // its private key, PEM; never logged
  std::optional<ExecPlugin> exec;          // a credential plugin: it gives the token or certificate
  std::string namespace_name = "default";  // in-cluster namespace file, the context's, or "default"
  bool in_cluster = false;
  std::string description;  // where this came from, safe to log: no token, no key
};

// The process environment as a plain struct, so tests need not touch the real one.
struct KubeEnvironment {
  std::string service_host;    // KUBERNETES_SERVICE_HOST
  std::string service_port;    // KUBERNETES_SERVICE_PORT
  std::string kubeconfig_env;  // KUBECONFIG
  std::string home;            // HOME
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  static KubeEnvironment from_process();
};

// The pod's service account: https://SERVICE_HOST:SERVICE_PORT, DIR/ca.crt, DIR/token (by path),
// DIR/namespace (optional: "default" without it).
Result<KubeConfig> load_in_cluster_config(const KubeEnvironment& env);

// Kubeconfig files merged as client-go merges KUBECONFIG: for clusters, users and contexts the
// first file to define a name wins; the first non-empty current-context wins. Then `context` (the
// --context flag) or else current-context; its cluster (server, certificate-authority or
// certificate-authority-data), user (token, tokenFile, client-certificate(-data),
// client-key(-data), or an exec credential plugin) and namespace. Relative paths resolve against
// the directory of the file that defined the entry. Errors name the field and that file; a context
// that is not there names the context and every file read. auth-provider (gcp, azure), username
// and password are refused.
Result<KubeConfig> load_kubeconfigs(const std::vector<std::string>& paths, std::string_view context = "");
Result<KubeConfig> load_kubeconfig(const std::string& path, std::string_view context = "");

// In-cluster when KUBERNETES_SERVICE_HOST is set; else every existing file of KUBECONFIG (a
// colon-separated list; files that do not exist are skipped, as kubectl does), else
// ~/.kube/config. std::nullopt when there is none: not in a cluster, callers skip the API.
// `context` (--context) picks the kubeconfig's context; in-cluster, or with no kubeconfig at all,
// it is a usage error (a service account has no contexts).
Result<std::optional<KubeConfig>> discover_kube_config(const KubeEnvironment& env, std::string_view context = "");

// Why discover_kube_config found nothing, for "skipped: ..." in reports and logs. A token mounted
// without KUBERNETES_SERVICE_HOST (set by the kubelet in every pod) is said so: a pod spec or a
// `docker run` that lost the environment, not a machine outside any cluster.
std::string not_in_cluster_reason(const KubeEnvironment& env);

// What every mode's --kubeconfig and --context mean: that one file when --kubeconfig is given (its
// errors are the user's: usage errors; kubectl reads only that file too), else
// discover_kube_config from this process's environment.
Result<std::optional<KubeConfig>> resolve_kube_config(const std::string& kubeconfig_flag,
                                                      const std::string& context_flag = "");

}  // namespace iogate
