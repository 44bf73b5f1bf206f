// `iogate node prune` against a scripted API: the exact requests (lists page by page, a write of
// metadata and spec then one of status per Node, one per PVC, each with the resourceVersion it
// read and naming only iogate.io/ keys; none in a dry run or where nothing is ours), a 409 read
// again, a refused write that does not stop the others, keys that keep coming back. That the real
// API server applies those writes so (foreign keys kept, a stale write refused) is e2e.least_reach's.
#include <doctest/doctest.h>

#include "kube/scripted_api.h"
#include "node/node_prune.h"

namespace iogate {
namespace {

using nlohmann::json;
using testing::json_answer;
using testing::ScriptedClient;

json node_object(const std::string& name, bool ours, const std::string& rv = "1") {
  json n = json::parse(R"({"apiVersion":"v1","kind":"Node",
    "metadata":{"labels":{"team.example/pool":"a100"},"annotations":{"team.example/owner":"ml"}},
    "spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
    "status":{"conditions":[
      {"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status",
       "lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2025-06-01T00:00:00Z"}]}})");
  n["metadata"]["name"] = name;
  n["metadata"]["resourceVersion"] = rv;
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

json pvc_object(const std::string& ns, const std::string& name, const std::string& rv = "4") {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"resourceVersion", rv},
            {"annotations",
             {{"iogate.io/probe-result", "{}"},
              {"iogate.io/probe-lock", "{}"},
              {"iogate.io/job-probe.0123abcd", "{}"},
              {"volume.kubernetes.io/storage-provisioner", "csi.example"}}}}},
          {"spec", {{"accessModes", {"ReadWriteMany"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
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

json list_of(std::vector<json> items, const std::string& continue_token = "") {
  json l = {{"kind", "List"}, {"metadata", json::object()}, {"items", std::move(items)}};
  if (!continue_token.empty()) l["metadata"]["continue"] = continue_token;
  return l;
}

// n1 as the API server answers the first write: its status (our condition) still to go.
json node_without_our_metadata(const std::string& name, const std::string& rv) {
  json n = node_object(name, false, rv);
  n["status"]["conditions"].push_back({{"type", "StorageBelowPolicy"}, {"status", "True"}});
  return n;
}

const json kKeptTaints = json::array({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}});

TEST_CASE("prune: every iogate.io/ key off every Node and the listed namespaces' PVCs, in the fewest writes") {
  ScriptedClient s;
  s.api->expect("GET /api/v1/nodes?limit=500", json_answer(list_of({node_object("n1", true)}, "page2")));
  s.api->expect("GET /api/v1/nodes?limit=500&continue=page2", json_answer(list_of({node_object("n2", false)})));
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_without_our_metadata("n1", "2")));
  s.api->expect("PATCH /api/v1/nodes/n1/status", json_answer(node_object("n1", false, "3")));
  s.api->expect("GET /api/v1/namespaces/ml/persistentvolumeclaims?limit=500",
                json_answer(list_of({pvc_object("ml", "imagenet")})));
  json pvc_after = pvc_object("ml", "imagenet", "5");
  pvc_after["metadata"]["annotations"] = {{"volume.kubernetes.io/storage-provisioner", "csi.example"}};
  s.api->expect("PATCH /api/v1/namespaces/ml/persistentvolumeclaims/imagenet", json_answer(pvc_after));

  std::vector<std::string> lines;
  PruneOptions o;
  o.pvc_namespaces = {"ml"};
  PruneOutcome out =
      prune_iogate_keys(*s.client, o, [&](const PrunedObject& p) { lines.push_back(pruned_object_line(p, false)); });
  CHECK(s.api->spent());
  CHECK(out.failures.empty());
  CHECK(out.nodes_seen == 2);
  CHECK(out.pvcs_seen == 1);
  CHECK(lines == std::vector<std::string>{"node/n1 pruned: 3 labels, 2 annotations, 1 taint, 1 condition",
                                          "persistentvolumeclaim/ml/imagenet pruned: 3 annotations"});

  const auto sent = s.api->sent();
  REQUIRE(sent.size() == 6);
  // Metadata and spec: our keys set to null, the taint list the read one less ours, the read's
  // resourceVersion.
  CHECK(sent[2].content_type == "application/merge-patch+json");
  CHECK(testing::body_of(sent[2]) ==
        json{{"metadata",
              {{"resourceVersion", "1"},
               {"labels",
                {{"iogate.io/disk-class", nullptr}, {"iogate.io/randread-iops", nullptr}, {"iogate.io/tier", nullptr}}},
               {"annotations", {{"iogate.io/last-probe", nullptr}, {"iogate.io/report", nullptr}}}}},
             {"spec", {{"taints", kKeptTaints}}}});
  // Status: our condition deleted by its key, from the first write's answer.
  CHECK(sent[3].content_type == "application/strategic-merge-patch+json");
  CHECK(testing::body_of(sent[3]) ==
        json{{"metadata", {{"resourceVersion", "2"}}},
             {"status", {{"conditions", {{{"type", "StorageBelowPolicy"}, {"$patch", "delete"}}}}}}});
  CHECK(testing::body_of(sent[5]) == json{{"metadata",
                                           {{"resourceVersion", "4"},
                                            {"annotations",
                                             {{"iogate.io/probe-result", nullptr},
                                              {"iogate.io/probe-lock", nullptr},
                                              {"iogate.io/job-probe.0123abcd", nullptr}}}}}});

  // Nothing of ours left: reads only.
  s.api->clear();
  s.api->otherwise([&](const HttpRequest& r) -> TransportResult {
    CHECK(r.method == "GET");
    if (r.path.rfind("/api/v1/nodes", 0) == 0) return json_answer(list_of({node_object("n1", false)}));
    return json_answer(list_of({pvc_after}));
  });
  lines.clear();
  PruneOutcome again =
      prune_iogate_keys(*s.client, o, [&](const PrunedObject& p) { lines.push_back(pruned_object_line(p, false)); });
  CHECK(again.pruned.empty());
  CHECK(lines.empty());
  CHECK(s.api->sent().size() == 2);
}

TEST_CASE("prune --dry-run: the same counts from the lists, no write") {
  ScriptedClient s;
  s.api->expect("GET /api/v1/nodes?limit=500", json_answer(list_of({node_object("n1", true)})));
  s.api->expect("GET /api/v1/namespaces/ml/persistentvolumeclaims?limit=500",
                json_answer(list_of({pvc_object("ml", "imagenet")})));
  PruneOptions o;
  o.pvc_namespaces = {"ml"};
  o.dry_run = true;
  PruneOutcome out = prune_iogate_keys(*s.client, o);
  CHECK(s.api->spent());
  CHECK(s.api->sent().size() == 2);
  REQUIRE(out.pruned.size() == 2);
  CHECK(pruned_object_line(out.pruned[0], true) ==
        "node/n1 pruned (dry run): 3 labels, 2 annotations, 1 taint, 1 condition");
  CHECK(pruned_object_line(out.pruned[1], true) == "persistentvolumeclaim/ml/imagenet pruned (dry run): 3 annotations");
}

TEST_CASE("prune: a 409 (a taint added between the read and the write) reads the Node again and keeps it") {
  ScriptedClient s;
  json raced = node_object("n1", true, "2");
  raced["spec"]["taints"].push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}});
  s.api->expect("GET /api/v1/nodes?limit=500", json_answer(list_of({node_object("n1", true)})));
  s.api->expect("PATCH /api/v1/nodes/n1", testing::conflict_answer());
  s.api->expect("GET /api/v1/nodes/n1", json_answer(raced));
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_without_our_metadata("n1", "3")));
  s.api->expect("PATCH /api/v1/nodes/n1/status", json_answer(node_object("n1", false, "4")));
  PruneOutcome out = prune_iogate_keys(*s.client, {});
  CHECK(s.api->spent());
  CHECK(out.failures.empty());
  json second = testing::body_of(s.api->sent()[3]);
  CHECK(second["metadata"]["resourceVersion"] == "2");
  CHECK(second["spec"]["taints"] ==
        json::array({kKeptTaints[0], {{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}}}));
  REQUIRE(out.pruned.size() == 1);
  CHECK(pruned_object_line(out.pruned[0], false) == "node/n1 pruned: 3 labels, 2 annotations, 1 taint, 1 condition");
}

TEST_CASE("prune: a refused write is a failure of that object; the others are still pruned") {
  ScriptedClient s;
  s.api->expect("GET /api/v1/nodes?limit=500",
                json_answer(list_of({node_object("n1", true), node_object("n2", true)})));
  s.api->expect("PATCH /api/v1/nodes/n1",
                testing::status_answer(403, "Forbidden",
                                       "nodes \"n1\" is forbidden: User \"x\" cannot patch resource \"nodes\""));
  s.api->expect("PATCH /api/v1/nodes/n2", json_answer(node_without_our_metadata("n2", "2")));
  s.api->expect("PATCH /api/v1/nodes/n2/status", json_answer(node_object("n2", false, "3")));
  PruneOutcome out = prune_iogate_keys(*s.client, {});
  CHECK(s.api->spent());
  REQUIRE(out.failures.size() == 1);
  CHECK(out.failures[0].rfind("node/n1: PATCH /api/v1/nodes/n1: 403 Forbidden: ", 0) == 0);
  REQUIRE(out.pruned.size() == 1);
  CHECK(out.pruned[0].name == "n2");
}

TEST_CASE("prune: a Node deleted between the list and the write is done, not a failure") {
  ScriptedClient s;
  s.api->expect("GET /api/v1/nodes?limit=500", json_answer(list_of({node_object("n1", true)})));
  s.api->expect("PATCH /api/v1/nodes/n1", testing::status_answer(404, "NotFound", "nodes \"n1\" not found"));
  PruneOutcome out = prune_iogate_keys(*s.client, {});
  CHECK(s.api->spent());
  CHECK(out.failures.empty());
  CHECK(out.pruned.empty());
  CHECK(out.nodes_seen == 1);
}

TEST_CASE("prune: keys put back after every write end in a failure, not a loop") {
  ScriptedClient s;
  s.api->expect("GET /api/v1/nodes?limit=500", json_answer(list_of({node_object("n1", true)})));
  s.api->otherwise([](const HttpRequest&) -> TransportResult { return json_answer(node_object("n1", true)); });
  PruneOutcome out = prune_iogate_keys(*s.client, {});
  REQUIRE(out.failures.size() == 1);
  CHECK(out.failures[0].find("Unpruned") != std::string::npos);
  CHECK(s.api->count("PATCH") == 2 + kPruneConflictRetries);
}

}  // namespace
}  // namespace iogate
