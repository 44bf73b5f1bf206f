// `iogate node check` (the chart's `helm test`): proves that the node agent has labelled at least
// one Node. The webhook requires GPU pods to land on nodes carrying the agent's labels, so a
// cluster where no node has them admits GPU pods that then find no node (enforce mode). A Node
// counts when it has any label whose key starts with iogate.io/.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "kube/api_client.h"

namespace iogate {

// The names of the Nodes in a NodeList's items that carry an iogate.io/ label, and each one's
// count of such labels (pure).
struct LabelledNode {
  std::string name;
  int labels = 0;
  std::string tier;  // iogate.io/tier, "" when absent
};
std::vector<LabelledNode> labelled_nodes(const nlohmann::json& node_list);

struct NodeCheckOptions {
  // How long to wait for a first labelled Node (an agent's first probe round takes about a minute
  // after it starts), reading the Nodes every `poll`. 0: one read.
  std::chrono::milliseconds wait{0};
  std::chrono::milliseconds poll{std::chrono::seconds(5)};
  std::function<void(std::chrono::milliseconds)> sleep;  // empty: std::this_thread::sleep_for
};

// Lists the Nodes until one is labelled or `wait` has passed. The lines to print on a pass; an
// error naming the nodeAgent values to check when none is, or the API's error.
Result<std::vector<std::string>> check_nodes_labelled(ApiClient& api, const NodeCheckOptions& options);

}  // namespace iogate
