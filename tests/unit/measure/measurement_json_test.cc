#include <doctest/doctest.h>

#include "measure/measurement_json.h"

using namespace iogate;

TEST_CASE("a measurement survives its JSON record, field by field") {
  Measurement m;
  m.iops = 52300.5;
  m.p99_latency_ns = 1.25e6;
  m.bandwidth_bytes_per_s = 214e6;
  m.device_class = DeviceClass::kMixed;
  m.leaf_classes = {DeviceClass::kNvme, DeviceClass::kHdd};
  m.path = "/data";
  m.fs_type = "xfs";
  m.rw = RwMode::kRead;
  m.block_size = 1 << 20;
  m.measured_s = 2.4;
  m.page_cache = true;
  m.direct = false;
  m.read_only = true;
  m.read_existing_files = true;
  m.files_bytes = 1000;
  m.readable_bytes = 600;
  m.stop_reason = StopReason::kSettled;
  m.ci_half_width_relative = 0.021;
  m.ci_confidence = 0.95;
  auto back = measurement_from_json(nlohmann::json::parse(measurement_to_json(m).dump()));
  REQUIRE(back);
  CHECK(back->iops == m.iops);
  CHECK(back->p99_latency_ns == m.p99_latency_ns);
  CHECK(back->bandwidth_bytes_per_s == m.bandwidth_bytes_per_s);
  CHECK(back->device_class == DeviceClass::kMixed);
  CHECK(back->leaf_classes == m.leaf_classes);
  CHECK(back->path == "/data");
  CHECK(back->fs_type == "xfs");
  CHECK(back->rw == RwMode::kRead);
  CHECK(back->block_size == m.block_size);
  CHECK(back->measured_s == doctest::Approx(m.measured_s));
  CHECK(back->page_cache);
  CHECK_FALSE(back->direct);
  CHECK(back->read_only);
  CHECK(back->read_existing_files);
  CHECK(back->files_bytes == 1000);
  CHECK(back->readable_bytes == 600);
  CHECK(back->stop_reason == StopReason::kSettled);
  REQUIRE(back->ci_half_width_relative);
  CHECK(*back->ci_half_width_relative == doctest::Approx(0.021));
  REQUIRE(back->ci_confidence);
}

TEST_CASE("a mistyped or unknown record is refused, an old one with fewer keys is read") {
  nlohmann::json j = measurement_to_json(Measurement{});
  j["iops"] = "fast";
  CHECK_FALSE(measurement_from_json(j));
  j = measurement_to_json(Measurement{});
  j["device_class"] = "floppy";
  CHECK_FALSE(measurement_from_json(j));
  j = measurement_to_json(Measurement{});
  j["stop_reason"] = "exhausted";  // a reason this version does not know: not reused, probed again
  CHECK_FALSE(measurement_from_json(j));
  j = measurement_to_json(Measurement{});
  j["leaf_classes"] = {"nvme", 3};
  CHECK_FALSE(measurement_from_json(j));
  CHECK_FALSE(measurement_from_json(nlohmann::json::array()));
  CHECK_FALSE(measurement_from_json(nlohmann::json::object()));
  auto minimal = measurement_from_json({{"iops", 1234}, {"device_class", "nvme"}});
  REQUIRE(minimal);
  CHECK(minimal->iops == 1234);
  CHECK(minimal->device_class == DeviceClass::kNvme);
  CHECK_FALSE(minimal->ci_half_width_relative);
}

TEST_CASE("the workload key tells workloads apart") {
  Workload w;
  CHECK(workload_key(w) == "randread/4k/qd32x1");
  w.numjobs = 2;
  CHECK(workload_key(w) == "randread/4k/qd32x2");
  w.rw = RwMode::kRandRw;
  w.rwmixread = 70;
  CHECK(workload_key(w) == "randrw/4k/qd32x2/mix70");
  Workload seq;
  seq.rw = RwMode::kRead;
  seq.block_size = 1 << 20;
  seq.direct = false;
  CHECK(workload_key(seq) == "read/1m/qd32x1/buffered");
}
