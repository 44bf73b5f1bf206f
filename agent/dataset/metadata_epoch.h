// The warm-metadata epoch: how fast the loader reads when every file's metadata is already cached.
//
// The loader's headline run opens files that were listed but never looked up (dataset_scan.h), as
// a DataLoader's first epoch does, and as every epoch does on a file system whose attribute cache
// expires before the next one (FUSE's entry and attribute timeouts are a second by default, NFS's
// actimeo a minute at most). On a network file system a lookup is a round trip, so the same files
// with their metadata cached read faster: this measures by how much. Files past `cursor` (none the
// headline read) are looked up with `stat` by `workers` threads, each lookup timed, then read by
// the loader at once, before a daemon's own cache (sshfs: 20 s) lets them go.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dataset/dataset_loader.h"
#include "dataset/dataset_scan.h"
#include "probe/latency_histogram.h"

namespace iogate {

// The warm run's length: long enough for hundreds of files on a volume that reads a few hundred a
// second, short beside the headline run.
inline constexpr std::chrono::seconds kWarmEpochRuntime{2};

struct MetadataEpoch {
  bool measured = false;
  LatencyHistogram lookup_ns;  // stat() of a name listed and not yet looked up
  LoaderRun warm;              // the loader over those files, right after
  size_t files_looked_up = 0;
};

// Looks up files[cursor, cursor + n) and reads them with the loader (options.workers threads),
// where n covers `cold_samples_per_s` × 3 × the run (the warm run may be faster), within the list.
// Not measured (measured false) when no file is left past `cursor` or `stop` is set.
MetadataEpoch measure_warm_metadata_epoch(const std::vector<SampledFile>& files, size_t cursor,
                                          double cold_samples_per_s, const LoaderOptions& options,
                                          const std::atomic<bool>& stop);

}  // namespace iogate
