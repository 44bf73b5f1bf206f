#include "webhook/storage_demand.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/json_fields.h"
#include "base/units.h"
#include "kube/operations.h"
#include "policy/evaluate.h"

namespace iogate {
namespace {

bool contains(const std::vector<DeviceClass>& list, DeviceClass c) {
  return std::find(list.begin(), list.end(), c) != list.end();
}

// The pod's labels that a rule's selector names: looked up by the policy's keys rather than all
// copied, since a pod may carry megabytes of them and only these are compared.
std::map<std::string, std::string> pod_labels(const Policy& p, const nlohmann::json& pod) {
  const nlohmann::json& all = object_at(object_at(pod, "metadata"), "labels");
  std::map<std::string, std::string> labels;
  for (const Rule& r : p.rules) {
    for (const auto& [key, wanted] : r.selector.pod_labels) {
      auto it = all.find(key);
      if (it != all.end() && it->is_string()) labels[key] = it->get<std::string>();
    }
  }
  return labels;
}

// The rule's IOPS floor for these GPUs (rule_iops_floor) with the text saying where it comes from.
std::pair<double, std::string> rule_floor(const Rule& r, const Policy& p, int gpus) {
  RuleIopsFloor f = rule_iops_floor(p, r, gpus);
  if (!(f.iops > 0)) return {0, ""};
  if (!f.from_bandwidth) return {f.iops, min_iops_text(r, gpus)};
  return {f.iops, fmt::format("{}, {} IOPS of {}", min_bandwidth_text(r, gpus), format_thousands(std::ceil(f.iops)),
                              format_size_compact(p.workload.block_size))};
}

}  // namespace

const ClassDemand& StorageDemand::for_class(DeviceClass c) const {
  for (const ClassDemand& d : classes) {
    if (d.device_class == c) return d;
  }
  static const ClassDemand none;
  return none;
}

std::vector<AcceleratorDemand> StorageDemand::allowed_accelerators() const {
  std::vector<AcceleratorDemand> out;
  for (const ClassDemand& c : classes) {
    if (!c.allowed) continue;
    for (const AcceleratorDemand& a : c.accelerators) {
      auto it = std::find_if(out.begin(), out.end(), [&](const AcceleratorDemand& o) { return o.rule == a.rule; });
      if (it == out.end()) out.push_back(a);
      else if (a.accelerators > it->accelerators) *it = a;
    }
  }
  return out;
}

long long StorageDemand::required_iops(DeviceClass c) const {
  // A label is an integer: a floor of 10,000.5 needs 10,001. Capped well inside int64 so that
  // "floor - 1" and Kubernetes' parsing of Gt's value stay defined for absurd policies.
  constexpr double kCap = 1e18;
  double floor = for_class(c).min_iops;
  if (!(floor > 0)) return 0;
  return static_cast<long long>(std::min(std::ceil(floor), kCap));
}

StorageDemand storage_demand(const Policy& p, const nlohmann::json& pod,
                             const std::vector<std::string>& extra_gpu_resources,
                             const std::optional<std::string>& dataset_path) {
  StorageDemand d;
  d.gpus = pod_gpu_count(pod, extra_gpu_resources);
  d.iops_labelled = p.workload.rw == RwMode::kRandRead;
  std::map<std::string, std::string> labels = pod_labels(p, pod);

  if (d.gpus > 0) {
    d.selected = true;
    d.selected_by = fmt::format("{} GPU{}", d.gpus, d.gpus == 1 ? "" : "s");
  } else {
    for (const Rule& r : p.rules) {
      if (r.selector.pod_labels.empty()) continue;
      RuleSelector labels_only;
      labels_only.pod_labels = r.selector.pod_labels;
      if (!selector_mismatch(labels_only, DeviceClass::kUnknown, "", labels)) {
        d.selected = true;
        d.selected_by = "the pod labels of rule " + r.name;
        break;
      }
    }
  }

  // What a node must sustain per demand rule: the pod's GPUs, the same for every class.
  std::vector<std::optional<AcceleratorDemand>> needs(p.rules.size());
  for (size_t k = 0; k < p.rules.size(); ++k) {
    const Rule& r = p.rules[k];
    if (!r.demand) continue;
    const int n = demand_accelerators(d.gpus);
    needs[k] = AcceleratorDemand{r.name, *r.demand, n, demand_text(*r.demand, n)};
  }

  for (DeviceClass c : all_device_classes()) {
    ClassDemand cd;
    cd.device_class = c;
    for (size_t k = 0; k < p.rules.size(); ++k) {
      const Rule& r = p.rules[k];
      RuleSelector selector = r.selector;
      if (!dataset_path) selector.paths.clear();
      if (selector_mismatch(selector, c, dataset_path.value_or(""), labels)) continue;
      if (!r.allowed_classes.empty()) {
        d.allow_list = true;
        if (!contains(r.allowed_classes, c) && c != DeviceClass::kMixed && cd.allowed) {
          cd.allowed = false;
          cd.refused_by = fmt::format("rule {} allows only [{}]", r.name, device_class_list(r.allowed_classes));
        }
      }
      if (contains(r.forbidden_classes, c) && cd.allowed) {
        cd.allowed = false;
        cd.refused_by = fmt::format("rule {} forbids {}", r.name, device_class_name(c));
      }
      if (needs[k]) cd.accelerators.push_back(*needs[k]);
      auto [iops, text] = rule_floor(r, p, d.gpus);
      if (iops > cd.min_iops) {
        cd.min_iops = iops;
        cd.floor_rule = r.name;
        cd.floor_text = text;
      }
    }
    d.classes.push_back(std::move(cd));
  }
  return d;
}

}  // namespace iogate
