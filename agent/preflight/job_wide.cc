#include "preflight/job_wide.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {

JobWideResult job_result_of(const JobBarrier& done, const std::string& job, const std::string& recognised_by,
                            int index) {
  JobWideResult j;
  j.job = job;
  j.recognised_by = recognised_by;
  j.expected = done.expected;
  j.index = index;
  j.window = done.window;
  j.members = done.members;
  j.aggregate = aggregate_job(done);
  return j;
}

Measurement job_measurement(const Measurement& own, const JobAggregate& a, std::chrono::milliseconds window) {
  Measurement m = own;
  m.iops = a.sum.iops;
  m.samples_per_s = a.sum.samples_per_s;
  m.bandwidth_bytes_per_s = a.sum.bytes_per_s;
  m.p99_latency_ns = a.sum.p99_latency_ns;
  m.measured_s = std::chrono::duration<double>(window).count();
  // One member's interval says nothing of the sum's.
  m.ci_half_width_relative.reset();
  m.ci_confidence.reset();
  return m;
}

nlohmann::json job_result_json(const std::optional<JobWideResult>& j) {
  if (!j) return nlohmann::json::object();
  nlohmann::json members = nlohmann::json::array();
  for (const BarrierMember& m : j->members) {
    members.push_back({{"pod", m.pod},
                       {"node", m.node},
                       {"gpus", m.gpus},
                       {"reported", m.reported && m.error.empty()},
                       {"samples_per_s", m.figures.samples_per_s},
                       {"bandwidth_bytes_per_s", m.figures.bytes_per_s},
                       {"iops", m.figures.iops},
                       {"p99_latency_ns", m.figures.p99_latency_ns},
                       {"error", m.error}});
  }
  const JobAggregate& a = j->aggregate;
  return {{"name", j->job},
          {"recognised_by", j->recognised_by},
          {"expected_pods", j->expected},
          {"member_index", j->index},
          {"window_ns", std::chrono::nanoseconds(j->window).count()},
          {"members", members},
          {"members_reported", a.reported},
          {"members_failed", a.failed},
          {"members_missing", a.missing},
          {"samples_per_s", a.sum.samples_per_s},
          {"bandwidth_bytes_per_s", a.sum.bytes_per_s},
          {"iops", a.sum.iops},
          {"demand_gpus", a.demand_gpus},
          {"demand_gpus_from", a.demand_from}};
}

std::string job_annotation(const JobWideResult& j) {
  const JobAggregate& a = j.aggregate;
  nlohmann::json per = nlohmann::json::array();
  for (const BarrierMember& m : j.members) {
    per.push_back({{"pod", m.pod},
                   {"samples_per_s", std::llround(m.figures.samples_per_s)},
                   {"bandwidth_bytes_per_s", std::llround(m.figures.bytes_per_s)},
                   {"reported", m.reported && m.error.empty()}});
  }
  return nlohmann::json{{"job", j.job},
                        {"members", a.members},
                        {"reported", a.reported},
                        {"expected", j.expected},
                        {"samples_per_s", std::llround(a.sum.samples_per_s)},
                        {"bandwidth_bytes_per_s", std::llround(a.sum.bytes_per_s)},
                        {"demand_gpus", a.demand_gpus},
                        {"per_member", per}}
      .dump();
}

std::string render_job_result(const JobWideResult& j) {
  const JobAggregate& a = j.aggregate;
  std::string out = fmt::format("job {} ({}): {} pod{} measured it together for {}, {} reported{}{}\n", j.job,
                                j.recognised_by, a.members, a.members == 1 ? "" : "s",
                                format_duration_compact(std::chrono::nanoseconds(j.window).count()), a.reported,
                                a.failed ? fmt::format(", {} failed", a.failed) : "",
                                a.missing ? fmt::format(", {} of {} never arrived", a.missing, j.expected) : "");
  for (size_t i = 0; i < j.members.size(); ++i) {
    const BarrierMember& m = j.members[i];
    std::string figures = !m.reported        ? "no report (gone before the end of the window)"
                          : !m.error.empty() ? "failed: " + m.error
                                             : fmt::format("{:.0f} samples/s, {}", m.figures.samples_per_s,
                                                           format_bandwidth_decimal(m.figures.bytes_per_s));
    out += fmt::format("  {}{} on {}, {} GPU{}: {}\n", m.pod, int(i) == j.index ? " (this pod)" : "", m.node, m.gpus,
                       m.gpus == 1 ? "" : "s", figures);
  }
  out += fmt::format("  together: {:.0f} samples/s, {}; judged for the job's {} GPUs ({})\n", a.sum.samples_per_s,
                     format_bandwidth_decimal(a.sum.bytes_per_s), a.demand_gpus, a.demand_from);
  return out;
}

}  // namespace iogate
