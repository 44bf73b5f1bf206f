// The demand model: samples/s needed, predicted AU, accelerators sustained, the named MLPerf
// Storage workloads, the policy's demand block and the verdict's demand check.
#include <doctest/doctest.h>

#include <string>

#include "measure/measurement_from.h"
#include "measure/policy_probe.h"
#include "policy/demand.h"
#include "policy/evaluate.h"
#include "policy/policy.h"

using namespace iogate;

namespace {

Result<Policy> parse(const std::string& body) {
  return parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: enforce\n" + body, "t.yaml");
}

Demand per_gpu(double rate, double min_au = 0.90) {
  Demand d;
  d.samples_per_s = rate;
  d.min_au = min_au;
  return d;
}

Measurement samples_run(double samples_per_s, bool dataset = true) {
  Measurement m;
  m.dataset = dataset;
  m.samples = true;
  m.samples_per_s = samples_per_s;
  m.iops = samples_per_s;
  m.sample_bytes = 110e3;
  m.bandwidth_bytes_per_s = samples_per_s * 110e3;
  m.device_class = DeviceClass::kNvme;
  m.leaf_classes = {DeviceClass::kNvme};
  m.path = "/data";
  m.stop_reason = StopReason::kComplete;
  return m;
}

}  // namespace

TEST_CASE("AU is delivered over needed, capped at 1; accelerators sustained at the floor") {
  Demand d = per_gpu(2500);
  // The gp3 case: 1,160 samples/s for 2,500 images/s per GPU.
  CHECK(predicted_au(1160, samples_needed(d, 1)) == doctest::Approx(0.464));
  CHECK(predicted_au(1160, samples_needed(d, 4)) == doctest::Approx(0.116));
  CHECK(predicted_au(9000, samples_needed(d, 2)) == 1.0);
  CHECK(predicted_au(5, 0) == 1.0);
  CHECK(accelerators_sustained(d, 1160) == 0);
  // 4,500 samples/s (a SATA SSD at one read per file): one GPU at 2,500 needs 2,250 at AU 0.90.
  CHECK(accelerators_sustained(d, 4500) == 2);
  CHECK(accelerators_sustained(d, 2250) == 1);  // exactly the floor counts
  CHECK(accelerators_sustained(d, 2249) == 0);
  CHECK(accelerators_sustained(d, 0) == 0);
  CHECK(demand_accelerators(0) == 1);
  CHECK(demand_accelerators(8) == 8);
}

TEST_CASE("judge_demand's pass agrees with accelerators sustained and with AU >= floor") {
  Demand d = per_gpu(250);
  for (int n : {1, 2, 4, 8}) {
    for (double delivered : {50.0, 224.0, 225.0, 449.0, 450.0, 1000.0, 1800.0, 2000.0}) {
      DemandOutcome o = judge_demand(d, n, delivered);
      CHECK(o.passed == (o.accelerators_sustained >= n));
      CHECK(o.passed == (o.predicted_au >= d.min_au - 1e-9));
      CHECK(o.samples_per_s_needed == 250.0 * n);
    }
  }
}

TEST_CASE("MLPerf Storage's named workloads carry their published numbers") {
  const NamedWorkload* r = find_named_workload("resnet50", "h100");
  REQUIRE(r);
  CHECK(r->samples_per_s() == doctest::Approx(1785.7).epsilon(0.001));  // batch 400 / 0.224 s
  CHECK(r->record_bytes == 114660);
  CHECK(r->min_au == 0.90);
  CHECK(find_named_workload("resnet50", "a100")->samples_per_s() == doctest::Approx(919.5).epsilon(0.001));
  CHECK(find_named_workload("unet3d", "b200")->samples_per_s() == doctest::Approx(43.2).epsilon(0.001));
  CHECK(find_named_workload("cosmoflow", "h100")->min_au == 0.70);
  CHECK_FALSE(find_named_workload("resnet50", "b200"));  // no published config
  CHECK(named_workload_list() ==
        "resnet50 (a100, h100), unet3d (a100, h100, b200), cosmoflow (a100, h100), retinanet (a100, h100, b200, "
        "mi355), flux (b200, mi355), dlrm (b200, mi355)");
  // MLPerf Storage v3.0's: retinanet on B200, 24 a batch in 0.04755 s; scored, unlike A100 and H100.
  const NamedWorkload* retinanet = find_named_workload("retinanet", "b200");
  REQUIRE(retinanet);
  CHECK(retinanet->samples_per_s() == doctest::Approx(504.7).epsilon(0.001));
  CHECK(retinanet->record_bytes == 322957);
  CHECK(retinanet->min_au == 0.85);
  CHECK_FALSE(retinanet->what_if);
  CHECK(find_named_workload("retinanet", "h100")->what_if);
}

TEST_CASE("a rule's demand parses from numbers or a named workload, overridable field by field") {
  auto p = parse(
      "workload: {mode: auto}\nrules:\n  - name: feed\n    demand: {samples_per_s: 2500, sample_size: 110k, "
      "min_au: 85%}\n");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->workload_mode == WorkloadMode::kAuto);
  REQUIRE(p->rules[0].demand);
  CHECK(p->rules[0].demand->samples_per_s == 2500);
  CHECK(*p->rules[0].demand->sample_bytes == 110 * 1024);
  CHECK(p->rules[0].demand->min_au == doctest::Approx(0.85));

  auto named = parse(
      "workload: {mode: dataset}\nrules:\n  - name: feed\n    demand: {workload: cosmoflow, "
      "accelerator: a100, min_au: 0.8}\n");
  REQUIRE_MESSAGE(named.ok(), named.error().message);
  const Demand& d = *named->rules[0].demand;
  CHECK(d.workload == "cosmoflow");
  CHECK(d.samples_per_s == doctest::Approx(1 / 0.00551));
  CHECK(*d.sample_bytes == 2828486);
  CHECK(d.min_au == doctest::Approx(0.8));
  CHECK(demand_summary(d) == "cosmoflow on a100: 181 samples/s per accelerator");
}

TEST_CASE("a bad demand is refused with the field named") {
  auto check = [](const std::string& body, const std::string& message) {
    auto p = parse(body);
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().message == message);
  };
  check("workload: {mode: dataset}\nrules:\n  - name: r\n    demand: {sample_size: 4k}\n",
        "rules[0].demand.samples_per_s: missing; what one accelerator consumes at full utilisation (or name a "
        "workload and accelerator)");
  check("workload: {mode: dataset}\nrules:\n  - name: r\n    demand: {samples_per_s: fast}\n",
        "rules[0].demand.samples_per_s: expected a positive number of samples a second (at most 1e9), got \"fast\"");
  check("workload: {mode: dataset}\nrules:\n  - name: r\n    demand: {samples_per_s: 10, min_au: 1.5}\n",
        "rules[0].demand.min_au: expected a percentage like 3% or a fraction like 0.03, got \"1.5\"");
  check("workload: {mode: dataset}\nrules:\n  - name: r\n    demand: {workload: resnet50, accelerator: b200}\n",
        "rules[0].demand: no MLPerf Storage workload \"resnet50\" on \"b200\" (known: resnet50 (a100, h100), unet3d "
        "(a100, h100, b200), cosmoflow (a100, h100), retinanet (a100, h100, b200, mi355), flux (b200, mi355), "
        "dlrm (b200, mi355))");
  check("workload: {mode: dataset}\nrules:\n  - name: r\n    demand: {workload: resnet50}\n",
        "rules[0].demand.accelerator: missing; the workload's speed depends on it (resnet50 (a100, h100), unet3d "
        "(a100, h100, b200), cosmoflow (a100, h100), retinanet (a100, h100, b200, mi355), flux (b200, mi355), "
        "dlrm (b200, mi355))");
  check("workload: {mode: dataset}\nrules:\n  - name: r\n    demand: {samples_per_s: 10, samples: 3}\n",
        "rules[0].demand.samples: unknown key (did you mean \"samples_per_s\"?)");
  check("rules:\n  - name: r\n    demand: {samples_per_s: 10}\n",
        "rules[0].demand: needs workload.mode: auto or dataset");
  check("workload: {mode: auto}\nrules:\n  - name: r\n    demand: {samples_per_s: 10}\n",
        "rules[0].demand.sample_size: missing; workload.mode: auto reads synthetic samples of this size where the "
        "volume holds no dataset");
  check("workload: {mode: auto, bs: 4k}\nrules:\n  - name: r\n    demand: {samples_per_s: 10, sample_size: 4k}\n",
        "workload.bs: not used by mode: auto (its synthetic reads are one sample each, as many in flight as "
        "workers)");
  check("workload: {mode: auto}\nrules:\n  - name: r\n    min_iops: 10\n",
        "rules[0].min_iops: not measured by workload.mode: auto; use demand, min_samples_per_s or "
        "samples_per_s_per_gpu");
}

TEST_CASE("the demand check: predicted AU against the floor, for the pod's GPUs") {
  auto p = parse("workload: {mode: dataset}\nrules:\n  - name: feed\n    demand: {samples_per_s: 2500}\n");
  REQUIRE(p.ok());
  Verdict gp3 = evaluate_policy(*p, samples_run(1160), {1, "/data", {}});
  REQUIRE(gp3.checks.size() == 1);
  const RuleCheck& c = gp3.checks[0];
  CHECK(c.check == CheckKind::kDemand);
  CHECK(check_kind_name(c.check) == "demand");
  CHECK_FALSE(c.passed);
  CHECK(gp3.outcome == VerdictOutcome::kFail);
  REQUIRE(c.demand);
  CHECK(c.demand->predicted_au == doctest::Approx(0.464));
  CHECK(c.demand->accelerators_sustained == 0);
  CHECK(c.measured == "AU 0.46 (1,160 samples/s; sustains 0 GPUs)");
  CHECK(c.threshold == "AU >= 0.90 at 2,500 samples/s (2,500/GPU x 1 GPU)");
  nlohmann::json j = verdict_to_json(gp3);
  CHECK(j["checks"][0]["demand"]["predicted_au"].get<double>() == doctest::Approx(0.464));
  CHECK(j["checks"][0]["demand"]["samples_per_s_needed"] == 2500.0);
  CHECK(j["checks"][0]["demand"]["accelerators_sustained"] == 0);

  Verdict sata = evaluate_policy(*p, samples_run(4500), {2, "/data", {}});
  CHECK(sata.outcome == VerdictOutcome::kPass);
  CHECK(sata.checks[0].measured == "AU 0.90 (4,500 samples/s; sustains 2 GPUs)");
  Verdict eight = evaluate_policy(*p, samples_run(4500), {8, "/data", {}});
  CHECK(eight.outcome == VerdictOutcome::kFail);
  CHECK(eight.checks[0].demand->predicted_au == doctest::Approx(0.225));

  // A pod with no GPUs is judged for one, and told so.
  Verdict none = evaluate_policy(*p, samples_run(4500), {0, "/data", {}});
  CHECK(none.checks[0].demand->accelerators == 1);
  REQUIRE(none.caveats.size() == 1);
  CHECK(none.caveats[0].find("judged for one") != std::string::npos);

  // A 4 KiB block-I/O measurement measures no samples: it never passes a demand.
  Measurement block = samples_run(50000);
  block.samples = block.dataset = false;
  CHECK(evaluate_policy(*p, block, {1, "/data", {}}).outcome == VerdictOutcome::kFail);
}

namespace {

Demand sample_demand(uint64_t sample_bytes, std::optional<uint64_t> shard_bytes = std::nullopt) {
  Demand d;
  d.samples_per_s = 100;
  d.sample_bytes = sample_bytes;
  d.shard_bytes = shard_bytes;
  return d;
}

}  // namespace

TEST_CASE("synthetic samples: samples/s is the IOPS over the reads each sample takes") {
  ProbeResult r;
  r.workload.rw = RwMode::kRandRead;
  r.workload.block_size = 112 * 1024;
  r.measured_ns = 1'000'000'000;
  JobResult job;
  job.runtime_ns = 1'000'000'000;
  job.read.total_ios = 1600;
  job.read.io_bytes = 1600ull * 112 * 1024;
  r.jobs.push_back(job);
  Measurement m = measurement_from_synthetic_samples(r, sample_demand(110 * 1024));
  CHECK(m.samples);
  CHECK_FALSE(m.dataset);
  CHECK(m.samples_per_s == doctest::Approx(1600));
  r.workload.block_size = 1 << 20;
  Measurement big = measurement_from_synthetic_samples(r, sample_demand(3'000'000));  // 3 reads of 1 MiB a sample
  CHECK(big.samples_per_s == doctest::Approx(1600.0 / 3));
  // Records streamed out of shards: 1 MiB reads, 16 KiB records, 64 a read.
  Measurement shards = measurement_from_synthetic_samples(r, sample_demand(16 * 1024, 64 << 20));
  CHECK(shards.samples_per_s == doctest::Approx(1600.0 * 64));
}

TEST_CASE("shard-shaped demand: synthetic shards are sequential readers, one per worker; a dataset's bytes count") {
  auto p = parse(
      "workload: {mode: auto, workers: 4}\nrules:\n  - name: stream\n"
      "    demand: {samples_per_s: 50, sample_size: 16k, shard_size: 64m}\n");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  const Demand& d = *p->rules[0].demand;
  REQUIRE(d.shard_bytes);
  CHECK(*d.shard_bytes == uint64_t{64} << 20);
  Workload w = synthetic_sample_workload(*p, d);
  CHECK(w.rw == RwMode::kRead);
  CHECK(w.numjobs == 4);
  CHECK(w.iodepth == 1);
  CHECK(w.block_size == 1 << 20);
  CHECK(synthetic_reads_per_sample(d, w.block_size) == doctest::Approx(1.0 / 64));
  // Over a dataset of shard files (read whole by the loader), the bytes/s over the record.
  Measurement m;
  m.dataset = m.samples = true;
  m.samples_per_s = 2;  // files (shards) a second
  m.bandwidth_bytes_per_s = 128.0 * (1 << 20);
  CHECK(demand_delivered_samples_per_s(d, m) == doctest::Approx(8192));
  Verdict v = evaluate_policy(*p, m, {4, "/data", {}});
  REQUIRE(v.checks[0].demand);
  CHECK(v.checks[0].demand->samples_per_s_delivered == doctest::Approx(8192));
  CHECK(v.checks[0].passed);  // 8,192 >= 0.9 x 4 x 50
  auto bad = parse("workload: {mode: auto}\nrules:\n  - name: s\n    demand: {samples_per_s: 5, shard_size: 64m}\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "rules[0].demand.sample_size: missing; a shard's records are samples of this size (shard_size is given)");
  CHECK(is_shard_file_name("shard-000001.tar"));
  CHECK(is_shard_file_name("train-00001-of-01024.tfrecord"));
  CHECK(is_shard_file_name("part.parquet"));
  CHECK_FALSE(is_shard_file_name(".tar"));
  CHECK_FALSE(is_shard_file_name("img.jpg"));
  // MLPerf Storage's parquet workloads carry their shards.
  CHECK(*named_demand(*find_named_workload("flux", "b200")).shard_bytes == 288ull * 2'164'832);
}

TEST_CASE("the image-training profile judges AU; image-classification keeps its IOPS floor") {
  auto p = builtin_policy("image-training");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->workload_mode == WorkloadMode::kAuto);
  REQUIRE(p->rules.size() == 1);
  REQUIRE(p->rules[0].demand);
  CHECK(p->rules[0].demand->samples_per_s == 2500);
  CHECK(p->rules[0].demand->min_au == doctest::Approx(0.90));
  // The gp3 volume fails for one GPU (warn: the profile blocks nothing); the SATA SSD
  // (4,500 samples/s) passes for one.
  CHECK(p->mode == PolicyMode::kWarn);
  CHECK(evaluate_policy(*p, samples_run(1160), {1, "/data", {}}).outcome == VerdictOutcome::kWarn);
  CHECK(evaluate_policy(*p, samples_run(4500), {1, "/data", {}}).outcome == VerdictOutcome::kPass);
  CHECK(rule_iops_floor(*p, p->rules[0], 8).iops == 0);  // a demand is never a 4 KiB floor
}
