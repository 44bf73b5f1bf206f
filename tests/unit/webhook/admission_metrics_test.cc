// What the webhook counts: each answer's decision and error kind as the handlers classify them,
// and the recorder's series (zero from the start, untrusted operations folded into "unknown").
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "admission_fixtures.h"
#include "webhook/admission.h"
#include "webhook/admission_metrics.h"

namespace iogate {
namespace {

using namespace iogate::test;
using namespace std::chrono_literals;

uint64_t requests(const WebhookMetrics& m, const std::string& webhook, const std::string& op,
                  const std::string& decision) {
  for (const AdmissionRequestCount& r : m.requests) {
    if (r.webhook == webhook && r.operation == op && r.decision == decision) return r.count;
  }
  FAIL("no series " << webhook << " " << op << " " << decision);
  return 0;
}

uint64_t errors(const WebhookMetrics& m, const std::string& webhook, const std::string& kind) {
  for (const AdmissionErrorCount& e : m.errors) {
    if (e.webhook == webhook && e.kind == kind) return e.count;
  }
  FAIL("no series " << webhook << " " << kind);
  return 0;
}

NodeLookup no_nodes() {
  return [](const std::string& name) { return NodeView{false, name, nullptr, ""}; };
}

TEST_CASE("admission outcomes: decision, error kind and operation of each kind of answer") {
  Policy policy = gpu_feed();
  WebhookConfig config = config_for(policy);

  AdmissionOutcome mutated = handle_mutate(review(pod("8")), config);
  CHECK(mutated.decision == AdmissionDecision::kMutated);
  CHECK(mutated.error == AdmissionError::kNone);
  CHECK(mutated.operation == "CREATE");

  AdmissionOutcome plain = handle_mutate(review(pod("")), config);  // no GPUs: nothing to add
  CHECK(plain.decision == AdmissionDecision::kAllowed);

  AdmissionOutcome not_json = handle_mutate("{nope", config);
  CHECK(not_json.http_status == 400);
  CHECK(not_json.decision == AdmissionDecision::kError);
  CHECK(not_json.error == AdmissionError::kBadRequest);
  CHECK(not_json.operation == "");

  json bad = review_json(pod("8"));
  bad["request"]["object"] = "a string";
  AdmissionOutcome bad_review = handle_validate(bad.dump(), config, no_nodes());
  CHECK(bad_review.http_status == 200);
  CHECK(bad_review.decision == AdmissionDecision::kError);
  CHECK(bad_review.error == AdmissionError::kBadRequest);

  json slow = {
      {"metadata",
       {{"name", "slow-1"}, {"labels", {{"iogate.io/randread-iops", "8120"}, {"iogate.io/disk-class", "nvme"}}}}}};
  NodeLookup one_slow = [&](const std::string& name) { return NodeView{true, name, slow, ""}; };
  json pinned = pod("8");
  pinned["spec"]["nodeName"] = "slow-1";
  AdmissionOutcome denied = handle_validate(review(pinned, "UPDATE", pod("8")), config, one_slow);
  CHECK(denied.decision == AdmissionDecision::kDenied);
  CHECK(denied.error == AdmissionError::kNone);
  CHECK(denied.operation == "UPDATE");

  NodeLookup failing = [](const std::string& name) { return NodeView{false, name, nullptr, "connection refused"}; };
  AdmissionOutcome unread = handle_validate(review(pinned), config, failing);
  CHECK(unread.decision == AdmissionDecision::kAllowed);  // fail open
  CHECK(unread.error == AdmissionError::kNodeLookup);

  AdmissionOutcome missing = handle_validate(review(pinned), config, no_nodes());  // not found: no error
  CHECK(missing.decision == AdmissionDecision::kAllowed);
  CHECK(missing.error == AdmissionError::kNone);

  WebhookConfig no_policy;
  AdmissionOutcome internal = handle_mutate(review(pod("8")), no_policy);
  CHECK(internal.http_status == 500);
  CHECK(internal.decision == AdmissionDecision::kError);
  CHECK(internal.error == AdmissionError::kInternal);
}

TEST_CASE("admission metrics: the series acted on are there at 0 before any request") {
  AdmissionMetrics recorder;
  WebhookMetrics m;
  recorder.fill(m);
  CHECK(m.requests.size() == 12);  // mutate CREATE, validate CREATE and UPDATE, × 4 decisions
  for (const char* d : {"allowed", "mutated", "denied", "error"}) {
    CHECK(requests(m, "mutate", "CREATE", d) == 0);
    CHECK(requests(m, "validate", "UPDATE", d) == 0);
  }
  CHECK(m.errors.size() == 8);
  for (const char* k : {"bad_request", "too_large", "internal", "node_lookup"}) CHECK(errors(m, "validate", k) == 0);
  REQUIRE(m.latency.size() == 2);
  CHECK(m.latency[0].seconds.count == 0);
  CHECK(m.latency[0].seconds.bounds.size() == std::size(kAdmissionLatencyBounds));
}

TEST_CASE("admission metrics: answers counted by endpoint, operation and decision, errors by kind, times observed") {
  AdmissionMetrics recorder;
  AdmissionOutcome o;
  o.operation = "CREATE";
  o.decision = AdmissionDecision::kMutated;
  recorder.record(AdmissionEndpoint::kMutate, o, 3ms);
  recorder.record(AdmissionEndpoint::kMutate, o, 20ms);
  o.operation = "UPDATE";
  o.decision = AdmissionDecision::kAllowed;
  o.error = AdmissionError::kNodeLookup;
  recorder.record(AdmissionEndpoint::kValidate, o, 2s);
  o.operation = "PATCH\"{evil}";  // not an admission operation: never a label value
  o.decision = AdmissionDecision::kError;
  o.error = AdmissionError::kBadRequest;
  recorder.record(AdmissionEndpoint::kValidate, o, 1ms);

  WebhookMetrics m;
  recorder.fill(m);
  CHECK(requests(m, "mutate", "CREATE", "mutated") == 2);
  CHECK(requests(m, "mutate", "CREATE", "allowed") == 0);
  CHECK(requests(m, "validate", "UPDATE", "allowed") == 1);
  CHECK(requests(m, "validate", "unknown", "error") == 1);
  CHECK(errors(m, "validate", "node_lookup") == 1);
  CHECK(errors(m, "validate", "bad_request") == 1);
  CHECK(errors(m, "mutate", "node_lookup") == 0);
  for (const AdmissionRequestCount& r : m.requests) CHECK(r.operation.find('"') == std::string::npos);
  const Histogram& mutate = m.latency[0].seconds;
  CHECK(m.latency[0].webhook == "mutate");
  CHECK(mutate.count == 2);
  CHECK(mutate.sum == doctest::Approx(0.023));
  CHECK(mutate.counts[2] == 1);  // 3 ms: in (2.5 ms, 5 ms]
  CHECK(mutate.counts[4] == 1);  // 20 ms: in (10 ms, 25 ms]
  const Histogram& validate = m.latency[1].seconds;
  CHECK(validate.count == 2);
  CHECK(validate.counts[0] == 1);   // 1 ms: le 0.001
  CHECK(validate.counts[10] == 1);  // 2 s: in (1 s, 2.5 s]
}

}  // namespace
}  // namespace iogate
