#include "dataset/dataset_loader.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/unique_fd.h"
#include "probe/aligned_buffer.h"

namespace iogate {
namespace {

constexpr size_t kDirectAlign = 4096;

// What the workers share: the next file to take, and the flags that end or change the run.
struct SharedState {
  std::atomic<size_t> next{0};
  std::atomic<bool> direct_refused{false};
  std::atomic<uint64_t> deadline_ns{0};  // brought forward by the early stop
  std::atomic<uint64_t> completed{0};    // files read whole, for the early stop's samples
  std::atomic<uint64_t> bytes{0};        // bytes read, whole files or not: early_stop_on_bytes' samples
  std::atomic<int> running{0};
};

struct WorkerResult {
  uint64_t files = 0, bytes = 0, partial_bytes = 0, errors = 0, cpu_ns = 0;
  std::string first_error;
  LatencyHistogram open_ns, first_byte_ns, file_ns;
};

enum class ReadOutcome { kOk, kError, kDirectRefused, kStopped };

// Open, read whole, drop from the cache, close; records the three latencies on success.
ReadOutcome read_one(const SampledFile& f, bool direct, AlignedBuffer& buf, size_t chunk, SharedState& shared,
                     const std::atomic<bool>& stop, WorkerResult& out) {
  uint64_t t0 = monotonic_ns();
  UniqueFd fd = open_sample(f.path, direct);
  if (!fd.valid()) {
    int err = errno;
    if (direct && err == EINVAL) return ReadOutcome::kDirectRefused;
    if (out.first_error.empty()) out.first_error = fmt::format("{}: open: {}", f.path, std::strerror(err));
    return ReadOutcome::kError;
  }
  uint64_t t_open = monotonic_ns();
  // Pages of this file already cached (a dataset just written or read by another job) would be
  // read at memory speed: drop them first (clean pages only; a few µs when there are none). Its
  // time is left out of the latencies, which are the reader's, not ours.
  uint64_t drop_ns = 0;
  if (!direct) {
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
    drop_ns = monotonic_ns() - t_open;
  }
  uint64_t t_first = 0, total = 0;
  // A file no larger than a chunk is read with one read() sized to it (plus one that sees EOF
  // unless the first came back short of the buffer), as a Dataset reads a sample whole.
  size_t want = std::min(chunk, buf.size());
  for (;;) {
    ssize_t n = ::read(fd.get(), buf.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      if (direct && err == EINVAL) return ReadOutcome::kDirectRefused;
      if (out.first_error.empty()) out.first_error = fmt::format("{}: read: {}", f.path, std::strerror(err));
      return ReadOutcome::kError;
    }
    if (t_first == 0) t_first = monotonic_ns();
    total += static_cast<uint64_t>(n);
    shared.bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    // A short read of a regular file at or past its listed size is its end: no extra read(). Of a
    // file whose size the scan did not take (0), a short read is its end too.
    if (n == 0 || (static_cast<size_t>(n) < want && total >= f.size_bytes)) break;
    if (stop.load(std::memory_order_relaxed) || monotonic_ns() >= shared.deadline_ns.load(std::memory_order_relaxed)) {
      out.partial_bytes += total;  // read within the window, of a file (a shard) cut short
      return ReadOutcome::kStopped;
    }
  }
  // The cache must not answer the next run (or the next round of a benchmark): drop the pages.
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  fd.reset();
  uint64_t t_done = monotonic_ns();
  out.files++;
  shared.completed.fetch_add(1, std::memory_order_relaxed);
  out.bytes += total;
  out.open_ns.record(t_open - t0);
  out.first_byte_ns.record(t_first - t0 - drop_ns);
  out.file_ns.record(t_done - t0 - drop_ns);
  return ReadOutcome::kOk;
}

uint64_t thread_cpu_ns() {
  timespec ts{};
  return ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec)
                                                            : 0;
}

void read_files(const std::vector<SampledFile>& files, size_t first, size_t count, const LoaderOptions& o,
                SharedState& shared, const std::atomic<bool>& stop, WorkerResult& out) {
  size_t chunk = std::max(kDirectAlign, o.chunk_bytes / kDirectAlign * kDirectAlign);
  AlignedBuffer buf(chunk);
  if (!buf.valid()) {
    out.errors++;
    out.first_error = "cannot allocate the read buffer";
    return;
  }
  for (;;) {
    if (stop.load(std::memory_order_relaxed) || monotonic_ns() >= shared.deadline_ns.load(std::memory_order_relaxed))
      return;
    size_t i = shared.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= count) return;
    const SampledFile& f = files[(first + i) % files.size()];
    bool direct = o.direct && !shared.direct_refused.load(std::memory_order_relaxed);
    ReadOutcome r = read_one(f, direct, buf, chunk, shared, stop, out);
    if (r == ReadOutcome::kDirectRefused) {
      shared.direct_refused.store(true);
      r = read_one(f, false, buf, chunk, shared, stop, out);
    }
    if (r == ReadOutcome::kError) out.errors++;
    if (r == ReadOutcome::kStopped) return;
  }
}

// The thread's CPU time tells a reader waiting on storage from one busy on its own CPU (feed_limit.h).
void worker(const std::vector<SampledFile>& files, size_t first, size_t count, const LoaderOptions& o,
            SharedState& shared, const std::atomic<bool>& stop, WorkerResult& out) {
  uint64_t cpu0 = thread_cpu_ns();
  read_files(files, first, count, o, shared, stop, out);
  out.cpu_ns = thread_cpu_ns() - cpu0;
  shared.running.fetch_sub(1);
}

// Samples the files completed each interval until the workers are done, and brings the deadline
// forward when the early stop says so. Returns its decision (reason kNone: it never stopped).
StopDecision sample_until_done(const EarlyStopConfig& config, bool on_bytes, uint64_t start, SharedState& shared,
                               const std::atomic<bool>& stop) {
  EarlyStop es(config);
  const uint64_t interval = static_cast<uint64_t>(std::max<int64_t>(1'000'000, config.sample_interval.count()));
  uint64_t tick = start + interval, last = 0, last_ns = start;
  bool ramp = true;
  StopDecision d;
  while (shared.running.load() > 0) {
    uint64_t now = monotonic_ns();
    if (now < tick) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<uint64_t>(tick - now, 5'000'000)));
      continue;
    }
    // Over the time that really passed: a sampler scheduled late must not inflate a sample.
    uint64_t done = (on_bytes ? shared.bytes : shared.completed).load(std::memory_order_relaxed);
    if (!ramp) es.add_sample(double(done - last) / (double(now - last_ns) / 1e9));
    ramp = false;
    last = done;
    last_ns = now;
    tick = now + interval;
    d = es.decide();
    if (d.stop && !stop.load()) {
      shared.deadline_ns.store(monotonic_ns());
      return d;
    }
  }
  d.ci = es.interval();
  d.reason = StopReason::kNone;
  return d;
}

}  // namespace

UniqueFd open_sample(const std::string& path, bool direct) {
  const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (direct ? O_DIRECT : 0);
  // O_NOATIME: reading must not dirty inodes; only the owner (or CAP_FOWNER) may ask for it.
  int fd = ::open(path.c_str(), flags | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(path.c_str(), flags);
  return UniqueFd(fd);
}

double LoaderRun::samples_per_s() const {
  return elapsed_ns ? static_cast<double>(files_read) / (static_cast<double>(elapsed_ns) / 1e9) : 0;
}

double LoaderRun::bytes_per_s() const {
  return elapsed_ns ? static_cast<double>(bytes_read + partial_bytes) / (static_cast<double>(elapsed_ns) / 1e9) : 0;
}

LoaderRun run_loader(const std::vector<SampledFile>& files, size_t first, size_t count, const LoaderOptions& o,
                     const std::atomic<bool>& stop) {
  LoaderRun run;
  run.workers = std::max(1, o.workers);
  run.first_file = first;
  run.files_given = count;
  if (files.empty() || count == 0) {
    run.stop_reason = StopReason::kFiles;
    return run;
  }
  SharedState shared;
  uint64_t start = monotonic_ns();
  shared.deadline_ns = start + static_cast<uint64_t>(std::max<int64_t>(0, o.runtime.count()));
  shared.running = run.workers;
  std::vector<WorkerResult> results(static_cast<size_t>(run.workers));
  StopDecision early;
  {
    std::vector<std::jthread> threads;
    for (WorkerResult& r : results) {
      threads.emplace_back([&, out = &r] { worker(files, first, count, o, shared, stop, *out); });
    }
    if (o.early_stop.enabled) early = sample_until_done(o.early_stop, o.early_stop_on_bytes, start, shared, stop);
  }
  run.elapsed_ns = monotonic_ns() - start;
  for (WorkerResult& r : results) {
    run.files_read += r.files;
    run.bytes_read += r.bytes;
    run.partial_bytes += r.partial_bytes;
    run.errors += r.errors;
    run.cpu_ns += r.cpu_ns;
    if (run.first_error.empty()) run.first_error = r.first_error;
    run.open_ns.merge(r.open_ns);
    run.first_byte_ns.merge(r.first_byte_ns);
    run.file_ns.merge(r.file_ns);
  }
  run.direct = o.direct && !shared.direct_refused.load();
  if (o.direct && !run.direct) {
    run.notes.push_back(
        "O_DIRECT refused by the file system (EINVAL): buffered reads, each file dropped from the page cache after "
        "reading");
  }
  run.files_taken = std::min(shared.next.load(), count);
  run.interval = early.ci;
  run.stop_reason = stop.load()                         ? StopReason::kSignal
                    : early.reason != StopReason::kNone ? early.reason
                    : run.files_taken >= count          ? StopReason::kFiles
                                                        : StopReason::kRuntime;
  return run;
}

std::vector<LoaderRun> run_loader_sweep(const std::vector<SampledFile>& files, const std::vector<int>& worker_counts,
                                        const LoaderOptions& options, const std::atomic<bool>& stop,
                                        const std::function<void(int)>& before_run) {
  std::vector<LoaderRun> sweep;
  // Equal, disjoint slices: every run reads files no other run read, so none is served by a cache
  // another left warm, and each has the same number of files to get through.
  size_t slice = worker_counts.empty() ? 0 : files.size() / worker_counts.size();
  if (slice == 0) slice = files.size();
  size_t cursor = 0;
  for (int w : worker_counts) {
    if (stop.load()) break;
    if (before_run) before_run(w);
    LoaderOptions o = options;
    o.workers = w;
    bool reused = cursor + slice > files.size();
    if (reused) cursor = 0;
    LoaderRun run = run_loader(files, cursor, slice, o, stop);
    if (reused) {
      run.notes.push_back(
          "fewer sampled files than sweep entries: runs share files (dropped from the cache after each read)");
    }
    cursor += slice;
    sweep.push_back(std::move(run));
  }
  return sweep;
}

int scaling_knee(const std::vector<LoaderRun>& sweep, double min_gain) {
  if (sweep.empty()) return 0;
  double best = 0;
  for (const LoaderRun& run : sweep) best = std::max(best, run.samples_per_s());
  int knee = 0;
  for (const LoaderRun& run : sweep) {
    if (run.samples_per_s() * (1 + min_gain) >= best && (knee == 0 || run.workers < knee)) knee = run.workers;
  }
  return knee;
}

int default_loader_workers() {
  cpu_set_t set;
  int cpus = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, static_cast<int>(cpus * 0.7));
}

}  // namespace iogate
