// The audit as JSON (schema iogate.audit/v1) and as kubectl-style tables.
#include <algorithm>

#include <fmt/format.h>

#include "audit/audit.h"
#include "base/text_layout.h"
#include "base/units.h"
#include "base/version.h"

namespace iogate {
namespace {

// Columns padded to their widest cell, two spaces apart, as `kubectl get` prints; the last column
// is not padded.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += i + 1 == row.size() ? row[i] : pad_right(row[i], widths[i] + 2);
    out += line + "\n";
  }
  return out;
}

std::string node_verdict(const NodeAudit& n) {
  if (n.below_policy == "True") return "below";
  if (n.below_policy == "False") return "meets";
  return n.measured ? "measured" : "unmeasured";
}

std::string accelerators_text(const NodeAudit& n) {
  std::string out;
  for (const RuleAccelerators& a : n.accelerators) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}={}", a.rule, a.accelerators ? std::to_string(*a.accelerators) : "-");
  }
  return out.empty() ? "-" : out;
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

}  // namespace

nlohmann::json audit_report_json(const AuditReport& r) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeAudit& n : r.nodes) {
    nlohmann::json acc = nlohmann::json::object();
    for (const RuleAccelerators& a : n.accelerators)
      acc[a.rule] = a.accelerators ? nlohmann::json(*a.accelerators) : nlohmann::json(nullptr);
    nodes.push_back({{"name", n.name},
                     {"gpus", n.gpus},
                     {"measured", n.measured},
                     {"verdict", node_verdict(n)},
                     {"device_class", n.device_class},
                     {"randread_iops", n.randread_iops},
                     {"below_policy", n.below_policy},
                     {"condition", n.condition_text},
                     {"tainted", n.tainted},
                     {"last_probe", n.last_probe},
                     {"accelerators_sustained", acc},
                     {"enforce_would", n.enforce_would}});
  }
  nlohmann::json pods = nlohmann::json::array();
  for (const PodAudit& p : r.pods) {
    pods.push_back({{"namespace", p.ns},
                    {"name", p.name},
                    {"gpus", p.gpus},
                    {"node", p.node},
                    {"phase", p.phase},
                    {"created", p.created},
                    {"preflight_verdict", p.preflight_verdict},
                    {"gate", std::string(audit_gate_name(p.gate))},
                    {"enforce_would", p.why}});
  }
  return {{"schema", kAuditSchema},
          {"iogate_version", kVersion},
          {"time", r.time},
          {"policy",
           {{"source", r.policy_source},
            {"name", r.policy_name},
            {"profile", r.profile},
            {"mode", std::string(policy_mode_name(r.mode))}}},
          {"since_s", r.since.count()},
          {"namespace", r.pod_namespace},
          {"summary",
           {{"nodes", r.nodes.size()},
            {"nodes_would_taint", r.nodes_would_taint()},
            {"pods_judged", r.pods_judged},
            {"pods_would_block", r.pods.size()}}},
          {"nodes", nodes},
          {"pods", pods}};
}

std::string render_audit_human(const AuditReport& r) {
  std::string out =
      fmt::format("iogate audit  policy {}{}  mode {}  pods created in the last {}{}\n",
                  r.policy_name.empty() ? r.policy_source : r.policy_name,
                  r.profile.empty() ? "" : " (profile " + r.profile + ")", policy_mode_name(r.mode),
                  format_duration_compact(std::chrono::duration_cast<std::chrono::nanoseconds>(r.since).count()),
                  r.pod_namespace.empty() ? ", all namespaces" : ", namespace " + r.pod_namespace);
  out +=
      fmt::format("\nNODES  {} judged or with GPUs; enforce would taint {}\n", r.nodes.size(), r.nodes_would_taint());
  if (!r.nodes.empty()) {
    std::vector<std::vector<std::string>> rows = {{"NODE", "GPUS", "CLASS", "RANDREAD-IOPS", "VERDICT", "TAINTED",
                                                   "ACCELERATORS", "LAST-PROBE", "ENFORCE-WOULD"}};
    for (const NodeAudit& n : r.nodes) {
      rows.push_back({n.name, std::to_string(n.gpus), or_dash(n.device_class), or_dash(n.randread_iops),
                      node_verdict(n), n.tainted ? "yes" : "no", accelerators_text(n), or_dash(n.last_probe),
                      or_dash(n.enforce_would)});
    }
    out += table(rows);
  }
  out += fmt::format("\nPODS  {} judged; enforce would block {}\n", r.pods_judged, r.pods.size());
  if (!r.pods.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"NAMESPACE/POD", "GPUS", "NODE", "PREFLIGHT", "GATE", "ENFORCE-WOULD"}};
    for (const PodAudit& p : r.pods) {
      rows.push_back({p.ns + "/" + p.name, std::to_string(p.gpus), or_dash(p.node), or_dash(p.preflight_verdict),
                      std::string(audit_gate_name(p.gate)), p.why});
    }
    out += table(rows);
  }
  if (r.mode != PolicyMode::kEnforce && (r.nodes_would_taint() > 0 || !r.pods.empty())) {
    out += "\nnot blocked now: the policy's mode is " + std::string(policy_mode_name(r.mode)) +
           "; set mode: enforce (helm: --set policy.mode=enforce) once these are resolved or accepted\n";
  }
  return out;
}

}  // namespace iogate
