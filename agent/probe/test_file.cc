#include "probe/test_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <random>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/rng.h"
#include "base/units.h"

namespace iogate {
namespace {

constexpr const char kMarkerPrefix[] = "IOGATE-TESTFILE/1 size=";
// A run's own test file: ".iogate-probe-<size>.<pid>.<random>.tmp". The random part keeps two
// runs apart that share a PID (PID 1 in two pods on one PVC, or a restarted initContainer).
constexpr const char kTempPrefix[] = ".iogate-probe-";
constexpr const char kTempSuffix[] = ".tmp";
// Entries read when looking for a killed run's leftovers: a dataset root can hold millions.
constexpr uint64_t kReclaimScanLimit = 100000;
constexpr size_t kFillChunk = 1 << 20;
// The fill is written back and dropped from the page cache every this many bytes. A pod's memory
// limit counts the page cache its writes dirty: an initContainer limited to 256 MiB that wrote a
// 256 MiB test file in one go would sit at its limit, stalled in reclaim or OOM-killed (cgroup v1),
// and the probe reads with O_DIRECT anyway. 16 MiB keeps the fill's cache small and the disk busy.
constexpr uint64_t kFlushEvery = 16 << 20;

// Writes [from, to) back and drops it from the page cache. Best effort: a file system without
// sync_file_range (some FUSE) keeps its pages, and the fdatasync at the end still makes it durable.
void flush_and_drop(int fd, uint64_t from, uint64_t to) {
  if (to <= from) return;
  off_t off = static_cast<off_t>(from), len = static_cast<off_t>(to - from);
  sync_file_range(fd, off, len, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
  posix_fadvise(fd, off, len, POSIX_FADV_DONTNEED);
}

std::string marker_for(uint64_t size) { return fmt::format("{}{} complete\n", kMarkerPrefix, size); }

Error space_error(const std::string& dir, uint64_t size, uint64_t free_bytes) {
  return runtime_error(
      fmt::format("{}: not enough space for a {} test file ({} free); use a smaller --size, e.g. --size {}", dir,
                  format_bytes(static_cast<double>(size)), format_bytes(static_cast<double>(free_bytes)),
                  format_size_compact(std::max<uint64_t>(free_bytes / 2 / (1 << 20), 1) << 20)));
}

uint64_t free_bytes_of(const std::string& dir) {
  struct statvfs sv;
  if (statvfs(dir.c_str(), &sv) != 0) return 0;
  return static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
}

// True if `path` is a finished test file of `size` bytes that iogate made.
bool is_reusable(int fd, uint64_t size) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != size) return false;
  std::string want = marker_for(size);
  std::vector<char> got(want.size());
  if (pread(fd, got.data(), got.size(), 0) != static_cast<ssize_t>(got.size())) return false;
  return std::memcmp(got.data(), want.data(), want.size()) == 0;
}

Status fill(int fd, const std::string& path, const std::string& dir, uint64_t size, uint64_t seed,
            const std::atomic<bool>& stop) {
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc == ENOSPC) return space_error(dir, size, free_bytes_of(dir));
  // EOPNOTSUPP/EINVAL (e.g. some FUSE, NFSv3): the writes below allocate anyway.
  std::vector<uint64_t> chunk(kFillChunk / 8);
  FastRng rng(seed);
  uint64_t flushed = 0;
  for (uint64_t off = 0; off < size; off += kFillChunk) {
    if (stop.load(std::memory_order_relaxed)) return runtime_error("interrupted while writing the test file");
    if (off - flushed >= kFlushEvery) {
      flush_and_drop(fd, flushed, off);
      flushed = off;
    }
    for (uint64_t& w : chunk) w = rng.next() | 0x0101010101010101ULL;  // no zero bytes at all
    size_t n = static_cast<size_t>(std::min<uint64_t>(kFillChunk, size - off));
    const char* p = reinterpret_cast<const char*>(chunk.data());
    size_t done = 0;
    while (done < n) {
      ssize_t w = pwrite(fd, p + done, n - done, static_cast<off_t>(off + done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == ENOSPC || errno == EDQUOT)) return space_error(dir, size, free_bytes_of(dir));
      if (w <= 0) return runtime_error(fmt::format("{}: write: {}", path, std::strerror(errno)));
      done += static_cast<size_t>(w);
    }
  }
  if (fdatasync(fd) != 0) return runtime_error(fmt::format("{}: fdatasync: {}", path, std::strerror(errno)));
  flush_and_drop(fd, flushed, size);
  std::string marker = marker_for(size);
  if (pwrite(fd, marker.data(), marker.size(), 0) != static_cast<ssize_t>(marker.size()) || fdatasync(fd) != 0) {
    return runtime_error(fmt::format("{}: writing the test file marker: {}", path, std::strerror(errno)));
  }
  return ok_status();
}

}  // namespace

// A live run holds an exclusive flock on its file for as long as the file exists, and the kernel
// drops it when the process dies, so a file whose lock can be taken has no owner left. Only our
// own names, only regular files, only files of our user: never anyone else's file.
void reclaim_dead_test_files(const std::string& directory) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(directory.c_str()), closedir);
  if (!dir) return;
  uint64_t seen = 0;
  while (dirent* e = readdir(dir.get())) {
    if (++seen > kReclaimScanLimit) return;
    std::string_view name(e->d_name);
    if (!name.starts_with(kTempPrefix) || !name.ends_with(kTempSuffix)) continue;
    UniqueFd fd(openat(dirfd(dir.get()), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st;
    if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) continue;
    if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its run is alive
    if (unlinkat(dirfd(dir.get()), e->d_name, 0) == 0) {
      spdlog::warn("removed {}/{} ({}), the test file of an iogate that was killed", directory, name,
                   format_bytes(static_cast<double>(st.st_size)));
    }
  }
}

std::string temp_test_file_name(std::string_view tag) {
  std::random_device rd;
  return fmt::format("{}{}.{}.{:08x}{}", kTempPrefix, tag, getpid(), rd(), kTempSuffix);
}

std::string kept_test_file_name(uint64_t size) { return fmt::format(".iogate-probe-{}.dat", size); }

int directory_write_refusal(const std::string& directory) {
  struct statvfs sv;
  if (statvfs(directory.c_str(), &sv) == 0 && (sv.f_flag & ST_RDONLY)) return EROFS;
  if (access(directory.c_str(), W_OK) != 0) return errno == EROFS ? EROFS : EACCES;
  return 0;
}

Result<TestFile> TestFile::prepare(const TestFileRequest& req, const std::atomic<bool>& stop) {
  if (!req.keep) reclaim_dead_test_files(req.directory);
  std::string name = req.keep ? kept_test_file_name(req.size) : temp_test_file_name(std::to_string(req.size));
  TestFile file(req.directory + (req.directory.ends_with('/') ? "" : "/") + name, req.size, req.keep);

  if (req.keep) {
    // O_NOFOLLOW: a planted symlink must not turn "reuse" into writing someone else's file.
    UniqueFd existing(open(file.path_.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
    if (existing.valid()) {
      if (!is_reusable(existing.get(), req.size)) {
        file.owned_ = false;  // not ours: never touch, never remove
        return runtime_error(fmt::format(
            "{}: exists but is not a complete iogate test file of {} bytes; remove it or pick another --size",
            file.path_, req.size));
      }
      file.reused_ = true;
      file.complete_ = true;
      file.fd_ = std::move(existing);
      return file;
    }
  }

  uint64_t free_now = free_bytes_of(req.directory);
  if (free_now && free_now < req.size) {
    file.owned_ = false;
    return space_error(req.directory, req.size, free_now);
  }
  UniqueFd fd(open(file.path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    int err = errno;
    file.owned_ = false;
    if (err == ENOSPC) return space_error(req.directory, req.size, free_bytes_of(req.directory));
    Error e = runtime_error(fmt::format("{}: cannot create the test file: {}", file.path_, std::strerror(err)));
    e.os_errno = err;
    return e;
  }
  // From here on the file is ours; the destructor removes it on every path out. The lock, on an fd
  // of its own (reopen replaces fd_), tells a later run that this one is alive.
  if (!req.keep) {
    file.lock_fd_ = UniqueFd(open(file.path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    // Blocking: a reclaiming run may hold it for an instant (and may then have unlinked the new
    // file, which this run still measures through its fd and whose removal it then finds done).
    if (!file.lock_fd_.valid() || flock(file.lock_fd_.get(), LOCK_EX) != 0) {
      return runtime_error(fmt::format("{}: cannot lock the test file: {}", file.path_, std::strerror(errno)));
    }
  }
  if (Status s = fill(fd.get(), file.path_, req.directory, req.size, req.seed, stop); !s.ok()) return s.error();
  file.complete_ = true;
  file.fd_ = std::move(fd);
  return file;
}

TestFile::TestFile(TestFile&& o) noexcept
    : path_(std::move(o.path_)),
      size_(o.size_),
      keep_(o.keep_),
      reused_(o.reused_),
      owned_(o.owned_),
      complete_(o.complete_),
      fd_(std::move(o.fd_)),
      lock_fd_(std::move(o.lock_fd_)) {
  o.owned_ = false;
}

TestFile::~TestFile() {
  fd_.reset();
  if (!owned_ || path_.empty()) return;
  if (!(keep_ && complete_)) {
    unlink(path_.c_str());
    return;
  }
  // A write workload's random blocks include the first, and with it the marker that lets the
  // next run reuse the file: put it back (buffered; a later O_DIRECT read flushes it first).
  UniqueFd fd(open(path_.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
  std::string marker = marker_for(size_);
  if (fd.valid() && pwrite(fd.get(), marker.data(), marker.size(), 0) != static_cast<ssize_t>(marker.size())) {
    unlink(path_.c_str());  // a kept file the next run would refuse helps no one
  }
}

int TestFile::reopen(int open_flags) {
  UniqueFd fd(open(path_.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | open_flags));
  if (!fd.valid()) return errno;
  fd_ = std::move(fd);
  return 0;
}

}  // namespace iogate
