#include "measure/checkpoint_measure.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "base/units.h"
#include "measure/policy_probe.h"

namespace iogate {
std::optional<CheckpointRequest> policy_checkpoint_request(const Policy& p, const EvaluationContext& ctx,
                                                           DeviceClass device_class) {
  std::optional<CheckpointRequest> req;
  for (const Rule& r : p.rules) {
    if (!r.checkpoint || !rule_applies(r, ctx, device_class, JudgedFor::kPod)) continue;
    if (!req) {
      req.emplace();
      req->directory = ctx.path;
      req->ranks = checkpoint_ranks(ctx.gpus);
      req->max_rank_bytes = 0;
    }
    req->max_rank_bytes = std::max(req->max_rank_bytes, checkpoint_rank_bytes(*r.checkpoint, ctx.gpus));
  }
  if (req) req->max_rank_bytes = std::max<uint64_t>(req->max_rank_bytes, 4096);
  return req;
}

bool needs_workload_measurement(const Policy& p, const EvaluationContext& ctx, DeviceClass device_class) {
  bool any = false;
  for (const Rule& r : p.rules) {
    if (!rule_applies(r, ctx, device_class, JudgedFor::kPod)) continue;
    any = true;
    for (const RuleThreshold& t : rule_thresholds(r, ctx.gpus)) {
      if (t.check != CheckKind::kCheckpoint && t.check != CheckKind::kAllowedClasses &&
          t.check != CheckKind::kForbiddenClasses)
        return true;
    }
  }
  return !any;
}

CheckpointFigures checkpoint_figures(const CheckpointProbeResult& r) {
  CheckpointFigures f;
  f.ranks = r.ranks;
  f.save = {r.save.fixed_s, r.save.bytes_per_s};
  f.restore = {r.restore.fixed_s, r.restore.bytes_per_s};
  f.bytes_written = r.bytes_written;
  f.bytes_read = r.bytes_read;
  f.measured_s = r.measured_s;
  f.extrapolated = r.stop_reason != StopReason::kComplete;
  if (!f.save.valid()) f.note = "no save round finished";
  return f;
}

std::optional<CheckpointFigures> checkpoint_refusal(const Error& e, int ranks) {
  if (e.os_errno != EROFS && e.os_errno != EACCES && e.os_errno != EPERM) return std::nullopt;
  CheckpointFigures f;
  f.ranks = ranks;
  f.read_only = e.os_errno == EROFS;
  f.note = e.os_errno == EROFS ? "the volume is read-only; a checkpoint cannot be saved there"
                               : "this user cannot write there; a checkpoint cannot be saved";
  return f;
}

}  // namespace iogate
