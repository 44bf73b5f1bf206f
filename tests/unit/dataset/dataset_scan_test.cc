#include <doctest/doctest.h>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "dataset/dataset_scan.h"
#include "temp_tree.h"

using namespace iogate;
using iogate::testing::TempTree;

namespace {
const std::atomic<bool> kNoStop{false};

// What scan_dataset saw of `root` as a user without root's privileges.
struct UnprivilegedScan {
  std::string error;  // why there is no scan; empty when there is one
  uint64_t permission_denied = 0, files_seen = 0;
  std::string denied_paths;  // permission_denied_paths, space-separated
};

// Root reads every directory whatever its mode (CAP_DAC_OVERRIDE), and CI runs as root: the scan
// runs in a child that, when it is root, becomes nobody (uid and gid 65534, no groups), as a pod's
// non-root user. The child writes what it saw to a pipe and ends with _exit, leaving the tree alone.
UnprivilegedScan scan_unprivileged(const std::string& root) {
  int fds[2];
  if (pipe(fds) != 0) return {fmt::format("pipe: {}", std::strerror(errno))};
  pid_t pid = fork();
  if (pid < 0) {
    std::string why = fmt::format("fork: {}", std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return {why};
  }
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    constexpr uid_t kNobody = 65534;
    if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
                           setresuid(kNobody, kNobody, kNobody) != 0)) {
      out = fmt::format("error cannot become uid {}: {}", kNobody, std::strerror(errno));
    } else if (auto s = scan_dataset(root, ScanBudget{}, kNoStop); !s.ok()) {
      out = "error scan_dataset: " + s.error().message;
    } else {
      out = fmt::format("{} {} {}", s->permission_denied, s->files_seen, fmt::join(s->permission_denied_paths, " "));
    }
    ssize_t n = write(fds[1], out.data(), out.size());
    _exit(n == ssize_t(out.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n > 0) text.append(buf, size_t(n));
    else if (errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {"the scanning child failed: " + text};
  if (text.rfind("error ", 0) == 0) return {text.substr(6)};
  UnprivilegedScan s;
  std::istringstream in(text);
  in >> s.permission_denied >> s.files_seen >> std::ws;
  std::getline(in, s.denied_paths);
  return s;
}
}  // namespace

TEST_CASE("nearest-rank file size percentiles") {
  std::vector<uint64_t> sizes;
  for (uint64_t i = 1; i <= 100; ++i) sizes.push_back(i * 1000);
  FileSizePercentiles p = file_size_percentiles(sizes);
  CHECK(p.p10 == 10000);
  CHECK(p.p50 == 50000);
  CHECK(p.p90 == 90000);
  CHECK(p.p99 == 99000);
  CHECK(p.max == 100000);
  CHECK(p.mean == doctest::Approx(50500));
  CHECK(file_size_percentiles({}).p50 == 0);
  CHECK(file_size_percentiles({7}).p99 == 7);
}

TEST_CASE("the estimate is the count itself when nothing is pending") {
  std::vector<DepthStats> d(2);
  d[0] = {1, 0, 0, 10, 0};
  d[1] = {10, 0, 1000, 0, 0};
  CHECK(estimate_tree_files(1000, d) == 1000);
}

TEST_CASE("pending directories are extrapolated from the fan-out of the levels read") {
  // root -> 100 class dirs -> 50 files each; the walk read the root and 40 class dirs.
  std::vector<DepthStats> d(2);
  d[0] = {1, 0, 0, 100, 0};
  d[1] = {40, 60, 2000, 0, 0};
  CHECK(estimate_tree_files(2000, d) == doctest::Approx(5000));
  // One of the pending dirs was cut mid-read after 20 of its files.
  d[1].files_in_pending = 20;
  CHECK(estimate_tree_files(2020, d) == doctest::Approx(5000));
}

TEST_CASE("a level cut with subdirectories pending below extrapolates through the levels read") {
  // root -> 10 groups -> 20 dirs each -> 30 files each. Read: root, 10 groups, 50 leaf dirs.
  std::vector<DepthStats> d(3);
  d[0] = {1, 0, 0, 10, 0};
  d[1] = {10, 0, 0, 200, 0};
  d[2] = {50, 150, 1500, 0, 0};
  CHECK(estimate_tree_files(1500, d) == doctest::Approx(6000));
  // Cut one level higher: 4 groups read (80 leaf dirs queued, none read), 6 groups pending.
  // Below the deepest level read nothing is known: leaf dirs are taken to hold as many files as
  // the groups did (none), so the estimate stays at what was seen: an honest lower bound.
  std::vector<DepthStats> e(3);
  e[0] = {1, 0, 0, 10, 0};
  e[1] = {4, 6, 0, 80, 0};
  e[2] = {0, 80, 0, 0, 0};
  CHECK(estimate_tree_files(0, e) == 0);
}

TEST_CASE("no level read completely: the files seen are a lower bound") {
  std::vector<DepthStats> d(1);
  d[0] = {0, 1, 0, 0, 5000};
  CHECK(estimate_tree_files(5000, d) == 5000);
}

TEST_CASE("scan counts files, skips symlinks, and samples every file of a small tree") {
  TempTree t;
  for (int i = 0; i < 30; ++i) t.write(fmt::format("a/b/f{}", i), std::string(size_t(i * 100), 'x'));
  for (int i = 0; i < 10; ++i) t.write(fmt::format("c/g{}", i), "yy");
  std::filesystem::create_directories(t.root / "empty");
  std::filesystem::create_symlink(t.root / "a", t.root / "link-to-a");
  std::filesystem::create_symlink(t.root / "c/g0", t.root / "link-to-file");
  ScanBudget b;
  auto s = scan_dataset(t.root.string(), b, kNoStop);
  REQUIRE(s.ok());
  CHECK(s->stop_reason == StopReason::kComplete);
  CHECK(s->files_exact);
  CHECK(s->files_seen == 40);
  CHECK(s->files_estimate == 40);
  CHECK(s->symlinks_skipped == 2);
  CHECK(s->sample.size() == 40);
  CHECK(s->dirs_read == 5);  // root, a, a/b, c, empty
  // The walk looked nothing up (the directories gave every type): a loader opening these files
  // pays their lookups as a DataLoader's first epoch does.
  for (const SampledFile& f : s->sample) CHECK_FALSE(f.size_known);
  CHECK(s->files_sized == 0);
  size_sample(*s, b.sized, 2, b.time, kNoStop);
  CHECK(s->files_sized == 40);
  CHECK(s->sizes.max == 2900);
  CHECK(s->bytes_estimate == doctest::Approx(29 * 30 / 2 * 100 + 20));
  std::set<std::string> paths;
  for (const SampledFile& f : s->sample) paths.insert(f.path);
  CHECK(paths.size() == 40);
  CHECK(paths.count(t.path("a/b/f29")) == 1);
}

TEST_CASE("the entry budget stops the walk and the count becomes an estimate") {
  TempTree t;
  // 20 dirs of 50 files: breadth first, the root (20 entries) then dirs until 520 entries.
  for (int d = 0; d < 20; ++d) {
    for (int i = 0; i < 50; ++i) t.write(fmt::format("d{}/f{}", d, i), "z");
  }
  ScanBudget b;
  b.entries = 520;
  auto s = scan_dataset(t.root.string(), b, kNoStop);
  REQUIRE(s.ok());
  CHECK(s->stop_reason == StopReason::kEntries);
  CHECK_FALSE(s->files_exact);
  CHECK(s->files_seen < 1000);
  CHECK(s->files_estimate == doctest::Approx(1000).epsilon(0.01));
}

TEST_CASE("a stop request ends the walk") {
  TempTree t;
  for (int i = 0; i < 600; ++i) t.write(fmt::format("d/f{}", i), "z");
  std::atomic<bool> stop{true};
  auto s = scan_dataset(t.root.string(), ScanBudget{}, stop);
  REQUIRE(s.ok());
  CHECK(s->stop_reason == StopReason::kSignal);
}

TEST_CASE("a sample smaller than the tree keeps its capacity") {
  TempTree t;
  for (int i = 0; i < 300; ++i) t.write(fmt::format("d/f{}", i), "z");
  ScanBudget b;
  b.sample_size = 50;
  auto s = scan_dataset(t.root.string(), b, kNoStop);
  REQUIRE(s.ok());
  CHECK(s->sample.size() == 50);
  CHECK(s->files_seen == 300);
}

TEST_CASE("sizes come from a spread subset of the sample, and the total from its mean") {
  TempTree t;
  // Two directories of 150 files: 100 bytes in one, 300 in the other, so a subset taken from the
  // front of the walk alone would see one size only.
  for (int i = 0; i < 150; ++i) {
    t.write(fmt::format("a/f{}", i), std::string(100, 'x'));
    t.write(fmt::format("b/f{}", i), std::string(300, 'y'));
  }
  ScanBudget b;
  auto s = scan_dataset(t.root.string(), b, kNoStop);
  REQUIRE(s.ok());
  size_sample(*s, 30, 3, b.time, kNoStop);
  CHECK(s->files_sized == 30);
  CHECK(s->sizes.p10 == 100);
  CHECK(s->sizes.max == 300);
  CHECK(s->bytes_estimate == doctest::Approx(300 * 200).epsilon(0.2));
  // A file gone since the walk is counted, not sized.
  DatasetScan fresh = *scan_dataset(t.root.string(), b, kNoStop);
  std::filesystem::remove(fresh.sample[0].path);
  size_sample(fresh, 300, 1, b.time, kNoStop);
  CHECK(fresh.vanished == 1);
  CHECK(fresh.files_sized == 299);
}

TEST_CASE("bad roots are usage errors naming the path") {
  TempTree t;
  t.write("file", "x");
  auto missing = scan_dataset(t.path("nope"), ScanBudget{}, kNoStop);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::kUsage);
  CHECK(missing.error().message.find("no such directory") != std::string::npos);
  auto file = scan_dataset(t.path("file"), ScanBudget{}, kNoStop);
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().message.find("not a directory") != std::string::npos);
}

TEST_CASE("unreadable directories are counted, not fatal") {
  TempTree t;
  t.write("ok/f", "x");
  t.write("locked/f", "x");
  // Open to everyone but locked/: the scan may run as nobody.
  chmod(t.root.c_str(), 0755);
  chmod(t.path("ok").c_str(), 0755);
  chmod(t.path("ok/f").c_str(), 0644);
  chmod(t.path("locked").c_str(), 0);
  UnprivilegedScan s = scan_unprivileged(t.root.string());
  chmod(t.path("locked").c_str(), 0755);
  REQUIRE_MESSAGE(s.error.empty(), s.error);
  CHECK(s.permission_denied == 1);
  CHECK(s.denied_paths == t.path("locked"));
  CHECK(s.files_seen == 1);
}
