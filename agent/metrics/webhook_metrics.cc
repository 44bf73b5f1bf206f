#include "metrics/webhook_metrics.h"

#include <utility>

namespace iogate {

std::vector<MetricFamily> webhook_metric_families(const WebhookMetrics& m) {
  MetricFamily requests = metric_family("iogate_webhook_admission_requests_total", MetricType::kCounter,
                                        "AdmissionReviews answered, by webhook (mutate, validate), operation and "
                                        "decision (allowed, mutated, denied, error).");
  for (const AdmissionRequestCount& r : m.requests) {
    requests.samples.push_back(
        {{{"webhook", r.webhook}, {"operation", r.operation}, {"decision", r.decision}}, static_cast<double>(r.count)});
  }
  MetricFamily duration = metric_family("iogate_webhook_admission_duration_seconds", MetricType::kHistogram,
                                        "Seconds from an AdmissionReview's body read to its answer, by webhook.");
  for (const AdmissionLatency& l : m.latency) {
    for (MetricSample& s : histogram_samples(l.seconds, {{"webhook", l.webhook}})) {
      duration.samples.push_back(std::move(s));
    }
  }
  MetricFamily errors =
      metric_family("iogate_webhook_admission_errors_total", MetricType::kCounter,
                    "Requests the webhook could not judge as asked, by webhook and kind (bad_request, "
                    "too_large, internal; node_lookup: a pinned node could not be read and the pod was "
                    "allowed with a warning).");
  for (const AdmissionErrorCount& e : m.errors) {
    errors.samples.push_back({{{"webhook", e.webhook}, {"kind", e.kind}}, static_cast<double>(e.count)});
  }
  MetricFamily not_after = metric_family("iogate_webhook_certificate_not_after_timestamp_seconds", MetricType::kGauge,
                                         "Unix time at which the serving certificate in use expires.");
  if (m.certificate_not_after_unix_s) not_after.samples.push_back({{}, *m.certificate_not_after_unix_s});
  MetricFamily synced = metric_family("iogate_webhook_node_watch_synced", MetricType::kGauge,
                                      "1 once the webhook's list+watch of nodes has listed them, else 0.");
  MetricFamily current =
      metric_family("iogate_webhook_node_watch_current", MetricType::kGauge,
                    "1 while node look-ups are answered from the watch, 0 while they go to the API.");
  MetricFamily nodes =
      metric_family("iogate_webhook_node_watch_nodes", MetricType::kGauge, "Nodes the webhook's node watch holds.");
  MetricFamily contact = metric_family("iogate_webhook_node_watch_last_contact_timestamp_seconds", MetricType::kGauge,
                                       "Unix time of the node watch's last list, event or bookmark.");
  if (m.node_watch) {
    const NodeWatchMetrics& w = *m.node_watch;
    synced.samples.push_back({{}, w.synced ? 1.0 : 0.0});
    current.samples.push_back({{}, w.current ? 1.0 : 0.0});
    nodes.samples.push_back({{}, w.nodes});
    if (w.last_contact_unix_s) contact.samples.push_back({{}, *w.last_contact_unix_s});
  }
  return {build_info_family(m.version),
          std::move(requests),
          std::move(duration),
          std::move(errors),
          std::move(not_after),
          std::move(synced),
          std::move(current),
          std::move(nodes),
          std::move(contact)};
}

}  // namespace iogate
