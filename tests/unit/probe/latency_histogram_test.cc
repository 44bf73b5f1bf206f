#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "probe/latency_histogram.h"

using namespace iogate;

namespace {
uint64_t exact_percentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}
}  // namespace

TEST_CASE("bucket boundaries tile the value range without gaps") {
  for (size_t i = 0; i + 1 < LatencyHistogram::kBucketCount; ++i) {
    REQUIRE(LatencyHistogram::bucket_high(i) + 1 == LatencyHistogram::bucket_low(i + 1));
  }
  for (uint64_t v : std::initializer_list<uint64_t>{0, 1, 127, 128, 129, 4095, 4096, 1000000, 123456789,
                                                    uint64_t{1} << 40, UINT64_MAX}) {
    size_t i = LatencyHistogram::bucket_index(v);
    REQUIRE(i < LatencyHistogram::kBucketCount);
    CHECK(LatencyHistogram::bucket_low(i) <= v);
    CHECK(v <= LatencyHistogram::bucket_high(i));
  }
}

TEST_CASE("percentiles are within 1% of the exact percentiles of random data") {
  std::mt19937_64 gen(42);
  // Latency-like data: log-normal around 200 µs with a long tail, plus a few fast hits.
  std::lognormal_distribution<double> lat(std::log(200000.0), 0.8);
  std::vector<uint64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    uint64_t v = i % 97 == 0 ? 50 + i % 60 : static_cast<uint64_t>(lat(gen));
    values.push_back(v);
    h.record(v);
  }
  for (double p : {1.0, 5.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99}) {
    double exact = static_cast<double>(exact_percentile(values, p));
    double got = static_cast<double>(h.percentile(p));
    CAPTURE(p);
    CHECK(std::abs(got - exact) <= exact * 0.01 + 0.5);
  }
  CHECK(h.count() == values.size());
  CHECK(h.min() == *std::min_element(values.begin(), values.end()));
  CHECK(h.max() == *std::max_element(values.begin(), values.end()));
  CHECK(h.percentile(100) == h.max());
}

TEST_CASE("mean and stddev are exact, not bucketed") {
  LatencyHistogram h;
  for (uint64_t v : {100, 200, 300, 400}) h.record(v);
  CHECK(h.mean() == doctest::Approx(250));
  CHECK(h.stddev() == doctest::Approx(111.8034).epsilon(1e-4));
}

TEST_CASE("merge equals recording everything in one") {
  LatencyHistogram a, b, all;
  for (uint64_t v = 1; v < 100000; v += 7) {
    (v % 2 ? a : b).record(v * 13);
    all.record(v * 13);
  }
  a.merge(b);
  CHECK(a.count() == all.count());
  CHECK(a.min() == all.min());
  CHECK(a.max() == all.max());
  CHECK(a.mean() == doctest::Approx(all.mean()));
  for (double p : {1.0, 50.0, 99.0, 99.99}) CHECK(a.percentile(p) == all.percentile(p));
}

TEST_CASE("an empty histogram reports zeros") {
  LatencyHistogram h;
  CHECK(h.count() == 0);
  CHECK(h.percentile(99) == 0);
  CHECK(h.min() == 0);
  CHECK(h.mean() == 0);
  CHECK(h.nonempty_buckets().empty());
}
