// `iogate node prune` against the test API server over real TLS: what is removed, what is kept
// (foreign labels, annotations, taints, conditions; pods; PVCs of other namespaces), the exact
// writes (resourceVersion on each; none in a dry run or where nothing is ours), a concurrent
// writer's 409 and a refused write that does not stop the others.
#include <doctest/doctest.h>

#include "kube/test_cluster.h"
#include "node/node_prune.h"

namespace iogate {
namespace {

using nlohmann::json;
using testing::TestCluster;

json node_object(const std::string& name, bool ours) {
  json n = json::parse(R"({"apiVersion":"v1","kind":"Node",
    "metadata":{"labels":{"team.example/pool":"a100"},"annotations":{"team.example/owner":"ml"}},
    "spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
    "status":{"conditions":[
      {"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status",
       "lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2025-06-01T00:00:00Z"}]}})");
  n["metadata"]["name"] = name;
  n["metadata"]["labels"]["kubernetes.io/hostname"] = name;
  if (ours) {
    json& labels = n["metadata"]["labels"];
    labels["iogate.io/disk-class"] = "nvme";
    labels["iogate.io/randread-iops"] = "47000";
    labels["iogate.io/tier"] = "fast";
    n["metadata"]["annotations"]["iogate.io/report"] = "{}";
    n["metadata"]["annotations"]["iogate.io/last-probe"] = "2026-01-01T00:00:00Z";
    n["spec"]["taints"].push_back({{"key", "iogate.io/storage-below-policy"}, {"effect", "NoSchedule"}});
    n["status"]["conditions"].push_back({{"type", "StorageBelowPolicy"},
                                         {"status", "True"},
                                         {"reason", "StorageBelowPolicy"},
                                         {"message", "below"},
                                         {"lastHeartbeatTime", "2026-01-01T00:00:00Z"},
                                         {"lastTransitionTime", "2026-01-01T00:00:00Z"}});
  }
  return n;
}

json pvc_object(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"annotations",
             {{"iogate.io/probe-result", "{}"},
              {"iogate.io/probe-lock", "{}"},
              {"iogate.io/job-probe.0123abcd", "{}"},
              {"volume.kubernetes.io/storage-provisioner", "csi.example"}}}}},
          {"spec", {{"accessModes", {"ReadWriteMany"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
}

json pod_object() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"trainer-0","namespace":"ml","annotations":{"iogate.io/verdict":"pass","iogate.io/job":"j"}},
    "spec":{"containers":[{"name":"train","image":"x"}]}})");
}

std::vector<std::string> keys_of(const json& map) {
  std::vector<std::string> out;
  for (auto it = map.begin(); it != map.end(); ++it) out.push_back(it.key());
  return out;
}

std::vector<std::string> taint_keys(const json& node) {
  std::vector<std::string> out;
  for (const json& t : node["spec"].value("taints", json::array())) out.push_back(t["key"]);
  return out;
}

std::vector<std::string> condition_types(const json& node) {
  std::vector<std::string> out;
  for (const json& c : node["status"]["conditions"]) out.push_back(c["type"]);
  return out;
}

TEST_CASE("node_iogate_keys: only iogate.io/ keys and the owned condition type") {
  IogateKeys k = node_iogate_keys(node_object("n1", true));
  CHECK(k.labels == std::vector<std::string>{"iogate.io/disk-class", "iogate.io/randread-iops", "iogate.io/tier"});
  CHECK(k.annotations == std::vector<std::string>{"iogate.io/last-probe", "iogate.io/report"});
  CHECK(k.taints == 1);
  CHECK(k.kept_taints == json::array({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}}));
  CHECK(k.conditions == std::vector<std::string>{"StorageBelowPolicy"});
  IogateKeys none = node_iogate_keys(node_object("n2", false));
  CHECK_FALSE(none.metadata_or_spec());
  CHECK(none.conditions.empty());
  // A look-alike prefix is not ours.
  json n = node_object("n3", false);
  n["metadata"]["labels"]["iogate.io.example/x"] = "1";
  n["metadata"]["labels"]["example.com/iogate.io/x"] = "1";
  CHECK(node_iogate_keys(n).labels.empty());
}

TEST_CASE("prune: every iogate.io/ key off every Node and the listed namespaces' PVCs; nothing else") {
  TestCluster c;
  c.seed(node_object("n1", true));
  c.seed(node_object("n2", false));
  c.seed(pvc_object("ml", "imagenet"));
  c.seed(pvc_object("other", "kept"));  // not a listed namespace
  c.seed(pod_object());
  ApiClient api(c.config, testing::fast_retry());
  c.server->clear_requests();

  std::vector<std::string> lines;
  PruneOptions o;
  o.pvc_namespaces = {"ml"};
  PruneOutcome out =
      prune_iogate_keys(api, o, [&](const PrunedObject& p) { lines.push_back(pruned_object_line(p, false)); });
  CHECK(out.failures.empty());
  CHECK(out.nodes_seen == 2);
  CHECK(out.pvcs_seen == 1);
  CHECK(lines == std::vector<std::string>{"node/n1 pruned: 3 labels, 2 annotations, 1 taint, 1 condition",
                                          "persistentvolumeclaim/ml/imagenet pruned: 3 annotations"});

  json n1 = c.stored("nodes", "", "n1");
  CHECK(keys_of(n1["metadata"]["labels"]) == std::vector<std::string>{"kubernetes.io/hostname", "team.example/pool"});
  CHECK(keys_of(n1["metadata"]["annotations"]) == std::vector<std::string>{"team.example/owner"});
  CHECK(taint_keys(n1) == std::vector<std::string>{"nvidia.com/gpu"});
  CHECK(condition_types(n1) == std::vector<std::string>{"Ready"});
  CHECK(n1["status"]["conditions"][0]["lastTransitionTime"] == "2025-06-01T00:00:00Z");  // the kubelet's, untouched
  json n2 = c.stored("nodes", "", "n2");
  json n2_seeded = node_object("n2", false);
  CHECK(n2["metadata"]["labels"] == n2_seeded["metadata"]["labels"]);
  CHECK(n2["spec"]["taints"] == n2_seeded["spec"]["taints"]);

  CHECK(keys_of(c.stored("persistentvolumeclaims", "ml", "imagenet")["metadata"]["annotations"]) ==
        std::vector<std::string>{"volume.kubernetes.io/storage-provisioner"});
  CHECK(c.stored("persistentvolumeclaims", "other", "kept")["metadata"]["annotations"].size() == 4);
  CHECK(c.stored("pods", "ml", "trainer-0")["metadata"]["annotations"] ==
        json{{"iogate.io/verdict", "pass"}, {"iogate.io/job", "j"}});

  // The exact exchanges: lists, two writes for n1 (metadata and spec, then status), none for n2,
  // one for the PVC; each write carries a resourceVersion.
  CHECK(c.exchanges() == std::vector<std::string>{"GET /api/v1/nodes 200", "PATCH /api/v1/nodes/n1 200",
                                                  "PATCH /api/v1/nodes/n1/status 200",
                                                  "GET /api/v1/namespaces/ml/persistentvolumeclaims 200",
                                                  "PATCH /api/v1/namespaces/ml/persistentvolumeclaims/imagenet 200"});
  for (const auto& r : c.server->requests()) {
    if (r.method != "PATCH") continue;
    json body = json::parse(r.body);
    CHECK_MESSAGE(!body["metadata"].value("resourceVersion", "").empty(), r.path);
  }
  const auto requests = c.server->requests();
  const auto& status_patch = requests[2];
  CHECK(status_patch.content_type == "application/strategic-merge-patch+json");
  CHECK(json::parse(status_patch.body)["status"] ==
        json{{"conditions", {{{"type", "StorageBelowPolicy"}, {"$patch", "delete"}}}}});

  // A second run finds nothing: reads only.
  c.server->clear_requests();
  lines.clear();
  PruneOutcome again =
      prune_iogate_keys(api, o, [&](const PrunedObject& p) { lines.push_back(pruned_object_line(p, false)); });
  CHECK(again.pruned.empty());
  CHECK(lines.empty());
  for (const std::string& e : c.exchanges()) CHECK_MESSAGE(e.rfind("GET ", 0) == 0, e);
}

TEST_CASE("prune --dry-run: the same counts, no write") {
  TestCluster c;
  c.seed(node_object("n1", true));
  c.seed(pvc_object("ml", "imagenet"));
  ApiClient api(c.config, testing::fast_retry());
  json before = c.stored("nodes", "", "n1");
  c.server->clear_requests();
  PruneOptions o;
  o.pvc_namespaces = {"ml"};
  o.dry_run = true;
  PruneOutcome out = prune_iogate_keys(api, o);
  REQUIRE(out.pruned.size() == 2);
  CHECK(pruned_object_line(out.pruned[0], true) ==
        "node/n1 pruned (dry run): 3 labels, 2 annotations, 1 taint, 1 condition");
  CHECK(pruned_object_line(out.pruned[1], true) == "persistentvolumeclaim/ml/imagenet pruned (dry run): 3 annotations");
  for (const std::string& e : c.exchanges()) CHECK_MESSAGE(e.rfind("GET ", 0) == 0, e);
  CHECK(c.stored("nodes", "", "n1") == before);
}

TEST_CASE("prune: a taint added between the read and the write survives (409, read again, redo)") {
  TestCluster c;
  c.seed(node_object("n1", true));
  // Just before prune's first PATCH of n1, another writer adds its own taint: prune's write carries
  // the resourceVersion it listed, so it is refused and must not replace the list with its stale one.
  apiserver::Fault raced;
  raced.method = "PATCH";
  raced.path_regex = "/api/v1/nodes/n1";
  raced.kind = apiserver::FaultKind::kWrite;
  raced.count = 1;
  json taints = node_object("n1", true)["spec"]["taints"];
  taints.push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}});
  raced.patch = {{"spec", {{"taints", taints}}}};
  c.server->add_fault(raced);
  ApiClient api(c.config, testing::fast_retry());
  c.server->clear_requests();
  PruneOutcome out = prune_iogate_keys(api, {});
  CHECK(out.failures.empty());
  CHECK(c.exchanges() == std::vector<std::string>{"GET /api/v1/nodes 200", "PATCH /api/v1/nodes/n1 409",
                                                  "GET /api/v1/nodes/n1 200", "PATCH /api/v1/nodes/n1 200",
                                                  "PATCH /api/v1/nodes/n1/status 200"});
  json n1 = c.stored("nodes", "", "n1");
  CHECK(taint_keys(n1) == std::vector<std::string>{"nvidia.com/gpu", "node.kubernetes.io/unschedulable"});
  CHECK(node_iogate_keys(n1).labels.empty());
  CHECK(condition_types(n1) == std::vector<std::string>{"Ready"});
  REQUIRE(out.pruned.size() == 1);
  CHECK(pruned_object_line(out.pruned[0], false) == "node/n1 pruned: 3 labels, 2 annotations, 1 taint, 1 condition");
}

TEST_CASE("prune: a refused write is a failure of that object; the others are still pruned") {
  TestCluster c;
  c.seed(node_object("n1", true));
  c.seed(node_object("n2", true));
  auto api = testing::hooked_client(c.config, [](const HttpRequest& r) -> std::optional<TransportResult> {
    if (r.method == "PATCH" && r.path == "/api/v1/nodes/n1") {
      return HttpResponse{403,
                          R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,)"
                          R"("message":"nodes \"n1\" is forbidden: User \"x\" cannot patch resource \"nodes\""})",
                          ""};
    }
    return std::nullopt;
  });
  PruneOutcome out = prune_iogate_keys(*api, {});
  REQUIRE(out.failures.size() == 1);
  CHECK(out.failures[0].rfind("node/n1: PATCH /api/v1/nodes/n1: 403 Forbidden: ", 0) == 0);
  REQUIRE(out.pruned.size() == 1);
  CHECK(out.pruned[0].name == "n2");
  CHECK(node_iogate_keys(c.stored("nodes", "", "n2")).labels.empty());
  CHECK(node_iogate_keys(c.stored("nodes", "", "n1")).labels.size() == 3);
}

TEST_CASE("prune: a Node deleted between the list and the write is done, not a failure") {
  TestCluster c;
  c.seed(node_object("n1", true));
  auto api = testing::hooked_client(c.config, [](const HttpRequest& r) -> std::optional<TransportResult> {
    if (r.method == "PATCH" && r.path == "/api/v1/nodes/n1") {
      return HttpResponse{
          404,
          R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":"nodes \"n1\" not found"})",
          ""};
    }
    return std::nullopt;
  });
  PruneOutcome out = prune_iogate_keys(*api, {});
  CHECK(out.failures.empty());
  CHECK(out.pruned.empty());
  CHECK(out.nodes_seen == 1);
}

}  // namespace
}  // namespace iogate
