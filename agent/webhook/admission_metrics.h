// What the webhook counts of its answers, for /metrics (metrics/webhook_metrics.h): requests by
// endpoint, operation and decision, errors by kind, and a latency histogram per endpoint.
// Thread-safe: the HTTPS workers record, the metrics listener reads.
//
// Series are there from the start at 0 for what each endpoint acts on (mutate CREATE, validate
// CREATE and UPDATE, every decision, every error kind), so rate() and the alerts' ratios have a
// series before the first request. An operation the review names that is not one of admission's
// four counts as "unknown": label values are not taken from untrusted input.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "metrics/histogram.h"
#include "metrics/webhook_metrics.h"
#include "webhook/admission.h"

namespace iogate {

enum class AdmissionEndpoint { kMutate, kValidate };
std::string_view admission_endpoint_name(AdmissionEndpoint e);  // "mutate", "validate"

// The histogram's upper bounds, in seconds: from 1 ms (a decision from memory) to the API
// server's longest webhook timeout (30 s).
inline constexpr double kAdmissionLatencyBounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,    1,     2.5,  5,     10,   30};

class AdmissionMetrics {
 public:
  AdmissionMetrics();
  AdmissionMetrics(const AdmissionMetrics&) = delete;
  AdmissionMetrics& operator=(const AdmissionMetrics&) = delete;

  void record(AdmissionEndpoint endpoint, const AdmissionOutcome& outcome, std::chrono::duration<double> took);

  // Fills m.requests, m.errors and m.latency, in a stable order.
  void fill(WebhookMetrics& m) const;

 private:
  mutable std::mutex mu_;
  std::map<std::tuple<AdmissionEndpoint, std::string, AdmissionDecision>, uint64_t> requests_;
  std::map<std::pair<AdmissionEndpoint, AdmissionError>, uint64_t> errors_;
  std::map<AdmissionEndpoint, Histogram> latency_;
};

}  // namespace iogate
