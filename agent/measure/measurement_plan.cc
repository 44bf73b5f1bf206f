#include "measure/measurement_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/units.h"
#include "measure/checkpoint_measure.h"
#include "measure/measurement_from.h"
#include "measure/policy_probe.h"

namespace iogate {

Result<MeasurementPlan> plan_measurement(const Policy& p, const EvaluationContext& ctx, DeviceClass device_class,
                                         JudgedFor judged_for, const std::atomic<bool>& stop) {
  MeasurementPlan plan;
  if (judged_for == JudgedFor::kPod) {
    plan.checkpoint = policy_checkpoint_request(p, ctx, device_class);
    plan.workload = !plan.checkpoint || needs_workload_measurement(p, ctx, device_class);
  }
  if (!plan.workload) return plan;
  switch (p.workload_mode) {
    case WorkloadMode::kIo: plan.source = WorkloadSource::kBlockIo; return plan;
    case WorkloadMode::kDataset: plan.source = WorkloadSource::kDataset; return plan;
    case WorkloadMode::kAuto: break;
  }
  // A walk of at most kDatasetCheckTime: within the deadline's allowance for preparing a probe.
  const bool shards = std::any_of(p.rules.begin(), p.rules.end(), [&](const Rule& r) {
    return r.demand && r.demand->shard_bytes && rule_applies(r, ctx, device_class, judged_for);
  });
  auto source = auto_sample_source(ctx.path, shards, stop);
  if (!source.ok()) return source.error();
  if (*source == SampleSource::kDataset) {
    plan.source = WorkloadSource::kDataset;
    return plan;
  }
  plan.source = WorkloadSource::kSyntheticSamples;
  plan.synthetic = judged_for == JudgedFor::kPod ? synthetic_demand(p, ctx, device_class)
                                                 : node_synthetic_demand(p, ctx.path, device_class);
  if (!plan.synthetic) {
    return usage_error(
        fmt::format("{}: holds no dataset (fewer than {} files) and no applicable rule states a demand to read "
                    "synthetic samples for",
                    ctx.path, kMinDatasetFiles));
  }
  return plan;
}

ProbeRequest planned_probe_request(const Policy& p, const MeasurementPlan& plan, const std::string& path,
                                   const std::string& root, const EvaluationContext& ctx, const StorageStack* stack) {
  if (plan.synthetic) return synthetic_sample_request(p, *plan.synthetic, path, root, ctx, stack);
  return policy_probe_request(p, path, root, ctx, stack);
}

Workload planned_workload(const Policy& p, const MeasurementPlan& plan) {
  if (plan.synthetic) return synthetic_sample_workload(p, *plan.synthetic);
  return p.workload;
}

Measurement planned_measurement(const MeasurementPlan& plan, const ProbeResult& r) {
  if (plan.synthetic) return measurement_from_synthetic_samples(r, *plan.synthetic);
  return measurement_from_probe(r);
}

}  // namespace iogate
