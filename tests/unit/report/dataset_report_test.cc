#include <doctest/doctest.h>

#include "report/dataset_report.h"

using namespace iogate;

namespace {
DatasetProbeResult sample_result() {
  DatasetProbeResult r;
  r.path = "/data/imagenet";
  r.started_at = "2026-12-03T10:00:00Z";
  r.scan.root = r.path;
  r.scan.stop_reason = StopReason::kTime;
  r.scan.files_seen = 1000;
  r.scan.files_estimate = 5000.4;
  r.scan.bytes_estimate = 5e8;
  r.scan.sizes = {10, 50, 90, 99, 120, 55};
  r.scan.sample = {{"/data/imagenet/a", 50}};
  r.scan.depths = {{1, 0, 0, 100, 0}, {20, 80, 1000, 0, 0}};
  r.scan.permission_denied = 1;
  r.scan.permission_denied_paths = {"/data/imagenet/secret"};
  for (int w : {1, 2}) {
    LoaderRun l;
    l.workers = w;
    l.files_read = 100 * uint64_t(w);
    l.bytes_read = 1000 * uint64_t(w);
    l.elapsed_ns = 1'000'000'000;
    l.open_ns.record(1000);
    l.first_byte_ns.record(2000);
    l.file_ns.record(5000);
    r.sweep.push_back(l);
  }
  r.headline = 1;
  r.knee_workers = 2;
  r.recommendations.push_back({"cache-in-ram", "fits", {{"bytes_estimate", 5e8}, {"mem_total_bytes", 1e10}}});
  r.stop_reason = StopReason::kComplete;
  return r;
}
}  // namespace

TEST_CASE("the dataset report carries the issue's keys, with units in their names") {
  nlohmann::json j = dataset_probe_to_json(sample_result());
  CHECK(j["schema"] == "iogate.report/v1");
  CHECK(j["mode"] == "dataset");
  const auto& d = j["dataset"];
  CHECK(d["files_estimate"] == 5000);
  CHECK(d["files_exact"] == false);
  CHECK(d["files_sampled"] == 1);
  CHECK(d["bytes_estimate"] == 5e8);
  CHECK(d["file_size_bytes"]["p10"] == 10);
  CHECK(d["file_size_bytes"]["p99"] == 99);
  CHECK(d["dirs_pending"] == 80);
  CHECK(d["fanout"]["mean_subdirs_per_dir"].get<double>() == doctest::Approx(100.0 / 21));
  CHECK(d["permission_denied"] == 1);
  CHECK(d["permission_denied_paths"][0] == "/data/imagenet/secret");
  const auto& l = j["loader"];
  CHECK(l["workers"] == 2);
  CHECK(l["samples_per_s"].get<double>() == doctest::Approx(200));
  CHECK(l["bytes_per_s"].get<double>() == doctest::Approx(2000));
  CHECK(l["open_ns"]["p50"] == 1000);
  CHECK(l["first_byte_ns"]["p99"] == 2000);
  CHECK(l["file_ns"]["p90"] == 5000);
  CHECK(l["knee_workers"] == 2);
  REQUIRE(l["sweep"].size() == 2);
  CHECK(l["sweep"][0]["workers"] == 1);
  CHECK(l["sweep"][0]["samples_per_s"].get<double>() == doctest::Approx(100));
  REQUIRE(j["recommendations"].size() == 1);
  CHECK(j["recommendations"][0]["id"] == "cache-in-ram");
  CHECK(j["recommendations"][0]["evidence"]["mem_total_bytes"] == 1e10);
  CHECK(j.contains("storage"));
}

TEST_CASE("a report without a loader run still has every key") {
  DatasetProbeResult r = sample_result();
  r.sweep.clear();
  r.headline = 0;
  nlohmann::json j = dataset_probe_to_json(r);
  CHECK(j["loader"]["samples_per_s"] == 0.0);
  CHECK(j["loader"]["sweep"].is_array());
  CHECK(j["loader"]["open_ns"]["p50"] == 0);
}

TEST_CASE("the human summary names the count's nature, the sweep and the advice") {
  std::string text = render_dataset_human(sample_result(), false);
  CHECK(text.find("5000 files (estimated)") != std::string::npos);
  CHECK(text.find("sweep") != std::string::npos);
  CHECK(text.find("still scaling at 2 workers") != std::string::npos);
  CHECK(text.find("[cache-in-ram]") != std::string::npos);
  CHECK(text.find("\033") == std::string::npos);
}

TEST_CASE("the metadata object: the headline is the cold epoch, the warm run where measured") {
  DatasetProbeResult r = sample_result();
  nlohmann::json j = dataset_probe_to_json(r);
  CHECK(j["metadata"]["headline"] == "cold");
  CHECK(j["metadata"]["measured"] == false);
  CHECK(j["metadata"]["warm"].is_null());
  CHECK(j["metadata"]["warm_samples_per_s"] == 0.0);
  CHECK(j["metadata"]["cold_samples_per_s"].get<double>() == doctest::Approx(200));
  r.metadata.measured = true;
  r.metadata.files_looked_up = 900;
  r.metadata.lookup_ns.record(2'000'000);
  r.metadata.warm.workers = 2;
  r.metadata.warm.files_read = 450;
  r.metadata.warm.elapsed_ns = 1'000'000'000;
  j = dataset_probe_to_json(r);
  CHECK(j["metadata"]["measured"] == true);
  CHECK(j["metadata"]["files_looked_up"] == 900);
  CHECK(j["metadata"]["warm_samples_per_s"].get<double>() == doctest::Approx(450));
  CHECK(j["metadata"]["warm"]["files_read"] == 450);
  CHECK(j["metadata"]["lookup_ns"]["count"] == 1);
  std::string human = render_dataset_human(r, false);
  CHECK(human.find("first epoch (lookups cold) 200 samples/s") != std::string::npos);
  CHECK(human.find("cached 450 samples/s") != std::string::npos);
}
