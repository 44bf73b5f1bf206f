// The node agent's metrics (iogate node, /metrics): what the last probe of each data path
// measured, how the agent is doing (probes, errors, busy skips, API writes), and the verdict.
//
// Names follow Prometheus conventions: prefix iogate_, base units (seconds, bytes), counters end
// in _total, one info metric carries the descriptive labels so the numeric series stay narrow.
// Every per-path series has the labels node, path and name (the configured path name, "" when
// none), so dashboards can group by node without relabelling.
//
//   iogate_build_info{version}                                   1
//   iogate_probe_iops{node,path,name,rw,bs}                      gauge, last successful probe
//   iogate_probe_bandwidth_bytes_per_second{node,path,name,rw,bs}
//   iogate_probe_latency_seconds{node,path,name,rw,bs,quantile}  summary (quantiles only): 0.5, 0.9,
//                                                                0.99, 0.999 of the last successful probe
//   iogate_probe_duration_seconds{node,path,name}                wall time of the last successful probe
//   iogate_probe_last_success_timestamp_seconds{node,path,name}  Unix time
//   iogate_probes_total{node,path,name}                          counter, successful probes
//   iogate_probe_errors_total{node,path,name}                    counter
//   iogate_probe_skips_total{node,path,name,reason}              counter, reason="busy"
//                                                                a samples-mode path's 4 KiB headline is a
//                                                                second series, rw="randread", bs="4k"
//   iogate_policy_min_iops{node,path,name}                       the effective floor (0: none)
//   iogate_policy_verdict{node,path,name,verdict}                1 for the current verdict, 0 for
//                                                                the others (pass, fail, warn, off)
//   iogate_probe_samples_per_second{node,path,name}              samples/s of a samples-mode probe
//   iogate_node_accelerators_sustained{node,rule,workload}       per demand rule, once measured (the
//                                                                label iogate.io/accelerators.RULE)
//   iogate_node_below_policy{node}                               1 below, 0 not; absent before the first verdict
//   iogate_device_info{node,path,name,device,device_class,model,transport,fstype}   1
//   iogate_api_sync_errors_total{node}                           counter
//   iogate_api_sync_pending{node}                                1 while the API lags the latest state
//   iogate_api_last_sync_timestamp_seconds{node}                 Unix time; absent before the first
//
// Series of a path that has no successful probe yet are absent (not 0): absent and zero IOPS
// mean different things to an alert. That covers the iogate_probe_* gauges, the latency summary
// and iogate_policy_*; the counters and iogate_device_info are there for every configured path, since
// errors of a path that never succeeded are what an alert most needs. Every family prints its
// HELP and TYPE even while it has no sample.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/exposition.h"

namespace iogate {

struct PathMetrics {
  std::string path;  // as configured, e.g. "/mnt/nvme"
  std::string name;  // the configured name, "" when none
  // The storage under the path, from detect (for iogate_device_info); "" where unknown.
  std::string device, device_class, model, transport, fs_type;
  // The last successful probe; the probe_* and policy_* gauges are absent without one.
  bool measured = false;
  std::string rw;  // "randread"
  std::string bs;  // "4k"
  double iops = 0;
  double bandwidth_bytes_per_s = 0;
  double p50_s = 0, p90_s = 0, p99_s = 0, p999_s = 0;
  double probe_duration_s = 0;
  double last_success_unix_s = 0;
  std::string verdict;                  // "pass", "fail", "warn", "off"; "" when not evaluated: no
                                        // verdict samples then, nor for a word not among these four
  std::optional<double> samples_per_s;  // a samples-mode probe's (dataset or synthetic samples)
  std::optional<double> headline_iops;  // a samples-mode path's 4 KiB random-read headline
  double min_iops = 0;                  // the effective IOPS floor for this node's GPUs; 0 when no rule sets one
  uint64_t probes_total = 0, errors_total = 0, busy_skips_total = 0;
};

// One demand rule's accelerators sustained (node_records.h's RuleSustained).
struct SustainedMetrics {
  std::string rule;
  std::string workload;  // the MLPerf workload it names; "" for a demand given in numbers
  double accelerators = 0;
};

struct NodeMetrics {
  std::string node;
  std::string version;
  std::vector<PathMetrics> paths;
  std::vector<SustainedMetrics> sustained;
  std::optional<bool> below_policy;  // nullopt before the first verdict
  uint64_t api_sync_errors_total = 0;
  bool api_sync_pending = false;
  std::optional<double> api_last_sync_unix_s;
};

std::vector<MetricFamily> node_metric_families(const NodeMetrics& m);

}  // namespace iogate
