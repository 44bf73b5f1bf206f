// `iogate node check` against a scripted API: a labelled Node passes, none fails naming the
// nodeAgent values, after reading the list again as long as --wait says (on a fake sleep).
#include <doctest/doctest.h>

#include "kube/scripted_api.h"
#include "node/labelled_check.h"

namespace iogate {
namespace {

using nlohmann::json;

json node(const std::string& name, json labels) {
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", labels}}}};
}

TEST_CASE("labelled_nodes: a Node counts when it has an iogate.io/ label") {
  json list = {{"items",
                {node("a", {{"kubernetes.io/hostname", "a"}}),
                 node("b", {{"iogate.io/tier", "fast"}, {"iogate.io/disk-class", "nvme"}}),
                 node("c", {{"iogate.io.example/x", "1"}})}}};
  auto found = labelled_nodes(list);
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "b");
  CHECK(found[0].labels == 2);
  CHECK(found[0].tier == "fast");
}

TEST_CASE("check_nodes_labelled: pass with one line per labelled node; fail naming nodeAgent values") {
  testing::ScriptedClient s;
  json nodes = {{"kind", "NodeList"}, {"items", {node("a", {{"kubernetes.io/hostname", "a"}})}}};
  s.api->otherwise([&](const HttpRequest&) -> TransportResult { return testing::json_answer(nodes); });
  std::vector<std::chrono::milliseconds> slept;
  NodeCheckOptions o;
  o.wait = std::chrono::seconds(12);
  o.sleep = [&](std::chrono::milliseconds d) { slept.push_back(d); };
  auto none = check_nodes_labelled(*s.client, o);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("none of the 1 nodes carries an iogate.io/ label after 12 s") != std::string::npos);
  CHECK(none.error().message.find("nodeAgent.nodeSelector") != std::string::npos);
  CHECK(none.error().message.find("nodeAgent.tolerations") != std::string::npos);
  CHECK(slept == std::vector<std::chrono::milliseconds>{std::chrono::seconds(5), std::chrono::seconds(5),
                                                        std::chrono::seconds(2)});
  CHECK(s.api->lines() == std::vector<std::string>(4, "GET /api/v1/nodes"));  // once, and after each sleep

  nodes["items"].push_back(node("b", {{"iogate.io/tier", "fast"}}));
  auto found = check_nodes_labelled(*s.client, {});
  REQUIRE(found.ok());
  CHECK(*found == std::vector<std::string>{"node/b labelled: 1 iogate.io/ label, tier fast",
                                           "node: 1 of 2 nodes labelled by the node agent"});

  s.api->expect("GET /api/v1/nodes", testing::status_answer(403, "Forbidden", "nodes is forbidden"));
  auto refused = check_nodes_labelled(*s.client, {});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "node: cannot list the Nodes: GET /api/v1/nodes: 403 Forbidden: nodes is forbidden");
}

}  // namespace
}  // namespace iogate
