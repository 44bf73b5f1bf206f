#include <doctest/doctest.h>

#include "base/clock.h"

using namespace iogate;
using std::chrono::system_clock;

TEST_CASE("RFC 3339 times format and parse back") {
  auto t = system_clock::from_time_t(1796205600) + std::chrono::microseconds(123456);
  CHECK(rfc3339_seconds(t) == "2026-12-02T10:00:00Z");
  CHECK(rfc3339_micro(t) == "2026-12-02T10:00:00.123456Z");
  auto back = parse_rfc3339_utc("2026-12-02T10:00:00Z");
  REQUIRE(back);
  CHECK(system_clock::to_time_t(*back) == 1796205600);
  auto fraction = parse_rfc3339_utc(rfc3339_micro(t));
  REQUIRE(fraction);
  CHECK(*fraction == t);  // to the microsecond
  auto nanos = parse_rfc3339_utc("2026-12-02T10:00:00.1234567Z");
  REQUIRE(nanos);
  CHECK(*nanos == system_clock::from_time_t(1796205600) + std::chrono::microseconds(123456));
  auto tenth = parse_rfc3339_utc("2026-12-02T10:00:00.5Z");
  REQUIRE(tenth);
  CHECK(*tenth == system_clock::from_time_t(1796205600) + std::chrono::milliseconds(500));
  REQUIRE(parse_rfc3339_utc(rfc3339_utc_now()));
}

TEST_CASE("anything but RFC 3339 UTC is refused") {
  CHECK_FALSE(parse_rfc3339_utc(""));
  CHECK_FALSE(parse_rfc3339_utc("yesterday"));
  CHECK_FALSE(parse_rfc3339_utc("2026-12-02 10:00:00"));
  CHECK_FALSE(parse_rfc3339_utc("2026-12-02T10:00:00+01:00"));
  CHECK_FALSE(parse_rfc3339_utc("2026-12-02T10:00:00Zjunk"));
}
