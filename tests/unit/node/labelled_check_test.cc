// `iogate node check` against the test API server: a labelled Node passes, none fails naming the
// nodeAgent values, after waiting as long as --wait says (on a fake sleep).
#include <doctest/doctest.h>

#include "kube/test_cluster.h"
#include "node/labelled_check.h"

namespace iogate {
namespace {

using nlohmann::json;
using testing::TestCluster;

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
  TestCluster c;
  c.seed(node("a", {{"kubernetes.io/hostname", "a"}}));
  ApiClient api(c.config, testing::fast_retry());
  std::vector<std::chrono::milliseconds> slept;
  NodeCheckOptions o;
  o.wait = std::chrono::seconds(12);
  o.sleep = [&](std::chrono::milliseconds d) { slept.push_back(d); };
  auto none = check_nodes_labelled(api, o);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("none of the 1 nodes carries an iogate.io/ label after 12 s") != std::string::npos);
  CHECK(none.error().message.find("nodeAgent.nodeSelector") != std::string::npos);
  CHECK(none.error().message.find("nodeAgent.tolerations") != std::string::npos);
  CHECK(slept == std::vector<std::chrono::milliseconds>{std::chrono::seconds(5), std::chrono::seconds(5),
                                                        std::chrono::seconds(2)});

  c.seed(node("b", {{"iogate.io/tier", "fast"}}));
  auto found = check_nodes_labelled(api, {});
  REQUIRE(found.ok());
  CHECK(*found == std::vector<std::string>{"node/b labelled: 1 iogate.io/ label, tier fast",
                                           "node: 1 of 2 nodes labelled by the node agent"});
}

}  // namespace
}  // namespace iogate
