// Finding the API server the way kubectl and client-go do.
#include "kube/kube_config.h"

#include <stdlib.h>

#include <algorithm>
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

Result<std::optional<KubeConfig>> discover_kube_config(const KubeEnvironment& env, std::string_view context) {
  auto wrap = [](Result<KubeConfig> r) -> Result<std::optional<KubeConfig>> {
    if (!r.ok()) return r.error();
    return std::optional<KubeConfig>(std::move(*r));
  };
  if (!env.service_host.empty()) {
    if (!context.empty()) {
      return usage_error(fmt::format(
          "--context {}: in-cluster (KUBERNETES_SERVICE_HOST is set) there are no contexts; give --kubeconfig "
          "with it, or drop --context",
          context));
    }
    return wrap(load_in_cluster_config(env));
  }

  std::vector<std::string> files;
  std::string looked;
  if (!env.kubeconfig_env.empty()) {
    // kubectl merges every file of the list that exists, each once, in order.
    looked = "any file of KUBECONFIG=" + env.kubeconfig_env;
    for (std::string_view list = env.kubeconfig_env; !list.empty();) {
      size_t colon = list.find(':');
      std::string entry(list.substr(0, colon));
      list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
      if (entry.empty() || !is_file(entry)) continue;
      if (std::find(files.begin(), files.end(), entry) == files.end()) files.push_back(entry);
    }
    if (files.empty()) spdlog::info("KUBECONFIG={} names no existing file", env.kubeconfig_env);
  } else if (!env.home.empty()) {
    std::string path = env.home + "/.kube/config";
    looked = path;
    if (is_file(path)) files.push_back(path);
  }
  if (!files.empty()) return wrap(load_kubeconfigs(files, context));
  if (!context.empty()) {
    return usage_error(fmt::format("--context {}: no kubeconfig to find it in ({})", context,
                                   looked.empty() ? "KUBECONFIG and HOME are unset" : looked + " does not exist"));
  }
  return std::optional<KubeConfig>();
}

Result<std::optional<KubeConfig>> resolve_kube_config(const std::string& kubeconfig_flag,
                                                      const std::string& context_flag) {
  if (kubeconfig_flag.empty()) return discover_kube_config(KubeEnvironment::from_process(), context_flag);
  auto loaded = load_kubeconfig(kubeconfig_flag, context_flag);
  if (!loaded.ok()) return loaded.error();
  return std::optional<KubeConfig>(std::move(*loaded));
}

}  // namespace iogate
