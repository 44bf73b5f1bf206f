// A StorageDemand as node affinity: nodeSelectorRequirements on the node agent's labels.
//
// Allowed classes with the same IOPS floor form one alternative (a nodeSelectorTerm's
// matchExpressions, ANDed); alternatives are ORed. A policy without device_classes selectors has
// one floor for every class, hence one alternative:
//   iogate.io/disk-class In [allowed]      when an allowed_classes list applies: a closed list, a
//                                          node must name an allowed class
//   iogate.io/disk-class NotIn [refused]   otherwise, when some class is refused
//                                          (forbidden_classes): a node not labelled yet passes it
//   iogate.io/randread-iops Gt <floor - 1> when the floor is above 0 and the workload is randread
//   iogate.io/accelerators.<rule> Gt <N - 1>
//                                          per applicable demand rule, N the pod's GPUs (at least 1):
//                                          the node sustains N accelerators of the rule's workload
// Several floors or demands (rules selecting device classes) give one alternative per distinct set.
// An alternative with a measured figure matches measured nodes only, where In [classes] and NotIn
// [the rest] agree, so it names its classes by the shorter of the two lists (In on a tie).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "webhook/storage_demand.h"

namespace iogate {

inline constexpr const char* kDiskClassLabel = "iogate.io/disk-class";
inline constexpr const char* kRandreadIopsLabel = "iogate.io/randread-iops";

// Each element a JSON array of {"key","operator","values"}. Empty: the demand constrains no node.
// An error when the policy leaves no class allowed: no node could ever take the pod.
Result<std::vector<nlohmann::json>> node_requirements(const StorageDemand& d);

// "iogate.io/disk-class NotIn [hdd], iogate.io/randread-iops Gt 19999": for logs and annotations.
std::string requirements_text(const std::vector<nlohmann::json>& alternatives);

}  // namespace iogate
