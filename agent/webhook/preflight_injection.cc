#include "webhook/preflight_injection.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/json_fields.h"
#include "webhook/json_patch.h"

namespace iogate {
namespace {

constexpr const char* kDefaultDatasetPath = "/data";

const nlohmann::json* first_mount(const nlohmann::json& pod, const std::string& volume) {
  for (const nlohmann::json& c : array_at(object_at(pod, "spec"), "containers")) {
    for (const nlohmann::json& m : array_at(c, "volumeMounts")) {
      if (string_at(m, "name") == volume && !string_at(m, "mountPath").empty()) return &m;
    }
  }
  return nullptr;
}

bool has_named(const nlohmann::json& list, const std::string& name) {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(),
                     [&](const nlohmann::json& item) { return string_at(item, "name") == name; });
}

nlohmann::json field_env(const char* name, const char* field_path) {
  return {{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", field_path}}}}}};
}

}  // namespace

std::string preflight_dataset_path(const nlohmann::json& pod, const std::string& volume) {
  const nlohmann::json* m = first_mount(pod, volume);
  return m ? string_at(*m, "mountPath") : kDefaultDatasetPath;
}

Status add_preflight_container(const nlohmann::json& pod, const std::string& volume, const WebhookConfig& config,
                               nlohmann::json& ops) {
  const nlohmann::json& spec = object_at(pod, "spec");
  if (volume.empty()) return usage_error(fmt::format("annotation {} names no volume", kInjectPreflightAnnotation));
  if (!has_named(array_at(spec, "volumes"), volume)) {
    return usage_error(fmt::format("annotation {} names volume \"{}\", which the pod does not have",
                                   kInjectPreflightAnnotation, volume));
  }
  auto init = spec.find("initContainers");
  bool no_init = init == spec.end() || init->is_null();
  if (!no_init && !init->is_array()) {
    return usage_error(fmt::format("spec.initContainers is a {}, not an array", init->type_name()));
  }
  if (!no_init && has_named(*init, kPreflightContainerName)) return ok_status();

  nlohmann::json data_mount = {{"name", volume}, {"readOnly", true}};
  std::string path = kDefaultDatasetPath;
  if (const nlohmann::json* m = first_mount(pod, volume)) {
    path = string_at(*m, "mountPath");
    for (const char* key : {"subPath", "subPathExpr"}) {
      if (std::string v = string_at(*m, key); !v.empty()) data_mount[key] = v;
    }
  }
  data_mount["mountPath"] = path;
  std::string policy_dir = kPolicyMountPath;
  if (path == policy_dir || path == policy_dir + "/") {
    return usage_error(fmt::format("volume \"{}\" is mounted at {}, where the injected preflight's policy goes", volume,
                                   kPolicyMountPath));
  }

  nlohmann::json container = {
      {"name", kPreflightContainerName},
      {"image", config.preflight_image},
      {"args", {"preflight", path, "--policy", policy_dir + "/" + kPolicyFileName}},
      {"env",
       {field_env("POD_NAME", "metadata.name"),
        field_env("POD_NAMESPACE", "metadata.namespace"),
        field_env("NODE_NAME", "spec.nodeName"),
        {{"name", "CONTAINER_NAME"}, {"value", kPreflightContainerName}}}},
      {"volumeMounts", {data_mount, {{"name", kPolicyVolumeName}, {"mountPath", policy_dir}, {"readOnly", true}}}},
      {"securityContext",
       {{"readOnlyRootFilesystem", true},
        {"allowPrivilegeEscalation", false},
        {"capabilities", {{"drop", nlohmann::json::array({"ALL"})}}}}},
  };
  for (auto [key, list] :
       {std::pair{"requests", &config.preflight_requests}, std::pair{"limits", &config.preflight_limits}}) {
    if (!list->empty()) container["resources"][key] = *list;
  }
  if (no_init) {
    ops.push_back(patch_add(pointer({"spec", "initContainers"}), nlohmann::json::array({container})));
  } else {
    ops.push_back(patch_add(pointer({"spec", "initContainers", "0"}), container));
  }
  if (!has_named(array_at(spec, "volumes"), kPolicyVolumeName)) {
    nlohmann::json items = nlohmann::json::array({{{"key", config.policy_configmap_key}, {"path", kPolicyFileName}}});
    ops.push_back(
        patch_add(pointer({"spec", "volumes", "-"}),
                  {{"name", kPolicyVolumeName}, {"configMap", {{"name", config.policy_configmap}, {"items", items}}}}));
  }
  return ok_status();
}

}  // namespace iogate
