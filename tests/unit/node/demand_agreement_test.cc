// One demand model from node to pod: for the same delivered samples/s, the preflight's verdict
// (evaluate_policy), the node agent's label (judge_node → node_labels) and the webhook's
// requirement (storage_demand → node_requirements, and check_node for a pinned pod) give the same
// answer for every pod size. They share policy/demand.h; this holds them to it.
#include <doctest/doctest.h>

#include <charconv>
#include <string>

#include "node/node_records.h"
#include "policy/demand_label.h"
#include "webhook/node_check.h"
#include "webhook/node_requirements.h"
#include "webhook/storage_demand.h"

using namespace iogate;

namespace {

Policy demand_policy(const std::string& rule_extra = "") {
  auto p = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nmetadata: {name: training}\nmode: enforce\n"
      "workload: {mode: auto}\nrules:\n"
      "  - name: feed-gpus\n    demand: {samples_per_s: 2500, sample_size: 110k, min_au: 0.9}\n" +
          rule_extra,
      "policy.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

Measurement samples(double per_s) {
  Measurement m;
  m.samples = true;
  m.samples_per_s = per_s;
  m.iops = per_s;
  m.sample_bytes = 112640;
  m.block_size = 112640;
  m.bandwidth_bytes_per_s = per_s * 112640;
  m.device_class = DeviceClass::kCloudBlock;
  m.leaf_classes = {DeviceClass::kCloudBlock};
  m.path = "/mnt/data";
  m.wrote_test_file = true;
  return m;
}

// A data path whose last probe delivered `per_s` samples.
PathOutcome samples_path(double per_s, const std::string& name = "") {
  PathOutcome o;
  o.config = {"/mnt/data", name};
  o.measurement = samples(per_s);
  o.state = PathState::kMeasured;
  return o;
}

nlohmann::json gpu_pod(int gpus) {
  nlohmann::json c = {{"name", "train"}, {"image", "pytorch"}};
  if (gpus > 0) c["resources"] = {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "train"}, {"namespace", "ml"}, {"labels", {{"app", "resnet"}}}}},
          {"spec", {{"containers", {c}}}}};
}

// Whether a node's labels satisfy one alternative of nodeSelectorRequirements (Gt, In, NotIn: the
// operators the webhook writes), as the scheduler evaluates them.
bool matches(const nlohmann::json& alternative, const nlohmann::json& labels) {
  for (const nlohmann::json& e : alternative) {
    const std::string key = e["key"], op = e["operator"];
    auto it = labels.find(key);
    if (op == "Gt") {
      if (it == labels.end()) return false;
      long long have = 0, want = 0;
      const std::string h = it->get<std::string>(), w = e["values"][0].get<std::string>();
      std::from_chars(h.data(), h.data() + h.size(), have);
      std::from_chars(w.data(), w.data() + w.size(), want);
      if (!(have > want)) return false;
    } else if (op == "In" || op == "NotIn") {
      bool in = it != labels.end() &&
                std::find(e["values"].begin(), e["values"].end(), it->get<std::string>()) != e["values"].end();
      if ((op == "In") != in) return false;
    } else {
      FAIL("an operator the webhook does not write: " << op);
    }
  }
  return true;
}

// For each delivered rate around the flips, the three answers for every pod size; `measured`
// makes the path's measurement for a delivered rate.
template <typename Measured>
void check_agreement(const Policy& p, Measured measured) {
  // Around each flip: N accelerators at AU 0.90 need N × 2,250 samples/s.
  for (double delivered :
       {0.0, 100.0, 2249.0, 2250.0, 2251.0, 4499.9, 4500.0, 5454.0, 15750.0, 17999.0, 18000.0, 40000.0}) {
    PathOutcome o = samples_path(delivered);
    o.measurement = measured(delivered);
    // The node has 8 GPUs; its label does not depend on them.
    NodeJudgement j = judge_node(p, {o}, 8, "status.capacity");
    auto labels = node_labels(j, {o}, nlohmann::json::object());
    const std::string key = accelerators_label("feed-gpus");
    REQUIRE(labels.count(key) == 1);
    nlohmann::json node = {{"metadata", {{"name", "gpu-1"}, {"labels", nlohmann::json::object()}}}};
    for (const auto& [k, v] : labels) {
      if (v) node["metadata"]["labels"][k] = *v;
    }
    const int sustained = std::stoi(*labels.at(key));

    for (int gpus : {0, 1, 2, 3, 7, 8, 16}) {
      CAPTURE(delivered);
      CAPTURE(gpus);
      // The preflight's verdict on the pod's volume.
      Verdict v = evaluate_policy(p, measured(delivered), EvaluationContext{gpus, "/data", {}});
      REQUIRE(v.checks.size() == 1);
      const bool preflight_passes = v.checks[0].passed;
      REQUIRE(v.checks[0].demand);
      CHECK(v.checks[0].demand->accelerators_sustained == sustained);

      // The webhook's required affinity, as the scheduler reads it on the node's labels.
      StorageDemand d = storage_demand(p, gpu_pod(gpus), {}, std::nullopt);
      auto alternatives = node_requirements(d);
      REQUIRE(alternatives.ok());
      REQUIRE(alternatives->size() == 1);
      const bool schedulable = matches((*alternatives)[0], node["metadata"]["labels"]);
      // And /validate's judgement of a pod pinned to the node.
      NodeFindings f = check_node(d, "gpu-1", node);
      CHECK(f.unchecked.empty());

      CHECK(preflight_passes == schedulable);
      CHECK(preflight_passes == f.problems.empty());
      CHECK(preflight_passes == (demand_accelerators(gpus) <= sustained));
    }
  }
}

}  // namespace

TEST_CASE("preflight, node label and webhook agree on every pod size for the same samples/s") {
  check_agreement(demand_policy(), samples);
}

TEST_CASE("the three agree for a shard demand too: records/s from the shards' bytes, not shards a second") {
  auto p = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: enforce\nworkload: {mode: auto}\nrules:\n"
      "  - name: feed-gpus\n    demand: {samples_per_s: 2500, sample_size: 64k, shard_size: 16m, min_au: 0.9}\n",
      "policy.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  check_agreement(*p, [](double records_per_s) {
    Measurement m = samples(records_per_s / 256);  // the loader's figure: shards (of 256 records) a second
    m.dataset = true;
    m.bandwidth_bytes_per_s = records_per_s * 65536;
    return m;
  });
}

TEST_CASE("the node judges a demand for one accelerator: a node that feeds 2 of its 8 GPUs is not tainted") {
  const Policy p = demand_policy();
  PathOutcome o = samples_path(5454, "data");
  Measurement headline;
  headline.iops = 41000;
  headline.rw = RwMode::kRandRead;
  headline.block_size = 4096;
  o.randread = headline;
  NodeJudgement j = judge_node(p, {o}, 8, "status.capacity");
  CHECK(j.outcome == VerdictOutcome::kPass);
  CHECK_FALSE(wanted_taint(j, p, "NoSchedule"));
  auto labels = node_labels(j, {o}, nlohmann::json::object());
  CHECK(*labels.at("iogate.io/accelerators.feed-gpus") == "2");
  // The 4 KiB headline stays the randread-iops label beside the samples.
  CHECK(*labels.at("iogate.io/randread-iops") == "41000");
  CHECK(*labels.at("iogate.io/randread-iops.data") == "41000");
  auto annotations = node_annotations(j, p, {o});
  auto demand = nlohmann::json::parse(*annotations.at(kDemandAnnotation));
  REQUIRE(demand.size() == 1);
  CHECK(demand[0]["rule"] == "feed-gpus");
  CHECK(demand[0]["accelerators_sustained"] == 2);
  CHECK(demand[0]["samples_per_s"] == 5454);
  CHECK(demand[0]["sample_bytes"] == 112640);
  CHECK(demand[0]["path"] == "/mnt/data");
  auto c = node_condition(j, p, {o});
  REQUIRE(c);
  CHECK(c->status == "False");
  CHECK(c->message.find("rule feed-gpus: sustains 2 accelerators") != std::string::npos);
  NodeMetrics m = node_metrics("gpu-1", j, {o}, ApiSyncState{});
  REQUIRE(m.sustained.size() == 1);
  CHECK(m.sustained[0].accelerators == 2);

  // Feeding none is below policy: tainted, whatever the GPUs.
  o.measurement = samples(1000);
  j = judge_node(p, {o}, 8, "status.capacity");
  CHECK(j.outcome == VerdictOutcome::kFail);
  CHECK(wanted_taint(j, p, "NoSchedule"));
  CHECK(*node_labels(j, {o}, nlohmann::json::object()).at("iogate.io/accelerators.feed-gpus") == "0");
}

TEST_CASE("a demand rule's label is removed when the rule goes, and another node's labels stay") {
  const Policy p = demand_policy();
  PathOutcome o = samples_path(5454);
  NodeJudgement j = judge_node(p, {o}, 8, "status.capacity");
  nlohmann::json current = {{"iogate.io/accelerators.old-rule", "3"},
                            {"iogate.io/accelerators.feed-gpus", "1"},
                            {"example.com/accelerators.x", "1"}};
  auto labels = node_labels(j, {o}, current);
  CHECK_FALSE(labels.at("iogate.io/accelerators.old-rule").has_value());
  CHECK(*labels.at("iogate.io/accelerators.feed-gpus") == "2");
  CHECK(labels.count("example.com/accelerators.x") == 0);
  // Before a path the rule covers has samples, no label: the webhook then keeps pods waiting.
  PathOutcome pending;
  pending.config = {"/mnt/data", ""};
  j = judge_node(p, {pending}, 8, "none");
  CHECK(node_labels(j, {pending}, nlohmann::json::object()).empty());
}

TEST_CASE("the webhook names the rule, N and the node's figure; a node not measured yet is unchecked") {
  const Policy p = demand_policy();
  StorageDemand d = storage_demand(p, gpu_pod(8), {}, std::nullopt);
  auto alternatives = node_requirements(d);
  REQUIRE(alternatives.ok());
  CHECK(requirements_text(*alternatives) == "iogate.io/accelerators.feed-gpus Gt 7");
  nlohmann::json node = {{"metadata", {{"labels", {{"iogate.io/accelerators.feed-gpus", "2"}}}}}};
  NodeFindings f = check_node(d, "gpu-1", node);
  REQUIRE(f.problems.size() == 1);
  CHECK(f.problems[0] ==
        "node gpu-1 sustains 2 accelerators of rule feed-gpus (iogate.io/accelerators.feed-gpus=2), fewer than the 8 "
        "the pod requests (2,500 samples/s per accelerator: AU >= 0.90 at 20,000 samples/s (2,500/GPU x 8 GPUs))");
  nlohmann::json fresh = {{"metadata", {{"labels", nlohmann::json::object()}}}};
  f = check_node(d, "gpu-2", fresh);
  CHECK(f.problems.empty());
  REQUIRE(f.unchecked.size() == 1);
  CHECK(f.unchecked[0].find("no iogate.io/accelerators.feed-gpus label yet") != std::string::npos);
}

TEST_CASE("a demand rule's name must fit the label it names") {
  auto p = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nworkload: {mode: auto}\nrules:\n"
      "  - name: " +
          std::string(51, 'a') + "\n    demand: {samples_per_s: 10, sample_size: 1m}\n",
      "policy.yaml");
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().message.find("rules[0].name") == 0);
  CHECK(p.error().message.find("at most 50") != std::string::npos);
  CHECK(parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\nworkload: {mode: auto}\nrules:\n"
                     "  - name: " +
                         std::string(50, 'a') + "\n    demand: {samples_per_s: 10, sample_size: 1m}\n",
                     "policy.yaml")
            .ok());
}
