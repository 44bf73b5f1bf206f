#include "webhook/node_check.h"

#include <charconv>

#include <fmt/format.h>

#include "base/json_fields.h"
#include "base/units.h"
#include "policy/demand_label.h"
#include "webhook/node_requirements.h"

namespace iogate {
namespace {

std::optional<long long> integer_label(const std::string& text) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// Each demand rule's label against the pod's accelerators: the webhook's `Gt N-1`, said in words.
void check_accelerators(const std::vector<AcceleratorDemand>& wanted, const std::string& node_name,
                        const nlohmann::json& labels, NodeFindings& f) {
  for (const AcceleratorDemand& a : wanted) {
    const std::string key = accelerators_label(a.rule);
    auto it = labels.find(key);
    if (it == labels.end()) {
      f.unchecked.push_back(
          fmt::format("node {} has no {} label yet (iogate node has not measured it)", node_name, key));
      continue;
    }
    std::optional<long long> sustained = it->is_string() ? integer_label(it->get<std::string>()) : std::nullopt;
    if (!sustained) {
      f.unchecked.push_back(fmt::format("node {} has {}={}, not an integer", node_name, key,
                                        it->is_string() ? it->get<std::string>() : it->dump()));
      continue;
    }
    if (*sustained < a.accelerators) {
      f.problems.push_back(fmt::format(
          "node {} sustains {} accelerator{} of rule {} ({}={}), fewer than the {} the pod requests ({}: {})",
          node_name, *sustained, *sustained == 1 ? "" : "s", a.rule, key, *sustained, a.accelerators,
          demand_summary(a.demand), a.text));
    }
  }
}

}  // namespace

nlohmann::json decision_view(const nlohmann::json& node) {
  const nlohmann::json& metadata = object_at(node, "metadata");
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [key, value] : object_at(metadata, "labels").items()) {
    if (key == kDiskClassLabel || key == kRandreadIopsLabel || !accelerators_label_rule(key).empty()) {
      labels[key] = value;
    }
  }
  nlohmann::json taints = nlohmann::json::array();
  for (const nlohmann::json& taint : array_at(object_at(node, "spec"), "taints")) {
    if (string_at(taint, "key") == kBelowPolicyTaint) {
      taints.push_back({{"key", kBelowPolicyTaint}, {"effect", string_at(taint, "effect")}});
    }
  }
  nlohmann::json view = {{"metadata", {{"name", string_at(metadata, "name")}, {"labels", std::move(labels)}}}};
  if (!taints.empty()) view["spec"] = {{"taints", std::move(taints)}};
  return view;
}

NodeFindings check_node(const StorageDemand& d, const std::string& node_name, const nlohmann::json& node) {
  NodeFindings f;
  const nlohmann::json& labels = object_at(object_at(node, "metadata"), "labels");

  for (const nlohmann::json& taint : array_at(object_at(node, "spec"), "taints")) {
    if (string_at(taint, "key") != kBelowPolicyTaint) continue;
    f.problems.push_back(fmt::format("node {} is tainted {}:{}: iogate node found its storage below policy", node_name,
                                     kBelowPolicyTaint, string_at(taint, "effect")));
    break;
  }

  // The floor and class check of the node's class; unknown class: the strictest allowed floor.
  std::string class_label = string_at(labels, kDiskClassLabel);
  std::optional<DeviceClass> cls = device_class_from_name(class_label);
  const ClassDemand* demand = nullptr;
  if (cls) {
    demand = &d.for_class(*cls);
    if (!demand->allowed) {
      f.problems.push_back(fmt::format("node {} has disk class {} ({}): {}", node_name, class_label, kDiskClassLabel,
                                       demand->refused_by));
    }
  } else {
    for (const ClassDemand& c : d.classes) {
      if (c.allowed && (demand == nullptr || c.min_iops > demand->min_iops)) demand = &c;
    }
    if (d.allow_list) {
      f.unchecked.push_back(class_label.empty() ? fmt::format("node {} has no {} label yet", node_name, kDiskClassLabel)
                                                : fmt::format("node {} has {}={}, a class iogate does not know",
                                                              node_name, kDiskClassLabel, class_label));
    }
  }
  if (demand == nullptr) return f;
  check_accelerators(cls ? demand->accelerators : d.allowed_accelerators(), node_name, labels, f);
  if (!d.iops_labelled) return f;
  long long required = d.required_iops(demand->device_class);
  if (required <= 0) return f;

  auto it = labels.find(kRandreadIopsLabel);
  if (it == labels.end()) {
    f.unchecked.push_back(
        fmt::format("node {} has no {} label yet (iogate node has not measured it)", node_name, kRandreadIopsLabel));
    return f;
  }
  std::optional<long long> measured = it->is_string() ? integer_label(it->get<std::string>()) : std::nullopt;
  if (!measured) {
    f.unchecked.push_back(fmt::format("node {} has {}={}, not an integer", node_name, kRandreadIopsLabel,
                                      it->is_string() ? it->get<std::string>() : it->dump()));
    return f;
  }
  if (*measured < required) {
    f.problems.push_back(fmt::format("node {} measured {} randread IOPS ({}), below the {} the pod needs (rule {}: {})",
                                     node_name, format_thousands(double(*measured)), kRandreadIopsLabel,
                                     format_thousands(double(required)), demand->floor_rule, demand->floor_text));
  }
  return f;
}

}  // namespace iogate
