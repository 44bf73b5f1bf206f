// The typed operations against the test API server over real TLS: what ends up stored is checked,
// and so are the exact exchanges (a no-op must not PATCH, a conflict must re-read).
#include <doctest/doctest.h>

#include "kube/operations.h"
#include "test_cluster.h"

namespace iogate {
namespace {

using nlohmann::json;
using testing::TestCluster;

json pod_object() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"trainer-0","namespace":"ml","uid":"u-1","annotations":{"keep":"me","drop":"me"}},
    "spec":{"containers":[{"name":"train","image":"x",
      "resources":{"limits":{"nvidia.com/gpu":"2"}},
      "volumeMounts":[{"name":"data","mountPath":"/data"}]}],
      "volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"imagenet"}}]}})");
}

json node_object() {
  return json::parse(R"({"apiVersion":"v1","kind":"Node",
    "metadata":{"name":"n1","labels":{"kubernetes.io/hostname":"n1"}},
    "spec":{"taints":[{"key":"gpu-vendor.example/maintenance","value":"true","effect":"NoSchedule"}]},
    "status":{"conditions":[
      {"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status",
       "lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2025-06-01T00:00:00Z"}]}})");
}

TEST_CASE("pods: get, annotate by merge patch (set and remove), 404 as a value") {
  TestCluster c;
  c.seed(pod_object());
  ApiClient api(c.config, testing::fast_retry());
  REQUIRE(api.ready().ok());

  auto pod = get_pod(api, "ml", "trainer-0");
  REQUIRE(pod.ok());
  CHECK(pod_gpu_count(*pod) == 2);
  CHECK(pvc_for_path(*pod, "/data/train") == "imagenet");

  REQUIRE(patch_pod_annotations(
              api, "ml", "trainer-0",
              {{"iogate.io/verdict", "pass"}, {"iogate.io/randread-iops", "47000"}, {"drop", std::nullopt}})
              .ok());
  json stored = c.stored("pods", "ml", "trainer-0");
  CHECK(stored["metadata"]["annotations"] ==
        json{{"keep", "me"}, {"iogate.io/verdict", "pass"}, {"iogate.io/randread-iops", "47000"}});
  auto log = c.server->requests();
  REQUIRE(log.size() == 2);
  CHECK(log[1].method == "PATCH");
  CHECK(log[1].content_type == "application/merge-patch+json");
  CHECK(log[1].auth == "Bearer <redacted>");

  auto missing = get_pod(api, "ml", "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().not_found());
  CHECK(missing.error().summary() == "GET /api/v1/namespaces/ml/pods/nope: 404 NotFound: pods \"nope\" not found");
  Result<json> as_result = get_pod(api, "ml", "nope");  // the plain conversion keeps the message
  CHECK(as_result.error().message.find("404 NotFound") != std::string::npos);
}

TEST_CASE("pvcs: get and annotate") {
  TestCluster c;
  c.seed(json::parse(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim",
    "metadata":{"name":"imagenet","namespace":"ml"},
    "spec":{"accessModes":["ReadOnlyMany"],"resources":{"requests":{"storage":"1Ti"}}}})"));
  ApiClient api(c.config, testing::fast_retry());
  REQUIRE(get_pvc(api, "ml", "imagenet").ok());
  REQUIRE(patch_pvc_annotations(api, "ml", "imagenet", {{"iogate.io/probe-result", R"({"iops":47000})"}}).ok());
  CHECK(c.stored("persistentvolumeclaims", "ml", "imagenet")["metadata"]["annotations"]["iogate.io/probe-result"] ==
        R"({"iops":47000})");
  CHECK(get_pvc(api, "ml", "other").error().not_found());
}

TEST_CASE("nodes: a label merge patch keeps the other labels") {
  TestCluster c;
  c.seed(node_object());
  ApiClient api(c.config, testing::fast_retry());
  REQUIRE(patch_node_labels(api, "n1", {{"iogate.io/disk-class", "nvme"}, {"iogate.io/randread-iops", "512000"}}).ok());
  REQUIRE(patch_node_annotations(api, "n1", {{"iogate.io/report", "{}"}}).ok());
  json labels = c.stored("nodes", "", "n1")["metadata"]["labels"];
  CHECK(labels == json{{"kubernetes.io/hostname", "n1"},
                       {"iogate.io/disk-class", "nvme"},
                       {"iogate.io/randread-iops", "512000"}});
  REQUIRE(patch_node_labels(api, "n1", {{"iogate.io/disk-class", std::nullopt}}).ok());
  labels = c.stored("nodes", "", "n1")["metadata"]["labels"];
  CHECK_FALSE(labels.contains("iogate.io/disk-class"));
  CHECK(labels.contains("kubernetes.io/hostname"));
}

TEST_CASE("taints: ours added and removed, another owner's kept, no PATCH when nothing changes") {
  TestCluster c;
  c.seed(node_object());
  ApiClient api(c.config, testing::fast_retry());
  const Taint ours{"iogate.io/storage-below-policy", "true", "NoSchedule"};
  const json foreign = {{"key", "gpu-vendor.example/maintenance"}, {"value", "true"}, {"effect", "NoSchedule"}};

  REQUIRE(ensure_node_taint(api, "n1", ours).ok());
  json taints = c.stored("nodes", "", "n1")["spec"]["taints"];
  CHECK(taints == json::array({foreign, {{"key", ours.key}, {"effect", ours.effect}, {"value", ours.value}}}));
  CHECK(c.exchanges() == std::vector<std::string>{"GET /api/v1/nodes/n1 200", "PATCH /api/v1/nodes/n1 200"});

  c.server->clear_requests();
  REQUIRE(ensure_node_taint(api, "n1", ours).ok());
  CHECK(c.exchanges() == std::vector<std::string>{"GET /api/v1/nodes/n1 200"});  // already there

  // A changed value replaces ours in place.
  REQUIRE(ensure_node_taint(api, "n1", {ours.key, "degraded", ours.effect}).ok());
  taints = c.stored("nodes", "", "n1")["spec"]["taints"];
  REQUIRE(taints.size() == 2);
  CHECK(taints[1]["value"] == "degraded");

  c.server->clear_requests();
  REQUIRE(remove_node_taint(api, "n1", ours.key, ours.effect).ok());
  CHECK(c.stored("nodes", "", "n1")["spec"]["taints"] == json::array({foreign}));
  REQUIRE(remove_node_taint(api, "n1", ours.key, ours.effect).ok());
  CHECK(c.exchanges() ==
        std::vector<std::string>{"GET /api/v1/nodes/n1 200", "PATCH /api/v1/nodes/n1 200", "GET /api/v1/nodes/n1 200"});
  CHECK(c.stored("nodes", "", "n1")["spec"]["taints"] == json::array({foreign}));

  // Removing the last taint leaves none.
  REQUIRE(remove_node_taint(api, "n1", foreign["key"], "").ok());
  json spec = c.stored("nodes", "", "n1")["spec"];
  CHECK((!spec.contains("taints") || spec["taints"].empty()));
}

TEST_CASE("taints: a concurrent writer between GET and PATCH → 409 → read again, nothing lost") {
  TestCluster c;
  c.seed(node_object());
  bool wrote = false;
  const json intruder = {{"key", "other.example/drain"}, {"effect", "NoExecute"}};
  auto api = testing::hooked_client(c.config, [&](const HttpRequest& r) -> std::optional<TransportResult> {
    if (r.method == "PATCH" && !wrote) {
      // Another controller taints the node after our GET: the resourceVersion moves on.
      wrote = true;
      json node = c.stored("nodes", "", "n1");
      node["spec"]["taints"].push_back(intruder);
      node["metadata"].erase("resourceVersion");
      c.seed(node);
    }
    return std::nullopt;
  });
  const Taint ours{"iogate.io/storage-below-policy", "true", "NoSchedule"};
  REQUIRE(ensure_node_taint(*api, "n1", ours).ok());
  CHECK(c.exchanges() == std::vector<std::string>{"GET /api/v1/nodes/n1 200", "PATCH /api/v1/nodes/n1 409",
                                                  "GET /api/v1/nodes/n1 200", "PATCH /api/v1/nodes/n1 200"});
  json taints = c.stored("nodes", "", "n1")["spec"]["taints"];
  REQUIRE(taints.size() == 3);
  CHECK(taints[0]["key"] == "gpu-vendor.example/maintenance");
  CHECK(taints[1] == intruder);
  CHECK(taints[2]["key"] == ours.key);
}

TEST_CASE("taints: a conflict every time gives up after the bounded number of re-reads") {
  TestCluster c;
  c.seed(node_object());
  auto api = testing::hooked_client(c.config, [&](const HttpRequest& r) -> std::optional<TransportResult> {
    if (r.method == "PATCH") {
      json node = c.stored("nodes", "", "n1");
      node["metadata"]["labels"]["bump"] = std::to_string(rand());
      node["metadata"].erase("resourceVersion");
      c.seed(node);
    }
    return std::nullopt;
  });
  auto r = ensure_node_taint(*api, "n1", {"iogate.io/storage-below-policy", "true", "NoSchedule"});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().conflict());
  CHECK(c.server->requests().size() == 2 * (kTaintConflictRetries + 1));
}

TEST_CASE("conditions: strategic merge on nodes/status keeps the kubelet's; lastTransitionTime moves only on change") {
  TestCluster c;
  c.seed(node_object());
  ApiClient api(c.config, testing::fast_retry());
  REQUIRE(
      set_node_condition(api, "n1", {"StorageBelowPolicy", "False", "StorageMeetsPolicy", "47000 IOPS >= 10000"}).ok());
  auto log = c.server->requests();
  REQUIRE(log.size() == 2);
  CHECK(log[1].path == "/api/v1/nodes/n1/status");
  CHECK(log[1].content_type == "application/strategic-merge-patch+json");

  auto conditions = [&] {
    std::map<std::string, json> by_type;
    const json node = c.stored("nodes", "", "n1");
    for (const json& cond : node["status"]["conditions"]) by_type[cond["type"]] = cond;
    return by_type;
  };
  auto first = conditions();
  REQUIRE(first.count("Ready") == 1);
  CHECK(first["Ready"]["reason"] == "KubeletReady");
  CHECK(first["Ready"]["lastTransitionTime"] == "2025-06-01T00:00:00Z");
  REQUIRE(first.count("StorageBelowPolicy") == 1);
  CHECK(first["StorageBelowPolicy"]["status"] == "False");
  CHECK(first["StorageBelowPolicy"]["message"] == "47000 IOPS >= 10000");
  CHECK(first["StorageBelowPolicy"]["lastHeartbeatTime"].is_string());

  // Pretend ours has been False since 2025: the same status keeps that transition time.
  json node = c.stored("nodes", "", "n1");
  for (json& cond : node["status"]["conditions"]) {
    if (cond["type"] == "StorageBelowPolicy") cond["lastTransitionTime"] = "2025-07-01T00:00:00Z";
  }
  node["metadata"].erase("resourceVersion");
  c.seed(node);
  REQUIRE(
      set_node_condition(api, "n1", {"StorageBelowPolicy", "False", "StorageMeetsPolicy", "46000 IOPS >= 10000"}).ok());
  auto same = conditions();
  CHECK(same["StorageBelowPolicy"]["lastTransitionTime"] == "2025-07-01T00:00:00Z");
  CHECK(same["StorageBelowPolicy"]["message"] == "46000 IOPS >= 10000");

  REQUIRE(set_node_condition(api, "n1", {"StorageBelowPolicy", "True", "StorageBelowPolicy", "900 IOPS < 10000"}).ok());
  auto changed = conditions();
  CHECK(changed["StorageBelowPolicy"]["status"] == "True");
  CHECK(changed["StorageBelowPolicy"]["lastTransitionTime"] != "2025-07-01T00:00:00Z");
  CHECK(changed["StorageBelowPolicy"]["lastTransitionTime"] == changed["StorageBelowPolicy"]["lastHeartbeatTime"]);
  CHECK(changed["Ready"]["status"] == "True");
}

TEST_CASE("events: events.k8s.io/v1 with the required fields; Node events in default") {
  TestCluster c;
  c.seed(pod_object());
  ApiClient api(c.config, testing::fast_retry());
  EventSpec e;
  e.ns = "ml";
  e.regarding = {{"kind", "Pod"}, {"namespace", "ml"}, {"name", "trainer-0"}, {"uid", "u-1"}, {"apiVersion", "v1"}};
  e.type = "Warning";
  e.reason = "StorageBelowPolicy";
  e.note = "randread 900 IOPS < 10000 (rule gpu-feed)";
  e.action = "Preflight";
  e.reporting_instance = "iogate-node-a";
  REQUIRE(create_event(api, e).ok());
  auto log = c.server->requests();
  REQUIRE(log.size() == 1);
  CHECK(log[0].path == "/apis/events.k8s.io/v1/namespaces/ml/events");
  CHECK(log[0].status == 201);
  json sent = json::parse(log[0].body);
  CHECK(sent["eventTime"].get<std::string>().size() == std::string("2026-01-02T03:04:05.123456Z").size());

  auto events = c.server->objects("events", "ml");
  REQUIRE(events.size() == 1);
  const json& ev = events[0];  // core/v1 form
  CHECK(ev["type"] == "Warning");
  CHECK(ev["reason"] == "StorageBelowPolicy");
  CHECK(ev["message"] == e.note);
  CHECK(ev["action"] == "Preflight");
  CHECK(ev["reportingComponent"] == "iogate.io/preflight");
  CHECK(ev["reportingInstance"] == "iogate-node-a");
  CHECK(ev["involvedObject"]["name"] == "trainer-0");
  CHECK(ev["involvedObject"]["uid"] == "u-1");
  CHECK(ev["metadata"]["name"].get<std::string>().rfind("trainer-0.", 0) == 0);

  EventSpec node_event = e;
  node_event.ns = "default";
  node_event.regarding = {{"kind", "Node"}, {"name", "n1"}, {"apiVersion", "v1"}};
  node_event.type = "Normal";
  node_event.reason = "StoragePolicyMet";
  node_event.reporting_instance = "";  // defaults to iogate-<hostname>
  REQUIRE(create_event(api, node_event).ok());
  auto node_events = c.server->objects("events", "default");
  REQUIRE(node_events.size() == 1);
  CHECK(node_events[0]["reportingInstance"].get<std::string>().rfind("iogate-", 0) == 0);

  // An over-long note is cut to the API's limit instead of being rejected.
  EventSpec long_note = e;
  long_note.note = std::string(3000, 'x');
  CHECK(create_event(api, long_note).ok());
}

TEST_CASE("events: a 253-character pod name gets a valid Event name and reportingInstance") {
  // events.k8s.io/v1 caps the name at 253 and reportingInstance at 128 characters; the real
  // apiserver refused such an Event (422) before they were cut (found by e2e.preflight).
  TestCluster c;
  const std::string pod_name(253, 'p');
  json pod = pod_object();
  pod["metadata"]["name"] = pod_name;
  c.seed(pod);
  ApiClient api(c.config, testing::fast_retry());
  EventSpec e;
  e.ns = "ml";
  e.regarding = {{"kind", "Pod"}, {"namespace", "ml"}, {"name", pod_name}, {"apiVersion", "v1"}};
  e.type = "Normal";
  e.reason = "StoragePolicyMet";
  e.note = "ok";
  e.action = "Preflight";
  e.reporting_instance = "iogate-preflight-" + pod_name;
  REQUIRE(create_event(api, e).ok());
  auto log = c.server->requests();
  REQUIRE(log.size() == 1);
  json sent = json::parse(log[0].body);
  const std::string name = sent["metadata"]["name"].get<std::string>();
  CHECK(name.size() <= 253);
  CHECK(name.back() != '-');
  CHECK(name.back() != '.');
  CHECK(sent["reportingInstance"].get<std::string>().size() == 128);
  CHECK(sent["regarding"]["name"] == pod_name);
}

TEST_CASE("events: an API server without events.k8s.io gets a core/v1 Event") {
  TestCluster c;
  c.seed(pod_object());
  auto api = testing::hooked_client(c.config, [](const HttpRequest& r) -> std::optional<TransportResult> {
    if (r.path.rfind("/apis/events.k8s.io/", 0) == 0) {
      return HttpResponse{
          404,
          R"({"kind":"Status","status":"Failure","reason":"NotFound","message":"the server could not find the requested resource","code":404})",
          ""};
    }
    return std::nullopt;
  });
  EventSpec e;
  e.ns = "ml";
  e.regarding = {{"kind", "Pod"}, {"namespace", "ml"}, {"name", "trainer-0"}, {"uid", "u-1"}, {"apiVersion", "v1"}};
  e.type = "Normal";
  e.reason = "StoragePolicyMet";
  e.note = "randread 47000 IOPS >= 10000";
  e.action = "Preflight";
  e.reporting_instance = "iogate-node-a";
  REQUIRE(create_event(*api, e).ok());
  auto log = c.server->requests();
  REQUIRE(log.size() == 1);
  CHECK(log[0].path == "/api/v1/namespaces/ml/events");
  json sent = json::parse(log[0].body);
  CHECK(sent["source"]["component"] == "iogate.io/preflight");
  CHECK(sent["count"] == 1);
  CHECK(sent["firstTimestamp"].is_string());
  auto events = c.server->objects("events", "ml");
  REQUIRE(events.size() == 1);
  CHECK(events[0]["message"] == e.note);
  CHECK(events[0]["involvedObject"]["name"] == "trainer-0");
}

}  // namespace
}  // namespace iogate
