#include "dataset/dataset_advice.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {

int workers_for_rate(double samples_per_s, double mean_file_ns) {
  double in_flight = samples_per_s * mean_file_ns / 1e9;
  if (!std::isfinite(in_flight) || in_flight < 1) return 1;
  // A tiny epsilon so that an exact product (2.0000000001 from rounding) is not rounded up.
  return static_cast<int>(std::ceil(in_flight - 1e-9));
}

bool slow_per_file(DeviceClass c) {
  switch (c) {
    case DeviceClass::kHdd:
    case DeviceClass::kNetworkFs:
    case DeviceClass::kCloudBlock:
    case DeviceClass::kUsb:
    case DeviceClass::kMmc: return true;
    default: return false;
  }
}

namespace {

// ", and the limit is bandwidth (why)" where the finding names one.
std::string limit_clause(const FeedLimitFinding& l) {
  if (l.limit == FeedLimit::kUnknown) return "";
  return fmt::format("; the limit is {} ({})", feed_limit_name(l.limit), l.why);
}

bool storage_cap(FeedLimit l) { return l == FeedLimit::kIops || l == FeedLimit::kBandwidth; }

// With a sweep the answer is measured, not estimated: Little's law on the headline run's mean
// file latency overstates the workers needed wherever that latency grew with the queue.
Recommendation workers_from_sweep(const DatasetFacts& f, double target) {
  auto best = std::max_element(f.sweep.begin(), f.sweep.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  int reached = 0;
  for (const auto& [workers, rate] : f.sweep) {
    if (rate >= target && (reached == 0 || workers < reached)) reached = workers;
  }
  const int most = std::max_element(f.sweep.begin(), f.sweep.end())->first;
  std::string message;
  if (reached) {
    double rate = 0;
    for (const auto& [workers, r] : f.sweep) {
      if (workers == reached) rate = r;
    }
    message = fmt::format("{} samples/s: reached with {} worker{} ({} measured): set num_workers to at least {}",
                          format_count(target), reached, reached == 1 ? "" : "s", format_count(rate), reached);
  } else if (f.knee_workers > 0 && f.knee_workers < most) {
    message = fmt::format(
        "{} samples/s: no worker count reached it; the best was {} at {} workers and the sweep stopped scaling at {}, "
        "so the storage, not the worker count, is the limit ({:.1f}x short){}: {}",
        format_count(target), format_count(best->second), best->first, f.knee_workers, target / best->second,
        limit_clause(f.limit), feed_limit_remedy(f.limit.limit));
  } else {
    message = fmt::format(
        "{} samples/s: not reached, and still scaling at {} workers ({} measured): try more workers (threads "
        "wait on I/O, so more than the {} CPUs can help) or asynchronous reads",
        format_count(target), most, format_count(best->second), f.cpus);
  }
  return {"workers-for-target",
          message,
          {{"target_samples_per_s", target},
           {"mean_file_ns", f.mean_file_ns},
           {"workers_needed", reached},
           {"cpus", f.cpus},
           {"measured_samples_per_s", best->second},
           {"measured_workers", best->first},
           {"knee_workers", f.knee_workers},
           {"from_sweep", 1}}};
}

}  // namespace

std::vector<Recommendation> recommend_for_dataset(const DatasetFacts& f) {
  std::vector<Recommendation> out;
  if (f.target_samples_per_s && *f.target_samples_per_s > 0 && f.sweep.size() > 1) {
    out.push_back(workers_from_sweep(f, *f.target_samples_per_s));
  } else if (f.target_samples_per_s && *f.target_samples_per_s > 0 && f.samples_per_s > 0 &&
             f.samples_per_s < *f.target_samples_per_s && storage_cap(f.limit.limit)) {
    // A cap: Little's law would ask for more workers, which a capped volume does not reward.
    double target = *f.target_samples_per_s;
    out.push_back(
        {"workers-for-target",
         fmt::format("{} samples/s: {} workers read {}, and the volume caps {} ({}): more workers will "
                     "not reach it ({:.1f}x short): {}",
                     format_count(target), f.workers, format_count(f.samples_per_s), feed_limit_name(f.limit.limit),
                     f.limit.why, target / f.samples_per_s, feed_limit_remedy(f.limit.limit)),
         {{"target_samples_per_s", target},
          {"mean_file_ns", f.mean_file_ns},
          {"workers_needed", 0},
          {"cpus", f.cpus},
          {"measured_samples_per_s", f.samples_per_s},
          {"measured_workers", f.workers},
          {"knee_workers", f.knee_workers},
          {"from_sweep", 0}}});
  } else if (f.target_samples_per_s && *f.target_samples_per_s > 0 && f.mean_file_ns > 0) {
    double target = *f.target_samples_per_s;
    int needed = workers_for_rate(target, f.mean_file_ns);
    std::string message =
        fmt::format("{} samples/s at a mean {} per file needs about {} reads in flight (Little's law: rate × latency)",
                    format_count(target), format_duration_ns(f.mean_file_ns), needed);
    if (needed > f.cpus) {
      message += fmt::format(
          ", more than the {} CPUs: more workers than cores (threads, not processes) or "
          "asynchronous reads, or storage with lower per-file latency{}",
          f.cpus, limit_clause(f.limit));
    } else {
      message += fmt::format(": set num_workers to at least {} (of {} CPUs)", needed, f.cpus);
    }
    out.push_back({"workers-for-target",
                   message,
                   {{"target_samples_per_s", target},
                    {"mean_file_ns", f.mean_file_ns},
                    {"workers_needed", needed},
                    {"cpus", f.cpus},
                    {"measured_samples_per_s", f.samples_per_s},
                    {"measured_workers", f.workers},
                    {"knee_workers", f.knee_workers},
                    {"from_sweep", 0}}});
  }
  if (f.mem_total_bytes > 0 && f.bytes_estimate > 0 && f.bytes_estimate < double(f.mem_total_bytes) &&
      f.device_class != DeviceClass::kRam) {
    out.push_back({"cache-in-ram",
                   fmt::format("the dataset (~{}) is smaller than the node's memory ({}): copy it to a tmpfs "
                               "(emptyDir medium: Memory) or warm the page cache before training "
                               "(e.g. vmtouch -t), so epochs after the first read memory",
                               format_bytes(f.bytes_estimate), format_bytes(double(f.mem_total_bytes))),
                   {{"bytes_estimate", f.bytes_estimate}, {"mem_total_bytes", double(f.mem_total_bytes)}}});
  }
  bool slow = slow_per_file(f.device_class) || f.rotational_leaf;
  if (f.median_file_bytes > 0 && f.median_file_bytes < kSmallFileBytes && slow) {
    out.push_back({"pack-into-shards",
                   fmt::format("the median file is {} (< {}) on a {} volume, where every file pays a seek or "
                               "round trip: pack samples into shards of 100 MiB–1 GiB (tar/WebDataset, LMDB, "
                               "TFRecord, HDF5) and read them sequentially",
                               format_bytes(double(f.median_file_bytes)), format_bytes(double(kSmallFileBytes)),
                               device_class_name(f.device_class)),
                   {{"median_file_bytes", double(f.median_file_bytes)},
                    {"small_file_threshold_bytes", double(kSmallFileBytes)},
                    {"files_estimate", f.files_estimate}}});
  }
  if (f.rotational_leaf) {
    out.push_back({"move-to-nvme",
                   fmt::format("a rotational disk is under this path ({} samples/s measured): random per-sample "
                               "reads are seek-bound; move the dataset to NVMe (or local SSD) storage",
                               format_count(f.samples_per_s)),
                   {{"rotational", 1}, {"samples_per_s", f.samples_per_s}}});
  }
  const bool open_dominates =
      f.file_p50_ns > 0 && double(f.open_p50_ns) > kOpenDominatesFraction * double(f.file_p50_ns);
  const bool warm_faster =
      f.warm_metadata_samples_per_s > 0 && f.warm_metadata_samples_per_s >= kMetadataGain * f.samples_per_s;
  if (open_dominates || warm_faster) {
    bool network = f.device_class == DeviceClass::kNetworkFs;
    std::string what =
        open_dominates
            ? fmt::format("open() takes {} of a file's {} (p50, {:.0f}%): {}",
                          format_duration_ns(double(f.open_p50_ns)), format_duration_ns(double(f.file_p50_ns)),
                          100.0 * double(f.open_p50_ns) / double(f.file_p50_ns),
                          network ? "the network file system's metadata round trips dominate"
                                  : "metadata (lookups, permission checks), not data, dominates")
            : fmt::format(
                  "each file's lookup (p50 {}) holds the first epoch to {} samples/s where the same "
                  "files with their metadata cached read {} ({:+.0f}%), and every epoch whose metadata "
                  "has expired from the caches pays it again",
                  format_duration_ns(double(f.lookup_p50_ns)), format_count(f.samples_per_s),
                  format_count(f.warm_metadata_samples_per_s),
                  100.0 * (f.warm_metadata_samples_per_s / f.samples_per_s - 1));
    std::vector<std::pair<std::string, double>> evidence = {{"open_p50_ns", double(f.open_p50_ns)},
                                                            {"file_p50_ns", double(f.file_p50_ns)}};
    if (f.file_p50_ns > 0) evidence.emplace_back("open_fraction", double(f.open_p50_ns) / double(f.file_p50_ns));
    if (f.warm_metadata_samples_per_s > 0) {
      evidence.emplace_back("samples_per_s", f.samples_per_s);
      evidence.emplace_back("warm_metadata_samples_per_s", f.warm_metadata_samples_per_s);
      evidence.emplace_back("lookup_p50_ns", double(f.lookup_p50_ns));
    }
    out.push_back({"metadata-bottleneck",
                   what + (network ? "; fewer, larger files (shards), longer attribute caching (NFS actimeo, "
                                     "FUSE entry/attr timeouts, sshfs cache_timeout) or a local cache of the dataset "
                                     "avoid it"
                                   : "; fewer, larger files (shards) or a local cache of the dataset avoid it"),
                   std::move(evidence)});
  }
  return out;
}

}  // namespace iogate
