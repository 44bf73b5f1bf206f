#include "cli/policy_probe.h"

#include <fmt/format.h>

#include "base/units.h"
#include "policy/policy_units.h"

namespace iogate {

ProbeRequest policy_probe_request(const Policy& p, const std::string& path, const std::string& root,
                                  const EvaluationContext& ctx, DeviceClass device_class) {
  ProbeRequest req{path, p.workload, root};
  req.early_stop.enabled = p.early_stop;
  req.early_stop.tolerance = p.stop_tolerance;
  req.early_stop.confidence = p.stop_confidence;
  req.early_stop.threshold_iops = iops_floor(p, ctx, device_class);
  return req;
}

std::string describe_probe_request(const Policy& p, const ProbeRequest& r) {
  const Workload& w = r.workload;
  return fmt::format("{} {} QD{}×{} (limit {}, early stop {}{})", rw_mode_name(w.rw), format_size_compact(w.block_size),
                     w.iodepth, w.numjobs, format_duration_compact(w.runtime.count()),
                     p.early_stop ? fmt::format("±{:.1f}%", p.stop_tolerance * 100) : "off",
                     r.early_stop.threshold_iops ? fmt::format(", floor {:.0f} IOPS", *r.early_stop.threshold_iops) : "");
}

}  // namespace iogate
