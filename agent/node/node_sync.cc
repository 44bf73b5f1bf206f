#include "node/node_sync.h"

#include <spdlog/spdlog.h>

#include "base/json_fields.h"
#include "kube/operations.h"

namespace iogate {
namespace {

std::string condition_status(const nlohmann::json& node, const std::string& type) {
  for (const nlohmann::json& c : array_at(object_at(node, "status"), "conditions")) {
    if (string_at(c, "type") == type) return string_at(c, "status");
  }
  return "";
}

// Our taint key with effects other than `keep` (a changed taint_effect leaves the old one behind).
std::vector<std::string> stale_taint_effects(const nlohmann::json& node, const std::string& keep) {
  std::vector<std::string> out;
  for (const nlohmann::json& t : array_at(object_at(node, "spec"), "taints")) {
    if (string_at(t, "key") == kBelowPolicyTaintKey && string_at(t, "effect") != keep)
      out.push_back(string_at(t, "effect"));
  }
  return out;
}

bool has_taint(const nlohmann::json& node, const Taint& taint) {
  for (const nlohmann::json& t : array_at(object_at(node, "spec"), "taints")) {
    if (string_at(t, "key") == taint.key && string_at(t, "effect") == taint.effect &&
        string_at(t, "value") == taint.value)
      return true;
  }
  return false;
}

}  // namespace

Result<NodeSyncResult> sync_node(ApiClient& api, const NodeSyncRequest& r) {
  const Policy& p = *r.policy;
  const std::vector<PathOutcome>& outcomes = *r.outcomes;
  auto node = get_node(api, r.node);
  if (!node.ok()) return node.error().to_error();
  NodeSyncResult out;
  NodeGpus gpus = node_gpu_count(*node);
  if (r.gpus_override) gpus = {*r.gpus_override, "--gpus"};
  out.judgement = judge_node(p, outcomes, gpus.count, gpus.from);
  const NodeJudgement& j = out.judgement;
  if (!j.best) return out;  // nothing measured: nothing to say yet, and nothing to undo

  MetadataChanges labels = node_labels(j, outcomes, object_at(object_at(*node, "metadata"), "labels"));
  const nlohmann::json& current = object_at(object_at(*node, "metadata"), "labels");
  for (const auto& [key, value] : labels) {
    auto it = current.find(key);
    bool same = it != current.end() ? (value && it->is_string() && it->get<std::string>() == *value) : !value;
    out.labels_changed += same ? 0 : 1;
  }
  if (out.labels_changed > 0) {
    if (ApiStatus s = patch_node_labels(api, r.node, labels); !s.ok()) return s.error().to_error();
  }
  if (ApiStatus s = patch_node_annotations(api, r.node, node_annotations(j, p, outcomes)); !s.ok()) {
    return s.error().to_error();
  }

  std::optional<Taint> taint = wanted_taint(j, p, p.node.taint_effect);
  for (const std::string& effect : stale_taint_effects(*node, taint ? taint->effect : "")) {
    if (ApiStatus s = remove_node_taint(api, r.node, kBelowPolicyTaintKey, effect); !s.ok())
      return s.error().to_error();
    out.taint = "removed";
  }
  if (taint) {
    out.taint = has_taint(*node, *taint) ? "kept" : "added";
    if (ApiStatus s = ensure_node_taint(api, r.node, *taint); !s.ok()) return s.error().to_error();
  } else if (out.taint.empty()) {
    out.taint = "none";
  }

  out.previous_status = condition_status(*node, kBelowPolicyCondition);
  if (auto condition = node_condition(j, p, outcomes)) {
    if (ApiStatus s = set_node_condition(api, r.node, *condition); !s.ok()) return s.error().to_error();
    if (condition->status != out.previous_status) {
      EventText text = node_event_text(j, p, outcomes);
      EventSpec event = event_about("Node", "", r.node, *node, text);
      event.action = "Probe";
      event.reporting_controller = "iogate.io/node";
      event.reporting_instance = "iogate-node-" + r.node;
      out.event = text;
      // Events are best effort, as the kubelet's are: the condition carries the state.
      if (ApiStatus s = create_event(api, event); !s.ok()) {
        out.event_error = s.error().summary();
        spdlog::warn("event {} on node {} not posted: {}", text.reason, r.node, out.event_error);
      }
    }
  }
  return out;
}

}  // namespace iogate
