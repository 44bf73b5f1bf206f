// The dataset probe: can this volume feed the GPUs with this dataset, in samples per second?
//
// Scan the tree (dataset_scan.h), shuffle the sampled files, run the loader once or over a sweep
// of worker counts (dataset_loader.h) on files whose metadata no one looked up (a first epoch's,
// the headline), on a network file system read more files with their metadata cached
// (metadata_epoch.h), name what limits it (feed_limit.h, from three short read
// patterns at the headline's worker count: feed_points.h, ~1.2 s) and say what to do about it
// (dataset_advice.h), with what `iogate detect` says about the storage under the path. Never
// writes to the dataset.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "dataset/dataset_advice.h"
#include "dataset/dataset_loader.h"
#include "dataset/dataset_scan.h"
#include "dataset/feed_limit.h"
#include "dataset/feed_points.h"
#include "dataset/metadata_epoch.h"
#include "device/storage_stack.h"
#include "probe/stop_reason.h"

namespace iogate {

struct DatasetRequest {
  std::string path;
  std::string root = "/";  // where /proc and /sys are read (as ProbeRequest::root)
  ScanBudget scan;
  LoaderOptions loader;            // workers ignored: see worker_counts
  std::vector<int> worker_counts;  // one entry: a single run; several: a sweep
  std::optional<uint64_t> seed;    // sampling and shuffling; fresh unless given
  // This reader's share of the shuffled sample: every `shards`-th file from the `shard`-th, as a
  // DistributedSampler gives each rank of a job its own. Readers that share a seed (and so a
  // sample and an order) then read disjoint files: none is served from a cache another filled.
  size_t shard = 0, shards = 1;
  std::optional<double> target_samples_per_s;  // for the workers-for-target recommendation
  std::optional<StorageStack> storage;         // PATH's, where the caller detected it (as ProbeRequest's)
  FeedPointsOptions limit;                     // the measurement behind `DatasetProbeResult::limit`
};

struct DatasetProgress {
  std::string phase;  // "scan", "load", "limit"
  int workers = 0;    // while loading
};
using DatasetProgressCallback = std::function<void(const DatasetProgress&)>;

struct DatasetProbeResult {
  std::string path;
  std::string started_at;  // RFC 3339 UTC
  uint64_t seed = 0;
  StorageStack storage;
  bool page_cache = false;  // tmpfs/ramfs: memory speed
  DatasetScan scan;
  std::vector<LoaderRun> sweep;  // in the order run
  size_t headline = 0;           // the run with the most samples/s
  int knee_workers = 0;          // scaling_knee over the sweep (the only count for a single run)
  int cpus = 0;
  uint64_t mem_total_bytes = 0;
  // Files past the headline's, read with their metadata looked up just before: network file
  // systems only, where a lookup is a round trip (elsewhere it is a cache hit or one inode read;
  // measured false).
  MetadataEpoch metadata;
  FeedLimitFinding limit;   // what limits the headline's samples/s, with the numbers
  FeedPoints limit_points;  // what it was judged on (empty where not measured)
  std::vector<Recommendation> recommendations;
  std::vector<std::string> warnings;
  StopReason stop_reason = StopReason::kNone;  // kComplete or kSignal

  const LoaderRun* loader() const { return sweep.empty() ? nullptr : &sweep[headline]; }
};

// Errors: bad path (usage), a tree without a readable regular file (usage, with the
// permission-denied count and first path when that is why). A signal ends the scan or the
// loader early and still returns what was measured, stop_reason "signal".
Result<DatasetProbeResult> run_dataset_probe(const DatasetRequest& request, const std::atomic<bool>& stop,
                                             const DatasetProgressCallback& on_progress);

// MemTotal from PROC/meminfo in bytes; 0 when unreadable.
uint64_t read_mem_total_bytes(const std::string& proc_root);

// Whether any physical leaf of the stack is a spinning disk (class hdd).
bool has_rotational_leaf(const StorageStack& s);

}  // namespace iogate
