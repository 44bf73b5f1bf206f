#include "measure/policy_probe.h"

#include <algorithm>

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
  req.worker_counts = {p.dataset.workers > 0 ? p.dataset.workers : default_loader_workers()};
  // The target: the highest samples/s floor, or the rate at which a demand's AU reaches its floor.
  double target = 0;
  for (const Rule& r : p.rules) {
    if (selector_mismatch(r.selector, class_of(stack), ctx.path.empty() ? path : ctx.path, ctx.pod_labels)) continue;
    target = std::max(target, effective_min_samples_per_s(r, ctx.gpus));
    if (r.demand) target = std::max(target, verdict_flip_samples_per_s(*r.demand, ctx.gpus));
  }
  if (target > 0) req.target_samples_per_s = target;
  // The loader stops once its samples/s settles, or is clearly beside the target.
  req.loader.early_stop = policy_early_stop(p, target > 0 ? std::optional<double>(target) : std::nullopt);
  return req;
}

Result<SampleSource> auto_sample_source(const std::string& path, const std::atomic<bool>& stop) {
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
  return largest_sample_demand(
      p, [&](const Rule& r) { return !selector_mismatch(r.selector, device_class, ctx.path, ctx.pod_labels); });
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

Workload synthetic_sample_workload(const Policy& p, uint64_t sample_bytes) {
  Workload w = p.workload;
  constexpr uint64_t kAlign = 4096;
  uint64_t read = std::min(std::max<uint64_t>(sample_bytes, 1), kMaxSyntheticRead);
  w.rw = RwMode::kRandRead;
  w.block_size = (read + kAlign - 1) / kAlign * kAlign;
  w.iodepth = p.dataset.workers > 0 ? p.dataset.workers : default_loader_workers();
  w.numjobs = 1;
  w.direct = true;
  return w;
}

ProbeRequest synthetic_sample_request(const Policy& p, const Demand& d, const std::string& path,
                                      const std::string& root, const EvaluationContext& ctx,
                                      const StorageStack* stack) {
  ProbeRequest req{path, synthetic_sample_workload(p, *d.sample_bytes), root};
  if (stack) req.storage = *stack;
  // The verdict flips at min_au × needed samples/s; in reads, times the reads a sample takes.
  double flip =
      verdict_flip_samples_per_s(d, ctx.gpus) * double(reads_per_sample(*d.sample_bytes, req.workload.block_size));
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
