#include "checkpoint/checkpoint_probe.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/rng.h"
#include "base/text_file.h"
#include "base/unique_fd.h"
#include "base/units.h"
#include "probe/test_file.h"

namespace iogate {
namespace {

// A rank's writes and reads: large, as a serialiser hands a tensor's storage to write().
constexpr size_t kChunk = size_t{4} << 20;
// The first round per rank; each next one grows toward kRoundGoal, by at least x2 and at most x8.
constexpr uint64_t kFirstRankBytes = uint64_t{8} << 20;
constexpr double kRoundGoal_s = 1.0;
// Two rounds at least this long whose rates agree within kSettleTolerance end the saves.
constexpr double kSettledRound_s = 0.5;
constexpr double kSettleTolerance = 0.10;
// Rounds shorter than this are left out of the line where two longer ones exist.
constexpr double kFitRound_s = 0.25;
// The least a round may write in all ranks, whatever the memory limit says.
constexpr uint64_t kMinRoundBytes = uint64_t{16} << 20;

// A rank's file: created by us, flocked while it exists, removed when this goes away.
struct RankFile {
  std::string path;
  UniqueFd fd;
  uint64_t bytes = 0;
  RankFile() = default;
  RankFile(RankFile&&) = default;
  RankFile& operator=(RankFile&&) = default;
  ~RankFile() {
    if (!path.empty() && fd.valid()) unlink(path.c_str());
  }
};

struct SaveRound {
  CheckpointRound figures;
  std::vector<RankFile> files;
};

uint64_t free_bytes(const std::string& dir) {
  struct statvfs sv;
  if (statvfs(dir.c_str(), &sv) != 0) return 0;
  return static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
}

Error errno_error(std::string message, int err) {
  Error e = runtime_error(std::move(message));
  e.os_errno = err;
  return e;
}

Result<RankFile> create_rank_file(const std::string& dir, int rank) {
  RankFile f;
  f.path = dir + (dir.ends_with('/') ? "" : "/") + temp_test_file_name(fmt::format("checkpoint-rank{}", rank));
  UniqueFd fd(open(f.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    int err = errno;
    f.path.clear();
    return errno_error(fmt::format("{}: cannot create a checkpoint file: {}", dir, std::strerror(err)), err);
  }
  flock(fd.get(), LOCK_EX | LOCK_NB);  // alive: reclaim_dead_test_files leaves it
  f.fd = std::move(fd);
  return f;
}

// Writes `bytes` of `data` (cycled) to fd, then fsync. 0 or the errno.
int write_and_fsync(int fd, const std::vector<char>& data, uint64_t bytes, const std::atomic<bool>& stop) {
  uint64_t done = 0;
  while (done < bytes) {
    if (stop.load(std::memory_order_relaxed)) return EINTR;
    size_t n = static_cast<size_t>(std::min<uint64_t>(data.size(), bytes - done));
    ssize_t w = write(fd, data.data(), n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    done += static_cast<uint64_t>(w);
  }
  return fsync(fd) == 0 ? 0 : errno;
}

int read_all(const std::string& path, std::vector<char>& buf, uint64_t bytes, const std::atomic<bool>& stop) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return errno;
  uint64_t done = 0;
  while (done < bytes) {
    if (stop.load(std::memory_order_relaxed)) return EINTR;
    ssize_t r = read(fd.get(), buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r == 0) break;
    done += static_cast<uint64_t>(r);
  }
  return 0;
}

// Runs `work(rank)` on one thread per rank, all released at once; the slowest rank's seconds,
// or the first errno.
template <typename Work>
Result<double> all_ranks(int ranks, Work work) {
  std::vector<double> seconds(size_t(ranks), 0);
  std::vector<int> errors(size_t(ranks), 0);
  std::barrier start(ranks);
  std::vector<std::thread> threads;
  threads.reserve(size_t(ranks));
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      start.arrive_and_wait();
      const uint64_t t0 = monotonic_ns();
      errors[size_t(r)] = work(r);
      seconds[size_t(r)] = double(monotonic_ns() - t0) / 1e9;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int e : errors) {
    if (e != 0) return errno_error(std::strerror(e), e);
  }
  return *std::max_element(seconds.begin(), seconds.end());
}

// One save: every rank creates its file, writes `rank_bytes` and fsyncs.
Result<SaveRound> save_round(const CheckpointRequest& req, uint64_t rank_bytes,
                             const std::vector<std::vector<char>>& data, const std::atomic<bool>& stop) {
  SaveRound round;
  for (int r = 0; r < req.ranks; ++r) {
    auto f = create_rank_file(req.directory, r);
    if (!f.ok()) return f.error();
    f->bytes = rank_bytes;
    round.files.push_back(std::move(*f));
  }
  auto took = all_ranks(req.ranks, [&](int r) {
    return write_and_fsync(round.files[size_t(r)].fd.get(), data[size_t(r)], rank_bytes, stop);
  });
  if (!took.ok()) {
    if (took.error().os_errno == EINTR) return took.error();
    const int err = took.error().os_errno;
    std::string why = err == ENOSPC || err == EDQUOT ? fmt::format("{} (free: {})", took.error().message,
                                                                   format_bytes(double(free_bytes(req.directory))))
                                                     : took.error().message;
    return errno_error(
        fmt::format("{}: writing a checkpoint of {} from {} rank{}: {}", req.directory,
                    format_bytes(double(rank_bytes) * req.ranks), req.ranks, req.ranks == 1 ? "" : "s", why),
        err);
  }
  round.figures = {rank_bytes, *took};
  return round;
}

// Reads a round's files back, each rank its own, after dropping them from the page cache
// (they are clean after fsync, so the kernel drops them).
Result<CheckpointRound> restore_round(const CheckpointRequest& req, const SaveRound& saved,
                                      std::vector<std::vector<char>>& buffers, const std::atomic<bool>& stop) {
  for (const RankFile& f : saved.files) posix_fadvise(f.fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  auto took = all_ranks(req.ranks, [&](int r) {
    const RankFile& f = saved.files[size_t(r)];
    return read_all(f.path, buffers[size_t(r)], f.bytes, stop);
  });
  if (!took.ok()) {
    return errno_error(fmt::format("{}: reading a checkpoint back: {}", req.directory, took.error().message),
                       took.error().os_errno);
  }
  return CheckpointRound{saved.figures.rank_bytes, *took};
}

bool settled(const std::vector<CheckpointRound>& rounds) {
  if (rounds.size() < 2) return false;
  const CheckpointRound& a = rounds[rounds.size() - 2];
  const CheckpointRound& b = rounds.back();
  if (a.seconds < kSettledRound_s || b.seconds < kSettledRound_s) return false;
  const double ra = double(a.rank_bytes) / a.seconds, rb = double(b.rank_bytes) / b.seconds;
  return std::fabs(rb - ra) <= kSettleTolerance * std::max(ra, rb);
}

}  // namespace

FittedLine fit_rounds(const std::vector<CheckpointRound>& rounds) {
  FittedLine line;
  // Short rounds say more about a cache or a throttle's time slice than about the device: left out
  // where two long enough ones are there to draw the line through.
  const double shortest = std::count_if(rounds.begin(), rounds.end(),
                                        [](const CheckpointRound& r) { return r.seconds >= kFitRound_s; }) >= 2
                              ? kFitRound_s
                              : 0;
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const CheckpointRound& r : rounds) {
    if (r.seconds <= 0 || r.seconds < shortest || r.rank_bytes == 0) continue;
    const double x = double(r.rank_bytes), y = r.seconds;
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  if (n == 0) return line;
  const double var = n * sxx - sx * sx;
  if (n >= 2 && var > 1e-9 * sxx * n) {
    const double slope = (n * sxy - sx * sy) / var;
    const double intercept = (sy - slope * sx) / n;
    if (slope > 0 && intercept >= 0) return {intercept, 1.0 / slope};
  }
  // Through the origin: t = bytes / rate.
  if (sxy > 0) line.bytes_per_s = sxx / sxy;
  return line;
}

uint64_t process_memory_limit_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  uint64_t machine = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : uint64_t{1} << 32;
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    auto text = read_text_file(path);
    if (!text.ok()) continue;
    uint64_t v = 0;
    if (std::sscanf(text->c_str(), "%lu", &v) == 1 && v > 0) return std::min(v, machine);  // "max" reads as none
  }
  return machine;
}

Result<CheckpointProbeResult> run_checkpoint_probe(const CheckpointRequest& req_in, const std::atomic<bool>& stop) {
  CheckpointRequest req = req_in;
  req.ranks = std::max(req.ranks, 1);
  struct stat st;
  if (stat(req.directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return usage_error(fmt::format("{}: not a directory; a checkpoint is saved into one", req.directory));
  }
  if (int refusal = directory_write_refusal(req.directory)) {
    return errno_error(fmt::format("{}: {}", req.directory,
                                   refusal == EROFS ? "read-only: a checkpoint cannot be written here"
                                                    : "not writable by this user: a checkpoint cannot be written here"),
                       refusal);
  }
  reclaim_dead_test_files(req.directory);
  CheckpointProbeResult out;
  out.directory = req.directory;
  out.ranks = req.ranks;
  // A round's bytes in all ranks: half the memory we may use (its dirty pages), a quarter of the
  // free space (two rounds' files exist at once while the last is read back).
  const uint64_t by_memory = process_memory_limit_bytes() / 2;
  const uint64_t by_space = free_bytes(req.directory) / 4;
  out.round_bytes_limit = std::max(std::min(by_memory, by_space), kMinRoundBytes);
  const uint64_t rank_limit =
      std::max<uint64_t>(std::min(req.max_rank_bytes, out.round_bytes_limit / uint64_t(req.ranks)), 4096);

  std::vector<std::vector<char>> data(size_t(req.ranks), std::vector<char>(kChunk));
  for (int r = 0; r < req.ranks; ++r) {
    FastRng rng(mix_seed(req.seed, uint64_t(r)));
    for (size_t i = 0; i + 8 <= kChunk; i += 8) {
      uint64_t w = rng.next() | 0x0101010101010101ULL;
      std::memcpy(data[size_t(r)].data() + i, &w, 8);
    }
  }

  const uint64_t started = monotonic_ns();
  const uint64_t budget_ns = uint64_t(std::max<int64_t>(req.runtime.count(), 0));
  std::vector<SaveRound> kept;  // the last two rounds' files, for the read-back
  uint64_t rank_bytes = std::min(kFirstRankBytes, rank_limit);
  while (true) {
    auto round = save_round(req, rank_bytes, data, stop);
    if (!round.ok()) {
      if (round.error().os_errno == EINTR) {
        out.stop_reason = StopReason::kSignal;
        break;
      }
      return round.error();
    }
    out.saves.push_back(round->figures);
    out.bytes_written += rank_bytes * uint64_t(req.ranks);
    spdlog::debug("checkpoint round: {} x {} in {:.3f} s", req.ranks, format_bytes(double(rank_bytes)),
                  round->figures.seconds);
    kept.push_back(std::move(*round));
    if (kept.size() > 2) kept.erase(kept.begin());
    if (rank_bytes >= req.max_rank_bytes) {
      out.stop_reason = StopReason::kComplete;  // the whole checkpoint was saved
      break;
    }
    if (settled(out.saves)) {
      out.stop_reason = StopReason::kSettled;
      break;
    }
    const double last_s = std::max(out.saves.back().seconds, 1e-6);
    const double growth = std::clamp(kRoundGoal_s / last_s, 2.0, 8.0);
    const uint64_t next = std::min<uint64_t>(uint64_t(double(rank_bytes) * growth), rank_limit);
    const double next_s = last_s * double(next) / double(rank_bytes);
    if (double(monotonic_ns() - started) + next_s * 1e9 > double(budget_ns)) {
      out.stop_reason = StopReason::kRuntime;
      break;
    }
    rank_bytes = next;
  }
  out.save = fit_rounds(out.saves);
  if (req.restore && out.stop_reason != StopReason::kSignal) {
    std::vector<std::vector<char>> buffers(size_t(req.ranks), std::vector<char>(kChunk));
    for (const SaveRound& saved : kept) {
      auto r = restore_round(req, saved, buffers, stop);
      if (!r.ok()) {
        if (r.error().os_errno == EINTR) {
          out.stop_reason = StopReason::kSignal;
          break;
        }
        return r.error();
      }
      out.restores.push_back(*r);
      out.bytes_read += r->rank_bytes * uint64_t(req.ranks);
    }
    out.restore = fit_rounds(out.restores);
  }
  out.measured_s = double(monotonic_ns() - started) / 1e9;
  return out;
}

}  // namespace iogate
