#include <doctest/doctest.h>

#include "policy/policy_units.h"

using namespace iogate;

TEST_CASE("bandwidths: decimal SI units, binary IEC units, bare bytes a second") {
  struct Row {
    const char* text;
    uint64_t want;
  };
  for (Row row : {Row{"500MB/s", 500'000'000}, Row{"500 MB/s", 500'000'000}, Row{"1.5GB/s", 1'500'000'000},
                  Row{"200MiB/s", 200ull << 20}, Row{"1GiB/s", 1ull << 30}, Row{"800kB/s", 800'000},
                  Row{"800KB/s", 800'000}, Row{"64KiB/s", 65536}, Row{"524288000", 524'288'000},
                  Row{"100B/s", 100}}) {
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
  CHECK(edit_distance("min_iop", "min_iops") == 1);
  CHECK(edit_distance("mdoe", "mode") == 2);
  CHECK(edit_distance("", "abc") == 3);
}
