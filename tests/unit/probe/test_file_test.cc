#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "probe/test_file.h"
#include "temp_tree.h"

using namespace iogate;
using iogate::testing::TempFile;
using iogate::testing::TempTree;
namespace fs = std::filesystem;

namespace {
std::atomic<bool> no_stop{false};
}  // namespace

TEST_CASE("a test file is created full of non-zero data and removed afterwards") {
  TempTree dir;
  std::string path;
  {
    auto f = TestFile::prepare({dir.root.string(), 4 << 20, 7, false}, no_stop);
    REQUIRE(f.ok());
    path = f->path();
    CHECK(fs::path(path).filename().string().rfind(".iogate-probe-", 0) == 0);
    CHECK(fs::file_size(path) == (4u << 20));
    CHECK_FALSE(f->reused());
    std::vector<unsigned char> buf(1 << 20);
    REQUIRE(pread(f->fd(), buf.data(), buf.size(), 3 << 20) == static_cast<ssize_t>(buf.size()));
    size_t zeros = 0;
    for (unsigned char c : buf) zeros += c == 0;
    CHECK(zeros == 0);
    struct stat st;
    REQUIRE(stat(path.c_str(), &st) == 0);
    CHECK(static_cast<uint64_t>(st.st_blocks) * 512 >= (4u << 20));  // allocated, not sparse
  }
  CHECK_FALSE(fs::exists(path));
  CHECK(dir.entries() == 0);
}

TEST_CASE("a kept test file is reused by the next run of the same size") {
  TempTree dir;
  std::string path;
  {
    auto f = TestFile::prepare({dir.root.string(), 1 << 20, 1, true}, no_stop);
    REQUIRE(f.ok());
    path = f->path();
  }
  REQUIRE(fs::exists(path));
  {
    auto again = TestFile::prepare({dir.root.string(), 1 << 20, 2, true}, no_stop);
    REQUIRE(again.ok());
    CHECK(again->reused());
    CHECK(again->path() == path);
  }
  CHECK(fs::exists(path));
}

TEST_CASE("a file with the test file's name that iogate did not make is left alone") {
  TempTree dir;
  fs::path planted = dir.root / kept_test_file_name(1 << 20);
  {
    std::ofstream out(planted);
    out << "precious user data\n";
  }
  auto before = fs::last_write_time(planted);
  auto f = TestFile::prepare({dir.root.string(), 1 << 20, 1, true}, no_stop);
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().message.find("not a complete iogate test file") != std::string::npos);
  REQUIRE(fs::exists(planted));
  CHECK(fs::file_size(planted) == 19);
  CHECK(fs::last_write_time(planted) == before);
}

TEST_CASE("a stop request during the fill removes the partial file") {
  TempTree dir;
  std::atomic<bool> stop{true};
  auto f = TestFile::prepare({dir.root.string(), 64 << 20, 1, true}, stop);
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().message.find("interrupted") != std::string::npos);
  CHECK(dir.entries() == 0);
}

TEST_CASE("asking for more space than there is names --size") {
  TempTree dir;
  auto f = TestFile::prepare({dir.root.string(), uint64_t{1} << 50, 1, false}, no_stop);
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().message.find("--size") != std::string::npos);
  CHECK(dir.entries() == 0);
}

// A killed run (SIGKILL, OOM kill) leaves its file behind; in a container the restarted run has
// the same PID (1), which once made its O_EXCL create fail for good.
TEST_CASE("a dead run's test file is removed by the next run; a live run's is left alone") {
  TempTree dir;
  const std::string dead = (dir.root / fmt::format(".iogate-probe-1048576.{}.0000abcd.tmp", getpid())).string();
  const std::string live = (dir.root / ".iogate-probe-1048576.1.deadbeef.tmp").string();
  const std::string other = (dir.root / ".iogate-probe-notes.txt").string();
  for (const std::string& p : {dead, live, other}) std::ofstream(p) << "left behind";
  // A live run holds an flock on its file; this descriptor stands in for that run.
  int holder = open(live.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(holder >= 0);
  REQUIRE(flock(holder, LOCK_EX | LOCK_NB) == 0);
  {
    auto f = TestFile::prepare({dir.root.string(), 1 << 20, 3, false}, no_stop);
    REQUIRE(f.ok());
    CHECK(f->path() != dead);  // a name of its own even with the dead run's PID
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(live));
    CHECK(fs::exists(other));  // not a name iogate gives its test files
    // Its own file is locked while it exists: a third run would leave it alone.
    int probe = open(f->path().c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(probe >= 0);
    CHECK(flock(probe, LOCK_EX | LOCK_NB) != 0);
    close(probe);
  }
  close(holder);
  CHECK(fs::exists(live));
  CHECK(dir.entries() == 2);  // live and other; its own file is gone
}
