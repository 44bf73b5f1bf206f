// `iogate webhook check`: the dry-run pod it sends (to a scripted API: that the real one stores
// nothing for dryRun=All and calls the webhook is e2e.least_reach's and e2e.admission's), and its
// verdict on each kind of answer the real API server gives, with the API server's own error texts.
#include <doctest/doctest.h>

#include "kube/scripted_api.h"
#include "webhook/webhook_check.h"

namespace iogate {
namespace {

using nlohmann::json;

ApiResult<json> refused(int status, const std::string& reason, const std::string& message) {
  return ApiError{"POST /api/v1/namespaces/default/pods", status, reason, message};
}

TEST_CASE("the dry-run pod: one GPU, the inject-preflight annotation on a volume it has, restricted") {
  WebhookCheckOptions o;
  json pod = webhook_check_pod(o);
  CHECK(pod["metadata"]["generateName"] == "iogate-webhook-check-");
  CHECK(pod["metadata"]["annotations"]["iogate.io/inject-preflight"] == "data");
  CHECK(pod["spec"]["volumes"][0]["name"] == "data");
  CHECK(pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
  CHECK(pod["spec"]["securityContext"]["runAsNonRoot"] == true);
  CHECK(pod["spec"]["containers"][0]["securityContext"]["capabilities"]["drop"] == json{"ALL"});
}

TEST_CASE("check_webhook: a server-side dry run; admitted unmutated (no webhook called) is a failure") {
  testing::ScriptedClient s;
  WebhookCheckOptions o;
  o.ns = "ml";
  o.gpu_resource = "amd.com/gpu";
  // No such namespace (the API server's 404): the message names the value.
  s.api->expect("POST /api/v1/namespaces/ml/pods?dryRun=All",
                testing::status_answer(404, "NotFound", "namespaces \"ml\" not found"));
  auto missing = check_webhook(*s.client, o);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("namespace ml does not exist") != std::string::npos);
  CHECK(missing.error().message.find("tests.namespace") != std::string::npos);

  // Created as sent: no webhook mutated it.
  s.api->otherwise([](const HttpRequest& r) -> TransportResult {
    json pod = testing::body_of(r);
    pod["metadata"]["name"] = "iogate-webhook-check-x7k2p";
    return testing::json_answer(pod, 201);
  });
  auto verdict = check_webhook(*s.client, o);
  REQUIRE_FALSE(verdict.ok());
  INFO("message: " << verdict.error().message);
  CHECK(verdict.error().message.find("admitted a dry-run pod requesting amd.com/gpu in namespace ml without calling") !=
        std::string::npos);
  CHECK(verdict.error().message.find("webhook.namespaceSelector") != std::string::npos);
  CHECK(verdict.error().message.find("webhook.port") != std::string::npos);
  auto sent = s.api->sent();
  REQUIRE(sent.size() == 2);
  CHECK(sent[1].content_type == "application/json");
  json pod = testing::body_of(sent[1]);
  CHECK(pod == webhook_check_pod(o));
  CHECK(pod["spec"]["containers"][0]["resources"]["limits"]["amd.com/gpu"] == "1");
}

TEST_CASE("judge_webhook_check: each answer") {
  WebhookCheckOptions o;
  json mutated = webhook_check_pod(o);
  mutated["spec"]["initContainers"] = json::array({{{"name", "iogate-preflight"}}});
  auto pass = judge_webhook_check(ApiResult<json>(mutated), o);
  REQUIRE(pass.ok());
  CHECK(pass->find("mutated by mutate.iogate.io") != std::string::npos);

  // The webhook's own refusal proves it was called.
  auto denied = judge_webhook_check(
      refused(403, "Forbidden",
              "admission webhook \"validate.iogate.io\" denied the request: iogate: no disk class allowed"),
      o);
  REQUIRE(denied.ok());
  CHECK(denied->find("which refused the dry-run pod") != std::string::npos);

  // The API server cannot reach it: its error quoted, the values named.
  const std::string unreachable =
      "Internal error occurred: failed calling webhook \"validate.iogate.io\": failed to call webhook: Post "
      "\"https://iogate-webhook.iogate-system.svc:443/validate?timeout=10s\": context deadline exceeded";
  auto down = judge_webhook_check(refused(500, "InternalError", unreachable), o);
  REQUIRE_FALSE(down.ok());
  CHECK(down.error().message.find(unreachable) != std::string::npos);
  for (const char* value : {"webhook.port", "webhook.hostNetwork=true", "firewall rule"}) {
    CHECK_MESSAGE(down.error().message.find(value) != std::string::npos, value);
  }
  // The same after the client's retries ran out (the deadline error keeps the last answer).
  auto late = judge_webhook_check(
      refused(0, "DeadlineExceeded",
              "deadline reached after 3 attempts in 30000 ms; last: 500 InternalError: " + unreachable),
      o);
  REQUIRE_FALSE(late.ok());
  CHECK(late.error().message.find("could not call iogate's webhook") != std::string::npos);

  auto no_pods = judge_webhook_check(
      refused(500, "InternalError",
              "Internal error occurred: failed calling webhook \"mutate.iogate.io\": failed to call webhook: Post "
              "\"https://iogate-webhook.iogate-system.svc:443/mutate?timeout=10s\": no endpoints available for "
              "service \"iogate-webhook\""),
      o);
  REQUIRE_FALSE(no_pods.ok());
  CHECK(no_pods.error().message.find("no ready webhook pod") != std::string::npos);

  auto rbac = judge_webhook_check(
      refused(403, "Forbidden",
              "pods is forbidden: User \"system:serviceaccount:iogate-system:iogate-test\" cannot create resource "
              "\"pods\" in API group \"\" in the namespace \"default\""),
      o);
  REQUIRE_FALSE(rbac.ok());
  CHECK(rbac.error().message.find("refused before the webhook was reached") != std::string::npos);
}

}  // namespace
}  // namespace iogate
