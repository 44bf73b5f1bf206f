// The file a probe creates to measure a writable volume.
//
// It is hidden (".iogate-probe-…"), preallocated, then filled with incompressible non-zero data
// before any timed I/O, because thin-provisioned and cloud volumes read unwritten blocks
// without touching media. Its first bytes carry a marker written last, after the fill: a file
// is reused only if it carries the marker (iogate made it, and finished making it) and has the
// size asked for. The file is removed when the TestFile goes away unless it is kept on purpose.
// A run's own file carries a random part in its name and an flock for as long as it exists, so
// the next run (a restarted initContainer, PID 1 again) removes what a killed run left behind.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"

namespace iogate {

struct TestFileRequest {
  std::string directory;
  uint64_t size = 0;
  uint64_t seed = 0;
  bool keep = false;  // a stable name, left in place for the next run to reuse
};

class TestFile {
 public:
  // Creates and fills, or reuses a kept one. Interrupted by `stop` (the file is then removed).
  // Errors: no space (suggests --size), read-only or permission denied (kind kRuntime, with
  // errno_code set so the caller can fall back to read-only mode).
  static Result<TestFile> prepare(const TestFileRequest& request, const std::atomic<bool>& stop);

  TestFile(TestFile&&) noexcept;
  TestFile& operator=(TestFile&&) = delete;
  TestFile(const TestFile&) = delete;
  ~TestFile();

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  bool reused() const { return reused_; }
  int fd() const { return fd_.get(); }
  // Reopens the measuring fd with extra flags (O_DIRECT); returns 0 or the errno, so the
  // caller can tell "O_DIRECT refused" (EINVAL) from other failures.
  int reopen(int open_flags);

 private:
  TestFile(std::string path, uint64_t size, bool keep) : path_(std::move(path)), size_(size), keep_(keep) {}
  std::string path_;
  uint64_t size_;
  bool keep_;
  bool reused_ = false;
  bool owned_ = true;      // false once moved from, or when the path is not ours
  bool complete_ = false;  // a half-written file is removed even when asked to keep it
  UniqueFd fd_;
  UniqueFd lock_fd_;  // flock(LOCK_EX) held while the file exists: its run is alive
};

// Names the test file would have, for tests and for cleanup of kept files.
std::string kept_test_file_name(uint64_t size);
// A run's own temporary file: ".iogate-probe-<tag>.<pid>.<random>.tmp". Whoever creates one holds
// an flock on it for as long as it exists, so that reclaim_dead_test_files knows it is alive.
std::string temp_test_file_name(std::string_view tag);
// Removes, in `directory`, the temporary files of runs that died without cleaning up (a kill, an
// OOM kill, a node crash): our names, regular files of our user, whose flock can be taken.
void reclaim_dead_test_files(const std::string& directory);

// Why a directory cannot hold a test file: 0 if it can, else EROFS/EACCES/EPERM.
int directory_write_refusal(const std::string& directory);

}  // namespace iogate
