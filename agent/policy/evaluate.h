// Judging a measurement against a policy: rule by rule, check by check, with the measured value,
// the threshold and pass/fail, which rules did not apply and why, and the caveats a reader needs
// before trusting a pass (burst credits, snapshot restores, unwritten blocks, memory speed).
//
// Evaluation is a pure function of the policy, the measurement and the pod's context, so the same
// verdict comes out of preflight, node and the tests; it never fails: a policy that loaded is valid.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataset/feed_limit.h"
#include "device/storage_stack.h"
#include "policy/policy.h"
#include "probe/stop_reason.h"

namespace iogate {

// What the verdict looks at, distilled from a ProbeResult.
struct Measurement {
  double iops = 0;                   // all directions, over the measured window
  double p99_latency_ns = 0;         // reads; writes for write workloads; the larger of the two for randrw
  double bandwidth_bytes_per_s = 0;  // all directions
  DeviceClass device_class = DeviceClass::kUnknown;
  std::vector<DeviceClass> leaf_classes;  // the physical leaves' classes (more than one for `mixed`)
  std::string path;                       // the probed path
  std::string fs_type;                    // "ext4", "nfs4", "block device", ...
  RwMode rw = RwMode::kRandRead;
  uint64_t block_size = 4096;
  double measured_s = 0;
  // How the numbers were obtained, for the caveats.
  bool page_cache = false;                     // tmpfs/ramfs: memory speed
  bool direct = true;                          // false after a fallback to buffered I/O
  bool read_only = false;                      // the volume refused writes; existing files were read
  bool read_existing_files = false;            // read files (or a device) it did not write: dataset files, --file
  bool read_block_device = false;              // read a raw block device, where every block counts as written
  bool wrote_test_file = false;                // created (or reused) its own test file filled with non-zero data
  uint64_t files_bytes = 0;                    // total size of the files read
  uint64_t readable_bytes = 0;                 // of which written extents, the only bytes read (holes skipped)
  StopReason stop_reason = StopReason::kNone;  // the probe's or the dataset probe's
  // The early stop's confidence interval, as a fraction of the mean IOPS, when the probe gives one.
  std::optional<double> ci_half_width_relative;
  std::optional<double> ci_confidence;  // e.g. 0.95
  // A dataset run (workload.mode: dataset): files read whole per second; iops and
  // p99_latency_ns are then the samples/s and the file latency's p99, bandwidth its bytes/s.
  bool dataset = false;
  // Samples measured: by a dataset run, or by synthetic sample reads (workload.mode auto on a
  // volume without a dataset: each read is one sample, so samples/s is the IOPS).
  bool samples = false;
  double samples_per_s = 0;
  double sample_bytes = 0;  // the mean sample: the dataset's mean file, or the synthetic read's size
  // What limits the samples/s, with the numbers (a dataset run's finding; unknown otherwise).
  FeedLimit limit = FeedLimit::kUnknown;
  std::string limit_why;
  // A checkpoint's save and restore (checkpoint rules); absent where none was measured. Only the
  // checkpoint figures exist where only checkpoint rules apply: the other figures are then 0.
  std::optional<CheckpointFigures> checkpoint;
};

// The classes of a stack's physical leaves, each once (more than one for `mixed`).
std::vector<DeviceClass> leaf_classes(const std::vector<StackNode>& stack);

// A volume's identity alone (class, leaves, path, file system) from its detected stack: the
// measurement a path gets where only its checkpoint is measured.
Measurement stack_measurement(const StorageStack& s, const std::string& path);

// The samples/s a measurement delivers to a demand: its samples/s, but for shard-shaped access over
// a dataset's own files (each file a shard, read whole) its bytes/s over the demand's sample, since
// a shard holds many. The one reading of "delivered": the verdict and the node's label take it.
double demand_delivered_samples_per_s(const Demand& d, const Measurement& m);

// The pod the verdict is for. `path` is the dataset path as named on the command line, which
// selectors' `paths` are matched against (the measurement's path when empty).
struct EvaluationContext {
  int gpus = 0;
  std::string path;
  std::map<std::string, std::string> pod_labels;
};

// What a check compares. Its name (check_kind_name) is the policy key it comes from and the
// "check" of every verdict, annotation and report.
enum class CheckKind {
  kDemand,
  kCheckpoint,
  kMinIops,
  kMaxP99Latency,
  kMinBandwidth,
  kMinSamplesPerS,
  kAllowedClasses,
  kForbiddenClasses
};
std::string_view check_kind_name(CheckKind k);  // "min_iops", "max_p99_latency", ...

struct RuleCheck {
  std::string rule;
  CheckKind check = CheckKind::kMinIops;
  std::string measured, threshold;  // "8,120 IOPS", ">= 10,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 2 GPUs)"
  double measured_value = 0, threshold_value = 0;  // IOPS, ns, bytes/s, AU; 0 for class checks
  bool passed = false;
  std::optional<DemandOutcome> demand;          // kDemand: needed, delivered, predicted AU, accelerators sustained
  std::optional<CheckpointOutcome> checkpoint;  // kCheckpoint: save, stall, restore, what fits
  std::string limit_why;                        // kDemand: the measurement's limit, one sentence with its numbers
};
// "rule gpu-feed min_iops: 8,120 IOPS against >= 10,000 IOPS (...)": a check as one clause.
std::string rule_check_text(const RuleCheck& c);

enum class VerdictOutcome { kPass, kFail, kWarn, kOff };  // kWarn: a check failed in warn mode
std::string_view verdict_outcome_name(VerdictOutcome o);  // "pass", "fail", "warn", "off"

struct Verdict {
  VerdictOutcome outcome = VerdictOutcome::kPass;
  PolicyMode mode = PolicyMode::kEnforce;
  int gpus = 0;
  std::string policy;  // the policy's source ("profile:streaming", a path)
  std::vector<RuleCheck> checks;
  std::vector<std::string> rules_not_applicable;  // "rule: why its selector did not match"
  std::vector<std::string> caveats;               // one sentence each
  // The first failed check, for one-line summaries (Events, logs); null when none failed.
  const RuleCheck* first_failure() const;
};

Verdict evaluate_policy(const Policy& p, const Measurement& m, const EvaluationContext& ctx);

// max(min_iops, min_iops_per_gpu × gpus); 0 when the rule sets neither.
double effective_min_iops(const Rule& r, int gpus);
// max(min_bandwidth, min_bandwidth_per_gpu × gpus) in bytes a second; 0 when the rule sets neither.
double effective_min_bandwidth(const Rule& r, int gpus);
// max(min_samples_per_s, samples_per_s_per_gpu × gpus); 0 when the rule sets neither.
double effective_min_samples_per_s(const Rule& r, int gpus);

// The floors as people read them: ">= 10,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 2 GPUs)",
// ">= 500 MB/s"; without a GPU count, the formula: ">= max(10,000, 5,000/GPU x GPUs) IOPS".
std::string min_iops_text(const Rule& r, std::optional<int> gpus);
std::string min_bandwidth_text(const Rule& r, std::optional<int> gpus);
std::string min_samples_text(const Rule& r, std::optional<int> gpus);  // ">= 2,000 samples/s (...)"

// The demand as people read it: "AU >= 0.90 at 5,000 samples/s (2,500/GPU x 2 GPUs)"; without a
// GPU count, "AU >= 0.90 at 2,500 samples/s per GPU".
std::string demand_text(const Demand& d, std::optional<int> gpus);

// The checks a rule makes, in the order a verdict lists them, each with its threshold as people
// read it ("<= 5 ms", "none of hdd"): what evaluate_policy judges and `policy check` shows.
struct RuleThreshold {
  CheckKind check;
  std::string text;
};
std::vector<RuleThreshold> rule_thresholds(const Rule& r, std::optional<int> gpus);

// Why a rule's selector does not match, or nullopt when it does.
std::optional<std::string> selector_mismatch(const RuleSelector& s, DeviceClass device_class, const std::string& path,
                                             const std::map<std::string, std::string>& pod_labels);

// A rule's IOPS floor for `gpus` GPUs: effective_min_iops, or its bandwidth floor converted to
// IOPS at the workload's block size when that is higher. The one derivation of "the IOPS floor":
// early stop, the webhook's node affinity, the node's labels, tier and metric all come from it.
// 0 when the rule sets no IOPS or bandwidth floor, and in dataset and auto modes (samples/s are
// not IOPS; a demand is judged in samples, never as a 4 KiB IOPS floor).
struct RuleIopsFloor {
  double iops = 0;
  bool from_bandwidth = false;  // the converted bandwidth floor is the higher one
};
RuleIopsFloor rule_iops_floor(const Policy& p, const Rule& r, int gpus);

// The highest rule_iops_floor among the rules that apply to a volume of `device_class` (known
// from detect before the probe): the number the probe's early stop compares against, so it can
// stop once the result is clearly above or below it, and the node's floor. nullopt when no
// applicable rule sets a floor.
std::optional<double> iops_floor(const Policy& p, const EvaluationContext& ctx, DeviceClass device_class);

// The caveats that apply to a measurement (also part of evaluate_policy's verdict).
std::vector<std::string> measurement_caveats(const Policy& p, const Measurement& m);

// {"outcome","mode","gpus","policy","checks":[{rule,check,measured,threshold,measured_value,
//  threshold_value,passed}],"rules_not_applicable":[],"caveats":[]}
nlohmann::json verdict_to_json(const Verdict& v);
// {"accelerators","samples_per_s_needed","samples_per_s_delivered","predicted_au","min_au",
//  "accelerators_sustained","limit"}: a demand check's figures, in the verdict and the compact report.
nlohmann::json demand_outcome_json(const DemandOutcome& o);
// {"ranks","bytes","rank_bytes","interval_seconds","save_seconds","stall_fraction","max_stall",
//  "restore_seconds","max_restore_seconds","largest_bytes","min_interval_seconds"}: a checkpoint
// check's figures, merged into its check object (restore_* absent where not measured or set).
nlohmann::json checkpoint_outcome_json(const CheckpointOutcome& o);
// A check as the compact annotations carry it: [rule, check, measured, threshold, passed].
nlohmann::json compact_check_json(const RuleCheck& c);

// One line of figures: "randread 4k: 52,300 IOPS, p99 1.20 ms, 204 MiB/s on nvme".
std::string measurement_figures(const Measurement& m);

// A small table, one line per check, like kubectl's output, then the rules that did not apply
// and the caveats.
std::string render_verdict_human(const Verdict& v);

}  // namespace iogate
