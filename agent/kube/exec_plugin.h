// Kubeconfig exec credential plugins (client.authentication.k8s.io v1 and v1beta1), as client-go
// runs them: `aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin get-token`.
//
// The plugin runs non-interactively (stdin is /dev/null; interactiveMode Always is refused when the
// kubeconfig is read) with the process's environment plus its `env`, and KUBERNETES_EXEC_INFO
// holding an ExecCredential whose spec says interactive: false and, when provideClusterInfo is
// set, the cluster's server and CA. It prints an ExecCredential whose status holds a token or a
// client certificate and key, and maybe an expirationTimestamp. Errors name the user entry and the
// command, and quote the plugin's first line of stderr; never what it printed on stdout.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace iogate {

// How long a plugin may run before it is killed: a cloud CLI fetching a token takes a second or
// two, one stuck on a login prompt it cannot show would otherwise hang the agent.
inline constexpr std::chrono::seconds kExecPluginTimeout{30};

struct ExecPlugin {
  std::string api_version;  // "client.authentication.k8s.io/v1" or ".../v1beta1"
  std::string command;      // resolved against the kubeconfig's directory when it holds a '/'
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the process's environment
  std::string install_hint;                              // shown when the command is not found
  bool provide_cluster_info = false;
  std::string user;  // the users[] entry, for messages: "users[eks-admin] (kubeconfig /root/.kube/config)"
  std::chrono::milliseconds timeout = kExecPluginTimeout;
};

// What the plugin answered. Secrets: never logged.
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiry;  // none: good until a 401
};

// The cluster as KUBERNETES_EXEC_INFO's spec.cluster gives it (provideClusterInfo).
struct ExecCluster {
  std::string server;
  std::string ca_pem;
};

// KUBERNETES_EXEC_INFO's value for this plugin.
std::string exec_info_json(const ExecPlugin& plugin, const ExecCluster& cluster);

// The plugin's stdout read as client-go reads it: an ExecCredential of the plugin's apiVersion
// with a status holding a token, or a certificate and its key. The error says what is wrong
// without quoting the output (it may hold a token).
Result<ExecCredential> parse_exec_credential(std::string_view output, const std::string& api_version);

// Runs the plugin once, bounded by plugin.timeout. Runtime errors, one line each.
Result<ExecCredential> run_exec_plugin(const ExecPlugin& plugin, const ExecCluster& cluster);

}  // namespace iogate
