#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "probe/workload.h"
#include "source_tree.h"

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

TEST_CASE("every workload field has one row, and its default reads back as itself") {
  std::set<WorkloadField> seen;
  for (const WorkloadFieldInfo& f : workload_fields()) {
    CAPTURE(workload_field_name(f.field));
    CHECK(seen.insert(f.field).second);
    CHECK_FALSE(f.help.empty());
    const Workload defaults;
    if (auto text = workload_field_text(defaults, f.field)) {
      Workload w;
      REQUIRE(set_workload_field(w, f.field, *text).ok());
      CHECK(workload_field_text(w, f.field) == text);
    }
  }
  CHECK(seen.size() == static_cast<size_t>(WorkloadField::kSeed) + 1);
}

TEST_CASE("an integer field takes its range's ends and refuses past them, naming the field") {
  for (const WorkloadFieldInfo& f : workload_fields()) {
    if (f.syntax != FieldSyntax::kInteger) continue;
    CAPTURE(workload_field_name(f.field));
    for (int64_t end : {f.range.min, f.range.max}) {
      Workload w;
      REQUIRE(set_workload_field(w, f.field, std::to_string(end)).ok());
      CHECK(workload_field_text(w, f.field) == std::to_string(end));  // written to this field, not another
    }
    Workload w;
    Status below = set_workload_field(w, f.field, std::to_string(f.range.min - 1), policy_spelling);
    REQUIRE_FALSE(below.ok());
    CHECK(below.error().message.find(policy_spelling(f.field) + ": ") == 0);
  }
}

TEST_CASE("each syntax reads its words; the error names the field as the caller spells it") {
  Workload w;
  REQUIRE(set_workload_field(w, WorkloadField::kBs, "64k").ok());
  CHECK(w.block_size == 64 * 1024);
  REQUIRE(set_workload_field(w, WorkloadField::kRamp, "250ms").ok());
  CHECK(w.ramp == std::chrono::milliseconds(250));
  REQUIRE(set_workload_field(w, WorkloadField::kDirect, "0").ok());
  CHECK_FALSE(w.direct);
  REQUIRE(set_workload_field(w, WorkloadField::kRw, "randrw").ok());
  CHECK(w.rw == RwMode::kRandRw);
  REQUIRE(set_workload_field(w, WorkloadField::kFile, "/data/a.bin").ok());
  CHECK(w.file == "/data/a.bin");
  REQUIRE(set_workload_field(w, WorkloadField::kSeed, "7").ok());
  CHECK(w.seed == 7u);
  CHECK(set_workload_field(w, WorkloadField::kRw, "randomread", policy_spelling).error().message ==
        "workload.rw: unknown workload \"randomread\" (expected randread, randwrite, read, write or randrw)");
  CHECK(set_workload_field(w, WorkloadField::kBs, "4q").error().message.find("--bs: ") == 0);
  CHECK(set_workload_field(w, WorkloadField::kRuntime, "soon").error().message.find("--runtime: ") == 0);
  CHECK(set_workload_field(w, WorkloadField::kDirect, "maybe").error().message.find("--direct: ") == 0);
}

// The chart validates a policy's workload before the binary sees it: the same keys and limits.
TEST_CASE("the chart's values.schema.json has the workload's keys and limits") {
  nlohmann::json schema = nlohmann::json::parse(testing::read_source_file("charts/iogate/values.schema.json"));
  const nlohmann::json& w = schema["properties"]["policy"]["properties"]["workload"]["properties"];
  for (const WorkloadFieldInfo& f : workload_fields()) {
    const std::string key(workload_field_name(f.field));
    CAPTURE(key);
    CHECK(w.contains(key) == f.policy_key);
    if (!f.policy_key) continue;
    switch (f.syntax) {
      case FieldSyntax::kInteger:
        CHECK(w[key]["type"] == "integer");
        CHECK(w[key]["minimum"].get<int64_t>() == f.range.min);
        CHECK(w[key]["maximum"].get<int64_t>() == f.range.max);
        break;
      case FieldSyntax::kSize: CHECK(w[key]["$ref"] == "#/definitions/iogateSize"); break;
      case FieldSyntax::kDuration: CHECK(w[key]["$ref"] == "#/definitions/iogateDuration"); break;
      case FieldSyntax::kBool: CHECK(w[key]["type"] == "boolean"); break;
      case FieldSyntax::kRwMode: {
        std::vector<std::string> modes;
        for (RwMode m : {RwMode::kRandRead, RwMode::kRandWrite, RwMode::kRead, RwMode::kWrite, RwMode::kRandRw})
          modes.emplace_back(rw_mode_name(m));
        CHECK(w[key]["enum"].get<std::vector<std::string>>() == modes);
        break;
      }
      case FieldSyntax::kPath: CHECK(w[key]["type"] == "string"); break;
    }
  }
}
