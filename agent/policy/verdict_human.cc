#include <algorithm>

#include <fmt/format.h>

#include "base/text_layout.h"
#include "base/units.h"
#include "policy/evaluate.h"

namespace iogate {

std::string render_verdict_human(const Verdict& v) {
  std::string out =
      fmt::format("verdict  {} ({} mode, {} GPU{}{})\n", verdict_outcome_name(v.outcome), policy_mode_name(v.mode),
                  v.gpus, v.gpus == 1 ? "" : "s", v.policy.empty() ? "" : ", policy " + v.policy);
  if (!v.checks.empty()) {
    std::vector<std::vector<std::string>> rows = {{"RULE", "CHECK", "RESULT", "MEASURED", "THRESHOLD"}};
    for (const RuleCheck& c : v.checks)
      rows.push_back(
          {c.rule, std::string(check_kind_name(c.check)), c.passed ? "pass" : "FAIL", c.measured, c.threshold});
    std::vector<size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
    }
    for (const auto& row : rows) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) line += i + 1 < row.size() ? pad_right(row[i], widths[i] + 3) : row[i];
      out += line + "\n";
    }
  }
  for (const RuleCheck& c : v.checks) {
    if (c.demand && !c.limit_why.empty()) {
      for (const std::string& line : wrap_words("limit    ", c.limit_why, kReportColumns, 9)) out += line + "\n";
      break;
    }
  }
  if (!v.rules_not_applicable.empty()) {
    out += "not applicable\n";
    for (const std::string& r : v.rules_not_applicable) {
      for (const std::string& line : wrap_words("  ", r, kReportColumns, 4)) out += line + "\n";
    }
  }
  if (!v.caveats.empty()) {
    out += "caveats\n";
    for (const std::string& c : v.caveats) {
      for (const std::string& line : wrap_words("  - ", c, kReportColumns, 4)) out += line + "\n";
    }
  }
  return out;
}

std::string measurement_figures(const Measurement& m) {
  // A path measured for its checkpoint alone.
  if (m.checkpoint && m.iops == 0 && !m.samples) {
    return fmt::format("{} on {}", checkpoint_figures_text(*m.checkpoint), device_class_name(m.device_class));
  }
  if (m.samples && !m.dataset) {
    return fmt::format("synthetic samples of {}: {} samples/s ({} {} reads/s), p99 {}, {} on {}",
                       format_size_compact(uint64_t(m.sample_bytes)), format_thousands(m.samples_per_s),
                       format_thousands(m.iops), format_size_compact(m.block_size),
                       format_duration_ns(m.p99_latency_ns), format_rate_bytes(m.bandwidth_bytes_per_s),
                       device_class_name(m.device_class));
  }
  if (m.dataset) {
    return fmt::format("dataset: {} samples/s, file p99 {}, {} on {}", format_thousands(m.samples_per_s),
                       format_duration_ns(m.p99_latency_ns), format_rate_bytes(m.bandwidth_bytes_per_s),
                       device_class_name(m.device_class));
  }
  return fmt::format("{} {}: {} IOPS, p99 {}, {} on {}", rw_mode_name(m.rw), format_size_compact(m.block_size),
                     format_thousands(m.iops), format_duration_ns(m.p99_latency_ns),
                     format_rate_bytes(m.bandwidth_bytes_per_s), device_class_name(m.device_class));
}

}  // namespace iogate
