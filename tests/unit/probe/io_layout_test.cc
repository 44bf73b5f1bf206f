#include <doctest/doctest.h>

#include <map>

#include "probe/io_layout.h"

using namespace iogate;

TEST_CASE("locate maps global blocks across extents and files") {
  IoLayout l(4096);
  l.add(3, {{0, 8192}, {65536, 4096}});
  l.add(4, {{4096, 3 * 4096}});
  REQUIRE(l.total_blocks() == 6);
  CHECK(l.locate(0).fd == 3);
  CHECK(l.locate(1).offset == 4096);
  CHECK(l.locate(2).offset == 65536);
  CHECK(l.locate(3).fd == 4);
  CHECK(l.locate(3).offset == 4096);
  CHECK(l.locate(5).offset == 3 * 4096);
}

TEST_CASE("random offsets are aligned, in range and roughly uniform") {
  IoLayout l(4096);
  l.add(7, {{0, 16 * 4096}});
  FastRng rng(1234);
  std::map<uint64_t, int> hits;
  for (int i = 0; i < 160000; ++i) {
    auto loc = l.random(rng);
    REQUIRE(loc.offset % 4096 == 0);
    REQUIRE(loc.offset < 16 * 4096);
    ++hits[loc.offset];
  }
  CHECK(hits.size() == 16);
  for (auto& [off, n] : hits) CHECK(std::abs(n - 10000) < 600);  // > 5 sigma
}

TEST_CASE("the same seed repeats the same offsets; another seed does not") {
  IoLayout l(4096);
  l.add(7, {{0, 1 << 30}});
  FastRng a(99), b(99), c(100);
  int same_ab = 0, same_ac = 0;
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = l.random(a).offset, y = l.random(b).offset, z = l.random(c).offset;
    same_ab += x == y;
    same_ac += x == z;
  }
  CHECK(same_ab == 1000);
  CHECK(same_ac < 5);
}

TEST_CASE("a sequential cursor wraps at its slice end") {
  SequentialCursor c(10, 13);
  CHECK(c.next() == 10);
  CHECK(c.next() == 11);
  CHECK(c.next() == 12);
  CHECK(c.next() == 10);
}
