// A ProbeResult built by hand, with the exact latencies recorded, for the report tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "probe/probe_result.h"

namespace iogate::testing {

struct Sample {
  ProbeResult result;
  std::vector<uint64_t> read_latencies;   // every value recorded into any job's read histogram
  std::vector<uint64_t> write_latencies;  // likewise for writes
};

// Nearest-rank percentile, the definition LatencyHistogram::percentile approximates.
inline uint64_t exact_percentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

// Log-normal latencies around `median_ns` with a slow tail: what a disk looks like.
inline void record_latencies(DirectionStats& d, std::vector<uint64_t>& all, uint64_t n, double median_ns, uint64_t seed,
                             uint64_t block_size) {
  std::mt19937_64 gen(seed);
  std::lognormal_distribution<double> lat(std::log(median_ns), 0.5);
  for (uint64_t i = 0; i < n; ++i) {
    auto v = static_cast<uint64_t>(lat(gen));
    if (i % 997 == 0) v *= 20;  // the tail
    d.clat.record(v);
    all.push_back(v);
  }
  d.total_ios += n;
  d.io_bytes += n * block_size;
}

// Two jobs of randread 4k (or randrw 70/30 with `mixed`), 10 s, with device and CPU statistics.
inline Sample make_sample(bool mixed = false) {
  Sample s;
  ProbeResult& r = s.result;
  r.workload.rw = mixed ? RwMode::kRandRw : RwMode::kRandRead;
  r.workload.rwmixread = 70;
  r.workload.block_size = 4096;
  r.workload.iodepth = 32;
  r.workload.numjobs = 2;
  r.workload.runtime = std::chrono::seconds(10);
  r.workload.ramp = std::chrono::seconds(1);
  r.workload.size = uint64_t{1} << 30;
  r.workload.direct = true;
  r.seed = 0x1f2e3d4c5b6a7988ULL;
  r.workload.seed = r.seed;
  r.ioengine = "libaio";
  r.direct = true;

  r.target.path = "/data";
  r.target.mount_point = "/";
  r.target.fs_type = "ext4";
  r.target.source = "/dev/vda";
  r.target.dev_major = 253;
  r.target.dev_minor = 0;
  r.target.test_file_created = true;
  r.target.files = {{"/data/.iogate-test", uint64_t{1} << 30, uint64_t{1} << 30}};
  r.target.dio_mem_align = 512;
  r.target.dio_offset_align = 512;

  for (int id = 0; id < 2; ++id) {
    JobResult j;
    j.job_id = id;
    j.runtime_ns = id == 0 ? 10'000'000'000ULL : 9'500'000'000ULL;
    uint64_t reads = id == 0 ? 40000 : 30000;
    record_latencies(j.read, s.read_latencies, reads, 250'000, 1 + id, 4096);
    if (mixed) record_latencies(j.write, s.write_latencies, reads / 2, 900'000, 11 + id, 4096);
    for (int sec = 0; sec < 10; ++sec) j.iops_per_second.push_back(static_cast<uint64_t>(3000 + 100 * sec + id));
    j.submit_calls = 1000 + id;
    j.reap_calls = 2000 + id;
    r.jobs.push_back(std::move(j));
  }

  r.diskstats.available = true;
  r.diskstats.device = "vda";
  r.diskstats.major = 253;
  r.diskstats.minor = 0;
  r.diskstats.interval_s = 10.0;
  r.diskstats.util_percent = 98.2;
  r.diskstats.reads_per_s = 7012.5;
  r.diskstats.writes_per_s = mixed ? 3500 : 0;
  r.diskstats.read_bytes_per_s = 7012.5 * 4096;
  r.diskstats.r_await_ns = 280'000;
  r.diskstats.w_await_ns = mixed ? 910'000 : 0;
  r.diskstats.avg_queue_size = 31.2;
  r.diskstats.util_percent_per_second = std::vector<double>(10, 98.2);

  r.cpu.user_ns = 410'000'000;
  r.cpu.sys_ns = 1'200'000'000;
  r.measured_ns = 10'000'000'000ULL;
  r.stop_reason = StopReason::kRuntime;
  r.convergence.ci = {.mean = 7012.5,
                      .half_width = 140.25,
                      .relative_half_width = 0.02,
                      .samples = 100,
                      .batches = 33,
                      .batch_size = 3,
                      .batch_lag1 = 0.04,
                      .trusted = true,
                      .confidence = 0.95};
  r.started_at = "2026-12-02T14:11:50Z";
  r.warnings = {"the test file was written with zeros; a compressing or deduplicating device may look faster"};
  return s;
}

}  // namespace iogate::testing
