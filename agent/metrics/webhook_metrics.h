// The admission webhook's metrics (iogate webhook, /metrics on --metrics-listen): what it was
// asked, what it answered and how fast, its errors, its serving certificate and its node watch.
// Names follow node_metrics.h's conventions (prefix iogate_, base units, _total counters).
//
//   iogate_build_info{version}                                          1
//   iogate_webhook_admission_requests_total{webhook,operation,decision}  counter; webhook mutate|validate,
//                                                                        operation CREATE|UPDATE|DELETE|CONNECT|
//                                                                        unknown, decision allowed|mutated|
//                                                                        denied|error
//   iogate_webhook_admission_duration_seconds{webhook}                   histogram, from the body read to
//                                                                        the answer
//   iogate_webhook_admission_errors_total{webhook,kind}                  counter; kind bad_request|too_large|
//                                                                        internal|node_lookup
//   iogate_webhook_certificate_not_after_timestamp_seconds{}              Unix time the serving certificate
//                                                                        expires
//   iogate_webhook_node_watch_synced{}                                    1 once the node list+watch has listed
//   iogate_webhook_node_watch_current{}                                   1 while look-ups are answered from it
//   iogate_webhook_node_watch_nodes{}                                     nodes it holds
//   iogate_webhook_node_watch_last_contact_timestamp_seconds{}            Unix time of its last list, event or
//                                                                        bookmark; absent before the first
//
// The node_watch series are absent when the webhook does not watch nodes (--no-node-watch, no
// API). Every family prints HELP and TYPE even without samples; the owner lists the request and
// error series it wants seen at 0 (rate() and ratios need a series before the first increment).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/exposition.h"
#include "metrics/histogram.h"

namespace iogate {

struct AdmissionRequestCount {
  std::string webhook, operation, decision;
  uint64_t count = 0;
};

struct AdmissionErrorCount {
  std::string webhook, kind;
  uint64_t count = 0;
};

struct AdmissionLatency {
  std::string webhook;
  Histogram seconds;
};

struct NodeWatchMetrics {
  bool synced = false;
  bool current = false;
  double nodes = 0;
  std::optional<double> last_contact_unix_s;
};

struct WebhookMetrics {
  std::string version;
  std::vector<AdmissionRequestCount> requests;
  std::vector<AdmissionErrorCount> errors;
  std::vector<AdmissionLatency> latency;
  std::optional<double> certificate_not_after_unix_s;
  std::optional<NodeWatchMetrics> node_watch;  // nullopt: no watch
};

std::vector<MetricFamily> webhook_metric_families(const WebhookMetrics& m);

}  // namespace iogate
