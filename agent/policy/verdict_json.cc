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

nlohmann::json compact_check_json(const RuleCheck& c) {
  return {c.rule, check_kind_name(c.check), c.measured, c.threshold, c.passed};
}

}  // namespace iogate
