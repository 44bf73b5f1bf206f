#include <doctest/doctest.h>

#include <set>

#include "kube/backoff.h"

namespace iogate {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("backoff: full jitter under a ceiling that doubles up to max_backoff") {
  RetryPolicy p;
  p.initial_backoff = milliseconds(100);
  p.max_backoff = milliseconds(1000);
  FastRng rng(42);
  const int64_t ceilings[] = {100, 200, 400, 800, 1000, 1000, 1000};
  for (int retry = 1; retry <= 7; ++retry) {
    int64_t ceiling = ceilings[retry - 1];
    int64_t lo = ceiling, hi = 0;
    std::set<int64_t> distinct;
    for (int i = 0; i < 2000; ++i) {
      int64_t d = backoff_delay(p, retry, std::nullopt, rng).count();
      REQUIRE(d >= 0);
      REQUIRE(d <= ceiling);
      lo = std::min(lo, d);
      hi = std::max(hi, d);
      distinct.insert(d);
    }
    CAPTURE(retry);
    // Jittered across the whole range, not a fixed schedule.
    CHECK(lo < ceiling / 10);
    CHECK(hi > ceiling * 9 / 10);
    CHECK(distinct.size() > 20);
  }
}

TEST_CASE("backoff: huge retry numbers stay at the cap (no overflow)") {
  RetryPolicy p;
  p.initial_backoff = milliseconds(200);
  p.max_backoff = milliseconds(5000);
  FastRng rng(7);
  for (int i = 0; i < 100; ++i) {
    auto d = backoff_delay(p, 1000, std::nullopt, rng);
    CHECK(d >= milliseconds(0));
    CHECK(d <= milliseconds(5000));
  }
}

TEST_CASE("backoff: Retry-After is honoured as given") {
  RetryPolicy p;
  FastRng rng(1);
  CHECK(backoff_delay(p, 1, seconds(3), rng) == milliseconds(3000));
  CHECK(backoff_delay(p, 5, seconds(0), rng) == milliseconds(0));
}

TEST_CASE("backoff: Retry-After parsing") {
  CHECK(parse_retry_after("1") == seconds(1));
  CHECK(parse_retry_after(" 30 ") == seconds(30));
  CHECK_FALSE(parse_retry_after(""));
  CHECK_FALSE(parse_retry_after("-1"));
  CHECK_FALSE(parse_retry_after("1.5"));
  CHECK_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"));
}

}  // namespace
}  // namespace iogate
