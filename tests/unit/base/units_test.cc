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
  CHECK(parse_integer("x", "--iodepth", 1, 4096).error().message == "--iodepth: expected a whole number, got \"x\"");
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

TEST_CASE("bandwidths: decimal SI units, binary IEC units, bare bytes a second") {
  struct Row {
    const char* text;
    uint64_t want;
  };
  for (Row row : {Row{"500MB/s", 500'000'000}, Row{"500 MB/s", 500'000'000}, Row{"1.5GB/s", 1'500'000'000},
                  Row{"200MiB/s", 200ull << 20}, Row{"1GiB/s", 1ull << 30}, Row{"800kB/s", 800'000},
                  Row{"800KB/s", 800'000}, Row{"64KiB/s", 65536}, Row{"524288000", 524'288'000}, Row{"100B/s", 100}}) {
    CAPTURE(row.text);
    auto b = parse_bandwidth(row.text, "bw");
    REQUIRE_MESSAGE(b.ok(), b.error().message);
    CHECK(*b == row.want);
  }
  for (const char* bad : {"fast", "500Mb/s", "500M", "500mb/s", "-5MB/s", "0", "MB/s", "5 MB/h"}) {
    CAPTURE(bad);
    auto b = parse_bandwidth(bad, "rules[0].min_bandwidth");
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().message.find("rules[0].min_bandwidth: ") == 0);
  }
}

TEST_CASE("fractions: 3% or 0.03, never a bare 3") {
  CHECK(*parse_fraction("3%", "t") == doctest::Approx(0.03));
  CHECK(*parse_fraction("2.5 %", "t") == doctest::Approx(0.025));
  CHECK(*parse_fraction("0.03", "t") == doctest::Approx(0.03));
  CHECK(*parse_fraction("1", "t") == doctest::Approx(1.0));
  CHECK_FALSE(parse_fraction("3", "t").ok());
  CHECK_FALSE(parse_fraction("-3%", "t").ok());
  CHECK_FALSE(parse_fraction("three", "t").ok());
}

TEST_CASE("numbers for people") {
  CHECK(format_bandwidth_decimal(500e6) == "500 MB/s");
  CHECK(format_bandwidth_decimal(1.25e9) == "1.25 GB/s");
  CHECK(format_bandwidth_decimal(612.3e6) == "612 MB/s");
  CHECK(format_bandwidth_decimal(812) == "812 B/s");
  CHECK(format_percent(0.03) == "3%");
  CHECK(format_percent(0.082) == "8.2%");
  CHECK(format_duration_compact(3'600'000'000'000) == "1h");
  CHECK(format_duration_compact(90'000'000'000) == "90s");
  CHECK(format_duration_compact(60'000'000'000) == "60s");
  CHECK(format_duration_compact(120'000'000'000) == "2m");
  CHECK(format_duration_compact(5'000'000) == "5ms");
  CHECK(format_duration_compact(500'000) == "500us");
  CHECK(format_duration_compact(0) == "0s");
}
