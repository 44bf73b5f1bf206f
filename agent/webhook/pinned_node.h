// The node a pod is bound to before the scheduler sees it. Such a pod skips the scheduler (or the
// scheduler has one choice), so node affinity cannot steer it and /validate judges the node.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace iogate {

struct PinnedNode {
  std::string name;
  std::string how;  // "spec.nodeName", "nodeSelector kubernetes.io/hostname", "node affinity"
};

// spec.nodeName; else spec.nodeSelector["kubernetes.io/hostname"] (looked up as the node's name,
// which it is unless a cloud names nodes otherwise); else a required node affinity every term of
// which names the same single node, by matchFields metadata.name In [n] (how the DaemonSet
// controller pins its pods) or kubernetes.io/hostname In [n].
std::optional<PinnedNode> pinned_node(const nlohmann::json& pod);

}  // namespace iogate
