// What a path is measured with under a policy: the one choice preflight/ and node/ both make,
// from the rules that apply to the path (their selectors against its class, path and, for a pod,
// its labels) and what the volume holds. The workload part is the policy's block I/O, the dataset
// under the path, or synthetic samples (workload.mode auto on a volume without a dataset); the
// checkpoint part is there where a checkpoint rule applies, and then the workload part only where
// another check needs its figures. Each mode runs the plan its own way (preflight within its
// deadline and with its job, the node at idle priority), and reads its results back through
// the functions here, so that a probe's figures always mean what the plan measured.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "base/result.h"
#include "checkpoint/checkpoint_probe.h"
#include "dataset/dataset_probe.h"
#include "measure/policy_probe.h"
#include "policy/demand.h"
#include "policy/evaluate.h"
#include "policy/policy.h"
#include "probe/probe.h"

namespace iogate {

enum class WorkloadSource { kBlockIo, kDataset, kSyntheticSamples };

struct MeasurementPlan {
  bool workload = true;  // measure the workload part (false: only the checkpoint's figures are read)
  WorkloadSource source = WorkloadSource::kBlockIo;
  std::optional<Demand> synthetic;  // kSyntheticSamples: the demand its samples stand for
  std::optional<CheckpointRequest> checkpoint;
};

// The plan for `path` (ctx.path), whose detected class is `device_class`. Errors: the path is
// missing or unreadable (auto's dataset check), and auto mode on a volume with no dataset where
// no applicable rule states a demand to read synthetic samples for (a usage error naming the path).
Result<MeasurementPlan> plan_measurement(const Policy& p, const EvaluationContext& ctx, DeviceClass device_class,
                                         JudgedFor judged_for, const std::atomic<bool>& stop);

// The block-I/O probe of a kBlockIo or kSyntheticSamples plan: the policy's workload with its
// early stop and floor, or the synthetic sample reads for the plan's demand.
ProbeRequest planned_probe_request(const Policy& p, const MeasurementPlan& plan, const std::string& path,
                                   const std::string& root, const EvaluationContext& ctx, const StorageStack* stack);
// The workload a kBlockIo or kSyntheticSamples plan runs: what a result shared on a PVC is keyed by.
Workload planned_workload(const Policy& p, const MeasurementPlan& plan);
// A finished probe of that plan as the verdict reads it.
Measurement planned_measurement(const MeasurementPlan& plan, const ProbeResult& r);

}  // namespace iogate
