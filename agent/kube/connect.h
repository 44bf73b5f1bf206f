// Connecting to the Kubernetes API, one way for every mode (preflight, node, webhook) and every
// one-shot command (node prune, node check, webhook check): the cluster that --kubeconfig and
// --context name, else in-cluster, $KUBECONFIG or ~/.kube/config (resolve_kube_config); the line
// "api: <description>" logged; a client made, ready() checked, then its deadline and stop flag set.
// What differs between callers is a parameter: --no-api, whether no cluster is an error or no
// client, a reason not to connect to the cluster found, the deadline, the stop flag.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "base/result.h"
#include "kube/api_client.h"

namespace iogate {

struct ApiConnectOptions {
  std::string kubeconfig;  // --kubeconfig; "": in-cluster, else $KUBECONFIG, else ~/.kube/config
  std::string context;     // --context; "": the kubeconfig's current-context
  bool no_api = false;     // --no-api: no client, nothing read
  bool required = false;   // no cluster is a usage error (the one-shot commands), not "no client"
  // Not "": a cluster was found (its configuration errors are still reported) but not connected
  // to, for this reason: what the mode would write with is unknown (the node's name, the pod's).
  std::string decline;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();  // every request's
  const std::atomic<bool>* stop = nullptr;  // requests and retry waits end when it rises
};

// Why there is no client.
enum class ApiSkip { kNone, kNoApiFlag, kNotInCluster, kDeclined };

struct ApiConnection {
  std::unique_ptr<ApiClient> client;  // null: skipped
  ApiSkip skip = ApiSkip::kNone;
  std::string skipped;         // why, for "skipped: ..." in reports: "--no-api", not_in_cluster_reason, or decline
  std::string namespace_name;  // the cluster's namespace (in-cluster, the service account's); "" without one
};

// Errors: the kubeconfig's or --context's (usage errors: the user named them), the client's set-up
// (ready()), and, when `required`, no cluster.
Result<ApiConnection> connect_api(const ApiConnectOptions& options);

}  // namespace iogate
