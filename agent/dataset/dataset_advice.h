// What to do about a dataset's loading speed: recommendations from the scan, the loader runs and
// the storage under the path, each with the numbers that triggered it.
//
// A pure function of plain numbers, so every trigger is tested without a slow disk:
//   workers-for-target   with a sweep: the fewest workers that reached the target, or, when none
//                        did, the best rate and the knee (storage-bound, or still scaling);
//                        without one, Little's law: concurrent reads needed = target samples/s ×
//                        mean file latency, against the CPUs available, unless the volume caps
//                        IOPS or bandwidth below the target (more workers cannot help). Where the
//                        storage is the limit, the message names the limit (feed_limit.h) and
//                        its remedy.
//   cache-in-ram         the dataset fits in the node's memory (MemTotal): tmpfs or a warm page cache
//   pack-into-shards     median file < 128 KiB on a slow or network volume: per-file costs dominate
//   move-to-nvme         a rotational disk under the path
//   metadata-bottleneck  open() takes more than half of a file's time (p50), or the same files read
//                        at least 25% faster with their metadata cached (metadata_epoch.h):
//                        metadata round trips
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataset/feed_limit.h"
#include "device/device_class.h"

namespace iogate {

inline constexpr uint64_t kSmallFileBytes = 128 * 1024;
// Warm-metadata samples/s over cold at which lookups count as a bottleneck.
inline constexpr double kMetadataGain = 1.25;

struct DatasetFacts {
  double files_estimate = 0;
  double bytes_estimate = 0;
  uint64_t median_file_bytes = 0;
  // The headline loader run.
  int workers = 0;
  double samples_per_s = 0;
  double mean_file_ns = 0;
  uint64_t open_p50_ns = 0, file_p50_ns = 0;
  int knee_workers = 0;                       // from a sweep; 0 without one
  std::vector<std::pair<int, double>> sweep;  // (workers, samples/s) of each sweep run; empty without one
  int cpus = 0;
  uint64_t mem_total_bytes = 0;  // 0: unknown
  DeviceClass device_class = DeviceClass::kUnknown;
  bool rotational_leaf = false;
  std::optional<double> target_samples_per_s;
  FeedLimitFinding limit;  // what limits samples_per_s (kUnknown: not known)
  // The warm-metadata epoch (0: not measured) and its lookups' median.
  double warm_metadata_samples_per_s = 0;
  uint64_t lookup_p50_ns = 0;
};

struct Recommendation {
  std::string id;
  std::string message;                                   // one or two sentences, with the numbers
  std::vector<std::pair<std::string, double>> evidence;  // keys carry units (_ns, _bytes, _per_s)
};

std::vector<Recommendation> recommend_for_dataset(const DatasetFacts& f);

// Little's law: the reads in flight needed to sustain `samples_per_s` when each file takes
// `mean_file_ns`, rounded up (at least 1).
int workers_for_rate(double samples_per_s, double mean_file_ns);

// Classes where per-file costs (seeks, network round trips, per-request cloud latency) are high.
bool slow_per_file(DeviceClass c);

}  // namespace iogate
