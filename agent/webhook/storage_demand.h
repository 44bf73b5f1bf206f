// What a pod asks of a node's storage under a policy, before it runs: per device class, whether a
// node of that class may take it, the randread IOPS the node must have measured, and for each
// demand rule the accelerators it must sustain. The terms are those of the node agent's labels
// (iogate.io/disk-class, iogate.io/randread-iops, iogate.io/accelerators.<rule>), which say what
// the node's best data path is and does; preflight later judges the volume itself, by the same
// demand computation (policy/demand.h).
//
// A rule applies to a class when its selector matches the pod's labels (as in preflight), lists
// that class or no class, and matches the dataset path when one is known; when none is (no
// preflight injection), rules with path selectors apply: the strict reading, since the node's
// labels speak of the path pods are expected to use. A `mixed` node (a volume over leaves of
// several classes) is not refused by allowed_classes at admission: its leaves are unknown here,
// and the node agent, which knows them, taints a node whose leaves the policy refuses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/device_class.h"
#include "policy/demand.h"
#include "policy/policy.h"

namespace iogate {

// A demand rule's requirement: the node must sustain `accelerators` (the pod's GPUs, at least one:
// policy/demand.h's demand_accelerators) by its label iogate.io/accelerators.<rule>.
struct AcceleratorDemand {
  std::string rule;
  Demand demand;
  int accelerators = 0;
  std::string text;  // "AU >= 0.90 at 20,000 samples/s (2,500/GPU x 8 GPUs)"
};

struct ClassDemand {
  DeviceClass device_class = DeviceClass::kUnknown;
  bool allowed = true;
  std::string refused_by;                       // "rule gpu-feed forbids hdd", when not allowed
  double min_iops = 0;                          // the floor on iogate.io/randread-iops; 0: none
  std::string floor_rule;                       // the rule setting it
  std::string floor_text;                       // ">= 20,000 IOPS (max of min_iops 10,000 and 2,500/GPU x 4 GPUs)"
  std::vector<AcceleratorDemand> accelerators;  // the applicable demand rules, in the policy's order
};

struct StorageDemand {
  int gpus = 0;
  // Whether the webhook acts on the pod at all: it requests GPUs, or a rule selects it by labels.
  bool selected = false;
  std::string selected_by;  // "4 GPUs", "pod labels of rule vision"
  // The workload is randread, so the node agent writes iogate.io/randread-iops; otherwise the
  // floors cannot be compared with any label and only classes count.
  bool iops_labelled = false;
  // Some applicable rule has allowed_classes: a closed list, so nodes must name their class.
  bool allow_list = false;
  std::vector<ClassDemand> classes;  // one per class, in all_device_classes() order

  const ClassDemand& for_class(DeviceClass c) const;
  // The demand rules of the allowed classes, one per rule (the most accelerators any class asks),
  // in the policy's order: what a node of unknown class is held to, and what /mutate explains.
  std::vector<AcceleratorDemand> allowed_accelerators() const;
  // The floor nodes of class c must meet, as an integer label value must: 0 when none applies.
  long long required_iops(DeviceClass c) const;
};

// `dataset_path`: the path preflight will probe, when known (the injected preflight's mountPath).
StorageDemand storage_demand(const Policy& p, const nlohmann::json& pod,
                             const std::vector<std::string>& extra_gpu_resources,
                             const std::optional<std::string>& dataset_path);

}  // namespace iogate
