// A storage policy: what a volume must deliver for a workload, as users write it in a ConfigMap.
//
// The schema (apiVersion iogate.io/v1, kind StoragePolicy, documented in docs/reference.md) holds the
// probe's workload, how strict to be (mode, on_error, deadline), how long a PVC's recorded result
// may be reused, and named rules: a selector saying which volumes a rule is about, and thresholds.
// Everything is validated on load, so a policy that loads is one evaluate.h can judge without
// further checks; errors name the field path ("rules[1].min_iops: expected a positive integer,
// got \"fast\"") because the user fixes a YAML file, not a C++ struct.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "device/device_class.h"
#include "policy/checkpoint_demand.h"
#include "policy/demand.h"
#include "probe/workload.h"

namespace iogate {

inline constexpr std::string_view kPolicyApiVersion = "iogate.io/v1";
inline constexpr std::string_view kPolicyKind = "StoragePolicy";

// enforce blocks (preflight exits 1, the agent taints, the webhook requires and refuses); warn
// records the same verdicts and blocks nothing; off measures only. A policy that names no mode is
// warn: nothing blocks a workload before its operator has read what enforce would block.
enum class PolicyMode { kEnforce, kWarn, kOff };
inline constexpr PolicyMode kDefaultPolicyMode = PolicyMode::kWarn;
// What every record of a verdict that enforce mode would act on says in warn mode (the Event, the
// condition, the admission warning), so that one grep finds them all; the annotation holds what
// enforce would do, on the pod (preflight) and on the Node (the agent's taint).
inline constexpr std::string_view kWouldBlock = "would block in enforce mode";
inline constexpr const char* kWouldBlockAnnotation = "iogate.io/would-block";
// The profile a policy starts from where none is named: it judges in the job's units.
inline constexpr std::string_view kDefaultProfile = "image-training";
// What a failure to judge (probe or API) does in enforce mode; in warn mode it never blocks.
enum class OnError { kFailClosed, kFailOpen };

std::string_view policy_mode_name(PolicyMode m);  // "enforce", "warn", "off"
std::string_view on_error_name(OnError e);        // "fail-closed", "fail-open"

// Which volumes a rule is about. Every part given must match; an empty selector matches all.
struct RuleSelector {
  std::vector<DeviceClass> device_classes;  // the volume's class is one of these
  std::vector<std::string> paths;           // the dataset path is at or under one (globs allowed)
  // Like matchLabels: every label present and equal; keys and values in Kubernetes' syntax
  // (label_syntax.h), so a value is at most 63 characters.
  std::map<std::string, std::string> pod_labels;
  bool empty() const { return device_classes.empty() && paths.empty() && pod_labels.empty(); }
};

struct Rule {
  std::string name;
  std::string description;
  RuleSelector selector;
  // The IOPS floor is the larger of min_iops and min_iops_per_gpu × the pod's GPUs: a fixed floor
  // for small pods, and a floor that grows with the GPUs the volume has to feed.
  std::optional<uint64_t> min_iops, min_iops_per_gpu;
  std::optional<uint64_t> max_p99_latency_ns;
  // Likewise for bandwidth: max(min_bandwidth, min_bandwidth_per_gpu × GPUs).
  std::optional<uint64_t> min_bandwidth_bytes_per_s, min_bandwidth_per_gpu_bytes_per_s;
  std::vector<DeviceClass> allowed_classes, forbidden_classes;
  // Dataset workloads (workload.mode: dataset): samples (files read whole) per second, floor
  // max(min_samples_per_s, samples_per_s_per_gpu × GPUs), as for IOPS.
  std::optional<uint64_t> min_samples_per_s, samples_per_s_per_gpu;
  // What the job consumes (policy/demand.h): judged as the accelerator utilisation the measured
  // samples/s allow the pod's GPUs, against demand.min_au. Needs workload.mode auto or dataset.
  std::optional<Demand> demand;
  // A checkpoint (policy/checkpoint_demand.h, YAML demand.checkpoint): judged as the stall a
  // synchronous save costs, measured by writing one file per rank. Any workload mode.
  std::optional<CheckpointDemand> checkpoint;
};

// What the probe does: block I/O on a test file (fio's workload), or the dataset loader over the
// files under the path (iogate probe --mode dataset). A mode of its own rather than `rw: dataset`:
// `rw` keeps fio's meaning, and a dataset run has no block size, queue depth or test file, so the
// two sets of keys exclude each other and each is validated as a whole.
// kAuto measures samples either way: the dataset loader where the path holds a dataset (at least
// kMinDatasetFiles files: the usual read-only dataset mount), otherwise synthetic samples (random
// whole-sample reads of a test file at the demand's sample size, as many in flight as the
// loader's workers: synthetic_sample_workload in policy_probe.h).
enum class WorkloadMode { kIo, kDataset, kAuto };
std::string_view workload_mode_name(WorkloadMode m);  // "io", "dataset", "auto"
// Fewer files than this is a scratch volume, not a dataset: too few to time a loader on.
inline constexpr uint64_t kMinDatasetFiles = 100;

// The dataset loader's settings (workload.mode: dataset); the runtime is workload.runtime.
struct DatasetWorkload {
  int workers = 0;  // 0: 70% of the CPUs
  size_t sample = 20'000;
  std::chrono::nanoseconds scan_time = std::chrono::seconds(10);
  uint64_t scan_entries = 2'000'000;
  bool direct = false;
};

// randread 4k, iodepth 32, 1 job, runtime limit 10 s, ramp 1 s, 256 MiB test file: small enough
// to write quickly in an initContainer, large enough to spread reads beyond a disk's cache.
Workload default_policy_workload();

// What the node agent (iogate node) needs beyond the rules: which data paths to probe, how often
// and how gently, what makes a node "fast", and what to do to a node below policy. Flags of
// `iogate node` override each field.
struct NodePath {
  std::string path;  // absolute
  // Optional; a DNS label of at most 40 characters. Named paths get their own node labels
  // (iogate.io/disk-class.NAME, iogate.io/randread-iops.NAME) besides the node-wide ones.
  std::string name;
};

struct NodeSettings {
  std::vector<NodePath> paths;
  std::chrono::nanoseconds interval = std::chrono::hours(6);
  // Each wait is interval × (1 ± jitter), drawn per node, so a DaemonSet's nodes drift apart
  // instead of probing shared infrastructure (a SAN, a cloud zone) all at once.
  double jitter = 0.1;
  // Skip the probe (and retry after busy_retry) when a device under the path is busier than this.
  double busy_util_percent = 50;
  std::chrono::nanoseconds busy_retry = std::chrono::minutes(10);
  // The taint's effect on a node below policy (enforce mode): NoSchedule, PreferNoSchedule,
  // NoExecute; "" for no taint (label and condition only).
  std::string taint_effect = "NoSchedule";
  // iogate.io/tier=fast needs IOPS of at least max(fast_min_iops, fast_min_iops_per_gpu × GPUs)
  // when either is set; otherwise every rate check at fast_factor × its threshold.
  std::optional<uint64_t> fast_min_iops, fast_min_iops_per_gpu;
  double fast_factor = 4;
};

// What the admission webhook (iogate webhook) may do beyond the rules.
struct WebhookSettings {
  // Whether a pod's iogate.io/skip: "true" exempts it. A policy decision, not a flag of the
  // webhook's Deployment: anyone who can create a pod can set the annotation.
  bool allow_opt_out = false;
};

struct Policy {
  std::string source;   // the file's path, or "profile:<name>"
  std::string name;     // metadata.name, or the profile's name
  std::string profile;  // the built-in profile it started from, if any
  PolicyMode mode = kDefaultPolicyMode;
  OnError on_error = OnError::kFailClosed;
  std::chrono::nanoseconds deadline = std::chrono::seconds(60);  // the whole preflight
  // The probe's workload; runtime is a limit, the probe stops earlier once the result settles.
  Workload workload = default_policy_workload();
  WorkloadMode workload_mode = WorkloadMode::kIo;
  DatasetWorkload dataset;  // with workload_mode kDataset
  // Early stop: once the confidence interval's half-width is within stop_tolerance of the mean.
  bool early_stop = true;
  double stop_tolerance = 0.03;
  double stop_confidence = 0.95;
  // How long a result recorded on a PVC may be reused by the next pod; 0: always probe.
  std::chrono::nanoseconds result_ttl = std::chrono::hours(1);
  // How long the pods of one job wait for each other on their PVC after the first arrives, where
  // the pod does not say how many the job has or not all of them come (kube/job_barrier.h).
  std::chrono::nanoseconds job_gather_window = std::chrono::seconds(20);
  std::vector<Rule> rules;
  NodeSettings node;
  WebhookSettings webhook;
};

// The most a policy may hold: a ConfigMap's limit (its data, all keys together, is at most 1 MiB).
// A longer text is refused before it is parsed, and a file is never read past it, so /dev/zero or
// a FIFO that never ends is refused after 1 MiB + 1 byte. policy_yaml.h bounds what the text may
// expand to.
inline constexpr size_t kPolicyMaxBytes = size_t{1} << 20;

// Parses and validates a policy written in YAML or JSON (JSON is YAML). `source` is recorded in the
// policy; error messages start with the field path and do not repeat `source`. Any text, however
// broken or hostile, gives a policy or a usage error, within the bounds above.
Result<Policy> parse_policy(std::string_view text, std::string_view source);

// Reads (at most kPolicyMaxBytes + 1 bytes) and parses a file; errors start with the path
// ("p.yaml: rules[0].name: missing"). A file that cannot be read is a configuration error too
// (exit 2): the user named it.
Result<Policy> load_policy_file(const std::string& path);

// A built-in profile by name ("image-classification", "streaming", ...), or "profile:<name>".
Result<Policy> builtin_policy(std::string_view profile);
std::vector<std::string> builtin_profile_names();
// The profile's YAML, with comments giving the reasoning behind each number; what
// `iogate policy show NAME` prints and what a user copies into a ConfigMap to adapt.
Result<std::string> builtin_profile_text(std::string_view profile);
std::string builtin_profile_summary(std::string_view profile);  // one line, "" if unknown

// What --policy accepts: "profile:NAME"; a bare built-in profile name when no file of that name
// exists; otherwise a file path.
Result<Policy> resolve_policy(std::string_view file_or_profile);

// Sets every demand rule's demand to MLPerf Storage's `workload` on `accelerator` (its samples/s,
// record size and AU floor), as --workload and --accelerator ask; both empty: nothing. A usage
// error naming the flag where one is missing, the pair is unknown or no rule has a demand.
Status apply_named_workload(Policy& p, std::string_view workload, std::string_view accelerator);

// A taint effect as the policy's node.taint_effect and --taint-effect take it: "NoSchedule",
// "PreferNoSchedule", "NoExecute" as given (the API's spelling), or "none" → "".
Result<std::string> parse_taint_effect(std::string_view text, std::string_view what);

}  // namespace iogate
