#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/dataset_flags.h"
#include "cli/probe_command.h"

using namespace iogate;

namespace {
// parse_probe_args sets up the process's logger, which registers once per process.
Result<ProbeOptions> parse(std::vector<std::string> args) {
  spdlog::drop("iogate");
  std::string help;
  return parse_probe_args(args, &help);
}
}  // namespace

TEST_CASE("worker counts: one or a sweep list, each in range and once") {
  auto one = parse_worker_counts("8", "--workers");
  REQUIRE(one.ok());
  CHECK(*one == std::vector<int>{8});
  auto sweep = parse_worker_counts("1,2,4,8,16", "--workers");
  REQUIRE(sweep.ok());
  CHECK(*sweep == std::vector<int>{1, 2, 4, 8, 16});
  CHECK_FALSE(parse_worker_counts("0", "--workers").ok());
  CHECK_FALSE(parse_worker_counts("2,,4", "--workers").ok());
  CHECK_FALSE(parse_worker_counts("4,2,4", "--workers").ok());
  CHECK(parse_worker_counts("2,x", "--workers").error().message.rfind("--workers:", 0) == 0);
}

TEST_CASE("--mode dataset builds a dataset request from its flags") {
  auto o = parse({"--mode", "dataset", "/data", "--workers", "1,4", "--runtime", "3s", "--scan-time", "500ms",
                  "--scan-entries", "1000", "--sample", "50", "--seed", "9", "--target-samples-per-s", "2000"});
  REQUIRE_MESSAGE(o.ok(), o.error().message);
  REQUIRE(o->dataset);
  const DatasetRequest& r = *o->dataset;
  CHECK(r.path == "/data");
  CHECK(r.worker_counts == std::vector<int>{1, 4});
  CHECK(r.loader.runtime == std::chrono::seconds(3));
  CHECK(r.scan.time == std::chrono::milliseconds(500));
  CHECK(r.scan.entries == 1000);
  CHECK(r.scan.sample_size == 50);
  CHECK(*r.seed == 9);
  CHECK(*r.target_samples_per_s == 2000);
  CHECK_FALSE(r.loader.direct);  // buffered + DONTNEED unless asked
  auto direct = parse({"--mode", "dataset", "/data", "--direct"});
  REQUIRE(direct.ok());
  CHECK(direct->dataset->loader.direct);
  auto defaults = parse({"--mode", "dataset", "/data"});
  REQUIRE(defaults.ok());
  CHECK(defaults->dataset->worker_counts == std::vector<int>{default_loader_workers()});
}

TEST_CASE("the flags of one mode are refused in the other, by name") {
  CHECK(parse({"--mode", "dataset", "/data", "--iodepth", "4"})
            .error()
            .message.rfind("--iodepth: not used by --mode dataset", 0) == 0);
  CHECK(parse({"/data", "--sample", "10"}).error().message == "--sample: only with --mode dataset");
  CHECK(parse({"--mode", "blocks", "/data"}).error().message ==
        "--mode: expected io, dataset or checkpoint, got \"blocks\"");
  CHECK(parse({"--mode", "dataset", "/data", "--scan-entries", "0"}).error().kind == ErrorKind::kUsage);
}

TEST_CASE("--direct: 1/0/true/false in both modes, one parser, one message") {
  for (const char* mode : {"io", "dataset"}) {
    for (auto [text, want] :
         {std::pair{"1", true}, std::pair{"true", true}, std::pair{"0", false}, std::pair{"false", false}}) {
      auto o = parse({"--mode", mode, "/data", "--direct", text});
      REQUIRE_MESSAGE(o.ok(), o.error().message);
      CHECK((o->dataset ? o->dataset->loader.direct : o->workload.direct) == want);
    }
    for (const char* bad : {"yes", "no", "on", "off", "maybe", "2", "TRUE"}) {
      auto o = parse({"--mode", mode, "/data", "--direct", bad});
      REQUIRE_FALSE(o.ok());
      CHECK(o.error().kind == ErrorKind::kUsage);
      CHECK(o.error().message == fmt::format("--direct: expected 1 or 0 (true or false), got \"{}\"", bad));
    }
  }
}
