#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "probe/adaptive_stop.h"

using namespace iogate;

namespace {

EarlyStopConfig enabled_config() {
  EarlyStopConfig c;
  c.enabled = true;
  return c;
}

// Feeds `next()` one sample at a time until the rule stops or `limit` samples were fed.
struct StreamRun {
  int samples = 0;
  StopDecision decision;
};
StreamRun run_stream(const EarlyStopConfig& config, int limit, const std::function<double()>& next) {
  EarlyStop es(config);
  StreamRun run;
  for (int i = 0; i < limit; ++i) {
    es.add_sample(next());
    run.samples = i + 1;
    run.decision = es.decide();
    if (run.decision.stop) break;
  }
  return run;
}

// Independent normal samples: mean mu, coefficient of variation cv.
std::function<double()> iid_stream(uint64_t seed, double mu, double cv) {
  return [gen = std::mt19937_64(seed), dist = std::normal_distribution<double>(mu, cv * mu)]() mutable {
    return dist(gen);
  };
}

// AR(1) around mu, started in its stationary distribution, marginal sd cv × mu: each 100 ms
// sample leans on the previous one as a host cache's or a throttler's state does.
std::function<double()> ar1_stream(uint64_t seed, double mu, double cv, double phi) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  const double sd = cv * mu;
  double state = sd * z(gen);
  return [=]() mutable {
    state = phi * state + sd * std::sqrt(1 - phi * phi) * z(gen);
    return mu + state;
  };
}

bool covers(const ConfidenceInterval& ci, double truth) { return std::abs(ci.mean - truth) <= ci.half_width; }

}  // namespace

TEST_CASE("t quantiles match the printed table") {
  struct Row {
    double p;
    int df;
    double t;
  };
  // Two-sided 95%, 90% and 99% values from any statistics table (3 decimals).
  for (Row r :
       {Row{0.975, 1, 12.706}, Row{0.975, 2, 4.303}, Row{0.975, 3, 3.182}, Row{0.975, 4, 2.776}, Row{0.975, 5, 2.571},
        Row{0.975, 9, 2.262}, Row{0.975, 10, 2.228}, Row{0.975, 19, 2.093}, Row{0.975, 30, 2.042},
        Row{0.975, 39, 2.023}, Row{0.975, 120, 1.980}, Row{0.95, 10, 1.812}, Row{0.95, 1, 6.314}, Row{0.995, 3, 5.841},
        Row{0.995, 10, 3.169}, Row{0.9, 4, 1.533}, Row{0.995, 2, 9.925}}) {
    CAPTURE(r.p);
    CAPTURE(r.df);
    CHECK(student_t_quantile(r.p, r.df) == doctest::Approx(r.t).epsilon(0.0005));
  }
  CHECK(student_t_quantile(0.025, 5) == doctest::Approx(-2.571).epsilon(0.0005));
  CHECK(student_t_quantile(0.5, 7) == doctest::Approx(0.0).epsilon(1e-9));
  // Large df: the normal quantile.
  CHECK(student_t_quantile(0.975, 10000) == doctest::Approx(1.95996).epsilon(0.0005));
  CHECK(std::isnan(student_t_quantile(0.975, 0)));
  CHECK(std::isnan(student_t_quantile(1.0, 5)));
}

TEST_CASE("a steady stream settles at the minimum window with an interval within tolerance") {
  int settled = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    StreamRun run = run_stream(enabled_config(), 100, iid_stream(seed, 100000, 0.05));
    REQUIRE(run.decision.stop);
    CHECK(run.decision.reason == StopReason::kSettled);
    CHECK(run.decision.ci.trusted);
    CHECK(run.decision.ci.relative_half_width <= 0.03);
    CHECK(run.samples >= 20);  // 2 s of 100 ms samples before any stop
    settled += run.samples <= 30;
  }
  // ±5% per 100 ms: ±2.3% at 20 samples; only a sample that fails the lag-1 test by chance
  // (10% of the time, by design) waits longer.
  CHECK(settled >= 40);
}

TEST_CASE("the interval covers the true mean about 95% of the time") {
  // Fixed length: the plain batch-means interval.
  int fixed_hits = 0, stop_hits = 0, stops = 0;
  const int streams = 2000;
  for (uint64_t seed = 1; seed <= streams; ++seed) {
    auto next = iid_stream(seed, 50000, 0.10);
    std::vector<double> xs;
    for (int i = 0; i < 60; ++i) xs.push_back(next());
    fixed_hits += covers(batch_means_interval(xs, 0.95), 50000);
    // At the moment the rule stops (±10% per sample: settles after ~45–60 samples).
    StreamRun run = run_stream(enabled_config(), 100, iid_stream(seed + 100000, 50000, 0.10));
    if (run.decision.stop) {
      ++stops;
      stop_hits += covers(run.decision.ci, 50000);
    }
  }
  double fixed = double(fixed_hits) / streams, at_stop = double(stop_hits) / stops;
  CAPTURE(fixed);
  CAPTURE(at_stop);
  CHECK(stops > streams * 9 / 10);
  CHECK(fixed >= 0.93);
  CHECK(fixed <= 0.98);  // the AR(1) variance factor widens independent intervals a little
  // Stopping when the interval first looks narrow picks, a little more often than chance, the
  // streams whose spread was underestimated: coverage at the stop is a bit below nominal.
  CHECK(at_stop >= 0.90);
  CHECK(at_stop <= 0.97);
}

TEST_CASE("a noisy stream keeps going until the limit") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    // ±50% per 100 ms would need ~1000 samples for ±3%; the limit is 100 (10 s).
    StreamRun run = run_stream(enabled_config(), 100, iid_stream(seed, 20000, 0.5));
    CHECK_FALSE(run.decision.stop);
    CHECK(run.samples == 100);
    CHECK(run.decision.ci.relative_half_width > 0.03);
  }
}

TEST_CASE("an autocorrelated stream is not stopped on the naive interval") {
  // AR(1) with phi 0.9 and ±4% per sample: the naive mean ± t·s/√n is ±1.9% at 20 samples and
  // would stop there, while the standard error of the mean is really √19 ≈ 4.4× larger.
  const int streams = 300;
  int naive_stops = 0, naive_misses = 0, early_stops_at_20 = 0, stops = 0, misses = 0;
  for (uint64_t seed = 1; seed <= streams; ++seed) {
    auto next = ar1_stream(seed, 80000, 0.04, 0.9);
    std::vector<double> xs;
    EarlyStop es(enabled_config());
    StopDecision d;
    for (int i = 0; i < 100; ++i) {
      xs.push_back(next());
      es.add_sample(xs.back());
      d = es.decide();
      if (i + 1 == 20) {
        double mean = 0, ss = 0;
        for (double x : xs) mean += x / 20;
        for (double x : xs) ss += (x - mean) * (x - mean);
        double naive_hw = student_t_quantile(0.975, 19) * std::sqrt(ss / 19 / 20);
        if (naive_hw <= 0.03 * mean) {
          ++naive_stops;
          naive_misses += std::abs(mean - 80000) > naive_hw;
        }
        early_stops_at_20 += d.stop;
      }
      if (d.stop) break;
    }
    if (d.stop) {
      ++stops;
      misses += !covers(d.ci, 80000);
    }
  }
  CAPTURE(naive_stops);
  CAPTURE(naive_misses);
  CAPTURE(early_stops_at_20);
  CAPTURE(stops);
  CAPTURE(misses);
  CHECK(naive_stops >= streams * 95 / 100);     // the naive rule stops nearly every stream
  CHECK(naive_misses >= naive_stops * 4 / 10);  // and its "95%" interval misses the mean often
  CHECK(early_stops_at_20 <= streams / 10);     // the lag-1 test refuses most of them
  CHECK(misses <= streams / 10);                // whatever stops does so with an honest interval
}

TEST_CASE("far from the threshold the run stops early with the side it is on") {
  EarlyStopConfig c = enabled_config();
  c.threshold_iops = 10000;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    // ±20% per sample: "settled" would need ~180 samples, but the interval is far above.
    StreamRun above = run_stream(c, 100, iid_stream(seed, 30000, 0.2));
    CHECK(above.decision.reason == StopReason::kAboveThreshold);
    CHECK(above.samples <= 30);
    StreamRun below = run_stream(c, 100, iid_stream(seed, 3000, 0.2));
    CHECK(below.decision.reason == StopReason::kBelowThreshold);
    CHECK(below.samples <= 30);
    CHECK(below.decision.ci.mean + below.decision.ci.half_width <= 9000);
  }
}

TEST_CASE("a wandering stream far from the threshold stops at the minimum window") {
  // AR(1) phi 0.9 with ±15% per sample: the interval stays untrusted for seconds (as on a
  // host-cached virtual disk), but every half second is several times the floor, or far under it.
  EarlyStopConfig c = enabled_config();
  c.threshold_iops = 10000;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    StreamRun above = run_stream(c, 100, ar1_stream(seed, 100000, 0.15, 0.9));
    CHECK(above.decision.reason == StopReason::kAboveThreshold);
    CHECK(above.samples == 20);
    StreamRun below = run_stream(c, 100, ar1_stream(seed, 2000, 0.15, 0.9));
    CHECK(below.decision.reason == StopReason::kBelowThreshold);
    CHECK(below.samples == 20);
  }
  // One slow half second within 10% of the floor keeps the run going.
  EarlyStop es(c);
  for (int i = 0; i < 20; ++i) es.add_sample(i >= 5 && i < 10 ? 10500 : 50000);
  CHECK(es.decide().reason != StopReason::kAboveThreshold);
  BatchRange r = batch_range(es.samples(), EarlyStop::kThresholdBatchSamples);
  CHECK(r.batches == 4);
  CHECK(r.min == doctest::Approx(10500));
  CHECK(r.max == doctest::Approx(50000));
}

TEST_CASE("near the threshold only the settled rule may stop") {
  EarlyStopConfig c = enabled_config();
  c.threshold_iops = 10000;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    EarlyStop es(c);
    auto next = iid_stream(seed, 10500, 0.10);
    for (int i = 0; i < 100; ++i) {
      es.add_sample(next());
      StopDecision d = es.decide();
      REQUIRE(d.reason != StopReason::kAboveThreshold);
      REQUIRE(d.reason != StopReason::kBelowThreshold);
      if (d.stop) {
        CHECK(d.reason == StopReason::kSettled);
        break;
      }
    }
  }
}

TEST_CASE("nothing stops before the minimum window, nor when disabled") {
  EarlyStop es(enabled_config());
  for (int i = 0; i < 19; ++i) {
    es.add_sample(1000);
    CHECK_FALSE(es.decide().stop);
  }
  es.add_sample(1000);
  StopDecision d = es.decide();
  CHECK(d.stop);
  CHECK(d.reason == StopReason::kSettled);
  CHECK(d.ci.half_width == 0);
  CHECK(d.ci.mean == 1000);

  EarlyStopConfig off;  // disabled: the interval is still there
  EarlyStop quiet(off);
  for (int i = 0; i < 100; ++i) quiet.add_sample(1000);
  CHECK_FALSE(quiet.decide().stop);
  CHECK(quiet.interval().trusted);
  CHECK(quiet.interval().samples == 100);

  EarlyStopConfig longer = enabled_config();
  longer.min_window = std::chrono::seconds(5);
  EarlyStop patient(longer);
  for (int i = 0; i < 49; ++i) patient.add_sample(1000);
  CHECK_FALSE(patient.decide().stop);
  patient.add_sample(1000);
  CHECK(patient.decide().stop);
}

TEST_CASE("a stalled device is never 'settled', but is below a threshold") {
  EarlyStop es(enabled_config());
  for (int i = 0; i < 50; ++i) es.add_sample(0);
  CHECK_FALSE(es.decide().stop);
  CHECK(es.interval().relative_half_width == 0);

  EarlyStopConfig c = enabled_config();
  c.threshold_iops = 500;
  EarlyStop floor(c);
  for (int i = 0; i < 20; ++i) floor.add_sample(0);
  CHECK(floor.decide().reason == StopReason::kBelowThreshold);
}

TEST_CASE("batches merge as samples grow and stay within range") {
  std::vector<double> xs;
  auto next = iid_stream(7, 1000, 0.1);
  for (int n = 1; n <= 600; ++n) {
    xs.push_back(next());
    ConfidenceInterval ci = batch_means_interval(xs, 0.95);
    CAPTURE(n);
    CHECK(ci.samples == n);
    CHECK(ci.batches <= EarlyStop::kMaxBatches);
    if (n >= 2) CHECK(ci.batches >= 2);
    if (n >= EarlyStop::kMinBatches) CHECK(ci.batches >= EarlyStop::kMinBatches);
    if (n >= 2) {
      CHECK(ci.batches * ci.batch_size <= n);
      CHECK(ci.batches * ci.batch_size > n - ci.batch_size);
    }
  }
  CHECK(batch_means_interval({}, 0.95).batches == 0);
  ConfidenceInterval one = batch_means_interval({5.0}, 0.95);
  CHECK(one.batches == 0);
  CHECK(one.mean == 5.0);
  CHECK_FALSE(one.trusted);
}

TEST_CASE("a bad configuration names its field") {
  EarlyStopConfig c;
  CHECK(validate_early_stop(c).ok());
  c.tolerance = 0;
  auto s = validate_early_stop(c);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("--tolerance") != std::string::npos);
  c = EarlyStopConfig{};
  c.threshold_iops = -5;
  s = validate_early_stop(c);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("--min-iops") != std::string::npos);
  c = EarlyStopConfig{};
  c.confidence = 1.0;
  CHECK_FALSE(validate_early_stop(c).ok());
}
