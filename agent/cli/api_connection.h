// The API client of the one-shot cluster commands (`node prune`, `node check`, `webhook check`):
// --kubeconfig and --context as every mode reads them, and one deadline for all their requests and
// retries.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/program_options.hpp>

#include "base/result.h"
#include "kube/api_client.h"

namespace iogate {

// The client for add_kube_flags' --kubeconfig and --context (kube/connect.h), every request of
// it ending by now + `timeout`. Not in a cluster and no kubeconfig: a usage error saying so.
Result<std::unique_ptr<ApiClient>> one_shot_api(const boost::program_options::variables_map& flags,
                                                std::chrono::milliseconds timeout);

// --timeout: a duration within [1s, 1h].
Result<std::chrono::milliseconds> parse_timeout_flag(const std::string& text);

// A namespace name (a DNS label: lower-case letters, digits and '-', at most 63), or a usage
// error naming `flag`.
Status check_namespace_name(const std::string& name, const char* flag);

}  // namespace iogate
