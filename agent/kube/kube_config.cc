// Finding the API server the way kubectl and client-go do, minus the merging of many kubeconfigs.
#include "kube/kube_config.h"

#include <stdlib.h>

#include <filesystem>

#include <spdlog/spdlog.h>

namespace iogate {
namespace {

std::string env_or_empty(const char* name) {
  const char* v = getenv(name);
  return v ? v : "";
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

KubeEnvironment KubeEnvironment::from_process() {
  KubeEnvironment env;
  env.service_host = env_or_empty("KUBERNETES_SERVICE_HOST");
  env.service_port = env_or_empty("KUBERNETES_SERVICE_PORT");
  env.kubeconfig_env = env_or_empty("KUBECONFIG");
  env.home = env_or_empty("HOME");
  return env;
}

std::string not_in_cluster_reason(const KubeEnvironment& env) {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(env.service_account_dir) / "token", ec)) {
    return fmt::format(
        "not in a cluster: a service-account token is mounted at {} but KUBERNETES_SERVICE_HOST is "
        "unset, and there is no kubeconfig",
        env.service_account_dir);
  }
  return "not in a cluster (no service account, no kubeconfig)";
}

Result<std::optional<KubeConfig>> discover_kube_config(const KubeEnvironment& env) {
  auto wrap = [](Result<KubeConfig> r) -> Result<std::optional<KubeConfig>> {
    if (!r.ok()) return r.error();
    return std::optional<KubeConfig>(std::move(*r));
  };
  if (!env.service_host.empty()) return wrap(load_in_cluster_config(env));

  if (!env.kubeconfig_env.empty()) {
    // kubectl merges every file of the list; iogate reads the first that exists, which is where
    // current-context and the credentials live in all but hand-split setups.
    std::string_view list = env.kubeconfig_env;
    size_t files = 0;
    std::string chosen;
    while (!list.empty()) {
      size_t colon = list.find(':');
      std::string entry(list.substr(0, colon));
      list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
      if (entry.empty()) continue;
      ++files;
      if (chosen.empty() && is_file(entry)) chosen = entry;
    }
    if (files > 1 && !chosen.empty()) {
      spdlog::info("KUBECONFIG lists {} files; reading only the first that exists, {}", files, chosen);
    }
    if (!chosen.empty()) return wrap(load_kubeconfig(chosen));
    spdlog::info("KUBECONFIG={} names no existing file", env.kubeconfig_env);
    return std::optional<KubeConfig>();
  }

  if (!env.home.empty()) {
    std::string path = env.home + "/.kube/config";
    if (is_file(path)) return wrap(load_kubeconfig(path));
  }
  return std::optional<KubeConfig>();
}

Result<std::optional<KubeConfig>> resolve_kube_config(const std::string& kubeconfig_flag) {
  if (kubeconfig_flag.empty()) return discover_kube_config(KubeEnvironment::from_process());
  auto loaded = load_kubeconfig(kubeconfig_flag);
  if (!loaded.ok()) return loaded.error();
  return std::optional<KubeConfig>(std::move(*loaded));
}

}  // namespace iogate
