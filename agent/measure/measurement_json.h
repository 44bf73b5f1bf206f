// A Measurement as JSON, so one pod's measurement can be recorded (on a PVC) and judged again for
// another pod with its own GPUs and labels. Reading is tolerant of absent keys (a result recorded
// by an older iogate), strict about types: a mistyped value makes the record unusable, never a
// silently wrong number.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "policy/evaluate.h"

namespace iogate {

nlohmann::json measurement_to_json(const Measurement& m);
std::optional<Measurement> measurement_from_json(const nlohmann::json& j);

// The workload's identity for reuse: "randread/4k/qd32x1". Results of other workloads (another
// policy's) are never reused for this one.
std::string workload_key(const Workload& w);

}  // namespace iogate
