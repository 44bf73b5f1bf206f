#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "dataset/feed_limit.h"

using namespace iogate;

namespace {

// A point over `seconds` of files of `file_bytes`, each read in `pieces` requests.
FeedPoint point(int workers, double files_per_s, double file_bytes, int pieces, double seconds = 0.4) {
  FeedPoint p;
  p.workers = workers;
  p.elapsed_ns = static_cast<uint64_t>(seconds * 1e9);
  p.files = static_cast<uint64_t>(std::llround(files_per_s * seconds));
  p.requests = p.files * static_cast<uint64_t>(pieces);
  p.bytes = static_cast<uint64_t>(std::llround(double(p.files) * file_bytes));
  return p;
}

// A volume with an IOPS cap, a bandwidth cap and a per-request latency, read at a concurrency:
// the rate of requests is the least of the three limits (requests of `request_bytes`).
double requests_per_s(double iops_cap, double bytes_cap, double latency_s, int readers, double request_bytes) {
  return std::min({iops_cap, bytes_cap / request_bytes, readers / latency_s});
}

constexpr double kFile = 110e3;

// The three points on such a volume, and the loader's run as the whole point at W.
FeedFacts on_volume(double iops_cap, double bytes_cap, double latency_s, int w = 2) {
  FeedFacts f;
  f.workers = w;
  double whole = requests_per_s(iops_cap, bytes_cap, latency_s, w, kFile);
  f.samples_per_s = whole;
  f.bytes_per_s = whole * kFile;
  f.open_p50_ns = 20'000;
  f.file_p50_ns = static_cast<uint64_t>(w / whole * 1e9);
  f.mean_file_ns = double(f.file_p50_ns);
  f.elapsed_ns = 2'000'000'000;
  f.cpu_ns = 200'000'000;  // 5% of two threads' time
  f.cpus = 2;
  f.whole = point(w, whole, kFile, 1);
  f.halves = point(w, requests_per_s(iops_cap, bytes_cap, latency_s, w, kFile / 2) / 2, kFile, 2);
  f.doubled = point(2 * w, requests_per_s(iops_cap, bytes_cap, latency_s, 2 * w, kFile), kFile, 1);
  return f;
}

}  // namespace

TEST_CASE("names") {
  CHECK(feed_limit_name(FeedLimit::kIops) == "iops");
  CHECK(feed_limit_name(FeedLimit::kBandwidth) == "bandwidth");
  CHECK(feed_limit_name(FeedLimit::kPerFileLatency) == "per-file-latency");
  CHECK(feed_limit_name(FeedLimit::kMetadata) == "metadata");
  CHECK(feed_limit_name(FeedLimit::kReaderCpu) == "reader-cpu");
  CHECK(feed_limit_name(FeedLimit::kUnknown) == "unknown");
  CHECK(feed_limit_remedy(FeedLimit::kBandwidth).find("throughput") != std::string_view::npos);
  CHECK(feed_limit_remedy(FeedLimit::kIops).find("IOPS") != std::string_view::npos);
}

TEST_CASE("an IOPS cap: halving the requests leaves the request rate where it was") {
  // The rig's IOPS-only volume: 1,600 IOPS, no byte cap, 0.2 ms per request.
  FeedLimitFinding r = classify_feed_limit(on_volume(1600, 1e12, 0.2e-3));
  CHECK(r.limit == FeedLimit::kIops);
  CHECK(r.why.find("caps requests") != std::string::npos);
  CHECK(r.why.find("1.6k") != std::string::npos);
}

TEST_CASE("a bandwidth cap: halving the requests doubles the request rate at the same bytes/s") {
  CHECK(classify_feed_limit(on_volume(1e9, 13e6, 0.2e-3)).limit == FeedLimit::kBandwidth);
  // gp3: 16,000 IOPS and 125 MiB/s, bandwidth-bound for 110 KB files; 4 KiB pieces would have
  // hit its IOPS cap (64 MB/s) and looked like neither, halves do not.
  FeedLimitFinding gp3 = classify_feed_limit(on_volume(16000, 131e6, 0.5e-3, 8));
  CHECK(gp3.limit == FeedLimit::kBandwidth);
  CHECK(gp3.why.find("caps bytes") != std::string::npos);
  // SATA-like: 8,200 IOPS and 500 MB/s: 110 KB files hit 500 MB/s (4,500 files/s) first, and
  // the halves hit the IOPS cap (450 MB/s): the bytes/s moved a little, the requests nearly 2x.
  CHECK(classify_feed_limit(on_volume(8200, 500e6, 0.2e-3, 8)).limit == FeedLimit::kBandwidth);
  // NVMe-like: 51k IOPS, 3 GB/s: bandwidth for 110 KB files.
  CHECK(classify_feed_limit(on_volume(51000, 3e9, 0.1e-3, 32)).limit == FeedLimit::kBandwidth);
}

TEST_CASE("a volume balanced at the sample size counts as IOPS-capped: the halves hit the IOPS cap") {
  // 1,000 IOPS x 110 KB = 110 MB/s: both caps bind for whole files; halves get no more requests.
  CHECK(classify_feed_limit(on_volume(1000, 110e6, 0.2e-3)).limit == FeedLimit::kIops);
}

TEST_CASE("per-file latency: twice the readers read more, whatever the halves say") {
  // HDD-like by latency alone (8 ms a request, no cap within reach): 2 readers -> 250/s, 4 -> 500/s.
  FeedLimitFinding r = classify_feed_limit(on_volume(1e9, 1e12, 8e-3));
  CHECK(r.limit == FeedLimit::kPerFileLatency);
  CHECK(r.why.find("4 readers") != std::string::npos);
  // Just under the gain threshold it is a cap again.
  FeedFacts f = on_volume(1600, 1e12, 0.2e-3);
  f.doubled = point(4, 1600 * (kMoreReadersGain - 0.02), kFile, 1);
  CHECK(classify_feed_limit(f).limit == FeedLimit::kIops);
}

TEST_CASE("metadata and the reader's CPU come before the storage caps") {
  FeedFacts f = on_volume(1e9, 13e6, 0.2e-3);
  f.open_p50_ns = f.file_p50_ns * 6 / 10;
  FeedLimitFinding r = classify_feed_limit(f);
  CHECK(r.limit == FeedLimit::kMetadata);
  CHECK(r.why.find("60%") != std::string::npos);

  f = on_volume(1e9, 13e6, 0.2e-3);
  f.cpu_ns = static_cast<uint64_t>((kReaderCpuBusy + 0.01) * 2 * double(f.elapsed_ns));
  CHECK(classify_feed_limit(f).limit == FeedLimit::kReaderCpu);
  f.cpu_ns -= f.elapsed_ns / 5;
  CHECK(classify_feed_limit(f).limit == FeedLimit::kBandwidth);
  // 8 threads on 2 CPUs: busy is judged against the 2 CPUs they can be on.
  f.workers = 8;
  f.cpu_ns = static_cast<uint64_t>(1.6 * double(f.elapsed_ns));
  CHECK(reader_cpu_busy(f) == doctest::Approx(0.8));
  CHECK(classify_feed_limit(f).limit == FeedLimit::kReaderCpu);

  f = on_volume(1e9, 13e6, 0.2e-3);
  f.page_cache = true;
  r = classify_feed_limit(f);
  CHECK(r.limit == FeedLimit::kReaderCpu);
  CHECK(r.why.find("in memory") != std::string::npos);
}

TEST_CASE("unknown without the second measurement, with tiny files, or without a run") {
  FeedFacts f = on_volume(1600, 1e12, 0.2e-3);
  f.halves.reset();
  FeedLimitFinding r = classify_feed_limit(f);
  CHECK(r.limit == FeedLimit::kUnknown);
  CHECK(r.why.find("second measurement") != std::string::npos);
  f = on_volume(1600, 1e12, 0.2e-3);
  f.doubled->files = 0;
  CHECK(classify_feed_limit(f).limit == FeedLimit::kUnknown);
  // 4 KiB files: one request however split.
  f = on_volume(1600, 1e12, 0.2e-3);
  f.whole = point(2, 1600, 4096, 1);
  f.halves = point(2, 1600, 4096, 1);
  CHECK(classify_feed_limit(f).limit == FeedLimit::kUnknown);
  CHECK(classify_feed_limit(FeedFacts{}).limit == FeedLimit::kUnknown);
}
