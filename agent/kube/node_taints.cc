// Taints: read-modify-write of an atomic list under optimistic concurrency.
#include <functional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/json_fields.h"
#include "kube/operations.h"

namespace iogate {
namespace {

bool same_slot(const nlohmann::json& t, const std::string& key, const std::string& effect) {
  return string_at(t, "key") == key && (effect.empty() || string_at(t, "effect") == effect);
}

// The wanted taint list from the current one, or std::nullopt when it is already as wanted.
using Edit = std::function<std::optional<nlohmann::json>(const nlohmann::json& taints)>;

ApiStatus edit_taints(ApiClient& api, const std::string& node, const Edit& edit, const char* what) {
  const std::string path = "/api/v1/nodes/" + node;
  for (int round = 0;; ++round) {
    auto current = api.get(path);
    if (!current.ok()) return current.error();
    const nlohmann::json& taints = array_at(object_at(*current, "spec"), "taints");
    std::optional<nlohmann::json> wanted = edit(taints);
    if (!wanted) return Ok{};
    std::string rv = string_at(object_at(*current, "metadata"), "resourceVersion");
    // The resourceVersion makes the API refuse (409) if anyone wrote the node since our GET, so
    // a taint they added in between is not silently replaced by our stale list.
    nlohmann::json patch = {{"metadata", {{"resourceVersion", rv}}},
                            {"spec", {{"taints", wanted->empty() ? nlohmann::json(nullptr) : *wanted}}}};
    auto r = api.patch(path, PatchType::kMerge, patch);
    if (r.ok()) return Ok{};
    if (!r.error().conflict() || round >= kTaintConflictRetries) return r.error();
    spdlog::info("kube: node {} changed while {} its taint ({}); reading it again", node, what, r.error().message);
  }
}

}  // namespace

ApiStatus ensure_node_taint(ApiClient& api, const std::string& node, const Taint& taint) {
  if (taint.key.empty() || taint.effect.empty()) {
    return ApiError{"PATCH /api/v1/nodes/" + node, 0, "Invalid", "a taint needs a key and an effect"};
  }
  return edit_taints(
      api, node,
      [&](const nlohmann::json& taints) -> std::optional<nlohmann::json> {
        nlohmann::json out = nlohmann::json::array();
        bool present = false, changed = false;
        for (const nlohmann::json& t : taints) {
          if (same_slot(t, taint.key, taint.effect)) {
            if (present) {
              changed = true;
              continue;
            }  // a duplicate of ours: drop it
            present = true;
            if (string_at(t, "value") != taint.value) {
              nlohmann::json ours = t;
              if (taint.value.empty()) ours.erase("value");
              else ours["value"] = taint.value;
              out.push_back(ours);
              changed = true;
              continue;
            }
          }
          out.push_back(t);
        }
        if (!present) {
          nlohmann::json ours = {{"key", taint.key}, {"effect", taint.effect}};
          if (!taint.value.empty()) ours["value"] = taint.value;
          out.push_back(ours);
          changed = true;
        }
        if (!changed) return std::nullopt;
        return out;
      },
      "setting");
}

ApiStatus remove_node_taint(ApiClient& api, const std::string& node, const std::string& key,
                            const std::string& effect) {
  return edit_taints(
      api, node,
      [&](const nlohmann::json& taints) -> std::optional<nlohmann::json> {
        nlohmann::json out = nlohmann::json::array();
        for (const nlohmann::json& t : taints) {
          if (!same_slot(t, key, effect)) out.push_back(t);
        }
        if (out.size() == taints.size()) return std::nullopt;
        return out;
      },
      "removing");
}

}  // namespace iogate
