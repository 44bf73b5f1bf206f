// The node label iogate.io/tier: fast | ok | slow, from a verdict and the policy's node section.
//
// slow: a check failed (in enforce or warn mode: the tier states the fact, the mode only decides
// whether anything is enforced). fast: passed with room to spare — IOPS at least
// max(node.fast_min_iops, node.fast_min_iops_per_gpu × GPUs) when the policy sets either, else
// every rate check (min_iops, min_bandwidth) measured at node.fast_factor × its threshold or more.
// ok: everything else, including a policy without rate checks (nothing to be fast against).
#pragma once

#include <string_view>

#include "policy/evaluate.h"
#include "policy/policy.h"

namespace iogate {

enum class NodeTier { kFast, kOk, kSlow };
std::string_view node_tier_name(NodeTier t);  // "fast", "ok", "slow"

NodeTier node_tier(const NodeSettings& settings, const Verdict& verdict, const Measurement& m, int gpus);

// The IOPS a path needs for tier fast under these settings: the explicit fast_min_iops floors,
// else node.fast_factor × the path's IOPS floor (iops_floor, evaluate.h); 0 without either.
double fast_iops_threshold(const NodeSettings& settings, double iops_floor, int gpus);

}  // namespace iogate
