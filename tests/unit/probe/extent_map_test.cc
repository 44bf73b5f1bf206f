// Runs on real files in /var/tmp (ext4 here): holes and fallocated-but-unwritten extents must not
// count as readable data.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "probe/extent_map.h"
#include "temp_tree.h"

using namespace iogate;
using iogate::testing::TempFile;
using iogate::testing::TempTree;

namespace {
void write_at(int fd, uint64_t off, size_t n) {
  std::vector<char> buf(n, 'x');
  REQUIRE(pwrite(fd, buf.data(), n, static_cast<off_t>(off)) == static_cast<ssize_t>(n));
}
}  // namespace

TEST_CASE("a fully written file is one written range") {
  TempFile f;
  write_at(f.fd.get(), 0, 1 << 20);
  fsync(f.fd.get());
  auto m = map_written_extents(f.fd.get(), 1 << 20, f.path);
  REQUIRE(m.ok());
  CHECK(m->written_bytes() == (1u << 20));
  CHECK(m->written.size() == 1);
}

TEST_CASE("holes are excluded") {
  TempFile f;
  write_at(f.fd.get(), 0, 64 << 10);
  write_at(f.fd.get(), 1 << 20, 64 << 10);
  REQUIRE(ftruncate(f.fd.get(), 2 << 20) == 0);
  fsync(f.fd.get());
  auto m = map_written_extents(f.fd.get(), 2 << 20, f.path);
  REQUIRE(m.ok());
  CHECK(m->used_seek_data);
  CHECK(m->written_bytes() == (128u << 10));
  REQUIRE(m->written.size() == 2);
  CHECK(m->written[0].offset == 0);
  CHECK(m->written[1].offset == (1u << 20));
}

TEST_CASE("a hole-only file has nothing to read") {
  TempFile f;
  REQUIRE(ftruncate(f.fd.get(), 1 << 30) == 0);
  auto m = map_written_extents(f.fd.get(), 1 << 30, f.path);
  REQUIRE(m.ok());
  CHECK(m->written_bytes() == 0);
}

TEST_CASE("fallocated but unwritten extents are excluded (FIEMAP)") {
  TempFile f;
  if (fallocate(f.fd.get(), 0, 0, 4 << 20) != 0) {
    MESSAGE("SKIP: fallocate not supported on /var/tmp: cannot make unwritten extents");
    return;
  }
  write_at(f.fd.get(), 1 << 20, 256 << 10);
  fsync(f.fd.get());
  auto m = map_written_extents(f.fd.get(), 4 << 20, f.path);
  REQUIRE(m.ok());
  if (!m->used_fiemap) {
    MESSAGE("SKIP: no FIEMAP on /var/tmp: unwritten extents cannot be told from data");
    return;
  }
  CHECK(m->written_bytes() == (256u << 10));
  REQUIRE(m->written.size() == 1);
  CHECK(m->written[0].offset == (1u << 20));
}

TEST_CASE("range arithmetic") {
  std::vector<ByteRange> a{{0, 100}, {200, 100}}, b{{50, 200}};
  auto i = intersect_ranges(a, b);
  REQUIRE(i.size() == 2);
  CHECK(i[0].offset == 50);
  CHECK(i[0].length == 50);
  CHECK(i[1].offset == 200);
  CHECK(i[1].length == 50);
  auto al = align_ranges({{100, 10000}, {20000, 4000}}, 4096, 4096);
  REQUIRE(al.size() == 1);
  CHECK(al[0].offset == 4096);
  CHECK(al[0].length == 4096);
}
