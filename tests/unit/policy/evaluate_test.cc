#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "example_policy.h"
#include "measure/measurement_from.h"
#include "policy/evaluate.h"
#include "report/sample_probe_result.h"

using namespace iogate;

namespace {

Policy load(const std::string& rules_and_more) {
  auto p = parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: enforce\n" + rules_and_more, "test.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

// The manual's example policy (examples/policy.yaml).
Policy gpu_feed(const std::string& mode = "enforce") {
  auto p = parse_policy(testing::example_policy_text(mode), "test.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

// A local NVMe volume into which the probe wrote its own test file.
Measurement nvme(double iops, double p99_ms = 1.0) {
  Measurement m;
  m.iops = iops;
  m.p99_latency_ns = p99_ms * 1e6;
  m.bandwidth_bytes_per_s = iops * 4096;
  m.device_class = DeviceClass::kNvme;
  m.leaf_classes = {DeviceClass::kNvme};
  m.path = "/data";
  m.fs_type = "ext4";
  m.measured_s = 10;
  m.wrote_test_file = true;
  m.files_bytes = m.readable_bytes = uint64_t{256} << 20;
  m.stop_reason = StopReason::kRuntime;
  return m;
}

const RuleCheck& find_check(const Verdict& v, const std::string& rule, const std::string& check) {
  auto it = std::find_if(v.checks.begin(), v.checks.end(),
                         [&](const RuleCheck& c) { return c.rule == rule && check_kind_name(c.check) == check; });
  REQUIRE_MESSAGE(it != v.checks.end(), rule << "/" << check);
  return *it;
}

bool has_caveat(const Verdict& v, const std::string& needle) {
  return std::any_of(v.caveats.begin(), v.caveats.end(),
                     [&](const std::string& c) { return c.find(needle) != std::string::npos; });
}

}  // namespace

TEST_CASE("per-GPU scaling: the floor is max(min_iops, min_iops_per_gpu x GPUs)") {
  Rule both;
  both.min_iops = 10000;
  both.min_iops_per_gpu = 5000;
  Rule per_gpu_only;
  per_gpu_only.min_iops_per_gpu = 5000;
  Rule fixed_only;
  fixed_only.min_iops = 7000;
  struct Row {
    int gpus;
    double both, per_gpu_only, fixed_only;
  };
  for (Row row : {Row{0, 10000, 0, 7000}, Row{1, 10000, 5000, 7000}, Row{2, 10000, 10000, 7000},
                  Row{3, 15000, 15000, 7000}, Row{8, 40000, 40000, 7000}}) {
    CAPTURE(row.gpus);
    CHECK(effective_min_iops(both, row.gpus) == row.both);
    CHECK(effective_min_iops(per_gpu_only, row.gpus) == row.per_gpu_only);
    CHECK(effective_min_iops(fixed_only, row.gpus) == row.fixed_only);
  }
  Rule bw;
  bw.min_bandwidth_bytes_per_s = 500'000'000;
  bw.min_bandwidth_per_gpu_bytes_per_s = 60'000'000;
  CHECK(effective_min_bandwidth(bw, 0) == 500e6);
  CHECK(effective_min_bandwidth(bw, 8) == 500e6);
  CHECK(effective_min_bandwidth(bw, 10) == 600e6);
  CHECK(effective_min_bandwidth(Rule{}, 8) == 0);
}

TEST_CASE("the issue's example against 8,120 IOPS on 2 GPUs: min_iops fails, the rest passes") {
  Verdict v = evaluate_policy(gpu_feed(), nvme(8120, 3.2), {2, "/data", {}});
  CHECK(v.outcome == VerdictOutcome::kFail);
  CHECK(v.mode == PolicyMode::kEnforce);
  CHECK(v.gpus == 2);
  REQUIRE(v.checks.size() == 3);
  const RuleCheck& iops = find_check(v, "gpu-feed", "min_iops");
  CHECK_FALSE(iops.passed);
  CHECK(iops.measured == "8,120 IOPS");
  CHECK(iops.threshold == ">= 10,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 2 GPUs)");
  CHECK(iops.measured_value == 8120);
  CHECK(iops.threshold_value == 10000);
  const RuleCheck& lat = find_check(v, "gpu-feed", "max_p99_latency");
  CHECK(lat.passed);
  CHECK(lat.threshold == "<= 5.00 ms");
  CHECK(lat.measured == "3.20 ms");
  CHECK(lat.threshold_value == 5e6);
  const RuleCheck& cls = find_check(v, "gpu-feed", "forbidden_classes");
  CHECK(cls.passed);
  CHECK(cls.measured == "nvme");
  CHECK(cls.threshold == "none of hdd");
  REQUIRE(v.first_failure() != nullptr);
  CHECK(v.first_failure()->check == CheckKind::kMinIops);
  CHECK(v.rules_not_applicable.empty());
  CHECK(v.caveats.empty());  // local NVMe, own test file, direct I/O: nothing to qualify
}

TEST_CASE("the same volume against 0, 1 and 8 GPUs") {
  Policy p = gpu_feed();
  struct Row {
    int gpus;
    double iops;
    bool pass;
    const char* threshold;
  };
  for (Row row : {Row{0, 12000, true, ">= 10,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 0 GPUs)"},
                  Row{1, 12000, true, ">= 10,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 1 GPU)"},
                  Row{8, 12000, false, ">= 40,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 8 GPUs)"},
                  Row{8, 40000, true, ">= 40,000 IOPS (max of min_iops 10,000 and 5,000/GPU x 8 GPUs)"}}) {
    CAPTURE(row.gpus);
    CAPTURE(row.iops);
    Verdict v = evaluate_policy(p, nvme(row.iops), {row.gpus, "/data", {}});
    const RuleCheck& c = find_check(v, "gpu-feed", "min_iops");
    CHECK(c.passed == row.pass);
    CHECK(c.threshold == row.threshold);
    CHECK(v.outcome == (row.pass ? VerdictOutcome::kPass : VerdictOutcome::kFail));
  }
}

TEST_CASE("a per-GPU-only floor with no GPUs is 0, and the verdict says so") {
  Policy p = load("rules: [{name: per-gpu, min_iops_per_gpu: 5000}]\n");
  Verdict none = evaluate_policy(p, nvme(100), {0, "/data", {}});
  CHECK(none.outcome == VerdictOutcome::kPass);
  CHECK(find_check(none, "per-gpu", "min_iops").threshold == ">= 0 IOPS (5,000/GPU x 0 GPUs)");
  CHECK(has_caveat(none, "Rule per-gpu sets only min_iops_per_gpu (5,000/GPU) and the pod requests no GPUs"));
  Verdict four = evaluate_policy(p, nvme(100), {4, "/data", {}});
  CHECK(four.outcome == VerdictOutcome::kFail);
  CHECK(find_check(four, "per-gpu", "min_iops").threshold == ">= 20,000 IOPS (5,000/GPU x 4 GPUs)");
  CHECK_FALSE(has_caveat(four, "requests no GPUs"));
}

TEST_CASE("latency and bandwidth checks, both directions of the comparison") {
  Policy p = load("rules:\n  - {name: lat, max_p99_latency: 2ms}\n  - {name: bw, min_bandwidth: 500MB/s}\n");
  Measurement m = nvme(100000, 2.5);
  m.bandwidth_bytes_per_s = 612.3e6;
  Verdict v = evaluate_policy(p, m, {});
  CHECK_FALSE(find_check(v, "lat", "max_p99_latency").passed);
  CHECK(find_check(v, "bw", "min_bandwidth").passed);
  CHECK(find_check(v, "bw", "min_bandwidth").measured == "612 MB/s");
  CHECK(find_check(v, "bw", "min_bandwidth").threshold == ">= 500 MB/s");
  m.p99_latency_ns = 2e6;  // equal to the ceiling: passes
  m.bandwidth_bytes_per_s = 499e6;
  v = evaluate_policy(p, m, {});
  CHECK(find_check(v, "lat", "max_p99_latency").passed);
  CHECK_FALSE(find_check(v, "bw", "min_bandwidth").passed);
  CHECK(v.outcome == VerdictOutcome::kFail);
}

TEST_CASE("class checks see through a mixed volume to its leaves") {
  Policy p = load(
      "rules:\n  - {name: no-hdd, forbidden_classes: [hdd]}\n  - {name: flash, allowed_classes: [nvme, sata-ssd]}\n");
  Measurement m = nvme(50000);
  m.device_class = DeviceClass::kMixed;
  m.leaf_classes = {DeviceClass::kNvme, DeviceClass::kHdd};
  Verdict v = evaluate_policy(p, m, {});
  CHECK_FALSE(find_check(v, "no-hdd", "forbidden_classes").passed);
  CHECK(find_check(v, "no-hdd", "forbidden_classes").measured == "mixed (nvme, hdd)");
  CHECK_FALSE(find_check(v, "flash", "allowed_classes").passed);

  m.leaf_classes = {DeviceClass::kNvme, DeviceClass::kSataSsd};
  v = evaluate_policy(p, m, {});
  CHECK(find_check(v, "no-hdd", "forbidden_classes").passed);
  CHECK(find_check(v, "flash", "allowed_classes").passed);

  m = nvme(300);
  m.device_class = DeviceClass::kHdd;
  m.leaf_classes = {DeviceClass::kHdd};
  v = evaluate_policy(p, m, {});
  CHECK_FALSE(find_check(v, "no-hdd", "forbidden_classes").passed);
  CHECK_FALSE(find_check(v, "flash", "allowed_classes").passed);
  CHECK(find_check(v, "flash", "allowed_classes").threshold == "one of nvme, sata-ssd");
}

TEST_CASE("selectors: by class, by path (whole components or globs), by pod label") {
  Policy p = load(R"(rules:
  - {name: cloud, selector: {device_classes: [cloud-block]}, min_iops: 3000}
  - {name: data, selector: {paths: [/data/]}, min_iops: 1}
  - {name: train, selector: {paths: ["/mnt/*/train"]}, min_iops: 2}
  - {name: vision, selector: {pod_labels: {team: vision}}, min_iops: 3}
)");
  struct Row {
    DeviceClass cls;
    std::string path;
    std::map<std::string, std::string> labels;
    std::vector<std::string> applied;
  };
  std::vector<Row> rows = {
      {DeviceClass::kNvme, "/data", {}, {"data"}},
      {DeviceClass::kNvme, "/data/imagenet/train", {}, {"data"}},
      {DeviceClass::kNvme, "/database", {}, {}},
      {DeviceClass::kCloudBlock, "/mnt/a/train/images", {{"team", "vision"}}, {"cloud", "train", "vision"}},
      {DeviceClass::kNvme, "/mnt/a/b/train", {}, {}},  // * does not cross a slash
      {DeviceClass::kNvme, "/scratch", {{"team", "nlp"}}, {}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.path);
    Measurement m = nvme(100000);
    m.device_class = row.cls;
    Verdict v = evaluate_policy(p, m, {1, row.path, row.labels});
    std::vector<std::string> applied;
    for (const RuleCheck& c : v.checks) applied.push_back(c.rule);
    CHECK(applied == row.applied);
    CHECK(v.rules_not_applicable.size() + applied.size() == p.rules.size());
  }
  Measurement m = nvme(100000);
  Verdict v = evaluate_policy(p, m, {1, "/scratch", {{"team", "nlp"}}});
  REQUIRE(v.rules_not_applicable.size() == 4);
  CHECK(v.rules_not_applicable[0] == "cloud: device class nvme is not one of cloud-block");
  CHECK(v.rules_not_applicable[1] == "data: path /scratch is not under /data/");
  CHECK(v.rules_not_applicable[2] == "train: path /scratch is not under /mnt/*/train");
  CHECK(v.rules_not_applicable[3] == "vision: pod label team is \"nlp\", not \"vision\"");
  v = evaluate_policy(p, m, {1, "/scratch", {}});
  CHECK(v.rules_not_applicable[3] == "vision: the pod has no label team (wants \"vision\")");

  // The context's path is what selectors see; the measurement's path stands in when it is empty.
  m.path = "/data/x";
  v = evaluate_policy(p, m, {1, "", {}});
  REQUIRE(v.checks.size() == 1);
  CHECK(v.checks[0].rule == "data");
}

TEST_CASE("no applicable rule: pass, with a caveat saying nothing was checked") {
  Policy p = load("rules: [{name: cloud, selector: {device_classes: [cloud-block]}, min_iops: 3000}]\n");
  Verdict v = evaluate_policy(p, nvme(10), {});
  CHECK(v.outcome == VerdictOutcome::kPass);
  CHECK(v.checks.empty());
  CHECK(v.rules_not_applicable.size() == 1);
  CHECK(has_caveat(v, "No rule applied to this volume (1 of 1 rules' selectors did not match)"));
}

TEST_CASE("modes: warn turns a failure into warn, off reports but never judges") {
  Measurement slow = nvme(8000);
  Measurement fast = nvme(50000);
  struct Row {
    std::string mode;
    const Measurement* m;
    VerdictOutcome want;
  };
  for (const Row& row : {Row{"enforce", &slow, VerdictOutcome::kFail}, Row{"enforce", &fast, VerdictOutcome::kPass},
                         Row{"warn", &slow, VerdictOutcome::kWarn}, Row{"warn", &fast, VerdictOutcome::kPass},
                         Row{"off", &slow, VerdictOutcome::kOff}, Row{"off", &fast, VerdictOutcome::kOff}}) {
    CAPTURE(row.mode);
    Verdict v = evaluate_policy(gpu_feed(row.mode), *row.m, {1, "/data", {}});
    CHECK(v.outcome == row.want);
    CHECK(v.checks.size() == 3);  // computed and shown in every mode
    CHECK(find_check(v, "gpu-feed", "min_iops").passed == (row.m == &fast));
  }
  CHECK(verdict_outcome_name(VerdictOutcome::kPass) == "pass");
  CHECK(verdict_outcome_name(VerdictOutcome::kFail) == "fail");
  CHECK(verdict_outcome_name(VerdictOutcome::kWarn) == "warn");
  CHECK(verdict_outcome_name(VerdictOutcome::kOff) == "off");
}

TEST_CASE("caveats appear where their condition holds, and only there") {
  Policy p = gpu_feed();
  EvaluationContext ctx{1, "/data", {}};

  Measurement cloud = nvme(12000);
  cloud.device_class = DeviceClass::kCloudBlock;
  cloud.leaf_classes = {DeviceClass::kCloudBlock};
  Verdict v = evaluate_policy(p, cloud, ctx);
  CHECK(v.outcome == VerdictOutcome::kPass);
  CHECK(has_caveat(v, "AWS gp2 bursts to 3,000 IOPS for about 30 minutes"));
  CHECK(has_caveat(v, "read its own freshly written test file, so a restored dataset may read slower"));
  CHECK_FALSE(has_caveat(v, "may be pessimistic now"));

  Measurement cloud_ro = cloud;
  cloud_ro.wrote_test_file = false;
  cloud_ro.read_existing_files = true;
  cloud_ro.read_only = true;
  cloud_ro.files_bytes = uint64_t{4} << 30;
  cloud_ro.readable_bytes = uint64_t{3} << 30;
  v = evaluate_policy(p, cloud_ro, ctx);
  CHECK(has_caveat(v, "may be pessimistic now"));
  CHECK(has_caveat(v, "1.00 GiB of the 4.00 GiB in the files read were holes or unwritten extents"));
  CHECK(has_caveat(v, "read only the 3.00 GiB written"));

  Measurement fully_written = cloud_ro;
  fully_written.readable_bytes = fully_written.files_bytes;
  v = evaluate_policy(p, fully_written, ctx);
  CHECK_FALSE(has_caveat(v, "holes"));

  Measurement device = nvme(500000);
  device.wrote_test_file = false;
  device.read_existing_files = true;
  device.read_block_device = true;
  device.fs_type = "block device";
  v = evaluate_policy(p, device, ctx);
  CHECK(has_caveat(v, "raw block device"));
  CHECK_FALSE(has_caveat(v, "burst credits"));

  Measurement tmpfs = nvme(900000, 0.05);
  tmpfs.device_class = DeviceClass::kRam;
  tmpfs.leaf_classes = {DeviceClass::kRam};
  tmpfs.page_cache = true;
  v = evaluate_policy(p, tmpfs, ctx);
  CHECK(v.outcome == VerdictOutcome::kPass);
  CHECK(has_caveat(v, "Measured on memory"));

  Measurement nfs = nvme(20000);
  nfs.device_class = DeviceClass::kNetworkFs;
  nfs.leaf_classes = {DeviceClass::kNetworkFs};
  nfs.direct = false;
  v = evaluate_policy(p, nfs, ctx);
  CHECK(has_caveat(v, "metadata round trips"));
  CHECK(has_caveat(v, "O_DIRECT was refused"));
  CHECK_FALSE(has_caveat(v, "Measured on memory"));

  Measurement interrupted = nvme(20000);
  interrupted.stop_reason = StopReason::kSignal;
  interrupted.measured_s = 2.5;
  v = evaluate_policy(p, interrupted, ctx);
  CHECK(has_caveat(v, "interrupted after 2.50 s"));

  Measurement local = nvme(20000);
  v = evaluate_policy(p, local, ctx);
  CHECK(v.caveats.empty());
}

TEST_CASE("the confidence interval: unsettled at the limit, and a floor inside it") {
  Policy p = gpu_feed();
  Measurement m = nvme(10150);
  m.ci_half_width_relative = 0.03;
  m.ci_confidence = 0.95;
  Verdict v = evaluate_policy(p, m, {1, "/data", {}});
  CHECK(v.outcome == VerdictOutcome::kPass);
  CHECK(has_caveat(v, "within the 95% confidence interval (±3%) of rule gpu-feed's floor of 10,000 IOPS"));
  CHECK_FALSE(has_caveat(v, "had not settled"));

  m.iops = 20000;
  m.ci_half_width_relative = 0.082;
  v = evaluate_policy(p, m, {1, "/data", {}});
  CHECK_FALSE(has_caveat(v, "confidence interval (±"));
  CHECK(has_caveat(v,
                   "had not settled when the 10s runtime limit ended: the 95% confidence interval was ±8.2% "
                   "(tolerance ±3%)"));
}

TEST_CASE("iops_floor: the highest rate floor among applicable rules, bandwidth in blocks") {
  Policy p = gpu_feed();
  CHECK(iops_floor(p, {8, "/data", {}}, DeviceClass::kNvme) == 40000);
  CHECK(iops_floor(p, {0, "/data", {}}, DeviceClass::kNvme) == 10000);

  Policy q = load(R"(workload: {rw: read, bs: 1m, size: 1g}
rules:
  - {name: bw, min_bandwidth: 500MiB/s}
  - {name: cloud-only, selector: {device_classes: [cloud-block]}, min_iops: 3000}
  - {name: lat, max_p99_latency: 5ms}
)");
  CHECK(iops_floor(q, {}, DeviceClass::kNvme) == doctest::Approx(500.0));
  CHECK(iops_floor(q, {}, DeviceClass::kCloudBlock) == doctest::Approx(3000.0));
  Policy r = load("rules: [{name: lat, max_p99_latency: 5ms}]\n");
  CHECK_FALSE(iops_floor(r, {}, DeviceClass::kNvme).has_value());
}

TEST_CASE("rule_iops_floor across rule kinds: IOPS, per GPU, bandwidth in blocks, none") {
  Policy p = load(R"(workload: {rw: randread, bs: 4k}
rules:
  - {name: iops, min_iops: 10000, min_iops_per_gpu: 5000}
  - {name: bw, min_bandwidth: 40MB/s, min_bandwidth_per_gpu: 100MB/s}
  - {name: lat, max_p99_latency: 5ms}
)");
  RuleIopsFloor f = rule_iops_floor(p, p.rules[0], 3);
  CHECK(f.iops == 15000);
  CHECK_FALSE(f.from_bandwidth);
  CHECK(rule_iops_floor(p, p.rules[0], 0).iops == 10000);
  f = rule_iops_floor(p, p.rules[1], 0);  // 40 MB/s in 4 KiB reads
  CHECK(f.iops == doctest::Approx(9765.625));
  CHECK(f.from_bandwidth);
  CHECK(rule_iops_floor(p, p.rules[1], 2).iops == doctest::Approx(48828.125));
  CHECK(rule_iops_floor(p, p.rules[2], 8).iops == 0);
  // iops_floor is the highest of the applicable rules' floors.
  CHECK(iops_floor(p, {2, "/data", {}}, DeviceClass::kNvme) == doctest::Approx(48828.125));
  CHECK(iops_floor(p, {0, "/data", {}}, DeviceClass::kNvme) == doctest::Approx(10000));
}

TEST_CASE("measurement_from_probe aggregates jobs and takes the workload's direction's p99") {
  auto sample = iogate::testing::make_sample(false);
  ProbeResult& r = sample.result;
  r.storage.device_class = DeviceClass::kMixed;
  StackNode lv;
  lv.name = "dm-0";
  lv.kind = StackNodeKind::kLvm;
  lv.device_class = DeviceClass::kMixed;
  StackNode fast, slow;
  fast.name = "nvme0n1";
  fast.device_class = DeviceClass::kNvme;
  slow.name = "sda";
  slow.device_class = DeviceClass::kHdd;
  lv.children = {fast, slow};
  r.storage.stack = {lv};
  Measurement m = measurement_from_probe(r);
  CHECK(m.iops == doctest::Approx(7000.0));  // 70,000 reads over the longest job's 10 s
  CHECK(m.bandwidth_bytes_per_s == doctest::Approx(7000.0 * 4096));
  double exact = double(iogate::testing::exact_percentile(sample.read_latencies, 99));
  CHECK(m.p99_latency_ns == doctest::Approx(exact).epsilon(0.01));
  CHECK(m.device_class == DeviceClass::kMixed);
  CHECK(m.leaf_classes == std::vector<DeviceClass>{DeviceClass::kNvme, DeviceClass::kHdd});
  CHECK(m.wrote_test_file);
  CHECK_FALSE(m.read_existing_files);
  CHECK_FALSE(m.read_block_device);
  CHECK(m.files_bytes == (uint64_t{1} << 30));
  CHECK(m.stop_reason == StopReason::kRuntime);
  CHECK(m.measured_s == doctest::Approx(10.0));

  auto mixed = iogate::testing::make_sample(true);
  Measurement mm = measurement_from_probe(mixed.result);
  double read_p99 = double(iogate::testing::exact_percentile(mixed.read_latencies, 99));
  double write_p99 = double(iogate::testing::exact_percentile(mixed.write_latencies, 99));
  CHECK(mm.p99_latency_ns == doctest::Approx(std::max(read_p99, write_p99)).epsilon(0.01));
  CHECK(write_p99 > read_p99);  // the sample's writes are slower: the larger one was taken
}

TEST_CASE("verdict JSON carries every check and the lists") {
  Verdict v = evaluate_policy(gpu_feed(), nvme(8120, 3.2), {2, "/data", {}});
  nlohmann::json j = verdict_to_json(v);
  CHECK(j["outcome"] == "fail");
  CHECK(j["mode"] == "enforce");
  CHECK(j["gpus"] == 2);
  CHECK(j["policy"] == "test.yaml");
  REQUIRE(j["checks"].size() == 3);
  const auto& c = j["checks"][0];
  for (const char* key : {"rule", "check", "measured", "threshold", "measured_value", "threshold_value", "passed"}) {
    CHECK_MESSAGE(c.contains(key), key);
  }
  CHECK(c["check"] == "min_iops");
  CHECK(c["threshold_value"] == 10000.0);
  CHECK(c["passed"] == false);
  CHECK(j["rules_not_applicable"].is_array());
  CHECK(j["caveats"].is_array());
}

TEST_CASE("the human verdict: one aligned line per check") {
  Verdict v = evaluate_policy(gpu_feed(), nvme(8120, 3.2), {2, "/data", {}});
  std::string text = render_verdict_human(v);
  CHECK(text.find("verdict  fail (enforce mode, 2 GPUs, policy test.yaml)\n") == 0);
  CHECK(text.find("RULE") != std::string::npos);
  CHECK(text.find("gpu-feed   min_iops            FAIL     8,120 IOPS   >= 10,000 IOPS (max of min_iops 10,000 and "
                  "5,000/GPU x 2 GPUs)\n") != std::string::npos);
  CHECK(text.find("max_p99_latency     pass     3.20 ms") != std::string::npos);
  CHECK(text.find("caveats") == std::string::npos);
}
