#include <doctest/doctest.h>

#include "policy/evaluate.h"
#include "policy/policy.h"

using namespace iogate;
using namespace std::chrono_literals;

namespace {

const char kHeader[] = "apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: enforce\n";

Policy parse(const std::string& rules) {
  auto p = parse_policy(std::string(kHeader) + rules, "t.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

std::string parse_error(const std::string& rules) {
  auto p = parse_policy(std::string(kHeader) + rules, "t.yaml");
  REQUIRE(!p.ok());
  CHECK(p.error().kind == ErrorKind::kUsage);
  return p.error().message;
}

// 100 MB/s a rank, 0.1 s fixed; restore 200 MB/s a rank.
CheckpointFigures figures(int ranks) {
  CheckpointFigures f;
  f.ranks = ranks;
  f.save = {0.1, 100e6};
  f.restore = {0, 200e6};
  return f;
}

}  // namespace

TEST_CASE("checkpoint demand: a size, an interval, a stall budget and a restore budget") {
  Policy p = parse(
      "rules:\n  - name: ckpt\n    demand: {checkpoint: {size: 1g, interval: 10m, max_stall: 2%, max_restore: 1m}}\n");
  REQUIRE(p.rules[0].checkpoint);
  CHECK_FALSE(p.rules[0].demand);
  const CheckpointDemand& d = *p.rules[0].checkpoint;
  CHECK(d.size_bytes == uint64_t{1} << 30);
  CHECK(d.interval == 10min);
  CHECK(d.max_stall == doctest::Approx(0.02));
  REQUIRE(d.max_restore);
  CHECK(*d.max_restore == 1min);
  CHECK(checkpoint_rank_bytes(d, 4) == (uint64_t{1} << 30) / 4);
  CHECK(checkpoint_pod_bytes(d, 4) == uint64_t{1} << 30);
}

TEST_CASE("checkpoint demand: a named MLPerf Storage model, alone or with its settings") {
  Policy p = parse(
      "rules:\n  - name: a\n    demand: {workload: llama3-70b}\n"
      "  - name: b\n    demand: {checkpoint: {workload: llama3-8b, interval: 1h}}\n");
  const CheckpointDemand& a = *p.rules[0].checkpoint;
  CHECK(a.workload == "llama3-70b");
  CHECK(a.interval == kDefaultCheckpointInterval);
  CHECK(a.max_stall == kDefaultMaxStall);
  // 912 GiB from 64 ranks; a pod of 8 GPUs writes its 8 ranks' share.
  CHECK(checkpoint_rank_bytes(a, 8) == (uint64_t{912} << 30) / 64);
  CHECK(checkpoint_pod_bytes(a, 8) == (uint64_t{912} << 30) / 64 * 8);
  const CheckpointDemand& b = *p.rules[1].checkpoint;
  CHECK(b.workload == "llama3-8b");
  CHECK(b.interval == 1h);
  CHECK(checkpoint_rank_bytes(b, 1) == (uint64_t{105} << 30) / 8);
}

TEST_CASE("checkpoint demand: errors name the field") {
  CHECK(parse_error("rules:\n  - name: a\n    demand: {checkpoint: {interval: 10m}}\n")
            .starts_with("rules[0].demand.checkpoint.size: missing;"));
  CHECK(parse_error("rules:\n  - name: a\n    demand: {checkpoint: {workload: llama3-9b}}\n") ==
        "rules[0].demand.checkpoint.workload: no MLPerf Storage checkpoint workload \"llama3-9b\" (known: "
        "llama3-8b, llama3-70b, llama3-405b, llama3-1t)");
  CHECK(parse_error("rules:\n  - name: a\n    demand: {checkpoint: {workload: llama3-8b, size: 1g}}\n") ==
        "rules[0].demand.checkpoint.size: the named workload sets the size; give one or the other");
  CHECK(parse_error("rules:\n  - name: a\n    demand: {checkpoint: {size: 1g, max_stall: 2}}\n")
            .starts_with("rules[0].demand.checkpoint.max_stall:"));
  CHECK(parse_error("rules:\n  - name: a\n    demand: {checkpoint: {size: 1g}, min_au: 0.9}\n")
            .starts_with("rules[0].demand.min_au: not part of a checkpoint demand"));
  CHECK(parse_error("rules:\n  - name: a\n    demand: {checkpoint: {size: 1g, intervall: 5m}}\n")
            .find("rules[0].demand.checkpoint.intervall") != std::string::npos);
}

TEST_CASE("judge_checkpoint: save time, stall, restore and what fits the budget") {
  CheckpointDemand d;
  d.size_bytes = 2'000'000'000;  // 1 GB a rank from 2 GPUs
  d.interval = 100s;
  d.max_stall = 0.05;
  CheckpointOutcome o = judge_checkpoint(d, 2, figures(2));
  CHECK(o.ranks == 2);
  CHECK(o.rank_bytes == 1'000'000'000);
  CHECK(o.save_seconds == doctest::Approx(10.1));
  CHECK(o.stall_fraction == doctest::Approx(0.101));
  CHECK_FALSE(o.passed);
  REQUIRE(o.restore_seconds);
  CHECK(*o.restore_seconds == doctest::Approx(5.0));
  // 5 s of stall: 4.9 s of writing a rank at 100 MB/s, two ranks.
  CHECK(o.largest_bytes == 2 * 490'000'000);
  CHECK(o.min_interval_s == doctest::Approx(202));
  d.interval = 300s;
  CHECK(judge_checkpoint(d, 2, figures(2)).passed);
  d.max_restore = 4s;
  CHECK_FALSE(judge_checkpoint(d, 2, figures(2)).passed);  // the restore is over its budget
}

TEST_CASE("evaluate_policy: a checkpoint check reads the checkpoint figures; without them it fails, saying why") {
  Policy p = parse("rules:\n  - name: ckpt\n    demand: {checkpoint: {size: 2000000000, interval: 5m}}\n");
  Measurement m;
  m.checkpoint = figures(2);
  EvaluationContext ctx{2, "/ckpt", {}};
  Verdict v = evaluate_policy(p, m, ctx);
  REQUIRE(v.checks.size() == 1);
  const RuleCheck& c = v.checks[0];
  CHECK(c.check == CheckKind::kCheckpoint);
  CHECK(c.passed);
  REQUIRE(c.checkpoint);
  CHECK(c.measured == "save 10.10 s every 5m: stall 3.4%; restore 5.00 s");
  CHECK(c.threshold == "stall <= 5% of 5m (1.86 GiB from 2 ranks)");
  nlohmann::json j = verdict_to_json(v)["checks"][0];
  CHECK(j["check"] == "checkpoint");
  CHECK(j["save_seconds"].get<double>() == doctest::Approx(10.1));
  CHECK(j["stall_fraction"].get<double>() == doctest::Approx(10.1 / 300));
  CHECK(j["restore_seconds"].get<double>() == doctest::Approx(5.0));

  Measurement read_only;
  read_only.checkpoint = CheckpointFigures{};
  read_only.checkpoint->read_only = true;
  read_only.checkpoint->note = "the volume is read-only; a checkpoint cannot be saved there";
  Verdict r = evaluate_policy(p, read_only, ctx);
  CHECK_FALSE(r.checks[0].passed);
  CHECK(r.checks[0].measured == "not measured: the volume is read-only; a checkpoint cannot be saved there");
  CHECK(r.outcome == VerdictOutcome::kFail);
  CHECK_FALSE(evaluate_policy(p, Measurement{}, ctx).checks[0].passed);
}
