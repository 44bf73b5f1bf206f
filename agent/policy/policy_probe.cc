#include "policy/policy_probe.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {

namespace {

DeviceClass class_of(const StorageStack* stack) { return stack ? stack->device_class : DeviceClass::kUnknown; }

}  // namespace

ProbeRequest policy_probe_request(const Policy& p, const std::string& path, const std::string& root,
                                  const EvaluationContext& ctx, const StorageStack* stack) {
  ProbeRequest req{path, p.workload, root};
  if (stack) req.storage = *stack;
  req.early_stop.enabled = p.early_stop;
  req.early_stop.tolerance = p.stop_tolerance;
  req.early_stop.confidence = p.stop_confidence;
  req.early_stop.threshold_iops = iops_floor(p, ctx, class_of(stack));
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
  double target = 0;
  for (const Rule& r : p.rules) {
    if (selector_mismatch(r.selector, class_of(stack), ctx.path.empty() ? path : ctx.path, ctx.pod_labels)) continue;
    target = std::max(target, effective_min_samples_per_s(r, ctx.gpus));
  }
  if (target > 0) req.target_samples_per_s = target;
  return req;
}

std::string describe_dataset_request(const DatasetRequest& r) {
  return fmt::format("dataset {} workers, {} sampled, scan up to {}, limit {}{}",
                     r.worker_counts.empty() ? 0 : r.worker_counts[0], r.scan.sample_size,
                     format_duration_compact(r.scan.time.count()), format_duration_compact(r.loader.runtime.count()),
                     r.target_samples_per_s ? fmt::format(", floor {:.0f} samples/s", *r.target_samples_per_s) : "");
}

}  // namespace iogate
