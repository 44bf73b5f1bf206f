#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "dataset/reservoir.h"

using namespace iogate;

TEST_CASE("a reservoir keeps everything until it is full, then exactly its capacity") {
  Reservoir<int> r(10, 7);
  for (int i = 0; i < 5; ++i) {
    auto slot = r.offer();
    REQUIRE(slot);
    r.slot(*slot) = i;
  }
  CHECK(r.items() == std::vector<int>{0, 1, 2, 3, 4});
  for (int i = 5; i < 1000; ++i) {
    if (auto slot = r.offer()) r.slot(*slot) = i;
  }
  CHECK(r.items().size() == 10);
  CHECK(r.seen() == 1000);
}

TEST_CASE("withdrawing an item while filling forgets it") {
  Reservoir<int> r(4, 1);
  auto a = r.offer();
  r.slot(*a) = 1;
  auto b = r.offer();
  r.withdraw_last(*b);
  CHECK(r.seen() == 1);
  CHECK(r.items().size() == 1);
}

// Algorithm R keeps every item with probability k/n. Over many independent trials (fixed seeds,
// so the test is deterministic and cannot flake) each item's inclusion count is binomial; the
// chi-square statistic over all items has n-1 degrees of freedom, mean ~n, sd ~sqrt(2n). The
// bound is 6 sd above the mean: a biased sampler (say, one favouring early or late items by 10%)
// lands far beyond it, a correct one essentially never does.
TEST_CASE("every item is sampled with probability k/n (chi-square over 2,000 seeded trials)") {
  constexpr int n = 1000, k = 100, trials = 2000;
  std::vector<int> hits(n, 0);
  for (int t = 0; t < trials; ++t) {
    Reservoir<int> r(k, 0x9e3779b9u + uint64_t(t) * 7919);
    for (int i = 0; i < n; ++i) {
      if (auto slot = r.offer()) r.slot(*slot) = i;
    }
    for (int i : r.items()) hits[i]++;
  }
  const double expected = double(trials) * k / n;  // 200
  double chi2 = 0;
  double first_half = 0, second_half = 0;
  for (int i = 0; i < n; ++i) {
    chi2 += (hits[i] - expected) * (hits[i] - expected) / expected;
    (i < n / 2 ? first_half : second_half) += hits[i];
  }
  const double df = n - 1;
  CHECK(chi2 < df + 6 * std::sqrt(2 * df));
  CHECK(chi2 > df - 6 * std::sqrt(2 * df));  // too even would be suspicious too (not random)
  // No drift between the stream's halves: each holds half the picks within 1%.
  CHECK(std::abs(first_half - second_half) / (first_half + second_half) < 0.01);
}
