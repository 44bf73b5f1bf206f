#include <doctest/doctest.h>

#include <string>

#include "measure/measurement_from.h"
#include "policy/evaluate.h"

using namespace iogate;

namespace {

Result<Policy> parse(const std::string& body) {
  return parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: enforce\n" + body, "t.yaml");
}

const char* kDatasetPolicy =
    "workload:\n  mode: dataset\n  workers: 6\n  sample: 5000\n  scan_time: 5s\n  scan_entries: 100000\n"
    "  runtime: 20s\n"
    "rules:\n  - name: feed\n    min_samples_per_s: 2000\n    samples_per_s_per_gpu: 800\n"
    "    min_bandwidth: 100MB/s\n    forbidden_classes: [hdd]\n";

Measurement dataset_run(double samples_per_s) {
  Measurement m;
  m.dataset = true;
  m.samples = true;
  m.samples_per_s = samples_per_s;
  m.iops = samples_per_s;
  m.bandwidth_bytes_per_s = samples_per_s * 110e3;
  m.p99_latency_ns = 3e6;
  m.device_class = DeviceClass::kNvme;
  m.leaf_classes = {DeviceClass::kNvme};
  m.path = "/data";
  m.read_only = m.read_existing_files = true;
  m.stop_reason = StopReason::kComplete;
  return m;
}

}  // namespace

TEST_CASE("workload.mode dataset and its keys parse") {
  auto p = parse(kDatasetPolicy);
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->workload_mode == WorkloadMode::kDataset);
  CHECK(p->dataset.workers == 6);
  CHECK(p->dataset.sample == 5000);
  CHECK(p->dataset.scan_time == std::chrono::seconds(5));
  CHECK(p->dataset.scan_entries == 100000);
  CHECK(p->workload.runtime == std::chrono::seconds(20));
  CHECK(*p->rules[0].min_samples_per_s == 2000);
  CHECK(*p->rules[0].samples_per_s_per_gpu == 800);
  CHECK_FALSE(iops_floor(*p, {4, "/data", {}}, DeviceClass::kNvme));  // no early stop in a dataset run
  CHECK(rule_iops_floor(*p, p->rules[0], 4).iops == 0);               // samples/s are not IOPS
}

TEST_CASE("each workload mode refuses the other's keys and checks, naming the field") {
  auto bs = parse("workload:\n  mode: dataset\n  bs: 4k\nrules:\n  - name: r\n    min_samples_per_s: 1\n");
  REQUIRE_FALSE(bs.ok());
  CHECK(bs.error().message == "workload.bs: not used by mode: dataset (it reads whole files)");
  auto workers = parse("workload:\n  workers: 4\nrules:\n  - name: r\n    min_iops: 1\n");
  REQUIRE_FALSE(workers.ok());
  CHECK(workers.error().message == "workload.workers: only with mode: dataset or auto");
  auto iops = parse("workload:\n  mode: dataset\nrules:\n  - name: r\n    min_iops: 100\n");
  REQUIRE_FALSE(iops.ok());
  CHECK(iops.error().message.rfind("rules[0].min_iops: not measured by workload.mode: dataset", 0) == 0);
  auto samples = parse("rules:\n  - name: r\n    min_samples_per_s: 100\n");
  REQUIRE_FALSE(samples.ok());
  CHECK(samples.error().message == "rules[0].min_samples_per_s: needs workload.mode: auto or dataset");
  auto mode = parse("workload:\n  mode: files\nrules:\n  - name: r\n    min_iops: 1\n");
  REQUIRE_FALSE(mode.ok());
  CHECK(mode.error().message.rfind("workload.mode: expected io, dataset or auto", 0) == 0);
  auto bad = parse("workload:\n  mode: dataset\nrules:\n  - name: r\n    min_samples_per_s: fast\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.rfind("rules[0].min_samples_per_s:", 0) == 0);
  auto deadline = parse(
      "deadline: 10s\nworkload:\n  mode: dataset\n  scan_time: 8s\n  runtime: 5s\n"
      "rules:\n  - name: r\n    min_samples_per_s: 1\n");
  REQUIRE_FALSE(deadline.ok());
  CHECK(deadline.error().message.find("workload.scan_time + workload.runtime") != std::string::npos);
}

TEST_CASE("the samples/s floor is max(min_samples_per_s, per GPU x GPUs)") {
  auto p = parse(kDatasetPolicy);
  REQUIRE(p.ok());
  const Rule& r = p->rules[0];
  CHECK(effective_min_samples_per_s(r, 0) == 2000);
  CHECK(effective_min_samples_per_s(r, 2) == 2000);
  CHECK(effective_min_samples_per_s(r, 4) == 3200);
  CHECK(min_samples_text(r, 4) == ">= 3,200 samples/s (max of min_samples_per_s 2,000 and 800/GPU x 4 GPUs)");
}

TEST_CASE("a dataset measurement is judged on samples/s with the other checks") {
  auto p = parse(kDatasetPolicy);
  REQUIRE(p.ok());
  Verdict pass = evaluate_policy(*p, dataset_run(3500), {4, "/data", {}});
  CHECK(pass.outcome == VerdictOutcome::kPass);
  REQUIRE(pass.checks.size() == 3);
  const RuleCheck& samples = pass.checks[1];  // after min_bandwidth, before the class checks
  CHECK(check_kind_name(samples.check) == "min_samples_per_s");
  CHECK(samples.threshold_value == 3200);
  CHECK(samples.measured == "3,500 samples/s");
  CHECK(samples.passed);
  Verdict fail = evaluate_policy(*p, dataset_run(3000), {4, "/data", {}});
  CHECK(fail.outcome == VerdictOutcome::kFail);
  REQUIRE(fail.first_failure());
  CHECK(fail.first_failure()->check == CheckKind::kMinSamplesPerS);
  CHECK(measurement_figures(dataset_run(3000)).rfind("dataset: 3,000 samples/s", 0) == 0);
}

TEST_CASE("only a per-GPU samples floor and no GPUs: a caveat says the floor is 0") {
  auto p = parse("workload:\n  mode: dataset\nrules:\n  - name: feed\n    samples_per_s_per_gpu: 800\n");
  REQUIRE(p.ok());
  Verdict v = evaluate_policy(*p, dataset_run(10), {0, "/data", {}});
  CHECK(v.outcome == VerdictOutcome::kPass);
  bool found = false;
  for (const std::string& c : v.caveats) found = found || c.find("samples_per_s_per_gpu") != std::string::npos;
  CHECK(found);
}

TEST_CASE("a dataset probe result becomes a measurement from its headline run") {
  DatasetProbeResult r;
  r.path = "/data";
  r.storage.device_class = DeviceClass::kNetworkFs;
  r.stop_reason = StopReason::kComplete;
  LoaderRun slow, fast;
  slow.workers = 1;
  slow.files_read = 100;
  slow.elapsed_ns = 1'000'000'000;
  fast = slow;
  fast.workers = 4;
  fast.files_read = 300;
  fast.bytes_read = 3000;
  fast.file_ns.record(2'000'000);
  r.sweep = {slow, fast};
  r.headline = 1;
  Measurement m = measurement_from_dataset(r);
  CHECK(m.dataset);
  CHECK(m.samples_per_s == doctest::Approx(300));
  CHECK(m.bandwidth_bytes_per_s == doctest::Approx(3000));
  CHECK(m.device_class == DeviceClass::kNetworkFs);
  CHECK(m.p99_latency_ns == doctest::Approx(2e6).epsilon(0.01));
}
