#include <doctest/doctest.h>

#include "base/units.h"

using namespace iogate;
using namespace std::chrono_literals;

TEST_CASE("parse_size accepts fio's binary suffixes") {
  CHECK(*parse_size("4k", "--bs") == 4096);
  CHECK(*parse_size("4K", "--bs") == 4096);
  CHECK(*parse_size("128k", "--bs") == 131072);
  CHECK(*parse_size("1m", "--bs") == 1048576);
  CHECK(*parse_size("1G", "--size") == (uint64_t{1} << 30));
  CHECK(*parse_size("2gib", "--size") == (uint64_t{2} << 30));
  CHECK(*parse_size("512", "--bs") == 512);
  CHECK(*parse_size("1.5m", "--size") == 1572864);
  CHECK(*parse_size(" 8k ", "--bs") == 8192);
}

TEST_CASE("parse_size rejects bad values with the flag's name") {
  for (const char* bad : {"", "k", "fast", "4q", "-4k", "0", "0.3", "4kk", "1e3"}) {
    auto r = parse_size(bad, "--bs");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::kUsage);
    CHECK(r.error().message.find("--bs") == 0);
  }
  CHECK_FALSE(parse_size("100000000t", "--size").ok());
}

TEST_CASE("parse_duration understands s, ms, m, h and bare seconds") {
  CHECK(*parse_duration("10s", "--runtime") == 10s);
  CHECK(*parse_duration("10", "--runtime") == 10s);
  CHECK(*parse_duration("500ms", "--runtime") == 500ms);
  CHECK(*parse_duration("2m", "--runtime") == 120s);
  CHECK(*parse_duration("1h", "--runtime") == 3600s);
  CHECK(*parse_duration("1.5s", "--runtime") == 1500ms);
  for (const char* bad : {"", "s", "10x", "ten", "-1s", "10 s s"}) {
    auto r = parse_duration(bad, "--runtime");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("--runtime") == 0);
  }
}

TEST_CASE("parse_integer enforces its range") {
  CHECK(*parse_integer("32", "--iodepth", 1, 4096) == 32);
  CHECK_FALSE(parse_integer("0", "--iodepth", 1, 4096).ok());
  CHECK_FALSE(parse_integer("5000", "--iodepth", 1, 4096).ok());
  CHECK_FALSE(parse_integer("3.5", "--iodepth", 1, 4096).ok());
  CHECK_FALSE(parse_integer("", "--iodepth", 1, 4096).ok());
  CHECK(parse_integer("x", "--iodepth", 1, 4096).error().message ==
        "--iodepth: expected a whole number, got \"x\"");
}

TEST_CASE("formatting for humans") {
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(4096) == "4.00 KiB");
  CHECK(format_bytes(1 << 30) == "1.00 GiB");
  CHECK(format_count(999) == "999");
  CHECK(format_count(112345) == "112.3k");
  CHECK(format_count(1234567) == "1.23M");
  CHECK(format_duration_ns(250000) == "250 µs");
  CHECK(format_duration_ns(1200000) == "1.20 ms");
  CHECK(format_size_compact(4096) == "4k");
  CHECK(format_size_compact(1 << 20) == "1m");
  CHECK(format_size_compact(1000) == "1000");
  CHECK(format_thousands(0) == "0");
  CHECK(format_thousands(999) == "999");
  CHECK(format_thousands(8120) == "8,120");
  CHECK(format_thousands(1234567.6) == "1,234,568");
  CHECK(format_thousands(-47000) == "-47,000");
}
