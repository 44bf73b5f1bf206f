#include "dataset/feed_limit.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {
namespace {

double per_s(uint64_t n, uint64_t ns) { return ns ? double(n) / (double(ns) / 1e9) : 0; }

bool usable(const std::optional<FeedPoint>& p) { return p && p->files > 0 && p->requests > 0 && p->elapsed_ns > 0; }

}  // namespace

std::string_view feed_limit_name(FeedLimit limit) {
  switch (limit) {
    case FeedLimit::kIops: return "iops";
    case FeedLimit::kBandwidth: return "bandwidth";
    case FeedLimit::kPerFileLatency: return "per-file-latency";
    case FeedLimit::kMetadata: return "metadata";
    case FeedLimit::kReaderCpu: return "reader-cpu";
    case FeedLimit::kUnknown: break;
  }
  return "unknown";
}

std::string_view feed_limit_remedy(FeedLimit limit) {
  switch (limit) {
    case FeedLimit::kIops:
      return "storage with more IOPS (provisioned IOPS, a faster tier), or fewer requests per sample: shards read in "
             "large pieces";
    case FeedLimit::kBandwidth:
      return "storage with more throughput (MB/s: provisioned throughput, a faster tier), smaller samples "
             "(compression, lower resolution), or a local cache";
    case FeedLimit::kPerFileLatency:
      return "more reads in flight (more workers, or asynchronous reads), storage with lower per-file latency, or "
             "shards";
    case FeedLimit::kMetadata: return "fewer, larger files (shards) or a local cache of the dataset";
    case FeedLimit::kReaderCpu: return "more CPUs for the loader, or cheaper samples to read (fewer, larger files)";
    case FeedLimit::kUnknown: break;
  }
  return "storage with more IOPS, more throughput or lower per-file latency, a local cache, or shards";
}

double FeedPoint::files_per_s() const { return per_s(files, elapsed_ns); }
double FeedPoint::requests_per_s() const { return per_s(requests, elapsed_ns); }
double FeedPoint::bytes_per_s() const { return per_s(bytes, elapsed_ns); }
double FeedPoint::bytes_per_request() const { return requests ? double(bytes) / double(requests) : 0; }

double reader_cpu_busy(const FeedFacts& f) {
  int on_cpu = f.cpus > 0 ? std::min(f.workers, f.cpus) : f.workers;
  if (f.cpu_ns == 0 || f.elapsed_ns == 0 || on_cpu <= 0) return 0;
  return double(f.cpu_ns) / (double(on_cpu) * double(f.elapsed_ns));
}

FeedLimitFinding classify_feed_limit(const FeedFacts& f) {
  if (f.samples_per_s <= 0) return {FeedLimit::kUnknown, "the loader read no file: nothing to judge"};
  if (f.file_p50_ns > 0 && double(f.open_p50_ns) > kOpenDominatesFraction * double(f.file_p50_ns)) {
    return {FeedLimit::kMetadata,
            fmt::format("open() takes {} of a file's {} (p50, {:.0f}%): metadata round trips, not data, limit the "
                        "{} samples/s",
                        format_duration_ns(double(f.open_p50_ns)), format_duration_ns(double(f.file_p50_ns)),
                        100.0 * double(f.open_p50_ns) / double(f.file_p50_ns), format_count(f.samples_per_s))};
  }
  if (f.page_cache) {
    return {FeedLimit::kReaderCpu,
            fmt::format("the dataset is in memory: {} samples/s ({}) is the reader's speed, not a storage device's",
                        format_count(f.samples_per_s), format_rate_bytes(f.bytes_per_s))};
  }
  double busy = reader_cpu_busy(f);
  if (busy >= kReaderCpuBusy) {
    return {FeedLimit::kReaderCpu,
            fmt::format("the loader's {} threads were on a CPU {:.0f}% of the time they could be ({} of CPU in {}): "
                        "the reader's CPU, not the storage, limits the {} samples/s",
                        f.workers, 100 * busy, format_duration_ns(double(f.cpu_ns)),
                        format_duration_ns(double(f.elapsed_ns)), format_count(f.samples_per_s))};
  }
  if (!usable(f.whole) || !usable(f.halves) || !usable(f.doubled)) {
    return {FeedLimit::kUnknown,
            fmt::format("{} samples/s ({}) at {} workers; without the second measurement (whole files, halves, "
                        "twice the readers) an IOPS cap cannot be told from a bandwidth cap",
                        format_count(f.samples_per_s), format_rate_bytes(f.bytes_per_s), f.workers)};
  }
  const FeedPoint& w = *f.whole;
  const FeedPoint& h = *f.halves;
  const FeedPoint& d = *f.doubled;
  double gain = d.files_per_s() / w.files_per_s();
  if (gain >= kMoreReadersGain) {
    return {FeedLimit::kPerFileLatency,
            fmt::format("{} readers read {} files/s against {} with {} (+{:.0f}%): the volume is not capped at this "
                        "rate; the latency of each file ({} mean in the loader) at {} reads in flight limits it",
                        d.workers, format_count(d.files_per_s()), format_count(w.files_per_s()), w.workers,
                        100 * (gain - 1), format_duration_ns(f.mean_file_ns), f.workers)};
  }
  double size_ratio = w.bytes_per_request() / h.bytes_per_request();
  if (!(size_ratio >= 1.5)) {
    return {FeedLimit::kUnknown,
            fmt::format("files of {} a request are read in one request however they are split: an IOPS cap cannot "
                        "be told from a bandwidth cap ({} samples/s, {})",
                        format_bytes(w.bytes_per_request()), format_count(f.samples_per_s),
                        format_rate_bytes(f.bytes_per_s))};
  }
  double request_ratio = h.requests_per_s() / w.requests_per_s();
  double x = std::log(std::max(request_ratio, 1e-9)) / std::log(size_ratio);
  std::string halves = fmt::format(
      "reading each file in {:.1f}x smaller requests took the volume from {} to {} requests/s and from {} to {} "
      "(x = {:.2f}, 0 for an IOPS cap, 1 for a bandwidth cap), and {} readers got no more than {} ({} against {} "
      "files/s)",
      size_ratio, format_count(w.requests_per_s()), format_count(h.requests_per_s()),
      format_rate_bytes(w.bytes_per_s()), format_rate_bytes(h.bytes_per_s()), x, d.workers, w.workers,
      format_count(d.files_per_s()), format_count(w.files_per_s()));
  if (x >= kBandwidthShare) {
    return {FeedLimit::kBandwidth, fmt::format("{}: the volume caps bytes, at about {}", halves,
                                               format_rate_bytes(std::max(w.bytes_per_s(), d.bytes_per_s())))};
  }
  return {FeedLimit::kIops, fmt::format("{}: the volume caps requests, at about {} IOPS", halves,
                                        format_count(std::max(w.requests_per_s(), h.requests_per_s())))};
}

}  // namespace iogate
