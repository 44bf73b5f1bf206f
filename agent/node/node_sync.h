// Writing the node agent's state to its Node: labels and annotations (merge patches: nobody
// else's keys are touched), the below-policy taint (read-modify-write with the resourceVersion,
// see kube/operations.h), the StorageBelowPolicy condition (strategic merge patch on nodes/status)
// and an Event when the verdict changes.
//
// Every sync starts from a fresh GET of the node: the GPUs to scale thresholds by come from it,
// and "the verdict changed" means "differs from the condition the node carries now", so neither a
// restart of the agent nor an API outage between two probes makes it post an Event twice or flap
// the condition. All writes are idempotent: after a failure the whole sync is simply redone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kube/api_client.h"
#include "node/node_records.h"
#include "policy/policy.h"

namespace iogate {

struct NodeSyncRequest {
  std::string node;
  const Policy* policy = nullptr;
  const std::vector<PathOutcome>* outcomes = nullptr;
  std::optional<int> gpus_override;  // --gpus
};

struct NodeSyncResult {
  NodeJudgement judgement;         // with the node's GPUs
  std::string previous_status;     // the condition's status before ("" when absent)
  std::optional<EventText> event;  // posted (or tried: see event_error)
  std::string event_error;
  int labels_changed = 0;  // keys set or removed
  std::string taint;       // "added", "removed", "kept", "none"
};

Result<NodeSyncResult> sync_node(ApiClient& api, const NodeSyncRequest& request);

}  // namespace iogate
