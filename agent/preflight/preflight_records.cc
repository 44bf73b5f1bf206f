#include "preflight/preflight_records.h"

#include <cmath>

#include <fmt/format.h>

#include "base/exit_codes.h"
#include "base/text_layout.h"
#include "base/units.h"
#include "base/version.h"
#include "measure/measurement_json.h"
#include "report/dataset_report.h"
#include "report/report_json.h"

namespace iogate {

std::string_view result_source_name(ResultSource s) {
  switch (s) {
    case ResultSource::kProbe: return "probe";
    case ResultSource::kShared: return "shared";
    case ResultSource::kJob: return "job";
    case ResultSource::kJobShared: return "job-shared";
  }
  return "probe";
}

std::string_view pod_verdict_name(PodVerdict o) {
  switch (o) {
    case PodVerdict::kPass: return "pass";
    case PodVerdict::kFail: return "fail";
    case PodVerdict::kWarn: return "warn";
    case PodVerdict::kOff: return "off";
    case PodVerdict::kError: return "error";
  }
  return "error";
}

namespace {

std::string how_measured(const PathResult& r) {
  if (r.source == ResultSource::kShared) return "shared result of " + r.shared_from;
  if (r.job) {
    const JobAggregate& a = r.job->aggregate;
    return fmt::format("{} {} pods of {} together for {:.1f} s, {} reported; for the job's {} GPUs",
                       r.source == ResultSource::kJobShared ? "the job's result: measured by" : "measured by",
                       a.members, r.job->job, r.measurement.measured_s, a.reported, a.demand_gpus);
  }
  const Measurement& m = r.measurement;
  std::string s = fmt::format("probed {:.1f} s", m.measured_s);
  if (m.ci_half_width_relative) s += fmt::format(", ±{:.1f}%", *m.ci_half_width_relative * 100);
  if (m.stop_reason != StopReason::kNone && m.stop_reason != StopReason::kRuntime) {
    s += ", stopped " + std::string(stop_reason_name(m.stop_reason));
  }
  return s;
}

std::string workload_key_of(const Measurement& m) {
  return fmt::format("{}/{}", rw_mode_name(m.rw), format_size_compact(m.block_size));
}

nlohmann::json compact_path(const PathResult& r, bool with_checks) {
  const Measurement& m = r.measurement;
  nlohmann::json checks = nlohmann::json::array();
  if (with_checks) {
    for (const RuleCheck& c : r.verdict.checks) {
      checks.push_back(compact_check_json(c));
    }
  }
  return {{"path", r.path},
          {"outcome", std::string(verdict_outcome_name(r.verdict.outcome))},
          {"source", result_source_name(r.source)},
          {"pvc", r.pvc},
          {"class", std::string(device_class_name(m.device_class))},
          {"workload", workload_key_of(m)},
          {"iops", std::llround(m.iops)},
          {"p99_latency_us", std::llround(m.p99_latency_ns / 1000)},
          {"bandwidth_bytes_per_s", std::llround(m.bandwidth_bytes_per_s)},
          {"job_members", r.job ? r.job->aggregate.members : 0},
          {"checks", checks}};
}

}  // namespace

bool fails_open(const Policy& p) { return p.on_error == OnError::kFailOpen || p.mode != PolicyMode::kEnforce; }

std::string on_error_text(const Policy& p) {
  if (p.on_error == OnError::kFailOpen) return "on_error fail-open: letting the pod start";
  if (p.mode != PolicyMode::kEnforce) {
    return fmt::format("{} (on_error fail-closed); mode {}: letting the pod start", kWouldBlock,
                       policy_mode_name(p.mode));
  }
  return "on_error fail-closed: the pod does not start";
}

std::optional<std::string> would_block_text(const PreflightSummary& s) {
  if (!s.policy || s.policy->mode != PolicyMode::kWarn) return std::nullopt;
  if (s.outcome == PodVerdict::kError) {
    if (s.policy->on_error == OnError::kFailOpen) return std::nullopt;
    return fmt::format("preflight would exit {} (on_error fail-closed): {}", exit_code_for(ModeStatus::kFailed),
                       s.error);
  }
  const PathResult* r = deciding_result(s);
  const RuleCheck* c = r ? r->verdict.first_failure() : nullptr;
  if (s.outcome != PodVerdict::kWarn || !c) return std::nullopt;
  return fmt::format("preflight would exit {}: {} {}", exit_code_for(ModeStatus::kBelowPolicy), r->path,
                     rule_check_text(*c));
}

const PathResult* deciding_result(const PreflightSummary& s) {
  const PathResult* pick = nullptr;
  for (const PathResult& r : s.results) {
    bool failed = r.verdict.first_failure() != nullptr;
    bool pick_failed = pick && pick->verdict.first_failure() != nullptr;
    if (!pick || (failed && !pick_failed) || (failed == pick_failed && r.measurement.iops < pick->measurement.iops)) {
      pick = &r;
    }
  }
  return pick;
}

MetadataChanges pod_annotations(const PreflightSummary& s) {
  MetadataChanges a;
  a[kVerdictAnnotation] = pod_verdict_name(s.outcome);
  const PathResult* r = deciding_result(s);
  if (r) {
    const Measurement& m = r->measurement;
    // randread-iops means what it says: other workloads' IOPS must not pose as a randread figure.
    if (m.rw == RwMode::kRandRead && !m.samples) {
      a["iogate.io/randread-iops"] = fmt::format("{}", std::llround(m.iops));
    } else {
      a["iogate.io/randread-iops"] = std::nullopt;
    }
    a["iogate.io/p99-latency-us"] = fmt::format("{}", std::llround(m.p99_latency_ns / 1000));
    // The demand's figures in the job's units, from the deciding path's first demand check.
    const RuleCheck* demand = nullptr;
    for (const RuleCheck& c : r->verdict.checks) {
      if (c.demand && (!demand || (!c.passed && demand->passed))) demand = &c;
    }
    if (demand) {
      a["iogate.io/predicted-au"] = fmt::format("{:.2f}", demand->demand->predicted_au);
      a["iogate.io/accelerators-sustained"] = std::to_string(demand->demand->accelerators_sustained);
      // What the demand was judged on: records/s for a shard demand, not the shards a second read.
      a["iogate.io/samples-per-s"] = fmt::format("{}", std::llround(demand->demand->samples_per_s_delivered));
    } else {
      a["iogate.io/predicted-au"] = std::nullopt;
      a["iogate.io/accelerators-sustained"] = std::nullopt;
      a["iogate.io/samples-per-s"] =
          m.samples ? std::optional<std::string>(fmt::format("{}", std::llround(m.samples_per_s))) : std::nullopt;
    }
    a["iogate.io/device-class"] = std::string(device_class_name(m.device_class));
    a[kJobMeasurementAnnotation] = r->job ? std::optional<std::string>(job_annotation(*r->job)) : std::nullopt;
  }
  a[kWouldBlockAnnotation] = would_block_text(s);
  a["iogate.io/report"] = compact_report(s);
  return a;
}

std::string compact_report(const PreflightSummary& s) {
  auto build = [&](bool caveats, bool passing_checks) {
    nlohmann::json paths = nlohmann::json::array();
    nlohmann::json all_caveats = nlohmann::json::array();
    for (const PathResult& r : s.results) {
      bool failed = r.verdict.first_failure() != nullptr;
      paths.push_back(compact_path(r, passing_checks || failed));
      if (caveats) {
        for (const std::string& c : r.verdict.caveats) all_caveats.push_back(c);
      }
    }
    nlohmann::json j = {{"v", 1},
                        {"outcome", pod_verdict_name(s.outcome)},
                        {"time", s.time},
                        {"policy", s.policy ? s.policy->source : ""},
                        {"mode", s.policy ? std::string(policy_mode_name(s.policy->mode)) : ""},
                        {"gpus", s.gpus},
                        {"node", s.node_name},
                        {"paths", paths},
                        {"caveats", all_caveats}};
    if (!s.error.empty()) j["error"] = s.error;
    return j;
  };
  std::string text = build(true, true).dump();
  if (text.size() <= kReportAnnotationMaxBytes) return text;
  nlohmann::json j = build(false, true);
  if (j.dump().size() > kReportAnnotationMaxBytes) j = build(false, false);
  j["truncated"] = true;
  text = j.dump();
  if (text.size() > kReportAnnotationMaxBytes) {  // very many paths: keep the head of the list
    auto& paths = j["paths"];
    while (paths.size() > 1 && j.dump().size() > kReportAnnotationMaxBytes) paths.erase(paths.size() - 1);
    text = j.dump();
  }
  return text;
}

EventText pod_event_text(const PreflightSummary& s) {
  const PathResult* r = deciding_result(s);
  std::string policy = s.policy ? s.policy->source : "";
  // The check is said once, before this: "; would block in enforce mode (exit 1); mode warn: the pod starts".
  const std::string warn_note = !would_block_text(s) ? ""
                                : s.outcome == PodVerdict::kError
                                    ? fmt::format("; {} (exit {}, on_error fail-closed); mode warn: the pod starts",
                                                  kWouldBlock, exit_code_for(ModeStatus::kFailed))
                                    : fmt::format("; {} (exit {}); mode warn: the pod starts", kWouldBlock,
                                                  exit_code_for(ModeStatus::kBelowPolicy));
  if (s.outcome == PodVerdict::kError || !r) {
    return {"Warning", "StoragePreflightFailed",
            fmt::format("storage preflight could not judge the volume ({}): {}{}", policy, s.error, warn_note)};
  }
  std::string where = fmt::format("{} ({})", r->path, how_measured(*r));
  const int judged_gpus = r->job ? r->job->aggregate.demand_gpus : s.gpus;
  std::string gpus = fmt::format("{} GPU{}{}", judged_gpus, judged_gpus == 1 ? "" : "s", r->job ? " of the job" : "");
  if (const RuleCheck* c = r->verdict.first_failure()) {
    return {"Warning", "StorageBelowPolicy",
            fmt::format("{} {} below policy {} for {}: {}{}", where, measurement_figures(r->measurement), policy, gpus,
                        rule_check_text(*c), warn_note)};
  }
  std::string rules;
  for (const RuleCheck& c : r->verdict.checks) {
    if (rules.find(c.rule) == std::string::npos) rules += (rules.empty() ? "" : ", ") + c.rule;
  }
  return {"Normal", "StoragePolicyMet",
          fmt::format("{} {} meets policy {} for {}{}", where, measurement_figures(r->measurement), policy, gpus,
                      rules.empty() ? "" : " (rules " + rules + ")")};
}

nlohmann::json preflight_report_json(const PreflightSummary& s) {
  nlohmann::json results = nlohmann::json::array();
  for (const PathResult& r : s.results) {
    results.push_back({{"path", r.path},
                       {"source", result_source_name(r.source)},
                       {"pvc", r.pvc},
                       {"shared_from", r.shared_from},
                       {"job", job_result_json(r.job)},
                       {"measurement", measurement_to_json(r.measurement)},
                       {"verdict", verdict_to_json(r.verdict)},
                       {"report", r.probe     ? probe_result_to_json(*r.probe)
                                  : r.dataset ? dataset_probe_to_json(*r.dataset)
                                              : nlohmann::json::object()}});
  }
  nlohmann::json policy = nlohmann::json::object();
  if (s.policy) {
    policy = {{"source", s.policy->source},
              {"name", s.policy->name},
              {"mode", std::string(policy_mode_name(s.policy->mode))},
              {"on_error", std::string(on_error_name(s.policy->on_error))},
              {"deadline_ns", s.policy->deadline.count()},
              {"result_ttl_ns", s.policy->result_ttl.count()}};
  }
  return {{"schema", kPreflightSchema},
          {"iogate_version", kVersion},
          {"time", s.time},
          {"mode", "preflight"},
          {"outcome", pod_verdict_name(s.outcome)},
          {"exit_code", exit_code_for(s.status)},
          {"error", s.error},
          {"would_block", would_block_text(s).value_or("")},
          {"policy", policy},
          {"pod", {{"namespace", s.pod_namespace}, {"name", s.pod_name}, {"node", s.node_name}}},
          {"gpus", s.gpus},
          {"gpus_from", s.gpus_from},
          {"api", s.api},
          {"results", results}};
}

std::string render_preflight_human(const PreflightSummary& s) {
  std::string out;
  std::string pod = s.pod_name.empty() ? "(no pod)" : s.pod_namespace + "/" + s.pod_name;
  out += fmt::format("iogate preflight  policy {}  pod {}  node {}  {} GPU{} ({})\n", s.policy ? s.policy->source : "-",
                     pod, s.node_name.empty() ? "-" : s.node_name, s.gpus, s.gpus == 1 ? "" : "s", s.gpus_from);
  for (const PathResult& r : s.results) {
    out += fmt::format("\n{}  {}\n  {}\n", r.path, measurement_figures(r.measurement), how_measured(r));
    if (!r.pvc.empty()) out += fmt::format("  pvc {}\n", r.pvc);
    if (r.job) out += indent_lines(render_job_result(*r.job), "  ");
    out += indent_lines(render_verdict_human(r.verdict), "  ");
  }
  out += fmt::format("\nverdict  {}", pod_verdict_name(s.outcome));
  if (!s.error.empty()) out += "  (" + s.error + ")";
  out += fmt::format("  exit {}\n", exit_code_for(s.status));
  if (auto would_block = would_block_text(s)) out += fmt::format("         {}: {}\n", kWouldBlock, *would_block);
  out += fmt::format("api      {}\n", s.api);
  return out;
}

}  // namespace iogate
