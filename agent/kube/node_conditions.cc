// Node conditions through nodes/status with a strategic merge patch.
#include "base/json_fields.h"
#include "kube/operations.h"

namespace iogate {

ApiStatus set_node_condition(ApiClient& api, const std::string& node, const NodeCondition& condition) {
  const std::string now = rfc3339_seconds(std::chrono::system_clock::now());
  std::string transition = now;
  // Keep lastTransitionTime when the status is unchanged: it says since when the node has been
  // in this state, which is what alerting and `kubectl describe node` read.
  auto current = get_node(api, node);
  if (!current.ok()) return current.error();
  for (const nlohmann::json& c : array_at(object_at(*current, "status"), "conditions")) {
    if (string_at(c, "type") == condition.type && string_at(c, "status") == condition.status) {
      std::string previous = string_at(c, "lastTransitionTime");
      if (!previous.empty()) transition = previous;
    }
  }
  nlohmann::json entry = {{"type", condition.type},     {"status", condition.status},
                          {"reason", condition.reason}, {"message", condition.message},
                          {"lastHeartbeatTime", now},   {"lastTransitionTime", transition}};
  // Strategic merge: the conditions list's patch strategy is merge with key "type", so only the
  // entry of this type is replaced. (A merge patch would replace the list: the kubelet's Ready
  // condition would be gone until its next heartbeat.)
  nlohmann::json patch = {{"status", {{"conditions", nlohmann::json::array({entry})}}}};
  auto r = api.patch("/api/v1/nodes/" + node + "/status", PatchType::kStrategicMerge, patch);
  if (!r.ok()) return r.error();
  return Ok{};
}

}  // namespace iogate
