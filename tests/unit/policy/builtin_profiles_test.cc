#include <doctest/doctest.h>

#include <string>

#include "policy/evaluate.h"
#include "policy/policy.h"
#include "policy/policy_render.h"

using namespace iogate;
using namespace std::chrono_literals;

TEST_CASE("every built-in profile loads, validates and has a summary and reasoning") {
  auto names = builtin_profile_names();
  CHECK(names.size() >= 4);
  for (const std::string& name : names) {
    CAPTURE(name);
    auto p = builtin_policy(name);
    REQUIRE_MESSAGE(p.ok(), p.error().message);
    CHECK(p->source == "profile:" + name);
    CHECK(p->profile == name);
    CHECK(p->name == name);
    CHECK_FALSE(p->rules.empty());
    CHECK(validate_workload(p->workload).ok());
    CHECK(p->deadline >= p->workload.ramp + p->workload.runtime);
    CHECK_FALSE(builtin_profile_summary(name).empty());
    auto text = builtin_profile_text(name);
    REQUIRE(text.ok());
    CHECK(text->find("# ") != std::string::npos);  // the reasoning, as comments
    auto prefixed = builtin_policy("profile:" + name);
    REQUIRE(prefixed.ok());
    CHECK(prefixed->rules.size() == p->rules.size());
  }
  auto unknown = builtin_policy("imagenet");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().kind == ErrorKind::kUsage);
  CHECK(builtin_profile_summary("imagenet").empty());
}

TEST_CASE("image-classification: 4k randread >= 10,000 IOPS, growing 2,500 a GPU") {
  auto p = builtin_policy("image-classification");
  REQUIRE(p.ok());
  CHECK(p->workload.rw == RwMode::kRandRead);
  CHECK(p->workload.block_size == 4096);
  CHECK(p->workload.iodepth == 32);
  const Rule& r = p->rules.at(0);
  CHECK(effective_min_iops(r, 1) == 10000);
  CHECK(effective_min_iops(r, 8) == 20000);
  CHECK(r.max_p99_latency_ns == 20'000'000u);
  CHECK(r.forbidden_classes == std::vector<DeviceClass>{DeviceClass::kHdd});
}

TEST_CASE("streaming and llm-pretraining: shard streams judged in AU") {
  auto p = builtin_policy("streaming");
  REQUIRE(p.ok());
  CHECK(p->workload_mode == WorkloadMode::kAuto);
  REQUIRE(p->rules.at(0).demand);
  const Demand& d = *p->rules.at(0).demand;
  CHECK(d.samples_per_s == 16);
  CHECK(*d.sample_bytes == 3750 * 1024);
  CHECK(*d.shard_bytes == uint64_t{1} << 30);
  // 16 clips/s of 3.75 MB: ~60 MB/s a GPU, as the profile's comment says.
  CHECK(samples_needed(d, 8) * double(*d.sample_bytes) == doctest::Approx(491.5e6).epsilon(0.001));
  auto l = builtin_policy("llm-pretraining");
  REQUIRE(l.ok());
  const Demand& t = *l->rules.at(0).demand;
  CHECK(*t.sample_bytes == 32 * 1024);
  CHECK(*t.shard_bytes == uint64_t{64} << 20);
  // 40% of 989 TFLOPS over 6 x 8e9 FLOPs a token, in 8,192-token sequences: ~1.0 a second.
  CHECK(0.40 * 989e12 / (6 * 8e9) / 8192 == doctest::Approx(t.samples_per_s).epsilon(0.01));
}

TEST_CASE("checkpointing judges a save's stall; llm-pretraining reads 16 KiB samples") {
  auto c = builtin_policy("checkpointing");
  REQUIRE(c.ok());
  REQUIRE(c->rules.at(0).checkpoint);
  const CheckpointDemand& d = *c->rules.at(0).checkpoint;
  CHECK(d.workload == "llama3-8b");
  CHECK(d.interval == std::chrono::minutes(30));
  CHECK(d.max_stall == doctest::Approx(0.05));
  // 13.1 GiB a rank in 90 s: ~156 MB/s a rank, as the profile's comment says.
  CHECK(double(checkpoint_rank_bytes(d, 8)) / 90 == doctest::Approx(156.6e6).epsilon(0.001));
  CHECK_FALSE(c->rules.at(0).min_bandwidth_bytes_per_s);
  CHECK(c->rules.at(0).forbidden_classes == std::vector<DeviceClass>{DeviceClass::kRam});
}

TEST_CASE("the effective policy as JSON: defaults filled in, per-GPU floors resolved only with a GPU count") {
  auto p = builtin_policy("image-classification");
  REQUIRE(p.ok());
  nlohmann::json with = policy_to_json(*p, 8);
  CHECK(with["apiVersion"] == "iogate.io/v1");
  CHECK(with["kind"] == "StoragePolicy");
  CHECK(with["mode"] == "warn");  // a profile names no mode: it blocks nothing
  CHECK(with["on_error"] == "fail-closed");
  CHECK(with["deadline_ns"] == 60'000'000'000LL);
  CHECK(with["result_ttl_ns"] == 3'600'000'000'000LL);
  CHECK(with["workload"]["bs_bytes"] == 4096);
  CHECK(with["workload"]["runtime_ns"] == 10'000'000'000LL);
  CHECK(with["early_stop"]["tolerance"] == 0.03);
  CHECK(with["gpus"] == 8);
  CHECK(with["rules"][0]["effective_min_iops"] == 20000.0);
  CHECK(with["rules"][0]["min_iops_per_gpu"] == 2500);
  CHECK(with["rules"][0]["forbidden_classes"] == nlohmann::json::array({"hdd"}));
  nlohmann::json without = policy_to_json(*p, std::nullopt);
  CHECK(without["gpus"].is_null());
  CHECK_FALSE(without["rules"][0].contains("effective_min_iops"));
}

TEST_CASE("the effective policy for humans") {
  auto p = builtin_policy("image-classification");
  REQUIRE(p.ok());
  std::string with = render_policy_human(*p, 8);
  CHECK(with.find("policy      profile:image-classification: valid\n") == 0);
  CHECK(with.find("mode        warn, on_error fail-closed, deadline 60s\n") != std::string::npos);
  CHECK(with.find("randread bs=4k iodepth=32 numjobs=1 size=256m ramp 1s, runtime up to 10s") != std::string::npos);
  CHECK(with.find(">= 20,000 IOPS (max of min_iops 10,000 and 2,500/GPU x 8 GPUs)") != std::string::npos);
  std::string without = render_policy_human(*p, std::nullopt);
  CHECK(without.find(">= max(10,000, 2,500/GPU x GPUs) IOPS") != std::string::npos);
  CHECK(without.find("not given") != std::string::npos);
  auto s = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nworkload: {rw: read, bs: 1m}\n"
      "rules: [{name: seq, min_bandwidth: 500MB/s, min_bandwidth_per_gpu: 60MB/s}]\n",
      "s.yaml");
  REQUIRE(s.ok());
  CHECK(render_policy_human(*s, 10).find(">= 600 MB/s (max of min_bandwidth 500 MB/s and 60 MB/s per GPU x 10 GPUs)") !=
        std::string::npos);
  CHECK(render_policy_human(*s, std::nullopt).find(">= max(500 MB/s, 60 MB/s per GPU x GPUs)") != std::string::npos);
}
