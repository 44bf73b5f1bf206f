#include "dataset/feed_points.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "base/clock.h"
#include "base/unique_fd.h"
#include "dataset/dataset_loader.h"
#include "probe/aligned_buffer.h"

namespace iogate {
namespace {

constexpr size_t kAlign = 4096;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Shared {
  std::atomic<size_t> next{0};
  std::atomic<bool> buffered{false};
  size_t count = 0;
  uint64_t deadline_ns = 0;
};

struct Tally {
  uint64_t files = 0, requests = 0, bytes = 0;
};

enum class Outcome { kDone, kSkipped, kDirectRefused, kStopped };

// One file in requests of `request` bytes (the last may come back short).
Outcome read_file(const SampledFile& f, FeedSplit split, bool direct, AlignedBuffer& buf, const Shared& shared,
                  const std::atomic<bool>& stop, Tally& t) {
  UniqueFd fd = open_sample(f.path, direct);
  if (!fd.valid()) return direct && errno == EINVAL ? Outcome::kDirectRefused : Outcome::kSkipped;
  if (!direct) {
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_RANDOM);
  }
  // A size the scan did not take: the open's lookup has just fetched it, so fstat costs no round trip.
  uint64_t size = f.size_bytes;
  if (struct stat st; !f.size_known && ::fstat(fd.get(), &st) == 0) size = static_cast<uint64_t>(st.st_size);
  size_t whole = std::min(round_up(std::max<uint64_t>(size, 1), kAlign), kFeedMaxRequest);
  size_t request = split == FeedSplit::kWhole ? whole : std::max(kAlign, round_up(whole / 2, kAlign));
  uint64_t offset = 0;
  for (;;) {
    ssize_t n = ::pread(fd.get(), buf.data(), request, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return direct && errno == EINVAL ? Outcome::kDirectRefused : Outcome::kSkipped;
    }
    t.requests++;
    t.bytes += static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
    if (n == 0 || static_cast<size_t>(n) < request || offset >= size) break;
    if (stop.load(std::memory_order_relaxed) || monotonic_ns() >= shared.deadline_ns) return Outcome::kStopped;
  }
  if (!direct) ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  t.files++;
  return Outcome::kDone;
}

void reader(const std::vector<SampledFile>& files, size_t first, FeedSplit split, Shared& shared,
            const std::atomic<bool>& stop, Tally& t) {
  AlignedBuffer buf(kFeedMaxRequest);
  if (!buf.valid()) return;
  for (;;) {
    if (stop.load(std::memory_order_relaxed) || monotonic_ns() >= shared.deadline_ns) return;
    size_t i = shared.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= shared.count) return;
    const SampledFile& f = files[(first + i) % files.size()];
    Outcome o = read_file(f, split, !shared.buffered.load(std::memory_order_relaxed), buf, shared, stop, t);
    if (o == Outcome::kDirectRefused) {
      shared.buffered.store(true);
      o = read_file(f, split, false, buf, shared, stop, t);
    }
    if (o == Outcome::kStopped) return;
  }
}

}  // namespace

FeedPoint measure_feed_point(const std::vector<SampledFile>& files, size_t* cursor, int workers, FeedSplit split,
                             std::chrono::nanoseconds runtime, const std::atomic<bool>& stop, bool* buffered) {
  FeedPoint p;
  p.workers = std::max(1, workers);
  if (files.empty()) return p;
  Shared shared;
  shared.count = files.size();
  shared.buffered = buffered && *buffered;
  uint64_t start = monotonic_ns();
  shared.deadline_ns = start + static_cast<uint64_t>(std::max<int64_t>(0, runtime.count()));
  std::vector<Tally> tallies(static_cast<size_t>(p.workers));
  {
    std::vector<std::jthread> threads;
    for (Tally& t : tallies) {
      threads.emplace_back([&, first = *cursor, out = &t] { reader(files, first, split, shared, stop, *out); });
    }
  }
  p.elapsed_ns = monotonic_ns() - start;
  for (const Tally& t : tallies) {
    p.files += t.files;
    p.requests += t.requests;
    p.bytes += t.bytes;
  }
  *cursor = (*cursor + std::min(shared.next.load(), shared.count)) % files.size();
  if (buffered) *buffered = shared.buffered.load();
  return p;
}

FeedPoints measure_feed_points(const std::vector<SampledFile>& files, size_t cursor, int workers,
                               const FeedPointsOptions& options, const std::atomic<bool>& stop) {
  FeedPoints out;
  if (!options.enabled || files.empty() || stop.load()) return out;
  if (!files.empty()) cursor %= files.size();
  bool buffered = false;
  out.whole = measure_feed_point(files, &cursor, workers, FeedSplit::kWhole, options.runtime, stop, &buffered);
  if (stop.load()) return out;
  out.halves = measure_feed_point(files, &cursor, workers, FeedSplit::kHalves, options.runtime, stop, &buffered);
  if (stop.load()) return out;
  out.doubled = measure_feed_point(files, &cursor, 2 * workers, FeedSplit::kWhole, options.runtime, stop, &buffered);
  if (buffered) {
    out.notes.push_back(
        "limit measurement: O_DIRECT refused by the file system (EINVAL): buffered reads without readahead, each file "
        "dropped from the page cache before and after");
  }
  return out;
}

}  // namespace iogate
