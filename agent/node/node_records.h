// What the node agent knows and what it writes, as pure functions of the paths' outcomes, the
// policy and the node's GPUs: the verdict, the node labels, annotations, taint, condition and
// Event, the JSON report (/report, --once) and the metrics. Everything that lands on a Node is
// tested here without an API server.
//
// A node is judged by its best data path: the one that meets the policy with the most IOPS, else
// the fastest. The node offers pods its best disk (a dataset goes on /mnt/nvme, not on the root
// disk), so the node-wide labels (disk-class, randread-iops, tier), the taint and the condition
// all speak of that path; rules with path selectors say which paths count at all. Named paths
// also get labels of their own, and the report lists every path.
//
// Demand rules (workload.mode auto or dataset) are answered per rule, not per node verdict: the
// label iogate.io/accelerators.<rule> is the most accelerators any path the rule covers sustains
// at its AU floor (policy/demand.h's accelerators_sustained, the computation preflight's verdict
// and the webhook's requirement use). The node's own verdict (tier, taint, condition) judges a
// samples-mode policy for one accelerator: a node is below policy when it cannot feed even one;
// how many it feeds is the label's to say, and the webhook holds each pod to its GPU count.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/storage_stack.h"
#include "kube/operations.h"
#include "metrics/node_metrics.h"
#include "node/node_tier.h"
#include "policy/demand.h"
#include "policy/evaluate.h"
#include "policy/policy.h"

namespace iogate {

inline constexpr const char* kNodeSchema = "iogate.node/v1";
inline constexpr const char* kNodeLabelPrefix = "iogate.io/";
inline constexpr const char* kBelowPolicyTaintKey = "iogate.io/storage-below-policy";
inline constexpr const char* kBelowPolicyCondition = "StorageBelowPolicy";
inline constexpr const char* kDemandAnnotation = "iogate.io/demand";

// A path's last attempt: kPending (none yet), kMeasured, kBusy (skipped, the device was busy),
// kError, kStopped (a signal ended the probe). path_state_name gives the report's word.
enum class PathState { kPending, kMeasured, kBusy, kError, kStopped };
std::string_view path_state_name(PathState s);

// One data path: its last attempt and its last successful probe.
struct PathOutcome {
  NodePath config;
  std::optional<StorageStack> stack;       // from the last attempt's detect
  std::optional<Measurement> measurement;  // the last successful probe
  // The 4 KiB random-read headline beside a samples-mode measurement (policy_probe.h's
  // randread_headline_request); in io mode the measurement itself is the headline.
  std::optional<Measurement> randread;
  double p50_ns = 0, p90_ns = 0, p999_ns = 0;  // its read (or write) latency quantiles
  double probe_wall_s = 0;                     // from start to result, test file included
  std::chrono::system_clock::time_point measured_at{};
  std::string io_priority;  // "idle", or "idle (ignored: scheduler none)"

  PathState state = PathState::kPending;  // the last attempt
  std::string detail;                     // the error, or why the device counted as busy
  std::chrono::system_clock::time_point attempted_at{};
  uint64_t probes = 0, errors = 0, busy_skips = 0;
};

struct PathJudgement {
  size_t index = 0;  // into the outcomes
  Verdict verdict;
  NodeTier tier = NodeTier::kOk;
  double min_iops = 0;       // the effective IOPS floor among applicable rules (0: none)
  double fast_min_iops = 0;  // what tier fast needs (0: decided by factors)
};

// What iogate.io/randread-iops says of a path: its 4 KiB random-read headline, or null where it
// has none (a samples-mode measurement without one yet, a write or sequential workload).
const Measurement* randread_headline(const PathOutcome& o);

// One demand rule on this node: what the path sustaining the most accelerators delivers.
struct RuleSustained {
  std::string rule;
  Demand demand;
  std::optional<size_t> path;  // into the outcomes; none while no path the rule covers measured samples
  double samples_per_s = 0;
  double sample_bytes = 0;
  int accelerators = 0;  // accelerators_sustained(demand, samples_per_s)
};

struct NodeJudgement {
  int gpus = 0;
  std::string gpus_from;  // "--gpus", "status.capacity", "label nvidia.com/gpu.count", "none", "unknown (no API)"
  std::vector<PathJudgement> paths;      // measured paths only, in configuration order
  std::vector<RuleSustained> sustained;  // one per rule with a demand, in the policy's order
  std::optional<size_t> best;            // index into `paths`; none before the first measurement
  // The best path's verdict; nullopt before any measurement.
  std::optional<VerdictOutcome> outcome;
  bool below_policy() const { return outcome == VerdictOutcome::kFail || outcome == VerdictOutcome::kWarn; }
};
// The outcome as the report, the log and the human output write it: "none" before any measurement.
std::string_view node_outcome_name(const NodeJudgement& j);

NodeJudgement judge_node(const Policy& p, const std::vector<PathOutcome>& outcomes, int gpus, std::string gpus_from);

// The node's labels under iogate.io/: disk-class, randread-iops (a path's 4 KiB random-read
// headline; a plain integer for nodeAffinity Gt), tier, mixed-media ("true", else removed),
// accelerators.RULE (per demand rule, once a path it covers measured samples), and per named path
// disk-class.NAME and randread-iops.NAME. Keys of ours that `current` (the node's labels) has and
// the judgement no longer sets are removed (a rule renamed or dropped leaves no stale label);
// nobody else's label is touched.
MetadataChanges node_labels(const NodeJudgement& j, const std::vector<PathOutcome>& outcomes,
                            const nlohmann::json& current);

// iogate.io/report (compact JSON, at most kNodeReportAnnotationMaxBytes), iogate.io/last-probe
// (RFC 3339, the latest successful probe) and, under a policy with demand rules, iogate.io/demand:
// a JSON array, per rule {rule, workload, accelerator, samples_per_s_per_accelerator, sample_bytes,
// min_au, samples_per_s, accelerators_sustained, path}, the figures behind the labels (removed
// under a policy without demand rules); kWouldBlockAnnotation, would_taint_text (removed otherwise).
inline constexpr size_t kNodeReportAnnotationMaxBytes = 16 * 1024;
MetadataChanges node_annotations(const NodeJudgement& j, const Policy& p, const std::vector<PathOutcome>& outcomes);

// What enforce mode would do to a node that warn mode leaves untainted: "taint
// iogate.io/storage-below-policy=true:NoSchedule: <the failed check>"; nullopt where enforce
// would not taint (the node meets the policy, taint_effect none, mode enforce or off). The node
// annotation kWouldBlockAnnotation holds it and the condition says it.
std::optional<std::string> would_taint_text(const NodeJudgement& j, const Policy& p);

// The taint a node below policy carries in enforce mode (nullopt: none wanted).
std::optional<Taint> wanted_taint(const NodeJudgement& j, const Policy& p, const std::string& effect);

// StorageBelowPolicy True (reason StorageBelowPolicy) or False (reason StorageMeetsPolicy), with
// the best path's figures and the failed check in the message; nullopt in mode off or before
// any measurement.
std::optional<NodeCondition> node_condition(const NodeJudgement& j, const Policy& p,
                                            const std::vector<PathOutcome>& outcomes);

// The Event for a verdict change: Warning StorageBelowPolicy or Normal StoragePolicyMet.
EventText node_event_text(const NodeJudgement& j, const Policy& p, const std::vector<PathOutcome>& outcomes);

// What the agent tells about its conversation with the API, for the report and metrics.
struct ApiSyncState {
  std::string state = "skipped";  // "ok", "pending", "skipped: <why>"
  std::string last_error;
  std::optional<std::chrono::system_clock::time_point> last_sync;
  uint64_t sync_errors = 0;
};

// Schema iogate.node/v1: what /report serves and `iogate node --once --output-format json` prints.
nlohmann::json node_report_json(const std::string& node, const Policy& p, const NodeJudgement& j,
                                const std::vector<PathOutcome>& outcomes, const ApiSyncState& api);
std::string render_node_human(const std::string& node, const Policy& p, const NodeJudgement& j,
                              const std::vector<PathOutcome>& outcomes, const ApiSyncState& api);

NodeMetrics node_metrics(const std::string& node, const NodeJudgement& j, const std::vector<PathOutcome>& outcomes,
                         const ApiSyncState& api);

}  // namespace iogate
