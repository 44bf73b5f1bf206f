#include "webhook/admission_metrics.h"

#include <iterator>
#include <vector>

namespace iogate {
namespace {

constexpr AdmissionDecision kDecisions[] = {AdmissionDecision::kAllowed, AdmissionDecision::kMutated,
                                            AdmissionDecision::kDenied, AdmissionDecision::kError};

std::string operation_label(const std::string& op) {
  for (const char* known : {"CREATE", "UPDATE", "DELETE", "CONNECT"}) {
    if (op == known) return op;
  }
  return "unknown";
}

}  // namespace

std::string_view admission_endpoint_name(AdmissionEndpoint e) {
  return e == AdmissionEndpoint::kMutate ? "mutate" : "validate";
}

AdmissionMetrics::AdmissionMetrics() {
  std::vector<double> bounds(std::begin(kAdmissionLatencyBounds), std::end(kAdmissionLatencyBounds));
  for (AdmissionEndpoint e : {AdmissionEndpoint::kMutate, AdmissionEndpoint::kValidate}) {
    std::vector<std::string> ops = {"CREATE"};
    if (e == AdmissionEndpoint::kValidate) ops.push_back("UPDATE");
    for (const std::string& op : ops) {
      for (AdmissionDecision d : kDecisions) requests_[{e, op, d}] = 0;
    }
    for (AdmissionError k : kAdmissionErrors) errors_[{e, k}] = 0;
    latency_[e] = make_histogram(bounds);
  }
}

void AdmissionMetrics::record(AdmissionEndpoint endpoint, const AdmissionOutcome& outcome,
                              std::chrono::duration<double> took) {
  std::lock_guard<std::mutex> lock(mu_);
  requests_[{endpoint, operation_label(outcome.operation), outcome.decision}]++;
  if (outcome.error != AdmissionError::kNone) errors_[{endpoint, outcome.error}]++;
  observe(latency_[endpoint], took.count());
}

void AdmissionMetrics::fill(WebhookMetrics& m) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, count] : requests_) {
    const auto& [endpoint, op, decision] = key;
    m.requests.push_back(
        {std::string(admission_endpoint_name(endpoint)), op, std::string(admission_decision_name(decision)), count});
  }
  for (const auto& [key, count] : errors_) {
    m.errors.push_back(
        {std::string(admission_endpoint_name(key.first)), std::string(admission_error_name(key.second)), count});
  }
  for (const auto& [endpoint, h] : latency_) m.latency.push_back({std::string(admission_endpoint_name(endpoint)), h});
}

}  // namespace iogate
