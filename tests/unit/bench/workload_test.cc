#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench/workload.h"

using namespace iogate;

TEST_CASE("rw modes round-trip with fio's names") {
  for (const char* name : {"randread", "randwrite", "read", "write", "randrw"}) {
    auto m = parse_rw_mode(name);
    REQUIRE(m.ok());
    CHECK(rw_mode_name(*m) == name);
  }
  auto bad = parse_rw_mode("randomread");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("--rw") == 0);
  CHECK(rw_mode_reads(RwMode::kRandRw));
  CHECK(rw_mode_writes(RwMode::kRandRw));
  CHECK_FALSE(rw_mode_writes(RwMode::kRead));
  CHECK_FALSE(rw_mode_random(RwMode::kWrite));
}

TEST_CASE("the defaults are valid") { CHECK(validate_workload(Workload{}).ok()); }

TEST_CASE("workload validation names the flag") {
  auto expect = [](Workload w, const char* flag) {
    Status s = validate_workload(w);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().kind == ErrorKind::kUsage);
    CHECK(s.error().message.find(flag) == 0);
  };
  Workload w;
  w.iodepth = 0;
  expect(w, "--iodepth");
  w = {};
  w.numjobs = 0;
  expect(w, "--numjobs");
  w = {};
  w.block_size = 100;
  expect(w, "--bs");
  w = {};
  w.rwmixread = 101;
  expect(w, "--rwmixread");
  w = {};
  w.runtime = std::chrono::milliseconds(10);
  expect(w, "--runtime");
  w = {};
  w.size = 4096;
  w.numjobs = 2;
  expect(w, "--size");
  w = {};
  w.file = "/etc/hostname";
  w.rw = RwMode::kRandWrite;
  expect(w, "--file");
}

TEST_CASE("block size must be a multiple of the O_DIRECT alignment") {
  Workload w;
  w.block_size = 1000;
  Status s = validate_alignment(w, 512, "/data");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().kind == ErrorKind::kUsage);
  CHECK(s.error().message ==
        "--bs: 1000 bytes is not a multiple of /data's direct I/O alignment (512 bytes); use a multiple of 512 or "
        "--direct=0");
  w.block_size = 4096;
  CHECK(validate_alignment(w, 512, "/data").ok());
  CHECK(validate_alignment(w, 4096, "/data").ok());
  w.block_size = 2048;
  CHECK_FALSE(validate_alignment(w, 4096, "/data").ok());
  w.direct = false;
  CHECK(validate_alignment(w, 4096, "/data").ok());
}

TEST_CASE("each caller spells the fields its own way; the message is the same") {
  Workload w;
  w.size = 4096;
  w.numjobs = 2;
  CHECK(validate_workload(w).error().message == "--size: 4k is smaller than --bs × --numjobs (4k × 2)");
  CHECK(validate_workload(w, policy_spelling).error().message ==
        "workload.size: 4k is smaller than workload.bs × workload.numjobs (4k × 2)");
  w = {};
  w.iodepth_batch = 64;
  CHECK(validate_workload(w).error().message == "--iodepth-batch: must be in [1, --iodepth (32)], got 64");
  w = {};
  w.iodepth = kIodepthRange.max + 1;
  CHECK(validate_workload(w).error().message == "--iodepth: must be in [1, 4096], got 4097");
  w = {};
  w.iodepth = 4096;
  w.numjobs = 256;
  CHECK(validate_workload(w).ok());  // exactly 4 GiB in 4k blocks
  w.block_size = 8192;
  CHECK(validate_workload(w).error().message == "--iodepth × --numjobs × --bs: more than 4 GiB of buffers in flight");
}

// The chart validates a policy's workload before the binary sees it: the same limits.
TEST_CASE("the chart's values.schema.json has the workload's limits") {
  auto path = std::filesystem::path(__FILE__).parent_path() / "../../../charts/iogate/values.schema.json";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path.string());
  nlohmann::json schema = nlohmann::json::parse(in);
  const nlohmann::json& w = schema["properties"]["policy"]["properties"]["workload"]["properties"];
  for (auto [key, range] : {std::pair{"iodepth", kIodepthRange}, std::pair{"numjobs", kNumjobsRange},
                            std::pair{"rwmixread", kRwmixreadRange}}) {
    CAPTURE(key);
    CHECK(w[key]["minimum"].get<int64_t>() == range.min);
    CHECK(w[key]["maximum"].get<int64_t>() == range.max);
  }
}
