#include "audit/audit.h"

#include <map>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/json_fields.h"
#include "kube/operations.h"
#include "node/node_records.h"
#include "policy/demand_label.h"
#include "preflight/preflight_records.h"
#include "webhook/node_check.h"
#include "webhook/node_requirements.h"
#include "webhook/pinned_node.h"
#include "webhook/storage_demand.h"

namespace iogate {
namespace {

bool has_agent_label(const nlohmann::json& labels) {
  for (const auto& [key, value] : labels.items()) {
    if (key.rfind(kNodeLabelPrefix, 0) == 0) return true;
  }
  return false;
}

NodeAudit audit_node(const Policy& p, const nlohmann::json& node) {
  const nlohmann::json& meta = object_at(node, "metadata");
  const nlohmann::json& labels = object_at(meta, "labels");
  const nlohmann::json& annotations = object_at(meta, "annotations");
  NodeAudit n;
  n.name = string_at(meta, "name");
  n.gpus = node_gpu_count(node).count;
  n.measured = has_agent_label(labels);
  n.device_class = string_at(labels, kDiskClassLabel);
  n.randread_iops = string_at(labels, kRandreadIopsLabel);
  n.last_probe = string_at(annotations, "iogate.io/last-probe");
  for (const nlohmann::json& c : array_at(object_at(node, "status"), "conditions")) {
    if (string_at(c, "type") != kBelowPolicyCondition) continue;
    n.below_policy = string_at(c, "status");
    n.condition_text = string_at(c, "message");
  }
  for (const nlohmann::json& t : array_at(object_at(node, "spec"), "taints")) {
    if (string_at(t, "key") == kBelowPolicyTaint) n.tainted = true;
  }
  for (const Rule& r : p.rules) {
    if (!r.demand) continue;
    RuleAccelerators ra{r.name, std::nullopt};
    const std::string text = string_at(labels, accelerators_label(r.name).c_str());
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 9)
      ra.accelerators = std::stoi(text);
    n.accelerators.push_back(ra);
  }
  const std::string recorded = string_at(annotations, kWouldBlockAnnotation);
  if (!recorded.empty()) {
    n.enforce_would = recorded;
  } else if (n.below_policy == "True" && !n.tainted && !p.node.taint_effect.empty()) {
    n.enforce_would = fmt::format("taint {}=true:{}", kBelowPolicyTaint, p.node.taint_effect);
  } else if (!n.measured && n.gpus > 0) {
    n.enforce_would = "exclude it from GPU pods: the required affinity is on iogate.io/ labels it lacks";
  }
  return n;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& s : parts) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// What enforce would have done at admission and scheduling to a pod the policy selects; nullopt
// where it would have let it run where it is (or, unscheduled, on some node). A pod's node is its
// spec.nodeName or a pin (pinned_node): whether a user pinned it at creation (/validate's case) or
// the scheduler placed it (the required affinity's) cannot be told apart afterwards, so both are
// the gate kNode, with the nodes that would have qualified.
std::optional<std::pair<AuditGate, std::string>> admission_effect(const StorageDemand& d, const nlohmann::json& pod,
                                                                  const std::map<std::string, nlohmann::json>& nodes) {
  auto findings_on = [&](const std::string& name) {
    auto it = nodes.find(name);
    return check_node(d, name, it == nodes.end() ? nlohmann::json::object() : decision_view(it->second));
  };
  // Under enforce, the required affinity admits a node whose labels answer every requirement:
  // no problem and nothing left unchecked (a missing label matches no Gt).
  size_t candidates = 0, qualifying = 0;
  std::string first_problem;
  for (const auto& [name, node] : nodes) {
    if (d.gpus > 0 && node_gpu_count(node).count == 0) continue;  // it cannot take the pod anyway
    ++candidates;
    NodeFindings f = findings_on(name);
    if (f.problems.empty() && f.unchecked.empty()) ++qualifying;
    else if (first_problem.empty()) first_problem = joined(f.problems.empty() ? f.unchecked : f.problems);
  }
  std::optional<PinnedNode> placed = pinned_node(pod);
  if (placed && nodes.count(placed->name)) {
    NodeFindings f = findings_on(placed->name);
    if (f.problems.empty()) return std::nullopt;
    return std::pair{
        AuditGate::kNode,
        fmt::format("kept off node {} ({}): {}; {}", placed->name, placed->how, joined(f.problems),
                    qualifying == 0 ? "no node qualifies: it would not run at all"
                                    : fmt::format("{} node{} qualif{}", qualifying, qualifying == 1 ? "" : "s",
                                                  qualifying == 1 ? "ies" : "y"))};
  }
  if (placed || qualifying > 0) return std::nullopt;  // on a node that is gone, or one would take it
  return std::pair{AuditGate::kPending,
                   fmt::format("would wait Pending: none of the {} node{} with {} qualifies{}", candidates,
                               candidates == 1 ? "" : "s", d.gpus > 0 ? "GPUs" : "room for it",
                               first_problem.empty() ? "" : " (" + first_problem + ")")};
}

}  // namespace

std::string_view audit_gate_name(AuditGate g) {
  switch (g) {
    case AuditGate::kPreflight: return "preflight";
    case AuditGate::kNode: return "node";
    case AuditGate::kPending: return "pending";
  }
  return "preflight";
}

size_t AuditReport::nodes_would_taint() const {
  size_t n = 0;
  for (const NodeAudit& a : nodes) n += a.enforce_would.rfind("taint ", 0) == 0;
  return n;
}

AuditReport audit_cluster(const AuditInput& in, const nlohmann::json& node_list, const nlohmann::json& pod_list) {
  const Policy& p = *in.policy;
  AuditReport r;
  r.time = rfc3339_seconds(in.now);
  r.policy_source = p.source;
  r.policy_name = p.name;
  r.profile = p.profile;
  r.mode = p.mode;
  r.since = in.since;
  r.pod_namespace = in.pod_namespace;
  std::map<std::string, nlohmann::json> nodes;
  for (const nlohmann::json& node : array_at(node_list, "items")) {
    NodeAudit a = audit_node(p, node);
    if (a.name.empty()) continue;
    nodes[a.name] = node;
    if (a.measured || a.gpus > 0 || !a.below_policy.empty()) r.nodes.push_back(std::move(a));
  }
  for (const nlohmann::json& pod : array_at(pod_list, "items")) {
    const nlohmann::json& meta = object_at(pod, "metadata");
    const std::string created = string_at(meta, "creationTimestamp");
    auto at = parse_rfc3339_utc(created);
    if (!at || in.now - *at > in.since) continue;
    const nlohmann::json& annotations = object_at(meta, "annotations");
    PodAudit a;
    a.ns = string_at(meta, "namespace");
    a.name = string_at(meta, "name");
    a.node = string_at(object_at(pod, "spec"), "nodeName");
    a.phase = string_at(object_at(pod, "status"), "phase");
    a.created = created;
    a.preflight_verdict = string_at(annotations, kVerdictAnnotation);
    StorageDemand d = storage_demand(p, pod, in.extra_gpu_resources, std::nullopt);
    a.gpus = d.gpus;
    if (!d.selected && a.preflight_verdict.empty()) continue;
    ++r.pods_judged;
    const std::string preflight_would = string_at(annotations, kWouldBlockAnnotation);
    if (!preflight_would.empty()) {
      a.gate = AuditGate::kPreflight;
      a.why = preflight_would;
    } else if (auto effect = d.selected ? admission_effect(d, pod, nodes) : std::nullopt) {
      a.gate = effect->first;
      a.why = effect->second;
    } else {
      continue;
    }
    r.pods.push_back(std::move(a));
  }
  return r;
}

Result<AuditReport> run_audit(ApiClient& api, const AuditInput& in) {
  auto nodes = api.get("/api/v1/nodes");
  if (!nodes.ok()) return runtime_error("cannot list the Nodes: " + nodes.error().summary());
  const std::string pods_path =
      in.pod_namespace.empty() ? "/api/v1/pods" : "/api/v1/namespaces/" + in.pod_namespace + "/pods";
  auto pods = api.get(pods_path);
  if (!pods.ok()) return runtime_error("cannot list the Pods: " + pods.error().summary());
  return audit_cluster(in, *nodes, *pods);
}

}  // namespace iogate
