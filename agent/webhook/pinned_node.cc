#include "webhook/pinned_node.h"

#include "base/json_fields.h"

namespace iogate {
namespace {

constexpr const char* kHostnameLabel = "kubernetes.io/hostname";

// The one value of an In requirement on `key` in `requirements`, or "".
std::string single_in(const nlohmann::json& requirements, const char* key) {
  if (!requirements.is_array()) return "";
  for (const nlohmann::json& r : requirements) {
    if (string_at(r, "key") != key || string_at(r, "operator") != "In") continue;
    const nlohmann::json& values = array_at(r, "values");
    if (values.size() == 1 && values[0].is_string()) return values[0].get<std::string>();
  }
  return "";
}

std::string affinity_node(const nlohmann::json& spec) {
  const nlohmann::json& required = object_at(object_at(object_at(spec, "affinity"), "nodeAffinity"),
                                             "requiredDuringSchedulingIgnoredDuringExecution");
  const nlohmann::json& terms = array_at(required, "nodeSelectorTerms");
  std::string node;
  for (const nlohmann::json& term : terms) {
    std::string n = single_in(array_at(term, "matchFields"), "metadata.name");
    if (n.empty()) n = single_in(array_at(term, "matchExpressions"), kHostnameLabel);
    if (n.empty() || (!node.empty() && n != node)) return "";
    node = n;
  }
  return node;
}

}  // namespace

std::optional<PinnedNode> pinned_node(const nlohmann::json& pod) {
  const nlohmann::json& spec = object_at(pod, "spec");
  if (std::string n = string_at(spec, "nodeName"); !n.empty()) return PinnedNode{n, "spec.nodeName"};
  if (std::string n = string_at(object_at(spec, "nodeSelector"), kHostnameLabel); !n.empty()) {
    return PinnedNode{n, std::string("nodeSelector ") + kHostnameLabel};
  }
  if (std::string n = affinity_node(spec); !n.empty()) return PinnedNode{n, "node affinity"};
  return std::nullopt;
}

}  // namespace iogate
