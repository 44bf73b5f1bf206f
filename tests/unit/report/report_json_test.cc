#include <doctest/doctest.h>

#include <functional>
#include <set>
#include <string>

#include "base/version.h"
#include "report/report_json.h"
#include "sample_probe_result.h"

using namespace iogate;
using namespace iogate::testing;
using nlohmann::json;

namespace {

enum class Type { kString, kBool, kInteger, kNumber, kArray, kObject };

bool has_type(const json& j, Type t) {
  switch (t) {
    case Type::kString: return j.is_string();
    case Type::kBool: return j.is_boolean();
    case Type::kInteger: return j.is_number_integer();
    case Type::kNumber: return j.is_number();
    case Type::kArray: return j.is_array();
    case Type::kObject: return j.is_object();
  }
  return false;
}

using Spec = std::vector<std::pair<std::string, Type>>;

// Checks that `j` is an object with exactly the keys of `spec`, each of its type.
void check_object(const json& j, const Spec& spec, const std::string& where) {
  INFO("object: ", where);
  REQUIRE(j.is_object());
  std::set<std::string> expected, actual;
  for (const auto& [key, type] : spec) {
    expected.insert(key);
    INFO("key: ", where, ".", key);
    REQUIRE(j.contains(key));
    CHECK(has_type(j.at(key), type));
  }
  for (const auto& item : j.items()) actual.insert(item.key());
  CHECK(actual == expected);  // nothing undocumented either
}

const Spec kDirectionSpec = {{"total_ios", Type::kInteger},  {"io_bytes", Type::kInteger},   {"iops", Type::kNumber},
                             {"bw_bytes", Type::kInteger},   {"runtime_ns", Type::kInteger}, {"clat_ns", Type::kObject},
                             {"lat_histogram", Type::kArray}};
const Spec kClatSpec = {{"min", Type::kInteger},   {"max", Type::kInteger}, {"mean", Type::kNumber},
                        {"stddev", Type::kNumber}, {"N", Type::kInteger},   {"percentile", Type::kObject}};
const Spec kJobSpec = {
    {"jobname", Type::kString},       {"job_id", Type::kInteger},        {"job_runtime_ns", Type::kInteger},
    {"read", Type::kObject},          {"write", Type::kObject},          {"iops_timeline", Type::kArray},
    {"submit_calls", Type::kInteger}, {"reap_calls", Type::kInteger},    {"refill_wait_ns", Type::kInteger},
    {"submit_ns", Type::kInteger},    {"mean_in_flight", Type::kNumber}, {"mean_awaiting_refill", Type::kNumber}};

const Spec kConvergenceSpec = {{"early_stop", Type::kBool},
                               {"tolerance", Type::kNumber},
                               {"confidence", Type::kNumber},
                               {"sample_interval_ns", Type::kInteger},
                               {"min_window_ns", Type::kInteger},
                               {"threshold_iops", Type::kNumber},
                               {"threshold_margin", Type::kNumber},
                               {"samples", Type::kInteger},
                               {"batches", Type::kInteger},
                               {"batch_samples", Type::kInteger},
                               {"batch_lag1_correlation", Type::kNumber},
                               {"trusted", Type::kBool},
                               {"mean_iops", Type::kNumber},
                               {"ci_half_width_iops", Type::kNumber},
                               {"ci_relative_half_width", Type::kNumber}};

void check_job(const json& j, const std::string& where) {
  check_object(j, kJobSpec, where);
  for (const char* dir : {"read", "write"}) {
    check_object(j[dir], kDirectionSpec, where + "." + dir);
    check_object(j[dir]["clat_ns"], kClatSpec, where + "." + dir + ".clat_ns");
    CHECK(j[dir]["clat_ns"]["percentile"].size() == std::size(kReportPercentiles));
    for (const json& p : j[dir]["clat_ns"]["percentile"]) CHECK(p.is_number_integer());
    for (const json& row : j[dir]["lat_histogram"]) {
      REQUIRE(row.is_array());
      REQUIRE(row.size() == 3);
      for (const json& v : row) CHECK(v.is_number_integer());
    }
  }
  for (const json& v : j["iops_timeline"]) CHECK(v.is_number_integer());
}

// True if any value anywhere in `j` is null: the schema promises none.
bool contains_null(const json& j) {
  if (j.is_null()) return true;
  if (j.is_structured()) {
    for (const json& child : j) {
      if (contains_null(child)) return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("every documented key is present with its type, and no other") {
  for (bool mixed : {false, true}) {
    Sample s = make_sample(mixed);
    json j = probe_result_to_json(s.result);
    check_object(j,
                 {{"schema", Type::kString},
                  {"iogate_version", Type::kString},
                  {"time", Type::kString},
                  {"mode", Type::kString},
                  {"target", Type::kObject},
                  {"storage", Type::kObject},
                  {"workload", Type::kObject},
                  {"ioengine", Type::kString},
                  {"direct", Type::kBool},
                  {"jobs", Type::kArray},
                  {"aggregate", Type::kObject},
                  {"diskstats", Type::kObject},
                  {"cpu", Type::kObject},
                  {"measured_ns", Type::kInteger},
                  {"stop_reason", Type::kString},
                  {"warnings", Type::kArray},
                  {"convergence", Type::kObject}},
                 "report");
    check_object(j["convergence"], kConvergenceSpec, "convergence");
    check_object(j["target"],
                 {{"path", Type::kString},
                  {"mount_point", Type::kString},
                  {"fs_type", Type::kString},
                  {"source", Type::kString},
                  {"device", Type::kString},
                  {"read_only", Type::kBool},
                  {"page_cache", Type::kBool},
                  {"test_file_created", Type::kBool},
                  {"test_file_reused", Type::kBool},
                  {"files", Type::kArray},
                  {"dio_mem_align_bytes", Type::kInteger},
                  {"dio_offset_align_bytes", Type::kInteger}},
                 "target");
    REQUIRE(j["target"]["files"].size() == 1);
    check_object(j["target"]["files"][0],
                 {{"path", Type::kString},
                  {"size_bytes", Type::kInteger},
                  {"readable_bytes", Type::kInteger},
                  {"extent_map", Type::kString}},
                 "target.files[0]");
    check_object(j["workload"],
                 {{"rw", Type::kString},
                  {"bs_bytes", Type::kInteger},
                  {"iodepth", Type::kInteger},
                  {"iodepth_batch", Type::kInteger},
                  {"numjobs", Type::kInteger},
                  {"rwmixread", Type::kInteger},
                  {"runtime_ns", Type::kInteger},
                  {"ramp_ns", Type::kInteger},
                  {"size_bytes", Type::kInteger},
                  {"direct", Type::kBool},
                  {"file", Type::kString},
                  {"seed", Type::kInteger}},
                 "workload");
    REQUIRE(j["jobs"].size() == 2);
    check_job(j["jobs"][0], "jobs[0]");
    check_job(j["jobs"][1], "jobs[1]");
    check_job(j["aggregate"], "aggregate");
    check_object(j["diskstats"],
                 {{"available", Type::kBool},
                  {"device", Type::kString},
                  {"major", Type::kInteger},
                  {"minor", Type::kInteger},
                  {"interval_ns", Type::kInteger},
                  {"util_percent", Type::kNumber},
                  {"reads_per_s", Type::kNumber},
                  {"writes_per_s", Type::kNumber},
                  {"read_bytes_per_s", Type::kNumber},
                  {"write_bytes_per_s", Type::kNumber},
                  {"r_await_ns", Type::kNumber},
                  {"w_await_ns", Type::kNumber},
                  {"aqu_sz", Type::kNumber},
                  {"util_percent_timeline", Type::kArray}},
                 "diskstats");
    check_object(j["cpu"], {{"user_ns", Type::kInteger}, {"sys_ns", Type::kInteger}, {"ns_per_io", Type::kNumber}},
                 "cpu");
    for (const json& w : j["warnings"]) CHECK(w.is_string());
    CHECK_FALSE(contains_null(j));
  }
}

TEST_CASE("fixed values: schema, mode, target device, workload as requested and as run") {
  Sample s = make_sample();
  s.result.direct = false;  // a fallback to buffered I/O: requested and run differ
  json j = probe_result_to_json(s.result);
  CHECK(j["schema"] == "iogate.report/v1");
  CHECK(j["iogate_version"] == kVersion);
  CHECK(j["mode"] == "probe");
  CHECK(j["time"] == "2026-12-02T14:11:50Z");
  CHECK(j["ioengine"] == "libaio");
  CHECK(j["direct"] == false);
  CHECK(j["workload"]["direct"] == true);
  CHECK(j["workload"]["rw"] == "randread");
  CHECK(j["workload"]["bs_bytes"] == 4096);
  CHECK(j["workload"]["iodepth"] == 32);
  CHECK(j["workload"]["iodepth_batch"] == 1);
  CHECK(j["workload"]["numjobs"] == 2);
  CHECK(j["workload"]["runtime_ns"] == 10'000'000'000LL);
  CHECK(j["workload"]["ramp_ns"] == 1'000'000'000LL);
  CHECK(j["workload"]["size_bytes"] == (uint64_t{1} << 30));
  CHECK(j["workload"]["file"] == "");
  CHECK(j["workload"]["seed"].get<uint64_t>() == 0x1f2e3d4c5b6a7988ULL);
  CHECK(j["target"]["device"] == "253:0");
  CHECK(j["target"]["test_file_created"] == true);
  CHECK(j["target"]["files"][0]["size_bytes"] == (uint64_t{1} << 30));
  CHECK(j["jobs"][0]["jobname"] == "job0");
  CHECK(j["jobs"][1]["jobname"] == "job1");
  CHECK(j["jobs"][1]["job_id"] == 1);
  CHECK(j["diskstats"]["interval_ns"] == 10'000'000'000LL);
  CHECK(j["diskstats"]["aqu_sz"].get<double>() == doctest::Approx(31.2));
  CHECK(j["measured_ns"] == 10'000'000'000LL);
  CHECK(j["stop_reason"] == "runtime");
  CHECK(j["warnings"].size() == 1);
}

TEST_CASE("percentile keys are fio's and values are within 1% of the exact percentiles") {
  CHECK(percentile_key(99.9) == "99.900000");
  CHECK(percentile_key(1) == "1.000000");
  Sample s = make_sample(true);
  json j = probe_result_to_json(s.result);
  const std::set<std::string> fio_keys = {"1.000000",  "5.000000",  "10.000000", "50.000000", "90.000000",
                                          "95.000000", "99.000000", "99.900000", "99.990000"};
  for (const char* dir : {"read", "write"}) {
    const std::vector<uint64_t>& exact = std::string(dir) == "read" ? s.read_latencies : s.write_latencies;
    const json& pct = j["aggregate"][dir]["clat_ns"]["percentile"];
    std::set<std::string> keys;
    for (const auto& item : pct.items()) keys.insert(item.key());
    CHECK(keys == fio_keys);
    for (double p : kReportPercentiles) {
      double want = static_cast<double>(exact_percentile(exact, p));
      double got = pct[percentile_key(p)].get<double>();
      INFO(dir, " p", p, ": want ", want, " got ", got);
      CHECK(std::abs(got - want) <= 0.01 * want);
    }
    const json& clat = j["aggregate"][dir]["clat_ns"];
    CHECK(clat["N"] == exact.size());
    CHECK(clat["min"] == *std::min_element(exact.begin(), exact.end()));
    CHECK(clat["max"] == *std::max_element(exact.begin(), exact.end()));
    double sum = 0;
    for (uint64_t v : exact) sum += static_cast<double>(v);
    CHECK(clat["mean"].get<double>() == doctest::Approx(sum / static_cast<double>(exact.size())));
    CHECK(clat["stddev"].get<double>() > 0);
  }
}

TEST_CASE("iops and bw_bytes are the direction's ios and bytes over the job's runtime") {
  Sample s = make_sample(true);
  json j = probe_result_to_json(s.result);
  // job1: 30000 reads and 15000 writes of 4 KiB in 9.5 s.
  const json& job1 = j["jobs"][1];
  CHECK(job1["job_runtime_ns"] == 9'500'000'000ULL);
  CHECK(job1["read"]["total_ios"] == 30000);
  CHECK(job1["read"]["io_bytes"] == 30000 * 4096);
  CHECK(job1["read"]["runtime_ns"] == 9'500'000'000ULL);
  CHECK(job1["read"]["iops"].get<double>() == doctest::Approx(30000 / 9.5));
  CHECK(job1["read"]["bw_bytes"] == std::llround(30000 * 4096 / 9.5));
  CHECK(job1["write"]["iops"].get<double>() == doctest::Approx(15000 / 9.5));
  CHECK(job1["write"]["bw_bytes"] == std::llround(15000 * 4096 / 9.5));
  // job0: 40000 reads in 10 s.
  CHECK(j["jobs"][0]["read"]["iops"].get<double>() == doctest::Approx(4000.0));
  CHECK(j["jobs"][0]["read"]["bw_bytes"] == 4000 * 4096);
  // cpu: 1.61 s over 70000 + 35000 I/Os.
  CHECK(j["cpu"]["ns_per_io"].get<double>() == doctest::Approx(1.61e9 / 105000));
}

TEST_CASE("aggregate sums the jobs, over the longest job's runtime") {
  Sample s = make_sample(true);
  json j = probe_result_to_json(s.result);
  const json& all = j["aggregate"];
  CHECK(all["jobname"] == "all");
  CHECK(all["job_id"] == -1);
  CHECK(all["job_runtime_ns"] == 10'000'000'000ULL);
  for (const char* dir : {"read", "write"}) {
    uint64_t ios = 0, bytes = 0, n = 0;
    for (const json& job : j["jobs"]) {
      ios += job[dir]["total_ios"].get<uint64_t>();
      bytes += job[dir]["io_bytes"].get<uint64_t>();
      n += job[dir]["clat_ns"]["N"].get<uint64_t>();
    }
    CHECK(all[dir]["total_ios"] == ios);
    CHECK(all[dir]["io_bytes"] == bytes);
    CHECK(all[dir]["clat_ns"]["N"] == n);
    CHECK(all[dir]["iops"].get<double>() == doctest::Approx(static_cast<double>(ios) / 10.0));
  }
  CHECK(all["read"]["total_ios"] == 70000);
  REQUIRE(all["iops_timeline"].size() == 10);
  for (size_t sec = 0; sec < 10; ++sec) {
    CHECK(all["iops_timeline"][sec] ==
          j["jobs"][0]["iops_timeline"][sec].get<uint64_t>() + j["jobs"][1]["iops_timeline"][sec].get<uint64_t>());
  }
  CHECK(all["submit_calls"] == 2001);
  CHECK(all["reap_calls"] == 4001);
}

TEST_CASE("lat_histogram rows are ordered, disjoint, cover every sample and stay within 64 rows") {
  // Wide: latencies from 1 µs to 1 s need coarsening; narrow: a few buckets are kept as they are.
  ProbeResult wide, narrow;
  JobResult w, n;
  for (uint64_t v = 1000; v < 1'000'000'000; v = v * 101 / 100) w.read.clat.record(v);
  for (uint64_t v = 200'000; v < 210'000; v += 1000) n.read.clat.record(v);
  w.runtime_ns = n.runtime_ns = 1'000'000'000;
  wide.jobs.push_back(w);
  narrow.jobs.push_back(n);
  for (const ProbeResult* r : {&wide, &narrow}) {
    const LatencyHistogram& h = r->jobs[0].read.clat;
    json rows = probe_result_to_json(*r)["jobs"][0]["read"]["lat_histogram"];
    REQUIRE(!rows.empty());
    CHECK(rows.size() <= kReportHistogramRows);
    uint64_t total = 0, previous_high = 0;
    bool first = true;
    for (const json& row : rows) {
      uint64_t low = row[0], high = row[1], count = row[2];
      CHECK(low <= high);
      CHECK(count > 0);
      if (!first) CHECK(low > previous_high);
      first = false;
      previous_high = high;
      total += count;
    }
    CHECK(total == h.count());
    CHECK(rows.front()[0].get<uint64_t>() <= h.min());
    CHECK(rows.back()[1].get<uint64_t>() >= h.max());
  }
  // Below 64 non-empty buckets, the rows are the histogram's own buckets.
  json rows = probe_result_to_json(narrow)["jobs"][0]["read"]["lat_histogram"];
  CHECK(rows.size() == narrow.jobs[0].read.clat.nonempty_buckets().size());
  // Coarsened rows are still aligned to powers of two.
  json coarse = probe_result_to_json(wide)["jobs"][0]["read"]["lat_histogram"];
  CHECK(coarse.size() > 16);  // coarsened no further than needed
  for (const json& row : coarse) {
    uint64_t span = row[1].get<uint64_t>() - row[0].get<uint64_t>() + 1;
    CHECK((span & (span - 1)) == 0);
    CHECK(row[0].get<uint64_t>() % span == 0);
  }
}

TEST_CASE("dump then parse gives back the same document") {
  Sample s = make_sample(true);
  s.result.target.path = "/mnt/données µ";
  s.result.warnings.push_back("quote \" and backslash \\ and tab \t survive");
  json j = probe_result_to_json(s.result);
  for (int indent : {-1, 2}) {
    json back = json::parse(j.dump(indent));
    CHECK(back == j);
    CHECK(back["target"]["path"] == "/mnt/données µ");
    CHECK(back["workload"]["seed"].get<uint64_t>() == 0x1f2e3d4c5b6a7988ULL);
    CHECK(back["aggregate"]["read"]["clat_ns"]["percentile"]["99.900000"] ==
          j["aggregate"]["read"]["clat_ns"]["percentile"]["99.900000"]);
  }
}

TEST_CASE("bytes that are not UTF-8 are replaced, so dump never throws") {
  Sample s = make_sample();
  s.result.target.path = std::string("/mnt/bad\xff\xfe") + "name\xc3";  // stray bytes, truncated sequence
  json j = probe_result_to_json(s.result);
  std::string text;
  REQUIRE_NOTHROW(text = j.dump());
  CHECK(json::parse(text)["target"]["path"] == "/mnt/bad\xEF\xBF\xBD\xEF\xBF\xBDname\xEF\xBF\xBD");
}

TEST_CASE("an empty result still has every key, zeros rather than nulls") {
  ProbeResult r;
  r.diskstats.interval_s = std::nan("");  // a broken input must not turn into null
  r.diskstats.util_percent = std::numeric_limits<double>::infinity();
  json j = probe_result_to_json(r);
  CHECK_FALSE(contains_null(j));
  CHECK(j["jobs"].empty());
  check_job(j["aggregate"], "aggregate");
  CHECK(j["aggregate"]["read"]["iops"] == 0);
  CHECK(j["aggregate"]["read"]["clat_ns"]["N"] == 0);
  CHECK(j["aggregate"]["read"]["lat_histogram"].empty());
  CHECK(j["cpu"]["ns_per_io"] == 0);
  CHECK(j["diskstats"]["interval_ns"] == 0);
  CHECK(j["diskstats"]["util_percent"] == 0);
  CHECK(j["diskstats"]["available"] == false);
  CHECK(j["target"]["device"] == "0:0");
  check_object(j["convergence"], kConvergenceSpec, "convergence");
  CHECK(j["convergence"]["threshold_iops"] == 0);  // none: 0, not null
  CHECK(j["convergence"]["batches"] == 0);
  CHECK_NOTHROW(json::parse(j.dump()));
}

TEST_CASE("convergence: the interval and the rule as run") {
  Sample s = make_sample();
  ProbeResult& r = s.result;
  r.convergence.early_stop.enabled = true;
  r.convergence.early_stop.tolerance = 0.05;
  r.convergence.early_stop.threshold_iops = 10000;
  r.stop_reason = StopReason::kBelowThreshold;
  r.measured_ns = 2'400'000'000;
  json j = probe_result_to_json(r);
  const json& c = j["convergence"];
  CHECK(j["stop_reason"] == "below-threshold");
  CHECK(c["early_stop"] == true);
  CHECK(c["tolerance"] == 0.05);
  CHECK(c["confidence"] == 0.95);
  CHECK(c["threshold_iops"] == 10000.0);
  CHECK(c["threshold_margin"] == 0.1);
  CHECK(c["sample_interval_ns"] == 100'000'000);
  CHECK(c["min_window_ns"] == 2'000'000'000);
  CHECK(c["samples"] == 100);
  CHECK(c["batches"] == 33);
  CHECK(c["batch_samples"] == 3);
  CHECK(c["trusted"] == true);
  CHECK(c["mean_iops"] == 7012.5);
  CHECK(c["ci_half_width_iops"] == 140.25);
  CHECK(c["ci_relative_half_width"] == 0.02);
  r.convergence.ci.relative_half_width = std::nan("");
  CHECK(probe_result_to_json(r)["convergence"]["ci_relative_half_width"] == 0);
}

TEST_CASE("the storage section has the detect shape") {
  ProbeResult r;
  r.storage.path = "/data";
  r.storage.device_class = DeviceClass::kMixed;
  r.storage.slowest_leaf = "sdb";
  StackNode lvm;
  lvm.name = "dm-0";
  lvm.kind = StackNodeKind::kLvm;
  StackNode a, b;
  a.name = "nvme0n1";
  a.kind = StackNodeKind::kDisk;
  a.device_class = DeviceClass::kNvme;
  b.name = "sdb";
  b.kind = StackNodeKind::kDisk;
  b.device_class = DeviceClass::kHdd;
  b.rotational = true;
  lvm.children = {a, b};
  r.storage.stack = {lvm};
  json s = probe_result_to_json(r)["storage"];
  CHECK(s["class"] == "mixed");
  CHECK(s["slowest_leaf"] == "sdb");
  REQUIRE(s["stack"].size() == 1);
  CHECK(s["stack"][0]["kind"] == "lvm");
  CHECK(s["stack"][0]["children"][1]["class"] == "hdd");
  CHECK(s["stack"][0]["children"][1]["rotational"] == true);
  CHECK(s["mount"].contains("read_only"));
}
