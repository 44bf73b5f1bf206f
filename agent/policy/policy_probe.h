// The probe a policy asks for on one path, shared by preflight and node: the policy's workload,
// its early stop, and the IOPS floor that lets the early stop end a run that is clearly above or
// below it. The floor depends on the volume's class (rules select by class), which the caller
// detects cheaply before the probe (`stack`, null where detect failed: class unknown); the probe
// reports that stack rather than detecting the path again.
#pragma once

#include <string>

#include "bench/dataset_probe.h"
#include "bench/probe.h"
#include "device/device_class.h"
#include "policy/evaluate.h"
#include "policy/policy.h"

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

}  // namespace iogate
