#include <doctest/doctest.h>

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
