#include <doctest/doctest.h>

#include <atomic>

#include "measure/measurement_json.h"
#include "measure/measurement_plan.h"
#include "temp_tree.h"

using namespace iogate;

namespace {

Policy parse(const std::string& body) {
  auto p = parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\n" + body, "t.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

Result<MeasurementPlan> plan(const Policy& p, const std::string& path, int gpus, JudgedFor f = JudgedFor::kPod) {
  std::atomic<bool> stop{false};
  return plan_measurement(p, EvaluationContext{gpus, path, {}}, DeviceClass::kNvme, f, stop);
}

}  // namespace

TEST_CASE("plan_measurement: the policy's block I/O where no checkpoint rule applies") {
  auto r = plan(parse("rules:\n  - {name: a, min_iops: 1000}\n"), "/data", 8);
  REQUIRE(r.ok());
  CHECK(r->workload);
  CHECK(r->source == WorkloadSource::kBlockIo);
  CHECK_FALSE(r->checkpoint);
  CHECK_FALSE(r->synthetic);
}

TEST_CASE("plan_measurement: a checkpoint rule alone measures the checkpoint only, for the pod's ranks") {
  Policy p = parse("rules:\n  - {name: save, demand: {checkpoint: {size: 8g}}, forbidden_classes: [ram]}\n");
  auto r = plan(p, "/ckpt", 4);
  REQUIRE(r.ok());
  CHECK_FALSE(r->workload);
  REQUIRE(r->checkpoint);
  CHECK(r->checkpoint->ranks == 4);
  CHECK(r->checkpoint->max_rank_bytes == uint64_t{2} << 30);
  CHECK(r->checkpoint->directory == "/ckpt");
  // The node agent leaves checkpoints to preflight: it measures its workload.
  auto node = plan(p, "/ckpt", 4, JudgedFor::kNode);
  REQUIRE(node.ok());
  CHECK(node->workload);
  CHECK_FALSE(node->checkpoint);
}

TEST_CASE("plan_measurement: a checkpoint beside another check measures both; a selector keeps it off a path") {
  Policy p = parse(
      "rules:\n  - {name: save, demand: {checkpoint: {size: 1g}}, selector: {paths: [/ckpt]}}\n"
      "  - {name: read, min_iops: 1000}\n");
  auto both = plan(p, "/ckpt", 1);
  REQUIRE(both.ok());
  CHECK(both->workload);
  CHECK(both->checkpoint);
  auto data = plan(p, "/data", 1);
  REQUIRE(data.ok());
  CHECK(data->workload);
  CHECK_FALSE(data->checkpoint);
}

TEST_CASE("plan_measurement: auto reads a dataset where there is one, synthetic samples where not") {
  Policy p =
      parse("workload: {mode: auto}\nrules:\n  - {name: feed, demand: {samples_per_s: 100, sample_size: 64k}}\n");
  testing::TempTree empty;
  auto synthetic = plan(p, empty.root.string(), 1);
  REQUIRE(synthetic.ok());
  CHECK(synthetic->source == WorkloadSource::kSyntheticSamples);
  REQUIRE(synthetic->synthetic);
  CHECK(*synthetic->synthetic->sample_bytes == 64 * 1024);
  CHECK(planned_workload(p, *synthetic).block_size == 64 * 1024);

  testing::TempTree dataset;
  for (int i = 0; i < 120; ++i) dataset.write(std::to_string(i) + ".jpg", "x");
  auto files = plan(p, dataset.root.string(), 1);
  REQUIRE(files.ok());
  CHECK(files->source == WorkloadSource::kDataset);

  Policy no_demand = parse("workload: {mode: auto}\nrules:\n  - {name: n, min_samples_per_s: 10}\n");
  auto refused = plan(no_demand, empty.root.string(), 1);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == ErrorKind::kUsage);
  CHECK(refused.error().message == empty.root.string() +
                                       ": holds no dataset (fewer than 100 files) and no applicable rule states a "
                                       "demand to read synthetic samples for");
}

TEST_CASE("a measurement's checkpoint figures survive its JSON record; a mistyped one makes it unusable") {
  Measurement m;
  m.checkpoint = CheckpointFigures{};
  m.checkpoint->ranks = 8;
  m.checkpoint->save = {0.02, 150e6};
  m.checkpoint->restore = {0, 300e6};
  m.checkpoint->bytes_written = 1 << 30;
  m.checkpoint->extrapolated = false;
  nlohmann::json j = measurement_to_json(m);
  auto back = measurement_from_json(j);
  REQUIRE(back);
  REQUIRE(back->checkpoint);
  CHECK(back->checkpoint->ranks == 8);
  CHECK(back->checkpoint->save.fixed_s == 0.02);
  CHECK(back->checkpoint->save.bytes_per_s == 150e6);
  CHECK(back->checkpoint->restore.bytes_per_s == 300e6);
  CHECK(back->checkpoint->bytes_written == uint64_t{1} << 30);
  CHECK_FALSE(back->checkpoint->extrapolated);
  j["checkpoint"]["save"]["rank_bytes_per_s"] = "fast";
  CHECK_FALSE(measurement_from_json(j));
  CHECK_FALSE(measurement_from_json(measurement_to_json(Measurement{}))->checkpoint);
}
