// A policy's demand rules re-aimed at a named MLPerf Storage workload × accelerator (--workload,
// --accelerator), so a user names the accelerator without writing a rule.
#include <fmt/format.h>

#include "base/quote.h"
#include "policy/policy.h"

namespace iogate {

Status apply_named_workload(Policy& p, std::string_view workload, std::string_view accelerator) {
  if (workload.empty() != accelerator.empty()) {
    return usage_error(
        workload.empty()
            ? "--workload: missing; --accelerator names one of its accelerators (" + named_workload_list() + ")"
            : "--accelerator: missing; the workload's speed depends on it (" + named_workload_list() + ")");
  }
  if (workload.empty()) return ok_status();
  const NamedWorkload* named = find_named_workload(workload, accelerator);
  if (!named) {
    return usage_error(fmt::format("--workload, --accelerator: no MLPerf Storage workload {} on {} (known: {})",
                                   quote_value(workload), quote_value(accelerator), named_workload_list()));
  }
  bool any = false;
  for (Rule& r : p.rules) {
    if (!r.demand) continue;
    r.demand = named_demand(*named);
    any = true;
  }
  if (!any) {
    return usage_error(
        fmt::format("--workload: policy {} has no rule with a demand to apply it to (profile:{} has one)", p.source,
                    kDefaultProfile));
  }
  return ok_status();
}

}  // namespace iogate
