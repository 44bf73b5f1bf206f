#include <doctest/doctest.h>

#include <algorithm>

#include "dataset/dataset_advice.h"

using namespace iogate;

namespace {
// A healthy local NVMe dataset far larger than memory, no target: nothing to say.
DatasetFacts quiet() {
  DatasetFacts f;
  f.files_estimate = 1e6;
  f.bytes_estimate = 2e12;
  f.median_file_bytes = 110 * 1024;
  f.workers = 8;
  f.samples_per_s = 20000;
  f.mean_file_ns = 400'000;
  f.open_p50_ns = 20'000;
  f.file_p50_ns = 300'000;
  f.cpus = 16;
  f.mem_total_bytes = uint64_t{256} << 30;
  f.device_class = DeviceClass::kNvme;
  return f;
}

const Recommendation* find(const std::vector<Recommendation>& recs, const std::string& id) {
  auto it = std::find_if(recs.begin(), recs.end(), [&](const Recommendation& r) { return r.id == id; });
  return it == recs.end() ? nullptr : &*it;
}

double evidence(const Recommendation& r, const std::string& key) {
  for (const auto& [k, v] : r.evidence) {
    if (k == key) return v;
  }
  FAIL("no evidence key " << key);
  return 0;
}
}  // namespace

TEST_CASE("Little's law: reads in flight = rate x latency, rounded up") {
  CHECK(workers_for_rate(10000, 1'000'000) == 10);  // 10k/s x 1 ms
  CHECK(workers_for_rate(10000, 1'050'000) == 11);
  CHECK(workers_for_rate(100, 1'000) == 1);  // at least one
  CHECK(workers_for_rate(0, 0) == 1);
}

TEST_CASE("nothing to recommend on fast storage with a large dataset and no target") {
  CHECK(recommend_for_dataset(quiet()).empty());
}

TEST_CASE("without a sweep, a target needing more reads in flight than CPUs says so, with the numbers") {
  DatasetFacts f = quiet();
  f.target_samples_per_s = 100000;  // x 0.4 ms = 40 in flight > 16 CPUs
  auto recs = recommend_for_dataset(f);
  const Recommendation* r = find(recs, "workers-for-target");
  REQUIRE(r);
  CHECK(evidence(*r, "workers_needed") == 40);
  CHECK(evidence(*r, "cpus") == 16);
  CHECK(evidence(*r, "mean_file_ns") == 400'000);
  CHECK(r->message.find("more than the 16 CPUs") != std::string::npos);
  CHECK(evidence(*r, "from_sweep") == 0);  // the knee is a sweep's: see the sweep cases below
  f.target_samples_per_s = 20000;          // 8 in flight: fits
  r = find(recs = recommend_for_dataset(f), "workers-for-target");
  REQUIRE(r);
  CHECK(r->message.find("at least 8") != std::string::npos);
}

TEST_CASE("a dataset smaller than memory: cache it in RAM (not when it already is)") {
  DatasetFacts f = quiet();
  f.bytes_estimate = 50e9;
  auto recs = recommend_for_dataset(f);
  const Recommendation* r = find(recs, "cache-in-ram");
  REQUIRE(r);
  CHECK(evidence(*r, "bytes_estimate") == 50e9);
  CHECK(evidence(*r, "mem_total_bytes") == double(uint64_t{256} << 30));
  f.device_class = DeviceClass::kRam;
  CHECK_FALSE(find(recommend_for_dataset(f), "cache-in-ram"));
  f = quiet();
  f.bytes_estimate = 50e9;
  f.mem_total_bytes = 0;  // unknown
  CHECK_FALSE(find(recommend_for_dataset(f), "cache-in-ram"));
}

TEST_CASE("small files on a slow volume: pack into shards") {
  for (DeviceClass c : {DeviceClass::kHdd, DeviceClass::kNetworkFs, DeviceClass::kCloudBlock}) {
    DatasetFacts f = quiet();
    f.device_class = c;
    auto recs = recommend_for_dataset(f);
    const Recommendation* r = find(recs, "pack-into-shards");
    REQUIRE(r);
    CHECK(evidence(*r, "median_file_bytes") == 110 * 1024);
  }
  DatasetFacts f = quiet();
  f.device_class = DeviceClass::kNetworkFs;
  f.median_file_bytes = 200 * 1024;  // large enough
  CHECK_FALSE(find(recommend_for_dataset(f), "pack-into-shards"));
  CHECK_FALSE(find(recommend_for_dataset(quiet()), "pack-into-shards"));  // NVMe copes
}

TEST_CASE("a rotational leaf: move to NVMe") {
  DatasetFacts f = quiet();
  f.rotational_leaf = true;
  auto recs = recommend_for_dataset(f);
  CHECK(find(recs, "move-to-nvme"));
  CHECK(find(recs, "pack-into-shards"));  // a spinning disk is slow per file too
}

TEST_CASE("open dominating the file time: metadata bottleneck") {
  DatasetFacts f = quiet();
  f.device_class = DeviceClass::kNetworkFs;
  f.median_file_bytes = 1 << 20;
  f.open_p50_ns = 2'000'000;
  f.file_p50_ns = 3'000'000;
  auto recs = recommend_for_dataset(f);
  const Recommendation* r = find(recs, "metadata-bottleneck");
  REQUIRE(r);
  CHECK(evidence(*r, "open_fraction") == doctest::Approx(2.0 / 3));
  CHECK(r->message.find("network file system") != std::string::npos);
  f.open_p50_ns = 1'000'000;  // a third: not dominating
  CHECK_FALSE(find(recommend_for_dataset(f), "metadata-bottleneck"));
}

TEST_CASE("with a sweep, the workers needed are the fewest that reached the target, measured") {
  DatasetFacts f = quiet();
  f.mean_file_ns = 1'160'000;  // the headline (16 workers) latency, inflated by the queue
  f.sweep = {{1, 4809}, {2, 6658}, {4, 10507}, {8, 12261}, {16, 13288}};
  f.knee_workers = 8;
  f.target_samples_per_s = 5000;
  const Recommendation* r = nullptr;
  auto recs = recommend_for_dataset(f);
  REQUIRE((r = find(recs, "workers-for-target")));
  CHECK(evidence(*r, "workers_needed") == 2);  // Little's law on 1.16 ms would say 6
  CHECK(evidence(*r, "from_sweep") == 1);
  CHECK(r->message.find("reached with 2 workers (6.7k measured)") != std::string::npos);
}

TEST_CASE("with a sweep that stopped scaling short of the target: the storage is the limit") {
  DatasetFacts f = quiet();
  f.sweep = {{1, 2235}, {2, 2062}, {4, 2028}, {8, 1997}, {16, 2013}};  // a 2,000 IOPS volume
  f.knee_workers = 1;
  f.target_samples_per_s = 5000;
  auto recs = recommend_for_dataset(f);
  const Recommendation* r = find(recs, "workers-for-target");
  REQUIRE(r);
  CHECK(evidence(*r, "workers_needed") == 0);
  CHECK(evidence(*r, "measured_samples_per_s") == 2235);
  CHECK(r->message.find("the storage, not the worker count, is the limit (2.2x short)") != std::string::npos);
  CHECK(r->message.find("more workers") == std::string::npos);
}

TEST_CASE("with a sweep still scaling at its largest count: more workers") {
  DatasetFacts f = quiet();
  f.sweep = {{1, 1000}, {2, 1900}, {4, 3700}};
  f.knee_workers = 4;
  f.target_samples_per_s = 5000;
  auto recs = recommend_for_dataset(f);
  const Recommendation* r = find(recs, "workers-for-target");
  REQUIRE(r);
  CHECK(r->message.find("still scaling at 4 workers") != std::string::npos);
  CHECK(r->message.find("storage, not the worker count") == std::string::npos);
}

TEST_CASE("the storage-limit advice names the limit found, not IOPS by default") {
  // The gp3 case: 16k IOPS, 125 MiB/s, 110 KB files: 1,160 samples/s for a 2,500 target.
  DatasetFacts f = quiet();
  f.sweep = {{1, 1100}, {2, 1160}, {4, 1150}};
  f.knee_workers = 1;
  f.target_samples_per_s = 2500;
  f.limit = {FeedLimit::kBandwidth, "the volume caps bytes, at about 127 MiB/s"};
  const Recommendation* r = nullptr;
  auto recs = recommend_for_dataset(f);
  REQUIRE((r = find(recs, "workers-for-target")));
  CHECK(r->message.find("the limit is bandwidth (the volume caps bytes, at about 127 MiB/s)") != std::string::npos);
  CHECK(r->message.find("more throughput") != std::string::npos);
  CHECK(r->message.find("more IOPS") == std::string::npos);
  f.limit = {FeedLimit::kIops, "the volume caps requests"};
  REQUIRE((r = find(recs = recommend_for_dataset(f), "workers-for-target")));
  CHECK(r->message.find("the limit is iops") != std::string::npos);
  CHECK(r->message.find("more IOPS") != std::string::npos);
}

TEST_CASE("without a sweep, a capped volume short of the target: no more workers, the cap named") {
  DatasetFacts f = quiet();
  f.workers = 2;
  f.samples_per_s = 1160;
  f.mean_file_ns = 1'700'000;
  f.target_samples_per_s = 2500;  // Little's law would say 5 workers
  f.limit = {FeedLimit::kBandwidth, "the volume caps bytes"};
  const Recommendation* r = nullptr;
  auto recs = recommend_for_dataset(f);
  REQUIRE((r = find(recs, "workers-for-target")));
  CHECK(r->message.find("caps bandwidth") != std::string::npos);
  CHECK(r->message.find("more workers will not reach it (2.2x short)") != std::string::npos);
  CHECK(evidence(*r, "workers_needed") == 0);
  // Per-file latency is no cap: Little's law stands.
  f.limit = {FeedLimit::kPerFileLatency, "more readers read more"};
  REQUIRE((r = find(recs = recommend_for_dataset(f), "workers-for-target")));
  CHECK(evidence(*r, "workers_needed") == 5);
  // Reaching the target: Little's law, whatever the limit.
  f.limit = {FeedLimit::kBandwidth, "the volume caps bytes"};
  f.samples_per_s = 3000;
  REQUIRE((r = find(recs = recommend_for_dataset(f), "workers-for-target")));
  CHECK(evidence(*r, "workers_needed") == 5);
}

TEST_CASE("files reading faster with their metadata cached: metadata bottleneck, with both rates") {
  DatasetFacts f = quiet();
  f.device_class = DeviceClass::kNetworkFs;
  f.median_file_bytes = 1 << 20;
  f.open_p50_ns = 500'000;  // open alone does not dominate (the lookup is not in it once cached)
  f.file_p50_ns = 3'000'000;
  f.samples_per_s = 208;
  f.warm_metadata_samples_per_s = 456;
  f.lookup_p50_ns = 2'400'000;
  auto recs = recommend_for_dataset(f);
  const Recommendation* r = find(recs, "metadata-bottleneck");
  REQUIRE(r);
  CHECK(evidence(*r, "warm_metadata_samples_per_s") == 456);
  CHECK(evidence(*r, "lookup_p50_ns") == 2'400'000);
  CHECK(r->message.find("208 samples/s") != std::string::npos);
  CHECK(r->message.find("456") != std::string::npos);
  CHECK(r->message.find("cache_timeout") != std::string::npos);
  f.warm_metadata_samples_per_s = 240;  // +15%: lookups are not what holds it
  CHECK_FALSE(find(recommend_for_dataset(f), "metadata-bottleneck"));
}
