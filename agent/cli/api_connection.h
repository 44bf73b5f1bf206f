// The API client of the one-shot cluster commands (`node prune`, `node check`, `webhook check`):
// --kubeconfig as every mode reads it, and one deadline for all their requests and retries.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/result.h"
#include "kube/api_client.h"

namespace iogate {

// The client for --kubeconfig (or in-cluster, $KUBECONFIG, ~/.kube/config), every request of it
// ending by now + `timeout`. Not in a cluster and no kubeconfig: a usage error saying so.
Result<std::unique_ptr<ApiClient>> connect_api(const std::string& kubeconfig_flag, std::chrono::milliseconds timeout);

// --timeout: a duration within [1s, 1h].
Result<std::chrono::milliseconds> parse_timeout_flag(const std::string& text);

// A namespace name (a DNS label: lower-case letters, digits and '-', at most 63), or a usage
// error naming `flag`.
Status check_namespace_name(const std::string& name, const char* flag);

}  // namespace iogate
