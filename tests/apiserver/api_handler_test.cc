// The API semantics through ApiHandler, without sockets: resourceVersion and conflicts, error
// Status shapes, validation, status subresources, dryRun, events in two API versions,
// authentication and token rotation, faults and the request log.
#include <doctest/doctest.h>

#include "api_handler.h"

using nlohmann::json;
using namespace iogate::apiserver;

namespace {

const char* kToken = "unit-token-0123456789";

ApiRequest req(const std::string& method, const std::string& path, const std::string& body = "",
               const std::string& content_type = "") {
  ApiRequest r;
  r.method = method;
  r.path = path;
  r.body = body;
  r.content_type = content_type;
  r.bearer_token = kToken;
  r.authorization_present = true;
  return r;
}

ApiRequest merge(const std::string& path, const std::string& body) {
  return req("PATCH", path, body, "application/merge-patch+json");
}

json body_of(const ApiResponse& r) { return json::parse(r.body); }

struct Cluster {
  ApiHandler api{kToken};
  Cluster() {
    REQUIRE(api.seed(json::parse(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","labels":{"a":"1"}},
        "spec":{"taints":[{"key":"other.io/x","effect":"NoSchedule"}]},
        "status":{"conditions":[{"type":"Ready","status":"True"}]}})"))
                .ok());
    REQUIRE(api.seed(json::parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1","namespace":"ml",
        "ownerReferences":[{"uid":"job-uid","kind":"Job","name":"j","apiVersion":"batch/v1"}]},
        "spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}})"))
                .ok());
  }
  std::string rv(const std::string& resource, const std::string& ns, const std::string& name) {
    return api.object(resource, ns, name).value()["metadata"]["resourceVersion"];
  }
};

}  // namespace

TEST_CASE("resourceVersion: every write advances the cluster-wide counter; a no-op write does not") {
  Cluster c;
  std::string rv0 = c.rv("nodes", "", "n1");
  auto r = c.api.handle(merge("/api/v1/nodes/n1", R"({"metadata":{"labels":{"b":"2"}}})"));
  REQUIRE(r.status == 200);
  std::string rv1 = body_of(r)["metadata"]["resourceVersion"];
  CHECK(std::stoull(rv1) > std::stoull(rv0));
  c.api.handle(merge("/api/v1/namespaces/ml/pods/p1", R"({"metadata":{"annotations":{"x":"y"}}})"));
  CHECK(std::stoull(c.rv("pods", "ml", "p1")) > std::stoull(rv1));  // one counter for all objects
  r = c.api.handle(merge("/api/v1/nodes/n1", R"({"metadata":{"labels":{"b":"2"}}})"));
  CHECK(body_of(r)["metadata"]["resourceVersion"] == rv1);
  // A list reports the counter.
  auto list = body_of(c.api.handle(req("GET", "/api/v1/nodes")));
  CHECK(list["kind"] == "NodeList");
  CHECK(list["metadata"]["resourceVersion"] == c.rv("pods", "ml", "p1"));
  CHECK_FALSE(list["items"][0].contains("kind"));
}

TEST_CASE("a patch or update carrying a stale resourceVersion is a 409 Conflict with the real message") {
  Cluster c;
  std::string rv = c.rv("nodes", "", "n1");
  auto ok =
      c.api.handle(merge("/api/v1/nodes/n1", R"({"metadata":{"resourceVersion":")" + rv + R"(","labels":{"b":"2"}}})"));
  CHECK(ok.status == 200);
  auto stale =
      c.api.handle(merge("/api/v1/nodes/n1", R"({"metadata":{"resourceVersion":")" + rv + R"(","labels":{"b":"3"}}})"));
  REQUIRE(stale.status == 409);
  json s = body_of(stale);
  CHECK(s["kind"] == "Status");
  CHECK(s["reason"] == "Conflict");
  CHECK(s["message"] ==
        "Operation cannot be fulfilled on nodes \"n1\": the object has been modified; please apply your changes "
        "to the latest version and try again");
  CHECK(c.api.object("nodes", "", "n1").value()["metadata"]["labels"]["b"] == "2");
  // PUT requires a resourceVersion and checks it.
  json node = c.api.object("nodes", "", "n1").value();
  node["metadata"]["labels"]["put"] = "yes";
  CHECK(c.api.handle(req("PUT", "/api/v1/nodes/n1", node.dump())).status == 200);
  CHECK(c.api.handle(req("PUT", "/api/v1/nodes/n1", node.dump())).status == 409);
  node["metadata"].erase("resourceVersion");
  CHECK(c.api.handle(req("PUT", "/api/v1/nodes/n1", node.dump())).status == 422);
}

TEST_CASE("error Status shapes: 404 NotFound with details, 415 for a non-patch type, 405") {
  Cluster c;
  auto r = c.api.handle(req("GET", "/api/v1/namespaces/ml/pods/nope"));
  REQUIRE(r.status == 404);
  CHECK(body_of(r) == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"pods \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404})"));
  r = c.api.handle(req("GET", "/apis/events.k8s.io/v1/namespaces/ml/events/nope"));
  CHECK(body_of(r)["message"] == "events.events.k8s.io \"nope\" not found");
  r = c.api.handle(req("PATCH", "/api/v1/nodes/n1", "{}", "application/json"));
  CHECK(r.status == 415);
  CHECK(body_of(r)["reason"] == "UnsupportedMediaType");
  CHECK(c.api.handle(req("GET", "/api/v1/widgets")).status == 404);
  CHECK(c.api.handle(req("POST", "/api/v1/pods", "{}")).status == 405);
}

TEST_CASE("validation: label values and keys, annotation size, taint effects and duplicates → 422 Invalid") {
  Cluster c;
  auto r = c.api.handle(merge("/api/v1/nodes/n1", R"({"metadata":{"labels":{"iogate.io/tier":"not valid!"}}})"));
  REQUIRE(r.status == 422);
  json s = body_of(r);
  CHECK(s["reason"] == "Invalid");
  CHECK(s["details"]["causes"][0]["field"] == "metadata.labels");
  CHECK(s["message"].get<std::string>().rfind("Node \"n1\" is invalid: metadata.labels: Invalid value: \"not valid!\"",
                                              0) == 0);
  CHECK(c.api.handle(merge("/api/v1/nodes/n1", R"({"metadata":{"labels":{"bad/key/x":"v"}}})")).status == 422);
  CHECK(c.api.handle(merge("/api/v1/nodes/n1", R"({"metadata":{"labels":{"k":")" + std::string(64, 'a') + R"("}}})"))
            .status == 422);
  CHECK(c.api.handle(merge("/api/v1/nodes/n1", R"({"metadata":{"labels":{"iogate.io/randread-iops":"47000"}}})"))
            .status == 200);
  // 256 KiB of annotations in total, keys included.
  json big = {{"metadata", {{"annotations", {{"iogate.io/report", std::string(256 * 1024, 'x')}}}}}};
  r = c.api.handle(merge("/api/v1/namespaces/ml/pods/p1", big.dump()));
  REQUIRE(r.status == 422);
  CHECK(body_of(r)["details"]["causes"][0]["reason"] == "FieldValueTooLong");
  big["metadata"]["annotations"]["iogate.io/report"] = std::string(200 * 1024, 'x');
  CHECK(c.api.handle(merge("/api/v1/namespaces/ml/pods/p1", big.dump())).status == 200);
  // Taints.
  CHECK(c.api.handle(merge("/api/v1/nodes/n1", R"({"spec":{"taints":[{"key":"k","effect":"Sometimes"}]}})")).status ==
        422);
  CHECK(
      c.api
          .handle(merge(
              "/api/v1/nodes/n1",
              R"({"spec":{"taints":[{"key":"k","effect":"NoSchedule"},{"key":"k","value":"2","effect":"NoSchedule"}]}})"))
          .status == 422);
}

TEST_CASE("status subresources: the main resource ignores status, /status ignores spec, pods keep ownerReferences") {
  Cluster c;
  auto smp = [&](const std::string& path, const std::string& body) {
    return c.api.handle(req("PATCH", path, body, "application/strategic-merge-patch+json"));
  };
  REQUIRE(
      smp("/api/v1/nodes/n1/status",
          R"({"status":{"conditions":[{"type":"StorageBelowPolicy","status":"True"}]},"spec":{"unschedulable":true}})")
          .status == 200);
  json n1 = c.api.object("nodes", "", "n1").value();
  CHECK(n1["status"]["conditions"].size() == 2);
  CHECK_FALSE(n1["spec"].contains("unschedulable"));
  REQUIRE(smp("/api/v1/nodes/n1", R"({"status":{"conditions":null},"spec":{"unschedulable":true}})").status == 200);
  n1 = c.api.object("nodes", "", "n1").value();
  CHECK(n1["status"]["conditions"].size() == 2);
  CHECK(n1["spec"]["unschedulable"] == true);
  REQUIRE(smp("/api/v1/namespaces/ml/pods/p1/status",
              R"({"status":{"phase":"Succeeded"},"metadata":{"ownerReferences":null}})")
              .status == 200);
  json p1 = c.api.object("pods", "ml", "p1").value();
  CHECK(p1["status"]["phase"] == "Succeeded");
  CHECK(p1["metadata"]["ownerReferences"].size() == 1);
  CHECK(c.api.handle(req("GET", "/api/v1/namespaces/ml/events/x/status")).status == 404);
}

TEST_CASE("dryRun=All validates and answers but does not persist") {
  Cluster c;
  std::string rv = c.rv("nodes", "", "n1");
  auto r = merge("/api/v1/nodes/n1", R"({"metadata":{"labels":{"dry":"run"}}})");
  r.query.emplace("dryRun", "All");
  auto out = c.api.handle(r);
  REQUIRE(out.status == 200);
  CHECK(body_of(out)["metadata"]["labels"]["dry"] == "run");
  CHECK_FALSE(c.api.object("nodes", "", "n1").value()["metadata"]["labels"].contains("dry"));
  CHECK(c.rv("nodes", "", "n1") == rv);
}

TEST_CASE("events: core/v1 is lenient, events.k8s.io/v1 strict; one object seen through both") {
  Cluster c;
  auto core =
      c.api.handle(req("POST", "/api/v1/namespaces/ml/events",
                       R"({"metadata":{"name":"old"},"involvedObject":{"kind":"Pod","namespace":"ml","name":"p1"},
                                   "reason":"Started","message":"m","type":"Normal"})"));
  CHECK(core.status == 201);
  auto v1 = c.api.handle(req("POST", "/apis/events.k8s.io/v1/namespaces/ml/events",
                             R"({"metadata":{"name":"new"},"eventTime":"2025-01-01T00:00:00.000000Z","type":"Warning",
                                 "reason":"StorageBelowPolicy","action":"Preflight","note":"slow",
                                 "reportingController":"iogate.io/preflight","reportingInstance":"iogate-n1",
                                 "regarding":{"kind":"Pod","namespace":"ml","name":"p1"}})"));
  REQUIRE(v1.status == 201);
  CHECK(body_of(v1)["note"] == "slow");
  json stored = c.api.object("events", "ml", "new").value();
  CHECK(stored["message"] == "slow");
  CHECK(stored["reportingComponent"] == "iogate.io/preflight");
  CHECK(stored["involvedObject"]["name"] == "p1");
  auto as_core = body_of(c.api.handle(req("GET", "/api/v1/namespaces/ml/events/new")));
  CHECK(as_core["apiVersion"] == "v1");
  CHECK(as_core["message"] == "slow");
  // Missing fields through events.k8s.io/v1.
  auto bad = c.api.handle(req("POST", "/apis/events.k8s.io/v1/namespaces/ml/events",
                              R"({"metadata":{"name":"bad"},"eventTime":"2025-01-01T00:00:00.000000Z","type":"Fine",
                                  "regarding":{"kind":"Pod","namespace":"ml","name":"p1"}})"));
  REQUIRE(bad.status == 422);
  std::string msg = body_of(bad)["message"];
  for (const char* want : {"reportingController: Required value", "reportingInstance: Required value",
                           "action: Required value", "reason: Required value", "type: Invalid value"}) {
    CHECK_MESSAGE(msg.find(want) != std::string::npos, want);
  }
  // Through core/v1 the controller field is reportingComponent.
  bad = c.api.handle(req("POST", "/api/v1/namespaces/ml/events",
                         R"({"metadata":{"name":"bad"},"eventTime":"2025-01-01T00:00:00.000000Z",
                             "involvedObject":{"kind":"Pod","namespace":"ml","name":"p1"}})"));
  CHECK(body_of(bad)["message"].get<std::string>().find("reportingComponent: Required value") != std::string::npos);
  // A namespace that does not exist.
  auto missing_ns = c.api.handle(req("POST", "/api/v1/namespaces/nope/events", R"({"metadata":{"name":"e"}})"));
  CHECK(missing_ns.status == 404);
  CHECK(body_of(missing_ns)["message"] == "namespaces \"nope\" not found");
  // generateName, and the same name twice.
  auto gen = c.api.handle(req("POST", "/api/v1/namespaces/ml/events",
                              R"({"metadata":{"generateName":"p1."},"involvedObject":{"namespace":"ml"}})"));
  REQUIRE(gen.status == 201);
  CHECK(body_of(gen)["metadata"]["name"].get<std::string>().size() == 8);
  CHECK(c.api
            .handle(req("POST", "/api/v1/namespaces/ml/events",
                        R"({"metadata":{"name":"old"},"involvedObject":{"namespace":"ml"}})"))
            .status == 409);
}

TEST_CASE("authentication: bearer token, client certificate, anonymous only for /version; rotation") {
  Cluster c;
  ApiRequest r = req("GET", "/api/v1/nodes/n1");
  CHECK(c.api.handle(r).status == 200);
  r.bearer_token = "wrong";
  auto denied = c.api.handle(r);
  REQUIRE(denied.status == 401);
  CHECK(body_of(denied) == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"Unauthorized","reason":"Unauthorized","code":401})"));
  r.bearer_token.reset();
  r.authorization_present = false;
  CHECK(c.api.handle(r).status == 401);
  CHECK(c.api
            .handle([&] {
              auto v = r;
              v.path = "/version";
              return v;
            }())
            .status == 200);
  r.client_cert_user = "iogate-test";
  CHECK(c.api.handle(r).status == 200);
  // Rotation: the old token stops working, the new one works, for the control API too.
  c.api.set_token("rotated-token");
  CHECK(c.api.handle(req("GET", "/api/v1/nodes/n1")).status == 401);
  CHECK(c.api.handle(req("GET", "/_test/requests")).status == 401);
  ApiRequest fresh = req("GET", "/api/v1/nodes/n1");
  fresh.bearer_token = "rotated-token";
  CHECK(c.api.handle(fresh).status == 200);
}

TEST_CASE(
    "faults: 429 with Retry-After in plain text, 500 Status, drop, delay; by method and path; for count requests") {
  Cluster c;
  Fault too_many{"GET", "/api/v1/nodes/.*", FaultKind::kTooManyRequests, 0, 7, 1};
  c.api.add_fault(too_many);
  auto r = c.api.handle(req("GET", "/api/v1/nodes/n1"));
  CHECK(r.status == 429);
  CHECK(r.content_type.rfind("text/plain", 0) == 0);
  CHECK(r.body == "Too many requests, please try again later.\n");
  CHECK(r.headers == std::vector<std::pair<std::string, std::string>>{{"Retry-After", "7"}});
  CHECK(c.api.handle(req("GET", "/api/v1/nodes/n1")).status == 200);  // count spent
  c.api.add_fault({"PATCH", "/api/v1/nodes/n1", FaultKind::kInternalError, 0, 1, 2});
  CHECK(c.api.handle(req("GET", "/api/v1/nodes/n1")).status == 200);  // other method
  auto failed = c.api.handle(merge("/api/v1/nodes/n1", "{}"));
  CHECK(failed.status == 500);
  CHECK(body_of(failed)["reason"] == "InternalError");
  CHECK(c.api.handle(merge("/api/v1/nodes/n1", "{}")).status == 500);
  CHECK(c.api.handle(merge("/api/v1/nodes/n1", "{}")).status == 200);
  c.api.add_fault({"", ".*", FaultKind::kDrop, 0, 1, -1});
  CHECK(c.api.handle(req("GET", "/version")).drop_connection);
  CHECK(c.api.handle(req("GET", "/version")).drop_connection);  // always
  c.api.clear_faults();
  c.api.add_fault({"", "/version", FaultKind::kDelay, 1, 1, 1});
  CHECK(c.api.handle(req("GET", "/version")).status == 200);
  auto log = c.api.requests();
  CHECK(log.back().fault == "delay");
  CHECK(log[log.size() - 2].fault == "drop");
  CHECK(log[log.size() - 2].status == 0);
  CHECK(log[0].status == 429);
  // Bad fault specs.
  CHECK_FALSE(fault_from_json(json::parse(R"({"kind":"503"})")).ok());
  CHECK_FALSE(fault_from_json(json::parse(R"({"kind":"500","path_regex":"("})")).ok());
  CHECK(fault_from_json(json::parse(R"({"kind":"drop"})")).value().count == -1);
}

TEST_CASE(
    "a write fault is a concurrent writer: a PATCH with the resourceVersion it read gets 409, a re-read succeeds") {
  ApiHandler api{kToken};
  REQUIRE(api.seed(json::parse(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"gpu-1"},
      "spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]}})"))
              .ok());
  // As POSTed to /_test/faults. A merge patch replaces spec.taints whole: the other writer lists
  // the taint that was there and adds its own.
  auto fault = api.handle(req("POST", "/_test/faults", R"({"method":"PATCH","path_regex":"/api/v1/nodes/gpu-1",
      "kind":"write","count":1,"patch":{"spec":{"taints":[
        {"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"},
        {"key":"other.io/x","value":"1","effect":"NoSchedule"}]}}})"));
  REQUIRE(fault.status == 201);
  CHECK(body_of(fault)["kind"] == "write");
  CHECK(body_of(fault)["patch"]["spec"]["taints"].size() == 2);

  // Read, modify, write with the resourceVersion read: the other writer slipped in between.
  json node = body_of(api.handle(req("GET", "/api/v1/nodes/gpu-1")));
  const std::string rv0 = node["metadata"]["resourceVersion"];
  json taints = node["spec"]["taints"];
  taints.push_back({{"key", "iogate.io/storage-below-policy"}, {"effect", "NoSchedule"}});
  json patch = {{"metadata", {{"resourceVersion", rv0}}}, {"spec", {{"taints", taints}}}};
  auto raced = api.handle(merge("/api/v1/nodes/gpu-1", patch.dump()));
  REQUIRE(raced.status == 409);
  CHECK(body_of(raced)["reason"] == "Conflict");
  json stored = api.object("nodes", "", "gpu-1").value();
  CHECK(std::stoull(stored["metadata"]["resourceVersion"].get<std::string>()) > std::stoull(rv0));
  REQUIRE(stored["spec"]["taints"].size() == 2);
  CHECK(stored["spec"]["taints"][1]["key"] == "other.io/x");
  CHECK(stored["spec"]["taints"][1]["value"] == "1");
  CHECK(stored["metadata"]["uid"] == node["metadata"]["uid"]);
  auto log = api.requests();
  CHECK(log.back().fault == "write");
  CHECK(log.back().status == 409);

  // Read again and retry: the count is spent, the foreign taint survives.
  node = body_of(api.handle(req("GET", "/api/v1/nodes/gpu-1")));
  taints = node["spec"]["taints"];
  taints.push_back({{"key", "iogate.io/storage-below-policy"}, {"effect", "NoSchedule"}});
  patch = {{"metadata", {{"resourceVersion", node["metadata"]["resourceVersion"]}}}, {"spec", {{"taints", taints}}}};
  auto retried = api.handle(merge("/api/v1/nodes/gpu-1", patch.dump()));
  REQUIRE(retried.status == 200);
  CHECK(api.requests().back().fault.empty());
  stored = api.object("nodes", "", "gpu-1").value();
  REQUIRE(stored["spec"]["taints"].size() == 3);
  CHECK(stored["spec"]["taints"][0]["key"] == "nvidia.com/gpu");
  CHECK(stored["spec"]["taints"][1]["key"] == "other.io/x");
  CHECK(stored["spec"]["taints"][2]["key"] == "iogate.io/storage-below-policy");
}

TEST_CASE("body_regex: a fault fires only for the request whose body matches") {
  ApiHandler api{kToken};
  REQUIRE(api.seed(json::parse(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"gpu-1"}})")).ok());
  REQUIRE(
      api
          .handle(req(
              "POST", "/_test/faults",
              R"({"method":"PATCH","path_regex":"/api/v1/nodes/gpu-1","body_regex":"taints","kind":"500","count":1})"))
          .status == 201);
  CHECK(api.handle(merge("/api/v1/nodes/gpu-1", R"({"metadata":{"labels":{"a":"b"}}})")).status == 200);
  CHECK(api.handle(merge("/api/v1/nodes/gpu-1", R"({"spec":{"taints":[]}})")).status == 500);
  CHECK(api.handle(merge("/api/v1/nodes/gpu-1", R"({"spec":{"taints":[]}})")).status == 200);  // count spent
  CHECK(api.handle(req("POST", "/_test/faults", R"({"body_regex":"(","kind":"500"})")).status == 400);
}

TEST_CASE("a write fault on a /status path writes the main object; one that cannot write says why in the log") {
  Cluster c;
  const std::string rv0 = c.rv("nodes", "", "n1");
  c.api.add_fault({"PATCH", ".*/status", FaultKind::kWrite, 0, 1, 1,
                   json::parse(R"({"metadata":{"labels":{"other":"yes"}},"status":{"capacity":{"cpu":"8"}}})")});
  auto raced = c.api.handle(req("PATCH", "/api/v1/nodes/n1/status",
                                R"({"metadata":{"resourceVersion":")" + rv0 +
                                    R"("},"status":{"conditions":[{"type":"StorageBelowPolicy","status":"True"}]}})",
                                "application/strategic-merge-patch+json"));
  CHECK(raced.status == 409);
  json n1 = c.api.object("nodes", "", "n1").value();
  CHECK(n1["metadata"]["labels"]["other"] == "yes");
  CHECK(n1["status"]["capacity"]["cpu"] == "8");
  CHECK(n1["status"]["conditions"].size() == 1);
  // Nothing to write: the request proceeds as if there were no fault, and the log says why.
  c.api.add_fault({"GET", "/api/v1/nodes/nope", FaultKind::kWrite, 0, 1, 1, json::parse(R"({"spec":{}})")});
  CHECK(c.api.handle(req("GET", "/api/v1/nodes/nope")).status == 404);
  CHECK(c.api.requests().back().fault == R"(write: nodes "nope" not found)");
  // A write the server would refuse is not stored either.
  const std::string rv1 = c.rv("nodes", "", "n1");
  c.api.add_fault({"GET", "/api/v1/nodes/n1", FaultKind::kWrite, 0, 1, 1,
                   json::parse(R"({"spec":{"taints":[{"key":"k","effect":"Sometimes"}]}})")});
  CHECK(c.api.handle(req("GET", "/api/v1/nodes/n1")).status == 200);
  CHECK(c.api.requests().back().fault.rfind("write: Node \"n1\" is invalid", 0) == 0);
  CHECK(c.rv("nodes", "", "n1") == rv1);
}

TEST_CASE("write fault specs: the patch must be an object, and it round-trips") {
  auto missing = fault_from_json(json::parse(R"({"kind":"write","path_regex":"/api/v1/nodes/n1"})"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("fault.patch") != std::string::npos);
  auto not_object = fault_from_json(json::parse(R"({"kind":"write","patch":[{"op":"add"}]})"));
  REQUIRE_FALSE(not_object.ok());
  CHECK(not_object.error().code == 400);
  CHECK(not_object.error().message.find("fault.patch") != std::string::npos);
  auto ok = fault_from_json(json::parse(R"({"kind":"write","patch":{"metadata":{"labels":{"a":null}}},"count":2})"));
  REQUIRE(ok.ok());
  CHECK(ok.value().kind == FaultKind::kWrite);
  json j = fault_to_json(ok.value());
  CHECK(j["kind"] == "write");
  CHECK(j["patch"] == json::parse(R"({"metadata":{"labels":{"a":null}}})"));
  auto again = fault_from_json(j);
  REQUIRE(again.ok());
  CHECK(again.value().patch == ok.value().patch);
  CHECK(again.value().count == 2);
  CHECK_FALSE(fault_to_json(Fault{}).contains("patch"));
}

TEST_CASE("the request log: method, path, query, content type, status, redacted auth; /_test/ not logged") {
  Cluster c;
  auto r = merge("/api/v1/nodes/n1", R"({"metadata":{"labels":{"b":"2"}}})");
  r.query.emplace("fieldManager", "iogate");
  c.api.handle(r);
  c.api.handle(req("GET", "/_test/requests"));
  auto log = c.api.requests();
  REQUIRE(log.size() == 1);
  CHECK(log[0].method == "PATCH");
  CHECK(log[0].path == "/api/v1/nodes/n1");
  CHECK(log[0].query == "fieldManager=iogate");
  CHECK(log[0].content_type == "application/merge-patch+json");
  CHECK(log[0].status == 200);
  CHECK(log[0].auth == "Bearer <redacted>");
  auto http_log = c.api.handle(req("GET", "/_test/requests"));
  CHECK(http_log.body.find(kToken) == std::string::npos);
  CHECK(body_of(http_log)[0]["body"] == R"({"metadata":{"labels":{"b":"2"}}})");
  c.api.clear_requests();
  CHECK(c.api.requests().empty());
}

TEST_CASE("lists: label and field selectors, all namespaces, and a Table when asked") {
  Cluster c;
  REQUIRE(
      c.api
          .seed(json::parse(
              R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p2","namespace":"other","labels":{"app":"x"}}})"))
          .ok());
  auto list = [&](const std::string& path, const std::string& key, const std::string& value) {
    auto r = req("GET", path);
    if (!key.empty()) r.query.emplace(key, value);
    return body_of(c.api.handle(r))["items"].size();
  };
  CHECK(list("/api/v1/pods", "", "") == 2);
  CHECK(list("/api/v1/namespaces/ml/pods", "", "") == 1);
  CHECK(list("/api/v1/pods", "labelSelector", "app=x") == 1);
  CHECK(list("/api/v1/pods", "labelSelector", "app!=x") == 1);
  CHECK(list("/api/v1/pods", "fieldSelector", "metadata.name=p1") == 1);
  auto r = req("GET", "/api/v1/nodes");
  r.accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
  json table = body_of(c.api.handle(r));
  CHECK(table["kind"] == "Table");
  CHECK(table["columnDefinitions"][1]["name"] == "Status");
  CHECK(table["rows"][0]["cells"][0] == "n1");
  CHECK(table["rows"][0]["cells"][1] == "Ready");
  CHECK(table["rows"][0]["object"]["kind"] == "PartialObjectMetadata");
}

TEST_CASE("seeding: kinds, namespaces made on demand, bad input named") {
  ApiHandler api{kToken};
  CHECK_FALSE(api.seed(json::parse(R"({"kind":"Widget","metadata":{"name":"w"}})")).ok());
  CHECK_FALSE(api.seed(json::parse(R"({"kind":"Pod","metadata":{}})")).ok());
  auto pvc = api.seed(
      json::parse(R"({"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"data","namespace":"ml"}})"));
  REQUIRE(pvc.ok());
  CHECK_FALSE(pvc.value()["metadata"]["uid"].get<std::string>().empty());
  CHECK(api.object("namespaces", "", "ml").has_value());
  CHECK(api.handle(req("GET", "/api/v1/namespaces/ml/persistentvolumeclaims/data")).status == 200);
}
