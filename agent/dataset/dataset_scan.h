// The dataset scan: what a tree of training samples looks like, within a budget.
//
// Datasets hold millions of files, sometimes in one directory, so the walk is bounded by time,
// by entries read and by files listed, and what it could not read is estimated. The walk is
// breadth first, each level in a random order (from the seed): when a budget runs out, every
// directory of the upper levels has been read and the unread ones are counted with their depth,
// so the files below them can be extrapolated from the fan-out of the levels that were read (see
// estimate_tree), and the directories read of the last level are a uniform sample of it, so that
// extrapolation is unbiased and the files listed are spread over the tree (an ImageNet walk cut
// at 100,000 files has read ~77 random classes of 1,000, not the first 77). Files are sampled
// uniformly as they stream by (Reservoir, Algorithm R).
//
// The walk lists names and stats nothing (but entries whose type the directory does not give):
// a DataLoader lists its files and opens them, so its first epoch pays each file's lookup. A walk
// that stat'ed the files it hands the loader would give it cached metadata, and on a network file
// system hide a round trip per file (sshfs: 447 samples/s measured that way, 208 by a real
// DataLoader on the cold mount). Sizes come afterwards, from a spread subset of the sample
// (size_sample), once the timed reads are done.
//
// The file budget is the verdict's bound: a loader run of a few seconds reads thousands of
// files, so listing 1.3 million to pick them costs more than the measurement (seconds of
// getdents, more from a cold cache); 100,000 listed files give a 20,000-file sample, sizes within
// a percent or two, and a count estimated from the fan-out of the directories read.
//
// Read-only: directories are opened O_RDONLY|O_DIRECTORY|O_NOFOLLOW (with O_NOATIME where the
// kernel permits it), symbolic links inside the tree are counted and never followed (the root is
// followed: the user named it), nothing is created.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "probe/stop_reason.h"

namespace iogate {

struct ScanBudget {
  std::chrono::nanoseconds time = std::chrono::seconds(10);
  uint64_t entries = 2'000'000;  // directory entries read, all kinds
  uint64_t files = 100'000;      // regular files listed: the walk stops at the first beyond; 0: no limit
  size_t sample_size = 20'000;   // files kept for the loader and for sizes
  size_t sized = 20'000;         // of those, stat'ed for the size percentiles (size_sample)
  uint64_t seed = 1;
};

struct SampledFile {
  std::string path;
  // 0 until known (size_known): readers of a file of unknown size read it to its end.
  uint64_t size_bytes = 0;
  bool size_known = false;
};

// What the directories of one depth (0: the dataset root) looked like.
struct DepthStats {
  uint64_t dirs_read = 0;         // completely read
  uint64_t dirs_pending = 0;      // queued (or cut mid-read) when the budget ran out
  uint64_t files = 0;             // regular files in the directories read
  uint64_t subdirs = 0;           // subdirectories in the directories read
  uint64_t files_in_pending = 0;  // files already listed in pending directories cut mid-read
};

struct FileSizePercentiles {
  uint64_t p10 = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double mean = 0;
};

struct DatasetScan {
  std::string root;
  // kComplete, kTime, kEntries or kFiles (a budget ran out), kSignal.
  StopReason stop_reason = StopReason::kNone;
  bool complete() const { return stop_reason == StopReason::kComplete; }

  uint64_t entries_read = 0;
  uint64_t files_seen = 0;  // regular files listed
  uint64_t dirs_read = 0;
  uint64_t symlinks_skipped = 0;
  uint64_t other_skipped = 0;                        // sockets, fifos, devices
  uint64_t vanished = 0;                             // listed, then gone before the stat
  uint64_t permission_denied = 0;                    // directories (or files) the walk was refused
  std::vector<std::string> permission_denied_paths;  // the first few, for the message
  uint64_t max_dir_entries = 0;                      // the largest directory read (or the part read of it)
  std::vector<DepthStats> depths;

  // Estimates; exact (files_exact) when the walk completed.
  double files_estimate = 0;
  bool files_exact = false;
  double bytes_estimate = 0;
  std::string estimate_method;  // one sentence: how the count was obtained

  std::vector<SampledFile> sample;  // uniform over the files listed, in walk order
  // Of the files of the sample with a known size (size_sample); empty before it.
  uint64_t files_sized = 0;
  FileSizePercentiles sizes;
  uint64_t elapsed_ns = 0;

  // Directory fan-out over the directories read: mean subdirectories and files per directory.
  double mean_subdirs_per_dir() const;
  double mean_files_per_dir() const;
};

// Walks `root` (a directory) within `budget`. `stop` ends the walk early (stop_reason "signal").
// Errors: root missing or not a directory (usage), or unreadable (runtime). An empty tree is not
// an error here: the caller decides (the probe needs files).
Result<DatasetScan> scan_dataset(const std::string& root, const ScanBudget& budget, const std::atomic<bool>& stop);

// Stats up to `max_files` files of the sample, spread evenly over it (every k-th), with `threads`
// at once and for at most `time` (stat'ing ends there; the sizes are those taken), and derives
// the size percentiles and bytes_estimate (the mean size times the file count) from every file
// whose size is known. Call it after the timed reads: its lookups warm the metadata of the files
// it touches. A file gone since the walk is counted in `vanished`.
void size_sample(DatasetScan& scan, size_t max_files, int threads, std::chrono::nanoseconds time,
                 const std::atomic<bool>& stop);

// The estimate of the regular files in a tree walked breadth first and cut short: files seen,
// plus, for each directory still pending at depth d, the files expected below it when every
// level d' >= d branches like the mean of the directories read at d' (levels deeper than any read
// are taken to be like the deepest level read, and one level deep: without them no fan-out is
// known, so this under- rather than over-counts). Files already listed in a directory cut
// mid-read are subtracted from that directory's expectation. With no level read at all (the
// budget ran out inside the root) there is nothing to extrapolate from: files_seen, a lower
// bound. Equals files_seen when nothing is pending.
double estimate_tree_files(uint64_t files_seen, const std::vector<DepthStats>& depths);

// Nearest-rank percentiles of the sizes (the input is copied and sorted).
FileSizePercentiles file_size_percentiles(std::vector<uint64_t> sizes);

}  // namespace iogate
