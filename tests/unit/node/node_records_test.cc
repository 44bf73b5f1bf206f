#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "node/node.h"
#include "node/node_records.h"
#include "webhook/storage_demand.h"

using namespace iogate;

namespace {

Policy policy(const std::string& mode = "enforce", const std::string& node_section = "") {
  auto p = parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: " + mode +
                            "\nrules:\n  - name: gpu-feed\n    min_iops: 10000\n    min_iops_per_gpu: 5000\n"
                            "    forbidden_classes: [hdd]\n" +
                            node_section,
                        "policy.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

PathOutcome measured(const std::string& path, const std::string& name, double iops, DeviceClass cls) {
  PathOutcome o;
  o.config = {path, name};
  Measurement m;
  m.iops = iops;
  m.p99_latency_ns = 900'000;
  m.bandwidth_bytes_per_s = iops * 4096;
  m.device_class = cls;
  m.leaf_classes = {cls};
  m.path = path;
  m.wrote_test_file = true;
  o.measurement = m;
  o.state = PathState::kMeasured;
  o.measured_at = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  o.probes = 1;
  return o;
}

PathOutcome unmeasured(const std::string& path, PathState state) {
  PathOutcome o;
  o.config = {path, ""};
  o.state = state;
  o.detail = "device vda busy: 97% util";
  o.busy_skips = 1;
  return o;
}

}  // namespace

TEST_CASE("the node is judged by its best path: a slow root disk does not taint a node with a fast NVMe") {
  Policy p = policy();
  std::vector<PathOutcome> paths = {measured("/var/lib/kubelet", "", 3000, DeviceClass::kCloudBlock),
                                    measured("/mnt/nvme", "scratch", 400000, DeviceClass::kNvme)};
  NodeJudgement j = judge_node(p, paths, 4, "status.capacity");
  REQUIRE(j.best);
  CHECK(j.paths[*j.best].index == 1);
  CHECK(j.outcome == VerdictOutcome::kPass);
  CHECK(j.paths[0].min_iops == 20000);  // max(10,000, 5,000 × 4 GPUs)
  CHECK_FALSE(wanted_taint(j, p, "NoSchedule"));
  auto labels = node_labels(j, paths, nlohmann::json::object());
  CHECK(labels.at("iogate.io/disk-class") == "nvme");
  CHECK(labels.at("iogate.io/randread-iops") == "400000");
  CHECK(labels.at("iogate.io/tier") == "fast");  // 400,000 >= 4 × 20,000
  CHECK(labels.at("iogate.io/disk-class.scratch") == "nvme");
  CHECK(labels.at("iogate.io/randread-iops.scratch") == "400000");
  CHECK(labels.count("iogate.io/mixed-media") == 0);
  auto c = node_condition(j, p, paths);
  REQUIRE(c);
  CHECK(c->status == "False");
  CHECK(c->reason == "StorageMeetsPolicy");
  CHECK(c->message.find("/mnt/nvme") != std::string::npos);
  CHECK(node_event_text(j, p, paths).reason == "StoragePolicyMet");
}

TEST_CASE("below policy: taint in enforce mode, condition True naming the rule, tier slow") {
  Policy p = policy();
  std::vector<PathOutcome> paths = {measured("/data", "", 8120, DeviceClass::kCloudBlock)};
  NodeJudgement j = judge_node(p, paths, 4, "status.capacity");
  CHECK(j.outcome == VerdictOutcome::kFail);
  CHECK(j.below_policy());
  auto t = wanted_taint(j, p, "NoSchedule");
  REQUIRE(t);
  CHECK(t->key == "iogate.io/storage-below-policy");
  CHECK(t->value == "true");
  CHECK(t->effect == "NoSchedule");
  CHECK_FALSE(wanted_taint(j, p, ""));  // taint_effect none
  auto labels = node_labels(j, paths, nlohmann::json::object());
  CHECK(labels.at("iogate.io/tier") == "slow");
  auto c = node_condition(j, p, paths);
  REQUIRE(c);
  CHECK(c->status == "True");
  CHECK(c->reason == "StorageBelowPolicy");
  CHECK(c->message.find("gpu-feed") != std::string::npos);
  CHECK(c->message.find("8,120") != std::string::npos);
  EventText e = node_event_text(j, p, paths);
  CHECK(e.type == "Warning");
  CHECK(e.reason == "StorageBelowPolicy");
}

TEST_CASE("warn mode records the fact without a taint; off mode sets no condition") {
  std::vector<PathOutcome> paths = {measured("/data", "", 8120, DeviceClass::kCloudBlock)};
  Policy warn = policy("warn");
  NodeJudgement j = judge_node(warn, paths, 1, "--gpus");
  CHECK(j.outcome == VerdictOutcome::kWarn);
  CHECK(j.below_policy());
  CHECK_FALSE(wanted_taint(j, warn, "NoSchedule"));
  REQUIRE(node_condition(j, warn, paths));
  CHECK(node_condition(j, warn, paths)->status == "True");
  Policy off = policy("off");
  NodeJudgement k = judge_node(off, paths, 1, "--gpus");
  CHECK(k.outcome == VerdictOutcome::kOff);
  CHECK_FALSE(node_condition(k, off, paths));
  CHECK_FALSE(wanted_taint(k, off, "NoSchedule"));
}

TEST_CASE("labels: only our own keys are removed, and nothing is written before a measurement") {
  Policy p = policy();
  std::vector<PathOutcome> paths = {measured("/data", "", 30000, DeviceClass::kMixed)};
  paths[0].measurement->leaf_classes = {DeviceClass::kNvme, DeviceClass::kHdd};
  NodeJudgement j = judge_node(p, paths, 0, "none");
  nlohmann::json current = {{"iogate.io/disk-class.old", "hdd"},
                            {"iogate.io/randread-iops.gone", "5"},
                            {"iogate.io/webhook-owned", "x"},
                            {"team", "ml"}};
  auto labels = node_labels(j, paths, current);
  CHECK(labels.at("iogate.io/mixed-media") == "true");
  CHECK_FALSE(labels.at("iogate.io/disk-class.old"));
  CHECK_FALSE(labels.at("iogate.io/randread-iops.gone"));
  CHECK(labels.count("iogate.io/webhook-owned") == 0);
  CHECK(labels.count("team") == 0);

  std::vector<PathOutcome> none = {unmeasured("/data", PathState::kBusy)};
  NodeJudgement n = judge_node(p, none, 0, "none");
  CHECK_FALSE(n.best);
  CHECK_FALSE(n.outcome.has_value());
  CHECK(node_outcome_name(n) == "none");
  CHECK(node_labels(n, none, current).empty());
  CHECK(node_annotations(n, p, none).empty());
  CHECK_FALSE(node_condition(n, p, none));
}

TEST_CASE("annotations: a compact report and the last probe time; the full report has every path") {
  Policy p = policy();
  std::vector<PathOutcome> paths = {measured("/mnt/nvme", "scratch", 400000, DeviceClass::kNvme),
                                    unmeasured("/data", PathState::kBusy)};
  NodeJudgement j = judge_node(p, paths, 2, "status.capacity");
  auto a = node_annotations(j, p, paths);
  CHECK(a.at("iogate.io/last-probe") == "2027-01-15T08:00:00Z");
  auto compact = nlohmann::json::parse(*a.at("iogate.io/report"));
  CHECK(compact["outcome"] == "pass");
  CHECK(compact["best"] == "/mnt/nvme");
  CHECK(compact["paths"].size() == 2);
  CHECK(compact["paths"][1]["state"] == "busy");
  CHECK(a.at("iogate.io/report")->size() <= kNodeReportAnnotationMaxBytes);

  ApiSyncState api;
  api.state = "pending";
  api.sync_errors = 3;
  nlohmann::json r = node_report_json("gpu-1", p, j, paths, api);
  CHECK(r["schema"] == "iogate.node/v1");
  CHECK(r["paths"][0]["verdict"]["outcome"] == "pass");
  CHECK(r["paths"][1]["measurement"].is_null());
  CHECK(r["paths"][1]["busy_skips"] == 1);
  CHECK(r["api"]["sync_errors"] == 3);
  CHECK(r["condition"]["status"] == "False");

  NodeMetrics m = node_metrics("gpu-1", j, paths, api);
  REQUIRE(m.paths.size() == 2);
  CHECK(m.paths[0].measured);
  CHECK(m.paths[0].verdict == "pass");
  CHECK(m.paths[0].min_iops == 10000);
  CHECK_FALSE(m.paths[1].measured);
  CHECK(m.paths[1].busy_skips_total == 1);
  CHECK(m.below_policy == false);
  CHECK(m.api_sync_pending);
}

TEST_CASE("tier fast from explicit node.fast_min_iops scaled by GPUs") {
  Policy p = policy("enforce", "node:\n  fast_min_iops: 50000\n  fast_min_iops_per_gpu: 20000\n");
  std::vector<PathOutcome> paths = {measured("/data", "", 100000, DeviceClass::kNvme)};
  CHECK(node_labels(judge_node(p, paths, 4, ""), paths, {}).at("iogate.io/tier") == "fast");  // needs 80,000
  CHECK(node_labels(judge_node(p, paths, 8, ""), paths, {}).at("iogate.io/tier") == "ok");    // needs 160,000
}

TEST_CASE("jittered waits stay within interval × (1 ± jitter)") {
  using std::chrono::hours;
  CHECK(jittered(hours(6), 0.1, 0.0) == std::chrono::duration_cast<std::chrono::nanoseconds>(hours(6)) * 9 / 10);
  CHECK(jittered(hours(6), 0.1, 0.5) == hours(6));
  CHECK(jittered(hours(6), 0.0, 0.9) == hours(6));
}

TEST_CASE("a dataset measurement writes no randread-iops label, and its samples/s floor sets the tier") {
  auto parsed = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nworkload: {mode: dataset}\n"
      "rules:\n  - name: feed\n    min_samples_per_s: 1000\n",
      "policy.yaml");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  PathOutcome o = measured("/data", "train", 5000, DeviceClass::kNvme);
  o.measurement->dataset = true;
  o.measurement->samples = true;
  o.measurement->samples_per_s = 5000;
  std::vector<PathOutcome> paths = {o};
  NodeJudgement j = judge_node(*parsed, paths, 0, "--gpus");
  REQUIRE(j.best);
  CHECK(j.outcome == VerdictOutcome::kPass);
  auto labels = node_labels(j, paths, nlohmann::json{{"iogate.io/randread-iops", "123"}});
  CHECK(labels.at("iogate.io/disk-class") == "nvme");
  CHECK(labels.at("iogate.io/tier") == "fast");       // 5,000 >= 4 x 1,000
  CHECK_FALSE(labels.at("iogate.io/randread-iops"));  // a stale value is removed
  CHECK(labels.count("iogate.io/randread-iops.train") == 0);
}

// One IOPS floor: what the webhook schedules a GPU pod on (the node's iogate.io/randread-iops Gt
// floor - 1) is what the node agent reports, meters and derives tier fast from. A rule's bandwidth
// floor, converted at the workload's block size, counts for all of them (the node agent used to
// count min_iops checks only: it reported 10,000 here while the webhook required 97,657).
TEST_CASE("a bandwidth floor is the node's IOPS floor as it is the webhook's") {
  auto parsed = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nworkload: {rw: randread, bs: 4k}\n"
      "rules:\n  - name: feed\n    min_iops: 10000\n    min_bandwidth_per_gpu: 100MB/s\n",
      "policy.yaml");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  const Policy& p = *parsed;
  std::vector<PathOutcome> paths = {measured("/data", "", 150000, DeviceClass::kNvme)};
  NodeJudgement j = judge_node(p, paths, 4, "");
  REQUIRE(j.best);
  const PathJudgement& pj = j.paths[*j.best];

  nlohmann::json pod = {
      {"spec", {{"containers", {{{"name", "train"}, {"resources", {{"limits", {{"nvidia.com/gpu", "4"}}}}}}}}}}};
  long long webhook_floor = storage_demand(p, pod, {}, std::nullopt).required_iops(DeviceClass::kNvme);
  CHECK(webhook_floor == 97657);  // 4 x 100 MB/s in 4 KiB reads, rounded up
  CHECK(std::ceil(pj.min_iops) == webhook_floor);
  CHECK(node_report_json("n1", p, j, paths, {})["paths"][0]["min_iops"].get<double>() == doctest::Approx(pj.min_iops));
  CHECK(node_metrics("n1", j, paths, {}).paths[0].min_iops == doctest::Approx(pj.min_iops));
  CHECK(pj.fast_min_iops == doctest::Approx(pj.min_iops * p.node.fast_factor));

  // The tier, from the checks, agrees with that threshold (4 x 97,657): 150,000 IOPS is ok,
  // 400,000 is fast.
  CHECK(pj.fast_min_iops == doctest::Approx(390625));
  CHECK(node_labels(j, paths, {}).at("iogate.io/tier") == "ok");
  std::vector<PathOutcome> faster = {measured("/data", "", 400000, DeviceClass::kNvme)};
  CHECK(node_labels(judge_node(p, faster, 4, ""), faster, {}).at("iogate.io/tier") == "fast");

  // Two GPUs: 200 MB/s is 48,829 IOPS; without GPUs the min_iops of 10,000 is the floor.
  CHECK(std::ceil(judge_node(p, paths, 2, "").paths[0].min_iops) == 48829);
  CHECK(judge_node(p, paths, 0, "").paths[0].min_iops == 10000);
}
