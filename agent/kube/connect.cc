#include "kube/connect.h"

#include <spdlog/spdlog.h>

#include "kube/kube_config.h"

namespace iogate {

Result<ApiConnection> connect_api(const ApiConnectOptions& o) {
  ApiConnection out;
  if (o.no_api) {
    out.skip = ApiSkip::kNoApiFlag;
    out.skipped = "--no-api";
    return out;
  }
  auto resolved = resolve_kube_config(o.kubeconfig, o.context);
  if (!resolved.ok()) return resolved.error();
  if (!*resolved) {
    const std::string why = not_in_cluster_reason(KubeEnvironment::from_process());
    if (o.required) return usage_error("--kubeconfig: no cluster to talk to: " + why);
    out.skip = ApiSkip::kNotInCluster;
    out.skipped = why;
    return out;
  }
  KubeConfig& config = **resolved;
  out.namespace_name = config.namespace_name;
  if (!o.decline.empty()) {
    out.skip = ApiSkip::kDeclined;
    out.skipped = o.decline;
    return out;
  }
  spdlog::info("api: {}", config.description);
  out.client = std::make_unique<ApiClient>(std::move(config));
  if (Status ready = out.client->ready(); !ready.ok()) return ready.error();
  if (o.deadline != std::chrono::steady_clock::time_point::max()) out.client->set_deadline(o.deadline);
  if (o.stop) out.client->set_stop(o.stop);
  return out;
}

}  // namespace iogate
