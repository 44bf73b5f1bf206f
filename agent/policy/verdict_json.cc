#include <cmath>

#include "policy/evaluate.h"

namespace iogate {

nlohmann::json verdict_to_json(const Verdict& v) {
  auto finite = [](double x) { return std::isfinite(x) ? x : 0.0; };
  nlohmann::json checks = nlohmann::json::array();
  for (const RuleCheck& c : v.checks) {
    nlohmann::json j = {{"rule", c.rule},
                        {"check", check_kind_name(c.check)},
                        {"measured", c.measured},
                        {"threshold", c.threshold},
                        {"measured_value", finite(c.measured_value)},
                        {"threshold_value", finite(c.threshold_value)},
                        {"passed", c.passed}};
    if (c.demand) j["demand"] = demand_outcome_json(*c.demand);
    if (c.checkpoint) j.update(checkpoint_outcome_json(*c.checkpoint));
    checks.push_back(std::move(j));
  }
  return {{"outcome", verdict_outcome_name(v.outcome)},
          {"mode", policy_mode_name(v.mode)},
          {"gpus", v.gpus},
          {"policy", v.policy},
          {"checks", checks},
          {"rules_not_applicable", v.rules_not_applicable},
          {"caveats", v.caveats}};
}

nlohmann::json demand_outcome_json(const DemandOutcome& o) {
  return {{"accelerators", o.accelerators},
          {"samples_per_s_needed", o.samples_per_s_needed},
          {"samples_per_s_delivered", o.samples_per_s_delivered},
          {"predicted_au", o.predicted_au},
          {"min_au", o.min_au},
          {"accelerators_sustained", o.accelerators_sustained},
          {"limit", feed_limit_name(o.limit)}};
}

nlohmann::json checkpoint_outcome_json(const CheckpointOutcome& o) {
  auto finite = [](double x) { return std::isfinite(x) ? x : 0.0; };
  nlohmann::json j = {{"ranks", o.ranks},
                      {"bytes", o.bytes},
                      {"rank_bytes", o.rank_bytes},
                      {"interval_seconds", o.interval_s},
                      {"save_seconds", finite(o.save_seconds)},
                      {"stall_fraction", finite(o.stall_fraction)},
                      {"max_stall", o.max_stall},
                      {"largest_bytes", o.largest_bytes},
                      {"min_interval_seconds", finite(o.min_interval_s)}};
  if (o.restore_seconds) j["restore_seconds"] = finite(*o.restore_seconds);
  if (o.max_restore_seconds) j["max_restore_seconds"] = *o.max_restore_seconds;
  return j;
}

nlohmann::json compact_check_json(const RuleCheck& c) {
  return {c.rule, check_kind_name(c.check), c.measured, c.threshold, c.passed};
}

}  // namespace iogate
