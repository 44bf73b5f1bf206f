#include <doctest/doctest.h>

#include <string>

#include "admission_fixtures.h"
#include "webhook/admission.h"
#include "webhook/admission_review.h"
#include "webhook/json_patch.h"

namespace iogate {
namespace {

using namespace iogate::test;

NodeView fixed_node(const std::string& name) {
  return NodeView{true, name, {{"metadata", {{"labels", {{"iogate.io/randread-iops", "100"}}}}}}, ""};
}

// Both endpoints, for input that must get the same kind of answer from each.
std::vector<AdmissionOutcome> both(const std::string& body, const Policy& policy) {
  return {handle_mutate(body, config_for(policy)), handle_validate(body, config_for(policy), fixed_node)};
}

TEST_CASE("malformed bodies: HTTP 400 (413 when too large) with a short text, never an exception") {
  Policy policy = gpu_feed();
  struct Case {
    const char* name;
    std::string body;
    int status;
    const char* text;
  } cases[] = {
      {"empty", "", 400, "empty request body"},
      {"not JSON", "GET / HTTP/1.1", 400, "not JSON"},
      {"truncated JSON", review(pod("1")).substr(0, 100), 400, "not JSON"},
      {"trailing garbage", review(pod("1")) + "}", 400, "not JSON"},
      {"a JSON array", "[1,2,3]", 400, "a JSON array"},
      {"a JSON string", "\"AdmissionReview\"", 400, "a JSON string"},
      {"null", "null", 400, "a JSON null"},
      {"invalid UTF-8 in a string", "{\"kind\":\"\xff\xfe\"}", 400, "not JSON"},
      {"deeply nested", std::string(100000, '[') + std::string(100000, ']'), 400, "nested deeper than 100"},
      {"too large", std::string(kMaxAdmissionBody + 1, ' '), 413, "larger than"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    for (const AdmissionOutcome& o : both(c.body, policy)) {
      CHECK(o.http_status == c.status);
      CHECK(o.content_type.rfind("text/plain", 0) == 0);
      CHECK(o.body.find(c.text) != std::string::npos);
      CHECK(o.body.size() < 1100);
      CHECK(o.log_line.find('\n') == std::string::npos);
      CHECK_FALSE(o.log_line.empty());
    }
  }
}

TEST_CASE("depth check: brackets inside strings do not count, the limit itself passes") {
  CHECK(json_depth_within("{\"a\":\"[[[[[[[[[[[[[[[\\\"[[[[\"}", 1));
  CHECK(json_depth_within(std::string(100, '[') + std::string(100, ']'), 100));
  CHECK_FALSE(json_depth_within(std::string(101, '[') + std::string(101, ']'), 100));
  // A real review is far from the limit.
  CHECK(json_depth_within(review(pod("1")), 20));
}

// A review that parses but lacks what a decision needs: 200, allowed false, status.code 400.
void check_bad_review(const json& body, const std::string& uid, const std::string& why, const Policy& policy) {
  CAPTURE(body.dump().substr(0, 300));
  for (const AdmissionOutcome& o : both(body.dump(), policy)) {
    json r = response_of(o);
    CHECK(r["uid"] == uid);
    CHECK(r["allowed"] == false);
    CHECK(r["status"]["code"] == 400);
    CHECK(r["status"]["message"].get<std::string>().find(why) != std::string::npos);
    CHECK(o.log_line.find("refused (400)") != std::string::npos);
  }
}

TEST_CASE("bad reviews: wrong apiVersion or kind, missing request, uid or object, mistyped fields") {
  Policy policy = gpu_feed();
  const std::string uid = "705ab4f5-6393-11e8-b7cc-42010a800002";
  json r = review_json(pod("1"));

  json v1beta1 = r;
  v1beta1["apiVersion"] = "admission.k8s.io/v1beta1";
  check_bad_review(v1beta1, uid, "expected \"admission.k8s.io/v1\"", policy);
  json kind = r;
  kind["kind"] = "AdmissionResponse";
  check_bad_review(kind, uid, "kind is \"AdmissionResponse\"", policy);
  json no_kind = r;
  no_kind.erase("kind");
  check_bad_review(no_kind, uid, "kind is \"\"", policy);

  check_bad_review({{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}}, "", "no request object",
                   policy);
  json request_string = r;
  request_string["request"] = "CREATE";
  check_bad_review(request_string, "", "no request object", policy);

  json no_uid = r;
  no_uid["request"].erase("uid");
  check_bad_review(no_uid, "", "request.uid", policy);
  json number_uid = r;
  number_uid["request"]["uid"] = 12345;
  check_bad_review(number_uid, "", "request.uid", policy);

  json no_object = r;
  no_object["request"].erase("object");
  check_bad_review(no_object, uid, "request.object is missing", policy);
  json string_object = r;
  string_object["request"]["object"] = "pod";
  check_bad_review(string_object, uid, "request.object is missing or not an object", policy);
  json config_map = r;
  config_map["request"]["object"] = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"data", {{"a", "b"}}}};
  check_bad_review(config_map, uid, "request.object is a ConfigMap, not a Pod", policy);

  json number_operation = r;
  number_operation["request"]["operation"] = 1;
  check_bad_review(number_operation, uid, "request.operation is a number, not a string", policy);
  json number_namespace = r;
  number_namespace["request"]["namespace"] = 7;
  check_bad_review(number_namespace, uid, "request.namespace is a number", policy);
  json no_resource = r;
  no_resource["request"].erase("resource");
  check_bad_review(no_resource, uid, "request.resource", policy);
  json dry_string = r;
  dry_string["request"]["dryRun"] = "true";
  check_bad_review(dry_string, uid, "request.dryRun is a string", policy);
}

TEST_CASE("numbers where strings are expected inside the pod are read as absent, not trusted") {
  Policy policy = gpu_feed();
  json p = pod("2");
  p["metadata"]["name"] = 5;
  p["metadata"]["labels"]["team"] = 1;
  p["metadata"]["annotations"]["iogate.io/inject-preflight"] = 3;
  p["metadata"]["annotations"]["iogate.io/skip"] = true;
  p["spec"]["nodeName"] = 42;
  p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 2;  // a number is a valid quantity
  AdmissionOutcome m = handle_mutate(review(p), config_for(policy));
  json r = response_of(m);
  CHECK(r["allowed"] == true);
  CHECK(patched(p, m)["spec"]["affinity"]["nodeAffinity"].is_object());
  json v = response_of(handle_validate(review(p), config_for(policy), fixed_node));
  CHECK(v["allowed"] == true);  // nodeName 42 pins to nothing
}

TEST_CASE("only CREATE (and UPDATE for validate) of pods is acted on; the rest is allowed as it is") {
  Policy policy = gpu_feed();
  json slow_pod = pod("8");
  slow_pod["spec"]["nodeName"] = "slow";

  json deployment = review_json({{"apiVersion", "apps/v1"}, {"kind", "Deployment"}});
  deployment["request"]["resource"] = {{"group", "apps"}, {"version", "v1"}, {"resource", "deployments"}};
  json status = review_json(slow_pod, "UPDATE", slow_pod);
  status["request"]["subResource"] = "status";
  json binding = review_json({{"kind", "Binding"}}, "CREATE");
  binding["request"]["subResource"] = "binding";
  json del = review_json(nullptr, "DELETE", slow_pod);
  json connect = review_json(nullptr, "CONNECT");
  for (const json& body : {deployment, status, binding, del, connect}) {
    CAPTURE(body["request"]["operation"]);
    for (const AdmissionOutcome& o : both(body.dump(), policy)) {
      json r = response_of(o);
      CHECK(r["allowed"] == true);
      CHECK_FALSE(r.contains("patch"));
      CHECK(o.log_line.find("not acted on") != std::string::npos);
    }
  }
  // mutate leaves UPDATEs alone: the spec it would patch is immutable by then.
  AdmissionOutcome update = handle_mutate(review(slow_pod, "UPDATE", slow_pod), config_for(policy));
  CHECK_FALSE(response_of(update).contains("patch"));
}

TEST_CASE("a configuration without a policy is a 500, not a crash") {
  WebhookConfig config;
  AdmissionOutcome m = handle_mutate(review(pod("1")), config);
  CHECK(m.http_status == 500);
  AdmissionOutcome v = handle_validate(review(pod("1")), config, fixed_node);
  CHECK(v.http_status == 500);
}

TEST_CASE("JSON Pointer tokens escape ~ before /") {
  CHECK(pointer_token("iogate.io/skip") == "iogate.io~1skip");
  CHECK(pointer_token("a~/b") == "a~0~1b");
  CHECK(pointer({"metadata", "annotations", "example.com/x~y"}) == "/metadata/annotations/example.com~1x~0y");
  // What the pointer says is what nlohmann (and the API server's json-patch) resolve.
  json doc = {{"metadata", {{"annotations", {{"example.com/x~y", "v"}}}}}};
  CHECK(doc.at(json::json_pointer(pointer({"metadata", "annotations", "example.com/x~y"}))) == "v");
}

TEST_CASE("warnings are cut to fit a Warning header and carry no control characters") {
  AdmissionResponse r;
  r.warnings = {std::string(1000, 'w'), "node a\nb"};
  json review = json::parse(admission_review_json("u", r));
  json w = review["response"]["warnings"];
  REQUIRE(w.size() == 2);
  CHECK(w[0].get<std::string>().size() <= 253);
  CHECK(w[1] == "node a\\x0ab");
}

TEST_CASE("a refusal is a Failure Status with the reason the apiserver's own refusals carry") {
  // The apiserver passes the webhook's status through; kubectl names the reason from it
  // ("Error from server (Forbidden)"), and clients classify the failure by it.
  AdmissionResponse r;
  r.allowed = false;
  r.code = 403;
  r.message = "node slow-1 serves 900 randread IOPS, the pod needs 10000";
  json status = json::parse(admission_review_json("u", r))["response"]["status"];
  CHECK(status["status"] == "Failure");
  CHECK(status["reason"] == "Forbidden");
  CHECK(status["code"] == 403);
  CHECK(status["message"] == r.message);
  r.code = 400;
  CHECK(json::parse(admission_review_json("u", r))["response"]["status"]["reason"] == "BadRequest");
  // An allowed review carries no status at all.
  AdmissionResponse ok;
  ok.allowed = true;
  CHECK_FALSE(json::parse(admission_review_json("u", ok))["response"].contains("status"));
}

TEST_CASE("a pod name with a newline does not break the log line") {
  Policy policy = gpu_feed();
  json p = pod("1");
  p["metadata"]["name"] = "evil\nINFO forged line";
  json body = review_json(p);
  body["request"]["name"] = "evil\nINFO forged line";
  AdmissionOutcome o = handle_mutate(body.dump(), config_for(policy));
  CHECK(o.log_line.find('\n') == std::string::npos);
  CHECK(o.log_line.find("evil\\x0aINFO") != std::string::npos);
}

}  // namespace
}  // namespace iogate
