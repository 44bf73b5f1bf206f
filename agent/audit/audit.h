// `iogate audit`: what switching a policy to enforce mode would block, read from what the node
// agents and preflights recorded and judged as the webhook would judge, without changing anything.
//
// Nodes: each node's recorded verdict (the StorageBelowPolicy condition, its labels and its
// iogate.io/would-block annotation), whether enforce would taint it, and per demand rule the
// accelerators it sustains. GPU nodes the agent never labelled are listed too: enforce's required
// affinity excludes them. Pods: each pod created within the window that the policy judges (GPUs,
// or a rule selecting its labels) or that preflight judged, and what enforce would have done to
// it: preflight exit 1 (its iogate.io/would-block annotation), kept off the node it is on (below
// policy for it: webhook/node_check.h's check_node, the judgement /validate and the required
// affinity make), or held Pending (no node with the GPU resource qualifies).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "kube/api_client.h"
#include "policy/policy.h"

namespace iogate {

inline constexpr const char* kAuditSchema = "iogate.audit/v1";

// One demand rule on a node: its label iogate.io/accelerators.<rule>, absent before a measurement.
struct RuleAccelerators {
  std::string rule;
  std::optional<int> accelerators;
};

struct NodeAudit {
  std::string name;
  int gpus = 0;
  bool measured = false;                       // carries the agent's labels
  std::string device_class;                    // iogate.io/disk-class
  std::string randread_iops;                   // iogate.io/randread-iops
  std::string below_policy;                    // the condition's status: "True", "False", "" (none)
  std::string condition_text;                  // its message
  bool tainted = false;                        // carries iogate.io/storage-below-policy now
  std::string last_probe;                      // iogate.io/last-probe
  std::vector<RuleAccelerators> accelerators;  // per demand rule of the policy, in its order
  // What enforce would do that warn does not: "taint iogate.io/storage-below-policy=true:NoSchedule:
  // ..." (the agent's annotation, else from the condition), or for an unmeasured GPU node
  // "exclude it: required affinity on labels it lacks"; "" for nothing.
  std::string enforce_would;
};

enum class AuditGate { kPreflight, kNode, kPending };
std::string_view audit_gate_name(AuditGate g);  // "preflight", "node", "pending"

struct PodAudit {
  std::string ns, name, node, phase, created;
  int gpus = 0;
  std::string preflight_verdict;  // iogate.io/verdict, "" where preflight did not run
  AuditGate gate = AuditGate::kPreflight;
  std::string why;  // one line
};

struct AuditReport {
  std::string time;  // RFC 3339 UTC
  std::string policy_source, policy_name, profile;
  PolicyMode mode = kDefaultPolicyMode;
  std::chrono::seconds since{0};
  std::string pod_namespace;  // "" for all
  std::vector<NodeAudit> nodes;
  size_t pods_judged = 0;      // pods in the window the policy or a preflight judged
  std::vector<PodAudit> pods;  // those enforce would have blocked
  size_t nodes_would_taint() const;
};

struct AuditInput {
  const Policy* policy = nullptr;
  std::chrono::system_clock::time_point now;
  std::chrono::seconds since{24 * 3600};
  std::string pod_namespace;
  std::vector<std::string> extra_gpu_resources;
};

// The audit of a NodeList and a PodList as the API returns them.
AuditReport audit_cluster(const AuditInput& in, const nlohmann::json& node_list, const nlohmann::json& pod_list);

// Lists the nodes and the pods (of in.pod_namespace, or all) and audits them; read-only.
Result<AuditReport> run_audit(ApiClient& api, const AuditInput& in);

nlohmann::json audit_report_json(const AuditReport& r);
std::string render_audit_human(const AuditReport& r);

}  // namespace iogate
