// What limits the samples/s a volume feeds a loader: the request rate (IOPS), the bytes per
// second (bandwidth), the latency of each file at the reader's concurrency, metadata (open), or
// the reader's own CPU. A pure function of plain numbers (feed_points.h measures them).
//
// Why a second measurement: one ~110 KB sample is one request whether the volume caps requests
// or bytes, so the loader's own run cannot tell an IOPS cap from a bandwidth cap. Two changes of
// the read pattern can, each over the same kind of files at the loader's concurrency W, O_DIRECT:
//   whole    each file read in one request (the reference point)
//   halves   each file read in two requests of half its size: under an IOPS cap the request
//            rate stays the same (files/s halve); under a bandwidth cap the bytes/s stay the
//            same (requests/s double). x = log(requests/s ratio) / log(bytes-per-request ratio)
//            is 0 for a pure IOPS cap and 1 for a pure bandwidth cap; x >= kBandwidthShare says
//            the request rate still had room when the files were read whole: bandwidth.
//   doubled  whole files with 2W readers: a cap (either) gives no more; a volume limited by
//            the latency of each read at W gives more (>= kMoreReadersGain): per-file latency,
//            which more reads in flight would hide.
// Halves and not 4 KiB pieces: a gp3 volume (16,000 IOPS, 125 MiB/s) is bandwidth-bound for
// 110 KB files, but 4 KiB reads hit its IOPS cap first (64 MB/s): the second point must stay on
// the same side of the volume's balance point (bandwidth / IOPS) as the samples themselves,
// and halving moves the request size as little as still gives a 2x lever.
//
// The order of the rules: metadata (open p50 above half the file p50) and the reader's CPU
// (its threads on a CPU for most of the run, or the data in memory) come first, since storage
// caps cannot be judged through them; then doubled (latency), then halves (IOPS or bandwidth).
// Without the points (not measured, O_DIRECT refused, too few files), the finding is unknown
// unless one of the first two rules holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace iogate {

enum class FeedLimit { kUnknown, kIops, kBandwidth, kPerFileLatency, kMetadata, kReaderCpu };

// "iops", "bandwidth", "per-file-latency", "metadata", "reader-cpu", "unknown".
std::string_view feed_limit_name(FeedLimit limit);

// What would lift the limit, a phrase for advice ("storage with more IOPS ...").
std::string_view feed_limit_remedy(FeedLimit limit);

inline constexpr double kOpenDominatesFraction = 0.5;  // open p50 / file p50 above it: metadata
inline constexpr double kReaderCpuBusy = 0.7;          // loader CPU / (readers on a CPU × wall)
inline constexpr double kMoreReadersGain = 1.25;       // doubled / whole files/s at or above it: latency
inline constexpr double kBandwidthShare = 0.4;         // x at or above it: bandwidth, below: IOPS

// One bounded read pattern over sampled files (feed_points.h).
struct FeedPoint {
  int workers = 0;
  uint64_t files = 0;     // files read to their end
  uint64_t requests = 0;  // read requests issued (each pread)
  uint64_t bytes = 0;
  uint64_t elapsed_ns = 0;

  double files_per_s() const;
  double requests_per_s() const;
  double bytes_per_s() const;
  double bytes_per_request() const;
};

struct FeedFacts {
  // The loader's headline run.
  int workers = 0;
  double samples_per_s = 0;
  double bytes_per_s = 0;
  uint64_t open_p50_ns = 0, file_p50_ns = 0;
  double mean_file_ns = 0;
  uint64_t cpu_ns = 0;      // CPU time of the loader's threads (CLOCK_THREAD_CPUTIME_ID); 0: unknown
  uint64_t elapsed_ns = 0;  // the run's wall time
  int cpus = 0;             // CPUs the loader may run on; 0: unknown
  bool page_cache = false;  // the dataset is in memory (tmpfs): no storage to be limited by
  // The second measurement; absent where it was not taken.
  std::optional<FeedPoint> whole, halves, doubled;
};

struct FeedLimitFinding {
  FeedLimit limit = FeedLimit::kUnknown;
  std::string why;  // one sentence with the numbers
};

FeedLimitFinding classify_feed_limit(const FeedFacts& f);

// The loader threads' CPU time as a fraction of what they could have used: cpu_ns over
// min(workers, cpus) × wall. 0 when unknown.
double reader_cpu_busy(const FeedFacts& f);

}  // namespace iogate
