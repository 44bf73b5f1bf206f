// iogate node: the DaemonSet agent that turns a node's data disks into scheduling facts.
//
// The same pipeline as preflight, looped, with the Node at the far end:
//   for each data path, when due: detect → busy? (skip, retry later) → probe at idle I/O priority
//   with the policy's workload and early stop (workload.mode auto or dataset: the samples, on
//   convergence alone, then the 4 KiB random-read headline) → judge the node (its best path; GPUs
//   from the Node; each demand rule by the path sustaining the most accelerators)
//   → labels, annotations, taint, condition, Event (kube/, node/node_sync.h) → metrics and report.
// Probes repeat every interval × (1 ± jitter); a busy device or a failed probe is retried after
// busy_retry. Writes that fail (the API is down) are retried with backoff while probing and
// serving go on; the latest state is written when the API answers again.
//
// SIGTERM: a running probe is aborted (its test file removed), serving stops, exit 0.
// --once: every path once, one sync, the report on stdout, and an exit code like preflight's.
// Its API work (the Node read before the probes, the writes after them, their retries) has
// once_deadline in all, the probes' own time not counted: every request's timeout and every retry
// wait is cut to what is left (a retry the backoff would put past it is made 5 s before it
// instead, once). So the run ends at most once_deadline after its probes, overrun only by a server
// that stalls inside an exchange (the transport's timeouts bound connecting, sending and each read
// apart): at worst one request timeout (10 s) more. Then exit 3, the log and the report's
// api.last_error saying the result was not written within the deadline and what the API last
// answered.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "probe/io_priority.h"

namespace iogate {

struct NodeOptions {
  std::string policy;            // a file, or profile:NAME
  std::vector<NodePath> paths;   // --path [NAME=]PATH; empty: the policy's node.paths
  std::string listen = ":9560";  // "" or "none": no HTTP server
  // Overrides of the policy's node section.
  std::optional<std::chrono::nanoseconds> interval, busy_retry;
  std::optional<double> jitter, busy_util_percent;
  std::optional<std::string> taint_effect;      // "" for none
  std::chrono::milliseconds busy_window{1000};  // the diskstats window the busy check looks at
  IoPriority io_priority{IoPriorityClass::kIdle, 0};
  bool once = false;
  std::chrono::nanoseconds once_deadline = std::chrono::seconds(60);  // --once-deadline: see above
  std::string node_name;                                              // --node-name, default $NODE_NAME
  std::optional<int> gpus;                                            // overrides the node's GPU count
  std::string kubeconfig;
  std::string kube_context;  // --context: the kubeconfig's context (default: its current-context)
  bool no_api = false;
  std::string root = "/";  // the host's /proc and /sys under ROOT
  bool json = false;       // --once output
};

// The exit code: 0 (a loop that was stopped; --once that passed or warned), 1 (--once below
// policy in enforce mode), 2 (usage or configuration), 3 (--once: a path not measured, or the
// result not written).
int run_node_agent(const NodeOptions& options, const std::atomic<bool>& stop);

// The policy's node section with the flags' overrides applied; errors name the flag or field.
Result<NodeSettings> effective_node_settings(const Policy& p, const NodeOptions& o);

// The wait before the next probe: interval × (1 + u), u uniform in [-jitter, +jitter].
std::chrono::nanoseconds jittered(std::chrono::nanoseconds interval, double jitter, double unit_random);

}  // namespace iogate
