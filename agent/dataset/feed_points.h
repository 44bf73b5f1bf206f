// The second measurement behind the limit finding (feed_limit.h): three short, bounded read
// patterns over sampled files at the loader's concurrency — whole files in one request, files in
// two half-size requests, whole files with twice the readers.
//
// Each point reads files of the (shuffled) sample from a cursor on, each file at most once per
// point and never one the point before read, O_DIRECT into aligned buffers (no cache, no
// readahead, one pread = one request as the reader sees it; the block layer may still split a
// large one). Where the file system refuses O_DIRECT, buffered reads with POSIX_FADV_RANDOM (no
// readahead to merge the halves) and the pages dropped before and after each file. A request is
// at most kFeedMaxRequest: a larger file is read in pieces of that size (whole) or half of it.
// Read-only, as the loader: O_RDONLY|O_NOFOLLOW, O_NOATIME where permitted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dataset/dataset_scan.h"
#include "dataset/feed_limit.h"

namespace iogate {

inline constexpr size_t kFeedMaxRequest = 1 << 20;

struct FeedPointsOptions {
  bool enabled = true;
  // Per point; three points. Long enough for several of a cgroup throttle's 100 ms slices and
  // hundreds of 110 KB files on a volume capped at 1,000 IOPS; short beside the loader's run.
  std::chrono::nanoseconds runtime = std::chrono::milliseconds(400);
};

enum class FeedSplit { kWhole, kHalves };

// One point: files[(cursor + i) % size] for i = 0, 1, ... with `workers` threads until `runtime`
// ends or every file was taken once. `*cursor` moves past the files taken. Never fails as a
// whole: a file that cannot be read is skipped (its time counts).
FeedPoint measure_feed_point(const std::vector<SampledFile>& files, size_t* cursor, int workers, FeedSplit split,
                             std::chrono::nanoseconds runtime, const std::atomic<bool>& stop, bool* buffered);

struct FeedPoints {
  std::optional<FeedPoint> whole, halves, doubled;
  std::vector<std::string> notes;  // e.g. O_DIRECT refused
};

// The three points at `workers` readers (doubled: 2 × workers), starting at `cursor` in the list
// (past the files the loader read). Nothing when `options.enabled` is false, the list is empty
// or `stop` is set.
FeedPoints measure_feed_points(const std::vector<SampledFile>& files, size_t cursor, int workers,
                               const FeedPointsOptions& options, const std::atomic<bool>& stop);

}  // namespace iogate
