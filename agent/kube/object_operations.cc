// Reads and metadata merge patches of pods, PVCs and nodes.
#include "kube/operations.h"

namespace iogate {
namespace {

std::string pod_path(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + ns + "/pods/" + name;
}
std::string pvc_path(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + name;
}
std::string node_path(const std::string& name) { return "/api/v1/nodes/" + name; }

// {"metadata":{"<field>":{"k":"v","gone":null}}}: RFC 7386 sets the given keys, deletes the null
// ones and leaves every other key of the map alone.
nlohmann::json metadata_patch(const char* field, const MetadataChanges& changes) {
  nlohmann::json map = nlohmann::json::object();
  for (const auto& [key, value] : changes) map[key] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  return {{"metadata", {{field, map}}}};
}

// No resourceVersion in the patch: a 409 is the server's contention, not a stale read, and the
// same patch is retried (api_client.h, OnConflict).
ApiStatus merge_metadata(ApiClient& api, const std::string& path, const char* field, const MetadataChanges& changes) {
  if (changes.empty()) return Ok{};
  auto r = api.patch(path, PatchType::kMerge, metadata_patch(field, changes), OnConflict::kRetry);
  if (!r.ok()) return r.error();
  return Ok{};
}

}  // namespace

ApiResult<nlohmann::json> get_pod(ApiClient& api, const std::string& ns, const std::string& name) {
  return api.get(pod_path(ns, name));
}

ApiStatus patch_pod_annotations(ApiClient& api, const std::string& ns, const std::string& name,
                                const MetadataChanges& annotations) {
  return merge_metadata(api, pod_path(ns, name), "annotations", annotations);
}

ApiResult<nlohmann::json> get_pvc(ApiClient& api, const std::string& ns, const std::string& name) {
  return api.get(pvc_path(ns, name));
}

ApiStatus patch_pvc_annotations(ApiClient& api, const std::string& ns, const std::string& name,
                                const MetadataChanges& annotations) {
  return merge_metadata(api, pvc_path(ns, name), "annotations", annotations);
}

ApiResult<nlohmann::json> get_node(ApiClient& api, const std::string& name) { return api.get(node_path(name)); }

ApiStatus patch_node_labels(ApiClient& api, const std::string& node, const MetadataChanges& labels) {
  return merge_metadata(api, node_path(node), "labels", labels);
}

ApiStatus patch_node_annotations(ApiClient& api, const std::string& node, const MetadataChanges& annotations) {
  return merge_metadata(api, node_path(node), "annotations", annotations);
}

}  // namespace iogate
