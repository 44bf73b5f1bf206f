#include "metrics/node_metrics.h"

#include <array>
#include <utility>

namespace iogate {
namespace {

MetricLabels path_labels(const std::string& node, const PathMetrics& p) {
  return {{"node", node}, {"path", p.path}, {"name", p.name}};
}

// The workload is in the labels of the measured numbers so that a changed policy workload starts
// new series instead of bending old ones.
MetricLabels workload_labels(const std::string& node, const PathMetrics& p) {
  MetricLabels l = path_labels(node, p);
  l.emplace_back("rw", p.rw);
  l.emplace_back("bs", p.bs);
  return l;
}

MetricLabels with(MetricLabels l, std::string key, std::string value) {
  l.emplace_back(std::move(key), std::move(value));
  return l;
}

constexpr std::array<const char*, 4> kVerdicts = {"pass", "fail", "warn", "off"};

bool known_verdict(const std::string& v) {
  for (const char* k : kVerdicts) {
    if (v == k) return true;
  }
  return false;
}

}  // namespace

std::vector<MetricFamily> node_metric_families(const NodeMetrics& m) {
  const std::string& node = m.node;
  const MetricLabels node_only = {{"node", node}};

  MetricFamily build = build_info_family(m.version);

  MetricFamily iops = metric_family("iogate_probe_iops", MetricType::kGauge,
                                    "I/O operations per second the last successful probe of the path measured.");
  MetricFamily bandwidth = metric_family("iogate_probe_bandwidth_bytes_per_second", MetricType::kGauge,
                                         "Bytes per second the last successful probe of the path moved.");
  MetricFamily latency = metric_family("iogate_probe_latency_seconds", MetricType::kSummary,
                                       "I/O completion latency in seconds at the quantile, over the last "
                                       "successful probe of the path.");
  MetricFamily duration = metric_family("iogate_probe_duration_seconds", MetricType::kGauge,
                                        "Wall time in seconds the last successful probe of the path took.");
  MetricFamily last_success = metric_family("iogate_probe_last_success_timestamp_seconds", MetricType::kGauge,
                                            "Unix time in seconds of the last successful probe of the path.");
  MetricFamily probes = metric_family("iogate_probes_total", MetricType::kCounter,
                                      "Probes of the path that succeeded since the agent started.");
  MetricFamily errors = metric_family("iogate_probe_errors_total", MetricType::kCounter,
                                      "Probes of the path that failed since the agent started.");
  MetricFamily skips = metric_family("iogate_probe_skips_total", MetricType::kCounter,
                                     "Probes of the path skipped since the agent started, by reason "
                                     "(busy: the path was busy when the probe was due).");
  MetricFamily min_iops = metric_family("iogate_policy_min_iops", MetricType::kGauge,
                                        "The IOPS floor the storage policy sets for the path on this node "
                                        "(its GPUs counted); 0 when no rule sets one.");
  MetricFamily verdict = metric_family("iogate_policy_verdict", MetricType::kGauge,
                                       "The storage policy verdict on the path's last probe: 1 for the "
                                       "current verdict, 0 for the others.");
  MetricFamily samples = metric_family("iogate_probe_samples_per_second", MetricType::kGauge,
                                       "Samples per second the last successful probe of the path delivered (a dataset "
                                       "run, or synthetic sample reads): what a demand rule is judged on.");
  MetricFamily sustained =
      metric_family("iogate_node_accelerators_sustained", MetricType::kGauge,
                    "The most accelerators the node's best data path for the rule keeps at or above "
                    "the rule's AU floor (the label iogate.io/accelerators.RULE).");
  MetricFamily below = metric_family("iogate_node_below_policy", MetricType::kGauge,
                                     "1 when the node's storage is below the storage policy, 0 when not.");
  MetricFamily device = metric_family("iogate_device_info", MetricType::kGauge,
                                      "The storage under the path as detected (device, class, model, "
                                      "transport, file system); always 1.");
  MetricFamily sync_errors = metric_family("iogate_api_sync_errors_total", MetricType::kCounter,
                                           "Failed writes of the node's state to the Kubernetes API since "
                                           "the agent started.");
  MetricFamily sync_pending = metric_family("iogate_api_sync_pending", MetricType::kGauge,
                                            "1 while the Kubernetes API lags the agent's latest state of the "
                                            "node, 0 when it is up to date.");
  MetricFamily last_sync = metric_family("iogate_api_last_sync_timestamp_seconds", MetricType::kGauge,
                                         "Unix time in seconds of the last successful write of the node's "
                                         "state to the Kubernetes API.");

  for (const PathMetrics& p : m.paths) {
    MetricLabels labels = path_labels(node, p);
    probes.samples.push_back({labels, static_cast<double>(p.probes_total)});
    errors.samples.push_back({labels, static_cast<double>(p.errors_total)});
    skips.samples.push_back({with(labels, "reason", "busy"), static_cast<double>(p.busy_skips_total)});
    device.samples.push_back({{{"node", node},
                               {"path", p.path},
                               {"name", p.name},
                               {"device", p.device},
                               {"device_class", p.device_class},
                               {"model", p.model},
                               {"transport", p.transport},
                               {"fstype", p.fs_type}},
                              1});
    if (!p.measured) continue;

    MetricLabels workload = workload_labels(node, p);
    iops.samples.push_back({workload, p.iops});
    bandwidth.samples.push_back({workload, p.bandwidth_bytes_per_s});
    for (auto [q, v] : {std::pair{"0.5", p.p50_s}, {"0.9", p.p90_s}, {"0.99", p.p99_s}, {"0.999", p.p999_s}}) {
      latency.samples.push_back({with(workload, "quantile", q), v});
    }
    // Not when the samples were themselves 4 KiB random reads: one series per rw and bs.
    if (p.headline_iops && (p.rw != "randread" || p.bs != "4k")) {
      iops.samples.push_back({with(with(labels, "rw", "randread"), "bs", "4k"), *p.headline_iops});
    }
    if (p.samples_per_s) samples.samples.push_back({labels, *p.samples_per_s});
    duration.samples.push_back({labels, p.probe_duration_s});
    last_success.samples.push_back({labels, p.last_success_unix_s});
    min_iops.samples.push_back({labels, p.min_iops});
    if (known_verdict(p.verdict)) {
      for (const char* v : kVerdicts) {
        verdict.samples.push_back({with(labels, "verdict", v), p.verdict == v ? 1.0 : 0.0});
      }
    }
  }

  for (const SustainedMetrics& r : m.sustained) {
    sustained.samples.push_back({{{"node", node}, {"rule", r.rule}, {"workload", r.workload}}, r.accelerators});
  }
  if (m.below_policy) below.samples.push_back({node_only, *m.below_policy ? 1.0 : 0.0});
  sync_errors.samples.push_back({node_only, static_cast<double>(m.api_sync_errors_total)});
  sync_pending.samples.push_back({node_only, m.api_sync_pending ? 1.0 : 0.0});
  if (m.api_last_sync_unix_s) last_sync.samples.push_back({node_only, *m.api_last_sync_unix_s});

  std::vector<MetricFamily> out;
  for (MetricFamily* f :
       {&build, &iops, &bandwidth, &latency, &duration, &last_success, &probes, &errors, &skips, &min_iops, &verdict,
        &samples, &sustained, &below, &device, &sync_errors, &sync_pending, &last_sync}) {
    out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace iogate
