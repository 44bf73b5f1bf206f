#include "bench/dataset_advice.h"

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
    case DeviceClass::kMmc:
      return true;
    default:
      return false;
  }
}

std::vector<Recommendation> recommend_for_dataset(const DatasetFacts& f) {
  std::vector<Recommendation> out;
  if (f.target_samples_per_s && *f.target_samples_per_s > 0 && f.mean_file_ns > 0) {
    double target = *f.target_samples_per_s;
    int needed = workers_for_rate(target, f.mean_file_ns);
    std::string message = fmt::format(
        "{} samples/s at a mean {} per file needs about {} reads in flight (Little's law: rate × latency)",
        format_count(target), format_duration_ns(f.mean_file_ns), needed);
    if (needed > f.cpus) {
      message += fmt::format(", more than the {} CPUs: more workers than cores (threads, not processes) or "
                             "asynchronous reads, or storage with lower per-file latency",
                             f.cpus);
    } else {
      message += fmt::format(": set num_workers to at least {} (of {} CPUs)", needed, f.cpus);
    }
    if (f.knee_workers > 0 && needed > f.knee_workers) {
      message += fmt::format("; the sweep stopped scaling at {} workers, so the storage, not the worker count, "
                             "is likely the limit", f.knee_workers);
    }
    out.push_back({"workers-for-target", message,
                   {{"target_samples_per_s", target},
                    {"mean_file_ns", f.mean_file_ns},
                    {"workers_needed", needed},
                    {"cpus", f.cpus},
                    {"measured_samples_per_s", f.samples_per_s},
                    {"measured_workers", f.workers},
                    {"knee_workers", f.knee_workers}}});
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
  if (f.file_p50_ns > 0 && double(f.open_p50_ns) > kOpenDominatesFraction * double(f.file_p50_ns)) {
    bool network = f.device_class == DeviceClass::kNetworkFs;
    out.push_back(
        {"metadata-bottleneck",
         fmt::format("open() takes {} of a file's {} (p50, {:.0f}%): {}; fewer, larger files (shards) or a "
                     "local cache of the dataset avoid it",
                     format_duration_ns(double(f.open_p50_ns)), format_duration_ns(double(f.file_p50_ns)),
                     100.0 * double(f.open_p50_ns) / double(f.file_p50_ns),
                     network ? "the network file system's metadata round trips dominate"
                             : "metadata (lookups, permission checks), not data, dominates"),
         {{"open_p50_ns", double(f.open_p50_ns)},
          {"file_p50_ns", double(f.file_p50_ns)},
          {"open_fraction", double(f.open_p50_ns) / double(f.file_p50_ns)}}});
  }
  return out;
}

}  // namespace iogate
