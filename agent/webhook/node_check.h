// A node's labels and taints, as the node agent left them, against what a pod demands: the
// judgement /validate makes for a pod pinned to that node.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "webhook/storage_demand.h"

namespace iogate {

inline constexpr const char* kBelowPolicyTaint = "iogate.io/storage-below-policy";

struct NodeFindings {
  // Reasons to refuse, one sentence each naming the node: IOPS below the floor (measured and
  // required, and the rule), fewer accelerators sustained than the pod's GPUs (the node's figure,
  // the rule, N and the demand), a class the policy refuses, the below-policy taint.
  std::vector<std::string> problems;
  // What could not be checked: labels missing (not measured yet) or unreadable.
  std::vector<std::string> unchecked;
};

// A node without a readable iogate.io/disk-class is held to the highest floor (and, per demand
// rule, the most accelerators) of the allowed classes; its class cannot be refused.
NodeFindings check_node(const StorageDemand& d, const std::string& node_name, const nlohmann::json& node);

// What a decision reads from a Node, and nothing else: a Node object holding metadata.name, the
// labels check_node reads (iogate.io/disk-class, iogate.io/randread-iops,
// iogate.io/accelerators.<rule>) and the taints it reads (iogate.io/storage-below-policy), so that
// check_node(d, n, decision_view(node)) judges as check_node(d, n, node). The webhook's node cache
// keeps this of every node: about 2 KB parsed, where the whole Node takes tens of kilobytes of
// text (its status: images, conditions, addresses; its managedFields) and several times that parsed.
nlohmann::json decision_view(const nlohmann::json& node);

}  // namespace iogate
