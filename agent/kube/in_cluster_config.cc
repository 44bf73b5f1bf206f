// In-cluster configuration, as client-go's rest.InClusterConfig builds it.
#include <fmt/format.h>

#include "base/text_file.h"
#include "base/trim.h"
#include "kube/kube_config.h"

namespace iogate {

Result<KubeConfig> load_in_cluster_config(const KubeEnvironment& env) {
  if (env.service_host.empty()) return runtime_error("in-cluster: KUBERNETES_SERVICE_HOST is not set");
  if (env.service_port.empty()) {
    return runtime_error(
        fmt::format("in-cluster: KUBERNETES_SERVICE_HOST={} but KUBERNETES_SERVICE_PORT is not set", env.service_host));
  }
  KubeConfig config;
  config.in_cluster = true;
  // An IPv6 service address needs brackets in a URL (client-go: net.JoinHostPort).
  bool ipv6 = env.service_host.find(':') != std::string::npos;
  config.server = ipv6 ? fmt::format("https://[{}]:{}", env.service_host, env.service_port)
                       : fmt::format("https://{}:{}", env.service_host, env.service_port);
  const std::string& dir = env.service_account_dir;

  auto ca = read_text_file(dir + "/ca.crt");
  if (!ca.ok()) return runtime_error("in-cluster CA: " + ca.error().message);
  config.ca_pem = std::move(*ca);

  // Read once now so a missing token fails here, but keep only the path: the kubelet rotates it.
  config.token_file = dir + "/token";
  auto token = read_text_file(config.token_file);
  if (!token.ok()) return runtime_error("in-cluster token: " + token.error().message);
  if (trim_space(*token).empty()) return runtime_error("in-cluster token: " + config.token_file + " is empty");

  if (auto ns = read_text_file(dir + "/namespace"); ns.ok() && !trim_space(*ns).empty()) {
    config.namespace_name = std::string(trim_space(*ns));
  }
  config.description =
      fmt::format("in-cluster (KUBERNETES_SERVICE_HOST={}, service account {})", env.service_host, dir);
  return config;
}

}  // namespace iogate
