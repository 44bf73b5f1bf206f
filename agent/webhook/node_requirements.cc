#include "webhook/node_requirements.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "policy/demand_label.h"

namespace iogate {
namespace {

nlohmann::json class_names(const std::vector<DeviceClass>& classes) {
  nlohmann::json names = nlohmann::json::array();
  for (DeviceClass c : classes) names.push_back(std::string(device_class_name(c)));
  return names;
}

// What a class's nodes must show beyond their class: the IOPS floor and, per demand rule, the
// accelerators (ordered, so that classes asking the same compare equal).
struct Needs {
  long long iops = 0;
  std::vector<std::pair<std::string, int>> accelerators;
  bool operator<(const Needs& o) const { return std::tie(iops, accelerators) < std::tie(o.iops, o.accelerators); }
  bool any() const { return iops > 0 || !accelerators.empty(); }
};

Needs needs_of(const StorageDemand& d, const ClassDemand& c) {
  Needs n;
  n.iops = d.iops_labelled ? d.required_iops(c.device_class) : 0;
  for (const AcceleratorDemand& a : c.accelerators) n.accelerators.emplace_back(a.rule, a.accelerators);
  std::sort(n.accelerators.begin(), n.accelerators.end());
  return n;
}

}  // namespace

Result<std::vector<nlohmann::json>> node_requirements(const StorageDemand& d) {
  // Classes by what they need, in all_device_classes() order within each; std::map orders them.
  std::map<Needs, std::vector<DeviceClass>> groups;
  std::vector<std::string> refusals;
  for (const ClassDemand& c : d.classes) {
    if (!c.allowed) {
      refusals.push_back(c.refused_by);
      continue;
    }
    groups[needs_of(d, c)].push_back(c.device_class);
  }
  if (groups.empty()) {
    std::string why;
    for (size_t i = 0; i < refusals.size() && i < 3; ++i) why += (why.empty() ? "" : "; ") + refusals[i];
    return runtime_error("the policy allows no disk class, so no node can take the pod (" + why + ")");
  }

  std::vector<nlohmann::json> alternatives;
  for (const auto& [needs, classes] : groups) {
    const long long floor = needs.iops;
    nlohmann::json expressions = nlohmann::json::array();
    if (classes.size() != d.classes.size()) {
      std::vector<DeviceClass> others;
      for (const ClassDemand& c : d.classes) {
        if (std::find(classes.begin(), classes.end(), c.device_class) == classes.end())
          others.push_back(c.device_class);
      }
      // Only a node without the label (or with a class newer than this binary) tells In from NotIn.
      // A measured figure admits measured nodes only, so then the shorter list reads best.
      bool in = d.allow_list || (needs.any() && classes.size() <= others.size());
      expressions.push_back({{"key", kDiskClassLabel},
                             {"operator", in ? "In" : "NotIn"},
                             {"values", class_names(in ? classes : others)}});
    }
    if (floor > 0) {
      expressions.push_back({{"key", kRandreadIopsLabel},
                             {"operator", "Gt"},
                             {"values", nlohmann::json::array({std::to_string(floor - 1)})}});
    }
    for (const auto& [rule, accelerators] : needs.accelerators) {
      expressions.push_back({{"key", accelerators_label(rule)},
                             {"operator", "Gt"},
                             {"values", nlohmann::json::array({std::to_string(accelerators - 1)})}});
    }
    if (!expressions.empty()) alternatives.push_back(std::move(expressions));
  }
  return alternatives;
}

std::string requirements_text(const std::vector<nlohmann::json>& alternatives) {
  std::string out;
  for (const nlohmann::json& alternative : alternatives) {
    std::string term;
    for (const nlohmann::json& e : alternative) {
      std::string values;
      for (const nlohmann::json& v : e.value("values", nlohmann::json::array())) {
        values += (values.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
      }
      std::string op = e.value("operator", "");
      term += fmt::format("{}{} {} {}", term.empty() ? "" : ", ", e.value("key", ""), op,
                          op == "Gt" || op == "Lt" ? values : "[" + values + "]");
    }
    out += (out.empty() ? "" : " OR ") + term;
  }
  return out;
}

}  // namespace iogate
