#include "node/node_records.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/text_layout.h"
#include "base/units.h"
#include "base/version.h"
#include "measure/measurement_json.h"
#include "measure/policy_probe.h"
#include "policy/demand_label.h"
#include "policy/policy_render.h"

namespace iogate {

std::string_view path_state_name(PathState s) {
  switch (s) {
    case PathState::kPending: return "pending";
    case PathState::kMeasured: return "measured";
    case PathState::kBusy: return "busy";
    case PathState::kError: return "error";
    case PathState::kStopped: return "stopped";
  }
  return "pending";
}

std::string_view node_outcome_name(const NodeJudgement& j) {
  return j.outcome ? verdict_outcome_name(*j.outcome) : "none";
}
namespace {

bool passes(const Verdict& v) { return v.first_failure() == nullptr; }

std::string label_key(const std::string& family, const std::string& name) {
  return std::string(kNodeLabelPrefix) + family + (name.empty() ? "" : "." + name);
}

// The label families this agent owns; any other iogate.io/ key is someone else's (a webhook, a user).
bool owned_label(const std::string& key) {
  const std::string prefix = kNodeLabelPrefix;
  if (key.rfind(prefix, 0) != 0) return false;
  std::string rest = key.substr(prefix.size());
  for (const char* family : {"disk-class", "randread-iops"}) {
    std::string f = family;
    if (rest == f || rest.rfind(f + ".", 0) == 0) return true;
  }
  return rest == "tier" || rest == "mixed-media" || !accelerators_label_rule(key).empty();
}

bool is_mixed(const Measurement& m) { return m.device_class == DeviceClass::kMixed || m.leaf_classes.size() > 1; }

std::string gpus_text(int gpus) { return fmt::format("{} GPU{}", gpus, gpus == 1 ? "" : "s"); }

// The leaf the volume's pace is set by: slowest_leaf by name, else the first leaf.
const StackNode* pace_leaf(const std::vector<StackNode>& nodes, const std::string& name) {
  for (const StackNode& n : nodes) {
    if (!name.empty() && n.name == name) return &n;
    if (const StackNode* c = pace_leaf(n.children, name)) return c;
  }
  if (name.empty()) {
    for (const StackNode& n : nodes) {
      if (n.children.empty()) return &n;
      if (const StackNode* c = pace_leaf(n.children, "")) return c;
    }
  }
  return nullptr;
}

// What detect said about a path, flattened for the report and the info metric.
struct StorageSummary {
  std::string device_class, reason, mount_point, fs_type, source, device, model, transport, scheduler;
};

std::optional<StorageSummary> storage_summary(const PathOutcome& o) {
  if (!o.stack) return std::nullopt;
  const StorageStack& s = *o.stack;
  const StackNode* leaf = pace_leaf(s.stack, s.slowest_leaf);
  return StorageSummary{std::string(device_class_name(s.device_class)),
                        s.reason,
                        s.mount.mount_point,
                        s.mount.fs_type,
                        s.mount.source,
                        leaf ? leaf->name : s.slowest_leaf,
                        leaf ? leaf->model : "",
                        leaf ? leaf->transport : "",
                        leaf ? leaf->scheduler : ""};
}

nlohmann::json storage_json(const PathOutcome& o) {
  auto s = storage_summary(o);
  if (!s) return nlohmann::json::object();
  return {{"device_class", s->device_class},
          {"reason", s->reason},
          {"mount_point", s->mount_point},
          {"fs_type", s->fs_type},
          {"source", s->source},
          {"device", s->device},
          {"model", s->model},
          {"transport", s->transport},
          {"scheduler", s->scheduler}};
}

std::string time_or_empty(std::chrono::system_clock::time_point t) {
  return t == std::chrono::system_clock::time_point{} ? "" : rfc3339_seconds(t);
}

const PathJudgement* judgement_for(const NodeJudgement& j, size_t outcome_index) {
  for (const PathJudgement& p : j.paths) {
    if (p.index == outcome_index) return &p;
  }
  return nullptr;
}

nlohmann::json compact_checks(const Verdict& v) {
  nlohmann::json checks = nlohmann::json::array();
  for (const RuleCheck& c : v.checks) checks.push_back(compact_check_json(c));
  return checks;
}

// The GPUs a path's verdict is judged for: the node's, but one accelerator under a samples-mode
// policy (node_records.h says why).
int judged_gpus(const Policy& p, int node_gpus) { return p.workload_mode == WorkloadMode::kIo ? node_gpus : 1; }

std::vector<RuleSustained> rules_sustained(const Policy& p, const std::vector<PathOutcome>& outcomes) {
  std::vector<RuleSustained> out;
  for (const Rule& r : p.rules) {
    if (!r.demand) continue;
    RuleSustained rs{r.name, *r.demand};
    for (size_t i = 0; i < outcomes.size(); ++i) {
      const std::optional<Measurement>& m = outcomes[i].measurement;
      if (!m || !m->samples || !rule_covers_node_path(r, outcomes[i].config.path, m->device_class)) continue;
      const double delivered = demand_delivered_samples_per_s(rs.demand, *m);
      if (rs.path && delivered <= rs.samples_per_s) continue;
      rs.path = i;
      rs.samples_per_s = delivered;
      rs.sample_bytes = rs.demand.shard_bytes && m->dataset ? double(*rs.demand.sample_bytes) : m->sample_bytes;
      rs.accelerators = accelerators_sustained(rs.demand, delivered);
    }
    out.push_back(std::move(rs));
  }
  return out;
}

std::string sustained_text(const RuleSustained& rs, const std::vector<PathOutcome>& outcomes) {
  if (!rs.path) return fmt::format("rule {}: not measured yet", rs.rule);
  return fmt::format("rule {}: sustains {} accelerator{} ({} samples/s of {} on {}; {} at AU >= {:.2f})", rs.rule,
                     rs.accelerators, rs.accelerators == 1 ? "" : "s", format_thousands(rs.samples_per_s),
                     format_size_compact(uint64_t(std::llround(rs.sample_bytes))), outcomes[*rs.path].config.path,
                     demand_summary(rs.demand), rs.demand.min_au);
}

nlohmann::json sustained_json(const RuleSustained& rs, const std::vector<PathOutcome>& outcomes) {
  nlohmann::json e = {{"rule", rs.rule},
                      {"workload", rs.demand.workload},
                      {"accelerator", rs.demand.accelerator},
                      {"samples_per_s_per_accelerator", rs.demand.samples_per_s},
                      {"min_au", rs.demand.min_au},
                      {"path", rs.path ? outcomes[*rs.path].config.path : ""}};
  if (rs.path) {
    e["samples_per_s"] = std::llround(rs.samples_per_s);
    e["sample_bytes"] = std::llround(rs.sample_bytes);
    e["accelerators_sustained"] = rs.accelerators;
  } else {
    e["samples_per_s"] = nullptr;
    e["sample_bytes"] = nullptr;
    e["accelerators_sustained"] = nullptr;
  }
  return e;
}

nlohmann::json sustained_json_array(const NodeJudgement& j, const std::vector<PathOutcome>& outcomes) {
  nlohmann::json demands = nlohmann::json::array();
  for (const RuleSustained& rs : j.sustained) demands.push_back(sustained_json(rs, outcomes));
  return demands;
}

// Whom the verdict is for: "4 GPUs", or under a samples-mode policy "1 accelerator (the node has
// 8 GPUs; each rule's sustained count below)".
std::string judged_for_text(const NodeJudgement& j, const PathJudgement& best) {
  if (best.verdict.gpus == j.gpus || j.sustained.empty()) return gpus_text(best.verdict.gpus);
  return fmt::format("1 accelerator (the node has {}; how many it feeds: each rule's accelerators sustained)",
                     gpus_text(j.gpus));
}

std::string sustained_summary(const NodeJudgement& j, const std::vector<PathOutcome>& outcomes) {
  std::string out;
  for (const RuleSustained& rs : j.sustained) out += "; " + sustained_text(rs, outcomes);
  return out;
}

// The policy a node is judged by: without its checkpoint checks. A checkpoint is the training
// pod's save to its own volume, judged by its preflight; the agent does not write checkpoints to a
// node's data paths every interval. A rule left with no check is left out, and named.
Policy without_checkpoints(const Policy& p, std::vector<std::string>& left_out) {
  Policy out = p;
  out.rules.clear();
  for (Rule r : p.rules) {
    if (r.checkpoint) {
      r.checkpoint.reset();
      if (rule_thresholds(r, std::nullopt).empty()) {
        left_out.push_back(r.name +
                           ": a checkpoint rule, judged by preflight on the pod's volume, not by the node agent");
        continue;
      }
    }
    out.rules.push_back(std::move(r));
  }
  return out;
}

}  // namespace

const Measurement* randread_headline(const PathOutcome& o) {
  if (o.randread) return &*o.randread;
  if (o.measurement && o.measurement->rw == RwMode::kRandRead && !o.measurement->samples) return &*o.measurement;
  return nullptr;
}

NodeJudgement judge_node(const Policy& policy, const std::vector<PathOutcome>& outcomes, int gpus,
                         std::string gpus_from) {
  std::vector<std::string> left_out;
  const Policy p = without_checkpoints(policy, left_out);
  NodeJudgement j;
  j.gpus = gpus;
  j.gpus_from = std::move(gpus_from);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const PathOutcome& o = outcomes[i];
    if (!o.measurement) continue;
    PathJudgement pj;
    pj.index = i;
    const int judged = judged_gpus(p, gpus);
    EvaluationContext ctx{judged, o.config.path, {}};
    pj.verdict = evaluate_policy(p, *o.measurement, ctx);
    pj.verdict.rules_not_applicable.insert(pj.verdict.rules_not_applicable.end(), left_out.begin(), left_out.end());
    pj.tier = node_tier(p.node, pj.verdict, *o.measurement, judged);
    pj.min_iops = iops_floor(p, ctx, o.measurement->device_class).value_or(0);
    pj.fast_min_iops = fast_iops_threshold(p.node, pj.min_iops, judged);
    j.paths.push_back(std::move(pj));
  }
  for (size_t k = 0; k < j.paths.size(); ++k) {
    if (!j.best) {
      j.best = k;
      continue;
    }
    const PathJudgement& a = j.paths[k];
    const PathJudgement& b = j.paths[*j.best];
    bool a_pass = passes(a.verdict), b_pass = passes(b.verdict);
    double a_iops = outcomes[a.index].measurement->iops, b_iops = outcomes[b.index].measurement->iops;
    if (a_pass != b_pass ? a_pass : a_iops > b_iops) j.best = k;
  }
  if (j.best) j.outcome = j.paths[*j.best].verdict.outcome;
  j.sustained = rules_sustained(p, outcomes);
  return j;
}

MetadataChanges node_labels(const NodeJudgement& j, const std::vector<PathOutcome>& outcomes,
                            const nlohmann::json& current) {
  MetadataChanges labels;
  if (!j.best) return labels;  // nothing measured yet: leave what a previous run wrote
  const PathJudgement& best = j.paths[*j.best];
  const Measurement& bm = *outcomes[best.index].measurement;
  labels[label_key("disk-class", "")] = std::string(device_class_name(bm.device_class));
  labels[label_key("tier", "")] = std::string(node_tier_name(best.tier));
  // The label means 4 KiB random-read IOPS: samples/s (a dataset run's, or synthetic sample
  // reads') are not that; a samples-mode path has its headline probe for it.
  if (const Measurement* h = randread_headline(outcomes[best.index]))
    labels[label_key("randread-iops", "")] = std::to_string(std::llround(h->iops));
  bool mixed = false;
  for (const PathJudgement& pj : j.paths) {
    const PathOutcome& o = outcomes[pj.index];
    mixed |= is_mixed(*o.measurement);
    if (o.config.name.empty()) continue;
    labels[label_key("disk-class", o.config.name)] = std::string(device_class_name(o.measurement->device_class));
    if (const Measurement* h = randread_headline(o))
      labels[label_key("randread-iops", o.config.name)] = std::to_string(std::llround(h->iops));
  }
  if (mixed) labels[label_key("mixed-media", "")] = "true";
  for (const RuleSustained& rs : j.sustained) {
    if (rs.path) labels[accelerators_label(rs.rule)] = std::to_string(rs.accelerators);
  }
  if (current.is_object()) {
    for (const auto& [key, value] : current.items()) {
      if (owned_label(key) && !labels.count(key)) labels[key] = std::nullopt;
    }
  }
  return labels;
}

MetadataChanges node_annotations(const NodeJudgement& j, const Policy& p, const std::vector<PathOutcome>& outcomes) {
  MetadataChanges a;
  if (!j.best) return a;
  std::chrono::system_clock::time_point latest{};
  for (const PathOutcome& o : outcomes) latest = std::max(latest, o.measured_at);
  auto build = [&](bool with_checks) {
    nlohmann::json paths = nlohmann::json::array();
    for (size_t i = 0; i < outcomes.size(); ++i) {
      const PathOutcome& o = outcomes[i];
      nlohmann::json e = {{"path", o.config.path}, {"name", o.config.name}, {"state", path_state_name(o.state)}};
      if (const PathJudgement* pj = judgement_for(j, i)) {
        const Measurement& m = *o.measurement;
        e["class"] = std::string(device_class_name(m.device_class));
        e["workload"] = workload_key(p.workload);
        e["iops"] = std::llround(m.iops);
        e["p99_latency_us"] = std::llround(m.p99_latency_ns / 1000);
        e["bandwidth_bytes_per_s"] = std::llround(m.bandwidth_bytes_per_s);
        if (m.samples) {
          e["samples_per_s"] = std::llround(m.samples_per_s);
          e["sample_bytes"] = std::llround(m.sample_bytes);
        }
        if (o.randread) e["randread_iops"] = std::llround(o.randread->iops);
        e["outcome"] = std::string(verdict_outcome_name(pj->verdict.outcome));
        e["tier"] = std::string(node_tier_name(pj->tier));
        e["measured_at"] = time_or_empty(o.measured_at);
        if (with_checks || !passes(pj->verdict)) e["checks"] = compact_checks(pj->verdict);
      }
      if (!o.detail.empty()) e["detail"] = o.detail.substr(0, 300);
      paths.push_back(std::move(e));
    }
    return nlohmann::json{{"v", 1},
                          {"outcome", node_outcome_name(j)},
                          {"policy", p.source},
                          {"mode", std::string(policy_mode_name(p.mode))},
                          {"gpus", j.gpus},
                          {"best", outcomes[j.paths[*j.best].index].config.path},
                          {"paths", paths}};
  };
  std::string text = build(true).dump();
  if (text.size() > kNodeReportAnnotationMaxBytes) {
    nlohmann::json small = build(false);
    small["truncated"] = true;
    while (small["paths"].size() > 1 && small.dump().size() > kNodeReportAnnotationMaxBytes) {
      small["paths"].erase(small["paths"].size() - 1);
    }
    text = small.dump();
  }
  a["iogate.io/report"] = text;
  a["iogate.io/last-probe"] = rfc3339_seconds(latest);
  a[kWouldBlockAnnotation] = would_taint_text(j, p);
  if (j.sustained.empty()) {
    a[kDemandAnnotation] = std::nullopt;
  } else {
    a[kDemandAnnotation] = sustained_json_array(j, outcomes).dump();
  }
  return a;
}

std::optional<std::string> would_taint_text(const NodeJudgement& j, const Policy& p) {
  if (p.mode != PolicyMode::kWarn || p.node.taint_effect.empty() || j.outcome != VerdictOutcome::kWarn || !j.best)
    return std::nullopt;
  const RuleCheck* c = j.paths[*j.best].verdict.first_failure();
  return fmt::format("taint {}=true:{}{}", kBelowPolicyTaintKey, p.node.taint_effect,
                     c ? ": " + rule_check_text(*c) : "");
}

std::optional<Taint> wanted_taint(const NodeJudgement& j, const Policy& p, const std::string& effect) {
  if (effect.empty() || p.mode != PolicyMode::kEnforce || j.outcome != VerdictOutcome::kFail) return std::nullopt;
  return Taint{kBelowPolicyTaintKey, "true", effect};
}

std::optional<NodeCondition> node_condition(const NodeJudgement& j, const Policy& p,
                                            const std::vector<PathOutcome>& outcomes) {
  if (!j.best || p.mode == PolicyMode::kOff) return std::nullopt;
  const PathJudgement& best = j.paths[*j.best];
  const PathOutcome& o = outcomes[best.index];
  std::string figures = fmt::format("{} {}", o.config.path, measurement_figures(*o.measurement));
  if (j.below_policy()) {
    const RuleCheck* c = best.verdict.first_failure();
    return NodeCondition{
        kBelowPolicyCondition, "True", "StorageBelowPolicy",
        fmt::format("no data path meets policy {} for {}; best: {}; {}{}{}", p.source, judged_for_text(j, best),
                    figures, c ? rule_check_text(*c) : "", sustained_summary(j, outcomes),
                    p.mode != PolicyMode::kWarn ? ""
                    : p.node.taint_effect.empty()
                        ? " (mode warn; taint_effect none: not tainted in enforce mode either)"
                        : fmt::format("; {}: taint {}=true:{} (mode warn: not tainted)", kWouldBlock,
                                      kBelowPolicyTaintKey, p.node.taint_effect))};
  }
  return NodeCondition{kBelowPolicyCondition, "False", "StorageMeetsPolicy",
                       fmt::format("{} meets policy {} for {} (tier {}){}", figures, p.source, judged_for_text(j, best),
                                   node_tier_name(best.tier), sustained_summary(j, outcomes))};
}

EventText node_event_text(const NodeJudgement& j, const Policy& p, const std::vector<PathOutcome>& outcomes) {
  auto condition = node_condition(j, p, outcomes);
  std::string message = condition ? condition->message : "no measurement";
  if (j.below_policy()) return {"Warning", "StorageBelowPolicy", message};
  return {"Normal", "StoragePolicyMet", message};
}

nlohmann::json node_report_json(const std::string& node, const Policy& p, const NodeJudgement& j,
                                const std::vector<PathOutcome>& outcomes, const ApiSyncState& api) {
  nlohmann::json paths = nlohmann::json::array();
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const PathOutcome& o = outcomes[i];
    const PathJudgement* pj = judgement_for(j, i);
    nlohmann::json e = {
        {"path", o.config.path},
        {"name", o.config.name},
        {"state", path_state_name(o.state)},
        {"detail", o.detail},
        {"attempted_at", time_or_empty(o.attempted_at)},
        {"measured_at", time_or_empty(o.measured_at)},
        {"probes", o.probes},
        {"errors", o.errors},
        {"busy_skips", o.busy_skips},
        {"io_priority", o.io_priority},
        {"probe_wall_ns", std::llround(o.probe_wall_s * 1e9)},
        {"storage", storage_json(o)},
        {"measurement", o.measurement ? measurement_to_json(*o.measurement) : nlohmann::json(nullptr)},
        {"randread_headline", o.randread ? measurement_to_json(*o.randread) : nlohmann::json(nullptr)},
        {"latency_ns", o.measurement ? nlohmann::json{{"p50", std::llround(o.p50_ns)},
                                                      {"p90", std::llround(o.p90_ns)},
                                                      {"p99", std::llround(o.measurement->p99_latency_ns)},
                                                      {"p99.9", std::llround(o.p999_ns)}}
                                     : nlohmann::json(nullptr)},
        {"verdict", pj ? verdict_to_json(pj->verdict) : nlohmann::json(nullptr)},
        {"tier", pj ? std::string(node_tier_name(pj->tier)) : ""},
        {"min_iops", pj ? pj->min_iops : 0.0},
        {"fast_min_iops", pj ? pj->fast_min_iops : 0.0}};
    paths.push_back(std::move(e));
  }
  auto condition = node_condition(j, p, outcomes);
  return {{"schema", kNodeSchema},
          {"iogate_version", kVersion},
          {"time", rfc3339_utc_now()},
          {"mode", "node"},
          {"node", node},
          {"gpus", j.gpus},
          {"gpus_from", j.gpus_from},
          {"policy", {{"source", p.source}, {"name", p.name}, {"mode", std::string(policy_mode_name(p.mode))}}},
          {"settings", node_settings_json(p.node)},
          {"outcome", node_outcome_name(j)},
          {"below_policy", j.below_policy()},
          {"best_path", j.best ? outcomes[j.paths[*j.best].index].config.path : ""},
          {"tier", j.best ? std::string(node_tier_name(j.paths[*j.best].tier)) : ""},
          {"condition", condition ? nlohmann::json{{"type", condition->type},
                                                   {"status", condition->status},
                                                   {"reason", condition->reason},
                                                   {"message", condition->message}}
                                  : nlohmann::json(nullptr)},
          {"paths", paths},
          {"demands", sustained_json_array(j, outcomes)},
          {"api",
           {{"state", api.state},
            {"last_error", api.last_error},
            {"last_sync", api.last_sync ? rfc3339_seconds(*api.last_sync) : ""},
            {"sync_errors", api.sync_errors}}}};
}

std::string render_node_human(const std::string& node, const Policy& p, const NodeJudgement& j,
                              const std::vector<PathOutcome>& outcomes, const ApiSyncState& api) {
  std::string out = fmt::format("iogate node  {}  policy {} ({})  {} ({})\n", node.empty() ? "-" : node, p.source,
                                policy_mode_name(p.mode), gpus_text(j.gpus), j.gpus_from);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const PathOutcome& o = outcomes[i];
    std::string name = o.config.name.empty() ? "" : " (" + o.config.name + ")";
    const PathJudgement* pj = judgement_for(j, i);
    if (!pj) {
      out += fmt::format("\n{}{}  {}{}\n", o.config.path, name, path_state_name(o.state),
                         o.detail.empty() ? "" : ": " + o.detail);
      continue;
    }
    out += fmt::format("\n{}{}  {}\n  tier {}, io priority {}{}\n", o.config.path, name,
                       measurement_figures(*o.measurement), node_tier_name(pj->tier), o.io_priority,
                       o.state == PathState::kMeasured
                           ? ""
                           : fmt::format("; last attempt {}: {}", path_state_name(o.state), o.detail));
    if (o.randread) out += fmt::format("  headline {}\n", measurement_figures(*o.randread));
    out += indent_lines(render_verdict_human(pj->verdict), "  ");
  }
  if (!j.sustained.empty()) out += "\naccelerators sustained\n";
  for (const RuleSustained& rs : j.sustained) out += "  " + sustained_text(rs, outcomes) + "\n";
  out += fmt::format("\nnode verdict  {}", node_outcome_name(j));
  if (j.best) out += fmt::format(" (best path {})", outcomes[j.paths[*j.best].index].config.path);
  out += fmt::format("\napi           {}{}\n", api.state, api.last_error.empty() ? "" : " (" + api.last_error + ")");
  return out;
}

NodeMetrics node_metrics(const std::string& node, const NodeJudgement& j, const std::vector<PathOutcome>& outcomes,
                         const ApiSyncState& api) {
  NodeMetrics m;
  m.node = node;
  m.version = kVersion;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const PathOutcome& o = outcomes[i];
    PathMetrics pm;
    pm.path = o.config.path;
    pm.name = o.config.name;
    if (auto storage = storage_summary(o)) {
      pm.device = storage->device;
      pm.device_class = storage->device_class;
      pm.model = storage->model;
      pm.transport = storage->transport;
      pm.fs_type = storage->fs_type;
    }
    pm.probes_total = o.probes;
    pm.errors_total = o.errors;
    pm.busy_skips_total = o.busy_skips;
    if (o.measurement) {
      const Measurement& me = *o.measurement;
      pm.measured = true;
      pm.rw = std::string(rw_mode_name(me.rw));
      pm.bs = format_size_compact(me.block_size);
      pm.iops = me.iops;
      pm.bandwidth_bytes_per_s = me.bandwidth_bytes_per_s;
      pm.p50_s = o.p50_ns / 1e9;
      pm.p90_s = o.p90_ns / 1e9;
      pm.p99_s = me.p99_latency_ns / 1e9;
      pm.p999_s = o.p999_ns / 1e9;
      pm.probe_duration_s = o.probe_wall_s;
      pm.last_success_unix_s = std::chrono::duration<double>(o.measured_at.time_since_epoch()).count();
    }
    if (o.measurement && o.measurement->samples) pm.samples_per_s = o.measurement->samples_per_s;
    if (o.randread) pm.headline_iops = o.randread->iops;
    if (const PathJudgement* pj = judgement_for(j, i)) {
      pm.verdict = std::string(verdict_outcome_name(pj->verdict.outcome));
      pm.min_iops = pj->min_iops;
    }
    m.paths.push_back(std::move(pm));
  }
  if (j.best) m.below_policy = j.below_policy();
  for (const RuleSustained& rs : j.sustained) {
    if (rs.path) m.sustained.push_back({rs.rule, rs.demand.workload, double(rs.accelerators)});
  }
  m.api_sync_errors_total = api.sync_errors;
  m.api_sync_pending = api.state == "pending";
  if (api.last_sync) m.api_last_sync_unix_s = std::chrono::duration<double>(api.last_sync->time_since_epoch()).count();
  return m;
}

}  // namespace iogate
