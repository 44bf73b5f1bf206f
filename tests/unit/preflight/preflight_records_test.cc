#include <doctest/doctest.h>

#include <string>

#include "preflight/preflight_records.h"

using namespace iogate;

namespace {

Policy gpu_feed() {
  auto p = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: enforce\nrules:\n  - name: gpu-feed\n    min_iops: 10000\n"
      "    min_iops_per_gpu: 5000\n    max_p99_latency: 5ms\n    forbidden_classes: [hdd]\n",
      "policy.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

PathResult judged(const Policy& p, const std::string& path, double iops, int gpus) {
  PathResult r;
  r.path = path;
  r.source = ResultSource::kProbe;
  r.measurement.iops = iops;
  r.measurement.p99_latency_ns = 812'345;
  r.measurement.bandwidth_bytes_per_s = iops * 4096;
  r.measurement.device_class = DeviceClass::kCloudBlock;
  r.measurement.leaf_classes = {DeviceClass::kCloudBlock};
  r.measurement.wrote_test_file = true;
  r.measurement.measured_s = 2.1;
  r.measurement.stop_reason = StopReason::kAboveThreshold;
  r.verdict = evaluate_policy(p, r.measurement, EvaluationContext{gpus, path, {}});
  return r;
}

PreflightSummary summary(const Policy& p, std::vector<PathResult> results, PodVerdict outcome) {
  PreflightSummary s;
  s.time = "2026-12-02T10:00:00Z";
  s.outcome = outcome;
  s.policy = &p;
  s.pod_namespace = "ml";
  s.pod_name = "train-0";
  s.node_name = "gpu-1";
  s.gpus = 2;
  s.gpus_from = "pod";
  s.api = "ok";
  s.results = std::move(results);
  return s;
}

}  // namespace

TEST_CASE("a pass: integer annotations, a compact report and a Normal Event with the numbers") {
  Policy p = gpu_feed();
  PreflightSummary s = summary(p, {judged(p, "/data", 52300.4, 2)}, PodVerdict::kPass);
  MetadataChanges a = pod_annotations(s);
  CHECK(a.at("iogate.io/verdict") == "pass");
  CHECK(a.at("iogate.io/randread-iops") == "52300");
  CHECK(a.at("iogate.io/p99-latency-us") == "812");
  CHECK(a.at("iogate.io/device-class") == "cloud-block");
  auto report = nlohmann::json::parse(*a.at("iogate.io/report"));
  CHECK(report["outcome"] == "pass");
  CHECK(report["gpus"] == 2);
  CHECK(report["paths"][0]["iops"] == 52300);
  CHECK(report["paths"][0]["checks"].size() == s.results[0].verdict.checks.size());
  CHECK_FALSE(report["caveats"].empty());  // cloud-block: burst credits, snapshots
  EventText e = pod_event_text(s);
  CHECK(e.type == "Normal");
  CHECK(e.reason == "StoragePolicyMet");
  CHECK(e.note.find("52,300 IOPS") != std::string::npos);
  CHECK(e.note.find("gpu-feed") != std::string::npos);
  CHECK(e.note.find("2 GPUs") != std::string::npos);
}

TEST_CASE("a fail: the failing path decides, and the Warning names rule, check and threshold") {
  Policy p = gpu_feed();
  // 2 GPUs: floor max(10,000, 2 x 5,000) = 10,000; /slow fails it, /fast passes.
  PreflightSummary s = summary(p, {judged(p, "/fast", 90000, 2), judged(p, "/slow", 8120, 2)}, PodVerdict::kFail);
  REQUIRE(deciding_result(s) == &s.results[1]);
  MetadataChanges a = pod_annotations(s);
  CHECK(a.at("iogate.io/verdict") == "fail");
  CHECK(a.at("iogate.io/randread-iops") == "8120");
  EventText e = pod_event_text(s);
  CHECK(e.type == "Warning");
  CHECK(e.reason == "StorageBelowPolicy");
  CHECK(e.note.find("/slow") != std::string::npos);
  CHECK(e.note.find("rule gpu-feed min_iops") != std::string::npos);
  CHECK(e.note.find("10,000") != std::string::npos);
}

TEST_CASE("without a failure the slowest path decides; an error has its own Event") {
  Policy p = gpu_feed();
  PreflightSummary s = summary(p, {judged(p, "/a", 90000, 1), judged(p, "/b", 40000, 1)}, PodVerdict::kPass);
  CHECK(deciding_result(s) == &s.results[1]);
  PreflightSummary err = summary(p, {}, PodVerdict::kError);
  err.error = "deadline 60s reached while probing /data";
  CHECK(pod_annotations(err).at("iogate.io/verdict") == "error");
  CHECK_FALSE(pod_annotations(err).count("iogate.io/randread-iops"));
  EventText e = pod_event_text(err);
  CHECK(e.type == "Warning");
  CHECK(e.reason == "StoragePreflightFailed");
  CHECK(e.note.find("deadline 60s") != std::string::npos);
}

TEST_CASE("a non-randread workload never poses as a randread figure") {
  Policy p = gpu_feed();
  PathResult r = judged(p, "/video", 500, 1);
  r.measurement.rw = RwMode::kRead;
  r.measurement.block_size = 1 << 20;
  PreflightSummary s = summary(p, {r}, PodVerdict::kPass);
  MetadataChanges a = pod_annotations(s);
  REQUIRE(a.count("iogate.io/randread-iops"));
  CHECK_FALSE(a.at("iogate.io/randread-iops"));  // removed
}

TEST_CASE("the report annotation stays within its size, dropping caveats and passing checks first") {
  Policy p = gpu_feed();
  std::vector<PathResult> many;
  for (int i = 0; i < 400; ++i) many.push_back(judged(p, "/data/shard-" + std::to_string(i), 20000 + i, 1));
  PreflightSummary s = summary(p, many, PodVerdict::kPass);
  std::string text = compact_report(s);
  CHECK(text.size() <= kReportAnnotationMaxBytes);
  auto j = nlohmann::json::parse(text);
  CHECK(j["truncated"] == true);
  CHECK(j["caveats"].empty());
  CHECK(j["paths"][0]["checks"].empty());
  PreflightSummary small = summary(p, {judged(p, "/data", 20000, 1)}, PodVerdict::kPass);
  CHECK_FALSE(nlohmann::json::parse(compact_report(small)).contains("truncated"));
}

TEST_CASE("the JSON report: schema, policy, pod, results with measurement and verdict") {
  Policy p = gpu_feed();
  PreflightSummary s = summary(p, {judged(p, "/data", 52300, 2)}, PodVerdict::kPass);
  s.results[0].pvc = "imagenet";
  nlohmann::json j = preflight_report_json(s);
  CHECK(j["schema"] == kPreflightSchema);
  CHECK(j["outcome"] == "pass");
  CHECK(j["policy"]["mode"] == "enforce");
  CHECK(j["policy"]["on_error"] == "fail-closed");
  CHECK(j["policy"]["deadline_ns"] == 60'000'000'000LL);
  CHECK(j["pod"]["name"] == "train-0");
  CHECK(j["results"][0]["pvc"] == "imagenet");
  CHECK(j["results"][0]["measurement"]["iops"] == 52300);
  CHECK(j["results"][0]["verdict"]["outcome"] == "pass");
  CHECK(j["results"][0]["report"] == nlohmann::json::object());
  std::string human = render_preflight_human(s);
  CHECK(human.find("verdict  pass") != std::string::npos);
  CHECK(human.find("gpu-feed") != std::string::npos);
}
