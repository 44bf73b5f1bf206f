#include "node/node_tier.h"

#include <algorithm>

namespace iogate {
namespace {

bool is_rate_check(const RuleCheck& c) {
  return c.check == CheckKind::kMinIops || c.check == CheckKind::kMinBandwidth || c.check == CheckKind::kMinSamplesPerS;
}

bool explicit_fast_iops(const NodeSettings& s) { return s.fast_min_iops || s.fast_min_iops_per_gpu; }

// max(node.fast_min_iops, node.fast_min_iops_per_gpu × GPUs), for settings that set either.
double explicit_fast_iops_floor(const NodeSettings& s, int gpus) {
  return std::max(double(s.fast_min_iops.value_or(0)), double(s.fast_min_iops_per_gpu.value_or(0)) * gpus);
}

}  // namespace

std::string_view node_tier_name(NodeTier t) {
  switch (t) {
    case NodeTier::kFast: return "fast";
    case NodeTier::kOk: return "ok";
    case NodeTier::kSlow: return "slow";
  }
  return "ok";
}

double fast_iops_threshold(const NodeSettings& s, double iops_floor, int gpus) {
  return explicit_fast_iops(s) ? explicit_fast_iops_floor(s, gpus) : iops_floor * s.fast_factor;
}

NodeTier node_tier(const NodeSettings& s, const Verdict& v, const Measurement& m, int gpus) {
  for (const RuleCheck& c : v.checks) {
    if (!c.passed) return NodeTier::kSlow;
  }
  if (explicit_fast_iops(s)) return m.iops >= explicit_fast_iops_floor(s, gpus) ? NodeTier::kFast : NodeTier::kOk;
  bool any_rate = false;
  for (const RuleCheck& c : v.checks) {
    if (!is_rate_check(c)) continue;
    any_rate = true;
    if (c.measured_value < c.threshold_value * s.fast_factor) return NodeTier::kOk;
  }
  return any_rate ? NodeTier::kFast : NodeTier::kOk;
}

}  // namespace iogate
