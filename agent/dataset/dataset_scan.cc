#include "dataset/dataset_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/rng.h"
#include "base/unique_fd.h"
#include "dataset/reservoir.h"

namespace iogate {
namespace {

constexpr size_t kDeniedPathsKept = 5;
constexpr uint64_t kCheckEvery = 512;  // entries between clock and stop checks

struct PendingDir {
  std::string path;
  size_t depth;
};

// getdents64's record; glibc does not declare it.
struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// O_NOATIME keeps the walk from dirtying inodes (a read-only probe should not cause writes), but
// the kernel allows it only to the owner or CAP_FOWNER: retry without it on EPERM.
// The dataset root itself may be a symlink the user named (/datasets -> /mnt/nfs/datasets): it is
// followed; links inside the tree never are.
UniqueFd open_directory(int parent, const char* name, bool follow = false) {
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  int fd = ::openat(parent, name, flags | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::openat(parent, name, flags);
  return UniqueFd(fd);
}

std::string join(const std::string& dir, std::string_view name) {
  std::string p = dir;
  if (p.empty() || p.back() != '/') p += '/';
  p.append(name);
  return p;
}

class Walk {
 public:
  Walk(const std::string& root, const ScanBudget& budget, const std::atomic<bool>& stop)
      : budget_(budget), stop_(stop), reservoir_(budget.sample_size, budget.seed) {
    scan_.root = root;
    start_ns_ = monotonic_ns();
    deadline_ns_ = start_ns_ + static_cast<uint64_t>(std::max<int64_t>(0, budget.time.count()));
  }

  // Level by level, each level in a random order: a walk cut short has read a uniform sample of
  // the directories of its last level, so their fan-out extrapolates to the unread ones without
  // bias, and the files they listed are a uniform (cluster) sample of the level's files, not
  // the first classes in directory order.
  DatasetScan run(UniqueFd root_fd) {
    std::vector<PendingDir> level{{scan_.root, 0}};
    std::vector<PendingDir> next;
    bool first = true;
    while (!level.empty() && scan_.stop_reason == StopReason::kNone) {
      for (size_t i = level.size(); i > 1; --i) std::swap(level[i - 1], level[order_rng_.below(i)]);
      size_t i = 0;
      for (; i < level.size() && scan_.stop_reason == StopReason::kNone; ++i) {
        const PendingDir& dir = level[i];
        UniqueFd fd = first ? std::move(root_fd) : open_directory(AT_FDCWD, dir.path.c_str());
        first = false;
        if (!fd.valid()) {
          note_open_failure(dir.path, errno);
          continue;
        }
        read_directory(fd.get(), dir, next);
      }
      if (scan_.stop_reason != StopReason::kNone) {
        for (; i < level.size(); ++i) depth(level[i].depth).dirs_pending++;
        for (const PendingDir& d : next) depth(d.depth).dirs_pending++;
        break;
      }
      level = std::move(next);
      next.clear();
    }
    if (scan_.stop_reason == StopReason::kNone) scan_.stop_reason = StopReason::kComplete;
    finish();
    return std::move(scan_);
  }

 private:
  DepthStats& depth(size_t d) {
    if (scan_.depths.size() <= d) scan_.depths.resize(d + 1);
    return scan_.depths[d];
  }

  void note_open_failure(const std::string& path, int err) {
    if (err == EACCES || err == EPERM) {
      scan_.permission_denied++;
      if (scan_.permission_denied_paths.size() < kDeniedPathsKept) scan_.permission_denied_paths.push_back(path);
    } else if (err == ENOENT) {
      scan_.vanished++;
    } else {
      // ELOOP (replaced by a symlink since listed), EIO, ...: not a dataset directory we can read.
      scan_.other_skipped++;
    }
  }

  // Checks the budgets; sets stop_reason when one ran out. The entry count is checked on every
  // entry, the clock and the stop flag every kCheckEvery entries and after every directory.
  bool over_budget(bool check_clock = true) {
    if (!check_clock) {
      if (scan_.entries_read >= budget_.entries) scan_.stop_reason = StopReason::kEntries;
      if (budget_.files && scan_.files_seen > budget_.files) scan_.stop_reason = StopReason::kFiles;
      return scan_.stop_reason != StopReason::kNone;
    }
    if (stop_.load(std::memory_order_relaxed)) {
      scan_.stop_reason = StopReason::kSignal;
    } else if (scan_.entries_read >= budget_.entries) {
      scan_.stop_reason = StopReason::kEntries;
    } else if (budget_.files && scan_.files_seen > budget_.files) {
      scan_.stop_reason = StopReason::kFiles;
    } else if (monotonic_ns() >= deadline_ns_) {
      scan_.stop_reason = StopReason::kTime;
    }
    return scan_.stop_reason != StopReason::kNone;
  }

  void read_directory(int fd, const PendingDir& dir, std::vector<PendingDir>& next) {
    alignas(8) char buf[64 * 1024];
    uint64_t files = 0, subdirs = 0, entries = 0;
    for (;;) {
      long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n < 0) {
        note_open_failure(dir.path, errno);
        return;
      }
      if (n == 0) break;
      for (long off = 0; off < n;) {
        auto* e = reinterpret_cast<LinuxDirent64*>(buf + off);
        off += e->d_reclen;
        const char* name = e->d_name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        ++entries;
        ++scan_.entries_read;
        unsigned char type = e->d_type;
        struct stat st;
        bool have_stat = false;
        if (type == DT_UNKNOWN) {
          if (::fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            scan_.vanished++;
            continue;
          }
          have_stat = true;
          type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_FIFO;
        }
        if (type == DT_DIR) {
          ++subdirs;
          next.push_back({join(dir.path, name), dir.depth + 1});
        } else if (type == DT_REG) {
          ++files;
          ++scan_.files_seen;
          sample_file(dir.path, name, have_stat ? &st : nullptr);
        } else if (type == DT_LNK) {
          scan_.symlinks_skipped++;
        } else {
          scan_.other_skipped++;
        }
        if (over_budget(/*check_clock=*/scan_.entries_read % kCheckEvery == 0)) {
          // Cut mid-read: the directory counts as pending, with the files it already showed.
          DepthStats& d = depth(dir.depth);
          d.dirs_pending++;
          d.files_in_pending += files;
          scan_.max_dir_entries = std::max(scan_.max_dir_entries, entries);
          return;
        }
      }
    }
    DepthStats& d = depth(dir.depth);
    d.dirs_read++;
    d.files += files;
    d.subdirs += subdirs;
    scan_.dirs_read++;
    scan_.max_dir_entries = std::max(scan_.max_dir_entries, entries);
    over_budget();
  }

  // No stat here (see the header): only an entry the directory gave no type for was stat'ed.
  void sample_file(const std::string& dir, const char* name, const struct stat* known) {
    std::optional<size_t> slot = reservoir_.offer();
    if (!slot) return;
    SampledFile& f = reservoir_.slot(*slot);
    f.path = join(dir, name);
    f.size_bytes = known ? static_cast<uint64_t>(known->st_size) : 0;
    f.size_known = known != nullptr;
  }

  void finish() {
    scan_.sample = reservoir_.take();
    scan_.files_exact = scan_.complete();
    if (scan_.files_exact) {
      scan_.files_estimate = static_cast<double>(scan_.files_seen);
      scan_.estimate_method = "exact: the whole tree was walked";
    } else {
      scan_.files_estimate = estimate_tree_files(scan_.files_seen, scan_.depths);
      bool any_level = !scan_.depths.empty() && scan_.depths[0].dirs_read > 0;
      scan_.estimate_method = any_level
                                  ? "estimated: files listed plus, for each unread directory, the mean fan-out "
                                    "(files and subdirectories per directory) of the directories read at its level "
                                    "and below, breadth first, each level in random order (a uniform sample of it)"
                                  : "lower bound: the budget ran out inside the top directory, with no level read "
                                    "completely to extrapolate from";
    }
    scan_.elapsed_ns = monotonic_ns() - start_ns_;
  }

  ScanBudget budget_;
  const std::atomic<bool>& stop_;
  Reservoir<SampledFile> reservoir_;
  DatasetScan scan_;
  FastRng order_rng_{mix_seed(budget_.seed, 1)};
  uint64_t start_ns_ = 0, deadline_ns_ = 0;
};

}  // namespace

double DatasetScan::mean_subdirs_per_dir() const {
  uint64_t dirs = 0, subdirs = 0;
  for (const DepthStats& d : depths) dirs += d.dirs_read, subdirs += d.subdirs;
  return dirs ? static_cast<double>(subdirs) / static_cast<double>(dirs) : 0;
}

double DatasetScan::mean_files_per_dir() const {
  uint64_t dirs = 0, files = 0;
  for (const DepthStats& d : depths) dirs += d.dirs_read, files += d.files;
  return dirs ? static_cast<double>(files) / static_cast<double>(dirs) : 0;
}

double estimate_tree_files(uint64_t files_seen, const std::vector<DepthStats>& depths) {
  // The deepest level with a directory read: the last one whose fan-out is known.
  size_t deepest = depths.size();
  for (size_t d = depths.size(); d-- > 0;) {
    if (depths[d].dirs_read > 0) {
      deepest = d;
      break;
    }
  }
  double estimate = static_cast<double>(files_seen);
  if (deepest == depths.size()) return estimate;
  // below[d]: expected files in the subtree of one directory at depth d.
  auto files_per_dir = [&](size_t d) { return double(depths[d].files) / double(depths[d].dirs_read); };
  std::vector<double> below(depths.size() + 1, files_per_dir(deepest));
  for (size_t d = deepest + 1; d-- > 0;) {
    if (d > deepest || depths[d].dirs_read == 0) continue;
    double subdirs = double(depths[d].subdirs) / double(depths[d].dirs_read);
    below[d] = files_per_dir(d) + subdirs * below[d + 1];
  }
  for (size_t d = 0; d < depths.size(); ++d) {
    double expected = double(depths[d].dirs_pending) * below[d] - double(depths[d].files_in_pending);
    estimate += std::max(0.0, expected);
  }
  return estimate;
}

FileSizePercentiles file_size_percentiles(std::vector<uint64_t> sizes) {
  FileSizePercentiles p;
  if (sizes.empty()) return p;
  std::sort(sizes.begin(), sizes.end());
  auto rank = [&](double q) {
    size_t r = static_cast<size_t>(std::ceil(q / 100.0 * double(sizes.size())));
    return sizes[std::clamp<size_t>(r, 1, sizes.size()) - 1];
  };
  p.p10 = rank(10);
  p.p50 = rank(50);
  p.p90 = rank(90);
  p.p99 = rank(99);
  p.max = sizes.back();
  double sum = 0;
  for (uint64_t s : sizes) sum += double(s);
  p.mean = sum / double(sizes.size());
  return p;
}

void size_sample(DatasetScan& scan, size_t max_files, int threads, std::chrono::nanoseconds time,
                 const std::atomic<bool>& stop) {
  const size_t n = scan.sample.size();
  const size_t step = max_files == 0 ? 0 : std::max<size_t>(1, n / max_files);
  const size_t count = step ? std::min(max_files, (n + step - 1) / step) : 0;
  const uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(std::max<int64_t>(0, time.count()));
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> vanished{0};
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < std::max(1, threads); ++t) {
      pool.emplace_back([&] {
        for (size_t k;
             !stop.load(std::memory_order_relaxed) && monotonic_ns() < deadline && (k = next.fetch_add(1)) < count;) {
          SampledFile& f = scan.sample[k * step];  // each slot is written by one thread only
          if (f.size_known) continue;
          struct stat st;
          if (::stat(f.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
            vanished.fetch_add(1);
            continue;
          }
          f.size_bytes = static_cast<uint64_t>(st.st_size);
          f.size_known = true;
        }
      });
    }
  }
  scan.vanished += vanished.load();
  std::vector<uint64_t> sizes;
  for (const SampledFile& f : scan.sample) {
    if (f.size_known) sizes.push_back(f.size_bytes);
  }
  scan.files_sized = sizes.size();
  scan.sizes = file_size_percentiles(std::move(sizes));
  // The total is the sized files' mean times the count (exact when every file was sized and the
  // walk completed).
  scan.bytes_estimate = scan.sizes.mean * scan.files_estimate;
}

Result<DatasetScan> scan_dataset(const std::string& root, const ScanBudget& budget, const std::atomic<bool>& stop) {
  UniqueFd fd = open_directory(AT_FDCWD, root.c_str(), /*follow=*/true);
  if (!fd.valid()) {
    int err = errno;
    if (err == ENOENT) return usage_error(fmt::format("{}: no such directory", root));
    if (err == ENOTDIR)
      return usage_error(fmt::format("{}: not a directory (dataset mode walks a tree of files)", root));
    Error e = runtime_error(fmt::format("{}: cannot open: {}", root, std::strerror(err)));
    if (err == EACCES || err == EPERM) e.kind = ErrorKind::kUsage;
    e.os_errno = err;
    return e;
  }
  if (budget.sample_size == 0) return usage_error("--sample: must be at least 1");
  return Walk(root, budget, stop).run(std::move(fd));
}

}  // namespace iogate
