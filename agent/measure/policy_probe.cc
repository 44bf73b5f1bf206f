#include "measure/policy_probe.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {

namespace {

DeviceClass class_of(const StorageStack* stack) { return stack ? stack->device_class : DeviceClass::kUnknown; }

// The policy's early stop, for a block probe (on IOPS) and the loader (on samples/s) alike.
EarlyStopConfig policy_early_stop(const Policy& p, std::optional<double> threshold) {
  EarlyStopConfig c;
  c.enabled = p.early_stop;
  c.tolerance = p.stop_tolerance;
  c.confidence = p.stop_confidence;
  c.threshold_iops = threshold;
  return c;
}

}  // namespace

ProbeRequest policy_probe_request(const Policy& p, const std::string& path, const std::string& root,
                                  const EvaluationContext& ctx, const StorageStack* stack) {
  ProbeRequest req{path, p.workload, root};
  if (stack) req.storage = *stack;
  req.early_stop = policy_early_stop(p, iops_floor(p, ctx, class_of(stack)));
  return req;
}

std::string describe_probe_request(const Policy& p, const ProbeRequest& r) {
  const Workload& w = r.workload;
  return fmt::format(
      "{} {} QD{}×{} (limit {}, early stop {}{})", rw_mode_name(w.rw), format_size_compact(w.block_size), w.iodepth,
      w.numjobs, format_duration_compact(w.runtime.count()),
      p.early_stop ? fmt::format("±{:.1f}%", p.stop_tolerance * 100) : "off",
      r.early_stop.threshold_iops ? fmt::format(", floor {:.0f} IOPS", *r.early_stop.threshold_iops) : "");
}

DatasetRequest policy_dataset_request(const Policy& p, const std::string& path, const std::string& root,
                                      const EvaluationContext& ctx, const StorageStack* stack) {
  DatasetRequest req;
  if (stack) req.storage = *stack;
  req.path = path;
  req.root = root;
  req.scan.time = p.dataset.scan_time;
  req.scan.entries = p.dataset.scan_entries;
  req.scan.sample_size = p.dataset.sample;
  req.loader.runtime = p.workload.runtime;
  req.loader.direct = p.dataset.direct;
  req.worker_counts = {policy_loader_workers(p)};
  // The target: the highest samples/s floor, or the rate at which a demand's AU reaches its floor.
  double target = 0, target_bytes = 0;
  bool shards = false;
  for (const Rule& r : p.rules) {
    if (selector_mismatch(r.selector, class_of(stack), ctx.path.empty() ? path : ctx.path, ctx.pod_labels)) continue;
    target = std::max(target, effective_min_samples_per_s(r, ctx.gpus));
    if (r.demand && r.demand->shard_bytes) {
      // Records out of shards: the loader reads whole shards, so the target is in bytes/s.
      shards = true;
      target_bytes =
          std::max(target_bytes, verdict_flip_samples_per_s(*r.demand, ctx.gpus) * double(*r.demand->sample_bytes));
    } else if (r.demand) {
      target = std::max(target, verdict_flip_samples_per_s(*r.demand, ctx.gpus));
    }
  }
  if (target > 0) req.target_samples_per_s = target;
  // The loader stops once its samples/s (bytes/s for shards) settles, or is clearly beside the target.
  req.loader.early_stop_on_bytes = shards;
  const double stop_target = shards ? target_bytes : target;
  req.loader.early_stop = policy_early_stop(p, stop_target > 0 ? std::optional<double>(stop_target) : std::nullopt);
  return req;
}

bool is_shard_file_name(std::string_view name) {
  for (std::string_view ext : {".tar", ".mds", ".tfrecord", ".tfrecords", ".parquet"}) {
    if (name.size() > ext.size() && name.ends_with(ext)) return true;
  }
  return false;
}

Result<SampleSource> auto_sample_source(const std::string& path, bool shards, const std::atomic<bool>& stop) {
  if (shards) {
    // A shard dataset is a few large files: one shard file under the path is the dataset.
    // A path it cannot walk is the scan's to report, below.
    std::error_code ec;
    std::filesystem::recursive_directory_iterator it(path, std::filesystem::directory_options::skip_permission_denied,
                                                     ec);
    const auto until = std::chrono::steady_clock::now() + kDatasetCheckTime;
    uint64_t entries = 0;
    for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (stop.load() || ++entries > kDatasetCheckEntries || std::chrono::steady_clock::now() > until) break;
      if (it->is_regular_file(ec) && is_shard_file_name(it->path().filename().string())) return SampleSource::kDataset;
    }
  }
  ScanBudget budget;
  budget.time = kDatasetCheckTime;
  budget.entries = kDatasetCheckEntries;
  budget.files = kMinDatasetFiles;  // stops as soon as it is a dataset: a 1.3M-file tree costs a few reads
  budget.sample_size = 1;           // only the count matters here
  auto scan = scan_dataset(path, budget, stop);
  if (!scan.ok()) return scan.error();
  return scan->files_seen >= kMinDatasetFiles ? SampleSource::kDataset : SampleSource::kSynthetic;
}

namespace {

// Of the rules with a demand that `applies` accepts, the demand with the largest sample.
template <typename Applies>
std::optional<Demand> largest_sample_demand(const Policy& p, Applies applies) {
  std::optional<Demand> pick;
  for (const Rule& r : p.rules) {
    if (!r.demand || !r.demand->sample_bytes || !applies(r)) continue;
    if (!pick || *r.demand->sample_bytes > *pick->sample_bytes) pick = r.demand;
  }
  return pick;
}

}  // namespace

std::optional<Demand> synthetic_demand(const Policy& p, const EvaluationContext& ctx, DeviceClass device_class) {
  return largest_sample_demand(p, [&](const Rule& r) { return rule_applies(r, ctx, device_class, JudgedFor::kPod); });
}

bool rule_applies(const Rule& r, const EvaluationContext& ctx, DeviceClass device_class, JudgedFor judged_for) {
  if (judged_for == JudgedFor::kNode) return rule_covers_node_path(r, ctx.path, device_class);
  return !selector_mismatch(r.selector, device_class, ctx.path, ctx.pod_labels);
}

int policy_loader_workers(const Policy& p) {
  return p.dataset.workers > 0 ? p.dataset.workers : default_loader_workers();
}

bool rule_covers_node_path(const Rule& r, const std::string& path, DeviceClass device_class) {
  RuleSelector paths_and_classes = r.selector;
  paths_and_classes.pod_labels.clear();
  return !selector_mismatch(paths_and_classes, device_class, path, {});
}

std::optional<Demand> node_synthetic_demand(const Policy& p, const std::string& path, DeviceClass device_class) {
  return largest_sample_demand(p, [&](const Rule& r) { return rule_covers_node_path(r, path, device_class); });
}

ProbeRequest randread_headline_request(const Policy& p, const std::string& path, const std::string& root,
                                       const StorageStack* stack) {
  Workload w = p.workload;
  w.rw = RwMode::kRandRead;
  w.block_size = kHeadlineBlockSize;
  w.direct = true;
  ProbeRequest req{path, w, root};
  if (stack) req.storage = *stack;
  req.early_stop = policy_early_stop(p, std::nullopt);
  return req;
}

Workload synthetic_sample_workload(const Policy& p, const Demand& d) {
  Workload w = p.workload;
  constexpr uint64_t kAlign = 4096;
  const int workers = policy_loader_workers(p);
  const uint64_t piece = d.shard_bytes ? *d.shard_bytes : d.sample_bytes.value_or(1);
  uint64_t read = std::min(std::max<uint64_t>(piece, 1), kMaxSyntheticRead);
  w.block_size = (read + kAlign - 1) / kAlign * kAlign;
  w.direct = true;
  if (d.shard_bytes) {
    // A shard stream: each worker reads its own shard front to back, one read at a time.
    w.rw = RwMode::kRead;
    w.iodepth = 1;
    w.numjobs = workers;
    return w;
  }
  w.rw = RwMode::kRandRead;
  w.iodepth = workers;
  w.numjobs = 1;
  return w;
}

double synthetic_reads_per_sample(const Demand& d, uint64_t block_size) {
  if (d.shard_bytes) return double(*d.sample_bytes) / double(std::max<uint64_t>(block_size, 1));
  return double(reads_per_sample(*d.sample_bytes, block_size));
}

ProbeRequest synthetic_sample_request(const Policy& p, const Demand& d, const std::string& path,
                                      const std::string& root, const EvaluationContext& ctx,
                                      const StorageStack* stack) {
  ProbeRequest req{path, synthetic_sample_workload(p, d), root};
  if (stack) req.storage = *stack;
  // The verdict flips at min_au × needed samples/s; in reads, times the reads a sample takes.
  double flip = verdict_flip_samples_per_s(d, ctx.gpus) * synthetic_reads_per_sample(d, req.workload.block_size);
  req.early_stop = policy_early_stop(p, flip > 0 ? std::optional<double>(flip) : std::nullopt);
  return req;
}

std::string describe_dataset_request(const DatasetRequest& r) {
  return fmt::format("dataset {} workers, {} sampled, scan up to {}, limit {}{}",
                     r.worker_counts.empty() ? 0 : r.worker_counts[0], r.scan.sample_size,
                     format_duration_compact(r.scan.time.count()), format_duration_compact(r.loader.runtime.count()),
                     r.target_samples_per_s ? fmt::format(", floor {:.0f} samples/s", *r.target_samples_per_s) : "");
}

}  // namespace iogate
