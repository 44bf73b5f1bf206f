// The DataLoader emulation: W worker threads each take the next file of a shuffled list and do
// what a PyTorch Dataset's __getitem__ does with a file per sample: open, read it whole, close.
//
// Each file is read once per run, and dropped from the page cache just before and right after
// (posix_fadvise DONTNEED; clean pages only, so a dataset still being written back can be served
// from memory), so a run measures the storage, not memory; with `direct` the files
// are opened O_DIRECT into aligned buffers where the file system takes it (a refusal falls back
// to buffered reads with a note). Files are opened O_RDONLY|O_NOFOLLOW, with O_NOATIME where
// permitted: the loader never writes.
//
// Three latencies per file, all from the start of open(): open (open returned), first byte
// (the first read returned data) and file (the whole file read and closed), without the time of
// the drop before reading.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "dataset/dataset_scan.h"
#include "probe/adaptive_stop.h"
#include "probe/latency_histogram.h"
#include "probe/stop_reason.h"

namespace iogate {

struct LoaderOptions {
  int workers = 1;
  std::chrono::nanoseconds runtime = std::chrono::seconds(10);  // a limit: the run also ends with its files
  bool direct = false;
  size_t chunk_bytes = 1 << 20;  // read() size for files larger than this
  // The block probe's early stop (adaptive_stop.h) on samples/s: one sample per sample_interval
  // (the files completed in it), the first interval left out as the ramp (threads starting,
  // directories looked up). threshold_iops, when set, is a samples/s target here: the run stops
  // once clearly above or below it.
  EarlyStopConfig early_stop;
  // The early stop's samples in bytes/s (bytes read in each interval, of whole and partial files)
  // instead of files/s, its threshold then a bytes/s target: for shards, a few large files whose
  // completions a second are too coarse to settle on.
  bool early_stop_on_bytes = false;
};

struct LoaderRun {
  int workers = 0;
  bool direct = false;      // as run: false after a fallback
  uint64_t files_read = 0;  // completely read
  uint64_t bytes_read = 0;  // of the files completely read
  // Read within the window from files cut short at its end: counted in bytes/s, since a large file
  // (a shard) in flight at the deadline is bytes the volume delivered; not in a file's mean size.
  uint64_t partial_bytes = 0;
  uint64_t errors = 0;      // files that could not be opened or read
  std::string first_error;  // "path: reason", the first of them
  uint64_t elapsed_ns = 0;
  uint64_t cpu_ns = 0;    // CPU time of the worker threads together (CLOCK_THREAD_CPUTIME_ID)
  size_t first_file = 0;  // the range of the list this run was given
  size_t files_given = 0;
  size_t files_taken = 0;  // of those, how many workers took (read, failed or cut short)
  // kFiles (all read), kRuntime, kSignal, or the early stop's kSettled, kAboveThreshold, kBelowThreshold.
  StopReason stop_reason = StopReason::kNone;
  ConfidenceInterval interval;  // of samples/s, when the early stop was enabled (its samples: interval.samples)
  LatencyHistogram open_ns, first_byte_ns, file_ns;
  std::vector<std::string> notes;  // fallbacks, e.g. O_DIRECT refused

  double samples_per_s() const;
  double bytes_per_s() const;
};

// Opens a sample for reading: O_RDONLY|O_NOFOLLOW, O_DIRECT when `direct`, O_NOATIME where
// permitted. Invalid (errno set) on failure. The loader and the limit's read points both open so.
UniqueFd open_sample(const std::string& path, bool direct);

// Reads files[first, first + count) with options.workers threads. Never fails as a whole: a file
// that cannot be read is counted in `errors`.
LoaderRun run_loader(const std::vector<SampledFile>& files, size_t first, size_t count, const LoaderOptions& options,
                     const std::atomic<bool>& stop);

// A sweep over worker counts, one run each, each over its own equal slice of `files`, so no run
// reads what an earlier one read (and maybe left in a cache). A single count reads the whole
// list. With fewer files than counts, slices are one file and repeat, and the notes say so.
// `before_run` (optional) is told each worker count as its run starts, for progress.
std::vector<LoaderRun> run_loader_sweep(const std::vector<SampledFile>& files, const std::vector<int>& worker_counts,
                                        const LoaderOptions& options, const std::atomic<bool>& stop,
                                        const std::function<void(int)>& before_run = {});

// Where adding workers stops paying: the fewest workers whose samples/s comes within `min_gain`
// (0.10: 10%) of the sweep's best, i.e. no count tried gives more than 10% over it. Judged against
// the best rather than step by step, because short runs are noisy: one dip (2 workers slower
// than 1) must not hide that 4 workers read three times as fast. 0 for an empty sweep.
int scaling_knee(const std::vector<LoaderRun>& sweep, double min_gain = 0.10);

// The default worker count: 70% of the CPUs this process may run on (as PyTorch guides advise,
// leaving room for the training loop), at least 1.
int default_loader_workers();

}  // namespace iogate
