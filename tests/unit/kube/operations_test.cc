// The typed operations (kube/operations.h) against a scripted API: the paths, verbs, content types
// and bodies they send, what they make of the answers (a no-op sends no PATCH, a 409 reads again,
// a 404 on events.k8s.io falls back to core/v1). That the real API server merges those bodies as
// intended (others' keys kept, conditions merged by type, a stale resourceVersion refused) is the
// e2e tests' (test_node_agent.sh, test_preflight.sh, test_least_reach.sh).
#include <doctest/doctest.h>

#include "kube/operations.h"
#include "scripted_api.h"

namespace iogate {
namespace {

using nlohmann::json;
using testing::conflict_answer;
using testing::json_answer;
using testing::ScriptedClient;
using testing::status_answer;

json pod_object() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"trainer-0","namespace":"ml","uid":"u-1","resourceVersion":"5","annotations":{"keep":"me"}},
    "spec":{"containers":[{"name":"train","image":"x",
      "resources":{"limits":{"nvidia.com/gpu":"2"}},
      "volumeMounts":[{"name":"data","mountPath":"/data"}]}],
      "volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"imagenet"}}]}})");
}

const json kForeignTaint = {{"key", "gpu-vendor.example/maintenance"}, {"value", "true"}, {"effect", "NoSchedule"}};

json node_object(const std::string& rv, json taints = json::array({kForeignTaint})) {
  json n = json::parse(R"({"apiVersion":"v1","kind":"Node",
    "metadata":{"name":"n1","labels":{"kubernetes.io/hostname":"n1"}},
    "status":{"conditions":[
      {"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status",
       "lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2025-06-01T00:00:00Z"}]}})");
  n["metadata"]["resourceVersion"] = rv;
  n["spec"]["taints"] = std::move(taints);
  return n;
}

const Taint kOurs{"iogate.io/storage-below-policy", "true", "NoSchedule"};
const json kOursJson = {{"key", kOurs.key}, {"effect", kOurs.effect}, {"value", kOurs.value}};

// The body of the last request, and its content type.
json last_body(const ScriptedClient& s) { return testing::body_of(s.api->sent().back()); }
std::string last_type(const ScriptedClient& s) { return s.api->sent().back().content_type; }

TEST_CASE("pods: get; annotations by a merge patch naming only our keys (null removes); 404 as a value") {
  ScriptedClient s;
  s.api->expect("GET /api/v1/namespaces/ml/pods/trainer-0", json_answer(pod_object()));
  auto pod = get_pod(*s.client, "ml", "trainer-0");
  REQUIRE(pod.ok());
  CHECK(pod_gpu_count(*pod) == 2);
  CHECK(pvc_for_path(*pod, "/data/train") == "imagenet");

  s.api->expect("PATCH /api/v1/namespaces/ml/pods/trainer-0", json_answer(pod_object()));
  REQUIRE(patch_pod_annotations(
              *s.client, "ml", "trainer-0",
              {{"iogate.io/verdict", "pass"}, {"iogate.io/randread-iops", "47000"}, {"drop", std::nullopt}})
              .ok());
  CHECK(last_type(s) == "application/merge-patch+json");
  CHECK(last_body(s) ==
        json{{"metadata",
              {{"annotations",
                {{"iogate.io/verdict", "pass"}, {"iogate.io/randread-iops", "47000"}, {"drop", nullptr}}}}}});
  CHECK(s.api->sent().back().bearer_token == "t");

  s.api->expect("GET /api/v1/namespaces/ml/pods/nope", status_answer(404, "NotFound", "pods \"nope\" not found"));
  auto missing = get_pod(*s.client, "ml", "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().not_found());
  CHECK(missing.error().summary() == "GET /api/v1/namespaces/ml/pods/nope: 404 NotFound: pods \"nope\" not found");
  s.api->expect("GET /api/v1/namespaces/ml/pods/nope", status_answer(404, "NotFound", "pods \"nope\" not found"));
  Result<json> as_result = get_pod(*s.client, "ml", "nope");  // the plain conversion keeps the message
  CHECK(as_result.error().message.find("404 NotFound") != std::string::npos);
  CHECK(s.api->spent());
}

TEST_CASE("metadata patches: a 409 (no resourceVersion: the server's contention) is sent again as it was") {
  ScriptedClient s;
  s.api->expect("PATCH /api/v1/namespaces/ml/persistentvolumeclaims/imagenet", conflict_answer());
  s.api->expect("PATCH /api/v1/namespaces/ml/persistentvolumeclaims/imagenet", json_answer(json::object()));
  REQUIRE(patch_pvc_annotations(*s.client, "ml", "imagenet", {{"iogate.io/probe-result", R"({"iops":47000})"}}).ok());
  auto sent = s.api->sent();
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].body == sent[1].body);
  CHECK(testing::body_of(sent[1]) ==
        json{{"metadata", {{"annotations", {{"iogate.io/probe-result", R"({"iops":47000})"}}}}}});
  // No changes, no request.
  CHECK(patch_pvc_annotations(*s.client, "ml", "imagenet", {}).ok());
  CHECK(s.api->sent().size() == 2);
}

TEST_CASE("nodes: labels and annotations by merge patch, on the Node's path") {
  ScriptedClient s;
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_object("1")));
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_object("2")));
  s.api->expect("GET /api/v1/namespaces/ml/persistentvolumeclaims/imagenet", json_answer(json::object()));
  REQUIRE(
      patch_node_labels(*s.client, "n1", {{"iogate.io/disk-class", "nvme"}, {"iogate.io/tier", std::nullopt}}).ok());
  CHECK(last_body(s) ==
        json{{"metadata", {{"labels", {{"iogate.io/disk-class", "nvme"}, {"iogate.io/tier", nullptr}}}}}});
  REQUIRE(patch_node_annotations(*s.client, "n1", {{"iogate.io/report", "{}"}}).ok());
  CHECK(last_body(s) == json{{"metadata", {{"annotations", {{"iogate.io/report", "{}"}}}}}});
  CHECK(get_pvc(*s.client, "ml", "imagenet").ok());
  CHECK(s.api->spent());
}

TEST_CASE("taints: the whole list written with the read's resourceVersion; no PATCH when nothing changes") {
  ScriptedClient s;
  // Added after another owner's.
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("7")));
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_object("8")));
  REQUIRE(ensure_node_taint(*s.client, "n1", kOurs).ok());
  CHECK(last_type(s) == "application/merge-patch+json");
  CHECK(last_body(s) == json{{"metadata", {{"resourceVersion", "7"}}},
                             {"spec", {{"taints", json::array({kForeignTaint, kOursJson})}}}});

  // Already there: a read only.
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("8", {kForeignTaint, kOursJson})));
  REQUIRE(ensure_node_taint(*s.client, "n1", kOurs).ok());
  CHECK(s.api->sent().size() == 3);

  // Another value: replaced in place; a duplicate of ours dropped.
  json degraded = kOursJson;
  degraded["value"] = "degraded";
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("8", {kOursJson, kForeignTaint, kOursJson})));
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_object("9")));
  REQUIRE(ensure_node_taint(*s.client, "n1", {kOurs.key, "degraded", kOurs.effect}).ok());
  CHECK(last_body(s)["spec"]["taints"] == json::array({degraded, kForeignTaint}));

  // Removed: the others kept; absent: a read only; the last one gone: the list set to null.
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("9", {kForeignTaint, kOursJson})));
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_object("10")));
  REQUIRE(remove_node_taint(*s.client, "n1", kOurs.key, kOurs.effect).ok());
  CHECK(last_body(s) ==
        json{{"metadata", {{"resourceVersion", "9"}}}, {"spec", {{"taints", json::array({kForeignTaint})}}}});
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("10")));
  REQUIRE(remove_node_taint(*s.client, "n1", kOurs.key, kOurs.effect).ok());
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("10")));
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_object("11", json::array())));
  REQUIRE(remove_node_taint(*s.client, "n1", kForeignTaint["key"], "").ok());
  CHECK(last_body(s)["spec"]["taints"].is_null());
  CHECK(s.api->spent());
  CHECK(s.api->sent().size() == 10);

  // A taint without a key or effect is refused before any request.
  CHECK_FALSE(ensure_node_taint(*s.client, "n1", {"", "v", "NoSchedule"}).ok());
  CHECK(s.api->sent().size() == 10);
}

TEST_CASE("taints: a 409 (someone wrote between GET and PATCH) reads again and keeps what they added") {
  ScriptedClient s;
  const json intruder = {{"key", "other.example/drain"}, {"effect", "NoExecute"}};
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("7")));
  s.api->expect("PATCH /api/v1/nodes/n1", conflict_answer());
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("8", {kForeignTaint, intruder})));
  s.api->expect("PATCH /api/v1/nodes/n1", json_answer(node_object("9")));
  REQUIRE(ensure_node_taint(*s.client, "n1", kOurs).ok());
  CHECK(s.api->spent());
  CHECK(last_body(s) == json{{"metadata", {{"resourceVersion", "8"}}},
                             {"spec", {{"taints", json::array({kForeignTaint, intruder, kOursJson})}}}});
}

TEST_CASE("taints: a conflict every time gives up after the bounded number of re-reads") {
  ScriptedClient s;
  s.api->otherwise([](const HttpRequest& r) -> TransportResult {
    return r.method == "GET" ? json_answer(node_object("7")) : conflict_answer();
  });
  auto r = ensure_node_taint(*s.client, "n1", kOurs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().conflict());
  CHECK(s.api->sent().size() == 2 * (kTaintConflictRetries + 1));
  CHECK(s.api->count("PATCH") == kTaintConflictRetries + 1);  // each 409 read again, not retried blind
}

TEST_CASE("conditions: one entry by strategic merge on nodes/status; lastTransitionTime kept while the status is") {
  ScriptedClient s;
  // New: the transition is now, the heartbeat too.
  s.api->expect("GET /api/v1/nodes/n1", json_answer(node_object("1")));
  s.api->expect("PATCH /api/v1/nodes/n1/status", json_answer(node_object("2")));
  REQUIRE(
      set_node_condition(*s.client, "n1", {"StorageBelowPolicy", "False", "StorageMeetsPolicy", "47000 IOPS >= 10000"})
          .ok());
  CHECK(last_type(s) == "application/strategic-merge-patch+json");
  json conditions = last_body(s)["status"]["conditions"];
  REQUIRE(conditions.size() == 1);  // the kubelet's Ready is not in the patch at all
  json first = conditions[0];
  CHECK(first["type"] == "StorageBelowPolicy");
  CHECK(first["status"] == "False");
  CHECK(first["reason"] == "StorageMeetsPolicy");
  CHECK(first["message"] == "47000 IOPS >= 10000");
  CHECK(first["lastHeartbeatTime"].get<std::string>().size() == std::string("2026-01-01T00:00:00Z").size());
  CHECK(first["lastTransitionTime"] == first["lastHeartbeatTime"]);

  // The same status since 2025: that transition time is kept.
  json held = node_object("3");
  held["status"]["conditions"].push_back({{"type", "StorageBelowPolicy"},
                                          {"status", "False"},
                                          {"lastHeartbeatTime", "2025-07-01T00:00:00Z"},
                                          {"lastTransitionTime", "2025-07-01T00:00:00Z"}});
  s.api->expect("GET /api/v1/nodes/n1", json_answer(held));
  s.api->expect("PATCH /api/v1/nodes/n1/status", json_answer(held));
  REQUIRE(
      set_node_condition(*s.client, "n1", {"StorageBelowPolicy", "False", "StorageMeetsPolicy", "46000 IOPS >= 10000"})
          .ok());
  json same = last_body(s)["status"]["conditions"][0];
  CHECK(same["lastTransitionTime"] == "2025-07-01T00:00:00Z");
  CHECK(same["lastHeartbeatTime"] != "2025-07-01T00:00:00Z");
  CHECK(same["message"] == "46000 IOPS >= 10000");

  // Another status: a new transition.
  s.api->expect("GET /api/v1/nodes/n1", json_answer(held));
  s.api->expect("PATCH /api/v1/nodes/n1/status", json_answer(held));
  REQUIRE(set_node_condition(*s.client, "n1", {"StorageBelowPolicy", "True", "StorageBelowPolicy", "900 IOPS < 10000"})
              .ok());
  json changed = last_body(s)["status"]["conditions"][0];
  CHECK(changed["lastTransitionTime"] == changed["lastHeartbeatTime"]);
  CHECK(changed["lastTransitionTime"] != "2025-07-01T00:00:00Z");
  CHECK(s.api->spent());
}

EventSpec pod_event() {
  EventSpec e;
  e.ns = "ml";
  e.regarding = {{"kind", "Pod"}, {"namespace", "ml"}, {"name", "trainer-0"}, {"uid", "u-1"}, {"apiVersion", "v1"}};
  e.type = "Warning";
  e.reason = "StorageBelowPolicy";
  e.note = "randread 900 IOPS < 10000 (rule gpu-feed)";
  e.action = "Preflight";
  e.reporting_instance = "iogate-node-a";
  return e;
}

TEST_CASE("events: an events.k8s.io/v1 Event with the fields the API requires") {
  ScriptedClient s;
  s.api->otherwise([](const HttpRequest&) -> TransportResult { return json_answer(json::object(), 201); });
  EventSpec e = pod_event();
  REQUIRE(create_event(*s.client, e).ok());
  REQUIRE(s.api->lines() == std::vector<std::string>{"POST /apis/events.k8s.io/v1/namespaces/ml/events"});
  json sent = last_body(s);
  CHECK(sent["apiVersion"] == "events.k8s.io/v1");
  CHECK(sent["kind"] == "Event");
  CHECK(sent["metadata"]["namespace"] == "ml");
  CHECK(sent["metadata"]["name"].get<std::string>().rfind("trainer-0.", 0) == 0);
  CHECK(sent["eventTime"].get<std::string>().size() == std::string("2026-01-02T03:04:05.123456Z").size());
  CHECK(sent["type"] == "Warning");
  CHECK(sent["reason"] == "StorageBelowPolicy");
  CHECK(sent["note"] == e.note);
  CHECK(sent["action"] == "Preflight");
  CHECK(sent["reportingController"] == "iogate.io/preflight");
  CHECK(sent["reportingInstance"] == "iogate-node-a");
  CHECK(sent["regarding"] == e.regarding);

  // A Node's Event, no instance given: iogate-<hostname>.
  EventSpec node_event = e;
  node_event.ns = "default";
  node_event.regarding = {{"kind", "Node"}, {"name", "n1"}, {"apiVersion", "v1"}};
  node_event.reporting_instance = "";
  REQUIRE(create_event(*s.client, node_event).ok());
  CHECK(s.api->lines().back() == "POST /apis/events.k8s.io/v1/namespaces/default/events");
  CHECK(last_body(s)["reportingInstance"].get<std::string>().rfind("iogate-", 0) == 0);

  // An over-long note is cut to the API's 1 kB instead of being refused.
  EventSpec long_note = e;
  long_note.note = std::string(3000, 'x');
  REQUIRE(create_event(*s.client, long_note).ok());
  CHECK(last_body(s)["note"].get<std::string>().size() == 1024);

  // AlreadyExists: an earlier attempt of this very request was created, its answer lost.
  s.api->expect("POST /apis/events.k8s.io/v1/namespaces/ml/events", status_answer(409, "AlreadyExists", "exists"));
  CHECK(create_event(*s.client, e).ok());
  CHECK(s.api->sent().size() == 4);
}

TEST_CASE("events: a 253-character pod name gets a valid Event name and reportingInstance") {
  // events.k8s.io/v1 caps the name at 253 and reportingInstance at 128 characters; the real
  // apiserver refused such an Event (422) before they were cut (found by e2e.preflight).
  ScriptedClient s;
  s.api->otherwise([](const HttpRequest&) -> TransportResult { return json_answer(json::object(), 201); });
  const std::string pod_name(253, 'p');
  EventSpec e = pod_event();
  e.regarding["name"] = pod_name;
  e.reporting_instance = "iogate-preflight-" + pod_name;
  REQUIRE(create_event(*s.client, e).ok());
  json sent = last_body(s);
  const std::string name = sent["metadata"]["name"].get<std::string>();
  CHECK(name.size() <= 253);
  CHECK(name.back() != '-');
  CHECK(name.back() != '.');
  CHECK(sent["reportingInstance"].get<std::string>().size() == 128);
  CHECK(sent["regarding"]["name"] == pod_name);
}

TEST_CASE("events: an API server without events.k8s.io gets a core/v1 Event; other errors are returned") {
  ScriptedClient s;
  s.api->expect("POST /apis/events.k8s.io/v1/namespaces/ml/events",
                status_answer(404, "NotFound", "the server could not find the requested resource"));
  s.api->expect("POST /api/v1/namespaces/ml/events", json_answer(json::object(), 201));
  EventSpec e = pod_event();
  REQUIRE(create_event(*s.client, e).ok());
  CHECK(s.api->spent());
  json sent = last_body(s);
  CHECK(sent["apiVersion"] == "v1");
  CHECK(sent["involvedObject"] == e.regarding);
  CHECK(sent["message"] == e.note);
  CHECK(sent["source"]["component"] == "iogate.io/preflight");
  CHECK(sent["reportingComponent"] == "iogate.io/preflight");
  CHECK(sent["reportingInstance"] == "iogate-node-a");
  CHECK(sent["count"] == 1);
  CHECK(sent["firstTimestamp"].is_string());
  CHECK(sent["firstTimestamp"] == sent["lastTimestamp"]);
  CHECK(sent["metadata"]["name"].get<std::string>().rfind("trainer-0.", 0) == 0);

  s.api->expect("POST /apis/events.k8s.io/v1/namespaces/ml/events", status_answer(403, "Forbidden", "no"));
  auto refused = create_event(*s.client, e);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().http_status == 403);
  CHECK(s.api->sent().size() == 3);  // no fallback for a refusal
}

}  // namespace
}  // namespace iogate
