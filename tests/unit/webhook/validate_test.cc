#include <doctest/doctest.h>

#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "admission_fixtures.h"
#include "heap_peak.h"
#include "webhook/admission.h"
#include "webhook/json_footprint.h"

namespace iogate {
namespace {

using namespace iogate::test;

// A Node as iogate node labels it.
json node(const std::string& name, const std::string& iops, const std::string& disk_class = "nvme",
          bool tainted = false) {
  json labels = {{"kubernetes.io/hostname", name}, {"nvidia.com/gpu.count", "8"}, {"iogate.io/tier", "ok"}};
  if (!iops.empty()) labels["iogate.io/randread-iops"] = iops;
  if (!disk_class.empty()) labels["iogate.io/disk-class"] = disk_class;
  json n = {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", {{"name", name}, {"labels", labels}}},
            {"spec", json::object()}};
  if (tainted) {
    n["spec"]["taints"] =
        json::array({{{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}},
                     {{"key", "iogate.io/storage-below-policy"}, {"value", "true"}, {"effect", "NoSchedule"}}});
  }
  return n;
}

// A lookup over fixed nodes that counts its calls.
struct Nodes {
  std::map<std::string, json> nodes;
  int calls = 0;
  NodeLookup lookup() {
    return [this](const std::string& name) {
      ++calls;
      auto it = nodes.find(name);
      if (it == nodes.end()) return NodeView{false, name, nullptr, ""};
      return NodeView{true, name, it->second, ""};
    };
  }
};

Nodes cluster() {
  Nodes n;
  n.nodes["slow-1"] = node("slow-1", "8120");
  n.nodes["fast-1"] = node("fast-1", "250000");
  n.nodes["tainted-1"] = node("tainted-1", "250000", "nvme", true);
  n.nodes["hdd-1"] = node("hdd-1", "90000", "hdd");
  n.nodes["new-1"] = node("new-1", "", "");
  n.nodes["odd-1"] = node("odd-1", "fast");
  return n;
}

json on_node(json p, const std::string& node_name) {
  p["spec"]["nodeName"] = node_name;
  return p;
}

std::string message(const json& response) { return response["status"]["message"].get<std::string>(); }

TEST_CASE("validate: a GPU pod pinned by nodeName to a node labelled below its floor is refused") {
  Policy policy = gpu_feed();
  Nodes nodes = cluster();
  AdmissionOutcome o = handle_validate(review(on_node(pod("8"), "slow-1")), config_for(policy), nodes.lookup());
  json r = response_of(o);
  CHECK(r["uid"] == "705ab4f5-6393-11e8-b7cc-42010a800002");
  CHECK(r["allowed"] == false);
  CHECK(r["status"]["code"] == 403);
  std::string m = message(r);
  CAPTURE(m);
  CHECK(m.find("node slow-1") != std::string::npos);
  CHECK(m.find("spec.nodeName") != std::string::npos);
  CHECK(m.find("8,120 randread IOPS") != std::string::npos);
  CHECK(m.find("below the 40,000 the pod needs") != std::string::npos);
  CHECK(m.find("rule gpu-feed: >= 40,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 8 GPUs)") != std::string::npos);
  CHECK(m.find("ml/train-0 (8 GPUs)") != std::string::npos);
  CHECK(o.log_line.find("refused (403)") != std::string::npos);
  CHECK(nodes.calls == 1);
}

TEST_CASE("validate: pinned by nodeSelector kubernetes.io/hostname, or a DaemonSet's matchFields") {
  Policy policy = gpu_feed();
  Nodes nodes = cluster();
  json p = pod("8");
  p["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "slow-1"}, {"nvidia.com/gpu.product", "A100"}};
  json r = response_of(handle_validate(review(p), config_for(policy), nodes.lookup()));
  CHECK(r["allowed"] == false);
  CHECK(message(r).find("nodeSelector kubernetes.io/hostname") != std::string::npos);

  json d = pod("1");
  d["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
      json::array({{{"matchFields", {expr("metadata.name", "In", {"hdd-1"})}}}});
  json rd = response_of(handle_validate(review(d), config_for(policy), nodes.lookup()));
  CHECK(rd["allowed"] == false);
  CHECK(message(rd).find("disk class hdd") != std::string::npos);
  CHECK(message(rd).find("rule gpu-feed forbids hdd") != std::string::npos);

  // Two terms naming different nodes: not pinned, the scheduler chooses.
  d["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
      .push_back({{"matchFields", {expr("metadata.name", "In", {"fast-1"})}}});
  CHECK(response_of(handle_validate(review(d), config_for(policy), nodes.lookup()))["allowed"] == true);
}

TEST_CASE("validate: a tainted node refuses even when its IOPS label is high enough") {
  Policy policy = gpu_feed();
  Nodes nodes = cluster();
  json r = response_of(handle_validate(review(on_node(pod("1"), "tainted-1")), config_for(policy), nodes.lookup()));
  CHECK(r["allowed"] == false);
  CHECK(message(r).find("tainted iogate.io/storage-below-policy:NoSchedule") != std::string::npos);
}

TEST_CASE("validate: a fast node is allowed, without warnings") {
  Policy policy = gpu_feed();
  Nodes nodes = cluster();
  AdmissionOutcome o = handle_validate(review(on_node(pod("8"), "fast-1")), config_for(policy), nodes.lookup());
  json r = response_of(o);
  CHECK(r["allowed"] == true);
  CHECK_FALSE(r.contains("warnings"));
  CHECK_FALSE(r.contains("patch"));
  CHECK(o.log_line.find("meets the policy") != std::string::npos);
}

TEST_CASE("validate: what cannot be checked is allowed with a warning (fail open)") {
  Policy policy = gpu_feed();
  Nodes nodes = cluster();
  struct Case {
    const char* node;
    const char* warning;
  } cases[] = {
      {"gone-1", "node gone-1 was not found"},
      {"new-1", "node new-1 has no iogate.io/randread-iops label yet"},
      {"odd-1", "iogate.io/randread-iops=fast, not an integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.node);
    json r = response_of(handle_validate(review(on_node(pod("8"), c.node)), config_for(policy), nodes.lookup()));
    CHECK(r["allowed"] == true);
    REQUIRE(r["warnings"].size() == 1);
    CHECK(r["warnings"][0].get<std::string>().find(c.warning) != std::string::npos);
  }
  NodeLookup failing = [](const std::string& name) { return NodeView{false, name, nullptr, "connection refused"}; };
  json r = response_of(handle_validate(review(on_node(pod("8"), "slow-1")), config_for(policy), failing));
  CHECK(r["allowed"] == true);
  CHECK(r["warnings"][0].get<std::string>().find("could not be read (connection refused)") != std::string::npos);
  NodeLookup throwing = [](const std::string&) -> NodeView { throw std::runtime_error("cache closed"); };
  r = response_of(handle_validate(review(on_node(pod("8"), "slow-1")), config_for(policy), throwing));
  CHECK(r["allowed"] == true);
  CHECK(r["warnings"][0].get<std::string>().find("cache closed") != std::string::npos);
}

TEST_CASE("validate: warn mode allows with the refusal as a warning; off looks nothing up") {
  Nodes nodes = cluster();
  Policy warn = gpu_feed("warn");
  json r = response_of(handle_validate(review(on_node(pod("8"), "slow-1")), config_for(warn), nodes.lookup()));
  CHECK(r["allowed"] == true);
  REQUIRE(r["warnings"].size() == 1);
  CHECK(r["warnings"][0].get<std::string>().find("8,120 randread IOPS") != std::string::npos);
  CHECK(r["warnings"][0].get<std::string>().size() <= 250);

  Policy off = gpu_feed("off");
  nodes.calls = 0;
  r = response_of(handle_validate(review(on_node(pod("8"), "slow-1")), config_for(off), nodes.lookup()));
  CHECK(r["allowed"] == true);
  CHECK(nodes.calls == 0);
}

TEST_CASE("validate: pods it has no business with are allowed without a lookup") {
  Policy policy = gpu_feed();
  Nodes nodes = cluster();
  // A CPU pod on a slow node, a GPU pod left to the scheduler.
  CHECK(response_of(handle_validate(review(on_node(pod(""), "slow-1")), config_for(policy),
                                    nodes.lookup()))["allowed"] == true);
  CHECK(response_of(handle_validate(review(pod("8")), config_for(policy), nodes.lookup()))["allowed"] == true);
  // Opted out, where allowed.
  json p = on_node(pod("8"), "slow-1");
  p["metadata"]["annotations"]["iogate.io/skip"] = "true";
  WebhookConfig config = config_for(policy);
  config.allow_opt_out = true;
  CHECK(response_of(handle_validate(review(p), config, nodes.lookup()))["allowed"] == true);
  CHECK(nodes.calls == 0);
  config.allow_opt_out = false;
  json r = response_of(handle_validate(review(p), config, nodes.lookup()));
  CHECK(r["allowed"] == false);
  CHECK(r["warnings"][0].get<std::string>().find("iogate.io/skip is ignored") != std::string::npos);
}

TEST_CASE("validate: an UPDATE is judged only when it changes the node the pod is pinned to") {
  Policy policy = gpu_feed();
  Nodes nodes = cluster();
  json running = on_node(pod("8"), "slow-1");
  json relabelled = running;
  relabelled["metadata"]["labels"]["checked"] = "yes";
  CHECK(response_of(handle_validate(review(relabelled, "UPDATE", running), config_for(policy),
                                    nodes.lookup()))["allowed"] == true);
  CHECK(nodes.calls == 0);

  // A gated pod (schedulingGates) gets its node chosen by a controller, through an UPDATE.
  json gated = pod("8");
  gated["spec"]["schedulingGates"] = json::array({{{"name", "kueue.x-k8s.io/admission"}}});
  json placed = gated;
  placed["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "slow-1"}};
  json r = response_of(handle_validate(review(placed, "UPDATE", gated), config_for(policy), nodes.lookup()));
  CHECK(r["allowed"] == false);
  CHECK(nodes.calls == 1);
}

TEST_CASE("validate: dry-run gets the same answer") {
  Policy policy = gpu_feed();
  Nodes nodes = cluster();
  json p = on_node(pod("8"), "slow-1");
  AdmissionOutcome real = handle_validate(review(p), config_for(policy), nodes.lookup());
  AdmissionOutcome dry = handle_validate(review(p, "CREATE", nullptr, true), config_for(policy), nodes.lookup());
  CHECK(real.body == dry.body);
  CHECK(dry.log_line.find("dry-run") != std::string::npos);
}

TEST_CASE("validate: class floors: the node's disk-class label picks its floor") {
  Policy policy = load_policy(
      "rules:\n"
      "  - {name: local, selector: {device_classes: [nvme]}, min_iops: 50000}\n"
      "  - {name: any, min_iops: 1000}\n");
  Nodes nodes;
  nodes.nodes["ssd"] = node("ssd", "20000", "sata-ssd");
  nodes.nodes["nvme"] = node("nvme", "20000", "nvme");
  nodes.nodes["unlabelled-class"] = node("unlabelled-class", "20000", "");
  CHECK(response_of(handle_validate(review(on_node(pod("1"), "ssd")), config_for(policy), nodes.lookup()))["allowed"] ==
        true);
  json r = response_of(handle_validate(review(on_node(pod("1"), "nvme")), config_for(policy), nodes.lookup()));
  CHECK(r["allowed"] == false);
  CHECK(message(r).find("rule local") != std::string::npos);
  // No class label: held to the strictest floor.
  CHECK(response_of(handle_validate(review(on_node(pod("1"), "unlabelled-class")), config_for(policy),
                                    nodes.lookup()))["allowed"] == false);
}

TEST_CASE("validate: handling a review takes no more than its parse is counted for") {
  // As for /mutate (mutate_test.cc): an UPDATE carries two pods, here of 100,000 labels and a
  // node affinity of 30,000 expressions each, pinned by its hostname; the rule selects by label.
  json p = pod("0");
  for (int i = 0; i < 100000; ++i) p["metadata"]["labels"][fmt::format("l{:06}", i)] = "";
  p["metadata"]["labels"]["team"] = "vision";
  json exprs = json::array({expr("kubernetes.io/hostname", "In", {"slow-1"})});
  for (int i = 0; i < 30000; ++i) exprs.push_back({{"key", fmt::format("e{:06}", i)}, {"operator", "Exists"}});
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
      json::array({{{"matchExpressions", exprs}}});
  json old = p;
  old["spec"]["affinity"] = nullptr;
  Policy policy = load_policy("rules:\n  - {name: vision, selector: {pod_labels: {team: vision}}, min_iops: 10000}\n");
  Nodes nodes = cluster();
  std::string body = review(p, "UPDATE", old);
  size_t counted = json_footprint(body);
  size_t before = reset_heap_peak();
  AdmissionOutcome o = handle_validate(body, config_for(policy), nodes.lookup());
  size_t took = heap_peak() - before;
  CAPTURE(body.size());
  CAPTURE(took);
  CAPTURE(counted);
  CHECK(took <= counted);
  CHECK(response_of(o)["allowed"] == false);  // slow-1 measured 8,120 IOPS
  CHECK(nodes.calls == 1);
}

}  // namespace
}  // namespace iogate
