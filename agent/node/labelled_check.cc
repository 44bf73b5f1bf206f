#include "node/labelled_check.h"

#include <thread>

#include <fmt/format.h>

#include "base/json_fields.h"
#include "node/node_records.h"

namespace iogate {

std::vector<LabelledNode> labelled_nodes(const nlohmann::json& node_list) {
  std::vector<LabelledNode> out;
  for (const nlohmann::json& node : array_at(node_list, "items")) {
    const nlohmann::json& meta = object_at(node, "metadata");
    const nlohmann::json& labels = object_at(meta, "labels");
    LabelledNode n{string_at(meta, "name"), 0, string_at(labels, "iogate.io/tier")};
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      if (it.key().rfind(kNodeLabelPrefix, 0) == 0) ++n.labels;
    }
    if (n.labels > 0) out.push_back(n);
  }
  return out;
}

Result<std::vector<std::string>> check_nodes_labelled(ApiClient& api, const NodeCheckOptions& o) {
  using std::chrono::milliseconds;
  milliseconds waited{0};
  for (;;) {
    auto list = api.get("/api/v1/nodes");
    if (!list.ok()) return runtime_error("node: cannot list the Nodes: " + list.error().summary());
    std::vector<LabelledNode> found = labelled_nodes(*list);
    if (!found.empty()) {
      std::vector<std::string> lines;
      for (const LabelledNode& n : found) {
        lines.push_back(fmt::format("node/{} labelled: {} iogate.io/ label{}{}", n.name, n.labels,
                                    n.labels == 1 ? "" : "s", n.tier.empty() ? "" : ", tier " + n.tier));
      }
      lines.push_back(fmt::format("node: {} of {} nodes labelled by the node agent", found.size(),
                                  array_at(*list, "items").size()));
      return lines;
    }
    if (waited >= o.wait) {
      return runtime_error(fmt::format(
          "node: none of the {} nodes carries an iogate.io/ label{}: the node agent has labelled no node. Check that "
          "its pods run and are ready (kubectl get pods -l app.kubernetes.io/component=node-agent in the release's "
          "namespace; an agent labels its node after its first probe round) and the chart values nodeAgent.enabled, "
          "nodeAgent.nodeSelector, nodeAgent.tolerations, nodeAgent.affinity and nodeAgent.paths",
          array_at(*list, "items").size(),
          o.wait.count() > 0 ? fmt::format(" after {} s", o.wait.count() / 1000) : ""));
    }
    milliseconds step = std::min(o.poll, o.wait - waited);
    if (o.sleep) o.sleep(step);
    else std::this_thread::sleep_for(step);
    waited += step;
  }
}

}  // namespace iogate
