// The probe a policy asks for on one path, shared by preflight and node: the policy's workload,
// its early stop, and the IOPS floor that lets the early stop end a run that is clearly above or
// below it. The floor depends on the volume's class (rules select by class), which the caller
// detects cheaply before the probe (`stack`, null where detect failed: class unknown); the probe
// reports that stack rather than detecting the path again.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "dataset/dataset_probe.h"
#include "device/device_class.h"
#include "policy/demand.h"
#include "policy/evaluate.h"
#include "policy/policy.h"
#include "probe/probe.h"

namespace iogate {

ProbeRequest policy_probe_request(const Policy& p, const std::string& path, const std::string& root,
                                  const EvaluationContext& ctx, const StorageStack* stack);

// "randread 4k QD32x1 (limit 10s, early stop ±3.0%, floor 10000 IOPS)", for logs.
std::string describe_probe_request(const Policy& p, const ProbeRequest& r);

// For workload.mode: dataset: the dataset probe of `path` with the policy's loader settings, one
// worker count (no sweep: a verdict needs one number), and the highest samples/s floor of the
// rules as the target its workers-for-target advice is about.
DatasetRequest policy_dataset_request(const Policy& p, const std::string& path, const std::string& root,
                                      const EvaluationContext& ctx, const StorageStack* stack);

// "dataset 4 workers, 20000 sampled, scan 10s, limit 10s", for logs.
std::string describe_dataset_request(const DatasetRequest& r);

// workload.mode: auto measures the dataset under the path where there is one, else synthetic
// samples. A dataset is at least kMinDatasetFiles regular files, counted by a walk that stops at
// the first beyond them, bounded to kDatasetCheckTime and kDatasetCheckEntries (a dataset shows
// itself within them; a scratch volume is walked whole).
enum class SampleSource { kDataset, kSynthetic };
inline constexpr std::chrono::milliseconds kDatasetCheckTime{2000};
inline constexpr uint64_t kDatasetCheckEntries = 100'000;
// Errors: the path is missing or not a directory (usage), or unreadable.
// With `shards` (an applicable demand reads shards), one file named like a shard (.tar, .mds,
// .tfrecord(s), .parquet) within the same bounds is a dataset too: a shard dataset is a few large files.
Result<SampleSource> auto_sample_source(const std::string& path, bool shards, const std::atomic<bool>& stop);
bool is_shard_file_name(std::string_view name);

// The demand the synthetic sample reads stand for: of the applicable rules with a demand, the one
// with the largest sample (a volume that feeds it feeds smaller ones at the same bytes/s);
// nullopt when none applies.
std::optional<Demand> synthetic_demand(const Policy& p, const EvaluationContext& ctx, DeviceClass device_class);

// Whom a verdict is for: a pod (its labels select rules; its checkpoint is measured) or a node
// (every rule covering the path, whatever pods it selects; checkpoints are the pods').
enum class JudgedFor { kPod, kNode };
// Whether rule `r` applies to ctx.path on a volume of `device_class`: its selector for a pod,
// rule_covers_node_path for a node.
bool rule_applies(const Rule& r, const EvaluationContext& ctx, DeviceClass device_class, JudgedFor judged_for);
// The loader's workers a policy asks for: workload.workers, or default_loader_workers().
int policy_loader_workers(const Policy& p);

// The rules a node's data path answers for: their selector's paths and device classes match it.
// Pod labels are not looked at: the node serves whichever pods a rule selects.
bool rule_covers_node_path(const Rule& r, const std::string& path, DeviceClass device_class);
// The node agent's synthetic demand: synthetic_demand's pick among every rule covering the path, so
// that the one measurement answers for each rule's label.
std::optional<Demand> node_synthetic_demand(const Policy& p, const std::string& path, DeviceClass device_class);

// The 4 KiB random-read headline (iogate.io/randread-iops) that the node agent measures beside the
// samples of a policy in workload.mode auto or dataset: the policy's test file, ramp, runtime and
// queue depth, O_DIRECT, early stop on convergence alone (no floor: the figure is reported, not judged).
inline constexpr uint64_t kHeadlineBlockSize = 4096;
ProbeRequest randread_headline_request(const Policy& p, const std::string& path, const std::string& root,
                                       const StorageStack* stack);

// Synthetic samples of the demand's sample: random reads of min(sample, kMaxSyntheticRead) rounded
// up to 4 KiB (a larger sample is read in such pieces, as a loader reads a large file in chunks),
// one per loader worker in flight, on the policy's test file (size, ramp, runtime). For a shard
// demand, synthetic shards: each loader worker a sequential reader of its own part of the test
// file, one read of min(shard, kMaxSyntheticRead) at a time, as a WebDataset or MDS worker streams
// its shard. The early stop compares samples/s × reads per sample against the demand's AU floor at
// the pod's GPUs.
inline constexpr uint64_t kMaxSyntheticRead = uint64_t{1} << 20;
Workload synthetic_sample_workload(const Policy& p, const Demand& d);
// The reads of `block_size` a synthetic sample costs: whole reads for random samples, the exact
// share of a read for records streamed out of a shard.
double synthetic_reads_per_sample(const Demand& d, uint64_t block_size);
ProbeRequest synthetic_sample_request(const Policy& p, const Demand& d, const std::string& path,
                                      const std::string& root, const EvaluationContext& ctx, const StorageStack* stack);

}  // namespace iogate
