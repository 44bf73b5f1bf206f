#include <doctest/doctest.h>

#include "audit/audit.h"
#include "base/clock.h"
#include "webhook/admission_fixtures.h"

namespace iogate {
namespace {

using nlohmann::json;
using test::gpu_feed;

const auto kNow = *parse_rfc3339_utc("2026-12-07T12:00:00Z");

json node(const std::string& name, const std::string& iops, const std::string& below, bool tainted = false,
          const std::string& gpus = "8") {
  json n = {{"metadata", {{"name", name}, {"labels", json::object()}, {"annotations", json::object()}}},
            {"spec", json::object()},
            {"status", {{"capacity", {{"nvidia.com/gpu", gpus}}}, {"allocatable", {{"nvidia.com/gpu", gpus}}}}}};
  if (!iops.empty()) {
    n["metadata"]["labels"]["iogate.io/disk-class"] = "nvme";
    n["metadata"]["labels"]["iogate.io/randread-iops"] = iops;
  }
  if (!below.empty())
    n["status"]["conditions"] = {{{"type", "StorageBelowPolicy"}, {"status", below}, {"message", "m"}}};
  if (tainted)
    n["spec"]["taints"] = {{{"key", "iogate.io/storage-below-policy"}, {"value", "true"}, {"effect", "NoSchedule"}}};
  return n;
}

json gpu_pod(const std::string& name, const std::string& node_name,
             const std::string& created = "2026-12-07T11:00:00Z") {
  json p = test::pod("2", name);
  p["metadata"]["creationTimestamp"] = created;
  if (!node_name.empty()) p["spec"]["nodeName"] = node_name;
  return p;
}

AuditReport audit(const Policy& p, const std::vector<json>& nodes, const std::vector<json>& pods) {
  AuditInput in;
  in.policy = &p;
  in.now = kNow;
  return audit_cluster(in, json{{"items", nodes}}, json{{"items", pods}});
}

const PodAudit* find_pod(const AuditReport& r, const std::string& name) {
  for (const PodAudit& p : r.pods) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TEST_CASE("nodes: a node below policy and untainted is one enforce would taint; an unmeasured GPU node is excluded") {
  Policy p = gpu_feed("warn");
  json recorded = node("slow-b", "3000", "True");
  recorded["metadata"]["annotations"]["iogate.io/would-block"] =
      "taint iogate.io/storage-below-policy=true:NoSchedule: x";
  AuditReport r = audit(p,
                        {node("fast", "90000", "False"), node("slow-a", "3000", "True"), recorded,
                         node("tainted", "3000", "True", true), node("bare", "", ""), node("cpu", "", "", false, "0")},
                        {});
  REQUIRE(r.nodes.size() == 5);  // the CPU node without records is left out
  CHECK(r.nodes_would_taint() == 2);
  CHECK(r.nodes[0].enforce_would.empty());
  CHECK(r.nodes[1].enforce_would == "taint iogate.io/storage-below-policy=true:NoSchedule");
  CHECK(r.nodes[2].enforce_would == "taint iogate.io/storage-below-policy=true:NoSchedule: x");  // the agent's words
  CHECK(r.nodes[3].enforce_would.empty());  // already tainted: enforce changes nothing there
  CHECK(r.nodes[4].enforce_would.find("exclude it") == 0);
  json j = audit_report_json(r);
  CHECK(j["schema"] == "iogate.audit/v1");
  CHECK(j["summary"]["nodes_would_taint"] == 2);
}

TEST_CASE("pods: preflight's record, a pod on a node below policy for it, Pending, and the window") {
  Policy p = gpu_feed("warn");  // 2 GPUs: max(10,000, 5,000 x 2) IOPS
  json stopped = gpu_pod("stopped", "fast");
  stopped["metadata"]["annotations"]["iogate.io/verdict"] = "warn";
  stopped["metadata"]["annotations"]["iogate.io/would-block"] = "preflight would exit 1: /data rule gpu-feed";
  json pinned = gpu_pod("pinned", "");
  pinned["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "slow"}};
  std::vector<json> nodes = {node("fast", "90000", "False"), node("slow", "3000", "True")};
  AuditReport r = audit(p, nodes,
                        {stopped, pinned, gpu_pod("elsewhere", "slow"), gpu_pod("fine", "fast"),
                         gpu_pod("old", "slow", "2026-12-05T11:00:00Z"), test::pod("", "cpu-only")});
  CHECK(r.pods_judged == 4);  // not the old pod, not the pod without GPUs
  REQUIRE(find_pod(r, "stopped"));
  CHECK(find_pod(r, "stopped")->gate == AuditGate::kPreflight);
  CHECK(find_pod(r, "stopped")->why == "preflight would exit 1: /data rule gpu-feed");
  REQUIRE(find_pod(r, "pinned"));
  CHECK(find_pod(r, "pinned")->gate == AuditGate::kNode);
  CHECK(find_pod(r, "pinned")->why.find("kept off node slow (nodeSelector kubernetes.io/hostname)") == 0);
  REQUIRE(find_pod(r, "elsewhere"));
  CHECK(find_pod(r, "elsewhere")->gate == AuditGate::kNode);  // placed or pinned: the same judgement
  CHECK(find_pod(r, "elsewhere")->why.find("1 node qualifies") != std::string::npos);
  CHECK_FALSE(find_pod(r, "fine"));
  CHECK(r.pods.size() == 3);

  AuditReport none = audit(p, {node("slow", "3000", "True"), node("bare", "", "")}, {gpu_pod("waits", "")});
  REQUIRE(none.pods.size() == 1);
  CHECK(none.pods[0].gate == AuditGate::kPending);
  CHECK(none.pods[0].why.find("would wait Pending: none of the 2 nodes with GPUs qualifies") == 0);
  std::string human = render_audit_human(none);
  CHECK(human.find("waits") != std::string::npos);
  CHECK(human.find("not blocked now: the policy's mode is warn") != std::string::npos);
}

}  // namespace
}  // namespace iogate
